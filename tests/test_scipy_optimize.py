"""scipy.optimize takes srcgrad's transforms as they are: `jac=grad`, `jac=True` with
`value_and_grad`, `hessp=` an `hvp`, `least_squares(jac=jacobian)` (docs/optimize.md).

Each fit is checked against what is known of its optimum without srcgrad: the gradient
there by central differences, or a closed form."""

import numpy as np
import pytest
from scipy.optimize import least_squares, minimize

import srcgrad
from srcgrad.checks import numerical_grad


def logistic(w, X, y):
    """Mean logistic loss with a small ridge term (strictly convex: one minimum)."""
    z = X @ w
    return np.mean(np.logaddexp(0.0, z) - y * z) + 0.05 * np.sum(w * w)


def rosen(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def residuals(p, t, y):
    """An exponential decay's misfit, a * exp(-k t) + c - y."""
    return p[0] * np.exp(-p[1] * t) + p[2] - y


@pytest.fixture
def data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 4))
    y = (X @ np.array([1.5, -2.0, 0.5, 0.0]) + 0.3 * rng.normal(size=60) > 0).astype(float)
    return X, y


def _stationary(fun, w, *args):
    """The gradient at w by central differences is zero (an optimum, not srcgrad's say)."""
    g = numerical_grad(fun, (w, *args), 0)
    assert np.max(np.abs(g)) < 1e-5, g


def test_minimize_with_jac_grad(data, jit):
    X, y = data
    jac = srcgrad.grad(logistic, jit=jit)
    g = jac(np.zeros(4), X, y)
    assert g.dtype == np.float64 and g.flags.c_contiguous and g.shape == (4,)
    res = minimize(logistic, np.zeros(4), args=(X, y), jac=jac, method="L-BFGS-B",
                   options={"gtol": 1e-10})
    assert res.success, res.message
    _stationary(logistic, res.x, X, y)


def test_minimize_with_value_and_grad_as_jac_true(data, jit):
    X, y = data
    both = srcgrad.value_and_grad(logistic, jit=jit)
    res = minimize(both, np.zeros(4), args=(X, y), jac=True, method="BFGS",
                   options={"gtol": 1e-9})
    assert res.success, res.message
    _stationary(logistic, res.x, X, y)
    # the same minimum as L-BFGS-B with differences of scipy's own
    ref = minimize(logistic, np.zeros(4), args=(X, y), method="L-BFGS-B",
                   options={"gtol": 1e-10})
    np.testing.assert_allclose(res.x, ref.x, atol=1e-4)


def test_minimize_newton_cg_with_hessp_hvp(jit):
    # scipy calls hessp(x, p, *args); an hvp takes the function's arguments, then v
    x0 = np.array([-1.2, 1.0, -0.5, 0.8])
    res = minimize(rosen, x0, method="Newton-CG", jac=srcgrad.grad(rosen, jit=jit),
                   hessp=srcgrad.hvp(rosen, jit=jit), options={"xtol": 1e-10})
    assert res.success, res.message
    np.testing.assert_allclose(res.x, np.ones(4), atol=1e-6)   # Rosenbrock's minimum


def test_least_squares_with_jac_jacobian(jit):
    t = np.linspace(0.0, 3.0, 25)
    truth = np.array([2.0, 1.3, 0.5])
    y = truth[0] * np.exp(-truth[1] * t) + truth[2]
    jac = srcgrad.jacobian(residuals, jit=jit)
    J = jac(np.array([1.0, 1.0, 0.0]), t, y)
    assert J.shape == (25, 3) and J.dtype == np.float64
    np.testing.assert_allclose(J[:, 0], np.exp(-t))               # by hand
    np.testing.assert_allclose(J[:, 1], -t * np.exp(-t))
    np.testing.assert_allclose(J[:, 2], 1.0)
    res = least_squares(residuals, np.array([1.0, 1.0, 0.0]), jac=jac, args=(t, y),
                        xtol=1e-12, ftol=1e-12, gtol=1e-12)
    assert res.success, res.message
    np.testing.assert_allclose(res.x, truth, atol=1e-8)           # y has no noise
