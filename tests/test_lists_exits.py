"""Lists appended to in a loop that leaves early (`break`, `continue`, `return`), and read
after it by `np.stack(L, axis=k)` or `np.concatenate(L, axis=k)` (`passes/lists.py`, with
`stacked` and `joined` in `runtime/lists.py`): against central differences and values by
hand, compiled and as Python."""

import numpy as np
import pytest
from fd import assert_grad, slope

import srcgrad
from srcgrad import MissingRule

X = np.array([0.3, -1.2, 0.7, 2.0, -0.4])


def until_large(x):
    parts = []
    for i in range(x.shape[0]):
        if x[i] > 1.5:
            break
        parts.append(x[i] * x)
    return np.sum(np.stack(parts) ** 2)


def nonnegatives(x):
    parts = []
    for i in range(x.shape[0]):
        if x[i] < 0.0:
            continue
        parts.append(np.sin(x[i]) * x[0])
    return sum(parts)


def rows_or_early(x, w):
    rows = []
    for i in range(x.shape[0]):
        if x[i] > 5.0:
            return np.sum(w) * x[i]
        rows.append(x[i] * w)
    return np.sum(np.stack(rows, axis=1) * w[:, None])


def test_break(jit):
    g = srcgrad.grad(until_large, jit=jit)(X)
    # by hand: rows x_i * x for i < 3 (x_3 > 1.5 breaks): f = P * S, P = sum_{i<3} x_i^2,
    # S = sum x^2; df/dx_j = 2 x_j S [j < 3] + 2 x_j P
    first = np.arange(5) < 3
    want = 2 * X * np.sum(X ** 2) * first + 2 * X * np.sum(X[:3] ** 2)
    np.testing.assert_allclose(g, want)
    assert_grad(until_large, (g,), (X,), (0,))


def test_continue(jit):
    g = srcgrad.grad(nonnegatives, jit=jit)(X)
    # by hand: f = x_0 sum_{x_i >= 0} sin(x_i)
    kept = X >= 0.0
    want = X[0] * np.cos(X) * kept
    want[0] += np.sum(np.sin(X[kept]))
    np.testing.assert_allclose(g, want)
    assert_grad(nonnegatives, (g,), (X,), (0,))


@pytest.mark.parametrize("x", [X, np.array([0.3, 7.0, -1.0])], ids=["through", "returns"])
def test_return_and_stack_along_axis_1(jit, x):
    w = np.array([0.5, -2.0])
    dx, dw = srcgrad.grad(rows_or_early, wrt=(0, 1), jit=jit)(x, w)
    if x[1] > 5.0:   # by hand: returns at i = 1, f = sum(w) x_1
        np.testing.assert_allclose(dx, [0.0, np.sum(w), 0.0])
        np.testing.assert_allclose(dw, [x[1], x[1]])
    else:            # by hand: f = sum_ij x_i w_j^2
        np.testing.assert_allclose(dx, np.full(5, np.sum(w ** 2)))
        np.testing.assert_allclose(dw, 2 * w * np.sum(x))
    assert_grad(rows_or_early, (dx, dw), (x, w), (0, 1))


A = np.array([[1.0, -2.0], [0.5, 3.0]])
W = np.arange(24.0).reshape(2, 12) / 7.0 - 1.0


def side_by_side(x, n):
    blocks = []
    for i in range(n):
        blocks.append(np.sin(x[i]) * A)
    c = np.concatenate(blocks, axis=1)
    s = np.stack(blocks, axis=-1)
    return np.sum(c * W[:, :2 * n]) + np.sum(s[0] * W[:, :n]) + np.sum(np.concatenate(blocks))


def test_concatenate_and_stack_along_an_axis(jit):
    x = np.array([0.2, -0.6, 1.1, 0.9, 0.4, -0.3])
    g = srcgrad.grad(side_by_side, jit=jit)(x, 4)
    # by hand: block i is sin(x_i) A, at columns 2i, 2i + 1 of c, at [:, :, i] of s (so
    # s[0][:, i] is row 0 of A), at rows 2i, 2i + 1 of the concatenation along axis 0
    want = np.array([np.cos(x[i]) * (np.sum(A * W[:, 2 * i:2 * i + 2]) + np.sum(A[0] * W[:, i])
                                     + np.sum(A)) for i in range(4)] + [0.0, 0.0])
    np.testing.assert_allclose(g, want)
    assert_grad(lambda x: side_by_side(x, 4), (g,), (x,), (0,))


def test_forward_mode_of_a_list_joined_along_an_axis():
    x, t = np.array([0.2, -0.6, 1.1, 0.9]), np.array([1.0, -0.5, 0.25, 2.0])
    value, tangent = srcgrad.jvp(side_by_side, jit=False)(x, 3, t)
    assert value == pytest.approx(side_by_side(x, 3))
    assert tangent == pytest.approx(slope(lambda x: side_by_side(x, 3), [x], [t]))


def read_by_the_return(x):
    parts = []
    for i in range(x.shape[0]):
        if x[i] > 1.5:
            return np.sum(np.stack(parts) ** 2)
        parts.append(x[i] * x)
    return 0.0


def test_a_list_read_by_a_return_inside_its_loop_is_refused():
    # the list is read inside the loop that fills it: refused at the append, saying so
    with pytest.raises(MissingRule, match=r"test_lists_exits.py:\d+: parts.append\(...\) "
                                          r"is called for its effect.*not read in the loop"):
        srcgrad.grad(read_by_the_return, jit=False)(X)
