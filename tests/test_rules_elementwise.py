"""The rules of srcgrad/rules/elementwise.py: the sweep's cases (`CASES`, run here and
counted by test_rules.test_every_rule_has_a_case), then values by hand where they are known
(sinc at 0, prod with zeros, nan_to_num at nan and inf, clip's bounds), forward mode
against central differences and the hvp of prod against differences of its gradient.
"""

import math

import numpy as np
import pytest
from fd import assert_grad, slope
from marks import needs_numba_060
from sweep import binary, check, domains, parametrize, scalar_binary, scalar_unary, unary

import srcgrad

any_, pos, unit, distinct = domains(7)


def above_one(*shape):
    return pos(*shape) + 1.0


def deg2rad_op(x):
    return np.sum(np.deg2rad(x) * 1.3 + np.radians(x) ** 2)


def rad2deg_op(x):
    return np.sum(np.rad2deg(x) * 1.3 + np.degrees(x) ** 2)


def nan_to_num_op(x):
    return np.sum(np.nan_to_num(x, nan=1.0, posinf=2.0) ** 2)


def clip_arrays(x, lo, hi):
    # bounds that broadcast: lo along the columns, hi along the rows
    return np.sum(np.clip(x, lo, hi) * np.arange(12.0).reshape(3, 4))


def clip_keywords(x, lo, hi):
    return np.sum(np.clip(x, a_min=lo, a_max=hi) ** 2)


def clip_no_lower(x, hi):
    return np.sum(np.clip(x, None, hi) ** 2)


def clip_no_upper(x, lo):
    return np.sum(x.clip(lo, None) ** 2)


def prod_axes(x):
    # the whole array, along each axis, with kept dimensions, and as a method
    return np.prod(x) + np.sum(np.prod(x, axis=0) ** 2) + \
        np.sum(np.sin(np.prod(x, axis=-1, keepdims=True))) + np.sum(x.prod(axis=1))


UNARY = [
    ((np.arcsinh,), any_), ((np.arccosh,), above_one), ((np.arctanh,), unit),
    ((np.sinc,), any_), ((np.fabs,), distinct),
]
MATH = [(math.asinh, any_), (math.acosh, above_one), (math.atanh, unit),
        (math.radians, any_), (math.degrees, any_)]
MATH += [(getattr(math, name), dom) for name, dom in (("cbrt", pos), ("exp2", any_))
         if hasattr(math, name)]   # Python >= 3.11
SHAPES_2 = [((), ()), ((3, 4), (4,)), ((3, 1), (1, 4))]


def cases():
    for primals, dom in UNARY:
        for shape in [(), (3, 4)]:
            yield primals[0].__name__, primals, unary(primals[0]), (dom(*shape),), [0], \
                shape == (3, 4) or primals[0] is np.sinc
    for shape in [(), (3, 4)]:
        yield "deg2rad", (np.deg2rad, np.radians), deg2rad_op, (any_(*shape),), [0], shape == ()
        yield "rad2deg", (np.rad2deg, np.degrees), rad2deg_op, (any_(*shape),), [0], shape == ()
        yield "nan_to_num", (np.nan_to_num,), nan_to_num_op, (any_(*shape),), [0], shape != ()
    for op, dom in MATH:
        yield f"math.{op.__name__}", (op,), scalar_unary(op), (dom(),), [0], True
    yield "math.copysign", (math.copysign,), scalar_binary(math.copysign), (-0.7, 1.2), [0, 1], \
        True
    for sa, sb in SHAPES_2:
        compiled = (sa, sb) == ((3, 4), (4,))
        yield "logaddexp2", (np.logaddexp2,), binary(np.logaddexp2), (any_(*sa), any_(*sb)), \
            [0, 1], compiled
        yield "copysign", (np.copysign,), binary(np.copysign), (distinct(*sa), any_(*sb)), \
            [0, 1], compiled
    yield "clip-arrays", (np.clip,), clip_arrays, \
        (any_(3, 4), unit(4) - 0.5, unit(3, 1) + 0.5), [0, 1, 2], True
    yield "clip-keywords", (np.clip,), clip_keywords, (any_(3, 4), -0.5, unit(4) + 0.6), \
        [0, 1, 2], False
    yield "clip-none", (np.clip,), clip_no_lower, (any_(3, 4), unit(3, 1)), [0, 1], True
    yield "clip-method", (np.clip,), clip_no_upper, (any_(3, 4), -0.3), [0, 1], False
    yield "prod", (np.prod,), prod_axes, (any_(3, 4),), [0], True


CASES = list(cases())


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


def weighted(op):
    def f(x, w):
        return np.sum(op(x) * w)
    return f


sinc_sum = weighted(np.sinc)


def test_sinc_by_hand_and_forward(jit):
    # d sinc/dx = (cos(pi x) - sinc x) / x: 0 at 0, -4/pi at 1/2, 1/2 at 2 (cos 2pi = 1,
    # sinc 2 = 0); near 0, -pi^2 x / 3
    x = np.array([0.0, 1e-9, 0.5, 2.0, -0.5])
    g = srcgrad.grad(sinc_sum, jit=jit)(x, np.ones(5))
    np.testing.assert_allclose(g, [0.0, -np.pi ** 2 * 1e-9 / 3, -4 / np.pi, 0.5, 4 / np.pi],
                               rtol=1e-12, atol=1e-300)
    assert srcgrad.grad(scalar_unary(np.sinc), jit=jit)(0.0) == 0.0
    # both sides of the series' edge (pi |x| = 0.1), and forward mode
    x = np.array([0.0318, 0.0319, -0.0318, -0.0319, 0.7])
    dx, w = np.linspace(-1.0, 1.0, 5) + 0.1, np.arange(1.0, 6.0)
    got = srcgrad.grad(sinc_sum, jit=jit)(x, np.ones(5))
    h = 1e-7
    np.testing.assert_allclose(got, (np.sinc(x + h) - np.sinc(x - h)) / (2 * h), rtol=1e-7)
    value, tangent = srcgrad.jvp(sinc_sum, jit=jit)(x, w, dx)
    assert value == pytest.approx(sinc_sum(x, w), rel=1e-14)
    assert tangent == pytest.approx(slope(lambda x: sinc_sum(x, w), [x], [dx]), rel=1e-7)
    # the hvp: the second derivative, -pi^2 / 3 at 0, against differences of grad
    x[0] = 0.0
    hv = srcgrad.hvp(sinc_sum, jit=jit)(x, w, dx)
    assert hv[0] == pytest.approx(-np.pi ** 2 / 3 * w[0] * dx[0], rel=1e-14)
    grad, h = srcgrad.grad(sinc_sum, jit=jit), 1e-6
    np.testing.assert_allclose(hv, (grad(x + h * dx, w) - grad(x - h * dx, w)) / (2 * h),
                               rtol=1e-6, atol=1e-8)


FORWARD = [(unary(np.arcsinh), any_, (3, 4)), (unary(np.arccosh), above_one, (3, 4)),
           (unary(np.arctanh), unit, (3, 4)), (deg2rad_op, any_, (3, 4)),
           (rad2deg_op, any_, (3, 4)), (unary(np.sinc), any_, (3, 4)),
           (unary(np.fabs), distinct, (3, 4)), (nan_to_num_op, any_, (3, 4)),
           (scalar_unary(math.asinh), any_, ()), (scalar_unary(math.degrees), any_, ())]


@pytest.mark.parametrize("k", range(len(FORWARD)))
def test_forward_mode_of_the_unary_rules(k, jit):
    # each rule read as a tangent rule, against central differences
    fun, dom, shape = FORWARD[k]
    if fun is nan_to_num_op:
        needs_numba_060(jit, "np.nan_to_num with keywords")
    x, dx = dom(*shape), any_(*shape)
    value, tangent = srcgrad.jvp(fun, jit=jit)(x, dx)
    assert value == pytest.approx(fun(x), rel=1e-14)
    # (differences at h = 1e-6 are good to about 1e-7 of the tangent's scale)
    assert tangent == pytest.approx(slope(fun, [x], [dx]), rel=1e-6, abs=1e-9)


def product(x):
    return np.prod(x)


def rows_product(x, w):
    return np.sum(np.prod(x, axis=1, keepdims=True) * w)


def test_prod_with_zeros_by_hand(jit):
    # the slope in x_i is the product of the others: with one zero, only the zero's slope
    # is not 0; with two zeros in a slice, every slope there is 0
    g = srcgrad.grad(product, jit=jit)
    np.testing.assert_array_equal(g(np.array([2.0, 0.0, 3.0])), [0.0, 6.0, 0.0])
    np.testing.assert_array_equal(g(np.array([2.0, 0.0, 0.0, 3.0])), np.zeros(4))
    np.testing.assert_array_equal(g(np.array([2.0, -1.0, 3.0])), [-3.0, 6.0, -2.0])
    x = np.array([[2.0, 0.0, 5.0], [0.0, 4.0, 0.0], [1.0, 2.0, 3.0]])
    w = np.array([[10.0], [100.0], [1000.0]])
    np.testing.assert_array_equal(
        srcgrad.grad(rows_product, jit=jit)(x, w),
        [[0.0, 100.0, 0.0], [0.0, 0.0, 0.0], [6000.0, 3000.0, 2000.0]])
    # forward mode at the zeros: the tangent is sum_i dx_i * (product of the others)
    dx = np.arange(9.0).reshape(3, 3) - 4.0
    value, tangent = srcgrad.jvp(rows_product, jit=jit)(x, w, dx)
    assert value == rows_product(x, w)
    assert tangent == pytest.approx(slope(lambda x: rows_product(x, w), [x], [dx]), rel=1e-8)


def prod_of_tuple_axes(x):
    return np.sum(np.prod(x, axis=(0, 2)) ** 2)


def test_prod_over_several_axes():
    # as Python: numba's np.prod takes one axis
    x = np.random.default_rng(4).uniform(-2.0, 2.0, (2, 3, 4))
    x[0, 1, 2] = 0.0
    g = srcgrad.grad(prod_of_tuple_axes, jit=False)(x)
    for idx in [(0, 1, 2), (1, 1, 0), (0, 0, 3)]:
        e = np.zeros_like(x)
        e[idx] = 1.0
        assert g[idx] == pytest.approx(slope(prod_of_tuple_axes, [x], [e]), rel=1e-7, abs=1e-9)


def test_prod_hvp_with_a_zero(jit):
    # the hvp goes through the slope's own tangent, against differences of grad
    rng = np.random.default_rng(5)
    x, dx = rng.uniform(-2.0, 2.0, (3, 4)), rng.standard_normal((3, 4))
    x[1, 2] = 0.0
    grad, h = srcgrad.grad(prod_axes, jit=False), 1e-6  # (the reference: its Python form)
    np.testing.assert_allclose(srcgrad.hvp(prod_axes, jit=jit)(x, dx),
                               (grad(x + h * dx) - grad(x - h * dx)) / (2 * h),
                               rtol=1e-5, atol=1e-6)


nan_to_num_sum = weighted(np.nan_to_num)


def nan_to_num_keywords(x, w):
    return np.sum(np.nan_to_num(x, copy=True, nan=5.0, posinf=7.0, neginf=-7.0) * w)


def nan_to_num_in_place(x, w):
    return np.sum(np.nan_to_num(x * 1.0, copy=False) * w)


def test_nan_to_num_at_nan_and_inf(jit):
    # the gradient passes where x is finite; replaced entries are constants
    needs_numba_060(jit, "np.nan_to_num with keywords")
    x = np.array([1.5, np.nan, np.inf, -np.inf, -2.0])
    w = np.array([1.0, 2.0, 0.5, 0.25, 5.0])   # (no overflow of the default posinf * w)
    for fun in (nan_to_num_sum, nan_to_num_keywords):
        np.testing.assert_array_equal(srcgrad.grad(fun, jit=jit)(x, w), [1.0, 0, 0, 0, 5.0])
    value, tangent = srcgrad.jvp(nan_to_num_keywords, jit=jit)(x, w, np.ones(5))
    assert (value, tangent) == (1.5 + 10.0 + 3.5 - 1.75 - 10.0, 6.0)
    with pytest.raises(srcgrad.SrcgradError, match="copy=False"):
        srcgrad.grad(nan_to_num_in_place, jit=jit)(x, w)


abs_sum, fabs_sum = weighted(np.abs), weighted(np.fabs)


def test_fabs_agrees_with_abs_at_zero(jit):
    # d|x| is sign(x): 0 at 0, as in JAX, for np.abs, np.fabs and math.fabs alike
    x, w = np.array([-2.0, 0.0, 3.0]), np.ones(3)
    for fun in (abs_sum, fabs_sum):
        np.testing.assert_array_equal(srcgrad.grad(fun, jit=jit)(x, w), [-1.0, 0.0, 1.0])
    assert srcgrad.grad(scalar_unary(math.fabs), jit=jit)(0.0) == 0.0


copysign_sum = binary(np.copysign)


def test_copysign_and_logaddexp2_by_hand(jit):
    # copysign(a, b) = |a| * (b's sign, -0.0 negative): slope sign(a) * that in a, 0 in b
    a, b = np.array([-2.0, 2.0, 2.0, 0.0]), np.array([3.0, -0.0, 0.0, -1.0])
    da, db = srcgrad.grad(copysign_sum, wrt=(0, 1), jit=jit)(a, b)
    np.testing.assert_array_equal(da, 1.3 * np.array([-1.0, -1.0, 1.0, 0.0]))
    np.testing.assert_array_equal(db, np.zeros(4))
    # logaddexp2(a, a) = a + 1: slope 1/2 in each; logaddexp2(a, b) -> b as b - a grows
    da, db = srcgrad.grad(binary(np.logaddexp2), wrt=(0, 1), jit=jit)(
        np.array([1.0, 0.0]), np.array([1.0, 60.0]))
    np.testing.assert_allclose(da, 1.3 * np.array([0.5, 2.0 ** -60]), rtol=1e-12)
    np.testing.assert_allclose(db, 1.3 * np.array([0.5, 1.0]), rtol=1e-12)
    # forward mode against differences
    rng = np.random.default_rng(6)
    args = [rng.uniform(-2.0, 2.0, (3, 4)), rng.uniform(-2.0, 2.0, 4)]
    tangents = (rng.standard_normal((3, 4)), rng.standard_normal(4))
    for fun in (binary(np.logaddexp2), copysign_sum):
        tangent = srcgrad.jvp(fun, wrt=(0, 1), jit=jit)(*args, tangents)[1]
        assert tangent == pytest.approx(slope(fun, args, tangents), rel=1e-7)


def clip_sum(x, lo, hi):
    return np.sum(np.clip(x, lo, hi))


def clip_new_names(x, lo, hi):
    return np.sum(np.clip(x, min=lo, max=hi))


def test_clip_bounds_by_hand(jit):
    # the gradient goes to whichever of x, lo and hi the result is; where lo > hi
    # (column 2), np.clip gives hi
    x = np.array([[-1.0, 0.2, 2.0], [0.5, -0.7, 0.2]])
    lo, hi = np.array([-0.5, 0.0, 1.0]), np.array([[1.0], [0.3]])
    dx, dlo, dhi = srcgrad.grad(clip_sum, wrt=(0, 1, 2), jit=jit)(x, lo, hi)
    np.testing.assert_array_equal(dx, [[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(dlo, [1.0, 1.0, 0.0])
    np.testing.assert_array_equal(dhi, [[1.0], [2.0]])
    # forward mode, with the bounds varying too
    tangents = (np.ones((2, 3)), np.full(3, 10.0), np.full((2, 1), 100.0))
    tangent = srcgrad.jvp(clip_sum, wrt=(0, 1, 2), jit=jit)(x, lo, hi, tangents)[1]
    assert tangent == 1.0 + 20.0 + 300.0
    # without a lower bound, and as a method without an upper one
    x, hi = x[:, :2], np.array([[0.1], [0.6]])
    tangents = (np.arange(4.0).reshape(2, 2) - 1.5, np.array([[2.0], [-3.0]]))
    for fun in (clip_no_lower, clip_no_upper):
        tangent = srcgrad.jvp(fun, wrt=(0, 1), jit=jit)(x, hi, tangents)[1]
        assert tangent == pytest.approx(slope(fun, [x, hi], tangents), rel=1e-7)
    # NumPy 2's keyword names are refused (numba has no such form either)
    with pytest.raises(srcgrad.SrcgradError, match="'min'"):
        srcgrad.grad(clip_new_names, jit=jit)(x, lo, hi)


def extremes(x):
    return 3.0 * max(x[0] * 2, x[1] ** 2, x[2], 0.5) + 5.0 * min([x[0], -x[1], x[2] * 3]) + \
        7.0 * max((x[1],))


def extremes_in_a_loop(x, y):
    s = 0.0
    for i in range(3):
        s += min(x[i], y[i], 1.0) * max(x[i] * y[i], 0.0, y[i] - 1)
    return s


def test_max_and_min_of_several_items(jit):
    # max(a, b, c) and max([a, b, c]) compare as Python does, pair by pair
    x = np.array([0.7, -1.3, 2.1])
    # the max is x[2], the min x[0], the max of one item x[1]
    np.testing.assert_allclose(srcgrad.grad(extremes, jit=jit)(x), [5.0, 7.0, 3.0])
    value, slope = srcgrad.jvp(extremes, jit=jit)(x, np.array([1.0, 10.0, 100.0]))
    assert (value, slope) == (pytest.approx(extremes(x)), pytest.approx(5.0 + 70.0 + 300.0))
    args = (x, np.array([0.3, 0.9, -0.4]))
    assert_grad(extremes_in_a_loop,
                srcgrad.grad(extremes_in_a_loop, wrt=(0, 1), jit=jit)(*args), args, [0, 1])


def products(x):
    return math.prod([x[0], x[1] * 2, 3.0]) + math.prod((x[2], x[0]), start=x[1]) + \
        math.prod([])


def test_math_prod_of_a_display(jit):
    # 6 x0 x1 + x0 x1 x2 + 1
    x = np.array([0.7, -1.3, 2.1])
    np.testing.assert_allclose(srcgrad.grad(products, jit=jit)(x),
                               [6 * x[1] + x[1] * x[2], 6 * x[0] + x[0] * x[2], x[0] * x[1]])
