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

from .special import _export
from .stats import _number, scipy_form

_EXPIT, _LOGIT, _GAMMALN, _I0E, _NDTR, _LOG_NDTR = (
    _export(name, 1) for name in ("expit", "logit", "gammaln", "i0e", "ndtr", "log_ndtr"))
_GAMMAINC, _GAMMAINCC, _STDTR, _PDTR = (
    _export(name, 2) for name in ("gammainc", "gammaincc", "stdtr", "pdtr"))
_BETAINC = _export("betainc", 3)
_LOG_2PI, _LOG_2 = math.log(2.0 * math.pi), math.log(2.0)
_AB = "x, a, b, loc=0.0, scale=1.0"   # (truncnorm's parameters)


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


# ---- the Python forms, with their numba forms ----

expon_sf = scipy_form("expon", "sf", _expon_sf)
expon_logsf = scipy_form("expon", "logsf", _expon_logsf)
expon_logcdf = scipy_form("expon", "logcdf", _expon_logcdf)
expon_ppf = scipy_form("expon", "ppf", _expon_ppf, "q, loc=0.0, scale=1.0")
expon_isf = scipy_form("expon", "isf", _expon_isf, "q, loc=0.0, scale=1.0")
cauchy_sf = scipy_form("cauchy", "sf", _cauchy_sf)
cauchy_logsf = scipy_form("cauchy", "logsf", _cauchy_logsf)
cauchy_logcdf = scipy_form("cauchy", "logcdf", _cauchy_logcdf)
cauchy_ppf = scipy_form("cauchy", "ppf", _cauchy_ppf, "q, loc=0.0, scale=1.0")
cauchy_isf = scipy_form("cauchy", "isf", _cauchy_isf, "q, loc=0.0, scale=1.0")
logistic_sf = scipy_form("logistic", "sf", _logistic_sf)
logistic_logsf = scipy_form("logistic", "logsf", _logistic_logsf)
logistic_logcdf = scipy_form("logistic", "logcdf", _logistic_logcdf)
logistic_ppf = scipy_form("logistic", "ppf", _logistic_ppf, "q, loc=0.0, scale=1.0")
logistic_isf = scipy_form("logistic", "isf", _logistic_isf, "q, loc=0.0, scale=1.0")
uniform_cdf = scipy_form("uniform", "cdf", _uniform_cdf)
uniform_ppf = scipy_form("uniform", "ppf", _uniform_ppf, "q, loc=0.0, scale=1.0")
gumbel_r_logpdf = scipy_form("gumbel_r", "logpdf", _gumbel_r_logpdf)
gumbel_r_pdf = scipy_form("gumbel_r", "pdf", _gumbel_r_pdf)
gumbel_r_cdf = scipy_form("gumbel_r", "cdf", _gumbel_r_cdf)
gumbel_r_logcdf = scipy_form("gumbel_r", "logcdf", _gumbel_r_logcdf)
gumbel_r_sf = scipy_form("gumbel_r", "sf", _gumbel_r_sf)
gumbel_r_logsf = scipy_form("gumbel_r", "logsf", _gumbel_r_logsf)
gumbel_r_ppf = scipy_form("gumbel_r", "ppf", _gumbel_r_ppf, "q, loc=0.0, scale=1.0")
gumbel_l_logpdf = scipy_form("gumbel_l", "logpdf", _gumbel_l_logpdf)
gumbel_l_pdf = scipy_form("gumbel_l", "pdf", _gumbel_l_pdf)
gumbel_l_cdf = scipy_form("gumbel_l", "cdf", _gumbel_l_cdf)
gumbel_l_logcdf = scipy_form("gumbel_l", "logcdf", _gumbel_l_logcdf)
gumbel_l_sf = scipy_form("gumbel_l", "sf", _gumbel_l_sf)
gumbel_l_logsf = scipy_form("gumbel_l", "logsf", _gumbel_l_logsf)
gumbel_l_ppf = scipy_form("gumbel_l", "ppf", _gumbel_l_ppf, "q, loc=0.0, scale=1.0")


# ---- the Pareto distribution, of the shape b: z = (x - loc) / scale >= 1 ----


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


pareto_logpdf = scipy_form("pareto", "logpdf", _pareto_logpdf, "x, b, loc=0.0, scale=1.0")
pareto_pdf = scipy_form("pareto", "pdf", _pareto_pdf, "x, b, loc=0.0, scale=1.0")
pareto_cdf = scipy_form("pareto", "cdf", _pareto_cdf, "x, b, loc=0.0, scale=1.0")
pareto_logcdf = scipy_form("pareto", "logcdf", _pareto_logcdf, "x, b, loc=0.0, scale=1.0")
pareto_sf = scipy_form("pareto", "sf", _pareto_sf, "x, b, loc=0.0, scale=1.0")
pareto_logsf = scipy_form("pareto", "logsf", _pareto_logsf, "x, b, loc=0.0, scale=1.0")
pareto_ppf = scipy_form("pareto", "ppf", _pareto_ppf, "q, b, loc=0.0, scale=1.0")


# ---- the tails of chi2, gamma, beta and t ----


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


chi2_sf = scipy_form("chi2", "sf", _chi2_sf, "x, df, loc=0.0, scale=1.0")
chi2_logsf = scipy_form("chi2", "logsf", _chi2_logsf, "x, df, loc=0.0, scale=1.0")
chi2_logcdf = scipy_form("chi2", "logcdf", _chi2_logcdf, "x, df, loc=0.0, scale=1.0")
gamma_sf = scipy_form("gamma", "sf", _gamma_sf, "x, a, loc=0.0, scale=1.0")
gamma_logsf = scipy_form("gamma", "logsf", _gamma_logsf, "x, a, loc=0.0, scale=1.0")
gamma_logcdf = scipy_form("gamma", "logcdf", _gamma_logcdf, "x, a, loc=0.0, scale=1.0")
t_logcdf = scipy_form("t", "logcdf", _t_logcdf, "x, df, loc=0.0, scale=1.0")
beta_sf = scipy_form("beta", "sf", _beta_sf, "x, a, b, loc=0.0, scale=1.0")
beta_logsf = scipy_form("beta", "logsf", _beta_logsf, "x, a, b, loc=0.0, scale=1.0")
beta_logcdf = scipy_form("beta", "logcdf", _beta_logcdf, "x, a, b, loc=0.0, scale=1.0")


# ---- the von Mises density: kappa cos z - log(2 pi I0(kappa)) - log scale ----


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


vonmises_logpdf = scipy_form("vonmises", "logpdf", _vonmises_logpdf, "x, kappa, loc=0.0, scale=1.0")
vonmises_pdf = scipy_form("vonmises", "pdf", _vonmises_pdf, "x, kappa, loc=0.0, scale=1.0")


# ---- counts: the geometric and negative binomial pmfs, poisson's cdf ----


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


geom_logpmf = scipy_form("geom", "logpmf", _geom_logpmf, "k, p, loc=0")
geom_pmf = scipy_form("geom", "pmf", _geom_pmf, "k, p, loc=0")
nbinom_logpmf = scipy_form("nbinom", "logpmf", _nbinom_logpmf, "k, n, p, loc=0")
nbinom_pmf = scipy_form("nbinom", "pmf", _nbinom_pmf, "k, n, p, loc=0")
poisson_cdf = scipy_form("poisson", "cdf", _poisson_cdf, "k, mu, loc=0")


# ---- the truncated normal, on [a, b] in z: l = -z^2 / 2 - log sqrt(2 pi) - log Z -
# log scale, Z = Phi(b) - Phi(a), the mass of [a, b] (`truncnorm_log_mass`, its log) ----


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


truncnorm_logpdf = scipy_form("truncnorm", "logpdf", _truncnorm_logpdf, _AB)
truncnorm_pdf = scipy_form("truncnorm", "pdf", _truncnorm_pdf, _AB)
truncnorm_cdf = scipy_form("truncnorm", "cdf", _truncnorm_cdf, _AB)
truncnorm_sf = scipy_form("truncnorm", "sf", _truncnorm_sf, _AB)
truncnorm_logcdf = scipy_form("truncnorm", "logcdf", _truncnorm_logcdf, _AB)
truncnorm_logsf = scipy_form("truncnorm", "logsf", _truncnorm_logsf, _AB)


