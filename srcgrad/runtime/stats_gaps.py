"""scipy.stats under numba, the methods JAX and autograd differentiate that the other
batches lack (`runtime/stats.py` has the pattern), as generated code calls them (their
records' `called_as`, `rules/stats_gaps.py`), with their numba forms on floats broadcast
as SciPy broadcasts them:

* the tails and quantiles of expon, cauchy and logistic (sf, logsf, logcdf, ppf, isf),
  uniform's cdf and ppf;
* the Gumbel distributions gumbel_r and gumbel_l (logpdf, pdf, cdf, logcdf, sf, logsf,
  ppf) and the Pareto distribution (the same, of the shape b);
* the tails of chi2, gamma and beta (sf, logsf, logcdf: scipy.special's gammaincc and
  betainc through cython_special's exports) and t's logcdf (stdtr);
* the von Mises density (logpdf, pdf: i0e and i1e);
* the geometric and negative binomial pmfs (logpmf, pmf) and poisson's cdf (pdtr).

As SciPy: a scale or shape out of range gives NaN, a probability outside [0, 1] NaN, a
point outside the support log 0 = -inf (and the distribution functions 0 or 1 there); a
count k outside the support or not whole gives log 0.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special as special
from numba.extending import overload, register_jitable
from scipy import stats

from .special import _export
from .stats import _form, _number

_EXPIT, _LOGIT, _GAMMALN, _I0E, _NDTR, _LOG_NDTR = (
    _export(name, 1) for name in ("expit", "logit", "gammaln", "i0e", "ndtr", "log_ndtr"))
_GAMMAINC, _GAMMAINCC, _STDTR, _PDTR = (
    _export(name, 2) for name in ("gammainc", "gammaincc", "stdtr", "pdtr"))
_BETAINC = _export("betainc", 3)
_LOG_2PI, _LOG_2 = math.log(2.0 * math.pi), math.log(2.0)


def _loc_scale(form, scalar):
    """numba's form of `form(x, loc=0.0, scale=1.0)` (or of a quantile's q) from its
    jitable `scalar(x, loc, scale)`."""
    @overload(form)
    def _typer(x, loc=0.0, scale=1.0):
        f = _form(scalar, x, loc, scale)
        return f and (lambda x, loc=0.0, scale=1.0: f(x, loc, scale))


def _quantile(form, scalar):
    @overload(form)
    def _typer(q, loc=0.0, scale=1.0):
        f = _form(scalar, q, loc, scale)
        return f and (lambda q, loc=0.0, scale=1.0: f(q, loc, scale))


def _shaped(form, scalar):
    """numba's form of `form(x, a, loc=0.0, scale=1.0)`, a shape parameter a."""
    @overload(form)
    def _typer(x, a, loc=0.0, scale=1.0):
        f = _form(scalar, x, a, loc, scale)
        return f and (lambda x, a, loc=0.0, scale=1.0: f(x, a, loc, scale))


# ---- the Python forms: SciPy's methods, with SciPy's parameter names ----


def expon_sf(x, loc=0.0, scale=1.0):
    """scipy.stats.expon.sf, as generated code calls it."""
    return stats.expon.sf(x, loc, scale)


def expon_logsf(x, loc=0.0, scale=1.0):
    """scipy.stats.expon.logsf, as generated code calls it."""
    return stats.expon.logsf(x, loc, scale)


def expon_logcdf(x, loc=0.0, scale=1.0):
    """scipy.stats.expon.logcdf, as generated code calls it."""
    return stats.expon.logcdf(x, loc, scale)


def expon_ppf(q, loc=0.0, scale=1.0):
    """scipy.stats.expon.ppf, as generated code calls it."""
    return stats.expon.ppf(q, loc, scale)


def expon_isf(q, loc=0.0, scale=1.0):
    """scipy.stats.expon.isf, as generated code calls it."""
    return stats.expon.isf(q, loc, scale)


def cauchy_sf(x, loc=0.0, scale=1.0):
    """scipy.stats.cauchy.sf, as generated code calls it."""
    return stats.cauchy.sf(x, loc, scale)


def cauchy_logsf(x, loc=0.0, scale=1.0):
    """scipy.stats.cauchy.logsf, as generated code calls it."""
    return stats.cauchy.logsf(x, loc, scale)


def cauchy_logcdf(x, loc=0.0, scale=1.0):
    """scipy.stats.cauchy.logcdf, as generated code calls it."""
    return stats.cauchy.logcdf(x, loc, scale)


def cauchy_ppf(q, loc=0.0, scale=1.0):
    """scipy.stats.cauchy.ppf, as generated code calls it."""
    return stats.cauchy.ppf(q, loc, scale)


def cauchy_isf(q, loc=0.0, scale=1.0):
    """scipy.stats.cauchy.isf, as generated code calls it."""
    return stats.cauchy.isf(q, loc, scale)


def logistic_sf(x, loc=0.0, scale=1.0):
    """scipy.stats.logistic.sf, as generated code calls it."""
    return stats.logistic.sf(x, loc, scale)


def logistic_logsf(x, loc=0.0, scale=1.0):
    """scipy.stats.logistic.logsf, as generated code calls it."""
    return stats.logistic.logsf(x, loc, scale)


def logistic_logcdf(x, loc=0.0, scale=1.0):
    """scipy.stats.logistic.logcdf, as generated code calls it."""
    return stats.logistic.logcdf(x, loc, scale)


def logistic_ppf(q, loc=0.0, scale=1.0):
    """scipy.stats.logistic.ppf, as generated code calls it."""
    return stats.logistic.ppf(q, loc, scale)


def logistic_isf(q, loc=0.0, scale=1.0):
    """scipy.stats.logistic.isf, as generated code calls it."""
    return stats.logistic.isf(q, loc, scale)


def uniform_cdf(x, loc=0.0, scale=1.0):
    """scipy.stats.uniform.cdf, as generated code calls it."""
    return stats.uniform.cdf(x, loc, scale)


def uniform_ppf(q, loc=0.0, scale=1.0):
    """scipy.stats.uniform.ppf, as generated code calls it."""
    return stats.uniform.ppf(q, loc, scale)


def gumbel_r_logpdf(x, loc=0.0, scale=1.0):
    """scipy.stats.gumbel_r.logpdf, as generated code calls it."""
    return stats.gumbel_r.logpdf(x, loc, scale)


def gumbel_r_pdf(x, loc=0.0, scale=1.0):
    """scipy.stats.gumbel_r.pdf, as generated code calls it."""
    return stats.gumbel_r.pdf(x, loc, scale)


def gumbel_r_cdf(x, loc=0.0, scale=1.0):
    """scipy.stats.gumbel_r.cdf, as generated code calls it."""
    return stats.gumbel_r.cdf(x, loc, scale)


def gumbel_r_logcdf(x, loc=0.0, scale=1.0):
    """scipy.stats.gumbel_r.logcdf, as generated code calls it."""
    return stats.gumbel_r.logcdf(x, loc, scale)


def gumbel_r_sf(x, loc=0.0, scale=1.0):
    """scipy.stats.gumbel_r.sf, as generated code calls it."""
    return stats.gumbel_r.sf(x, loc, scale)


def gumbel_r_logsf(x, loc=0.0, scale=1.0):
    """scipy.stats.gumbel_r.logsf, as generated code calls it."""
    return stats.gumbel_r.logsf(x, loc, scale)


def gumbel_r_ppf(q, loc=0.0, scale=1.0):
    """scipy.stats.gumbel_r.ppf, as generated code calls it."""
    return stats.gumbel_r.ppf(q, loc, scale)


def gumbel_l_logpdf(x, loc=0.0, scale=1.0):
    """scipy.stats.gumbel_l.logpdf, as generated code calls it."""
    return stats.gumbel_l.logpdf(x, loc, scale)


def gumbel_l_pdf(x, loc=0.0, scale=1.0):
    """scipy.stats.gumbel_l.pdf, as generated code calls it."""
    return stats.gumbel_l.pdf(x, loc, scale)


def gumbel_l_cdf(x, loc=0.0, scale=1.0):
    """scipy.stats.gumbel_l.cdf, as generated code calls it."""
    return stats.gumbel_l.cdf(x, loc, scale)


def gumbel_l_logcdf(x, loc=0.0, scale=1.0):
    """scipy.stats.gumbel_l.logcdf, as generated code calls it."""
    return stats.gumbel_l.logcdf(x, loc, scale)


def gumbel_l_sf(x, loc=0.0, scale=1.0):
    """scipy.stats.gumbel_l.sf, as generated code calls it."""
    return stats.gumbel_l.sf(x, loc, scale)


def gumbel_l_logsf(x, loc=0.0, scale=1.0):
    """scipy.stats.gumbel_l.logsf, as generated code calls it."""
    return stats.gumbel_l.logsf(x, loc, scale)


def gumbel_l_ppf(q, loc=0.0, scale=1.0):
    """scipy.stats.gumbel_l.ppf, as generated code calls it."""
    return stats.gumbel_l.ppf(q, loc, scale)


# ---- their scalar forms: z = (x - loc) / scale ----


@register_jitable
def _z(x, loc, scale):
    return (x - loc) / scale if scale > 0.0 else np.nan


@register_jitable
def _q(q, loc, scale):
    return q if scale > 0.0 and 0.0 <= q <= 1.0 else np.nan


@register_jitable
def _log1mexp(w):
    # log(1 - e^-w) for w >= 0, in range either side of log 2
    return math.log1p(-math.exp(-w)) if w > _LOG_2 else math.log(-math.expm1(-w))


@register_jitable
def _expon_sf(x, loc, scale):
    z = _z(x, loc, scale)
    return math.exp(-z) if z >= 0.0 else (1.0 if z < 0.0 else np.nan)


@register_jitable
def _expon_logsf(x, loc, scale):
    z = _z(x, loc, scale)
    return -z if z >= 0.0 else (0.0 if z < 0.0 else np.nan)


@register_jitable
def _expon_logcdf(x, loc, scale):
    z = _z(x, loc, scale)
    return _log1mexp(z) if z > 0.0 else (-np.inf if z <= 0.0 else np.nan)


@register_jitable
def _expon_ppf(q, loc, scale):
    return loc - scale * math.log1p(-q) if _q(q, loc, scale) < 1.0 else \
        (np.inf if _q(q, loc, scale) == 1.0 else np.nan)


@register_jitable
def _expon_isf(q, loc, scale):
    return loc - scale * math.log(q) if _q(q, loc, scale) > 0.0 else \
        (np.inf if _q(q, loc, scale) == 0.0 else np.nan)


@register_jitable
def _cauchy_cdf0(z):
    return 0.5 + math.atan(z) / math.pi


@register_jitable
def _cauchy_sf(x, loc, scale):
    return _cauchy_cdf0(-_z(x, loc, scale))


@register_jitable
def _cauchy_logsf(x, loc, scale):
    return math.log(_cauchy_cdf0(-_z(x, loc, scale)))


@register_jitable
def _cauchy_logcdf(x, loc, scale):
    return math.log(_cauchy_cdf0(_z(x, loc, scale)))


@register_jitable
def _cauchy_ppf0(q):
    # tan(pi (q - 1/2)) = -1 / tan(pi q): the latter in range near q = 0; the ends infinite
    if q == 0.0 or q == 1.0:
        return (2.0 * q - 1.0) * np.inf
    return -1.0 / math.tan(math.pi * q) if q < 0.5 else math.tan(math.pi * (q - 0.5))


@register_jitable
def _cauchy_ppf(q, loc, scale):
    return loc + scale * _cauchy_ppf0(_q(q, loc, scale))


@register_jitable
def _cauchy_isf(q, loc, scale):
    return loc - scale * _cauchy_ppf0(_q(q, loc, scale))


@register_jitable
def _log_expit(z):
    # log(1 / (1 + e^-z)), in range at both ends
    return -math.log1p(math.exp(-z)) if z >= 0.0 else z - math.log1p(math.exp(z))


@register_jitable
def _logistic_sf(x, loc, scale):
    return _EXPIT(-_z(x, loc, scale), 0)


@register_jitable
def _logistic_logsf(x, loc, scale):
    return _log_expit(-_z(x, loc, scale))


@register_jitable
def _logistic_logcdf(x, loc, scale):
    return _log_expit(_z(x, loc, scale))


@register_jitable
def _logistic_ppf(q, loc, scale):
    return loc + scale * _LOGIT(_q(q, loc, scale), 0)


@register_jitable
def _logistic_isf(q, loc, scale):
    return loc - scale * _LOGIT(_q(q, loc, scale), 0)


@register_jitable
def _uniform_cdf(x, loc, scale):
    return min(max(_z(x, loc, scale), 0.0), 1.0)


@register_jitable
def _uniform_ppf(q, loc, scale):
    return loc + scale * _q(q, loc, scale)


@register_jitable
def _gumbel_r_logpdf(x, loc, scale):
    z = _z(x, loc, scale)
    return -z - math.exp(-z) - math.log(scale)


@register_jitable
def _gumbel_r_pdf(x, loc, scale):
    return math.exp(_gumbel_r_logpdf(x, loc, scale))


@register_jitable
def _gumbel_r_cdf(x, loc, scale):
    return math.exp(-math.exp(-_z(x, loc, scale)))


@register_jitable
def _gumbel_r_logcdf(x, loc, scale):
    return -math.exp(-_z(x, loc, scale))


@register_jitable
def _gumbel_r_sf(x, loc, scale):
    return -math.expm1(-math.exp(-_z(x, loc, scale)))


@register_jitable
def _gumbel_r_logsf(x, loc, scale):
    return _log1mexp(math.exp(-_z(x, loc, scale)))


@register_jitable
def _gumbel_r_ppf(q, loc, scale):
    return loc - scale * math.log(-math.log(_q(q, loc, scale)))


@register_jitable
def _gumbel_l_logpdf(x, loc, scale):
    z = _z(x, loc, scale)
    return z - math.exp(z) - math.log(scale)


@register_jitable
def _gumbel_l_pdf(x, loc, scale):
    return math.exp(_gumbel_l_logpdf(x, loc, scale))


@register_jitable
def _gumbel_l_cdf(x, loc, scale):
    return -math.expm1(-math.exp(_z(x, loc, scale)))


@register_jitable
def _gumbel_l_logcdf(x, loc, scale):
    return _log1mexp(math.exp(_z(x, loc, scale)))


@register_jitable
def _gumbel_l_sf(x, loc, scale):
    return math.exp(-math.exp(_z(x, loc, scale)))


@register_jitable
def _gumbel_l_logsf(x, loc, scale):
    return -math.exp(_z(x, loc, scale))


@register_jitable
def _gumbel_l_ppf(q, loc, scale):
    return loc + scale * math.log(-math.log1p(-_q(q, loc, scale)))


for _form_of, _scalar in [
        (expon_sf, _expon_sf), (expon_logsf, _expon_logsf), (expon_logcdf, _expon_logcdf),
        (cauchy_sf, _cauchy_sf), (cauchy_logsf, _cauchy_logsf),
        (cauchy_logcdf, _cauchy_logcdf), (logistic_sf, _logistic_sf),
        (logistic_logsf, _logistic_logsf), (logistic_logcdf, _logistic_logcdf),
        (uniform_cdf, _uniform_cdf),
        (gumbel_r_logpdf, _gumbel_r_logpdf), (gumbel_r_pdf, _gumbel_r_pdf),
        (gumbel_r_cdf, _gumbel_r_cdf), (gumbel_r_logcdf, _gumbel_r_logcdf),
        (gumbel_r_sf, _gumbel_r_sf), (gumbel_r_logsf, _gumbel_r_logsf),
        (gumbel_l_logpdf, _gumbel_l_logpdf), (gumbel_l_pdf, _gumbel_l_pdf),
        (gumbel_l_cdf, _gumbel_l_cdf), (gumbel_l_logcdf, _gumbel_l_logcdf),
        (gumbel_l_sf, _gumbel_l_sf), (gumbel_l_logsf, _gumbel_l_logsf)]:
    _loc_scale(_form_of, _scalar)
for _form_of, _scalar in [
        (expon_ppf, _expon_ppf), (expon_isf, _expon_isf), (cauchy_ppf, _cauchy_ppf),
        (cauchy_isf, _cauchy_isf), (logistic_ppf, _logistic_ppf),
        (logistic_isf, _logistic_isf), (uniform_ppf, _uniform_ppf),
        (gumbel_r_ppf, _gumbel_r_ppf), (gumbel_l_ppf, _gumbel_l_ppf)]:
    _quantile(_form_of, _scalar)


# ---- the Pareto distribution, of the shape b: z = (x - loc) / scale >= 1 ----


def pareto_logpdf(x, b, loc=0.0, scale=1.0):
    """scipy.stats.pareto.logpdf, as generated code calls it."""
    return stats.pareto.logpdf(x, b, loc, scale)


def pareto_pdf(x, b, loc=0.0, scale=1.0):
    """scipy.stats.pareto.pdf, as generated code calls it."""
    return stats.pareto.pdf(x, b, loc, scale)


def pareto_cdf(x, b, loc=0.0, scale=1.0):
    """scipy.stats.pareto.cdf, as generated code calls it."""
    return stats.pareto.cdf(x, b, loc, scale)


def pareto_logcdf(x, b, loc=0.0, scale=1.0):
    """scipy.stats.pareto.logcdf, as generated code calls it."""
    return stats.pareto.logcdf(x, b, loc, scale)


def pareto_sf(x, b, loc=0.0, scale=1.0):
    """scipy.stats.pareto.sf, as generated code calls it."""
    return stats.pareto.sf(x, b, loc, scale)


def pareto_logsf(x, b, loc=0.0, scale=1.0):
    """scipy.stats.pareto.logsf, as generated code calls it."""
    return stats.pareto.logsf(x, b, loc, scale)


def pareto_ppf(q, b, loc=0.0, scale=1.0):
    """scipy.stats.pareto.ppf, as generated code calls it."""
    return stats.pareto.ppf(q, b, loc, scale)


@register_jitable
def _pareto_z(x, b, loc, scale):
    return (x - loc) / scale if scale > 0.0 and b > 0.0 else np.nan


@register_jitable
def _pareto_logpdf(x, b, loc, scale):
    z = _pareto_z(x, b, loc, scale)
    return math.log(b) - (b + 1.0) * math.log(z) - math.log(scale) if z >= 1.0 else \
        (-np.inf if z < 1.0 else np.nan)


@register_jitable
def _pareto_pdf(x, b, loc, scale):
    return math.exp(_pareto_logpdf(x, b, loc, scale))


@register_jitable
def _pareto_logsf(x, b, loc, scale):
    z = _pareto_z(x, b, loc, scale)
    return -b * math.log(z) if z >= 1.0 else (0.0 if z < 1.0 else np.nan)


@register_jitable
def _pareto_sf(x, b, loc, scale):
    return math.exp(_pareto_logsf(x, b, loc, scale))


@register_jitable
def _pareto_cdf(x, b, loc, scale):
    return -math.expm1(_pareto_logsf(x, b, loc, scale))


@register_jitable
def _pareto_logcdf(x, b, loc, scale):
    return math.log(_pareto_cdf(x, b, loc, scale))


@register_jitable
def _pareto_ppf(q, b, loc, scale):
    p = q if 0.0 <= q <= 1.0 and b > 0.0 and scale > 0.0 else np.nan
    return loc + scale * math.exp(-math.log1p(-p) / b)


for _form_of, _scalar in [
        (pareto_logpdf, _pareto_logpdf), (pareto_pdf, _pareto_pdf), (pareto_cdf, _pareto_cdf),
        (pareto_logcdf, _pareto_logcdf), (pareto_sf, _pareto_sf),
        (pareto_logsf, _pareto_logsf)]:
    _shaped(_form_of, _scalar)


@overload(pareto_ppf)
def _pareto_ppf_typer(q, b, loc=0.0, scale=1.0):
    f = _form(_pareto_ppf, q, b, loc, scale)
    return f and (lambda q, b, loc=0.0, scale=1.0: f(q, b, loc, scale))


# ---- the tails of chi2, gamma, beta and t ----


def chi2_sf(x, df, loc=0.0, scale=1.0):
    """scipy.stats.chi2.sf, as generated code calls it."""
    return stats.chi2.sf(x, df, loc, scale)


def chi2_logsf(x, df, loc=0.0, scale=1.0):
    """scipy.stats.chi2.logsf, as generated code calls it."""
    return stats.chi2.logsf(x, df, loc, scale)


def chi2_logcdf(x, df, loc=0.0, scale=1.0):
    """scipy.stats.chi2.logcdf, as generated code calls it."""
    return stats.chi2.logcdf(x, df, loc, scale)


def gamma_sf(x, a, loc=0.0, scale=1.0):
    """scipy.stats.gamma.sf, as generated code calls it."""
    return stats.gamma.sf(x, a, loc, scale)


def gamma_logsf(x, a, loc=0.0, scale=1.0):
    """scipy.stats.gamma.logsf, as generated code calls it."""
    return stats.gamma.logsf(x, a, loc, scale)


def gamma_logcdf(x, a, loc=0.0, scale=1.0):
    """scipy.stats.gamma.logcdf, as generated code calls it."""
    return stats.gamma.logcdf(x, a, loc, scale)


def t_logcdf(x, df, loc=0.0, scale=1.0):
    """scipy.stats.t.logcdf, as generated code calls it."""
    return stats.t.logcdf(x, df, loc, scale)


def beta_sf(x, a, b, loc=0.0, scale=1.0):
    """scipy.stats.beta.sf, as generated code calls it."""
    return stats.beta.sf(x, a, b, loc, scale)


def beta_logsf(x, a, b, loc=0.0, scale=1.0):
    """scipy.stats.beta.logsf, as generated code calls it."""
    return stats.beta.logsf(x, a, b, loc, scale)


def beta_logcdf(x, a, b, loc=0.0, scale=1.0):
    """scipy.stats.beta.logcdf, as generated code calls it."""
    return stats.beta.logcdf(x, a, b, loc, scale)


@register_jitable
def _gamma_sf(x, a, loc, scale):
    if not (scale > 0.0 and a > 0.0):
        return np.nan
    return _GAMMAINCC(a, max((x - loc) / scale, 0.0), 0)


@register_jitable
def _gamma_logsf(x, a, loc, scale):
    return math.log(_gamma_sf(x, a, loc, scale))


@register_jitable
def _gamma_logcdf(x, a, loc, scale):
    if not (scale > 0.0 and a > 0.0):
        return np.nan
    z = max((x - loc) / scale, 0.0)
    p = _GAMMAINC(a, z, 0)
    return math.log(p) if p < 0.5 else math.log1p(-_GAMMAINCC(a, z, 0))


@register_jitable
def _chi2_sf(x, df, loc, scale):
    return _gamma_sf(x, 0.5 * df, loc, 2.0 * scale)


@register_jitable
def _chi2_logsf(x, df, loc, scale):
    return _gamma_logsf(x, 0.5 * df, loc, 2.0 * scale)


@register_jitable
def _chi2_logcdf(x, df, loc, scale):
    return _gamma_logcdf(x, 0.5 * df, loc, 2.0 * scale)


@register_jitable
def _t_logcdf(x, df, loc, scale):
    if not (scale > 0.0 and df > 0.0):
        return np.nan
    t = (x - loc) / scale
    return math.log(_STDTR(df, t, 0)) if t < 0.0 else math.log1p(-_STDTR(df, -t, 0))


for _form_of, _scalar in [
        (gamma_sf, _gamma_sf), (gamma_logsf, _gamma_logsf), (gamma_logcdf, _gamma_logcdf)]:
    _shaped(_form_of, _scalar)


# (chi2's and t's shape is named df)
@overload(t_logcdf)
def _t_logcdf_typer(x, df, loc=0.0, scale=1.0):
    f = _form(_t_logcdf, x, df, loc, scale)
    return f and (lambda x, df, loc=0.0, scale=1.0: f(x, df, loc, scale))


@overload(chi2_sf)
def _chi2_sf_typer(x, df, loc=0.0, scale=1.0):
    f = _form(_chi2_sf, x, df, loc, scale)
    return f and (lambda x, df, loc=0.0, scale=1.0: f(x, df, loc, scale))


@overload(chi2_logsf)
def _chi2_logsf_typer(x, df, loc=0.0, scale=1.0):
    f = _form(_chi2_logsf, x, df, loc, scale)
    return f and (lambda x, df, loc=0.0, scale=1.0: f(x, df, loc, scale))


@overload(chi2_logcdf)
def _chi2_logcdf_typer(x, df, loc=0.0, scale=1.0):
    f = _form(_chi2_logcdf, x, df, loc, scale)
    return f and (lambda x, df, loc=0.0, scale=1.0: f(x, df, loc, scale))


@register_jitable
def _beta_z(x, a, b, loc, scale):
    if not (scale > 0.0 and a > 0.0 and b > 0.0):
        return np.nan
    return min(max((x - loc) / scale, 0.0), 1.0)


@register_jitable
def _beta_sf(x, a, b, loc, scale):
    # I_(1-z)(b, a) = 1 - I_z(a, b)
    return _BETAINC(b, a, 1.0 - _beta_z(x, a, b, loc, scale), 0)


@register_jitable
def _beta_logsf(x, a, b, loc, scale):
    return math.log(_beta_sf(x, a, b, loc, scale))


@register_jitable
def _beta_logcdf(x, a, b, loc, scale):
    return math.log(_BETAINC(a, b, _beta_z(x, a, b, loc, scale), 0))


def _beta_tail(form, scalar):
    @overload(form)
    def _typer(x, a, b, loc=0.0, scale=1.0):
        f = _form(scalar, x, a, b, loc, scale)
        return f and (lambda x, a, b, loc=0.0, scale=1.0: f(x, a, b, loc, scale))


for _form_of, _scalar in [(beta_sf, _beta_sf), (beta_logsf, _beta_logsf),
                          (beta_logcdf, _beta_logcdf)]:
    _beta_tail(_form_of, _scalar)


# ---- the von Mises density: kappa cos z - log(2 pi I0(kappa)) - log scale ----


def vonmises_logpdf(x, kappa, loc=0.0, scale=1.0):
    """scipy.stats.vonmises.logpdf, as generated code calls it."""
    return stats.vonmises.logpdf(x, kappa, loc, scale)


def vonmises_pdf(x, kappa, loc=0.0, scale=1.0):
    """scipy.stats.vonmises.pdf, as generated code calls it."""
    return stats.vonmises.pdf(x, kappa, loc, scale)


@register_jitable
def _vonmises_logpdf(x, kappa, loc, scale):
    if not (scale > 0.0 and kappa > 0.0):
        return np.nan
    z = (x - loc) / scale
    # log I0(kappa) = log i0e(kappa) + kappa
    return kappa * (math.cos(z) - 1.0) - _LOG_2PI - math.log(_I0E(kappa, 0)) - math.log(scale)


@register_jitable
def _vonmises_pdf(x, kappa, loc, scale):
    return math.exp(_vonmises_logpdf(x, kappa, loc, scale))


@overload(vonmises_logpdf)
def _vonmises_logpdf_typer(x, kappa, loc=0.0, scale=1.0):
    f = _form(_vonmises_logpdf, x, kappa, loc, scale)
    return f and (lambda x, kappa, loc=0.0, scale=1.0: f(x, kappa, loc, scale))


@overload(vonmises_pdf)
def _vonmises_pdf_typer(x, kappa, loc=0.0, scale=1.0):
    f = _form(_vonmises_pdf, x, kappa, loc, scale)
    return f and (lambda x, kappa, loc=0.0, scale=1.0: f(x, kappa, loc, scale))


# ---- counts: the geometric and negative binomial pmfs, poisson's cdf ----


def geom_logpmf(k, p, loc=0):
    """scipy.stats.geom.logpmf, as generated code calls it."""
    return stats.geom.logpmf(k, p, loc)


def geom_pmf(k, p, loc=0):
    """scipy.stats.geom.pmf, as generated code calls it."""
    return stats.geom.pmf(k, p, loc)


def nbinom_logpmf(k, n, p, loc=0):
    """scipy.stats.nbinom.logpmf, as generated code calls it."""
    return stats.nbinom.logpmf(k, n, p, loc)


def nbinom_pmf(k, n, p, loc=0):
    """scipy.stats.nbinom.pmf, as generated code calls it."""
    return stats.nbinom.pmf(k, n, p, loc)


def poisson_cdf(k, mu, loc=0):
    """scipy.stats.poisson.cdf, as generated code calls it."""
    return stats.poisson.cdf(k, mu, loc)


@register_jitable
def _geom_logpmf(k, p, loc):
    if not 0.0 < p <= 1.0:
        return np.nan
    m = k - loc
    if m < 1.0 or m != math.floor(m):
        return -np.inf
    return (m - 1.0) * math.log1p(-p) + math.log(p) if m > 1.0 else math.log(p)


@register_jitable
def _geom_pmf(k, p, loc):
    return math.exp(_geom_logpmf(k, p, loc))


@register_jitable
def _nbinom_logpmf(k, n, p, loc):
    if not (n > 0.0 and 0.0 < p <= 1.0):
        return np.nan
    m = k - loc
    if m < 0.0 or m != math.floor(m):
        return -np.inf
    tail = m * math.log1p(-p) if m > 0.0 else 0.0
    return _GAMMALN(m + n, 0) - _GAMMALN(n, 0) - _GAMMALN(m + 1.0, 0) + n * math.log(p) + tail


@register_jitable
def _nbinom_pmf(k, n, p, loc):
    return math.exp(_nbinom_logpmf(k, n, p, loc))


@register_jitable
def _poisson_cdf(k, mu, loc):
    if not mu >= 0.0:
        return np.nan
    m = math.floor(k - loc)
    return _PDTR(m, mu, 0) if m >= 0.0 else 0.0


@overload(geom_logpmf)
def _geom_logpmf_typer(k, p, loc=0):
    f = _form(_geom_logpmf, k, p, loc)
    return f and (lambda k, p, loc=0: f(k, p, loc))


@overload(geom_pmf)
def _geom_pmf_typer(k, p, loc=0):
    f = _form(_geom_pmf, k, p, loc)
    return f and (lambda k, p, loc=0: f(k, p, loc))


@overload(nbinom_logpmf)
def _nbinom_logpmf_typer(k, n, p, loc=0):
    f = _form(_nbinom_logpmf, k, n, p, loc)
    return f and (lambda k, n, p, loc=0: f(k, n, p, loc))


@overload(nbinom_pmf)
def _nbinom_pmf_typer(k, n, p, loc=0):
    f = _form(_nbinom_pmf, k, n, p, loc)
    return f and (lambda k, n, p, loc=0: f(k, n, p, loc))


@overload(poisson_cdf)
def _poisson_cdf_typer(k, mu, loc=0):
    f = _form(_poisson_cdf, k, mu, loc)
    return f and (lambda k, mu, loc=0: f(k, mu, loc))


# ---- the truncated normal, on [a, b] in z: l = -z^2 / 2 - log sqrt(2 pi) - log Z -
# log scale, Z = Phi(b) - Phi(a), the mass of [a, b] (`truncnorm_log_mass`, its log) ----


def truncnorm_logpdf(x, a, b, loc=0.0, scale=1.0):
    """scipy.stats.truncnorm.logpdf, as generated code calls it."""
    return stats.truncnorm.logpdf(x, a, b, loc, scale)


def truncnorm_pdf(x, a, b, loc=0.0, scale=1.0):
    """scipy.stats.truncnorm.pdf, as generated code calls it."""
    return stats.truncnorm.pdf(x, a, b, loc, scale)


def truncnorm_cdf(x, a, b, loc=0.0, scale=1.0):
    """scipy.stats.truncnorm.cdf, as generated code calls it."""
    return stats.truncnorm.cdf(x, a, b, loc, scale)


def truncnorm_sf(x, a, b, loc=0.0, scale=1.0):
    """scipy.stats.truncnorm.sf, as generated code calls it."""
    return stats.truncnorm.sf(x, a, b, loc, scale)


def truncnorm_logcdf(x, a, b, loc=0.0, scale=1.0):
    """scipy.stats.truncnorm.logcdf, as generated code calls it."""
    return stats.truncnorm.logcdf(x, a, b, loc, scale)


def truncnorm_logsf(x, a, b, loc=0.0, scale=1.0):
    """scipy.stats.truncnorm.logsf, as generated code calls it."""
    return stats.truncnorm.logsf(x, a, b, loc, scale)


@register_jitable
def _mass_between(a, b):
    """Phi(b) - Phi(a) for a <= b, from the tail the interval is in (in range there)."""
    if a >= 0.0:
        return _NDTR(-a, 0) - _NDTR(-b, 0)
    return _NDTR(b, 0) - _NDTR(a, 0)


@register_jitable
def _truncnorm_log_mass(a, b):
    if not a < b:
        return np.nan
    if b <= 0.0:   # log Phi(b) + log(1 - Phi(a) / Phi(b)), in range far in the lower tail
        lb = _LOG_NDTR(b, 0)
        return lb + math.log1p(-math.exp(_LOG_NDTR(a, 0) - lb))
    if a >= 0.0:
        la = _LOG_NDTR(-a, 0)
        return la + math.log1p(-math.exp(_LOG_NDTR(-b, 0) - la))
    return math.log(_mass_between(a, b))


def truncnorm_log_mass(a, b):
    """log(Phi(b) - Phi(a)), the log of the mass of [a, b] under the standard normal, as
    the rules of scipy.stats.truncnorm's methods read it (NaN unless a < b)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    with np.errstate(all="ignore"):
        lower = special.log_ndtr(b) + np.log1p(-np.exp(special.log_ndtr(a) -
                                                       special.log_ndtr(b)))
        upper = special.log_ndtr(-a) + np.log1p(-np.exp(special.log_ndtr(-b) -
                                                        special.log_ndtr(-a)))
        middle = np.log(special.ndtr(b) - special.ndtr(a))
    out = np.where(b <= 0.0, lower, np.where(a >= 0.0, upper, middle))
    return np.where(a < b, out, np.nan)[()]


@overload(truncnorm_log_mass)
def _truncnorm_log_mass_typer(a, b):
    if _number(a) and _number(b):
        return lambda a, b: _truncnorm_log_mass(float(a), float(b))

    def arrays(a, b):
        xs = np.broadcast_arrays(np.asarray(a).astype(np.float64),
                                 np.asarray(b).astype(np.float64))
        out = np.empty(xs[0].shape)
        for i in np.ndindex(out.shape):
            out[i] = _truncnorm_log_mass(xs[0][i], xs[1][i])
        return out
    return arrays


@register_jitable
def _truncnorm_logpdf(x, a, b, loc, scale):
    if not scale > 0.0:
        return np.nan
    z = (x - loc) / scale
    m = _truncnorm_log_mass(a, b)
    if not a <= z <= b:
        return -np.inf if m == m else np.nan
    return -0.5 * z * z - 0.5 * _LOG_2PI - m - math.log(scale)


@register_jitable
def _truncnorm_pdf(x, a, b, loc, scale):
    return math.exp(_truncnorm_logpdf(x, a, b, loc, scale))


@register_jitable
def _truncnorm_cdf(x, a, b, loc, scale):
    if not (scale > 0.0 and a < b):
        return np.nan
    z = min(max((x - loc) / scale, a), b)
    return _mass_between(a, z) / math.exp(_truncnorm_log_mass(a, b))


@register_jitable
def _truncnorm_sf(x, a, b, loc, scale):
    if not (scale > 0.0 and a < b):
        return np.nan
    z = min(max((x - loc) / scale, a), b)
    return _mass_between(z, b) / math.exp(_truncnorm_log_mass(a, b))


@register_jitable
def _truncnorm_logcdf(x, a, b, loc, scale):
    return math.log(_truncnorm_cdf(x, a, b, loc, scale))


@register_jitable
def _truncnorm_logsf(x, a, b, loc, scale):
    return math.log(_truncnorm_sf(x, a, b, loc, scale))


def _truncnorm(form, scalar):
    @overload(form)
    def _typer(x, a, b, loc=0.0, scale=1.0):
        f = _form(scalar, x, a, b, loc, scale)
        return f and (lambda x, a, b, loc=0.0, scale=1.0: f(x, a, b, loc, scale))


for _form_of, _scalar in [
        (truncnorm_logpdf, _truncnorm_logpdf), (truncnorm_pdf, _truncnorm_pdf),
        (truncnorm_cdf, _truncnorm_cdf), (truncnorm_sf, _truncnorm_sf),
        (truncnorm_logcdf, _truncnorm_logcdf), (truncnorm_logsf, _truncnorm_logsf)]:
    _truncnorm(_form_of, _scalar)
