"""GradBench-style programs (tests/gradbench.py) end to end: every gradient against
central differences, compiled and as Python. Several of them failed or were wrong before
issue 26 (an LSTM step returning a tuple, the ODE's reused loop index)."""

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
