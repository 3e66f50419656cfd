"""Control flow end to end: branches, loops, break/continue/return and subscript writes.

Every gradient is checked against central finite differences (never against srcgrad
itself), compiled with numba and as plain Python (the `jit` fixture), and against values
derived by hand where there is a closed form. The functions live in `loops.py`.
"""

import ast
import inspect
import math
import os
import warnings

import loops as L
import numpy as np
import pytest
from fd import assert_grad

import srcgrad

HERE = os.path.basename(__file__)
R = np.random.default_rng(11)


def grad_and_check(fun, args, positions, jit, **tolerances):
    """grad wrt `positions`, checked against finite differences; returns the gradients."""
    grads = srcgrad.grad(fun, wrt=tuple(positions), jit=jit)(*args)
    assert_grad(fun, grads, args, positions, **tolerances)
    return grads


# ---- the issue's example ----


@pytest.mark.parametrize("y,want", [(6, 12.0), (5, 12.0), (4, 4.0), (2, 0.0), (0, 0.0)])
def test_issue_example(y, want, jit):
    dx = srcgrad.grad(L.issue_example, wrt="x", jit=jit)(2.0, y)
    assert dx == want
    assert_grad(L.issue_example, (dx,), (2.0, y), [0])


def test_issue_example_value_and_grad(jit):
    value, dx = srcgrad.value_and_grad(L.issue_example, jit=jit)(2.0, 6)
    assert (value, dx) == (8.0, 12.0)


# ---- workloads, with hand values ----


def rosenbrock_gradient(x):
    g = np.zeros_like(x)
    g[:-1] = -400.0 * x[:-1] * (x[1:] - x[:-1] ** 2) - 2.0 * (1.0 - x[:-1])
    g[1:] += 200.0 * (x[1:] - x[:-1] ** 2)
    return g


@pytest.mark.parametrize("fun", [L.rosenbrock, L.rosenbrock_augmented])
@pytest.mark.parametrize("n", [10, 100])
def test_rosenbrock(fun, n, jit):
    g = srcgrad.grad(fun, jit=jit)
    np.testing.assert_array_equal(g(np.ones(n)), np.zeros(n))
    np.testing.assert_array_equal(g(np.zeros(n)), np.r_[np.full(n - 1, -2.0), 0.0])
    x = np.random.default_rng(n).normal(size=n) * 0.5
    np.testing.assert_allclose(g(x), rosenbrock_gradient(x), rtol=1e-12, atol=1e-12)
    if n <= 10:  # finite differences cost 2n evaluations
        assert_grad(fun, (g(x),), (x,), [0])


def test_pendulum_rk4(jit):
    args = (0.3, 9.81, 1.5, 1.0, 0.0, 0.05, 50)
    grad_and_check(L.pendulum_rk4, args, [0, 1, 2], jit)


def test_pendulum_gravity_and_length_enter_as_a_ratio(jit):
    # the dynamics depend on g / L only: L dJ/dL = -g dJ/dg
    dc, dg, dl = srcgrad.grad(L.pendulum_rk4, wrt=(0, 1, 2), jit=jit)(
        0.3, 9.81, 1.5, 1.0, 0.0, 0.05, 50)
    assert 1.5 * dl == pytest.approx(-9.81 * dg, rel=1e-10)


def rnn_args(T=4, H=3, D=2):
    rng = np.random.default_rng(3)
    return (rng.normal(size=(H, H)) * 0.5, rng.normal(size=(H, D)) * 0.5,
            rng.normal(size=H) * 0.1, rng.normal(size=(T, D)), rng.normal(size=H) * 0.1)


@pytest.mark.parametrize("fun", [L.rnn, L.rnn_rows])
def test_rnn(fun, jit):
    grad_and_check(fun, rnn_args(), [0, 1, 2], jit)


def test_rnn_gradient_wrt_inputs_and_initial_state(jit):
    grad_and_check(L.rnn_rows, rnn_args(), [3, 4], jit)


def heat_matrix(n, alpha):
    A = np.eye(n)
    for i in range(1, n - 1):
        A[i, i - 1:i + 2] += alpha * np.array([1.0, -2.0, 1.0])
    return A


def test_heat_equation(jit):
    u0 = np.sin(np.linspace(0.0, np.pi, 8)) + 0.3
    snapshot = u0.copy()
    du0, dalpha = grad_and_check(L.heat, (u0, 0.2, 5), [0, 1], jit)
    P = np.linalg.matrix_power(heat_matrix(8, 0.2), 5)
    np.testing.assert_allclose(du0, 2.0 * P.T @ P @ u0, rtol=1e-12)
    np.testing.assert_array_equal(u0, snapshot)  # the copy was written, not the input


@pytest.mark.parametrize("a", [2.0, 10.0, 0.3])
def test_newton_sqrt(a, jit):
    da = srcgrad.grad(L.newton_sqrt, jit=jit)(a)
    assert da == pytest.approx(0.5 / math.sqrt(a), rel=1e-8)
    assert_grad(L.newton_sqrt, (da,), (a,), [0])


def test_outer_accumulate(jit):
    x, y = R.normal(size=3), R.normal(size=4)
    dx, dy = grad_and_check(L.outer_accumulate, (x, y), [0, 1], jit)
    np.testing.assert_allclose(dx, 2.0 * x * np.sum(y * y), rtol=1e-12)
    np.testing.assert_allclose(dy, 2.0 * y * np.sum(x * x), rtol=1e-12)


# ---- every form, against finite differences ----

PIECES = np.array([0.9, 0.1, -1.2, 0.7, -0.3, -2.0])

CORPUS = [
    (L.issue_example, (1.7, 7), [0]),
    (L.rosenbrock_augmented, (R.normal(size=12) * 0.5,), [0]),
    (L.pendulum_rk4, (0.3, 9.81, 1.5, 1.0, 0.5, 0.05, 50), [3, 4, 5]),
    (L.rnn, rnn_args(), [3, 4]),
    (L.heat, (R.normal(size=7), 0.15, 3), [0, 1]),
    (L.newton_sqrt, (7.0,), [0]),
    (L.outer_accumulate, (R.normal(size=2), R.normal(size=5)), [0, 1]),
    (L.piecewise, (PIECES,), [0]),
    (L.branch_on_state, (0.6, 8), [0]),
    (L.branch_on_state, (1.9, 8), [0]),
    (L.branch_without_else, (np.array([0.5, -0.4, 1.2, -0.8, 0.3]), 1.3), [0, 1]),
    (L.branch_return, (0.7,), [0]),
    (L.branch_return, (-0.7,), [0]),
    (L.elif_return, (2.5,), [0]),
    (L.elif_return, (1.2,), [0]),
    (L.elif_return, (-0.4,), [0]),
    (L.strided, (R.normal(size=9),), [0]),
    (L.backwards, (R.normal(size=7),), [0]),
    (L.backwards_strided, (R.normal(size=8),), [0]),
    (L.backwards_strided, (R.normal(size=7),), [0]),
    (L.range_from_data, (R.normal(size=10), 2), [0]),
    (L.power_loop, (1.3, 4), [0]),
    (L.sum_first, (R.normal(size=5), 3), [0]),
    (L.array_through_loop, (R.normal(size=4), 3), [0]),
    (L.over_array, (R.normal(size=6),), [0]),
    (L.over_rows, (R.normal(size=(4, 3)), R.normal(size=3)), [0, 1]),
    (L.with_enumerate, (R.normal(size=5),), [0]),
    (L.with_zip, (R.normal(size=5), R.normal(size=5)), [0, 1]),
    (L.zip_rows, (R.normal(size=(4, 3)), R.normal(size=4)), [0, 1]),
    (L.while_counter, (R.normal(size=6), 4), [0]),
    (L.while_on_data, (0.8,), [0]),
    (L.while_never_runs, (3.0, 1.0), [0, 1]),
    (L.while_true, (0.9,), [0]),
    (L.while_continue, (np.array([0.5, -0.3, 1.1, -2.0, 0.7]),), [0]),
    (L.until_negative, (np.array([0.5, 1.2, -0.3, 0.8, 2.0]),), [0]),
    (L.skip_negative, (np.array([0.5, -1.2, 0.3, -0.8, 2.0]),), [0]),
    (L.first_above, (np.array([0.1, 0.4, 1.3, 2.0]), 1.0), [0, 1]),
    (L.accumulate_until, (np.array([0.5, 0.8, 1.1, 0.4]), 1.5), [0]),
    (L.accumulate_until, (np.array([0.5, 0.8, 1.1, 0.4]), 10.0), [0]),
    (L.triangle, (R.normal(size=6),), [0]),
    (L.nested_break, (np.array([0.4, 0.9, -0.3, 1.2, 0.5]), 1.0), [0]),
    (L.loop_variable_after, (R.normal(size=5),), [0]),
    (L.element_after, (R.normal(size=5),), [0]),
    (L.running_max, (np.array([0.3, 1.5, -0.2, 2.4, 0.9]),), [0]),
    (L.iterate_map, (R.normal(size=4), 0.7, 5), [0, 1]),
    (L.matrix_recurrence, (R.normal(size=(3, 3)) * 0.5, R.normal(size=(3, 3)) * 0.5, 4),
     [0, 1]),
    (L.fill_zeros, (R.normal(size=5),), [0]),
    (L.fill_empty, (R.normal(size=5),), [0]),
    (L.cumprod_in_place, (R.uniform(0.5, 1.5, size=5),), [0]),
    (L.prefix_sum_np_copy, (R.normal(size=5),), [0]),
    (L.overwrite_after_read, (R.normal(size=4),), [0]),
    (L.writes_outside_loop, (0.7, -1.3), [0, 1]),
    (L.overlapping_slices, (R.normal(size=5),), [0]),
    (L.slice_from_array, (R.normal(size=6),), [0]),
    (L.pairwise, (R.normal(size=4),), [0]),
    (L.row_writes, (R.normal(size=(3, 4)), R.normal(size=4)), [0, 1]),
    (L.row_recurrence, (R.normal(size=(4, 3)),), [0]),
    (L.euler_with_helper, (0.2, 4.0, 0.8, 0.05, 20), [0, 1, 2]),
    (L.calls_in_loop, (R.normal(size=4),), [0]),
    (L.while_break_on_data, (np.array([0.3, 0.8, -0.2, 1.0]),), [0]),
    (L.while_break_on_data, (np.array([0.3, 0.8, 0.2]),), [0]),
    (L.nested_continue, (np.array([[0.5, -0.3, 1.2], [-0.7, 0.9, 0.4]]),), [0]),
    (L.return_from_nested_loops, (np.array([0.5, 0.9, 0.7, 1.1]), 1.5), [0]),
    (L.return_from_nested_loops, (np.array([0.5, 0.9, 0.7, 1.1]), 100.0), [0]),
    (L.branch_assigns_array, (np.array([0.5, -0.2, 0.4]), 0.8), [0, 1]),
    (L.branch_assigns_array, (np.array([-0.5, -0.2, 0.1]), 0.8), [0, 1]),
    (L.conditional_writes, (np.array([0.5, -0.3, 1.2, -0.7]),), [0]),
    (L.over_slice, (R.normal(size=5),), [0]),
    (L.enumerate_start, (R.normal(size=(3, 2)),), [0]),
    (L.zip_three, (R.normal(size=4), R.normal(size=4), R.normal(size=4)), [0, 1, 2]),
    (L.backwards_to_data, (R.normal(size=6), 1), [0]),
    (L.shift_in_place, (R.normal(size=5),), [0]),
    (L.matrix_update_in_loop, (R.normal(size=(3, 3)), R.normal(size=3)), [0, 1]),
    (L.int_init_accumulator, (R.normal(size=4),), [0]),
    (L.rebind_input, (R.normal(size=4), 3), [0]),
    (L.inplace_whole_array, (R.normal(size=4),), [0]),
    (L.return_in_while, (1.1,), [0]),
    (L.return_in_while, (0.01,), [0]),
    (L.data_step, (R.normal(size=7), 3), [0]),
    (L.int_carried_index, (np.array([0.5, -1.0, 1.5, 0.3]),), [0]),
    (L.and_or_conditions, (np.array([0.5, -1.0, 1.5, -3.0]),), [0]),
    (L.minmax_in_loop, (np.array([0.5, -1.0, 1.5]),), [0]),
    (L.negative_index_writes, (0.7,), [0]),
    (L.strided_slice_write, (R.normal(size=3),), [0]),
    (L.calls_allocating_helper, (R.normal(size=3),), [0]),
    (L.overwrite_then_read_later, (R.normal(size=4),), [0]),
    (L.column_writes, (R.normal(size=(2, 3)),), [0]),
    (L.scalar_from_array_in_loop, (R.normal(size=3),), [0]),
    (L.loop_inside_branch, (0.7, 1), [0]),
    (L.loop_inside_branch, (0.7, 0), [0]),
    (L.early_return_array_loop, (np.array([[0.1, 0.2], [0.9, 0.8]]),), [0]),
    (L.early_return_array_loop, (np.array([[0.1, 0.2], [0.3, 0.1]]),), [0]),
]


def corpus_id(case):
    fun, args, _ = case
    return f"{fun.__name__}-" + "-".join(
        str(a) if np.ndim(a) == 0 else "x".join(map(str, np.shape(a))) for a in args)


@pytest.mark.parametrize("fun,args,positions", CORPUS, ids=[corpus_id(c) for c in CORPUS])
def test_corpus(fun, args, positions, jit):
    before = [np.copy(a) for a in args]
    value, grads = srcgrad.value_and_grad(fun, wrt=tuple(positions), jit=jit)(*args)
    for a, b in zip(args, before, strict=True):
        np.testing.assert_array_equal(a, b)  # no argument was written
    assert value == pytest.approx(fun(*args), rel=1e-12, abs=1e-14)
    assert_grad(fun, grads, args, positions)


def test_auto_compiles_loop_code_without_falling_back():
    calls = [(L.rosenbrock, (np.zeros(5),)), (L.heat, (np.ones(5), 0.1, 2)),
             (L.newton_sqrt, (3.0,)), (L.first_above, (np.array([0.5, 2.0]), 1.0)),
             (L.cumprod_in_place, (np.ones(3),))]
    with warnings.catch_warnings():
        warnings.simplefilter("error", srcgrad.JitFallbackWarning)
        for fun, args in calls:
            srcgrad.grad(fun)(*args)  # jit="auto"


def test_loop_gradient_has_input_shape_and_type(jit):
    dx, dy = srcgrad.grad(L.with_zip, wrt=(0, 1), jit=jit)(np.ones(3), np.zeros(3))
    assert dx.shape == dy.shape == (3,)
    assert isinstance(srcgrad.grad(L.power_loop, jit=jit)(1.5, 2), float)


# ---- branches and loop forms, with hand values ----


def test_piecewise_takes_a_different_branch_per_element(jit):
    dx = srcgrad.grad(L.piecewise, jit=jit)(PIECES)
    want = np.where(PIECES > 0.5, 2.0 * PIECES,
                    np.where(PIECES > -0.5, np.cos(PIECES), -3.0))
    np.testing.assert_allclose(dx, want, rtol=1e-12)


@pytest.mark.parametrize("x,want", [(0.7, 1.4), (-0.7, 2.0 * math.cos(-0.7))])
def test_return_inside_a_branch(x, want, jit):
    assert srcgrad.grad(L.branch_return, jit=jit)(x) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("x,want", [(2.5, 3 * 2.5 ** 2), (1.2, math.exp(1.2) * 2.2),
                                    (-0.4, 3.0)])
def test_return_inside_elif(x, want, jit):
    assert srcgrad.grad(L.elif_return, jit=jit)(x) == pytest.approx(want, rel=1e-12)


def test_nested_loop_with_inner_trip_count_from_outer_index(jit):
    x = R.normal(size=7)
    dx = srcgrad.grad(L.triangle, jit=jit)(x)
    np.testing.assert_allclose(dx, np.sum(x) - x, rtol=1e-12, atol=1e-14)


def test_negative_step(jit):
    x = np.array([1.0, 2.0, 3.0])
    # i = 2, 1, 0: acc = 3, 3.5, 2.75; x[i] enters acc with weight 1, then 0.5, then 0.25
    dx = srcgrad.grad(L.backwards, jit=jit)(x)
    acc = [3.0, 3.5, 2.75]  # after x[2], x[1], x[0]
    want = np.array([2 * acc[2],
                     2 * acc[1] + 0.5 * 2 * acc[2],
                     2 * acc[0] + 0.5 * 2 * acc[1] + 0.25 * 2 * acc[2]])
    np.testing.assert_allclose(dx, want, rtol=1e-12)


def test_enumerate_and_zip(jit):
    x = R.normal(size=5)
    np.testing.assert_allclose(srcgrad.grad(L.with_enumerate, jit=jit)(x),
                               2.0 * np.arange(1.0, 6.0) * x, rtol=1e-12)
    y = R.normal(size=5)
    dx, dy = srcgrad.grad(L.with_zip, wrt=(0, 1), jit=jit)(x, y)
    np.testing.assert_allclose(dx, np.exp(y) - 2.0 * x * y, rtol=1e-12)
    np.testing.assert_allclose(dy, x * np.exp(y) - x * x, rtol=1e-12)
    # enumerate(zip(...)) (refused as a call of zip before): sum of k x_k y_k^2, k from 1
    dx, dy = srcgrad.grad(L.enumerate_zip, wrt=(0, 1), jit=jit)(x, y)
    k = np.arange(1.0, 6.0)
    np.testing.assert_allclose(dx, k * y * y, rtol=1e-12)
    np.testing.assert_allclose(dy, 2.0 * k * x * y, rtol=1e-12)
    assert_grad(L.enumerate_zip, (dx, dy), (x, y), [0, 1])


def test_for_over_rows_of_a_matrix(jit):
    X, w = R.normal(size=(4, 3)), R.normal(size=3)
    dX, dw = srcgrad.grad(L.over_rows, wrt=(0, 1), jit=jit)(X, w)
    s = 1.0 - np.tanh(X @ w) ** 2
    np.testing.assert_allclose(dX, np.outer(s, w), rtol=1e-12)
    np.testing.assert_allclose(dw, s @ X, rtol=1e-12)


def test_break(jit):
    g = srcgrad.grad(L.until_negative, jit=jit)
    x = np.array([0.5, 1.2, -0.3, 0.8, 2.0])
    np.testing.assert_array_equal(g(x), [1.0, 2.4, 0.0, 0.0, 0.0])
    x = np.array([-0.1, 1.0, 2.0])  # break in the first iteration
    np.testing.assert_array_equal(g(x), np.zeros(3))
    assert_grad(L.until_negative, (g(x),), (x,), [0])
    x = np.array([1.0, 2.0])  # no break at all
    np.testing.assert_array_equal(g(x), [2.0, 4.0])


def test_continue(jit):
    x = np.array([0.5, -1.2, 0.3, -0.8, 2.0])
    dx = srcgrad.grad(L.skip_negative, jit=jit)(x)
    np.testing.assert_allclose(dx, np.where(x >= 0.0, 3.0 * x * x, 0.0), rtol=1e-12)
    dx = srcgrad.grad(L.while_continue, jit=jit)(x)
    np.testing.assert_allclose(dx, np.where(x >= 0.0, 2.0 * x * np.arange(1, 6), 0.0),
                               rtol=1e-12)


def test_return_inside_a_loop(jit):
    g = srcgrad.grad(L.first_above, wrt=(0, 1), jit=jit)
    dx, dt = g(np.array([0.1, 0.4, 1.3, 2.0]), 1.0)
    np.testing.assert_allclose(dx, [0.0, 0.0, 2.6, 0.0], rtol=1e-12)
    assert dt == 0.0
    dx, dt = g(np.array([0.1, 0.4]), 1.0)  # falls through to the final return
    np.testing.assert_array_equal(dx, np.zeros(2))
    x = np.array([0.5, 0.8, 1.1, 0.4])
    # total after x[2] is 0.25 + 0.64 + 1.21 = 2.1 > 1.5, returned times x[2]
    dx = srcgrad.grad(L.accumulate_until, jit=jit)(x, 1.5)
    np.testing.assert_allclose(dx, [2 * 0.5 * 1.1, 2 * 0.8 * 1.1, 2 * 1.1 * 1.1 + 2.1, 0.0],
                               rtol=1e-12)
    dx = srcgrad.grad(L.accumulate_until, jit=jit)(x, 10.0)
    np.testing.assert_allclose(dx, -2.0 * x, rtol=1e-12)


def test_zero_trip_loops(jit):
    x = R.normal(size=5)
    np.testing.assert_array_equal(srcgrad.grad(L.sum_first, jit=jit)(x, 0), np.zeros(5))
    assert srcgrad.grad(L.power_loop, jit=jit)(1.3, 0) == 1.0
    assert srcgrad.grad(L.issue_example, jit=jit)(2.0, 0) == 0.0
    np.testing.assert_array_equal(srcgrad.grad(L.array_through_loop, jit=jit)(x[:4], 0),
                                  np.full(4, 2.0))
    # data-dependent bounds that give an empty range: start = 1, stop = 3 - 2
    np.testing.assert_array_equal(srcgrad.grad(L.range_from_data, jit=jit)(x[:3], 2),
                                  np.zeros(3))
    np.testing.assert_array_equal(srcgrad.grad(L.strided, jit=jit)(x[:2]), np.zeros(2))


def test_nonzero_trip_counts_by_hand(jit):
    assert srcgrad.grad(L.power_loop, jit=jit)(1.5, 3) == pytest.approx(4 * 1.5 ** 3)
    x = R.normal(size=5)
    np.testing.assert_allclose(srcgrad.grad(L.sum_first, jit=jit)(x, 3),
                               np.r_[2.0 * x[:3], 0.0, 0.0], rtol=1e-12)


def test_long_loop(jit):
    n = 100_000 if jit else 5_000  # a long tape, compiled; a shorter one as Python
    assert srcgrad.grad(L.long_power, jit=jit)(1.0, n) == float(n)
    dx = srcgrad.grad(L.long_power, jit=jit)(1.00001, n)
    assert dx == pytest.approx(n * 1.00001 ** (n - 1), rel=1e-9)


def test_while_never_runs(jit):
    dx, dlimit = srcgrad.grad(L.while_never_runs, wrt=(0, 1), jit=jit)(3.0, 1.0)
    assert (dx, dlimit) == (6.0, 0.0)


def test_while_on_data(jit):
    x = 0.8
    y, k = x, 0
    while y < 10.0:
        y, k = y * 1.5 + 0.1, k + 1
    assert k == 6  # 0.8, 1.3, 2.05, 3.175, 4.8625, 7.39375, 11.190625
    dx = srcgrad.grad(L.while_on_data, jit=jit)(x)
    assert dx == pytest.approx(2.0 * y * 1.5 ** k, rel=1e-12)


def test_while_counter(jit):
    x = R.normal(size=6)
    dx = srcgrad.grad(L.while_counter, jit=jit)(x, 4)
    # sum_i x[i] x[3 - i] over i < 4: each of x[0..3] twice its mirror
    np.testing.assert_allclose(dx, np.r_[2.0 * x[3::-1], 0.0, 0.0], rtol=1e-12)


def test_loop_variables_after_the_loop(jit):
    x = R.normal(size=5)
    want = np.full(5, x[-1])
    want[-1] += np.sum(x)
    np.testing.assert_allclose(srcgrad.grad(L.loop_variable_after, jit=jit)(x), want,
                               rtol=1e-12)
    np.testing.assert_allclose(srcgrad.grad(L.element_after, jit=jit)(x), want, rtol=1e-12)


def test_value_assigned_in_a_loop_read_after_it(jit):
    x = np.array([0.3, 1.5, -0.2, 2.4, 0.9])
    # best = x[3]: best**2 + x[-1] * best + 3
    dx = srcgrad.grad(L.running_max, jit=jit)(x)
    np.testing.assert_allclose(dx, [0.0, 0.0, 0.0, 2 * 2.4 + 0.9, 2.4], rtol=1e-12)


# ---- subscript writes, with hand values ----


def test_write_that_overwrites_a_read_value(jit):
    x = R.normal(size=4)
    dx = srcgrad.grad(L.overwrite_after_read, jit=jit)(x)
    np.testing.assert_allclose(dx, [5.0, 1.0, 1.0, 1.0], rtol=1e-12)


def test_writes_outside_a_loop(jit):
    a, b = 0.7, -1.3
    da, db = srcgrad.grad(L.writes_outside_loop, wrt=(0, 1), jit=jit)(a, b)
    # S = [[a, b, b], [a b, b b, a b]]
    assert da == pytest.approx(2 * a + 4 * a * b * b, rel=1e-12)
    assert db == pytest.approx(4 * b + 4 * a * a * b + 4 * b ** 3, rel=1e-12)


def test_cumulative_product_in_place(jit):
    x = R.uniform(0.5, 1.5, size=5)
    snapshot = x.copy()
    dx = srcgrad.grad(L.cumprod_in_place, jit=jit)(x)
    y = np.cumprod(x)
    want = np.array([np.sum(y[k:]) / x[k] for k in range(5)])
    np.testing.assert_allclose(dx, want, rtol=1e-12)
    np.testing.assert_array_equal(x, snapshot)


def test_prefix_sum_in_place(jit):
    x = R.normal(size=5)
    dx = srcgrad.grad(L.prefix_sum_np_copy, jit=jit)(x)
    y = np.cumsum(x)
    np.testing.assert_allclose(dx, 2.0 * np.cumsum(y[::-1])[::-1], rtol=1e-12)


def test_pairwise_2d_writes(jit):
    x = R.normal(size=4)
    dx = srcgrad.grad(L.pairwise, jit=jit)(x)
    d = x[:, None] - x[None, :]
    np.testing.assert_allclose(dx, np.sum(-4.0 * d * np.exp(-d * d), axis=1), rtol=1e-12)


# ---- gradients are reusable: vjp keeps its tape ----


def test_vjp_pullback_of_a_loop_can_be_called_twice(jit):
    x = R.normal(size=4)
    value, pullback = srcgrad.vjp(L.iterate_map, wrt=(0, 1), jit=jit)(x, 0.7, 5)
    assert value == pytest.approx(L.iterate_map(x, 0.7, 5), rel=1e-12)
    first = pullback(1.0)
    second = pullback(2.0)
    np.testing.assert_allclose(second[0], 2.0 * first[0], rtol=1e-12)
    assert float(second[1]) == pytest.approx(2.0 * float(first[1]), rel=1e-12)
    assert_grad(L.iterate_map, first, (x, 0.7, 5), [0, 1])


# ---- generated code ----


@pytest.mark.parametrize("fun", [L.rosenbrock, L.triangle, L.heat])
def test_loops_look_like_loops(fun):
    tree = ast.parse(srcgrad.grad(fun).source)
    assert any(isinstance(node, ast.For) for node in ast.walk(tree))


def test_loop_code_runs_under_numba():
    g = srcgrad.grad(L.rosenbrock, jit=True)
    for n in (10, 100):  # one compiled loop, whatever the trip count
        np.testing.assert_array_equal(g(np.ones(n)), np.zeros(n))
    assert "for " in g.source
    assert srcgrad.grad(L.newton_sqrt, jit=True)(4.0) == pytest.approx(0.25, rel=1e-8)


@pytest.mark.parametrize("x,want", [
    (np.array([0.5, 1.2, -3.0]), [1.0, 2.4, 0.0]),       # breaks at -3.0: no else
    (np.array([0.5, 1.2, 0.3]), [2.0, 4.8, 1.2]),        # no break: the else doubles
])
def test_for_else(x, want, jit):
    np.testing.assert_allclose(srcgrad.grad(L.for_else, jit=jit)(x), want, rtol=1e-12)


@pytest.mark.parametrize("x,want", [
    (0.5, 1.5 ** 6),           # the inner loop breaks at k = 2: the while's else is skipped
    (0.05, 0.1 * 1.5 ** 24),   # four whole inner loops: the else squares s = x 1.5**12
])
def test_while_else_around_for_else(x, want, jit):
    assert srcgrad.grad(L.nested_else, jit=jit)(x) == pytest.approx(want, rel=1e-12)
    assert_grad(L.nested_else, (srcgrad.grad(L.nested_else, jit=jit)(x),), (x,), [0])


# ---- constructs that may be refused, but never differentiated wrongly ----


@pytest.mark.parametrize("fun,args", [
    (L.write_through_view_of_allocated, (0.7,)),
    (L.write_through_alias_of_allocated, (0.7,)),
    (L.for_else, (np.array([0.5, 1.2, 0.3]),)),
    (L.for_else, (np.array([0.5, -1.2, 0.3]),)),
], ids=["view", "alias", "for-else", "for-else-break"])
def test_right_gradient_or_a_clear_error(fun, args, jit):
    try:
        grads = srcgrad.grad(fun, wrt=(0,), jit=jit)(*args)
    except srcgrad.SrcgradError as exc:
        assert "loops.py:" in str(exc), str(exc)
        return
    assert_grad(fun, grads, args, [0])


# ---- writing into an array the caller owns is refused ----


def writes_input(x):
    x[0] = 2.0 * x[0]
    return np.sum(x)


def writes_input_in_loop(x):
    for i in range(len(x)):
        x[i] = x[i] * x[i]
    return np.sum(x)


def writes_input_through_alias(x):
    y = x
    y[1] += 1.0
    return np.sum(y * y)


def writes_input_slice(x):
    x[0, 1:] = 0.0
    return np.sum(x)


def writes_view_of_input(x):
    y = x[1:]
    y[0] = 3.0 * y[0]
    return np.sum(y)


def writes_view_of_input_read_again(x):
    y = x[1:]
    y[0] = 3.0 * y[0]
    return np.sum(y) + np.sum(x * x)


def line_of(fun, text):
    lines, first = inspect.getsourcelines(fun)
    [offset] = [k for k, line in enumerate(lines) if text in line]
    return first + offset


@pytest.mark.parametrize("fun,arg", [
    (writes_input, np.array([1.0, 2.0, 3.0])),
    (writes_input_in_loop, np.array([1.0, 2.0, 3.0])),
    (writes_input_slice, np.arange(6.0).reshape(2, 3)),
], ids=["write", "in-loop", "slice"])
def test_writing_into_an_input_works_on_a_copy(fun, arg, jit):
    """The gradient copies an argument it writes into: the caller's array is untouched."""
    snapshot = arg.copy()
    got = srcgrad.grad(fun, jit=jit)(arg)
    np.testing.assert_array_equal(arg, snapshot)
    assert_grad(fun, [got], (arg.copy(),), [0])


def test_writing_through_an_alias_of_an_input_nothing_else_reads(jit):
    # `y = x` hands x's array (the gradient's copy of it) on to y, and nothing reads x
    # again: the write is followed. y = (1, 3, 3), and d sum(y^2) = 2y
    x = np.array([1.0, 2.0, 3.0])
    got = srcgrad.grad(writes_input_through_alias, jit=jit)(x)
    np.testing.assert_allclose(got, [2.0, 6.0, 6.0])
    assert_grad(writes_input_through_alias, [got], (x.copy(),), [0])
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])


def writes_input_through_alias_read_again(x):
    y = x
    y[1] += 1.0
    return np.sum(x * y)


@pytest.mark.parametrize("fun,text,arg", [
    (writes_input_through_alias_read_again, "y[1] += 1.0", np.array([1.0, 2.0, 3.0])),
], ids=["alias"])
def test_writing_through_an_alias_of_an_input_is_refused(fun, text, arg, jit):
    snapshot = arg.copy()
    with pytest.raises(srcgrad.SrcgradError) as info:
        srcgrad.grad(fun, jit=jit)(arg)
    message = str(info.value)
    assert f"{HERE}:{line_of(fun, text)}" in message and text in message, message
    assert "copy" in message.lower(), message
    np.testing.assert_array_equal(arg, snapshot)


def test_writing_into_a_view_of_an_input_read_nowhere_else(jit):
    # the input is copied on entry and read only by the view, which holds its array:
    # sum(y) = 3 x1 + x2, and the caller's x is unchanged
    x = np.array([1.0, 2.0, 3.0])
    got = srcgrad.grad(writes_view_of_input, jit=jit)(x)
    np.testing.assert_array_equal(got, [0.0, 3.0, 1.0])
    assert_grad(lambda a: writes_view_of_input(a.copy()), [got], (x.copy(),), [0])
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])


def test_writing_into_a_view_of_an_input_read_again_is_refused(jit):
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(srcgrad.SrcgradError) as info:
        srcgrad.grad(writes_view_of_input_read_again, jit=jit)(x)
    assert f"{HERE}:{line_of(writes_view_of_input_read_again, 'y[0] = 3.0')}" in \
        str(info.value)
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])


def test_the_simplest_write_works_and_leaves_the_input():
    def f(x):
        x[0] = 2.0 * x[0]
        return np.sum(x)
    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(srcgrad.grad(f)(x), [2.0, 1.0])
    np.testing.assert_array_equal(x, [1.0, 2.0])


# ---- conditional expressions: an if statement that sets a temporary ----


def leaky(x):
    y = x if x > 0.0 else 0.1 * x
    return y * y


def nested_in_call(x, y):
    return np.sin(x * y if x > y else x + y) * 2.0


def abs_sum(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + (x[i] ** 2 if x[i] > 0.0 else -x[i])
    return s


@pytest.mark.parametrize("x, want", [(3.0, 6.0), (-2.0, 0.02 * -2.0)])
def test_conditional_expression_by_hand(x, want, jit):
    # y = x (x > 0): d y^2 = 2x;  y = 0.1 x: d (0.01 x^2) = 0.02 x
    assert srcgrad.grad(leaky, jit=jit)(x) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("fun, args, positions", [
    (nested_in_call, (1.3, 0.4), [0, 1]),
    (nested_in_call, (0.2, 0.9), [0, 1]),
    (abs_sum, (np.array([0.5, -1.5, 2.0, -0.25]),), [0]),
])
def test_conditional_expression_against_differences(fun, args, positions, jit):
    grads = srcgrad.grad(fun, wrt=tuple(positions), jit=jit)(*args)
    assert_grad(fun, grads, args, positions)
    # and forward mode: the derivative along v in the first argument, by differences
    v, h = np.ones_like(args[0]), 1e-6
    _, slope = srcgrad.jvp(fun, wrt=0, jit=jit)(*args, v)
    rest = args[1:]
    want = (fun(args[0] + h * v, *rest) - fun(args[0] - h * v, *rest)) / (2 * h)
    assert slope == pytest.approx(want, rel=1e-6)


def guarded_division(x):
    return x if x > 1.0 else x / 0.0


def test_conditional_expression_evaluates_the_branch_taken_only():
    # one line, one comment: the branches of the `if` it becomes repeat none
    src = srcgrad.grad(leaky).source
    assert "if " in src and "else:" in src, src
    line = inspect.getsourcelines(leaky)[1] + 1
    assert src.count(f"# line {line}:") == 1 and src.count(f"# grad of line {line}:") == 1, src
    # x / 0 in the branch not taken would raise at run time if it were evaluated
    assert srcgrad.grad(guarded_division, jit=False)(2.0) == 1.0
