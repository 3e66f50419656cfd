"""scipy.special, a fourth part (srcgrad/rules/special_cdfs.py, their compiled forms in
srcgrad/runtime/special_cdfs.py): k0, k1, k0e, k1e, expm1, log1p, cosm1, gammaincinv,
gammainccinv, stdtr, chdtr, pdtr and bdtr in the rule sweep, by hand, forward mode and
hvp against central differences, the compiled forms against SciPy's values, and the
refusal of the arguments without a gradient (the shape parameter a, the degrees of
freedom, the counts).
"""

import math

import numba
import numpy as np
import pytest
from marks import compiles
from scipy import special
from sweep import (
    check,
    check_hvp,
    check_jvp,
    check_refused_first_argument,
    domains,
    parametrize,
)

import srcgrad
from srcgrad.runtime import special_cdfs  # noqa: F401  (the numba forms, for _compiled)

any_, pos, unit, distinct = domains(61)

SHAPES_1 = [(), (5,), (3, 4)]
SHAPES_2 = [((), ()), ((4,), (4,)), ((3, 4), (4,)), ((3, 1), (1, 4))]


# ---- the functions differentiated: several rules each (few functions to compile) ----


def bessel_k(x):
    # x in (0.5, 2): k0, k1 are singular at 0; expm1, log1p, cosm1 of x - 1.2 in (-0.7, 0.8)
    return np.sum(special.k0(x) + special.k1(x) * 0.8 + special.k0e(x) * 1.3 +
                  special.k1e(x) * 0.6 + special.expm1(x - 1.2) * 0.7 +
                  special.log1p(x - 1.2) * 1.1 + special.cosm1(x - 1.2) * 0.9)


def inverse_gamma(a, x):
    # a in (0.5, 2), the probability 0.4 x in (0.2, 0.8)
    return np.sum(special.gammaincinv(a, x * 0.4) +
                  special.gammainccinv(a + 1.0, x * 0.4) * 0.7)


def cdfs(df, x):
    # df in (0.5, 2): the degrees of freedom 1 + df, the counts 2 df (rounded down by SciPy:
    # 1, 2 or 3) of 7 trials, the probability 0.4 x in (0.2, 0.8)
    return np.sum(special.stdtr(df + 1.0, x - 1.2) + special.chdtr(df + 1.0, x) * 0.8 +
                  special.pdtr(df * 2.0, x) * 1.3 + special.bdtr(df * 2.0, 7, x * 0.4) * 0.6)


BESSEL_K = (special.k0, special.k1, special.k0e, special.k1e, special.expm1, special.log1p,
            special.cosm1)
INVERSE = (special.gammaincinv, special.gammainccinv)
CDFS = (special.stdtr, special.chdtr, special.pdtr, special.bdtr)


def cases():
    """(id, primals covered, function, arguments, positions, compiled too)."""
    for shape in SHAPES_1:
        yield "bessel-k", BESSEL_K, bessel_k, (pos(*shape),), [0], False
    for sa, sx in SHAPES_2:
        yield "inverse-gamma", INVERSE, inverse_gamma, (pos(*sa), pos(*sx)), [1], False
        yield "cdfs", CDFS, cdfs, (pos(*sa), pos(*sx)), [1], False
    yield "bessel-k-compiled", BESSEL_K, bessel_k, (pos(2, 3),), [0], True
    yield "inverse-gamma-compiled", INVERSE, inverse_gamma, (pos(3, 1), pos(4)), [1], True
    yield "cdfs-compiled", CDFS, cdfs, (pos(3, 1), pos(4)), [1], True


CASES = list(cases())


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


def test_jvp_against_differences(jit):
    check_jvp(CASES[-1], jit)


def test_jvp_as_python():
    for case in CASES[:-1]:
        check_jvp(case, jit=False)


def test_hvp_against_differences_of_the_gradient():
    # the rules' own rules: k0's and k1's in k1's slope, the result's in the inverses',
    # xlogy's, xlog1py's, gammaln's and betaln's in the distribution functions'
    for case in CASES[-3:]:
        check_hvp(case, jit=False)


# ---- by hand ----


def bessel_by_hand(x):
    return special.k0(x) + special.expm1(x - 1.0) * 2.0 + special.log1p(x - 1.0) * 3.0 + \
        special.cosm1(x - 1.0) * 5.0


def inverse_by_hand(p):
    # a = 1: gammaincinv(1, p) = -log(1 - p), gammainccinv(1, p) = -log(p)
    return special.gammaincinv(1.0, p) + special.gammainccinv(1.0, p) * 2.0


def cdfs_by_hand(x):
    # stdtr(1, t) = 1/2 + atan(t) / pi, chdtr(2, x) = 1 - e^(-x/2), pdtr(1, m) = (1 + m)
    # e^-m, bdtr(1, 2, p) = 1 - p^2
    return special.stdtr(1.0, x) + special.chdtr(2.0, x) * 2.0 + special.pdtr(1, x) * 3.0 + \
        special.bdtr(1, 2, x * 0.5) * 5.0


def student_large(t):
    # df = 1e16: the normal distribution function to float64's precision
    return special.stdtr(1e16, t)


def test_by_hand(jit):
    # at 1: k0' = -k1(1) = -0.6019072301972346 (DLMF 10.29), expm1'(0) = 1, log1p'(0) = 1,
    # cosm1'(0) = 0
    got = srcgrad.grad(bessel_by_hand, jit=jit)(1.0)
    assert got == pytest.approx(-0.6019072301972346 + 2.0 + 3.0, rel=1e-13)
    p = 0.3
    got = srcgrad.grad(inverse_by_hand, jit=jit)(p)
    assert got == pytest.approx(1.0 / (1.0 - p) - 2.0 / p, rel=1e-12)
    x = 0.8
    want = 1.0 / (math.pi * (1.0 + x * x)) + 2.0 * 0.5 * math.exp(-x / 2.0) - \
        3.0 * x * math.exp(-x) - 5.0 * 2.0 * (x * 0.5) * 0.5
    assert srcgrad.grad(cdfs_by_hand, jit=jit)(x) == pytest.approx(want, rel=1e-12)
    # the normal density (a difference of gammaln of 5e15 would have lost every digit)
    want = math.exp(-x * x / 2.0) / math.sqrt(2.0 * math.pi)
    assert srcgrad.grad(student_large, jit=jit)(x) == pytest.approx(want, rel=1e-13)


def test_bdtr_where_k_reaches_n():
    # bdtr = 1 for k = n: slope 0; NaN for k > n (SciPy's value), NaN its slope too
    def full(p):
        return special.bdtr(6, 6, p) + special.bdtr(7, 6, p)
    got = srcgrad.grad(lambda p: special.bdtr(6, 6, p), jit=False)(0.3)
    assert got == 0.0
    assert np.isnan(srcgrad.grad(full, jit=False)(0.3))


# ---- refusals: no gradient in the shape parameter, the degrees of freedom, the counts ----


def shape_inv(a, x):
    return np.sum(special.gammaincinv(a, x))


def shape_cinv(a, x):
    return np.sum(special.gammainccinv(a, x))


def df_stdtr(df, x):
    return np.sum(special.stdtr(df, x))


def df_chdtr(v, x):
    return np.sum(special.chdtr(v, x))


def count_pdtr(k, x):
    return np.sum(special.pdtr(k, x))


def count_bdtr_k(k, x):
    return np.sum(special.bdtr(k, 7, x))


def count_bdtr_n(n, x):
    return np.sum(special.bdtr(1, n, x))


_SHAPE, _DF, _COUNT = "argument a is a shape parameter", "is the degrees of freedom", \
    "is a count"
REFUSED = [(shape_inv, _SHAPE), (shape_cinv, _SHAPE), (df_stdtr, "argument df " + _DF),
           (df_chdtr, "argument v " + _DF), (count_pdtr, "argument k " + _COUNT),
           (count_bdtr_k, "argument k " + _COUNT), (count_bdtr_n, "argument n " + _COUNT)]


def test_refusals(jit):
    for fun, words in REFUSED:
        check_refused_first_argument(fun, words, jit, np.array([0.3, 0.6]))


# ---- the compiled forms ----


@numba.njit
def _compiled(a, x):
    return (special.k0(x), special.k1(x), special.k0e(x), special.k1e(x),
            special.expm1(x - 1.0), special.log1p(x - 1.0), special.cosm1(x - 1.0),
            special.gammaincinv(a, x / 3.0), special.gammainccinv(a, x / 3.0),
            special.stdtr(a, x - 1.0), special.chdtr(a, x), special.pdtr(a * 2.0, x),
            special.bdtr(a * 2.0, 7, x / 3.0), special.bdtr(2, 7.0, 0.3),
            special.bdtr(2, np.inf, 0.3))


@compiles
def test_compiled_forms_match_scipy():
    # numbers here (a quicker compile); the arrays' forms run in the compiled cases
    for a, x in ((0.6, 0.5), (1.7, 1.1), (2.5, 2.0)):
        got = _compiled(a, x)
        want = (special.k0(x), special.k1(x), special.k0e(x), special.k1e(x),
                special.expm1(x - 1.0), special.log1p(x - 1.0), special.cosm1(x - 1.0),
                special.gammaincinv(a, x / 3.0), special.gammainccinv(a, x / 3.0),
                special.stdtr(a, x - 1.0), special.chdtr(a, x), special.pdtr(a * 2.0, x),
                special.bdtr(a * 2.0, 7, x / 3.0), special.bdtr(2, 7, 0.3),
                np.nan)   # (SciPy's bdtr of an infinite n)
        np.testing.assert_allclose(got, want, rtol=1e-14)
