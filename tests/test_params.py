"""Parameters (issue 21): keyword-only parameters with defaults, `*args` of arrays,
keyword arguments at the call, `wrt` by name; against gradients by hand, compiled and as
Python (the `jit` fixture)."""

import numpy as np
import pytest

import srcgrad
from srcgrad.errors import UnsupportedSyntax, WrtError


def scaled(x, *, scale=2.0, shift=0.5):
    return scale * np.sum(x ** 2) + shift * np.sum(x)


def squares(*xs):
    total = 0.0
    for v in xs:
        total = total + np.sum(v ** 2)
    return total * len(xs)


def first_times_last(w, *xs, scale=1.0):
    return scale * np.sum(w * xs[0] * xs[-1])


@pytest.fixture
def x():
    return np.array([1.0, -2.0, 0.5])


def test_keyword_only_default_and_given(jit, x):
    g = srcgrad.grad(scaled, jit=jit)
    np.testing.assert_allclose(g(x), 4.0 * x + 0.5)
    np.testing.assert_allclose(g(x, scale=3.0), 6.0 * x + 0.5)
    np.testing.assert_allclose(g(x, shift=-1.0, scale=0.5), x - 1.0)
    np.testing.assert_allclose(g(x=x, scale=3.0), 6.0 * x + 0.5)


def test_wrt_a_keyword_only_parameter_by_name(jit, x):
    got = srcgrad.grad(scaled, wrt="scale", jit=jit)(x, scale=3.0)
    assert got == pytest.approx(np.sum(x ** 2))
    value, (gx, gshift) = srcgrad.value_and_grad(scaled, wrt=("x", "shift"), jit=jit)(
        x, shift=2.0)
    assert value == pytest.approx(2.0 * np.sum(x ** 2) + 2.0 * np.sum(x))
    np.testing.assert_allclose(gx, 4.0 * x + 2.0)
    assert gshift == pytest.approx(np.sum(x))


def test_keyword_only_forward_mode(jit, x):
    value, dvalue = srcgrad.jvp(scaled, wrt="scale", jit=jit)(x, 1.5)
    assert value == pytest.approx(2.0 * np.sum(x ** 2) + 0.5 * np.sum(x))
    assert dvalue == pytest.approx(1.5 * np.sum(x ** 2))


@pytest.mark.parametrize("count", [2, 3])
def test_star_args_of_arrays_wrt_the_tuple(jit, x, count):
    xs = tuple((k + 1.0) * x for k in range(count))
    got = srcgrad.grad(squares, wrt="xs", jit=jit)(*xs)
    assert isinstance(got, tuple) and len(got) == count
    for g, v in zip(got, xs, strict=True):
        np.testing.assert_allclose(g, 2.0 * count * v)


def test_star_args_between_a_parameter_and_a_keyword_only_one(jit, x):
    w, a, b = x, 2.0 * x, x - 1.0
    gw, gxs = srcgrad.grad(first_times_last, wrt=("w", "xs"), jit=jit)(w, a, b, scale=3.0)
    np.testing.assert_allclose(gw, 3.0 * a * b)
    np.testing.assert_allclose(gxs[0], 3.0 * w * b)
    np.testing.assert_allclose(gxs[1], 3.0 * w * a)
    # one array: xs[0] and xs[-1] are the same entry, the gradient both parts
    (g,) = srcgrad.grad(first_times_last, wrt="xs", jit=jit)(w, a)
    np.testing.assert_allclose(g, 2.0 * w * a)


def with_kwargs(x, **options):
    return np.sum(x)


def helper_with_star(*vs):
    return vs[0] * vs[1]


def calls_a_star_helper(x):
    return np.sum(helper_with_star(x, x))


def test_kwargs_and_star_helpers_stay_refused(x):
    with pytest.raises(UnsupportedSyntax, match=r"test_params.py:\d+: \*\*options cannot be "
                       r"differentiated: pass the arrays as parameters, or as one dict"):
        srcgrad.grad(with_kwargs, jit=False)(x)
    with pytest.raises(UnsupportedSyntax, match=r"helper_with_star takes \*args, keyword-only "
                       r"or positional-only parameters: only the function differentiated"):
        srcgrad.grad(calls_a_star_helper, jit=False)(x)


class Model:
    def __init__(self, W, b):
        self.W, self.b = W, b

    def loss(self, x, *, scale=1.0):
        return scale * np.sum((self.W * x + self.b) ** 2)

    def predict(self, x):
        return self.W * x

    def calls_predict(self, x):
        return np.sum(self.predict(x) ** 2)

    @staticmethod
    def cubes(x):
        return np.sum(x ** 3)

    @classmethod
    def made(cls, x):
        return np.sum(x)


def test_a_bound_method_reads_self_and_follows_its_changes(jit, x):
    model = Model(np.array([1.0, 2.0, 3.0]), 0.5)
    g = srcgrad.grad(model.loss, jit=jit)
    np.testing.assert_allclose(g(x), 2.0 * model.W * (model.W * x + 0.5))
    np.testing.assert_allclose(g(x, scale=2.0), 4.0 * model.W * (model.W * x + 0.5))
    model.W = np.array([-1.0, 0.0, 4.0])
    model.b = 2.0
    np.testing.assert_allclose(g(x), 2.0 * model.W * (model.W * x + 2.0))
    # wrt counts the parameters after self, by position or name
    got = srcgrad.grad(model.loss, wrt=("x", "scale"), jit=jit)(x, scale=3.0)
    np.testing.assert_allclose(got[0], 6.0 * model.W * (model.W * x + 2.0))
    assert got[1] == pytest.approx(np.sum((model.W * x + 2.0) ** 2))
    assert srcgrad.grad(model.loss, wrt=0, jit=jit)(x).shape == x.shape


def test_a_static_method_is_a_function(jit, x):
    np.testing.assert_allclose(srcgrad.grad(Model.cubes, jit=jit)(x), 3.0 * x ** 2)
    model = Model(x, 0.0)
    np.testing.assert_allclose(srcgrad.grad(model.cubes, jit=jit)(x), 3.0 * x ** 2)


def test_methods_refused_with_their_reasons(x):
    model = Model(x, 0.0)
    with pytest.raises(WrtError, match="wrt='self': Model.loss reads self and does not "
                       "differentiate it"):
        srcgrad.grad(model.loss, wrt="self")
    # (a classmethod, and calls of other methods: tests/test_methods.py)
    np.testing.assert_allclose(srcgrad.grad(model.calls_predict, jit=False)(x), 2.0 * x ** 3)
    np.testing.assert_allclose(srcgrad.grad(model.made, jit=False)(x), np.ones_like(x))


def power(x, *, n=2):
    return np.sum(x ** n)


def test_a_static_keyword_only_parameter(jit, x):
    g = srcgrad.grad(power, static="n", jit=jit)
    np.testing.assert_allclose(g(x), 2.0 * x)
    np.testing.assert_allclose(g(x, n=3), 3.0 * x ** 2)


def recursive_power(x, *, n=3):
    if n == 0:
        return np.sum(x * 0.0) + 1.0
    return np.sum(x) * recursive_power(x, n=n - 1)


def test_a_function_calling_itself_with_a_keyword_only_parameter_is_refused(x):
    # (a helper's keyword-only parameters are not bound at its calls yet)
    with pytest.raises(UnsupportedSyntax, match="recursive_power takes .*keyword-only"):
        srcgrad.grad(recursive_power, jit=False)(x)
