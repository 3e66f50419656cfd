"""GradBench-style programs (tests/gradbench.py) end to end: every gradient against
central differences, compiled and as Python. Several of them failed or were wrong before
issue 26 (an LSTM step returning a tuple, the ODE's reused loop index; the determinant
by minors, recursion, was refused)."""

import gradbench as G
import numpy as np
import pytest
from fd import assert_grad

import srcgrad

R = np.random.default_rng(26)

CASES = {
    "gmm": (G.gmm, (R.normal(size=3), R.normal(size=(3, 2)), 0.3 * R.normal(size=(3, 3)),
                    R.normal(size=(5, 2)), 1.0, 0), (0, 1, 2)),
    "lstm": (G.lstm, (0.5 * R.normal(size=(8, 4)), 0.1 * R.normal(size=8),
                      R.normal(size=(5, 2))), (0, 1, 2)),
    "kmeans": (G.kmeans, (R.normal(size=(3, 2)), R.normal(size=(10, 2))), (0, 1)),
    "lsq": (G.lsq, (R.normal(size=3), R.normal(size=10), R.normal(size=10)), (0, 1, 2)),
    "logsumexp": (G.logsumexp, (R.normal(size=6),), (0,)),
    "ode": (G.ode, (R.uniform(0.5, 1.0, size=6), 4), (0,)),
    "det": (G.det_by_minors, (R.normal(size=(4, 4)), 4), (0,)),
    "log_det_squared": (G.log_det_squared, (R.normal(size=(4, 4)),), (0,)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_program_against_differences(name, jit):
    fun, args, wrt = CASES[name]
    grads = srcgrad.grad(fun, wrt=wrt, jit=jit)(*args)
    assert_grad(fun, grads, args, list(wrt))


def test_logsumexp_by_hand(jit):
    # d/dx logsumexp(x) = softmax(x)
    x = np.array([0.5, -1.0, 2.0, 0.25])
    want = np.exp(x) / np.sum(np.exp(x))
    np.testing.assert_allclose(srcgrad.grad(G.logsumexp, jit=jit)(x), want, rtol=1e-12)


def test_det_by_minors_by_hand(jit):
    # d det(A) / dA = det(A) inv(A)^T; the recursion's depth is the int argument n
    A = np.array([[2.0, -1.0, 0.5], [1.0, 3.0, 0.0], [0.5, 1.0, 4.0]])
    want = np.linalg.det(A) * np.linalg.inv(A).T
    np.testing.assert_allclose(srcgrad.grad(G.det_by_minors, jit=jit)(A, 3), want, rtol=1e-12)
    value, grad = srcgrad.value_and_grad(G.det_by_minors, static="n", jit=jit)(A, 3)
    assert np.isclose(value, np.linalg.det(A))
    np.testing.assert_allclose(grad, want, rtol=1e-12)
    # and for a 2 x 2 matrix, a value by hand: d(ad - bc) = [[d, -c], [-b, a]]
    np.testing.assert_allclose(srcgrad.grad(G.det_by_minors, jit=jit)(A[:2, :2], 2),
                               [[3.0, -1.0], [1.0, 2.0]])


def test_det_by_minors_forward_and_second_order(jit):
    # jvp: <grad, V>; hvp: the derivative of det(A) inv(A)^T along V, by differences
    A, V = R.normal(size=(3, 3)), R.normal(size=(3, 3))

    def by_hand(a):
        return np.linalg.det(a) * np.linalg.inv(a).T
    value, tangent = srcgrad.jvp(G.det_by_minors, jit=jit)(A, 3, V)
    assert np.isclose(value, np.linalg.det(A))
    assert np.isclose(tangent, np.sum(by_hand(A) * V))
    eps = 1e-6
    want = (by_hand(A + eps * V) - by_hand(A - eps * V)) / (2 * eps)
    np.testing.assert_allclose(srcgrad.hvp(G.det_by_minors, jit=jit)(A, 3, V), want,
                               atol=1e-6)
