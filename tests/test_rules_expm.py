"""scipy.linalg.expm (srcgrad/rules/scipy_linalg.py): the rule sweep's cases, a gradient
by hand at a diagonal matrix, forward mode against central differences, and the compiled
form (scaling and squaring, Padé 13) against SciPy's values.
"""

import numba
import numpy as np
import pytest
from fd import assert_grad, slope
from marks import compiles
from scipy.linalg import expm
from sweep import check, check_hvp, domains, parametrize

import srcgrad
from srcgrad.rules.scipy_linalg import expm_direction

any_, pos, unit, distinct = domains(17)


def expm_sin(a):
    return np.sum(np.sin(expm(a)) * np.arange(a.size).reshape(a.shape))


def expm_of_a_product(a, b):
    # expm of a product, read twice
    e = expm(a @ b)
    return np.sum(e * e.T) + np.trace(e)


def expm_sum(a):
    return np.sum(expm(a))


def cases():
    """(id, primals covered, function, arguments, positions, compiled too)."""
    yield "sin", (expm,), expm_sin, (any_(3, 3),), [0], True
    yield "product", (expm,), expm_of_a_product, (any_(3, 3), any_(3, 3)), [0, 1], False
    yield "one-by-one", (expm,), expm_sin, (any_(1, 1),), [0], False
    # a norm past the Padé approximant's reach: scaled and squared
    yield "scaled", (expm,), expm_sin, (4.0 * unit(4, 4),), [0], True


CASES = list(cases())


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


def test_diagonal_by_hand(jit):
    """At a = diag(d), L(a, e)_ij = e_ij (exp(d_i) - exp(d_j)) / (d_i - d_j), exp(d_i) on
    the diagonal: the gradient of sum(expm(a)) is those divided differences."""
    d = np.array([0.3, -0.5, 1.2])
    g = srcgrad.grad(expm_sum, jit=jit)(np.diag(d))
    want = (np.exp(d)[:, None] - np.exp(d)[None, :]) / (d[:, None] - d[None, :] + np.eye(3))
    want[np.diag_indices(3)] = np.exp(d)
    np.testing.assert_allclose(g, want, rtol=1e-10)
    assert_grad(expm_sum, [g], (np.diag(d),), (0,))


def test_jvp_against_differences(jit, rng):
    a, b = 0.5 * rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    da, db = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    value, got = srcgrad.jvp(expm_of_a_product, wrt=(0, 1), jit=jit)(a, b, (da, db))
    assert value == pytest.approx(expm_of_a_product(a, b), rel=1e-12)
    assert got == pytest.approx(slope(expm_of_a_product, [a, b], [da, db]), rel=1e-6)


@numba.njit
def _compiled(a, e):
    return expm(a), expm_direction(a, e)


@compiles
@pytest.mark.parametrize("scale", [0.0, 0.01, 1.0, 10.0])
def test_compiled_form_gives_scipys_values(scale):
    rng = np.random.default_rng(3)
    a, e = scale * rng.standard_normal((5, 5)), rng.standard_normal((5, 5))
    got, direction = _compiled(a, e)
    np.testing.assert_allclose(got, expm(a), rtol=1e-10, atol=1e-13 * np.abs(expm(a)).max())
    want = expm_direction(a, e)
    np.testing.assert_allclose(direction, want, rtol=1e-9, atol=1e-12 * np.abs(want).max())
    assert _compiled(np.zeros((0, 0)), np.zeros((0, 0)))[0].shape == (0, 0)


@pytest.mark.parametrize("case", [c for c in CASES if c[0] in ("sin", "scaled")],
                         ids=["sin", "scaled"])
def test_hvp_against_differences(case, jit):
    """Forward over reverse: the tangent of L(a^T, dy) (expm_direction's own tangent)."""
    check_hvp(case, jit)
