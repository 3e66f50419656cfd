"""np.fill_diagonal and np.copyto, called for their effect: normalize writes them as writes
(`a[...] = filled_diagonal(a, v)`, `dst[...] = copied_into(dst, src)`), which the passes
follow as any write (a name sharing the array sees the change; an argument is copied on
entry). Gradients by hand and against central differences; forward mode and hvp."""

import numpy as np
import pytest
from fd import assert_grad, slope

import srcgrad
from srcgrad.rules.copies import copied_into
from srcgrad.rules.diagonals import filled_diagonal

X = np.array([0.3, -0.5, 0.7])
T = np.array([1.0, 0.5, -1.0])


def _unit_diagonal(x):
    a = np.outer(x, x)
    np.fill_diagonal(a, 1.0)
    return np.sum(a ** 2)


def _fills(x):
    a = np.outer(x, x) + 1.0
    np.fill_diagonal(a, x[:2] * 3.0)        # an array shorter than the diagonal: repeated
    b = np.zeros((4, 2))
    np.fill_diagonal(b, x[1:], wrap=True)   # a tall matrix, wrapped
    c = np.outer(x, x)
    d = c                                   # shares c's array: sees the fill
    np.fill_diagonal(c[:2, :2], 0.0)        # a block of it
    return np.sum(np.sin(a)) + np.sum(b ** 2 * np.arange(8.0).reshape(4, 2)) + np.sum(d ** 3)


def _nugget(x):
    k = np.exp(-np.subtract.outer(x, x) ** 2)
    np.fill_diagonal(k, k.diagonal() + 0.1)
    return np.sum(np.linalg.solve(k, x))


def _copies(x):
    y = np.zeros(3)
    np.copyto(y, x * 2.0)
    a = np.outer(x, x)
    np.copyto(a, x, where=a > 0.05)         # broadcast, where a mask holds
    b = np.ones((2, 3))
    np.copyto(b, np.sin(x))
    np.copyto(b[1], 0.5)
    return np.sum(y ** 2) + np.sum(a ** 2) + np.sum(b ** 3)


def _fills_an_argument(m):
    np.fill_diagonal(m, 2.0)
    return np.sum(m ** 3)


CASES = [   # (the rule sweep's: test_rules.py checks that every rule has a case)
    ("fill_diagonal", (filled_diagonal,), _fills, (X,), [0], True),
    ("copyto", (copied_into,), _copies, (X,), [0], True),
]


def test_fill_diagonal_by_hand(jit):
    # sum over i != j of x_i^2 x_j^2, plus 3: d/dx_k = 4 x_k sum_{j != k} x_j^2
    got = srcgrad.grad(_unit_diagonal, jit=jit)(X)
    np.testing.assert_allclose(got, 4 * X * (np.sum(X ** 2) - X ** 2))


@pytest.mark.parametrize("fun", [_fills, _nugget, _copies])
def test_fills_and_copies_against_differences(jit, fun):
    g = srcgrad.grad(fun, jit=jit)(X)
    assert_grad(fun, [g], (X,), [0])
    _, dvalue = srcgrad.jvp(fun, jit=jit)(X, T)
    assert dvalue == pytest.approx(slope(fun, (X,), (T,)), rel=1e-6)
    flat = srcgrad.grad(fun, jit=False)
    h = 1e-6   # (hvp as Python: compiling it twice the code of the gradient costs seconds)
    np.testing.assert_allclose(srcgrad.hvp(fun, jit=False)(X, T),
                               (flat(X + h * T) - flat(X - h * T)) / (2 * h), rtol=1e-5,
                               atol=1e-7)


def test_copyto_by_hand(jit):
    def copied(x):
        y = np.zeros(3)
        np.copyto(y, x * 2.0)
        return np.sum(y ** 2)
    np.testing.assert_allclose(srcgrad.grad(copied, jit=jit)(X), 8 * X)


def test_a_fill_of_an_argument_leaves_the_callers_array(jit):
    m = np.outer(X, X) + 1.0
    before = m.copy()
    got = srcgrad.grad(_fills_an_argument, jit=jit)(m)
    np.testing.assert_array_equal(m, before)
    hand = 3 * m ** 2
    np.fill_diagonal(hand, 0.0)   # the diagonal is overwritten: no gradient reaches it
    np.testing.assert_allclose(got, hand)


def test_shuffle_is_refused_at_its_line():
    # (np.put, np.place, np.put_along_axis: tests/test_rules_puts.py)
    def shuffled(x):
        y = x.copy()
        np.random.shuffle(y)
        return np.sum(y ** 2)
    with pytest.raises(srcgrad.UnsupportedSyntax,
                       match=r"test_rules_fills.py:\d+: shuffle\(\)"):
        srcgrad.grad(shuffled, jit=False)(X)
