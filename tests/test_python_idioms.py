"""The Python users write (issue 20): starred targets, dict comprehensions and loops over
dicts, `sorted` of a list display. Each form is checked against central differences and
a value worked by hand, compiled with numba and as Python (the `jit` fixture); each
refusal kept has a test of its message."""

import os

import numpy as np
import pytest
from fd import assert_grad

import srcgrad
from srcgrad import UnsupportedSyntax

HERE = os.path.basename(__file__)
X = np.array([0.3, 0.2, 0.9])


def assert_by_hand_and_differences(fun, args, want, jit):
    value, dx = srcgrad.value_and_grad(fun, jit=jit)(*args)
    assert value == pytest.approx(fun(*args), rel=1e-12)
    np.testing.assert_allclose(dx, want, rtol=1e-12, atol=1e-15)
    assert_grad(fun, (dx,), args, [0])


def refused(fun, args, construct, line):
    with pytest.raises(UnsupportedSyntax) as info:
        srcgrad.grad(fun, jit=False)(*args)
    message = str(info.value)
    assert f"{HERE}:" in message and construct in message and line in message, message


# ---- starred targets: `first, *rest = <items known when srcgrad compiles>` ----


def first_and_rest(x):
    first, *rest = [x[0], x[1], x[2]]
    return first * rest[0] + rest[1]


def middle_of_a_bound_tuple(x):
    items = (x[0], np.sin(x[1]), x[2], x[0] * x[1])
    a, *b, c = items
    return a * c + b[0] * b[1] + len(b)


def starred_first(x):
    *a, b = x[0], x[1]
    return a[0] * b + len(a)


def empty_rest(x):
    a, *b, c = [x[0], x[2]]
    return a * c + len(b)


def test_starred_by_hand(jit):
    # first * rest[0] + rest[1] = x0 x1 + x2: (x1, x0, 1)
    assert_by_hand_and_differences(first_and_rest, (X,), [0.2, 0.3, 1.0], jit)
    # a = x0, b = [sin(x1), x2], c = x0 x1: x0^2 x1 + sin(x1) x2 + 2
    x0, x1, x2 = X
    want = [2.0 * x0 * x1, x0 ** 2 + np.cos(x1) * x2, np.sin(x1)]
    assert_by_hand_and_differences(middle_of_a_bound_tuple, (X,), want, jit)
    assert_by_hand_and_differences(starred_first, (X,), [x1, x0, 0.0], jit)
    # (numba types no empty list: under jit=True the rest [] is refused by numba)
    assert_by_hand_and_differences(empty_rest, (X,), [x2, 0.0, x0], False)


def test_starred_source_names_the_rest():
    src = srcgrad.grad(first_and_rest, jit=False).source
    assert "rest = [_t2, _t3]" in src and "first = _t1" in src


def starred_tuple_argument(t):
    first, *rest = t
    return np.sum(first * rest[0]) + rest[1][1]


def test_starred_unpacking_of_a_tuple_argument(jit):
    # sum(t0 * t1) + t2[1]: (t1, t0, e_1)
    t = (X, 2.0 * X, 3.0 * X)
    g = srcgrad.grad(starred_tuple_argument, jit=jit)(t)
    assert type(g) is tuple and len(g) == 3
    for got, want in zip(g, (2.0 * X, X, [0.0, 1.0, 0.0]), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def starred_too_few(x):
    a, b, *c, d = [x[0], x[1]]
    return a * b * d + len(c)


def starred_loop_target(x):
    t = 0.0
    for a, *b in [(x[0], x[1]), (x[1], x[2])]:
        t = t + a * b[0]
    return t


@pytest.mark.parametrize("fun, construct, line", [
    (starred_too_few, "not enough values to unpack: 2 items into 3 names",
     "a, b, *c, d = [x[0], x[1]]"),
    (starred_loop_target, "a starred loop target cannot be differentiated", "for a, *b in"),
])
def test_starred_refused(fun, construct, line):
    refused(fun, (X,), construct, line)


# ---- dict comprehensions of keys known when srcgrad compiles, loops over dicts ----

NAMES = ("a", "b", "c")


def comprehension_enumerated(x):
    d = {k: x[i] * (i + 1) for i, k in enumerate(["a", "b", "c"])}
    return d["a"] * d["c"]


def comprehension_zipped(x):
    names = ["a", "b"]
    vals = [x[0], np.sin(x[1])]
    d = {k: v * 2 for k, v in zip(names, vals)}  # noqa: B905 (as users write it)
    return d["a"] * d["b"]


def comprehension_of_a_global_tuple_and_a_range(x):
    d = {k: x[i] ** 2 for i, k in enumerate(NAMES)}
    e = {i: x[i] * x[0] for i in range(1, 3)}
    return d["b"] + d["c"] * e[2] - e[1]


def test_dict_comprehensions_by_hand(jit):
    x0, x1, x2 = X
    # x0 * 3 x2
    assert_by_hand_and_differences(comprehension_enumerated, (X,), [3 * x2, 0.0, 3 * x0],
                                   jit)
    # 4 x0 sin(x1)
    assert_by_hand_and_differences(comprehension_zipped, (X,),
                                   [4 * np.sin(x1), 4 * x0 * np.cos(x1), 0.0], jit)
    # x1^2 + x2^3 x0 - x1 x0
    assert_by_hand_and_differences(comprehension_of_a_global_tuple_and_a_range, (X,),
                                   [x2 ** 3 - x1, 2 * x1 - x0, 3 * x2 ** 2 * x0], jit)


def test_dict_comprehension_source_is_one_name_per_entry():
    src = srcgrad.grad(comprehension_zipped, jit=False).source
    assert "d_a = _t4 * 2" in src and "d_b = _t5 * 2" in src and "_t4 = vals[0]" in src


def over_items(x):
    d = {"a": x[0], "b": x[1]}
    t = 0.0
    for _k, v in d.items():
        t = t + v * v
    return t


def over_keys_and_values(x):
    d = {"a": x[0], "b": x[1] * x[2]}
    w = {"a": 2.0, "b": 3.0}
    t = 0.0
    for k in d:
        t = t + d[k] * w[k]
    for v in d.values():
        t = t + v ** 2
    return t + sum(d.values()) + len(d.keys())


def test_loops_over_a_dict_by_hand(jit):
    x0, x1, x2 = X
    assert_by_hand_and_differences(over_items, (X,), [2 * x0, 2 * x1, 0.0], jit)
    # 2 x0 + 3 x1 x2 + x0^2 + (x1 x2)^2 + x0 + x1 x2 + 2
    b = x1 * x2
    want = [3 + 2 * x0, (4 + 2 * b) * x2, (4 + 2 * b) * x1]
    assert_by_hand_and_differences(over_keys_and_values, (X,), want, jit)


def over_a_dict_argument(p):
    t = 0.0
    for name, v in p.items():
        t = t + np.sum(v ** 2) * len(name)
    return t


def test_loop_over_a_dict_argument(jit):
    # sum(W^2) + 4 b^2
    g = srcgrad.grad(over_a_dict_argument, jit=jit)({"W": X, "bias": 2.0})
    assert list(g) == ["W", "bias"]
    np.testing.assert_allclose(g["W"], 2 * X, rtol=1e-12)
    assert g["bias"] == pytest.approx(16.0, rel=1e-12)


def comprehension_over_an_array(x):
    d = {i: v for i, v in enumerate(x)}
    return d[0]


def comprehension_filtered(x):
    d = {k: x[i] for i, k in enumerate("ab") if i > 0}
    return d["b"]


def loop_with_break(x):
    d = {"a": x[0], "b": x[1]}
    t = 0.0
    for v in d.values():
        t = t + v
        if t > 0:
            break
    return t


@pytest.mark.parametrize("fun, construct, line", [
    (comprehension_over_an_array, "dict comprehensions (but one assigned once",
     "d = {i: v for i, v in enumerate(x)}"),
    (comprehension_filtered, "dict comprehensions (but one assigned once", "d = {k: x[i]"),
    (loop_with_break, "a `for` over it with `break`", "for v in d.values()"),
])
def test_dict_forms_refused(fun, construct, line):
    refused(fun, (X,), construct, line)


# ---- sorted of a list display: np.sort of its array, then its items ----


def sorted_bound_list(x):
    items = [x[0], x[1] * 2, x[2] ** 2]
    s = sorted(items)
    return s[0] + 2 * s[2]


def sorted_reversed(x):
    s = sorted([x[0], x[1], x[2] * 0.1], reverse=True)
    return s[0] * 3 + s[1] * 2 + s[2]


def sorted_ties(x):
    up = sorted([x[0], x[1], x[2]])
    down = sorted((x[0], x[1], x[2]), reverse=True)
    return up[0] * 3 + up[1] * 2 + up[2] + 10 * down[0] + 100 * down[1]


def test_sorted_by_hand(jit):
    x0, x1, x2 = X
    # items (0.3, 0.4, 0.81): x0 + 2 x2^2
    assert_by_hand_and_differences(sorted_bound_list, (X,), [1.0, 0.0, 4 * x2], jit)
    # (0.3, 0.2, 0.09) descending: 3 x0 + 2 x1 + 0.1 x2
    assert_by_hand_and_differences(sorted_reversed, (X,), [3.0, 2.0, 0.1], jit)
    # ties stay in their order, as Python's sort is stable: at x = (1, 0.5, 1), up is
    # (x1, x0, x2), down is (x0, x2, x1)
    tie = np.array([1.0, 0.5, 1.0])
    value, dx = srcgrad.value_and_grad(sorted_ties, jit=jit)(tie)
    assert value == sorted_ties(tie)
    np.testing.assert_array_equal(dx, [2 + 10, 3, 1 + 100])


def test_sorted_forward_mode(jit):
    direction = np.array([1.0, -2.0, 0.5])
    slope = srcgrad.jvp(sorted_bound_list, jit=jit)(X, direction)[1]
    assert slope == pytest.approx(1.0 - 2 * 0.0 + 4 * X[2] * 0.5, rel=1e-12)


# with key=: the items in the order of the keys' stable argsort, on primal values


def sorted_by_abs(x):
    s = sorted([x[0], x[1] * 2, x[2]], key=abs)
    return s[0] + 2 * s[1] + 4 * s[2]


def sorted_by_a_nested_def_reversed(x):
    items = [x[0], x[1], x[2], -x[0]]

    def distance(v):
        return (v - 0.5) ** 2
    s = sorted(items, key=distance, reverse=True)
    return s[0] + 10 * s[1] + 100 * s[2] + 1000 * s[3]


def sorted_by_a_lambda(x):
    s = sorted((x[0], x[1] * x[2], x[2]), key=lambda v: -v)
    return s[0] + 2 * s[1] + 4 * s[2]


def max_by_a_lambda(x):
    return max([x[0], x[1], x[2]], key=lambda v: (v - 0.5) ** 2)


def test_sorted_with_key_by_hand(jit):
    # abs of (-0.3, 0.2, 0.25): s = (2 x1, x2, x0), s0 + 2 s1 + 4 s2
    x = np.array([-0.3, 0.1, 0.25])
    assert_by_hand_and_differences(sorted_by_abs, (x,), [4.0, 2.0, 2.0], jit)
    # distances of (0.3, 0.9, 0.45, -0.3) to 0.5, descending: s = (-x0, x1, x0, x2)
    assert_by_hand_and_differences(sorted_by_a_nested_def_reversed,
                                   (np.array([0.3, 0.9, 0.45]),), [-1.0 + 100.0, 10.0, 1000.0],
                                   jit)
    # keys -(0.3, 0.18, 0.9): s = (x2, x0, x1 x2): x2 + 2 x0 + 4 x1 x2
    assert_by_hand_and_differences(sorted_by_a_lambda, (X,), [2.0, 4 * X[2], 1 + 4 * X[1]],
                                   jit)
    # the distances to 0.5 of X: x2's 0.16 is the largest
    assert_by_hand_and_differences(max_by_a_lambda, (X,), [0.0, 0.0, 1.0], jit)
    # tied keys keep the items' order, as Python's sort (reverse=True too): at
    # x = (0.25, 0.75, 0.5) the distances are (1/16, 1/16, 0, 9/16): s = (-x0, x0, x1, x2)
    tie = np.array([0.25, 0.75, 0.5])
    value, dx = srcgrad.value_and_grad(sorted_by_a_nested_def_reversed, jit=jit)(tie)
    assert value == sorted_by_a_nested_def_reversed(tie)
    np.testing.assert_array_equal(dx, [-1.0 + 10.0, 100.0, 1000.0])


def test_sorted_with_key_forward_mode(jit):
    x, direction = np.array([-0.3, 0.1, 0.25]), np.array([1.0, -2.0, 0.5])
    value, slope = srcgrad.jvp(sorted_by_abs, jit=jit)(x, direction)
    assert value == pytest.approx(sorted_by_abs(x), rel=1e-15)
    assert slope == pytest.approx(4.0 * 1.0 + 2.0 * -2.0 + 2.0 * 0.5, rel=1e-12)


def sorted_by_a_lambda_of_expressions(a, b, c):
    s = sorted([a, b * 2.0, c], key=lambda v: -v)
    return s[0] * 3.0 + s[2]


def nearest_of_expressions(a, b, c):
    return min([a * a, b * 2.0, c], key=lambda v: abs(v - 0.42))


def test_key_called_on_the_items_computed_for_the_list(jit):
    # items (1, 0.4, 0.5), keys (-1, -0.4, -0.5): s = (a, c, 2 b), 3 a + 2 b
    args = (1.0, 0.2, 0.5)
    grads = srcgrad.grad(sorted_by_a_lambda_of_expressions, wrt=(0, 1, 2), jit=jit)(*args)
    np.testing.assert_allclose(grads, [3.0, 2.0, 0.0], rtol=1e-12, atol=1e-15)
    assert_grad(sorted_by_a_lambda_of_expressions, grads, args, [0, 1, 2])
    # distances to 0.42 of (1, 0.4, 0.5): 2 b is the nearest
    grads = srcgrad.grad(nearest_of_expressions, wrt=(0, 1, 2), jit=jit)(*args)
    np.testing.assert_allclose(grads, [0.0, 2.0, 0.0], rtol=1e-12, atol=1e-15)
    assert_grad(nearest_of_expressions, grads, args, [0, 1, 2])
    for fun, key in ((sorted_by_a_lambda_of_expressions, "s_key"),
                     (nearest_of_expressions, "min_key")):
        code = [line.strip() for line in srcgrad.source(fun, wrt=(0, 1, 2)).splitlines()
                if not line.strip().startswith("#")]
        assert sum(line.endswith("= b * 2.0") for line in code) == 1, "\n".join(code)
        assert f"def {key}(v):" in code and not any("lambda_(" in line for line in code)


def sorted_of_arrays(x):
    return np.sum(sorted([x[:2], x[1:]])[0])


def sorted_by_a_captured_value(x):
    c = x[0]
    return sorted([x[1], x[2]], key=lambda v: abs(v - c))[0]


def sorted_by_pairs(x):
    return sorted([x[0], x[1]], key=lambda v: (v, 1.0))[0]


def sorted_with_a_variable_reverse(x, up):
    return sorted([x[0], x[1]], key=abs, reverse=up)[0]


def test_sorted_refused():
    with pytest.raises(AssertionError, match="sorted\\(\\) of a list of numbers"):
        srcgrad.grad(sorted_of_arrays, jit=False)(X)
    refused(sorted_by_a_captured_value, (X,), "a key= lambda or nested def that reads values "
            "of the function it is in", "return sorted([x[1], x[2]], key=lambda v: abs(v - c))[0]")
    with pytest.raises(AssertionError, match="sorted\\(..., key=f\\) where f gives numbers"):
        srcgrad.grad(sorted_by_pairs, jit=False)(X)
    with pytest.raises(UnsupportedSyntax, match="a constant reverse= and a key= as its only "
                                                "options") as info:
        srcgrad.grad(sorted_with_a_variable_reverse, jit=False)(X, True)
    assert f"{HERE}:" in str(info.value)
    assert "return sorted([x[0], x[1]], key=abs, reverse=up)[0]" in str(info.value)


# ---- max and min with key=: the first item whose key is best, as Python picks it ----


def max_by_abs_of_a_bound_list(x):
    items = [x[0], x[1], x[2]]
    return max(items, key=abs)


def min_by_abs_of_arguments_and_ties(x):
    # max of (x0, -x0) by abs ties: the first, x0, as Python
    return min(x[0], x[1] * 2, x[2], key=np.abs) + max([x[0], -x[0]], key=abs)


def over_an_array_and_a_generator(x):
    return max(x, key=abs) * min((v * 2 for v in x), key=abs) + max(x[0], x[2], key=None) \
        - min(x[0], x[2], key=abs)


def test_max_min_with_key_by_hand(jit):
    x = np.array([0.3, -1.2, 0.9])
    assert_by_hand_and_differences(max_by_abs_of_a_bound_list, (x,), [0.0, 1.0, 0.0], jit)
    assert_by_hand_and_differences(min_by_abs_of_arguments_and_ties, (x,), [2.0, 0.0, 0.0],
                                   jit)
    # x1 * 2 x0 + x2 - x0: (2 x1 - 1, 2 x0, 1)
    assert_by_hand_and_differences(over_an_array_and_a_generator, (x,), [-3.4, 0.6, 1.0], jit)
    slope = srcgrad.jvp(over_an_array_and_a_generator, jit=jit)(x, np.array([1.0, 2.0, 3.0]))[1]
    assert slope == pytest.approx(-3.4 + 1.2 + 3.0, rel=1e-12)


def test_max_with_key_source_compares_the_keys():
    src = srcgrad.grad(max_by_abs_of_a_bound_list, jit=False).source
    assert "_t5 = abs(_t4)" in src and "_t8 = _t7 > _t5" in src


# ---- an item of a list display replaced: the name bound to a new display ----


def item_replaced(x):
    items = [x[0], x[1]]
    items[0] = x[2] * 3
    return items[0] * items[1]


def items_replaced_and_read(x):
    items = [x[0], x[1], 1.0]
    items[0] = items[1] * 0.5
    items[-1] = items[-1] + items[0] * x[2]
    t = 0.0
    for v in items:
        t = t + v
    return sum(items) + t + len(items)


def test_list_items_replaced_by_hand(jit):
    x0, x1, x2 = X
    # 3 x2 x1
    assert_by_hand_and_differences(item_replaced, (X,), [0.0, 3 * x2, 3 * x1], jit=jit)
    # items (x1 / 2, x1, 1 + x1 x2 / 2): 2 (1 + 1.5 x1 + x1 x2 / 2) + 3
    assert_by_hand_and_differences(items_replaced_and_read, (X,), [0.0, 3 + x2, x1], jit=jit)


def test_list_item_source_binds_a_new_list():
    src = srcgrad.grad(item_replaced, jit=False).source
    assert "items_1 = [_t4, _t5]" in src


def item_written_in_a_loop(x):
    items = [x[0], x[1], 1.0]
    for i in range(2):
        items[i] = x[i] * 2
    return items[0] * items[1]


def item_of_an_aliased_list(x):
    items = [1.0, 2.0]
    same = items
    items[0] = x[0] * 2
    return same[0] * items[1]


def item_out_of_range(x):
    items = [x[0], x[1]]
    items[2] = x[2]
    return items[0]


def test_list_item_out_of_range_refused():
    refused(item_out_of_range, (X,), "list assignment index 2 out of range: 'items' has 2",
            "items[2] = x[2]")


@pytest.mark.parametrize("fun, line", [
    (item_written_in_a_loop, "items[i] = x[i] * 2"),
    (item_of_an_aliased_list, "items[0] = x[0] * 2"),
])
def test_list_item_writes_refused(fun, line):
    refused(fun, (X,), "'items' is a list: an item write (items[k] = v) is differentiated "
                       "in straight-line code", line)


# ---- map of a function: the generator expression it stands for ----


def map_of_a_nested_def(x):
    def sq(v):
        return v * v
    return sum(map(sq, x))


def map_of_a_lambda_over_two(x, w):
    return max(map(lambda a, c: a * c, x, w)) + sum(map(np.sin, x))


def test_map_by_hand(jit):
    assert_by_hand_and_differences(map_of_a_nested_def, (X,), 2 * X, jit)
    # max(x * w) is x2 w2 here (0.3, 0.4, 0.45): w2 e_2 + cos(x)
    w = np.array([1.0, 2.0, 0.5])
    value, dx = srcgrad.value_and_grad(map_of_a_lambda_over_two, jit=jit)(X, w)
    assert value == pytest.approx(map_of_a_lambda_over_two(X, w), rel=1e-12)
    np.testing.assert_allclose(dx, np.cos(X) + [0.0, 0.0, 0.5], rtol=1e-12)
    assert_grad(map_of_a_lambda_over_two, (dx,), (X, w), [0])


def map_kept_as_a_list(x):
    def sq(v):
        return v * v
    return np.sum(np.array(list(map(sq, x))))


def generator_listed(x):
    parts = list(np.sin(v) * x[0] for v in x)
    return np.sum(np.stack(parts)) + parts[1]


def map_over_two_listed(x, w):
    return np.sum(np.array(list(map(lambda a, c: a * c * c, x, w))))


def test_list_of_a_map_or_a_generator_is_its_list_comprehension(jit):
    # list(map(f, x)) and list(e for v in x) are [f(v) for v in x] and [e for v in x]
    # (refused before: a generator expression that nothing reduces)
    assert_by_hand_and_differences(map_kept_as_a_list, (X,), 2 * X, jit)
    # x0 * sum(sin x) + sin(x1) x0: sum(sin x) + x0 cos(x0) + sin(x1) along x0, x0 cos(xk)
    # along the others, + x0 cos(x1) along x1
    want = X[0] * np.cos(X)
    want[0] += np.sum(np.sin(X)) + np.sin(X[1])
    want[1] += X[0] * np.cos(X[1])
    assert_by_hand_and_differences(generator_listed, (X,), want, jit)
    _, slope = srcgrad.jvp(generator_listed, jit=jit)(X, np.ones(3))
    assert slope == pytest.approx(np.sum(want), rel=1e-12)
    w = np.array([1.0, 2.0, 0.5])
    dx, dw = srcgrad.grad(map_over_two_listed, wrt=(0, 1), jit=jit)(X, w)
    np.testing.assert_allclose(dx, w * w, rtol=1e-12)
    np.testing.assert_allclose(dw, 2 * X * w, rtol=1e-12)
    assert_grad(map_over_two_listed, (dx, dw), (X, w), [0, 1])


def item_added_in_place(x0):
    p = [x0[0], x0[0]]
    p[0] = x0[0] * 0.5
    p[-1] += p[0]   # x0[0] itself, changed in place
    return np.sum(x0 ** 2)


def test_an_item_added_in_place_is_refused():
    # fuzz seed 9996700: rewritten as a new display, x0's row stayed unchanged (wrong)
    with pytest.raises(srcgrad.SrcgradError, match="list"):
        srcgrad.grad(item_added_in_place, jit=False)(np.ones((2, 3)))


# ---- a list grown with `+=` or `.extend` (was an AttributeError from generated code:
# the `+` of `L += [v]` was taken for arithmetic) ----


def _grown_in_place(x):
    squares = [x[0] * 2.0, x[1]]
    squares += [x[2]]
    return sum(v * v for v in squares)


def _grown_in_a_loop(x, n):
    parts = []
    for i in range(n):
        parts += [x[i] * (i + 1.0)]
    return sum(v * v for v in parts)


def _extended_in_a_loop(x, n):
    rows = []
    for i in range(n):
        rows.extend([x * (i + 1.0)])
    return np.sum(np.stack(rows) ** 2)


def _grown_and_shared(x):
    rows = [x]
    seen = rows                 # the same list: grown under the other name
    rows += [x * 2.0]
    return np.sum(np.stack(seen) ** 2)


def test_a_list_grown_with_plus_equals(jit):
    # by hand: 4 x0^2 + x1^2 + x2^2; sum over i < n of ((i + 1) x_i)^2;
    # sum over i < n of (i + 1)^2 |x|^2
    assert_by_hand_and_differences(_grown_in_place, (X,), 2 * X * [4.0, 1.0, 1.0], jit)
    assert_by_hand_and_differences(_grown_in_a_loop, (X, 3), 2 * X * [1.0, 4.0, 9.0], jit)
    assert_by_hand_and_differences(_extended_in_a_loop, (X, 2), 2 * X * 5.0, jit)


def test_a_list_grown_under_another_name_is_refused():
    with pytest.raises(srcgrad.SrcgradError, match=rf"{HERE}:\d+: rows.append"):
        srcgrad.grad(_grown_and_shared, jit=False)(X)


# ---- assignment expressions (:=), were refused ----


def _walrus_in_a_test(x):
    if (s := np.sum(x ** 2)) > 0.5:
        return s * 2.0
    return s


def _walrus_in_a_while(x, n):
    k, total = n, 0.0
    while (k := k - 1) >= 0:
        total = total + np.sum(x * (k + 1.0))
    return total ** 2


def _walrus_in_a_display(x):
    y = [v := x * 2.0, v + 1.0]
    return np.sum(y[1] * v)


def _walrus_maybe_unevaluated(x):
    return np.sum(x) if x[0] > 0 and (t := x[1]) > 0 else t


def test_assignment_expressions(jit):
    # by hand: |x|^2 = 1.34 > 0.5: 4x; total = 6 sum(x): 72 sum(x);
    # sum((2x + 1) 2x) = sum(4x^2 + 2x): 8x + 2
    assert_by_hand_and_differences(_walrus_in_a_test, (X,), 4 * X, jit)
    assert_by_hand_and_differences(_walrus_in_a_while, (X, 3), 72 * np.sum(X) * np.ones(3),
                                   jit)
    assert_by_hand_and_differences(_walrus_in_a_display, (X,), 8 * X + 2, jit)


def test_an_assignment_expression_python_may_skip_is_refused():
    refused(_walrus_maybe_unevaluated, (X,), "an assignment expression (:=) that Python may "
            "not evaluate", "(t := x[1])")


def _tuple_grown(x):
    pair = (x[0], x[1])
    pair += (x[2] * 2.0,)
    return sum(v * v for v in pair)


def test_a_tuple_grown_with_plus_equals(jit):
    # a new tuple (was an AttributeError from generated code, as for a list): by hand
    # x0^2 + x1^2 + 4 x2^2
    assert_by_hand_and_differences(_tuple_grown, (X,), 2 * X * [1.0, 1.0, 4.0], jit)
