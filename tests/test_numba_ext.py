"""numba_ext: the NumPy forms it adds compile under numba and agree with NumPy, and the
forms numba already has still compile (its overloads decline them).

Each compiled wrapper computes many forms at once and is compiled once per argument
type, because numba's compile time, not the checks, is what costs here. NumPy's
answer is the wrapper's own Python function (``.py_func``).
"""

import numba
import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

import srcgrad.numba_ext  # noqa: F401  (registers the overloads under test)

# NumPy's own warnings for var(ddof=1) over length-1 axes, where both give NaN.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

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
def kept(a, axis):
    return (np.sum(a, axis, keepdims=True), np.amax(a, axis, keepdims=True),
            np.var(a, axis=axis, ddof=1, keepdims=True), np.mean(a, keepdims=True),
            np.std(a, ddof=1))


@njit
def vector(a, axis):
    """The rank-1 path: a reduction along the only axis is one over all of them."""
    return (np.mean(a, axis), np.max(a, axis=axis, keepdims=True), np.var(a, axis, ddof=1),
            np.sum(a, keepdims=True))


@njit
def methods(a, axis):
    return (a.mean(axis), a.max(axis=axis, keepdims=True), a.std(axis=axis, ddof=1),
            a.squeeze(axis=0), a.sum(), a.mean())


@njit
def native(a):
    return np.mean(a), np.sum(a, axis=0), np.max(a), np.clip(a, -0.5, 0.5)


# Arrays of one type (float64, rank 3, C order) wherever the form allows, so that most
# cases reuse one compiled specialisation.

@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("fun", [along, kept], ids=["keepdims=False", "keepdims=True"])
def test_reduction_along_axis(fun, axis):
    x = data((2, 1, 4))
    assert_same(fun(x, axis), fun.py_func(x, axis))


@pytest.mark.parametrize("axis", [0, -1])
def test_reduction_of_a_vector(axis):
    x = data(3)
    assert_same(vector(x, axis), vector.py_func(x, axis))


@njit
def dtypes(a, axis):
    return np.sum(a, axis, keepdims=True), np.max(a, axis), np.mean(a, axis), np.var(a)


def test_reduction_dtypes_follow_numpy():
    x = np.arange(12, dtype=np.int32).reshape(3, 4) - 5
    assert_same(dtypes(x, 1), dtypes.py_func(x, 1))


def test_reduction_propagates_nan():
    x = data((2, 1, 4))
    x[1, 0, 1] = np.nan
    assert_same(along(x, 2), along.py_func(x, 2))
    assert_same(along(x, 0), along.py_func(x, 0))


def test_reduction_axis_out_of_bounds():
    with pytest.raises(ValueError, match="out of bounds"):  # NumPy's AxisError
        kept(data((2, 1, 4)), 3)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_array_methods(axis):
    x = data((1, 3, 2))
    assert_same(methods(x, axis), methods.py_func(x, axis))


@pytest.mark.skipif(numba.version_info[:2] < (0, 60),
                    reason="numba < 0.60 types ndarray.sum itself, ignoring keepdims")
def test_sum_method_keepdims():
    x = data((2, 1, 4))
    fun = njit(lambda a, axis: a.sum(axis=axis, keepdims=True))
    assert_same([fun(x, 1)], [fun.py_func(x, 1)])


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
    (data((2, 1, 4)), 1), (data((2, 1, 4)), -2), (data((1, 1, 4)), 0),
    (data((1,)), 0), (data((2, 1, 4))[:, :, ::2], 1)])
def test_squeeze_axis(x, axis):
    assert_same(squeeze(x, axis), squeeze.py_func(x, axis))


def test_squeeze_rejects_an_axis_longer_than_one():
    with pytest.raises(ValueError, match="size not equal to one"):
        squeeze(data((2, 3)), 1)


@njit
def squeeze_any(a):
    return np.squeeze(a), a.squeeze()


@pytest.mark.parametrize("x", [np.array(2.0), data(3), data((1, 3)), data((3, 1)),
                               data((2, 1, 4))], ids=lambda x: str(np.shape(x)))
def test_squeeze_without_axis(x):
    assert_same(squeeze_any(x), squeeze_any.py_func(x))


@pytest.mark.parametrize("x", [data(1), data((2, 3)), data((1, 1, 4))],
                         ids=lambda x: str(np.shape(x)))
def test_squeeze_without_axis_needs_a_rank_known_at_compile_time(x):
    with pytest.raises(ValueError, match="pass axis="):
        squeeze_any(x)


# ---- np.clip of a scalar ----

@njit
def clip(v):
    return np.clip(v, -0.5, 0.5), np.clip(v, None, 0.5), np.clip(v, -0.5, None)


@pytest.mark.parametrize("v", [0.7, -0.7, 0.25, np.nan])
def test_clip_scalar(v):
    assert_same(clip(v), clip.py_func(v))


def test_clip_scalar_int():
    assert njit(lambda v: np.clip(v, 0, 1))(3) == 1


def _strided_view(a):
    return np.swapaxes(a, 0, 1)


_strided_view.__module__ = "numpy"   # as a NumPy function numba has no form of


def test_object_mode_call_returning_a_strided_view():
    # found on numba 0.59, which has no np.moveaxis: its result on ones of shape (1, 1)
    # is contiguous, so the call was typed C-contiguous, and the strided view it gives
    # on real arguments was read wrongly (np.rollaxis's gradient silently wrong)
    assert srcgrad.numba_ext.object_mode(_strided_view)

    @njit
    def call(a):
        return _strided_view(a) * 1.0

    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(call(a), a.T)


@njit
def _added_in_place(a, b):
    a += b
    return a


@njit
def _added_into_a_slice(a, b):
    a[1:] += b
    return a


@njit
def _ufunc_into(a, b):
    np.multiply(a, b, a)
    return a


@pytest.mark.parametrize("fun, a, b", [
    (_added_in_place, np.zeros(3), np.ones(2)),
    (_added_in_place, np.zeros((2, 3)), np.ones((3, 2))),
    (_added_in_place, np.zeros(3), np.ones((2, 3))),
    (_added_into_a_slice, np.zeros(3), np.ones(3)),
    (_ufunc_into, np.zeros(3), np.ones(4))])
def test_in_place_operators_check_shapes_as_numpy_does(fun, a, b):
    # numba (issues #4542, #9166) ran `a += b` over a's shape, reading past b's end: a
    # wrong adjoint shape gave garbage, not an error (fuzz: a compiled gradient's
    # `dx += dt` with dt of the slice's shape). srcgrad.numba_inplace checks, as NumPy
    with pytest.raises(ValueError):
        fun.py_func(a.copy(), b)
    if b.ndim > a.ndim and numba.version_info < (0, 60):
        with pytest.raises(TypingError):   # (numba before 0.60 refuses when it types)
            fun(a.copy(), b)
        return
    with pytest.raises(ValueError, match="non-broadcastable output operand"):
        fun(a.copy(), b)


def test_in_place_operators_still_broadcast():
    np.testing.assert_array_equal(_added_in_place(np.zeros((2, 3)), np.arange(3.0)),
                                  [[0.0, 1.0, 2.0]] * 2)
    np.testing.assert_array_equal(_added_in_place(np.zeros((2, 3)), np.ones((1, 3))),
                                  np.ones((2, 3)))
    np.testing.assert_array_equal(_added_into_a_slice(np.zeros(3), np.ones(1)), [0, 1, 1])
    np.testing.assert_array_equal(_added_in_place(np.zeros(2), 2.0), [2.0, 2.0])


# ---- np.stack of numbers ----

@njit
def stack_numbers(x, k):
    return (np.stack((x[0], x[2])), np.stack([x[1], x[0], x[2]], axis=-1),
            np.stack((x[0], k)), np.stack((True, k)), np.stack([k, k + 1], 0))


def test_stack_of_numbers_is_numpys():
    # numba's np.stack takes a tuple of arrays only (fuzz seeds 9997002, 9997008)
    x = data(3)
    assert_same(stack_numbers(x, 4), stack_numbers.py_func(x, 4))
    assert stack_numbers(x, 4)[2].dtype == np.float64 and stack_numbers(x, 4)[3].dtype == \
        np.stack((True, 4)).dtype


def test_stack_of_a_list_of_numbers_built_in_code():
    @njit
    def grown(x):
        items = [x[0]]
        for v in x[1:]:
            items.append(v * 2.0)
        return np.stack(items)

    x = data(4)
    assert_same((grown(x),), (grown.py_func(x),))


@pytest.mark.parametrize("axis", [1, -2])
def test_stack_of_numbers_checks_its_axis(axis):
    # as NumPy's AxisError (a ValueError) for the one axis of the result
    with pytest.raises(ValueError, match="axis"):
        njit(lambda x, axis: np.stack((x, x), axis=axis))(1.0, axis)


def test_a_users_own_strided_reshape_is_numbas():
    # srcgrad's generated code reshapes a strided array through runtime.reshaped; numba's
    # typing of ndarray.reshape, which the user's own numba code shares, is not changed:
    # there a strided reshape is still refused, and a contiguous one still a view
    import srcgrad

    def column_spread(x):
        return np.sum(x[:, 0].reshape(2, 1) * np.ones(3))
    x = data((2, 3))
    np.testing.assert_allclose(srcgrad.grad(column_spread, jit=True)(x)[:, 0], [3.0, 3.0])

    @njit
    def strided(x):
        return x[:, 0].reshape(2, 1)

    @njit
    def written_through(x):
        v = x.reshape(3, 2)
        v[0, 0] = 5.0
        return v

    with pytest.raises(TypingError, match=r"reshape\(\) supports contiguous array only"):
        strided(x)
    with pytest.raises(TypingError, match=r"reshape\(\) supports contiguous array only"):
        njit(lambda x: np.reshape(x[::2], (3,)))(data(6))
    assert written_through(x)[0, 0] == 5.0 and x[0, 0] == 5.0


@njit
def whole(a):
    v = a[...]           # numba types `x[...]` alone, and had no lowering of it
    v[0] = 5.0
    return v.sum(), a[..., 0].sum()


def test_ellipsis_alone_is_a_view_of_the_whole_array():
    a, b = np.ones((2, 3)), np.ones((2, 3))
    assert_same(whole(a), whole.py_func(b))
    np.testing.assert_array_equal(a, b)     # the write went through the view, as NumPy's
    assert a[0, 0] == 5.0
