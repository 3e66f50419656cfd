"""A list appended to in a loop whose trip count is known only at run time: an array the
loop fills (`passes/lists.py`), differentiated as its subscript writes are."""

import re

import numpy as np
import pytest
from fd import assert_grad, slope
from marks import compiles

import srcgrad
from srcgrad import MissingRule, UnsupportedSyntax

X = np.array([0.5, 1.0, -2.0, 3.0, 0.1, 0.2])
W = np.array([0.3, -0.7])


def stacked(x, w, n):
    parts = []
    for i in range(n):
        parts.append(x[i] * w)
    return np.sum(np.sin(np.stack(parts)))


def summed(x, w, n):
    parts = []
    for i in range(1, n, 2):
        v = x[i] * w
        parts.append(v * v)
    total = sum(parts)
    return np.sum(total * w)


def read_many_ways(x, w, n):
    rows = []
    for i in range(n):
        rows.append(np.tanh(x[i] * w))
    a = np.array(rows)
    return np.sum(a ** 2) + np.mean(rows) * len(rows) + np.sum(rows[-1] * rows[0]) + \
        np.sum(rows)


def nested(x, w, m, n):
    total = 0.0
    for j in range(m):
        row = []
        for i in range(n):
            row.append(x[i] * w * (j + 1.0))
        total = total + np.sum(np.stack(row) ** 3)
    return total


def test_a_list_stacked_after_a_loop_of_run_time_length(jit):
    g = srcgrad.grad(stacked, wrt=(0, 1), jit=jit)
    dx, dw = g(X, 0.7, 4)
    # by hand: d/dx_i sin(x_i w) = w cos(x_i w) for i < n; d/dw = sum x_i cos(x_i w)
    np.testing.assert_allclose(dx[:4], 0.7 * np.cos(X[:4] * 0.7))
    np.testing.assert_allclose(dx[4:], 0.0)
    assert dw == pytest.approx(np.sum(X[:4] * np.cos(X[:4] * 0.7)))
    assert_grad(lambda x, w: stacked(x, w, 5), g(X, W, 5), [X, W], [0, 1])


def test_the_adjoint_of_an_append_has_no_self_assignment():
    # the rows' adjoint passes through each append unchanged: no `dparts_rows = dparts_rows`
    g = srcgrad.grad(stacked, wrt=(0, 1), jit=False)
    lines = [ln.strip() for ln in str(g.source).splitlines()]
    assert not [ln for ln in lines if re.fullmatch(r"(\w+) = \1", ln)], str(g.source)
    dx, _ = g(X, 0.7, 4)
    np.testing.assert_allclose(dx[:4], 0.7 * np.cos(X[:4] * 0.7))


def test_sum_of_a_list_of_arrays(jit):
    g = srcgrad.grad(summed, wrt=(0, 1), jit=jit)
    assert_grad(lambda x, w: summed(x, w, 6), g(X, W, 6), [X, W], [0, 1])
    # by hand, one row (i = 1) and scalar w: total = (x w)^2, f = x^2 w^3
    dx, dw = g(X, 0.5, 2)
    np.testing.assert_allclose(dx, [0.0, 2.0 * X[1] * 0.5 ** 3, 0.0, 0.0, 0.0, 0.0])
    assert dw == pytest.approx(3.0 * X[1] ** 2 * 0.5 ** 2)


def test_the_list_read_as_array_len_index_and_mean():
    g = srcgrad.grad(read_many_ways, wrt=(0, 1), jit=False)
    assert_grad(lambda x, w: read_many_ways(x, w, 4), g(X, W, 4), [X, W], [0, 1])


def test_a_list_built_in_an_inner_loop():
    g = srcgrad.grad(nested, wrt=(0, 1), jit=False)
    assert_grad(lambda x, w: nested(x, w, 3, 4), g(X, W, 3, 4), [X, W], [0, 1])


def test_forward_mode(jit):
    tx, tw = np.linspace(-1.0, 1.0, X.size), np.array([0.5, 2.0])
    value, tangent = srcgrad.jvp(summed, wrt=(0, 1), jit=jit)(X, W, 5, (tx, tw))
    assert value == pytest.approx(summed(X, W, 5))
    assert tangent == pytest.approx(slope(lambda x, w: summed(x, w, 5), [X, W], [tx, tw]))


def test_hessian_vector_product():
    v = np.array([1.0, -0.5])
    g = srcgrad.grad(summed, wrt=1, jit=False)
    np.testing.assert_allclose(srcgrad.hvp(summed, wrt=1, jit=False)(X, W, 6, v),
                               (g(X, W + 1e-6 * v, 6) - g(X, W - 1e-6 * v, 6)) / 2e-6,
                               rtol=1e-6)


def test_the_sum_of_an_empty_list_is_zero_and_its_stack_an_error(jit):
    # as in Python: a loop of no trips appends nothing, and sum([]) is 0
    w = 0.5 if jit else W   # (compiled code cannot give an empty list of arrays: numbers)
    g = srcgrad.value_and_grad(summed, wrt=(0, 1), jit=jit)
    value, (dx, dw) = g(X, w, 1)
    assert value == 0.0
    np.testing.assert_array_equal(dx, 0.0)
    np.testing.assert_array_equal(dw, 0.0)
    with pytest.raises(ValueError, match="need at least one array to stack"):
        srcgrad.grad(stacked, jit=jit)(X, w, 0)


def appended_under_a_branch(x, n):
    parts = []
    for i in range(n):
        if x[i] > 0.0:
            parts.append(x[i] ** 2)
    return np.sum(np.stack(parts)) * len(parts)


def test_appends_under_a_branch(jit):
    g = srcgrad.grad(appended_under_a_branch, jit=jit)
    # by hand: the k positive entries of x[:n] give f = k * sum(x_i^2), df/dx_i = 2 k x_i
    np.testing.assert_allclose(g(X, 5), [2.0 * 4 * 0.5, 2.0 * 4 * 1.0, 0.0, 2.0 * 4 * 3.0,
                                         2.0 * 4 * 0.1, 0.0])
    assert_grad(lambda x: appended_under_a_branch(x, 6), [g(X, 6)], [X], [0])
    t = np.linspace(-1.0, 1.0, X.size)
    value, tangent = srcgrad.jvp(appended_under_a_branch, jit=False)(X, 6, t)
    assert value == pytest.approx(5 * np.sum(X[X > 0.0] ** 2))
    assert tangent == pytest.approx(slope(lambda x: appended_under_a_branch(x, 6), [X], [t]))


def first_an_int(x, n):
    parts = []
    for i in range(n):
        parts.append(x[i] if i > 0 else n)
    return np.sum(np.stack(parts)) * x[0]


def test_an_int_then_floats_make_a_float_list(jit):
    # NumPy's np.stack of [3, 1.5, 2.5] is a float array: x0 (3 + x1 + x2), by hand
    x = X[:3] + 0.5
    g = srcgrad.grad(first_an_int, jit=jit)(x, 3)
    np.testing.assert_allclose(g, [3.0 + x[1] + x[2], x[0], x[0]])
    assert_grad(lambda x: first_an_int(x, 3), [g], [x], [0])


def sums_of_generators(x, n):
    parts = []
    for i in range(n):
        parts.append(sum(x[0] for c in range(n) if i == 1))   # the int 0, then a float
    return parts[1] * x[1] + parts[-1]


def test_a_sum_of_no_floats_then_a_float_sum_is_a_float_list():
    # Python's list is [0, 3 x0, 0]: f = 3 x0 x1, by hand
    x = X[:3] + 0.5
    g = srcgrad.grad(sums_of_generators, jit=False)(x, 3)
    np.testing.assert_allclose(g, [3.0 * x[1], 3.0 * x[0], 0.0])
    t = np.array([0.3, -0.7, 0.2])
    value, tangent = srcgrad.jvp(sums_of_generators, jit=False)(x, 3, t)
    assert value == pytest.approx(3.0 * x[0] * x[1])
    assert tangent == pytest.approx(slope(lambda x: sums_of_generators(x, 3), [x], [t]))


@compiles
def test_an_int_row_for_a_float_is_refused_compiled():
    # numba types the list's rows by the first value it sees (sum's int 0), then the
    # float sum cannot go in: refused as it compiles, naming the line
    with pytest.raises(srcgrad.SrcgradError, match=r"ints, then floats(.|\n)*parts.append"):
        srcgrad.jvp(sums_of_generators, jit=True)(X[:3], 3, np.ones(3))


def ragged(x, n):
    parts = []
    for i in range(n):
        parts.append(x[:3 if i == 0 else 1] * 2.0)
    return np.sum(parts[n - 1])


def prefixes(x, n):
    return np.sum([x[:k] for k in range(1, n)][-1])


@pytest.mark.parametrize("fun, args", [(ragged, (X, 3)), (prefixes, (X, 3))])
def test_items_of_other_shapes_are_refused(fun, args, jit):
    # a row of one would broadcast into the first's 3 (a comprehension over a display,
    # fuzz seed 10420267's, is the display: test_comprehensions)
    # (as Python, the error names the user's line; compiled code raises it without one)
    where = r"test_lists_runtime.py:\d+: " if jit is False else ""
    with pytest.raises(UnsupportedSyntax, match=where + r"the items of a list built in a "
                                                r"loop \(by append or a comprehension\) "
                                                r"differ in shape"):
        srcgrad.grad(fun, jit=jit)(*args)


def read_inside_the_loop(x, n):
    parts = []
    for i in range(n):
        parts.append(x[i] ** 2)
        if len(parts) > 2:
            break
    return np.sum(np.stack(parts))


def concatenated(x, n):
    parts = []
    for i in range(n):
        parts.append(x[i:i + 2] ** 2)
    return np.sum(np.concatenate(parts, axis=n - 4))   # (an axis computed at run time)


def appended_in_an_inner_loop(x, n):
    parts = []
    for i in range(n):
        for k in range(2):
            parts.append(x[i] * (k + 2.0))
    return parts[-1] * parts[-2] + np.sum(np.array(parts))


@pytest.mark.parametrize("fun", [read_inside_the_loop, concatenated])
def test_other_lists_built_in_loops_are_refused_at_the_append(fun):
    with pytest.raises(MissingRule, match=r"test_lists_runtime.py:\d+: parts.append\(...\) is "
                                          r"called for its effect"):
        srcgrad.grad(fun, jit=False)(X, 4)


def test_a_list_appended_to_in_an_inner_loop(jit):
    # (an IndexError inside srcgrad once, refused at the append after): parts is
    # x_0 * 2, x_0 * 3, ..., x_3 * 2, x_3 * 3; by hand f = 6 x_3^2 + 5 sum_{i<4} x_i
    g = srcgrad.grad(appended_in_an_inner_loop, jit=jit)(X, 4)
    np.testing.assert_allclose(g, [5.0, 5.0, 5.0, 5.0 + 12.0 * X[3], 0.0, 0.0])
    assert_grad(lambda x: appended_in_an_inner_loop(x, 4), (g,), (X,), (0,))


def lengths_vary(x, n):
    i = 0
    total = 0.0
    while i < n:
        i += 1
        rows = []
        for j in range(i + 1):
            rows.append(x * (j + 1.0))
        total = total + np.sum(np.stack(rows) ** 2)
    return total


def shapes_vary(x, n):
    i = 0
    total = 0.0
    while i < n:
        i += 1
        rows = []
        for j in range(i + 1):
            rows.append(np.sin(x[:i] * (j + 1.0)))
        t = np.asarray(rows)[-1]
        total = total + np.sum(np.mean(np.array(rows), axis=0) * t)
        x = x * (1.0 + 0.1 * total)
    return total + np.sum(x)


def test_a_list_whose_length_and_rows_change_from_one_outer_iteration_to_the_next(jit):
    # (fuzzer seed 8400762) the adjoint read the last list's shape for every iteration
    g = srcgrad.grad(lengths_vary, jit=jit)
    # by hand: iteration i adds sum_{m=1}^{i+1} m^2 sum(x^2): 5 + 14 for n = 2
    np.testing.assert_allclose(g(W, 2), 2.0 * 19.0 * W)
    x = np.array([0.3, -0.2, 0.7, 0.4])
    assert_grad(lambda x: shapes_vary(x, 3), [srcgrad.grad(shapes_vary, jit=jit)(x, 3)], [x], [0])
    t = np.array([1.0, 0.5, -0.5, 2.0])
    value, tangent = srcgrad.jvp(shapes_vary, jit=False)(x, 3, t)
    assert value == pytest.approx(shapes_vary(x, 3))
    assert tangent == pytest.approx(slope(lambda x: shapes_vary(x, 3), [x], [t]))


def built_after_an_early_return(x, n):
    for _i in range(n):
        if x[0] > 0.0:
            return np.sum(x)
        parts = []
        for _k in range(n):
            parts.append(x)
        x = np.stack(parts)[-1] * 2.0
    return np.sum(x)


def test_a_list_in_a_loop_that_may_return_before_it(jit):
    # (fuzzer seed 9100359) an iteration that returns before `parts = []`: the adjoint
    # once read the array unbound, then the append was refused; now its gradient is taken
    g = srcgrad.grad(built_after_an_early_return, jit=jit)
    # by hand: x0 > 0 returns sum(x) at once; else x doubles each of n = 2 iterations
    # (x0 stays negative) and f = sum(4 x)
    np.testing.assert_allclose(g(np.array([0.5, -1.0]), 2), [1.0, 1.0])
    np.testing.assert_allclose(g(np.array([-0.5, 1.0]), 2), [4.0, 4.0])
    for x in (np.array([0.5, -1.0]), np.array([-0.5, 1.0])):
        assert_grad(lambda x: built_after_an_early_return(x, 2), [g(x, 2)], [x], [0])


def built_before_an_early_return(x, n):
    if x[0] > 0.0:
        return np.sum(x)
    parts = []
    for k in range(n):
        parts.append(x * (k + 1.0))
    return np.sum(np.stack(parts) ** 2)


def test_a_list_after_an_early_return_outside_loops(jit):
    g = srcgrad.grad(built_before_an_early_return, jit=jit)
    # by hand: returned, f = sum(x); else f = sum_k (k+1)^2 sum(x^2) = 5 sum(x^2) for n = 2
    np.testing.assert_allclose(g(np.array([0.5, -1.0]), 2), [1.0, 1.0])
    np.testing.assert_allclose(g(np.array([-0.5, 1.0]), 2), [-5.0, 10.0])


def changed_in_place_after(x, n):
    parts = []
    y = x * 1.0
    for _i in range(n):
        parts.append(y)
        y += 1.0
    return np.sum(np.stack(parts) * x)


def written_through_a_view_after(x, n):
    parts = []
    y = x * 1.0
    for _i in range(n):
        z = y[0:2]
        parts.append(z)
    y[0] = 3.0
    return np.sum(np.stack(parts) * x[:2])


def test_an_array_changed_after_its_append_is_refused():
    # Python's list holds the array, and sees the change; a row would hold a copy
    with pytest.raises(UnsupportedSyntax, match=r"test_lists_runtime.py:\d+: 'y \+= \.\.\.' "
                                                r"changes in place an array"):
        srcgrad.grad(changed_in_place_after, jit=False)(X[:2], 3)
    with pytest.raises(MissingRule, match=r"test_lists_runtime.py:\d+: parts.append\(...\) is "
                                          r"called for its effect"):
        srcgrad.grad(written_through_a_view_after, jit=False)(X[:2], 3)


def appends_a_name_bound_to_itself(x, n):
    t = x * 2.0
    t = t   # a view pair of one name (t -> t)
    parts = []
    for _ in range(n):
        parts.append(t)
    return np.sum(np.stack(parts) ** 2)


def test_a_name_bound_to_itself_beside_a_list_built_in_a_loop(jit):
    # fuzzer seed 9530053 (hang): `t5 = t5` made the view pair (t5, t5), and the search for
    # the names sharing an appended array grew without end
    x = np.array([0.5, -1.0])
    g = srcgrad.grad(appends_a_name_bound_to_itself, jit=jit)(x, 3)
    np.testing.assert_allclose(g, 3 * 8 * x)   # f = n * sum((2x)^2)
    assert_grad(appends_a_name_bound_to_itself, (g,), (x, 3), (0,))


def stacked_along_axis_1(x, n):
    parts = []
    for i in range(n):
        parts.append(x * i)
    return np.sum(np.stack(parts, axis=n - 2) ** 2)   # (an axis computed at run time)


def test_a_list_read_otherwise_says_how_it_may_be_read():
    # np.stack(parts, axis=n - 2) is not one of the reads a list built in a loop takes
    # (the axis must be an int literal): the refusal at the append says which are
    with pytest.raises(srcgrad.MissingRule, match=r"read only as np.stack\(L\)") as info:
        srcgrad.grad(stacked_along_axis_1, jit=False)(np.ones(2), 3)
    assert "test_lists_runtime.py:" in str(info.value)
