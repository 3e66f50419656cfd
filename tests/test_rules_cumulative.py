"""Cumulative products, differences, sorting and selection (issue 20): the rule sweep's
cases (`CASES`), values by hand, forward mode against central differences, and the
forms that are refused."""

import numpy as np
import pytest
from fd import assert_grad, slope
from marks import compiles, needs_numba_060
from sweep import check, domains, parametrize

import srcgrad
from srcgrad.rules.cumulative import unwrapped

any_, pos, unit, distinct = domains(20)
W = np.arange(12.0).reshape(3, 4)


def cumprod_op(a):
    # flat, along each axis, and as a method; `a` holds a zero
    return np.sum(np.cumprod(a) ** 2) + np.sum(np.sin(np.cumprod(a, axis=1)) * W) \
        + np.sum(np.cumprod(a, axis=0) ** 3) + np.sum(a.cumprod() * np.arange(12.0))


def diff_op(a):
    # n, axis, and prepend / append values that are a number and an array
    return np.sum(np.diff(a) * W[:, :3]) + np.sum(np.diff(a, 2, axis=0) ** 3) \
        + np.sum(np.diff(a, prepend=1.5, append=W[:, :2]) ** 2) \
        + np.sum(np.sin(np.diff(a, n=2, axis=0, prepend=W[:1])))


def gradient_op(a, v):
    # one axis of a matrix, a vector, with and without a spacing
    return np.sum(np.gradient(a, axis=1) * W) + np.sum(np.gradient(a, 0.5, axis=0) ** 3) \
        + np.sum(np.gradient(v) ** 2) + np.sum(np.sin(np.gradient(v, 2.0)))


def gradient_axes_op(a, b):
    # several axes (a tuple of arrays): every axis, a tuple of axes, one spacing per
    # axis, edge_order 2 along one axis and several
    gx, gy = np.gradient(a)
    p, q = np.gradient(a, 0.5, 2.0)
    r, t = np.gradient(b, axis=(2, 0))
    u = np.gradient(a, 0.5, axis=-1, edge_order=2)
    c, d, e = np.gradient(b, 1.5, edge_order=2)
    return np.sum(gx * W) + np.sum(gy ** 3) + np.sum(p * q) + np.sum(r ** 2) + \
        np.sum(np.sin(t)) + np.sum(u * W ** 2) + np.sum(c * d * e)


def gradient_coordinates_op(a):
    # coordinates as spacing, edge orders 2 and 1
    u = np.gradient(a, np.array([0.0, 0.5, 2.0, 2.25]), axis=-1, edge_order=2)
    v, w = np.gradient(a, np.array([0.0, 1.0, 3.0]), 0.5)
    return np.sum(u * W ** 2) + np.sum(v * w)


def sort_op(a):
    return np.sum(np.sort(a) * W) + np.sum(np.sort(a, axis=0) ** 3) \
        + np.sum(np.sort(a, axis=None) * np.arange(12.0)) \
        + np.sum(np.sin(np.sort(a, axis=-1, kind="stable")) * W)


def sort_stable_op(a):   # (NumPy >= 2 has the keyword)
    return np.sum(np.sort(a, stable=True) ** 2 * W)


# np.partition arranges the entries either side of kth as its algorithm goes (NumPy's
# and numba's differ): weights equal on each side make the value independent of that
KTH2 = np.array([1.0, 1.0, 5.0, -2.0])


def partition_op(a):
    return np.sum(np.partition(a, 2) * KTH2) + np.sum(np.partition(a, 2, axis=-1)[:, 2] ** 3) \
        + np.sum(np.partition(a, 0, axis=0)[0] ** 2) + np.partition(a, 7, axis=None)[7]


def select_op(a, b):
    # a list and a tuple of choices, with a default (a constant, and a differentiated
    # number as a keyword) and without
    return np.sum(np.select([a > 0.5, a < -0.5], [a ** 2, b], 3.0) ** 2) \
        + np.sum(np.select((b > 0.0,), (np.sin(a),)) * W) \
        + np.sum(np.select([a > 0.0], [b], default=np.mean(a * b)) ** 2)


def select_default_op(a, b):
    # an array as the default: numba's own np.select takes a number (rules/sorting.py's
    # form), of the choices' shape and of a row's
    return np.sum(np.select([a > 0.0, a < -1.0], [a, np.sin(b)], np.cos(b)) ** 2) \
        + np.sum(np.select([a > 1.0], [a], np.sin(b[0])) * W)


def select_broadcast_op(a, b):
    # choices of different shapes (Python only: numba's lists hold alike arrays)
    return np.sum(np.select([a > 0.0, a < -1.0], [a, b], default=np.cos(b)) ** 2) \
        + np.sum(np.select([a > 1.0], [a], np.sin(b)) * W)


def with_zero(a):
    a = a.copy()
    a[1, 2] = 0.0
    return a


def _unwrapped(x):
    return np.sum(np.unwrap(x * 3.0) ** 2) + \
        np.sum(np.unwrap(np.outer(x, x) * 3.0, axis=0, period=4.0) * W[:, :1]) + \
        np.sum(np.unwrap(x, discont=4.0) ** 3)



CASES = [
    ("cumprod", (np.cumprod,), cumprod_op, (with_zero(any_(3, 4)),), [0], True),
    ("diff", (np.diff,), diff_op, (any_(3, 4),), [0], True),
    ("gradient", (np.gradient,), gradient_op, (any_(3, 4), any_(5)), [0, 1], True),
    ("gradient-axes", (np.gradient,), gradient_axes_op, (any_(3, 4), any_(3, 3, 4)), [0, 1],
     True),
    ("gradient-coordinates", (np.gradient,), gradient_coordinates_op, (any_(3, 4),), [0],
     True),
    ("sort", (np.sort,), sort_op, (distinct(3, 4),), [0], True),
    ("partition", (np.partition,), partition_op, (distinct(3, 4),), [0], True),
    ("select", (np.select,), select_op, (any_(3, 4), any_(3, 4)), [0, 1], True),
    ("select-default", (np.select,), select_default_op, (any_(3, 4), any_(3, 4)), [0, 1],
     True),
    ("select-broadcast", (np.select,), select_broadcast_op, (any_(3, 4), any_(4)), [0, 1],
     False),
    ("unwrap", (np.unwrap, unwrapped), _unwrapped, (any_(3),), [0], True),
]
if np.lib.NumpyVersion(np.__version__) >= "2.0.0":   # np.sort(..., stable=True)
    CASES.append(("sort-stable", (np.sort,), sort_stable_op, (distinct(3, 4),), [0], False))


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


def weighted_cumprod(x, w):
    return np.sum(np.cumprod(x) * w)


def test_cumprod_by_hand_and_forward(jit, rng):
    # y = (x0, x0 x1, x0 x1 x2) at x = (2, 0, 3): dy1 = (x1, x0, 0) = (0, 2, 0) and
    # dy2 = (x1 x2, x0 x2, x0 x1) = (0, 6, 0); with w = (1, 10, 100): (1, 620, 0)
    x, w = np.array([2.0, 0.0, 3.0]), np.array([1.0, 10.0, 100.0])
    np.testing.assert_allclose(srcgrad.grad(weighted_cumprod, jit=jit)(x, w), [1.0, 620.0, 0.0])
    # forward mode, at a point with a zero: dy_i = dy_{i-1} x_i + y_{i-1} dx_i
    a, da = with_zero(rng.standard_normal((3, 4))), rng.standard_normal((3, 4))
    got = srcgrad.jvp(cumprod_op, jit=jit)(a, da)[1]
    assert got == pytest.approx(slope(cumprod_op, [a], [da]), rel=1e-6)
    # the hvp differentiates the adjoint's helper along x (cumprod_grad_tangent)
    grad = srcgrad.grad(cumprod_op, jit=False)  # (the reference: its Python form)
    np.testing.assert_allclose(srcgrad.hvp(cumprod_op, jit=jit)(a, da),
                               slope(grad, [a], [da]), rtol=1e-5, atol=1e-6)


def squared_differences(x):
    return np.sum(np.diff(x) ** 2)


def test_diff_by_hand_and_forward(jit, rng):
    # x = t^2 at t = 0..3: d = (1, 3, 5), and d/dx sum(d^2) = 2 (-d0, d0 - d1, d1 - d2, d2)
    x = np.array([0.0, 1.0, 4.0, 9.0])
    np.testing.assert_allclose(srcgrad.grad(squared_differences, jit=jit)(x),
                               [-2.0, -4.0, -4.0, 10.0])
    a, da = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    got = srcgrad.jvp(diff_op, jit=jit)(a, da)[1]
    assert got == pytest.approx(slope(diff_op, [a], [da]), rel=1e-6)


def weighted_gradient(v, w):
    return np.sum(np.gradient(v, 0.5) * w)


def test_gradient_by_hand_and_forward(jit, rng):
    # y = ((v1 - v0) / h, (v2 - v0) / 2h, (v2 - v1) / h) with h = 1/2: with w = (1, 10,
    # 100), dv0 = -2 - 10, dv1 = 2 - 200, dv2 = 10 + 200
    v, w = np.array([1.0, 4.0, 9.0]), np.array([1.0, 10.0, 100.0])
    np.testing.assert_allclose(srcgrad.grad(weighted_gradient, jit=jit)(v, w),
                               [-12.0, -198.0, 210.0])
    a, v, da, dv = (rng.standard_normal((3, 4)), rng.standard_normal(5),
                    rng.standard_normal((3, 4)), rng.standard_normal(5))
    got = srcgrad.jvp(gradient_op, wrt=(0, 1), jit=jit)(a, v, (da, dv))[1]
    assert got == pytest.approx(slope(gradient_op, [a, v], [da, dv]), rel=1e-6)


def gradient_summed(a):
    gx, gy = np.gradient(a)
    return np.sum(gx) + np.sum(gy)


def gradient_at(x, t):
    return np.sum(np.gradient(x, t) ** 2)


def gradient_second_order(x):
    return np.sum(np.gradient(x, edge_order=2) ** 2)


def test_gradient_forms_by_hand(jit):
    # each is sum(y^2) with y = D f (D the stencil), so the gradient is 2 D^T y.
    # edge_order 2, h = 1: D's rows (-3, 4, -1) / 2, (-1, 0, 1) / 2, (1, -4, 3) / 2, and
    # f = (1, -2, 5) gives y = (-8, 2, 12), 2 D^T y = (34, -80, 46)
    f = np.array([1.0, -2.0, 5.0])
    np.testing.assert_allclose(srcgrad.grad(gradient_second_order, jit=jit)(f),
                               [34.0, -80.0, 46.0], rtol=1e-14)
    # sum over both axes of a 2 x 3 matrix: the column sums of D, (-1, 1) along axis 0
    # and (-3/2, 0, 3/2) along axis 1, added
    np.testing.assert_allclose(srcgrad.grad(gradient_summed, jit=jit)(np.ones((2, 3))),
                               [[-3.5, -2.0, -0.5], [0.5, 2.0, 3.5]], rtol=1e-14)
    if jit:
        return   # coordinates as spacing run as Python (test below)
    # coordinates (0, 1, 3): rows (-1, 1, 0), (-2/3, 1/2, 1/6), (0, -1/2, 1/2);
    # y = (-3, -5/6, 7/2), 2 D^T y = (64/9, -31/3, 29/9)
    np.testing.assert_allclose(
        srcgrad.grad(gradient_at, wrt=0, jit=False)(f, np.array([0.0, 1.0, 3.0])),
        [64.0 / 9.0, -31.0 / 3.0, 29.0 / 9.0], rtol=1e-14)


def test_gradient_axes_forward(rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 3, 4))
    da, db = rng.standard_normal((3, 4)), rng.standard_normal((3, 3, 4))
    got = srcgrad.jvp(gradient_axes_op, wrt=(0, 1), jit=False)(a, b, (da, db))[1]
    assert got == pytest.approx(slope(gradient_axes_op, [a, b], [da, db]), rel=1e-6)
    got = srcgrad.jvp(gradient_coordinates_op, jit=False)(a, da)[1]
    assert got == pytest.approx(slope(gradient_coordinates_op, [a], [da]), rel=1e-6)


def gradient_repeated(a):
    return np.sum(np.gradient(a, axis=(0, -2))[0])


@compiles
def test_gradient_errors_are_numpys_compiled_too():
    # coordinates of another length than the axis
    with pytest.raises(ValueError, match="distances must match"):
        np.gradient(np.ones(4), np.arange(3.0))
    with pytest.raises(ValueError, match="distances must match"):
        srcgrad.grad(gradient_at, jit=True)(np.ones(4), np.arange(3.0))
    # a repeated axis is NumPy's ValueError, compiled too
    with pytest.raises(ValueError, match="repeated axis"):
        np.gradient(np.ones((2, 3)), axis=(0, -2))
    with pytest.raises(ValueError, match="repeated axis"):
        srcgrad.grad(gradient_repeated, jit=True)(np.ones((2, 3)))


def weighted_sort(x, w):
    return np.sum(np.sort(x) * w)


def test_sort_by_hand_ties_and_forward(jit, rng):
    # sort([3, 1, 2]) = [1, 2, 3]: x0 is y2, x1 is y0, x2 is y1
    w = np.array([1.0, 10.0, 100.0])
    g = srcgrad.grad(weighted_sort, jit=jit)
    np.testing.assert_allclose(g(np.array([3.0, 1.0, 2.0]), w), [100.0, 1.0, 10.0])
    # ties follow NumPy's stable argsort of x, [2, 0, 1]: the first 1 is y1, the second y2
    np.testing.assert_allclose(g(np.array([1.0, 1.0, 0.0]), w), [10.0, 100.0, 1.0])
    a, da = distinct(3, 4), rng.standard_normal((3, 4))
    got = srcgrad.jvp(sort_op, jit=jit)(a, da)[1]
    assert got == pytest.approx(slope(sort_op, [a], [da]), rel=1e-6)


def second_smallest(x):
    return np.partition(x, 1)[1] * 10.0 + np.sum(np.partition(x, 1)[2:])


def test_partition_by_hand_and_forward(jit, rng):
    # the second smallest of [3, 1, 2, 0] is x1; x0 and x2 are the ones above it
    np.testing.assert_allclose(
        srcgrad.grad(second_smallest, jit=jit)(np.array([3.0, 1.0, 2.0, 0.0])),
        [1.0, 10.0, 1.0, 0.0])
    a, da = distinct(3, 4), rng.standard_normal((3, 4))
    got = srcgrad.jvp(partition_op, jit=jit)(a, da)[1]
    assert got == pytest.approx(slope(partition_op, [a], [da]), rel=1e-6)


def clipped_select(x, y):
    return np.sum(np.select([x > 1.0, x > 0.0], [y, 2.0 * x], default=7.0))


def test_select_by_hand_and_forward(jit, rng):
    # entry 0: x > 1 takes y; entry 1: x > 0 only takes 2x; entry 2: the default
    x, y = np.array([2.0, 0.5, -1.0]), np.array([5.0, 6.0, 7.0])
    dx, dy = srcgrad.grad(clipped_select, wrt=(0, 1), jit=jit)(x, y)
    np.testing.assert_allclose(dx, [0.0, 2.0, 0.0])
    np.testing.assert_allclose(dy, [1.0, 0.0, 0.0])
    a, b, da, db = (rng.standard_normal((3, 4)) for _ in range(4))
    got = srcgrad.jvp(select_op, wrt=(0, 1), jit=jit)(a, b, (da, db))[1]
    assert got == pytest.approx(slope(select_op, [a, b], [da, db]), rel=1e-6)
    # a default other than 0 is a constant: its tangent is 0
    got = srcgrad.jvp(clipped_select, wrt=(0, 1), jit=jit)(x, y, (da[0, :3], db[0, :3]))[1]
    assert got == pytest.approx(slope(clipped_select, [x, y], [da[0, :3], db[0, :3]]))


def select_or(x, d):
    return np.sum(np.select([x > 0.0], [x], default=d) ** 2)


def test_select_default_by_hand(jit, rng):
    # the default is taken where no condition holds (entries 1 and 3): its gradient is
    # 2 d there, summed for a number d
    x = np.array([1.0, -2.0, 4.0, -3.0])
    dx, dd = srcgrad.grad(select_or, wrt=(0, 1), jit=jit)(x, 1.5)
    np.testing.assert_allclose(dx, [2.0, 0.0, 8.0, 0.0])
    assert dd == pytest.approx(6.0)
    got = srcgrad.jvp(select_or, wrt=(0, 1), jit=jit)(x, 1.5, (x[::-1].copy(), 0.5))[1]
    assert got == pytest.approx(slope(select_or, [x, 1.5], [x[::-1], 0.5]))
    if not jit:   # an array default (numba's np.select takes a number)
        d = np.array([0.5, 1.5, 2.0, 2.5])
        np.testing.assert_allclose(srcgrad.grad(select_or, wrt=1, jit=jit)(x, d),
                                   [0.0, 3.0, 0.0, 5.0])
        dd = rng.standard_normal(4)
        got = srcgrad.jvp(select_or, wrt=1, jit=jit)(x, d, dd)[1]
        assert got == pytest.approx(slope(select_or, [x, d], [x * 0.0, dd]))


def diff_after(x, p):
    return np.sum(np.diff(x, prepend=p) ** 2)


def gradient_spaced(x, h):
    return np.sum(np.gradient(x, h) ** 2)


def test_a_differentiated_value_a_rule_takes_as_a_keyword_is_refused():
    # rules differentiate their positional parameters: what they take as a keyword
    # (np.diff's prepend, np.gradient's spacing) is refused
    x = np.array([1.0, -2.0, 4.0])
    for fun, args in [(diff_after, (x, np.array([0.5]))), (gradient_spaced, (x, 0.5))]:
        with pytest.raises(srcgrad.MissingRule):
            srcgrad.grad(fun, wrt=1, jit=False)(*args)
        with pytest.raises(srcgrad.MissingRule):
            srcgrad.jvp(fun, wrt=1, jit=False)(*args, args[1])


def sort_in_place(x):
    y = x * 2.0
    y.sort()
    return np.sum(y * np.arange(3.0))


def sort_by_field(x):
    return np.sum(np.sort(x, order="f"))


def test_sorting_in_place_and_by_field_are_refused():
    with pytest.raises(srcgrad.SrcgradError, match="in place"):
        srcgrad.grad(sort_in_place, jit=False)(np.array([3.0, 1.0, 2.0]))
    with pytest.raises(srcgrad.SrcgradError, match="order"):
        srcgrad.grad(sort_by_field, jit=False)(np.array([3.0, 1.0, 2.0]))


def select_by_hand(x):
    return np.sum(np.select([x < 0.0], [x * x], 3.0 * x))


def test_select_with_an_array_default_by_hand(jit):
    # x * x where x < 0, else 3x: the gradient 2x there, else 3
    g = srcgrad.grad(select_by_hand, jit=jit)(np.array([-1.0, 0.2, 2.0]))
    np.testing.assert_array_equal(g, [-2.0, 3.0, 3.0])


def sorted_rows(x):
    order = np.argsort(x, axis=1)
    columns = np.argsort(x, axis=0, kind="stable")
    return np.sum(np.take_along_axis(x, order, axis=1) * np.arange(1.0, 4.0)) + \
        np.sum(np.take_along_axis(x, columns, axis=0)[0] ** 3)


def test_take_along_axis_of_an_argsort_by_hand(jit):
    # rows sorted, weighted 1, 2, 3 by rank: each entry gets its rank's weight; and each
    # column's least entry cubed (0, 1, 2: gradients 0, 3, 12)
    x = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    g = srcgrad.grad(sorted_rows, jit=jit)(x)
    np.testing.assert_array_equal(g, [[3.0, 1.0 + 3.0, 2.0 + 12.0], [1.0 + 0.0, 3.0, 2.0]])
    y = distinct(3, 4)
    assert_grad(sorted_rows, (srcgrad.grad(sorted_rows, jit=jit)(y[:, :3]),), (y[:, :3],), [0])


def test_unwrap(jit):
    # unwrap adds whole periods, a step function of x: its derivative is the identity
    needs_numba_060(jit, "np.unwrap")
    x = np.array([0.3, -1.5, 2.0])
    got = srcgrad.grad(_unwrapped, jit=jit)(x)
    u, M = np.unwrap(3.0 * x), np.outer(x, x)
    # by hand: 6 unwrap(3x); d/dx_k of sum_ij 3 x_i x_j W_i0 = 3 (W_k0 sum x + W[:, 0] . x);
    # 3 unwrap(x)^2 (x's jumps are under 4: unwrap(x, discont=4) is x)
    hand = 6.0 * u + 3.0 * (W[:3, 0] * np.sum(x) + W[:3, 0] @ x) + 3.0 * x ** 2
    # (jumps are unwrapped in both)
    assert not np.allclose(u, 3.0 * x)
    assert not np.allclose(np.unwrap(3.0 * M, axis=0, period=4.0), 3.0 * M)
    np.testing.assert_allclose(got, hand)
    assert_grad(_unwrapped, [got], (x,), [0])
    t = np.array([1.0, -0.5, 0.25])
    assert srcgrad.jvp(_unwrapped, jit=jit)(x, t)[1] == pytest.approx(
        slope(_unwrapped, (x,), (t,)), rel=1e-6)
