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


# A value bound under a condition, read later under the same condition inside another
# branch or a loop: where the condition is false the value is unbound, and the zeros of
# its adjoint where the branches join (or before the reversed loop) must not be made
# from it (they were, `else: dv = zeros_like(v)`: UnboundLocalError in Python).

def read_in_a_nested_branch(x, c, c2):
    s = 0.0
    if c:
        v = x * 2.0
    if c2:
        if c:
            s += np.sum(v)
    return s + np.sum(x * x)


def read_in_a_later_loop(x, c, n):
    s = 0.0
    if c:
        v = x * 2.0
    for i in range(n):
        if c:
            s = s + np.sum(v * i)
    return s + np.sum(x * x)


def read_in_a_while_loop_in_a_branch(x, c, n):
    s = 0.0
    if c:
        v = x * x
    i = 0
    while i < n:
        if c:
            if x[0] > 0:
                s = s + np.sum(v)
        i = i + 1
    return s + np.sum(x)


def bound_in_a_loop_under_a_condition(x, c, n):
    s = 0.0
    if c:
        for i in range(n):
            v = x * (i + 1.0)
    if c:
        if n > 0:
            s = s + np.sum(v)
    return s + np.sum(x)


@pytest.mark.parametrize("jit", [True, False], ids=["numba", "python"])
def test_a_value_bound_under_a_condition_read_in_a_nested_branch(jit):
    x = np.array([0.5, 1.0])
    g = srcgrad.grad(read_in_a_nested_branch, jit=jit)
    np.testing.assert_allclose(g(x, False, True), 2 * x)     # v never bound
    np.testing.assert_allclose(g(x, False, False), 2 * x)
    np.testing.assert_allclose(g(x, True, False), 2 * x)
    np.testing.assert_allclose(g(x, True, True), 2 * x + 2)
    assert_grad(read_in_a_nested_branch, [g(x, True, True)], [x, True, True], [0])


@pytest.mark.parametrize("fun, unbound, bound", [
    (read_in_a_later_loop, lambda x: 2 * x, lambda x: 2 * x + 2 * (0 + 1 + 2)),
    (read_in_a_while_loop_in_a_branch, lambda x: 1 + 0 * x, lambda x: 1 + 3 * 2 * x),
    (bound_in_a_loop_under_a_condition, lambda x: 1 + 0 * x, lambda x: 1 + 3 + 0 * x),
], ids=["for", "while", "bound-in-a-loop"])
def test_a_value_bound_under_a_condition_read_in_a_later_loop(fun, unbound, bound):
    x = np.array([0.5, 1.0])
    g = srcgrad.grad(fun, jit=False)
    np.testing.assert_allclose(g(x, False, 3), unbound(x))
    np.testing.assert_allclose(g(x, True, 0), unbound(x) if fun is not read_in_a_later_loop
                               else 2 * x)
    np.testing.assert_allclose(g(x, True, 3), bound(x))
    assert_grad(fun, [g(x, True, 3)], [x, True, 3], [0])
