"""scipy.stats under numba, continued (`runtime/stats.py` has the pattern): Student's t
density, the Laplace, logistic and Cauchy log densities, densities and distribution
functions, the chi-squared log density and density, and the uniform log density and
density, as generated code calls them (their records' `called_as`), with their numba forms
on floats broadcast as SciPy broadcasts them. As SciPy: a scale (df) out of range gives
NaN, a point outside the support log 0 = -inf; the uniform's support [loc, loc + scale]
and chi2's [loc, inf) include their ends.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special as special
from numba.extending import overload, register_jitable
from scipy import stats

from .stats import _form, _t_logpdf

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
