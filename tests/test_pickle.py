"""Transforms pickle by reference to the user's function and their options, so they travel
to process pools (and Dask, which hashes them by `__dask_tokenize__`); the receiving
process generates the code again or loads it from the disk cache.

f(x) = sum(x**3) has gradient 3 x**2 and Hessian diag(6 x), by hand."""

import pickle
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import numpy as np
import pytest

import srcgrad


def cube_sum(x):
    return np.sum(x ** 3)


def mse(w, X, y):
    r = X @ w - y
    return np.sum(r * r)


def scaled(x):
    return 2.0 * x ** 2


@srcgrad.grad
def decorated(x):
    return np.sum(np.sin(x))


X = np.array([0.5, -1.0, 2.0])
V = np.array([1.0, 2.0, -1.0])


def _roundtrip(t):
    return pickle.loads(pickle.dumps(t))


@pytest.mark.parametrize("make, call, want", [
    (lambda j: srcgrad.grad(cube_sum, jit=j), lambda t: t(X), 3 * X ** 2),
    (lambda j: srcgrad.value_and_grad(cube_sum, jit=j), lambda t: t(X)[1], 3 * X ** 2),
    (lambda j: srcgrad.jvp(cube_sum, jit=j), lambda t: t(X, V)[1], np.dot(3 * X ** 2, V)),
    (lambda j: srcgrad.hvp(cube_sum, jit=j), lambda t: t(X, V), 6 * X * V),
    (lambda j: srcgrad.hessian(cube_sum, jit=j), lambda t: t(X), np.diag(6 * X)),
    (lambda j: srcgrad.jacobian(scaled, jit=j), lambda t: t(X), np.diag(4 * X)),
    (lambda j: srcgrad.grad(srcgrad.grad(scaled, jit=j), jit=j), lambda t: t(1.5), 4.0),
    (lambda j: srcgrad.vjp(cube_sum, jit=j), lambda t: t(X)[1](2.0), 6 * X ** 2),
], ids=["grad", "value_and_grad", "jvp", "hvp", "hessian", "jacobian", "grad_of_grad", "vjp"])
def test_every_transform_pickles_and_computes_the_same(make, call, want, jit):
    t = make(jit)
    before = call(t)           # used (its locks and loaded code exist), then pickled
    again = _roundtrip(t)
    assert repr(again).split(",")[0] == repr(t).split(",")[0]
    np.testing.assert_allclose(call(again), want)
    np.testing.assert_allclose(before, want)


def test_a_decorated_function_pickles_by_its_name():
    assert _roundtrip(decorated) is decorated
    np.testing.assert_allclose(decorated(X), np.cos(X))


def test_a_pullback_of_plain_data_pickles():
    value, pullback = srcgrad.vjp(mse, jit=False)(np.ones(2), np.eye(2), np.zeros(2))
    assert value == 2.0
    np.testing.assert_allclose(_roundtrip(pullback)(1.0), [2.0, 2.0])  # 2 X^T r


def test_dask_token_is_deterministic_across_processes():
    tokens = {srcgrad.grad(cube_sum).__dask_tokenize__(),
              srcgrad.grad(cube_sum).__dask_tokenize__()}
    assert len(tokens) == 1
    assert srcgrad.grad(cube_sum, wrt="x", jit=False).__dask_tokenize__() not in tokens
    assert srcgrad.hvp(cube_sum).__dask_tokenize__() not in tokens
    here = Path(__file__).resolve().parent
    code = ("import test_pickle, srcgrad; "
            "print(repr(srcgrad.grad(test_pickle.cube_sum).__dask_tokenize__()))")
    out = subprocess.run([sys.executable, "-c", code], cwd=here, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == repr(tokens.pop())


def _shard_gradient(args):
    g, w, X, y = args
    return g(w, X, y)


def test_data_parallel_gradient_on_a_spawned_process_pool(tmp_path, monkeypatch):
    # one gradient per shard on two fresh interpreters, summed: the whole data's gradient
    monkeypatch.setenv("SRCGRAD_CACHE_DIR", str(tmp_path / "srcgrad"))
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    rng = np.random.default_rng(1)
    X, y, w = rng.normal(size=(40, 3)), rng.normal(size=40), rng.normal(size=3)
    g = srcgrad.grad(mse)
    whole = g(w, X, y)
    np.testing.assert_allclose(whole, 2 * X.T @ (X @ w - y))              # by hand
    shards = [(g, w, X[i::2], y[i::2]) for i in range(2)]
    with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
        parts = list(pool.map(_shard_gradient, shards))
    np.testing.assert_allclose(parts[0] + parts[1], whole)
