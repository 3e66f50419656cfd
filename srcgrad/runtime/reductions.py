"""The adjoints of reductions: `sum_grad`, `mean_grad`, `extremum_grad` (a cotangent
spread back over the reduced axes).

The numba forms see a reduction from the reduced side: entry k of the flattened y (or
dy) belongs to every index of x whose coordinates off the reduced axes, read in C order,
give k; so no keepdims-shaped copy of y is ever built.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload, register_jitable
from numba.np.unsafe.ndarray import to_fixed_tuple

from ..numba_ext import normalize_axis
from .broadcasting import _sum_to
from .common import _float_dtype, _float_scalar, _is_none, _is_scalar, _item, _ravel


def sum_grad(dy, x, axis=None, keepdims=False):
    """Adjoint of ``y = np.sum(x, axis, keepdims=keepdims)``: dy broadcast to x's shape.

    >>> sum_grad(np.array([1.0, 2.0]), np.zeros((2, 3)), axis=1)
    array([[1., 1., 1.],
           [2., 2., 2.]])
    """
    if np.ndim(x) == 0:
        return dy
    return _spread(dy, x, axis, 1)


@overload(sum_grad)
def _sum_grad_typer(dy, x, axis=None, keepdims=False):
    if _is_scalar(x):
        return lambda dy, x, axis=None, keepdims=False: dy
    if not isinstance(x, types.Array):
        return None
    if _is_scalar(dy) and _is_none(axis):
        cast = _float_scalar(dy)
        return lambda dy, x, axis=None, keepdims=False: np.full(x.shape, cast(_item(dy)))
    return lambda dy, x, axis=None, keepdims=False: _spread(dy, x, axis, 1)


def mean_grad(dy, x, axis=None, keepdims=False):
    """Adjoint of ``y = np.mean(x, axis, keepdims=keepdims)``."""
    if np.ndim(x) == 0:
        return dy
    return _spread(dy, x, axis, _count(x, axis))


@overload(mean_grad)
def _mean_grad_typer(dy, x, axis=None, keepdims=False):
    if _is_scalar(x):
        return lambda dy, x, axis=None, keepdims=False: dy
    if isinstance(x, types.Array):
        return lambda dy, x, axis=None, keepdims=False: _spread(dy, x, axis, _count(x, axis))


def like_reduced(x, axis=None, keepdims=False):
    """A stand-in with no data (zero strides) of the shape of ``np.sum(x, axis,
    keepdims=keepdims)``, like `like_broadcast`'s. A number where that is.

    >>> like_reduced(np.zeros((2, 3)), 1).shape
    (2,)
    """
    shape = np.shape(x)
    axes = range(len(shape)) if axis is None else axis if isinstance(axis, tuple) else (axis,)
    gone = {a % len(shape) for a in axes if -len(shape) <= a < len(shape)}
    if len(gone) != len(axes):
        raise ValueError(f"axis {axis} is out of bounds or repeated for rank {len(shape)}")
    shape = tuple(1 if i in gone else n for i, n in enumerate(shape)
                  if keepdims or i not in gone)
    return np.broadcast_to(0.0, shape) if shape else 0.0


@overload(like_reduced, prefer_literal=True)
def _like_reduced_typer(x, axis=None, keepdims=False):
    if not isinstance(x, types.Array):
        return None
    keep = keepdims if isinstance(keepdims, bool) else \
        getattr(keepdims, "literal_value", getattr(keepdims, "value", None))
    if not isinstance(keep, bool):
        return None
    if _is_none(axis):
        gone = x.ndim
    elif isinstance(axis, types.Integer):
        gone = 1
    elif isinstance(axis, types.BaseTuple) and \
            all(isinstance(t, types.Integer) for t in getattr(axis, "types", ())):
        gone = len(axis.types)   # (a tuple of literals: numba's second try, with literals)
        if not all(isinstance(t, types.IntegerLiteral) for t in axis.types):
            return None if not isinstance(axis, types.UniTuple) else \
                _reduced_like(x.ndim if keep else x.ndim - gone, keep)
        axes = sorted(a % x.ndim if -x.ndim <= a < x.ndim else -1
                      for a in (t.literal_value for t in axis.types))
        if -1 in axes or len(set(axes)) != len(axes):
            return None
        fixed = tuple(i in axes for i in range(x.ndim))
    else:
        return None
    n = x.ndim if keep else x.ndim - gone
    if not isinstance(axis, types.BaseTuple) or n <= 0:
        return _reduced_like(n, keep)

    def literal(x, axis=None, keepdims=False):
        return _kept_shape(x.shape, fixed, n, keep)
    return literal


def _reduced_like(n: int, keep: bool):
    """`like_reduced`'s numba form for an axis known at run time, leaving `n` axes."""
    if n <= 0:
        return lambda x, axis=None, keepdims=False: 0.0

    def impl(x, axis=None, keepdims=False):
        return _kept_shape(x.shape, _reduced_axes(x.ndim, axis), n, keep)
    return impl


@register_jitable
def _kept_shape(shape, reduced, n, keep):
    """The stand-in of `like_reduced`: of `shape` without (or, to `keep`, at 1 on) the
    axes `reduced`, which leaves `n` of them."""
    out = np.empty(n, np.intp)
    j = 0
    for i in range(len(shape)):
        if not reduced[i] or keep:
            if j == n:
                raise ValueError("repeated axis in the reduction")
            out[j] = 1 if reduced[i] else shape[i]
            j += 1
    if j != n:
        raise ValueError("repeated axis in the reduction")
    return np.broadcast_to(np.zeros(1), to_fixed_tuple(out, n))


def extremum_grad(dy, y, x, axis=None, keepdims=False):
    """Adjoint of ``y = np.max(x, axis)`` or ``np.min``: dy goes to the positions of x
    holding the extremum, split evenly among ties (as in JAX).

    >>> extremum_grad(1.0, 3.0, np.array([3.0, 1.0, 3.0]))
    array([0.5, 0. , 0.5])
    """
    if np.ndim(x) == 0:
        return dy
    top = _expand(y, x, axis)  # keepdims' shape, or a scalar
    share = (x == top).astype(_float_dtype(np.result_type(dy, x)))
    ties = _sum_to(share, np.shape(top))
    with np.errstate(divide="ignore", invalid="ignore"):  # a NaN extremum matches nothing
        share *= _expand(dy, x, axis) / ties
    return share


@overload(extremum_grad)
def _extremum_grad_typer(dy, y, x, axis=None, keepdims=False):
    if _is_scalar(x):
        return lambda dy, y, x, axis=None, keepdims=False: dy
    if not isinstance(x, types.Array):
        return None
    cast = _float_scalar(dy)
    if _is_none(axis) and _is_scalar(y) and _is_scalar(dy):
        # the whole array's extremum (`top = np.max(v)` in a loop body): one array made
        def whole(dy, y, x, axis=None, keepdims=False):
            top, d = _item(y), _item(dy)
            xs = _ravel(x)
            count = 0
            for k in range(xs.size):
                if xs[k] == top:
                    count += 1
            out = np.zeros(x.shape, cast)
            flat = out.reshape(out.size)  # a view: out is C-contiguous
            if count == 0:
                flat[:] = np.nan  # a NaN extremum: dy * 0 / 0, as in NumPy and JAX
                return out
            share = d / count
            for k in range(xs.size):
                if xs[k] == top:
                    flat[k] = share
            return out
        return whole

    def impl(dy, y, x, axis=None, keepdims=False):
        reduced = _reduced_axes(x.ndim, axis)
        ys, ds = _ravel(y), _ravel(dy)
        _check_reduced_size(ys.size, x.shape, reduced)
        _check_reduced_size(ds.size, x.shape, reduced)
        count = np.zeros(ys.size, np.intp)
        for idx in np.ndindex(x.shape):
            k = _reduced_index(idx, x.shape, reduced)
            if x[idx] == ys[k]:
                count[k] += 1
        out = np.zeros(x.shape, cast)
        for idx in np.ndindex(x.shape):
            k = _reduced_index(idx, x.shape, reduced)
            if count[k] == 0:
                out[idx] = np.nan  # a NaN extremum: dy * 0 / 0, as in NumPy and JAX
            elif x[idx] == ys[k]:
                out[idx] = ds[k] / count[k]
        return out
    return impl


def _expand(v, x, axis):
    """`v`, a reduction of `x` over `axis`, at x's rank (size 1 on the reduced axes).

    A scalar stays a scalar and a `v` already at x's rank (keepdims) is returned as is;
    both broadcast against x.
    """
    if np.ndim(v) == 0 or np.ndim(v) == np.ndim(x):
        return v
    return np.expand_dims(v, axis)


def _reduced_axes(ndim, axis):
    """A mask of the axes of an `ndim`-array that a reduction over `axis` removes."""
    mask = np.zeros(ndim, np.bool_)
    mask[slice(None) if axis is None else np.asarray(axis)] = True
    return mask


@overload(_reduced_axes)
def _reduced_axes_typer(ndim, axis):
    if _is_none(axis):
        return lambda ndim, axis: np.ones(ndim, np.bool_)
    if isinstance(axis, types.Integer):
        def one(ndim, axis):
            mask = np.zeros(ndim, np.bool_)
            mask[normalize_axis(axis, ndim)] = True
            return mask
        return one
    if isinstance(axis, types.UniTuple) and isinstance(axis.dtype, types.Integer):
        def several(ndim, axis):
            mask = np.zeros(ndim, np.bool_)
            for ax in axis:
                mask[normalize_axis(ax, ndim)] = True
            return mask
        return several


def _count(x, axis):
    """How many elements of `x` a reduction over `axis` combines, at least 1.

    Zero only occurs for an empty x, whose gradient is empty whatever it is divided by.
    """
    if axis is None:
        return max(np.size(x), 1)
    shape = np.asarray(np.shape(x), np.intp)
    return max(int(np.prod(shape[_reduced_axes(len(shape), axis)])), 1)


@overload(_count)
def _count_typer(x, axis):
    def impl(x, axis):
        reduced = _reduced_axes(x.ndim, axis)
        n = 1
        for i in range(x.ndim):
            if reduced[i]:
                n *= x.shape[i]
        return max(n, 1)
    return impl


def _spread(dy, x, axis, n):
    """``dy / n`` broadcast back to x's shape, for a reduction of x over `axis`."""
    if np.ndim(dy) == 0:  # a whole reduction's: filled, cheaper than a broadcast view
        return np.full(np.shape(x), dy / n)
    spread = _expand(dy, x, axis)
    return np.broadcast_to(spread / n if n != 1 else spread, np.shape(x))


@overload(_spread)
def _spread_typer(dy, x, axis, n):
    cast = _float_scalar(dy)
    if isinstance(axis, types.Integer) and isinstance(x, types.Array):
        # one axis (a row's or a column's sum in a loop body): x as (outer, m, inner), dy
        # as (outer, inner); the result is the one array made, the common case's cost
        def one(dy, x, axis, n):
            a = normalize_axis(axis, x.ndim)
            outer, inner = 1, 1
            for i in range(a):
                outer *= x.shape[i]
            for i in range(a + 1, x.ndim):
                inner *= x.shape[i]
            m = x.shape[a]
            d = _ravel(dy)
            if d.size != outer * inner:
                raise ValueError("the cotangent does not match the shape of the reduction")
            out = np.empty(x.shape, cast)
            flat = out.reshape(out.size)  # a view: out is C-contiguous
            if n == 1:
                _spread_rows(flat, d, outer, m, inner)
            else:   # (a mean's) each entry divided once, not once per copy
                q = np.empty(d.size, cast)
                for k in range(d.size):
                    q[k] = d[k] / n
                _spread_rows(flat, q, outer, m, inner)
            return out
        return one

    def impl(dy, x, axis, n):
        reduced = _reduced_axes(x.ndim, axis)
        d = _ravel(dy)
        _check_reduced_size(d.size, x.shape, reduced)
        q = np.empty(d.size, cast)
        for k in range(d.size):
            q[k] = d[k] / n
        out = np.empty(x.shape, cast)
        if out.size == 0:
            return out
        # a row at a time along the last axis: its entries read q at one index (that
        # axis reduced) or consecutive ones (kept), so no per-entry index arithmetic
        width = x.shape[x.ndim - 1]
        rows = out.reshape(out.size // width, width)  # a view: out is C-contiguous
        step = 0 if reduced[x.ndim - 1] else 1
        for r in range(rows.shape[0]):
            k = _row_start(r, x.shape, reduced)
            for j in range(width):
                rows[r, j] = q[k + j * step]
        return out
    return impl


@register_jitable
def _spread_rows(flat, d, outer, m, inner):
    """`flat`, x's shape (outer, m, inner) in C order, set to `d`, (outer, inner), along m."""
    if inner == 1:   # the last axis reduced: each entry of d fills a run of m
        for o in range(outer):
            v = d[o]
            for j in range(o * m, (o + 1) * m):
                flat[j] = v
        return
    for o in range(outer):
        for j in range(m):
            row = (o * m + j) * inner
            for c in range(inner):
                flat[row + c] = d[o * inner + c]


@register_jitable
def _reduced_index(idx, shape, reduced):
    """The flat index into the reduction over `reduced` that x's index `idx` feeds."""
    k = 0
    for i in range(len(shape)):
        if not reduced[i]:
            k = k * shape[i] + idx[i]
    return k


@register_jitable
def _check_reduced_size(size, shape, reduced):
    n = 1
    for i in range(len(shape)):
        if not reduced[i]:
            n *= shape[i]
    if size != n:
        raise ValueError("the cotangent does not match the shape of the reduction")


@register_jitable
def _row_start(r, shape, reduced):
    """The flat index into the reduction over `reduced` that the first entry of row `r`
    (x seen as rows along its last axis, in C order) feeds."""
    last = len(shape) - 1
    k, mult = 0, 1 if reduced[last] else shape[last]
    for i in range(last - 1, -1, -1):
        c = r % shape[i]
        r //= shape[i]
        if not reduced[i]:
            k += c * mult
            mult *= shape[i]
    return k
