"""Casts that are the identity on float64 values: np.float64 (np.double is the same type)
passes the gradient through as float does; integer casts (np.int64, ...) give none, as int
does. np.float32 rounds: it is refused, as np.asarray(x, dtype=np.float32) is."""

import numpy as np
import pytest
from fd import assert_grad, slope
from sweep import check, domains, parametrize

import srcgrad
from srcgrad.errors import MissingRule, SrcgradError


def item_as_float64(x):
    return np.float64(x[1]) * x[0] + np.sin(np.float64(x[0]))


def item_as_double(x):
    return np.double(x[1]) ** 2 * x[0]


def array_as_float64(x):
    return np.sum(np.float64(x) ** 2 * x)


def number_as_float64(a, b):
    return np.float64(a) * np.float64(b * a)


def as_int64(x):
    return np.int64(x[1]) * x[0] + x[1]


def as_float32(x):
    return np.float32(x[1]) * x[0]


def cases():
    any_, pos, unit, distinct = domains(21)
    yield "float64", (np.float64,), item_as_float64, (any_(2),), [0], True


CASES = list(cases())


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


@pytest.mark.parametrize("fun", [item_as_float64, item_as_double, as_int64])
def test_scalar_casts_against_differences(jit, fun):
    x = np.array([0.7, 2.3])
    g = srcgrad.grad(fun, jit=jit)(x)
    assert_grad(fun, [g], (x,), (0,))
    v = np.array([0.3, -1.1])
    y, t = srcgrad.jvp(fun, jit=jit)(x, v)
    assert y == pytest.approx(fun(x))
    assert t == pytest.approx(slope(fun, (x,), (v,)), rel=1e-6)


def test_float64_by_hand(jit):
    x = np.array([0.7, 2.3])
    # by hand: d/dx0 = x1 + cos(x0), d/dx1 = x0
    np.testing.assert_allclose(srcgrad.grad(item_as_float64, jit=jit)(x),
                               [2.3 + np.cos(0.7), 0.7], rtol=1e-12)
    # by hand: np.double is np.float64: d/dx0 = x1^2, d/dx1 = 2 x0 x1
    np.testing.assert_allclose(srcgrad.grad(item_as_double, jit=jit)(x),
                               [2.3 ** 2, 2 * 0.7 * 2.3], rtol=1e-12)


def test_int64_gives_no_gradient_as_int_does(jit):
    x = np.array([0.7, 2.3])
    # by hand: int64(x1) * x0 + x1: d/dx0 = 2, d/dx1 = 1 (the cast itself gives none)
    np.testing.assert_allclose(srcgrad.grad(as_int64, jit=jit)(x), [2.0, 1.0])


def test_float64_of_numbers(jit):
    a, b = 0.8, -1.3
    ga, gb = srcgrad.grad(number_as_float64, wrt=(0, 1), jit=jit)(a, b)
    # by hand: a * b * a: d/da = 2 a b, d/db = a^2
    assert ga == pytest.approx(2 * a * b)
    assert gb == pytest.approx(a * a)
    assert_grad(number_as_float64, [ga, gb], (a, b), (0, 1))


def test_float64_of_an_array(jit):
    """numba has no np.float64(array) (the function itself does not compile): the
    compiled run says so; Python passes the gradient through."""
    x = np.array([0.5, -1.2, 2.0])
    if jit:
        with pytest.raises(SrcgradError, match="numba cannot compile"):
            srcgrad.grad(array_as_float64, jit=jit)(x)
        return
    g = srcgrad.grad(array_as_float64, jit=jit)(x)
    # by hand: sum(x^3): 3 x^2
    np.testing.assert_allclose(g, 3 * x ** 2, rtol=1e-12)
    assert_grad(array_as_float64, [g], (x,), (0,))
    v = np.array([1.0, 2.0, -1.0])
    assert srcgrad.jvp(array_as_float64, jit=jit)(x, v)[1] == pytest.approx(
        np.dot(3 * x ** 2, v))


def test_float32_is_refused(jit):
    with pytest.raises(MissingRule, match="np.float32"):
        srcgrad.grad(as_float32, jit=jit)(np.array([0.7, 2.3]))
