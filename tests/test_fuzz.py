"""CI's budget of the differential fuzzer (tests/fuzz): fixed seeds, every gradient checked
against central differences and jvp. `python -m tests.fuzz --programs 10000 [--jit]` runs it
long; a failing seed here is reproduced with `python -m tests.fuzz --seed S --programs 1`."""

import numpy as np
import pytest
from fuzz.runner import check, describe, largest_intermediate, run, summary

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


def test_largest_intermediate_reads_every_local_on_the_way():
    def f(x):
        big = x * 1e9          # a local that later lines overwrite
        big = np.sum(big) * 0.0
        parts = [x, np.array([-3e5, 1.0])]
        return big + parts[0][0]

    assert largest_intermediate(f, [np.array([2.0, -1.0])]) == 2e9


def test_a_program_that_cancels_huge_intermediates_is_discarded(tmp_path):
    # fuzz seed 9991072: x1 grows to 2e9 and det(2I + 0.2 v v^T) of v = (x1, x1) computes as
    # 0.0, so the primal as computed is flat (differences 0.0) where its derivative is 5e19
    outcome = check(9991072, False, tmp_path)
    assert outcome.kind == "discarded" and outcome.detail.startswith("an intermediate reaches")
