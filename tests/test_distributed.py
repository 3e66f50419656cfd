"""Data-parallel derivatives on worker processes: a Dask LocalCluster, a spawned
`concurrent.futures` process pool and joblib's loky workers each compute one derivative per
shard of a data set in other processes (which unpickle the transform and generate its code
again, or load it from the disk cache); their sum is the derivative on the whole data set.

The loss is a sum over samples of the logistic negative log-likelihood, so by hand, with
s = sigmoid(X w): the gradient is X^T (s - y) and the Hessian times v is
X^T (s (1 - s) * X v). The tests of Dask and joblib are skipped without the `distributed`
extra (`pip install srcgrad[distributed]`; tox's `distributed` env installs it)."""

import subprocess
import sys
import textwrap
from ast import literal_eval
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import numpy as np
import pytest

import srcgrad


def nll(w, X, y):
    total = 0.0
    for i in range(X.shape[0]):
        z = np.dot(X[i], w)
        total += np.logaddexp(0.0, z) - y[i] * z
    return total


RNG = np.random.default_rng(7)
X = RNG.normal(size=(24, 3))
Y = (RNG.random(24) < 0.5).astype(float)
W = RNG.normal(size=3)
V = RNG.normal(size=3)
S = 1.0 / (1.0 + np.exp(-X @ W))
SHARDS = [(X[k::3], Y[k::3]) for k in range(3)]


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as c:
            yield c


def test_dask_local_cluster_sums_the_shards_gradients(client, jit):
    g = srcgrad.grad(nll, jit=jit)
    whole = g(W, X, Y)
    np.testing.assert_allclose(whole, X.T @ (S - Y))                      # by hand
    shards = [(client.scatter(Xs), client.scatter(ys)) for Xs, ys in SHARDS]
    futures = [client.submit(g, W, Xs, ys, pure=False) for Xs, ys in shards]
    assert len({f.key for f in futures}) == len(SHARDS)
    np.testing.assert_allclose(np.sum(client.gather(futures), axis=0), whole)


def _value_and_grad(args):
    t, w, Xs, ys = args
    return t(w, Xs, ys)


def test_spawned_process_pool_sums_the_shards_values_and_gradients(jit):
    t = srcgrad.value_and_grad(nll, jit=jit)
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        parts = list(pool.map(_value_and_grad, [(t, W, Xs, ys) for Xs, ys in SHARDS]))
    z = X @ W
    np.testing.assert_allclose(sum(value for value, _ in parts),
                               np.sum(np.logaddexp(0.0, z) - Y * z))   # by hand
    np.testing.assert_allclose(sum(grad for _, grad in parts), X.T @ (S - Y))


def test_joblib_loky_sums_the_shards_hessian_vector_products(jit):
    joblib = pytest.importorskip("joblib")
    hvp = srcgrad.hvp(nll, jit=jit)
    parts = joblib.Parallel(n_jobs=2, backend="loky")(
        joblib.delayed(hvp)(W, Xs, ys, V) for Xs, ys in SHARDS)
    np.testing.assert_allclose(np.sum(parts, axis=0), X.T @ (S * (1 - S) * (X @ V)))


SENDER = textwrap.dedent("""
    import sys
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    import cloudpickle
    import numpy as np

    import srcgrad


    def cube(x):
        return x ** 3


    def f(x):
        return np.sum(cube(x))


    def compute(blob, x):
        return cloudpickle.loads(blob)(x)


    if __name__ == "__main__":
        blob = cloudpickle.dumps(srcgrad.grad(f, jit=sys.argv[1] == "numba"))
        with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
            print(pool.submit(compute, blob, np.array([1.0, -2.0])).result().tolist())
        sys.stdout.flush()
        sys.stdout.buffer.write(blob)
""")


def test_cloudpickle_sends_a_transform_of_a_function_defined_in_main(tmp_path, jit):
    # f and its helper are defined in the script's __main__, so cloudpickle sends them by
    # value (since cloudpickle 3.1 without their file name); the transform sends their text
    pytest.importorskip("cloudpickle")
    script = tmp_path / "sender.py"
    script.write_text(SENDER)
    done = subprocess.run([sys.executable, str(script), "numba" if jit else "python"],
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    line, blob = done.stdout.split(b"\n", 1)
    assert np.allclose(literal_eval(line.decode()), [3.0, 12.0])        # 3 x**2 by hand
    # and in a fresh interpreter, where the file was edited since, then where it is gone
    # (as a notebook's cell is for a worker elsewhere): the gradient is still the one of
    # the code sent, x ** 3, never of the text on disk
    (tmp_path / "blob").write_bytes(blob)
    code = ("import cloudpickle, sys, numpy as np; "
            "g = cloudpickle.loads(open(sys.argv[1], 'rb').read()); "
            "print(g(np.array([0.5, 3.0])).tolist())")
    script.write_text(SENDER.replace("x ** 3", "x ** 2"))
    for _ in ("edited", "gone"):
        done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "blob")],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        assert np.allclose(literal_eval(done.stdout), [0.75, 27.0])
        script.unlink(missing_ok=True)
