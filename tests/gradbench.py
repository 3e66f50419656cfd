"""Programs in the style of GradBench's evaluation set (GMM, LSTM, k-means, least
squares, log-sum-exp, ODE), written as plain NumPy with loops the way users write them.
`test_gradbench.py` differentiates each against central differences."""

import numpy as np


def gmm(alphas, means, icf, x, gamma, m):
    """Negative log-likelihood of a Gaussian mixture with diagonal precisions, plus a
    Wishart-style prior, one data point per iteration."""
    n, d = x.shape
    qdiag = np.exp(icf[:, :d])
    sum_qs = np.sum(icf[:, :d], axis=1)
    total = 0.0
    for i in range(n):
        qx = qdiag * (x[i] - means)
        main = alphas + sum_qs - 0.5 * np.sum(qx * qx, axis=1)
        top = np.max(main)
        total = total + top + np.log(np.sum(np.exp(main - top)))
    amax = np.max(alphas)
    lse_alpha = amax + np.log(np.sum(np.exp(alphas - amax)))
    prior = np.sum(0.5 * gamma * gamma * np.sum(qdiag ** 2, axis=1) - m * sum_qs)
    return total - n * lse_alpha + prior


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def lstm_step(w, b, inp, h, c):
    n = h.shape[0]
    gates = w @ np.concatenate((inp, h)) + b
    forget = sigmoid(gates[:n])
    ingate = sigmoid(gates[n:2 * n])
    outgate = sigmoid(gates[2 * n:3 * n])
    change = np.tanh(gates[3 * n:])
    c = c * forget + ingate * change
    h = outgate * np.tanh(c)
    return h, c


def lstm(w, b, seq):
    """One LSTM layer over a sequence, predicting each next entry."""
    n = seq.shape[1]
    h = np.zeros(n)
    c = np.zeros(n)
    loss = 0.0
    for t in range(seq.shape[0] - 1):
        h, c = lstm_step(w, b, seq[t], h, c)
        loss = loss + np.sum((h - seq[t + 1]) ** 2)
    return loss


def kmeans(centers, points):
    """k-means objective: each point's squared distance to its nearest center."""
    total = 0.0
    for p in range(points.shape[0]):
        best = 1e300
        for c in range(centers.shape[0]):
            dist = np.sum((points[p] - centers[c]) ** 2)
            if dist < best:
                best = dist
        total = total + best
    return total


def lsq(theta, xs, ys):
    """Least squares of a quadratic model, one residual per iteration."""
    total = 0.0
    for i in range(xs.shape[0]):
        r = ys[i] - (theta[0] + theta[1] * xs[i] + theta[2] * xs[i] ** 2)
        total = total + r * r
    return total


def logsumexp(x):
    """log(sum(exp(x))), stabilised by a max found in a first loop."""
    m = x[0]
    for i in range(x.shape[0]):
        if x[i] > m:
            m = x[i]
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.exp(x[i] - m)
    return np.log(s) + m


def ode(x, s):
    """GradBench's ODE, y' = (x0, x1 y0, x2 y1, ...), by s classical RK4 steps."""
    n = x.shape[0]
    y = np.zeros(n)
    h = 2.0 / s
    for _ in range(s):
        k1 = np.zeros(n)
        k2 = np.zeros(n)
        k3 = np.zeros(n)
        k4 = np.zeros(n)
        k1[0] = x[0]
        for i in range(1, n):
            k1[i] = x[i] * y[i - 1]
        k2[0] = x[0]
        for i in range(1, n):
            k2[i] = x[i] * (y[i - 1] + h / 2 * k1[i - 1])
        k3[0] = x[0]
        for i in range(1, n):
            k3[i] = x[i] * (y[i - 1] + h / 2 * k2[i - 1])
        k4[0] = x[0]
        for i in range(1, n):
            k4[i] = x[i] * (y[i - 1] + h * k3[i - 1])
        for i in range(n):
            y[i] = y[i] + h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i])
    return np.sum(y)


def det_by_minors(A, n):
    """GradBench's determinant: Laplace expansion along the first row, recursing on the
    (n-1) x (n-1) minors down to n == 1 (srcgrad generates one function per depth)."""
    if n == 1:
        return A[0, 0]
    total = 0.0
    for j in range(n):
        minor = np.concatenate((A[1:, :j], A[1:, j + 1:]), axis=1)
        total = total + (-1.0) ** j * A[0, j] * det_by_minors(minor, n - 1)
    return total


def log_det_squared(A):
    """The determinant called with a literal depth, from a function that does not recurse."""
    return np.log(det_by_minors(A, 4) ** 2)
