"""np.average (srcgrad/rules/averages.py): the gradients of a and of the weights against
central differences (grad and jvp, compiled and as Python; along an axis, keepdims, 1-D
weights along an axis of a larger a, returned=True), by hand, and what is refused (weights
of another shape, a returned= that is not a constant)."""

import numpy as np
import pytest
from sweep import check, check_hvp, check_jvp, domains, parametrize

import srcgrad
from srcgrad.rules.averages import gather_weights, spread_weights, weighted_mean

any_, pos, unit, distinct = domains(53)


def plain(a):
    return np.average(a) ** 2


def rows(a):
    return np.sum(np.average(a, axis=1) ** 2)


def weighted(a, w):
    return np.average(a, weights=w) ** 2


def weighted_columns(a, w, v):
    # v: 1-D weights along an axis, which NumPy broadcasts over the others
    return np.sum(np.sin(np.average(a, axis=0, weights=w, keepdims=True)) * a) + \
        np.sum(np.average(a, axis=1, weights=v) ** 2) + \
        np.sum(np.cos(np.average(a, axis=-2, weights=v[:3], keepdims=True)) * a) + \
        np.sum(np.average(a.reshape(3, 2, 2), axis=1, weights=v[1:3]) ** 3)


def returned(a, w, v):
    # the sums of the weights: of a's shape, 1-D along an axis, none (a's count), by
    # position, unpacked and indexed
    avg, total = np.average(a, weights=w, returned=True)
    rows = np.average(a, 1, v, True)
    cols, count = np.average(a, axis=0, returned=True, keepdims=True)
    return avg * total ** 2 + np.sum(np.sin(rows[0]) * rows[1] ** 2) + np.sum(cols * count * a)


CASES = [
    ("average", (np.average, weighted_mean), plain, (any_(3, 4),), [0], True),
    ("average_axis", (np.average, weighted_mean), rows, (any_(3, 4),), [0], True),
    ("average_weights", (np.average, weighted_mean), weighted, (any_(5), pos(5)), [0, 1], True),
    ("average_weights_axis", (np.average, weighted_mean, spread_weights, gather_weights),
     weighted_columns,
     (any_(3, 4), pos(3, 4), pos(4)), [0, 1, 2], True),
    ("average_returned", (np.average, weighted_mean, spread_weights), returned,
     (any_(3, 4), pos(3, 4), pos(4)), [0, 1, 2], True),
]


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


@parametrize(CASES)
def test_jvp_against_differences(case, jit):
    check_jvp(case, jit, 11)


@parametrize(CASES)
def test_hvp_against_differences_of_the_gradient(case, jit):
    check_hvp(case, jit)


def average_of(a, w):
    return np.average(a, weights=w)


def test_by_hand(jit):
    # y = (1 * 3 + 3 * 5) / 4 = 4.5: dy/da = w / 4, dy/dw = (a - 4.5) / 4
    da, dw = srcgrad.grad(average_of, wrt=(0, 1), jit=jit)(np.array([3.0, 5.0]),
                                                          np.array([1.0, 3.0]))
    np.testing.assert_allclose(da, [0.25, 0.75])
    np.testing.assert_allclose(dw, [-0.375, 0.125])


def one_d_weights(a, w):
    return np.sum(np.average(a, axis=1, weights=w))


def test_one_d_weights_by_hand(jit):
    # y_i = (a_i0 + 3 a_i1) / 4 = [4.5, 1]: dy/da = w / 4 in every row,
    # d sum(y)/dw_j = sum_i (a_ij - y_i) / 4
    da, dw = srcgrad.grad(one_d_weights, wrt=(0, 1), jit=jit)(
        np.array([[3.0, 5.0], [1.0, 1.0]]), np.array([1.0, 3.0]))
    np.testing.assert_allclose(da, [[0.25, 0.75], [0.25, 0.75]])
    np.testing.assert_allclose(dw, [-0.375, 0.125])


def average_and_sum(a, w):
    avg, total = np.average(a, weights=w, returned=True)
    return avg * total ** 2


def count_of(a):
    return np.sum(np.average(a, axis=1, returned=True)[1] * a[:, 0])


def test_returned_by_hand(jit):
    # avg = (1 * 3 + 3 * 5) / 4 = 4.5, total = 4, f = avg total^2: df/da = total w,
    # df/dw = total (a - avg) + 2 avg total; without weights the sum is the count, 2
    a, w = np.array([3.0, 5.0]), np.array([1.0, 3.0])
    da, dw = srcgrad.grad(average_and_sum, wrt=(0, 1), jit=jit)(a, w)
    np.testing.assert_allclose(da, [4.0, 12.0], rtol=1e-15)
    np.testing.assert_allclose(dw, [30.0, 38.0], rtol=1e-15)
    value, t = srcgrad.jvp(average_and_sum, wrt=(0, 1), jit=jit)(
        a, w, (np.array([1.0, 0.0]), np.array([0.0, 1.0])))
    assert value == pytest.approx(72.0) and t == pytest.approx(4.0 + 38.0, rel=1e-15)
    np.testing.assert_allclose(srcgrad.grad(count_of, jit=jit)(np.ones((3, 2))),
                               [[2.0, 0.0]] * 3)


def along_two_axes(a, w):
    return np.sum(np.average(a, axis=(1, 2), weights=w))


def with_sum(a, returned):
    return np.average(a, weights=a * a, returned=returned)[1]


def test_refused():
    a, w = np.ones((2, 3, 4)), np.ones((3, 4))
    try:
        along_two_axes(a, w)
    except TypeError:   # NumPy < 2 takes 1-D weights alone: the primal raises, as NumPy
        with pytest.raises(TypeError, match="1D weights expected"):
            srcgrad.grad(along_two_axes, wrt=(0, 1), jit=False)(a, w)
    else:
        with pytest.raises(srcgrad.MissingRule, match="weights of another shape"):
            srcgrad.grad(along_two_axes, wrt=(0, 1), jit=False)(a, w)
    with pytest.raises(srcgrad.SrcgradError, match="returned=...\\) is differentiated with "
                                                   "a constant True or False alone") as info:
        srcgrad.grad(with_sum, jit=False)(np.ones(3), True)
    assert "test_rules_average.py:" in str(info.value)
    assert "return np.average(a, weights=a * a, returned=returned)[1]" in str(info.value)
