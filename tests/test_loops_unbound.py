"""A value bound only inside a loop, whose adjoint the reversed loop carries: where the
loop runs no iteration the value is unbound, and the adjoint must not read it
(`dv = zeros_like(v)` before the reversed loop raised UnboundLocalError in Python)."""

import numpy as np
import pytest
from fd import assert_grad

import srcgrad
from srcgrad import UnsupportedSyntax


def bound_under_a_condition(x, n):
    s = 0.0
    for _ in range(n):
        if x[0] > 0:
            v = x * 2
        s = s + np.sum(v * v)
    return s


def counted_in_a_while(x, n):
    s = 0.0
    i = 0
    while i < n:
        if x[0] > 0:
            v = x * (i + 1.0)
        s = s + np.sum(v * v)
        i = i + 1
    return s


def read_only_under_conditions(x, n):
    s = 0.0
    for i in range(n):
        if i > 0:
            if x[0] > 0:
                s = s + np.sum(v * v)  # noqa: F821 (v of the iteration before)
        if x[0] > 0:
            v = x * 2  # noqa: F841 (read in the next iteration)
    return s


@pytest.mark.parametrize("jit", [True, False], ids=["numba", "python"])
def test_a_loop_local_value_when_the_loop_may_run_zero_times(jit):
    x = np.array([0.5, 1.0])
    g = srcgrad.grad(bound_under_a_condition, jit=jit)
    np.testing.assert_array_equal(g(x, 0), [0.0, 0.0])
    np.testing.assert_allclose(g(x, 3), 3 * 8 * x)   # d/dx 3 * sum(4 x^2)
    assert_grad(bound_under_a_condition, [g(x, 3)], [x, 3], [0])


def test_a_loop_local_value_in_a_while_loop_that_may_run_zero_times():
    x = np.array([0.5, 1.0])
    g = srcgrad.grad(counted_in_a_while, jit=False)
    np.testing.assert_array_equal(g(x, 0), [0.0, 0.0])
    np.testing.assert_allclose(g(x, 2), (1 + 4) * 2 * x)   # d/dx (1 + 4) sum(x^2)


def test_a_loop_that_may_run_without_binding_a_carried_value_is_refused():
    with pytest.raises(UnsupportedSyntax, match=r"test_loops_unbound.py:\d+: the gradient "
                                                r"of this loop needs v .* bind v before "
                                                r"the loop"):
        srcgrad.grad(read_only_under_conditions, jit=False)(np.array([0.5, 1.0]), 3)
