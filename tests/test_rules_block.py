"""np.block (srcgrad/rules/joins.py): the rule sweep's cases, a gradient by hand, forward
mode against central differences, and the compiled form against NumPy's values."""

import numba
import numpy as np
import pytest
from fd import slope
from marks import compiles
from sweep import check, domains, parametrize

import srcgrad
from srcgrad.rules.joins import unblock

any_, pos, unit, distinct = domains(19)


def four_blocks(a, b, c, d):
    return np.sum(np.sin(np.block([[a, b], [c, d]])) * np.arange(20.0).reshape(4, 5))


def one_row(a, b):
    return np.sum(np.block([a, b, a]) ** 3)


def vectors_as_rows(a, b):
    return np.sum(np.block([[a, b], [b, a]]) ** 3 * np.arange(10.0).reshape(2, 5))


def matrices_side_by_side(a, b):
    return np.sum(np.cos(np.block([a, b])) * np.arange(10.0).reshape(2, 5))


def ranks_mixed(m, v, s):
    # a matrix over a vector (a row), and numbers beside vectors: Python only (numba's
    # lists hold one type)
    return np.sum(np.block([[m], [v]]) ** 2 * np.arange(9.0).reshape(3, 3)) + \
        np.sum(np.block([s, v, s * s]) ** 3)


def cases():
    """(id, primals covered, function, arguments, positions, compiled too)."""
    yield "four", (np.block,), four_blocks, (any_(2, 2), any_(2, 3), any_(2, 2), any_(2, 3)), \
        [0, 1, 2, 3], True
    yield "row", (np.block,), one_row, (any_(2), any_(3)), [0, 1], True
    yield "vectors", (np.block,), vectors_as_rows, (any_(2), any_(3)), [0, 1], True
    yield "matrices", (np.block,), matrices_side_by_side, (any_(2, 2), any_(2, 3)), [0, 1], \
        True
    yield "mixed", (np.block,), ranks_mixed, (any_(2, 3), any_(3), any_()), [0, 1, 2], False


CASES = list(cases())


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


def weighted(a, b, c, d):
    return np.sum(np.block([[a, b], [c, d]]) * np.arange(20.0).reshape(4, 5))


def test_blocks_by_hand(jit):
    """The gradient of sum(block * w) in each block is its part of w."""
    w = np.arange(20.0).reshape(4, 5)
    args = (np.ones((1, 2)), np.ones((1, 3)), np.ones((3, 2)), np.ones((3, 3)))
    got = srcgrad.grad(weighted, wrt=(0, 1, 2, 3), jit=jit)(*args)
    for g, want in zip(got, (w[:1, :2], w[:1, 2:], w[1:, :2], w[1:, 2:]), strict=True):
        np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize("case", [c for c in CASES if c[0] in ("four", "mixed")],
                         ids=["four", "mixed"])
def test_jvp_against_differences(case, jit, rng):
    _, _, fun, args, positions, compiled = case
    if jit and not compiled:
        pytest.skip("Python only")
    tangents = [rng.standard_normal(np.shape(a)) for a in args]
    value, got = srcgrad.jvp(fun, wrt=tuple(positions), jit=jit)(*args, tuple(tangents))
    assert value == pytest.approx(fun(*args), rel=1e-12)
    assert got == pytest.approx(slope(fun, list(args), tangents), rel=1e-6)


def test_unblock_by_hand():
    dy = np.arange(15.0).reshape(3, 5)
    (p, q), (r, s) = unblock(dy, [[np.zeros((1, 2)), np.zeros(3)],
                                  [np.zeros((2, 2)), np.zeros((2, 3))]])
    np.testing.assert_array_equal(q, [2.0, 3.0, 4.0])
    np.testing.assert_array_equal(r, dy[1:, :2])
    assert p.shape == (1, 2) and s.shape == (2, 3)


@numba.njit
def _compiled(a, b, v, w):
    return np.block([[a, b], [b, a]]), np.block([a, b]), np.block([v, w]), \
        np.block([[v, w], [w, v]])


@compiles
def test_compiled_form_gives_numpys_values():
    a, b, v, w = any_(2, 3), any_(2, 3), any_(2), any_(2)
    want = (np.block([[a, b], [b, a]]), np.block([a, b]), np.block([v, w]),
            np.block([[v, w], [w, v]]))
    for got, value in zip(_compiled(a, b, v, w), want, strict=True):
        np.testing.assert_array_equal(got, value)
