"""The small helpers generated gradient code calls.

Each public helper is a plain NumPy function, which is what runs under ``jit=False``,
and has a numba overload with the same meaning, which is what runs under
``numba.njit``. The overload picks its implementation at numba compile time from the
argument types (scalar or array, ndim), so one generated source serves both modes and
the compiled code carries no runtime type dispatch. Importing this module registers the
overloads, and those of `numba_ext` for the NumPy forms generated code uses.

Conventions: a 0-d array counts as a scalar; gradients have the floating dtype of the
cotangent (float64 for integer data); the adjoint of a reduction accepts the reduced
cotangent with or without kept dimensions (numba tells them apart by rank, so
``keepdims`` need not be a constant there).
"""

from __future__ import annotations

import math

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype
from numba.np.unsafe.ndarray import to_fixed_tuple

from . import numba_ext  # noqa: F401  (registers the NumPy forms generated code uses)
from .errors import NONSCALAR_MARKER, NonScalarOutput
from .numba_ext import normalize_axis

_NONSCALAR = "grad needs a scalar result; this function returns an array (use vjp)"


def _float_dtype(dtype) -> np.dtype:
    """`dtype` if floating or complex, else float64: the dtype of a gradient."""
    dtype = np.dtype(dtype)
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


# ---- Python versions ----

def unbroadcast(g, like):
    """Sum the gradient `g` down to the shape of `like` (NumPy broadcasting, reversed).

    >>> unbroadcast(np.ones((2, 3)), np.zeros((1, 3)))
    array([[2., 2., 2.]])
    """
    shape = np.shape(like)
    if not shape:
        return np.sum(g) if isinstance(g, np.ndarray) else g
    if np.ndim(g) == 0:
        return np.full(shape, g, _float_dtype(np.result_type(g)))
    dtype = _float_dtype(g.dtype)
    if g.shape == shape:
        return g if g.dtype == dtype else g.astype(dtype)
    lead = g.ndim - len(shape)
    tail = g.shape[lead:]
    if lead < 0 or any(n != 1 and n != m for n, m in zip(shape, tail, strict=True)):
        raise ValueError(f"cannot unbroadcast a gradient of shape {g.shape} to {shape}")
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and tail[i] != 1)
    return np.sum(g, axis=axes, dtype=dtype).reshape(shape)


def zeros_like(x):
    """The zero gradient of `x`: a float scalar, or a float array of x's shape.

    >>> zeros_like(np.arange(3))
    array([0., 0., 0.])
    """
    dtype = _float_dtype(np.result_type(x))
    if np.ndim(x) == 0:
        return dtype.type(0.0)
    return np.zeros(np.shape(x), dtype)


def sum_grad(dy, x, axis=None, keepdims=False):
    """Adjoint of ``y = np.sum(x, axis, keepdims=keepdims)``: dy broadcast to x's shape.

    >>> sum_grad(np.array([1.0, 2.0]), np.zeros((2, 3)), axis=1)
    array([[1., 1., 1.],
           [2., 2., 2.]])
    """
    if np.ndim(x) == 0:
        return dy
    return np.broadcast_to(_expand(dy, x, axis), np.shape(x))


def mean_grad(dy, x, axis=None, keepdims=False):
    """Adjoint of ``y = np.mean(x, axis, keepdims=keepdims)``."""
    if np.ndim(x) == 0:
        return dy
    # A zero count only occurs with an empty x, whose gradient is empty anyway.
    return sum_grad(dy / max(_count(x, axis), 1), x, axis, keepdims)


def extremum_grad(dy, y, x, axis=None, keepdims=False):
    """Adjoint of ``y = np.max(x, axis)`` or ``np.min``: dy goes to the positions of x
    holding the extremum, split evenly among ties (as in JAX).

    >>> extremum_grad(1.0, 3.0, np.array([3.0, 1.0, 3.0]))
    array([0.5, 0. , 0.5])
    """
    if np.ndim(x) == 0:
        return dy
    mask = x == _expand(y, x, axis)
    with np.errstate(invalid="ignore"):  # a NaN extremum matches nothing: 0 / 0
        return _expand(dy, x, axis) * mask / np.sum(mask, axis=axis, keepdims=True)


def seed(y):
    """The cotangent 1.0 that starts the backward pass of a scalar result `y`."""
    if np.ndim(y) != 0:
        raise NonScalarOutput(_NONSCALAR)
    dtype = np.result_type(y)
    return dtype.type(1.0) if dtype.kind == "f" else 1.0


def matmul_lhs_grad(dy, a, b):
    """Adjoint of ``y = a @ b`` with respect to `a`, for 1-D and 2-D operands."""
    if np.ndim(b) == 1:
        return np.outer(dy, b) if np.ndim(a) == 2 else dy * b
    return dy @ b.T if np.ndim(a) == 2 else b @ dy


def matmul_rhs_grad(dy, a, b):
    """Adjoint of ``y = a @ b`` with respect to `b`, for 1-D and 2-D operands."""
    if np.ndim(a) == 1:
        return np.outer(a, dy) if np.ndim(b) == 2 else dy * a
    return a.T @ dy


def reshape_as(dy, x):
    """`dy` with x's shape: the adjoint of reshape, ravel, squeeze, expand_dims, copy."""
    if np.ndim(x) == 0:
        return np.reshape(dy, ())[()]
    return np.reshape(dy, np.shape(x))


def _expand(v, x, axis):
    """`v`, a reduction of `x` over `axis`, at x's rank (size 1 on the reduced axes).

    A scalar stays a scalar and a `v` already at x's rank (keepdims) is returned as is;
    both broadcast against x.
    """
    if np.ndim(v) == 0 or np.ndim(v) == np.ndim(x):
        return v
    return np.expand_dims(v, axis)


def _count(x, axis):
    """How many elements of `x` a reduction over `axis` combines into one."""
    if axis is None:
        return x.size
    axes = axis if isinstance(axis, tuple) else (axis,)
    return math.prod(x.shape[a] for a in axes)


# ---- numba versions ----

def _is_scalar(t) -> bool:
    return isinstance(t, (types.Number, types.Boolean)) or (
        isinstance(t, types.Array) and t.ndim == 0)


def _float_scalar(t):
    """The NumPy scalar type of a gradient for numba type `t` (array or scalar)."""
    return _float_dtype(as_dtype(t.dtype if isinstance(t, types.Array) else t)).type


def _item(t):
    """A jitable giving the value of a scalar of numba type `t` (0-d arrays unwrapped)."""
    if isinstance(t, types.Array):
        return register_jitable(lambda v: v[()])
    return register_jitable(lambda v: v)


@register_jitable
def _broadcast_index(idx, shape, lead):
    """The flat C-order index into an array of `shape` that index `idx` (with `lead`
    extra leading entries) reads under broadcasting: size-1 axes contribute 0."""
    k = 0
    for i in range(len(shape)):
        if shape[i] != 1:
            k = k * shape[i] + idx[lead + i]
    return k


# Explicit loops rather than broadcasting ufuncs: numba takes seconds to compile each
# broadcasting ufunc call, and the loops run as fast.

@overload(unbroadcast)
def _unbroadcast_typer(g, like):
    if _is_scalar(like):
        if isinstance(g, types.Array) and g.ndim > 0:
            return lambda g, like: np.sum(g)
        item = _item(g)
        return lambda g, like: item(g)
    if not isinstance(like, types.Array):
        return None
    cast = _float_scalar(g)
    if _is_scalar(g):
        item = _item(g)
        return lambda g, like: np.full(like.shape, cast(item(g)))
    if not isinstance(g, types.Array):
        return None
    if g.ndim < like.ndim:
        raise TypingError(f"srcgrad: cannot unbroadcast a gradient of rank {g.ndim} "
                          f"to rank {like.ndim}")
    lead = g.ndim - like.ndim

    @register_jitable
    def reduce(g, like):
        for i in range(like.ndim):
            if like.shape[i] != 1 and like.shape[i] != g.shape[lead + i]:
                raise ValueError("cannot unbroadcast the gradient to the shape of like")
        out = np.zeros(like.shape, cast)
        flat = out.reshape(out.size)
        for idx in np.ndindex(g.shape):
            flat[_broadcast_index(idx, like.shape, lead)] += g[idx]
        return out

    if lead > 0:
        return reduce
    same = as_dtype(g.dtype) == np.dtype(cast)

    def same_rank(g, like):
        if g.shape == like.shape:
            return g if same else g.astype(cast)
        return reduce(g, like)
    return same_rank


@overload(zeros_like)
def _zeros_like_typer(x):
    cast = _float_scalar(x)
    if _is_scalar(x):
        return lambda x: cast(0.0)
    if isinstance(x, types.Array):
        return lambda x: np.zeros(x.shape, cast)


def _spread(dy, x, axis):
    """A jitable ``(dy, x, axis, n) -> dy / n`` broadcast to x's shape, or None."""
    if not isinstance(x, types.Array):
        return None
    cast = _float_scalar(dy)
    if _is_scalar(dy):
        item = _item(dy)
        return register_jitable(lambda dy, x, axis, n: np.full(x.shape, cast(item(dy) / n)))
    kept = _kept(dy, x, axis)

    @register_jitable
    def spread(dy, x, axis, n):
        e = kept(dy, x, axis)
        flat = e.reshape(e.size)
        out = np.empty(x.shape, cast)
        for idx in np.ndindex(x.shape):
            out[idx] = flat[_broadcast_index(idx, e.shape, 0)] / n
        return out
    return spread


@overload(sum_grad)
def _sum_grad_typer(dy, x, axis=None, keepdims=False):
    if _is_scalar(x):
        return lambda dy, x, axis=None, keepdims=False: dy
    spread = _spread(dy, x, axis)
    if spread is not None:
        return lambda dy, x, axis=None, keepdims=False: spread(dy, x, axis, 1)


@overload(mean_grad)
def _mean_grad_typer(dy, x, axis=None, keepdims=False):
    if _is_scalar(x):
        return lambda dy, x, axis=None, keepdims=False: dy
    spread = _spread(dy, x, axis)
    count = _counter(axis)
    if spread is not None:
        return (lambda dy, x, axis=None, keepdims=False:
                spread(dy, x, axis, max(count(x, axis), 1)))


@overload(extremum_grad)
def _extremum_grad_typer(dy, y, x, axis=None, keepdims=False):
    if _is_scalar(x):
        return lambda dy, y, x, axis=None, keepdims=False: dy
    if not isinstance(x, types.Array):
        return None
    cast = _float_scalar(dy)
    kept_y, kept_dy = _kept(y, x, axis), _kept(dy, x, axis)

    def impl(dy, y, x, axis=None, keepdims=False):
        e = kept_y(y, x, axis)
        ye = e.reshape(e.size)
        d = kept_dy(dy, x, axis)
        dye = d.reshape(d.size)
        count = np.zeros(ye.size, np.intp)
        for idx in np.ndindex(x.shape):
            k = _broadcast_index(idx, e.shape, 0)
            if x[idx] == ye[k]:
                count[k] += 1
        out = np.zeros(x.shape, cast)
        for idx in np.ndindex(x.shape):
            k = _broadcast_index(idx, e.shape, 0)
            if count[k] == 0:
                out[idx] = np.nan  # a NaN extremum: dy * 0 / 0, as in NumPy and JAX
            elif x[idx] == ye[k]:
                out[idx] = dye[_broadcast_index(idx, d.shape, 0)] / count[k]
        return out
    return impl


@overload(seed)
def _seed_typer(y):
    if isinstance(y, types.Array) and y.ndim > 0:
        raise TypingError(f"{NONSCALAR_MARKER}: {_NONSCALAR}")
    dtype = y.dtype if isinstance(y, types.Array) else y
    one = as_dtype(dtype).type(1.0) if isinstance(dtype, types.Float) else 1.0
    return lambda y: one


@overload(matmul_lhs_grad)
def _matmul_lhs_grad_typer(dy, a, b):
    if getattr(b, "ndim", 0) == 1:
        if getattr(a, "ndim", 0) == 2:
            return lambda dy, a, b: np.outer(dy, b)
        return lambda dy, a, b: dy * b
    if getattr(a, "ndim", 0) == 2:
        return lambda dy, a, b: dy @ b.T
    return lambda dy, a, b: b @ dy


@overload(matmul_rhs_grad)
def _matmul_rhs_grad_typer(dy, a, b):
    if getattr(a, "ndim", 0) == 1:
        if getattr(b, "ndim", 0) == 2:
            return lambda dy, a, b: np.outer(a, dy)
        return lambda dy, a, b: dy * a
    return lambda dy, a, b: a.T @ dy


@overload(reshape_as)
def _reshape_as_typer(dy, x):
    if _is_scalar(x):
        if isinstance(dy, types.Array) and dy.ndim > 0:
            return lambda dy, x: np.ascontiguousarray(dy).reshape(dy.size)[0]
        item = _item(dy)
        return lambda dy, x: item(dy)
    if not isinstance(x, types.Array):
        return None
    if _is_scalar(dy):
        item = _item(dy)
        return lambda dy, x: np.full(x.shape, item(dy))
    return lambda dy, x: np.ascontiguousarray(dy).reshape(x.shape)


# ---- reductions seen from the reduced side ----

def _kept(v, x, axis):
    """A jitable ``(v, x, axis) ->`` v, a reduction of x over axis, as a C-contiguous
    array of x's rank with size 1 on the reduced axes (keepdims form)."""
    nd = x.ndim
    if _is_scalar(v):
        item, ones = _item(v), (1,) * nd
        return register_jitable(lambda v, x, axis: np.full(ones, item(v)))
    if not isinstance(v, types.Array):
        raise TypingError(f"srcgrad: a reduction result must be an array or scalar, not {v}")
    if v.ndim == nd:
        return register_jitable(lambda v, x, axis: np.ascontiguousarray(v))
    if isinstance(axis, types.Integer) and v.ndim == nd - 1:
        return register_jitable(lambda v, x, axis: np.ascontiguousarray(v).reshape(
            to_fixed_tuple(_kept_shape(x.shape, (axis,)), nd)))
    if (isinstance(axis, types.UniTuple) and isinstance(axis.dtype, types.Integer)
            and v.ndim == nd - axis.count):
        return register_jitable(lambda v, x, axis: np.ascontiguousarray(v).reshape(
            to_fixed_tuple(_kept_shape(x.shape, axis), nd)))
    raise TypingError(f"srcgrad: a reduction of rank {v.ndim} over axis {axis} does not "
                      f"come from an array of rank {nd}")


@register_jitable
def _kept_shape(shape, axes):
    out = np.empty(len(shape), np.intp)
    for i in range(len(shape)):
        out[i] = shape[i]
    for ax in axes:
        out[normalize_axis(ax, len(shape))] = 1
    return out


def _counter(axis):
    """A jitable ``(x, axis) -> _count(x, axis)`` for the numba type of `axis`."""
    if isinstance(axis, types.Integer):
        return register_jitable(lambda x, axis: x.shape[normalize_axis(axis, x.ndim)])

    @register_jitable
    def count(x, axis):
        if axis is None:
            return x.size
        n = 1
        for ax in axis:
            n *= x.shape[normalize_axis(ax, x.ndim)]
        return n
    return count
