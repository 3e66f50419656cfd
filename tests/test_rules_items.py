"""`x.item()` and `x.item(k)` (srcgrad/rules/items.py): by hand, against central
differences (grad and jvp), compiled and as Python; an integer item read as an index;
a multi-index refused."""

import numpy as np
import pytest
from sweep import check, parametrize

import srcgrad
from srcgrad.rules.items import item


def sine_of_an_item(x):
    return np.sin(x.item(2)) * np.sum(x)


def only_item_squared(x):
    return (x[1:, 1:] * 3.0).item() ** 2


def item_as_an_index(x, idx):
    k = idx.item()
    return x[k] * x.item(0)


def multi_index(x):
    return x.item(1, 1)


X = np.array([[0.5, -1.2], [2.0, 0.3]])

CASES = [
    ("item_k", (item,), sine_of_an_item, (X,), [0], True),
    ("item_only", (item,), only_item_squared, (X,), [0], True),
]


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


def test_by_hand(jit):
    s = np.sum(X)
    want = np.full((2, 2), np.sin(2.0))
    want[1, 0] += np.cos(2.0) * s   # flat entry 2 is x[1, 0]
    np.testing.assert_allclose(srcgrad.grad(sine_of_an_item, jit=jit)(X), want, rtol=1e-12)
    # (3 x11)^2: 18 x11 = 5.4
    np.testing.assert_allclose(srcgrad.grad(only_item_squared, jit=jit)(X),
                               [[0.0, 0.0], [0.0, 5.4]], rtol=1e-12)
    x = np.array([1.5, -2.0, 4.0])
    # x[2] * x[0]
    np.testing.assert_allclose(srcgrad.grad(item_as_an_index, jit=jit)(x, np.array([2])),
                               [4.0, 0.0, 1.5])


@pytest.mark.parametrize("fun", [sine_of_an_item, only_item_squared])
def test_jvp_against_differences(jit, fun):
    v = np.array([[1.0, -0.5], [0.25, 2.0]])
    h = 1e-6
    want = (fun(X + h * v) - fun(X - h * v)) / (2 * h)
    assert srcgrad.jvp(fun, jit=jit)(X, v)[1] == pytest.approx(want, rel=1e-6)


def test_a_multi_index_is_refused():
    with pytest.raises(srcgrad.SrcgradError, match="item_rule takes 1 argument"):
        srcgrad.grad(multi_index, jit=False)(X)
