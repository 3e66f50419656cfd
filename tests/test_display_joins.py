"""Lists and tuples joined with + or repeated with * an int literal (issue 20, "the Python
users write"): a display, or a name bound once to one, joined to another is the display
of both item lists (`analysis/displays.py`, written so by `normalize`), in straight-line
code and in loops; one whose items srcgrad cannot know when it compiles stays refused.
Each gradient against a value worked out by hand and against central differences,
compiled and as Python."""

import numpy as np
import pytest
from fd import assert_grad, slope

import srcgrad

A, B, C = 1.5, 2.0, -0.5


def joined_in_a_loop(a, b, c):
    s = 0.0
    for i in range(3):
        t = (a * i, b) + (c,)            # a tuple display joined to one, in a loop
        s = s + t[0] * t[2] + t[1]
    return s


def test_tuples_joined_in_a_loop(jit):
    """s = sum_i (i a c + b) over i = 0, 1, 2 = 3 a c + 3 b: ds/da = 3 c, ds/db = 3,
    ds/dc = 3 a."""
    g = srcgrad.grad(joined_in_a_loop, wrt=(0, 1, 2), jit=jit)(A, B, C)
    np.testing.assert_allclose(g, [3 * C, 3.0, 3 * A], rtol=1e-12)
    assert_grad(joined_in_a_loop, g, (A, B, C), [0, 1, 2])
    _, t = srcgrad.jvp(joined_in_a_loop, wrt=(0, 1, 2), jit=jit)(A, B, C, (1.0, -2.0, 0.5))
    assert t == pytest.approx(slope(joined_in_a_loop, (A, B, C), (1.0, -2.0, 0.5)))
    assert t == pytest.approx(3 * C - 6.0 + 1.5 * A)


def rows_joined(x, b, c):
    s = 0.0
    for i in range(3):
        p = [x[i], b]                    # a display bound in the loop
        q = p + [c]                      # ... joined to another there
        s = s + q[0] * q[2] + q[1] * q[1]
    return s


def test_a_display_bound_in_a_loop_joined_there(jit):
    """s = c sum(x) + 3 b^2: ds/dx = c, ds/db = 6 b, ds/dc = sum(x)."""
    x = np.array([1.0, -2.0, 4.0])
    gx, gb, gc = srcgrad.grad(rows_joined, wrt=(0, 1, 2), jit=jit)(x, B, C)
    np.testing.assert_allclose(gx, [C, C, C], rtol=1e-12)
    assert gb == pytest.approx(6 * B)
    assert gc == pytest.approx(3.0)
    assert_grad(rows_joined, (gx, gb, gc), (x, B, C), [0, 1, 2])
    tx = np.array([0.5, 1.0, -1.0])
    _, t = srcgrad.jvp(rows_joined, wrt=(0, 1, 2), jit=jit)(x, B, C, (tx, 1.0, 2.0))
    assert t == pytest.approx(slope(rows_joined, (x, B, C), (tx, 1.0, 2.0)))


def a_name_joined_in_a_loop(a, b, c):
    L = [a, b]
    s = 0.0
    for i in range(2):
        M = L + [c * i]                  # a name bound once to a display, joined in a loop
        s = s + sum(M) * M[2]
    return s


def test_a_name_bound_to_a_display_joined_in_a_loop(jit):
    """i = 0 adds nothing (M[2] = 0); i = 1 adds (a + b + c) c: ds/da = ds/db = c,
    ds/dc = a + b + 2 c."""
    g = srcgrad.grad(a_name_joined_in_a_loop, wrt=(0, 1, 2), jit=jit)(A, B, C)
    np.testing.assert_allclose(g, [C, C, A + B + 2 * C], rtol=1e-12)
    assert_grad(a_name_joined_in_a_loop, g, (A, B, C), [0, 1, 2])


def straight_line_joins(x, y, z):
    t = (x[0], y) + (z,)                 # (a, b) + (c,)
    L = [x[1], y] + [z]                  # [x[0], y] + [z]
    M = L + [x[0] * y]                   # a name bound to a join, joined again
    u = (y,) + (z, x[1])
    s = t[0] * t[2] + np.sum(np.array(M) ** 2) + u[0] * u[2]
    for v in [y] + [z, x[0]]:            # a loop over a join
        s = s + v * v
    return s + sum([y, z] + [x[1]]) * z


def test_straight_line_joins(jit):
    """At x = (1, 2), y = 3, z = 0.5:
    s = x0 z + (x1^2 + y^2 + z^2 + x0^2 y^2) + y x1 + (y^2 + z^2 + x0^2) + (y + z + x1) z
    ds/dx0 = z + 2 x0 y^2 + 2 x0 = 20.5, ds/dx1 = 2 x1 + y + z = 7.5,
    ds/dy = 2 y + 2 x0^2 y + x1 + 2 y + z = 20.5,
    ds/dz = x0 + 2 z + 2 z + y + 2 z + x1 = 9."""
    x, y, z = np.array([1.0, 2.0]), 3.0, 0.5
    gx, gy, gz = srcgrad.grad(straight_line_joins, wrt=(0, 1, 2), jit=jit)(x, y, z)
    np.testing.assert_allclose(gx, [20.5, 7.5], rtol=1e-12)
    assert gy == pytest.approx(20.5)
    assert gz == pytest.approx(9.0)
    assert_grad(straight_line_joins, (gx, gy, gz), (x, y, z), [0, 1, 2])
    tx = np.array([1.0, -1.0])
    _, t = srcgrad.jvp(straight_line_joins, wrt=(0, 1, 2), jit=jit)(x, y, z, (tx, 0.5, 2.0))
    assert t == pytest.approx(20.5 - 7.5 + 0.5 * 20.5 + 2 * 9.0)


def repeated(a, b, w):
    L = [a, b] * 2                       # a display repeated by an int literal
    s = L[0] * L[3] + L[1] * L[2]
    for i in range(2):
        ai = a * i
        s = s + np.sum(np.array(2 * (ai, b)) * w)   # (k * display), in a loop
    return s


def test_a_display_repeated_by_an_int_literal(jit):
    """s = 2 a b + sum_i (a i (w0 + w2) + b (w1 + w3)) over i = 0, 1
    = 2 a b + a (w0 + w2) + 2 b (w1 + w3): ds/da = 2 b + w0 + w2 = 8,
    ds/db = 2 a + 2 (w1 + w3) = 15."""
    w = np.array([1.0, 2.0, 3.0, 4.0])
    g = srcgrad.grad(repeated, wrt=(0, 1), jit=jit)(A, B, w)
    np.testing.assert_allclose(g, [8.0, 15.0], rtol=1e-12)
    assert_grad(repeated, g, (A, B, w), [0, 1])


def long_buffer(x):
    z = [0.0] * 1000                     # past displays.MAX_ITEMS: kept as Python's repetition
    return np.sum(x) * len(z)


def test_a_long_repetition_stays_one(jit):
    """d(1000 sum(x))/dx = 1000; the source repeats the list, it does not spell it."""
    x = np.array([1.0, 2.0])
    g = srcgrad.grad(long_buffer, jit=jit)(x)
    np.testing.assert_allclose(g, [1000.0, 1000.0], rtol=1e-12)
    assert_grad(long_buffer, (g,), (x,), [0])
    assert srcgrad.grad(long_buffer, jit=jit).source.count("0.0,") == 0


def test_the_source_of_a_join_is_its_display():
    source = srcgrad.grad(rows_joined, wrt=(0, 1, 2), jit=False).source
    assert "q = _t2, _t3, c" in source      # (the display of p's items and c's)
    code = [line for line in source.splitlines() if not line.strip().startswith("#")]
    assert not [line for line in code if "p +" in line]


# ---- refused: items srcgrad cannot know when it compiles ----


def joined_to_a_name_bound_twice(a, b):
    if a > 0:
        L = [a]
    else:
        L = [a, b]
    M = L + [b]
    return M[0] * M[-1]


def repeated_n_times(a, b, n):
    L = [a, b] * n
    return L[0] * L[-1]


@pytest.mark.parametrize("fun, args, line", [
    (joined_to_a_name_bound_twice, (A, B), "M = L + [b]"),
    (repeated_n_times, (A, B, 2), "L = [a, b] * n"),
])
def test_a_join_of_unknown_items_is_refused(fun, args, line):
    start = fun.__code__.co_firstlineno
    where = start + next(k for k, text in enumerate(
        open(__file__).read().splitlines()[start - 1:]) if line in text)
    with pytest.raises(srcgrad.MissingRule, match=rf"test_display_joins.py:{where}: "
                                                   rf"(joining lists or tuples|a list)"
                                                   ) as info:
        srcgrad.grad(fun, jit=False)(*args)
    assert line in str(info.value)
