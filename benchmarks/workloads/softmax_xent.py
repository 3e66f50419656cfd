"""Softmax cross-entropy of a linear model, stable logsumexp, one-hot labels; gradient wrt W."""

import math

import numpy as np
from numba import njit

DESCRIPTION = "X 1000x100 @ W 100x10, one-hot Y, stable logsumexp, mean cross-entropy; wrt W"
WRT = (0,)


def primal(W, X, Y):
    logits = X @ W
    m = np.max(logits, axis=1, keepdims=True)
    lse = m + np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
    return np.mean(np.sum(Y * (lse - logits), axis=1))


def inputs(rng):
    n, d, c = 1000, 100, 10
    return (rng.standard_normal((d, c)) / math.sqrt(d), rng.standard_normal((n, d)),
            np.eye(c)[rng.integers(0, c, n)])


# d loss / d logits[i, j] = (softmax(logits)[i, j] * sum_j Y[i, j] - Y[i, j]) / n


@njit
def hand_numba(W, X, Y):
    g = X @ W  # logits, overwritten row by row with their gradient
    n, c = g.shape
    inv_n = 1.0 / n
    for i in range(n):
        m = g[i, 0]
        for j in range(1, c):
            m = max(m, g[i, j])
        s = 0.0
        ysum = 0.0
        for j in range(c):
            e = math.exp(g[i, j] - m)
            g[i, j] = e
            s += e
            ysum += Y[i, j]
        f = ysum * inv_n / s
        for j in range(c):
            g[i, j] = f * g[i, j] - Y[i, j] * inv_n
    return (X.T @ g,)


def hand_numpy(W, X, Y):
    logits = X @ W
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    n = X.shape[0]
    g = e * (Y.sum(axis=1, keepdims=True) / (n * e.sum(axis=1, keepdims=True)))
    g -= Y / n
    return (X.T @ g,)
