"""Tanh recurrent network unrolled over a sequence, squared norm of the last hidden state;
gradient wrt its weights."""

import math

import numpy as np
from numba import njit

T, HIDDEN, INPUT = 100, 64, 32
DESCRIPTION = (f"tanh RNN, {T} steps, hidden {HIDDEN}, input {INPUT}, loss sum(h_T**2); "
               f"wrt W, U, b")
WRT = (0, 1, 2)


def primal(W, U, b, xs):
    h = np.zeros(U.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(W @ xs[t] + U @ h + b)
    return np.sum(h ** 2)


def jax_primal(jnp, lax):
    def f(W, U, b, xs):
        def step(h, x):
            return jnp.tanh(W @ x + U @ h + b), None

        h, _ = lax.scan(step, jnp.zeros(U.shape[0], xs.dtype), xs)
        return jnp.sum(h ** 2)

    return f


def inputs(rng):
    return (rng.standard_normal((HIDDEN, INPUT)) / math.sqrt(INPUT),
            rng.standard_normal((HIDDEN, HIDDEN)) / math.sqrt(HIDDEN),
            0.1 * rng.standard_normal(HIDDEN), rng.standard_normal((T, INPUT)))


# Backpropagation through time: with a_t = W x_t + U h_t + b and h_{t+1} = tanh(a_t),
# da_t = dh_{t+1} (1 - h_{t+1}**2), dh_t = U^T da_t; dW = sum_t da_t x_t^T = DA^T X,
# dU = sum_t da_t h_t^T = DA^T H, db = sum_t da_t.


@njit
def hand_numba(W, U, b, xs):
    # The input projections of all steps in one product before the loop, the weight
    # gradients in one product each after it: only the recurrence stays a matrix-vector loop.
    n, k = xs.shape[0], U.shape[0]
    A = xs @ W.T
    H = np.empty((n + 1, k))  # the hidden states, h_0 = 0 first
    H[0] = 0.0
    for t in range(n):
        a = U @ H[t]
        for j in range(k):
            H[t + 1, j] = math.tanh(A[t, j] + a[j] + b[j])
    DA = np.empty((n, k))
    dh = 2.0 * H[n]
    for t in range(n - 1, -1, -1):
        for j in range(k):
            y = H[t + 1, j]
            DA[t, j] = dh[j] * (1.0 - y * y)
        if t:
            dh = DA[t] @ U
    return DA.T @ xs, DA.T @ H[:n], DA.sum(axis=0)


def hand_numpy(W, U, b, xs):
    n, k = xs.shape[0], U.shape[0]
    A = xs @ W.T
    A += b
    H = np.empty((n + 1, k))
    H[0] = 0.0
    for t in range(n):
        np.tanh(A[t] + U @ H[t], out=H[t + 1])
    DA = 1.0 - H[1:] ** 2  # tanh' at every step, scaled in place by dh below
    dh = 2.0 * H[n]
    for t in range(n - 1, -1, -1):
        DA[t] *= dh
        dh = DA[t] @ U
    return DA.T @ xs, DA.T @ H[:n], DA.sum(axis=0)
