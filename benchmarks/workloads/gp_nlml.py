"""Gaussian-process regression: the negative log marginal likelihood of an RBF kernel on 500
points in 2-D, wrt the log lengthscale, log signal scale and log noise scale.

K = s^2 exp(-|x_i - x_j|^2 / (2 l^2)) + sigma^2 I, L L^T = K (Cholesky), and
nlml = |L^-1 y|^2 / 2 + sum(log diag L) + n/2 log(2 pi) = y^T K^-1 y / 2 + log|K| / 2 + ...
By hand (Rasmussen & Williams, eq. 5.9): d nlml / d theta = tr((K^-1 - a a^T) dK/dtheta) / 2
with a = K^-1 y; dK/dlog l = K_rbf * d2 / l^2, dK/dlog s = 2 K_rbf, dK/dlog sigma =
2 sigma^2 I (K_rbf the kernel without the noise, d2 the squared distances).
"""

import math

import numpy as np
import scipy.linalg
from numba import njit

DESCRIPTION = "GP, RBF kernel, n = 500 in 2-D: nlml via cholesky; wrt log l, log s, log sigma"
WRT = (0, 1, 2)


def primal(log_l, log_s, log_noise, X, y):
    sq = np.sum(X * X, axis=1)
    d2 = sq[:, None] + sq[None, :] - 2.0 * (X @ X.T)
    n = X.shape[0]
    K = np.exp(2.0 * log_s) * np.exp(-0.5 * d2 / np.exp(2.0 * log_l)) + \
        np.exp(2.0 * log_noise) * np.eye(n)
    L = np.linalg.cholesky(K)
    z = np.linalg.solve(L, y)
    return 0.5 * np.sum(z * z) + np.sum(np.log(np.diag(L))) + 0.5 * n * math.log(2 * math.pi)


def inputs(rng):
    n = 500
    X = rng.uniform(-3.0, 3.0, (n, 2))
    y = np.sin(X[:, 0]) * np.cos(0.5 * X[:, 1]) + 0.1 * rng.standard_normal(n)
    return math.log(1.2), math.log(0.9), math.log(0.3), X, y


@njit(cache=True)
def hand_numba(log_l, log_s, log_noise, X, y):
    n = X.shape[0]
    l2, s2, noise = math.exp(2.0 * log_l), math.exp(2.0 * log_s), math.exp(2.0 * log_noise)
    d2 = np.empty((n, n))
    K = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            d = 0.0
            for k in range(X.shape[1]):
                d += (X[i, k] - X[j, k]) ** 2
            d2[i, j] = d
            K[i, j] = s2 * math.exp(-0.5 * d / l2)
    for i in range(n):
        K[i, i] += noise
    L = np.linalg.cholesky(K)
    Linv = np.linalg.inv(L)
    Kinv = Linv.T @ Linv
    a = Kinv @ y
    g_l, g_s, g_noise = 0.0, 0.0, 0.0
    for i in range(n):
        for j in range(n):
            w = Kinv[i, j] - a[i] * a[j]
            rbf = K[i, j] - (noise if i == j else 0.0)
            g_l += w * rbf * d2[i, j]
            g_s += w * rbf
        g_noise += Kinv[i, i] - a[i] * a[i]
    return 0.5 * g_l / l2, g_s, noise * g_noise


def hand_numpy(log_l, log_s, log_noise, X, y):
    n = X.shape[0]
    l2, s2, noise = math.exp(2.0 * log_l), math.exp(2.0 * log_s), math.exp(2.0 * log_noise)
    sq = np.sum(X * X, axis=1)
    d2 = sq[:, None] + sq[None, :] - 2.0 * (X @ X.T)
    rbf = s2 * np.exp(-0.5 * d2 / l2)
    factor = scipy.linalg.cho_factor(rbf + noise * np.eye(n), lower=True)
    a = scipy.linalg.cho_solve(factor, y)
    w = scipy.linalg.cho_solve(factor, np.eye(n))
    w -= np.outer(a, a)
    return (0.5 * np.sum(w * rbf * d2) / l2, np.sum(w * rbf), noise * np.trace(w))
