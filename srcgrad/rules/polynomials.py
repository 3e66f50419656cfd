"""Polynomials, convolutions and the trapezoidal rule: the records of np.polyval,
np.polyder, np.polyint, np.vander, np.convolve, np.correlate and np.trapezoid (np.trapz
where NumPy has it), the helpers their rules call (each Python form beside its numba
form), and the forms numba lacks (np.polyval, np.polyder, np.polyint; np.trapezoid with
x=, dx= and an axis, as `trapezoidal`).

np.polyval(p, x) = sum_k p_k x^(n-1-k): its slope in p_k is x^(n-1-k) (a Vandermonde
row, summed over the entries of x) and in x the polynomial of p's derivative
coefficients (`poly_slope`) at x. np.polyder(p, m) and np.polyint(p, m, k) are linear:
the first keeps p_j times the falling factorial (n-1-j)...(n-j-m) for j < n - m
(`derivative_factors`), the second divides p_j by (n-j)(n-j+1)...(n-j+m-1)
(`integral_factors`) and appends the constants, k_i / (m-1-i)! (one k for all of them where
k is a number or has one entry), so each gradient is dy's entries times those factors.
np.vander(x, N, increasing) has the columns x^e_j, so
the slope of x is sum_j dy_j e_j x^(e_j - 1) (x^0's column has no slope). np.convolve is
bilinear: with dy placed in the full convolution (`full_cotangent`: the modes 'same' and
'valid' keep a window of it), the gradient of a is the correlation of dy with v, and that
of v the correlation of dy with a (both 'valid'); np.correlate(a, v) is np.convolve(a,
v[::-1]), so a's gradient is the convolution of dy with v and v's the correlation of dy
with a, reversed. np.trapezoid sums (y_i + y_{i+1}) d_i / 2 (d_i = x_{i+1} - x_i, or dx):
it is linear in y with the weights (d_{i-1} + d_i) / 2 (`trapezoid_weights`, linear in x
and dx), its slope in x_i is (y_{i-1} - y_{i+1}) / 2 (`coordinate_slopes`; -(y_0 + y_1) / 2
and (y_{n-2} + y_{n-1}) / 2 at the ends), and in dx the integral with dx = 1 (none where x
is given, which NumPy reads in dx's place). The rules of np.convolve and np.correlate hold
for real arguments (np.correlate conjugates v); complex ones are refused.
"""

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from ..errors import MissingRule
from ..numba_ext import _is_none, normalize_axis
from ..runtime import sum_grad
from . import describe, linear, nondifferentiable, real_only, rule, tangent

# ---- np.polyval ----


def _coefficients(p):
    p = np.asarray(p)
    if p.ndim != 1:
        raise MissingRule("np.polyval with coefficients of rank other than 1 has no "
                          "gradient rule")
    return p


def poly_slope(p):
    """The coefficients of the derivative of the polynomial with coefficients `p`
    (highest power first): p_k (n - 1 - k), k < n - 1.

    >>> poly_slope(np.array([3.0, 2.0, 1.0]))
    array([6., 2.])
    """
    p = _coefficients(p)
    n = len(p)
    return p[:-1] * np.arange(n - 1, 0, -1.0)


@overload(poly_slope)
def _poly_slope_typer(p):
    def impl(p):
        n = len(p)
        out = np.empty(max(n - 1, 0))
        for k in range(n - 1):
            out[k] = p[k] * (n - 1 - k)
        return out
    return impl


def unslope(dc, p):
    """The adjoint of `poly_slope` (p read for its length): dc_k (n - 1 - k), and 0 at
    the constant term.

    >>> unslope(np.array([1.0, 1.0]), np.zeros(3))
    array([2., 1., 0.])
    """
    n = len(p)
    out = np.zeros(n, np.result_type(dc, 1.0))
    out[:-1] = np.asarray(dc) * np.arange(n - 1, 0, -1.0)
    return out


@overload(unslope)
def _unslope_typer(dc, p):
    def impl(dc, p):
        n = len(p)
        out = np.zeros(n)
        for k in range(n - 1):
            out[k] = dc[k] * (n - 1 - k)
        return out
    return impl


def powers_grad(dy, p, x):
    """The gradient of p of ``y = np.polyval(p, x)``: sum over the entries of x of
    dy x^(n-1-k) (p read for its length).

    >>> powers_grad(np.array([1.0, 1.0]), np.zeros(3), np.array([2.0, 3.0]))
    array([13.,  5.,  2.])
    """
    n = len(_coefficients(p))
    x = np.asarray(x)
    terms = np.asarray(dy)[..., None] * x[..., None] ** np.arange(n - 1, -1, -1.0)
    return np.sum(terms.reshape(-1, n), axis=0)


@overload(powers_grad)
def _powers_grad_typer(dy, p, x):
    if isinstance(x, types.Array):
        def impl(dy, p, x):
            n = len(p)
            flat = np.ascontiguousarray(x).reshape(x.size)
            gs = np.ascontiguousarray(np.broadcast_to(dy, x.shape)).reshape(x.size)
            out = np.zeros(n)
            for i in range(x.size):
                t = gs[i]
                for k in range(n - 1, -1, -1):
                    out[k] += t
                    t *= flat[i]
            return out
        return impl

    def scalar(dy, p, x):
        n = len(p)
        out = np.zeros(n)
        t = dy
        for k in range(n - 1, -1, -1):
            out[k] = t
            t *= x
        return out
    return scalar


@overload(np.polyval)
def _np_polyval(p, x):
    # numba has no np.polyval: Horner's rule, as NumPy's
    if isinstance(x, types.Array):
        def impl(p, x):
            y = np.zeros(x.shape)
            for k in range(len(p)):
                y = y * x + p[k]
            return y
        return impl
    if isinstance(x, (types.Float, types.Integer)):
        def scalar(p, x):
            y = 0.0
            for k in range(len(p)):
                y = y * x + p[k]
            return y
        return scalar


@rule(np.polyval)
def polyval(dy, y, p, x):
    return powers_grad(dy, p, x), dy * np.polyval(poly_slope(p), x)


@tangent(np.polyval)
def polyval_tangent(dx, y, p, x):
    return np.polyval(dx, x), dx * np.polyval(poly_slope(p), x)


@tangent(powers_grad)
def powers_grad_tangent(dx, y, dy, p, x):
    return powers_grad(dx, p, x), None, unslope(powers_grad(dy * dx, p[1:], x), p)


@rule(poly_slope)
def poly_slope_rule(dy, y, p):
    return unslope(dy, p)


@rule(unslope)
def unslope_rule(dy, y, dc, p):
    return poly_slope(dy), None


linear(poly_slope, unslope)


# ---- np.polyder and np.polyint ----


@register_jitable
def derivative_factors(n, m):
    """What np.polyder(p, m) multiplies p_j by (j < n - m; n = len(p)).

    >>> derivative_factors(4, 2)
    array([6., 2.])
    """
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    out = np.ones(max(n - m, 0))
    for j in range(n - m):
        for s in range(m):
            out[j] *= n - 1 - j - s
    return out


@register_jitable
def integral_factors(n, m):
    """What np.polyint(p, m) multiplies p_j by (n = len(p)), then its m constants k_i.

    >>> integral_factors(2, 2)
    array([0.16666667, 0.5       , 1.        , 1.        ])
    """
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    out = np.ones(n + m)
    for j in range(n):
        for s in range(m):
            out[j] /= n + s - j
    for i in range(m):
        for s in range(1, m - i):
            out[n + i] /= s
    return out


def unpolyder(dy, p, m=1):
    """The gradient of p of ``y = np.polyder(p, m)``: dy times the factors, 0 at the
    last m coefficients (p read for its length).

    >>> unpolyder(np.array([1.0, 1.0]), np.zeros(3))
    array([2., 1., 0.])
    """
    n = len(p)
    out = np.zeros(n, np.result_type(dy, 1.0))
    out[:max(n - m, 0)] = dy * derivative_factors(n, m)
    return out


@overload(unpolyder)
def _unpolyder_typer(dy, p, m=1):
    def impl(dy, p, m=1):
        n = len(p)
        out = np.zeros(n)
        out[:max(n - m, 0)] = dy * derivative_factors(n, m)
        return out
    return impl


@overload(np.polyder)
def _np_polyder(p, m=1):
    # numba has no np.polyder
    if not isinstance(p, types.Array):
        return None
    return lambda p, m=1: p[:max(len(p) - m, 0)] * derivative_factors(len(p), m)


def unpolyint(dy, p, m=1):
    """The gradient of p of ``y = np.polyint(p, m, k)``: dy's first len(p) entries
    times the factors.

    >>> unpolyint(np.array([6.0, 2.0, 1.0, 1.0]), np.zeros(2), 2)
    array([1., 1.])
    """
    n = len(p)
    return np.asarray(dy)[:n] * integral_factors(n, m)[:n]


@overload(unpolyint)
def _unpolyint_typer(dy, p, m=1):
    return lambda dy, p, m=1: dy[:len(p)] * integral_factors(len(p), m)[:len(p)]


def constants_grad(dy, p, m=1, k=None):
    """The gradient of k of ``y = np.polyint(p, m, k)``, in k's shape: the last m entries
    of dy over (m-1-i)!, summed where one k stands for all of them.

    >>> float(constants_grad(np.array([6.0, 2.0, 1.0, 3.0]), np.zeros(2), 2, 1.0))
    4.0
    """
    n = len(p)
    g = np.asarray(dy)[n:n + m] * integral_factors(n, m)[n:]
    if np.ndim(k) == 0 or len(k) == 1 and m > 1:
        return np.reshape(np.sum(g), np.shape(k))[()]
    out = np.zeros(len(k), np.result_type(g, 1.0))
    out[:m] = g
    return out


@overload(constants_grad)
def _constants_grad_typer(dy, p, m=1, k=None):
    if isinstance(k, (types.Float, types.Integer)):
        return lambda dy, p, m=1, k=None: np.sum(
            dy[len(p):] * integral_factors(len(p), m)[len(p):])
    if isinstance(k, types.Array) and k.ndim == 1:
        def impl(dy, p, m=1, k=None):
            n = len(p)
            g = dy[n:] * integral_factors(n, m)[n:]
            out = np.zeros(len(k))
            if len(k) == 1 and m > 1:
                out[0] = np.sum(g)
            else:
                out[:m] = g
            return out
        return impl


@overload(np.polyint)
def _np_polyint(p, m=1, k=None):
    # numba has no np.polyint
    if not isinstance(p, types.Array) or not (_is_none(k) or isinstance(
            k, (types.Float, types.Integer)) or isinstance(k, types.Array) and k.ndim == 1):
        return None

    def impl(p, m=1, k=None):
        n = len(p)
        out = integral_factors(n, m)
        out[:n] *= p
        out[n:] *= _numba_constants(k, m)
        return out
    return impl


def _numba_constants(k, m):
    """The m constants np.polyint reads from k (numba only): zeros for None, one k for
    all where it is a number or has one entry."""


@overload(_numba_constants)
def _numba_constants_typer(k, m):
    if _is_none(k):
        return lambda k, m: np.zeros(m)
    if isinstance(k, (types.Float, types.Integer)):
        return lambda k, m: np.full(m, float(k))

    def impl(k, m):
        if len(k) == 1 and m > 1:
            return np.full(m, float(k[0]))
        if len(k) < m:
            raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
        return k[:m] * 1.0
    return impl


@rule(np.polyder, no_gradient={"m": "an order, with no gradient"}, view=True)
def polyder(dy, y, p, m=1):
    return unpolyder(dy, p, m), None


@rule(np.polyint, no_gradient={"m": "an order, with no gradient"}, view=True)
def polyint(dy, y, p, m=1, k=None):
    return unpolyint(dy, p, m), None, constants_grad(dy, p, m, k)


@tangent(np.polyint)
def polyint_tangent(dx, y, p, m=1, k=None):
    return np.polyint(dx, m), None, np.polyint(np.zeros(len(p)), m, dx)


linear(np.polyder, unpolyder, unpolyint)
linear(constants_grad, positions=(0,))
nondifferentiable(derivative_factors, integral_factors)
describe(unpolyder, unpolyint, constants_grad, derivative_factors, integral_factors,
         pure=True)


# ---- np.vander ----


@register_jitable
def vander_powers(y, increasing=False):
    """The exponents of the columns of ``y = np.vander(x, N, increasing)``, as floats.

    >>> vander_powers(np.zeros((2, 3)))
    array([2., 1., 0.])
    """
    n = y.shape[1]
    e = np.arange(n) * 1.0
    return e if increasing else e[::-1].copy()


@rule(np.vander)
def vander(dy, y, x, N=None, increasing=False):
    return np.sum(dy * vander_powers(y, increasing) * np.expand_dims(x, 1) ** np.maximum(
        vander_powers(y, increasing) - 1.0, 0.0), axis=1)


@tangent(np.vander)
def vander_tangent(dx, y, x, N=None, increasing=False):
    return np.expand_dims(dx, 1) * vander_powers(y, increasing) * np.expand_dims(x, 1) ** \
        np.maximum(vander_powers(y, increasing) - 1.0, 0.0)


# ---- np.convolve and np.correlate ----


@register_jitable
def window(m, n, mode, correlating):
    """Where the result of np.convolve (`correlating`: np.correlate) of operands of m
    and n entries starts in their full convolution (correlation), with its length.

    >>> window(5, 3, "same", False)
    (1, 5)
    """
    if mode == "full":
        return 0, m + n - 1
    if mode == "valid":
        return min(m, n) - 1, max(m, n) - min(m, n) + 1
    if mode != "same":
        raise ValueError("mode must be 'valid', 'same' or 'full'")
    short = min(m, n)
    return (short // 2 if correlating and m < n else short - 1 - short // 2), max(m, n)


@register_jitable
def full_cotangent(dy, a, v, mode="full", correlating=False):
    """dy placed where its window lies in the full convolution of a and v (zeros
    elsewhere): the cotangent of the full result.

    >>> full_cotangent(np.array([1.0, 2.0]), np.zeros(3), np.zeros(2), "valid")
    array([0., 1., 2., 0.])
    """
    start, size = window(len(a), len(v), mode, correlating)
    out = np.zeros(len(a) + len(v) - 1)
    out[start:start + size] = dy
    return out


@rule(np.convolve)
def convolve(dy, y, a, v, mode="full"):
    return (np.correlate(full_cotangent(dy, a, v, mode, False), v, "valid"),
            np.correlate(full_cotangent(dy, a, v, mode, False), a, "valid"), None)


@tangent(np.convolve)
def convolve_tangent(dx, y, a, v, mode="full"):
    return np.convolve(dx, v, mode), np.convolve(a, dx, mode), None


@rule(np.correlate)
def correlate(dy, y, a, v, mode="valid"):
    return (np.convolve(full_cotangent(dy, a, v, mode, True), v, "valid"),
            np.correlate(full_cotangent(dy, a, v, mode, True), a, "valid")[::-1], None)


@tangent(np.correlate)
def correlate_tangent(dx, y, a, v, mode="valid"):
    return np.correlate(dx, v, mode), np.correlate(a, dx, mode), None


linear(full_cotangent)
real_only(np.convolve, np.correlate)
nondifferentiable(vander_powers)


# ---- np.trapezoid ----


def _moved(a, axis):
    """a with `axis` last."""
    return np.moveaxis(np.asarray(a), axis, -1)


def trapezoidal(y, x=None, dx=1.0, axis=-1):
    """np.trapezoid itself (np.trapz before NumPy 2), which generated code calls in its
    place: this one's numba form takes x, dx and an axis.

    >>> float(trapezoidal(np.array([1.0, 2.0, 4.0]), dx=0.5))
    2.25
    """
    ys = _moved(y, axis)
    return np.sum((ys[..., 1:] + ys[..., :-1]) * 0.5 * _steps(ys, x, dx, axis), axis=-1)


def _steps(ys, x, dx, axis):
    """The spacings along the last axis of ys (y with its axis last)."""
    if x is None:
        if np.ndim(dx) != 0:
            raise MissingRule("np.trapezoid with an array dx has no gradient rule: give "
                              "the coordinates as x")
        return dx
    x = np.asarray(x)
    xs = x if x.ndim == 1 else _moved(x, axis)
    return xs[..., 1:] - xs[..., :-1]


def trapezoid_weights(y, x=None, dx=1.0, axis=-1):
    """The slope of ``np.trapezoid(y, x, dx, axis)`` in each entry of y, in y's shape:
    (d_{i-1} + d_i) / 2 along the axis (d: the spacings, none past the ends). Linear
    in x and dx.

    >>> trapezoid_weights(np.zeros(3), np.array([0.0, 1.0, 3.0]))
    array([0.5, 1.5, 1. ])
    """
    ys = _moved(y, axis)
    d = np.broadcast_to(_steps(ys, x, dx, axis), ys[..., 1:].shape)
    w = np.zeros(ys.shape, np.result_type(d, 1.0))
    w[..., 1:] += 0.5 * d
    w[..., :-1] += 0.5 * d
    return np.moveaxis(w, -1, axis)


def coordinate_slopes(y, axis=-1):
    """The slope of ``np.trapezoid(y, x, axis=axis)`` in each coordinate x_i, in y's
    shape: (y_{i-1} - y_{i+1}) / 2, the missing neighbours' terms counting y_i. Linear
    in y.

    >>> coordinate_slopes(np.array([1.0, 2.0, 4.0]))
    array([-1.5, -1.5,  3. ])
    """
    ys = _moved(y, axis)
    s = np.zeros(ys.shape, np.result_type(ys, 1.0))
    half = 0.5 * (ys[..., 1:] + ys[..., :-1])
    s[..., 1:] += half
    s[..., :-1] -= half
    return np.moveaxis(s, -1, axis)


def to_coordinates(g, x, axis=-1):
    """g (y's shape) summed to the shape of the coordinates x: over the other axes where
    x is 1-D (one set of coordinates for every slice).

    >>> to_coordinates(np.ones((2, 3)), np.zeros(3))
    array([2., 2., 2.])
    """
    if np.ndim(x) == np.ndim(g):
        return g
    return np.sum(_moved(g, axis).reshape(-1, np.shape(x)[0]), axis=0)


@register_jitable
def unspaced(x):
    """1.0 where np.trapezoid reads dx (x is None), else 0.0."""
    return 1.0 if x is None else 0.0


# numba forms: the array as rows, the axis last


@register_jitable
def _as_rows(a, axis):
    k = normalize_axis(axis, a.ndim)
    b = np.ascontiguousarray(np.swapaxes(a, k, a.ndim - 1))
    n = b.shape[-1]
    return b.reshape((b.size // n if n else 0, n)), b.shape, k


@register_jitable
def _from_rows(rows, shape, k):
    return np.ascontiguousarray(np.swapaxes(rows.reshape(shape), k, len(shape) - 1))


def _row_steps(x, dx, axis, m, n):
    """The spacings of each row (numba only): (m, n - 1)."""


@overload(_row_steps)
def _row_steps_typer(x, dx, axis, m, n):
    if _is_none(x):
        if not isinstance(dx, (types.Float, types.Integer)):
            raise TypingError("srcgrad: np.trapezoid with an array dx has no gradient rule: "
                              "give the coordinates as x")
        return lambda x, dx, axis, m, n: np.full((m, max(n - 1, 0)), float(dx))
    if not isinstance(x, types.Array):
        return None
    if x.ndim == 1:
        def one(x, dx, axis, m, n):
            out = np.empty((m, max(n - 1, 0)))
            for r in range(m):
                for i in range(n - 1):
                    out[r, i] = x[i + 1] - x[i]
            return out
        return one

    def each(x, dx, axis, m, n):
        xs = _as_rows(x, axis)[0]
        return xs[:, 1:] - xs[:, :-1]
    return each


@overload(trapezoidal)
def _trapezoidal_typer(y, x=None, dx=1.0, axis=-1):
    if not isinstance(y, types.Array):
        return None

    if y.ndim == 1:
        return lambda y, x=None, dx=1.0, axis=-1: _integrals(y, x, dx, axis)[0][0]

    def impl(y, x=None, dx=1.0, axis=-1):
        out, shape = _integrals(y, x, dx, axis)
        return out.reshape(shape[:-1])
    return impl


@register_jitable
def _integrals(y, x, dx, axis):
    """np.trapezoid of each row of y (its axis last), and the shape of y so moved."""
    rows, shape, k = _as_rows(y, axis)
    m, n = rows.shape
    d = _row_steps(x, dx, axis, m, n)
    out = np.zeros(m)
    for r in range(m):
        for i in range(n - 1):
            out[r] += (rows[r, i] + rows[r, i + 1]) * 0.5 * d[r, i]
    return out, shape


@overload(trapezoid_weights)
def _trapezoid_weights_typer(y, x=None, dx=1.0, axis=-1):
    def impl(y, x=None, dx=1.0, axis=-1):
        rows, shape, k = _as_rows(y, axis)
        m, n = rows.shape
        d = _row_steps(x, dx, axis, m, n)
        w = np.zeros((m, n))
        for r in range(m):
            for i in range(n - 1):
                w[r, i] += 0.5 * d[r, i]
                w[r, i + 1] += 0.5 * d[r, i]
        return _from_rows(w, shape, k)
    return impl


@overload(coordinate_slopes)
def _coordinate_slopes_typer(y, axis=-1):
    def impl(y, axis=-1):
        rows, shape, k = _as_rows(y, axis)
        m, n = rows.shape
        s = np.zeros((m, n))
        for r in range(m):
            for i in range(n - 1):
                half = 0.5 * (rows[r, i] + rows[r, i + 1])
                s[r, i + 1] += half
                s[r, i] -= half
        return _from_rows(s, shape, k)
    return impl


@overload(to_coordinates)
def _to_coordinates_typer(g, x, axis=-1):
    if not isinstance(x, types.Array) or x.ndim == g.ndim:
        return lambda g, x, axis=-1: g
    return lambda g, x, axis=-1: np.sum(_as_rows(g, axis)[0], axis=0)


_TRAPEZOIDS = tuple(getattr(np, name) for name in ("trapezoid", "trapz") if hasattr(np, name))


@rule(*_TRAPEZOIDS, trapezoidal)
def trapezoid(dy, y, y_, x=None, dx=1.0, axis=-1):
    return (sum_grad(dy, y_, axis) * trapezoid_weights(y_, x, dx, axis),
            to_coordinates(sum_grad(dy, y_, axis) * coordinate_slopes(y_, axis), x, axis),
            np.sum(dy * trapezoidal(y_, None, 1.0, axis)) * unspaced(x), None)


@tangent(*_TRAPEZOIDS, trapezoidal)
def trapezoid_tangent(dx_, y, y_, x=None, dx=1.0, axis=-1):
    return (trapezoidal(dx_, x, dx, axis), trapezoidal(y_, dx_, 1.0, axis),
            dx_ * trapezoidal(y_, None, 1.0, axis) * unspaced(x), None)


linear(trapezoid_weights, positions=(1, 2))
linear(coordinate_slopes, to_coordinates)
nondifferentiable(unspaced)
describe(*_TRAPEZOIDS, compiled_as=trapezoidal)
describe(poly_slope, unslope, powers_grad, vander_powers, trapezoidal, trapezoid_weights,
         coordinate_slopes, to_coordinates, unspaced, pure=True)
