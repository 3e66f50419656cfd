"""ADBench's GMM objective (Microsoft ADBench, "GMM: Gaussian mixture model fitting"): a
mixture of K Gaussians in d dimensions over N points, with a Wishart prior on the
precisions; gradient wrt the mixture log-weights, the means and the inverse covariance
factors. This module is the large size, d = 10, K = 25, N = 1000; `gmm_small` is the same
definition at d = 2, K = 5, N = 1000.

ADBench's parametrisation: component k has log-weight alphas[k], mean means[k] and
icf[k] = (q_k, l_k), the d logs of the diagonal of Q_k and then its d(d - 1)/2 strictly
lower entries column by column (Q_k[1, 0], Q_k[2, 0], ..., Q_k[d-1, 0], Q_k[2, 1], ...);
Q_k is the Cholesky factor of component k's precision (inverse covariance). With
m_pk = Q_k (x_p - mu_k) and the Wishart parameters gamma = 1, m = 0 (module constants),

    err = -N d/2 log(2 pi) + sum_p logsumexp_k(alphas_k + sum(q_k) - |m_pk|^2 / 2)
          - N logsumexp(alphas)
          + sum_k (gamma^2 / 2 (|exp(q_k)|^2 + |l_k|^2) - m sum(q_k)) - K C(d),

C(d) = n d (log gamma - log(2) / 2) - log Gamma_d(n / 2), n = d + m + 1 (multivariate log
gamma). This is ADBench's value as its reference implementations compute it (the likelihood
and the prior enter with the signs above).

By hand, with r_pk = softmax_k(main_p)_k the responsibilities:
d/d alphas_k = sum_p r_pk - N softmax(alphas)_k; d/d mu_k = sum_p r_pk Q_k^T m_pk;
d/d q_kj = sum_p r_pk (1 - m_pkj exp(q_kj) (x_p - mu_k)_j) + gamma^2 exp(2 q_kj) - m;
d/d Q_k[j, i] (i < j) = -sum_p r_pk m_pkj (x_p - mu_k)_i + gamma^2 Q_k[j, i].
"""

import math

import numpy as np
from numba import njit

D, K, N = 10, 25, 1000
WISHART_GAMMA, WISHART_M = 1.0, 0.0
DESCRIPTION = (f"ADBench GMM, d = {D}, K = {K}, N = {N}, loop over points; "
               f"wrt alphas, means, icf")
WRT = (0, 1, 2)


def primal(alphas, means, icf, x):
    n, d = x.shape
    k = alphas.shape[0]
    qs = icf[:, :d]
    qdiag = np.exp(qs)
    sum_qs = np.sum(qs, axis=1)
    ls = np.zeros((k, d, d))  # the strictly lower parts of the Q_k
    e = d
    for i in range(d):
        for j in range(i + 1, d):
            ls[:, j, i] = icf[:, e]
            e += 1
    total = 0.0
    for p in range(n):
        xc = x[p] - means
        mahal = qdiag * xc + np.sum(ls * xc[:, None, :], axis=2)
        main = alphas + sum_qs - 0.5 * np.sum(mahal * mahal, axis=1)
        top = np.max(main)
        total = total + top + np.log(np.sum(np.exp(main - top)))
    top = np.max(alphas)
    lse_alphas = top + np.log(np.sum(np.exp(alphas - top)))
    frobenius = np.sum(qdiag * qdiag, axis=1) + np.sum(icf[:, d:] ** 2, axis=1)
    prior = np.sum(0.5 * WISHART_GAMMA ** 2 * frobenius - WISHART_M * sum_qs)
    n_wishart = d + WISHART_M + 1
    log_gamma_d = 0.25 * d * (d - 1) * math.log(math.pi)  # multivariate log gamma
    for j in range(d):
        log_gamma_d += math.lgamma(0.5 * (n_wishart - j))
    log_c = n_wishart * d * (math.log(WISHART_GAMMA) - 0.5 * math.log(2.0)) - log_gamma_d
    return (-0.5 * n * d * math.log(2.0 * math.pi) + total - n * lse_alphas + prior
            - k * log_c)


def _rest(xp, alphas, icf, qdiag, sum_qs, total, n):
    """The objective from the points' sum `total` on, as `primal` computes it, with the
    array module `xp` (jax.numpy, autograd.numpy) for the JAX and autograd forms."""
    k, d = qdiag.shape
    top = xp.max(alphas)
    lse_alphas = top + xp.log(xp.sum(xp.exp(alphas - top)))
    frobenius = xp.sum(qdiag * qdiag, axis=1) + xp.sum(icf[:, d:] ** 2, axis=1)
    prior = xp.sum(0.5 * WISHART_GAMMA ** 2 * frobenius - WISHART_M * sum_qs)
    n_wishart = d + WISHART_M + 1
    log_gamma_d = 0.25 * d * (d - 1) * math.log(math.pi)
    for j in range(d):
        log_gamma_d += math.lgamma(0.5 * (n_wishart - j))
    log_c = n_wishart * d * (math.log(WISHART_GAMMA) - 0.5 * math.log(2.0)) - log_gamma_d
    return (-0.5 * n * d * math.log(2.0 * math.pi) + total - n * lse_alphas + prior
            - k * log_c)


def jax_primal(jnp, lax):
    def f(alphas, means, icf, x):
        n, d = x.shape
        k = alphas.shape[0]
        qs = icf[:, :d]
        qdiag = jnp.exp(qs)
        sum_qs = jnp.sum(qs, axis=1)
        cols, rows = np.triu_indices(d, 1)  # column by column below the diagonal
        ls = jnp.zeros((k, d, d), icf.dtype).at[:, rows, cols].set(icf[:, d:])

        def point(total, xp):
            xc = xp - means
            mahal = qdiag * xc + jnp.sum(ls * xc[:, None, :], axis=2)
            main = alphas + sum_qs - 0.5 * jnp.sum(mahal * mahal, axis=1)
            top = jnp.max(main)
            return total + top + jnp.log(jnp.sum(jnp.exp(main - top))), None

        total, _ = lax.scan(point, jnp.zeros((), x.dtype), x)
        return _rest(jnp, alphas, icf, qdiag, sum_qs, total, n)

    return f


def autograd_primal(anp):
    """The primal for autograd, which cannot differentiate writes into arrays: the lower
    parts of the Q_k put together from columns, as ADBench's autograd version builds them."""
    def f(alphas, means, icf, x):
        n, d = x.shape
        k = alphas.shape[0]
        qs = icf[:, :d]
        qdiag = anp.exp(qs)
        sum_qs = anp.sum(qs, axis=1)
        columns = []
        e = d
        for i in range(d):
            columns.append(anp.concatenate((anp.zeros((k, i + 1)), icf[:, e:e + d - i - 1]),
                                           axis=1))
            e += d - i - 1
        ls = anp.stack(columns, axis=2)
        total = 0.0
        for p in range(n):
            xc = x[p] - means
            mahal = qdiag * xc + anp.sum(ls * xc[:, None, :], axis=2)
            main = alphas + sum_qs - 0.5 * anp.sum(mahal * mahal, axis=1)
            top = anp.max(main)
            total = total + top + anp.log(anp.sum(anp.exp(main - top)))
        return _rest(anp, alphas, icf, qdiag, sum_qs, total, n)

    return f


def make_inputs(rng, d, k, n):
    """Random parameters of moderate precision (|log diagonal|, |lower entries| ~ 0.1) and
    points in the unit cube among the means, so that several components share each point."""
    alphas = rng.standard_normal(k)
    means = rng.uniform(0.0, 1.0, (k, d))
    icf = 0.1 * rng.standard_normal((k, d * (d + 1) // 2))
    x = rng.uniform(0.0, 1.0, (n, d))
    return alphas, means, icf, x


def inputs(rng):
    return make_inputs(rng, D, K, N)


@njit(cache=True)
def hand_numba(alphas, means, icf, x):
    n, d = x.shape
    k = alphas.shape[0]
    g_alphas = np.zeros(k)
    g_means = np.zeros((k, d))
    g_icf = np.zeros_like(icf)
    qdiag = np.exp(icf[:, :d])
    sum_qs = icf[:, :d].sum(axis=1)
    xc = np.empty((k, d))
    mahal = np.empty((k, d))
    main = np.empty(k)
    for p in range(n):
        top = -np.inf
        for c in range(k):
            for j in range(d):
                xc[c, j] = x[p, j] - means[c, j]
                mahal[c, j] = qdiag[c, j] * xc[c, j]
            e = d
            for i in range(d):
                for j in range(i + 1, d):
                    mahal[c, j] += icf[c, e] * xc[c, i]
                    e += 1
            sq = 0.0
            for j in range(d):
                sq += mahal[c, j] * mahal[c, j]
            main[c] = alphas[c] + sum_qs[c] - 0.5 * sq
            top = max(top, main[c])
        norm = 0.0
        for c in range(k):
            main[c] = math.exp(main[c] - top)
            norm += main[c]
        for c in range(k):
            r = main[c] / norm
            g_alphas[c] += r
            # d main / d mahal = -mahal; back through mahal = Q xc, with Q = diag + lower
            e = d
            for i in range(d):
                dxc = qdiag[c, i] * mahal[c, i]
                for j in range(i + 1, d):
                    dxc += icf[c, e] * mahal[c, j]
                    g_icf[c, e] -= r * mahal[c, j] * xc[c, i]
                    e += 1
                g_means[c, i] += r * dxc
                g_icf[c, i] += r * (1.0 - mahal[c, i] * qdiag[c, i] * xc[c, i])
    top = np.max(alphas)
    weights = np.exp(alphas - top)
    g_alphas -= n * weights / weights.sum()
    gamma2 = WISHART_GAMMA * WISHART_GAMMA
    for c in range(k):
        for j in range(d):
            g_icf[c, j] += gamma2 * qdiag[c, j] * qdiag[c, j] - WISHART_M
        for e in range(d, icf.shape[1]):
            g_icf[c, e] += gamma2 * icf[c, e]
    return g_alphas, g_means, g_icf


def hand_numpy(alphas, means, icf, x):
    # One component at a time over all points: Q_k as a matrix, its products as BLAS calls.
    n, d = x.shape
    k = alphas.shape[0]
    qdiag = np.exp(icf[:, :d])
    cols, rows = np.triu_indices(d, 1)
    qs = np.zeros((k, d, d))
    qs[:, rows, cols] = icf[:, d:]
    qs[:, np.arange(d), np.arange(d)] = qdiag
    main = np.empty((n, k))
    mahals = np.empty((k, n, d))
    for c in range(k):
        mahals[c] = (x - means[c]) @ qs[c].T
        main[:, c] = np.einsum("pj,pj->p", mahals[c], mahals[c])
    main *= -0.5
    main += alphas + icf[:, :d].sum(axis=1)
    resp = np.exp(main - main.max(axis=1, keepdims=True))
    resp /= resp.sum(axis=1, keepdims=True)
    weights = np.exp(alphas - alphas.max())
    g_alphas = resp.sum(axis=0) - n * weights / weights.sum()
    g_means = np.empty((k, d))
    g_icf = np.empty_like(icf)
    for c in range(k):
        rm = resp[:, c, None] * mahals[c]
        g_means[c] = qs[c].T @ rm.sum(axis=0)
        g_q = -(rm.T @ (x - means[c]))  # d err / d Q_k, before the diagonal's exp
        g_icf[c, :d] = resp[:, c].sum() + np.diag(g_q) * qdiag[c]
        g_icf[c, d:] = g_q[rows, cols]
    g_icf[:, :d] += WISHART_GAMMA ** 2 * qdiag * qdiag - WISHART_M
    g_icf[:, d:] += WISHART_GAMMA ** 2 * icf[:, d:]
    return g_alphas, g_means, g_icf
