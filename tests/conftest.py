"""Shared fixtures: every end-to-end test runs compiled (numba, jit=True, so a failure to
compile is an error rather than a silent fallback) and as plain Python (jit=False).
Under SRCGRAD_DISABLE_JIT=1 (the tox `nojit` environment) both run as Python."""

import numpy as np
import pytest


@pytest.fixture(params=[True, False], ids=["numba", "python"])
def jit(request):
    return request.param


@pytest.fixture
def rng():
    return np.random.default_rng(0)
