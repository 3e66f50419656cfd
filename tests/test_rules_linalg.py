"""Matrix decompositions (srcgrad/rules/decompositions.py): np.linalg.cholesky, eigvalsh,
pinv and norm against central differences (the sweep's `CASES`), values by hand, forward
mode (jvp) against differences of the function and hvp against differences of the
gradient, and the keyword forms that are refused.

cholesky and eigvalsh read one triangle of their argument, so their gradient is that
triangle's (the other is zero): the differences of the function say so too.
"""

import numpy as np
import pytest
from fd import assert_grad
from marks import compiles
from sweep import check, domains, parametrize

import srcgrad
from srcgrad.errors import MissingRule

any_, pos, unit, distinct = domains(20)

# np.linalg.cholesky takes `upper` from NumPy 2.0 (the `oldest` env has 1.24)
HAS_UPPER = np.lib.NumpyVersion(np.__version__) >= "2.0.0"
needs_upper = pytest.mark.skipif(not HAS_UPPER, reason="NumPy < 2.0: cholesky has no upper")


def spd(n, *stack):
    """A symmetric positive definite matrix (or a stack of them)."""
    m = any_(*stack, n, n)
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def cholesky_sum(a, w):
    return np.sum(np.linalg.cholesky(a) * w)


def upper_cholesky_sum(a, w):
    return np.sum(np.linalg.cholesky(a, upper=True) * w)


def eigenvalue_sum(a, w):
    return np.sum(np.linalg.eigvalsh(a) ** 2 * w)


def upper_eigenvalue_sum(a, w):
    return np.sum(np.linalg.eigvalsh(a, UPLO="U") * w)


def pinv_sum(a, w):
    return np.sum(np.linalg.pinv(a) * w)


def norm_2(x):
    return np.linalg.norm(x) ** 2 + np.linalg.norm(x)


def norm_orders(x):
    return (np.linalg.norm(x, 3) * np.linalg.norm(x, 1) + np.linalg.norm(x, np.inf) +
            np.linalg.norm(x, -np.inf) ** 2 + np.linalg.norm(x, 0))


def norm_along(x):
    return np.sum(np.linalg.norm(x, axis=1) ** 3) + \
        np.sum(np.linalg.norm(x, 2.5, axis=0, keepdims=True) * x)


def norm_matrix(x):
    return np.linalg.norm(x, "fro") ** 3 + np.linalg.norm(x, "nuc") + np.linalg.norm(x, 2) ** 2


def norm_of_stack(x):
    return np.sum(np.linalg.norm(x, "nuc", axis=(1, 2))) + np.sum(np.linalg.norm(x, axis=(0, 2)))


CASES = [
    ("cholesky", (np.linalg.cholesky,), cholesky_sum, (spd(3), any_(3, 3)), [0], True),
    *([("cholesky-upper", (np.linalg.cholesky,), upper_cholesky_sum, (spd(3), any_(3, 3)),
        [0], False)] if HAS_UPPER else []),
    ("cholesky-stack", (np.linalg.cholesky,), cholesky_sum, (spd(3, 2), any_(2, 3, 3)),
     [0], False),
    ("eigvalsh", (np.linalg.eigvalsh,), eigenvalue_sum, (spd(3), any_(3)), [0], True),
    ("eigvalsh-upper", (np.linalg.eigvalsh,), upper_eigenvalue_sum, (spd(3), any_(3)),
     [0], False),
    ("eigvalsh-stack", (np.linalg.eigvalsh,), eigenvalue_sum, (spd(3, 2), any_(2, 3)),
     [0], False),
    ("pinv", (np.linalg.pinv,), pinv_sum, (any_(2, 3), any_(3, 2)), [0], True),
    ("pinv-tall", (np.linalg.pinv,), pinv_sum, (any_(4, 3), any_(3, 4)), [0], False),
    ("norm", (np.linalg.norm,), norm_2, (any_(5),), [0], True),
    ("norm-matrix-default", (np.linalg.norm,), norm_2, (any_(3, 4),), [0], False),
    ("norm-orders", (np.linalg.norm,), norm_orders, (distinct(5),), [0], False),
    ("norm-axis", (np.linalg.norm,), norm_along, (any_(3, 4),), [0], True),
    ("norm-matrix", (np.linalg.norm,), norm_matrix, (any_(3, 4),), [0], False),
    ("norm-stack", (np.linalg.norm,), norm_of_stack, (any_(2, 3, 4),), [0], False),
]


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


def assert_forward(fun, args, da, jit, rtol=1e-5):
    """jvp against central differences of `fun`, and hvp against central differences of
    its gradient, along `da` (for the first argument)."""
    h = 1e-6
    plus, minus = (args[0] + h * da,) + args[1:], (args[0] - h * da,) + args[1:]
    slope = srcgrad.jvp(fun, jit=jit)(*args, da)[1]
    assert slope == pytest.approx((fun(*plus) - fun(*minus)) / (2 * h), rel=1e-6)
    grad = srcgrad.grad(fun, jit=jit)
    np.testing.assert_allclose(srcgrad.hvp(fun, jit=jit)(*args, da),
                               (grad(*plus) - grad(*minus)) / (2 * h), rtol=rtol, atol=1e-5)


def corner(a):
    return np.linalg.cholesky(a)[1, 1] + 2.0 * np.linalg.cholesky(a)[1, 0]


def test_cholesky_by_hand_and_forward(jit, rng):
    # a = [[4, 2], [2, 5]]: L = [[2, 0], [1, 2]], L11 = sqrt(a11 - a10^2 / a00) and
    # L10 = a10 / sqrt(a00), from the lower triangle only: d L11 = [[1/16, 0], [-1/4, 1/4]],
    # d L10 = [[-1/8, 0], [1/2, 0]]
    a = np.array([[4.0, 2.0], [2.0, 5.0]])
    np.testing.assert_allclose(np.linalg.cholesky(a), [[2.0, 0.0], [1.0, 2.0]])
    g = srcgrad.grad(corner, jit=jit)(a)
    np.testing.assert_allclose(g, [[1 / 16 - 1 / 4, 0.0], [-1 / 4 + 1.0, 1 / 4]])
    m, w = spd(3), rng.standard_normal((3, 3))
    assert_forward(cholesky_sum, (m, w), rng.standard_normal((3, 3)), jit)


@needs_upper
def test_upper_cholesky_reads_the_upper_triangle(jit, rng):
    # cholesky(a, upper=True) = cholesky(a^T)^T reads the upper triangle of a
    a, w = spd(3), rng.standard_normal((3, 3))
    g = srcgrad.grad(upper_cholesky_sum, jit=jit)(a, w)
    np.testing.assert_array_equal(np.tril(g, -1), 0.0)
    assert_grad(upper_cholesky_sum, [g], (a, w), [0])
    assert_forward(upper_cholesky_sum, (a, w), rng.standard_normal((3, 3)), jit)


def largest_eigenvalue(a):
    return np.max(np.linalg.eigvalsh(a))


def test_eigvalsh_by_hand_and_forward(jit, rng):
    # [[2, 1], [1, 2]] has eigenvalues 1 and 3, v = (1, 1) / sqrt(2) for 3: the gradient
    # of the symmetric matrix is v v^T = 1/2, so the lower triangle gets [[1/2, 0], [1, 1/2]]
    a = np.array([[2.0, 1.0], [1.0, 2.0]])
    g = srcgrad.grad(largest_eigenvalue, jit=jit)(a)
    np.testing.assert_allclose(g, [[0.5, 0.0], [1.0, 0.5]], atol=1e-12)
    m, w = spd(4), rng.standard_normal(4)
    assert_forward(eigenvalue_sum, (m, w), rng.standard_normal((4, 4)), jit)


def test_eigvalsh_at_a_repeated_eigenvalue(jit):
    # the identity's eigenvalues are all 1: the gradient of their sum (the trace) is
    # still defined, V V^T = I, as in JAX
    g = srcgrad.grad(eigenvalue_sum, jit=jit)(np.eye(3), np.ones(3))
    np.testing.assert_allclose(g, 2.0 * np.eye(3), atol=1e-12)


def test_pinv_by_hand_and_forward(jit, rng):
    # a row x: pinv(x) = x^T / |x|^2, so sum(pinv(x)) = sum(x) / |x|^2 has the gradient
    # 1 / |x|^2 - 2 x sum(x) / |x|^4: [-1/25, -7/25] at x = [1, 2]
    g = srcgrad.grad(pinv_sum, jit=jit)(np.array([[1.0, 2.0]]), np.ones((2, 1)))
    np.testing.assert_allclose(g, [[-1 / 25, -7 / 25]])
    a, w = rng.standard_normal((3, 5)), rng.standard_normal((5, 3))
    assert_forward(pinv_sum, (a, w), rng.standard_normal((3, 5)), jit)


def pinv_with_cutoff(a):
    return np.sum(np.linalg.pinv(a, 1e-10))


def hermitian_pinv(a):
    return np.sum(np.linalg.pinv(a, hermitian=True))


def test_pinv_with_a_cutoff_or_hermitian_is_refused():
    with pytest.raises(MissingRule, match="rcond"):
        srcgrad.grad(pinv_with_cutoff, jit=False)(np.eye(2))
    with pytest.raises(MissingRule, match="hermitian"):
        srcgrad.grad(hermitian_pinv, jit=False)(np.eye(2))


@compiles
def test_pinv_with_a_cutoff_compiled_is_a_clear_error():
    with pytest.raises(srcgrad.SrcgradError, match="rcond"):
        srcgrad.grad(pinv_with_cutoff, jit=True)(np.eye(2))


def two_norm(x):
    return np.linalg.norm(x)


def one_norm(x):
    return np.linalg.norm(x, 1)


def max_norm(x):
    return np.linalg.norm(x, np.inf)


def test_norm_by_hand_and_forward(jit, rng):
    x = np.array([3.0, -4.0])
    np.testing.assert_allclose(srcgrad.grad(two_norm, jit=jit)(x), [0.6, -0.8])
    np.testing.assert_allclose(srcgrad.grad(one_norm, jit=jit)(x), [1.0, -1.0])
    np.testing.assert_allclose(srcgrad.grad(max_norm, jit=jit)(x), [0.0, -1.0])
    # at zero: 0, as in JAX
    np.testing.assert_array_equal(srcgrad.grad(two_norm, jit=jit)(np.zeros(3)), 0.0)
    assert_forward(norm_along, (rng.standard_normal((3, 4)),), rng.standard_normal((3, 4)),
                   jit)


def test_matrix_norms_forward(rng):
    # as Python: numba's np.linalg.norm raises ValueError for a string ord (below)
    x = rng.standard_normal((3, 4))
    assert_forward(norm_matrix, (x,), rng.standard_normal((3, 4)), False)
    assert_forward(norm_of_stack, (rng.standard_normal((2, 3, 4)),),
                   rng.standard_normal((2, 3, 4)), False)


@compiles
def test_matrix_norms_with_a_string_ord_compiled_are_a_clear_error():
    with pytest.raises(srcgrad.SrcgradError, match="string ord"):
        srcgrad.grad(norm_matrix, jit=True)(np.ones((2, 3)))


def spectral_norm(x):
    return np.linalg.norm(x, 2)


@compiles
def test_spectral_norm_compiled_by_hand_and_forward(rng):
    # the largest singular value of diag(3, 1) is 3: its gradient u_1 v_1^T = e_1 e_1^T
    g = srcgrad.grad(spectral_norm, jit=True)(np.diag([3.0, 1.0]))
    np.testing.assert_allclose(np.abs(g), [[1.0, 0.0], [0.0, 0.0]], atol=1e-12)
    assert_forward(spectral_norm, (rng.standard_normal((3, 4)),),
                   rng.standard_normal((3, 4)), True)


def matrix_one_norm(x):
    return np.linalg.norm(x, 1)


def half_norm(x):
    return np.linalg.norm(x, 0.5)


def test_norms_without_a_rule_are_refused(jit):
    with pytest.raises(MissingRule, match="np.linalg.norm of a matrix"):
        srcgrad.grad(matrix_one_norm, jit=jit)(np.ones((2, 2)))
    with pytest.raises(MissingRule, match="ord < 1"):
        srcgrad.grad(half_norm, jit=jit)(np.ones(3))


@compiles
def test_a_stack_compiled_is_a_clear_error():
    # as Python, stacks differentiate (the sweep's cases); numba's take one matrix
    for fun, args in ((cholesky_sum, (spd(2, 2), np.ones((2, 2, 2)))),
                      (eigenvalue_sum, (spd(2, 2), np.ones((2, 2))))):
        with pytest.raises(srcgrad.SrcgradError, match="one matrix"):
            srcgrad.grad(fun, jit=True)(*args)
