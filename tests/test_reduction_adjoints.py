"""The numba forms of the reduction adjoints' common cases in loop bodies (one axis of a
sum or mean, the whole array's max or min, `like_broadcast`'s stand-in): by-hand values,
and against the NumPy forms on strided and keepdims operands."""

import marks
import numpy as np
import pytest
from numba import njit

from srcgrad.runtime.broadcasting import like_broadcast
from srcgrad.runtime.reductions import extremum_grad, mean_grad, sum_grad


@njit
def _sum_grad(dy, x, axis):
    return sum_grad(dy, x, axis)


@njit
def _mean_grad(dy, x, axis):
    return mean_grad(dy, x, axis)


@njit
def _extremum_grad(dy, y, x):
    return extremum_grad(dy, y, x)


@njit
def _like_broadcast(a, b):
    return like_broadcast(a, b)


@marks.compiles
def test_one_axis_of_a_sum_and_a_mean_by_hand():
    dy = np.array([1.0, 2.0])
    assert np.array_equal(_sum_grad(dy, np.zeros((2, 3)), 1), [[1.0] * 3, [2.0] * 3])
    assert np.array_equal(_sum_grad(dy, np.zeros((3, 2)), 0), [[1.0, 2.0]] * 3)
    assert np.array_equal(_mean_grad(dy, np.zeros((2, 4)), -1), [[0.25] * 4, [0.5] * 4])
    # the middle axis of a (2, 2, 2): dy[o, c] goes to x[o, :, c]
    dy = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert np.array_equal(_sum_grad(dy, np.zeros((2, 2, 2)), 1),
                          [[[1.0, 2.0], [1.0, 2.0]], [[3.0, 4.0], [3.0, 4.0]]])


@marks.compiles
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4)])
def test_one_axis_is_numpys_on_strided_operands(rng, shape):
    x = rng.standard_normal(shape).T   # F-ordered: a strided x
    for axis in range(-x.ndim, x.ndim):
        dy = rng.standard_normal(np.sum(x, axis=axis).shape[::-1]).T  # and a strided dy
        assert np.array_equal(_sum_grad(dy, x, axis), sum_grad(dy, x, axis))
        assert np.array_equal(_mean_grad(dy, x, axis), mean_grad(dy, x, axis))


@marks.compiles
def test_a_cotangent_of_the_wrong_size_is_refused():
    with pytest.raises(ValueError, match="does not match the shape of the reduction"):
        _sum_grad(np.zeros(3), np.zeros((4, 5)), 1)


@marks.compiles
def test_the_whole_arrays_extremum_by_hand():
    # ties share dy evenly (as in JAX); a NaN extremum matches nothing: NaN everywhere
    x = np.array([3.0, 1.0, 3.0])
    assert np.array_equal(_extremum_grad(1.5, 3.0, x), [0.75, 0.0, 0.75])
    x = np.array([[2.0, 1.0], [0.0, 2.0]]).T   # strided
    assert np.array_equal(_extremum_grad(1.0, 2.0, x), [[0.5, 0.0], [0.0, 0.5]])
    assert np.isnan(_extremum_grad(1.0, np.nan, np.array([np.nan, 1.0]))).all()


@marks.compiles
def test_like_broadcasts_shape_and_refusal():
    assert _like_broadcast(np.zeros((5, 1, 2)), np.zeros((5, 2, 2))).shape == (5, 2, 2)
    assert _like_broadcast(np.zeros(3), np.zeros((4, 1))).shape == (4, 3)
    assert _like_broadcast(2.0, np.zeros((2, 3))).shape == (2, 3)
    with pytest.raises(ValueError, match="could not be broadcast"):
        _like_broadcast(np.zeros(3), np.zeros(4))
