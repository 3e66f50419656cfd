"""The adjoints of indexing: entries added into gradients at indices (repeats add),
`np.take` and `np.take_along_axis`, and writes.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from ..errors import NONSCALAR_MARKER, NonScalarOutput
from ..numba_ext import as_index, omitted
from .common import _NONSCALAR, _is_none, _is_scalar, _item, _ranked, _sequence


def put_flat(g, k, v):
    """`g` with flat entry k set to the scalar `v` (in place for an array; for a scalar
    g, `v` itself): how a gradient is filled in one forward-mode pass at a time."""
    if np.ndim(v) != 0:
        raise NonScalarOutput(_NONSCALAR)
    if np.ndim(g) == 0:
        return v
    g.flat[k] = v
    return g


@overload(put_flat)
def _put_flat_typer(g, k, v):
    if isinstance(v, types.Array) and v.ndim > 0:
        raise TypingError(f"{NONSCALAR_MARKER}: {_NONSCALAR}")
    if _is_scalar(g):
        return lambda g, k, v: g * 0.0 + _item(v)

    def impl(g, k, v):
        g.reshape(g.size)[k] = _item(v)
        return g
    return impl


def add_at(g, index, dy):
    """`g[index] += dy`, each occurrence of a repeated entry of a fancy index adding its
    part (NumPy's `+=` adds once per distinct entry; this is `np.add.at`). Returns g.

    >>> add_at(np.zeros(3), [0, 0, 2], 1.0)
    array([2., 0., 1.])
    """
    np.add.at(g, index, dy)
    return g


@overload(add_at)
def _add_at_typer(g, index, dy):
    if not isinstance(g, types.Array):
        return None
    one = _is_scalar(dy)
    if _sequence(index):
        def along(g, index, dy):
            for k in range(len(index)):
                g[index[k]] += dy if one else dy[k]
            return g
        return along
    if _ranked(index):   # x[idx] with an index of rank >= 2: each of its entries a row
        def ranked(g, index, dy):
            flat = as_index(index).ravel()
            if one:
                for k in range(flat.size):
                    g[flat[k]] += dy
            else:
                d = np.ascontiguousarray(dy).reshape((flat.size,) + g.shape[1:])
                for k in range(flat.size):
                    g[flat[k]] += d[k]
            return g
        return ranked
    if isinstance(index, types.BaseTuple) and len(index) == 2 and g.ndim == 2:
        first, second = (_sequence(t) for t in index)
        if first and second:
            def pairs(g, index, dy):
                for k in range(len(index[0])):
                    g[index[0][k], index[1][k]] += dy if one else dy[k]
                return g
            return pairs
        if first:   # x[idx, j] or x[idx, a:b]
            def rows(g, index, dy):
                for k in range(len(index[0])):
                    g[index[0][k], index[1]] += dy if one else dy[k]
                return g
            return rows
        if second:  # x[i, idx] or x[:, idx]
            column = isinstance(index[0], types.Integer)

            def columns(g, index, dy):
                for k in range(len(index[1])):
                    if one:
                        g[index[0], index[1][k]] += dy
                    elif column:
                        g[index[0], index[1][k]] += dy[k]
                    else:
                        g[index[0], index[1][k]] += dy[..., k]
                return g
            return columns

    if isinstance(index, types.BaseTuple) and len(index) == 2 and g.ndim == 2 and all(
            isinstance(t, types.Array) and t.ndim == 2 and isinstance(t.dtype, types.Integer)
            for t in index):   # x[np.ix_(r, c)]: index matrices that broadcast together
        def grid(g, index, dy):
            rows, cols = index
            n = max(rows.shape[0], cols.shape[0])
            m = max(rows.shape[1], cols.shape[1])
            for p in range(n):
                for q in range(m):
                    i = rows[0 if rows.shape[0] == 1 else p, 0 if rows.shape[1] == 1 else q]
                    j = cols[0 if cols.shape[0] == 1 else p, 0 if cols.shape[1] == 1 else q]
                    g[i, j] += dy if one else dy[p, q]
            return g
        return grid

    parts = index.types if isinstance(index, types.BaseTuple) else (index,)
    if any(isinstance(t, (types.Array, types.List)) and not isinstance(t.dtype, types.Boolean)
           for t in parts):   # (a mask selects each entry once)
        raise TypingError("srcgrad: add_at compiles an index array alone (of any rank), "
                          "1-D index arrays on one axis of an array of rank <= 2, or two "
                          "index matrices (np.ix_) into a matrix only")

    def basic(g, index, dy):
        g[index] += dy
        return g
    return basic


def scattered(like, index, v):
    """Zeros of `like`'s shape with `v` added at `index`, each repeat of an entry adding
    its part: `np.add.at(x, index, v)` is `x += scattered(x, index, v)` (normalize writes
    it so, and the passes follow the in-place `+=`).

    >>> scattered(np.ones(3), [0, 0, 2], 1.0)
    array([2., 0., 1.])
    """
    return add_at(np.zeros(np.shape(like), np.result_type(like, v)), index, v)


@overload(scattered)
def _scattered_typer(like, index, v):
    if not isinstance(like, types.Array):
        return None
    if isinstance(like.dtype, types.Integer) and not (
            isinstance(v, types.Integer) or isinstance(v, types.Array)
            and isinstance(v.dtype, types.Integer)):
        raise TypingError("srcgrad: np.add.at of non-integer values into an integer array "
                          "(NumPy refuses the cast)")

    def impl(like, index, v):
        return add_at(np.zeros(like.shape, like.dtype), index, v)
    return impl


def taken(indices, a, axis=None, mode="raise"):
    """The indices `np.take(a, indices, axis, mode=mode)` reads, as mode 'raise' reads
    them: 'wrap' takes them modulo the axis's length, 'clip' clips them into it (negative
    ones to 0, as NumPy does).

    >>> taken(np.array([4, -4, 1]), np.zeros(3), None, "wrap")
    array([1, 2, 1])
    """
    if mode == "raise":
        return indices
    n = np.size(a) if axis is None else np.shape(a)[axis]
    if mode == "wrap":
        return np.mod(indices, n)
    if mode == "clip":
        return np.clip(indices, 0, n - 1)
    raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")


@overload(taken)
def _taken_typer(indices, a, axis=None, mode="raise"):
    if not isinstance(a, types.Array):
        return None
    if isinstance(indices, types.Integer):
        def one(indices, a, axis=None, mode="raise"):
            n = a.size if axis is None else a.shape[axis]
            if mode == "wrap":
                return indices % n
            if mode == "clip":
                return min(max(indices, 0), n - 1)
            if mode != "raise":
                raise ValueError("clipmode must be one of 'clip', 'raise', or 'wrap'")
            return indices
        return one

    def many(indices, a, axis=None, mode="raise"):
        n = a.size if axis is None else a.shape[axis]
        index = np.asarray(indices)
        if mode == "wrap":
            return np.mod(index, n)
        if mode == "clip":
            return np.minimum(np.maximum(index, 0), n - 1)
        if mode != "raise":
            raise ValueError("clipmode must be one of 'clip', 'raise', or 'wrap'")
        return index + 0
    return many


@overload(np.take)
def _np_take(a, indices, axis=None, out=None, mode="raise"):
    # numba's np.take has no mode: the indices it reads, taken as mode 'raise' takes them
    if not isinstance(a, types.Array) or omitted(mode) or not _is_none(out):
        return None
    if _is_none(axis):   # (numba < 0.60's np.take takes no axis)
        return lambda a, indices, axis=None, out=None, mode="raise": np.take(
            a, taken(indices, a, None, mode))
    return lambda a, indices, axis=None, out=None, mode="raise": np.take(
        a, taken(indices, a, axis, mode), axis)


def take_grad(dy, a, indices, axis=None, mode="raise"):
    """Adjoint of `np.take(a, indices, axis, mode=mode)`: dy added back where it was
    taken, each repeat of an index adding its part.

    >>> take_grad(np.ones(3), np.zeros((2, 2)), [3, 3, 0])
    array([[1., 0.],
           [0., 2.]])
    """
    g = np.zeros(np.shape(a), np.result_type(a, dy, 1.0))
    indices = taken(indices, a, axis, mode)
    if axis is None:
        np.add.at(g.reshape(-1), indices, dy)
    else:
        np.add.at(g, (slice(None),) * (axis % g.ndim) + (indices,), dy)
    return g


@register_jitable
def _taken_flat(dy, a, indices, axis):
    g = np.zeros(a.shape)
    add_at(g.reshape(g.size), indices, dy)
    return g


@register_jitable
def _taken_rows(dy, a, indices, axis):   # rows of g moved to axis 0, as dy's
    g = np.zeros(a.shape)
    ax = axis % g.ndim
    add_at(np.swapaxes(g, 0, ax), indices, np.swapaxes(dy, 0, ax))
    return g


@register_jitable
def _taken_row(dy, a, indices, axis):
    g = np.zeros(a.shape)
    add_at(np.swapaxes(g, 0, axis % g.ndim), indices, dy)
    return g


@overload(take_grad)
def _take_grad_typer(dy, a, indices, axis=None, mode="raise"):
    if not isinstance(a, types.Array):
        return None
    if _is_none(axis):
        back = _taken_flat
    elif _sequence(indices):
        back = _taken_rows
    elif isinstance(indices, types.Integer) and a.ndim <= 2:
        back = _taken_row
    else:
        raise TypingError("srcgrad: the gradient of np.take compiles an axis with a 1-D "
                          "index (or an int on a matrix) only")
    if omitted(mode):
        return lambda dy, a, indices, axis=None, mode="raise": back(dy, a, indices, axis)
    # the indices mode 'raise' reads
    return lambda dy, a, indices, axis=None, mode="raise": back(
        dy, a, taken(indices, a, axis, mode), axis)


def take_along_axis_grad(dy, a, indices, axis):
    """Adjoint of `np.take_along_axis(a, indices, axis)`: dy added back where it was
    taken, each repeat of an index adding its part.

    >>> take_along_axis_grad(np.ones((1, 3)), np.zeros((1, 2)), np.array([[1, 1, 0]]), 1)
    array([[1., 2.]])
    """
    if axis is None:   # along the flattened array: np.take's
        return take_grad(dy, a, indices)
    g = np.zeros(np.shape(a), np.result_type(a, dy, 1.0))
    shape = np.shape(dy)
    index = [np.arange(n).reshape((1,) * d + (n,) + (1,) * (len(shape) - d - 1))
             for d, n in enumerate(shape)]
    index[axis % g.ndim] = indices
    np.add.at(g, tuple(index), dy)
    return g


@overload(take_along_axis_grad)
def _take_along_axis_grad_typer(dy, a, indices, axis):
    if not isinstance(a, types.Array) or a.ndim > 2 or not isinstance(indices, types.Array):
        if isinstance(a, types.Array):
            raise TypingError("srcgrad: the gradient of np.take_along_axis compiles arrays "
                              "of rank 1 and 2 only")
        return None
    if _is_none(axis) or a.ndim == 1:   # along the flattened array: np.take's
        return lambda dy, a, indices, axis: take_grad(dy, a, indices)

    def matrix(dy, a, indices, axis):
        g = np.zeros(a.shape)
        ax = axis % 2
        one_i, one_j = indices.shape[0] == 1, indices.shape[1] == 1
        for i in range(dy.shape[0]):
            for j in range(dy.shape[1]):
                k = indices[0 if one_i else i, 0 if one_j else j]
                if ax == 0:
                    g[k, j] += dy[i, j]
                else:
                    g[i, k] += dy[i, j]
        return g
    return matrix


def written_grad(dy, index):
    """The gradient of `v` in `y[index] = v` from y's, `dy[index]`, where only the last
    write into a repeated entry of a fancy index counts (NumPy keeps it): the others
    are zero.

    >>> written_grad(np.array([1.0, 2.0, 3.0]), [0, 2, 0])
    array([0., 3., 1.])
    """
    g = np.asarray(dy)[index]
    ids = np.arange(g.size).reshape(g.shape)
    last = np.full(np.shape(dy), -1)
    last[index] = ids
    return np.where(last[index] == ids, g, 0.0 * g)


def _basic(index) -> bool:
    """An index of ints, slices, None and Ellipsis (alone or in a tuple): basic indexing,
    which names each entry of the array once."""
    parts = index.types if isinstance(index, types.BaseTuple) else (index,)
    return all(isinstance(t, (types.Integer, types.SliceType, types.NoneType,
                              types.EllipsisType)) for t in parts)


def _fresh(g):
    """`g` itself for a number, a copy for an array (a view of dy would change with it)."""
    return np.copy(g)


@overload(_fresh)
def _fresh_typer(g):
    if isinstance(g, types.Array):
        return lambda g: g.copy()
    return lambda g: g


@overload(written_grad)
def _written_grad_typer(dy, index):
    if isinstance(dy, types.Array) and isinstance(index, types.Array) and \
            isinstance(index.dtype, types.Boolean):
        return lambda dy, index: dy[index]   # a mask selects each entry once
    if isinstance(dy, types.Array) and _basic(index):
        # y[n % 2] = v where the passes could not tell the index is an int: no entry is
        # written twice, so v's gradient is all of dy[index] (NumPy's form copies it too)
        return lambda dy, index: _fresh(dy[index])
    pair = isinstance(index, types.BaseTuple) and len(index) == 2 and \
        isinstance(dy, types.Array) and dy.ndim == 2
    if isinstance(dy, types.Array) and (_sequence(index) or pair and _sequence(index[0])
                                        and not _sequence(index[1])):
        alone = _sequence(index)

        def rows(dy, index):   # y[idx] = v, y[idx, j] = v, y[idx, a:b] = v
            g = dy[as_index(index)]
            return _last_rows(g, first_index(index) if not alone else as_index(index),
                              dy.shape[0])
        return rows
    if isinstance(dy, types.Array) and _ranked(index):
        def ranked(dy, index):   # y[idx] = v, idx of rank >= 2: each entry names a row
            idx = as_index(index)
            flat = np.ascontiguousarray(idx).ravel()
            g = _last_rows(dy[flat], flat, dy.shape[0])
            return g.reshape(idx.shape + dy.shape[1:])
        return ranked
    if pair and _sequence(index[0]) and _sequence(index[1]):
        def pairs(dy, index):   # y[idx, jdx] = v
            first, second = as_index(index[0]), as_index(index[1])
            g = dy[first, second]
            n, m = dy.shape
            seen = np.zeros((n, m), np.bool_)
            for k in range(len(first) - 1, -1, -1):
                i = first[k] + n if first[k] < 0 else first[k]
                j = second[k] + m if second[k] < 0 else second[k]
                if seen[i, j]:
                    g[k] = 0.0
                seen[i, j] = True
            return g
        return pairs
    if pair and _sequence(index[1]):
        def columns(dy, index):   # y[i, jdx] = v, y[:, jdx] = v
            second = as_index(index[1])
            g = dy[index[0], second]
            m = dy.shape[1]
            seen = np.zeros(m, np.bool_)
            for k in range(len(second) - 1, -1, -1):
                j = second[k] + m if second[k] < 0 else second[k]
                if seen[j]:
                    g[..., k] = 0.0
                seen[j] = True
            return g
        return columns
    raise TypingError("srcgrad: written_grad compiles 1-D index arrays on one axis of an "
                      "array of rank <= 2 only")


def first_index(index):
    """The first part of a tuple index, as an array where it is a list."""
    return as_index(index[0])


@overload(first_index)
def _first_index(index):
    return lambda index: as_index(index[0])


@register_jitable
def _last_rows(g, first, n):
    """g (rows gathered at `first` from an array of n rows) with each row that a later
    entry of `first` writes again zeroed."""
    seen = np.zeros(n, np.bool_)
    for k in range(len(first) - 1, -1, -1):
        i = first[k] + n if first[k] < 0 else first[k]
        if seen[i]:
            g[k] = 0.0
        seen[i] = True
    return g
