"""scipy.special, a fourth part: the records of k0, k1, k0e, k1e, expm1, log1p, cosm1, the
inverses of the incomplete gamma function and four distribution functions (their
compiled forms in `runtime/special_cdfs.py`).

Derivatives (DLMF 10.29, 8.8): k0' = -k1, k1' = -k0 - k1 / x; k0e = e^x k0: k0e' = k0e -
k1e, k1e' = k1e (1 - 1/x) - k0e; expm1' = e^x, log1p' = 1 / (1 + x), cosm1' = -sin x.
In the probability only, by the inverse function: d/dp gammaincinv(a, p) = 1 / the
density x^(a-1) e^-x / Gamma(a) at the result x, gammainccinv's its negative. The
distribution functions in their continuous argument: d/dt stdtr(df, t) = Student's t
density (1 + t^2/df)^(-(df+1)/2) / (sqrt(df) B(df/2, 1/2)) (betaln, not a difference of
gammaln, which loses every digit for df > 1e14; NaN for an infinite df); d/dx
chdtr(v, x) = the chi-square density x^(v/2-1) e^(-x/2) / (2^(v/2) Gamma(v/2)); pdtr(k, m)
= gammaincc(k + 1, m) (k rounded down, as SciPy's): d/dm = -e^-m m^k / k!, minus the
Poisson pmf at k; bdtr(k, n, p) = betainc(n - k, k + 1, 1 - p) (k and n rounded down): d/dp
= -(1-p)^(n-k-1) p^k / B(n - k, k + 1), 0 where k = n. The shape parameter a, the degrees
of freedom df and v and the counts k and n have no gradient: a value being differentiated
passed there is refused where srcgrad compiles (the records' `no_gradient`).
"""

import numpy as np
from scipy import special

from ..runtime import special_cdfs as _compiled  # noqa: F401  (their numba forms)
from ..runtime import unbroadcast
from . import SHAPE_PARAMETER, rule

NEEDS = ("scipy.special",)   # SciPy modules this imports (rules/__init__)

_DF = "the degrees of freedom, with no gradient"
_COUNT = "a count, with no gradient"

# ---- one argument ----


@rule(special.k0, elementwise=True)
def k0(dy, y, x):
    return -dy * special.k1(x)


@rule(special.k1, elementwise=True)
def k1(dy, y, x):
    return -dy * (special.k0(x) + y / x)


@rule(special.k0e, elementwise=True)
def k0e(dy, y, x):
    return dy * (y - special.k1e(x))


@rule(special.k1e, elementwise=True)
def k1e(dy, y, x):
    return dy * (y - y / x - special.k0e(x))


@rule(special.expm1, elementwise=True)
def expm1(dy, y, x):
    return dy * np.exp(x)


@rule(special.log1p, elementwise=True)
def log1p(dy, y, x):
    return dy / (1.0 + x)


@rule(special.cosm1, elementwise=True)
def cosm1(dy, y, x):
    return -dy * np.sin(x)


# ---- the inverses of the incomplete gamma function (in the probability only) ----


@rule(special.gammaincinv, elementwise=True, no_gradient={"a": SHAPE_PARAMETER})
def gammaincinv(dy, y, a, p):
    return None, unbroadcast(dy * np.exp(special.gammaln(a) - special.xlogy(a - 1.0, y) + y), p)


@rule(special.gammainccinv, elementwise=True, no_gradient={"a": SHAPE_PARAMETER})
def gammainccinv(dy, y, a, p):
    return None, unbroadcast(-dy * np.exp(special.gammaln(a) - special.xlogy(a - 1.0, y) + y),
                             p)


# ---- distribution functions (in their continuous argument only) ----


@rule(special.stdtr, elementwise=True, no_gradient={"df": _DF})
def stdtr(dy, y, df, t):
    return None, unbroadcast(
        dy * np.exp(-special.betaln(0.5 * df, 0.5) - 0.5 * np.log(df) -
                    (0.5 * df + 0.5) * np.log1p(t * t / df)), t)


@rule(special.chdtr, elementwise=True, no_gradient={"v": _DF})
def chdtr(dy, y, v, x):
    return None, unbroadcast(
        dy * np.exp(special.xlogy(0.5 * v - 1.0, x) - 0.5 * x - 0.5 * v * np.log(2.0) -
                    special.gammaln(0.5 * v)), x)


@rule(special.pdtr, elementwise=True, no_gradient={"k": _COUNT})
def pdtr(dy, y, k, m):
    return None, unbroadcast(
        -dy * np.exp(special.xlogy(np.floor(k), m) - m - special.gammaln(np.floor(k) + 1.0)), m)


@rule(special.bdtr, elementwise=True, no_gradient={"k": _COUNT, "n": _COUNT})
def bdtr(dy, y, k, n, p):
    # NaN where bdtr is (k > n among them, where the formula gives 0)
    return None, None, unbroadcast(
        -dy * np.where(np.isnan(y), np.nan, np.exp(
            special.xlog1py(np.floor(n) - np.floor(k) - 1.0, -p) + special.xlogy(np.floor(k), p) -
            special.betaln(np.floor(n) - np.floor(k), np.floor(k) + 1.0))), p)
