"""scipy.stats, the gaps to what JAX and autograd differentiate (forms in
`runtime/stats_gaps.py`, whose docstring lists them): the tails and quantiles of expon,
cauchy, logistic and uniform, the Gumbel and Pareto distributions, the tails of chi2,
gamma, beta and t, the von Mises density, the geometric and negative binomial pmfs and
poisson's cdf, and the truncated normal (logpdf, pdf, cdf, sf, logcdf, logsf, in x, its
bounds a and b, loc and scale).

Derivatives, with z = (x - loc) / scale: a location-scale family's F(z) has dF/dx =
F'(z) / scale = -dF/dloc and dF/dscale = -z F'(z) / scale, where the slope in x is the
density for cdf, its negative for sf, the density over the value for logcdf (exp(logpdf -
y), in range in the tails) and its negative for logsf. A quantile y = loc + scale G(q) has
dy/dq = 1 / pdf(y) (isf's its negative), dy/dloc = 1 and dy/dscale = (y - loc) / scale.
Shape parameters whose derivatives of a distribution function have no closed form (chi2's
df, gamma's a, beta's a and b, t's df) are refused, as in `rules/stats.py`; pareto's b
and vonmises' kappa have closed forms (below), and so do nbinom's n and p: l = gammaln(k +
n) - gammaln(n) - gammaln(k + 1) + n log p + k log(1 - p), dl/dn = psi(k + n) - psi(n) +
log p, dl/dp = n / p - k / (1 - p). Counts k (and loc of a discrete distribution) are
data, refused. poisson.cdf(k, mu) = pdtr(floor(k), mu) has d/dmu = -pmf(floor(k), mu).
"""

import numpy as np
from scipy import special, stats

from ..runtime import unbroadcast
from ..runtime.stats import beta_logpdf, gamma_logpdf, norm_logpdf, t_logpdf
from ..runtime.stats_extra import (
    beta_pdf,
    cauchy_logpdf,
    cauchy_pdf,
    chi2_logpdf,
    chi2_pdf,
    gamma_pdf,
    logistic_logpdf,
    logistic_pdf,
    poisson_pmf,
    uniform_pdf,
)
from ..runtime.stats_gaps import (
    beta_logcdf,
    beta_logsf,
    beta_sf,
    cauchy_isf,
    cauchy_logcdf,
    cauchy_logsf,
    cauchy_ppf,
    cauchy_sf,
    chi2_logcdf,
    chi2_logsf,
    chi2_sf,
    expon_isf,
    expon_logcdf,
    expon_logsf,
    expon_ppf,
    expon_sf,
    gamma_logcdf,
    gamma_logsf,
    gamma_sf,
    geom_logpmf,
    geom_pmf,
    gumbel_l_cdf,
    gumbel_l_logcdf,
    gumbel_l_logpdf,
    gumbel_l_logsf,
    gumbel_l_pdf,
    gumbel_l_ppf,
    gumbel_l_sf,
    gumbel_r_cdf,
    gumbel_r_logcdf,
    gumbel_r_logpdf,
    gumbel_r_logsf,
    gumbel_r_pdf,
    gumbel_r_ppf,
    gumbel_r_sf,
    logistic_isf,
    logistic_logcdf,
    logistic_logsf,
    logistic_ppf,
    logistic_sf,
    nbinom_logpmf,
    nbinom_pmf,
    pareto_cdf,
    pareto_logcdf,
    pareto_logpdf,
    pareto_logsf,
    pareto_pdf,
    pareto_ppf,
    pareto_sf,
    poisson_cdf,
    t_logcdf,
    truncnorm_cdf,
    truncnorm_log_mass,
    truncnorm_logcdf,
    truncnorm_logpdf,
    truncnorm_logsf,
    truncnorm_pdf,
    truncnorm_sf,
    uniform_cdf,
    uniform_ppf,
    vonmises_logpdf,
    vonmises_pdf,
)
from ..runtime.stats_more import expon_logpdf, expon_pdf
from . import SHAPE_PARAMETER, describe, rule, tangent

NEEDS = ("scipy.special", "scipy.stats")   # SciPy modules this imports (rules/__init__)

_COUNT = "a count (data), with no gradient"


# ---- the tails and quantiles of expon, cauchy and logistic ----


@rule(stats.expon.sf, expon_sf, called_as=expon_sf)
def expon_sf_rule(dy, y, x, loc, scale):
    return (unbroadcast(-dy * expon_pdf(x, loc, scale), x),
            unbroadcast(dy * expon_pdf(x, loc, scale), loc),
            unbroadcast(dy * expon_pdf(x, loc, scale) * (x - loc) / scale,
                        scale))


@tangent(stats.expon.sf, expon_sf)
def expon_sf_tangent(dx, y, x, loc, scale):
    return (-dx * expon_pdf(x, loc, scale),
            dx * expon_pdf(x, loc, scale),
            dx * expon_pdf(x, loc, scale) * (x - loc) / scale)


@rule(stats.expon.logsf, expon_logsf, called_as=expon_logsf)
def expon_logsf_rule(dy, y, x, loc, scale):
    return (unbroadcast(-dy * np.exp(expon_logpdf(x, loc, scale) - y), x),
            unbroadcast(dy * np.exp(expon_logpdf(x, loc, scale) - y), loc),
            unbroadcast(dy * np.exp(expon_logpdf(x, loc, scale) - y) * (x - loc) / scale,
                        scale))


@tangent(stats.expon.logsf, expon_logsf)
def expon_logsf_tangent(dx, y, x, loc, scale):
    return (-dx * np.exp(expon_logpdf(x, loc, scale) - y),
            dx * np.exp(expon_logpdf(x, loc, scale) - y),
            dx * np.exp(expon_logpdf(x, loc, scale) - y) * (x - loc) / scale)


@rule(stats.expon.logcdf, expon_logcdf, called_as=expon_logcdf)
def expon_logcdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(dy * np.exp(expon_logpdf(x, loc, scale) - y), x),
            unbroadcast(-dy * np.exp(expon_logpdf(x, loc, scale) - y), loc),
            unbroadcast(-dy * np.exp(expon_logpdf(x, loc, scale) - y) * (x - loc) / scale,
                        scale))


@tangent(stats.expon.logcdf, expon_logcdf)
def expon_logcdf_tangent(dx, y, x, loc, scale):
    return (dx * np.exp(expon_logpdf(x, loc, scale) - y),
            -dx * np.exp(expon_logpdf(x, loc, scale) - y),
            -dx * np.exp(expon_logpdf(x, loc, scale) - y) * (x - loc) / scale)


@rule(stats.expon.ppf, expon_ppf, called_as=expon_ppf)
def expon_ppf_rule(dy, y, q, loc, scale):
    return (unbroadcast(dy / expon_pdf(y, loc, scale), q), unbroadcast(dy, loc),
            unbroadcast(dy * (y - loc) / scale, scale))


@tangent(stats.expon.ppf, expon_ppf)
def expon_ppf_tangent(dx, y, q, loc, scale):
    return (dx / expon_pdf(y, loc, scale) + 0.0 * (q + loc + scale),
            dx + 0.0 * (q + loc + scale), dx * (y - loc) / scale)


@rule(stats.expon.isf, expon_isf, called_as=expon_isf)
def expon_isf_rule(dy, y, q, loc, scale):
    return (unbroadcast(-dy / expon_pdf(y, loc, scale), q), unbroadcast(dy, loc),
            unbroadcast(dy * (y - loc) / scale, scale))


@tangent(stats.expon.isf, expon_isf)
def expon_isf_tangent(dx, y, q, loc, scale):
    return (-dx / expon_pdf(y, loc, scale) + 0.0 * (q + loc + scale),
            dx + 0.0 * (q + loc + scale), dx * (y - loc) / scale)


@rule(stats.cauchy.sf, cauchy_sf, called_as=cauchy_sf)
def cauchy_sf_rule(dy, y, x, loc, scale):
    return (unbroadcast(-dy * cauchy_pdf(x, loc, scale), x),
            unbroadcast(dy * cauchy_pdf(x, loc, scale), loc),
            unbroadcast(dy * cauchy_pdf(x, loc, scale) * (x - loc) / scale,
                        scale))


@tangent(stats.cauchy.sf, cauchy_sf)
def cauchy_sf_tangent(dx, y, x, loc, scale):
    return (-dx * cauchy_pdf(x, loc, scale),
            dx * cauchy_pdf(x, loc, scale),
            dx * cauchy_pdf(x, loc, scale) * (x - loc) / scale)


@rule(stats.cauchy.logsf, cauchy_logsf, called_as=cauchy_logsf)
def cauchy_logsf_rule(dy, y, x, loc, scale):
    return (unbroadcast(-dy * np.exp(cauchy_logpdf(x, loc, scale) - y), x),
            unbroadcast(dy * np.exp(cauchy_logpdf(x, loc, scale) - y), loc),
            unbroadcast(dy * np.exp(cauchy_logpdf(x, loc, scale) - y) * (x - loc) / scale,
                        scale))


@tangent(stats.cauchy.logsf, cauchy_logsf)
def cauchy_logsf_tangent(dx, y, x, loc, scale):
    return (-dx * np.exp(cauchy_logpdf(x, loc, scale) - y),
            dx * np.exp(cauchy_logpdf(x, loc, scale) - y),
            dx * np.exp(cauchy_logpdf(x, loc, scale) - y) * (x - loc) / scale)


@rule(stats.cauchy.logcdf, cauchy_logcdf, called_as=cauchy_logcdf)
def cauchy_logcdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(dy * np.exp(cauchy_logpdf(x, loc, scale) - y), x),
            unbroadcast(-dy * np.exp(cauchy_logpdf(x, loc, scale) - y), loc),
            unbroadcast(-dy * np.exp(cauchy_logpdf(x, loc, scale) - y) * (x - loc) / scale,
                        scale))


@tangent(stats.cauchy.logcdf, cauchy_logcdf)
def cauchy_logcdf_tangent(dx, y, x, loc, scale):
    return (dx * np.exp(cauchy_logpdf(x, loc, scale) - y),
            -dx * np.exp(cauchy_logpdf(x, loc, scale) - y),
            -dx * np.exp(cauchy_logpdf(x, loc, scale) - y) * (x - loc) / scale)


@rule(stats.cauchy.ppf, cauchy_ppf, called_as=cauchy_ppf)
def cauchy_ppf_rule(dy, y, q, loc, scale):
    return (unbroadcast(dy / cauchy_pdf(y, loc, scale), q), unbroadcast(dy, loc),
            unbroadcast(dy * (y - loc) / scale, scale))


@tangent(stats.cauchy.ppf, cauchy_ppf)
def cauchy_ppf_tangent(dx, y, q, loc, scale):
    return (dx / cauchy_pdf(y, loc, scale) + 0.0 * (q + loc + scale),
            dx + 0.0 * (q + loc + scale), dx * (y - loc) / scale)


@rule(stats.cauchy.isf, cauchy_isf, called_as=cauchy_isf)
def cauchy_isf_rule(dy, y, q, loc, scale):
    return (unbroadcast(-dy / cauchy_pdf(y, loc, scale), q), unbroadcast(dy, loc),
            unbroadcast(dy * (y - loc) / scale, scale))


@tangent(stats.cauchy.isf, cauchy_isf)
def cauchy_isf_tangent(dx, y, q, loc, scale):
    return (-dx / cauchy_pdf(y, loc, scale) + 0.0 * (q + loc + scale),
            dx + 0.0 * (q + loc + scale), dx * (y - loc) / scale)


@rule(stats.logistic.sf, logistic_sf, called_as=logistic_sf)
def logistic_sf_rule(dy, y, x, loc, scale):
    return (unbroadcast(-dy * logistic_pdf(x, loc, scale), x),
            unbroadcast(dy * logistic_pdf(x, loc, scale), loc),
            unbroadcast(dy * logistic_pdf(x, loc, scale) * (x - loc) / scale,
                        scale))


@tangent(stats.logistic.sf, logistic_sf)
def logistic_sf_tangent(dx, y, x, loc, scale):
    return (-dx * logistic_pdf(x, loc, scale),
            dx * logistic_pdf(x, loc, scale),
            dx * logistic_pdf(x, loc, scale) * (x - loc) / scale)


@rule(stats.logistic.logsf, logistic_logsf, called_as=logistic_logsf)
def logistic_logsf_rule(dy, y, x, loc, scale):
    return (unbroadcast(-dy * np.exp(logistic_logpdf(x, loc, scale) - y), x),
            unbroadcast(dy * np.exp(logistic_logpdf(x, loc, scale) - y), loc),
            unbroadcast(dy * np.exp(logistic_logpdf(x, loc, scale) - y) * (x - loc) / scale,
                        scale))


@tangent(stats.logistic.logsf, logistic_logsf)
def logistic_logsf_tangent(dx, y, x, loc, scale):
    return (-dx * np.exp(logistic_logpdf(x, loc, scale) - y),
            dx * np.exp(logistic_logpdf(x, loc, scale) - y),
            dx * np.exp(logistic_logpdf(x, loc, scale) - y) * (x - loc) / scale)


@rule(stats.logistic.logcdf, logistic_logcdf, called_as=logistic_logcdf)
def logistic_logcdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(dy * np.exp(logistic_logpdf(x, loc, scale) - y), x),
            unbroadcast(-dy * np.exp(logistic_logpdf(x, loc, scale) - y), loc),
            unbroadcast(-dy * np.exp(logistic_logpdf(x, loc, scale) - y) * (x - loc) / scale,
                        scale))


@tangent(stats.logistic.logcdf, logistic_logcdf)
def logistic_logcdf_tangent(dx, y, x, loc, scale):
    return (dx * np.exp(logistic_logpdf(x, loc, scale) - y),
            -dx * np.exp(logistic_logpdf(x, loc, scale) - y),
            -dx * np.exp(logistic_logpdf(x, loc, scale) - y) * (x - loc) / scale)


@rule(stats.logistic.ppf, logistic_ppf, called_as=logistic_ppf)
def logistic_ppf_rule(dy, y, q, loc, scale):
    return (unbroadcast(dy / logistic_pdf(y, loc, scale), q), unbroadcast(dy, loc),
            unbroadcast(dy * (y - loc) / scale, scale))


@tangent(stats.logistic.ppf, logistic_ppf)
def logistic_ppf_tangent(dx, y, q, loc, scale):
    return (dx / logistic_pdf(y, loc, scale) + 0.0 * (q + loc + scale),
            dx + 0.0 * (q + loc + scale), dx * (y - loc) / scale)


@rule(stats.logistic.isf, logistic_isf, called_as=logistic_isf)
def logistic_isf_rule(dy, y, q, loc, scale):
    return (unbroadcast(-dy / logistic_pdf(y, loc, scale), q), unbroadcast(dy, loc),
            unbroadcast(dy * (y - loc) / scale, scale))


@tangent(stats.logistic.isf, logistic_isf)
def logistic_isf_tangent(dx, y, q, loc, scale):
    return (-dx / logistic_pdf(y, loc, scale) + 0.0 * (q + loc + scale),
            dx + 0.0 * (q + loc + scale), dx * (y - loc) / scale)


# ---- uniform's distribution function and quantile: the slope in x is the density, 1/scale on
# the closed support [loc, loc + scale] and 0 off it (JAX's convention at the ends) ----


@rule(stats.uniform.cdf, uniform_cdf, called_as=uniform_cdf)
def uniform_cdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(dy * uniform_pdf(x, loc, scale), x),
            unbroadcast(-dy * uniform_pdf(x, loc, scale), loc),
            unbroadcast(-dy * uniform_pdf(x, loc, scale) * (x - loc) / scale,
                        scale))


@tangent(stats.uniform.cdf, uniform_cdf)
def uniform_cdf_tangent(dx, y, x, loc, scale):
    return (dx * uniform_pdf(x, loc, scale),
            -dx * uniform_pdf(x, loc, scale),
            -dx * uniform_pdf(x, loc, scale) * (x - loc) / scale)


@rule(stats.uniform.ppf, uniform_ppf, called_as=uniform_ppf)
def uniform_ppf_rule(dy, y, q, loc, scale):
    return (unbroadcast(dy * scale, q), unbroadcast(dy, loc),
            unbroadcast(dy * (y - loc) / scale, scale))


@tangent(stats.uniform.ppf, uniform_ppf)
def uniform_ppf_tangent(dx, y, q, loc, scale):
    return (dx * scale + 0.0 * (q + loc + scale),
            dx + 0.0 * (q + loc + scale), dx * (y - loc) / scale)


# ---- gumbel_r: l'(z) = np.expm1(-z) ----


@rule(stats.gumbel_r.logpdf, gumbel_r_logpdf, called_as=gumbel_r_logpdf)
def gumbel_r_logpdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(dy * np.expm1((loc - x) / scale) / scale, x),
            unbroadcast(-dy * np.expm1((loc - x) / scale) / scale, loc),
            unbroadcast(-dy * (1.0 + (x - loc) / scale * np.expm1((loc - x) / scale)) / scale,
                        scale))


@tangent(stats.gumbel_r.logpdf, gumbel_r_logpdf)
def gumbel_r_logpdf_tangent(dx, y, x, loc, scale):
    return (dx * np.expm1((loc - x) / scale) / scale,
            -dx * np.expm1((loc - x) / scale) / scale,
            -dx * (1.0 + (x - loc) / scale * np.expm1((loc - x) / scale)) / scale)


@rule(stats.gumbel_r.pdf, gumbel_r_pdf, called_as=gumbel_r_pdf)
def gumbel_r_pdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(dy * y * np.expm1((loc - x) / scale) / scale, x),
            unbroadcast(-dy * y * np.expm1((loc - x) / scale) / scale, loc),
            unbroadcast(-dy * y * (1.0 + (x - loc) / scale * np.expm1((loc - x) / scale)) / scale,
                        scale))


@tangent(stats.gumbel_r.pdf, gumbel_r_pdf)
def gumbel_r_pdf_tangent(dx, y, x, loc, scale):
    return (dx * y * np.expm1((loc - x) / scale) / scale,
            -dx * y * np.expm1((loc - x) / scale) / scale,
            -dx * y * (1.0 + (x - loc) / scale * np.expm1((loc - x) / scale)) / scale)


@rule(stats.gumbel_r.cdf, gumbel_r_cdf, called_as=gumbel_r_cdf)
def gumbel_r_cdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(dy * gumbel_r_pdf(x, loc, scale), x),
            unbroadcast(-dy * gumbel_r_pdf(x, loc, scale), loc),
            unbroadcast(-dy * gumbel_r_pdf(x, loc, scale) * (x - loc) / scale,
                        scale))


@tangent(stats.gumbel_r.cdf, gumbel_r_cdf)
def gumbel_r_cdf_tangent(dx, y, x, loc, scale):
    return (dx * gumbel_r_pdf(x, loc, scale),
            -dx * gumbel_r_pdf(x, loc, scale),
            -dx * gumbel_r_pdf(x, loc, scale) * (x - loc) / scale)


@rule(stats.gumbel_r.logcdf, gumbel_r_logcdf, called_as=gumbel_r_logcdf)
def gumbel_r_logcdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(dy * np.exp(gumbel_r_logpdf(x, loc, scale) - y), x),
            unbroadcast(-dy * np.exp(gumbel_r_logpdf(x, loc, scale) - y), loc),
            unbroadcast(-dy * np.exp(gumbel_r_logpdf(x, loc, scale) - y) * (x - loc) / scale,
                        scale))


@tangent(stats.gumbel_r.logcdf, gumbel_r_logcdf)
def gumbel_r_logcdf_tangent(dx, y, x, loc, scale):
    return (dx * np.exp(gumbel_r_logpdf(x, loc, scale) - y),
            -dx * np.exp(gumbel_r_logpdf(x, loc, scale) - y),
            -dx * np.exp(gumbel_r_logpdf(x, loc, scale) - y) * (x - loc) / scale)


@rule(stats.gumbel_r.sf, gumbel_r_sf, called_as=gumbel_r_sf)
def gumbel_r_sf_rule(dy, y, x, loc, scale):
    return (unbroadcast(-dy * gumbel_r_pdf(x, loc, scale), x),
            unbroadcast(dy * gumbel_r_pdf(x, loc, scale), loc),
            unbroadcast(dy * gumbel_r_pdf(x, loc, scale) * (x - loc) / scale,
                        scale))


@tangent(stats.gumbel_r.sf, gumbel_r_sf)
def gumbel_r_sf_tangent(dx, y, x, loc, scale):
    return (-dx * gumbel_r_pdf(x, loc, scale),
            dx * gumbel_r_pdf(x, loc, scale),
            dx * gumbel_r_pdf(x, loc, scale) * (x - loc) / scale)


@rule(stats.gumbel_r.logsf, gumbel_r_logsf, called_as=gumbel_r_logsf)
def gumbel_r_logsf_rule(dy, y, x, loc, scale):
    return (unbroadcast(-dy * np.exp(gumbel_r_logpdf(x, loc, scale) - y), x),
            unbroadcast(dy * np.exp(gumbel_r_logpdf(x, loc, scale) - y), loc),
            unbroadcast(dy * np.exp(gumbel_r_logpdf(x, loc, scale) - y) * (x - loc) / scale,
                        scale))


@tangent(stats.gumbel_r.logsf, gumbel_r_logsf)
def gumbel_r_logsf_tangent(dx, y, x, loc, scale):
    return (-dx * np.exp(gumbel_r_logpdf(x, loc, scale) - y),
            dx * np.exp(gumbel_r_logpdf(x, loc, scale) - y),
            dx * np.exp(gumbel_r_logpdf(x, loc, scale) - y) * (x - loc) / scale)


@rule(stats.gumbel_r.ppf, gumbel_r_ppf, called_as=gumbel_r_ppf)
def gumbel_r_ppf_rule(dy, y, q, loc, scale):
    return (unbroadcast(dy / gumbel_r_pdf(y, loc, scale), q), unbroadcast(dy, loc),
            unbroadcast(dy * (y - loc) / scale, scale))


@tangent(stats.gumbel_r.ppf, gumbel_r_ppf)
def gumbel_r_ppf_tangent(dx, y, q, loc, scale):
    return (dx / gumbel_r_pdf(y, loc, scale) + 0.0 * (q + loc + scale),
            dx + 0.0 * (q + loc + scale), dx * (y - loc) / scale)


# ---- gumbel_l: l'(z) = -np.expm1(z) ----


@rule(stats.gumbel_l.logpdf, gumbel_l_logpdf, called_as=gumbel_l_logpdf)
def gumbel_l_logpdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(dy * (-np.expm1((x - loc) / scale)) / scale, x),
            unbroadcast(-dy * (-np.expm1((x - loc) / scale)) / scale, loc),
            unbroadcast(-dy * (1.0 - (x - loc) / scale * np.expm1((x - loc) / scale)) / scale,
                        scale))


@tangent(stats.gumbel_l.logpdf, gumbel_l_logpdf)
def gumbel_l_logpdf_tangent(dx, y, x, loc, scale):
    return (dx * (-np.expm1((x - loc) / scale)) / scale,
            -dx * (-np.expm1((x - loc) / scale)) / scale,
            -dx * (1.0 - (x - loc) / scale * np.expm1((x - loc) / scale)) / scale)


@rule(stats.gumbel_l.pdf, gumbel_l_pdf, called_as=gumbel_l_pdf)
def gumbel_l_pdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(dy * y * (-np.expm1((x - loc) / scale)) / scale, x),
            unbroadcast(-dy * y * (-np.expm1((x - loc) / scale)) / scale, loc),
            unbroadcast(-dy * y * (1.0 - (x - loc) / scale * np.expm1((x - loc) / scale)) /
                        scale, scale))


@tangent(stats.gumbel_l.pdf, gumbel_l_pdf)
def gumbel_l_pdf_tangent(dx, y, x, loc, scale):
    return (dx * y * (-np.expm1((x - loc) / scale)) / scale,
            -dx * y * (-np.expm1((x - loc) / scale)) / scale,
            -dx * y * (1.0 - (x - loc) / scale * np.expm1((x - loc) / scale)) / scale)


@rule(stats.gumbel_l.cdf, gumbel_l_cdf, called_as=gumbel_l_cdf)
def gumbel_l_cdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(dy * gumbel_l_pdf(x, loc, scale), x),
            unbroadcast(-dy * gumbel_l_pdf(x, loc, scale), loc),
            unbroadcast(-dy * gumbel_l_pdf(x, loc, scale) * (x - loc) / scale,
                        scale))


@tangent(stats.gumbel_l.cdf, gumbel_l_cdf)
def gumbel_l_cdf_tangent(dx, y, x, loc, scale):
    return (dx * gumbel_l_pdf(x, loc, scale),
            -dx * gumbel_l_pdf(x, loc, scale),
            -dx * gumbel_l_pdf(x, loc, scale) * (x - loc) / scale)


@rule(stats.gumbel_l.logcdf, gumbel_l_logcdf, called_as=gumbel_l_logcdf)
def gumbel_l_logcdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(dy * np.exp(gumbel_l_logpdf(x, loc, scale) - y), x),
            unbroadcast(-dy * np.exp(gumbel_l_logpdf(x, loc, scale) - y), loc),
            unbroadcast(-dy * np.exp(gumbel_l_logpdf(x, loc, scale) - y) * (x - loc) / scale,
                        scale))


@tangent(stats.gumbel_l.logcdf, gumbel_l_logcdf)
def gumbel_l_logcdf_tangent(dx, y, x, loc, scale):
    return (dx * np.exp(gumbel_l_logpdf(x, loc, scale) - y),
            -dx * np.exp(gumbel_l_logpdf(x, loc, scale) - y),
            -dx * np.exp(gumbel_l_logpdf(x, loc, scale) - y) * (x - loc) / scale)


@rule(stats.gumbel_l.sf, gumbel_l_sf, called_as=gumbel_l_sf)
def gumbel_l_sf_rule(dy, y, x, loc, scale):
    return (unbroadcast(-dy * gumbel_l_pdf(x, loc, scale), x),
            unbroadcast(dy * gumbel_l_pdf(x, loc, scale), loc),
            unbroadcast(dy * gumbel_l_pdf(x, loc, scale) * (x - loc) / scale,
                        scale))


@tangent(stats.gumbel_l.sf, gumbel_l_sf)
def gumbel_l_sf_tangent(dx, y, x, loc, scale):
    return (-dx * gumbel_l_pdf(x, loc, scale),
            dx * gumbel_l_pdf(x, loc, scale),
            dx * gumbel_l_pdf(x, loc, scale) * (x - loc) / scale)


@rule(stats.gumbel_l.logsf, gumbel_l_logsf, called_as=gumbel_l_logsf)
def gumbel_l_logsf_rule(dy, y, x, loc, scale):
    return (unbroadcast(-dy * np.exp(gumbel_l_logpdf(x, loc, scale) - y), x),
            unbroadcast(dy * np.exp(gumbel_l_logpdf(x, loc, scale) - y), loc),
            unbroadcast(dy * np.exp(gumbel_l_logpdf(x, loc, scale) - y) * (x - loc) / scale,
                        scale))


@tangent(stats.gumbel_l.logsf, gumbel_l_logsf)
def gumbel_l_logsf_tangent(dx, y, x, loc, scale):
    return (-dx * np.exp(gumbel_l_logpdf(x, loc, scale) - y),
            dx * np.exp(gumbel_l_logpdf(x, loc, scale) - y),
            dx * np.exp(gumbel_l_logpdf(x, loc, scale) - y) * (x - loc) / scale)


@rule(stats.gumbel_l.ppf, gumbel_l_ppf, called_as=gumbel_l_ppf)
def gumbel_l_ppf_rule(dy, y, q, loc, scale):
    return (unbroadcast(dy / gumbel_l_pdf(y, loc, scale), q), unbroadcast(dy, loc),
            unbroadcast(dy * (y - loc) / scale, scale))


@tangent(stats.gumbel_l.ppf, gumbel_l_ppf)
def gumbel_l_ppf_tangent(dx, y, q, loc, scale):
    return (dx / gumbel_l_pdf(y, loc, scale) + 0.0 * (q + loc + scale),
            dx + 0.0 * (q + loc + scale), dx * (y - loc) / scale)


# ---- the tails of chi2, gamma, beta and t: the slope in x is the density's (over the value
# for a log); their shape parameters refused ----


@rule(stats.chi2.sf, chi2_sf, called_as=chi2_sf,
      no_gradient={"df": SHAPE_PARAMETER})
def chi2_sf_rule(dy, y, x, df, loc, scale):
    return (unbroadcast(-dy * chi2_pdf(x, df, loc, scale), x), None,
            unbroadcast(dy * chi2_pdf(x, df, loc, scale), loc),
            unbroadcast(dy * chi2_pdf(x, df, loc, scale) * (x - loc) / scale,
                        scale))


@tangent(stats.chi2.sf, chi2_sf)
def chi2_sf_tangent(dx, y, x, df, loc, scale):
    return (-dx * chi2_pdf(x, df, loc, scale), None,
            dx * chi2_pdf(x, df, loc, scale),
            dx * chi2_pdf(x, df, loc, scale) * (x - loc) / scale)


@rule(stats.chi2.logsf, chi2_logsf, called_as=chi2_logsf,
      no_gradient={"df": SHAPE_PARAMETER})
def chi2_logsf_rule(dy, y, x, df, loc, scale):
    return (unbroadcast(-dy * np.exp(chi2_logpdf(x, df, loc, scale) - y), x), None,
            unbroadcast(dy * np.exp(chi2_logpdf(x, df, loc, scale) - y), loc),
            unbroadcast(dy * np.exp(chi2_logpdf(x, df, loc, scale) - y) * (x - loc) / scale,
                        scale))


@tangent(stats.chi2.logsf, chi2_logsf)
def chi2_logsf_tangent(dx, y, x, df, loc, scale):
    return (-dx * np.exp(chi2_logpdf(x, df, loc, scale) - y), None,
            dx * np.exp(chi2_logpdf(x, df, loc, scale) - y),
            dx * np.exp(chi2_logpdf(x, df, loc, scale) - y) * (x - loc) / scale)


@rule(stats.chi2.logcdf, chi2_logcdf, called_as=chi2_logcdf,
      no_gradient={"df": SHAPE_PARAMETER})
def chi2_logcdf_rule(dy, y, x, df, loc, scale):
    return (unbroadcast(dy * np.exp(chi2_logpdf(x, df, loc, scale) - y), x), None,
            unbroadcast(-dy * np.exp(chi2_logpdf(x, df, loc, scale) - y), loc),
            unbroadcast(-dy * np.exp(chi2_logpdf(x, df, loc, scale) - y) * (x - loc) / scale,
                        scale))


@tangent(stats.chi2.logcdf, chi2_logcdf)
def chi2_logcdf_tangent(dx, y, x, df, loc, scale):
    return (dx * np.exp(chi2_logpdf(x, df, loc, scale) - y), None,
            -dx * np.exp(chi2_logpdf(x, df, loc, scale) - y),
            -dx * np.exp(chi2_logpdf(x, df, loc, scale) - y) * (x - loc) / scale)


@rule(stats.gamma.sf, gamma_sf, called_as=gamma_sf,
      no_gradient={"a": SHAPE_PARAMETER})
def gamma_sf_rule(dy, y, x, a, loc, scale):
    return (unbroadcast(-dy * gamma_pdf(x, a, loc, scale), x), None,
            unbroadcast(dy * gamma_pdf(x, a, loc, scale), loc),
            unbroadcast(dy * gamma_pdf(x, a, loc, scale) * (x - loc) / scale,
                        scale))


@tangent(stats.gamma.sf, gamma_sf)
def gamma_sf_tangent(dx, y, x, a, loc, scale):
    return (-dx * gamma_pdf(x, a, loc, scale), None,
            dx * gamma_pdf(x, a, loc, scale),
            dx * gamma_pdf(x, a, loc, scale) * (x - loc) / scale)


@rule(stats.gamma.logsf, gamma_logsf, called_as=gamma_logsf,
      no_gradient={"a": SHAPE_PARAMETER})
def gamma_logsf_rule(dy, y, x, a, loc, scale):
    return (unbroadcast(-dy * np.exp(gamma_logpdf(x, a, loc, scale) - y), x), None,
            unbroadcast(dy * np.exp(gamma_logpdf(x, a, loc, scale) - y), loc),
            unbroadcast(dy * np.exp(gamma_logpdf(x, a, loc, scale) - y) * (x - loc) / scale,
                        scale))


@tangent(stats.gamma.logsf, gamma_logsf)
def gamma_logsf_tangent(dx, y, x, a, loc, scale):
    return (-dx * np.exp(gamma_logpdf(x, a, loc, scale) - y), None,
            dx * np.exp(gamma_logpdf(x, a, loc, scale) - y),
            dx * np.exp(gamma_logpdf(x, a, loc, scale) - y) * (x - loc) / scale)


@rule(stats.gamma.logcdf, gamma_logcdf, called_as=gamma_logcdf,
      no_gradient={"a": SHAPE_PARAMETER})
def gamma_logcdf_rule(dy, y, x, a, loc, scale):
    return (unbroadcast(dy * np.exp(gamma_logpdf(x, a, loc, scale) - y), x), None,
            unbroadcast(-dy * np.exp(gamma_logpdf(x, a, loc, scale) - y), loc),
            unbroadcast(-dy * np.exp(gamma_logpdf(x, a, loc, scale) - y) * (x - loc) / scale,
                        scale))


@tangent(stats.gamma.logcdf, gamma_logcdf)
def gamma_logcdf_tangent(dx, y, x, a, loc, scale):
    return (dx * np.exp(gamma_logpdf(x, a, loc, scale) - y), None,
            -dx * np.exp(gamma_logpdf(x, a, loc, scale) - y),
            -dx * np.exp(gamma_logpdf(x, a, loc, scale) - y) * (x - loc) / scale)


@rule(stats.beta.sf, beta_sf, called_as=beta_sf,
      no_gradient={"a": SHAPE_PARAMETER, "b": SHAPE_PARAMETER})
def beta_sf_rule(dy, y, x, a, b, loc, scale):
    return (unbroadcast(-dy * beta_pdf(x, a, b, loc, scale), x), None, None,
            unbroadcast(dy * beta_pdf(x, a, b, loc, scale), loc),
            unbroadcast(dy * beta_pdf(x, a, b, loc, scale) * (x - loc) / scale,
                        scale))


@tangent(stats.beta.sf, beta_sf)
def beta_sf_tangent(dx, y, x, a, b, loc, scale):
    return (-dx * beta_pdf(x, a, b, loc, scale), None, None,
            dx * beta_pdf(x, a, b, loc, scale),
            dx * beta_pdf(x, a, b, loc, scale) * (x - loc) / scale)


@rule(stats.beta.logsf, beta_logsf, called_as=beta_logsf,
      no_gradient={"a": SHAPE_PARAMETER, "b": SHAPE_PARAMETER})
def beta_logsf_rule(dy, y, x, a, b, loc, scale):
    return (unbroadcast(-dy * np.exp(beta_logpdf(x, a, b, loc, scale) - y), x), None, None,
            unbroadcast(dy * np.exp(beta_logpdf(x, a, b, loc, scale) - y), loc),
            unbroadcast(dy * np.exp(beta_logpdf(x, a, b, loc, scale) - y) * (x - loc) / scale,
                        scale))


@tangent(stats.beta.logsf, beta_logsf)
def beta_logsf_tangent(dx, y, x, a, b, loc, scale):
    return (-dx * np.exp(beta_logpdf(x, a, b, loc, scale) - y), None, None,
            dx * np.exp(beta_logpdf(x, a, b, loc, scale) - y),
            dx * np.exp(beta_logpdf(x, a, b, loc, scale) - y) * (x - loc) / scale)


@rule(stats.beta.logcdf, beta_logcdf, called_as=beta_logcdf,
      no_gradient={"a": SHAPE_PARAMETER, "b": SHAPE_PARAMETER})
def beta_logcdf_rule(dy, y, x, a, b, loc, scale):
    return (unbroadcast(dy * np.exp(beta_logpdf(x, a, b, loc, scale) - y), x), None, None,
            unbroadcast(-dy * np.exp(beta_logpdf(x, a, b, loc, scale) - y), loc),
            unbroadcast(-dy * np.exp(beta_logpdf(x, a, b, loc, scale) - y) * (x - loc) / scale,
                        scale))


@tangent(stats.beta.logcdf, beta_logcdf)
def beta_logcdf_tangent(dx, y, x, a, b, loc, scale):
    return (dx * np.exp(beta_logpdf(x, a, b, loc, scale) - y), None, None,
            -dx * np.exp(beta_logpdf(x, a, b, loc, scale) - y),
            -dx * np.exp(beta_logpdf(x, a, b, loc, scale) - y) * (x - loc) / scale)


@rule(stats.t.logcdf, t_logcdf, called_as=t_logcdf,
      no_gradient={"df": SHAPE_PARAMETER})
def t_logcdf_rule(dy, y, x, df, loc, scale):
    return (unbroadcast(dy * np.exp(t_logpdf(x, df, loc, scale) - y), x), None,
            unbroadcast(-dy * np.exp(t_logpdf(x, df, loc, scale) - y), loc),
            unbroadcast(-dy * np.exp(t_logpdf(x, df, loc, scale) - y) * (x - loc) / scale,
                        scale))


@tangent(stats.t.logcdf, t_logcdf)
def t_logcdf_tangent(dx, y, x, df, loc, scale):
    return (dx * np.exp(t_logpdf(x, df, loc, scale) - y), None,
            -dx * np.exp(t_logpdf(x, df, loc, scale) - y),
            -dx * np.exp(t_logpdf(x, df, loc, scale) - y) * (x - loc) / scale)


# ---- pareto, of the shape b: l = log b - (b + 1) log z - log scale on z >= 1; sf = z^-b,
# so d sf / db = -sf log z, and log z is read as log max(z, 1), 0 off the support where
# the distribution functions are constant; y = ppf(q) = loc + scale (1 - q)^(-1/b) has
# dy/db = (y - loc) log(1 - q) / b^2 ----


@rule(stats.pareto.logpdf, pareto_logpdf, called_as=pareto_logpdf)
def pareto_logpdf_rule(dy, y, x, b, loc, scale):
    return (unbroadcast(-dy * (b + 1.0) / (x - loc), x),
            unbroadcast(dy * (1.0 / b - np.log((x - loc) / scale)), b),
            unbroadcast(dy * (b + 1.0) / (x - loc), loc),
            unbroadcast(dy * b / scale, scale))


@tangent(stats.pareto.logpdf, pareto_logpdf)
def pareto_logpdf_tangent(dx, y, x, b, loc, scale):
    return (-dx * (b + 1.0) / (x - loc), dx * (1.0 / b - np.log((x - loc) / scale)),
            dx * (b + 1.0) / (x - loc), dx * b / scale + 0.0 * y)


@rule(stats.pareto.pdf, pareto_pdf, called_as=pareto_pdf)
def pareto_pdf_rule(dy, y, x, b, loc, scale):
    return (unbroadcast(-dy * y * (b + 1.0) / (x - loc), x),
            unbroadcast(dy * y * (1.0 / b - np.log((x - loc) / scale)), b),
            unbroadcast(dy * y * (b + 1.0) / (x - loc), loc),
            unbroadcast(dy * y * b / scale, scale))


@tangent(stats.pareto.pdf, pareto_pdf)
def pareto_pdf_tangent(dx, y, x, b, loc, scale):
    return (-dx * y * (b + 1.0) / (x - loc), dx * y * (1.0 / b - np.log((x - loc) / scale)),
            dx * y * (b + 1.0) / (x - loc), dx * y * b / scale)


@rule(stats.pareto.sf, pareto_sf, called_as=pareto_sf)
def pareto_sf_rule(dy, y, x, b, loc, scale):
    return (unbroadcast(-dy * pareto_pdf(x, b, loc, scale), x),
            unbroadcast(-dy * y * np.log(np.maximum((x - loc) / scale, 1.0)), b),
            unbroadcast(dy * pareto_pdf(x, b, loc, scale), loc),
            unbroadcast(dy * pareto_pdf(x, b, loc, scale) * (x - loc) / scale, scale))


@tangent(stats.pareto.sf, pareto_sf)
def pareto_sf_tangent(dx, y, x, b, loc, scale):
    return (-dx * pareto_pdf(x, b, loc, scale),
            -dx * y * np.log(np.maximum((x - loc) / scale, 1.0)),
            dx * pareto_pdf(x, b, loc, scale),
            dx * pareto_pdf(x, b, loc, scale) * (x - loc) / scale)


@rule(stats.pareto.cdf, pareto_cdf, called_as=pareto_cdf)
def pareto_cdf_rule(dy, y, x, b, loc, scale):
    return (unbroadcast(dy * pareto_pdf(x, b, loc, scale), x),
            unbroadcast(dy * (1.0 - y) * np.log(np.maximum((x - loc) / scale, 1.0)), b),
            unbroadcast(-dy * pareto_pdf(x, b, loc, scale), loc),
            unbroadcast(-dy * pareto_pdf(x, b, loc, scale) * (x - loc) / scale, scale))


@tangent(stats.pareto.cdf, pareto_cdf)
def pareto_cdf_tangent(dx, y, x, b, loc, scale):
    return (dx * pareto_pdf(x, b, loc, scale),
            dx * (1.0 - y) * np.log(np.maximum((x - loc) / scale, 1.0)),
            -dx * pareto_pdf(x, b, loc, scale),
            -dx * pareto_pdf(x, b, loc, scale) * (x - loc) / scale)


@rule(stats.pareto.logsf, pareto_logsf, called_as=pareto_logsf)
def pareto_logsf_rule(dy, y, x, b, loc, scale):
    return (unbroadcast(-dy * np.exp(pareto_logpdf(x, b, loc, scale) - y), x),
            unbroadcast(-dy * np.log(np.maximum((x - loc) / scale, 1.0)), b),
            unbroadcast(dy * np.exp(pareto_logpdf(x, b, loc, scale) - y), loc),
            unbroadcast(dy * np.exp(pareto_logpdf(x, b, loc, scale) - y) * (x - loc) / scale,
                        scale))


@tangent(stats.pareto.logsf, pareto_logsf)
def pareto_logsf_tangent(dx, y, x, b, loc, scale):
    return (-dx * np.exp(pareto_logpdf(x, b, loc, scale) - y),
            -dx * np.log(np.maximum((x - loc) / scale, 1.0)) + 0.0 * y,
            dx * np.exp(pareto_logpdf(x, b, loc, scale) - y),
            dx * np.exp(pareto_logpdf(x, b, loc, scale) - y) * (x - loc) / scale)


@rule(stats.pareto.logcdf, pareto_logcdf, called_as=pareto_logcdf)
def pareto_logcdf_rule(dy, y, x, b, loc, scale):
    # d cdf / db = sf log z, over the cdf: exp(logsf - y) log z
    return (unbroadcast(dy * np.exp(pareto_logpdf(x, b, loc, scale) - y), x),
            unbroadcast(dy * np.exp(pareto_logsf(x, b, loc, scale) - y) *
                        np.log(np.maximum((x - loc) / scale, 1.0)), b),
            unbroadcast(-dy * np.exp(pareto_logpdf(x, b, loc, scale) - y), loc),
            unbroadcast(-dy * np.exp(pareto_logpdf(x, b, loc, scale) - y) * (x - loc) / scale,
                        scale))


@tangent(stats.pareto.logcdf, pareto_logcdf)
def pareto_logcdf_tangent(dx, y, x, b, loc, scale):
    return (dx * np.exp(pareto_logpdf(x, b, loc, scale) - y),
            dx * np.exp(pareto_logsf(x, b, loc, scale) - y) *
            np.log(np.maximum((x - loc) / scale, 1.0)),
            -dx * np.exp(pareto_logpdf(x, b, loc, scale) - y),
            -dx * np.exp(pareto_logpdf(x, b, loc, scale) - y) * (x - loc) / scale)


@rule(stats.pareto.ppf, pareto_ppf, called_as=pareto_ppf)
def pareto_ppf_rule(dy, y, q, b, loc, scale):
    return (unbroadcast(dy / pareto_pdf(y, b, loc, scale), q),
            unbroadcast(dy * (y - loc) * np.log1p(-q) / b ** 2, b),
            unbroadcast(dy, loc),
            unbroadcast(dy * (y - loc) / scale, scale))


@tangent(stats.pareto.ppf, pareto_ppf)
def pareto_ppf_tangent(dx, y, q, b, loc, scale):
    return (dx / pareto_pdf(y, b, loc, scale), dx * (y - loc) * np.log1p(-q) / b ** 2,
            dx + 0.0 * y, dx * (y - loc) / scale)


# ---- vonmises: l = kappa cos z - log(2 pi I0(kappa)) - log scale, l'(z) = -kappa sin z,
# dl/dkappa = cos z - I1(kappa) / I0(kappa) (= i1e / i0e, in range for large kappa) ----


@rule(stats.vonmises.logpdf, vonmises_logpdf, called_as=vonmises_logpdf)
def vonmises_logpdf_rule(dy, y, x, kappa, loc, scale):
    return (unbroadcast(-dy * kappa * np.sin((x - loc) / scale) / scale, x),
            unbroadcast(dy * (np.cos((x - loc) / scale) - special.i1e(kappa) /
                              special.i0e(kappa)), kappa),
            unbroadcast(dy * kappa * np.sin((x - loc) / scale) / scale, loc),
            unbroadcast(dy * (kappa * (x - loc) / scale * np.sin((x - loc) / scale) - 1.0) /
                        scale, scale))


@tangent(stats.vonmises.logpdf, vonmises_logpdf)
def vonmises_logpdf_tangent(dx, y, x, kappa, loc, scale):
    return (-dx * kappa * np.sin((x - loc) / scale) / scale,
            dx * (np.cos((x - loc) / scale) - special.i1e(kappa) / special.i0e(kappa)),
            dx * kappa * np.sin((x - loc) / scale) / scale,
            dx * (kappa * (x - loc) / scale * np.sin((x - loc) / scale) - 1.0) / scale)


@rule(stats.vonmises.pdf, vonmises_pdf, called_as=vonmises_pdf)
def vonmises_pdf_rule(dy, y, x, kappa, loc, scale):
    return (unbroadcast(-dy * y * kappa * np.sin((x - loc) / scale) / scale, x),
            unbroadcast(dy * y * (np.cos((x - loc) / scale) - special.i1e(kappa) /
                                  special.i0e(kappa)), kappa),
            unbroadcast(dy * y * kappa * np.sin((x - loc) / scale) / scale, loc),
            unbroadcast(dy * y * (kappa * (x - loc) / scale * np.sin((x - loc) / scale) -
                                  1.0) / scale, scale))


@tangent(stats.vonmises.pdf, vonmises_pdf)
def vonmises_pdf_tangent(dx, y, x, kappa, loc, scale):
    return (-dx * y * kappa * np.sin((x - loc) / scale) / scale,
            dx * y * (np.cos((x - loc) / scale) - special.i1e(kappa) / special.i0e(kappa)),
            dx * y * kappa * np.sin((x - loc) / scale) / scale,
            dx * y * (kappa * (x - loc) / scale * np.sin((x - loc) / scale) - 1.0) / scale)


# ---- counts: geom's l = (k - 1) log(1 - p) + log p, nbinom's (above), poisson's cdf ----


@rule(stats.geom.logpmf, geom_logpmf, called_as=geom_logpmf,
      no_gradient={"k": _COUNT, "loc": _COUNT})
def geom_logpmf_rule(dy, y, k, p, loc):
    return None, unbroadcast(dy * (1.0 / p - (k - loc - 1.0) / (1.0 - p)), p), None


@tangent(stats.geom.logpmf, geom_logpmf)
def geom_logpmf_tangent(dx, y, k, p, loc):
    return None, dx * (1.0 / p - (k - loc - 1.0) / (1.0 - p)), None


@rule(stats.geom.pmf, geom_pmf, called_as=geom_pmf,
      no_gradient={"k": _COUNT, "loc": _COUNT})
def geom_pmf_rule(dy, y, k, p, loc):
    return None, unbroadcast(dy * y * (1.0 / p - (k - loc - 1.0) / (1.0 - p)), p), None


@tangent(stats.geom.pmf, geom_pmf)
def geom_pmf_tangent(dx, y, k, p, loc):
    return None, dx * y * (1.0 / p - (k - loc - 1.0) / (1.0 - p)), None


@rule(stats.nbinom.logpmf, nbinom_logpmf, called_as=nbinom_logpmf,
      no_gradient={"k": _COUNT, "loc": _COUNT})
def nbinom_logpmf_rule(dy, y, k, n, p, loc):
    return (None,
            unbroadcast(dy * (special.psi(k - loc + n) - special.psi(n) + np.log(p)), n),
            unbroadcast(dy * (n / p - (k - loc) / (1.0 - p)), p),
            None)


@tangent(stats.nbinom.logpmf, nbinom_logpmf)
def nbinom_logpmf_tangent(dx, y, k, n, p, loc):
    return (None, dx * (special.psi(k - loc + n) - special.psi(n) + np.log(p)),
            dx * (n / p - (k - loc) / (1.0 - p)), None)


@rule(stats.nbinom.pmf, nbinom_pmf, called_as=nbinom_pmf,
      no_gradient={"k": _COUNT, "loc": _COUNT})
def nbinom_pmf_rule(dy, y, k, n, p, loc):
    return (None,
            unbroadcast(dy * y * (special.psi(k - loc + n) - special.psi(n) + np.log(p)), n),
            unbroadcast(dy * y * (n / p - (k - loc) / (1.0 - p)), p),
            None)


@tangent(stats.nbinom.pmf, nbinom_pmf)
def nbinom_pmf_tangent(dx, y, k, n, p, loc):
    return (None, dx * y * (special.psi(k - loc + n) - special.psi(n) + np.log(p)),
            dx * y * (n / p - (k - loc) / (1.0 - p)), None)


@rule(stats.poisson.cdf, poisson_cdf, called_as=poisson_cdf,
      no_gradient={"k": _COUNT, "loc": _COUNT})
def poisson_cdf_rule(dy, y, k, mu, loc):
    return None, unbroadcast(-dy * poisson_pmf(np.floor(k - loc), mu), mu), None


@tangent(stats.poisson.cdf, poisson_cdf)
def poisson_cdf_tangent(dx, y, k, mu, loc):
    return None, -dx * poisson_pmf(np.floor(k - loc), mu), None


# ---- truncnorm on [a, b] in z, of mass Z = Phi(b) - Phi(a): l = -z^2/2 - log sqrt(2 pi)
# - log Z - log scale, so dl/da = phi(a) / Z and dl/db = -phi(b) / Z (phi(c) / Z =
# exp(norm_logpdf(c) - log Z), in range in the tails); cdf = (Phi(z) - Phi(a)) / Z has
# d/da = phi(a) (cdf - 1) / Z and d/db = -cdf phi(b) / Z, sf = 1 - cdf their negatives;
# over the value for the logs: (cdf - 1) / cdf = -expm1(-log cdf), (1 - sf) / sf =
# expm1(-log sf); outside [a, b] the distribution functions are constant, and so their
# terms in a and b are 0 there ----


@rule(stats.truncnorm.logpdf, truncnorm_logpdf, called_as=truncnorm_logpdf)
def truncnorm_logpdf_rule(dy, y, x, a, b, loc, scale):
    return (unbroadcast(-dy * (x - loc) / scale ** 2, x),
            unbroadcast(dy * np.exp(norm_logpdf(a) - truncnorm_log_mass(a, b)), a),
            unbroadcast(-dy * np.exp(norm_logpdf(b) - truncnorm_log_mass(a, b)), b),
            unbroadcast(dy * (x - loc) / scale ** 2, loc),
            unbroadcast(dy * (((x - loc) / scale) ** 2 - 1.0) / scale, scale))


@tangent(stats.truncnorm.logpdf, truncnorm_logpdf)
def truncnorm_logpdf_tangent(dx, y, x, a, b, loc, scale):
    return (-dx * (x - loc) / scale ** 2 + 0.0 * y,
            dx * np.exp(norm_logpdf(a) - truncnorm_log_mass(a, b)) + 0.0 * y,
            -dx * np.exp(norm_logpdf(b) - truncnorm_log_mass(a, b)) + 0.0 * y,
            dx * (x - loc) / scale ** 2 + 0.0 * y,
            dx * (((x - loc) / scale) ** 2 - 1.0) / scale + 0.0 * y)


@rule(stats.truncnorm.pdf, truncnorm_pdf, called_as=truncnorm_pdf)
def truncnorm_pdf_rule(dy, y, x, a, b, loc, scale):
    return (unbroadcast(-dy * y * (x - loc) / scale ** 2, x),
            unbroadcast(dy * y * np.exp(norm_logpdf(a) - truncnorm_log_mass(a, b)), a),
            unbroadcast(-dy * y * np.exp(norm_logpdf(b) - truncnorm_log_mass(a, b)), b),
            unbroadcast(dy * y * (x - loc) / scale ** 2, loc),
            unbroadcast(dy * y * (((x - loc) / scale) ** 2 - 1.0) / scale, scale))


@tangent(stats.truncnorm.pdf, truncnorm_pdf)
def truncnorm_pdf_tangent(dx, y, x, a, b, loc, scale):
    return (-dx * y * (x - loc) / scale ** 2,
            dx * y * np.exp(norm_logpdf(a) - truncnorm_log_mass(a, b)),
            -dx * y * np.exp(norm_logpdf(b) - truncnorm_log_mass(a, b)),
            dx * y * (x - loc) / scale ** 2,
            dx * y * (((x - loc) / scale) ** 2 - 1.0) / scale)


@rule(stats.truncnorm.cdf, truncnorm_cdf, called_as=truncnorm_cdf)
def truncnorm_cdf_rule(dy, y, x, a, b, loc, scale):
    return (unbroadcast(dy * truncnorm_pdf(x, a, b, loc, scale), x),
            unbroadcast(dy * (y - 1.0) * (x - loc >= a * scale) *
                        np.exp(norm_logpdf(a) - truncnorm_log_mass(a, b)), a),
            unbroadcast(-dy * y * (x - loc <= b * scale) *
                        np.exp(norm_logpdf(b) - truncnorm_log_mass(a, b)), b),
            unbroadcast(-dy * truncnorm_pdf(x, a, b, loc, scale), loc),
            unbroadcast(-dy * truncnorm_pdf(x, a, b, loc, scale) * (x - loc) / scale, scale))


@tangent(stats.truncnorm.cdf, truncnorm_cdf)
def truncnorm_cdf_tangent(dx, y, x, a, b, loc, scale):
    return (dx * truncnorm_pdf(x, a, b, loc, scale),
            dx * (y - 1.0) * (x - loc >= a * scale) *
            np.exp(norm_logpdf(a) - truncnorm_log_mass(a, b)),
            -dx * y * (x - loc <= b * scale) * np.exp(norm_logpdf(b) - truncnorm_log_mass(a, b)),
            -dx * truncnorm_pdf(x, a, b, loc, scale),
            -dx * truncnorm_pdf(x, a, b, loc, scale) * (x - loc) / scale)


@rule(stats.truncnorm.sf, truncnorm_sf, called_as=truncnorm_sf)
def truncnorm_sf_rule(dy, y, x, a, b, loc, scale):
    return (unbroadcast(-dy * truncnorm_pdf(x, a, b, loc, scale), x),
            unbroadcast(dy * y * (x - loc >= a * scale) *
                        np.exp(norm_logpdf(a) - truncnorm_log_mass(a, b)), a),
            unbroadcast(dy * (1.0 - y) * (x - loc <= b * scale) *
                        np.exp(norm_logpdf(b) - truncnorm_log_mass(a, b)), b),
            unbroadcast(dy * truncnorm_pdf(x, a, b, loc, scale), loc),
            unbroadcast(dy * truncnorm_pdf(x, a, b, loc, scale) * (x - loc) / scale, scale))


@tangent(stats.truncnorm.sf, truncnorm_sf)
def truncnorm_sf_tangent(dx, y, x, a, b, loc, scale):
    return (-dx * truncnorm_pdf(x, a, b, loc, scale),
            dx * y * (x - loc >= a * scale) * np.exp(norm_logpdf(a) - truncnorm_log_mass(a, b)),
            dx * (1.0 - y) * (x - loc <= b * scale) *
            np.exp(norm_logpdf(b) - truncnorm_log_mass(a, b)),
            dx * truncnorm_pdf(x, a, b, loc, scale),
            dx * truncnorm_pdf(x, a, b, loc, scale) * (x - loc) / scale)


@rule(stats.truncnorm.logcdf, truncnorm_logcdf, called_as=truncnorm_logcdf)
def truncnorm_logcdf_rule(dy, y, x, a, b, loc, scale):
    return (unbroadcast(dy * np.exp(truncnorm_logpdf(x, a, b, loc, scale) - y), x),
            unbroadcast(-dy * np.expm1(-y) * (x - loc >= a * scale) *
                        np.exp(norm_logpdf(a) - truncnorm_log_mass(a, b)), a),
            unbroadcast(-dy * (x - loc <= b * scale) *
                        np.exp(norm_logpdf(b) - truncnorm_log_mass(a, b)), b),
            unbroadcast(-dy * np.exp(truncnorm_logpdf(x, a, b, loc, scale) - y), loc),
            unbroadcast(-dy * np.exp(truncnorm_logpdf(x, a, b, loc, scale) - y) *
                        (x - loc) / scale, scale))


@tangent(stats.truncnorm.logcdf, truncnorm_logcdf)
def truncnorm_logcdf_tangent(dx, y, x, a, b, loc, scale):
    return (dx * np.exp(truncnorm_logpdf(x, a, b, loc, scale) - y),
            -dx * np.expm1(-y) * (x - loc >= a * scale) *
            np.exp(norm_logpdf(a) - truncnorm_log_mass(a, b)),
            -dx * (x - loc <= b * scale) * np.exp(norm_logpdf(b) - truncnorm_log_mass(a, b)),
            -dx * np.exp(truncnorm_logpdf(x, a, b, loc, scale) - y),
            -dx * np.exp(truncnorm_logpdf(x, a, b, loc, scale) - y) * (x - loc) / scale)


@rule(stats.truncnorm.logsf, truncnorm_logsf, called_as=truncnorm_logsf)
def truncnorm_logsf_rule(dy, y, x, a, b, loc, scale):
    return (unbroadcast(-dy * np.exp(truncnorm_logpdf(x, a, b, loc, scale) - y), x),
            unbroadcast(dy * (x - loc >= a * scale) *
                        np.exp(norm_logpdf(a) - truncnorm_log_mass(a, b)), a),
            unbroadcast(dy * np.expm1(-y) * (x - loc <= b * scale) *
                        np.exp(norm_logpdf(b) - truncnorm_log_mass(a, b)), b),
            unbroadcast(dy * np.exp(truncnorm_logpdf(x, a, b, loc, scale) - y), loc),
            unbroadcast(dy * np.exp(truncnorm_logpdf(x, a, b, loc, scale) - y) *
                        (x - loc) / scale, scale))


@tangent(stats.truncnorm.logsf, truncnorm_logsf)
def truncnorm_logsf_tangent(dx, y, x, a, b, loc, scale):
    return (-dx * np.exp(truncnorm_logpdf(x, a, b, loc, scale) - y),
            dx * (x - loc >= a * scale) * np.exp(norm_logpdf(a) - truncnorm_log_mass(a, b)),
            dx * np.expm1(-y) * (x - loc <= b * scale) *
            np.exp(norm_logpdf(b) - truncnorm_log_mass(a, b)),
            dx * np.exp(truncnorm_logpdf(x, a, b, loc, scale) - y),
            dx * np.exp(truncnorm_logpdf(x, a, b, loc, scale) - y) * (x - loc) / scale)


describe(truncnorm_log_mass, pure=True)
