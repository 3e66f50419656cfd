"""More elementwise functions, and np.clip and np.prod: their records and the helpers their
rules call (each Python form beside its numba form).

Derivatives from any calculus table: d asinh x = 1 / sqrt(x^2 + 1), d acosh x =
1 / sqrt(x^2 - 1), d atanh x = 1 / (1 - x^2); deg2rad and rad2deg scale by pi/180 and its
inverse; d sinc x = (cos(pi x) - sinc x) / x, 0 at x = 0 (a series near it); fabs shares
abs's rule (0 at 0, as in JAX); d logaddexp2(a, b)/da = 2^(a - y); copysign(a, b) is
|a| with b's sign, so its slope in a is sign(a) times b's sign and 0 in b; nan_to_num
passes the gradient where x is finite and none where it replaced a nan or an infinity.
np.clip(x, lo, hi) is minimum(maximum(x, lo), hi): the gradient goes to whichever of x,
lo and hi the result is (hi where lo > hi). The slope of np.prod in x_i is the product of
the other entries along the axis, made from prefix and suffix products (no division, so
zeros in x are exact: with two zeros in a slice, every slope there is 0).
np.heaviside(x1, x2) is a step (no slope in x1, 0 at the step as in JAX) that is x2 where
x1 == 0; np.fmod(a, b) = a - b trunc(a / b) (trunc has no slope); np.modf(x) gives
(x - trunc(x), trunc(x)): the slope of the first is 1, of the second 0; np.ldexp(x1, x2)
= x1 2^x2, x2 an integer (no gradient).
"""

import math

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from ..errors import MissingRule
from ..numba_ext import _static_bool
from ..runtime import sum_grad, unbroadcast
from ..runtime.common import _float_scalar, _is_none
from ..runtime.reductions import _reduced_axes
from . import describe, linear, nondifferentiable, rule, tangent
from .builtin_rules import abs_
from .factorizations import results
from .numpy_rules import cbrt, exp2

# ---- one argument ----


@rule(np.arcsinh, math.asinh, elementwise=True)
def arcsinh(dy, y, x):
    return dy / np.sqrt(x * x + 1.0)


@rule(np.arccosh, math.acosh, elementwise=True)
def arccosh(dy, y, x):
    return dy / np.sqrt((x - 1.0) * (x + 1.0))


@rule(np.arctanh, math.atanh, elementwise=True)
def arctanh(dy, y, x):
    return dy / ((1.0 - x) * (1.0 + x))


@rule(np.deg2rad, np.radians, math.radians, elementwise=True)
def deg2rad(dy, y, x):
    return dy * (np.pi / 180.0)


@rule(np.rad2deg, np.degrees, math.degrees, elementwise=True)
def rad2deg(dy, y, x):
    return dy * (180.0 / np.pi)


def sinc_slope(x):
    """The derivative of np.sinc at x: (cos(pi x) - sinc(x)) / x, from its Taylor series
    where pi |x| < 0.1 (the formula cancels there), 0 at x = 0.

    >>> bool(sinc_slope(0.0) == 0.0), round(float(sinc_slope(0.5)), 12)   # -4 / pi
    (True, -1.273239544735)
    """
    t, small, u = _near_zero(x)
    t2 = t * t
    series = -t * (1.0 / 3.0 - t2 * (1.0 / 30.0 - t2 * (1.0 / 840.0 - t2 / 45360.0)))
    return (np.pi * np.where(small, series, (u * np.cos(u) - np.sin(u)) / (u * u)))[()]


def sinc_curvature(x):
    """The second derivative of np.sinc at x: pi^2 ((2 - t^2) sin t - 2 t cos t) / t^3
    with t = pi x, from its Taylor series where |t| < 0.1; -pi^2 / 3 at x = 0.

    >>> round(float(sinc_curvature(0.5)), 12)   # 8 (2 - pi^2 / 4) / pi
    -1.190227128239
    """
    t, small, u = _near_zero(x)
    t2 = t * t
    series = -1.0 / 3.0 + t2 * (1.0 / 10.0 - t2 * (1.0 / 168.0 - t2 / 6480.0))
    closed = ((2.0 - u * u) * np.sin(u) - 2.0 * u * np.cos(u)) / (u * u * u)
    return (np.pi ** 2 * np.where(small, series, closed))[()]


def _near_zero(x):
    """t = pi x as floats, where |t| < 0.1 (the series' domain), and t with 1 there."""
    t = np.pi * np.asarray(x, dtype=np.result_type(x, 1.0))
    small = np.abs(t) < 0.1
    return t, small, np.where(small, 1.0, t)


@register_jitable
def _sinc_slope_at(x):
    t = np.pi * x
    t2 = t * t
    if abs(t) < 0.1:
        return -np.pi * t * (1.0 / 3.0 - t2 * (1.0 / 30.0 - t2 * (1.0 / 840.0 - t2 / 45360.0)))
    return np.pi * (t * np.cos(t) - np.sin(t)) / t2


@register_jitable
def _sinc_curvature_at(x):
    t = np.pi * x
    t2 = t * t
    if abs(t) < 0.1:
        return np.pi ** 2 * (-1.0 / 3.0 + t2 * (1.0 / 10.0 - t2 * (1.0 / 168.0 - t2 / 6480.0)))
    return np.pi ** 2 * ((2.0 - t2) * np.sin(t) - 2.0 * t * np.cos(t)) / (t2 * t)


def _per_entry(fn, at):
    """Register the numba form of `fn`, a function of one number applied to each entry
    of an array: `at` (jitted) on each."""
    @overload(fn)
    def typer(x):
        if isinstance(x, (types.Float, types.Integer)):
            return lambda x: at(float(x))
        if isinstance(x, types.Array):
            cast = _float_scalar(x)

            def impl(x):
                flat = np.ascontiguousarray(x).reshape(x.size)
                out = np.empty(x.size, cast)
                for i in range(x.size):
                    out[i] = at(flat[i])
                return out.reshape(x.shape)
            return impl


_per_entry(sinc_slope, _sinc_slope_at)
_per_entry(sinc_curvature, _sinc_curvature_at)


@rule(np.sinc, elementwise=True)
def sinc(dy, y, x):
    return dy * sinc_slope(x)


def finite(x, copy=True):
    """Where x is finite: np.nan_to_num's gradient mask. ``copy=False`` (x changed in
    place, so the adjoint cannot read it) is refused.

    >>> finite(np.array([1.0, np.nan, -np.inf]))
    array([ True, False, False])
    """
    if not copy:
        raise MissingRule(_IN_PLACE)
    return np.isfinite(x)


_IN_PLACE = ("np.nan_to_num(..., copy=False) changes its argument in place and has no "
             "gradient rule: use copy=True")


@overload(finite)
def _finite_typer(x, copy=True):
    if not _static_bool(copy, "np.nan_to_num's copy="):
        raise TypingError(f"srcgrad: {_IN_PLACE}")
    return lambda x, copy=True: np.isfinite(x)


@rule(np.nan_to_num, elementwise=True)
def nan_to_num(dy, y, x, copy=True, nan=0.0, posinf=None, neginf=None):
    return dy * finite(x, copy)


# np.fabs takes abs's rule (as math.fabs does); Python >= 3.11's math.cbrt and math.exp2
# take np.cbrt's and np.exp2's
rule(np.fabs, elementwise=True, fusable=True)(abs_)
if hasattr(math, "cbrt"):
    rule(math.cbrt, elementwise=True)(cbrt)

    @overload(math.cbrt)
    def _math_cbrt(x):
        # numba (0.68) has no math.cbrt
        if isinstance(x, (types.Float, types.Integer)):
            return lambda x: np.cbrt(float(x))
if hasattr(math, "exp2"):
    rule(math.exp2, elementwise=True)(exp2)


# ---- two or three arguments ----


@rule(np.logaddexp2, elementwise=True)
def logaddexp2(dy, y, a, b):
    return unbroadcast(dy * np.exp2(a - y), a), unbroadcast(dy * np.exp2(b - y), b)


# (builtin_rules marks math.copysign nondifferentiable; this module, imported after it,
# replaces that mark)
@rule(np.copysign, math.copysign, elementwise=True)
def copysign(dy, y, a, b):
    return unbroadcast(dy * np.sign(a) * np.copysign(1.0, b), a), None


@rule(np.heaviside, elementwise=True)
def heaviside(dy, y, x1, x2):
    return None, unbroadcast(dy * (x1 == 0), x2)


@overload(np.heaviside)
def _np_heaviside(x1, x2):
    # numba has no np.heaviside
    if isinstance(x1, (types.Float, types.Integer)) and \
            isinstance(x2, (types.Float, types.Integer)):
        return lambda x1, x2: _step(x1, x2)
    if isinstance(x1, types.Array) or isinstance(x2, types.Array):
        def impl(x1, x2):
            shape = np.shape(x1 + x2)
            a = np.ascontiguousarray(np.broadcast_to(x1, shape)).ravel()
            b = np.ascontiguousarray(np.broadcast_to(x2, shape)).ravel()
            out = np.empty(a.size)
            for i in range(a.size):
                out[i] = _step(a[i], b[i])
            return out.reshape(shape)
        return impl


@register_jitable
def _step(x1, x2):
    if np.isnan(x1):
        return np.nan
    return 0.0 if x1 < 0 else (1.0 if x1 > 0 else float(x2))


@rule(np.fmod, elementwise=True)
def fmod(dy, y, a, b):
    return unbroadcast(dy, a), unbroadcast(-dy * np.trunc(a / b), b)


@rule(np.ldexp, elementwise=True)
def ldexp(dy, y, x1, x2):
    return unbroadcast(np.ldexp(dy, x2), x1), None


@rule(np.modf, results=2)
def modf(dy, y, x):
    return dy[0] * 1.0


@tangent(np.modf)
def modf_tangent(dx, y, x):
    return results(dx, 0.0 * dx)


@overload(np.modf)
def _np_modf(x):
    # numba has no np.modf
    if isinstance(x, (types.Float, types.Integer, types.Array)):
        return lambda x: (x - np.trunc(x), np.trunc(x))


def bound_or(v, default):
    """A bound of np.clip, or `default` (an infinity) where the call gives None.

    >>> bound_or(None, np.inf), bound_or(2.0, np.inf)
    (inf, 2.0)
    """
    return default if v is None else v


@overload(bound_or)
def _bound_or_typer(v, default):
    if _is_none(v):
        return lambda v, default: default
    return lambda v, default: v


@rule(np.clip, elementwise=True, methods=("clip",))
def clip(dy, y, x, a_min, a_max):
    return (unbroadcast(dy * ((x >= bound_or(a_min, -np.inf)) &
                              (x <= bound_or(a_max, np.inf))), x),
            unbroadcast(dy * ((x < a_min) & (a_min <= bound_or(a_max, np.inf))), a_min),
            unbroadcast(dy * (np.maximum(x, bound_or(a_min, -np.inf)) > a_max), a_max))


# ---- products ----


def prod_others(x, axis=None):
    """The slope of ``np.prod(x, axis)`` in each entry: the product of the other entries
    of its slice along `axis` (None: all of x; an int or a tuple of ints), in x's shape.

    >>> prod_others(np.array([2.0, 0.0, 3.0]))
    array([0., 6., 0.])
    """
    rows, back = _as_rows(x, axis)
    before, after = np.ones_like(rows), np.ones_like(rows)
    before[..., 1:] = np.cumprod(rows[..., :-1], axis=-1)
    after[..., :-1] = np.cumprod(rows[..., :0:-1], axis=-1)[..., ::-1]
    return back(before * after)


def prod_others_jvp(x, dx, axis=None):
    """The tangent of ``prod_others(x, axis)`` along dx: for each entry, the sum over the
    others j of its slice of dx_j times the product of the rest (the prefix and suffix
    products of `prod_others`, differentiated as they run).

    >>> prod_others_jvp(np.array([2.0, 0.0, 3.0]), np.array([1.0, 0.0, 0.0]))
    array([0., 3., 0.])
    """
    rows, back = _as_rows(x, axis)
    drows, _ = _as_rows(np.broadcast_to(dx, np.shape(x)), axis)
    out, dout = np.empty_like(rows), np.empty_like(rows)
    run, drun = np.ones(rows.shape[:-1]), np.zeros(rows.shape[:-1])
    for j in range(rows.shape[-1]):
        out[..., j], dout[..., j] = run, drun
        run, drun = run * rows[..., j], drun * rows[..., j] + run * drows[..., j]
    run, drun = np.ones(rows.shape[:-1]), np.zeros(rows.shape[:-1])
    for j in range(rows.shape[-1] - 1, -1, -1):
        out[..., j], dout[..., j] = out[..., j] * run, dout[..., j] * run + out[..., j] * drun
        run, drun = run * rows[..., j], drun * rows[..., j] + run * drows[..., j]
    return back(dout)


def _as_rows(x, axis):
    """x as floats with the axes of `axis` last and flattened into one (the slices of a
    reduction over them are its rows), and the function that puts an array of that shape
    back in x's."""
    x = np.asarray(x)
    x = x.astype(np.result_type(x, 1.0))
    if x.ndim == 0:
        return x.reshape(1), lambda r: r.reshape(())[()]
    axes = range(x.ndim) if axis is None else [a % x.ndim for a in np.atleast_1d(axis)]
    order = [d for d in range(x.ndim) if d not in axes] + sorted(axes)
    moved = np.transpose(x, order)
    rows = moved.reshape(moved.shape[:x.ndim - len(axes)] + (-1,))
    return rows, lambda r: np.transpose(r.reshape(moved.shape), np.argsort(order))


@register_jitable
def _slice_of(i, shape, reduced):
    """The slice (an index over the axes not reduced, in C order) that entry `i` of the
    flattened x belongs to."""
    k, mult = 0, 1
    for d in range(len(shape) - 1, -1, -1):
        c = i % shape[d]
        i //= shape[d]
        if not reduced[d]:
            k += c * mult
            mult *= shape[d]
    return k


@register_jitable
def _prod_others_along(x, dx, axis, cast):
    """prod_others(x, axis) and its tangent along dx (None: not wanted), by running products
    per slice, forward then backward over x in C order: entry i gets the product of the
    entries of its slice before it, then of those after it."""
    reduced = _reduced_axes(x.ndim, axis)
    slices = 1
    for d in range(x.ndim):
        if not reduced[d]:
            slices *= x.shape[d]
    flat = np.ascontiguousarray(x).reshape(x.size)
    dflat = flat if dx is None else np.ascontiguousarray(dx).reshape(x.size)
    out, dout = np.empty(x.size, cast), np.zeros(x.size, cast)
    run, drun = np.ones(slices, cast), np.zeros(slices, cast)
    for i in range(x.size):
        k = _slice_of(i, x.shape, reduced)
        out[i], dout[i] = run[k], drun[k]
        if dx is not None:
            drun[k] = drun[k] * flat[i] + run[k] * dflat[i]
        run[k] *= flat[i]
    run[:], drun[:] = 1.0, 0.0
    for i in range(x.size - 1, -1, -1):
        k = _slice_of(i, x.shape, reduced)
        if dx is not None:
            dout[i] = dout[i] * run[k] + out[i] * drun[k]
            drun[k] = drun[k] * flat[i] + run[k] * dflat[i]
        out[i] *= run[k]
        run[k] *= flat[i]
    return out.reshape(x.shape), dout.reshape(x.shape)


@overload(prod_others)
def _prod_others_typer(x, axis=None):
    if isinstance(x, (types.Float, types.Integer)):
        return lambda x, axis=None: 1.0
    if isinstance(x, types.Array):
        cast = _float_scalar(x)
        return lambda x, axis=None: _prod_others_along(x, None, axis, cast)[0]


@overload(prod_others_jvp)
def _prod_others_jvp_typer(x, dx, axis=None):
    if isinstance(x, (types.Float, types.Integer)):
        return lambda x, dx, axis=None: 0.0
    if isinstance(x, types.Array) and isinstance(dx, types.Array) and dx.ndim == x.ndim:
        cast = _float_scalar(x)
        return lambda x, dx, axis=None: _prod_others_along(x, dx, axis, cast)[1]


@rule(np.prod, reduction=True, methods=("prod",))
def prod(dy, y, x, axis=None, keepdims=False):
    return sum_grad(dy, x, axis, keepdims) * prod_others(x, axis)


@tangent(np.prod)
def prod_tangent(dx, y, x, axis=None, keepdims=False):
    return np.sum(dx * prod_others(x, axis), axis=axis, keepdims=keepdims)


@tangent(sinc_slope)
def sinc_slope_tangent(dx, y, x):
    return dx * sinc_curvature(x)


@tangent(prod_others)
def prod_others_tangent(dx, y, x, axis=None):
    return prod_others_jvp(x, dx, axis)


# the helpers of the rules above, where forward mode meets them (hvp, hessian)
linear(bound_or)
nondifferentiable(finite)
describe(sinc_slope, sinc_curvature, finite, bound_or, prod_others, prod_others_jvp,
         pure=True)
