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


@pytest.fixture(autouse=True)
def _foreground_compiles(request, monkeypatch):
    """jit="auto" compiles in the foreground on a second call, outside test_background.py:
    a background compile that a test starts and leaves running would take a core from
    the tests after it (the suite's time budget)."""
    if request.module.__name__ != "test_background" and "SRCGRAD_BACKGROUND" not in os.environ:
        monkeypatch.setenv("SRCGRAD_BACKGROUND", "0")


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "compiled: a test that only compiles (no `jit` parameter); it is shared "
                   "out among the interpreters as the compiled runs of parametrized tests are")


def _compiled(item) -> bool:
    """A test's compiled run: the `jit` fixture's numba side, a `numba` parameter, or a
    test marked `compiled`."""
    if item.get_closest_marker("compiled") is not None:
        return True
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return False
    return callspec.params.get("jit") is True or "numba" in callspec.id.split("-")


def pytest_collection_modifyitems(config, items):
    """SRCGRAD_TEST_SHARD=k/n (tox sets it): this env makes the compiled runs whose shard
    is k, and every Python-form run. py310..py313 take a quarter each, so each compiled
    run is made under one of the four interpreters (numba is the same release under all
    four); `oldest`, whose numba differs, takes half of them, for the matrix's time
    budget. A test's shard is a hash of its id."""
    shard = os.environ.get("SRCGRAD_TEST_SHARD")
    if not shard:
        return
    k, n = (int(part) for part in shard.split("/"))
    kept, dropped = [], []
    for item in items:
        if _compiled(item) and zlib.crc32(item.nodeid.encode()) % n != k:
            dropped.append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
