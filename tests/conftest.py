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


def _compiled_twin(item) -> str | None:
    """The id of the compiled run whose Python form a test's run is (the same test with
    `numba` where this run has `python`), if it has that shape."""
    callspec = getattr(item, "callspec", None)
    if callspec is None or "python" not in callspec.id.split("-"):
        return None
    twin = "-".join("numba" if part == "python" else part for part in callspec.id.split("-"))
    return item.nodeid[:-len(callspec.id) - 1] + twin + "]"


def _in_shard(item, shard: str) -> bool:
    k, n = (int(part) for part in shard.split("/"))
    return zlib.crc32(item.nodeid.encode()) % n == k


def pytest_collection_modifyitems(config, items):
    """Share the suite out among tox's envs, for the matrix's time budget (a test's shard
    is a hash of its id):

    - SRCGRAD_TEST_SHARD=k/n: this env makes the compiled runs of shard k. py310..py313
      take a quarter each, so each compiled run is made under one of the four
      interpreters (numba is the same release under all four); `oldest`, whose numba
      differs, takes a sixteenth.
    - SRCGRAD_TEST_PYTHON_SHARD=k/n: this env makes the other runs (Python forms, errors,
      docs, examples) of shard k: py310..py313 a quarter each. `nojit` makes them all
      and `oldest` a quarter, and the compiled runs take the same front end through every
      interpreter.
    - Under SRCGRAD_DISABLE_JIT (`nojit`), a compiled run with a Python twin (the same
      test with `python` for `numba` in its id) would run that twin's code again, and is
      left out.
    - SRCGRAD_TEST_TWINS=0 (py310..py313) leaves the Python twins of compiled runs to
      `nojit`, which makes them all: the compiled run takes the same front end through
      that interpreter.
    """
    compiled = {item.nodeid for item in items if _compiled(item)}
    with_twin = {_compiled_twin(item) for item in items} & compiled
    shard = os.environ.get("SRCGRAD_TEST_SHARD")
    others = os.environ.get("SRCGRAD_TEST_PYTHON_SHARD")
    nojit = os.environ.get("SRCGRAD_DISABLE_JIT", "").strip() not in ("", "0")
    twins = os.environ.get("SRCGRAD_TEST_TWINS", "1").strip() != "0"
    kept, dropped = [], []
    for item in items:
        if item.nodeid in compiled:
            drop = (nojit and item.nodeid in with_twin) or (shard and not _in_shard(item, shard))
        else:
            drop = (others and not _in_shard(item, others)) or (
                not twins and _compiled_twin(item) in compiled)
        (dropped if drop else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
