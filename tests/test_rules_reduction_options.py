"""Reductions' options (srcgrad/rules/reduction_options.py, passes/base.py's `cast`):
`initial=` and `where=` of np.sum, np.prod, np.mean, np.max, np.min, np.std and np.var
and their methods, and a float64 `dtype=`, against central differences (grad, jvp and
hvp, as Python), by hand, and compiled (one gradient that calls every numba form
here, against its Python form); what is refused (another dtype, where= of max
without initial=)."""

import numpy as np
import pytest
from fd import assert_grad
from sweep import check, check_hvp, check_jvp, domains, parametrize

import srcgrad
from srcgrad.rules.reduction_options import extremum_or

any_, pos, unit, distinct = domains(53)


def sum_initial_where(m):
    return np.sum(np.sum(m * m, axis=1, initial=1.5, where=m > -1.0) ** 2)


def prod_where(m):
    return np.sum(m.prod(axis=0, where=m > -1.5, initial=2.0, keepdims=True) * m)


def mean_where(m):
    return np.sum(np.sin(np.mean(m, axis=0, where=m > -1.0)))


def max_initial(m):
    return np.sum(np.max(m, axis=1, initial=0.2) ** 2) + np.min(m, initial=-0.3) ** 2


def max_where(m):
    return np.sum(m.max(axis=0, where=m < 0.5, initial=-1.0) * np.arange(1.0, 4.0))


def var_where(m):
    return np.sum(np.var(m, axis=1, ddof=1, where=m > -1.5)) + np.std(m, where=m > -1.0)


def dtypes(m):
    return np.sum(np.sum(m, axis=0, dtype=np.float64, keepdims=True) * m) + \
        np.mean(m, dtype=float) ** 2 + m.std(0, "f8").sum() + np.var(m, dtype="float64") + \
        np.prod(m, 1, np.float64).sum() + np.sum(np.cumsum(m, axis=1, dtype=float) ** 2) + \
        np.nansum(m, dtype="f8") ** 2


def empty_initial(m, c):
    """np.max/np.min/np.amax/np.amin and the methods with initial=, of empty arrays (the
    whole of one, an empty axis reduced, an empty axis kept) and of full ones."""
    return np.max(m[:0], initial=c) * 2.0 + np.sum(np.min(m[:, :0], axis=1, initial=c)) + \
        np.sum(np.amax(m[:0], axis=0, initial=c) * np.arange(1.0, 5.0)) + \
        np.sum(m[:, :0].max(axis=0, initial=c)) + \
        np.sum(np.amin(m, axis=1, keepdims=True, initial=c) ** 2) + \
        np.sum(m[:0].min(axis=0, where=m[:0] > 0.0, initial=-c) ** 2) + \
        np.sum(np.maximum.reduce(m[:, :0], axis=1, initial=c) ** 2)


def initial_of(x, c):
    return np.max(x, initial=c) * np.sum(x, initial=c) + np.prod(x, initial=c)


CASES = [
    ("sum_initial_where", (np.sum,), sum_initial_where, (any_(3, 4),), [0], False),
    ("prod_where", (np.prod,), prod_where, (any_(4, 3),), [0], False),
    ("mean_where", (np.mean,), mean_where, (any_(4, 3),), [0], False),
    ("max_initial", (np.max, np.min), max_initial, (distinct(3, 4),), [0], False),
    ("max_where", (np.max,), max_where, (distinct(4, 3),), [0], False),
    ("var_where", (np.var, np.std), var_where, (any_(3, 5),), [0], False),
    ("dtype_float64", (np.sum, np.mean, np.std, np.var, np.prod, np.cumsum, np.nansum), dtypes,
     (any_(3, 4),), [0], False),
    ("initial_differentiated", (np.max, np.sum, np.prod), initial_of, (distinct(5), 0.7),
     [0, 1], False),
    ("initial_of_empty", (np.max, np.min, extremum_or), empty_initial, (distinct(3, 4), 0.3),
     [0, 1], True),
]


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


@parametrize(CASES)
def test_jvp_against_differences(case, jit):
    check_jvp(case, jit, 3)


@parametrize(CASES)
def test_hvp_against_differences_of_the_gradient(case, jit):
    check_hvp(case, jit)


def sum_where_plain(x):
    return np.sum(x, where=x > 0.0, initial=10.0)


def max_beaten(x):
    return np.max(x, initial=2.0)


def mean_where_rows(m):
    return np.sum(np.mean(m, axis=1, where=m > 0.0) * np.array([1.0, 2.0]))


def test_by_hand():
    jit = False   # (compiled: test_compiled_is_python)
    x = np.array([1.0, -2.0, 3.0, 0.5])
    np.testing.assert_allclose(srcgrad.grad(sum_where_plain, jit=jit)(x), [1.0, 0.0, 1.0, 1.0])
    # initial wins: every entry gets 0; it ties: the maximum gets half (as JAX's lax.max)
    np.testing.assert_allclose(srcgrad.grad(max_beaten, jit=jit)(x * 0.5), [0.0] * 4)
    np.testing.assert_allclose(srcgrad.grad(max_beaten, jit=jit)(x * 2.0 / 3.0),
                               [0.0, 0.0, 0.5, 0.0])
    np.testing.assert_allclose(srcgrad.grad(max_beaten, jit=jit)(x), [0.0, 0.0, 1.0, 0.0])
    # the mean of the True entries: 1/count along the axis
    m = np.array([[1.0, -1.0, 2.0], [3.0, 4.0, -5.0]])
    np.testing.assert_allclose(srcgrad.grad(mean_where_rows, jit=jit)(m),
                               [[0.5, 0.0, 0.5], [1.0, 1.0, 0.0]])
    c = 0.7
    y = np.array([0.1, 0.3, 0.2])
    gx, gc = srcgrad.grad(initial_of, wrt=(0, 1), jit=False)(y, c)
    # max(x, c) = c wins (0 for x, 1 for c) times sum(x) + c, plus c times the sum's
    # slope 1, plus prod(x) * c's: c times the other entries (x), prod(x) (c)
    np.testing.assert_allclose(gx, c + c * np.array([0.06, 0.02, 0.03]))
    assert gc == pytest.approx(np.sum(y) + c + c + np.prod(y))


def max_of_empty(x, c):
    return np.max(x[:0], initial=c) + 2.0 * np.min(x[:, :0], axis=1, initial=c)[1] + \
        x[:0].max(axis=0, initial=c)[0] + np.sum(np.amin(x, axis=0, initial=c))


def test_initial_of_empty_arrays_by_hand(jit):
    """np.max(x, initial=c) of an empty x (or along an empty axis) is c, as in NumPy (where
    srcgrad raised "zero-size array to reduction operation maximum"), and its gradient
    all of dy to c. Of a full x: c where it wins. A tie of c with the reduction of an
    empty array (c = -inf) splits dy in half, as JAX's (which reduces an empty array to
    the identity, -inf, then takes lax.max of it and initial)."""
    x = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
    c = 0.75
    # c + 2c + c + (min(1, .5, c) + min(-2, 4, c) + min(3, -1, c))
    want = c + 2 * c + c + (0.5 - 2.0 - 1.0)
    assert max_of_empty(x, c) == pytest.approx(want)
    g = srcgrad.value_and_grad(max_of_empty, wrt=(0, 1), jit=jit)
    value, (gx, gc) = g(x, c)
    assert value == pytest.approx(want)
    np.testing.assert_allclose(gx, [[0.0, 1.0, 0.0], [1.0, 0.0, 1.0]])
    assert gc == pytest.approx(4.0)
    # c wins over column 0 (c = 0.2 < 0.5): one less for x, one more for c
    gx, gc = srcgrad.grad(max_of_empty, wrt=(0, 1), jit=jit)(x, 0.2)
    np.testing.assert_allclose(gx, [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    assert gc == pytest.approx(5.0)
    assert srcgrad.grad(max_of_empty_inf, jit=jit)(-np.inf) == pytest.approx(0.5)
    assert_grad(max_of_empty, srcgrad.grad(max_of_empty, wrt=(0, 1), jit=jit)(x, c),
                (x, c), [0, 1])


def max_of_empty_inf(c):
    return np.max(np.zeros(0), initial=c)


def sum_int_dtype(x):
    return np.sum(np.sum(x, axis=0, dtype=np.int64) * x)


def mean_float32(x):
    return np.mean(x, dtype=np.float32)


def trace_dtype(x):
    return np.trace(x, dtype=float)


def max_where_alone(x):
    return np.max(x, where=x > 0.0)


def test_other_dtypes_and_a_max_where_without_initial_are_refused():
    x = np.array([[1.5, 2.0], [3.0, 4.5]])
    for fun, shown in ((sum_int_dtype, "int64"), (mean_float32, "float32")):
        with pytest.raises(srcgrad.SrcgradError, match=f"has no parameter 'dtype' for "
                                                       f"dtype={shown}"):
            srcgrad.grad(fun, jit=False)(x)
    # a function without a numba form that takes a dtype: every dtype refused
    with pytest.raises(srcgrad.SrcgradError, match="dtype="):
        srcgrad.grad(trace_dtype, jit=False)(x)
    with pytest.raises(srcgrad.SrcgradError, match="needs initial="):
        srcgrad.grad(max_where_alone, jit=False)(x[0])


def compiled_options(m):
    return dtypes(m) + sum_initial_where(m) + mean_where(m) + max_initial(m) + \
        np.sum(np.nanvar(m, axis=0, dtype=np.float64, ddof=1, keepdims=True)) + \
        np.sum(np.cumprod(m, dtype=np.float64) * m.ravel())


@pytest.mark.compiled
def test_compiled_is_python():
    """Every numba form of this module's, and the generated code of every option, in one
    compiled gradient (one compile), against the Python form's value and gradient."""
    m = any_(3, 4)
    want = srcgrad.value_and_grad(compiled_options, jit=False)(m)
    got = srcgrad.value_and_grad(compiled_options, jit=True)(m)
    assert got[0] == pytest.approx(want[0], rel=1e-13)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)


def max_by_position(x):
    return np.max(x, 0, None, False, 2.0) + x.sum(0, None, None, False, 1.0, x > 0.0)


def test_options_given_by_position():
    x = np.array([1.0, -2.0, 3.0, 0.5])
    np.testing.assert_allclose(srcgrad.grad(max_by_position, jit=False)(x),
                               [1.0, 0.0, 2.0, 1.0])
