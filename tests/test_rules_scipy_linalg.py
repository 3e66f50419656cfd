"""scipy.linalg.solve_triangular (srcgrad/rules/scipy_linalg.py): the rule sweep's cases,
a gradient by hand, forward mode against central differences, the compiled form against
SciPy's values, and what is refused.
"""

import numba
import numpy as np
import pytest
from fd import slope
from marks import compiles
from scipy.linalg import solve_triangular
from sweep import check, domains, parametrize

import srcgrad

any_, pos, unit, distinct = domains(13)


def triangular(n):
    """A well-conditioned matrix: both triangles hold draws, the diagonal is large."""
    return unit(n, n) + 3.0 * np.eye(n)


def lower_vector(a, b):
    return np.sum(solve_triangular(a, b, lower=True) ** 2)


def upper_matrix(a, b):
    return np.sum(solve_triangular(a, b) * np.arange(b.size).reshape(b.shape))


def transposed_unit(a, b):
    return np.sum(solve_triangular(a, b, trans=1, lower=True, unit_diagonal=True) ** 2)


def positional_flags(a, b):
    return np.sum(solve_triangular(a, b, 1, False) ** 3)


def cases():
    """(id, primals covered, function, arguments, positions, compiled too)."""
    for fun in (lower_vector, upper_matrix, transposed_unit, positional_flags):
        yield fun.__name__, (solve_triangular,), fun, (triangular(4), any_(4)), [0, 1], False
        yield fun.__name__, (solve_triangular,), fun, (triangular(3), any_(3, 2)), [0, 1], \
            False
    yield "one-by-one", (solve_triangular,), lower_vector, (triangular(1), any_(1)), [0, 1], \
        False
    yield "every-form", (solve_triangular,), every_form, (triangular(4), any_(4, 2)), [0, 1], \
        True


def every_form(a, b):
    return lower_vector(a, b[:, 0]) + upper_matrix(a, b) + transposed_unit(a, b) + \
        positional_flags(a, b[:, 1])


CASES = list(cases())


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


def solved_sum(a, b):
    return np.sum(solve_triangular(a, b, lower=True))


def test_diagonal_by_hand(jit):
    # a = diag(d), y = b / d: d sum(y)/d b = 1/d = a^-T 1, and each entry read of the lower
    # triangle gets -(1/d_i) y_j (y_1 = (b_1 - a_10 y_0) / a_11), the upper one 0
    d, b = np.array([2.0, 4.0]), np.array([1.0, 3.0])
    ga, gb = srcgrad.grad(solved_sum, wrt=(0, 1), jit=jit)(np.diag(d), b)
    np.testing.assert_allclose(gb, 1.0 / d, rtol=1e-15)
    np.testing.assert_allclose(ga, [[-0.25, 0.0], [-0.125, -0.1875]], rtol=1e-15)


def test_jvp_against_differences(jit, rng):
    a, b = triangular(4), rng.standard_normal((4, 2))
    da, db = rng.standard_normal((4, 4)), rng.standard_normal((4, 2))
    got = srcgrad.jvp(every_form, wrt=(0, 1), jit=jit)(a, b, (da, db))[1]
    assert got == pytest.approx(slope(every_form, [a, b], [da, db]), rel=1e-6)


@numba.njit
def _compiled(a, b, v):
    return (solve_triangular(a, b), solve_triangular(a, b, lower=True),
            solve_triangular(a, v, trans=1, lower=True, unit_diagonal=True),
            solve_triangular(a, v, 1, False))


@compiles
def test_compiled_form_gives_scipys_values():
    a, b, v = triangular(5), any_(5, 3), any_(5)
    want = (solve_triangular(a, b), solve_triangular(a, b, lower=True),
            solve_triangular(a, v, trans=1, lower=True, unit_diagonal=True),
            solve_triangular(a, v, 1, False))
    for got, value in zip(_compiled(a, b, v), want, strict=True):
        np.testing.assert_allclose(got, value, rtol=1e-13)


def overwriting(a, b):
    return np.sum(solve_triangular(a, b, overwrite_b=True))


def test_overwrite_b_is_refused(jit):
    with pytest.raises(srcgrad.MissingRule, match="overwrite_b"):
        srcgrad.grad(overwriting, wrt=(0, 1), jit=jit)(triangular(2), np.ones(2))
