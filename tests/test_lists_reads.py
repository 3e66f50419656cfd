"""A list appended to in a loop, read after it the ways everyday Python reads a list:
iterated (`for p in parts`, `enumerate`, `zip`, `reversed`, a generator over it), indexed
in a later loop, sliced (`parts[1:]`); and `reversed` of any sequence in a `for`
(`passes/lists.py`, `passes/normalize.py`). Against central differences and values by
hand, compiled and as Python."""

import numpy as np
import pytest
from fd import assert_grad

import srcgrad
from srcgrad import MissingRule

X = np.array([0.3, -1.2, 0.7, 2.0, -0.4])


def iterated(x, n):
    parts = []
    scales = []
    for i in range(n):
        parts.append(x * x[i])
        scales.append(np.sin(x[i]))
    s = 0.0
    for k, p in enumerate(parts):
        s = s + k * np.sum(p)
    for p, c in zip(parts, scales):  # noqa: B905 (numba's zip)
        s = s + np.sum(p) * c
    for k in range(len(parts)):
        s = s + np.sum(parts[k] ** 2)
    return s + sum(np.sum(p) for p in parts[1:])


def test_a_list_iterated_indexed_and_sliced_after_its_loop(jit):
    n = 3
    g = srcgrad.grad(iterated, jit=jit)(X, n)
    # by hand, T = sum(x), Q = sum(x^2), i < n: f = T sum_i i x_i + T sum_i x_i sin(x_i)
    #   + Q sum_i x_i^2 + T sum_{0 < i} x_i
    i, T, Q = np.arange(n), np.sum(X), np.sum(X ** 2)
    a = np.sum(i * X[:n]) + np.sum(X[:n] * np.sin(X[:n])) + np.sum(X[1:n])
    want = np.full(5, a) + 2 * X * np.sum(X[:n] ** 2)
    want[:n] += T * (i + np.sin(X[:n]) + X[:n] * np.cos(X[:n]) + (i > 0)) + 2 * X[:n] * Q
    np.testing.assert_allclose(g, want)
    assert_grad(lambda x: iterated(x, n), (g,), (X,), (0,))


def backwards(x, n):
    parts = []
    for i in range(n):
        parts.append(x[i] ** 2)
    s = 0.0
    for p in reversed(parts):
        s = s * 0.5 + p
    for k, v in enumerate(reversed(x)):
        s = s + k * v
    for u, v in zip(reversed(x), x):  # noqa: B905 (numba's zip)
        s = s + u * v
    return s


def test_reversed(jit):
    n = 3
    g = srcgrad.grad(backwards, jit=jit)(X, n)
    # by hand: the first loop gives sum_i 0.5^i x_i^2 (x_0 last, weight 1); the second
    # sum_k k x_{4-k}; the third sum_k x_{4-k} x_k, whose derivative is 2 x_{4-j}
    want = 2 * X[::-1] + np.arange(5)[::-1].astype(float)
    want[:n] += 2 * X[:n] * 0.5 ** np.arange(n)
    np.testing.assert_allclose(g, want)
    assert_grad(lambda x: backwards(x, n), (g,), (X,), (0,))


def sliced_then_appended(x, n):
    parts = []
    for i in range(n):
        parts.append(x * x[i])
    rest = parts[1:]
    rest.append(x)
    return np.sum(np.stack(rest))


def test_a_slice_changed_as_a_list_is_refused():
    # rest would be an array, which has no append: the list stays a list, refused
    with pytest.raises(MissingRule, match=r"test_lists_reads.py:\d+: parts.append"):
        srcgrad.grad(sliced_then_appended, jit=False)(X, 3)


def over_ranges(x):
    s = 0.0
    for k in reversed(range(1, x.shape[0], 2)):
        s = s * 0.5 + x[k] ** 2
    for j, k in enumerate(range(x.shape[0] - 1, -1, -2)):
        s = s + j * x[k]
    return s


def test_reversed_and_enumerated_ranges(jit):
    # (compiled: numba indexes no range, so item k of range(a, b, c) is a + k * c)
    g = srcgrad.grad(over_ranges, jit=jit)(X)
    # by hand: s = x_3^2 / 2 + x_1^2 (k = 3 first, then 1) + 0 x_4 + 1 x_2 + 2 x_0
    np.testing.assert_allclose(g, [2.0, 2 * X[1], 1.0, X[3], 0.0])
    assert_grad(over_ranges, (g,), (X,), (0,))


def joined_displays(x):
    a = [x[0], x[1]]
    c = a + [x[2] ** 2]
    u = x[0]
    b = (u, x[1])
    u = u * 3.0
    d = c + c
    e = b + (u,)
    return c[0] * c[1] * c[2] + d[4] * d[0] + e[0] * e[2]


def joined_after_a_loop_rebinds_an_item(x):
    u = x[0]
    a = [u, x[1]]
    for _ in range(2):
        u = u * 2.0
    c = a + [u]
    return c[0] * c[1] * c[2]


def test_displays_joined_with_plus(jit):
    """`a + b` of two list or tuple displays is the display of their items (it was
    refused as arithmetic): by hand, f = x0 x1 x2^2 + x1 x0 + x0 (3 x0) at (1, 2, 3):
    df/dx0 = x1 x2^2 + x1 + 6 x0 = 26, df/dx1 = x0 x2^2 + x0 = 10, df/dx2 = 2 x0 x1 x2
    = 12."""
    x = np.array([1.0, 2.0, 3.0])
    g = srcgrad.grad(joined_displays, jit=jit)(x)
    np.testing.assert_allclose(g, [26.0, 10.0, 12.0], rtol=1e-12)
    assert_grad(joined_displays, (g,), (x,), [0])
    v, t = srcgrad.jvp(joined_displays, jit=jit)(x, np.array([0.5, -1.0, 2.0]))
    assert t == pytest.approx(g @ [0.5, -1.0, 2.0])


def test_a_join_whose_item_a_loop_rebound(jit):
    # `a` holds x0, but `u` names 4 x0 after the loop: the join is a's items then u's
    # value there, [x0, x1, 4 x0] (it was refused; never the gradient of a[0] as the
    # new u). By hand, f = 4 x0^2 x1 at (1.5, 2): df/dx0 = 8 x0 x1 = 24, df/dx1 = 4 x0^2
    # = 9.
    x = np.array([1.5, 2.0])
    g = srcgrad.grad(joined_after_a_loop_rebinds_an_item, jit=jit)(x)
    np.testing.assert_allclose(g, [24.0, 9.0], rtol=1e-12)
    assert_grad(joined_after_a_loop_rebinds_an_item, (g,), (x,), [0])


# ---- np.stack and np.concatenate of a list appended to in a loop, along an axis (issue 20) ----

AXIS = 1


def stacked_along(x, n):
    parts = []
    for i in range(n):
        parts.append(x * i + np.sin(x))
    w = np.arange(2.0 * n).reshape(2, n)
    return np.sum(np.stack(parts, axis=1) * w) + np.sum(np.stack(parts, AXIS) ** 2) + \
        np.sum(np.concatenate(parts, axis=-1) ** 2)


def stacked_along_a_local(x):
    ax = 1
    parts = []
    for i in range(3):
        parts.append(x * i)
    return np.sum(np.stack(parts, axis=ax) ** 2)


def test_a_list_stacked_along_an_axis_after_its_loop(jit):
    x = np.array([0.5, -2.0])
    n = 3
    # the rows are x*i + sin(x): stacked along axis 1, entry (j, i), weighted by 3j + i
    # (d/dx_j: sum_i (3j + i)(i + cos x_j)); squared, stacked or joined: 2 * 2 * the rows
    rows = [x * i + np.sin(x) for i in range(n)]
    want = sum((3 * np.arange(2) + i) * (i + np.cos(x)) for i in range(n)) + \
        4 * sum(r * (i + np.cos(x)) for i, r in enumerate(rows))
    got = srcgrad.value_and_grad(stacked_along, jit=jit)(x, n)
    assert got[0] == pytest.approx(stacked_along(x, n))
    np.testing.assert_allclose(got[1], want)
    assert_grad(stacked_along, (got[1],), (x, n), [0])


def test_a_list_read_in_a_way_not_followed_names_that_read():
    """A list appended to in a loop whose read after it is not followed (here an axis
    that is a local name) is refused at the append, naming that read and its line."""
    with pytest.raises(MissingRule, match=r"parts is read otherwise at line \d+: return "
                                          r"np.sum\(np.stack\(parts, axis=ax\)"):
        srcgrad.grad(stacked_along_a_local, jit=False)(X)


def two_rows_an_iteration(x, n):
    parts = []
    for i in range(n):
        parts.append(x * i)
        if i % 2 == 1:   # a third row in odd iterations only
            parts.append(x * x)
        parts.append(np.sin(x) + i)
    w = np.arange(len(parts)) + 1.0
    return np.sum(w * np.sum(np.stack(parts) ** 2, axis=1))


def test_several_appends_an_iteration(jit):
    """Rows appended twice (and in a branch, three times) an iteration are stacked in the
    order Python appends them (each row's weight is its place)."""
    x = np.array([0.5, -2.0])
    # rows (weight): 0 (1), sin x (2), x (3), x^2 (4), sin x + 1 (5), 2x (6), sin x + 2 (7)
    want = 2 * (3 * x + 6 * 4 * x) + 4 * 4 * x ** 3 + \
        2 * np.cos(x) * (2 * np.sin(x) + 5 * (np.sin(x) + 1) + 7 * (np.sin(x) + 2))
    got = srcgrad.value_and_grad(two_rows_an_iteration, jit=jit)(x, 3)
    assert got[0] == pytest.approx(two_rows_an_iteration(x, 3))
    np.testing.assert_allclose(got[1], want)
    assert_grad(two_rows_an_iteration, (got[1],), (x, 3), [0])
    np.testing.assert_allclose(srcgrad.jvp(two_rows_an_iteration, jit=jit)(x, 3, np.ones(2))[1],
                               np.sum(want))
