"""np.put, np.place and np.put_along_axis, called for their effect: normalize writes
`np.put(a, ind, v)` as `a[...] = put_into(a, ind, v)` (the records' `updates`), and
np.place and np.put_along_axis alike (`placed`, `put_along`), writes the passes follow as
any write. Each helper is a NumPy function (a copy changed by the NumPy call itself),
beside its numba form.

Each writes values into entries of a copy of `a` (of a flattened in C order): np.put at
the flat positions `ind` ('raise': negative ones count from the end; 'wrap' takes them
modulo a's size; 'clip' clips them into it), v's items in turn, repeated cyclically when
v is shorter than ind (nothing when v is empty); np.place at the entries where `mask`
holds, `vals` repeated alike (so np.place is np.put at np.flatnonzero(mask)); and
np.put_along_axis at the entries `indices` picks along `axis` (the index broadcast over
the other axes, `values` broadcast to its shape; with axis=None along a flattened). So
each is linear in (a, v): the adjoint of a is dy with zeros where anything was written,
and an entry written twice keeps the last write (NumPy's order), so its cotangent goes
to the last writer only, added into the item of v that writer took (`written_back`;
broadcast values get the sum over their copies). Values of a kind the array cannot hold
(floats into an integer array, which NumPy truncates; complex into a real one, whose
imaginary part NumPy drops) are refused when the call runs: they have no gradient.
"""

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from ..runtime import unbroadcast
from ..runtime.common import _is_scalar, _ravel
from . import describe, linear, rule

_MODES = "clipmode must be one of 'clip', 'raise', or 'wrap'"


def _kind(x) -> str:
    return np.asarray(x).dtype.kind


def _check_kinds(a, v, what):
    """Refuse values NumPy would cast to `a`'s kind by dropping part of them."""
    a_kind, v_kind = _kind(a), _kind(v)
    if a_kind in "biu" and v_kind in "fc" or a_kind == "f" and v_kind == "c":
        raise TypeError(f"srcgrad: {what} of {np.asarray(v).dtype} values into an array "
                        f"of {np.asarray(a).dtype} (NumPy casts them, dropping part of "
                        f"them: no gradient); convert one of them first")


def _numba_kinds(a, v, what):
    """`_check_kinds` when numba types the call."""
    v_dtype = v.dtype if isinstance(v, (types.Array, types.List)) else v
    if isinstance(a.dtype, (types.Integer, types.Boolean)) and isinstance(
            v_dtype, (types.Float, types.Complex)) or isinstance(
            a.dtype, types.Float) and isinstance(v_dtype, types.Complex):
        raise TypingError(f"srcgrad: {what} of {v_dtype} values into an array of {a.dtype} "
                          f"(NumPy casts them, dropping part of them: no gradient)")


def _complex(t) -> bool:
    return isinstance(getattr(t, "dtype", t), types.Complex)


# ---- the positions written, and the last writer of each ----


def put_positions(size, ind, mode="raise"):
    """The flat positions (0 to size - 1) ``np.put(a, ind, v, mode)`` writes into an
    array of `size` entries, in the order it writes them.

    >>> put_positions(4, [1, -1, 6], "wrap")
    array([1, 3, 2])
    """
    k = np.ravel(np.asarray(ind)).astype(np.intp)
    if k.size and size == 0:
        raise IndexError("cannot replace elements of an empty array")
    if mode == "wrap":
        return np.mod(k, size)
    if mode == "clip":
        return np.clip(k, 0, size - 1)
    if mode != "raise":
        raise ValueError(_MODES)
    if np.any((k < -size) | (k >= size)):
        raise IndexError(f"index out of range for array of size {size}")
    return np.where(k < 0, k + size, k)


def _integer_index(t, what):
    """Refuse an index of another kind than integers, as NumPy does."""
    kind = t.dtype if isinstance(t, (types.Array, types.List)) else t
    if not isinstance(kind, types.Integer):
        raise TypingError(f"srcgrad: the indices of {what} must be integers")


@overload(put_positions)
def _put_positions_typer(size, ind, mode="raise"):
    _integer_index(ind, "np.put")
    def impl(size, ind, mode="raise"):
        k = _ravel(np.asarray(ind))
        out = np.empty(k.size, np.intp)
        if k.size and size == 0:
            raise IndexError("cannot replace elements of an empty array")
        for j in range(k.size):
            i = k[j]
            if mode == "wrap":
                i = i % size
            elif mode == "clip":
                i = min(max(i, 0), size - 1)
            elif mode == "raise":
                if i < -size or i >= size:
                    raise IndexError("index out of range for array")
                if i < 0:
                    i += size
            else:
                raise ValueError(_MODES)
            out[j] = i
        return out
    return impl


def written_back(dy, positions, like):
    """The cotangent of the values written at the flat `positions` of an array whose
    cotangent is dy, in the shape of `like` (the values, repeated cyclically along the
    positions): each position's entry of dy goes to its last writer only (an entry written
    twice keeps the last write), added into the item of `like` it took.

    >>> written_back(np.array([1.0, 2.0, 4.0]), np.array([0, 2, 0]), np.zeros(2))
    array([1., 4.])
    """
    flat = np.ravel(dy)
    n = np.size(like)
    out = np.zeros(n, np.result_type(flat, 1.0))
    positions = np.asarray(positions, np.intp)
    if n and positions.size:
        places, first = np.unique(positions[::-1], return_index=True)
        np.add.at(out, (positions.size - 1 - first) % n, flat[places])
    if not np.iscomplexobj(like):
        out = np.real(out)   # a real value written into a complex array: JAX's convention
    return out.reshape(np.shape(like)) if np.ndim(like) else out[0]


@register_jitable
def _last_writers(positions, size):
    """For each of `size` flat entries, the last k with positions[k] there, or -1."""
    owner = np.full(size, -1, np.intp)
    for k in range(positions.size):
        owner[positions[k]] = k
    return owner


@register_jitable
def _added_back(flat, positions, out):
    """`out` (n items) with each entry of `flat` at a position added into the item its
    last writer took (writer k took item k % n)."""
    owner = _last_writers(positions, flat.size)
    n = out.size
    if n > 0:
        for p in range(flat.size):
            if owner[p] >= 0:
                out[owner[p] % n] += flat[p]
    return out


@overload(written_back)
def _written_back_typer(dy, positions, like):
    if not isinstance(dy, types.Array):
        return None
    if _complex(like):
        if _is_scalar(like):
            return lambda dy, positions, like: _added_back(
                _ravel(dy), positions, np.zeros(1, np.complex128))[0]
        return lambda dy, positions, like: _added_back(
            _ravel(dy), positions, np.zeros(like.size, np.complex128)).reshape(like.shape)
    # (a real value written into a complex array: the real part, JAX's convention)
    if _is_scalar(like):
        return lambda dy, positions, like: _added_back(
            _ravel(dy).real, positions, np.zeros(1))[0]
    if isinstance(like, types.List):   # (a list display of values: an array of them)
        return lambda dy, positions, like: _added_back(
            _ravel(dy).real, positions, np.zeros(len(like)))
    if not isinstance(like, types.Array):
        return None
    return lambda dy, positions, like: _added_back(
        _ravel(dy).real, positions, np.zeros(like.size)).reshape(like.shape)


# ---- np.put ----


def put_into(a, ind, v, mode="raise"):
    """A copy of `a` with `v` put at the flat positions `ind`, as np.put puts it.

    >>> put_into(np.zeros(4), [0, 0, -1], [1.0, 2.0])
    array([2., 0., 0., 1.])
    """
    _check_kinds(a, v, "np.put")
    out = np.array(a, copy=True)
    np.put(out, ind, v, mode)
    return out


@register_jitable
def _put_flat(out, positions, v):
    """Write v's items (repeated cyclically) at the flat positions of the C-contiguous
    `out`; nothing where v is empty."""
    flat = out.reshape(out.size)
    values = _ravel(np.asarray(v))
    if values.size:
        for k in range(positions.size):
            flat[positions[k]] = values[k % values.size]
    return out


@overload(put_into)
def _put_into_typer(a, ind, v, mode="raise"):
    if not isinstance(a, types.Array):
        raise TypingError("srcgrad: np.put writes into an array")
    _numba_kinds(a, v, "np.put")
    return lambda a, ind, v, mode="raise": _put_flat(np.copy(a), put_positions(
        a.size, ind, mode), v)


def unput(dy, ind, v, mode="raise"):
    """dy with zeros where ``np.put(a, ind, v, mode)`` writes (nowhere if v is empty):
    the cotangent of the array put into (v is read for its size only).

    >>> unput(np.ones(3), [2, 0], [5.0])
    array([0., 1., 0.])
    """
    out = np.array(dy, copy=True)
    if np.size(v):
        out.reshape(-1)[put_positions(out.size, ind, mode)] = 0.0
    return out


@overload(unput)
def _unput_typer(dy, ind, v, mode="raise"):
    if not isinstance(dy, types.Array):
        return None
    return lambda dy, ind, v, mode="raise": _put_flat(np.copy(dy), put_positions(
        dy.size, ind, mode), np.zeros(np.asarray(v).size, dy.dtype))


def put_grad(dy, ind, v, mode="raise"):
    """The cotangent of v in ``np.put(a, ind, v, mode)``: each entry of dy written goes
    to the item of v its last write took (v is read for its shape only).

    >>> put_grad(np.array([1.0, 2.0, 4.0]), [0, 0, 2], np.zeros(2))
    array([4., 1.])
    """
    return written_back(dy, put_positions(np.size(dy), ind, mode), v)


@overload(put_grad)
def _put_grad_typer(dy, ind, v, mode="raise"):
    return lambda dy, ind, v, mode="raise": written_back(
        dy, put_positions(dy.size, ind, mode), v)


@rule(put_into)
def put_into_(dy, y, a, ind, v, mode="raise"):
    return unput(dy, ind, v, mode), None, put_grad(dy, ind, v, mode)


# ---- np.place: np.put at the entries where the mask holds ----


def placed(arr, mask, vals):
    """A copy of `arr` with `vals` placed where `mask` holds, as np.place places them.

    >>> placed(np.zeros(4), np.array([True, False, True, True]), [1.0, 2.0])
    array([1., 0., 2., 1.])
    """
    _check_kinds(arr, vals, "np.place")
    out = np.array(arr, copy=True)
    np.place(out, mask, vals)
    return out


@register_jitable
def _place_positions(size, mask, n):
    """The flat positions np.place writes `n` values into, checked as NumPy checks them."""
    m = _ravel(np.asarray(mask))
    if m.size != size:
        raise ValueError("place: mask and data must be the same size")
    positions = np.flatnonzero(m)
    if positions.size and n == 0:
        raise ValueError("Cannot insert from an empty array!")
    return positions


@overload(placed)
def _placed_typer(arr, mask, vals):
    if not isinstance(arr, types.Array):
        raise TypingError("srcgrad: np.place writes into an array")
    _numba_kinds(arr, vals, "np.place")
    return lambda arr, mask, vals: _put_flat(np.copy(arr), _place_positions(
        arr.size, mask, np.asarray(vals).size), vals)


@rule(placed)
def placed_(dy, y, arr, mask, vals):
    return placed(dy, mask, 0.0), None, written_back(dy, np.flatnonzero(mask), vals)


# ---- np.put_along_axis: np.put at the entries the index picks along the axis ----


def along_positions(shape, indices, axis):
    """The flat positions ``np.put_along_axis(a, indices, values, axis)`` writes into an
    array of `shape` (C order), in the order it writes them (that of the index broadcast
    against a's other axes), and the shape of that broadcast index.

    >>> along_positions((2, 3), np.array([[2], [0]]), 1)
    (array([2, 3]), (2, 1))
    """
    indices = np.asarray(indices, np.intp)
    if axis is None:
        size = int(np.prod(shape))
        return np.where(indices < 0, indices + size, indices).ravel(), indices.shape
    ax = axis % len(shape)
    parts = [np.arange(n).reshape((1,) * d + (n,) + (1,) * (len(shape) - d - 1))
             for d, n in enumerate(shape)]
    parts[ax] = np.where(indices < 0, indices + shape[ax], indices)
    parts = np.broadcast_arrays(*parts)
    return np.ravel_multi_index(parts, shape).ravel(), parts[0].shape


@overload(along_positions)
def _along_positions_typer(shape, indices, axis):
    if not isinstance(indices, types.Array) or len(shape) > 2 or indices.ndim > 2:
        raise TypingError("srcgrad: np.put_along_axis compiles arrays of rank 1 and 2 only")
    _integer_index(indices, "np.put_along_axis")
    if isinstance(axis, (types.NoneType, types.Omitted)) or len(shape) == 1:
        def flat(shape, indices, axis):
            size = 1
            for n in shape:
                size *= n
            k = _ravel(indices)
            out = np.empty(k.size, np.intp)
            for j in range(k.size):
                if k[j] < -size or k[j] >= size:
                    raise IndexError("index out of bounds for np.put_along_axis")
                out[j] = k[j] + size if k[j] < 0 else k[j]
            return out, indices.shape
        return flat
    if indices.ndim != 2:
        raise TypingError("srcgrad: np.put_along_axis takes indices of the array's rank")

    def matrix(shape, indices, axis):
        ax = axis % 2
        if indices.shape[1 - ax] != 1 and indices.shape[1 - ax] != shape[1 - ax]:
            raise ValueError("srcgrad: the indices of np.put_along_axis do not broadcast "
                             "against the array")
        rows = indices.shape[0] if ax == 0 or indices.shape[0] != 1 else shape[0]
        cols = indices.shape[1] if ax == 1 or indices.shape[1] != 1 else shape[1]
        out = np.empty(rows * cols, np.intp)
        for i in range(rows):
            for j in range(cols):
                k = indices[0 if indices.shape[0] == 1 else i, 0 if indices.shape[1] == 1
                            else j]
                if k < -shape[ax] or k >= shape[ax]:
                    raise IndexError("index out of bounds for np.put_along_axis")
                if ax == 0:
                    out[i * cols + j] = (k + shape[0] if k < 0 else k) * shape[1] + j
                else:
                    out[i * cols + j] = i * shape[1] + (k + shape[1] if k < 0 else k)
        return out, (rows, cols)
    return matrix


def put_along(arr, indices, values, axis):
    """A copy of `arr` with `values` put along `axis` at `indices`, as
    np.put_along_axis puts them.

    >>> put_along(np.zeros((2, 2)), np.array([[1], [0]]), 5.0, 1)
    array([[0., 5.],
           [5., 0.]])
    """
    _check_kinds(arr, values, "np.put_along_axis")
    out = np.array(arr, copy=True)
    np.put_along_axis(out, indices, values, axis)
    return out


@overload(put_along)
def _put_along_typer(arr, indices, values, axis):
    if not isinstance(arr, types.Array):
        raise TypingError("srcgrad: np.put_along_axis writes into an array")
    _numba_kinds(arr, values, "np.put_along_axis")

    def impl(arr, indices, values, axis):
        positions, shape = along_positions(arr.shape, indices, axis)
        out = np.copy(arr)
        flat = out.reshape(out.size)
        v = np.ascontiguousarray(np.broadcast_to(np.asarray(values), shape)).reshape(
            positions.size)
        for k in range(positions.size):
            p = positions[k]
            if p < 0 or p >= flat.size:
                raise IndexError("index out of bounds for np.put_along_axis")
            flat[p] = v[k]
        return out
    return impl


def put_along_grad(dy, indices, values, axis):
    """The cotangent of values in ``np.put_along_axis(a, indices, values, axis)``: each
    entry of dy written to the last writer of it, summed over values' broadcast copies
    (values is read for its shape only).

    >>> put_along_grad(np.arange(4.0).reshape(2, 2), np.array([[1, 1]]), 1.0, 0)
    np.float64(5.0)
    """
    positions, shape = along_positions(np.shape(dy), indices, axis)
    kind = np.zeros(shape, np.result_type(values, 1.0))
    return unbroadcast(written_back(dy, positions, kind), values)


@overload(put_along_grad)
def _put_along_grad_typer(dy, indices, values, axis):
    dtype = np.complex128 if _complex(values) else np.float64

    def impl(dy, indices, values, axis):
        positions, shape = along_positions(dy.shape, indices, axis)
        return unbroadcast(written_back(dy, positions, np.zeros(shape, dtype)), values)
    return impl


@rule(put_along)
def put_along_(dy, y, arr, indices, values, axis):
    return (put_along(dy, indices, 0.0, axis), None, put_along_grad(dy, indices, values, axis),
            None)


linear(put_into, positions=(0, 2))
linear(placed, positions=(0, 2))
linear(put_along, positions=(0, 2))
linear(unput, put_grad, written_back, put_along_grad)
describe(unput, put_grad, written_back, put_along_grad, pure=True)
describe(unput, put_grad, written_back, put_along_grad, shape_only=2)
describe(np.put, updates=(None, put_into))
describe(np.place, updates=(None, placed))
describe(np.put_along_axis, updates=(None, put_along))
