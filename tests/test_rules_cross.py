"""np.cross with its axis keywords (srcgrad/rules/cross_products.py): gradients against
central differences (grad, jvp and hvp, compiled and as Python), by hand, the compiled
form against NumPy's values, and what is refused (2-vectors)."""

import numba
import numpy as np
import pytest
from marks import compiles, needs_numba_060
from sweep import check, check_hvp, check_jvp, domains, parametrize

import srcgrad
from srcgrad.rules.cross_products import cross_along

any_, pos, unit, distinct = domains(67)

WEIGHTS = np.arange(12.0).reshape(3, 4) / 5.0 - 1.0


def along(a, b):
    # a's vectors down its columns, b's along its rows (broadcast over a's), y's down
    # its columns; then every axis the same (axis=), and axisc alone
    return (np.sum(np.cross(a, b, axisa=0, axisb=-1, axisc=0) * WEIGHTS) +
            np.sum(np.cross(a, b.T, axis=0) ** 2) +
            np.sum(np.cross(a.T, b, axisc=0) ** 3))


def stacked(a, b):
    # a (2, 3, 4): 3-vectors on axis 1, broadcast against b's (4, 3) rows
    return np.sum(np.sin(np.cross(a, b, axisa=1)))


CASES = [
    ("cross_axes", (np.cross, cross_along), along, (any_(3, 4), any_(4, 3)), [0, 1], True),
    ("cross_axes_broadcast", (np.cross, cross_along), stacked, (any_(2, 3, 4), any_(4, 3)),
     [0, 1], False),
]


# (the axes are moved by np.moveaxis, which numba has from 0.60)
MOVED = "np.moveaxis"


@parametrize(CASES)
def test_rule(case, jit):
    needs_numba_060(jit, MOVED)
    check(case, jit)


@parametrize(CASES)
def test_jvp_against_differences(case, jit):
    needs_numba_060(jit, MOVED)
    check_jvp(case, jit, 13)


@parametrize(CASES)
def test_hvp_against_differences_of_the_gradient(case, jit):
    needs_numba_060(jit, MOVED)
    check_hvp(case, jit)


W = np.array([1.0, 2.0, 3.0])


def triple(a, b):
    return np.sum(np.cross(a, b, axisa=0, axisb=0, axisc=0)[:, 0] * W)


def test_by_hand(jit):
    # w . (a x b) = a . (b x w) = b . (w x a): a = e1, b = e2 as columns of one vector,
    # b x w = [3, 0, -1], w x a = [0, 3, -2]
    a, b = np.array([[1.0], [0.0], [0.0]]), np.array([[0.0], [1.0], [0.0]])
    needs_numba_060(jit, MOVED)
    da, db = srcgrad.grad(triple, wrt=(0, 1), jit=jit)(a, b)
    np.testing.assert_array_equal(da, [[3.0], [0.0], [-1.0]])
    np.testing.assert_array_equal(db, [[0.0], [3.0], [-2.0]])


@numba.njit
def _compiled(a, b):
    return (cross_along(a, b, axisa=0, axisb=1, axisc=1), cross_along(a, b.T, axis=0),
            cross_along(a.T, b))


@compiles
def test_compiled_form_gives_numpys_values():
    needs_numba_060(True, MOVED)
    a, b = any_(3, 4), any_(4, 3)
    want = (np.cross(a, b, axisa=0, axisb=1, axisc=1), np.cross(a, b.T, axis=0),
            np.cross(a.T, b))
    for got, value in zip(_compiled(a, b), want, strict=True):
        np.testing.assert_allclose(got, value, rtol=1e-14)


def planar(a, b):
    return np.sum(np.cross(a, b, axisa=0, axisb=0))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")   # (NumPy 2's, of 2-vectors)
def test_2_vectors_are_refused():
    with pytest.raises(srcgrad.MissingRule, match="2-vectors"):
        srcgrad.grad(planar, jit=False)(np.ones((2, 3)), np.eye(2, 3))
