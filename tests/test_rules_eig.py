"""np.linalg.eig and np.linalg.eigvals of real matrices (srcgrad/rules/eigen.py): the
eigenvalues and eigenvectors of triangular and rotation-like matrices by hand, losses of
the eigenvalues and gauge-invariant losses of the eigenvectors (|V| entries) against
central differences, forward mode, 1x1 matrices, repeated eigenvalues, and what is
refused. The compiled form takes matrices with real eigenvalues (numba's eig gives real
results only); complex eigenvalues run as Python."""

import numpy as np
import pytest
from fd import assert_grad, slope
from marks import compiles
from sweep import check, parametrize

import srcgrad

X = np.array([0.3, -0.5, 1.2, 0.7])
T = np.array([1.0, 0.5, -1.0, 0.25])


def _triangular_values(x):
    a = np.array([[x[0], x[1]], [0.0, x[2]]])
    return np.sum(np.linalg.eigvals(a) ** 2)   # x0^2 + x2^2


def _triangular_vectors(x):
    a = np.array([[x[0], x[1]], [0.0, x[2]]])
    w, v = np.linalg.eig(a)
    return np.sum(w * v[0] ** 2)   # x0 + x2 b^2 / (b^2 + (x2 - x0)^2), b = x1


def _rotation(x):
    a = np.array([[x[0], -x[1]], [x[1], x[0]]])   # eigenvalues x0 +- i x1
    w = np.linalg.eigvals(a)
    return np.sum(np.real(w) ** 3 + np.imag(w) ** 2)   # 2 x0^3 + 2 x1^2


def test_eigenvalues_of_a_triangular_matrix_by_hand(jit):
    np.testing.assert_allclose(srcgrad.grad(_triangular_values, jit=jit)(X),
                               [2 * X[0], 0.0, 2 * X[2], 0.0], atol=1e-14)


def test_eigenvectors_of_a_triangular_matrix_by_hand():
    a, b, d = X[:3]
    s = b ** 2 + (d - a) ** 2
    r = b ** 2 / s
    hand = [1 + d * 2 * b ** 2 * (d - a) / s ** 2, d * 2 * b * (d - a) ** 2 / s ** 2,
            r - d * 2 * b ** 2 * (d - a) / s ** 2, 0.0]
    value, got = srcgrad.value_and_grad(_triangular_vectors, jit=False)(X)
    assert value == pytest.approx(a + d * r, rel=1e-12)
    np.testing.assert_allclose(got, hand, rtol=1e-12, atol=1e-14)


def test_complex_eigenvalues_by_hand():
    np.testing.assert_allclose(srcgrad.grad(_rotation, jit=False)(X),
                               [6 * X[0] ** 2, 4 * X[1], 0.0, 0.0], rtol=1e-12, atol=1e-14)
    _, dvalue = srcgrad.jvp(_rotation, jit=False)(X, T)
    assert dvalue == pytest.approx(6 * X[0] ** 2 * T[0] + 4 * X[1] * T[1], rel=1e-12)


# ---- against differences ----

_RNG = np.random.default_rng(61)
_B = _RNG.standard_normal((4, 4))   # complex eigenvalue pairs
_U = np.triu(_RNG.uniform(-1.0, 1.0, (3, 3)), 1)


def _real_spectrum(x):
    # a triangular matrix (distinct real eigenvalues x0, x1, x2) a little perturbed
    a = np.diag(x[:3] * np.array([1.0, 2.0, 3.0])) + _U + 0.05 * np.outer(x[:3], x[1:])
    w, v = np.linalg.eig(a)
    return np.sum(np.sin(w)) + np.sum(np.abs(v) ** 3 * np.arange(9.0).reshape(3, 3)) \
        + np.sum(np.linalg.eigvals(a * x[3]) ** 2)


def _complex_spectrum(x):
    a = _B + np.outer(x, x[::-1])
    w, v = np.linalg.eig(a)
    v = v / v[np.argmax(np.abs(v), axis=0), np.arange(4)]   # a gauge-invariant normalisation
    return np.sum(np.real(w) ** 2 + np.abs(w)) + np.sum(np.abs(v[1:]) * x) \
        + np.sum(np.imag(np.linalg.eigvals(a)) ** 2)


def _one_by_one(x):
    w, v = np.linalg.eig(np.reshape(x[1:2] * x[2], (1, 1)))
    return np.sum(w ** 3) + np.sum(v) + np.sum(np.linalg.eigvals(np.reshape(x[:1], (1, 1))))


_S = _RNG.standard_normal((2, 3, 3))


def _stack(x):
    a = _S + np.outer(x[:3], x[1:])   # a stack of two matrices (Python: NumPy's eig)
    w, v = np.linalg.eig(a)
    return np.sum(np.abs(w) ** 2) + np.sum(np.abs(v)) + np.sum(np.real(np.linalg.eigvals(a)) ** 3)


CASES = [   # (the rule sweep's: test_rules.py checks that every rule has a case)
    ("eig-real", (np.linalg.eig, np.linalg.eigvals), _real_spectrum, (X,), [0], True),
    ("eig-complex", (np.linalg.eig, np.linalg.eigvals), _complex_spectrum, (X,), [0], False),
    ("eig-1x1", (np.linalg.eig, np.linalg.eigvals), _one_by_one, (X,), [0], False),
    ("eig-stack", (np.linalg.eig, np.linalg.eigvals), _stack, (X,), [0], False),
]


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


@pytest.mark.parametrize("fun", [_real_spectrum, _complex_spectrum, _one_by_one, _stack])
def test_forward_mode(fun):
    value, dvalue = srcgrad.jvp(fun, jit=False)(X, T)
    assert value == pytest.approx(fun(X), rel=1e-12)
    assert dvalue == pytest.approx(slope(fun, (X,), (T,)), rel=1e-6)


def test_forward_mode_compiled(jit):
    _, dvalue = srcgrad.jvp(_real_spectrum, jit=jit)(X, T)
    assert dvalue == pytest.approx(slope(_real_spectrum, (X,), (T,)), rel=1e-6)


def test_the_probes_loss():
    # a product's eigenvalues (complex pairs) and |V| of one column
    def eig(x):
        a = np.outer(x, x[::-1]) + np.diag(x)
        w, v = np.linalg.eig(a)
        return np.real(np.sum(w * w)) + np.sum(np.abs(v[:, 0]))
    assert_grad(eig, [srcgrad.grad(eig, jit=False)(X)], (X,), [0])


# ---- repeated eigenvalues, and what is refused ----


def test_repeated_eigenvalues():
    def values(x):
        return np.sum(np.linalg.eigvals(np.diag(np.array([x[0], x[0], x[1]]))) ** 2)

    def vectors(x):
        w, v = np.linalg.eig(np.diag(np.array([x[0], x[0], x[1]])))
        return np.sum(v * np.arange(9.0).reshape(3, 3))
    # the eigenvalues' gradient stays finite; the vectors have no derivative (nan, as
    # JAX gives inf or nan)
    np.testing.assert_allclose(srcgrad.grad(values, jit=False)(X), [4 * X[0], 2 * X[1], 0, 0])
    assert np.isnan(srcgrad.grad(vectors, jit=False)(X)[0])


@compiles
def test_complex_eigenvalues_compiled_run_as_python():
    # numba's eig of a real matrix gives real results only (its ValueError as it runs):
    # jit=True says so, "auto" runs the Python form after one warning
    with pytest.raises(srcgrad.SrcgradError, match="give real eigenvalues only"):
        srcgrad.grad(_rotation, jit=True)(X)
    from srcgrad.backend.forms import eager
    with eager(), pytest.warns(srcgrad.JitFallbackWarning, match="real eigenvalues only"):
        g = srcgrad.grad(_rotation)(X)
    np.testing.assert_allclose(g, [6.0 * X[0] ** 2, 4.0 * X[1], 0.0, 0.0], atol=1e-12)


def test_complex_matrices_and_second_order_are_refused():
    def complex_matrix(x):
        return np.sum(np.abs(np.linalg.eigvals(np.outer(x, x) * (1 + 1j))))
    with pytest.raises(srcgrad.MissingRule, match="real values only"):
        srcgrad.grad(complex_matrix, jit=False)(X)
    with pytest.raises(srcgrad.MissingRule, match="forward mode over the gradient of np.linalg"):
        srcgrad.hvp(_rotation, jit=False)(X, T)
