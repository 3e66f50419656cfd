"""Test marks shared by several test files."""

import os

import pytest

# for what only numba does (typing errors, fallback warnings): skipped in the tox `nojit` env
compiles = pytest.mark.skipif(
    os.environ.get("SRCGRAD_DISABLE_JIT", "").strip() not in ("", "0"),
    reason="SRCGRAD_DISABLE_JIT is set")
