"""Joins and splits: the records of np.hstack, vstack, dstack, column_stack, row_stack,
append, split, array_split, hsplit, vsplit and dsplit, the helpers their rules call
(`unjoin`, `unsplit`), each beside its numba form, and the numba forms of the calls
numba lacks (vectors among matrices to np.vstack, np.row_stack).

Both are linear and move entries without copying any. A join lays the arrays (each
raised to the join's rank first) end to end along an axis, so the adjoint cuts dy along
that axis into one piece per array, shaped like it; np.append without an axis joins the
flattened arrays. A split gives a list of pieces of its array, so the adjoint joins the
pieces' gradients again along the axis it cut (the zero gradient of the pieces is one
array of zeros each).
"""

import numpy as np
from numba import types
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype

from ..numba_ext import normalize_axis
from ..runtime import reshape_as
from . import describe, linear, rule
from .shapes import _absent

# ---- joins: the adjoint cuts dy into pieces shaped like the arrays ----


def unjoin(dy, arrays, axis):
    """The adjoint of joining `arrays` along `axis` of the result (each raised to its
    rank first, as np.hstack, vstack, dstack, column_stack and append do): dy cut along
    that axis into one piece per array, each with its array's shape. An axis past the
    last is the last (np.hstack joins vectors along axis 0, matrices along axis 1); None
    is axis 0 of the flattened arrays (np.append without an axis).

    >>> [p.shape for p in unjoin(np.ones((2, 5)), (np.zeros(2), np.zeros((2, 4))), 1)]
    [(2,), (2, 4)]
    """
    dy = np.asarray(dy)
    ax = 0 if axis is None else axis + dy.ndim if axis < 0 else min(axis, dy.ndim - 1)
    rest = dy.size // dy.shape[ax] if dy.shape[ax] else 0
    widths = [np.size(a) // rest if rest else 0 for a in arrays]
    pieces = np.split(dy, np.cumsum(widths)[:-1], axis=ax)
    return tuple(reshape_as(p, a) for p, a in zip(pieces, arrays, strict=True))


@register_jitable
def _cut(dy, ax, start, stop):
    """Entries start:stop of `dy` along axis `ax`."""
    return np.swapaxes(np.swapaxes(dy, ax, 0)[start:stop], ax, 0)


@overload(unjoin)
def _unjoin_typer(dy, arrays, axis):
    if not isinstance(dy, types.Array) or not isinstance(arrays, types.BaseTuple):
        return None
    n, nd = len(arrays), dy.ndim
    body = ["def unjoin(dy, arrays, axis):",
            "    ax = 0" if _absent(axis) else
            f"    ax = axis + {nd} if axis < 0 else min(axis, {nd - 1})",
            "    rest = dy.size // dy.shape[ax] if dy.shape[ax] else 0",
            "    o0 = 0"]
    body += [f"    o{i + 1} = o{i} + (np.size(arrays[{i}]) // rest if rest else 0)"
             for i in range(n)]
    pieces = "".join(f"reshape_as(cut(dy, ax, o{i}, o{i + 1}), arrays[{i}]), "
                     for i in range(n))
    body.append(f"    return ({pieces})")
    namespace = {"np": np, "cut": _cut, "reshape_as": reshape_as}
    exec("\n".join(body), namespace)
    return namespace["unjoin"]


@rule(np.hstack)
def hstack(dy, y, tup):
    return unjoin(dy, tup, 1)


# np.row_stack: vstack's deprecated alias, which newer NumPy releases drop
_VSTACKS = (np.vstack, np.row_stack) if hasattr(np, "row_stack") else (np.vstack,)


@rule(*_VSTACKS)
def vstack(dy, y, tup):
    return unjoin(dy, tup, 0)


@rule(np.dstack)
def dstack(dy, y, tup):
    return unjoin(dy, tup, 2)


@rule(np.column_stack)
def column_stack(dy, y, tup):
    return unjoin(dy, tup, 1)


@rule(np.append)
def append(dy, y, arr, values, axis=None):
    return unjoin(dy, (arr, values), axis)


if hasattr(np, "row_stack"):
    @overload(np.row_stack)
    def _np_row_stack(tup):
        # numba has vstack only
        return lambda tup: np.vstack(tup)


@overload(np.vstack)
def _np_vstack_ranks(tup):
    # numba's np.vstack takes arrays of one rank: vectors (rows) among matrices here
    if not isinstance(tup, types.Tuple) or not all(isinstance(t, types.Array) for t in tup):
        return None
    rows = "".join(f"np.atleast_2d(tup[{i}]), " for i in range(len(tup)))
    namespace = {"np": np}
    exec(f"def vstack(tup):\n    return np.concatenate(({rows}))\n", namespace)
    return namespace["vstack"]


describe(np.concatenate, np.stack, *_VSTACKS, np.hstack, np.dstack, np.column_stack,
         sequence=True)


# ---- splits: the result is a list of pieces; the adjoint joins their gradients ----


@rule(np.split, np.array_split, view=True)
def split(dy, y, ary, indices_or_sections=1, axis=0):
    return unsplit(dy, ary, axis)


@rule(np.hsplit, view=True)
def hsplit(dy, y, ary, indices_or_sections=1):
    return unsplit(dy, ary, 1)


@rule(np.vsplit, view=True)
def vsplit(dy, y, ary, indices_or_sections=1):
    return unsplit(dy, ary, 0)


@rule(np.dsplit, view=True)
def dsplit(dy, y, ary, indices_or_sections=1):
    return unsplit(dy, ary, 2)


def unsplit(dy, ary, axis):
    """The adjoint of np.split(ary, ..., axis) and its kin: the gradients of the pieces
    (a list) joined again along `axis`; an axis past the last is the last (np.hsplit
    splits a vector along axis 0).

    >>> unsplit([np.ones(2), np.zeros(1)], np.zeros(3), 1)
    array([1., 1., 0.])
    """
    return np.concatenate(dy, axis=axis if axis < 0 else min(axis, np.ndim(ary) - 1))


@overload(unsplit)
def _unsplit_typer(dy, ary, axis):
    if not (isinstance(dy, types.List) and isinstance(dy.dtype, types.Array)
            and isinstance(ary, types.Array)):
        return None
    dtype = as_dtype(dy.dtype.dtype)
    if dtype.kind not in "fc":
        dtype = np.dtype(np.float64)

    def join(dy, ary, axis):
        ax = normalize_axis(axis if axis < 0 else min(axis, ary.ndim - 1), ary.ndim)
        out = np.zeros(ary.shape, dtype)
        rows = np.swapaxes(out, ax, 0)
        start = 0
        for piece in dy:
            part = np.swapaxes(piece, ax, 0)
            rows[start:start + part.shape[0]] = part
            start += part.shape[0]
        if start != rows.shape[0]:
            raise ValueError("unsplit: the pieces do not make up the array")
        return out
    return join


linear(np.hstack, *_VSTACKS, np.dstack, np.column_stack, np.split, np.array_split, np.hsplit,
       np.vsplit, np.dsplit, unjoin, unsplit)
linear(np.append, positions=(0, 1))
describe(unjoin, unsplit, pure=True)


# ---- grids: np.meshgrid gives one array per vector; each one's adjoint sums it ----


def grids(x1, x2=None, x3=None, copy=True, sparse=False, indexing="xy"):
    """np.meshgrid of up to three vectors, which generated code calls in its place (numba
    has no np.meshgrid): a tuple of arrays.

    >>> [g.shape for g in grids(np.zeros(2), np.zeros(3))]
    [(3, 2), (3, 2)]
    """
    xs = [x for x in (x1, x2, x3) if x is not None]
    return tuple(np.meshgrid(*xs, copy=copy, sparse=sparse, indexing=indexing))


def _grid_axis(which, ndim, indexing):
    """The axis of the grids along which input `which` varies."""
    return 1 - which if indexing == "xy" and ndim > 1 and which < 2 else which


def ungrid(dy, x, which, indexing="xy"):
    """The gradient of input `which` (x) of ``np.meshgrid(..., indexing=indexing)``:
    its grid's cotangent dy[which] summed over the other axes, in x's shape.

    >>> ungrid([np.ones((3, 2)), np.ones((3, 2))], np.zeros(3), 1)
    array([2., 2., 2.])
    """
    g = np.asarray(dy[which])
    k = _grid_axis(which, g.ndim, indexing)
    return np.moveaxis(g, k, 0).reshape(g.shape[k], -1).sum(axis=1).reshape(np.shape(x))


@register_jitable
def _grid_axis_jit(which, ndim, indexing):
    return 1 - which if indexing == "xy" and ndim > 1 and which < 2 else which


@overload(ungrid)
def _ungrid_typer(dy, x, which, indexing="xy"):
    def impl(dy, x, which, indexing="xy"):
        g = dy[which]
        k = _grid_axis_jit(which, g.ndim, indexing)
        h = np.ascontiguousarray(np.swapaxes(g, k, 0))
        n = h.shape[0]
        return np.sum(h.reshape((n, h.size // n if n else 0)), axis=1).reshape(x.shape)
    return impl


def _present(t) -> bool:
    return not _absent(t)


@overload(grids)
def _grids_typer(x1, x2=None, x3=None, copy=True, sparse=False, indexing="xy"):
    for x in (x1, x2, x3):
        if _present(x) and not (isinstance(x, types.Array) and x.ndim == 1):
            return None
    if not (isinstance(sparse, types.Omitted) and not sparse.value or
            isinstance(sparse, types.BooleanLiteral) and not sparse.literal_value or
            sparse is False):
        return None
    if _absent(x2):
        return lambda x1, x2=None, x3=None, copy=True, sparse=False, indexing="xy": (
            x1.copy(),)
    if _absent(x3):
        def two(x1, x2=None, x3=None, copy=True, sparse=False, indexing="xy"):
            xy = indexing == "xy"
            shape = (len(x2), len(x1)) if xy else (len(x1), len(x2))
            a, b = np.empty(shape, x1.dtype), np.empty(shape, x2.dtype)
            for i in range(len(x1)):
                for j in range(len(x2)):
                    at = (j, i) if xy else (i, j)
                    a[at], b[at] = x1[i], x2[j]
            return a, b
        return two

    def three(x1, x2=None, x3=None, copy=True, sparse=False, indexing="xy"):
        xy = indexing == "xy"
        shape = (len(x2), len(x1), len(x3)) if xy else (len(x1), len(x2), len(x3))
        a, b, c = np.empty(shape, x1.dtype), np.empty(shape, x2.dtype), np.empty(shape, x3.dtype)
        for i in range(len(x1)):
            for j in range(len(x2)):
                for k in range(len(x3)):
                    at = (j, i, k) if xy else (i, j, k)
                    a[at], b[at], c[at] = x1[i], x2[j], x3[k]
        return a, b, c
    return three


def _grids_refused(options) -> str | None:
    if options.get("sparse"):
        return "sparse=True has no gradient rule: broadcast the dense grids' inputs instead"
    return None


# np.meshgrid's vectors are its positional *xi, up to three here (the rest keyword-only)
@rule(np.meshgrid, grids, refuse=_grids_refused)
def meshgrid(dy, y, x1, x2=None, x3=None, copy=True, sparse=False, indexing="xy"):
    return (ungrid(dy, x1, 0, indexing), ungrid(dy, x2, 1, indexing),
            ungrid(dy, x3, 2, indexing), None, None, None)


linear(np.meshgrid, grids, positions=(0, 1, 2))
linear(ungrid)
describe(np.meshgrid, compiled_as=grids)
describe(grids, ungrid, pure=True)


# ---- np.block: the adjoint cuts dy into the blocks, level by level ----


def _depth(arrays) -> int:
    return 1 + _depth(arrays[0]) if isinstance(arrays, (list, tuple)) else 0


def _padded_shape(item, nd):
    """The shape np.block gives `item` (an array or nested lists of them), with leading 1s
    up to nd axes."""
    shape = np.shape(np.block(_zeros_like_blocks(item))) if isinstance(item, (list, tuple)) \
        else np.shape(item)
    return (1,) * (nd - len(shape)) + tuple(shape)


def _zeros_like_blocks(item):
    if isinstance(item, (list, tuple)):
        return [_zeros_like_blocks(i) for i in item]
    return np.zeros(np.shape(item))


def unblock(dy, arrays):
    """The adjoint of np.block(arrays): dy cut into nested tuples shaped as `arrays`, one
    piece per block with its block's shape. The innermost lists join along the last axis,
    the ones holding them along the one before, and so on.

    >>> [p.shape for p in unblock(np.ones((2, 5)), [np.zeros((2, 2)), np.zeros((2, 3))])]
    [(2, 2), (2, 3)]
    """
    dy = np.asarray(dy)
    depth, nd = _depth(arrays), dy.ndim

    def cut(g, item, level):
        if not isinstance(item, (list, tuple)):
            return reshape_as(g, item)
        axis = nd - (depth - level)
        widths = [_padded_shape(sub, nd)[axis] for sub in item]
        pieces = np.split(g, np.cumsum(widths)[:-1], axis=axis)
        return tuple(cut(p, sub, level + 1) for p, sub in zip(pieces, item, strict=True))
    return cut(dy, arrays, 0)


@rule(np.block)
def block(dy, y, arrays):
    return unblock(dy, arrays)


linear(np.block)
describe(np.block)
describe(unblock, pure=True)


# the numba forms (numba has no np.block): a list of arrays of one rank (1 or 2), or a
# list of lists of them (vectors are rows there, as np.atleast_2d makes them)


def _block_levels(arrays):
    """(depth, the arrays' rank) of a numba list of arrays or of lists of arrays; None if
    np.block's numba form does not take it."""
    if not isinstance(arrays, types.List):
        return None
    inner = arrays.dtype
    if isinstance(inner, types.List):
        inner, depth = inner.dtype, 2
    else:
        depth = 1
    if not isinstance(inner, types.Array) or inner.ndim not in (1, 2):
        return None
    return depth, inner.ndim


@register_jitable
def _join_row(items):
    """The arrays (raised to matrices) side by side."""
    h, w = np.atleast_2d(items[0]).shape[0], 0
    for a in items:
        w += np.atleast_2d(a).shape[1]
    out = np.empty((h, w))
    o = 0
    for a in items:
        m = np.atleast_2d(a)
        if m.shape[0] != h:
            raise ValueError("np.block: the blocks of a row must have the same number of rows")
        out[:, o:o + m.shape[1]] = m
        o += m.shape[1]
    return out


@register_jitable
def _join_rows(rows):
    h, w = 0, rows[0].shape[1]
    for r in rows:
        h += r.shape[0]
    out = np.empty((h, w))
    o = 0
    for r in rows:
        if r.shape[1] != w:
            raise ValueError("np.block: the rows must have the same number of columns")
        out[o:o + r.shape[0]] = r
        o += r.shape[0]
    return out


@overload(np.block)
def _np_block(arrays):
    levels = _block_levels(arrays)
    if levels is None:
        return None
    depth, nd = levels
    if depth == 1 and nd == 1:
        return lambda arrays: _join_row(arrays)[0]
    if depth == 1:
        return lambda arrays: _join_row(arrays)

    def impl(arrays):
        rows = [_join_row(arrays[0])]
        for i in range(1, len(arrays)):
            rows.append(_join_row(arrays[i]))
        return _join_rows(rows)
    return impl


@register_jitable
def _cut_row(g, items):
    """g (rows of one block row) cut into one piece per block, shaped like it."""
    out = [np.zeros_like(items[0])]
    out.pop()
    o = 0
    for a in items:
        w = np.atleast_2d(a).shape[1]
        out.append(np.ascontiguousarray(g[:, o:o + w]).reshape(a.shape))
        o += w
    return out


@overload(unblock)
def _unblock_typer(dy, arrays):
    levels = _block_levels(arrays)
    if levels is None or not isinstance(dy, types.Array):
        return None
    depth, nd = levels
    if depth == 1:
        return lambda dy, arrays: _cut_row(np.atleast_2d(dy), arrays)

    def impl(dy, arrays):
        out = []
        o = 0
        for items in arrays:
            h = np.atleast_2d(items[0]).shape[0]
            out.append(_cut_row(dy[o:o + h], items))
            o += h
        return out
    return impl
