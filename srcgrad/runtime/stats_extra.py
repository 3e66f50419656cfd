"""scipy.stats under numba, continued (`runtime/stats.py` has the pattern): Student's t
density, the Laplace, logistic and Cauchy log densities, densities and distribution
functions, the chi-squared log density and density, and the uniform log density and
density, as generated code calls them (their records' `called_as`), with their numba forms
on floats broadcast as SciPy broadcasts them. As SciPy: a scale (df) out of range gives
NaN, a point outside the support log 0 = -inf; the uniform's support [loc, loc + scale]
and chi2's [loc, inf) include their ends.

Batch two: poisson.pmf, binom and bernoulli logpmf and pmf (a count k outside the support
or not whole gives log 0; n not a whole number >= 0, or p outside [0, 1], NaN), gamma, beta
and lognorm densities, norm.entropy, and the multivariate normal and Dirichlet densities
(the exponentials of their log densities' forms, `runtime/stats.py`).

Batch three: t, gamma, beta and chi2 distribution functions (scipy.special's stdtr,
gammainc and betainc, compiled through cython_special's exports as `runtime/special.py`
does), differentiated in x, loc and scale only (their records refuse the shape parameters
df, a and b, whose derivatives have no closed form).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special as special
from numba import types
from numba.extending import overload, register_jitable

from .special import _export
from .stats import (
    _beta_logpdf,
    _form,
    _gamma_logpdf,
    _poisson_logpmf,
    _t_logpdf,
    dirichlet_logpdf,
    multivariate_normal_logpdf,
    scipy_form,
)

_LOG_2 = math.log(2.0)
_LOG_PI = math.log(math.pi)


# ---- on floats ----


@register_jitable
def _t_pdf(x, df, loc, scale):
    return math.exp(_t_logpdf(x, df, loc, scale))


@register_jitable
def _laplace_logpdf(x, loc, scale):
    if not scale > 0.0:
        return np.nan
    return -abs((x - loc) / scale) - math.log(2.0 * scale)


@register_jitable
def _laplace_pdf(x, loc, scale):
    return math.exp(_laplace_logpdf(x, loc, scale))


@register_jitable
def _laplace_cdf(x, loc, scale):
    if not scale > 0.0:
        return np.nan
    z = (x - loc) / scale
    return 1.0 - 0.5 * math.exp(-z) if z > 0.0 else 0.5 * math.exp(z)


@register_jitable
def _logistic_logpdf(x, loc, scale):
    if not scale > 0.0:
        return np.nan
    a = -abs((x - loc) / scale)
    return a - 2.0 * math.log1p(math.exp(a)) - math.log(scale)


@register_jitable
def _logistic_pdf(x, loc, scale):
    return math.exp(_logistic_logpdf(x, loc, scale))


@register_jitable
def _logistic_cdf(x, loc, scale):
    return special.expit((x - loc) / scale) if scale > 0.0 else np.nan


@register_jitable
def _cauchy_logpdf(x, loc, scale):
    if not scale > 0.0:
        return np.nan
    z = (x - loc) / scale
    return -_LOG_PI - math.log(scale) - math.log1p(z * z)


@register_jitable
def _cauchy_pdf(x, loc, scale):
    if not scale > 0.0:
        return np.nan
    z = (x - loc) / scale
    return 1.0 / (math.pi * scale * (1.0 + z * z))


@register_jitable
def _cauchy_cdf(x, loc, scale):
    return 0.5 + math.atan((x - loc) / scale) / math.pi if scale > 0.0 else np.nan


@register_jitable
def _chi2_logpdf(x, df, loc, scale):
    if not (scale > 0.0 and df > 0.0):
        return np.nan
    z = (x - loc) / scale
    if z < 0.0:
        return -np.inf
    return (special.xlogy(0.5 * df - 1.0, z) - 0.5 * z - special.gammaln(0.5 * df)
            - 0.5 * df * _LOG_2 - math.log(scale))


@register_jitable
def _chi2_pdf(x, df, loc, scale):
    return math.exp(_chi2_logpdf(x, df, loc, scale))


@register_jitable
def _uniform_logpdf(x, loc, scale):
    if not scale > 0.0:
        return np.nan
    z = (x - loc) / scale
    return -math.log(scale) if 0.0 <= z <= 1.0 else -np.inf


@register_jitable
def _uniform_pdf(x, loc, scale):
    if not scale > 0.0:
        return np.nan
    z = (x - loc) / scale
    return 1.0 / scale if 0.0 <= z <= 1.0 else 0.0


# ---- the Python forms, with their numba forms ----

t_pdf = scipy_form("t", "pdf", _t_pdf, "x, df, loc=0.0, scale=1.0")
laplace_logpdf = scipy_form("laplace", "logpdf", _laplace_logpdf)
laplace_pdf = scipy_form("laplace", "pdf", _laplace_pdf)
laplace_cdf = scipy_form("laplace", "cdf", _laplace_cdf)
logistic_logpdf = scipy_form("logistic", "logpdf", _logistic_logpdf)
logistic_pdf = scipy_form("logistic", "pdf", _logistic_pdf)
logistic_cdf = scipy_form("logistic", "cdf", _logistic_cdf)
cauchy_logpdf = scipy_form("cauchy", "logpdf", _cauchy_logpdf)
cauchy_pdf = scipy_form("cauchy", "pdf", _cauchy_pdf)
cauchy_cdf = scipy_form("cauchy", "cdf", _cauchy_cdf)
chi2_logpdf = scipy_form("chi2", "logpdf", _chi2_logpdf, "x, df, loc=0.0, scale=1.0")
chi2_pdf = scipy_form("chi2", "pdf", _chi2_pdf, "x, df, loc=0.0, scale=1.0")
uniform_logpdf = scipy_form("uniform", "logpdf", _uniform_logpdf)
uniform_pdf = scipy_form("uniform", "pdf", _uniform_pdf)


# ---- batch two: counts, shapes, entropy, vector densities ----


@register_jitable
def _poisson_pmf(k, mu, loc):
    return math.exp(_poisson_logpmf(k, mu, loc))


@register_jitable
def _binom_logpmf(k, n, p, loc):
    if not (n >= 0.0 and n == math.floor(n) and 0.0 <= p <= 1.0):
        return np.nan
    m = k - loc
    if m < 0.0 or m > n or m != math.floor(m):
        return -np.inf
    return (special.gammaln(n + 1.0) - special.gammaln(m + 1.0) - special.gammaln(n - m + 1.0)
            + special.xlogy(m, p) + special.xlog1py(n - m, -p))


@register_jitable
def _binom_pmf(k, n, p, loc):
    return math.exp(_binom_logpmf(k, n, p, loc))


@register_jitable
def _bernoulli_logpmf(k, p, loc):
    return _binom_logpmf(k, 1.0, p, loc)


@register_jitable
def _bernoulli_pmf(k, p, loc):
    return math.exp(_binom_logpmf(k, 1.0, p, loc))


@register_jitable
def _gamma_pdf(x, a, loc, scale):
    return math.exp(_gamma_logpdf(x, a, loc, scale))


@register_jitable
def _beta_pdf(x, a, b, loc, scale):
    return math.exp(_beta_logpdf(x, a, b, loc, scale))


@register_jitable
def _lognorm_logpdf(x, s, loc, scale):
    if not (scale > 0.0 and s > 0.0):
        return np.nan
    z = (x - loc) / scale
    if z <= 0.0:
        return -np.inf
    u = math.log(z)
    return (-0.5 * u * u / (s * s) - math.log(s * z) - 0.5 * math.log(2.0 * math.pi)
            - math.log(scale))


@register_jitable
def _lognorm_pdf(x, s, loc, scale):
    return math.exp(_lognorm_logpdf(x, s, loc, scale))


@register_jitable
def _norm_entropy(loc, scale, unused):
    # loc (unused) shapes the result only, as in SciPy
    return 0.5 * math.log(2.0 * math.pi * math.e) + math.log(scale) if scale > 0.0 else np.nan


poisson_pmf = scipy_form("poisson", "pmf", _poisson_pmf, "k, mu, loc=0")
binom_logpmf = scipy_form("binom", "logpmf", _binom_logpmf, "k, n, p, loc=0")
binom_pmf = scipy_form("binom", "pmf", _binom_pmf, "k, n, p, loc=0")
bernoulli_logpmf = scipy_form("bernoulli", "logpmf", _bernoulli_logpmf, "k, p, loc=0")
bernoulli_pmf = scipy_form("bernoulli", "pmf", _bernoulli_pmf, "k, p, loc=0")
gamma_pdf = scipy_form("gamma", "pdf", _gamma_pdf, "x, a, loc=0.0, scale=1.0")
beta_pdf = scipy_form("beta", "pdf", _beta_pdf, "x, a, b, loc=0.0, scale=1.0")
lognorm_logpdf = scipy_form("lognorm", "logpdf", _lognorm_logpdf, "x, s, loc=0.0, scale=1.0")
lognorm_pdf = scipy_form("lognorm", "pdf", _lognorm_pdf, "x, s, loc=0.0, scale=1.0")
norm_entropy = scipy_form("norm", "entropy", params="loc=0.0, scale=1.0")
multivariate_normal_pdf = scipy_form("multivariate_normal", "pdf", params="x, mean, cov")
dirichlet_pdf = scipy_form("dirichlet", "pdf", params="x, alpha")


@overload(norm_entropy)
def _norm_entropy_typer(loc=0.0, scale=1.0):
    f = _form(_norm_entropy, loc, scale, types.float64)
    return f and (lambda loc=0.0, scale=1.0: f(loc, scale, 0.0))


@overload(multivariate_normal_pdf)
def _mvn_pdf_typer(x, mean, cov):
    return lambda x, mean, cov: np.exp(multivariate_normal_logpdf(x, mean, cov))


@overload(dirichlet_pdf)
def _dirichlet_pdf_typer(x, alpha):
    return lambda x, alpha: np.exp(dirichlet_logpdf(x, alpha))


# ---- batch three: distribution functions, differentiated in x, loc and scale only ----


_stdtr, _gammainc, _betainc = _export("stdtr", 2), _export("gammainc", 2), \
    _export("betainc", 3)


@register_jitable
def _t_cdf(x, df, loc, scale):
    if not (scale > 0.0 and df > 0.0):
        return np.nan
    return _stdtr(df, (x - loc) / scale, 0)


@register_jitable
def _gamma_cdf(x, a, loc, scale):
    if not (scale > 0.0 and a > 0.0):
        return np.nan
    return _gammainc(a, max((x - loc) / scale, 0.0), 0)


@register_jitable
def _beta_cdf(x, a, b, loc, scale):
    if not (scale > 0.0 and a > 0.0 and b > 0.0):
        return np.nan
    return _betainc(a, b, min(max((x - loc) / scale, 0.0), 1.0), 0)


@register_jitable
def _chi2_cdf(x, df, loc, scale):
    if not (scale > 0.0 and df > 0.0):
        return np.nan
    return _gammainc(0.5 * df, max(0.5 * (x - loc) / scale, 0.0), 0)


t_cdf = scipy_form("t", "cdf", _t_cdf, "x, df, loc=0.0, scale=1.0")
gamma_cdf = scipy_form("gamma", "cdf", _gamma_cdf, "x, a, loc=0.0, scale=1.0")
beta_cdf = scipy_form("beta", "cdf", _beta_cdf, "x, a, b, loc=0.0, scale=1.0")
chi2_cdf = scipy_form("chi2", "cdf", _chi2_cdf, "x, df, loc=0.0, scale=1.0")

