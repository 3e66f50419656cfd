"""np.polyval, np.vander, np.convolve, np.correlate and np.trapezoid (np.trapz where NumPy
has it) (srcgrad/rules/polynomials.py): against central differences (grad, jvp and hvp,
compiled and as Python, every mode and keyword), by hand, the refusals, and the numba
forms against NumPy's values."""

import numpy as np
import pytest
from sweep import check, check_hvp, check_jvp, domains, parametrize

import srcgrad
from srcgrad.errors import MissingRule
from srcgrad.rules.polynomials import (
    coordinate_slopes,
    poly_slope,
    powers_grad,
    trapezoid_weights,
    trapezoidal,
    unslope,
    window,
)

any_, pos, unit, distinct = domains(53)
TRAPEZOIDS = tuple(getattr(np, n) for n in ("trapezoid", "trapz") if hasattr(np, n))
trapezoid = TRAPEZOIDS[0]


def polyval_op(p, x):
    # coefficients an array and a list display; x a matrix and a number
    return np.sum(np.polyval(p, x) ** 2) + np.polyval([p[0], 2.0, p[1] * 3.0], x[0, 1]) ** 2


def vander_op(x):
    return np.sum(np.vander(x, 4) * np.arange(12.0).reshape(3, 4)) + \
        np.sum(np.vander(x, increasing=True) ** 2) + np.sum(np.sin(np.vander(x, N=2)))


def polyval_vander_op(p, x):
    # (and the rules of the helpers of polyval's adjoint, which grad of grad meets)
    return polyval_op(p, x) + vander_op(x[0]) + np.sum(poly_slope(p) ** 2) + \
        np.sum(unslope(p[:3] * 2.0, p) ** 2)


def convolve_correlate_op(a, v):
    return convolve_op(a, v) + correlate_op(a, v)


def convolve_op(a, v):
    return np.sum(np.convolve(a, v) ** 2) + np.sum(np.sin(np.convolve(a, v, "same"))) + \
        np.sum(np.convolve(v, a, mode="valid") ** 3) + np.sum(np.convolve(v, a, "same") ** 2)


def correlate_op(a, v):
    return np.sum(np.correlate(a, v) ** 2) + np.sum(np.sin(np.correlate(a, v, "same"))) + \
        np.sum(np.correlate(v, a, mode="full") ** 3) + np.sum(np.correlate(v, a, "same") ** 2) \
        + np.sum(np.correlate(v, a) ** 2)


def trapezoid_op(y, x):
    # coordinates along the last axis (1-D, and of y's shape), a spacing along the first
    return trapezoid(y[0] ** 2, x) + np.sum(trapezoid(y, x, axis=1) ** 2) + \
        np.sum(trapezoid(y, dx=0.3, axis=0) ** 2) + np.sum(trapezoid(y * 2.0, y ** 2) ** 2) + \
        trapezoid(y[1])


def trapezoid_spacing(y, d):
    return np.sum(trapezoid(y, dx=d, axis=0) ** 2) + np.sum(np.sin(trapezoid(y, None, d)))


def trapz_op(y, x):
    return np.sum(np.trapz(y, x, axis=0) ** 2) + np.trapz(y[0], dx=0.5)   # noqa: NPY201


def increasing(n):
    return np.cumsum(pos(n))


# (each compiled case costs three compiles, grad, jvp and hvp: one per family)
CASES = [
    ("polyval-vander", (np.polyval, np.vander, poly_slope, unslope), polyval_vander_op,
     (any_(4), unit(2, 3)), [0, 1], True),
    ("polyval", (np.polyval,), polyval_op, (any_(3), unit(4, 2)), [0, 1], False),
    ("vander", (np.vander,), vander_op, (any_(3),), [0], False),
    ("convolve-correlate", (np.convolve, np.correlate), convolve_correlate_op,
     (any_(5), any_(3)), [0, 1], True),
    ("convolve", (np.convolve,), convolve_op, (any_(5), any_(3)), [0, 1], False),
    ("convolve-short-first", (np.convolve,), convolve_op, (any_(2), any_(4)), [0, 1], False),
    ("correlate", (np.correlate,), correlate_op, (any_(5), any_(3)), [0, 1], False),
    ("correlate-short-first", (np.correlate,), correlate_op, (any_(2), any_(5)), [0, 1],
     False),
    ("trapezoid", TRAPEZOIDS + (trapezoidal,), trapezoid_op, (any_(3, 4), increasing(4)),
     [0, 1], True),
    ("trapezoid-dx", TRAPEZOIDS, trapezoid_spacing, (any_(3, 4), 0.4), [0, 1], False),
]
if hasattr(np, "trapz") and hasattr(np, "trapezoid"):   # (NumPy 2.0 and 2.1)
    CASES.append(("trapz", (np.trapz,), trapz_op, (any_(3, 2), increasing(3)), [0, 1], False))


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


@parametrize(CASES)
def test_jvp_against_differences(case, jit):
    check_jvp(case, jit, 3)


@parametrize([c[:5] + (False,) for c in CASES])   # (compiled: two minutes of CPU)
def test_hvp_against_differences_of_the_gradient(case, jit):
    check_hvp(case, jit)


def polyval_plain(p, x):
    return np.sum(np.polyval(p, x))


def convolve_plain(a, v):
    return np.sum(np.convolve(a, v, "valid") * np.array([1.0, 10.0]))


def trapezoid_plain(y, x):
    return trapezoid(y, x)


def test_by_hand(jit):
    # polyval: d/dp of p0 x^2 + p1 x + p2 is (x^2, x, 1) summed; d/dx is 2 p0 x + p1
    p, x = np.array([1.0, -2.0, 3.0]), np.array([2.0, -1.0])
    dp, dx = srcgrad.grad(polyval_plain, wrt=(0, 1), jit=jit)(p, x)
    np.testing.assert_allclose(dp, [5.0, 1.0, 2.0])
    np.testing.assert_allclose(dx, [2.0, -4.0])
    # valid convolution of (a0, a1, a2) with (v0, v1): (a0 v1 + a1 v0, a1 v1 + a2 v0)
    a, v = np.array([1.0, 2.0, 3.0]), np.array([5.0, 7.0])
    da, dv = srcgrad.grad(convolve_plain, wrt=(0, 1), jit=jit)(a, v)
    np.testing.assert_allclose(da, [7.0, 5.0 + 70.0, 50.0])
    np.testing.assert_allclose(dv, [2.0 + 30.0, 1.0 + 20.0])
    # trapezoid over (0, 1, 3): weights (0.5, 1.5, 1); slopes in x (y0 - y1 ...) / 2
    y, xs = np.array([1.0, 2.0, 4.0]), np.array([0.0, 1.0, 3.0])
    dy, dxs = srcgrad.grad(trapezoid_plain, wrt=(0, 1), jit=jit)(y, xs)
    np.testing.assert_allclose(dy, [0.5, 1.5, 1.0])
    np.testing.assert_allclose(dxs, [-1.5, -1.5, 3.0])


def test_windows_are_numpys():
    # where each mode's result lies in the full convolution (correlation), every length
    rng = np.random.default_rng(3)
    for m in range(1, 6):
        for n in range(1, 6):
            a, v = rng.standard_normal(m), rng.standard_normal(n)
            for correlating, fun in ((False, np.convolve), (True, np.correlate)):
                full = np.convolve(a, v[::-1] if correlating else v)
                for mode in ("full", "same", "valid"):
                    start, size = window(m, n, mode, correlating)
                    np.testing.assert_allclose(full[start:start + size], fun(a, v, mode))


def polyval_matrix(p, x):
    return np.sum(np.polyval(p, x))


def trapezoid_array_spacing(y, d):
    return trapezoid(y, dx=d)


def test_refusals():
    with pytest.raises(MissingRule, match="rank other than 1"):
        srcgrad.grad(polyval_matrix, jit=False)(np.ones((2, 2)), 0.5)
    with pytest.raises(MissingRule, match="array dx"):
        srcgrad.grad(trapezoid_array_spacing, jit=False)(np.ones(3), np.ones(2))
    with pytest.raises(MissingRule, match="complex"):
        srcgrad.grad(convolve_plain, jit=False)(np.ones(3) + 1j, np.ones(2))


@pytest.mark.compiled
def test_compiled_values_are_numpys():
    # the forms the sweep's compiled cases do not reach: coordinates of y's shape along
    # the first axis, and the helpers of forward mode over the adjoint
    from numba import njit
    y, v = any_(3, 4), any_(4)
    xs = np.cumsum(pos(3, 4), axis=0)

    def forms(y, v, xs):
        return (trapezoidal(y, xs, axis=0), trapezoid_weights(y, xs, 1.0, 0),
                coordinate_slopes(y, 0), unslope(v[:3], v), powers_grad(y, v, y))
    for got, want in zip(njit(forms)(y, v, xs), forms(y, v, xs), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-13)
