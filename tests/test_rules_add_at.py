"""np.add.at and np.subtract.at inside a differentiated function: normalize writes
`np.add.at(x, index, v)` as `x += scattered(x, index, v)` (srcgrad/runtime/indexing.py),
so repeated entries of the index add each part, v's gradient is x's read back at the
index (each repeat reads it again) and x's passes through. Against central differences,
by hand, in forward mode, and what stays refused. And the reads whose adjoint adds at an
index the same way: `x[np.ix_(r, c)]`, compiled.
"""

import numpy as np
import pytest
from fd import assert_grad, slope
from marks import compiles, needs_numba_advanced_indexing
from sweep import domains

import srcgrad
from srcgrad.runtime import scattered

any_, pos, unit, distinct = domains(41)


def into_argument(x, v):
    np.add.at(x, np.array([0, 2, 2, 1]), v)   # x is the caller's: copied on entry
    return np.sum(x * x)


def pairs(x, v):
    y = np.sin(x)
    np.add.at(y, (np.array([0, 1, 1]), np.array([2, 0, 0])), v * v)
    return np.sum(y ** 3)


def rows(x, v):
    z = np.zeros((3, 4))
    np.add.at(z, np.array([1, 1, 2]), v)
    return np.sum(np.tanh(z) * x)


def subtracted_in_loop(x, s):
    y = x * 1.0
    for i in range(3):
        np.subtract.at(y, np.array([i, i, 0]), s * y[i])
    return np.sum(y ** 2)


CASES = [
    ("add_at", (scattered,), into_argument, (any_(4), any_(4)), [0, 1], True),
    ("add_at_pairs", (scattered,), pairs, (any_(2, 3), any_(3)), [0, 1], False),
    ("add_at_rows", (scattered,), rows, (any_(3, 4), unit(3, 4)), [0, 1], True),
    ("subtract_at_loop", (scattered,), subtracted_in_loop, (any_(4), 0.7), [0, 1], True),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_against_differences(case, jit):
    name, _, fun, args, positions, compiled = case
    if jit and not compiled:
        needs_numba_advanced_indexing(jit)
    kept = [np.copy(a) for a in args]
    g = srcgrad.grad(fun, wrt=tuple(positions), jit=jit)(*args)
    for a, k in zip(args, kept, strict=True):   # the caller's arrays are not changed
        np.testing.assert_array_equal(a, k)
    assert_grad(fun, g, args, positions)


def squares(x, v):
    y = x * 1.0
    np.add.at(y, np.array([0, 0, 2]), v)
    return np.sum(y ** 2)


def test_by_hand(jit):
    # y = x + [v0 + v1, 0, v2] = [3, 2, 4]; dy = 2y, dx = dy, dv = dy at [0, 0, 2]
    dx, dv = srcgrad.grad(squares, wrt=(0, 1), jit=jit)(np.array([1.0, 2.0, 3.0]),
                                                        np.ones(3))
    np.testing.assert_array_equal(dx, [6.0, 4.0, 8.0])
    np.testing.assert_array_equal(dv, [6.0, 6.0, 8.0])


def test_a_number_added_at_repeats(jit):
    # v is added 3 times at entry 1: d/dv sum(w * y) = 3 w[1] + w[0]
    def f(x, v):
        y = x * 1.0
        np.add.at(y, np.array([1, 0, 1, 1]), v)
        return np.sum(y * np.array([2.0, 5.0, 7.0]))
    assert srcgrad.grad(f, wrt=1, jit=jit)(np.zeros(3), 0.5) == 17.0


def test_jvp_against_differences():
    x, v = any_(4), any_(4)
    tx, tv = any_(4), any_(4)
    _, dy = srcgrad.jvp(into_argument, wrt=(0, 1), jit=False)(x, v, (tx, tv))
    np.testing.assert_allclose(dy, slope(into_argument, (x, v), (tx, tv)), rtol=1e-6)


def through_attribute(x, v):
    y = x * 1.0
    np.add.at(y.T, np.array([0, 0]), v)   # not a name: not followed
    return np.sum(y)


def multiplied(x, v):
    y = x * 1.0
    np.multiply.at(y, np.array([0, 0]), v)
    return np.sum(y)


@pytest.mark.parametrize("fun, words", [
    (through_attribute, r"np\.add\.at\(\) writes into an array in place"),
    (multiplied, "called for its effect")])
def test_other_forms_are_refused(fun, words):
    with pytest.raises(srcgrad.SrcgradError, match=words):
        srcgrad.grad(fun, wrt=1, jit=False)(np.ones(3), 1.0)


@compiles
def test_floats_into_integers_are_refused_compiled():
    def f(x):
        counts = np.zeros(3, np.int64)
        np.add.at(counts, np.array([0, 0]), x)
        return np.sum(counts * x)
    with pytest.raises(srcgrad.SrcgradError, match="integer array"):
        srcgrad.grad(f, jit=True)(1.5)


def grid_reads(x):
    r, c = np.array([0, 2, 2]), np.array([1, 0])
    return np.sum(np.sin(x[np.ix_(r, c)])) + np.sum(x[np.ix_(c, r)] ** 2)


def test_ix_reads_by_hand_and_against_differences(jit):
    needs_numba_advanced_indexing(jit)
    # at x = 0: sin's slope 1 at each entry read, rows 0, 2, 2 (twice) of columns 1, 0;
    # the squares' 2x is 0
    g = srcgrad.grad(grid_reads, jit=jit)
    np.testing.assert_array_equal(g(np.zeros((3, 3))), [[1.0, 1.0, 0.0], [0.0, 0.0, 0.0],
                                                        [2.0, 2.0, 0.0]])
    x = any_(3, 3)
    assert_grad(grid_reads, (g(x),), (x,), [0])
