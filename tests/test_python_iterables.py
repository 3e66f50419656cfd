"""The Python users write over sequences (the forms JAX and autograd users reach for):
`functools.reduce`, `itertools.combinations`/`product`/`permutations` in loops, `sorted`
of a list of arrays by a key, starred unpacking of an array, and a local name bound to a
function. Each form is checked against central differences and a value worked by hand,
in reverse (grad) and forward (jvp) mode, compiled with numba and as Python (the `jit`
fixture: one compiled case per form); each refusal has a test of its message."""

import functools
import operator
import os
from functools import reduce

import numpy as np
import pytest
from fd import assert_grad, slope

import srcgrad
from srcgrad import UnsupportedSyntax

HERE = os.path.basename(__file__)
X = np.array([0.3, -0.5, 1.2, 0.7])
T = np.array([0.4, 1.0, -0.6, 0.8])   # a direction for jvp


def check(fun, args, want, jit):
    """fun's gradient is `want` (by hand) and central differences; its jvp along T is
    <want, T> and the slope of differences."""
    value, dx = srcgrad.value_and_grad(fun, jit=jit)(*args)
    assert value == pytest.approx(fun(*args), rel=1e-12)
    np.testing.assert_allclose(dx, want, rtol=1e-10, atol=1e-14)
    assert_grad(fun, (dx,), args, [0])
    tangents = (T,) + tuple(np.zeros_like(a) for a in args[1:])
    primal, tangent = srcgrad.jvp(fun, wrt=tuple(range(len(args))), jit=jit)(*args, tangents)
    assert primal == pytest.approx(value, rel=1e-12)
    assert tangent == pytest.approx(float(np.dot(want, T)), rel=1e-9, abs=1e-12)
    assert tangent == pytest.approx(slope(fun, args, tangents), rel=1e-5, abs=1e-8)


def refused(fun, args, construct, line, kind=UnsupportedSyntax):
    with pytest.raises(kind) as info:
        srcgrad.grad(fun, jit=False)(*args)
    message = str(info.value)
    assert f"{HERE}:" in message and construct in message and line in message, message


# ---- functools.reduce ----


def reduce_lambda(x):
    return functools.reduce(lambda a, b: a * b + 1.0, x)


def reduce_initial_captured(x, c):
    w = c * 2.0
    return reduce(lambda a, b: a * b + w, x, 2.0)


def reduce_operator_display(x):
    return reduce(operator.mul, [x[0], x[1], np.sin(x[2])])


def reduce_ufunc(x):
    return reduce(np.add, x * x)


def reduce_rows(x):
    rows = np.reshape(x, (2, 2))
    return np.sum(reduce(lambda a, r: a * r, rows))


def reduce_nested_def(x):
    w = x[0] * 3.0

    def step(a, v):
        return a * w + v
    return reduce(step, x[1:], 1.0)


def double_then_add(a, b):
    return 2.0 * a + b


def reduce_user_function_over_a_list(x):
    parts = []
    for v in x:
        parts.append(v * v)
    return reduce(double_then_add, parts)


def reduce_map(x):
    return reduce(operator.mul, map(np.sin, x), 1.0)


def reduce_generator(x):
    return reduce(lambda a, b: a + b * b, (np.cos(v) for v in x), 0.0)


def test_reduce_by_hand(jit):
    x0, x1, x2, x3 = X
    # ((x0 x1 + 1) x2 + 1) x3 + 1
    want = [x1 * x2 * x3, x0 * x2 * x3, (x0 * x1 + 1) * x3, (x0 * x1 + 1) * x2 + 1]
    check(reduce_lambda, (X,), want, jit)


def test_reduce_forms_by_hand():
    x0, x1, x2, x3 = X
    # (((2 x0 + w) x1 + w) x2 + w) x3 + w, w = 2c: in x only
    p = 2 * x0 + 1.0
    q = p * x1 + 1.0
    r = q * x2 + 1.0
    check(reduce_initial_captured, (X, 0.5),
          [2 * x1 * x2 * x3, p * x2 * x3, q * x3, r], False)
    check(reduce_operator_display, (X,),
          [x1 * np.sin(x2), x0 * np.sin(x2), x0 * x1 * np.cos(x2), 0.0], False)
    check(reduce_ufunc, (X,), 2 * X, False)
    check(reduce_rows, (X,), [x2, x3, x0, x1], False)
    # ((1 * 3 x0 + x1) 3 x0 + x2) 3 x0 + x3 = 27 x0^3 + 9 x0^2 x1 + 3 x0 x2 + x3
    check(reduce_nested_def, (X,),
          [81 * x0 ** 2 + 18 * x0 * x1 + 3 * x2, 9 * x0 ** 2, 3 * x0, 1.0], False)
    # 2 (2 (2 x0^2 + x1^2) + x2^2) + x3^2
    check(reduce_user_function_over_a_list, (X,), [16 * x0, 8 * x1, 4 * x2, 2 * x3], False)
    s = np.sin(X)
    check(reduce_map, (X,), [np.prod(s) / s[k] * np.cos(X[k]) for k in range(4)], False)
    check(reduce_generator, (X,), -2 * np.cos(X) * np.sin(X), False)


def test_reduce_source_is_a_loop():
    src = srcgrad.grad(reduce_lambda, jit=False).source
    assert "acc = x[0]" in src and "for k in range(1, n):" in src and \
        "acc = reduce_step(acc, item)" in src, src
    src = srcgrad.grad(reduce_operator_display, jit=False).source
    assert "for " not in src, src   # (three items known: two calls)


def reduce_empty(x):
    return reduce(operator.add, [])


def reduce_not_a_function(x):
    return reduce(3.0, x)


def reduce_range(x):
    return reduce(lambda a, k: a + x[k], range(len(x)))


def reduce_generator_no_initial(x):
    return reduce(operator.add, (v * v for v in x))


@pytest.mark.parametrize("fun, construct, line", [
    (reduce_empty, "reduce() of empty iterable with no initial value", "reduce(operator.add"),
    (reduce_not_a_function, "functools.reduce(f, ...) is differentiated where f is a "
                            "function", "reduce(3.0, x)"),
    (reduce_range, "functools.reduce over range(...) is differentiated with an initial",
     "range(len(x))"),
    (reduce_generator_no_initial, "functools.reduce of a generator expression is "
                                  "differentiated with an initial value", "(v * v for"),
])
def test_reduce_refused(fun, construct, line):
    refused(fun, (X,), construct, line)
