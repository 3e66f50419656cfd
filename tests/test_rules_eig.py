"""np.linalg.eig and np.linalg.eigvals of real matrices (srcgrad/rules/eigen.py).

NumPy <= 2.4 gives real results where the spectrum is real and NumPy 2.5 complex ones
always, so every loss here is a real number that is the same under both (real parts,
moduli, products of a column's entries, which a column's sign does not change); only
the compiled run of complex eigenvalues reads the kind (what numba's eig can give).

By hand: the eigenvalues of triangular and rotation-like matrices, the eigenvectors of
a triangular matrix, and a loss that depends on the eigenvectors' phase (NumPy's: each
column's entry of largest modulus is real) of a 2x2 matrix with complex eigenvalues.
Against central differences: losses of the values and vectors of matrices with real and
complex spectra, 1x1 matrices and stacks, in reverse and forward mode; second
derivatives (hvp, hessian, grad of grad; the phase's hessian by hand); repeated
eigenvalues; what is refused (complex matrices, jvp of jvp). The compiled form of a
matrix with complex eigenvalues runs where numba's eig gives complex results (NumPy
2.5), and as Python (jit="auto") where its results are real."""

import numpy as np
import pytest
from fd import assert_grad, slope
from marks import compiles
from sweep import check, check_hvp, parametrize

import srcgrad

X = np.array([0.3, -0.5, 1.2, 0.7])
T = np.array([1.0, 0.5, -1.0, 0.25])
# NumPy's eig of a real matrix with a real spectrum gives complex results (NumPy 2.5;
# numba 0.68 follows it), or real ones
COMPLEX_ALWAYS = np.iscomplexobj(np.linalg.eigvals(np.eye(2)))


def _triangular_values(x):
    a = np.array([[x[0], x[1]], [0.0, x[2]]])
    return np.sum(np.real(np.linalg.eigvals(a)) ** 2)   # x0^2 + x2^2


def _triangular_vectors(x):
    a = np.array([[x[0], x[1]], [0.0, x[2]]])
    w, v = np.linalg.eig(a)
    return np.sum(np.real(w * v[0] ** 2))   # x0 + x2 b^2 / (b^2 + (x2 - x0)^2), b = x1


def _rotation(x):
    a = np.array([[x[0], -x[1]], [x[1], x[0]]])   # eigenvalues x0 +- i x1
    w = np.linalg.eigvals(a)
    return np.sum(np.real(w) ** 3 + np.imag(w) ** 2)   # 2 x0^3 + 2 x1^2


# [[a, b], [c, d]] with b c < -((a - d) / 2)^2 (complex eigenvalues) and |b| > |c|: NumPy's
# eigenvector of l is (|b|, (l - a) |b| / b) / sqrt(b^2 - b c) up to its sign, so
# v0 v1 = (l - a) / (b - c), whose real part (d - a) / (2 (b - c)) depends on the phase
# (v e^{it} gives e^{2it} v0 v1) and not on the sign or on which of the pair is first
P = np.array([0.3, 1.2, -0.7, -0.5])


def _phase(x):
    w, v = np.linalg.eig(np.reshape(x, (2, 2)))
    return np.real(v[0, 0] * v[1, 0])


def _phase_by_hand(x):
    a, b, c, d = x
    return np.array([-1.0, -(d - a) / (b - c), (d - a) / (b - c), 1.0]) / (2 * (b - c))


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


def test_a_loss_of_the_eigenvectors_phase_by_hand():
    # NumPy's phase is differentiated (JAX's gauge would give another number here)
    a, b, c, d = P
    value, got = srcgrad.value_and_grad(_phase, jit=False)(P)
    assert value == pytest.approx((d - a) / (2 * (b - c)), rel=1e-12)
    np.testing.assert_allclose(got, _phase_by_hand(P), rtol=1e-10)
    _, dvalue = srcgrad.jvp(_phase, jit=False)(P, T)
    assert dvalue == pytest.approx(_phase_by_hand(P) @ T, rel=1e-10)


# ---- against differences ----

_RNG = np.random.default_rng(61)
_B = _RNG.standard_normal((4, 4))   # complex eigenvalue pairs
_U = np.triu(_RNG.uniform(-1.0, 1.0, (3, 3)), 1)
_W = np.arange(16.0).reshape(4, 4)


def _real_spectrum(x):
    # a triangular matrix (distinct real eigenvalues x0, 2 x1, 3 x2) a little perturbed
    a = np.diag(x[:3] * np.array([1.0, 2.0, 3.0])) + _U + 0.05 * np.outer(x[:3], x[1:])
    w, v = np.linalg.eig(a)
    return np.sum(np.sin(np.real(w))) + np.sum(np.abs(v) ** 3 * _W[:3, :3]) \
        + np.sum(np.real(v[0] * v[2])) + np.sum(np.real(np.linalg.eigvals(a * x[3])) ** 2)


def _complex_spectrum(x):
    a = _B + np.outer(x, x[::-1])
    w, v = np.linalg.eig(a)
    u = v / v[np.argmax(np.abs(v), axis=0), np.arange(4)]   # a gauge-invariant normalisation
    return np.sum(np.real(w) ** 2 + np.abs(w)) + np.sum(np.abs(u[1:]) * x) \
        + np.sum(np.real(v) * _W) + np.sum(np.imag(v[1:]) * x[:3, None]) \
        + np.sum(np.imag(np.linalg.eigvals(a)) ** 2)


def _one_by_one(x):
    w, v = np.linalg.eig(np.reshape(x[1:2] * x[2], (1, 1)))
    return np.sum(np.real(w) ** 3) + np.sum(np.real(v)) \
        + np.sum(np.real(np.linalg.eigvals(np.reshape(x[:1], (1, 1)))) ** 2)


_S = _RNG.standard_normal((2, 3, 3))


def _stack(x):
    a = _S + np.outer(x[:3], x[1:])   # a stack of two matrices (Python: NumPy's eig)
    w, v = np.linalg.eig(a)
    return np.sum(np.abs(w) ** 2) + np.sum(np.abs(v)) + np.sum(np.real(v[:, 0] * v[:, 2])) \
        + np.sum(np.real(np.linalg.eigvals(a)) ** 3)


CASES = [   # (the rule sweep's: test_rules.py checks that every rule has a case)
    ("eig-real", (np.linalg.eig, np.linalg.eigvals), _real_spectrum, (X,), [0], True),
    ("eig-complex", (np.linalg.eig, np.linalg.eigvals), _complex_spectrum, (X,), [0], False),
    ("eig-1x1", (np.linalg.eig, np.linalg.eigvals), _one_by_one, (X,), [0], False),
    ("eig-stack", (np.linalg.eig, np.linalg.eigvals), _stack, (X,), [0], False),
    ("eig-phase", (np.linalg.eig,), _phase, (P,), [0], False),
]


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


def test_the_spectra_are_what_the_cases_say():
    a = np.diag(X[:3] * np.array([1.0, 2.0, 3.0])) + _U + 0.05 * np.outer(X[:3], X[1:])
    assert np.all(np.imag(np.linalg.eigvals(a)) == 0)
    assert np.sum(np.imag(np.linalg.eigvals(_B + np.outer(X, X[::-1]))) != 0) == 2
    assert np.all(np.imag(np.linalg.eigvals(P.reshape(2, 2))) != 0)


@pytest.mark.parametrize("fun", [_real_spectrum, _complex_spectrum, _one_by_one, _stack,
                                 _phase, _rotation, _triangular_vectors])
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


# ---- complex eigenvalues compiled ----


@compiles
def test_complex_eigenvalues_compiled():
    # numba's eig gives NumPy's kind of result: complex (NumPy 2.5) runs compiled; real
    # raises numba's ValueError for complex eigenvalues as it runs: jit=True says so,
    # "auto" runs the Python form after one warning
    def both(x):
        return _rotation(x) + _phase(x)
    hand = _phase_by_hand(P) + [6 * P[0] ** 2, 4 * P[1], 0.0, 0.0]
    if COMPLEX_ALWAYS:
        np.testing.assert_allclose(srcgrad.grad(both, jit=True)(P), hand, rtol=1e-10)
        return
    with pytest.raises(srcgrad.SrcgradError, match="real eigenvalues only before NumPy 2.5"):
        srcgrad.grad(both, jit=True)(P)
    from srcgrad.backend.forms import eager
    with eager(), pytest.warns(srcgrad.JitFallbackWarning, match="real eigenvalues only"):
        g = srcgrad.grad(both)(P)
    np.testing.assert_allclose(g, hand, rtol=1e-10)


# ---- repeated eigenvalues, and what is refused ----


def test_repeated_eigenvalues():
    def values(x):
        return np.sum(np.real(np.linalg.eigvals(np.diag(np.array([x[0], x[0], x[1]])))) ** 2)

    def vectors(x):
        w, v = np.linalg.eig(np.diag(np.array([x[0], x[0], x[1]])))
        return np.sum(np.real(v) * np.arange(9.0).reshape(3, 3))
    # the eigenvalues' gradient stays finite; the vectors have no derivative (nan, as
    # JAX gives inf or nan)
    np.testing.assert_allclose(srcgrad.grad(values, jit=False)(X), [4 * X[0], 2 * X[1], 0, 0])
    assert np.isnan(srcgrad.grad(vectors, jit=False)(X)[0])


def test_complex_matrices_and_jvp_of_jvp_are_refused():
    def complex_matrix(x):
        return np.sum(np.abs(np.linalg.eigvals(np.outer(x, x) * (1 + 1j))))
    with pytest.raises(srcgrad.MissingRule, match="real values only"):
        srcgrad.grad(complex_matrix, jit=False)(X)
    with pytest.raises(srcgrad.MissingRule, match=r"forward mode over their jvp"):
        srcgrad.jvp(srcgrad.jvp(_phase), jit=False)(P, T, T)


# ---- second order: hvp, hessian, grad of grad ----


def _smooth_real(x):
    a = np.diag(x[:3] * np.array([1.0, 2.0, 3.0])) + _U + 0.05 * np.outer(x[:3], x[1:])
    w, v = np.linalg.eig(a)
    return np.sum(np.sin(np.real(w))) + np.sum(np.real(v * v) * _W[:3, :3]) \
        + np.sum(np.real(np.linalg.eigvals(a * x[3])) ** 2)


def _smooth_complex(x):
    a = _B + np.outer(x, x[::-1])
    w, v = np.linalg.eig(a)
    return np.sum(np.real(w * w) + np.real(w) ** 3) + np.sum(np.real(v) * _W) \
        + np.sum(np.real(np.linalg.eigvals(a) ** 3))


def _smooth_stack(x):
    a = _S + np.outer(x[:3], x[1:])
    w, v = np.linalg.eig(a)
    return np.sum(np.real(w) ** 3) + np.sum(np.real(v[:, 0] * v[:, 2])) \
        + np.sum(np.real(np.linalg.eigvals(a * x[3]) ** 2))


def _phase_hessian_by_hand(x):
    a, b, c, d = x
    s, u = b - c, d - a
    q, r = 1 / (2 * s ** 2), u / s ** 3
    return np.array([[0, q, -q, 0], [q, r, -r, -q], [-q, -r, r, q], [0, -q, q, 0]])


def test_second_derivatives_by_hand():
    # the phase's second derivative (the hessian's columns are forward mode over the
    # gradient), and eigvals' by the gradient of a gradient
    np.testing.assert_allclose(srcgrad.hessian(_phase, jit=False)(P), _phase_hessian_by_hand(P),
                               atol=1e-12)
    np.testing.assert_allclose(srcgrad.hvp(_triangular_values, jit=False)(X, T),
                               [2 * T[0], 0.0, 2 * T[2], 0.0], atol=1e-12)
    np.testing.assert_allclose(srcgrad.grad(_gradient_along_t, jit=False)(P),
                               _phase_hessian_by_hand(P) @ T, atol=1e-12)


_PHASE_GRAD = srcgrad.grad(_phase)


def _gradient_along_t(x):
    return np.sum(_PHASE_GRAD(x) * T)


@pytest.mark.parametrize("fun", [_smooth_real, _smooth_complex, _smooth_stack, _phase,
                                 _triangular_vectors, _one_by_one])
def test_hvp(fun):
    check_hvp((fun.__name__, (), fun, (X,), [0], False), False)


def test_hvp_compiled(jit):
    check_hvp(("smooth", (), _smooth_real, (X,), [0], True), jit)
