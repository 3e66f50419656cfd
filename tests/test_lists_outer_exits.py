"""Lists built in a loop inside a loop that leaves an iteration early: a `continue`,
`break` or `return` of the outer loop before `L = []`, between it and the loop that
appends, or after that loop (`passes/lists.py`: the list is still an array the inner loop
fills). Against central differences and values by hand, compiled and as Python."""

import numpy as np
import pytest
from fd import assert_grad, slope

import srcgrad
from srcgrad import MissingRule

X = np.array([0.3, 0.7, 0.2])
# e = 0..4 keeps the e with x[e % 3] <= 0.5: for X, e = 0, 2, 3 (e = 1, 4 read x_1 = 0.7)
KEPT = (0, 2, 3)


def continue_before(x, n):
    total = 0.0
    for e in range(n):
        if x[e % 3] > 0.5:
            continue
        parts = []
        for i in range(3):
            parts.append(x[i] * e)
        total = total + np.sum(np.stack(parts) ** 2)
    return total


def continue_between(x, n):
    total = 0.0
    for e in range(n):
        parts = []
        if x[e % 3] > 0.5:
            continue
        for i in range(3):
            parts.append(x[i] * e)
        total = total + np.sum(np.stack(parts) ** 2)
    return total


def continue_after(x, n):
    total = 0.0
    for e in range(n):
        parts = []
        for i in range(3):
            parts.append(np.sin(x[i]) * e)
        if x[e % 3] > 0.5:
            continue
        total = total + np.sum(np.array(parts) ** 2)
    return total


@pytest.mark.parametrize("fun", [continue_before, continue_between], ids=["before", "between"])
def test_continue_before_the_list(jit, fun):
    g = srcgrad.grad(fun, jit=jit)(X, 5)
    # by hand: f = sum_{e in KEPT} e^2 sum(x^2) = (0 + 4 + 9) sum(x^2) = 13 sum(x^2),
    # df/dx = 26 x = [7.8, 18.2, 5.2]
    assert sum(e * e for e in KEPT) == 13
    np.testing.assert_allclose(g, [7.8, 18.2, 5.2])
    assert_grad(lambda x: fun(x, 5), (g,), (X,), (0,))


def test_continue_after_the_loop_that_appends(jit):
    g = srcgrad.grad(continue_after, jit=jit)(X, 5)
    # by hand: every iteration builds the list; the kept ones add e^2 sum(sin(x)^2):
    # f = 13 sum(sin(x)^2), df/dx = 26 sin(x) cos(x) = 13 sin(2x)
    np.testing.assert_allclose(g, 13 * np.sin(2 * X))
    assert_grad(lambda x: continue_after(x, 5), (g,), (X,), (0,))


def first_iterations_continue(x, n):
    total = 0.0
    for e in range(n):
        if e % 2 == 0:
            continue
        parts = []
        for i in range(3):
            parts.append(x[:2] * x[i])
        total = total + np.sum(np.stack(parts, axis=1) * x[0])
    return total


def test_the_first_iteration_continues(jit):
    # the adjoint's first (the forward's last) and the forward's first iteration bind no list
    g = srcgrad.grad(first_iterations_continue, jit=jit)(X, 5)
    # by hand: e = 1, 3 each add x0 (x0 + x1) S, S = sum(x) = 1.2, x0 + x1 = 1:
    # f = 2 x0 (x0 + x1) S; df/dx0 = 2 ((x0 + x1) S + x0 S + x0 (x0 + x1)) = 3.72,
    # df/dx1 = 2 (x0 S + x0 (x0 + x1)) = 1.32, df/dx2 = 2 x0 (x0 + x1) = 0.6
    np.testing.assert_allclose(g, [3.72, 1.32, 0.6])
    assert_grad(lambda x: first_iterations_continue(x, 5), (g,), (X,), (0,))


def break_before(x, n):
    total = 0.0
    for e in range(n):
        if total > 3.0:
            break
        parts = []
        for i in range(3):
            parts.append(x[i] * (e + 1.0))
        total = total + sum(parts) ** 2
    return total


def test_break_before_the_list(jit):
    g = srcgrad.grad(break_before, jit=jit)(X, 5)
    # by hand: iteration e adds (e + 1)^2 S^2, S = sum(x) = 1.2: 1.44, then 5.76 (7.2 > 3:
    # e = 2 breaks), f = 5 S^2, df/dx_j = 10 S = 12
    np.testing.assert_allclose(g, [12.0, 12.0, 12.0])
    assert_grad(lambda x: break_before(x, 5), (g,), (X,), (0,))


def break_after(x, n):
    total = 0.0
    for e in range(n):
        parts = []
        for i in range(e + 1):
            parts.append(x * x[i % 3])
        total = total + np.sum(np.stack(parts)[-1])
        if total > 2.0:
            break
    return total


def test_break_after_the_read_with_lists_of_each_length(jit):
    g = srcgrad.grad(break_after, jit=jit)(X, 8)
    # by hand: the last row of iteration e is x x[e % 3], its sum S x[e % 3] (S = 1.2):
    # 0.36, 0.84, 0.24, 0.36, 0.84 -> the total passes 2 at e = 4, which breaks:
    # f = S (2 x0 + 2 x1 + x2); df/dx_j = (2 x0 + 2 x1 + x2) + S c_j, c = (2, 2, 1)
    np.testing.assert_allclose(g, [2.2 + 2.4, 2.2 + 2.4, 2.2 + 1.2])
    assert_grad(lambda x: break_after(x, 8), (g,), (X,), (0,))


def returns_later(x, n):
    for _i in range(n):
        if x[0] > 0.0:
            return np.sum(x) * 3.0
        parts = []
        for _k in range(n):
            parts.append(x)
        x = np.stack(parts)[-1] * -2.0
    return np.sum(x)


@pytest.mark.parametrize(("x0", "want"), [(0.5, [3.0, 3.0]), (-0.5, [-6.0, -6.0])],
                         ids=["at-once", "in-the-second-iteration"])
def test_return_before_the_list(jit, x0, want):
    x = np.array([x0, 1.0])
    g = srcgrad.grad(returns_later, jit=jit)(x, 3)
    # by hand: x0 > 0 returns 3 sum(x) at once; x0 < 0 makes x = -2 x (x0 > 0 now), then
    # returns 3 sum(-2 x), whose gradient is -6 per item
    np.testing.assert_allclose(g, want)
    assert_grad(lambda x: returns_later(x, 3), (g,), (x,), (0,))


def returns_from_the_loop_that_appends(x, n):
    total = 0.0
    for e in range(n):
        parts = []
        for i in range(3):
            if x[i] * e > 1.0:
                return total * x[i]
            parts.append(x[i] * x[0] * e)
        total = total + np.sum(np.stack(parts) ** 2)
    return total


def test_return_from_the_loop_that_appends_leaves_the_loop_around_it(jit):
    g = srcgrad.grad(returns_from_the_loop_that_appends, jit=jit)(X, 5)
    # by hand: e = 0 adds 0, e = 1 adds x0^2 Q (Q = sum(x^2) = 0.62), e = 2 returns at
    # i = 1 (2 x1 = 1.4 > 1): f = x0^2 x1 Q; df/dx0 = 2 x0 x1 Q + 2 x0^3 x1 = 0.2982,
    # df/dx1 = x0^2 Q + 2 x0^2 x1^2 = 0.144, df/dx2 = 2 x0^2 x1 x2 = 0.0252
    np.testing.assert_allclose(g, [0.2982, 0.144, 0.0252])
    assert_grad(lambda x: returns_from_the_loop_that_appends(x, 5), (g,), (X,), (0,))


def nested(x, n):
    total = 0.0
    for e in range(n):
        if x[e % 3] > 0.5:
            continue
        for j in range(2):
            parts = []
            for i in range(3):
                parts.append(x[i] * (e + j))
            total = total + np.mean(parts) * parts[1]
    return total


def test_nested_in_a_loop_in_the_loop_that_continues(jit):
    g = srcgrad.grad(nested, jit=jit)(X, 5)
    # by hand: mean(parts) parts[1] = (e + j)^2 S x1 / 3, S = 1.2; over e in KEPT and
    # j = 0, 1 the (e + j)^2 add to 1 + 13 + 25 = 39: f = 13 S x1,
    # df/dx = 13 (x1 + S [j == 1]) = [9.1, 24.7, 9.1]
    np.testing.assert_allclose(g, [9.1, 24.7, 9.1])
    assert_grad(lambda x: nested(x, 5), (g,), (X,), (0,))


def breaks_in_a_while(x, n):
    total = 0.0
    for _e in range(n):
        j = 0
        while j < 3:
            j += 1
            if x[j % 3] * j > 1.0:
                break
            parts = []
            for i in range(j):
                parts.append(x[:2] * x[i])
            total = total + np.sum(np.concatenate(parts) ** 2)
    return total


def test_nested_in_a_while_that_breaks(jit):
    x = np.array([0.3, 0.4, 0.7])
    g = srcgrad.grad(breaks_in_a_while, jit=jit)(x, 3)
    # by hand: j = 1 (x1 = 0.4) adds x0^2 (x0^2 + x1^2); j = 2 breaks (2 x2 = 1.4 > 1):
    # f = 3 x0^4 + 3 x0^2 x1^2; df/dx = [12 x0^3 + 6 x0 x1^2, 6 x0^2 x1, 0]
    np.testing.assert_allclose(g, [0.324 + 0.288, 0.216, 0.0], atol=1e-12)
    assert_grad(lambda x: breaks_in_a_while(x, 3), (g,), (x,), (0,))


def test_forward_mode(jit):
    t = np.array([1.0, -0.5, 2.0])
    for fun, n, want in [(continue_before, 5, 9.1), (break_before, 5, 30.0)]:
        # by hand: the gradients above along t: 26 x . t = 26 * 0.35, 12 sum(t) = 12 * 2.5
        value, tangent = srcgrad.jvp(fun, jit=jit)(X, n, t)
        assert value == pytest.approx(fun(X, n))
        assert tangent == pytest.approx(want)
        assert tangent == pytest.approx(slope(lambda x, fun=fun, n=n: fun(x, n), [X], [t]),
                                         rel=1e-6)


def test_hessian_vector_product(jit):
    v = np.array([1.0, -0.5, 0.25])
    h = srcgrad.hvp(continue_before, jit=jit)(X, 5, v)
    # by hand: f = 13 sum(x^2) (the branch is constant near X): H = 26 I, H v = 26 v
    np.testing.assert_allclose(h, 26 * v)
    g = srcgrad.grad(continue_before, jit=False)
    np.testing.assert_allclose(h, (g(X + 1e-6 * v, 5) - g(X - 1e-6 * v, 5)) / 2e-6, rtol=1e-6)


def read_after_the_outer_loop(x, n):
    total = 0.0
    for e in range(n):
        if x[e % 3] > 0.5:
            continue
        parts = []
        for i in range(3):
            parts.append(x[i] * e)
        total = total + np.sum(np.stack(parts))
    return total + np.sum(np.stack(parts))


def test_a_list_read_after_the_loop_around_it_is_refused_at_the_append():
    # the last list built, read after the outer loop: not followed, refused, never wrong
    with pytest.raises(MissingRule, match=r"test_lists_outer_exits.py:\d+: parts.append\(...\) "
                                          r"is called for its effect"):
        srcgrad.grad(read_after_the_outer_loop, jit=False)(X, 5)


def built_in_a_branch(x, n):
    parts = []
    if x[0] > 0.0:
        for i in range(n):
            parts.append(x * i)
        return np.sum(np.stack(parts) ** 2)
    return np.sum(x)


@pytest.mark.parametrize(("x0", "want"), [(0.5, [5.0, 10.0]), (-0.5, [1.0, 1.0])],
                         ids=["built", "not-built"])
def test_a_list_bound_before_the_branch_that_builds_it(jit, x0, want):
    # `parts = []` moves into the branch that names it (as after a `continue` above)
    x = np.array([x0, 1.0])
    g = srcgrad.grad(built_in_a_branch, jit=jit)(x, 3)
    # by hand: x0 > 0 gives sum_i i^2 sum(x^2) = 5 sum(x^2), df/dx = 10 x; else sum(x)
    np.testing.assert_allclose(g, want)
    assert_grad(lambda x: built_in_a_branch(x, 3), (g,), (x,), (0,))
