"""benchmarks.runner: `--only` keeps the naive JAX row's fresh-process guard."""

import importlib.util

import pytest

from benchmarks import runner, workloads


@pytest.mark.parametrize("only, fresh", [
    (["jax"], ["jax"]),                       # both JAX rows chosen: the naive one is guarded
    (["srcgrad", "hand", "jax.jit(jax.grad)"], ["jax"]),
    (["srcgrad", "hand", "lax"], []),         # the lax row only: no unrolled trace to guard
    (["srcgrad"], []),
])
def test_only_runs_the_naive_jax_first_call_in_a_fresh_process(monkeypatch, only, fresh):
    started = []
    monkeypatch.setattr(runner, "_coldstart",
                        lambda workload, kind, env, timeout: started.append((kind, timeout))
                        or "did not finish in 60 s")
    w = workloads.load("pendulum_rk4")
    cold = runner._coldstarts("pendulum_rk4", w, runner._fresh_kinds(only))
    assert [kind for kind, _ in started] == fresh
    assert all(timeout == runner.JAX_FIRST_CALL_TIMEOUT for _, timeout in started)
    if fresh and importlib.util.find_spec("jax") is not None:
        # the row is then not built: its note says why (without JAX, no row at all)
        with pytest.raises(runner.NotRun, match="did not finish"):
            runner._jax(w, (), False, cold.get("jax"))


def test_the_default_path_still_times_every_first_call(monkeypatch):
    started = []
    monkeypatch.setattr(runner, "_coldstart",
                        lambda workload, kind, env, timeout: started.append(kind) or 1.0)
    runner._coldstarts("pendulum_rk4", workloads.load("pendulum_rk4"))
    assert started[:3] == ["numba", "srcgrad", "srcgrad"] and "jax" in started
