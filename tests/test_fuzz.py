"""CI's budget of the differential fuzzer (tests/fuzz): fixed seeds, every gradient checked
against central differences and jvp. `python -m tests.fuzz --programs 10000 [--jit]` runs it
long; a failing seed here is reproduced with `python -m tests.fuzz --seed S --programs 1`."""

import pytest
from fuzz.runner import describe, run, summary

# The budget: programs in the Python form (about 10 s), and a compiled sample (jit=True; with
# SRCGRAD_DISABLE_JIT=1 it runs as Python). A compiled program costs numba's compilation of
# its gradient and jvp, 5-40 s on a loaded core, hence the small sample. Adjust here.
PYTHON_SEEDS = range(0, 200)
COMPILED_SEEDS = range(100_000, 100_004)


def assert_no_failures(results):
    failures = results["wrong"] + results["crashed"]
    assert not failures, "\n".join([summary(results)] + [describe(o) for o in failures])


def test_fuzz_python_form():
    results = run(PYTHON_SEEDS, jit=False, report=None)
    assert results["ok"], summary(results)      # the budget checks something
    assert_no_failures(results)


@pytest.mark.compiled
def test_fuzz_compiled_sample():
    results = run(COMPILED_SEEDS, jit=True, report=None)
    assert_no_failures(results)
