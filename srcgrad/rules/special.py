"""scipy.special: the records of its differentiable functions, and of their `math` twins
(math.erf, erfc, gamma, lgamma share the rules of SciPy's erf, erfc, gamma, gammaln).
Their compiled forms are in `runtime/special.py`.

Derivatives (DLMF 5.15, 7.2, 10.29): expit' = y (1 - y); logit' = 1 / (x (1 - x));
gammaln' = psi; gamma' = gamma psi; psi^(n)' = psi^(n+1); d betaln(a, b) = psi(a) -
psi(a + b), psi(b) - psi(a + b); erf' = 2/sqrt(pi) exp(-x^2) = -erfc'; erfinv' =
sqrt(pi)/2 exp(y^2); ndtr' = exp(-x^2/2) / sqrt(2 pi), which over ndtr is log_ndtr';
ndtri' = sqrt(2 pi) exp(y^2/2); d x log(y) = log(y), x / y; d x log1p(y) = log1p(y),
x / (1 + y); entr' = -(log x + 1); d x log(x / y) = log(x / y) + 1, -x / y; i0' = i1;
i1' = i0 - i1 / x (1/2 at 0: the helper `i1_slope`). logsumexp's gradient is the softmax
of a, weighted by b; softmax's Jacobian diag(y) - y y^T is symmetric (one formula serves
both modes), log_softmax's is I - 1 softmax^T. erfcx' = 2 x erfcx - 2/sqrt(pi); erfcinv' =
-sqrt(pi)/2 exp(y^2); rgamma' = -rgamma psi (away from the poles of gamma, where rgamma
is 0: NaN there); i0e' = i1e - sign(x) i0e; i1e' = i0e - (sign(x) + 1/x) i1e (1/2 at 0:
the helper `i1e_slope`); log_expit' = expit(-x); loggamma' = psi (real x); d beta(a, b) =
beta (psi(a) - psi(a + b)), beta (psi(b) - psi(a + b)); multigammaln(a, d)' = the sum
over j < d of psi(a - j/2) (the helper `multipolygamma`); gammasgn has zero gradient.

In x only (DLMF 8.8, 8.17, 6.2, 10.6, 10.29, 10.51, 25.11): d/dx gammainc(a, x) = x^(a-1)
e^-x / Gamma(a) = -d/dx gammaincc(a, x); d/dx betainc(a, b, x) = x^(a-1) (1-x)^(b-1) /
B(a, b); exp1' = -e^-x / x, expi' = e^x / x, d/dx expn(n, x) = -E_(n-1)(x) (the helper
`expn_all`, E_n of every integer n); J_v' = (J_(v-1) - J_(v+1)) / 2 and Y_v' alike, I_v' =
(I_(v-1) + I_(v+1)) / 2, K_v' = -(K_(v-1) + K_(v+1)) / 2, ive' = (ive_(v-1) + ive_(v+1))
/ 2 - sign(x) ive_v, kve' = kve_v - (kve_(v-1) + kve_(v+1)) / 2; j0' = -j1, j1' = j0 - j1/x
(`j1_slope`), y0' = -y1, y1' = y0 - y1/x; the spherical ones by SciPy's derivative=True
(`spherical_jn_slope`), their second derivatives from z^2 f'' + 2 z f' + (z^2 - n (n+1)) f
= 0; d/dq zeta(s, q) = -s zeta(s + 1, q). Their other arguments (the shape parameters a
and b, the orders v and n, zeta's s) have no gradient: a value being differentiated that
reaches one is refused where srcgrad compiles (the records' `no_gradient`).

More (DLMF 7.2, 7.5, 19.4, 25.12): erfi' = 2/sqrt(pi) e^(x^2); dawsn' = 1 - 2 x dawsn;
wrightomega' = w / (1 + w); K'(m) = (E - (1 - m) K) / (2 m (1 - m)), E'(m) = (E - K) / (2 m)
(`ellipk_slope`, `ellipe_slope`); spence'(z) = log(z) / (1 - z) (`spence_slope`); d
kl_div(x, y) = log(x / y), 1 - x / y; d huber(delta, r) = max(|r| - delta, 0), r clipped to
[-delta, delta]; d pseudo_huber(delta, r) = 2 y / delta - r^2 / (delta s), r / s with s =
sqrt(1 + (r / delta)^2); d poch(z, m) = poch (psi(z + m) - psi(z)), poch psi(z + m); d
binom(n, k) = binom (psi(n + 1) - psi(n - k + 1)), binom (psi(n - k + 1) - psi(k + 1)); d
owens_t(h, a) = -phi(h) erf(a h / sqrt 2) / 2, e^(-h^2 (1 + a^2) / 2) / (2 pi (1 + a^2));
d boxcox(x, l) = x^(l-1), `boxcox_slope(x, l, 1)` (boxcox1p's of 1 + x), and inv_boxcox's
y by the inverse function: y^(1-l), -boxcox_slope(y, l, 1) y^(1-l).
"""

import math

import numpy as np
from scipy import special

from ..runtime import sum_grad, unbroadcast
from ..runtime.special import i1_slope, times_weights
from ..runtime.special_extra import (
    boxcox_slope,
    ellipe_slope,
    ellipk_slope,
    expn_all,
    j1_slope,
    spence_slope,
    spherical_jn_slope,
    spherical_yn_slope,
    y1_slope,
)
from ..runtime.special_more import i1e_slope, multipolygamma
from . import SHAPE_PARAMETER, describe, linear, nondifferentiable, rule, tangent

NEEDS = ("scipy.special",)   # SciPy modules this imports (rules/__init__)

# what the arguments without a gradient are (`no_gradient`: a value being differentiated
# passed as one is refused, naming the call's line)
_ORDER = "an order, with no gradient"
_DIMENSION = "the dimension, an integer with no gradient"
_ZETA = "the exponent s, whose derivative has no closed form"

# ---- elementwise, one argument ----


@rule(special.expit, elementwise=True)
def expit(dy, y, x):
    return dy * y * (1.0 - y)


@rule(special.logit, elementwise=True)
def logit(dy, y, x):
    return dy / (x * (1.0 - x))


@rule(special.gammaln, math.lgamma, elementwise=True)
def gammaln(dy, y, x):
    return dy * special.psi(x)


@rule(special.psi, elementwise=True)
def psi(dy, y, x):
    return dy * special.polygamma(1, x)


@rule(special.gamma, math.gamma, elementwise=True)
def gamma(dy, y, x):
    return dy * y * special.psi(x)


@rule(special.erf, math.erf, elementwise=True)
def erf(dy, y, x):
    return dy * 2.0 / np.sqrt(np.pi) * np.exp(-x * x)


@rule(special.erfc, math.erfc, elementwise=True)
def erfc(dy, y, x):
    return -dy * 2.0 / np.sqrt(np.pi) * np.exp(-x * x)


@rule(special.erfinv, elementwise=True)
def erfinv(dy, y, x):
    return dy * 0.5 * np.sqrt(np.pi) * np.exp(y * y)


@rule(special.ndtr, elementwise=True)
def ndtr(dy, y, x):
    return dy * np.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi)


@rule(special.log_ndtr, elementwise=True)
def log_ndtr(dy, y, x):
    # the normal density over its distribution function, kept in range for x << 0
    return dy * np.exp(-0.5 * x * x - y) / np.sqrt(2.0 * np.pi)


@rule(special.ndtri, elementwise=True)
def ndtri(dy, y, x):
    return dy * np.sqrt(2.0 * np.pi) * np.exp(0.5 * y * y)


@rule(special.entr, elementwise=True)
def entr(dy, y, x):
    return -dy * (np.log(x) + 1.0)


@rule(special.i0, elementwise=True)
def i0(dy, y, x):
    return dy * special.i1(x)


@rule(special.i1, elementwise=True)
def i1(dy, y, x):
    return dy * i1_slope(x)


@rule(i1_slope, elementwise=True)
def i1_slope_(dy, y, x):
    # Bessel's equation x^2 i1'' + x i1' - (x^2 + 1) i1 = 0 (NaN at x = 0, where it is 0)
    return dy * (special.i1(x) + (special.i1(x) - x * y) / (x * x))


@rule(special.erfcx, elementwise=True)
def erfcx(dy, y, x):
    return dy * (2.0 * x * y - 2.0 / np.sqrt(np.pi))


@rule(special.erfcinv, elementwise=True)
def erfcinv(dy, y, x):
    return -dy * 0.5 * np.sqrt(np.pi) * np.exp(y * y)


@rule(special.rgamma, elementwise=True)
def rgamma(dy, y, x):
    return -dy * y * special.psi(x)


@rule(special.i0e, elementwise=True)
def i0e(dy, y, x):
    return dy * (special.i1e(x) - np.sign(x) * y)


@rule(special.i1e, elementwise=True)
def i1e(dy, y, x):
    return dy * i1e_slope(x)


@rule(i1e_slope, elementwise=True)
def i1e_slope_(dy, y, x):
    # i1e'' = 2 i1e + i1e / x^2 - (1/x + 2 sign(x)) (i1e' + sign(x) i1e), from Bessel's
    # equation (NaN at x = 0, as i1_slope's)
    return dy * (2.0 * special.i1e(x) + special.i1e(x) / (x * x) -
                 (1.0 / x + 2.0 * np.sign(x)) * (y + np.sign(x) * special.i1e(x)))


@rule(special.log_expit, elementwise=True)
def log_expit(dy, y, x):
    return dy * special.expit(-x)


@rule(special.loggamma, elementwise=True)
def loggamma(dy, y, x):
    return dy * special.psi(x)


@rule(special.multigammaln, elementwise=True, no_gradient={"d": _DIMENSION})
def multigammaln(dy, y, a, d):
    return unbroadcast(dy * multipolygamma(0, a, d), a), None


@rule(multipolygamma, elementwise=True)
def multipolygamma_(dy, y, n, a, d):
    return None, unbroadcast(dy * multipolygamma(n + 1, a, d), a), None


# ---- elementwise, two arguments ----


@rule(special.polygamma, elementwise=True, no_gradient={"n": _ORDER})
def polygamma(dy, y, n, x):
    return None, unbroadcast(dy * special.polygamma(n + 1, x), x)


@rule(special.betaln, elementwise=True)
def betaln(dy, y, a, b):
    return (unbroadcast(dy * (special.psi(a) - special.psi(a + b)), a),
            unbroadcast(dy * (special.psi(b) - special.psi(a + b)), b))


@rule(special.xlogy, elementwise=True)
def xlogy(dy, y, x1, x2):
    return unbroadcast(dy * np.log(x2), x1), unbroadcast(dy * x1 / x2, x2)


@rule(special.xlog1py, elementwise=True)
def xlog1py(dy, y, x1, x2):
    return unbroadcast(dy * np.log1p(x2), x1), unbroadcast(dy * x1 / (1.0 + x2), x2)


@rule(special.rel_entr, elementwise=True)
def rel_entr(dy, y, x1, x2):
    return unbroadcast(dy * (np.log(x1 / x2) + 1.0), x1), unbroadcast(-dy * x1 / x2, x2)


@rule(special.beta, elementwise=True)
def beta(dy, y, a, b):
    return (unbroadcast(dy * y * (special.psi(a) - special.psi(a + b)), a),
            unbroadcast(dy * y * (special.psi(b) - special.psi(a + b)), b))


# ---- over an axis ----


@rule(special.logsumexp)
def logsumexp(dy, y, a, axis=None, b=None, keepdims=False, return_sign=False):
    return times_weights(sum_grad(dy, a, axis, keepdims) *
                         np.exp(a - sum_grad(y, a, axis, keepdims)), b, return_sign)


@tangent(special.logsumexp)
def logsumexp_tangent(dx, y, a, axis=None, b=None, keepdims=False, return_sign=False):
    return np.sum(times_weights(dx * np.exp(a - sum_grad(y, a, axis, keepdims)), b,
                                return_sign), axis=axis, keepdims=keepdims)


@rule(special.softmax)
def softmax(dy, y, x, axis=None):
    return y * (dy - np.sum(dy * y, axis=axis, keepdims=True))


@rule(special.log_softmax)
def log_softmax(dy, y, x, axis=None):
    return dy - np.exp(y) * np.sum(dy, axis=axis, keepdims=True)


@tangent(special.log_softmax)
def log_softmax_tangent(dx, y, x, axis=None):
    return dx - np.sum(np.exp(y) * dx, axis=axis, keepdims=True)


tangent(special.softmax)(softmax)   # its Jacobian is symmetric: the same product
linear(times_weights)
describe(times_weights, i1_slope, i1e_slope, multipolygamma, pure=True)
nondifferentiable(special.gammasgn)
describe(special.logsumexp, refuse=lambda keywords: "return_sign=True gives a tuple with "
         "the sign, which has no gradient rule: take np.abs or the sign apart" if
         keywords.get("return_sign") else None)


# ---- incomplete gamma and beta, exponential integrals (in x only) ----


@rule(special.gammainc, elementwise=True, no_gradient={"a": SHAPE_PARAMETER})
def gammainc(dy, y, a, x):
    return (None,
            unbroadcast(dy * np.exp(special.xlogy(a - 1.0, x) - x - special.gammaln(a)), x))


@rule(special.gammaincc, elementwise=True, no_gradient={"a": SHAPE_PARAMETER})
def gammaincc(dy, y, a, x):
    return (None,
            unbroadcast(-dy * np.exp(special.xlogy(a - 1.0, x) - x - special.gammaln(a)), x))


@rule(special.betainc, elementwise=True, no_gradient={"a": SHAPE_PARAMETER, "b": SHAPE_PARAMETER})
def betainc(dy, y, a, b, x):
    return (None, None,
            unbroadcast(dy * np.exp(special.xlogy(a - 1.0, x) + special.xlog1py(b - 1.0, -x) -
                                    special.betaln(a, b)), x))


@rule(special.exp1, elementwise=True)
def exp1(dy, y, x):
    return -dy * np.exp(-x) / x


@rule(special.expi, elementwise=True)
def expi(dy, y, x):
    return dy * np.exp(x) / x


@rule(special.expn, elementwise=True, no_gradient={"n": _ORDER})
def expn(dy, y, n, x):
    return None, unbroadcast(-dy * expn_all(n - 1, x), x)


@rule(expn_all, elementwise=True, no_gradient={"n": _ORDER})
def expn_all_(dy, y, n, x):
    return None, unbroadcast(-dy * expn_all(n - 1, x), x)


# ---- Bessel functions (in x only) ----


@rule(special.j0, elementwise=True)
def j0(dy, y, x):
    return -dy * special.j1(x)


@rule(special.j1, elementwise=True)
def j1(dy, y, x):
    return dy * j1_slope(x)


@rule(j1_slope, elementwise=True)
def j1_slope_(dy, y, x):
    # Bessel's equation x^2 j1'' + x j1' + (x^2 - 1) j1 = 0 (NaN at x = 0, where it is 0)
    return dy * ((special.j1(x) - x * y) / (x * x) - special.j1(x))


@rule(special.y0, elementwise=True)
def y0(dy, y, x):
    return -dy * special.y1(x)


@rule(special.y1, elementwise=True)
def y1(dy, y, x):
    return dy * y1_slope(x)


@rule(y1_slope, elementwise=True)
def y1_slope_(dy, y, x):
    return dy * ((special.y1(x) - x * y) / (x * x) - special.y1(x))


@rule(special.jv, elementwise=True, no_gradient={"v": _ORDER})
def jv(dy, y, v, x):
    return None, unbroadcast(
        dy * 0.5 * (special.jv(v - 1.0, x) - special.jv(v + 1.0, x)), x)


@rule(special.yv, elementwise=True, no_gradient={"v": _ORDER})
def yv(dy, y, v, x):
    return None, unbroadcast(
        dy * 0.5 * (special.yv(v - 1.0, x) - special.yv(v + 1.0, x)), x)


@rule(special.iv, elementwise=True, no_gradient={"v": _ORDER})
def iv(dy, y, v, x):
    return None, unbroadcast(
        dy * 0.5 * (special.iv(v - 1.0, x) + special.iv(v + 1.0, x)), x)


@rule(special.ive, elementwise=True, no_gradient={"v": _ORDER})
def ive(dy, y, v, x):
    return None, unbroadcast(
        dy * (0.5 * (special.ive(v - 1.0, x) + special.ive(v + 1.0, x)) - np.sign(x) * y), x)


@rule(special.kv, elementwise=True, no_gradient={"v": _ORDER})
def kv(dy, y, v, x):
    return None, unbroadcast(
        -dy * 0.5 * (special.kv(v - 1.0, x) + special.kv(v + 1.0, x)), x)


@rule(special.kve, elementwise=True, no_gradient={"v": _ORDER})
def kve(dy, y, v, x):
    return None, unbroadcast(
        dy * (y - 0.5 * (special.kve(v - 1.0, x) + special.kve(v + 1.0, x))), x)





@rule(special.zeta, elementwise=True, no_gradient={"x": _ZETA})
def zeta(dy, y, x, q=None):
    return None, unbroadcast(-dy * x * special.zeta(x + 1.0, q), q)
describe(j1_slope, y1_slope, expn_all, pure=True)


@rule(special.spherical_jn, elementwise=True, no_gradient={"n": _ORDER})
def spherical_jn(dy, y, n, z, derivative=False):
    return None, unbroadcast(dy * spherical_jn_slope(n, z), z)


@rule(special.spherical_yn, elementwise=True, no_gradient={"n": _ORDER})
def spherical_yn(dy, y, n, z, derivative=False):
    return None, unbroadcast(dy * spherical_yn_slope(n, z), z)


@rule(spherical_jn_slope, elementwise=True)
def spherical_jn_slope_(dy, y, n, z):
    # the spherical Bessel equation z^2 f'' + 2 z f' + (z^2 - n (n + 1)) f = 0 (NaN at 0)
    return None, unbroadcast(
        dy * (-2.0 * y / z - (1.0 - n * (n + 1.0) / (z * z)) * special.spherical_jn(n, z)), z)


@rule(spherical_yn_slope, elementwise=True)
def spherical_yn_slope_(dy, y, n, z):
    return None, unbroadcast(
        dy * (-2.0 * y / z - (1.0 - n * (n + 1.0) / (z * z)) * special.spherical_yn(n, z)), z)


describe(spherical_jn_slope, spherical_yn_slope, pure=True)
describe(special.spherical_jn, special.spherical_yn, refuse=lambda keywords: "derivative="
         "True has no gradient rule: differentiate spherical_jn (spherical_yn) itself" if
         keywords.get("derivative") else None)


# ---- more of one argument ----


@rule(special.erfi, elementwise=True)
def erfi(dy, y, x):
    return dy * 2.0 / np.sqrt(np.pi) * np.exp(x * x)


@rule(special.dawsn, elementwise=True)
def dawsn(dy, y, x):
    return dy * (1.0 - 2.0 * x * y)


@rule(special.wrightomega, elementwise=True)
def wrightomega(dy, y, x):
    return dy * y / (1.0 + y)


# ---- more of two arguments ----


@rule(special.kl_div, elementwise=True)
def kl_div(dy, y, x1, x2):
    return unbroadcast(dy * np.log(x1 / x2), x1), unbroadcast(dy * (1.0 - x1 / x2), x2)


@rule(special.huber, elementwise=True)
def huber(dy, y, delta, r):
    # r^2 / 2 where |r| <= delta, else delta (|r| - delta / 2)
    return (unbroadcast(dy * np.maximum(np.abs(r) - delta, 0.0), delta),
            unbroadcast(dy * np.minimum(np.maximum(r, -delta), delta), r))


@rule(special.pseudo_huber, elementwise=True)
def pseudo_huber(dy, y, delta, r):
    # delta^2 (s - 1), s = sqrt(1 + (r / delta)^2)
    return (unbroadcast(dy * (2.0 * y / delta -
                              r * r / (delta * np.sqrt(1.0 + (r / delta) ** 2))), delta),
            unbroadcast(dy * r / np.sqrt(1.0 + (r / delta) ** 2), r))


@rule(special.poch, elementwise=True)
def poch(dy, y, z, m):
    return (unbroadcast(dy * y * (special.psi(z + m) - special.psi(z)), z),
            unbroadcast(dy * y * special.psi(z + m), m))


@rule(special.binom, elementwise=True)
def binom(dy, y, n, k):
    return (unbroadcast(dy * y * (special.psi(n + 1.0) - special.psi(n - k + 1.0)), n),
            unbroadcast(dy * y * (special.psi(n - k + 1.0) - special.psi(k + 1.0)), k))


@rule(special.owens_t, elementwise=True)
def owens_t(dy, y, h, a):
    return (unbroadcast(-dy * np.exp(-0.5 * h * h) * special.erf(a * h / np.sqrt(2.0)) /
                        (2.0 * np.sqrt(2.0 * np.pi)), h),
            unbroadcast(dy * np.exp(-0.5 * h * h * (1.0 + a * a)) /
                        (2.0 * np.pi * (1.0 + a * a)), a))


@rule(special.ellipk, elementwise=True)
def ellipk(dy, y, m):
    return dy * ellipk_slope(m)


@rule(special.ellipe, elementwise=True)
def ellipe(dy, y, m):
    return dy * ellipe_slope(m)


@rule(ellipk_slope, elementwise=True)
def ellipk_slope_(dy, y, m):
    # the derivative of (E - (1 - m) K) / (2 m (1 - m)) (NaN at m = 0)
    return dy * (ellipe_slope(m) + special.ellipk(m) - (1.0 - m) * y - (2.0 - 4.0 * m) * y) / \
        (2.0 * m * (1.0 - m))


@rule(ellipe_slope, elementwise=True)
def ellipe_slope_(dy, y, m):
    # the derivative of (E - K) / (2 m) (NaN at m = 0)
    return -dy * (y + ellipk_slope(m)) / (2.0 * m)


@rule(special.spence, elementwise=True)
def spence(dy, y, z):
    return dy * spence_slope(z)


@rule(spence_slope, elementwise=True)
def spence_slope_(dy, y, z):
    # the derivative of log(z) / (1 - z) (NaN at z = 1)
    return dy * (1.0 / z + y) / (1.0 - z)


describe(ellipk_slope, ellipe_slope, spence_slope, pure=True)


@rule(special.boxcox, elementwise=True)
def boxcox(dy, y, x, lmbda):
    return (unbroadcast(dy * np.exp((lmbda - 1.0) * np.log(x)), x),
            unbroadcast(dy * boxcox_slope(x, lmbda, 1), lmbda))


@rule(special.boxcox1p, elementwise=True)
def boxcox1p(dy, y, x, lmbda):
    return (unbroadcast(dy * np.exp((lmbda - 1.0) * np.log1p(x)), x),
            unbroadcast(dy * boxcox_slope(1.0 + x, lmbda, 1), lmbda))


@rule(special.inv_boxcox, elementwise=True)
def inv_boxcox(dy, y, z, lmbda):
    # y solves boxcox(y, lmbda) = z: dy/dz = y^(1 - lmbda), dy/dlmbda = -boxcox_slope y^(1 - lmbda)
    return (unbroadcast(dy * np.exp((1.0 - lmbda) * np.log(y)), z),
            unbroadcast(-dy * boxcox_slope(y, lmbda, 1) * np.exp((1.0 - lmbda) * np.log(y)),
                        lmbda))


@rule(boxcox_slope, elementwise=True)
def boxcox_slope_(dy, y, x, lmbda, k):
    return (unbroadcast(dy * np.exp((lmbda - 1.0) * np.log(x)) * np.log(x) ** k, x),
            unbroadcast(dy * boxcox_slope(x, lmbda, k + 1), lmbda), None)


describe(boxcox_slope, pure=True)
