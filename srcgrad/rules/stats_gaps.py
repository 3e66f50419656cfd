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
The records of that shape are written by `rules/stats.py`'s `location_scale` (and
`density`), one line each; those that differ from it (a tangent padded to y's shape) are
written out.
"""

import numpy as np
from scipy import special, stats

from ..runtime import unbroadcast
from ..runtime.stats import norm_logpdf
from ..runtime.stats_extra import poisson_pmf
from ..runtime.stats_gaps import (
    geom_logpmf,
    geom_pmf,
    nbinom_logpmf,
    nbinom_pmf,
    pareto_logpdf,
    pareto_pdf,
    pareto_ppf,
    poisson_cdf,
    truncnorm_log_mass,
    truncnorm_logpdf,
)
from . import describe, rule, tangent
from .stats import density, location_scale

NEEDS = ("scipy.special", "scipy.stats")   # SciPy modules this imports (rules/__init__)

_COUNT = "a count (data), with no gradient"
# pareto's log z, read as log max(z, 1) (0 off the support); truncnorm's phi(a) / Z and
# phi(b) / Z, and those terms where x is inside [a, b] in z
_LOG_Z = "np.log(np.maximum((x - loc) / scale, 1.0))"
_PHI_A, _PHI_B = ("np.exp(norm_logpdf(a) - truncnorm_log_mass(a, b))",
                  "np.exp(norm_logpdf(b) - truncnorm_log_mass(a, b))")
_IN_A, _IN_B = f"(x - loc >= a * scale) * {_PHI_A}", f"(x - loc <= b * scale) * {_PHI_B}"


# ---- the tails and quantiles of expon, cauchy and logistic ----


location_scale("expon", "sf")
location_scale("expon", "logsf")
location_scale("expon", "logcdf")
location_scale("expon", "ppf")
location_scale("expon", "isf")
location_scale("cauchy", "sf")
location_scale("cauchy", "logsf")
location_scale("cauchy", "logcdf")
location_scale("cauchy", "ppf")
location_scale("cauchy", "isf")
location_scale("logistic", "sf")
location_scale("logistic", "logsf")
location_scale("logistic", "logcdf")
location_scale("logistic", "ppf")
location_scale("logistic", "isf")


# ---- uniform's distribution function and quantile: the slope in x is the density, 1/scale on
# the closed support [loc, loc + scale] and 0 off it (JAX's convention at the ends) ----


location_scale("uniform", "cdf")
location_scale("uniform", "ppf", "dy * scale")


# ---- gumbel_r: l'(z) = np.expm1(-z) ----


density("gumbel_r", "dy * np.expm1((loc - x) / scale) / scale",
        "-dy * (1.0 + (x - loc) / scale * np.expm1((loc - x) / scale)) / scale")
location_scale("gumbel_r", "cdf")
location_scale("gumbel_r", "logcdf")
location_scale("gumbel_r", "sf")
location_scale("gumbel_r", "logsf")
location_scale("gumbel_r", "ppf")


# ---- gumbel_l: l'(z) = -np.expm1(z) ----


density("gumbel_l", "dy * (-np.expm1((x - loc) / scale)) / scale",
        "-dy * (1.0 - (x - loc) / scale * np.expm1((x - loc) / scale)) / scale")
location_scale("gumbel_l", "cdf")
location_scale("gumbel_l", "logcdf")
location_scale("gumbel_l", "sf")
location_scale("gumbel_l", "logsf")
location_scale("gumbel_l", "ppf")


# ---- the tails of chi2, gamma, beta and t: the slope in x is the density's (over the value
# for a log); their shape parameters refused ----


location_scale("chi2", "sf", shapes={"df": None})
location_scale("chi2", "logsf", shapes={"df": None})
location_scale("chi2", "logcdf", shapes={"df": None})
location_scale("gamma", "sf", shapes={"a": None})
location_scale("gamma", "logsf", shapes={"a": None})
location_scale("gamma", "logcdf", shapes={"a": None})
location_scale("beta", "sf", shapes={"a": None, "b": None})
location_scale("beta", "logsf", shapes={"a": None, "b": None})
location_scale("beta", "logcdf", shapes={"a": None, "b": None})
location_scale("t", "logcdf", shapes={"df": None})


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


location_scale("pareto", "pdf", "-dy * (b + 1.0) / (x - loc)", "dy * b / scale",
               shapes={"b": "dy * (1.0 / b - np.log((x - loc) / scale))"})
location_scale("pareto", "sf", shapes={"b": f"-dy * y * {_LOG_Z}"})
location_scale("pareto", "cdf", shapes={"b": f"dy * (1.0 - y) * {_LOG_Z}"})
location_scale("pareto", "logsf", shapes={"b": (f"-dy * {_LOG_Z}", f"-dx * {_LOG_Z} + 0.0 * y")})
# d cdf / db = sf log z, over the cdf: exp(logsf - y) log z
location_scale("pareto", "logcdf", shapes={
    "b": f"dy * np.exp(pareto_logsf(x, b, loc, scale) - y) * {_LOG_Z}"})


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


density("vonmises", "-dy * kappa * np.sin((x - loc) / scale) / scale",
        "dy * (kappa * (x - loc) / scale * np.sin((x - loc) / scale) - 1.0) / scale",
        shapes={"kappa": "dy * (np.cos((x - loc) / scale) - "
                          "special.i1e(kappa) / special.i0e(kappa))"})


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


location_scale("truncnorm", "pdf", "-dy * (x - loc) / scale ** 2",
               "dy * (((x - loc) / scale) ** 2 - 1.0) / scale",
               shapes={"a": f"dy * {_PHI_A}", "b": f"-dy * {_PHI_B}"})
location_scale("truncnorm", "cdf", shapes={"a": f"dy * (y - 1.0) * {_IN_A}",
                                            "b": f"-dy * y * {_IN_B}"})
location_scale("truncnorm", "sf", shapes={"a": f"dy * y * {_IN_A}",
                                           "b": f"dy * (1.0 - y) * {_IN_B}"})
location_scale("truncnorm", "logcdf", shapes={"a": f"-dy * np.expm1(-y) * {_IN_A}",
                                               "b": f"-dy * {_IN_B}"})
location_scale("truncnorm", "logsf", shapes={"a": f"dy * {_IN_A}",
                                              "b": f"dy * np.expm1(-y) * {_IN_B}"})


describe(truncnorm_log_mass, pure=True)
