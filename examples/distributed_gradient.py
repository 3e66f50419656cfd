"""A data-parallel gradient on a Dask cluster: the data set is cut into shards, each worker
process computes the gradient of its shard's loss, and the driver sums them.

    pip install -e '.[distributed]'
    python examples/distributed_gradient.py

The loss is a sum over samples (a logistic negative log-likelihood), so the gradient of
the whole data set is the sum of the shards' gradients. The script checks that sum against
the gradient computed in this process and against the formula X^T (sigmoid(X w) - y), then
fits the weights by gradient descent with every step's gradient computed on the workers.

The transform travels to the workers by pickle (by reference to `nll` and the options;
Dask's cloudpickle sends `nll` itself, since it is defined in `__main__`); each worker
generates the gradient code again, or loads it from the disk cache, on its first call.
Dask hashes the transform by its `__dask_tokenize__`. The shards are scattered once and
stay on the workers; each step sends only the weights.
"""

import numpy as np
from dask.distributed import Client, LocalCluster

import srcgrad

TRUE_W = np.array([1.5, -2.0, 0.5, 0.0])


def nll(w, X, y):
    """Negative log-likelihood of labels y in {0, 1} under a logistic model."""
    z = X @ w
    return np.sum(np.logaddexp(0.0, z) - y * z)


def data(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, TRUE_W.size))
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-X @ TRUE_W))).astype(float)
    return X, y


def distributed_gradient(client, grad_nll, w, shards):
    """Sum of the shards' gradients, one task per shard (shards are futures on workers)."""
    parts = client.gather([client.submit(grad_nll, w, X, y, pure=False) for X, y in shards])
    return np.sum(parts, axis=0)


if __name__ == "__main__":   # Dask's worker processes import this file: keep the guard
    X, y = data()
    grad_nll = srcgrad.grad(nll)
    w = np.zeros(TRUE_W.size)
    whole = grad_nll(w, X, y)
    assert np.allclose(whole, X.T @ (1.0 / (1.0 + np.exp(-X @ w)) - y))   # by hand

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        n_shards = 4
        shards = list(zip(client.scatter([X[k::n_shards] for k in range(n_shards)]),
                          client.scatter([y[k::n_shards] for k in range(n_shards)]), strict=True))
        summed = distributed_gradient(client, grad_nll, w, shards)
        print("gradient, one process:", np.round(whole, 6))
        print("gradient, 4 shards:   ", np.round(summed, 6))
        assert np.allclose(summed, whole, rtol=1e-12, atol=1e-9)

        step = 1.0 / len(y)
        for _ in range(100):
            w = w - step * distributed_gradient(client, grad_nll, w, shards)

    print("fitted weights:", np.round(w, 2))
    print("true weights:  ", TRUE_W)
    assert np.max(np.abs(w - TRUE_W)) < 0.3
