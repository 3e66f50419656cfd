"""scipy.stats, continued (srcgrad/rules/stats.py, their compiled forms in
srcgrad/runtime/stats_extra.py): t.pdf; laplace, logistic and cauchy logpdf, pdf and cdf;
chi2.logpdf and pdf; uniform.logpdf and pdf; poisson.pmf, binom and bernoulli logpmf and
pmf; gamma, beta and lognorm densities; norm.entropy; multivariate_normal.pdf and
dirichlet.pdf; t, gamma, beta and chi2 cdf in x, loc and scale (their shape parameters
refused). The rule sweep against central differences,
jvp and hvp against differences, gradients by hand, the uniform's at and beyond the ends of
its support (JAX's), the compiled forms against SciPy's values, and the counts and shapes refused.
"""

import math

import numba
import numpy as np
import pytest
import scipy.stats
from marks import compiles
from scipy import special
from scipy.stats import (
    bernoulli,
    beta,
    binom,
    cauchy,
    chi2,
    dirichlet,
    gamma,
    laplace,
    logistic,
    lognorm,
    multivariate_normal,
    norm,
    poisson,
    t,
    uniform,
)
from sweep import check, check_hvp, check_jvp, domains, parametrize

import srcgrad
from srcgrad.rules import OPS
from srcgrad.runtime import stats_extra as forms

any_, pos, unit, distinct = domains(31)


def records(method, form):
    """A distribution's method as the record's own key, and the form generated code calls
    in its place (tests/test_rules_stats.py)."""
    return next(p for p in OPS if p == method), form


LINE = (*records(laplace.logpdf, forms.laplace_logpdf), *records(laplace.pdf, forms.laplace_pdf),
        *records(laplace.cdf, forms.laplace_cdf),
        *records(logistic.logpdf, forms.logistic_logpdf),
        *records(logistic.pdf, forms.logistic_pdf), *records(logistic.cdf, forms.logistic_cdf),
        *records(cauchy.logpdf, forms.cauchy_logpdf), *records(cauchy.pdf, forms.cauchy_pdf),
        *records(cauchy.cdf, forms.cauchy_cdf), *records(uniform.logpdf, forms.uniform_logpdf),
        *records(uniform.pdf, forms.uniform_pdf))
SHAPED = (*records(t.pdf, forms.t_pdf), *records(chi2.logpdf, forms.chi2_logpdf),
          *records(chi2.pdf, forms.chi2_pdf))

MASSES = (*records(poisson.pmf, forms.poisson_pmf), *records(binom.logpmf, forms.binom_logpmf),
          *records(binom.pmf, forms.binom_pmf),
          *records(bernoulli.logpmf, forms.bernoulli_logpmf),
          *records(bernoulli.pmf, forms.bernoulli_pmf))
SHAPES = (*records(gamma.pdf, forms.gamma_pdf), *records(beta.pdf, forms.beta_pdf),
          *records(lognorm.logpdf, forms.lognorm_logpdf),
          *records(lognorm.pdf, forms.lognorm_pdf), *records(norm.entropy, forms.norm_entropy))
VECTOR = (*records(multivariate_normal.pdf, forms.multivariate_normal_pdf),
          *records(dirichlet.pdf, forms.dirichlet_pdf))

CDFS = (*records(t.cdf, forms.t_cdf), *records(gamma.cdf, forms.gamma_cdf),
        *records(beta.cdf, forms.beta_cdf), *records(chi2.cdf, forms.chi2_cdf))


def on_the_line(x, mu, s):
    # x, mu in [-2, 2]: the uniform's support [mu - 5, mu + s + 5] holds x well inside
    return np.sum(laplace.logpdf(x, mu, s) + laplace.pdf(x, mu, s) * 2.0 +
                  laplace.cdf(x, mu, s) * 0.5 + logistic.logpdf(x, mu, s) * 1.5 +
                  logistic.pdf(x, mu, s) * 0.8 + logistic.cdf(x, mu, s) * 1.2 +
                  cauchy.logpdf(x, mu, s) * 0.9 + cauchy.pdf(x, mu, s) * 1.7 +
                  cauchy.cdf(x, mu, s) * 0.6 + uniform.logpdf(x, mu - 5.0, s + 10.0) * 1.3 +
                  uniform.pdf(x, mu - 5.0, s + 10.0) * 3.0)


def on_the_line_keywords(x, mu, s):
    # keywords, the dotted module path, and the defaults loc = 0, scale = 1
    return np.sum(scipy.stats.laplace.logpdf(x, loc=mu, scale=s) + laplace.pdf(x, scale=s) +
                  laplace.cdf(x) * 0.4 + logistic.logpdf(x=x, scale=s, loc=mu) +
                  logistic.pdf(x, mu) * 0.5 + logistic.cdf(x, scale=s) +
                  cauchy.logpdf(x) * 0.3 + cauchy.pdf(x, loc=mu) + cauchy.cdf(x, mu, scale=s) +
                  uniform.logpdf(x, loc=mu - 5.0, scale=s + 10.0) +
                  uniform.pdf(x, -4.0, scale=s + 10.0) + uniform.logpdf(0.2 * x + 0.5) * 0.7)


def shaped(x, df, mu, s):
    # x - mu >= 0.6: inside chi2's support
    return np.sum(t.pdf(x, df, mu, s) * 2.0 + t.pdf(x, df) + t.pdf(x, df=df, scale=s) +
                  chi2.logpdf(x, df, mu, s) * 0.7 + chi2.pdf(x, df, mu, s) * 1.4 +
                  chi2.logpdf(x, df) + scipy.stats.chi2.pdf(x, df=df, scale=s, loc=mu) * 0.6 +
                  chi2.logpdf(x, df, scale=s) * 0.2)


def masses(mu, p, k, b):
    # k counts (0 to 5), b in {0, 1}
    return np.sum(poisson.pmf(k, mu) * 2.0 + poisson.pmf(k + 2, mu, loc=1) +
                  binom.logpmf(k, 5, p) * 0.3 + binom.pmf(k, n=6, p=p, loc=0) * 1.7 +
                  scipy.stats.binom.logpmf(k + 1, 7, p, 1) + bernoulli.logpmf(b, p) * 0.9 +
                  bernoulli.pmf(b + 1, p, loc=1) * 1.1 + bernoulli.logpmf(k=b, p=p))


def shaped_more(x, a, b, s, mu):
    # x in (0.1, 0.9), mu in (-0.46, -0.14): inside every support
    return np.sum(gamma.pdf(x, a, mu, scale=b) + gamma.pdf(x + 1.0, a) * 0.4 +
                  beta.pdf(x, a, b) * 1.1 + beta.pdf(x, a, b, loc=mu, scale=1.5) +
                  lognorm.logpdf(x, s) * 0.6 + lognorm.pdf(x, s, mu, b) * 1.3 +
                  lognorm.logpdf(x, s=s, loc=mu, scale=a) + norm.entropy(mu, s) * 0.5 +
                  norm.entropy(scale=b) + scipy.stats.norm.entropy())


def cdfs(x, mu, s, df):
    # x in (0.18, 0.82), mu in (-0.46, -0.14): inside every support; df not differentiated
    return np.sum(t.cdf(x, df, mu, s) + t.cdf(x, df=3.0) * 0.5 + gamma.cdf(x, 1.7, mu, s) +
                  gamma.cdf(x, a=df) * 1.3 + beta.cdf(x, 2.0, 3.0, mu, s + 1.0) * 0.8 +
                  beta.cdf(x, 1.5, df) + chi2.cdf(x, df, mu, s) * 1.6 +
                  scipy.stats.chi2.cdf(x, df=4.0, scale=s))


def spd(d, seed):
    m = np.random.default_rng(seed).standard_normal((d, d))
    return m @ m.T + d * np.eye(d)


def vector_densities(x, mean, cov, z, alpha):
    # the Dirichlet's points columns on the simplex (SciPy refuses points off it)
    return 10.0 * np.sum(multivariate_normal.pdf(x, mean, cov)) + \
        np.sum(dirichlet.pdf(special.softmax(z, axis=0), alpha)) + \
        dirichlet.pdf(special.softmax(z[:, 0]), alpha=alpha) * 0.5 + \
        np.sum(multivariate_normal.pdf(0.5 * x, mean=mean, cov=cov)) * 3.0


def vector_compiled(x, mean, cov, z, alpha):
    # one signature of each (numba compiles the helpers once per signature)
    return 10.0 * np.sum(multivariate_normal.pdf(x, mean, cov)) + \
        np.sum(dirichlet.pdf(special.softmax(z, axis=0), alpha))


def counts(*shape):
    return np.arange(int(np.prod(shape))).reshape(shape) % 6


def cases():
    """(id, primals covered, function, arguments, positions, compiled too)."""
    # 0-d; an array with a vector and a number; (3, 1) against (1, 4) and (4,)
    for shapes in [((), (), ()), ((3, 4), (4,), ()), ((3, 1), (1, 4), (4,))]:
        args = (any_(*shapes[0]), any_(*shapes[1]), pos(*shapes[2]))
        yield "line", LINE, on_the_line, args, [0, 1, 2], False
        yield "line-keywords", LINE, on_the_line_keywords, args, [0, 1, 2], False
        yield "shaped", SHAPED, shaped, (pos(*shapes[0]) + 1.0, pos(*shapes[2]) + 0.5,
                                         0.4 * unit(*shapes[1]), pos(*shapes[2])), \
            [0, 1, 2, 3], False
        yield "masses", MASSES, masses, (pos(*shapes[2]), 0.5 + 0.4 * unit(*shapes[1]),
                                         counts(*shapes[0]), counts(*shapes[0]) % 2), \
            [0, 1], False
        yield "shapes", SHAPES, shaped_more, (0.5 + 0.5 * unit(*shapes[0]), pos(*shapes[1]) + 0.5,
                                         pos(*shapes[2]), pos(*shapes[2]),
                                         -0.3 + 0.2 * unit(*shapes[1])), [0, 1, 2, 3, 4], False
        yield "cdfs", CDFS, cdfs, (0.5 + 0.4 * unit(*shapes[0]), -0.3 + 0.2 * unit(*shapes[1]),
                                   pos(*shapes[2]), 2.5), [0, 1, 2], False
    for n in [(4, 3), (3,)]:
        yield "vector", VECTOR, vector_densities, (0.5 * any_(*n), 0.5 * any_(3), spd(3, 2),
                                                   any_(3, 2), pos(3)), [0, 1, 2, 3, 4], False
    yield "masses-compiled", MASSES, masses, (pos(), 0.5 + 0.4 * unit(2, 3), counts(2, 3),
                                              counts(2, 3) % 2), [0, 1], True
    yield "shapes-compiled", SHAPES, shaped_more, (0.5 + 0.5 * unit(5), pos() + 0.5, pos(5), pos(),
                                              -0.3 + 0.2 * unit()), [0, 1, 2, 3, 4], True
    yield "vector-compiled", VECTOR, vector_compiled, (0.5 * any_(4, 3), 0.5 * any_(3),
                                                        spd(3, 4), any_(3, 2), pos(3)), \
        [0, 1, 2, 3, 4], True
    yield "cdfs-compiled", CDFS, cdfs, (0.5 + 0.4 * unit(3, 2), -0.3 + 0.2 * unit(2), pos(),
                                        pos(3, 1) + 1.0), [0, 1, 2], True
    yield "line-compiled", LINE, on_the_line, (any_(3, 4), any_(4), pos()), [0, 1, 2], True
    yield "shaped-compiled", SHAPED, shaped, (pos(2, 3) + 1.0, pos(3) + 0.5, 0.4 * unit(),
                                              pos()), [0, 1, 2, 3], True


CASES = list(cases())


def named(name, last=False):
    """The sweep's case of that id (its last: the broadcast shapes)."""
    found = [c for c in CASES if c[0] == name]
    return found[-1] if last else found[0]


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


def test_jvp_against_differences(jit):
    # compiled: one case (each compiles a function of its own)
    for name in ["shaped-compiled"] if jit else ["line-compiled", "vector-compiled",
                                                  "cdfs-compiled", "shaped-compiled"]:
        check_jvp(named(name), jit)


@pytest.mark.parametrize("name", ["line", "line-keywords", "shaped", "masses", "shapes", "cdfs",
                                  "vector"])
def test_jvp_broadcast_against_differences(name):
    # the last shapes of the sweep (broadcast (3, 1) against (1, 4) and (4,)); vectors
    check_jvp(named(name, last=True), False)


def test_hvp_against_differences_of_the_gradient():
    for name in ["vector-compiled", "cdfs-compiled", "line-compiled", "shaped-compiled",
                 "shapes-compiled"]:
        check_hvp(named(name), False)


def few(x, df, mu, s):
    return np.sum(laplace.pdf(x, mu, s) * logistic.cdf(x, mu, s) + cauchy.logpdf(x, mu, s) +
                  t.pdf(x, df, mu) + chi2.logpdf(x, df, mu, s) ** 2)


@compiles
def test_hvp_compiled_against_differences_of_the_gradient():
    check_hvp(("few", (), few, (pos(4) + 1.0, pos() + 0.5, 0.4 * unit(4), pos()), [0], True),
              True)


# ---- by hand ----


def laplace_at(x, mu, s):
    return laplace.logpdf(x, mu, s)


def logistic_at(x, mu, s):
    return logistic.logpdf(x, mu, s) + logistic.cdf(x, mu, s) * 2.0


def cauchy_at(x, mu, s):
    return cauchy.logpdf(x, mu, s) + cauchy.pdf(x, mu, s) + cauchy.cdf(x, mu, s)


def chi2_at(x, df):
    return chi2.logpdf(x, df) + t.pdf(x, df - 1.0)


def masses_at(mu, p):
    return poisson.pmf(0, mu) + binom.logpmf(2, 5, p) + bernoulli.logpmf(1, p) * 2.0 + \
        bernoulli.logpmf(0, p) * 3.0


def shapes_at(x, a, s, scale):
    return gamma.pdf(x, a) + beta.pdf(x, a, a) + lognorm.logpdf(x, s, scale=scale) + \
        norm.entropy(scale=scale) * 2.0


def vector_at(x, mean, cov, z):
    return multivariate_normal.pdf(x, mean, cov) + dirichlet.pdf(z, np.ones(3))


def test_masses_shapes_and_vectors_by_hand():
    # as Python (the compiled sweep cases run the same rules, in less compile time)
    jit = False
    # d/dmu e^-mu = -e^-mu; binom: 2 / p - 3 / (1 - p); bernoulli: 1 / p, -1 / (1 - p)
    g = srcgrad.grad(masses_at, wrt=(0, 1), jit=jit)(1.5, 0.25)
    np.testing.assert_allclose(g, [-math.exp(-1.5), 8.0 - 4.0 + 8.0 - 4.0], rtol=1e-14)
    # a = 1: gamma.pdf = e^-x, beta.pdf = 1 (d/dx 0; d/da log x + log(1 - x) + 2 (psi(2) -
    # psi(1)) = log x + log(1 - x) + 2); lognorm at x = scale (u = 0): d/dx = -1 / x,
    # d/ds = -1 / s, d/dscale = 0; entropy: 1 / scale
    x = 0.4
    g = srcgrad.grad(shapes_at, wrt=(0, 1, 2, 3), jit=jit)(x, 1.0, 0.7, x)
    want_a = x * math.exp(-x) * 0.0 + gamma.pdf(x, 1.0) * (math.log(x) - special.psi(1.0)) + \
        math.log(x) + math.log1p(-x) + 2.0
    np.testing.assert_allclose(g, [-math.exp(-x) - 1.0 / x, want_a, -1.0 / 0.7, 2.0 / x],
                               rtol=1e-14)
    # mvn at its mean: d/dx 0, d/dmean 0, d/dcov (one dimension) -pdf / (2 c); dirichlet
    # with alpha = 1: the constant 2 on the simplex
    g = srcgrad.grad(vector_at, wrt=(0, 1, 2, 3), jit=jit)(
        np.array([0.3]), np.array([0.3]), np.array([[2.0]]), np.array([0.2, 0.3, 0.5]))
    np.testing.assert_allclose(g[2], [[-1.0 / math.sqrt(4.0 * math.pi) / 4.0]], rtol=1e-14)
    for got in (g[0], g[1], g[3]):
        np.testing.assert_array_equal(got, 0.0)


def binom_count(k, p):
    return np.sum(binom.logpmf(k * 1.0, 5, p))


def binom_trials(n, p):
    return binom.pmf(2, n, p)


def bernoulli_count(k, p):
    return np.sum(bernoulli.logpmf(k * 1.0, p))


def test_counts_are_refused(jit):
    # a count differentiated: no gradient, refused when run (as poisson's)
    for fun, args in [(binom_count, (np.array([1.0, 2.0]), 0.3)), (binom_trials, (5.0, 0.3)),
                      (bernoulli_count, (np.array([0.0, 1.0]), 0.3))]:
        with pytest.raises(srcgrad.MissingRule, match="is a count"):
            srcgrad.grad(fun, wrt=(0, 1), jit=jit)(*args)
        with pytest.raises(srcgrad.MissingRule, match="is a count"):
            srcgrad.jvp(fun, wrt=(0, 1), jit=jit)(*args, (np.ones_like(args[0]), 1.0))


def cdfs_at(x, s):
    return t.cdf(x, 1.0) + gamma.cdf(x, 1.0) * 2.0 + beta.cdf(x, 1.0, 1.0, scale=s) * 3.0 + \
        chi2.cdf(x, 2.0) * 4.0


def test_cdfs_by_hand(jit):
    # t with df = 1 is cauchy: 1 / (pi (1 + x^2)); gamma with a = 1: 1 - e^-x, slope e^-x;
    # beta(1, 1) is uniform: x / s, slope 1 / s, -x / s^2; chi2 with df = 2: e^(-x/2) / 2
    x, s = 0.4, 2.0
    g = srcgrad.grad(cdfs_at, wrt=(0, 1), jit=jit)(x, s)
    np.testing.assert_allclose(g, [1.0 / (math.pi * (1.0 + x * x)) + 2.0 * math.exp(-x) +
                                   3.0 / s + 2.0 * math.exp(-x / 2.0), -3.0 * x / s ** 2],
                               rtol=1e-14)


def t_cdf_df(x, df):
    return np.sum(t.cdf(x, df))


def gamma_cdf_a(x, a):
    return np.sum(gamma.cdf(x, a, scale=2.0))


def beta_cdf_b(x, b):
    return np.sum(beta.cdf(x, 2.0, b))


def chi2_cdf_df(x, df):
    return np.sum(chi2.cdf(x, df=df))


def test_shape_parameters_of_the_cdfs_are_refused(jit):
    # no closed form: refused when run, never a zero gradient; x alone is differentiated
    x = np.array([0.3, 0.6])
    for fun in (t_cdf_df, gamma_cdf_a, beta_cdf_b, chi2_cdf_df):
        with pytest.raises(srcgrad.MissingRule, match="no closed form"):
            srcgrad.grad(fun, wrt=(0, 1), jit=jit)(x, 2.5)
        with pytest.raises(srcgrad.MissingRule, match="no closed form"):
            srcgrad.jvp(fun, wrt=1, jit=jit)(x, 2.5, 1.0)
    assert srcgrad.grad(beta_cdf_b, jit=jit)(x, 2.5) == pytest.approx(
        beta.pdf(x, 2.0, 2.5), rel=1e-14)


def test_by_hand(jit):
    # laplace: d/dx logpdf = -sign(x - mu) / s, d/dmu its negative, d/ds (|z| - 1) / s
    g = srcgrad.grad(laplace_at, wrt=(0, 1, 2), jit=jit)
    np.testing.assert_allclose(g(1.0, 0.0, 2.0), [-0.5, 0.5, -0.25], rtol=1e-15)
    np.testing.assert_allclose(g(-3.0, 1.0, 2.0), [0.5, -0.5, 0.5], rtol=1e-15)
    # logistic at z = log 3: expit = 3/4, logpdf' = 1 - 2 expit = -1/2, cdf' = 3/16;
    # in s (= 1): -(1 + z l'(z)) for logpdf, -pdf z for cdf
    z = math.log(3.0)
    g = srcgrad.grad(logistic_at, wrt=(0, 1, 2), jit=jit)(z + 0.5, 0.5, 1.0)
    np.testing.assert_allclose(g, [-0.5 + 2 * 3 / 16, 0.5 - 2 * 3 / 16,
                                   -(1 - 0.5 * z) - 2 * 3 / 16 * z], rtol=1e-14)
    # cauchy at z = 1 (s = 1): logpdf' = -1, pdf = 1 / (2 pi), pdf' = -pdf, cdf' = pdf;
    # in s: (z^2 - 1) / (1 + z^2) = 0, pdf * 0, -pdf z
    p = 1.0 / (2.0 * math.pi)
    g = srcgrad.grad(cauchy_at, wrt=(0, 1, 2), jit=jit)(1.25, 0.25, 1.0)
    np.testing.assert_allclose(g, [-1.0 - p + p, 1.0 + p - p, -p], rtol=1e-14)
    # chi2 with df = 2 is expon of scale 2: logpdf' = -1/2; d/ddf at x = 2 is
    # (log(x / 2) - psi(1)) / 2 = euler_gamma / 2; t with df = 1 is cauchy, whose pdf'
    # at 2 is -2 * 2 / (pi * 25), and d/ddf of its pdf adds in the second slot
    g = srcgrad.grad(chi2_at, wrt=(0, 1), jit=jit)(2.0, 2.0)
    dpdf_ddf = scipy.stats.t.pdf(2.0, 1.0) * 0.5 * (
        scipy.special.psi(1.0) - scipy.special.psi(0.5) - 1.0 - math.log(5.0) + 2.0 * 4.0 / 5.0)
    np.testing.assert_allclose(g, [-0.5 - 4.0 / (math.pi * 25.0),
                                   0.5 * np.euler_gamma + dpdf_ddf], rtol=1e-14)


def uniform_at(x, lo, s):
    return uniform.logpdf(x, lo, s) + uniform.pdf(x, lo, s) * 2.0


@pytest.mark.parametrize("x,inside", [(0.7, True), (-0.5, True), (1.5, True), (-0.6, False),
                                      (1.6, False)])
def test_uniform_at_and_beyond_the_ends_of_its_support(x, inside, jit):
    # support [-0.5, 1.5] (ends included, as SciPy): x and loc have gradient 0 everywhere;
    # scale -1 / s from logpdf and -2 / s^2 from pdf on it, 0 off it (JAX's where)
    g = srcgrad.grad(uniform_at, wrt=(0, 1, 2), jit=jit)(x, -0.5, 2.0)
    want = -1.0 / 2.0 - 2.0 / 4.0 if inside else 0.0
    np.testing.assert_array_equal(g, [0.0, 0.0, want])
    value, slope = srcgrad.jvp(uniform_at, wrt=(0, 1, 2), jit=jit)(x, -0.5, 2.0,
                                                                  (1.0, 0.3, 0.7))
    assert value == uniform_at(x, -0.5, 2.0)
    assert slope == 0.7 * want


# ---- the compiled forms ----


@numba.njit
def _compiled_scalars(x, mu, s, df):
    return (forms.t_pdf(x, df, mu, s), forms.t_pdf(x, df),
            forms.laplace_logpdf(x, mu, s), forms.laplace_pdf(x, scale=s),
            forms.laplace_cdf(x, mu, s), forms.logistic_logpdf(x, mu, s),
            forms.logistic_pdf(x, mu), forms.logistic_cdf(x, mu, s),
            forms.cauchy_logpdf(x, mu, s), forms.cauchy_pdf(x, mu, s), forms.cauchy_cdf(x, s),
            forms.chi2_logpdf(x, df, mu, s), forms.chi2_pdf(x, df, scale=s),
            forms.uniform_logpdf(x, mu, s), forms.uniform_pdf(x, loc=mu, scale=s),
            forms.uniform_logpdf(x))


def _scipy_scalars(x, mu, s, df):
    return (t.pdf(x, df, mu, s), t.pdf(x, df), laplace.logpdf(x, mu, s),
            laplace.pdf(x, scale=s), laplace.cdf(x, mu, s), logistic.logpdf(x, mu, s),
            logistic.pdf(x, mu), logistic.cdf(x, mu, s), cauchy.logpdf(x, mu, s),
            cauchy.pdf(x, mu, s), cauchy.cdf(x, s), chi2.logpdf(x, df, mu, s),
            chi2.pdf(x, df, scale=s), uniform.logpdf(x, mu, s), uniform.pdf(x, loc=mu, scale=s),
            uniform.logpdf(x))


@numba.njit
def _compiled_arrays(x, mu, s, df):
    return (forms.t_pdf(x, df, mu, s), forms.laplace_logpdf(x, mu, s),
            forms.logistic_cdf(x, mu), forms.cauchy_pdf(x, mu, s), forms.chi2_logpdf(x, df, mu),
            forms.uniform_pdf(x, mu, s))


@compiles
def test_compiled_forms_give_scipys_values(rng):
    # inside, the ends of the uniform's and chi2's supports, beyond them, far in the tails,
    # a scale or df out of range (NaN)
    for point in [(0.3, 0.1, 1.2, 2.5), (-0.5, 0.2, 0.5, 0.7), (0.1, 0.1, 1.0, 2.0),
                  (1.1, 0.1, 1.0, 1.0), (0.1, 0.1, 1.0, 3.0), (-0.3, 0.1, 1.0, 4.0),
                  (40.0, 0.0, 1.0, 3.0), (-40.0, 0.0, 2.0, 1.5), (0.5, 0.0, -1.0, 2.0),
                  (0.5, 0.0, 1.0, -1.0)]:
        for got, want in zip(_compiled_scalars(*point), _scipy_scalars(*point), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-13, err_msg=str(point))
    x, mu, s, df = rng.uniform(-1.0, 3.0, (3, 4)), rng.uniform(-0.5, 0.5, 4), 1.3, 2.5
    want = (t.pdf(x, df, mu, s), laplace.logpdf(x, mu, s), logistic.cdf(x, mu),
            cauchy.pdf(x, mu, s), chi2.logpdf(x, df, mu), uniform.pdf(x, mu, s))
    for g, w in zip(_compiled_arrays(x, mu, s, df), want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-13)


@numba.njit
def _compiled_more(k, n, p, x, a, b, s):
    return (forms.poisson_pmf(k, a), forms.poisson_pmf(k, a, 1), forms.binom_logpmf(k, n, p),
            forms.binom_pmf(k, n, p, loc=1), forms.bernoulli_logpmf(k, p),
            forms.bernoulli_pmf(k, p, -1), forms.gamma_pdf(x, a, 0.1, s), forms.beta_pdf(x, a, b),
            forms.lognorm_logpdf(x, s, -0.1, 1.5), forms.lognorm_pdf(x, s),
            forms.norm_entropy(scale=s), forms.norm_entropy(0.3, s), forms.norm_entropy())


def _scipy_more(k, n, p, x, a, b, s):
    return (poisson.pmf(k, a), poisson.pmf(k, a, 1), binom.logpmf(k, n, p),
            binom.pmf(k, n, p, loc=1), bernoulli.logpmf(k, p), bernoulli.pmf(k, p, -1),
            gamma.pdf(x, a, 0.1, s), beta.pdf(x, a, b), lognorm.logpdf(x, s, -0.1, 1.5),
            lognorm.pdf(x, s), norm.entropy(scale=s), norm.entropy(0.3, s), norm.entropy())


@numba.njit
def _compiled_more_arrays(k, p, s, x, mean, cov, z, alpha):
    return (forms.binom_logpmf(k, 5, p), forms.norm_entropy(scale=s),
            forms.multivariate_normal_pdf(x, mean, cov), forms.dirichlet_pdf(z, alpha))


@compiles
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_compiled_forms_of_the_masses_and_shapes_give_scipys_values(rng):
    # inside; k above n, not whole, at p = 0; x below the supports; scale, p out of range
    for point in [(0.0, 3.0, 0.3, 0.4, 1.5, 2.0, 0.8), (1.0, 3.0, 0.3, 0.4, 1.5, 2.0, 0.8),
                  (2.0, 3.0, 0.7, 1.4, 0.5, 2.0, -0.8), (4.0, 3.0, 1.3, -0.4, 1.5, 2.0, 0.8),
                  (1.5, 3.5, 0.3, 0.4, 1.5, 2.0, 0.8), (0.0, 3.0, 0.0, 0.4, 1.5, 2.0, 0.8)]:
        for got, want in zip(_compiled_more(*point), _scipy_more(*point), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-13, err_msg=str(point))
    k, p, s = np.array([0.0, 1.0, 2.0, 5.0]), np.array([[0.2], [0.7]]), np.array([1.0, 2.0])
    x, mean, cov = rng.standard_normal((4, 3)), rng.standard_normal(3), spd(3, 1)
    z, alpha = np.array([0.2, 0.3, 0.5]), np.array([1.5, 2.0, 3.0])
    want = (binom.logpmf(k, 5, p), norm.entropy(scale=s), multivariate_normal.pdf(x, mean, cov),
            dirichlet.pdf(z, alpha))
    for g, w in zip(_compiled_more_arrays(k, p, s, x, mean, cov, z, alpha), want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12)


@numba.njit
def _compiled_cdfs(x, a, b, loc, s):
    return (forms.t_cdf(x, a, loc, s), forms.t_cdf(x, a), forms.gamma_cdf(x, a, loc, s),
            forms.gamma_cdf(x, a), forms.beta_cdf(x, a, b, loc, s), forms.beta_cdf(x, a, b),
            forms.chi2_cdf(x, a, loc, s), forms.chi2_cdf(x, a, scale=s))


def _scipy_cdfs(x, a, b, loc, s):
    return (t.cdf(x, a, loc, s), t.cdf(x, a), gamma.cdf(x, a, loc, s), gamma.cdf(x, a),
            beta.cdf(x, a, b, loc, s), beta.cdf(x, a, b), chi2.cdf(x, a, loc, s),
            chi2.cdf(x, a, scale=s))


@compiles
def test_compiled_cdfs_give_scipys_values():
    # inside; below and above the supports; at their ends; scale out of range; far out
    for point in [(0.3, 2.5, 1.5, 0.1, 1.2), (-0.5, 0.7, 2.0, 0.0, 0.5),
                  (1.5, 3.0, 2.0, 0.2, 1.0), (0.0, 1.0, 1.0, 0.0, 1.0),
                  (3.0, 2.0, 2.0, -1.0, -1.0), (40.0, 2.0, 3.0, 0.0, 2.0)]:
        for got, want in zip(_compiled_cdfs(*point), _scipy_cdfs(*point), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-13, err_msg=str(point))
    x = np.linspace(-0.5, 1.5, 9).reshape(3, 3)
    np.testing.assert_allclose(_compiled_cdfs(x, 2.5, 1.5, np.zeros(3), 1.2),
                               _scipy_cdfs(x, 2.5, 1.5, np.zeros(3), 1.2), rtol=1e-13)
