"""scipy.linalg.cholesky, cho_factor, cho_solve and solve (srcgrad/rules/scipy_cholesky.py):
the rule sweep's cases, gradients by hand, forward mode and hvp against central
differences, the compiled forms against SciPy's values, and what is refused.
"""

import re

import numba
import numpy as np
import pytest
import scipy
from fd import assert_grad, slope
from marks import compiles
from scipy.linalg import cho_factor, cho_solve, cholesky, solve
from sweep import check, domains, parametrize

import srcgrad

any_, pos, unit, distinct = domains(29)


# SciPy before 1.15 (the oldest env's 1.10) has fewer assume_a structures ('diagonal',
# 'upper triangular', 'banded' are its ValueError): the functions themselves fail there
OLD_SCIPY = tuple(int(p) for p in scipy.__version__.split(".")[:2]) < (1, 15)


@pytest.fixture(autouse=True)
def _recent_scipy():
    if OLD_SCIPY:
        pytest.skip("needs SciPy 1.15 (assume_a structures)")


def spd(n):
    """Positive definite in either triangle, and not symmetric: a gradient that leaked
    into the triangle not read would show."""
    return unit(n, n) + 3.0 * np.eye(n)


WEIGHTS = np.arange(16.0).reshape(4, 4) / 7.0 - 1.0


def upper_factor(a):
    return np.sum(cholesky(a) * WEIGHTS[:a.shape[0], :a.shape[0]])


def lower_factor(a):
    return np.sum(cholesky(a, lower=True) ** 3)


def whole_factor(a):
    # c's other triangle holds a's entries: their gradient goes straight back
    c, low = cho_factor(a)
    return np.sum(c * WEIGHTS[:a.shape[0], :a.shape[0]]) + np.sum(cho_factor(a, True)[0] ** 2)


def log_det(a):
    c = cho_factor(a, lower=True)
    return 2.0 * np.sum(np.log(np.diag(c[0])))


def solved(a, b):
    c = cho_factor(a)
    return np.sum(cho_solve(c, b) ** 2)


def solved_lower(a, b):
    c, low = cho_factor(a, lower=True)
    x = cho_solve((c, low), b)
    return np.sum(x * np.arange(x.size).reshape(x.shape)) + np.sum(cho_solve((c, low), b) ** 2)


def gp_nlml(a, y):
    c = cho_factor(a, lower=True)
    return 0.5 * y @ cho_solve(c, y) + np.sum(np.log(np.diag(c[0])))


def general(a, b):
    return np.sum(solve(a, b) ** 2)


def structured(a, b):
    return (np.sum(solve(a, b, assume_a="pos") ** 2) +
            np.sum(solve(a, b, lower=True, assume_a="sym") ** 3) +
            np.sum(solve(a, b, assume_a="upper triangular") ** 2) +
            np.sum(solve(a, b, assume_a="lower triangular", transposed=True) ** 2) +
            np.sum(solve(a, b, assume_a="diagonal") * 1.7) +
            np.sum(solve(a, b, transposed=True, assume_a="gen") ** 2))


def cases():
    """(id, primals covered, function, arguments, positions, compiled too)."""
    for n in (1, 3, 4):
        yield "upper_factor", (cholesky,), upper_factor, (spd(n),), [0], n == 4
        yield "lower_factor", (cholesky,), lower_factor, (spd(n),), [0], False
        yield "whole_factor", (cho_factor,), whole_factor, (spd(n),), [0], n == 4
        yield "log_det", (cho_factor,), log_det, (spd(n),), [0], False
    for shape in ((4,), (4, 2)):
        yield "solved", (cho_factor, cho_solve), solved, (spd(4), any_(*shape)), [0, 1], True
        yield "solved_lower", (cho_factor, cho_solve), solved_lower, (spd(4), any_(*shape)), \
            [0, 1], True
        yield "general", (solve,), general, (spd(4), any_(*shape)), [0, 1], True
        yield "structured", (solve,), structured, (spd(4), any_(*shape)), [0, 1], True
    yield "gp_nlml", (cho_factor, cho_solve), gp_nlml, (spd(5), any_(5)), [0, 1], True


CASES = list(cases())


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


def solved_constant_factor(b):
    return np.sum(cho_solve((np.array([[2.0, 0.0], [1.0, 4.0]]), True), b))


def test_cho_solve_by_hand(jit):
    # a = L L^T = [[4, 2], [2, 17]], y = a^-1 b: d sum(y) / db = a^-1 1 = [15, 2] / 64
    g = srcgrad.grad(solved_constant_factor, jit=jit)(np.array([1.0, -2.0]))
    np.testing.assert_allclose(g, np.array([15.0, 2.0]) / 64.0, rtol=1e-14)


def _adjoint_code(g):
    """The adjoint part of `g`'s generated source, without its comments."""
    return "\n".join(line for line in g.source.split("# adjoint")[1].splitlines()
                     if not line.strip().startswith("#"))


def solved_both(a, b):
    return np.sum(cho_solve(cho_factor(a, lower=True), b))


def test_cho_solve_solves_once_for_both_gradients(jit):
    # a = diag(4, 9), y = a^-1 b = [1/4, 2/9]; g = a^-1 1 = [1/4, 1/9] is b's gradient,
    # and G = -g y^T lands on the lower triangle read: tril(G + G^T) off the diagonal
    a, b = np.diag([4.0, 9.0]), np.array([1.0, 2.0])
    g = srcgrad.grad(solved_both, wrt=(0, 1), jit=jit)
    da, db = g(a, b)
    np.testing.assert_allclose(db, [0.25, 1.0 / 9.0], rtol=1e-14)
    np.testing.assert_allclose(da, [[-1.0 / 16.0, 0.0], [-1.0 / 12.0, -2.0 / 81.0]],
                               rtol=1e-13, atol=1e-15)
    c = spd(2)
    assert_grad(solved_both, g(c, b), (c, b), [0, 1])
    assert _adjoint_code(g).count("cho_solve(") == 1, g.source


def test_solve_solves_once_for_both_gradients(jit):
    # y = a^-1 b with a = diag(2, 4): db = a^-T 1 = [1/2, 1/4], da = -db y^T
    g = srcgrad.grad(general, wrt=(0, 1), jit=jit)
    da, db = g(np.diag([2.0, 4.0]), np.array([2.0, 4.0]))
    np.testing.assert_allclose(db, [1.0, 0.5], rtol=1e-14)   # 2 y a^-T, y = [1, 1]
    np.testing.assert_allclose(da, -np.outer([1.0, 0.5], [1.0, 1.0]), rtol=1e-14)
    assert _adjoint_code(g).count("solve(") == 1, g.source


def factor_diagonal(a):
    return np.sum(cho_factor(a)[0] * np.array([[1.0, 0.0], [5.0, 1.0]]))


def test_cho_factor_by_hand(jit):
    # a = diag(4, 9): c = [[2, 0], [a10, 3]]; d c00 / d a00 = 1 / (2 * 2), d c11 / d a11
    # = 1 / (2 * 3), c01 = a01 / c00 moves with a01 by 1/2, a10 is copied (weight 5)
    # where this SciPy leaves a's entries in c's other triangle (newer SciPy zeroes them)
    a = np.diag([4.0, 9.0])
    kept = cho_factor(np.array([[4.0, 0.0], [7.0, 9.0]]))[0][1, 0] == 7.0
    g = srcgrad.grad(factor_diagonal, jit=jit)(a)
    np.testing.assert_allclose(g, [[0.25, 0.0], [5.0 if kept else 0.0, 1.0 / 6.0]],
                               rtol=1e-14, atol=1e-15)


def every_form(a, b):
    return (solved_lower(a, b) + solved(a, b[:, 0]) + structured(a, b) + whole_factor(a) +
            lower_factor(a))


def test_jvp_against_differences(jit, rng):
    a, b = spd(4), rng.standard_normal((4, 2))
    da, db = rng.standard_normal((4, 4)), rng.standard_normal((4, 2))
    got = srcgrad.jvp(every_form, wrt=(0, 1), jit=jit)(a, b, (da, db))[1]
    assert got == pytest.approx(slope(every_form, [a, b], [da, db]), rel=1e-6)


def test_hvp_against_differences(rng):
    a, y = spd(4), rng.standard_normal(4)
    da = rng.standard_normal((4, 4))
    h = 1e-5
    got = srcgrad.hvp(gp_nlml, jit=False)(a, y, da)
    g = srcgrad.grad(gp_nlml, jit=False)
    want = (g(a + h * da, y) - g(a - h * da, y)) / (2 * h)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


@numba.njit
def _compiled(a, b):
    c = cho_factor(a)
    low = cho_factor(a, lower=True)
    return (cholesky(a), cholesky(a, lower=True), c[0], low[0], cho_solve(c, b),
            cho_solve(low, b), solve(a, b), solve(a, b, assume_a="pos", lower=True),
            solve(a, b, transposed=True, assume_a="upper triangular"))


@compiles
def test_compiled_forms_give_scipys_values():
    a, b = spd(5), any_(5, 3)
    c, low = cho_factor(a), cho_factor(a, lower=True)
    want = (cholesky(a), cholesky(a, lower=True), c[0], low[0], cho_solve(c, b),
            cho_solve(low, b), solve(a, b), solve(a, b, assume_a="pos", lower=True),
            solve(a, b, transposed=True, assume_a="upper triangular"))
    for got, value in zip(_compiled(a, b), want, strict=True):
        np.testing.assert_allclose(got, value, rtol=1e-12)


def overwriting(a, b):
    return np.sum(cho_solve(cho_factor(a, overwrite_a=True), b))


def banded(a, b):
    return np.sum(solve(a, b, assume_a="banded"))


def stacked(a, b):
    return np.sum(cho_solve(cho_factor(a), b))


def test_refused(jit):
    with pytest.raises(srcgrad.MissingRule, match="overwrite_a"):
        srcgrad.grad(overwriting, jit=jit)(spd(2), np.ones(2))
    with pytest.raises(srcgrad.SrcgradError, match="banded"):
        srcgrad.grad(banded, jit=jit)(spd(2), np.ones(2))


def stacked_solve(a, b):
    return np.sum(solve(a, b))


def test_a_stack_of_matrices_is_refused():
    a, b = np.stack([spd(3), spd(3)]), np.ones((2, 3, 1))
    for fun in (stacked, stacked_solve):
        try:
            fun(a, b)
        except ValueError as plain:   # a SciPy before batched linalg (py310's): one matrix
            with pytest.raises(ValueError, match=re.escape(str(plain))):
                srcgrad.grad(fun, jit=False)(a, b)
            continue
        with pytest.raises(srcgrad.MissingRule, match="stack of matrices"):
            srcgrad.grad(fun, jit=False)(a, b)
