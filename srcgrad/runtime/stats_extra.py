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
from scipy import stats

from .special import _export
from .stats import (
    _beta_logpdf,
    _form,
    _gamma_logpdf,
    _poisson_logpmf,
    _t_logpdf,
    dirichlet_logpdf,
    multivariate_normal_logpdf,
)

_LOG_2 = math.log(2.0)
_LOG_PI = math.log(math.pi)


def t_pdf(x, df, loc=0.0, scale=1.0):
    """scipy.stats.t.pdf, as generated code calls it."""
    return stats.t.pdf(x, df, loc, scale)


def laplace_logpdf(x, loc=0.0, scale=1.0):
    """scipy.stats.laplace.logpdf, as generated code calls it."""
    return stats.laplace.logpdf(x, loc, scale)


def laplace_pdf(x, loc=0.0, scale=1.0):
    """scipy.stats.laplace.pdf, as generated code calls it."""
    return stats.laplace.pdf(x, loc, scale)


def laplace_cdf(x, loc=0.0, scale=1.0):
    """scipy.stats.laplace.cdf, as generated code calls it."""
    return stats.laplace.cdf(x, loc, scale)


def logistic_logpdf(x, loc=0.0, scale=1.0):
    """scipy.stats.logistic.logpdf, as generated code calls it."""
    return stats.logistic.logpdf(x, loc, scale)


def logistic_pdf(x, loc=0.0, scale=1.0):
    """scipy.stats.logistic.pdf, as generated code calls it."""
    return stats.logistic.pdf(x, loc, scale)


def logistic_cdf(x, loc=0.0, scale=1.0):
    """scipy.stats.logistic.cdf, as generated code calls it."""
    return stats.logistic.cdf(x, loc, scale)


def cauchy_logpdf(x, loc=0.0, scale=1.0):
    """scipy.stats.cauchy.logpdf, as generated code calls it."""
    return stats.cauchy.logpdf(x, loc, scale)


def cauchy_pdf(x, loc=0.0, scale=1.0):
    """scipy.stats.cauchy.pdf, as generated code calls it."""
    return stats.cauchy.pdf(x, loc, scale)


def cauchy_cdf(x, loc=0.0, scale=1.0):
    """scipy.stats.cauchy.cdf, as generated code calls it."""
    return stats.cauchy.cdf(x, loc, scale)


def chi2_logpdf(x, df, loc=0.0, scale=1.0):
    """scipy.stats.chi2.logpdf, as generated code calls it."""
    return stats.chi2.logpdf(x, df, loc, scale)


def chi2_pdf(x, df, loc=0.0, scale=1.0):
    """scipy.stats.chi2.pdf, as generated code calls it."""
    return stats.chi2.pdf(x, df, loc, scale)


def uniform_logpdf(x, loc=0.0, scale=1.0):
    """scipy.stats.uniform.logpdf, as generated code calls it."""
    return stats.uniform.logpdf(x, loc, scale)


def uniform_pdf(x, loc=0.0, scale=1.0):
    """scipy.stats.uniform.pdf, as generated code calls it."""
    return stats.uniform.pdf(x, loc, scale)


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


# ---- their numba forms ----


@overload(t_pdf)
def _t_pdf_typer(x, df, loc=0.0, scale=1.0):
    f = _form(_t_pdf, x, df, loc, scale)
    return f and (lambda x, df, loc=0.0, scale=1.0: f(x, df, loc, scale))


@overload(chi2_logpdf)
def _chi2_logpdf_typer(x, df, loc=0.0, scale=1.0):
    f = _form(_chi2_logpdf, x, df, loc, scale)
    return f and (lambda x, df, loc=0.0, scale=1.0: f(x, df, loc, scale))


@overload(chi2_pdf)
def _chi2_pdf_typer(x, df, loc=0.0, scale=1.0):
    f = _form(_chi2_pdf, x, df, loc, scale)
    return f and (lambda x, df, loc=0.0, scale=1.0: f(x, df, loc, scale))


def _location_scale(function, scalar):
    """The numba form of `function(x, loc=0.0, scale=1.0)`: `scalar` on floats."""
    @overload(function)
    def typer(x, loc=0.0, scale=1.0):
        f = _form(scalar, x, loc, scale)
        return f and (lambda x, loc=0.0, scale=1.0: f(x, loc, scale))
    return typer


for _function, _scalar in [(laplace_logpdf, _laplace_logpdf), (laplace_pdf, _laplace_pdf),
                           (laplace_cdf, _laplace_cdf), (logistic_logpdf, _logistic_logpdf),
                           (logistic_pdf, _logistic_pdf), (logistic_cdf, _logistic_cdf),
                           (cauchy_logpdf, _cauchy_logpdf), (cauchy_pdf, _cauchy_pdf),
                           (cauchy_cdf, _cauchy_cdf), (uniform_logpdf, _uniform_logpdf),
                           (uniform_pdf, _uniform_pdf)]:
    _location_scale(_function, _scalar)


# ---- batch two: counts, shapes, entropy, vector densities ----


def poisson_pmf(k, mu, loc=0):
    """scipy.stats.poisson.pmf, as generated code calls it."""
    return stats.poisson.pmf(k, mu, loc)


def binom_logpmf(k, n, p, loc=0):
    """scipy.stats.binom.logpmf, as generated code calls it."""
    return stats.binom.logpmf(k, n, p, loc)


def binom_pmf(k, n, p, loc=0):
    """scipy.stats.binom.pmf, as generated code calls it."""
    return stats.binom.pmf(k, n, p, loc)


def bernoulli_logpmf(k, p, loc=0):
    """scipy.stats.bernoulli.logpmf, as generated code calls it."""
    return stats.bernoulli.logpmf(k, p, loc)


def bernoulli_pmf(k, p, loc=0):
    """scipy.stats.bernoulli.pmf, as generated code calls it."""
    return stats.bernoulli.pmf(k, p, loc)


def gamma_pdf(x, a, loc=0.0, scale=1.0):
    """scipy.stats.gamma.pdf, as generated code calls it."""
    return stats.gamma.pdf(x, a, loc, scale)


def beta_pdf(x, a, b, loc=0.0, scale=1.0):
    """scipy.stats.beta.pdf, as generated code calls it."""
    return stats.beta.pdf(x, a, b, loc, scale)


def lognorm_logpdf(x, s, loc=0.0, scale=1.0):
    """scipy.stats.lognorm.logpdf, as generated code calls it."""
    return stats.lognorm.logpdf(x, s, loc, scale)


def lognorm_pdf(x, s, loc=0.0, scale=1.0):
    """scipy.stats.lognorm.pdf, as generated code calls it."""
    return stats.lognorm.pdf(x, s, loc, scale)


def norm_entropy(loc=0.0, scale=1.0):
    """scipy.stats.norm.entropy, as generated code calls it."""
    return stats.norm.entropy(loc, scale)


def multivariate_normal_pdf(x, mean, cov):
    """scipy.stats.multivariate_normal.pdf, as generated code calls it."""
    return stats.multivariate_normal.pdf(x, mean, cov)


def dirichlet_pdf(x, alpha):
    """scipy.stats.dirichlet.pdf, as generated code calls it."""
    return stats.dirichlet.pdf(x, alpha)





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


@overload(poisson_pmf)
def _poisson_pmf_typer(k, mu, loc=0):
    f = _form(_poisson_pmf, k, mu, loc)
    return f and (lambda k, mu, loc=0: f(k, mu, loc))


@overload(binom_logpmf)
def _binom_logpmf_typer(k, n, p, loc=0):
    f = _form(_binom_logpmf, k, n, p, loc)
    return f and (lambda k, n, p, loc=0: f(k, n, p, loc))


@overload(binom_pmf)
def _binom_pmf_typer(k, n, p, loc=0):
    f = _form(_binom_pmf, k, n, p, loc)
    return f and (lambda k, n, p, loc=0: f(k, n, p, loc))


@overload(bernoulli_logpmf)
def _bernoulli_logpmf_typer(k, p, loc=0):
    f = _form(_bernoulli_logpmf, k, p, loc)
    return f and (lambda k, p, loc=0: f(k, p, loc))


@overload(bernoulli_pmf)
def _bernoulli_pmf_typer(k, p, loc=0):
    f = _form(_bernoulli_pmf, k, p, loc)
    return f and (lambda k, p, loc=0: f(k, p, loc))


@overload(gamma_pdf)
def _gamma_pdf_typer(x, a, loc=0.0, scale=1.0):
    f = _form(_gamma_pdf, x, a, loc, scale)
    return f and (lambda x, a, loc=0.0, scale=1.0: f(x, a, loc, scale))


@overload(beta_pdf)
def _beta_pdf_typer(x, a, b, loc=0.0, scale=1.0):
    f = _form(_beta_pdf, x, a, b, loc, scale)
    return f and (lambda x, a, b, loc=0.0, scale=1.0: f(x, a, b, loc, scale))


@overload(lognorm_logpdf)
def _lognorm_logpdf_typer(x, s, loc=0.0, scale=1.0):
    f = _form(_lognorm_logpdf, x, s, loc, scale)
    return f and (lambda x, s, loc=0.0, scale=1.0: f(x, s, loc, scale))


@overload(lognorm_pdf)
def _lognorm_pdf_typer(x, s, loc=0.0, scale=1.0):
    f = _form(_lognorm_pdf, x, s, loc, scale)
    return f and (lambda x, s, loc=0.0, scale=1.0: f(x, s, loc, scale))


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


def t_cdf(x, df, loc=0.0, scale=1.0):
    """scipy.stats.t.cdf, as generated code calls it."""
    return stats.t.cdf(x, df, loc, scale)


def gamma_cdf(x, a, loc=0.0, scale=1.0):
    """scipy.stats.gamma.cdf, as generated code calls it."""
    return stats.gamma.cdf(x, a, loc, scale)


def beta_cdf(x, a, b, loc=0.0, scale=1.0):
    """scipy.stats.beta.cdf, as generated code calls it."""
    return stats.beta.cdf(x, a, b, loc, scale)


def chi2_cdf(x, df, loc=0.0, scale=1.0):
    """scipy.stats.chi2.cdf, as generated code calls it."""
    return stats.chi2.cdf(x, df, loc, scale)





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


@overload(t_cdf)
def _t_cdf_typer(x, df, loc=0.0, scale=1.0):
    f = _form(_t_cdf, x, df, loc, scale)
    return f and (lambda x, df, loc=0.0, scale=1.0: f(x, df, loc, scale))


@overload(gamma_cdf)
def _gamma_cdf_typer(x, a, loc=0.0, scale=1.0):
    f = _form(_gamma_cdf, x, a, loc, scale)
    return f and (lambda x, a, loc=0.0, scale=1.0: f(x, a, loc, scale))


@overload(beta_cdf)
def _beta_cdf_typer(x, a, b, loc=0.0, scale=1.0):
    f = _form(_beta_cdf, x, a, b, loc, scale)
    return f and (lambda x, a, b, loc=0.0, scale=1.0: f(x, a, b, loc, scale))


@overload(chi2_cdf)
def _chi2_cdf_typer(x, df, loc=0.0, scale=1.0):
    f = _form(_chi2_cdf, x, df, loc, scale)
    return f and (lambda x, df, loc=0.0, scale=1.0: f(x, df, loc, scale))
