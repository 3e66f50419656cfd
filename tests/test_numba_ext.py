"""numba_ext: the NumPy forms it adds compile under numba and agree with NumPy, and the
forms numba already has still compile (its overloads decline them).

Each compiled wrapper computes many forms at once and is compiled once per argument
type, because numba's compile time, not the checks, is what costs here. NumPy's
answer is the wrapper's own Python function (``.py_func``).
"""

import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

import srcgrad.numba_ext  # noqa: F401  (registers the overloads under test)

CASES = [((3,), 0), ((3,), -1), ((2, 3), 0), ((2, 3), -1), ((2, 3), 1),
         ((2, 1, 4), 0), ((2, 1, 4), -1), ((2, 1, 4), 1)]


def data(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def assert_same(got, want):
    """Same values, shapes and (for arrays) dtypes; NaNs compare equal."""
    for g, w in zip(got, want, strict=True):
        assert np.shape(g) == np.shape(w)
        if isinstance(w, np.ndarray):
            assert isinstance(g, np.ndarray) and g.dtype == w.dtype, (g, w)
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@njit
def along(a, axis):
    return (np.sum(a, axis, keepdims=False), np.mean(a, axis), np.prod(a, axis),
            np.max(a, axis), np.min(a, axis=axis), np.var(a, axis), np.std(a, axis=axis))


@njit
def along_kept(a, axis):
    return (np.sum(a, axis, keepdims=True), np.mean(a, axis, keepdims=True),
            np.prod(a, axis, keepdims=True), np.amax(a, axis, keepdims=True),
            np.amin(a, axis=axis, keepdims=True), np.var(a, axis, ddof=1, keepdims=True),
            np.std(a, axis=axis, keepdims=True))


@njit
def whole_kept(a):
    return (np.sum(a, keepdims=True), np.mean(a, axis=None, keepdims=True),
            np.max(a, keepdims=True), np.min(a, keepdims=False), np.var(a, ddof=1),
            np.std(a, ddof=0, keepdims=True))


@njit
def methods(a, axis):
    return (a.sum(axis=axis, keepdims=True), a.mean(axis=axis), a.prod(axis),
            a.max(axis=axis), a.min(axis=axis, keepdims=True), a.var(axis=axis, ddof=1),
            a.std(axis=axis), a.squeeze(axis=0),
            a.sum(), a.sum(axis), a.mean(), a.max(), a.min(), a.prod(), a.var(), a.std())


@njit
def native(a):
    return (np.mean(a), np.sum(a, axis=0), np.sum(a, 1), np.sum(a, axis=(0, 1)), np.max(a),
            np.amin(a), np.prod(a), np.var(a), np.std(a), np.clip(a, -0.5, 0.5),
            np.mean(a, axis=1), np.max(a, axis=-1, keepdims=True))


@pytest.mark.parametrize(("shape", "axis"), CASES)
@pytest.mark.parametrize("fun", [along, along_kept], ids=["keepdims=False", "keepdims=True"])
def test_reduction_along_axis(fun, shape, axis):
    x = data(shape)
    assert_same(fun(x, axis), fun.py_func(x, axis))


@pytest.mark.parametrize("shape", [(3,), (2, 1, 4)])
def test_reduction_over_all_axes(shape):
    x = data(shape)
    assert_same(whole_kept(x), whole_kept.py_func(x))


def test_reduction_dtypes_follow_numpy():
    x = np.arange(12, dtype=np.int32).reshape(3, 4) - 5
    assert_same(along(x, 1), along.py_func(x, 1))


def test_reduction_propagates_nan():
    x = data((2, 3))
    x[1, 1] = np.nan
    assert_same(along(x, 1), along.py_func(x, 1))
    assert_same(along(x, 0), along.py_func(x, 0))


def test_reduction_axis_out_of_bounds():
    with pytest.raises(np.exceptions.AxisError):
        along_kept(data((2, 3)), 2)


@pytest.mark.parametrize("shape", [(1, 3), (1, 1, 4)])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_array_methods(shape, axis):
    x = data(shape)
    assert_same(methods(x, axis), methods.py_func(x, axis))


def test_forms_numba_has_still_compile():
    x = data((2, 3))
    assert_same(native(x), native.py_func(x))


def test_keepdims_must_be_a_constant():
    with pytest.raises(TypingError, match="keepdims must be a compile-time constant"):
        njit(lambda a, k: np.mean(a, axis=0, keepdims=k))(data((2, 3)), True)


# ---- np.squeeze ----

@njit
def squeeze(a, axis):
    return np.squeeze(a, axis), a.squeeze(axis)


@pytest.mark.parametrize(("x", "axis"), [
    (data((2, 1, 4)), 1), (data((2, 1, 4)), -2), (data((1, 3)), 0), (data((3, 1)), -1),
    (data((1,)), 0), (data((2, 1, 4))[:, :, ::2], 1)])
def test_squeeze_axis(x, axis):
    assert_same(squeeze(x, axis), squeeze.py_func(x, axis))


def test_squeeze_rejects_an_axis_longer_than_one():
    with pytest.raises(ValueError, match="size not equal to one"):
        squeeze(data((2, 3)), 1)


def test_squeeze_without_axis():
    x = np.array(2.0)
    assert njit(lambda a: np.squeeze(a))(x) == 2.0
    with pytest.raises(TypingError, match="pass axis="):
        njit(lambda a: np.squeeze(a))(data((1, 3)))


# ---- np.clip of a scalar ----

@njit
def clip(v):
    return np.clip(v, -0.5, 0.5), np.clip(v, None, 0.5), np.clip(v, -0.5, None)


@pytest.mark.parametrize("v", [0.7, -0.7, 0.25, np.nan])
def test_clip_scalar(v):
    assert_same(clip(v), clip.py_func(v))


def test_clip_scalar_int_and_array_bounds():
    assert njit(lambda v: np.clip(v, 0, 1))(3) == 1
    lo = np.array([0.0, 0.5, 1.0])
    clip_arr = njit(lambda v, lo: np.clip(v, lo, 0.75))
    assert_same([clip_arr(0.6, lo)], [np.clip(0.6, lo, 0.75)])
