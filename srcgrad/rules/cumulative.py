"""Cumulative sums: the record of np.cumsum, its adjoint's helper (Python form beside its
numba form), and np.cumsum along an axis under numba (which takes the array alone).

The adjoint of y = cumsum(x) along an axis is the cumulative sum of dy taken from the
other end: entry i of x reaches entries i, i+1, ... of y.
"""

import numpy as np
from numba import types
from numba.extending import overload, register_jitable

from ..numba_ext import normalize_axis
from . import describe, linear, rule


def cumsum_grad(dy, x, axis=None):
    """The gradient of x of ``y = np.cumsum(x, axis)``: dy summed from the end, in x's
    shape (x is read for its shape only).

    >>> cumsum_grad(np.array([1.0, 1.0, 1.0]), np.zeros(3))
    array([3., 2., 1.])
    """
    dy = np.asarray(dy)
    if axis is None:
        return np.reshape(np.cumsum(dy.ravel()[::-1])[::-1], np.shape(x))
    return np.flip(np.cumsum(np.flip(dy, axis), axis=axis), axis)


@register_jitable
def _cumsum_along(a, axis, reverse):
    """`a`'s cumulative sum along `axis` (from the end if `reverse`), as float64."""
    k = normalize_axis(axis, a.ndim)
    n, before = a.shape[k], 1
    for i in range(k):
        before *= a.shape[i]
    after = a.size // (before * n) if before * n else 0
    flat = np.ascontiguousarray(a).reshape((before, n, after))
    out = np.empty((before, n, after))
    for p in range(before):
        for q in range(after):
            total = 0.0
            for j in range(n):
                i = n - 1 - j if reverse else j
                total += flat[p, i, q]
                out[p, i, q] = total
    return out.reshape(a.shape)


@overload(cumsum_grad)
def _cumsum_grad_typer(dy, x, axis=None):
    if not isinstance(dy, types.Array):
        return None
    if axis is None or isinstance(axis, (types.NoneType, types.Omitted)):
        def flat(dy, x, axis=None):
            return _cumsum_along(dy.ravel(), 0, True).reshape(np.shape(x))
        return flat
    return lambda dy, x, axis=None: _cumsum_along(dy, axis, True)


@overload(np.cumsum)
def _np_cumsum(a, axis=None):
    # numba's np.cumsum takes the array alone: this form serves the calls with an axis
    # (x.cumsum(axis=...) compiles through it on numba >= 0.60)
    if not isinstance(a, types.Array) or axis is None or isinstance(
            axis, (types.NoneType, types.Omitted)):
        return None
    return lambda a, axis=None: _cumsum_along(a, axis, False)


@rule(np.cumsum, methods=("cumsum",))
def cumsum(dy, y, x, axis=None):
    return cumsum_grad(dy, x, axis)


linear(np.cumsum, cumsum_grad)
describe(cumsum_grad, pure=True, shape_only=1)
