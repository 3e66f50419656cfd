"""End-to-end: the corpus of plain functions, against hand-derived values and central
finite differences, compiled with numba and as plain Python."""

import functions as F
import numpy as np
import pytest
from fd import assert_grad

import srcgrad

R = np.random.default_rng(7)


def test_hand_values(jit):
    g = srcgrad.grad(F.poly, wrt=("x", "y"), jit=jit)
    assert g(5.0, 3.0) == (13.0, 5.0)   # (2x + y, x)


def test_sum_squared_is_8_at_ones(jit):
    g = srcgrad.grad(F.sum_squared, jit=jit)
    np.testing.assert_array_equal(g(np.ones((2, 2))), np.full((2, 2), 8.0))


def test_gradient_descent_step(jit):
    g = srcgrad.grad(F.poly, wrt=(0, 1), jit=jit)
    x, y = 5.0, 3.0
    dx, dy = g(x, y)
    x, y = x - 0.1 * dx, y - 0.1 * dy
    assert (x, y) == pytest.approx((3.7, 2.5))


def test_value_and_grad(jit):
    value, (dx, dy) = srcgrad.value_and_grad(F.poly, wrt=(0, 1), jit=jit)(5.0, 3.0)
    assert value == 43.0 and (dx, dy) == (13.0, 5.0)


def mlp_args():
    return (R.normal(size=(6, 8)) * 0.5, R.normal(size=8), R.normal(size=(8, 3)) * 0.5,
            R.normal(size=3), R.normal(size=(5, 6)), R.normal(size=(5, 3)))


def softmax_args():
    Y = np.eye(4)[R.integers(0, 4, size=7)]
    return R.normal(size=(5, 4)), R.normal(size=(7, 5)) * 3.0, Y


CORPUS = [
    (F.mlp_loss, mlp_args(), [0, 1, 2, 3]),
    (F.softmax_xent, softmax_args(), [0, 1]),
    (F.reassign, (0.7, -1.3), [0, 1]),
    (F.augmented, (R.normal(size=4),), [0]),
    (F.tuples, (0.4, 1.7), [0, 1]),
    (F.chained, (2.5,), [0]),
    (F.method_calls, (R.normal(size=(3, 4)), R.normal(size=(4, 2))), [0, 1]),
    (F.attributes, (R.normal(size=(4, 3)),), [0]),
    (F.math_module, (0.8,), [0]),
    (F.builtins_, (0.8, -0.3), [0, 1]),
    (F.integer_mix, (1.7, 5), [0]),
    (F.globals_and_closures, (1.3,), [0]),
    (F.user_calls, (R.normal(size=3), 0.9), [0, 1]),
    (F.subscripts, (R.normal(size=(3, 4)),), [0]),
    (F.nondifferentiable_paths, (R.normal(size=5),), [0]),
    (F.unused_argument, (1.0, 2.0), [0, 1]),
    (F.constant_result, (1.5,), [0]),
    (F.keyword_arguments, (R.normal(size=(3, 4)),), [0]),
]


@pytest.mark.parametrize("fun,args,positions", CORPUS, ids=[c[0].__name__ for c in CORPUS])
def test_corpus(fun, args, positions, jit):
    grads = srcgrad.grad(fun, wrt=tuple(positions), jit=jit)(*args)
    assert_grad(fun, grads, args, positions)


def test_float_gradient_for_float_input_with_integer_arithmetic(jit):
    dx = srcgrad.grad(F.integer_mix, jit=jit)(1.5, 4)
    assert isinstance(dx, float) and dx == pytest.approx(2.0 + 2 * 1.5 * 1)


def test_zero_gradient_has_input_shape(jit):
    dx, dy = srcgrad.grad(F.unused_argument, wrt=(0, 1), jit=jit)(np.ones(3), np.ones((2, 2)))
    np.testing.assert_array_equal(dx, np.full(3, 2.0))
    np.testing.assert_array_equal(dy, np.zeros((2, 2)))


def test_broadcast_gradient_has_input_shape(jit):
    def f(a, b):
        return np.sum(a * b)
    da, db = srcgrad.grad(f, wrt=(0, 1), jit=jit)(np.ones((3, 1)), np.arange(4.0))
    np.testing.assert_array_equal(da, np.full((3, 1), 6.0))
    np.testing.assert_array_equal(db, np.full(4, 3.0))


def negative_base(x):
    return (-2.0) ** 2 * x


def test_negative_constant_base_keeps_its_parentheses(jit):
    value, dx = srcgrad.value_and_grad(negative_base, jit=jit)(1.5)
    assert (value, dx) == (6.0, 4.0)   # (-2)^2 = 4, not -(2^2)
