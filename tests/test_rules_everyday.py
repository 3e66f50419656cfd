"""Everyday NumPy functions with records in the modules of their kin: np.diagflat
(rules/diagonals.py), np.meshgrid (rules/joins.py), np.heaviside, np.fmod, np.modf and
np.ldexp (rules/elementwise.py), np.isclose and np.allclose (no gradient), and the array
methods x.round() and x.repeat() (as np.round and np.repeat): against central
differences (grad, jvp and hvp, compiled and as Python), by hand, and the refusals."""

import numpy as np
import pytest
from sweep import check, check_hvp, check_jvp, domains, parametrize

import srcgrad
from srcgrad.errors import MissingRule
from srcgrad.rules.joins import grids

any_, pos, unit, distinct = domains(61)


def diagflat_meshgrid_op(v, a, b):
    xs, ys = np.meshgrid(a, b)
    p, q = np.meshgrid(a, b, indexing="ij")
    return np.sum(np.diagflat(v) * np.arange(16.0).reshape(4, 4)) + \
        np.sum(np.diagflat(v, 1) ** 2) + np.sum(np.diagflat(v.reshape(2, 2), k=-1) ** 3) + \
        np.sum(np.sin(xs) * ys ** 2) + np.sum(p * q * np.arange(12.0).reshape(4, 3))


def meshgrid_three(a, b):
    xs, ys, zs = np.meshgrid(a, b, a * 2.0)
    (only,) = np.meshgrid(b)
    p, q, r = np.meshgrid(b, a, b, indexing="ij")
    return np.sum(xs * ys * np.cos(zs)) + np.sum(only ** 2) + np.sum(p * q ** 2 * r)


def steps_op(a, b):
    # heaviside at 0 (x2 read there) and away from it; fmod; modf; ldexp
    frac, whole = np.modf(a * 3.0)
    return np.sum(np.heaviside(a, b) * a) + np.sum(np.heaviside(np.floor(a), b) ** 2) + \
        np.sum(np.fmod(a * 3.0, b + 3.0) ** 2) + np.sum(frac ** 2 + whole * a) + \
        np.sum(np.ldexp(a, np.array([1, 2, 3, 0])) ** 2) + np.sum(np.ldexp(b, 2) * a)


def methods_op(x):
    close = np.where(np.isclose(x, 0.5, atol=0.3), x, 2.0 * x)
    same = x[0, 0] if np.allclose(x, x + 1e-12) else 0.0
    return np.sum(x.round(1) * x) + np.sum(x.repeat(2, axis=0) ** 2) + \
        np.sum(x.repeat(3) * 2.0) + np.sum(x.round() * x) + np.sum(close ** 2) + same \
        + np.sum(x.repeat([1, 2, 0], 1) ** 3)


CASES = [
    ("diagflat-meshgrid", (np.diagflat, np.meshgrid, grids), diagflat_meshgrid_op,
     (any_(4), any_(4), any_(3)), [0, 1, 2], True),
    ("meshgrid-three", (np.meshgrid,), meshgrid_three, (any_(4), any_(3)), [0, 1], False),
    ("steps", (np.heaviside, np.fmod, np.modf, np.ldexp), steps_op, (any_(4), any_(4)),
     [0, 1], True),
    ("methods", (np.round, np.repeat, np.isclose, np.allclose), methods_op, (any_(2, 3),),
     [0], True),
]


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


@parametrize(CASES)
def test_jvp_against_differences(case, jit):
    check_jvp(case, jit, 3)


@parametrize([c[:5] + (False,) for c in CASES])
def test_hvp_against_differences_of_the_gradient(case, jit):
    check_hvp(case, jit)


def heaviside_plain(x1, x2):
    return np.sum(np.heaviside(x1, x2) * np.array([1.0, 2.0, 3.0]))


def modf_plain(x):
    frac, whole = np.modf(x)
    return np.sum(frac * np.array([1.0, 2.0])) + np.sum(whole)


def fmod_ldexp_plain(a, b):
    return np.fmod(a, b) + np.ldexp(a, 3)


def meshgrid_plain(a, b):
    xs, ys = np.meshgrid(a, b)
    return np.sum(xs * np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])) + np.sum(ys)


def test_by_hand(jit):
    # heaviside: no slope in x1; x2's gradient only where x1 == 0
    g1, g2 = srcgrad.grad(heaviside_plain, wrt=(0, 1), jit=jit)(
        np.array([-1.0, 0.0, 2.0]), np.array([0.5, 0.5, 0.5]))
    np.testing.assert_allclose(g1, 0.0)
    np.testing.assert_allclose(g2, [0.0, 2.0, 0.0])
    np.testing.assert_allclose(srcgrad.grad(modf_plain, jit=jit)(np.array([1.5, -2.25])),
                               [1.0, 2.0])
    # fmod(7, 2) = 7 - 2 trunc(3.5): slopes 1 and -3; ldexp(a, 3) = 8 a
    assert srcgrad.grad(fmod_ldexp_plain, wrt=(0, 1), jit=jit)(7.0, 2.0) == \
        pytest.approx((9.0, -3.0))
    # 'xy': xs[i, j] = a[j] (column sums), ys[i, j] = b[i] (each row's length)
    ga, gb = srcgrad.grad(meshgrid_plain, wrt=(0, 1), jit=jit)(np.zeros(2), np.zeros(3))
    np.testing.assert_allclose(ga, [9.0, 12.0])
    np.testing.assert_allclose(gb, [2.0, 2.0, 2.0])


def sparse_grid(a, b):
    xs, ys = np.meshgrid(a, b, sparse=True)
    return np.sum(xs * ys)


def test_refusals():
    with pytest.raises(MissingRule, match="sparse=True"):
        srcgrad.grad(sparse_grid, jit=False)(np.ones(2), np.ones(3))
