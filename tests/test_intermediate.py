"""`wrt` naming a local variable: the gradient of the result with respect to an
intermediate value at the point where it is defined (GradientTape's `tape.gradient(z, y)`
for a watched intermediate). Checked against hand values and against central differences
of the function's tail, written out by hand as a function of the intermediate."""

import os

import numpy as np
import pytest
from fd import assert_grad

import srcgrad

HERE = os.path.basename(__file__)


def chain(x):
    y = x * x
    z = y * y
    return z


def test_issue_example(jit):
    assert srcgrad.grad(chain, jit=jit)(3.0) == 108.0
    assert srcgrad.grad(chain, wrt="y", jit=jit)(3.0) == 18.0       # 2 * y at y = 9
    assert srcgrad.grad(chain, wrt=("x", "y"), jit=jit)(3.0) == (108.0, 18.0)


def layer(x, w, b):
    a = np.tanh(x @ w + b)
    s = np.sin(a) * a
    return np.sum(s ** 2) + np.sum(a)


def layer_tail(a):  # layer after `a` is defined, as a function of a
    s = np.sin(a) * a
    return np.sum(s ** 2) + np.sum(a)


def test_intermediate_array_against_the_tail(jit, rng):
    x, w, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2)), rng.standard_normal(2)
    da, dx = srcgrad.grad(layer, wrt=("a", "x"), jit=jit)(x, w, b)
    a = np.tanh(x @ w + b)
    assert_grad(layer_tail, (da,), (a,), [0])
    assert_grad(layer, (dx,), (x, w, b), [0])    # x's gradient still runs through a


def unused(x):
    y = x * 2.0  # noqa: F841  (the result does not use it)
    return x * 3.0


def test_an_intermediate_the_result_does_not_use_has_zero_gradient(jit):
    assert srcgrad.grad(unused, wrt="y", jit=jit)(1.5) == 0.0


def in_loop(x):
    y = x
    for _ in range(3):
        y = y * x
    return y


def twice(x):
    y = x * 2.0
    y = y + 1.0
    return y


def in_branch(x):
    if x > 0.0:
        y = x * 2.0
    else:
        y = x
    return y


@pytest.mark.parametrize("fun,name,line", [
    (in_loop, "y", in_loop.__code__.co_firstlineno + 3),
    (twice, "y", twice.__code__.co_firstlineno + 2),
    (in_branch, "y", in_branch.__code__.co_firstlineno + 2),
    (in_loop, "_", in_loop.__code__.co_firstlineno + 2),
])
def test_a_variable_not_assigned_once_at_the_top_level_is_an_error(fun, name, line):
    with pytest.raises(srcgrad.WrtError, match=f"{HERE}:{line}: wrt='{name}'"):
        srcgrad.grad(fun, wrt=name)(1.0)


def test_a_name_the_function_does_not_assign_is_an_error():
    with pytest.raises(srcgrad.WrtError, match="names no parameter or variable of chain"):
        srcgrad.grad(chain, wrt="q")
