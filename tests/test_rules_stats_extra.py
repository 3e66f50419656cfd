"""scipy.stats, continued (srcgrad/rules/stats.py, their compiled forms in
srcgrad/runtime/stats_extra.py): t.pdf; laplace, logistic and cauchy logpdf, pdf and cdf;
chi2.logpdf and pdf; uniform.logpdf and pdf. The rule sweep against central differences,
jvp and hvp against differences, gradients by hand, the uniform's at and beyond the ends of
its support (JAX's), and the compiled forms against SciPy's values.
"""

import math

import numba
import numpy as np
import pytest
import scipy.stats
from marks import compiles
from scipy.stats import cauchy, chi2, laplace, logistic, t, uniform
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


def cases():
    """(id, primals covered, function, arguments, positions, compiled too)."""
    for shapes in [((), (), ()), ((5,), (5,), ()), ((3, 4), (4,), ()), ((3, 1), (1, 4), (4,))]:
        args = (any_(*shapes[0]), any_(*shapes[1]), pos(*shapes[2]))
        yield "line", LINE, on_the_line, args, [0, 1, 2], False
        yield "line-keywords", LINE, on_the_line_keywords, args, [0, 1, 2], False
        yield "shaped", SHAPED, shaped, (pos(*shapes[0]) + 1.0, pos(*shapes[2]) + 0.5,
                                         0.4 * unit(*shapes[1]), pos(*shapes[2])), \
            [0, 1, 2, 3], False
    yield "line-compiled", LINE, on_the_line, (any_(3, 4), any_(4), pos()), [0, 1, 2], True
    yield "line-keywords-compiled", LINE, on_the_line_keywords, (any_(3), any_(), pos(3)), \
        [0, 1, 2], True
    yield "shaped-compiled", SHAPED, shaped, (pos(2, 3) + 1.0, pos(3) + 0.5, 0.4 * unit(),
                                              pos()), [0, 1, 2, 3], True


CASES = list(cases())


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


def test_jvp_against_differences(jit):
    # compiled: one case (each compiles a function of its own)
    for case in CASES[-1:] if jit else CASES[-3:]:
        check_jvp(case, jit)


@pytest.mark.parametrize("k", [3, 5])
def test_jvp_broadcast_against_differences(k):
    check_jvp(CASES[k], False)


def test_hvp_against_differences_of_the_gradient():
    check_hvp(CASES[-3], False)
    check_hvp(CASES[-1], False)


def few(x, df, mu, s):
    return np.sum(laplace.pdf(x, mu, s) * logistic.cdf(x, mu, s) + cauchy.logpdf(x, mu, s) +
                  t.pdf(x, df, mu) + chi2.logpdf(x, df, mu, s) ** 2)


@compiles
def test_hvp_compiled_against_differences_of_the_gradient():
    check_hvp(("few", (), few, (pos(4) + 1.0, pos() + 0.5, 0.4 * unit(4), pos()), [0], True),
              True)
    check_hvp(("few", (), few, (pos(4) + 1.0, pos() + 0.5, 0.4 * unit(4), pos()), [3], True),
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
