"""The methods of NumPy's ufuncs (srcgrad/rules/ufunc_methods.py): reduce, accumulate
and outer against central differences (grad, jvp and hvp; compiled and as Python, with
NumPy's default axis 0, an axis, None, a tuple of axes and keepdims), by hand (ties,
NaNs, zeros; initial= and where=), a float64 dtype=, the compiled stand-ins against NumPy's
values, and the refused options."""

import inspect

import numpy as np
import pytest
from marks import compiles
from sweep import check, check_hvp, check_jvp, domains, parametrize

import srcgrad
from srcgrad.rules import OPS
from srcgrad.rules import ufunc_methods as um

any_, pos, unit, distinct = domains(61)


def key(method):
    """The object the table keys `method`'s record by (each `np.add.reduce` is a new
    bound method, equal to the others)."""
    return next(p for p in OPS if type(p) is type(method) and p == method)


def reduced(*ufuncs):
    return tuple(p for u in ufuncs for p in (key(u.reduce), um._REDUCE[u]))


def accumulated(*ufuncs):
    return tuple(p for u in ufuncs for p in (key(u.accumulate), um._ACCUMULATE[u]))


def outers(*ufuncs):
    return tuple(p for u in ufuncs for p in (key(u.outer), getattr(um, f"{u.__name__}_outer")))


W = np.arange(12.0).reshape(3, 4)


def reduce_op(x):
    # NumPy's default axis 0, an axis, None, a tuple of axes with keepdims
    return np.sum(np.add.reduce(x) ** 2) + np.sum(np.sin(np.multiply.reduce(x, axis=1))) \
        + np.logaddexp.reduce(x, axis=None) \
        + np.sum(np.logaddexp2.reduce(x, (0, 1), keepdims=True)) \
        + np.sum(np.maximum.reduce(x) ** 2) + np.sum(np.minimum.reduce(x, 1) * W[:, 0]) \
        + np.sum(np.fmax.reduce(x, axis=-1, keepdims=True) ** 3) \
        + np.fmin.reduce(x, axis=None) ** 2


def accumulate_op(x):
    # multiply's array holds a zero
    return np.sum(np.add.accumulate(x, 1) ** 2) + np.sum(np.sin(np.multiply.accumulate(x)) * W) \
        + np.sum(np.maximum.accumulate(x, axis=-1) * W) \
        + np.sum(np.minimum.accumulate(x) ** 3)


def outer_op(a, b):
    # every binary ufunc with an elementwise rule, a's entries between b's
    total = 0.0
    for u in um.OUTER:
        total = total + np.sum(np.sin(u.outer(a, b)))
    return total


def outer_unrolled(a, b):
    return np.sum(np.sin(np.add.outer(a, b))) + np.sum(np.arctan2.outer(a, b) ** 2) \
        + np.sum(np.copysign.outer(a, b) * W[:3, :2]) + np.sum(np.divide.outer(a, b)) \
        + np.sum(np.float_power.outer(a, b)) + np.sum(np.fmax.outer(a, b) ** 2) \
        + np.sum(np.fmin.outer(a, b) ** 2) + np.sum(np.hypot.outer(a, b)) \
        + np.sum(np.logaddexp.outer(a, b)) + np.sum(np.logaddexp2.outer(a, b) ** 2) \
        + np.sum(np.maximum.outer(a, b) ** 3) + np.sum(np.minimum.outer(a, b) ** 3) \
        + np.sum(np.cos(np.multiply.outer(a, b))) + np.sum(np.power.outer(a, b)) \
        + np.sum(np.remainder.outer(a, b) ** 2) + np.sum(np.subtract.outer(a, b) ** 3)


def sums_tuple_op(x):
    # a tuple of axes of a 3-d array, the empty tuple, multiply over all entries
    return np.sum(np.add.reduce(x, axis=(0, 2)) ** 2) + np.sum(np.add.reduce(x, ()) ** 3) \
        + np.multiply.reduce(x, axis=None) \
        + np.sum(np.logaddexp.reduce(x, axis=(2, 0), keepdims=True) * x)


def extrema_tuple_op(x):
    return np.sum(np.maximum.reduce(x, (1, 2)) ** 2) + np.minimum.reduce(x, None) \
        + np.sum(np.fmin.reduce(x, axis=1, keepdims=True) * x)


def logaddexp_accumulate_op(x):
    # the running log-sum-exp along each axis, and in base 2
    return np.sum(np.logaddexp.accumulate(x, axis=1) * W) + \
        np.sum(np.sin(np.logaddexp2.accumulate(x))) + np.sum(np.logaddexp.accumulate(x) ** 2)


def accumulate_3d_op(x):
    return np.sum(np.multiply.accumulate(x, axis=1) ** 2) \
        + np.sum(np.maximum.accumulate(x, 2) ** 3) + np.sum(np.add.accumulate(x) * x)


def outer_shapes_op(a, b):
    # a matrix and a vector, a number and a matrix
    return np.sum(np.multiply.outer(a, b) ** 2) + np.sum(np.subtract.outer(2.0, a) ** 3) \
        + np.sum(np.power.outer(b, a) * np.sum(a))


MASK = np.array([[True, False, True, True], [False, True, True, False],
                 [True, True, False, True]])


def reduce_initial_where_op(x, c):
    # initial= differentiated and constant, where= a mask of x's shape and a row of it,
    # by position and keyword, with NumPy's default axis 0, an axis, None and keepdims
    return np.sum(np.add.reduce(x, 1, initial=c, where=MASK) ** 2) \
        + np.sum(np.multiply.reduce(x, axis=0, initial=c, where=MASK[0]) * W[0]) \
        + np.sum(np.maximum.reduce(x, None, None, None, True, c, MASK) * x) \
        + np.sum(np.minimum.reduce(x, initial=0.3, where=MASK) ** 3) \
        + np.sum(np.fmax.reduce(x, axis=1, initial=c, where=MASK) ** 2) \
        + np.sum(np.fmin.reduce(x, axis=1, initial=-c) * W[:, 0]) \
        + np.logaddexp.reduce(x, None, initial=c) + np.sum(np.logaddexp2.reduce(x, initial=c))


def skipping_initial_op(x, c):
    # fmax and fmin with initial=: an empty axis (and the whole of an empty array), c
    # beating some rows and not others, a float64 dtype=, where=
    return np.sum(np.fmax.reduce(x, axis=1, initial=c) ** 2) \
        + np.sum(np.fmin.reduce(x, initial=-c, dtype=np.float64) * W[0]) \
        + np.sum(np.fmax.reduce(x[:, :0], axis=1, initial=c) * W[:, 1]) \
        + np.fmin.reduce(x[:0], axis=None, initial=c) ** 3 \
        + np.sum(np.fmin.reduce(x, axis=0, initial=c, where=MASK, keepdims=True) ** 2)


def float64_dtype_op(x):
    # a float64 dtype= in its spellings, by keyword and by position; an int array's too
    ints = np.arange(5)
    return np.sum(np.logaddexp.accumulate(x, dtype=np.float64) * W) \
        + np.sum(np.logaddexp2.accumulate(x, 1, float) ** 2) \
        + np.sum(np.add.reduce(x, 1, "f8") ** 2) \
        + np.sum(np.maximum.accumulate(x, axis=1, dtype="float64") * W) \
        + np.sum(np.multiply.reduce(x, dtype=np.float64, initial=1.5) * np.add.accumulate(
            ints, dtype=np.float64)[1:])


POINT_A = np.array([0.6, 1.7, 2.9])
POINT_B = np.array([1.1, 2.3])
OUTERS = outers(*um.OUTER) + (um.outer_operand,)

CASES = [
    ("ufunc_reduce", reduced(*um.REDUCED), reduce_op, (distinct(3, 4),), [0], True),
    ("ufunc_accumulate", accumulated(np.add, np.multiply, np.maximum, np.minimum),
     accumulate_op, (distinct(3, 4),), [0], True),
    ("ufunc_accumulate_logaddexp", accumulated(np.logaddexp, np.logaddexp2),
     logaddexp_accumulate_op, (any_(3, 4),), [0], True),
    ("ufunc_outer", OUTERS, outer_unrolled, (POINT_A, POINT_B), [0, 1], True),
    ("ufunc_reduce_tuples", reduced(np.add, np.multiply, np.logaddexp), sums_tuple_op,
     (unit(2, 3, 2),), [0], False),
    ("ufunc_reduce_extrema_tuples", reduced(np.maximum, np.minimum, np.fmin),
     extrema_tuple_op, (distinct(3, 2, 2),), [0], False),
    ("ufunc_accumulate_3d", accumulated(np.add, np.multiply, np.maximum), accumulate_3d_op,
     (distinct(2, 3, 2),), [0], False),
    ("ufunc_reduce_initial_where", reduced(*um.REDUCED), reduce_initial_where_op,
     (distinct(3, 4), 0.41), [0, 1], True),
    ("ufunc_reduce_skipping_initial", tuple(um._OR_SKIPPED.values()), skipping_initial_op,
     (distinct(3, 4), 0.13), [0, 1], True),
    ("ufunc_float64_dtype", reduced(np.add, np.multiply) + accumulated(
        np.logaddexp, np.logaddexp2, np.maximum, np.add), float64_dtype_op, (distinct(3, 4),),
     [0], True),
    ("ufunc_outer_shapes", outers(np.multiply, np.subtract, np.power), outer_shapes_op,
     (pos(2, 2), pos(3)), [0, 1], False),
]


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


def uncompiled_outer(cases):
    """The cases, the outer products' run as Python alone: compiled, their forward mode
    and second order are their gradient's numba forms again (`outer_operand`, the ufuncs,
    `broadcast_like`), at half a minute of compiling each."""
    return [c[:5] + (c[5] and c[0] != "ufunc_outer",) for c in cases]


@parametrize(uncompiled_outer(CASES))
def test_jvp_against_differences(case, jit):
    check_jvp(case, jit, 3)


@parametrize(uncompiled_outer(CASES))
def test_hvp_against_differences_of_the_gradient(case, jit):
    check_hvp(case, jit)


def test_every_binary_ufunc_with_a_rule_has_an_outer():
    assert {u.__name__ for u in um.OUTER} >= {
        "add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "arctan2",
        "hypot", "logaddexp", "logaddexp2", "fmax", "fmin"}
    assert outer_op(POINT_A, POINT_B) == pytest.approx(
        sum(np.sum(np.sin(u(POINT_A[:, None], POINT_B))) for u in um.OUTER))


def ties_and_nans(x):
    # max's ties split dy; fmax skips the NaN; multiply's zero; the running max ties
    return np.maximum.reduce(x[:3]) + np.fmax.reduce(x[3:6]) + np.multiply.reduce(x[6:9]) \
        + np.sum(np.maximum.accumulate(x[9:]) * np.arange(1.0, 5.0))


def sums_by_hand(m):
    return np.sum(np.add.reduce(m) * np.array([1.0, 2.0])) + np.logaddexp.reduce(m, 1)[0]


def outer_by_hand(a, b):
    return np.sum(np.multiply.outer(a, b))


def test_ties_nans_and_zeros_by_hand(jit):
    x = np.array([2.0, 2.0, 1.0, 1.0, np.nan, 3.0, 2.0, 0.0, 3.0, 1.0, 3.0, 2.0, 3.0])
    np.testing.assert_allclose(srcgrad.grad(ties_and_nans, jit=jit)(x), [
        0.5, 0.5, 0.0, 0.0, 0.0, 1.0, 0.0, 6.0, 0.0,
        1.0, 7.0, 0.0, 2.0])   # (jax.grad of lax.cummax gives the same four)


def running_logsumexp(x):
    return np.sum(np.logaddexp.accumulate(x) * np.array([1.0, 2.0, 4.0])) + \
        np.logaddexp2.accumulate(x)[2]


def running_logsumexp_float64(x):
    return np.sum(np.logaddexp.accumulate(x, dtype=np.float64) * np.array([1.0, 2.0, 4.0])) \
        + np.logaddexp2.accumulate(x, 0, float)[2]


@pytest.mark.parametrize("fun", [running_logsumexp, running_logsumexp_float64])
def test_logaddexp_accumulate_by_hand(jit, fun):
    # x = log [1, 1, 2]: y = log [1, 2, 4]; d y_j / d x_i = x's weights e^(x_i - y_j):
    # x_0 gets 1 + 2/2 + 4/4, x_1 2/2 + 4/4, x_2 4 * 2/4; in base 2, d y_2 / d x_i =
    # 2^x_i / sum(2^x), 2^x = e^(x ln 2) = [1, 1, 2]^ln 2
    x = np.log([1.0, 1.0, 2.0])
    g = srcgrad.grad(fun, jit=jit)(x)
    base2 = np.array([1.0, 1.0, 2.0]) ** np.log(2.0) / np.sum(np.array([1.0, 1.0, 2.0]) **
                                                                np.log(2.0))
    np.testing.assert_allclose(g, np.array([3.0, 2.0, 2.0]) + base2, rtol=1e-14)


def test_by_hand():
    jit = False   # (compiled: the cases' forms)
    m = np.array([[0.0, 1.0], [2.0, 3.0]])
    soft = np.exp(m[0]) / np.sum(np.exp(m[0]))
    np.testing.assert_allclose(srcgrad.grad(sums_by_hand, jit=jit)(m),
                               [[1.0 + soft[0], 2.0 + soft[1]], [1.0, 2.0]])
    da, db = srcgrad.grad(outer_by_hand, wrt=(0, 1), jit=jit)(np.arange(3.0),
                                                              np.ones((2, 2)))
    np.testing.assert_allclose(da, [4.0, 4.0, 4.0])
    np.testing.assert_allclose(db, np.full((2, 2), 3.0))


HAND_MASK = np.array([[True, False, True], [False, True, True]])


def initial_where_by_hand(x, c):
    return np.sum(np.add.reduce(x, 1, initial=c, where=HAND_MASK) * np.array([1.0, 2.0])) \
        + np.sum(np.maximum.reduce(x, axis=0, initial=c, where=HAND_MASK) *
                 np.array([1.0, 10.0, 100.0])) \
        + np.sum(np.multiply.reduce(x, axis=1, where=HAND_MASK, initial=2.0)) \
        + np.minimum.reduce(x[0], None, None, None, False, 1.0)


def test_initial_and_where_by_hand(jit):
    # x = [[1, 5, 2], [4, 0, 3]], c = 1.5. add: the rows' True entries and c, weighted 1
    # and 2; maximum over the columns' True entries and c: c beats column 0's {1} and
    # column 1's {0}, column 2's 3 beats it; multiply: the rows' True entries times 2,
    # (1 * 2) * 2 and (0 * 3) * 2; minimum of x[0] and 1.0: a tie, half of dy to x[0, 0]
    x, c = np.array([[1.0, 5.0, 2.0], [4.0, 0.0, 3.0]]), 1.5
    dx, dc = srcgrad.grad(initial_where_by_hand, wrt=(0, 1), jit=jit)(x, c)
    np.testing.assert_allclose(dx, np.array([[1.0, 0.0, 1.0], [0.0, 2.0, 2.0]]) +
                               np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 100.0]]) +
                               np.array([[4.0, 0.0, 2.0], [0.0, 6.0, 0.0]]) +
                               np.array([[0.5, 0.0, 0.0], [0.0, 0.0, 0.0]]), rtol=1e-15)
    assert dc == pytest.approx(1.0 + 2.0 + 1.0 + 10.0, rel=1e-15)
    # forward mode along x's [0, 2] entry alone: add's row 0 (1) and multiply's 1 * 2
    value, t = srcgrad.jvp(initial_where_by_hand, wrt=0, jit=jit)(
        x, c, np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]))
    assert value == pytest.approx(4.5 + 2 * 4.5 + 1.5 + 10 * 1.5 + 100 * 3.0 + 4.0 + 0.0 + 1.0)
    assert t == pytest.approx(1.0 + 2.0, rel=1e-15)


def with_dtype(x):
    return np.sum(np.logaddexp.accumulate(x, dtype=np.float32))


def with_out(x):
    return np.sum(np.add.reduce(x, 0, None, np.empty(3)))


def with_initial_dtype(x):
    return np.sum(np.add.reduce(x, dtype=np.float32, initial=1.0))


def with_initial_out(x):
    return np.sum(np.multiply.reduce(x, 0, None, np.empty(3), False, 2.0))


def with_where_alone(x):
    return np.sum(np.maximum.reduce(x, where=x > 0))


def with_a_larger_mask(x):
    return np.sum(np.add.reduce(x, where=np.ones((4,) + x.shape, bool)))


def test_a_mask_larger_than_the_array_raises_as_in_numpy():
    x = np.ones((2, 3))
    with pytest.raises(ValueError):
        with_a_larger_mask(x)
    with pytest.raises(ValueError):
        srcgrad.grad(with_a_larger_mask, jit=False)(x)


def with_where_logaddexp(x):
    return np.sum(np.logaddexp.reduce(x, initial=0.0, where=x > 0))


def accumulate_flat(x):
    return np.sum(np.add.accumulate(x, axis=None))


def accumulate_out(x):
    return np.sum(np.multiply.accumulate(x, out=np.empty_like(x)))


@pytest.mark.parametrize("fun,match", [
    (with_dtype, "takes no dtype=float32: srcgrad differentiates a float64 dtype alone"),
    (with_out, "out= is not supported"), (with_initial_dtype, "takes no dtype=float32"),
    (with_initial_out, "out=, initial= are not supported"),
    (with_where_alone, "np.maximum.reduce\\(..., where=...\\) needs initial="),
    (with_where_logaddexp, "np.logaddexp.reduce\\(..., where=...\\) is not supported"),
    (accumulate_flat, "axis=None"), (accumulate_out, "'out=' writes into an array")])
def test_refused(fun, match):
    # (out= as a keyword is the syntax check's refusal, before any rule's)
    with pytest.raises(srcgrad.SrcgradError, match=match) as info:
        srcgrad.grad(fun, jit=False)(np.ones((2, 3)))
    line = fun.__code__.co_firstlineno + 1
    assert f"test_rules_ufunc_methods.py:{line}:" in str(info.value)
    assert inspect.getsource(fun).splitlines()[1].strip() in str(info.value)


@compiles
@pytest.mark.compiled
def test_compiled_stand_ins_are_numpys():
    # (the cases' compiled jvps check the other forms' values against NumPy's)
    from numba import njit
    x = any_(3, 2, 4)
    forms = [(lambda a: um.fmin_reduce(a, ()), lambda a: np.fmin.reduce(a, ())),
             (lambda a: um.subtract_outer(1.5, a[0]), lambda a: np.subtract.outer(1.5, a[0]))]
    for form, numpy_form in forms:
        np.testing.assert_allclose(njit(form)(x), numpy_form(x), rtol=1e-13)
    ints = np.arange(6, dtype=np.int32).reshape(2, 3)
    got = njit(lambda a: um.add_reduce(a, 1))(ints)
    assert got.dtype == np.add.reduce(ints, 1).dtype
    np.testing.assert_array_equal(got, np.add.reduce(ints, 1))
    with pytest.raises(ValueError, match="duplicate value in 'axis'"):
        njit(lambda a: um.add_reduce(a, (1, -2)))(x)
    with pytest.raises(ValueError, match="no identity"):
        njit(lambda a: um.maximum_reduce(a, 1))(np.ones((2, 0)))
