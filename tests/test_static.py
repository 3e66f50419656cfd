"""`static=` and `unroll=`: loops with compile-time trip counts become straight-line
adjoints, checked against central differences and against the looped gradient's hand value."""

import numpy as np
import pytest
from fd import assert_grad

import srcgrad


def alternating(x, n):
    s = 0.0
    for i in range(n):
        if i % 2 == 0:
            s = s + x ** (i + 1)
        else:
            s = s - np.sin(x) * i
    return s


def squaring(x):
    for _ in range(3):
        x = x * x + 1.0
    return x


def layers(W, x, depth):
    h = x
    for _ in range(depth):
        h = np.tanh(W @ h)
    return np.sum(h)


@pytest.mark.parametrize("n", [0, 1, 4])
def test_static_trip_count_unrolls(jit, n):
    g = srcgrad.grad(alternating, static="n", jit=jit)
    got = g(1.3, n)
    assert_grad(alternating, [got], (1.3, n), [0])
    assert "for " not in g.specialized((1.3, n)).source  # straight-line adjoint
    assert "for " in g.source                            # unspecialised: a loop


def test_static_hand_value(jit):
    # n = 2: s = x - sin(x), ds/dx = 1 - cos(x)
    assert srcgrad.grad(alternating, static=("n",), jit=jit)(0.0, 2) == pytest.approx(0.0)
    assert srcgrad.grad(alternating, static=1, jit=jit)(np.pi, 2) == pytest.approx(2.0)


def test_compiled_once_per_static_value():
    g = srcgrad.grad(alternating, static="n", jit=False)
    g(1.0, 3), g(2.0, 3), g(1.0, 5)
    assert len(g._specialized) == 2


def test_unroll_literal_trip_count(jit):
    g = srcgrad.grad(squaring, unroll=True, jit=jit)
    assert "for " not in g.source
    # x1 = x^2 + 1, x2 = x1^2 + 1, x3 = x2^2 + 1: dx3/dx = 8 x x1 x2
    x = 0.5
    x1 = x * x + 1.0
    x2 = x1 * x1 + 1.0
    assert g(x) == pytest.approx(8 * x * x1 * x2)
    assert g(x) == pytest.approx(srcgrad.grad(squaring, jit=jit)(x))


def test_static_array_workload(jit, rng):
    W, x = rng.normal(size=(4, 4)) * 0.5, rng.normal(size=4)
    g = srcgrad.grad(layers, wrt=(0, 1), static="depth", jit=jit)
    assert_grad(layers, g(W, x, 3), (W, x, 3), [0, 1])


def test_static_errors():
    with pytest.raises(srcgrad.SrcgradError, match="both static and differentiated"):
        srcgrad.grad(alternating, wrt="x", static="x")
    with pytest.raises(srcgrad.SrcgradError, match="static='m' names no parameter"):
        srcgrad.grad(alternating, static="m")
    with pytest.raises(srcgrad.SrcgradError, match="hashable"):
        srcgrad.grad(layers, static="x", wrt=0)(np.eye(2), np.ones(2), 1)
