"""scipy.stats: the records of the densities srcgrad differentiates. Each is a bound method
of a distribution instance (`scipy.stats.norm.logpdf`; a new object at each access, equal
to the others), which numba cannot type: generated code calls its `called_as` form in
`runtime/stats.py`, whose signature is SciPy's, and which has the same rules (code
generated from generated code, as hvp's, calls it). Frozen distributions (`norm(0, 1).logpdf`)
have no record and are refused, as are keywords the forms do not take (`allow_singular=`).

Derivatives, with z = (x - loc) / scale and l the log density: a location-scale family
has dl/dx = l'(z) / scale = -dl/dloc and dl/dscale = -(1 + z l'(z)) / scale. norm:
l'(z) = -z; norm.cdf' = phi(z), norm.logcdf' = phi(z) / Phi(z) = exp(-z^2/2 - y) / sqrt(2 pi);
norm.sf' = -phi(z), norm.logsf' = -phi(z) / (1 - Phi(z)); y = norm.ppf(q) = loc + scale
ndtri(q) has dy/dq = scale / phi(z) (z = (y - loc) / scale: one over the density at y),
dy/dloc = 1, dy/dscale = z; norm.isf(q) = ppf(1 - q), so dy/dq = -scale / phi(z). expon:
l'(z) = -1 on its support z >= 0 (the density there, and its cdf' = pdf, are 0 below it).
t: l'(z) = -(df + 1) z / (df + z^2) and dl/ddf = (psi((df+1)/2) - psi(df/2) - 1/df -
log1p(z^2/df) + (df + 1) z^2 / (df (df + z^2))) / 2. poisson: dl/dmu = k / mu - 1 (the
count k is data). gamma: l'(z) = (a - 1) / z - 1, dl/da = log z - psi(a). beta:
l'(z) = (a - 1) / z - (b - 1) / (1 - z), dl/da = log z - psi(a) + psi(a + b), dl/db =
log1p(-z) - psi(b) + psi(a + b). multivariate_normal and dirichlet: see their helpers,
whose tangents (below) give their second order (hvp).

Continued (forms in `runtime/stats_extra.py`): t.pdf; laplace, logistic, cauchy (logpdf,
pdf, cdf); chi2 (logpdf, pdf); uniform (logpdf, pdf: JAX's gradient, 0 in x and loc,
-1/scale on the closed support and 0 off it); poisson.pmf, binom and bernoulli (logpmf, pmf:
in mu and p only, their counts refused); gamma, beta and
lognorm densities; norm.entropy; multivariate_normal.pdf and dirichlet.pdf (their log
densities' helpers with dy times the density); t, gamma, beta and chi2 cdf, whose derivative
in x (and loc, scale) is the density, their shape parameters refused: a
pdf is the log density's gradient times the density; each formula sits beside its rules.
"""

import numpy as np
from scipy import special, stats

from ..runtime import unbroadcast
from ..runtime.stats import (
    beta_logpdf,
    dirichlet_alpha_slope,
    dirichlet_grads,
    dirichlet_grads_along_alpha,
    dirichlet_grads_along_x,
    dirichlet_logpdf,
    dirichlet_x_slope,
    gamma_logpdf,
    multivariate_normal_cov_slope,
    multivariate_normal_grads,
    multivariate_normal_grads_along_cov,
    multivariate_normal_grads_along_mean,
    multivariate_normal_grads_along_x,
    multivariate_normal_logpdf,
    multivariate_normal_solved,
    norm_cdf,
    norm_logcdf,
    norm_logpdf,
    norm_pdf,
    poisson_logpmf,
    t_logpdf,
)
from ..runtime.stats_extra import (
    bernoulli_logpmf,
    bernoulli_pmf,
    beta_cdf,
    beta_pdf,
    binom_logpmf,
    binom_pmf,
    cauchy_cdf,
    cauchy_logpdf,
    cauchy_pdf,
    chi2_cdf,
    chi2_logpdf,
    chi2_pdf,
    dirichlet_pdf,
    gamma_cdf,
    gamma_pdf,
    laplace_cdf,
    laplace_logpdf,
    laplace_pdf,
    logistic_cdf,
    logistic_logpdf,
    logistic_pdf,
    lognorm_logpdf,
    lognorm_pdf,
    multivariate_normal_pdf,
    norm_entropy,
    poisson_pmf,
    t_cdf,
    t_pdf,
    uniform_logpdf,
    uniform_pdf,
)
from ..runtime.stats_more import (
    expon_cdf,
    expon_logpdf,
    expon_pdf,
    norm_isf,
    norm_logsf,
    norm_ppf,
    norm_sf,
)
from . import SHAPE_PARAMETER, describe, rule, tangent

NEEDS = ("scipy.special", "scipy.stats")   # SciPy modules this imports (rules/__init__)

# what the arguments without a gradient are (`no_gradient`: a value being differentiated
# passed as one is refused, naming the call's line)
_COUNT = "a count (data), with no gradient"

# ---- the normal distribution ----


@rule(stats.norm.logpdf, norm_logpdf, called_as=norm_logpdf)
def norm_logpdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(-dy * (x - loc) / scale ** 2, x),
            unbroadcast(dy * (x - loc) / scale ** 2, loc),
            unbroadcast(dy * (((x - loc) / scale) ** 2 - 1.0) / scale, scale))


@tangent(stats.norm.logpdf, norm_logpdf)
def norm_logpdf_tangent(dx, y, x, loc, scale):
    return (-dx * (x - loc) / scale ** 2, dx * (x - loc) / scale ** 2,
            dx * (((x - loc) / scale) ** 2 - 1.0) / scale)


@rule(stats.norm.pdf, norm_pdf, called_as=norm_pdf)
def norm_pdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(-dy * y * (x - loc) / scale ** 2, x),
            unbroadcast(dy * y * (x - loc) / scale ** 2, loc),
            unbroadcast(dy * y * (((x - loc) / scale) ** 2 - 1.0) / scale, scale))


@tangent(stats.norm.pdf, norm_pdf)
def norm_pdf_tangent(dx, y, x, loc, scale):
    return (-dx * y * (x - loc) / scale ** 2, dx * y * (x - loc) / scale ** 2,
            dx * y * (((x - loc) / scale) ** 2 - 1.0) / scale)


@rule(stats.norm.cdf, norm_cdf, called_as=norm_cdf)
def norm_cdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(dy * norm_pdf(x, loc, scale), x),
            unbroadcast(-dy * norm_pdf(x, loc, scale), loc),
            unbroadcast(-dy * norm_pdf(x, loc, scale) * (x - loc) / scale, scale))


@tangent(stats.norm.cdf, norm_cdf)
def norm_cdf_tangent(dx, y, x, loc, scale):
    return (dx * norm_pdf(x, loc, scale), -dx * norm_pdf(x, loc, scale),
            -dx * norm_pdf(x, loc, scale) * (x - loc) / scale)


@rule(stats.norm.logcdf, norm_logcdf, called_as=norm_logcdf)
def norm_logcdf_rule(dy, y, x, loc, scale):
    # the density over the distribution function, in range far in the lower tail
    return (unbroadcast(dy * np.exp(norm_logpdf(x, loc, scale) - y), x),
            unbroadcast(-dy * np.exp(norm_logpdf(x, loc, scale) - y), loc),
            unbroadcast(-dy * np.exp(norm_logpdf(x, loc, scale) - y) * (x - loc) / scale,
                        scale))


@tangent(stats.norm.logcdf, norm_logcdf)
def norm_logcdf_tangent(dx, y, x, loc, scale):
    return (dx * np.exp(norm_logpdf(x, loc, scale) - y),
            -dx * np.exp(norm_logpdf(x, loc, scale) - y),
            -dx * np.exp(norm_logpdf(x, loc, scale) - y) * (x - loc) / scale)


@rule(stats.norm.sf, norm_sf, called_as=norm_sf)
def norm_sf_rule(dy, y, x, loc, scale):
    return (unbroadcast(-dy * norm_pdf(x, loc, scale), x),
            unbroadcast(dy * norm_pdf(x, loc, scale), loc),
            unbroadcast(dy * norm_pdf(x, loc, scale) * (x - loc) / scale, scale))


@tangent(stats.norm.sf, norm_sf)
def norm_sf_tangent(dx, y, x, loc, scale):
    return (-dx * norm_pdf(x, loc, scale), dx * norm_pdf(x, loc, scale),
            dx * norm_pdf(x, loc, scale) * (x - loc) / scale)


@rule(stats.norm.logsf, norm_logsf, called_as=norm_logsf)
def norm_logsf_rule(dy, y, x, loc, scale):
    # the density over the survival function, in range far in the upper tail
    return (unbroadcast(-dy * np.exp(norm_logpdf(x, loc, scale) - y), x),
            unbroadcast(dy * np.exp(norm_logpdf(x, loc, scale) - y), loc),
            unbroadcast(dy * np.exp(norm_logpdf(x, loc, scale) - y) * (x - loc) / scale,
                        scale))


@tangent(stats.norm.logsf, norm_logsf)
def norm_logsf_tangent(dx, y, x, loc, scale):
    return (-dx * np.exp(norm_logpdf(x, loc, scale) - y),
            dx * np.exp(norm_logpdf(x, loc, scale) - y),
            dx * np.exp(norm_logpdf(x, loc, scale) - y) * (x - loc) / scale)


@rule(stats.norm.ppf, norm_ppf, called_as=norm_ppf)
def norm_ppf_rule(dy, y, q, loc, scale):
    return (unbroadcast(dy / norm_pdf(y, loc, scale), q),
            unbroadcast(dy, loc),
            unbroadcast(dy * (y - loc) / scale, scale))


@tangent(stats.norm.ppf, norm_ppf)
def norm_ppf_tangent(dx, y, q, loc, scale):
    return (dx / norm_pdf(y, loc, scale), dx + 0.0 * (q + loc + scale),
            dx * (y - loc) / scale)


@rule(stats.norm.isf, norm_isf, called_as=norm_isf)
def norm_isf_rule(dy, y, q, loc, scale):
    return (unbroadcast(-dy / norm_pdf(y, loc, scale), q),
            unbroadcast(dy, loc),
            unbroadcast(dy * (y - loc) / scale, scale))


@tangent(stats.norm.isf, norm_isf)
def norm_isf_tangent(dx, y, q, loc, scale):
    return (-dx / norm_pdf(y, loc, scale), dx + 0.0 * (q + loc + scale),
            dx * (y - loc) / scale)


# ---- the exponential distribution ----


@rule(stats.expon.logpdf, expon_logpdf, called_as=expon_logpdf)
def expon_logpdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(-dy / scale, x), unbroadcast(dy / scale, loc),
            unbroadcast(dy * ((x - loc) / scale - 1.0) / scale, scale))


@tangent(stats.expon.logpdf, expon_logpdf)
def expon_logpdf_tangent(dx, y, x, loc, scale):
    return (-dx / scale + 0.0 * (x + loc + scale), dx / scale + 0.0 * (x + loc + scale),
            dx * ((x - loc) / scale - 1.0) / scale)


@rule(stats.expon.pdf, expon_pdf, called_as=expon_pdf)
def expon_pdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(-dy * y / scale, x), unbroadcast(dy * y / scale, loc),
            unbroadcast(dy * y * ((x - loc) / scale - 1.0) / scale, scale))


@tangent(stats.expon.pdf, expon_pdf)
def expon_pdf_tangent(dx, y, x, loc, scale):
    return (-dx * y / scale, dx * y / scale, dx * y * ((x - loc) / scale - 1.0) / scale)


@rule(stats.expon.cdf, expon_cdf, called_as=expon_cdf)
def expon_cdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(dy * expon_pdf(x, loc, scale), x),
            unbroadcast(-dy * expon_pdf(x, loc, scale), loc),
            unbroadcast(-dy * expon_pdf(x, loc, scale) * (x - loc) / scale, scale))


@tangent(stats.expon.cdf, expon_cdf)
def expon_cdf_tangent(dx, y, x, loc, scale):
    return (dx * expon_pdf(x, loc, scale), -dx * expon_pdf(x, loc, scale),
            -dx * expon_pdf(x, loc, scale) * (x - loc) / scale)


# ---- Student's t ----


@rule(stats.t.logpdf, t_logpdf, called_as=t_logpdf)
def t_logpdf_rule(dy, y, x, df, loc, scale):
    return (unbroadcast(-dy * (df + 1.0) * (x - loc) / (df * scale ** 2 + (x - loc) ** 2), x),
            unbroadcast(dy * 0.5 * (special.psi(0.5 * (df + 1.0)) - special.psi(0.5 * df) -
                                    1.0 / df - np.log1p(((x - loc) / scale) ** 2 / df) +
                                    (df + 1.0) * (x - loc) ** 2 /
                                    (df * (df * scale ** 2 + (x - loc) ** 2))), df),
            unbroadcast(dy * (df + 1.0) * (x - loc) / (df * scale ** 2 + (x - loc) ** 2), loc),
            unbroadcast(dy * (df * ((x - loc) ** 2 - scale ** 2) /
                              (df * scale ** 2 + (x - loc) ** 2)) / scale, scale))


@tangent(stats.t.logpdf, t_logpdf)
def t_logpdf_tangent(dx, y, x, df, loc, scale):
    return (-dx * (df + 1.0) * (x - loc) / (df * scale ** 2 + (x - loc) ** 2),
            dx * 0.5 * (special.psi(0.5 * (df + 1.0)) - special.psi(0.5 * df) - 1.0 / df -
                        np.log1p(((x - loc) / scale) ** 2 / df) + (df + 1.0) * (x - loc) ** 2 /
                        (df * (df * scale ** 2 + (x - loc) ** 2))),
            dx * (df + 1.0) * (x - loc) / (df * scale ** 2 + (x - loc) ** 2),
            dx * (df * ((x - loc) ** 2 - scale ** 2) / (df * scale ** 2 + (x - loc) ** 2)) /
            scale)


@rule(stats.t.pdf, t_pdf, called_as=t_pdf)
def t_pdf_rule(dy, y, x, df, loc, scale):
    return (unbroadcast(-dy * y * (df + 1.0) * (x - loc) / (df * scale ** 2 + (x - loc) ** 2),
                        x),
            unbroadcast(dy * y * 0.5 * (special.psi(0.5 * (df + 1.0)) - special.psi(0.5 * df) -
                                        1.0 / df - np.log1p(((x - loc) / scale) ** 2 / df) +
                                        (df + 1.0) * (x - loc) ** 2 /
                                        (df * (df * scale ** 2 + (x - loc) ** 2))), df),
            unbroadcast(dy * y * (df + 1.0) * (x - loc) / (df * scale ** 2 + (x - loc) ** 2),
                        loc),
            unbroadcast(dy * y * (df * ((x - loc) ** 2 - scale ** 2) /
                                  (df * scale ** 2 + (x - loc) ** 2)) / scale, scale))


@tangent(stats.t.pdf, t_pdf)
def t_pdf_tangent(dx, y, x, df, loc, scale):
    return (-dx * y * (df + 1.0) * (x - loc) / (df * scale ** 2 + (x - loc) ** 2),
            dx * y * 0.5 * (special.psi(0.5 * (df + 1.0)) - special.psi(0.5 * df) - 1.0 / df -
                            np.log1p(((x - loc) / scale) ** 2 / df) + (df + 1.0) *
                            (x - loc) ** 2 / (df * (df * scale ** 2 + (x - loc) ** 2))),
            dx * y * (df + 1.0) * (x - loc) / (df * scale ** 2 + (x - loc) ** 2),
            dx * y * (df * ((x - loc) ** 2 - scale ** 2) / (df * scale ** 2 + (x - loc) ** 2)) /
            scale)


# ---- Laplace, logistic, Cauchy: location-scale families on the line ----
# laplace: l'(z) = -sign(z) (0 at the kink z = 0, a subgradient); logistic: l'(z) =
# -tanh(z / 2); cauchy: l'(z) = -2 z / (1 + z^2); each cdf' is its pdf


@rule(stats.laplace.logpdf, laplace_logpdf, called_as=laplace_logpdf)
def laplace_logpdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(-dy * np.sign(x - loc) / scale, x),
            unbroadcast(dy * np.sign(x - loc) / scale, loc),
            unbroadcast(dy * (np.abs(x - loc) / scale - 1.0) / scale, scale))


@tangent(stats.laplace.logpdf, laplace_logpdf)
def laplace_logpdf_tangent(dx, y, x, loc, scale):
    return (-dx * np.sign(x - loc) / scale, dx * np.sign(x - loc) / scale,
            dx * (np.abs(x - loc) / scale - 1.0) / scale)


@rule(stats.laplace.pdf, laplace_pdf, called_as=laplace_pdf)
def laplace_pdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(-dy * y * np.sign(x - loc) / scale, x),
            unbroadcast(dy * y * np.sign(x - loc) / scale, loc),
            unbroadcast(dy * y * (np.abs(x - loc) / scale - 1.0) / scale, scale))


@tangent(stats.laplace.pdf, laplace_pdf)
def laplace_pdf_tangent(dx, y, x, loc, scale):
    return (-dx * y * np.sign(x - loc) / scale, dx * y * np.sign(x - loc) / scale,
            dx * y * (np.abs(x - loc) / scale - 1.0) / scale)


@rule(stats.laplace.cdf, laplace_cdf, called_as=laplace_cdf)
def laplace_cdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(dy * laplace_pdf(x, loc, scale), x),
            unbroadcast(-dy * laplace_pdf(x, loc, scale), loc),
            unbroadcast(-dy * laplace_pdf(x, loc, scale) * (x - loc) / scale, scale))


@tangent(stats.laplace.cdf, laplace_cdf)
def laplace_cdf_tangent(dx, y, x, loc, scale):
    return (dx * laplace_pdf(x, loc, scale), -dx * laplace_pdf(x, loc, scale),
            -dx * laplace_pdf(x, loc, scale) * (x - loc) / scale)


@rule(stats.logistic.logpdf, logistic_logpdf, called_as=logistic_logpdf)
def logistic_logpdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(-dy * np.tanh(0.5 * (x - loc) / scale) / scale, x),
            unbroadcast(dy * np.tanh(0.5 * (x - loc) / scale) / scale, loc),
            unbroadcast(dy * ((x - loc) / scale * np.tanh(0.5 * (x - loc) / scale) - 1.0) /
                        scale, scale))


@tangent(stats.logistic.logpdf, logistic_logpdf)
def logistic_logpdf_tangent(dx, y, x, loc, scale):
    return (-dx * np.tanh(0.5 * (x - loc) / scale) / scale,
            dx * np.tanh(0.5 * (x - loc) / scale) / scale,
            dx * ((x - loc) / scale * np.tanh(0.5 * (x - loc) / scale) - 1.0) / scale)


@rule(stats.logistic.pdf, logistic_pdf, called_as=logistic_pdf)
def logistic_pdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(-dy * y * np.tanh(0.5 * (x - loc) / scale) / scale, x),
            unbroadcast(dy * y * np.tanh(0.5 * (x - loc) / scale) / scale, loc),
            unbroadcast(dy * y * ((x - loc) / scale * np.tanh(0.5 * (x - loc) / scale) - 1.0) /
                        scale, scale))


@tangent(stats.logistic.pdf, logistic_pdf)
def logistic_pdf_tangent(dx, y, x, loc, scale):
    return (-dx * y * np.tanh(0.5 * (x - loc) / scale) / scale,
            dx * y * np.tanh(0.5 * (x - loc) / scale) / scale,
            dx * y * ((x - loc) / scale * np.tanh(0.5 * (x - loc) / scale) - 1.0) / scale)


@rule(stats.logistic.cdf, logistic_cdf, called_as=logistic_cdf)
def logistic_cdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(dy * logistic_pdf(x, loc, scale), x),
            unbroadcast(-dy * logistic_pdf(x, loc, scale), loc),
            unbroadcast(-dy * logistic_pdf(x, loc, scale) * (x - loc) / scale, scale))


@tangent(stats.logistic.cdf, logistic_cdf)
def logistic_cdf_tangent(dx, y, x, loc, scale):
    return (dx * logistic_pdf(x, loc, scale), -dx * logistic_pdf(x, loc, scale),
            -dx * logistic_pdf(x, loc, scale) * (x - loc) / scale)


@rule(stats.cauchy.logpdf, cauchy_logpdf, called_as=cauchy_logpdf)
def cauchy_logpdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(-dy * 2.0 * (x - loc) / (scale ** 2 + (x - loc) ** 2), x),
            unbroadcast(dy * 2.0 * (x - loc) / (scale ** 2 + (x - loc) ** 2), loc),
            unbroadcast(dy * ((x - loc) ** 2 - scale ** 2) /
                        (scale * (scale ** 2 + (x - loc) ** 2)), scale))


@tangent(stats.cauchy.logpdf, cauchy_logpdf)
def cauchy_logpdf_tangent(dx, y, x, loc, scale):
    return (-dx * 2.0 * (x - loc) / (scale ** 2 + (x - loc) ** 2),
            dx * 2.0 * (x - loc) / (scale ** 2 + (x - loc) ** 2),
            dx * ((x - loc) ** 2 - scale ** 2) / (scale * (scale ** 2 + (x - loc) ** 2)))


@rule(stats.cauchy.pdf, cauchy_pdf, called_as=cauchy_pdf)
def cauchy_pdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(-dy * y * 2.0 * (x - loc) / (scale ** 2 + (x - loc) ** 2), x),
            unbroadcast(dy * y * 2.0 * (x - loc) / (scale ** 2 + (x - loc) ** 2), loc),
            unbroadcast(dy * y * ((x - loc) ** 2 - scale ** 2) /
                        (scale * (scale ** 2 + (x - loc) ** 2)), scale))


@tangent(stats.cauchy.pdf, cauchy_pdf)
def cauchy_pdf_tangent(dx, y, x, loc, scale):
    return (-dx * y * 2.0 * (x - loc) / (scale ** 2 + (x - loc) ** 2),
            dx * y * 2.0 * (x - loc) / (scale ** 2 + (x - loc) ** 2),
            dx * y * ((x - loc) ** 2 - scale ** 2) / (scale * (scale ** 2 + (x - loc) ** 2)))


@rule(stats.cauchy.cdf, cauchy_cdf, called_as=cauchy_cdf)
def cauchy_cdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(dy * cauchy_pdf(x, loc, scale), x),
            unbroadcast(-dy * cauchy_pdf(x, loc, scale), loc),
            unbroadcast(-dy * cauchy_pdf(x, loc, scale) * (x - loc) / scale, scale))


@tangent(stats.cauchy.cdf, cauchy_cdf)
def cauchy_cdf_tangent(dx, y, x, loc, scale):
    return (dx * cauchy_pdf(x, loc, scale), -dx * cauchy_pdf(x, loc, scale),
            -dx * cauchy_pdf(x, loc, scale) * (x - loc) / scale)


# ---- chi-squared (gamma of shape df / 2, scale 2 scale): l'(z) = (df/2 - 1) / z - 1/2,
# dl/ddf = (log(z / 2) - psi(df / 2)) / 2, dl/dscale = (z - df) / (2 scale) ----


@rule(stats.chi2.logpdf, chi2_logpdf, called_as=chi2_logpdf)
def chi2_logpdf_rule(dy, y, x, df, loc, scale):
    return (unbroadcast(dy * ((0.5 * df - 1.0) / (x - loc) - 0.5 / scale), x),
            unbroadcast(dy * 0.5 * (np.log(0.5 * (x - loc) / scale) - special.psi(0.5 * df)),
                        df),
            unbroadcast(-dy * ((0.5 * df - 1.0) / (x - loc) - 0.5 / scale), loc),
            unbroadcast(dy * ((x - loc) / scale - df) / (2.0 * scale), scale))


@tangent(stats.chi2.logpdf, chi2_logpdf)
def chi2_logpdf_tangent(dx, y, x, df, loc, scale):
    return (dx * ((0.5 * df - 1.0) / (x - loc) - 0.5 / scale),
            dx * 0.5 * (np.log(0.5 * (x - loc) / scale) - special.psi(0.5 * df)),
            -dx * ((0.5 * df - 1.0) / (x - loc) - 0.5 / scale),
            dx * ((x - loc) / scale - df) / (2.0 * scale))


@rule(stats.chi2.pdf, chi2_pdf, called_as=chi2_pdf)
def chi2_pdf_rule(dy, y, x, df, loc, scale):
    return (unbroadcast(dy * y * ((0.5 * df - 1.0) / (x - loc) - 0.5 / scale), x),
            unbroadcast(dy * y * 0.5 * (np.log(0.5 * (x - loc) / scale) -
                                        special.psi(0.5 * df)), df),
            unbroadcast(-dy * y * ((0.5 * df - 1.0) / (x - loc) - 0.5 / scale), loc),
            unbroadcast(dy * y * ((x - loc) / scale - df) / (2.0 * scale), scale))


@tangent(stats.chi2.pdf, chi2_pdf)
def chi2_pdf_tangent(dx, y, x, df, loc, scale):
    return (dx * y * ((0.5 * df - 1.0) / (x - loc) - 0.5 / scale),
            dx * y * 0.5 * (np.log(0.5 * (x - loc) / scale) - special.psi(0.5 * df)),
            -dx * y * ((0.5 * df - 1.0) / (x - loc) - 0.5 / scale),
            dx * y * ((x - loc) / scale - df) / (2.0 * scale))


# ---- uniform on [loc, loc + scale]: -log(scale) there (ends included, as SciPy), -inf
# outside. As JAX (a `where` between the two): x and loc have gradient 0 everywhere, even at
# the ends; scale has -1 / scale on the closed support and 0 outside it (pdf: -pdf / scale,
# 0 outside, where pdf = 0) ----


@rule(stats.uniform.logpdf, uniform_logpdf, called_as=uniform_logpdf)
def uniform_logpdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(0.0 * dy, x), unbroadcast(0.0 * dy, loc),
            unbroadcast(-dy * (y > -np.inf) / scale, scale))


@tangent(stats.uniform.logpdf, uniform_logpdf)
def uniform_logpdf_tangent(dx, y, x, loc, scale):
    return (0.0 * (dx + x + loc + scale), 0.0 * (dx + x + loc + scale),
            -dx * (y > -np.inf) / scale)


@rule(stats.uniform.pdf, uniform_pdf, called_as=uniform_pdf)
def uniform_pdf_rule(dy, y, x, loc, scale):
    return (unbroadcast(0.0 * dy, x), unbroadcast(0.0 * dy, loc),
            unbroadcast(-dy * y / scale, scale))


@tangent(stats.uniform.pdf, uniform_pdf)
def uniform_pdf_tangent(dx, y, x, loc, scale):
    return (0.0 * (dx + x + loc + scale), 0.0 * (dx + x + loc + scale), -dx * y / scale)


# ---- Poisson: the rate only (k and loc are counts) ----


@rule(stats.poisson.logpmf, poisson_logpmf, called_as=poisson_logpmf,
      no_gradient={"k": _COUNT, "loc": _COUNT})
def poisson_logpmf_rule(dy, y, k, mu, loc):
    return None, unbroadcast(dy * ((k - loc) / mu - 1.0), mu), None


@tangent(stats.poisson.logpmf, poisson_logpmf)
def poisson_logpmf_tangent(dx, y, k, mu, loc):
    return None, dx * ((k - loc) / mu - 1.0), None


# ---- gamma and beta ----


@rule(stats.gamma.logpdf, gamma_logpdf, called_as=gamma_logpdf)
def gamma_logpdf_rule(dy, y, x, a, loc, scale):
    return (unbroadcast(dy * ((a - 1.0) / (x - loc) - 1.0 / scale), x),
            unbroadcast(dy * (np.log((x - loc) / scale) - special.psi(a)), a),
            unbroadcast(-dy * ((a - 1.0) / (x - loc) - 1.0 / scale), loc),
            unbroadcast(dy * ((x - loc) / scale - a) / scale, scale))


@tangent(stats.gamma.logpdf, gamma_logpdf)
def gamma_logpdf_tangent(dx, y, x, a, loc, scale):
    return (dx * ((a - 1.0) / (x - loc) - 1.0 / scale),
            dx * (np.log((x - loc) / scale) - special.psi(a)),
            -dx * ((a - 1.0) / (x - loc) - 1.0 / scale), dx * ((x - loc) / scale - a) / scale)


@rule(stats.beta.logpdf, beta_logpdf, called_as=beta_logpdf)
def beta_logpdf_rule(dy, y, x, a, b, loc, scale):
    return (unbroadcast(dy * ((a - 1.0) / (x - loc) - (b - 1.0) / (scale - x + loc)), x),
            unbroadcast(dy * (np.log((x - loc) / scale) - special.psi(a) +
                              special.psi(a + b)), a),
            unbroadcast(dy * (np.log1p(-(x - loc) / scale) - special.psi(b) +
                              special.psi(a + b)), b),
            unbroadcast(-dy * ((a - 1.0) / (x - loc) - (b - 1.0) / (scale - x + loc)), loc),
            unbroadcast(-dy * (a + b - 1.0 - (b - 1.0) * scale / (scale - x + loc)) / scale,
                        scale))


@tangent(stats.beta.logpdf, beta_logpdf)
def beta_logpdf_tangent(dx, y, x, a, b, loc, scale):
    return (dx * ((a - 1.0) / (x - loc) - (b - 1.0) / (scale - x + loc)),
            dx * (np.log((x - loc) / scale) - special.psi(a) + special.psi(a + b)),
            dx * (np.log1p(-(x - loc) / scale) - special.psi(b) + special.psi(a + b)),
            -dx * ((a - 1.0) / (x - loc) - (b - 1.0) / (scale - x + loc)),
            -dx * (a + b - 1.0 - (b - 1.0) * scale / (scale - x + loc)) / scale)


# ---- probability masses: the rate or probability only (k, n and loc are counts) ----
# binom: dl/dp = m / p - (n - m) / (1 - p), m = k - loc (p inside (0, 1); at p = 0 or 1 the
# one-sided slope is not given: 0 / 0 where m = 0 or m = n); bernoulli is binom with n = 1


@rule(stats.poisson.pmf, poisson_pmf, called_as=poisson_pmf,
      no_gradient={"k": _COUNT, "loc": _COUNT})
def poisson_pmf_rule(dy, y, k, mu, loc):
    return (None, unbroadcast(dy * y * ((k - loc) / mu - 1.0), mu),
            None)


@tangent(stats.poisson.pmf, poisson_pmf)
def poisson_pmf_tangent(dx, y, k, mu, loc):
    return None, dx * y * ((k - loc) / mu - 1.0), None


@rule(stats.binom.logpmf, binom_logpmf, called_as=binom_logpmf,
      no_gradient={"k": _COUNT, "n": _COUNT, "loc": _COUNT})
def binom_logpmf_rule(dy, y, k, n, p, loc):
    return (None, None,
            unbroadcast(dy * ((k - loc) / p - (n - k + loc) / (1.0 - p)), p),
            None)


@tangent(stats.binom.logpmf, binom_logpmf)
def binom_logpmf_tangent(dx, y, k, n, p, loc):
    return (None, None,
            dx * ((k - loc) / p - (n - k + loc) / (1.0 - p)), None)


@rule(stats.binom.pmf, binom_pmf, called_as=binom_pmf,
      no_gradient={"k": _COUNT, "n": _COUNT, "loc": _COUNT})
def binom_pmf_rule(dy, y, k, n, p, loc):
    return (None, None,
            unbroadcast(dy * y * ((k - loc) / p - (n - k + loc) / (1.0 - p)), p),
            None)


@tangent(stats.binom.pmf, binom_pmf)
def binom_pmf_tangent(dx, y, k, n, p, loc):
    return (None, None,
            dx * y * ((k - loc) / p - (n - k + loc) / (1.0 - p)), None)


@rule(stats.bernoulli.logpmf, bernoulli_logpmf, called_as=bernoulli_logpmf,
      no_gradient={"k": _COUNT, "loc": _COUNT})
def bernoulli_logpmf_rule(dy, y, k, p, loc):
    return (None,
            unbroadcast(dy * ((k - loc) / p - (1.0 - k + loc) / (1.0 - p)), p),
            None)


@tangent(stats.bernoulli.logpmf, bernoulli_logpmf)
def bernoulli_logpmf_tangent(dx, y, k, p, loc):
    return (None, dx * ((k - loc) / p - (1.0 - k + loc) / (1.0 - p)),
            None)


@rule(stats.bernoulli.pmf, bernoulli_pmf, called_as=bernoulli_pmf,
      no_gradient={"k": _COUNT, "loc": _COUNT})
def bernoulli_pmf_rule(dy, y, k, p, loc):
    return (None,
            unbroadcast(dy * y * ((k - loc) / p - (1.0 - k + loc) / (1.0 - p)), p),
            None)


@tangent(stats.bernoulli.pmf, bernoulli_pmf)
def bernoulli_pmf_tangent(dx, y, k, p, loc):
    return (None, dx * y * ((k - loc) / p - (1.0 - k + loc) / (1.0 - p)),
            None)


# ---- gamma's and beta's densities: the log densities' gradients times the density ----


@rule(stats.gamma.pdf, gamma_pdf, called_as=gamma_pdf)
def gamma_pdf_rule(dy, y, x, a, loc, scale):
    return (unbroadcast(dy * y * ((a - 1.0) / (x - loc) - 1.0 / scale), x),
            unbroadcast(dy * y * (np.log((x - loc) / scale) - special.psi(a)), a),
            unbroadcast(-dy * y * ((a - 1.0) / (x - loc) - 1.0 / scale), loc),
            unbroadcast(dy * y * ((x - loc) / scale - a) / scale, scale))


@tangent(stats.gamma.pdf, gamma_pdf)
def gamma_pdf_tangent(dx, y, x, a, loc, scale):
    return (dx * y * ((a - 1.0) / (x - loc) - 1.0 / scale),
            dx * y * (np.log((x - loc) / scale) - special.psi(a)),
            -dx * y * ((a - 1.0) / (x - loc) - 1.0 / scale),
            dx * y * ((x - loc) / scale - a) / scale)


@rule(stats.beta.pdf, beta_pdf, called_as=beta_pdf)
def beta_pdf_rule(dy, y, x, a, b, loc, scale):
    return (unbroadcast(dy * y * ((a - 1.0) / (x - loc) - (b - 1.0) / (scale - x + loc)), x),
            unbroadcast(dy * y * (np.log((x - loc) / scale) - special.psi(a) +
                                  special.psi(a + b)), a),
            unbroadcast(dy * y * (np.log1p(-(x - loc) / scale) - special.psi(b) +
                                  special.psi(a + b)), b),
            unbroadcast(-dy * y * ((a - 1.0) / (x - loc) - (b - 1.0) / (scale - x + loc)),
                        loc),
            unbroadcast(-dy * y * (a + b - 1.0 - (b - 1.0) * scale / (scale - x + loc)) /
                        scale, scale))


@tangent(stats.beta.pdf, beta_pdf)
def beta_pdf_tangent(dx, y, x, a, b, loc, scale):
    return (dx * y * ((a - 1.0) / (x - loc) - (b - 1.0) / (scale - x + loc)),
            dx * y * (np.log((x - loc) / scale) - special.psi(a) + special.psi(a + b)),
            dx * y * (np.log1p(-(x - loc) / scale) - special.psi(b) + special.psi(a + b)),
            -dx * y * ((a - 1.0) / (x - loc) - (b - 1.0) / (scale - x + loc)),
            -dx * y * (a + b - 1.0 - (b - 1.0) * scale / (scale - x + loc)) / scale)


# ---- log-normal: with u = log z, dl/dx = -(1 + u / s^2) / (x - loc) = -dl/dloc,
# dl/ds = (u^2 / s^2 - 1) / s, dl/dscale = u / (s^2 scale) ----


@rule(stats.lognorm.logpdf, lognorm_logpdf, called_as=lognorm_logpdf)
def lognorm_logpdf_rule(dy, y, x, s, loc, scale):
    return (unbroadcast(-dy * (1.0 + np.log((x - loc) / scale) / s ** 2) / (x - loc), x),
            unbroadcast(dy * (np.log((x - loc) / scale) ** 2 / s ** 2 - 1.0) / s, s),
            unbroadcast(dy * (1.0 + np.log((x - loc) / scale) / s ** 2) / (x - loc), loc),
            unbroadcast(dy * np.log((x - loc) / scale) / (s ** 2 * scale), scale))


@tangent(stats.lognorm.logpdf, lognorm_logpdf)
def lognorm_logpdf_tangent(dx, y, x, s, loc, scale):
    return (-dx * (1.0 + np.log((x - loc) / scale) / s ** 2) / (x - loc),
            dx * (np.log((x - loc) / scale) ** 2 / s ** 2 - 1.0) / s,
            dx * (1.0 + np.log((x - loc) / scale) / s ** 2) / (x - loc),
            dx * np.log((x - loc) / scale) / (s ** 2 * scale))


@rule(stats.lognorm.pdf, lognorm_pdf, called_as=lognorm_pdf)
def lognorm_pdf_rule(dy, y, x, s, loc, scale):
    return (unbroadcast(-dy * y * (1.0 + np.log((x - loc) / scale) / s ** 2) / (x - loc), x),
            unbroadcast(dy * y * (np.log((x - loc) / scale) ** 2 / s ** 2 - 1.0) / s, s),
            unbroadcast(dy * y * (1.0 + np.log((x - loc) / scale) / s ** 2) / (x - loc), loc),
            unbroadcast(dy * y * np.log((x - loc) / scale) / (s ** 2 * scale), scale))


@tangent(stats.lognorm.pdf, lognorm_pdf)
def lognorm_pdf_tangent(dx, y, x, s, loc, scale):
    return (-dx * y * (1.0 + np.log((x - loc) / scale) / s ** 2) / (x - loc),
            dx * y * (np.log((x - loc) / scale) ** 2 / s ** 2 - 1.0) / s,
            dx * y * (1.0 + np.log((x - loc) / scale) / s ** 2) / (x - loc),
            dx * y * np.log((x - loc) / scale) / (s ** 2 * scale))


# ---- the normal's entropy, log(scale) + log(2 pi e) / 2: loc only shapes it ----


@rule(stats.norm.entropy, norm_entropy, called_as=norm_entropy)
def norm_entropy_rule(dy, y, loc, scale):
    return unbroadcast(0.0 * dy, loc), unbroadcast(dy / scale, scale)


@tangent(stats.norm.entropy, norm_entropy)
def norm_entropy_tangent(dx, y, loc, scale):
    return 0.0 * (dx + loc + scale), dx / scale + 0.0 * loc


# ---- distribution functions in x, loc and scale only: cdf' is the density; the shape
# parameters' (df, a, b) derivatives have no closed form, refused ----


@rule(stats.t.cdf, t_cdf, called_as=t_cdf,
      no_gradient={"df": SHAPE_PARAMETER})
def t_cdf_rule(dy, y, x, df, loc, scale):
    return (unbroadcast(dy * t_pdf(x, df, loc, scale), x), None,
            unbroadcast(-dy * t_pdf(x, df, loc, scale), loc),
            unbroadcast(-dy * t_pdf(x, df, loc, scale) * (x - loc) / scale, scale))


@tangent(stats.t.cdf, t_cdf)
def t_cdf_tangent(dx, y, x, df, loc, scale):
    return (dx * t_pdf(x, df, loc, scale), None,
            -dx * t_pdf(x, df, loc, scale), -dx * t_pdf(x, df, loc, scale) * (x - loc) / scale)


@rule(stats.chi2.cdf, chi2_cdf, called_as=chi2_cdf,
      no_gradient={"df": SHAPE_PARAMETER})
def chi2_cdf_rule(dy, y, x, df, loc, scale):
    return (unbroadcast(dy * chi2_pdf(x, df, loc, scale), x), None,
            unbroadcast(-dy * chi2_pdf(x, df, loc, scale), loc),
            unbroadcast(-dy * chi2_pdf(x, df, loc, scale) * (x - loc) / scale, scale))


@tangent(stats.chi2.cdf, chi2_cdf)
def chi2_cdf_tangent(dx, y, x, df, loc, scale):
    return (dx * chi2_pdf(x, df, loc, scale), None,
            -dx * chi2_pdf(x, df, loc, scale),
            -dx * chi2_pdf(x, df, loc, scale) * (x - loc) / scale)


@rule(stats.gamma.cdf, gamma_cdf, called_as=gamma_cdf,
      no_gradient={"a": SHAPE_PARAMETER})
def gamma_cdf_rule(dy, y, x, a, loc, scale):
    return (unbroadcast(dy * gamma_pdf(x, a, loc, scale), x), None,
            unbroadcast(-dy * gamma_pdf(x, a, loc, scale), loc),
            unbroadcast(-dy * gamma_pdf(x, a, loc, scale) * (x - loc) / scale, scale))


@tangent(stats.gamma.cdf, gamma_cdf)
def gamma_cdf_tangent(dx, y, x, a, loc, scale):
    return (dx * gamma_pdf(x, a, loc, scale), None,
            -dx * gamma_pdf(x, a, loc, scale),
            -dx * gamma_pdf(x, a, loc, scale) * (x - loc) / scale)


@rule(stats.beta.cdf, beta_cdf, called_as=beta_cdf,
      no_gradient={"a": SHAPE_PARAMETER, "b": SHAPE_PARAMETER})
def beta_cdf_rule(dy, y, x, a, b, loc, scale):
    return (unbroadcast(dy * beta_pdf(x, a, b, loc, scale), x), None,
            None, unbroadcast(-dy * beta_pdf(x, a, b, loc, scale), loc),
            unbroadcast(-dy * beta_pdf(x, a, b, loc, scale) * (x - loc) / scale, scale))


@tangent(stats.beta.cdf, beta_cdf)
def beta_cdf_tangent(dx, y, x, a, b, loc, scale):
    return (dx * beta_pdf(x, a, b, loc, scale), None, None,
            -dx * beta_pdf(x, a, b, loc, scale),
            -dx * beta_pdf(x, a, b, loc, scale) * (x - loc) / scale)


# ---- multivariate normal and Dirichlet ----


@rule(stats.multivariate_normal.logpdf, multivariate_normal_logpdf,
      called_as=multivariate_normal_logpdf)
def multivariate_normal_logpdf_rule(dy, y, x, mean, cov):
    return multivariate_normal_grads(dy, x, mean, cov)


@tangent(stats.multivariate_normal.logpdf, multivariate_normal_logpdf)
def multivariate_normal_logpdf_tangent(dx, y, x, mean, cov):
    return (-np.sum(multivariate_normal_solved(x, mean, cov) * dx, axis=-1),
            np.sum(multivariate_normal_solved(x, mean, cov) * dx, axis=-1),
            multivariate_normal_cov_slope(dx, x, mean, cov))


@rule(stats.dirichlet.logpdf, dirichlet_logpdf, called_as=dirichlet_logpdf)
def dirichlet_logpdf_rule(dy, y, x, alpha):
    return dirichlet_grads(dy, x, alpha)


@tangent(stats.dirichlet.logpdf, dirichlet_logpdf)
def dirichlet_logpdf_tangent(dx, y, x, alpha):
    return dirichlet_x_slope(dx, x, alpha), dirichlet_alpha_slope(dx, x, alpha)


# their densities: the log densities' gradients with dy * pdf, tangents times the pdf
@rule(stats.multivariate_normal.pdf, multivariate_normal_pdf,
      called_as=multivariate_normal_pdf)
def multivariate_normal_pdf_rule(dy, y, x, mean, cov):
    return multivariate_normal_grads(dy * y, x, mean, cov)


@tangent(stats.multivariate_normal.pdf, multivariate_normal_pdf)
def multivariate_normal_pdf_tangent(dx, y, x, mean, cov):
    return (-y * np.sum(multivariate_normal_solved(x, mean, cov) * dx, axis=-1),
            y * np.sum(multivariate_normal_solved(x, mean, cov) * dx, axis=-1),
            y * multivariate_normal_cov_slope(dx, x, mean, cov))


@rule(stats.dirichlet.pdf, dirichlet_pdf, called_as=dirichlet_pdf)
def dirichlet_pdf_rule(dy, y, x, alpha):
    return dirichlet_grads(dy * y, x, alpha)


@tangent(stats.dirichlet.pdf, dirichlet_pdf)
def dirichlet_pdf_tangent(dx, y, x, alpha):
    return y * dirichlet_x_slope(dx, x, alpha), y * dirichlet_alpha_slope(dx, x, alpha)


# second order (hvp): the tangents of the gradients' helpers, per argument (dy, then the
# density's); each gives a tuple of gradients, whose tangents add item by item
@tangent(multivariate_normal_grads)
def multivariate_normal_grads_tangent(dt, y, dy, x, mean, cov):
    return (multivariate_normal_grads(dt, x, mean, cov),
            multivariate_normal_grads_along_x(dt, dy, x, mean, cov),
            multivariate_normal_grads_along_mean(dt, dy, x, mean, cov),
            multivariate_normal_grads_along_cov(dt, dy, x, mean, cov))


@tangent(dirichlet_grads)
def dirichlet_grads_tangent(dt, y, dy, x, alpha):
    return (dirichlet_grads(dt, x, alpha), dirichlet_grads_along_x(dt, dy, x, alpha),
            dirichlet_grads_along_alpha(dt, dy, x, alpha))


describe(multivariate_normal_grads, dirichlet_grads, tuple_result=True)
describe(multivariate_normal_grads_along_x, multivariate_normal_grads_along_mean,
         multivariate_normal_grads_along_cov, dirichlet_grads_along_x,
         dirichlet_grads_along_alpha, pure=True)
describe(multivariate_normal_grads,
         multivariate_normal_solved, multivariate_normal_cov_slope, dirichlet_grads,
         dirichlet_x_slope, dirichlet_alpha_slope, pure=True)
