"""np.cov and np.corrcoef (srcgrad/rules/statistics.py): against central differences
(grad, jvp and hvp, compiled and as Python), with y=, rowvar=, bias= and ddof=,
by hand, the refusals, and the numba forms against NumPy's values."""

import numpy as np
import pytest
from sweep import check, check_hvp, check_jvp, domains, parametrize

import srcgrad
from srcgrad.errors import MissingRule
from srcgrad.rules.statistics import correlation, covariance

any_, pos, unit, distinct = domains(59)
W = any_(3, 3)


def cov_op(m, y):
    return np.sum(np.cov(m) * W) + np.sum(np.cov(m, rowvar=False, bias=True) ** 2) + \
        np.sum(np.cov(m, y, ddof=0) ** 2) + np.cov(y) ** 2 + \
        np.sum(np.sin(np.cov(m.T, y, rowvar=False)))


def corrcoef_op(m, y):
    return np.sum(np.corrcoef(m) * W) + np.sum(np.corrcoef(m, rowvar=False) ** 3) + \
        np.sum(np.corrcoef(m, y) * np.arange(16.0).reshape(4, 4)) + \
        np.sum(np.corrcoef(m.T, y, False) ** 2)


CASES = [
    ("cov", (np.cov, covariance), cov_op, (any_(3, 5), any_(5)), [0, 1], True),
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


def variance_of(x):
    return np.cov(x)


def correlation_of(x, y):
    return np.corrcoef(x, y)[0, 1]


def test_by_hand(jit):
    # var(x) = sum (x - mean)^2 / (n - 1): its gradient 2 (x - mean) / (n - 1)
    x = np.array([1.0, 2.0, 6.0])
    np.testing.assert_allclose(srcgrad.grad(variance_of, jit=jit)(x), [-2.0, -1.0, 3.0])
    # r = cos of the centred vectors' angle: d r / d x = (yc / |yc| - r xc / |xc|) / |xc|
    y = np.array([0.0, 1.0, 1.0])
    xc, yc = x - x.mean(), y - y.mean()
    r = xc @ yc / np.linalg.norm(xc) / np.linalg.norm(yc)
    want = (yc / np.linalg.norm(yc) - r * xc / np.linalg.norm(xc)) / np.linalg.norm(xc)
    np.testing.assert_allclose(srcgrad.grad(correlation_of, jit=jit)(x, y), want)


def variance_real_part(x):
    return np.real(np.cov(x))


def cov_weighted(x):
    return np.sum(np.cov(x, fweights=np.array([1, 2, 1])))


def corrcoef_ddof(x):
    return np.sum(np.corrcoef(x, ddof=1))


def test_refusals():
    x = any_(2, 3)
    with pytest.raises(MissingRule, match="fweights"):
        srcgrad.grad(cov_weighted, jit=False)(x)
    with pytest.raises(MissingRule, match="deprecated"):
        srcgrad.grad(corrcoef_ddof, jit=False)(x)
    with pytest.raises(MissingRule, match="complex"):
        srcgrad.grad(variance_real_part, jit=False)(x[0] + 1j)


@pytest.mark.compiled
def test_compiled_values_are_numpys():
    # numba's own np.cov reads a vector with rowvar=False as many variables (nan)
    from numba import njit

    def forms(m, v):
        return (covariance(v, rowvar=False), covariance(m, v, False, True),
                covariance(m, ddof=2), correlation(m.T, v), correlation(m, None, False))
    m, v = any_(4, 3), any_(4)
    for got, want in zip(njit(forms)(m, v), forms(m, v), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-13)
