"""np.broadcast_to's shape given by name: its gradient is summed back to its argument's
shape where the argument is read again (the rule's `unbroadcast` had been dropped as if
the shape were a constant operand: rules/inline.py's `_drop_unbroadcast`)."""

import numpy as np
import pytest
from fd import assert_grad

import srcgrad


def read_again(x, w):
    return np.sum(np.broadcast_to(w, x.shape) * x) + np.sum(w ** 2)


def read_before(x, w):
    return np.sum(w * 2.0) + np.sum(np.broadcast_to(w, shape=np.shape(x)) * x)


@pytest.mark.parametrize("fun", [read_again, read_before])
def test_broadcast_to_summed_back(fun, jit):
    rng = np.random.default_rng(4)
    x, w = rng.uniform(-1.0, 1.0, (3, 4)), rng.uniform(-1.0, 1.0, 4)
    g = srcgrad.grad(fun, wrt=(1,), jit=jit)(x, w)
    assert_grad(fun, g, (x, w), [1])


def test_by_hand():
    # d/dw of sum(broadcast_to(w, (2, 2)) * x) + sum(w^2) = the columns' sums of x + 2w
    x, w = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([0.5, -1.0])
    np.testing.assert_allclose(srcgrad.grad(read_again, wrt=1, jit=False)(x, w),
                               [4.0 + 1.0, 6.0 - 2.0])


def to_a_constant_shape(x0, n):
    t = np.broadcast_to(x0, 3) * 1.0   # (fuzz seed 10850151: a number broadcast to 3 entries)
    for i in range(n):
        if i == 1:
            return np.sum(t ** 2)
    return x0 ** 2


@pytest.mark.parametrize("n", [1, 2])
def test_broadcast_to_a_constant_shape(n, jit):
    # by hand: n = 1 gives x0^2 (2 x0); n = 2 gives 3 x0^2 (6 x0)
    got = srcgrad.grad(to_a_constant_shape, jit=jit)(0.672, n)
    assert got == pytest.approx((2.0 if n == 1 else 6.0) * 0.672, rel=1e-12)
