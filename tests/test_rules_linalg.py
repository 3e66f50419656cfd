"""Matrix decompositions (srcgrad/rules/decompositions.py: np.linalg.cholesky, eigvalsh,
pinv and norm; srcgrad/rules/factorizations.py: slogdet, eigh, qr, svd and svdvals;
srcgrad/rules/least_squares.py: lstsq) against
central differences (the sweep's `CASES`), values by hand, forward mode (jvp) against
differences of the function and hvp against differences of the gradient, and the keyword
forms that are refused. The functions of eigenvectors and singular vectors read them
through products within one vector (v_i^T W v_i), which do not depend on their signs.

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
from srcgrad.rules.factorizations import singular_values

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
            np.linalg.norm(x, -np.inf) ** 2 + np.linalg.norm(x, 0) +
            np.linalg.norm(x, 0.5) * np.linalg.norm(x, -1.5))


def norm_along(x):
    return np.sum(np.linalg.norm(x, axis=1) ** 3) + \
        np.sum(np.linalg.norm(x, 2.5, axis=0, keepdims=True) * x) + \
        np.sum(np.linalg.norm(x, 0.7, axis=1) ** 2 + np.linalg.norm(x, -2, axis=1))


def norm_matrix(x):
    return np.linalg.norm(x, "fro") ** 3 + np.linalg.norm(x, "nuc") + np.linalg.norm(x, 2) ** 2


def norm_induced(x):
    # the largest and smallest column and row sums of |x|
    return (np.linalg.norm(x, 1) * np.linalg.norm(x, -1) + np.linalg.norm(x, np.inf) +
            np.linalg.norm(x, -np.inf) ** 2)


def norm_induced_of_stack(x):
    return np.sum(np.linalg.norm(x, 1, axis=(1, 2)) ** 2) + \
        np.sum(np.linalg.norm(x, -np.inf, axis=(0, 2)))


def norm_of_stack(x):
    return np.sum(np.linalg.norm(x, "nuc", axis=(1, 2))) + np.sum(np.linalg.norm(x, axis=(0, 2)))


def logdet_sum(a):
    sign, logdet = np.linalg.slogdet(a)
    return np.sum(logdet ** 2) + np.sum(sign)


def eigh_sum(a, w, m):
    values, vectors = np.linalg.eigh(a)
    return np.sum(values ** 2 * w) + np.sum(vectors * (m @ vectors))


def upper_eigh_sum(a, w, m):
    values, vectors = np.linalg.eigh(a, UPLO="U")
    return np.sum(values * w) + np.sum(vectors * (m @ vectors))


def qr_sum(a, w, v):
    q, r = np.linalg.qr(a)
    return np.sum(q * w) + np.sum(r ** 2 * v)


def svd_sum(a, w, v, z):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum(u * (w @ u)) + np.sum(s * v) + np.sum(vh * (vh @ z))


def square_svd_sum(a, w, v, z):
    u, s, vh = np.linalg.svd(a)
    return np.sum(u * (w @ u)) + np.sum(s * v) + np.sum(vh * (vh @ z))


def svd_squares(a, w, v, z):
    # elementwise only: the gradient of `stack @ matrix` is not this file's to test
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum((u * w) ** 2) + np.sum(s * v) + np.sum((vh * z) ** 2)


def values_only_svd_sum(a, w):
    # np.linalg.svd(a, compute_uv=False) is differentiated as svdvals (`singular_values`)
    return np.sum(np.linalg.svd(a, full_matrices=False, compute_uv=False) ** 2 * w)


def svdvals_sum(a, w):
    return np.sum(np.linalg.svdvals(a) ** 2 * w)


def lstsq_sum(a, b, w):
    x, residuals, rank, sv = np.linalg.lstsq(a, b, rcond=None)
    return np.sum(x * w) ** 2 + np.sum(residuals) + np.sum(sv ** 2) + rank


def lstsq_vector(a, b):
    return np.sum(np.sin(np.linalg.lstsq(a, b, rcond=None)[0]))


HAS_SVDVALS = hasattr(np.linalg, "svdvals")
needs_svdvals = pytest.mark.skipif(not HAS_SVDVALS, reason="NumPy < 2.0: no svdvals")


def invertible(n, *stack):
    return any_(*stack, n, n) + 3.0 * np.eye(n)


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
    ("norm-matrix", (np.linalg.norm,), norm_matrix, (any_(3, 4),), [0], True),
    ("norm-stack", (np.linalg.norm,), norm_of_stack, (any_(2, 3, 4),), [0], False),
    ("norm-induced", (np.linalg.norm,), norm_induced, (distinct(3, 4),), [0], True),
    ("norm-induced-stack", (np.linalg.norm,), norm_induced_of_stack, (distinct(2, 3, 4),),
     [0], False),
    ("lstsq", (np.linalg.lstsq,), lstsq_sum, (any_(5, 3), any_(5, 2), any_(3, 2)), [0, 1],
     True),
    ("lstsq-vector-square", (np.linalg.lstsq,), lstsq_vector,
     (any_(3, 3) + 3.0 * np.eye(3), any_(3)), [0, 1], False),
    ("slogdet", (np.linalg.slogdet,), logdet_sum, (invertible(3),), [0], True),
    ("slogdet-stack", (np.linalg.slogdet,), logdet_sum, (invertible(3, 2),), [0], False),
    ("eigh", (np.linalg.eigh,), eigh_sum, (spd(3), any_(3), any_(3, 3)), [0], True),
    ("eigh-upper", (np.linalg.eigh,), upper_eigh_sum, (spd(3), any_(3), any_(3, 3)),
     [0], False),
    ("eigh-stack", (np.linalg.eigh,), eigh_sum, (spd(3, 2), any_(2, 3), any_(3, 3)),
     [0], False),
    ("qr", (np.linalg.qr,), qr_sum, (any_(4, 3), any_(4, 3), any_(3, 3)), [0], True),
    ("qr-square", (np.linalg.qr,), qr_sum, (any_(3, 3), any_(3, 3), any_(3, 3)), [0], False),
    ("qr-stack", (np.linalg.qr,), qr_sum, (any_(2, 4, 3), any_(4, 3), any_(3, 3)), [0], False),
    ("svd", (np.linalg.svd,), svd_sum, (any_(4, 3), any_(4, 4), any_(3), any_(3, 3)),
     [0], True),
    ("svd-wide", (np.linalg.svd,), svd_sum, (any_(3, 4), any_(3, 3), any_(3), any_(4, 4)),
     [0], False),
    ("svd-square", (np.linalg.svd,), square_svd_sum,
     (any_(3, 3), any_(3, 3), any_(3), any_(3, 3)), [0], False),
    ("svd-stack", (np.linalg.svd,), svd_squares,
     (any_(2, 4, 3), any_(4, 3), any_(3), any_(3, 3)), [0], False),
    ("svd-values-only", (singular_values,), values_only_svd_sum, (any_(4, 3), any_(3)), [0],
     True),
    ("svd-values-only-stack", (singular_values,), values_only_svd_sum,
     (any_(2, 3, 4), any_(3)), [0], False),
    *([("svdvals", (np.linalg.svdvals,), svdvals_sum, (any_(4, 3), any_(3)), [0], True),
       ("svdvals-stack", (np.linalg.svdvals,), svdvals_sum, (any_(2, 3, 4), any_(3)),
        [0], False)] if HAS_SVDVALS else []),
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
    grad = srcgrad.grad(fun, jit=False)  # (the reference: its Python form)
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


@pytest.mark.compiled
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


def half_norm(x):
    return np.linalg.norm(x, 0.5)


def negative_norm(x):
    return np.linalg.norm(x, -1)


def test_norms_of_order_below_one_by_hand(jit):
    # (sqrt 1 + sqrt 4)^2 = 9; its gradient sign(x) (|x| / 9)^(-1/2)
    np.testing.assert_allclose(srcgrad.grad(half_norm, jit=jit)(np.array([1.0, -4.0])),
                               [3.0, -1.5])
    # 1 / (1/2 + 1/4) = 4/3; its gradient sign(x) (|x| / (4/3))^(-2)
    np.testing.assert_allclose(srcgrad.grad(negative_norm, jit=jit)(np.array([2.0, -4.0])),
                               [4.0 / 9.0, -1.0 / 9.0])
    # a zero entry: ord < 1 has no derivative there (NaN, as JAX's); for ord < 0 the norm is
    # 0 whatever the other entries are
    g = srcgrad.grad(negative_norm, jit=False)(np.array([0.0, 2.0, -1.0]))
    assert np.isnan(g[0]) and np.array_equal(g[1:], [0.0, 0.0])
    assert np.isnan(srcgrad.grad(half_norm, jit=jit)(np.array([0.0, 2.0]))[0])


def test_matrix_norms_forward(rng):
    x = rng.standard_normal((3, 4))
    assert_forward(norm_of_stack, (rng.standard_normal((2, 3, 4)),),
                   rng.standard_normal((2, 3, 4)), False)
    assert_forward(norm_matrix, (x,), rng.standard_normal((3, 4)), False)


@pytest.mark.compiled
@compiles
def test_matrix_norms_with_a_string_ord_compiled(rng):
    assert_forward(norm_matrix, (rng.standard_normal((3, 4)),), rng.standard_normal((3, 4)),
                   True)


def fro_and_nuc(x):
    return np.linalg.norm(x, "fro") + 2.0 * np.linalg.norm(x, "nuc")


def test_fro_and_nuc_by_hand(jit):
    # x = [[3, 0], [0, -4]]: fro = 5, its gradient x / 5; nuc = 3 + 4, its gradient
    # U V^T = sign(x) on the diagonal
    g = srcgrad.grad(fro_and_nuc, jit=jit)(np.array([[3.0, 0.0], [0.0, -4.0]]))
    np.testing.assert_allclose(g, [[0.6 + 2.0, 0.0], [0.0, -0.8 - 2.0]], atol=1e-12)


def fro_of_rows(x):
    return np.sum(np.linalg.norm(x, "fro", axis=1))


@pytest.mark.compiled
@compiles
def test_string_ords_numba_has_no_form_for_are_a_clear_error():
    # NumPy itself refuses 'fro' along one axis: the Python form's error, with the line
    with pytest.raises(ValueError, match="Invalid norm order 'fro'"):
        srcgrad.grad(fro_of_rows, jit=True)(np.ones((2, 3)))
    # numba's forms take one matrix, no axis
    with pytest.raises(srcgrad.SrcgradError, match="'fro' or 'nuc' of one matrix"):
        srcgrad.grad(norm_of_stack, jit=True)(np.ones((2, 2, 3)))


def spectral_norm(x):
    return np.linalg.norm(x, 2)


@pytest.mark.compiled
@compiles
def test_spectral_norm_compiled_by_hand_and_forward(rng):
    # the largest singular value of diag(3, 1) is 3: its gradient u_1 v_1^T = e_1 e_1^T
    g = srcgrad.grad(spectral_norm, jit=True)(np.diag([3.0, 1.0]))
    np.testing.assert_allclose(np.abs(g), [[1.0, 0.0], [0.0, 0.0]], atol=1e-12)
    assert_forward(spectral_norm, (rng.standard_normal((3, 4)),),
                   rng.standard_normal((3, 4)), True)


def matrix_one_norm(x):
    return np.linalg.norm(x, 1)


def matrix_inf_norm(x):
    return np.linalg.norm(x, np.inf)


@pytest.mark.compiled
@compiles
def test_a_stack_compiled_is_a_clear_error():
    # as Python, stacks differentiate (the sweep's cases); numba's take one matrix
    for fun, args in ((cholesky_sum, (spd(2, 2), np.ones((2, 2, 2)))),
                      (eigenvalue_sum, (spd(2, 2), np.ones((2, 2))))):
        with pytest.raises(srcgrad.SrcgradError, match="one matrix"):
            srcgrad.grad(fun, jit=True)(*args)


def test_slogdet_by_hand_and_forward(jit, rng):
    # diag(2, -3): sign -1, log|det| = log 6, whose gradient is a^-T = diag(1/2, -1/3);
    # the sign is piecewise constant (no gradient)
    a = np.diag([2.0, -3.0])
    g = srcgrad.grad(logdet_sum, jit=jit)(a)
    np.testing.assert_allclose(g, 2.0 * np.log(6.0) * np.diag([0.5, -1.0 / 3.0]), atol=1e-12)
    assert_forward(logdet_sum, (invertible(3),), rng.standard_normal((3, 3)), jit)


def first_vector_product(a):
    vectors = np.linalg.eigh(a)[1]
    return vectors[0, 0] * vectors[1, 0]


def eigenvalue_weights(a, w):
    values, vectors = np.linalg.eigh(a)
    return np.sum(values * w)


def test_eigh_by_hand_and_forward(jit, rng):
    # [[1, e], [e, 3]]: the eigenvector of the eigenvalue near 1 is (1, -e / 2) to first
    # order, so v_0 v_1 has the derivative -1/2 in the entry e (the lower triangle read)
    g = srcgrad.grad(first_vector_product, jit=jit)(np.diag([1.0, 3.0]))
    np.testing.assert_allclose(g, [[0.0, 0.0], [-0.5, 0.0]], atol=1e-12)
    m, w, z = spd(4), rng.standard_normal(4), rng.standard_normal((4, 4))
    assert_forward(eigh_sum, (m, w, z), rng.standard_normal((4, 4)), jit, rtol=1e-4)
    assert_forward(upper_eigh_sum, (m, w, z), rng.standard_normal((4, 4)), jit, rtol=1e-4)


def test_eigh_at_a_repeated_eigenvalue(jit):
    # the identity's eigenvalues repeat: the values' gradient is V diag(w) V^T (finite,
    # as in JAX), the vectors' has no value there and is nan, never a silent number
    w = np.array([1.0, 2.0, 3.0])
    g = srcgrad.grad(eigenvalue_weights, jit=jit)(np.eye(3), w)
    np.testing.assert_allclose(g, np.diag(w), atol=1e-12)
    g = srcgrad.grad(eigh_sum, jit=jit)(np.eye(3), w, np.arange(9.0).reshape(3, 3))
    assert np.isnan(g).any()


def r_squared(a):
    return np.linalg.qr(a)[1][0, 0] ** 2


def q_times_r(a):
    q, r = np.linalg.qr(a)
    return q[0, 0] * r[0, 0]


def test_qr_by_hand_and_forward(jit, rng):
    # a column [3, 4]: R = +-5, so R^2 = |a|^2 has the gradient 2a, and Q R = a
    a = np.array([[3.0], [4.0]])
    np.testing.assert_allclose(srcgrad.grad(r_squared, jit=jit)(a), [[6.0], [8.0]])
    np.testing.assert_allclose(srcgrad.grad(q_times_r, jit=jit)(a), [[1.0], [0.0]],
                               atol=1e-12)
    args = (rng.standard_normal((5, 3)), rng.standard_normal((5, 3)),
            rng.standard_normal((3, 3)))
    assert_forward(qr_sum, args, rng.standard_normal((5, 3)), jit, rtol=1e-4)


def complete_qr(a):
    return np.sum(np.linalg.qr(a, mode="complete")[1])


def r_only(a):
    return np.sum(np.linalg.qr(a, mode="r"))


def test_qr_other_modes_and_wide_matrices_are_refused():
    with pytest.raises(MissingRule, match="mode='reduced'"):
        srcgrad.grad(complete_qr, jit=False)(np.ones((3, 2)))
    with pytest.raises(MissingRule, match="mode='reduced'"):
        srcgrad.grad(r_only, jit=False)(np.ones((3, 2)))
    with pytest.raises(MissingRule, match="wide"):
        srcgrad.grad(r_squared, jit=False)(np.ones((2, 3)))


@compiles
def test_qr_other_modes_and_wide_matrices_compiled_are_clear_errors():
    with pytest.raises(srcgrad.SrcgradError, match="mode='reduced'"):
        srcgrad.grad(complete_qr, jit=True)(np.ones((3, 2)))
    with pytest.raises(MissingRule, match="wide"):
        srcgrad.grad(r_squared, jit=True)(np.ones((2, 3)))


def largest_singular_value(a):
    return np.linalg.svd(a, full_matrices=False)[1][0]


def test_svd_by_hand_and_forward(jit, rng):
    # the largest singular value of [[3, 0], [0, -1], [0, 0]] is 3, its gradient
    # u_1 v_1^T = e_1 e_1^T
    a = np.array([[3.0, 0.0], [0.0, -1.0], [0.0, 0.0]])
    g = srcgrad.grad(largest_singular_value, jit=jit)(a)
    np.testing.assert_allclose(g, [[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]], atol=1e-12)
    for shape in ((5, 3), (3, 5)):
        m, n = shape
        args = (rng.standard_normal(shape), rng.standard_normal((m, m)),
                rng.standard_normal(3), rng.standard_normal((n, n)))
        assert_forward(svd_sum, args, rng.standard_normal(shape), jit, rtol=1e-4)


def values_only_svd(a):
    return np.sum(np.linalg.svd(a, compute_uv=False))


def full_svd(a):
    return np.sum(np.linalg.svd(a)[1])


def hermitian_svd(a):
    return np.sum(np.linalg.svd(a, hermitian=True)[1])


def test_induced_matrix_norms_by_hand(jit):
    # |x| column sums (4, 4): norm 1 is 4, its gradient sign(x) shared by the two columns;
    # row sums (3, 5): norm inf is 5, its gradient sign(x) in row 1
    x = np.array([[1.0, -2.0], [3.0, 2.0]])
    np.testing.assert_allclose(srcgrad.grad(matrix_one_norm, jit=jit)(x),
                               [[0.5, -0.5], [0.5, 0.5]])
    np.testing.assert_allclose(srcgrad.grad(matrix_inf_norm, jit=jit)(x), [[0, 0], [1, 1]])
    v = np.array([[0.5, 1.0], [-1.0, 2.0]])
    h = srcgrad.hvp(norm_induced, jit=jit)(x + 0.1 * v, v)   # piecewise linear terms
    g = srcgrad.grad(norm_induced, jit=False)
    np.testing.assert_allclose(h, (g(x + 0.1 * v + 1e-6 * v) - g(x + 0.1 * v - 1e-6 * v))
                               / 2e-6, rtol=1e-5, atol=1e-6)


def test_values_only_svd_by_hand(jit):
    # the sum of the singular values of diag(2, -3) is 5; its gradient U V^T = diag(1, -1)
    np.testing.assert_allclose(srcgrad.grad(values_only_svd, jit=jit)(np.diag([2.0, -3.0])),
                               [[1.0, 0.0], [0.0, -1.0]], atol=1e-12)


def test_svd_forms_without_a_rule_are_refused():
    with pytest.raises(MissingRule, match="full_matrices=False"):
        srcgrad.grad(full_svd, jit=False)(np.ones((3, 2)))
    with pytest.raises(MissingRule, match="hermitian"):
        srcgrad.grad(hermitian_svd, jit=False)(np.eye(2))


@pytest.mark.compiled
@compiles
def test_svd_forms_without_a_rule_compiled_are_clear_errors():
    with pytest.raises(MissingRule, match="full_matrices=False"):
        srcgrad.grad(full_svd, jit=True)(np.ones((3, 2)))


@needs_svdvals
def test_svdvals_by_hand_and_forward(jit, rng):
    # svdvals(diag(3, -1)) = (3, 1): the gradient of s_0^2 + 2 s_1^2 is
    # U diag(2 s_0, 4 s_1) V^T = diag(6, -4)
    g = srcgrad.grad(svdvals_sum, jit=jit)(np.diag([3.0, -1.0]), np.array([1.0, 2.0]))
    np.testing.assert_allclose(g, np.diag([6.0, -4.0]), atol=1e-12)
    args = (rng.standard_normal((4, 3)), rng.standard_normal(3))
    assert_forward(svdvals_sum, args, rng.standard_normal((4, 3)), jit, rtol=1e-4)


def first_coefficient(a, b):
    return np.linalg.lstsq(a, b, rcond=None)[0][0]


def lstsq_of_b(b, a):
    x, residuals, rank, sv = np.linalg.lstsq(a, b, rcond=None)
    return np.sum(x ** 3) + np.sum(residuals ** 2)


def test_lstsq_by_hand_and_forward(jit, rng):
    # one column a: x = a.b / a.a, so dx/db = a / a.a and dx/da = b / a.a - 2 (a.b) a / (a.a)^2:
    # at a = (1, 2), b = (3, 4): [0.2, 0.4] and [-0.28, -0.96]
    a, b = np.array([[1.0], [2.0]]), np.array([3.0, 4.0])
    da, db = srcgrad.grad(first_coefficient, wrt=(0, 1), jit=jit)(a, b)
    np.testing.assert_allclose(db, [0.2, 0.4])
    np.testing.assert_allclose(da, [[-0.28], [-0.96]])
    m, bs, w = rng.standard_normal((5, 3)), rng.standard_normal((5, 2)), rng.standard_normal((3, 2))
    assert_forward(lstsq_sum, (m, bs, w), rng.standard_normal((5, 3)), jit)
    assert_forward(lstsq_of_b, (bs, m), rng.standard_normal((5, 2)), jit)
    # a vector right-hand side's forward mode as Python only (its compiled gradient is
    # checked by hand above): a third compiled jvp, grad and hvp cost a third of the test
    assert_forward(lstsq_of_b, (bs[:, 0], m), rng.standard_normal(5), False)


def test_lstsq_of_a_wide_or_rank_deficient_matrix_is_refused(jit):
    for a in (np.ones((2, 3)), np.ones((3, 2))):
        with pytest.raises(MissingRule, match="full column rank"):
            srcgrad.grad(first_coefficient, jit=jit)(a, np.ones(a.shape[0]))


def det_of_rank_one(x):
    return np.linalg.det(x * np.ones((2, 2))) + np.sum(x)


def determinant(a):
    return np.linalg.det(a)


def weighted_dets(s):
    return np.sum(np.linalg.det(s) * np.array([1.0, 2.0]))


def test_det_at_a_singular_matrix(jit, rng):
    # det is differentiable everywhere: its gradient is the adjugate's transpose. Before,
    # inv(a) raised LinAlgError at a singular a. adj([[1, 2], [2, 4]]) = [[4, -2], [-2, 1]]
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    np.testing.assert_allclose(srcgrad.grad(determinant, jit=jit)(a), [[4.0, -2.0],
                                                                       [-2.0, 1.0]])
    # rank one in 3-D: the adjugate of a rank-one matrix is zero
    np.testing.assert_allclose(srcgrad.grad(determinant, jit=jit)(np.outer([1.0, 2, 3],
                                                                            [1.0, 0, 2])),
                               np.zeros((3, 3)), atol=1e-12)
    # det(x J) = 0 for J the 2x2 ones: the derivative of the whole is sum's, 1
    assert srcgrad.grad(det_of_rank_one, jit=jit)(1.5) == pytest.approx(1.0)
    _, slope = srcgrad.jvp(determinant, jit=jit)(a, np.ones((2, 2)))
    assert slope == pytest.approx(1.0)   # tr(adj(a) J) = 4 - 2 - 2 + 1
    # a stack with one singular matrix, as Python (numba takes one matrix)
    stack = np.stack([a, rng.standard_normal((2, 2))])
    assert_grad(weighted_dets, (srcgrad.grad(weighted_dets, jit=False)(stack),), (stack,), [0])


def matmul_called(m, w):
    return np.sum(np.matmul(m, w) ** 2) + np.sum(np.matmul(m, w[:, 0]))


def test_np_matmul_called_as_a_function(jit):
    """np.matmul(a, b) (not `a @ b`) compiles: numba took NumPy 2's np.matmul, a ufunc,
    for an elementwise one and failed (jit=True raised, "auto" ran the Python form)."""
    m = np.array([[1.0, 0.2, -0.4], [0.3, 2.0, 0.5]])
    w = np.array([[0.5, -1.0], [2.0, 0.25], [1.5, -0.75]])
    g = srcgrad.grad(matmul_called, wrt=(0, 1), jit=jit)(m, w)
    # d/dm |m w|^2 = 2 (m w) w^T; sum(m w0) = 1^T m w0: d/dm = 1 w0^T
    np.testing.assert_allclose(g[0], 2.0 * (m @ w) @ w.T + np.outer(np.ones(2), w[:, 0]))
    assert_grad(matmul_called, g, (m, w), [0, 1])


def test_np_matmul_reads_as_the_operator():
    """A call of np.matmul with its two operands alone is written `m @ w` in the generated
    source, not as the compiled stand-in matrix_product."""
    source = srcgrad.grad(matmul_called, jit=False).source
    assert "_t1 = m @ w" in source and "matrix_product" not in source
