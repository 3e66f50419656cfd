"""What goes on the tape (to-be-recorded analysis), seen in the generated source, with
each gradient still checked against central differences."""

import numpy as np
from fd import assert_grad

import srcgrad
from benchmarks.workloads.rosen_loop import primal as rosen


def carried(a, n):
    s = 0.5
    for _ in range(n):
        s = s * a + np.sin(s)
    return s


def stages(theta, n):
    for _ in range(n):
        k = np.sin(theta)
        theta = theta + 0.1 * k * k
    return theta


def newton(a):
    x = a
    while abs(x * x - a) > 1e-12:
        x = 0.5 * (x + a / x)
    return x


def tapes(source):
    return sorted({line.split("=")[0].strip() for line in source.splitlines()
                   if "_tape = " in line})


def test_cheap_values_are_recomputed_and_accumulators_cost_nothing(jit):
    g = srcgrad.grad(rosen, jit=jit)
    assert tapes(g.source) == []
    x = np.linspace(-1.0, 1.5, 7)
    assert_grad(rosen, [g(x)], (x,), [0])


def test_state_read_by_the_adjoint_is_saved_once_per_iteration(jit):
    g = srcgrad.grad(carried, jit=jit)
    assert tapes(g.source) == ["s_tape"]
    assert "s = s_tape[_]" in g.source   # an array, one entry per iteration
    assert_grad(carried, [g(0.7, 20)], (0.7, 20), [0])


def test_expensive_values_are_taped_not_recomputed(jit):
    g = srcgrad.grad(stages, jit=jit)
    assert tapes(g.source) == ["k_tape", "theta_tape"]
    code = [ln for ln in g.source.splitlines() if not ln.strip().startswith("#")]
    assert sum("np.sin(" in ln for ln in code) == 1   # the adjoint reads sin(theta) back
    assert_grad(stages, [g(0.3, 15)], (0.3, 15), [0])


def test_while_loops_count_their_iterations(jit):
    g = srcgrad.grad(newton, jit=jit)
    assert "n_iter" in g.source and tapes(g.source) == ["x_tape"]
    assert abs(g(2.0) - 0.5 / np.sqrt(2.0)) < 1e-9


def test_zero_trip_loop_allocates_an_empty_tape(jit):
    g = srcgrad.grad(carried, jit=jit)
    assert g(0.7, 0) == 0.0
