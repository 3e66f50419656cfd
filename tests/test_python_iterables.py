"""The Python users write over sequences (the forms JAX and autograd users reach for):
`functools.reduce`, `itertools.combinations`/`product`/`permutations` in loops, `sorted`
of a list of arrays by a key, starred unpacking of an array, and a local name bound to a
function. Each form is checked against central differences and a value worked by hand,
in reverse (grad) and forward (jvp) mode, compiled with numba and as Python (the `jit`
fixture: one compiled case per form); each refusal has a test of its message."""

import functools
import itertools
import operator
import os
from functools import reduce
from itertools import combinations, permutations, product

import numpy as np
import pytest
from fd import assert_grad, slope

import srcgrad
from srcgrad import UnsupportedSyntax

HERE = os.path.basename(__file__)
X = np.array([0.3, -0.5, 1.2, 0.7])
T = np.array([0.4, 1.0, -0.6, 0.8])   # a direction for jvp


def check(fun, args, want, jit):
    """fun's gradient is `want` (by hand) and central differences; its jvp along T is
    <want, T> and the slope of differences."""
    value, dx = srcgrad.value_and_grad(fun, jit=jit)(*args)
    assert value == pytest.approx(fun(*args), rel=1e-12)
    np.testing.assert_allclose(dx, want, rtol=1e-10, atol=1e-14)
    assert_grad(fun, (dx,), args, [0])
    tangents = (T,) + tuple(np.zeros_like(a) for a in args[1:])
    primal, tangent = srcgrad.jvp(fun, wrt=tuple(range(len(args))), jit=jit)(*args, tangents)
    assert primal == pytest.approx(value, rel=1e-12)
    assert tangent == pytest.approx(float(np.dot(want, T)), rel=1e-9, abs=1e-12)
    assert tangent == pytest.approx(slope(fun, args, tangents), rel=1e-5, abs=1e-8)


def refused(fun, args, construct, line, kind=UnsupportedSyntax):
    with pytest.raises(kind) as info:
        srcgrad.grad(fun, jit=False)(*args)
    message = str(info.value)
    assert f"{HERE}:" in message and construct in message and line in message, message


# ---- functools.reduce ----


def reduce_lambda(x):
    return functools.reduce(lambda a, b: a * b + 1.0, x)


def reduce_initial_captured(x, c):
    w = c * 2.0
    return reduce(lambda a, b: a * b + w, x, 2.0)


def reduce_operator_display(x):
    return reduce(operator.mul, [x[0], x[1], np.sin(x[2])])


def reduce_ufunc(x):
    return reduce(np.add, x * x)


def reduce_rows(x):
    rows = np.reshape(x, (2, 2))
    return np.sum(reduce(lambda a, r: a * r, rows))


def reduce_nested_def(x):
    w = x[0] * 3.0

    def step(a, v):
        return a * w + v
    return reduce(step, x[1:], 1.0)


def double_then_add(a, b):
    return 2.0 * a + b


def reduce_user_function_over_a_list(x):
    parts = []
    for v in x:
        parts.append(v * v)
    return reduce(double_then_add, parts)


def reduce_map(x):
    return reduce(operator.mul, map(np.sin, x), 1.0)


def reduce_generator(x):
    return reduce(lambda a, b: a + b * b, (np.cos(v) for v in x), 0.0)


def test_reduce_by_hand(jit):
    x0, x1, x2, x3 = X
    # ((x0 x1 + 1) x2 + 1) x3 + 1
    want = [x1 * x2 * x3, x0 * x2 * x3, (x0 * x1 + 1) * x3, (x0 * x1 + 1) * x2 + 1]
    check(reduce_lambda, (X,), want, jit)


def test_reduce_forms_by_hand():
    x0, x1, x2, x3 = X
    # (((2 x0 + w) x1 + w) x2 + w) x3 + w, w = 2c: in x only
    p = 2 * x0 + 1.0
    q = p * x1 + 1.0
    r = q * x2 + 1.0
    check(reduce_initial_captured, (X, 0.5),
          [2 * x1 * x2 * x3, p * x2 * x3, q * x3, r], False)
    check(reduce_operator_display, (X,),
          [x1 * np.sin(x2), x0 * np.sin(x2), x0 * x1 * np.cos(x2), 0.0], False)
    check(reduce_ufunc, (X,), 2 * X, False)
    check(reduce_rows, (X,), [x2, x3, x0, x1], False)
    # ((1 * 3 x0 + x1) 3 x0 + x2) 3 x0 + x3 = 27 x0^3 + 9 x0^2 x1 + 3 x0 x2 + x3
    check(reduce_nested_def, (X,),
          [81 * x0 ** 2 + 18 * x0 * x1 + 3 * x2, 9 * x0 ** 2, 3 * x0, 1.0], False)
    # 2 (2 (2 x0^2 + x1^2) + x2^2) + x3^2
    check(reduce_user_function_over_a_list, (X,), [16 * x0, 8 * x1, 4 * x2, 2 * x3], False)
    s = np.sin(X)
    check(reduce_map, (X,), [np.prod(s) / s[k] * np.cos(X[k]) for k in range(4)], False)
    check(reduce_generator, (X,), -2 * np.cos(X) * np.sin(X), False)


def test_reduce_source_is_a_loop():
    src = srcgrad.grad(reduce_lambda, jit=False).source
    assert "acc = x[0]" in src and "for k in range(1, n):" in src and \
        "acc = reduce_step(acc, item)" in src, src
    src = srcgrad.grad(reduce_operator_display, jit=False).source
    assert "for " not in src, src   # (three items known: two calls)


def reduce_empty(x):
    return reduce(operator.add, [])


def reduce_not_a_function(x):
    return reduce(3.0, x)


def reduce_range(x):
    return reduce(lambda a, k: a + x[k], range(len(x)))


def reduce_generator_no_initial(x):
    return reduce(operator.add, (v * v for v in x))


@pytest.mark.parametrize("fun, construct, line", [
    (reduce_empty, "reduce() of empty iterable with no initial value", "reduce(operator.add"),
    (reduce_not_a_function, "functools.reduce(f, ...) is differentiated where f is a "
                            "function", "reduce(3.0, x)"),
    (reduce_range, "functools.reduce over range(...) is differentiated with an initial",
     "range(len(x))"),
    (reduce_generator_no_initial, "functools.reduce of a generator expression is "
                                  "differentiated with an initial value", "(v * v for"),
])
def test_reduce_refused(fun, construct, line):
    refused(fun, (X,), construct, line)


# ---- itertools.combinations, product, permutations in loops ----


def pairs(x):
    s = 0.0
    for a, b in itertools.combinations(x, 2):
        s += a * b
    return s


def pairs_of_indices(x):
    return sum(x[i] * x[j] ** 2 for i, j in combinations(range(len(x)), 2))


def pairs_until(x):
    s = 0.0
    for a, b in combinations(x, 2):
        s = s + a * b
        if s > 0.2:
            break
    return s


def with_replacement(x):
    s = 0.0
    for a, b in itertools.combinations_with_replacement(x[:2], 2):
        s = s + a * b
    return s


def product_of_two(x):
    s = 0.0
    for a, b in product(x, x[:2]):
        s = s + a * np.sin(b)
    return s


def product_repeated(x):
    s = 0.0
    for p in product(x[1:3], repeat=2):
        s = s + p[0] * p[1] ** 2
    return s


def counted_permutations(x):
    s = 0.0
    for k, (a, b) in enumerate(permutations(x[:3], 2)):
        s = s + a * b * k
    return s


def test_combinations_by_hand(jit):
    # sum over i < j of x_i x_j: d/dx_k = sum(x) - x_k
    check(pairs, (X,), np.sum(X) - X, jit)


def test_itertools_forms_by_hand():
    x0, x1, x2, x3 = X
    # sum_{i<j} x_i x_j^2
    want = [sum(X[j] ** 2 for j in range(k + 1, 4)) + 2 * X[k] * sum(X[:k]) for k in range(4)]
    check(pairs_of_indices, (X,), want, False)
    # x0 x1 = -0.15, + x0 x2 = 0.21 > 0.2: stops there
    check(pairs_until, (X,), [x1 + x2, x0, x0, 0.0], False)
    # x0^2 + x0 x1 + x1^2
    check(with_replacement, (X,), [2 * x0 + x1, x0 + 2 * x1, 0.0, 0.0], False)
    # sum(x) (sin x0 + sin x1)
    s = np.sin(x0) + np.sin(x1)
    check(product_of_two, (X,), [s + np.sum(X) * np.cos(x0), s + np.sum(X) * np.cos(x1),
                                 s, s], False)
    # (x1 + x2)(x1^2 + x2^2)
    a, c = x1 + x2, x1 ** 2 + x2 ** 2
    check(product_repeated, (X,), [0.0, c + 2 * x1 * a, c + 2 * x2 * a, 0.0], False)
    # (0,1)0 (0,2)1 (1,0)2 (1,2)3 (2,0)4 (2,1)5: x0 x1 (0 + 2) + x0 x2 (1 + 4) + x1 x2 (3 + 5)
    check(counted_permutations, (X,),
          [2 * x1 + 5 * x2, 2 * x0 + 8 * x2, 5 * x0 + 8 * x1, 0.0], False)


def test_combinations_source_is_index_loops():
    src = srcgrad.grad(pairs, jit=False).source
    assert "for i in range(_t1):" in src and "for j in range(_t2, _t1):" in src, src


def combinations_of_unknown_r(x, r):
    s = 0.0
    for c in combinations(x, r):
        s = s + c[0]
    return s


def zipped_combinations(x):
    s = 0.0
    for (a, b), c in zip(combinations(x, 2), x, strict=False):
        s = s + a * b * c
    return s


@pytest.mark.parametrize("fun, construct, line", [
    (combinations_of_unknown_r, "itertools.combinations(...) is differentiated with r an "
                                "int literal", "for c in combinations(x, r)"),
    (zipped_combinations, "zip(...) of itertools.combinations, product or permutations",
     "zip(combinations(x, 2), x, strict"),
])
def test_itertools_refused(fun, construct, line):
    args = (X, 2) if fun is combinations_of_unknown_r else (X,)
    refused(fun, args, construct, line)


# ---- sorted of a list of arrays by a key ----


def sorted_rows(x):
    parts = [x[0:2], x[2:4], x[1:3]]
    s = sorted(parts, key=lambda v: v[0])
    return np.sum(s[0] * s[1])


def norm2(v):
    return np.sum(v * v)


def sorted_rows_reversed(x):
    s = sorted([x[0:2] * 2.0, x[2:4], np.sin(x[1:3])], key=norm2, reverse=True)
    return np.sum(s[0] * s[1] + s[2] ** 2)


def sorted_rows_tied(x):
    s = sorted([x[0:2], x[2:4] * 0.0 + x[0]], key=lambda v: v[0])   # equal keys
    return np.sum(s[0] * 2.0 + s[1] * 3.0)


def test_sorted_arrays_by_a_key_by_hand(jit):
    x0, x1, x2, x3 = X
    # keys x0 = 0.3, x2 = 1.2, x1 = -0.5: s = [x[1:3], x[0:2], x[2:4]]; x1 x0 + x2 x1
    check(sorted_rows, (X,), [x1, x0 + x2, x1, 0.0], jit)


def test_sorted_arrays_forms_by_hand():
    x0, x1, x2, x3 = X
    # |2 x[0:2]|^2 = 1.36, |x[2:4]|^2 = 1.93, |sin x[1:3]|^2 = 1.10: s = [x[2:4], 2 x[0:2],
    # sin x[1:3]]: 2 (x2 x0 + x3 x1) + sin^2 x1 + sin^2 x2
    assert norm2(X[2:4]) > norm2(2 * X[0:2]) > norm2(np.sin(X[1:3]))
    check(sorted_rows_reversed, (X,), [2 * x2, 2 * x3 + np.sin(2 * x1),
                                       2 * x0 + np.sin(2 * x2), 2 * x1], False)
    # equal keys keep their order: 2 (x0 + x1) + 3 (2 x0)
    check(sorted_rows_tied, (X,), [8.0, 2.0, 0.0, 0.0], False)


def sorted_appended_rows(x):
    parts = []
    for i in range(3):
        parts.append(x[i:i + 2] * 1.0)
    s = sorted(parts, key=lambda v: v[1])
    return np.sum(s[0] * s[1]) + np.sum(np.array(s)[2])


def sorted_array_by_magnitude(x):
    s = sorted(x, key=abs, reverse=True)
    return s[0] * 3.0 + s[-1]


def test_sorted_list_of_unknown_length_by_hand(jit):
    x0, x1, x2, x3 = X
    # keys -0.5, 1.2, 0.7: s = [x[0:2], x[2:4], x[1:3]]; x0 x2 + x1 x3 + x1 + x2
    check(sorted_appended_rows, (X,), [x2, x3 + 1, x0 + 1, x1], jit)


def test_sorted_array_by_a_key_by_hand():
    # |x| descending: x2 = 1.2 first, x0 = 0.3 last
    check(sorted_array_by_magnitude, (X,), [1.0, 0.0, 3.0, 0.0], False)


# ---- starred unpacking of an array (its length known only when the function runs) ----


def first_and_rest_of_an_array(x):
    a, *rest = x
    return a * np.sum(np.array(rest))


def init_and_last(x):
    *init, last = x * 2.0
    return sum(init) * last


def ends_and_middle(x):
    a, *middle, b = x
    return a * b + middle[0] * len(middle) + middle[-1]


def first_row_and_others(x):
    first, *others = np.reshape(x, (2, 2))
    return np.sum(first * others[0])


def too_short(x):
    a, b, *c = x[:1]
    return a * b


def test_starred_array_by_hand(jit):
    x0, x1, x2, x3 = X
    # x0 (x1 + x2 + x3)
    check(first_and_rest_of_an_array, (X,), [x1 + x2 + x3, x0, x0, x0], jit)


def test_starred_array_forms_by_hand():
    x0, x1, x2, x3 = X
    # 4 (x0 + x1 + x2) x3
    s = x0 + x1 + x2
    check(init_and_last, (X,), [4 * x3, 4 * x3, 4 * x3, 4 * s], False)
    # x0 x3 + 2 x1 + x2
    check(ends_and_middle, (X,), [x3, 2.0, 1.0, x0], False)
    # x0 x2 + x1 x3
    check(first_row_and_others, (X,), [x2, x3, x0, x1], False)


def test_starred_array_too_short():
    with pytest.raises(ValueError, match="not enough values to unpack"):
        srcgrad.grad(too_short, jit=False)(X)


# ---- a local name bound to a function ----


def chosen_function(x):
    f = np.sin if x[0] > 0 else np.cos
    return np.sum(f(x))


def aliased_function(x):
    f = np.sin
    return np.sum(f(x) * 2.0)


def looped_functions(x):
    fs = [np.sin, np.cos, np.tanh]
    s = 0.0
    for f in fs:
        s = s + np.sum(f(x) * x)
    return s


def chosen_nested_def(x):
    def square(v):
        return v * v

    def cube(v):
        return v * v * v
    h = square if x[1] > 0 else cube
    return np.sum(h(x))


def counted_functions(x):
    fs = (np.sin, np.cos)
    s = 0.0
    for k, f in enumerate(fs):
        s = s + (k + 1.0) * np.sum(f(x))
    return s


def test_chosen_function_by_hand(jit):
    # x0 > 0: sum(sin x); x0 < 0: sum(cos x)
    check(chosen_function, (X,), np.cos(X), jit)
    check(chosen_function, (-X,), np.sin(X), jit)


def test_function_values_by_hand():
    check(aliased_function, (X,), 2 * np.cos(X), False)
    # sum(x (sin x + cos x + tanh x))
    want = np.sin(X) + np.cos(X) + np.tanh(X) + X * (np.cos(X) - np.sin(X) +
                                                     1 - np.tanh(X) ** 2)
    check(looped_functions, (X,), want, False)
    check(counted_functions, (X,), np.cos(X) - 2 * np.sin(X), False)
    check(chosen_nested_def, (X,), 3 * X ** 2, False)    # x1 < 0: cube
    check(chosen_nested_def, (-X,), -2 * X, False)       # square


def test_chosen_function_source_is_an_if():
    src = srcgrad.grad(chosen_function, jit=False).source
    assert "f_test = _t1 > 0" in src and "if f_test:" in src, src


def apply(f, x):
    return np.sum(f(x))


def chosen_passed_on(x):
    f = np.sin if x[0] > 0 else np.cos
    return apply(f, x)


def functions_with_break(x):
    s = 0.0
    for f in [np.sin, np.cos]:
        s = s + np.sum(f(x))
        if s > 1.0:
            break
    return s


@pytest.mark.parametrize("fun, construct, line", [
    (chosen_passed_on, "a name bound to a choice between functions (or to a list of them) "
                       "can only be called here", "apply(f, x)"),
    (functions_with_break, "a loop over functions is differentiated as one copy of its "
                           "body per function", "for f in [np.sin, np.cos]"),
])
def test_function_values_refused(fun, construct, line):
    refused(fun, (X,), construct, line)


def combinations_written_into(x):
    y = x * 1.0
    s = 0.0
    for a, b in combinations(y[:3], 2):
        s = s + a * b
        y[0] = 2.0 * y[0]   # (itertools took y's items before the loop)
    return s


def combinations_of_a_view_written_into(x):
    y = x * 1.0
    t = y[1:]
    s = 0.0
    for a, b in combinations(t, 2):
        y[2] = y[2] + 1.0   # (t's items taken before the loop: a write through y, unseen)
        s = s + a * b
    return s


def combinations_written_through_another_name(x):
    y = x * 1.0
    w = y
    s = 0.0
    for a, b in combinations(y, 2):
        w[1] = w[1] + 1.0
        s = s + a * b
    return s


def combinations_writing_elsewhere(x):
    out = np.zeros(6)
    k = 0
    for a, b in combinations(x, 2):
        out[k] = a * b
        k += 1
    return np.sum(out ** 2)


@pytest.mark.parametrize("fun, name, line", [
    (combinations_written_into, "y", "combinations(y[:3], 2)"),
    (combinations_of_a_view_written_into, "y", "combinations(t, 2)"),
    (combinations_written_through_another_name, "w", "combinations(y, 2)")],
    ids=["itself", "view", "other-name"])
def test_itertools_over_what_the_loop_writes_refused(fun, name, line):
    # a view of y indexed in the loop would see the write (the second gave 1.29, Python
    # -0.11: a silently wrong value and gradient)
    refused(fun, (X,), f"this loop writes into {name!r}, which shares the array whose "
            f"items itertools.combinations takes before it starts", line)


def test_itertools_loop_writing_another_array(jit):
    # out = the products x_i x_j (i < j); d/dx_k sum(out^2) = 2 x_k sum_(j != k) x_j^2
    g = srcgrad.grad(combinations_writing_elsewhere, jit=jit)(X)
    np.testing.assert_allclose(g, 2.0 * X * (np.sum(X ** 2) - X ** 2))


# ---- all of them in a helper the differentiated function calls ----


def helper_of_every_form(v):
    s = reduce(lambda a, b: a * b + 1.0, v)
    for a, b in combinations(v, 2):
        s = s + a * b
    f = np.sin if v[0] > 0 else np.cos
    first, *rest = v
    return s + np.sum(f(v)) + first * sum(rest)


def calls_the_helper(x):
    return helper_of_every_form(x * 2.0)


def test_forms_in_a_helper():
    dx = srcgrad.grad(calls_the_helper, jit=False)(X)
    assert_grad(calls_the_helper, (dx,), (X,), [0])
    _, tangent = srcgrad.jvp(calls_the_helper, jit=False)(X, T)
    assert tangent == pytest.approx(slope(calls_the_helper, (X,), (T,)), rel=1e-6)
