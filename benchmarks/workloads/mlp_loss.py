"""Two-layer perceptron, tanh hidden layer, mean squared error; gradient wrt all parameters."""

import math

import numpy as np
from numba import njit

DESCRIPTION = "batch 256, 64 -> 256 (tanh) -> 10, MSE; wrt W1, b1, W2, b2"
WRT = (0, 1, 2, 3)


def primal(W1, b1, W2, b2, X, Y):
    h = np.tanh(X @ W1 + b1)
    out = h @ W2 + b2
    return np.mean((out - Y) ** 2)


def inputs(rng):
    n, d, k, m = 256, 64, 256, 10
    return (rng.standard_normal((d, k)) / math.sqrt(d), 0.1 * rng.standard_normal(k),
            rng.standard_normal((k, m)) / math.sqrt(k), 0.1 * rng.standard_normal(m),
            rng.standard_normal((n, d)), rng.standard_normal((n, m)))


@njit
def hand_numba(W1, b1, W2, b2, X, Y):
    # Matrix products go to BLAS; each elementwise stage is one fused loop that also
    # accumulates the bias gradient, working in place in the buffer it came from.
    # math.tanh is libm's scalar tanh (no SIMD without SVML): most of the time goes there.
    n, k = X.shape[0], W1.shape[1]
    m = W2.shape[1]
    h = X @ W1
    for i in range(n):
        for j in range(k):
            h[i, j] = math.tanh(h[i, j] + b1[j])
    dout = h @ W2
    db2 = np.zeros(m)
    scale = 2.0 / (n * m)  # d mean(r**2) / dr = 2 r / size
    for i in range(n):
        for j in range(m):
            d = scale * (dout[i, j] + b2[j] - Y[i, j])
            dout[i, j] = d
            db2[j] += d
    dW2 = h.T @ dout
    da = dout @ W2.T
    db1 = np.zeros(k)
    for i in range(n):
        for j in range(k):
            d = da[i, j] * (1.0 - h[i, j] * h[i, j])  # tanh' = 1 - tanh**2
            da[i, j] = d
            db1[j] += d
    return X.T @ da, db1, dW2, db2


def hand_numpy(W1, b1, W2, b2, X, Y):
    # In place wherever a buffer is not needed again: large temporaries cost page faults.
    h = X @ W1
    h += b1
    np.tanh(h, out=h)
    dout = h @ W2
    dout += b2
    dout -= Y
    dout *= 2.0 / dout.size
    da = dout @ W2.T
    dtanh = h * h
    np.subtract(1.0, dtanh, out=dtanh)  # tanh' = 1 - tanh**2
    da *= dtanh
    return X.T @ da, da.sum(axis=0), h.T @ dout, dout.sum(axis=0)
