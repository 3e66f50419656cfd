"""Comprehensions and generator expressions reduced by sum, max, min, any, all (issue 21).

Each form is lowered to a loop by `passes/comprehensions.py`; every gradient is checked
against central differences, and against a value by hand where there is one, compiled
with numba and as Python (the `jit` fixture), in reverse and forward mode.
"""

import os

import numpy as np
import pytest
from fd import assert_grad

import srcgrad
from srcgrad import UnsupportedSyntax
from srcgrad.checks import numerical_grad

HERE = os.path.basename(__file__)
X = np.array([0.3, -1.2, 0.7, 2.0, -0.4])


def sum_of_squares(x):
    return sum(x[i] ** 2 for i in range(x.shape[0]))


def list_sum(x, n):
    return sum([np.sin(x[i]) * x[0] for i in range(n)])


def nested_filtered(x, n):
    return sum(np.sin(x[i]) * x[j] for i in range(n) if x[i] > 0 for j in range(i + 1))


def over_an_array(x):
    pairs = sum(np.tanh(v) * w for v, w in zip(x, x[::-1]))  # noqa: B905 (numba's zip)
    return pairs + sum(k * v for k, v in enumerate(x))


def largest_and_smallest(x, n):
    return max(np.cos(v) for v in x) - min(x[k] * x[0] for k in range(1, n))


def max_with_default(x, n):
    return max((x[i] ** 3 for i in range(n) if x[i] > 5.0), default=x[0] * 2.0)


def any_all_guard(x):
    if any(v > 1.5 for v in x) and all(abs(v) < 3.0 for v in x):
        return sum(v * v for v in x)
    return np.sum(x)


def sum_of_arrays(x):
    total = sum((x[i] * x for i in range(x.shape[0])), np.zeros_like(x))
    return np.sum(total ** 2)


def np_sum_of_list(x):
    return np.sum([np.sin(x[i] * x) for i in range(3)])


def shadowed(x):
    i = 1.5
    s = sum(x[i] * i for i in range(x.shape[0]))
    return s * i + sum(sum(x[i] * x[j] for j in range(i)) + x[i] for i in range(3))


def in_a_loop(x, n):
    out = 0.0
    for t in range(n):
        out = out + sum(x[i] * x[t] for i in range(t, n)) * 0.5
    return out


def pairs(a, n):
    return sum(a[i] * a[i + 1] for i in range(n - 1))


def in_a_helper_over_its_own_name(x):
    return pairs(np.sin(x), x.shape[0]) + sum(x * 2.0 for x in x)


def in_a_while_test(x):
    y = x * 1.0
    k = 0
    while sum(v * v for v in y) > 0.5 and k < 20:
        y = y * 0.9
        k = k + 1
    return np.sum(y) + (x[0] if all(v < 5 for v in x) else -x[0])


def in_a_conditional_expression(x):
    return sum(x[i] for i in range(3)) if x[0] > 0 else max(x[i] ** 2 for i in range(2))


def stacked(x):
    rows = np.stack([x[i] * x for i in range(3)])
    return np.sum(np.array([np.sin(x[i]) for i in range(-1, 4, 2)]) ** 2) + np.sum(rows ** 3)


def list_value(x):
    parts = [x[i] * x[j] for i in range(3) for j in range(i, 3)]
    total = 0.0
    for p in parts:
        total = total + np.cos(p)
    return total * parts[0] + parts[-1] + sum(parts[k] for k in range(len(parts)))


def issue_example(x, n):
    return np.sum(np.array([np.sin(x[i]) for i in range(n)]) * x[:n])


CASES = [
    (sum_of_squares, (X,)),
    (list_sum, (X, 4)),
    (nested_filtered, (X, 5)),
    (over_an_array, (X,)),
    (largest_and_smallest, (X, 5)),
    (max_with_default, (X, 5)),
    (max_with_default, (X * 3.0, 5)),
    (any_all_guard, (X,)),
    (any_all_guard, (X * 0.5,)),
    (sum_of_arrays, (X,)),
    (np_sum_of_list, (X,)),
    (shadowed, (X,)),
    (in_a_loop, (X, 5)),
    (stacked, (X,)),
    (in_a_helper_over_its_own_name, (X,)),
    (in_a_while_test, (X,)),
    (in_a_conditional_expression, (X,)),
    (in_a_conditional_expression, (-X,)),
]


@pytest.mark.parametrize("fun,args", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_reverse_against_differences(fun, args, jit):
    value, dx = srcgrad.value_and_grad(fun, jit=jit)(*args)
    assert np.isclose(value, fun(*args))
    assert_grad(fun, (dx,), args, [0])


@pytest.mark.parametrize("fun,args", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_forward_against_differences(fun, args, jit):
    direction = np.linspace(-1.0, 1.0, X.size)
    value, slope = srcgrad.jvp(fun, jit=jit)(*args, direction)
    assert np.isclose(value, fun(*args))
    assert np.isclose(slope, numerical_grad(fun, args, 0) @ direction, rtol=1e-5, atol=1e-7)


def first_max(x):
    return max(x[i] * 1.0 for i in range(3))


def test_by_hand(jit):
    # sum(x_i^2) has gradient 2x and Hessian 2I; max picks the first maximum, as Python
    np.testing.assert_allclose(srcgrad.grad(sum_of_squares, jit=jit)(X), 2.0 * X)
    np.testing.assert_allclose(srcgrad.hvp(sum_of_squares, jit=jit)(X, np.ones(5)),
                               2.0 * np.ones(5))

    assert list(srcgrad.grad(first_max, jit=jit)(np.array([2.0, 2.0, 1.0]))) == [1, 0, 0]
    assert srcgrad.grad(list_sum, jit=jit)(X, 0)[0] == 0.0   # no item: sum is 0


def test_hvp_against_differences_of_the_gradient(jit):
    v = np.linspace(-1.0, 1.0, X.size)
    got = srcgrad.hvp(in_a_helper_over_its_own_name, jit=jit)(X, v)
    gradient = srcgrad.grad(in_a_helper_over_its_own_name, jit=False)
    h = 1e-6
    want = (gradient(X + h * v) - gradient(X - h * v)) / (2 * h)   # central differences
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_empty_max_raises_as_python(jit):
    with pytest.raises(ValueError, match="empty sequence"):
        srcgrad.grad(largest_and_smallest, jit=jit)(X[:0], 1)


def test_source_is_a_loop_under_the_line_comment():
    src = srcgrad.grad(nested_filtered).source
    line = nested_filtered.__code__.co_firstlineno + 1
    forward = src[:src.index("# adjoint")].splitlines()
    head = next(k for k, text in enumerate(forward) if f"# line {line}: return sum(" in text)
    body = "\n".join(forward[head:])
    assert "total = 0" in body and "for i in range(n):" in body
    assert "for j in range(" in body and "if _t" in body
    assert f"# grad of line {line}: return sum(" in src


def test_a_list_value(jit):
    # the adjoint of a list display read in a loop (`parts[k]`) is a list of zeros first
    value, dx = srcgrad.value_and_grad(list_value, jit=jit)(X)
    assert np.isclose(value, list_value(X))
    assert_grad(list_value, (dx,), (X,), [0])
    slope = srcgrad.jvp(list_value, jit=jit)(X, np.ones(5))[1]
    assert np.isclose(slope, np.sum(numerical_grad(list_value, (X,), 0)))


def test_a_list_over_a_static_range(jit):
    # d/dx_i of sum_i sin(x_i) x_i, for i < n: cos(x_i) x_i + sin(x_i)
    dx = srcgrad.grad(issue_example, static="n", jit=jit)(X, 3)
    np.testing.assert_allclose(dx[:3], np.cos(X[:3]) * X[:3] + np.sin(X[:3]))
    assert np.all(dx[3:] == 0.0)
    slope = srcgrad.jvp(issue_example, static="n", jit=jit)(X, 3, np.ones(5))[1]
    assert np.isclose(slope, np.sum(dx))


def test_a_list_display_in_the_source():
    src = srcgrad.grad(stacked, jit=False).source
    assert "_t1 = x[0]" in src and "_t7 = _t2, _t4, _t6" in src and "np.stack(_t7)" in src


def with_stack(x):
    return np.sum(np.stack([x * i for i in range(x.shape[0])]))


def with_list_value(x):
    parts = [x[i] for i in range(2) if x[i] > 0]
    return parts[0]


def with_a_second_argument(x):
    return min((v for v in x), 0.0)


def with_dict_comprehension(x):
    return sum({i: v for i, v in enumerate(x)}.values())


def test_a_list_comprehension_over_run_time_values(jit):
    # was refused: its list is an array the loop fills (passes/lists.py). By hand:
    # sum_i<5 i sum(x) has gradient 0 + 1 + 2 + 3 + 4 = 10 in each entry; the first
    # positive entry of x[:2] is x[0]; sin(x_i) x_i for i < n: cos(x_i) x_i + sin(x_i)
    np.testing.assert_allclose(srcgrad.grad(with_stack, jit=jit)(X), np.full(5, 10.0))
    np.testing.assert_allclose(srcgrad.grad(with_list_value, jit=jit)(X), [1.0, 0, 0, 0, 0])
    dx = srcgrad.grad(issue_example, jit=jit)(X, 3)
    np.testing.assert_allclose(dx[:3], np.cos(X[:3]) * X[:3] + np.sin(X[:3]))
    assert np.all(dx[3:] == 0.0)
    for fun, args in ((filtered_rows, (X,)), (rows_of_a_matrix, (X.reshape(5, 1) * X[:3],))):
        g = srcgrad.grad(fun, jit=jit)(*args)
        assert_grad(fun, [g], args, [0])
        v = np.cos(np.arange(args[0].size)).reshape(args[0].shape)
        assert srcgrad.jvp(fun, jit=jit)(*args, v)[1] == pytest.approx(np.sum(g * v))


def over_a_tuple_of_other_shapes(x):
    p = (x[1:] * 2.0, np.mean(x))
    return [v for v in p][1] * np.sum(x)


def over_displays(x):
    a, b = x[0], x[1:]
    ws = [x[0], x[1] * 2.0, x[2]]
    return np.sum(np.concatenate([np.atleast_1d(v ** 2) for v in (a, b, x[2])])) + \
        sum([w * w for w in ws]) + np.sum(np.stack([w + v for w in ws for v in (x[0], 1.0)]))


def test_a_list_comprehension_over_a_display_is_the_display_it_stands_for(jit):
    """Fuzz seed 10420267: `[v for v in p]` over a tuple of an array and a number was an
    array the loop fills, refused as it ran (its items differ in shape); over a display of
    known length it is the display of its items, as a comprehension over a range is."""
    x = np.array([1.0, 2.0, 3.0])
    # mean(x) sum(x): sum/3 + mean in each entry
    g = srcgrad.grad(over_a_tuple_of_other_shapes, jit=jit)(x)
    np.testing.assert_allclose(g, np.full(3, np.sum(x) / 3 + np.mean(x)))
    assert_grad(over_a_tuple_of_other_shapes, (g,), (x,), [0])
    # x0^2 + x1^2 + 2 x2^2 + (x0^2 + 4 x1^2 + x2^2) + 2 (x0 + 2 x1 + x2) + 3 x0 + 3
    g = srcgrad.grad(over_displays, jit=jit)(x)
    np.testing.assert_allclose(g, [4 * x[0] + 5, 10 * x[1] + 4, 6 * x[2] + 2])
    assert_grad(over_displays, (g,), (x,), [0])
    t = np.array([0.5, -1.0, 2.0])
    assert srcgrad.jvp(over_displays, jit=jit)(x, t)[1] == pytest.approx(np.dot(g, t))


def filtered_rows(x):
    ys = [v * 3.0 for v in x if v > 0]
    return np.sum(np.array(ys) ** 2) + len(ys) + np.mean([v ** 2 for v in x])


def rows_of_a_matrix(m):
    sums = [np.sum(r ** 2) for r in m]
    return np.sum(np.concatenate([np.array(sums), np.stack([r * 2.0 for r in m])[:, 0]]))


@pytest.mark.parametrize("fun,construct,line", [
    (with_a_second_argument, "with the comprehension as its only argument",
     "return min((v for v"),
    (with_dict_comprehension, "dict comprehensions (but one assigned once",
     "return sum({i: v"),
])
def test_refused_forms(fun, construct, line):
    with pytest.raises(UnsupportedSyntax) as info:
        srcgrad.grad(fun, jit=False)(X)
    message = str(info.value)
    assert f"{HERE}:" in message and construct in message and line in message


# ---- lists built by append in straight-line code (passes/lists.py) ----


def appended_rows(x, n):
    parts = []
    for i in range(n):
        parts.append(x[i] * x)
    return np.sum(np.stack(parts) ** 2)


def appended_numbers(x):
    vals = []
    vals.append(np.sin(x[0]))
    y = x[1] * 2.0
    vals.append(y)
    total = np.sum(np.array(vals)) * len(vals)
    vals.append(x[2] ** 2)
    return total * vals[-1] + vals[0] + np.sum(np.array(vals) ** 2)


def appended_then_iterated(x):
    vals = []
    vals.append(np.sin(x[0]))
    vals.append(x[1] * x[2])
    total = 0.0
    for v in vals:
        total = total + v * vals[-1]
    return total


def appended_in_an_unrolled_loop(x):
    rows = []
    for i in range(3):
        rows.append(np.tanh(x[i] * x[1:]))
    return np.sum(np.concatenate(rows) * np.array([1.0, 2.0, 3.0, 4.0] * 3))


def test_appended_rows_by_hand(jit):
    # sum_{i<n} sum_j (x_i x_j)^2 = T S, T = sum_{i<n} x_i^2, S = sum_j x_j^2
    n, S, T = 3, np.sum(X ** 2), np.sum(X[:3] ** 2)
    want = 2.0 * X * T + 2.0 * X * S * (np.arange(X.size) < n)
    np.testing.assert_allclose(srcgrad.grad(appended_rows, static="n", jit=jit)(X, n), want)
    slope = srcgrad.jvp(appended_rows, static="n", jit=jit)(X, n, np.ones(5))[1]
    assert np.isclose(slope, np.sum(want))


@pytest.mark.parametrize("fun,options", [(appended_numbers, {}),
                                         (appended_in_an_unrolled_loop, {"unroll": True})],
                         ids=["numbers", "unrolled"])
def test_appended_against_differences(fun, options, jit):
    value, dx = srcgrad.value_and_grad(fun, jit=jit, **options)(X)
    assert np.isclose(value, fun(X))
    assert_grad(fun, (dx,), (X,), [0])
    direction = np.linspace(-1.0, 1.0, X.size)
    slope = srcgrad.jvp(fun, jit=jit, **options)(X, direction)[1]
    assert np.isclose(slope, numerical_grad(fun, (X,), 0) @ direction)


def test_appended_then_iterated(jit):
    # the adjoint of a display read in a loop is a list of zeros first (as for
    # test_a_list_value)
    dx = srcgrad.grad(appended_then_iterated, jit=jit)(X)
    assert_grad(appended_then_iterated, (dx,), (X,), [0])


def test_appended_source_is_a_display():
    src = srcgrad.grad(appended_numbers, jit=False).source
    code = [line for line in src.splitlines() if not line.strip().startswith("#")]
    assert not any("vals.append" in line for line in code)
    assert any(line.strip().startswith("vals_1 = _t") for line in code)


def appended_with_an_alias(x):
    parts = []
    kept = parts
    parts.append(x * 2.0)
    return np.sum(np.stack(kept))


def appended_to_a_parameter(x, parts):
    parts.append(x * 2.0)
    parts = []
    parts.append(x)
    return np.sum(np.stack(parts))


@pytest.mark.parametrize("fun,args", [(appended_with_an_alias, (X,)),
                                      (appended_to_a_parameter, (X, []))],
                         ids=["alias", "parameter"])   # (run-time trip counts: test_lists_runtime)
def test_appended_refused(fun, args):
    with pytest.raises(srcgrad.MissingRule) as info:
        srcgrad.grad(fun, jit=False)(*args)
    message = str(info.value)
    assert f"{HERE}:" in message and ".append(...) is called for its effect" in message


def comprehension_made_a_tuple(x):
    t = tuple([v * 2.0 for v in x])
    return t[0] * t[1]


def test_a_comprehension_read_otherwise_is_refused_by_what_the_user_wrote():
    # the list the comprehension builds has srcgrad's name (`items`): the refusal named
    # `items.append(...)`, which the user never wrote
    with pytest.raises(srcgrad.MissingRule) as info:
        srcgrad.grad(comprehension_made_a_tuple, jit=False)(X)
    message = str(info.value)
    assert f"{HERE}:" in message and "a list comprehension over values known only when " \
        "the function runs" in message and "items" not in message, message
    assert "t = tuple([v * 2.0 for v in x])" in message


# ---- several `for` clauses and an `if`, the list the value (a loop nest appending) ----


def pairs_off_the_diagonal(x):
    n = x.shape[0]
    return np.sum(np.array([x[i] * x[j] for i in range(n) for j in range(n) if i != j]) ** 2)


def upper_pairs(w, x):
    return sum(w[i] * x[j] for i in range(w.shape[0]) for j in range(x.shape[0]) if j >= i)


def test_a_list_of_two_for_clauses_and_an_if(jit):
    g = srcgrad.grad(pairs_off_the_diagonal, jit=jit)(X)
    # by hand: f = sum_{i != j} x_i^2 x_j^2 = S^2 - sum x^4, S = sum x^2
    np.testing.assert_allclose(g, 4.0 * X * (np.sum(X ** 2) - X ** 2))
    assert_grad(pairs_off_the_diagonal, (g,), (X,), (0,))
    w = X[:3] + 0.5
    dw, dx = srcgrad.grad(upper_pairs, wrt=(0, 1), jit=jit)(w, X)
    # by hand: f = sum_{i <= j} w_i x_j: dw_i = sum_{j >= i} x_j, dx_j = sum_{i <= j} w_i
    np.testing.assert_allclose(dw, np.cumsum(X[::-1])[::-1][:3])
    np.testing.assert_allclose(dx, np.cumsum(np.concatenate([w, np.zeros(2)])))
    assert_grad(upper_pairs, (dw, dx), (w, X), (0, 1))
