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
whose tangents (below) give their second order (hvp). The records of a location-scale
family are written by `location_scale` (below) from their slope in x, one line each.

Continued (forms in `runtime/stats_extra.py`): t.pdf; laplace, logistic, cauchy (logpdf,
pdf, cdf); chi2 (logpdf, pdf); uniform (logpdf, pdf: JAX's gradient, 0 in x and loc,
-1/scale on the closed support and 0 off it); poisson.pmf, binom and bernoulli (logpmf, pmf:
in mu and p only, their counts refused); gamma, beta and
lognorm densities; norm.entropy; multivariate_normal.pdf and dirichlet.pdf (their log
densities' helpers with dy times the density); t, gamma, beta and chi2 cdf, whose derivative
in x (and loc, scale) is the density, their shape parameters refused: a
pdf is the log density's gradient times the density; each formula sits beside its rules.
"""

import ast
import functools
import inspect
import linecache
import re

import numpy as np
from scipy import special, stats

from ..runtime import stats as runtime_stats
from ..runtime import stats_extra, stats_gaps, stats_more, unbroadcast
from ..runtime.stats import (
    dirichlet_alpha_slope,
    dirichlet_grads,
    dirichlet_grads_along_alpha,
    dirichlet_grads_along_x,
    dirichlet_logpdf,
    dirichlet_x_slope,
    multivariate_normal_cov_slope,
    multivariate_normal_grads,
    multivariate_normal_grads_along_cov,
    multivariate_normal_grads_along_mean,
    multivariate_normal_grads_along_x,
    multivariate_normal_logpdf,
    multivariate_normal_solved,
    norm_pdf,
    poisson_logpmf,
)
from ..runtime.stats_extra import (
    bernoulli_logpmf,
    bernoulli_pmf,
    binom_logpmf,
    binom_pmf,
    dirichlet_pdf,
    multivariate_normal_pdf,
    norm_entropy,
    poisson_pmf,
    uniform_logpdf,
    uniform_pdf,
)
from ..runtime.stats_more import (
    expon_logpdf,
    norm_isf,
    norm_ppf,
)
from . import SHAPE_PARAMETER, describe, rule, tangent

NEEDS = ("scipy.special", "scipy.stats")   # SciPy modules this imports (rules/__init__)

# what the arguments without a gradient are (`no_gradient`: a value being differentiated
# passed as one is refused, naming the call's line)
_COUNT = "a count (data), with no gradient"


# ---- a location-scale family's records, one line each ----

# a distribution function's slope in x: the density (its negative for sf), over the value
# for the logs (exp(logpdf - y), in range in the tails)
_TAILS = {"cdf": ("", "{dist}_pdf({at})"), "sf": ("-", "{dist}_pdf({at})"),
          "logcdf": ("", "np.exp({dist}_logpdf({at}) - y)"),
          "logsf": ("-", "np.exp({dist}_logpdf({at}) - y)")}
_QUANTILE_PAD = " + 0.0 * (q + loc + scale)"   # (a tangent of y's shape)


def location_scale(dist: str, method: str, slope: str | None = None,
                   scale_slope: str | None = None, shapes: dict | None = None) -> None:
    """The records of scipy.stats' `dist.method` (`"norm"`, `"cdf"`), called as the form
    `{dist}_{method}` of `runtime/stats*.py`, for a location-scale family: its adjoint rule
    (`{dist}_{method}_rule`) and tangent, whose source this writes, so that generated code
    reads as if each were written out.

    With z = (x - loc) / scale, a method's derivative in loc is minus that in x, and its
    derivative in scale minus that in x times z. `slope` is the x entry of the adjoint,
    an expression in dy (`"-dy * (x - loc) / scale ** 2"`): given for a log density, whose
    `scale_slope` (the scale entry) has its -1/scale term too; for `pdf`, the log density's
    (the entries are times the density y); derived for cdf, sf, logcdf and logsf (the
    density's, `_TAILS`) and for a quantile y = loc + scale G(q) (ppf, isf: dy/dq = 1 /
    pdf(y), its negative for isf; dy/dloc = 1; dy/dscale = (y - loc) / scale). `shapes`:
    the shape parameters between x and loc, each its entry, a pair (adjoint, tangent)
    where they differ, or None for a shape whose derivative has no closed form (refused).
    The tangent is the adjoint's entries with dx for dy, a quantile's of y's shape."""
    shapes = dict(shapes or {})
    quantile = method in ("ppf", "isf")
    params = ["q" if quantile else "x", *shapes, "loc", "scale"]
    if quantile:
        at = ", ".join(["y", *params[1:]])
        first = slope or f"{'-' if method == 'isf' else ''}dy / {dist}_pdf({at})"
        entries = [first, *shapes.values(), "dy", "dy * (y - loc) / scale"]
    else:
        if slope is None:
            sign, value = _TAILS[method]
            slope = sign + "dy * " + value.format(dist=dist, at=", ".join(params))
        against = _negated(slope)
        entries = [slope, *shapes.values(), against,
                   scale_slope or f"{against} * (x - loc) / scale"]
    if method == "pdf":   # the log density's gradient times the density
        entries = [_along(e, lambda t: re.sub(r"\bdy\b", "dy * y", t, count=1))
                   for e in entries]
    adjoint = [e[0] if isinstance(e, tuple) else e for e in entries]
    tangents = [_along(e, lambda t: re.sub(r"\bdy\b", "dx", t)) for e in entries]
    tangents = [e[1] if isinstance(e, tuple) else e for e in tangents]
    if quantile:
        tangents[0] += _QUANTILE_PAD
        tangents[-2] += _QUANTILE_PAD
    name, args = f"{dist}_{method}", ", ".join(params)
    source = (
        f"def {name}_rule(dy, y, {args}):\n    return ("
        + ", ".join("None" if e is None else f"unbroadcast({e}, {p})"
                    for e, p in zip(adjoint, params, strict=True)) + ")\n\n\n"
        f"def {name}_tangent(dx, y, {args}):\n    return ("
        + ", ".join("None" if e is None else e for e in tangents) + ")\n")
    filename = f"<srcgrad.rules.stats: {name}>"   # (inspect reads the rules' templates here)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    space = {**_names(), "__name__": __name__}
    exec(compile(source, filename, "exec"), space)
    primal, form = getattr(getattr(stats, dist), method), space[name]
    refused = {p: SHAPE_PARAMETER for p, e in shapes.items() if e is None}
    rule(primal, form, called_as=form, **({"no_gradient": refused} if refused else {}))(
        space[f"{name}_rule"])
    tangent(primal, form)(space[f"{name}_tangent"])


def density(dist: str, slope: str, scale_slope: str, shapes: dict | None = None) -> None:
    """The records of `dist.logpdf` and `dist.pdf` (`location_scale`)."""
    for method in ("logpdf", "pdf"):
        location_scale(dist, method, slope, scale_slope, shapes)


def _negated(entry: str) -> str:
    """`entry`, a product or quotient whose first factor is dy or -dy, negated (that
    factor's sign changed: `-dy * f` for `dy * f`)."""
    node = ast.parse(entry, mode="eval").body
    while isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
        node = node.left
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    if not (isinstance(node, ast.Name) and node.id == "dy"):
        raise ValueError(f"a location-scale slope is dy or -dy times or over the rest: {entry}")
    return entry[1:] if entry.startswith("-") else "-" + entry


def _along(entry, change):
    """`change` applied to an entry's text, or to each of a pair's (None stays None)."""
    if isinstance(entry, tuple):
        return tuple(change(e) for e in entry)
    return None if entry is None else change(entry)


@functools.cache
def _names() -> dict:
    """What the written rules read: NumPy, scipy.special, `unbroadcast` and the forms of
    `runtime/stats*.py` (the densities, `truncnorm_log_mass`)."""
    names = {"np": np, "special": special, "unbroadcast": unbroadcast}
    for module in (runtime_stats, stats_extra, stats_more, stats_gaps):
        names.update((n, v) for n, v in vars(module).items() if inspect.isfunction(v)
                     and v.__module__ == module.__name__ and not n.startswith("_"))
    return names

# ---- the normal distribution ----


density("norm", "-dy * (x - loc) / scale ** 2",
        "dy * (((x - loc) / scale) ** 2 - 1.0) / scale")
location_scale("norm", "cdf")
location_scale("norm", "logcdf")
location_scale("norm", "sf")
location_scale("norm", "logsf")


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


location_scale("expon", "pdf", "-dy / scale", "dy * ((x - loc) / scale - 1.0) / scale")
location_scale("expon", "cdf")


# ---- Student's t ----


density("t", "-dy * (df + 1.0) * (x - loc) / (df * scale ** 2 + (x - loc) ** 2)",
        "dy * (df * ((x - loc) ** 2 - scale ** 2) / (df * scale ** 2 + (x - loc) ** 2)) / scale",
        shapes={"df": "dy * 0.5 * (special.psi(0.5 * (df + 1.0)) - special.psi(0.5 * df) - "
                      "1.0 / df - np.log1p(((x - loc) / scale) ** 2 / df) + (df + 1.0) * "
                      "(x - loc) ** 2 / (df * (df * scale ** 2 + (x - loc) ** 2)))"})


# ---- Laplace, logistic, Cauchy: location-scale families on the line ----
# laplace: l'(z) = -sign(z) (0 at the kink z = 0, a subgradient); logistic: l'(z) =
# -tanh(z / 2); cauchy: l'(z) = -2 z / (1 + z^2); each cdf' is its pdf


density("laplace", "-dy * np.sign(x - loc) / scale",
        "dy * (np.abs(x - loc) / scale - 1.0) / scale")
location_scale("laplace", "cdf")
density("logistic", "-dy * np.tanh(0.5 * (x - loc) / scale) / scale",
        "dy * ((x - loc) / scale * np.tanh(0.5 * (x - loc) / scale) - 1.0) / scale")
location_scale("logistic", "cdf")
density("cauchy", "-dy * 2.0 * (x - loc) / (scale ** 2 + (x - loc) ** 2)",
        "dy * ((x - loc) ** 2 - scale ** 2) / (scale * (scale ** 2 + (x - loc) ** 2))")
location_scale("cauchy", "cdf")


# ---- chi-squared (gamma of shape df / 2, scale 2 scale): l'(z) = (df/2 - 1) / z - 1/2,
# dl/ddf = (log(z / 2) - psi(df / 2)) / 2, dl/dscale = (z - df) / (2 scale) ----


density("chi2", "dy * ((0.5 * df - 1.0) / (x - loc) - 0.5 / scale)",
        "dy * ((x - loc) / scale - df) / (2.0 * scale)",
        shapes={"df": "dy * 0.5 * (np.log(0.5 * (x - loc) / scale) - special.psi(0.5 * df))"})


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


density("gamma", "dy * ((a - 1.0) / (x - loc) - 1.0 / scale)",
        "dy * ((x - loc) / scale - a) / scale",
        shapes={"a": "dy * (np.log((x - loc) / scale) - special.psi(a))"})
density("beta", "dy * ((a - 1.0) / (x - loc) - (b - 1.0) / (scale - x + loc))",
        "-dy * (a + b - 1.0 - (b - 1.0) * scale / (scale - x + loc)) / scale",
        shapes={"a": "dy * (np.log((x - loc) / scale) - special.psi(a) + special.psi(a + b))",
                "b": "dy * (np.log1p(-(x - loc) / scale) - special.psi(b) + special.psi(a + b))"})


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


# ---- log-normal: with u = log z, dl/dx = -(1 + u / s^2) / (x - loc) = -dl/dloc,
# dl/ds = (u^2 / s^2 - 1) / s, dl/dscale = u / (s^2 scale) ----


density("lognorm", "-dy * (1.0 + np.log((x - loc) / scale) / s ** 2) / (x - loc)",
        "dy * np.log((x - loc) / scale) / (s ** 2 * scale)",
        shapes={"s": "dy * (np.log((x - loc) / scale) ** 2 / s ** 2 - 1.0) / s"})


# ---- the normal's entropy, log(scale) + log(2 pi e) / 2: loc only shapes it ----


@rule(stats.norm.entropy, norm_entropy, called_as=norm_entropy)
def norm_entropy_rule(dy, y, loc, scale):
    return unbroadcast(0.0 * dy, loc), unbroadcast(dy / scale, scale)


@tangent(stats.norm.entropy, norm_entropy)
def norm_entropy_tangent(dx, y, loc, scale):
    return 0.0 * (dx + loc + scale), dx / scale + 0.0 * loc


# ---- distribution functions in x, loc and scale only: cdf' is the density; the shape
# parameters' (df, a, b) derivatives have no closed form, refused ----


location_scale("t", "cdf", shapes={"df": None})
location_scale("chi2", "cdf", shapes={"df": None})
location_scale("gamma", "cdf", shapes={"a": None})
location_scale("beta", "cdf", shapes={"a": None, "b": None})


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
