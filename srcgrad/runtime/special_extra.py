"""scipy.special under numba, a third part (`runtime/special.py` has the pattern):
gammainc, gammaincc, betainc, exp1, expi, expn, the Bessel functions j0, j1, y0, y1, jv,
yv, iv, ive, kv, kve, erfi, dawsn, wrightomega, ellipk, ellipe, spence, kl_div, huber,
pseudo_huber, poch, binom, owens_t, boxcox, boxcox1p and inv_boxcox call cython_special's
float64 forms; the forms of two and three arguments here (`_binary`, `_ternary`) take ints
and floats mixed (`jv(1, x)`). spherical_jn and spherical_yn call theirs with Cython's
optional arguments left null (jn reflected for z < 0, where cython_special's is NaN), and
compute derivative=True by the recurrence f_n' = f_(n-1) - (n + 1) f_n / z. `zeta(s, q)`
has no export: Hurwitz's sums its first terms and the rest by Euler-Maclaurin
(`runtime.special._hurwitz_zeta`, for a real s), Riemann's `zeta(s)` is 1 + zetac(s).

The helpers of their rules beside their numba forms: `expn_all(n, x)`, E_n(x) for every
integer n (SciPy's expn is NaN for n < 0, which the derivative E_n' = -E_(n-1) reaches
at n = 0); `j1_slope`, `y1_slope`, `spherical_jn_slope`, `spherical_yn_slope`,
`ellipk_slope`, `ellipe_slope`, `spence_slope` (derivatives, with their limits where the
formula is 0/0: j1'(0) = 1/2, K'(0) = pi/8, E'(0) = -pi/8, spence'(1) = -1), and
`boxcox_slope(x, lmbda, k)`, the k-th derivative of boxcox in lmbda (exact at lmbda = 0)."""

from __future__ import annotations

import math
import re

import llvmlite.binding as ll
import numpy as np
import scipy.special as special
import scipy.special.cython_special as cython_special
from numba import types
from numba.extending import get_cython_function_address, overload, register_jitable

from .special import (
    _called,
    _capsule_name,
    _export,
    _float,
    _hurwitz_zeta,
    _number,
    _real,
    _unary,
)

_C = {name: _export(name, 1) for name in (
    "exp1", "expi", "j0", "j1", "y0", "y1", "erfi", "dawsn", "wrightomega", "ellipk", "ellipe",
    "spence")}
for _name, _c in _C.items():
    _unary(getattr(special, _name), _called(_c))
_ZETAC = _export("zetac", 1)


@register_jitable
def _floats(x):
    """x (a number or an array) as a float64 array."""
    return np.asarray(x).astype(np.float64)


def _binary(fun, c) -> None:
    """The numba form of the scipy ufunc `fun` of two arguments (broadcast), whose
    arguments may be of different types (an int order and float x: `jv(1, x)`)."""
    @overload(fun)
    def _typer(x, y):
        if _number(x) and _number(y):
            return lambda x, y: c(_float(x), _float(y), 0)
        if not all(_real(t) or isinstance(t, types.Array) and _real(t.dtype) for t in (x, y)):
            return None

        def arrays(x, y):
            xs, ys = np.broadcast_arrays(_floats(x), _floats(y))
            out = np.empty(xs.shape)
            for i in np.ndindex(xs.shape):
                out[i] = c(xs[i], ys[i], 0)
            return out
        return arrays


def _ternary(fun, c) -> None:
    """The numba form of the scipy ufunc `fun` of three arguments (broadcast)."""
    @overload(fun)
    def _typer(x, y, z):
        if _number(x) and _number(y) and _number(z):
            return lambda x, y, z: c(_float(x), _float(y), _float(z), 0)
        if not all(_real(t) or isinstance(t, types.Array) and _real(t.dtype)
                   for t in (x, y, z)):
            return None

        def arrays(x, y, z):
            xs, ys, zs = np.broadcast_arrays(_floats(x), _floats(y), _floats(z))
            out = np.empty(xs.shape)
            for i in np.ndindex(xs.shape):
                out[i] = c(xs[i], ys[i], zs[i], 0)
            return out
        return arrays


_ternary(special.betainc, _export("betainc", 3))
_C2 = {name: _export(name, 2) for name in (
    "gammainc", "gammaincc", "expn", "jv", "yv", "iv", "ive", "kv", "kve", "kl_div", "huber",
    "pseudo_huber", "poch", "binom", "owens_t", "boxcox", "boxcox1p", "inv_boxcox")}
for _name, _c in _C2.items():
    _binary(getattr(special, _name), _c)
_EXPN, _J0, _J1, _Y0, _Y1 = _C2["expn"], _C["j0"], _C["j1"], _C["y0"], _C["y1"]
_ELLIPK, _ELLIPE = _C["ellipk"], _C["ellipe"]

# ---- the exponential integrals of every order ----


def _expn_negative(n, x):
    """E_n(x) for an integer n < 0: m! e^-x / x^(m+1) times the sum over k <= m of
    x^k / k!, m = -n."""
    m = -int(n)
    total, term = 0.0, 1.0   # term = x^k / k!
    for k in range(m + 1):
        total += term
        term *= x / (k + 1)
    return math.gamma(m + 1.0) * math.exp(-x) / x ** (m + 1) * total


_expn_negative_jit = register_jitable(_expn_negative)


@register_jitable
def _expn_all(n, x):
    return _EXPN(float(n), x, 0) if n >= 0 else _expn_negative_jit(n, x)


def expn_all(n, x):
    """E_n(x) = the integral over t >= 1 of e^(-x t) / t^n, for every integer n (n < 0
    too, where SciPy's expn is NaN): the derivative of expn(n, x) in x is
    -expn_all(n - 1, x).

    >>> bool(abs(float(expn_all(-1, 1.0)) - 2.0 / math.e) < 1e-15)
    True
    """
    n, x = np.broadcast_arrays(np.asarray(n), np.asarray(x, dtype=float))
    out = np.empty(n.shape)
    for i in np.ndindex(n.shape):
        out[i] = special.expn(n[i], x[i]) if n[i] >= 0 else _expn_negative(n[i], x[i])
    return out[()]


_binary(expn_all, register_jitable(lambda n, x, flag: _expn_all(n, x)))

# ---- the slopes of j1 and y1 ----


def j1_slope(x):
    """The derivative of the Bessel function j1: j0(x) - j1(x) / x, and its limit 1/2 at
    x = 0.

    >>> float(j1_slope(0.0))
    0.5
    """
    x = np.asarray(x, dtype=float)
    ratio = special.j1(x) / np.where(x == 0.0, 1.0, x)
    return np.where(x == 0.0, 0.5, special.j0(x) - ratio)[()]


@register_jitable
def _j1_slope(x):
    return 0.5 if x == 0.0 else _J0(x, 0) - _J1(x, 0) / x


_unary(j1_slope, _j1_slope)


def y1_slope(x):
    """The derivative of the Bessel function y1: y0(x) - y1(x) / x.

    >>> bool(abs(float(y1_slope(1.0)) - float(special.y0(1.0) - special.y1(1.0))) < 1e-15)
    True
    """
    x = np.asarray(x, dtype=float)
    return (special.y0(x) - special.y1(x) / x)[()]


_unary(y1_slope, register_jitable(lambda x: _Y0(x, 0) - _Y1(x, 0) / x))

# ---- the Hurwitz and Riemann zeta functions ----


@register_jitable
def _zeta(s, q):
    """zeta(s, q) = the sum over k >= 0 of (q + k)^-s, as SciPy's: inf at s = 1 or at
    q a non-positive integer, NaN for s < 1 or for q < 0 and a fractional s."""
    if s == 1.0:
        return np.inf
    if s < 1.0 or q < 0.0 and s != math.floor(s) and q != math.floor(q):
        return np.nan
    return _hurwitz_zeta(s, q)


@overload(special.zeta)
def _zeta_typer(x, q=None):
    if q is None or isinstance(q, (types.Omitted, types.NoneType)):
        # Riemann's: 1 + zetac(s) (defined for every s, as SciPy's)
        if _real(x):
            return lambda x, q=None: 1.0 + _ZETAC(float(x), 0)
        if isinstance(x, types.Array) and _real(x.dtype):
            def riemann(x, q=None):
                flat = x.ravel()
                out = np.empty(flat.size)
                for i in range(flat.size):
                    out[i] = 1.0 + _ZETAC(float(flat[i]), 0)
                return out.reshape(x.shape)
            return riemann
        return None
    if _real(x) and _real(q):
        return lambda x, q=None: _zeta(float(x), float(q))
    if not all(_real(t) or isinstance(t, types.Array) and _real(t.dtype) for t in (x, q)):
        return None

    def hurwitz(x, q=None):
        xs, qs = np.broadcast_arrays(_floats(x), _floats(q))
        out = np.empty(xs.shape)
        for i in np.ndindex(xs.shape):
            out[i] = _zeta(xs[i], qs[i])
        return out
    return hurwitz


# ---- spherical Bessel functions ----


def _export_spherical(name: str) -> types.ExternalFunction:
    """cython_special's float64 form of spherical_jn or spherical_yn, called as
    ``f(n, z, 0, 0)``: the last argument is the pointer to Cython's optional arguments
    (derivative=), null for their defaults."""
    # (n is a Py_ssize_t; a C long before SciPy 1.11)
    want = r"double \((Py_ssize_t|long), double, int __pyx_skip_dispatch, struct .*"
    for key, capsule in cython_special.__pyx_capi__.items():
        signature = re.fullmatch(want, _capsule_name(capsule).decode())
        if re.fullmatch(rf"(__pyx_fuse_\d+)?{name}", key) and signature:
            symbol = f"srcgrad_special_{name}"
            ll.add_symbol(symbol, get_cython_function_address(
                "scipy.special.cython_special", key))
            order = types.intp if signature.group(1) == "Py_ssize_t" else types.long_
            return types.ExternalFunction(symbol, types.float64(
                order, types.float64, types.intc, types.intp))
    raise LookupError(f"scipy.special.cython_special exports no float64 {name}")


_SPH_JN, _SPH_YN = _export_spherical("spherical_jn"), _export_spherical("spherical_yn")
_REFLECTED = not np.isnan(special.spherical_jn(1, -1.0))   # (SciPy >= 1.11)


def _spherical_of(f, jn):
    """The jitable spherical_jn (`f` = cython_special's, jn True) or spherical_yn of the
    order n at z, or (derivative) its derivative in z: f_n' = f_(n-1) - (n + 1) / z f_n,
    -f_1 for n = 0 (jn'(0) is 1/3 for n = 1, else 0; yn's is NaN at 0 for n > 0), NaN
    for n < 0 (as SciPy's)."""
    @register_jitable
    def value(k, z):
        # cython_special's jn is NaN for z < 0: jn(k, -z) = (-1)^k jn(k, z), as SciPy's
        # spherical_jn takes it since 1.11 (before, NaN there too: as the one installed)
        if jn and z < 0.0 and _REFLECTED:
            return (1.0 - 2.0 * (k % 2)) * f(k, -z, 0, 0)
        return f(k, z, 0, 0)

    @register_jitable
    def spherical(n, z, derivative):
        k = int(n)
        if n < 0 or k != n:
            return np.nan
        if not derivative:
            return value(k, z)
        if k == 0:
            return -value(1, z)
        if z == 0.0:   # (yn's is NaN there, where yn is singular)
            return (1.0 / 3.0 if k == 1 else 0.0) if jn else np.nan
        return value(k - 1, z) - (k + 1.0) / z * value(k, z)
    return spherical


_SPHERICAL_JN, _SPHERICAL_YN = _spherical_of(_SPH_JN, True), _spherical_of(_SPH_YN, False)


def _spherical_form(jn):
    spherical = _SPHERICAL_JN if jn else _SPHERICAL_YN

    def typer(n, z, derivative=False):
        if not all(_real(t) or isinstance(t, types.Array) and _real(t.dtype) for t in (n, z)):
            return None
        if _real(n) and _real(z):
            return lambda n, z, derivative=False: spherical(float(n), float(z),
                                                             derivative)

        def arrays(n, z, derivative=False):
            ns, zs = np.broadcast_arrays(_floats(n), _floats(z))
            out = np.empty(ns.shape)
            for i in np.ndindex(ns.shape):
                out[i] = spherical(ns[i], zs[i], derivative)
            return out
        return arrays
    return typer


overload(special.spherical_jn)(_spherical_form(True))
overload(special.spherical_yn)(_spherical_form(False))


def spherical_jn_slope(n, z):
    """The derivative of spherical_jn(n, z) in z (SciPy's derivative=True), a function
    of its own so that it has a rule (second order).

    >>> float(spherical_jn_slope(1, 0.0))
    0.3333333333333333
    """
    return special.spherical_jn(n, z, derivative=True)


def spherical_yn_slope(n, z):
    """The derivative of spherical_yn(n, z) in z (SciPy's derivative=True).

    >>> float(spherical_yn_slope(0, 1.0)) == -float(special.spherical_yn(1, 1.0))
    True
    """
    return special.spherical_yn(n, z, derivative=True)


_binary(spherical_jn_slope, register_jitable(
    lambda n, z, flag: _SPHERICAL_JN(n, z, True)))
_binary(spherical_yn_slope, register_jitable(
    lambda n, z, flag: _SPHERICAL_YN(n, z, True)))


# ---- the slopes of the complete elliptic integrals and of spence ----


def ellipk_slope(m):
    """The derivative of ellipk(m) = K(m): (E - (1 - m) K) / (2 m (1 - m)), and its limits
    pi/8 at m = 0 and inf at m = 1 (E = ellipe(m)).

    >>> float(ellipk_slope(0.0)) == math.pi / 8.0
    True
    """
    m = np.asarray(m, dtype=float)
    at = np.where((m == 0.0) | (m == 1.0), 0.5, m)
    slope = (special.ellipe(at) - (1.0 - at) * special.ellipk(at)) / (2.0 * at * (1.0 - at))
    return np.where(m == 0.0, math.pi / 8.0, np.where(m == 1.0, np.inf, slope))[()]


@register_jitable
def _ellipk_slope(m):
    if m == 0.0:
        return math.pi / 8.0
    if m == 1.0:
        return np.inf
    return (_ELLIPE(m, 0) - (1.0 - m) * _ELLIPK(m, 0)) / (2.0 * m * (1.0 - m))


_unary(ellipk_slope, _ellipk_slope)


def ellipe_slope(m):
    """The derivative of ellipe(m) = E(m): (E - K) / (2 m), and its limit -pi/8 at m = 0.

    >>> float(ellipe_slope(0.0)) == -math.pi / 8.0
    True
    """
    m = np.asarray(m, dtype=float)
    at = np.where(m == 0.0, 0.5, m)
    return np.where(m == 0.0, -math.pi / 8.0,
                    (special.ellipe(at) - special.ellipk(at)) / (2.0 * at))[()]


@register_jitable
def _ellipe_slope(m):
    return -math.pi / 8.0 if m == 0.0 else (_ELLIPE(m, 0) - _ELLIPK(m, 0)) / (2.0 * m)


_unary(ellipe_slope, _ellipe_slope)


def spence_slope(z):
    """The derivative of spence(z) = the integral from 1 to z of log(t) / (1 - t):
    log(z) / (1 - z), and its limit -1 at z = 1.

    >>> float(spence_slope(1.0))
    -1.0
    """
    z = np.asarray(z, dtype=float)
    at = np.where((z == 1.0) | (z <= 0.0), 2.0, z)
    return np.where(z == 1.0, -1.0, np.where(z == 0.0, -np.inf, np.where(
        z < 0.0, np.nan, np.log(at) / (1.0 - at))))[()]


@register_jitable
def _spence_slope(z):
    if z == 1.0:
        return -1.0
    return math.log(z) / (1.0 - z) if z > 0.0 else (np.nan if z < 0.0 else -np.inf)


_unary(spence_slope, _spence_slope)


# ---- Box-Cox: the slope in lmbda ----


@register_jitable
def _moment(t, k):
    """I_k(t) = the integral over s in [0, 1] of s^k e^(s t): its series
    sum over j of t^j / (j! (j + k + 1)) for |t| < max(1, k), else the recursion
    I_0 = expm1(t) / t, I_k = (e^t - k I_(k-1)) / t (stable there)."""
    if abs(t) < max(1.0, k):
        total, term, j = 0.0, 1.0, 0   # term = t^j / j!
        while j < 200:
            total += term / (j + k + 1)
            j += 1
            term *= t / j
            if abs(term) < 1e-17 * abs(total):
                break
        return total
    moment = math.expm1(t) / t
    for i in range(1, k + 1):
        moment = (math.exp(t) - i * moment) / t
    return moment


@register_jitable
def _boxcox_slope(x, lmbda, k):
    if x == 0.0 and lmbda > 0.0:   # boxcox(0, lmbda) = -1 / lmbda
        return (1.0 - 2.0 * ((k + 1) % 2)) * math.gamma(k + 1.0) / lmbda ** (k + 1)
    if not x > 0.0:
        return np.nan
    u = math.log(x)
    return u ** (k + 1) * _moment(lmbda * u, int(k))


def boxcox_slope(x, lmbda, k):
    """The k-th derivative (k >= 1) of boxcox(x, lmbda) = (x^lmbda - 1) / lmbda in
    lmbda: boxcox is u I_0(lmbda u), u = log(x), with I_k(t) the integral over s in
    [0, 1] of s^k e^(s t), so this is u^(k+1) I_k(lmbda u) (at lmbda = 0: u^(k+1) /
    (k + 1), the limit of (lmbda u x^lmbda - (x^lmbda - 1)) / lmbda^2 for k = 1). Its
    derivatives: x^(lmbda - 1) u^k in x, boxcox_slope(x, lmbda, k + 1) in lmbda.

    >>> float(boxcox_slope(math.e, 0.0, 1))
    0.5
    """
    x, lmbda = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(lmbda, dtype=float))
    out = np.empty(x.shape)
    for i in np.ndindex(x.shape):
        out[i] = _boxcox_slope(float(x[i]), float(lmbda[i]), int(k))
    return out[()]


@overload(boxcox_slope)
def _boxcox_slope_typer(x, lmbda, k):
    if not isinstance(k, types.Integer):
        return None
    if _real(x) and _real(lmbda):
        return lambda x, lmbda, k: _boxcox_slope(float(x), float(lmbda), k)
    if not all(_real(t) or isinstance(t, types.Array) and _real(t.dtype) for t in (x, lmbda)):
        return None

    def arrays(x, lmbda, k):
        xs, ls = np.broadcast_arrays(_floats(x), _floats(lmbda))
        out = np.empty(xs.shape)
        for i in np.ndindex(xs.shape):
            out[i] = _boxcox_slope(xs[i], ls[i], k)
        return out
    return arrays
