"""scipy.stats, continued (srcgrad/rules/stats.py, their compiled forms in
srcgrad/runtime/stats_more.py): norm.sf, logsf, ppf and isf, expon.logpdf, pdf and cdf in
the rule sweep, by hand, forward mode against central differences, and the compiled forms
against SciPy's values.
"""

import numba
import numpy as np
import pytest
import scipy.stats
from marks import compiles
from scipy import special
from scipy.stats import expon, norm
from sweep import check, check_jvp, domains, parametrize

import srcgrad
from srcgrad.rules import OPS
from srcgrad.runtime import stats_more as forms

any_, pos, unit, distinct = domains(23)


def records(method, form):
    """A distribution's method as the record's own key, and the form generated code calls
    in its place (tests/test_rules_stats.py)."""
    return next(p for p in OPS if p == method), form


NORM_TAILS = (*records(norm.sf, forms.norm_sf), *records(norm.logsf, forms.norm_logsf),
              *records(norm.ppf, forms.norm_ppf), *records(norm.isf, forms.norm_isf))
EXPON = (*records(expon.logpdf, forms.expon_logpdf), *records(expon.pdf, forms.expon_pdf),
         *records(expon.cdf, forms.expon_cdf))


def tails_positional(x, q, mu, s):
    # x anywhere, q in (0, 1)
    return np.sum(norm.sf(x, mu, s) * 1.3 + norm.logsf(x, mu, s) * 0.7 +
                  norm.ppf(q, mu, s) * 0.4 + norm.isf(q, mu, s) * 0.9 +
                  norm.ppf(q, mu, s) ** 2 * 0.2)


def tails_keywords(x, q, mu, s):
    # keywords, the dotted module path, and the defaults loc = 0, scale = 1
    return np.sum(scipy.stats.norm.sf(x, loc=mu, scale=s) + norm.logsf(x, scale=s) +
                  norm.ppf(q, mu) * 0.5 + norm.isf(q=q, scale=s, loc=mu) +
                  norm.logsf(x) * 0.3 + norm.isf(q) * 0.2 + norm.ppf(q=q, scale=s))


def expon_all(x, mu, s):
    # x > mu: inside the support
    return np.sum(expon.logpdf(x, mu, s) + expon.pdf(x, mu, s) * 2.0 +
                  expon.cdf(x, mu, s) * 0.5 + expon.logpdf(x, scale=s) * 0.3 +
                  scipy.stats.expon.cdf(x=x, loc=mu) * 0.7 + expon.pdf(x) * 1.1)


def prob(*shape):
    return 0.5 + 0.45 * unit(*shape)


def cases():
    """(id, primals covered, function, arguments, positions, compiled too)."""
    for shapes in [((), (), ()), ((5,), (5,), ()), ((3, 4), (4,), ()), ((3, 1), (1, 4), (4,))]:
        args = (any_(*shapes[0]), prob(*shapes[0]), any_(*shapes[1]), pos(*shapes[2]))
        yield "norm-tails", NORM_TAILS, tails_positional, args, [0, 1, 2, 3], False
        yield "norm-tails-keywords", NORM_TAILS, tails_keywords, args, [0, 1, 2, 3], False
        yield "expon", EXPON, expon_all, (pos(*shapes[0]) + 0.6, unit(*shapes[1]) * 0.5,
                                          pos(*shapes[2])), [0, 1, 2], False
    yield "expon-compiled", EXPON, expon_all, (pos(3, 4) + 0.6, unit(4) * 0.5, pos()), \
        [0, 1, 2], True
    yield "norm-tails-all", NORM_TAILS, tails_positional, \
        (any_(3, 4), prob(3, 4), any_(4), pos()), [0, 1, 2, 3], True
    yield "norm-tails-keywords-compiled", NORM_TAILS, tails_keywords, \
        (any_(3), prob(3), any_(), pos(3)), [0, 1, 2, 3], True


CASES = list(cases())


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


@pytest.mark.parametrize("k", [2, 3])
def test_jvp_against_differences(k, jit):
    check_jvp(CASES[k], jit)


def test_jvp_compiled_case(jit):
    check_jvp(CASES[-1], jit)
    check_jvp(CASES[-3], jit)   # expon's


# ---- by hand ----


def ppf_at(q, mu, s):
    return norm.ppf(q, mu, s) + norm.isf(q, mu, s) * 2.0


def sf_at(x, mu, s):
    return norm.sf(x, mu, s) + norm.logsf(x, mu, s)


def test_by_hand(jit):
    # ppf(1/2) = mu: dq = s sqrt(2 pi), isf's its negative; dmu = 1 + 2; ds = z = 0
    g = srcgrad.grad(ppf_at, wrt=(0, 1, 2), jit=jit)(0.5, 0.3, 1.5)
    np.testing.assert_allclose(g, [-1.5 * np.sqrt(2 * np.pi), 3.0, 0.0], atol=1e-14)
    # at x = mu: sf = 1/2, phi(0) = 1 / sqrt(2 pi); logsf' = sf' / sf = 2 sf'
    g = srcgrad.grad(sf_at, wrt=(0, 1, 2), jit=jit)(0.3, 0.3, 2.0)
    d = 1.0 / (2.0 * np.sqrt(2 * np.pi))
    np.testing.assert_allclose(g, [-3 * d, 3 * d, 0.0], atol=1e-14)


def expon_at(x, mu, s):
    return expon.logpdf(x, mu, s) + expon.pdf(x, mu, s) + expon.cdf(x, mu, s)


def test_expon_by_hand(jit):
    # at z = 1, s = 2: logpdf' = -1/s, pdf' = -pdf/s, cdf' = pdf = exp(-1)/s; in loc the
    # negatives; in s: (z - 1)/s = 0, pdf (z - 1)/s = 0, -pdf z
    g = srcgrad.grad(expon_at, wrt=(0, 1, 2), jit=jit)(2.5, 0.5, 2.0)
    p = np.exp(-1.0) / 2.0
    np.testing.assert_allclose(g, [-0.5 - p / 2 + p, 0.5 + p / 2 - p, -p], rtol=1e-14)
    # below the support: pdf = cdf = 0 and so are their gradients
    g = srcgrad.grad(below_expon, wrt=(0, 1, 2), jit=jit)(0.2, 0.5, 2.0)
    np.testing.assert_allclose(g, [0.0, 0.0, 0.0], atol=0.0)


def below_expon(x, mu, s):
    return expon.pdf(x, mu, s) + expon.cdf(x, mu, s)


def test_logsf_far_in_the_upper_tail(jit):
    # logsf(x) ~ -x^2/2 - log x - log sqrt(2 pi): slope ~ -x - 1/x, where sf underflows
    g = srcgrad.grad(lambda x: norm.logsf(x, 0.0, 1.0), jit=jit)(40.0)
    assert g == pytest.approx(-40.0 - 1 / 40.0 + 1 / 40.0 ** 3, rel=1e-6)


# ---- the compiled forms ----


@numba.njit
def _compiled_scalars(x, q, mu, s):
    return (forms.norm_sf(x, mu, s), forms.norm_logsf(x, scale=s), forms.norm_ppf(q, mu),
            forms.norm_isf(q), forms.norm_isf(q, mu, s), forms.norm_ppf(q, loc=mu, scale=s),
            forms.expon_logpdf(x, mu, s), forms.expon_pdf(x, scale=s), forms.expon_cdf(x, mu))


def _scipy_scalars(x, q, mu, s):
    return (norm.sf(x, mu, s), norm.logsf(x, scale=s), norm.ppf(q, mu), norm.isf(q),
            norm.isf(q, mu, s), norm.ppf(q, loc=mu, scale=s), expon.logpdf(x, mu, s),
            expon.pdf(x, scale=s), expon.cdf(x, mu))


@numba.njit
def _compiled_arrays(x, q, mu, s):
    return (forms.norm_sf(x, mu, s), forms.norm_logsf(x, mu), forms.norm_ppf(q, mu, s),
            forms.norm_isf(q, s), forms.expon_logpdf(x, mu, s), forms.expon_cdf(x, mu, s))


@compiles
def test_compiled_forms_give_scipys_values(rng):
    for point in [(0.3, 0.2, 0.1, 1.2), (-0.5, 0.9, 0.2, 0.5), (40.0, 1e-20, 0.0, 1.0),
                  (0.5, 0.0, 0.0, -1.0), (-3.0, 1.0, 0.3, 2.0), (1.0, 1.5, 0.0, 1.0)]:
        for got, want in zip(_compiled_scalars(*point), _scipy_scalars(*point), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-13, err_msg=str(point))
    x, q, mu, s = rng.standard_normal((3, 4)), special.expit(rng.standard_normal((3, 4))), \
        rng.standard_normal(4), 1.3
    want = (norm.sf(x, mu, s), norm.logsf(x, mu), norm.ppf(q, mu, s), norm.isf(q, s),
            expon.logpdf(x, mu, s), expon.cdf(x, mu, s))
    for g, w in zip(_compiled_arrays(x, q, mu, s), want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-13)
