"""np.cov and np.corrcoef (srcgrad/rules/statistics.py): against central differences
(grad, jvp and hvp, compiled and as Python), with y=, rowvar=, bias=, ddof=, fweights=
and aweights= (differentiated too), by hand, the refusals, and the numba forms against
NumPy's values."""

import numpy as np
import pytest
from fd import assert_grad
from sweep import check, check_hvp, check_jvp, domains, parametrize

import srcgrad
from srcgrad.errors import MissingRule
from srcgrad.rules.statistics import correlation, covariance

any_, pos, unit, distinct = domains(59)
W = any_(3, 3)


F = np.array([1, 2, 1, 3, 1])


def cov_op(m, y, a):
    # with weights, NumPy's divisor is s - ddof sum(w a) / s (w = f a, s = sum(w)), s
    # where ddof is 0, s - ddof without aweights
    return np.sum(np.cov(m) * W) + np.sum(np.cov(m, rowvar=False, bias=True) ** 2) + \
        np.sum(np.cov(m, y, ddof=0) ** 2) + np.cov(y) ** 2 + \
        np.sum(np.sin(np.cov(m.T, y, rowvar=False))) + \
        np.sum(np.cov(m, y, aweights=a) * np.arange(16.0).reshape(4, 4)) + \
        np.sum(np.cov(m, fweights=F, aweights=a, ddof=2) ** 2) + \
        np.sum(np.cov(m, y, fweights=F, bias=True) ** 2) + np.cov(y, aweights=a, ddof=0) ** 2 + \
        np.sum(np.sin(np.cov(m.T, rowvar=False, fweights=F))) + \
        np.sum(np.cov(m, y, dtype=np.float64) * W[0, 0]) + np.cov(y, dtype="f8") ** 3


def corrcoef_op(m, y):
    return np.sum(np.corrcoef(m) * W) + np.sum(np.corrcoef(m, rowvar=False) ** 3) + \
        np.sum(np.corrcoef(m, y) * np.arange(16.0).reshape(4, 4)) + \
        np.sum(np.corrcoef(m.T, y, False) ** 2)


CASES = [
    ("cov", (np.cov, covariance), cov_op, (any_(3, 5), any_(5), pos(5)), [0, 1, 2], True),
    ("corrcoef", (np.corrcoef, correlation), corrcoef_op, (any_(3, 5), any_(5)), [0, 1], True),
]


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


@parametrize(CASES)
def test_jvp_against_differences(case, jit):
    check_jvp(case, jit, 3)


@parametrize(CASES)
def test_hvp_against_differences_of_the_gradient(case, jit):
    check_hvp(case, jit)


def test_hvp_along_the_aweights():
    # (the helpers of the aweights' gradient are differentiated by their source)
    check_hvp(("cov", (), cov_op, CASES[0][3], [2], False), False)


def variance_of(x):
    return np.cov(x)


def correlation_of(x, y):
    return np.corrcoef(x, y)[0, 1]


def variance_of_float64(x):
    return np.cov(x, dtype=float)


def weighted_variance_of(x, a):
    return np.cov(x, aweights=a, bias=True)


def test_by_hand(jit):
    # var(x) = sum (x - mean)^2 / (n - 1): its gradient 2 (x - mean) / (n - 1)
    x = np.array([1.0, 2.0, 6.0])
    np.testing.assert_allclose(srcgrad.grad(variance_of, jit=jit)(x), [-2.0, -1.0, 3.0])
    # (a float64 dtype= changes nothing)
    np.testing.assert_allclose(srcgrad.grad(variance_of_float64, jit=jit)(x),
                               [-2.0, -1.0, 3.0])
    # v = sum a (x - mu)^2 / s, mu = sum a x / s = 9 / 4, s = 4, v = 4.75 / 4:
    # dv/dx = 2 a (x - mu) / s, dv/da = ((x - mu)^2 - v) / s
    dx, da = srcgrad.grad(weighted_variance_of, wrt=(0, 1), jit=jit)(
        np.array([1.0, 2.0, 4.0]), np.array([1.0, 2.0, 1.0]))
    np.testing.assert_allclose(dx, [-0.625, -0.25, 0.875])
    np.testing.assert_allclose(da, [0.09375, -0.28125, 0.46875])
    # r = cos of the centred vectors' angle: d r / d x = (yc / |yc| - r xc / |xc|) / |xc|
    y = np.array([0.0, 1.0, 1.0])
    xc, yc = x - x.mean(), y - y.mean()
    r = xc @ yc / np.linalg.norm(xc) / np.linalg.norm(yc)
    want = (yc / np.linalg.norm(yc) - r * xc / np.linalg.norm(xc)) / np.linalg.norm(xc)
    np.testing.assert_allclose(srcgrad.grad(correlation_of, jit=jit)(x, y), want)


def variance_real_part(x):
    return np.real(np.cov(x))


def cov_as_float(x):
    return np.sum(np.cov(x, dtype=np.float32))


def cov_of_frequencies(x, f, ddof):
    return np.sum(np.cov(x, fweights=f, aweights=np.array([0.5, 1.0, 2.0]), ddof=ddof) ** 2)


def numpys_cov(x, f, a, ddof):
    """np.cov's formula without its check that the fweights are integers."""
    w = f * a
    s = np.sum(w)
    xc = x - (x @ w / s)[:, None]
    return xc @ (xc * w).T / (s - ddof * np.sum(w * a) / s)


def test_fweights_by_differences_of_numpys_formula():
    # NumPy refuses fweights that are not integers: differences of its formula instead
    x, f, a = any_(2, 3), np.array([1.0, 3.0, 2.0]), np.array([0.5, 1.0, 2.0])
    for ddof in (0, 1):
        got = srcgrad.grad(cov_of_frequencies, wrt=1, jit=False)(x, f, ddof)
        assert_grad(lambda f, d=ddof: np.sum(numpys_cov(x, f, a, d) ** 2), [got], (f,), [0])
    np.testing.assert_array_equal(f, [1.0, 3.0, 2.0])   # np.cov would scale it in place


def corrcoef_ddof(x):
    return np.sum(np.corrcoef(x, ddof=1))


def test_refusals():
    x = any_(2, 3)
    with pytest.raises(MissingRule, match="dtype="):
        srcgrad.grad(cov_as_float, jit=False)(x)
    with pytest.raises(MissingRule, match="deprecated"):
        srcgrad.grad(corrcoef_ddof, jit=False)(x)
    with pytest.raises(MissingRule, match="complex"):
        srcgrad.grad(variance_real_part, jit=False)(x[0] + 1j)


@pytest.mark.compiled
def test_compiled_values_are_numpys():
    # numba's own np.cov reads a vector with rowvar=False as many variables (nan)
    from numba import njit

    def forms(m, v, f, a):
        return (covariance(v, rowvar=False), covariance(m, v, False, True),
                covariance(m, ddof=2), correlation(m.T, v), correlation(m, None, False),
                covariance(m, None, False, False, None, f),
                covariance(m.T, v, True, False, 2, f, a))
    m, v, f, a = any_(4, 3), any_(4), np.array([1.0, 3.0, 0.0, 2.0]), pos(4)   # (one signature)
    compiled = njit(forms)
    for got, want in zip(compiled(m, v, f, a), forms(m, v, f, a), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-13)
    with pytest.raises(ValueError, match="fweights must be integer"):
        compiled(m, v, f + 0.5, a)
