"""Test marks shared by several test files."""

import os

import pytest

# for what only numba does (typing errors, fallback warnings): skipped in the tox `nojit` env
compiles = pytest.mark.skipif(
    os.environ.get("SRCGRAD_DISABLE_JIT", "").strip() not in ("", "0"),
    reason="SRCGRAD_DISABLE_JIT is set")


def needs_numba_advanced_indexing(jit: bool) -> None:
    """Skip a compiled run on numba < 0.60 (the `oldest` env), which indexes with one 1-D
    array only and has no `np.take(..., axis=)`: there such code runs as Python
    (jit="auto" warns; jit=True raises)."""
    import numba
    if jit and numba.version_info[:2] < (0, 60):
        pytest.skip("numba < 0.60: no rank-2 or paired index arrays, no np.take axis=")


def needs_numba_060(jit: bool, what: str) -> None:
    """Skip a compiled run on numba < 0.60 (the `oldest` env), which lacks `what` (there
    such code runs as Python: jit="auto" warns; jit=True raises)."""
    import numba
    if jit and numba.version_info[:2] < (0, 60):
        pytest.skip(f"numba < 0.60 has no {what}")
