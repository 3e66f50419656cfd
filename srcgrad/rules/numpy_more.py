"""np.i0, np.ediff1d and np.vdot: their records, the helpers their rules call (each
Python form beside its numba form), and the forms numba lacks (np.i0).

np.i0's slope is the modified Bessel function i1 (`bessel_i1`: its power series,
sum_k (x/2)^(2k+1) / (k! (k+1)!), whose terms are all of one sign), whose slope is
i0(x) - i1(x) / x (1/2 at 0: `bessel_i1_slope`, differentiated from its source).

np.ediff1d(a, to_end, to_begin) is to_begin, then the differences a_{i+1} - a_i of a's
entries, then to_end: linear in the three, so the gradient of a_i is g_{i-1} - g_i (g:
dy's differences part, none past its ends), and to_begin's and to_end's are dy's ends.

np.vdot(a, b) = sum conj(a) b over the entries (flattened): b's gradient is dy conj(a)
and a's, under JAX's convention (a conjugate's adjoint is the conjugate), conj(dy b).
"""

import math

import numpy as np
from numba import types
from numba.extending import overload, register_jitable

from ..numba_ext import _is_none
from . import describe, linear, rule, tangent

# ---- np.i0 ----


@register_jitable
def _i0_i1(x):
    """i0(x) and i1(x) by their power series (terms of one sign: no cancellation)."""
    q = 0.25 * x * x
    t0, t1 = 1.0, 0.5 * x
    s0, s1 = t0, t1
    k = 0
    while True:
        k += 1
        t0 *= q / (k * k)
        t1 *= q / (k * (k + 1))
        s0 += t0
        s1 += t1
        if t0 <= 1e-17 * s0 and abs(t1) <= 1e-17 * abs(s1) or not math.isfinite(s0):
            return s0, s1


def bessel_i1(x):
    """The modified Bessel function of the first kind of order 1, the slope of np.i0.

    >>> round(float(bessel_i1(1.0)), 12), float(bessel_i1(0.0))
    (0.565159103992, 0.0)
    """
    x = np.asarray(x, dtype=float)
    out = np.vectorize(lambda v: _i0_i1(v)[1], otypes=[float])(x)
    return out[()] if out.ndim == 0 else out


def _of_each(k):
    """The numba form of i0 (k = 0) or i1 (k = 1): `_i0_i1` of a number or of each entry."""
    def typer(x):
        if isinstance(x, (types.Float, types.Integer)):
            return lambda x: _i0_i1(float(x))[k]
        if isinstance(x, types.Array):
            def impl(x):
                out = np.empty(x.shape)
                flat = out.reshape(out.size)
                for i, v in enumerate(x.flat):
                    flat[i] = _i0_i1(float(v))[k]
                return out
            return impl
    return typer


overload(bessel_i1)(_of_each(1))
overload(np.i0)(_of_each(0))   # numba has no np.i0


def bessel_i1_slope(x):
    """The slope of `bessel_i1`: i0(x) - i1(x) / x, and 1/2 at 0.

    >>> float(bessel_i1_slope(0.0))
    0.5
    """
    x = np.asarray(x, dtype=float)
    safe = np.where(x == 0.0, 1.0, x)
    out = np.i0(x) - np.where(x == 0.0, 0.5, bessel_i1(x) / safe)
    return out[()] if out.ndim == 0 else out


@register_jitable
def _i1_slope(x):
    s0, s1 = _i0_i1(x)
    return s0 - s1 / x if x != 0.0 else 0.5


@overload(bessel_i1_slope)
def _bessel_i1_slope_typer(x):
    if isinstance(x, (types.Float, types.Integer)):
        return lambda x: _i1_slope(float(x))
    if isinstance(x, types.Array):
        def impl(x):
            out = np.empty(x.shape)
            flat = out.reshape(out.size)
            for i, v in enumerate(x.flat):
                flat[i] = _i1_slope(float(v))
            return out
        return impl


@rule(np.i0, elementwise=True)
def i0(dy, y, x):
    return dy * bessel_i1(x)


@rule(bessel_i1, elementwise=True)
def i1(dy, y, x):
    return dy * bessel_i1_slope(x)


describe(bessel_i1, bessel_i1_slope, pure=True)


# ---- np.ediff1d ----


def _size(v):
    return 0 if v is None else np.size(v)


def differences_grad(dy, ary, to_begin=None):
    """The gradient of ary of ``y = np.ediff1d(ary, to_end, to_begin)``: g_{i-1} - g_i,
    g the part of dy that holds the differences (after to_begin's entries).

    >>> differences_grad(np.array([9.0, 1.0, 2.0]), np.zeros(3), 5.0)
    array([-1., -1.,  2.])
    """
    n, start = np.size(ary), _size(to_begin)
    g = np.asarray(dy)[start:start + max(n - 1, 0)]
    out = np.zeros(n, np.result_type(g, 1.0))
    out[1:] += g
    out[:-1] -= g
    return out.reshape(np.shape(ary))


def begin_grad(dy, to_begin):
    """The gradient of to_begin of np.ediff1d: dy's first entries, in to_begin's shape."""
    return np.asarray(dy)[:np.size(to_begin)].reshape(np.shape(to_begin))


def end_grad(dy, to_end):
    """The gradient of to_end of np.ediff1d: dy's last entries, in to_end's shape.

    >>> end_grad(np.array([1.0, 2.0, 3.0]), np.zeros(2))
    array([2., 3.])
    """
    return np.asarray(dy)[len(dy) - np.size(to_end):].reshape(np.shape(to_end))


@register_jitable
def _differences_grad(dy, ary, start):
    n = ary.size
    out = np.zeros(n)
    for i in range(n - 1):
        out[i + 1] += dy[start + i]
        out[i] -= dy[start + i]
    return out.reshape(ary.shape)


@overload(differences_grad)
def _differences_grad_typer(dy, ary, to_begin=None):
    if _is_none(to_begin):
        return lambda dy, ary, to_begin=None: _differences_grad(dy, ary, 0)
    if isinstance(to_begin, types.Array):
        return lambda dy, ary, to_begin=None: _differences_grad(dy, ary, to_begin.size)
    return lambda dy, ary, to_begin=None: _differences_grad(dy, ary, 1)


def _ends_typer(first):
    def typer(dy, end):
        if isinstance(end, types.Array):
            if first:
                return lambda dy, end: dy[:end.size].copy().reshape(end.shape)
            return lambda dy, end: dy[len(dy) - end.size:].copy().reshape(end.shape)
        if isinstance(end, (types.Float, types.Integer)):
            return (lambda dy, end: dy[0]) if first else (lambda dy, end: dy[len(dy) - 1])
    return typer


overload(begin_grad)(_ends_typer(True))
overload(end_grad)(_ends_typer(False))


@rule(np.ediff1d)
def ediff1d(dy, y, ary, to_end=None, to_begin=None):
    return (differences_grad(dy, ary, to_begin), end_grad(dy, to_end),
            begin_grad(dy, to_begin))


linear(np.ediff1d, positions=(0, 1, 2))
linear(differences_grad, begin_grad, end_grad)
describe(differences_grad, begin_grad, end_grad, pure=True)


# ---- np.vdot ----


@rule(np.vdot)
def vdot(dy, y, a, b):
    return (np.reshape(np.conj(dy * b), np.shape(a)),
            np.reshape(dy * np.conj(a), np.shape(b)))


@tangent(np.vdot)
def vdot_tangent(dx, y, a, b):
    return np.vdot(dx, b), np.vdot(a, dx)


@overload(np.vdot)
def _np_vdot(a, b):
    # numba's np.vdot takes two contiguous vectors of one dtype: this form, the rest
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)) or (
            a.ndim == b.ndim == 1 and a.layout == b.layout == "C" and a.dtype == b.dtype):
        return None
    zero = 0j if isinstance(a.dtype, types.Complex) or isinstance(b.dtype, types.Complex) \
        else 0.0

    def impl(a, b):
        x, z = np.ascontiguousarray(a).ravel(), np.ascontiguousarray(b).ravel()
        if x.size != z.size:
            raise ValueError("vdot: the arrays have different sizes")
        total = zero
        for i in range(x.size):
            total += np.conj(x[i]) * z[i]
        return total
    return impl
