"""Fit a logistic regression with scipy's L-BFGS-B, its gradient from srcgrad.

    python examples/logistic_lbfgs.py

The data set is generated here, so the answer is known: 400 points in 5 dimensions,
labels drawn from a logistic model with weights TRUE_W (the last feature is noise, its
weight 0). With a small ridge term the fitted weights land near TRUE_W.
"""

import numpy as np
from scipy.optimize import minimize

import srcgrad

TRUE_W = np.array([2.0, -1.0, 0.5, 1.5, 0.0])


def loss(w, X, y):
    """Mean negative log-likelihood of labels y in {0, 1}, plus a ridge term."""
    z = X @ w
    return np.mean(np.logaddexp(0.0, z) - y * z) + 1e-3 * np.sum(w * w)


def data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, TRUE_W.size))
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-X @ TRUE_W))).astype(float)
    return X, y


if __name__ == "__main__":
    X, y = data()
    fit = minimize(srcgrad.value_and_grad(loss), np.zeros(TRUE_W.size), args=(X, y),
                   jac=True, method="L-BFGS-B")
    print(f"{fit.message}: loss {fit.fun:.4f} after {fit.nit} iterations")
    print("fitted weights:", np.round(fit.x, 2))
    print("true weights:  ", TRUE_W)
    assert fit.success and np.max(np.abs(fit.x - TRUE_W)) < 0.5
