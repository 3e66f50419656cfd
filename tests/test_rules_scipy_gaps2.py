"""SciPy, more gaps to JAX (srcgrad/rules/scipy_linalg_gaps2.py with
srcgrad/runtime/scipy_gaps2.py, srcgrad/rules/scipy_signal_gaps2.py, scipy_stats_gaps2.py
and srcgrad/runtime/stats_gaps2.py): scipy.linalg's structured
matrices, pinv, pinvh, eig, eigvals and expm_frechet written as operations with rules, and
the rules of solve_sylvester and sqrtm; scipy.signal.detrend, scipy.stats.sem and
gennorm, wrapcauchy and bernoulli's cdf and ppf written as operations; rankdata and
scipy.special.bernoulli without a gradient: against central differences, forward mode, by
hand, against SciPy's values, compiled, and what is refused.
"""

import numpy as np
import pytest
import scipy.linalg
import scipy.signal
import scipy.stats
from fd import assert_grad
from marks import compiles, needs_numba_advanced_indexing
from scipy import special, stats
from sweep import check, check_jvp, domains, parametrize

import srcgrad
from srcgrad.rules import OPS
from srcgrad.runtime import stats_gaps2 as forms

any_, pos, unit, distinct = domains(7302)


# ---- solve_sylvester and sqrtm: the rule sweep ----


def sylvester(a, b, q):
    # a and b with eigenvalues near 3: a x + x b = q is well posed
    return np.sum(scipy.linalg.solve_sylvester(a + 3.0 * np.eye(3), b + 3.0 * np.eye(2), q) *
                  np.arange(6.0).reshape(3, 2))


def roots(a):
    # a a^T + I: symmetric positive definite; a + 3 I: a positive spectrum, not symmetric
    return (np.sum(scipy.linalg.sqrtm(a @ a.T + np.eye(3)) * np.arange(9.0).reshape(3, 3)) +
            np.sum(scipy.linalg.sqrtm(a + 3.0 * np.eye(3)) ** 2))


def both(a, b, q):
    return sylvester(a, b, q) + roots(a)


def beta_binomial(a, b):
    k = np.array([0.0, 1.0, 3.0, 5.0])
    return (np.sum(stats.betabinom.logpmf(k, 5, a, b) * np.arange(4.0)) +
            np.sum(stats.betabinom.pmf(k, 6.0, a, b, 0) ** 2) + stats.betabinom.logpmf(2, 4, a, b))


def records(*pairs):
    """Each distribution's method as the record's own key, and the form generated code
    calls in its place (tests/test_rules_stats_gaps.py)."""
    return tuple(p for method, form in pairs for p in (next(o for o in OPS if o == method),
                                                         form))


BETABINOM = records((stats.betabinom.logpmf, forms.betabinom_logpmf),
                    (stats.betabinom.pmf, forms.betabinom_pmf))


def cases():
    """(id, primals covered, function, arguments, positions, compiled too)."""
    yield "betabinom", BETABINOM, beta_binomial, (pos(), pos()), [0, 1], True
    yield "sylvester", (scipy.linalg.solve_sylvester,), sylvester, \
        (unit(3, 3), unit(2, 2), any_(3, 2)), [0, 1, 2], False
    yield "sqrtm", (scipy.linalg.sqrtm,), roots, (unit(3, 3),), [0], False
    yield "sylvester-sqrtm-compiled", (scipy.linalg.solve_sylvester, scipy.linalg.sqrtm), \
        both, (unit(3, 3), unit(2, 2), any_(3, 2)), [0, 1, 2], True


CASES = list(cases())


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


@pytest.mark.parametrize("k", [0, 1, 2])
def test_jvp_against_differences(k):
    check_jvp(CASES[k], False)


@compiles
def test_jvp_compiled():
    check_jvp(CASES[-1], True)


def sylvester_scaled(a, b, q):
    return np.sum(scipy.linalg.solve_sylvester(a, b, q) * np.array([[1.0, 2.0], [3.0, 4.0]]))


def test_sylvester_by_hand(jit):
    # a = 2 I, b = 3 I: x = q / 5; d/dq = w / 5, d/da = -(w / 5) x^T, d/db = -x^T (w / 5)
    a, b, q = 2.0 * np.eye(2), 3.0 * np.eye(2), np.array([[1.0, -1.0], [0.5, 2.0]])
    w = np.array([[1.0, 2.0], [3.0, 4.0]])
    da, db, dq = srcgrad.grad(sylvester_scaled, wrt=(0, 1, 2), jit=jit)(a, b, q)
    np.testing.assert_allclose(dq, w / 5.0, rtol=1e-14)
    np.testing.assert_allclose(da, -(w / 5.0) @ (q / 5.0).T, rtol=1e-14)
    np.testing.assert_allclose(db, -(q / 5.0).T @ (w / 5.0), rtol=1e-14)


def root_weighted(a):
    return np.sum(scipy.linalg.sqrtm(a) * np.array([[1.0, 2.0], [3.0, 4.0]]))


def test_sqrtm_by_hand(jit):
    # at diag(d): sqrtm moves along e by e_ij / (sqrt d_i + sqrt d_j)
    d = np.array([4.0, 9.0])
    w = np.array([[1.0, 2.0], [3.0, 4.0]])
    g = srcgrad.grad(root_weighted, jit=jit)(np.diag(d))
    np.testing.assert_allclose(g, w / (np.sqrt(d)[:, None] + np.sqrt(d)[None, :]), rtol=1e-13)


def root_of(a):
    return np.sum(scipy.linalg.sqrtm(a))


def root_and_error(a):
    r, err = scipy.linalg.sqrtm(a, disp=False)
    return np.sum(r)


def test_complex_root_is_refused():
    # -I's root is i I: complex, not differentiated
    with pytest.raises(srcgrad.MissingRule, match="complex"):
        srcgrad.grad(root_of, jit=False)(-np.eye(2) + 0.1 * np.ones((2, 2)))


@compiles
def test_complex_root_is_refused_compiled():
    with pytest.raises(srcgrad.SrcgradError, match="complex"):
        srcgrad.grad(root_of, jit=True)(np.array([[-1.0, 0.2], [0.1, -2.0]]))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_sqrtm_disp_false_is_refused():
    with pytest.raises(srcgrad.SrcgradError, match="disp=False"):
        srcgrad.grad(root_and_error)(np.eye(2) * 4.0)


# ---- expm_frechet: expm of a block matrix ----


def frechet(a, e):
    expm_a, moved = scipy.linalg.expm_frechet(a, e)
    return (np.sum(scipy.linalg.expm_frechet(a, e, compute_expm=False) ** 2) +
            np.sum(moved * np.arange(9.0).reshape(3, 3)) + np.sum(expm_a))


def test_expm_frechet(jit):
    a, e = unit(3, 3), any_(3, 3)
    g = srcgrad.grad(frechet, wrt=(0, 1), jit=jit)(a, e)
    assert_grad(frechet, g, (a, e), [0, 1])
    check_jvp(("frechet", (), frechet, (a, e), [0, 1], False), False)


def frechet_weighted(a, e):
    return np.sum(scipy.linalg.expm_frechet(a, e, compute_expm=False) *
                  np.array([[1.0, 2.0], [3.0, 4.0]]))


def test_expm_frechet_by_hand(jit):
    # L(a, e) = e + (a e + e a) / 2 + O(a^2): at a = 0, d/de = w and d/da = (w e^T + e^T w) / 2
    w, e = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[0.5, -1.0], [2.0, 0.25]])
    da, de = srcgrad.grad(frechet_weighted, wrt=(0, 1), jit=jit)(np.zeros((2, 2)), e)
    np.testing.assert_allclose(de, w, rtol=1e-14)
    np.testing.assert_allclose(da, (w @ e.T + e.T @ w) / 2.0, rtol=1e-13, atol=1e-15)


# ---- the structured matrices, written as indexing ----


def structured(c, r, a, b):
    w = np.arange(20.0).reshape(4, 5)
    return (np.sum(scipy.linalg.toeplitz(c, r) * w[:, :3]) +
            np.sum(scipy.linalg.toeplitz(c) ** 2 * w[:, :4]) +
            np.sum(scipy.linalg.hankel(c, r) ** 3) + np.sum(scipy.linalg.hankel(c) * w[:, 1:]) +
            np.sum(scipy.linalg.circulant(r) ** 2 * w[:3, :3]) +
            np.sum(scipy.linalg.companion(c) ** 2 * w[:3, :3]) +
            np.sum(scipy.linalg.block_diag(a, b, c, 2.0) ** 2 * np.arange(45.0).reshape(5, 9)) +
            np.sum(scipy.linalg.block_diag(b) ** 3))


def convolution_matrices(a, v, n):
    return (np.sum((scipy.linalg.convolution_matrix(a, len(v)) @ v) ** 2) +
            np.sum(scipy.linalg.convolution_matrix(a, len(v), mode="same") @ v) +
            np.sum(scipy.linalg.convolution_matrix(a, len(v), "valid") @ v ** 2) +
            np.sum(scipy.linalg.convolution_matrix(a, n, "same") ** 2) +
            np.sum(np.sin(scipy.linalg.convolution_matrix(a, n, "valid"))))


def test_structured():
    c, r, a, b = any_(4), any_(3), any_(2, 3), any_(1, 1)
    g = srcgrad.grad(structured, wrt=(0, 1, 2, 3), jit=False)(c, r, a, b)
    assert_grad(structured, g, (c, r, a, b), [0, 1, 2, 3])
    check_jvp(("structured", (), structured, (c, r, a, b), [0, 1, 2, 3], False), False)


@pytest.mark.parametrize("m,k,n", [(4, 3, 6), (3, 5, 2), (4, 4, 4), (1, 3, 5), (5, 1, 1)])
def test_convolution_matrices(m, k, n):
    a, v = any_(m), any_(k)
    g = srcgrad.grad(convolution_matrices, wrt=(0, 1), jit=False)(a, v, n)
    assert_grad(convolution_matrices, g, (a, v, n), [0, 1])


def every_matrix(c, r, a, b, n):
    return (scipy.linalg.toeplitz(c, r), scipy.linalg.toeplitz(c), scipy.linalg.hankel(c, r),
            scipy.linalg.hankel(c), scipy.linalg.circulant(c), scipy.linalg.companion(c),
            scipy.linalg.block_diag(a, b, c, 2.0), scipy.linalg.block_diag(c),
            scipy.linalg.convolution_matrix(c, n), scipy.linalg.convolution_matrix(c, n, "same"),
            scipy.linalg.convolution_matrix(c, n, mode="valid"))


def weighted_sum(c, r, a, b, n):
    return sum(np.sum(m * np.cos(np.arange(m.size).reshape(m.shape)))
               for m in every_matrix(c, r, a, b, n))


@pytest.mark.parametrize("n", [2, 6, 3])
def test_structured_values_are_scipys(n):
    # the value of the written calls is SciPy's, matrix by matrix (each weighted by cosines,
    # their sum's jvp's value)
    c, r, a, b = any_(4), any_(3), any_(2, 3), any_(1, 1)
    want = sum(np.sum(m * np.cos(np.arange(m.size).reshape(m.shape)))
               for m in every_matrix(c, r, a, b, n))
    value, _ = srcgrad.jvp(weighted_sum, wrt=(0,), jit=False)(c, r, a, b, n, (np.ones(4),))
    assert value == pytest.approx(want, rel=1e-13)


def few_matrices(c, r, a):
    return (np.sum(scipy.linalg.toeplitz(c, r) ** 2) + np.sum(scipy.linalg.hankel(r, c) ** 3) +
            np.sum(scipy.linalg.circulant(c) * scipy.linalg.companion(r)[0, 0]) +
            np.sum(scipy.linalg.block_diag(a, c) ** 2) +
            np.sum(scipy.linalg.convolution_matrix(r, 5, "same") ** 2))


@compiles
def test_structured_compiled():
    needs_numba_advanced_indexing(True)
    args = (any_(3), any_(4), any_(2, 2))
    g = srcgrad.grad(few_matrices, wrt=(0, 1, 2), jit=True)(*args)
    assert_grad(few_matrices, g, args, [0, 1, 2])


def toeplitz_weighted(c, r, w):
    return np.sum(scipy.linalg.toeplitz(c, r) * w)


def companion_weighted(a, w):
    return np.sum(scipy.linalg.companion(a) * w)


def test_structured_by_hand(jit):
    # toeplitz(c, r)[i, j] = c[i - j] below, r[j - i] above: d/dc_k is the sum of w's
    # diagonal -k, d/dr_k of its diagonal k (r_0 unread); companion(a)'s first row is
    # -a[1:] / a[0]
    needs_numba_advanced_indexing(jit)
    w = np.arange(12.0).reshape(4, 3) ** 1.5
    dc, dr = srcgrad.grad(toeplitz_weighted, wrt=(0, 1), jit=jit)(any_(4), any_(3), w)
    np.testing.assert_allclose(dc, [np.trace(w, -k) for k in range(4)], rtol=1e-14)
    np.testing.assert_allclose(dr, [0.0] + [np.trace(w, k) for k in (1, 2)], rtol=1e-14)
    a, w = np.array([2.0, 1.0, -3.0, 0.5]), np.arange(9.0).reshape(3, 3) + 1.0
    da = srcgrad.grad(companion_weighted, wrt=0, jit=jit)(a, w)
    np.testing.assert_allclose(da, [np.sum(w[0] * a[1:]) / 4.0, *(-w[0] / 2.0)], rtol=1e-14)


def convolution_mode(a, n, mode):
    return np.sum(scipy.linalg.convolution_matrix(a, n, mode))


def test_convolution_matrix_mode_is_a_literal():
    with pytest.raises(srcgrad.SrcgradError, match="mode= is differentiated as a literal"):
        srcgrad.grad(convolution_mode)(np.ones(3), 2, "full")


def toeplitz_sum(c):
    return np.sum(scipy.linalg.toeplitz(c))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_toeplitz_of_a_stack():
    # SciPy >= 1.14 makes a stack of matrices (refused when the call runs), older SciPy
    # flattens the stack (as the call here does)
    c = any_(2, 3)
    stacks = scipy.linalg.toeplitz(c).ndim == 3
    if stacks:
        with pytest.raises(ValueError):
            srcgrad.grad(toeplitz_sum, jit=False)(c)
    else:
        assert_grad(toeplitz_sum, (srcgrad.grad(toeplitz_sum, jit=False)(c),), (c,), [0])


# ---- pinv, pinvh, eig and eigvals, written as NumPy's ----


def pseudo_inverses(a):
    return (np.sum(scipy.linalg.pinv(a) ** 2) +
            np.sum(scipy.linalg.pinvh(a) * np.arange(16.0).reshape(4, 4)) +
            np.sum(scipy.linalg.pinvh(a, lower=False) ** 2) +
            np.sum(scipy.linalg.pinv(a[:, :3]) * np.arange(12.0).reshape(3, 4)))


def eigenvalues(a):
    w, v = scipy.linalg.eig(a)
    return (np.sum(np.real(scipy.linalg.eigvals(a)) ** 2) + np.sum(np.real(w) ** 3) +
            np.sum(np.real(scipy.linalg.eig(a, right=False)) * np.arange(4.0)))


def test_pinv_and_eigenvalues():
    a = unit(4, 4) + 3.0 * np.eye(4)
    for fun in (pseudo_inverses, eigenvalues):
        assert_grad(fun, (srcgrad.grad(fun, jit=False)(a),), (a,), [0])
    check_jvp(("pinv", (), pseudo_inverses, (a,), [0], False), False)


def pinv_weighted(a, w):
    return np.sum(scipy.linalg.pinv(a) * w)


def pinvh_weighted(a, w):
    return np.sum(scipy.linalg.pinvh(a) * w)


def test_pinv_by_hand(jit):
    # of an invertible matrix pinv is inv: d/da sum(w inv(a)) = -inv(a)^T w inv(a)^T; pinvh
    # reads the lower triangle: the symmetric matrix's gradient g goes to g + g^T below
    # the diagonal, g_ii on it, nothing above
    a = unit(3, 3) + 3.0 * np.eye(3)
    w = np.arange(9.0).reshape(3, 3)
    inv = np.linalg.inv(a)
    g = srcgrad.grad(pinv_weighted, wrt=0, jit=jit)(a, w)
    np.testing.assert_allclose(g, -inv.T @ w @ inv.T, rtol=1e-10)
    s = a + a.T
    inv = np.linalg.inv(s)
    full = -inv @ w @ inv
    g = srcgrad.grad(pinvh_weighted, wrt=0, jit=jit)(np.tril(s) + 5.0 * np.triu(s, 1), w)
    np.testing.assert_allclose(g, np.tril(full + full.T, -1) + np.diag(np.diag(full)),
                               rtol=1e-10, atol=1e-14)


def pinv_cut(a):
    return np.sum(scipy.linalg.pinv(a, atol=1e-3))


def eig_generalized(a):
    return np.sum(np.real(scipy.linalg.eig(a, a + np.eye(2))[0]))


def eig_left(a):
    return np.sum(np.real(scipy.linalg.eig(a, left=True)[0]))


@pytest.mark.parametrize("fun,match", [(pinv_cut, "atol="), (eig_generalized, "b="),
                                       (eig_left, "left=")])
def test_refused(fun, match):
    with pytest.raises(srcgrad.SrcgradError, match=match):
        srcgrad.grad(fun)(np.eye(2) * 2.0)


# ---- scipy.signal.detrend, scipy.stats.sem and distributions, written as operations ----


def detrended(x):
    return (np.sum(scipy.signal.detrend(x) ** 2 * np.arange(12.0).reshape(3, 4)) +
            np.sum(scipy.signal.detrend(x, axis=0, type="constant") ** 3) +
            np.sum(scipy.signal.detrend(x, 0) ** 3) +
            np.sum(scipy.signal.detrend(x[0], type="l") ** 3) +
            np.sum(scipy.stats.sem(x) ** 2) + scipy.stats.sem(x, axis=None) +
            np.sum(scipy.stats.sem(x, axis=1, ddof=0) * np.arange(3.0)))


def distributions(x, shape, loc, scale):
    # shape: gennorm's beta (0.5, 2), wrapcauchy's c (x in (0.5, 2) below 2 pi)
    return (np.sum(stats.gennorm.logpdf(x, shape, loc, scale) + stats.gennorm.pdf(x, shape) * 2.0 +
                   stats.gennorm.logpdf(x, shape, loc=loc)) +
            np.sum(stats.gennorm.cdf(x, 1.7, loc, scale=scale)) +
            np.sum(stats.wrapcauchy.logpdf(x, shape / 3.0, loc, scale) +
                   stats.wrapcauchy.pdf(x, shape / 3.0) * 2.0) +
            np.sum(stats.bernoulli.cdf(np.array([-1.0, 0.0, 0.5, 1.0, 2.0]), shape / 3.0, loc) *
                   np.arange(5.0)) +
            np.sum(stats.bernoulli.ppf(np.array([0.0, 0.3, 0.9, 1.0]), shape / 3.0, loc)))


def test_detrend_and_sem():
    x = any_(3, 4)
    assert_grad(detrended, (srcgrad.grad(detrended, jit=False)(x),), (x,), [0])
    check_jvp(("detrend", (), detrended, (x,), [0], False), False)   # (its value SciPy's)


def test_distributions():
    args = (pos(5), pos() * 0.8, unit() * 0.3, pos())
    g = srcgrad.grad(distributions, wrt=(0, 1, 2, 3), jit=False)(*args)
    assert_grad(distributions, g, args, [0, 1, 2, 3])
    check_jvp(("distributions", (), distributions, args, [0, 1, 2, 3], False), False)


def signal_and_stats(x, shape, loc, scale):
    return detrended(x) + distributions(x[0], shape, loc, scale)


@compiles
def test_signal_and_stats_compiled():
    args = (pos(3, 4), pos() * 0.8, unit() * 0.3, pos())
    g = srcgrad.grad(signal_and_stats, wrt=(0, 1, 2, 3), jit=True)(*args)
    assert_grad(signal_and_stats, g, args, [0, 1, 2, 3])


def detrend_weighted(x, w):
    return np.sum(scipy.signal.detrend(x) * w)


def sem_of(x):
    return scipy.stats.sem(x)


def test_detrend_and_sem_by_hand(jit):
    # detrend is the projection away from 1 and t - (n - 1) / 2 (symmetric): w's gradient is
    # w minus its mean and its t part; sem = std / sqrt(n), whose slope is
    # (x - mean) / ((n - 1) std sqrt(n)) with ddof=1
    x, w = any_(5), np.array([1.0, -2.0, 0.5, 3.0, 1.5])
    t = np.arange(5.0) - 2.0
    g = srcgrad.grad(detrend_weighted, wrt=0, jit=jit)(x, w)
    np.testing.assert_allclose(g, w - w.mean() - t * (w @ t) / (t @ t), rtol=1e-13, atol=1e-14)
    g = srcgrad.grad(sem_of, jit=jit)(x)
    np.testing.assert_allclose(g, (x - x.mean()) / (4.0 * np.std(x, ddof=1) * np.sqrt(5.0)),
                               rtol=1e-13)


def gennorm_at(x, beta):
    return stats.gennorm.logpdf(x, beta)


def wrapcauchy_at(x, c):
    return stats.wrapcauchy.logpdf(x, c)


def bernoulli_at(k, p):
    return stats.bernoulli.cdf(k, p)


def test_distributions_by_hand(jit):
    # gennorm(2) is a normal of variance 1/2: d/dx logpdf = -2x; d/dbeta = 1 / beta +
    # psi(1 / beta) / beta^2 - |x|^beta log|x|; wrapcauchy: d/dx = -2 c sin x / (1 + c^2 - 2 c
    # cos x), d/dc = -2c / (1 - c^2) - (2c - 2 cos x) / (1 + c^2 - 2c cos x); bernoulli's
    # cdf at 0.5: 1 - p, slope -1 in p, 0 in k
    x, beta = 0.7, 2.0
    dx, db = srcgrad.grad(gennorm_at, wrt=(0, 1), jit=jit)(x, beta)
    assert dx == pytest.approx(-2.0 * x, rel=1e-14)
    assert db == pytest.approx(0.5 + special.digamma(0.5) / 4.0 - x * x * np.log(x), rel=1e-13)
    x, c = 1.2, 0.4
    dx, dc = srcgrad.grad(wrapcauchy_at, wrt=(0, 1), jit=jit)(x, c)
    denominator = 1.0 + c * c - 2.0 * c * np.cos(x)
    assert dx == pytest.approx(-2.0 * c * np.sin(x) / denominator, rel=1e-14)
    assert dc == pytest.approx(-2.0 * c / (1.0 - c * c) - (2.0 * c - 2.0 * np.cos(x)) /
                               denominator, rel=1e-14)
    assert srcgrad.grad(bernoulli_at, wrt=(0, 1), jit=jit)(0.5, 0.3) == (0.0, -1.0)


def ranked(x):
    return np.sum(stats.rankdata(x) * x) + np.sum(special.bernoulli(4)) * x[0]


def test_no_gradient_by_hand(jit):
    # ranks are steps in x (their slope 0): d/dx sum(rank(x) x) = rank(x); the Bernoulli
    # numbers B_0 ... B_4 are constants, (1, -1/2, 1/6, 0, -1/30)
    x = distinct(5)
    g = srcgrad.grad(ranked, jit=jit)(x)
    want = stats.rankdata(x)
    want[0] += 1.0 - 0.5 + 1.0 / 6.0 - 1.0 / 30.0
    np.testing.assert_allclose(g, want, rtol=1e-12)


def bernoulli_of(n):
    return np.sum(special.bernoulli(n))


def gennorm_beta_cdf(x, beta):
    return stats.gennorm.cdf(x, beta)


def detrend_pieces(x):
    return np.sum(scipy.signal.detrend(x, bp=[2]) ** 2)


def sem_omitting(x):
    return scipy.stats.sem(x, nan_policy="omit")


@pytest.mark.parametrize("fun,args,match", [
    (bernoulli_of, (4.0,), "bernoulli"), (gennorm_beta_cdf, (0.3, 1.5), "a shape parameter"),
    (detrend_pieces, (np.ones(5),), "bp="), (sem_omitting, (np.ones(5),), "nan_policy")])
def test_refused_here_too(fun, args, match):
    with pytest.raises(srcgrad.SrcgradError, match=match):
        srcgrad.grad(fun, wrt=tuple(range(len(args))))(*args)


# ---- lu: lu_factor's factors ----


def factors(a):
    p, lower, upper = scipy.linalg.lu(a)
    pl, u = scipy.linalg.lu(a, permute_l=True)
    w = np.arange(16.0).reshape(4, 4)
    return (np.sum(lower * w) + np.sum(upper ** 2 * w) + np.sum(p * w) + np.sum(pl ** 3) +
            np.sum(u))


def test_lu():
    a = any_(4, 4)
    assert_grad(factors, (srcgrad.grad(factors, jit=False)(a),), (a,), [0])
    check_jvp(("lu", (), factors, (a,), [0], False), False)   # (its value SciPy's)


def corner_entries(a):
    p, lower, upper = scipy.linalg.lu(a)
    return lower[1, 0] + upper[1, 1] + np.sum(p * np.array([[1.0, 2.0], [3.0, 4.0]]))


def test_lu_by_hand(jit):
    # a = [[a, b], [c, d]], |a| > |c|: no row swapped, P = I; L[1, 0] + U[1, 1] = c / a + d -
    # b c / a. Swapped (|c| > |a|): P = [[0, 1], [1, 0]], L[1, 0] + U[1, 1] = a / c + b - d a / c
    a, b, c, d = 2.0, 0.5, 1.0, -1.5
    g = srcgrad.grad(corner_entries, jit=jit)(np.array([[a, b], [c, d]]))
    np.testing.assert_allclose(g, [[(b * c - c) / a ** 2, -c / a], [(1.0 - b) / a, 1.0]],
                               rtol=1e-14)
    g = srcgrad.grad(corner_entries, jit=jit)(np.array([[c, d], [a, b]]))
    np.testing.assert_allclose(g, [[(1.0 - b) / a, 1.0], [(b * c - c) / a ** 2, -c / a]],
                               rtol=1e-14)


def one_trial(a, b):
    return stats.betabinom.logpmf(1, 1, a, b) + stats.betabinom.pmf(1.0, 1, a, b)


def counted(k, a):
    return stats.betabinom.logpmf(k, 4, a, 1.5)


def test_betabinom_by_hand(jit):
    # one trial: pmf(1) = a / (a + b), d/da = b / (a + b)^2, d/db = -a / (a + b)^2; its log
    # has 1 / a - 1 / (a + b) and -1 / (a + b)
    a, b = 1.3, 0.7
    da, db = srcgrad.grad(one_trial, wrt=(0, 1), jit=jit)(a, b)
    assert da == pytest.approx(1.0 / a - 1.0 / (a + b) + b / (a + b) ** 2, rel=1e-13)
    assert db == pytest.approx(-1.0 / (a + b) - a / (a + b) ** 2, rel=1e-13)
    with pytest.raises(srcgrad.MissingRule, match="a count"):
        srcgrad.grad(counted, wrt=(0, 1), jit=jit)(2.0, a)
