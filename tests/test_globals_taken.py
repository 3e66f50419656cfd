"""A gradient is the gradient of the function as it is at the call: a global it reads (an
array written in place, a name bound again, a helper's global, an attribute of a global
object, a class attribute, a closure's array) that changed since its code was made makes
the code again, compiled and as Python (`backend.taken`). Each of these gave the gradient
of the old function before, in one form or both."""

import types
import warnings

import numpy as np
import pytest
from fd import assert_grad

import srcgrad

W = np.array([1.0, 2.0, 3.0])
SCALE = 2.0
settings = types.SimpleNamespace(w=np.array([1.0, -1.0, 0.5]))


def _weighted(x):
    return np.sum(W * x ** 2)


def _scaled(x):
    return SCALE * np.sum(x ** 3)


def _times_w(x):
    return W * x


def _through_helper(x):
    return np.sum(_times_w(x) * x)


def _attribute(x):
    return np.sum(settings.w * np.sin(x))


class Weights:
    B = np.array([0.5, 0.5, 0.5])

    @classmethod
    def loss(cls, x):
        return np.sum(cls.B * x ** 2)


def _classmethod(x):
    return Weights.loss(x)


@pytest.fixture(autouse=True)
def _restore():
    global W, SCALE
    w, scale, sw, b = W, SCALE, settings.w.copy(), Weights.B.copy()
    yield
    W, SCALE = w, scale
    W[:] = [1.0, 2.0, 3.0]
    settings.w, Weights.B = sw, b


X = np.array([0.5, -1.0, 2.0])


def test_a_global_array_written_in_place_between_calls(jit):
    g = srcgrad.grad(_weighted, jit=jit)
    np.testing.assert_allclose(g(X), 2 * np.array([1.0, 2.0, 3.0]) * X)   # by hand
    W[:] = [10.0, 20.0, 30.0]
    for _ in range(3):
        np.testing.assert_allclose(g(X), 2 * np.array([10.0, 20.0, 30.0]) * X)
    assert_grad(_weighted, [g(X)], (X,), [0])


def test_a_global_bound_again_between_calls(jit):
    global W, SCALE
    g, h = srcgrad.grad(_weighted, jit=jit), srcgrad.grad(_scaled, jit=jit)
    g(X), h(X)
    W, SCALE = np.array([-1.0, 0.0, 4.0]), 0.5
    np.testing.assert_allclose(g(X), 2 * W * X)
    np.testing.assert_allclose(h(X), 3 * 0.5 * X ** 2)
    W = np.array([1.0, 1.0, 1.0])   # the same function as at the start? no: W was (1, 2, 3)
    np.testing.assert_allclose(g(X), 2 * X)


def test_a_global_a_helper_reads(jit):
    g = srcgrad.grad(_through_helper, jit=jit)
    g(X)
    W[:] = [0.0, 5.0, -1.0]
    np.testing.assert_allclose(g(X), 2 * W * X)
    assert_grad(_through_helper, [g(X)], (X,), [0])


@pytest.mark.parametrize("jit", [False, "auto"])
@pytest.mark.filterwarnings("ignore::srcgrad.JitFallbackWarning")
def test_an_attribute_of_a_global_object(jit):
    g = srcgrad.grad(_attribute, jit=jit)   # (numba cannot type the object: Python runs)
    g(X)
    settings.w[:] = [2.0, 0.0, 1.0]
    np.testing.assert_allclose(g(X), settings.w * np.cos(X))
    settings.w = np.array([3.0, 3.0, 3.0])
    np.testing.assert_allclose(g(X), 3.0 * np.cos(X))


def test_a_class_attribute_a_classmethod_reads(jit):
    g = srcgrad.grad(_classmethod, jit=jit)
    np.testing.assert_allclose(g(X), X)
    Weights.B = np.array([1.0, 2.0, 0.0])
    np.testing.assert_allclose(g(X), 2 * Weights.B * X)


def test_an_array_a_closure_holds(jit):
    a = np.array([1.0, 1.0, 1.0])

    def f(x):
        return np.sum(a * np.exp(x))

    g = srcgrad.grad(f, jit=jit)
    np.testing.assert_allclose(g(X), np.exp(X))
    a[1] = 4.0
    np.testing.assert_allclose(g(X), a * np.exp(X))


def test_forward_mode_and_hvp_follow_the_change(jit):
    t = np.array([1.0, 0.0, -1.0])
    jvp, hvp = srcgrad.jvp(_weighted, jit=jit), srcgrad.hvp(_weighted, jit=jit)
    jvp(X, t), hvp(X, t)
    W[:] = [3.0, 1.0, 2.0]
    value, dvalue = jvp(X, t)
    assert value == pytest.approx(np.sum(W * X ** 2))
    assert dvalue == pytest.approx(np.sum(2 * W * X * t))
    np.testing.assert_allclose(hvp(X, t), 2 * W * t)


def test_a_pullback_runs_the_code_its_forward_pass_ran(jit):
    global W
    f = srcgrad.vjp(_weighted, jit=jit)
    value, pullback = f(X)
    W = np.array([0.0, 0.0, 1.0])   # after the forward pass: the pullback is the old function's
    np.testing.assert_allclose(pullback(1.0), 2 * np.array([1.0, 2.0, 3.0]) * X)
    value, pullback = f(X)
    assert value == pytest.approx(X[2] ** 2)
    np.testing.assert_allclose(pullback(1.0), [0.0, 0.0, 2 * X[2]])
    W[:] = [5.0, 0.0, 0.0]   # written in place: the same (numba compiles the pullback now)
    np.testing.assert_allclose(pullback(1.0), [0.0, 0.0, 2 * X[2]])


def test_a_global_that_keeps_changing_is_named_once():
    g = srcgrad.grad(_weighted, jit=False)
    g(X)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k in range(5):
            W[0] = float(k)
            np.testing.assert_allclose(g(X)[0], 2 * k * X[0])
    named = [w for w in caught if "pass it as an argument" in str(w.message)]
    assert len(named) == 1 and "W changed between calls" in str(named[0].message)
    assert named[0].filename == __file__


LAYERS = [np.array([1.0, 2.0, 3.0]), 0.5]
CONFIG = {"scale": 2.0}
PAIR = (np.array([1.0, 2.0, 3.0]), 0.5)


def _from_a_tuple(x):
    return np.sum(PAIR[0] * x ** 2) * PAIR[1]


def test_an_array_a_global_tuple_holds_written_into(jit):
    g = srcgrad.grad(_from_a_tuple, jit=jit)
    np.testing.assert_allclose(g(X), PAIR[0] * X)
    PAIR[0][:] = [4.0, 0.0, -1.0]
    try:
        np.testing.assert_allclose(g(X), PAIR[0] * X)
    finally:
        PAIR[0][:] = [1.0, 2.0, 3.0]


def _from_containers(x):
    return np.sum(LAYERS[0] * x ** 2) * LAYERS[1] + CONFIG["scale"] * np.sum(x)


def test_a_global_list_or_dict_written_into():
    # (numba takes no global list or dict: the Python form)
    g = srcgrad.grad(_from_containers, jit=False)
    np.testing.assert_allclose(g(X), 2 * LAYERS[0] * X * 0.5 + 2.0)
    LAYERS[0][1] = -1.0
    LAYERS[1] = 2.0
    CONFIG["scale"] = -3.0
    try:
        np.testing.assert_allclose(g(X), 2 * LAYERS[0] * X * 2.0 - 3.0)
        assert_grad(_from_containers, [g(X)], (X,), [0])
    finally:
        LAYERS[:] = [np.array([1.0, 2.0, 3.0]), 0.5]
        CONFIG["scale"] = 2.0


BIG = np.linspace(0.0, 1.0, 200_000)   # 1.6 MB: compared by a sample of its entries


def _reads_a_large_global(x):
    return np.sum(x ** 2) * BIG[-1]


def test_a_large_global_array_replaced_in_place():
    g = srcgrad.grad(_reads_a_large_global, jit=False)
    np.testing.assert_allclose(g(X), 2 * X)
    BIG[:] = 3.0                 # (its last entry is one of those compared)
    try:
        np.testing.assert_allclose(g(X), 6 * X)
    finally:
        BIG[:] = np.linspace(0.0, 1.0, 200_000)
