"""scipy.stats densities (srcgrad/rules/stats.py, their compiled forms in
srcgrad/runtime/stats.py): the rule sweep's cases, gradients by hand, forward mode against
central differences, the compiled forms against SciPy's values, and what is refused.
"""

import numba
import numpy as np
import pytest
import scipy.stats
from marks import compiles
from scipy import special
from scipy.stats import beta, dirichlet, gamma, multivariate_normal, norm, poisson, t
from sweep import check, domains, parametrize

import srcgrad
from srcgrad.rules import OPS
from srcgrad.runtime import stats as forms

any_, pos, unit, distinct = domains(11)


def records(method, form):
    """A distribution's method as the record's own key (each access makes a new bound
    method, equal to it: the sweep's coverage counts by identity), and the form generated
    code calls in its place, which shares its rules."""
    return next(p for p in OPS if p == method), form


NORM = (*records(norm.logpdf, forms.norm_logpdf), *records(norm.pdf, forms.norm_pdf),
        *records(norm.cdf, forms.norm_cdf), *records(norm.logcdf, forms.norm_logcdf))
T, POISSON = records(t.logpdf, forms.t_logpdf), records(poisson.logpmf, forms.poisson_logpmf)
GAMMA, BETA = records(gamma.logpdf, forms.gamma_logpdf), records(beta.logpdf, forms.beta_logpdf)
MVN = records(multivariate_normal.logpdf, forms.multivariate_normal_logpdf)
DIRICHLET = records(dirichlet.logpdf, forms.dirichlet_logpdf)


def norm_positional(x, mu, s):
    return np.sum(norm.logpdf(x, mu, s) + norm.pdf(x, mu, s) * 2.0 +
                  norm.cdf(x, mu, s) * 0.5 + norm.logcdf(x, mu, s) * 1.5)


def norm_keywords(x, mu, s):
    # keywords, the dotted module path, and the defaults loc = 0, scale = 1
    return np.sum(scipy.stats.norm.logpdf(x, loc=mu, scale=s) + norm.pdf(x, scale=s) +
                  norm.cdf(x, mu) * 0.5 + norm.logcdf(x=x, scale=s, loc=mu) +
                  norm.logpdf(x) * 0.3)


def others(x, df, mu, a, b):
    # x in (0, 1) serves every density: t's and gamma's (with loc) and beta's
    k = np.arange(x.size).reshape(x.shape) % 4
    return np.sum(t.logpdf(x, df, 0.2, 1.3) + t.logpdf(x, df) * 0.5 +
                  poisson.logpmf(k, mu) * 0.7 + poisson.logpmf(k + 2, mu, loc=1) +
                  gamma.logpdf(x, a, -0.5, scale=b) + gamma.logpdf(x + 1.0, a) * 0.4 +
                  beta.logpdf(x, a, b) * 1.1 + beta.logpdf(x, a, b, loc=-0.2, scale=1.5))


def t_full(x, df, loc, scale):
    return np.sum(t.logpdf(x, df, loc, scale))


def gamma_full(x, a, loc, scale):
    return np.sum(gamma.logpdf(x, a, loc, scale))


def beta_full(x, a, b, loc, scale):
    return np.sum(beta.logpdf(x, a, b, loc, scale))


def poisson_rate(mu, k):
    return np.sum(poisson.logpmf(k, mu))


def mvn(x, mean, cov):
    return np.sum(multivariate_normal.logpdf(x, mean, cov))


def mvn_keywords(x, mean, cov):
    return multivariate_normal.logpdf(x, mean=mean, cov=cov) * 1.3


def spd(d, seed):
    m = np.random.default_rng(seed).standard_normal((d, d))
    return m @ m.T + d * np.eye(d)


def dirichlet_of_softmax(z, alpha):
    # x on the simplex, so that differences in z stay there (SciPy refuses points off it)
    return dirichlet.logpdf(special.softmax(z), alpha)


def dirichlet_columns(z, alpha):
    return np.sum(dirichlet.logpdf(special.softmax(z, axis=0), alpha) ** 2)


def dirichlet_alpha(alpha, x):
    return np.sum(dirichlet.logpdf(x, alpha))


def in_01(*shape):
    return 0.5 + 0.4 * unit(*shape)


def cases():
    """(id, primals covered, function, arguments, positions, compiled too)."""
    for shapes in [((), (), ()), ((5,), (5,), ()), ((3, 4), (4,), ()), ((3, 1), (1, 4), (4,))]:
        args = (any_(*shapes[0]), any_(*shapes[1]), pos(*shapes[2]))
        yield "norm-positional", NORM, norm_positional, args, [0, 1, 2], False
        yield "norm-keywords", NORM, norm_keywords, args, [0, 1, 2], False
    yield "norm-all", NORM, norm_positional, (any_(3, 4), any_(4), pos()), [0, 1, 2], True
    yield "norm-keywords-compiled", NORM, norm_keywords, (any_(3), any_(), pos(3)), \
        [0, 1, 2], True
    for shape in [(), (6,), (2, 3)]:
        yield "t", T, t_full, (any_(*shape), pos(), any_(), pos()), [0, 1, 2, 3], \
            False
        yield "gamma", GAMMA, gamma_full, (pos(*shape) + 1.0, pos(), unit(), pos()), \
            [0, 1, 2, 3], False
        yield "beta", BETA, beta_full, (in_01(*shape), pos(), pos(), -0.3 + 0.1 * unit(),
                                              1.5 + 0.2 * unit()), [0, 1, 2, 3, 4], False
    yield "poisson", POISSON, poisson_rate, (pos(5), np.array([0, 1, 2, 5, 3])), [0], False
    yield "others", T + POISSON + GAMMA + BETA, others, \
        (in_01(2, 3), pos(), pos(2, 3), pos() + 1.0, pos(3)), [0, 1, 2, 3, 4], True
    for shape in [(3,), (4, 3)]:
        yield "multivariate_normal", MVN, mvn, (any_(*shape), any_(3), spd(3, 1)), \
            [0, 1, 2], False
    yield "multivariate_normal-keywords", MVN, mvn_keywords, \
        (any_(2), any_(2), spd(2, 2)), [0, 1, 2], False
    yield "multivariate_normal-stack", MVN, mvn, (any_(5, 3), any_(3), spd(3, 3)), \
        [0, 1, 2], True
    yield "dirichlet", DIRICHLET, dirichlet_of_softmax, (any_(4), pos(4)), [0, 1], False
    yield "dirichlet-columns", DIRICHLET, dirichlet_columns, (any_(3, 5), pos(3)), \
        [0, 1], True
    yield "dirichlet-alpha", DIRICHLET, dirichlet_alpha, \
        (pos(3), special.softmax(any_(3, 4), axis=0)), [0], False


CASES = list(cases())


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


# ---- by hand ----


def norm_at(x, mu, s):
    return norm.logpdf(x, mu, s)


def test_normal_by_hand(jit):
    # d/dx = -(x - mu)/s^2 = -d/dmu, d/ds = ((x - mu)^2/s^2 - 1)/s: at (2, 0.5, 1.5)
    g = srcgrad.grad(norm_at, wrt=(0, 1, 2), jit=jit)(2.0, 0.5, 1.5)
    np.testing.assert_allclose(g, (-1.5 / 2.25, 1.5 / 2.25, (1.0 - 1.0) / 1.5), atol=1e-15)


def poisson_counts(mu, k):
    return np.sum(poisson.logpmf(k, mu))


def dirichlet_plain(x, alpha):
    return dirichlet.logpdf(x, alpha)


def test_poisson_gamma_dirichlet_by_hand(jit):
    # d/dmu sum(k log mu - mu - log k!) = sum(k)/mu - n; k = 0 counts too (xlogy(0, mu))
    k = np.array([0, 3, 1, 4])
    assert srcgrad.grad(poisson_counts, jit=jit)(2.0, k) == pytest.approx(8 / 2.0 - 4)
    # dirichlet: (alpha - 1)/x in x, psi(sum alpha) - psi(alpha) + log x in alpha
    x, alpha = np.array([0.2, 0.3, 0.5]), np.array([1.5, 2.0, 4.0])
    gx, ga = srcgrad.grad(dirichlet_plain, wrt=(0, 1), jit=jit)(x, alpha)
    np.testing.assert_allclose(gx, (alpha - 1.0) / x, rtol=1e-14)
    np.testing.assert_allclose(ga, special.psi(7.5) - special.psi(alpha) + np.log(x),
                               rtol=1e-13)


def test_multivariate_normal_by_hand(jit):
    # identity covariance: d/dx = -(x - mean), d/dcov = ((x-m)(x-m)^T - I)/2 on the lower
    # triangle (off-diagonal entries twice: the one entry read stands for two)
    x, mean = np.array([1.0, 2.0]), np.array([0.5, -1.0])
    gx, gm, gc = srcgrad.grad(mvn, wrt=(0, 1, 2), jit=jit)(x, mean, np.eye(2))
    r = x - mean
    np.testing.assert_allclose(gx, -r, rtol=1e-14)
    np.testing.assert_allclose(gm, r, rtol=1e-14)
    np.testing.assert_allclose(gc, [[(r[0] ** 2 - 1) / 2, 0.0], [r[0] * r[1], (r[1] ** 2 - 1) / 2]],
                               rtol=1e-14, atol=1e-15)


# ---- forward mode ----


def everything(x, mu, s, df, a, b):
    return norm_positional(x, mu, s) + norm_keywords(x, mu, s) + \
        others(0.5 + 0.4 * np.tanh(x), df, s, a, b + 0.5) + t_full(x, df, mu, s)


def test_jvp_against_differences(jit, rng):
    args = [rng.uniform(-0.8, 0.8, (2, 3)), 0.3, rng.uniform(0.5, 2.0, (2, 3)), 2.5, 1.7,
            rng.uniform(0.5, 2.0, 3)]
    dirs = [rng.standard_normal(np.shape(a)) if np.ndim(a) else 0.7 for a in args]
    h = 1e-6
    slope = srcgrad.jvp(everything, wrt=(0, 1, 2, 3, 4, 5), jit=jit)(*args, tuple(dirs))[1]
    up = everything(*[a + h * d for a, d in zip(args, dirs, strict=True)])
    down = everything(*[a - h * d for a, d in zip(args, dirs, strict=True)])
    assert slope == pytest.approx((up - down) / (2 * h), rel=1e-6)


def mvn_and_dirichlet(x, mean, cov, z, alpha):
    return mvn(x, mean, cov) + dirichlet_columns(z, alpha) + dirichlet_of_softmax(z[:, 0], alpha)


def test_jvp_of_the_vector_densities(jit, rng):
    args = [rng.standard_normal((4, 3)), rng.standard_normal(3), spd(3, 5),
            rng.standard_normal((3, 2)), rng.uniform(0.5, 2.0, 3)]
    dirs = [rng.standard_normal(np.shape(a)) for a in args]
    h = 1e-6
    slope = srcgrad.jvp(mvn_and_dirichlet, wrt=(0, 1, 2, 3, 4), jit=jit)(*args, tuple(dirs))[1]
    up = mvn_and_dirichlet(*[a + h * d for a, d in zip(args, dirs, strict=True)])
    down = mvn_and_dirichlet(*[a - h * d for a, d in zip(args, dirs, strict=True)])
    assert slope == pytest.approx((up - down) / (2 * h), rel=1e-6)


def test_hvp_of_the_normal_against_differences_of_the_gradient(rng):
    x, dx = rng.standard_normal(4), rng.standard_normal(4)
    h = 1e-6
    grad = srcgrad.grad(norm_positional, jit=False)
    np.testing.assert_allclose(srcgrad.hvp(norm_positional, jit=False)(x, 0.2, 1.3, dx),
                               (grad(x + h * dx, 0.2, 1.3) - grad(x - h * dx, 0.2, 1.3)) /
                               (2 * h), rtol=1e-5, atol=1e-7)


def densities(x, mean, cov, z, alpha):
    # squared, so that the cotangents the densities' gradients get vary too; z holds two
    # coordinates of each of four points on the 3-simplex (the third is implied)
    return 0.1 * np.sum(multivariate_normal.logpdf(x, mean, cov) ** 2) + \
        np.sum(dirichlet.logpdf(z, alpha) ** 2)


def test_hvp_of_the_vector_densities_against_differences_of_the_gradient(jit, rng):
    args = [rng.standard_normal((4, 3)), rng.standard_normal(3), spd(3, 7),
            rng.uniform(0.15, 0.4, (2, 4)), rng.uniform(0.5, 2.0, 3)]
    dirs = tuple(rng.standard_normal(np.shape(a)) for a in args)   # cov's: any, not symmetric
    wrt = (0, 1, 2, 3, 4)
    got = srcgrad.hvp(densities, wrt=wrt, jit=jit)(*args, dirs)
    grad, h = srcgrad.grad(densities, wrt=wrt, jit=False), 1e-6
    up = grad(*[a + h * d for a, d in zip(args, dirs, strict=True)])
    down = grad(*[a - h * d for a, d in zip(args, dirs, strict=True)])
    for g, u, d in zip(got, up, down, strict=True):
        np.testing.assert_allclose(g, (u - d) / (2 * h), rtol=1e-5, atol=1e-6)


# ---- the compiled forms ----


@numba.njit
def _compiled_scalars(x, mu, s):
    return (forms.norm_logpdf(x, mu, s), forms.norm_pdf(x, scale=s), forms.norm_cdf(x, mu),
            forms.norm_logcdf(x), forms.t_logpdf(x, 3.5, mu, s), forms.poisson_logpmf(3, s),
            forms.poisson_logpmf(3, s, 1), forms.gamma_logpdf(x, 2.5, mu, s),
            forms.beta_logpdf(x, 2.5, 1.5, loc=mu, scale=s))


def _scipy_scalars(x, mu, s):
    return (norm.logpdf(x, mu, s), norm.pdf(x, scale=s), norm.cdf(x, mu), norm.logcdf(x),
            t.logpdf(x, 3.5, mu, s), poisson.logpmf(3, s), poisson.logpmf(3, s, 1),
            gamma.logpdf(x, 2.5, mu, s), beta.logpdf(x, 2.5, 1.5, loc=mu, scale=s))


@numba.njit
def _compiled_arrays(x, mu, s, k, alpha, mean, cov, points):
    return (forms.norm_logpdf(x, mu, s), forms.norm_cdf(x, mu, s), forms.t_logpdf(x, s, mu),
            forms.poisson_logpmf(k, s), forms.gamma_logpdf(x, s), forms.beta_logpdf(x, s, 2.0),
            forms.multivariate_normal_logpdf(points, mean, cov),
            forms.multivariate_normal_logpdf(points[0], mean, cov),
            forms.dirichlet_logpdf(special.softmax(points.T, axis=0), alpha),
            forms.dirichlet_logpdf(special.softmax(points[0]), alpha))


@compiles
def test_compiled_forms_give_scipys_values(rng):
    for point in [(0.3, 0.1, 1.2), (-0.5, 0.2, 0.5), (0.05, -0.4, 2.0), (1.4, 0.1, 1.2),
                  (0.5, 0.0, -1.0), (-40.0, 0.0, 1.0)]:
        for got, want in zip(_compiled_scalars(*point), _scipy_scalars(*point), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-13, err_msg=str(point))
    x, mu, s = rng.uniform(0.05, 0.95, (3, 4)), rng.standard_normal(4), 1.3
    k, alpha, mean, cov = np.array([0, 2, 5, 1]), np.array([1.5, 0.7, 3.0]), \
        rng.standard_normal(3), spd(3, 7)
    points = rng.standard_normal((6, 3))
    want = (norm.logpdf(x, mu, s), norm.cdf(x, mu, s), t.logpdf(x, s, mu),
            poisson.logpmf(k, s), gamma.logpdf(x, s), beta.logpdf(x, s, 2.0),
            multivariate_normal.logpdf(points, mean, cov),
            multivariate_normal.logpdf(points[0], mean, cov),
            dirichlet.logpdf(special.softmax(points.T, axis=0), alpha),
            dirichlet.logpdf(special.softmax(points[0]), alpha))
    got = _compiled_arrays(x, mu, s, k, alpha, mean, cov, points)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12)


# ---- refused ----


def frozen(x, mu):
    return np.sum(norm(mu, 1.0).logpdf(x))


def frozen_bound(x):
    return np.sum(norm(0.0, 2.0).logpdf(x))


def singular_keyword(x, mean, cov):
    return multivariate_normal.logpdf(x, mean, cov, allow_singular=True)


def mvn_default_cov(x):
    return multivariate_normal.logpdf(x)


def count_differentiated(k, mu):
    return np.sum(poisson.logpmf(k * 1.0, mu))


def test_what_is_refused(jit):
    x = np.array([0.5, 1.0])
    # a frozen distribution: its methods have no record
    for fun, args in [(frozen, (x, 0.3)), (frozen_bound, (x,))]:
        with pytest.raises(srcgrad.MissingRule, match="logpdf"):
            srcgrad.grad(fun, jit=jit)(*args)
    # keywords the rule does not take, and arguments it needs that the call leaves out
    with pytest.raises(srcgrad.MissingRule, match="allow_singular"):
        srcgrad.grad(singular_keyword, jit=jit)(x, x, np.eye(2))
    with pytest.raises(srcgrad.MissingRule, match="multivariate_normal_logpdf"):
        srcgrad.grad(mvn_default_cov, jit=jit)(x)
    with pytest.raises(srcgrad.MissingRule, match="allow_singular"):
        srcgrad.jvp(singular_keyword, jit=jit)(x, x, np.eye(2), x)
    # the count of a Poisson density, differentiated: no gradient, refused when run
    with pytest.raises(srcgrad.MissingRule, match="is a count"):
        srcgrad.grad(count_differentiated, wrt=(0, 1), jit=jit)(np.array([1.0, 2.0]), 1.5)


def test_a_covariance_given_by_its_diagonal_is_refused():
    # SciPy reads a vector cov as a diagonal: the rule differentiates a matrix only
    x = np.array([[0.5, 1.0], [0.2, 0.1]])
    with pytest.raises(srcgrad.MissingRule, match="cov a"):
        srcgrad.grad(mvn, wrt=(0, 2), jit=False)(x, np.zeros(2), np.ones(2))


@compiles
def test_what_numba_cannot_compile_is_a_clear_error():
    # a vector cov compiles neither in the density's form nor in its gradient's helpers
    x = np.zeros((3, 2))
    with pytest.raises(srcgrad.SrcgradError, match="multivariate_normal.logpdf"):
        srcgrad.grad(mvn, jit=True)(x, np.zeros(2), np.ones(2))
    with pytest.raises(numba.TypingError, match="multivariate_normal.logpdf compiles"):
        _compiled_mvn(x, np.zeros(2), np.ones(2))


@numba.njit
def _compiled_mvn(x, mean, cov):
    return forms.multivariate_normal_logpdf(x, mean, cov)
