"""Settings for every test, the docstring examples in srcgrad/ too (tests/conftest.py has
the fixtures of tests/)."""

import os

import pytest


@pytest.fixture(autouse=True)
def _foreground_compiles(request, monkeypatch):
    """jit="auto" compiles in the foreground on a second call, outside test_background.py:
    a background compile that a test (or a docstring example) starts and leaves running
    would take a core from the tests after it (the suite's time budget), and numba, which
    builds syntax trees as it compiles, would do so beside the tests' own parsing
    (pytest's assertion rewriting; once, on Python 3.11, "SystemError: AST constructor
    recursion depth mismatch")."""
    if request.module.__name__ != "test_background" and "SRCGRAD_BACKGROUND" not in os.environ:
        monkeypatch.setenv("SRCGRAD_BACKGROUND", "0")
