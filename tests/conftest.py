"""Shared fixtures: every end-to-end test runs compiled (numba, jit=True, so a failure to
compile is an error rather than a silent fallback) and as plain Python (jit=False).
Under SRCGRAD_DISABLE_JIT=1 (the tox `nojit` environment) both run as Python."""

import os
import zlib

import numpy as np
import pytest


@pytest.fixture(params=[True, False], ids=["numba", "python"])
def jit(request):
    return request.param


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def _compiled(item) -> bool:
    """A test's compiled run: the `jit` fixture's numba side, or a `numba` parameter."""
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return False
    return callspec.params.get("jit") is True or "numba" in callspec.id.split("-")


def pytest_collection_modifyitems(config, items):
    """SRCGRAD_TEST_SHARD=k/n (tox's py310..py313 envs set it): this env runs the compiled
    runs of parametrized tests whose shard is k or k + 1 (mod n), so each compiled run is
    made under two of the n interpreters (and all of them in `oldest`, whose numba
    differs), and every Python-form run everywhere. A test's shard is a hash of its id."""
    shard = os.environ.get("SRCGRAD_TEST_SHARD")
    if not shard:
        return
    k, n = (int(part) for part in shard.split("/"))
    mine = {k % n, (k + 1) % n}
    kept, dropped = [], []
    for item in items:
        if _compiled(item) and zlib.crc32(item.nodeid.encode()) % n not in mine:
            dropped.append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
