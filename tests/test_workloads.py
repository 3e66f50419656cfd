"""The ADBench benchmark workloads (GMM, LSTM): their values against the definitions
computed another way, and their hand gradients, the reference every contender is checked
against, against central differences; at small sizes."""

import math

import numpy as np
import pytest
import scipy.special
import scipy.stats
from fd import assert_grad

import srcgrad
from benchmarks.workloads import gmm, lstm


def gmm_args(rng):
    return gmm.make_inputs(rng, 3, 4, 20)


def lstm_args(rng, chars=12):
    main, extra, state, sequence = lstm.inputs(rng)
    return main, extra, state, sequence[:chars]


def test_gmm_value_is_a_mixture_density_plus_the_wishart_terms(rng):
    alphas, means, icf, x = args = gmm_args(rng)
    k, d = means.shape
    weights = np.exp(alphas) / np.sum(np.exp(alphas))
    log_density = np.empty((x.shape[0], k))
    prior = 0.0
    for c in range(k):
        q = np.diag(np.exp(icf[c, :d]))
        cols, rows = np.triu_indices(d, 1)
        q[rows, cols] = icf[c, d:]
        precision = q.T @ q  # mahal = Q (x - mu): |mahal|^2 = (x - mu)^T Q^T Q (x - mu)
        log_density[:, c] = np.log(weights[c]) + scipy.stats.multivariate_normal.logpdf(
            x, means[c], np.linalg.inv(precision))
        prior += 0.5 * gmm.WISHART_GAMMA ** 2 * np.sum(q * q) - gmm.WISHART_M * icf[c, :d].sum()
    n_w = d + gmm.WISHART_M + 1
    constant = (n_w * d * (math.log(gmm.WISHART_GAMMA) - 0.5 * math.log(2.0))
                - scipy.special.multigammaln(0.5 * n_w, d))
    want = np.sum(scipy.special.logsumexp(log_density, axis=1)) + prior - k * constant
    assert gmm.primal(*args) == pytest.approx(want, rel=1e-12)


@pytest.mark.compiled
def test_gmm_hand_gradients(rng):
    args = gmm_args(rng)
    assert_grad(gmm.primal, gmm.hand_numba(*args), args, gmm.WRT)
    assert_grad(gmm.primal, gmm.hand_numpy(*args), args, gmm.WRT)


def test_lstm_value_by_hand():
    # One layer of one bit over two characters: one step, its prediction of the second.
    main = np.array([[0.3, -0.2, 0.5, 0.7], [0.1, 0.2, -0.3, 0.4]])
    extra = np.array([[1.5], [0.8], [-0.1]])
    state = np.array([[0.25], [-0.5]])
    sequence = np.array([[1.0], [1.0]])
    def sig(z):
        return 1.0 / (1.0 + math.exp(-z))

    x, h, c = 1.5, 0.25, -0.5
    c = c * sig(0.3 * x + 0.1) + sig(-0.2 * h + 0.2) * math.tanh(0.7 * h + 0.4)
    y = 0.8 * sig(0.5 * x - 0.3) * math.tanh(c) - 0.1
    want = -(y - math.log(math.exp(y) + 2.0))
    assert lstm.primal(main, extra, state, sequence) == pytest.approx(want, rel=1e-14)


@pytest.mark.compiled
def test_lstm_hand_gradients(rng):
    args = lstm_args(rng)
    assert_grad(lstm.primal, lstm.hand_numba(*args), args, lstm.WRT)
    assert_grad(lstm.primal, lstm.hand_numpy(*args), args, lstm.WRT)


@pytest.mark.parametrize("workload, make_args", [(gmm, gmm_args), (lstm, lstm_args)],
                         ids=["gmm", "lstm"])
def test_srcgrad_differentiates_the_workloads_python(workload, make_args, rng):
    # The compiled form runs in the benchmark, checked against the hand gradients above.
    args = make_args(rng)
    grads = srcgrad.grad(workload.primal, wrt=workload.WRT, jit=False)(*args)
    assert_grad(workload.primal, grads, args, workload.WRT)
