"""scipy.linalg.lu_factor and lu_solve (srcgrad/rules/scipy_lu.py): the rule sweep's cases,
gradients by hand, forward mode and hvp against central differences, the compiled forms
against SciPy's values, and what is refused.
"""

import numba
import numpy as np
import pytest
from fd import assert_grad, slope
from marks import compiles
from scipy.linalg import lu_factor, lu_solve
from sweep import check, check_jvp, domains, parametrize

import srcgrad

any_, pos, unit, distinct = domains(31)


def general(n):
    """Invertible, far from symmetric, and pivoting (the largest entry of the first
    column is not on the diagonal)."""
    a = any_(n, n) + 2.5 * np.eye(n)
    a[n - 1, 0] = 6.0 if n > 1 else a[0, 0]
    return a


WEIGHTS = np.arange(16.0).reshape(4, 4) / 7.0 - 1.0


def factors(a):
    # lu holds L below its diagonal and U on and above it: both differentiate
    lu, piv = lu_factor(a)
    return np.sum(lu * WEIGHTS[:a.shape[0], :a.shape[0]]) + np.sum(lu_factor(a)[0] ** 2)


def solved(a, b):
    lu, piv = lu_factor(a)
    x = lu_solve((lu, piv), b)
    return (np.sum(x * np.arange(x.size).reshape(x.shape)) +
            np.sum(lu_solve((lu, piv), b, trans=1) ** 2) +
            np.sum(lu_solve((lu, piv), b, 2) * 0.5))


def log_abs_det(a, b):
    lu, piv = lu_factor(a)
    return np.sum(np.log(np.abs(np.diag(lu)))) + b @ lu_solve((lu, piv), b)


def cases():
    """(id, primals covered, function, arguments, positions, compiled too)."""
    for n in (1, 3, 4):
        yield "factors", (lu_factor,), factors, (general(n),), [0], n == 4
    for shape in ((4,), (4, 2)):
        yield "solved", (lu_factor, lu_solve), solved, (general(4), any_(*shape)), [0, 1], True
    yield "log_abs_det", (lu_factor, lu_solve), log_abs_det, (general(5), any_(5)), [0, 1], \
        True


CASES = list(cases())


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


@parametrize(CASES)
def test_jvp(case, jit):
    check_jvp(case, jit)


def solved_sum(a, b):
    lu_piv = lu_factor(a)
    return np.sum(lu_solve(lu_piv, b)) + 2.0 * np.sum(lu_solve(lu_piv, b, trans=1))


def test_lu_solve_by_hand(jit):
    # a = [[1, 2], [4, 3]] (rows swapped by the pivots), a^-1 = -[[3, -2], [-4, 1]] / 5.
    # sum(a^-1 b): b's gradient a^-T 1 = [1, 1] / 5, and a's -(a^-T 1) (a^-1 b)^T with
    # a^-1 b = [-1, 3] / 5 for b = [1, 1]; 2 sum(a^-T b): b's 2 a^-1 1 = [-2, 6] / 5, and
    # a^T's -2 (a^-1 1)(a^-T b)^T, so a's -2 (a^-T b)(a^-1 1)^T with a^-T b = [1, 1] / 5
    a, b = np.array([[1.0, 2.0], [4.0, 3.0]]), np.ones(2)
    da, db = srcgrad.grad(solved_sum, wrt=(0, 1), jit=jit)(a, b)
    np.testing.assert_allclose(db, [0.2 - 0.4, 0.2 + 1.2], rtol=1e-13)
    want = -3.0 * np.outer([0.2, 0.2], [-0.2, 0.6])
    np.testing.assert_allclose(da, want, rtol=1e-13)


def multiplier(a):
    return np.sum(lu_factor(a)[0] * np.array([[0.0, 0.0], [1.0, 0.0]]))


def test_lu_factor_by_hand(jit):
    # a = [[1, 2], [4, 3]]: the pivots swap the rows, and L's multiplier is a00 / a10:
    # d/da00 = 1/4, d/da10 = -a00 / a10^2 = -1/16
    g = srcgrad.grad(multiplier, jit=jit)(np.array([[1.0, 2.0], [4.0, 3.0]]))
    np.testing.assert_allclose(g, [[0.25, 0.0], [-0.0625, 0.0]], rtol=1e-14, atol=1e-16)


def _adjoint_code(g):
    return "\n".join(line for line in g.source.split("# adjoint")[1].splitlines()
                     if not line.strip().startswith("#"))


def solved_once(a, b):
    return np.sum(lu_solve(lu_factor(a), b) ** 2)


def test_lu_solve_solves_once_for_both_gradients(jit):
    g = srcgrad.grad(solved_once, wrt=(0, 1), jit=jit)
    a, b = general(3), any_(3)
    assert_grad(solved_once, g(a, b), (a, b), [0, 1])
    assert _adjoint_code(g).count("lu_solve(") == 1, g.source


def every_form(a, b):
    return factors(a) + solved(a, b) + log_abs_det(a, b[:, 0])


def test_jvp_of_every_form(jit, rng):
    a, b = general(4), rng.standard_normal((4, 2))
    da, db = rng.standard_normal((4, 4)), rng.standard_normal((4, 2))
    got = srcgrad.jvp(every_form, wrt=(0, 1), jit=jit)(a, b, (da, db))[1]
    assert got == pytest.approx(slope(every_form, [a, b], [da, db]), rel=1e-6)


@pytest.mark.parametrize("fun", [log_abs_det, solved, factors], ids=lambda f: f.__name__)
def test_hvp_against_differences(fun, rng):
    a, b = general(4), rng.standard_normal(4)
    da = rng.standard_normal((4, 4))
    args = (a,) if fun is factors else (a, b)
    h = 1e-5
    got = srcgrad.hvp(fun, jit=False)(*args, da)
    g = srcgrad.grad(fun, jit=False)
    want = (g(a + h * da, *args[1:]) - g(a - h * da, *args[1:])) / (2 * h)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@compiles
def test_hvp_compiled(rng):
    a, b, da = general(4), rng.standard_normal(4), rng.standard_normal((4, 4))
    got = srcgrad.hvp(log_abs_det, jit=True)(a, b, da)
    np.testing.assert_allclose(got, srcgrad.hvp(log_abs_det, jit=False)(a, b, da),
                               rtol=1e-10)


@numba.njit
def _compiled(a, b):
    lu, piv = lu_factor(a)
    return lu, piv, lu_solve((lu, piv), b), lu_solve((lu, piv), b, 1), lu_solve((lu, piv), b[:, 0])


@compiles
def test_compiled_forms_give_scipys_values():
    a, b = general(5), any_(5, 3)
    lu, piv = lu_factor(a)
    want = (lu, piv, lu_solve((lu, piv), b), lu_solve((lu, piv), b, 1),
            lu_solve((lu, piv), b[:, 0]))
    got = _compiled(a, b)
    np.testing.assert_array_equal(got[1], piv)
    for g, value in zip(got, want, strict=True):
        np.testing.assert_allclose(g, value, rtol=1e-12)


def overwriting(a, b):
    return np.sum(lu_solve(lu_factor(a, overwrite_a=True), b))


def rectangular(a):
    return np.sum(lu_factor(a)[0])


def test_refused(jit):
    with pytest.raises(srcgrad.MissingRule, match="overwrite_a"):
        srcgrad.grad(overwriting, jit=jit)(general(2), np.ones(2))


def test_a_rectangular_matrix_is_refused():
    with pytest.raises(srcgrad.MissingRule, match="one square matrix"):
        srcgrad.grad(rectangular, jit=False)(np.ones((3, 2)) + np.eye(3, 2))
