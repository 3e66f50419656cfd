"""Rule family: arrays built from differentiated values (np.array, np.asarray; issue 20).

The sweep's cases run against central differences; then values by hand, forward mode
(jvp, hvp) against differences, the refusals, and an np.array nothing differentiated
flows into, which stays a plain constructor.
"""

import builtins

import numpy as np
import pytest
from fd import assert_grad
from sweep import check, domains, parametrize

import srcgrad
from srcgrad.errors import MissingRule


def array_op(x, y):
    # numbers in nested lists (dtype=float), a tuple of arrays, a list of arrays
    m = np.array([[x[0], y[1] * x[2]], [np.sin(x[1]), 2.0]], dtype=float)
    rows = np.array((x, y * x))
    return np.sum(m @ m) + np.sum(rows ** 3) + np.sum(np.array([rows, rows * y]) ** 2)


def asarray_op(x, a):
    # np.asarray and np.array of an array pass the gradient through; of a number, 0-d
    return np.sum(np.asarray(x) * np.array(x, dtype=np.float64) * np.array(a)) + \
        np.sum(np.asarray([a, a * a]) ** 2)


def numbers_in_a_tuple(a, b):
    return np.sum(np.array((a * b, b)) ** 3)


def list_read_twice(a, b):
    row = [a, b * a]
    return np.sum(np.array([row, row]) ** 2 * np.arange(4.0).reshape(2, 2)) + \
        np.sum(np.array(row) ** 3)


def array_in_a_loop(a, n):
    s = 0.0
    for i in range(n):
        v = np.array([a * i, a ** 2, 1.0])
        s = s + np.sum(v * v)
    return s


def sum_of_items(x, y):
    # Python's sum of a list of a number and arrays, from an array start, and of the rows
    return np.sum(sum([x[0], y * x, y], y) ** 2) + np.sum(sum(np.outer(x, y)) ** 2)


def cases():
    any_, pos, unit, distinct = domains(20)
    yield "sum_builtin", (builtins.sum,), sum_of_items, (any_(3), any_(3)), [0, 1], True
    yield "array", (np.array,), array_op, (any_(3), any_(3)), [0, 1], True
    yield "asarray", (np.asarray,), asarray_op, (any_(2, 3), any_()), [0, 1], True
    yield "array_tuple", (np.array,), numbers_in_a_tuple, (any_(), any_()), [0, 1], False
    yield "array_list_read_twice", (np.array,), list_read_twice, (any_(), any_()), [0, 1], \
        False
    yield "array_in_a_loop", (np.array,), array_in_a_loop, (any_(), 4), [0], True


CASES = list(cases())


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


def three_numbers(a, b):
    return np.sum(np.array([a, b, a * b]) ** 2)


def test_array_of_numbers_by_hand_and_forward(jit):
    # sum([a, b, ab]^2) = a^2 + b^2 + a^2 b^2: d/da = 2a + 2ab^2, d/db = 2b + 2a^2 b
    assert srcgrad.grad(three_numbers, wrt=(0, 1), jit=jit)(1.0, 2.0) == \
        pytest.approx((10.0, 8.0))
    a, b, da, db, h = 0.7, -1.3, 0.4, 1.1, 1e-6
    slope = srcgrad.jvp(three_numbers, wrt=(0, 1), jit=jit)(a, b, (da, db))[1]
    want = (three_numbers(a + h * da, b + h * db) -
            three_numbers(a - h * da, b - h * db)) / (2 * h)
    assert slope == pytest.approx(want, rel=1e-6)


def matrix_of_entries(x):
    m = np.array([[x[0], x[1] * x[0]], [x[2], x[0] ** 2]])
    return np.sum(np.array([m, m * m]) ** 2)


def test_nested_lists_and_arrays_by_hand_and_forward(jit, rng):
    # m = [[p, qp], [r, p^2]] at p = 1, q = 2, r = 3: sum(m^2) + sum(m^4), so
    # d/dr = 2r + 4r^3 = 114 and d/dq = (2 qp + 4 (qp)^3) p = 36
    g = srcgrad.grad(matrix_of_entries, jit=jit)(np.array([1.0, 2.0, 3.0]))
    assert g[1:] == pytest.approx([36.0, 114.0])
    x, v, h = rng.standard_normal(3), rng.standard_normal(3), 1e-6
    slope = srcgrad.jvp(matrix_of_entries, jit=jit)(x, v)[1]
    assert slope == pytest.approx((matrix_of_entries(x + h * v) -
                                   matrix_of_entries(x - h * v)) / (2 * h), rel=1e-6)
    grad = srcgrad.grad(matrix_of_entries, jit=False)  # (the reference: its Python form)
    np.testing.assert_allclose(srcgrad.hvp(matrix_of_entries, jit=jit)(x, v),
                               (grad(x + h * v) - grad(x - h * v)) / (2 * h),
                               rtol=1e-5, atol=1e-6)


def zero_d(a):
    v = np.array(a)
    return np.sum(v * v * v)


def test_a_number_gives_a_0d_array_and_its_gradient_is_a_number(jit):
    g = srcgrad.grad(zero_d, jit=jit)(2.0)
    assert np.shape(g) == () and g == pytest.approx(12.0)
    assert srcgrad.jvp(zero_d, jit=jit)(2.0, 1.0)[1] == pytest.approx(12.0)


def as_integers(a, b):
    return np.sum(np.array([a, b], dtype=int) * 1.0)


def as_float32(a, b):
    return np.sum(np.array([a, b], dtype=np.float32))


def with_ndmin(x):
    return np.sum(np.array(x, ndmin=2) ** 2)


def asarray_in_order(x):
    return np.sum(np.asarray(x, order="F") ** 2)


def as_type(x):
    return np.sum(np.sin(x.astype(np.float64)) * x)


def as_python_float(x):
    m = (x > 0).astype(float)
    return np.sum(m * x.astype(float) ** 2)


def test_astype_of_pythons_float_compiles(jit):
    """numba's astype takes NumPy's types alone: generated code writes np.float64 for
    float (a mask made a float array is the everyday use)."""
    x = np.array([0.5, -1.0, 2.0])
    # by hand: 2 x where x > 0
    np.testing.assert_allclose(srcgrad.grad(as_python_float, jit=jit)(x), [1.0, 0.0, 4.0])
    assert srcgrad.jvp(as_python_float, jit=jit)(x, np.ones(3))[1] == pytest.approx(5.0)
    assert "astype(np.float64)" in srcgrad.source(as_python_float)


def test_astype_float64_passes_the_gradient_through(jit):
    """x.astype(dtype) is np.asarray(x, dtype): float64 passes the gradient, other
    dtypes are refused (below)."""
    x = np.array([0.5, -1.2, 2.0])
    # by hand: d/dx sum(sin(x) x) = cos(x) x + sin(x)
    np.testing.assert_allclose(srcgrad.grad(as_type, jit=jit)(x),
                               np.cos(x) * x + np.sin(x), rtol=1e-12)
    assert_grad(as_type, [srcgrad.grad(as_type, jit=jit)(x)], (x,), (0,))
    v = np.array([1.0, 2.0, -1.0])
    np.testing.assert_allclose(srcgrad.jvp(as_type, jit=jit)(x, v)[1],
                               np.dot(np.cos(x) * x + np.sin(x), v), rtol=1e-12)


def astype_int(x):
    return np.sum(x.astype(np.int64) * x)


@pytest.mark.parametrize("fun,args,message", [
    (astype_int, (np.array([1.5, 2.5]),), "int64 values here, through which no gradient"),
    (as_integers, (1.5, 2.0), "int64 values here, through which no gradient flows"),
    (as_float32, (1.5, 2.0), "float32 values here, through which no gradient flows"),
    (with_ndmin, (np.ones(3),), "with ndmin= have no gradient rule"),
    (asarray_in_order, (np.ones(3),), "with order= have no gradient rule"),
], ids=["astype-int", "int", "float32", "ndmin", "order"])
def test_what_drops_or_reshapes_the_gradient_is_refused(jit, fun, args, message):
    with pytest.raises(MissingRule, match=message):
        srcgrad.grad(fun, jit=jit)(*args)
    with pytest.raises(MissingRule, match=message):
        srcgrad.jvp(fun, jit=jit)(*args, np.ones_like(args[0]))


def weights_times(x, n):
    w = np.array([1.0, 2.0, n])
    return np.sum(w * x)


def test_an_array_of_constants_stays_a_plain_constructor(jit):
    x = np.array([1.0, -1.0, 2.0])
    np.testing.assert_allclose(srcgrad.grad(weights_times, jit=jit)(x, 3), [1.0, 2.0, 3.0])
    assert srcgrad.jvp(weights_times, jit=jit)(x, 3, np.ones(3))[1] == pytest.approx(6.0)
    for transform in (srcgrad.grad, srcgrad.jvp):
        source = transform(weights_times, jit=jit).source
        assert "np.array(" in source
        assert "copied_back" not in source and "copied_on" not in source


def joined(a, b):
    parts = [a]
    parts = parts + [b * a]
    return np.sum(np.array(parts) ** 2)


def repeated(a, b):
    parts = [a, b] * 2
    return np.sum(np.array(parts) * np.array([1.0, 2.0, 3.0, 4.0]))


def joined_in_place(a, b):
    parts = [a]
    parts += [b * a]
    return np.sum(np.array(parts) ** 2)


def joined_with_an_argument(a, xs):
    return np.sum(np.array(xs + (a,)) ** 2)


def test_a_list_joined_with_an_argument_is_refused(jit):
    # the rules of + and * are arithmetic: on lists they would give a wrong gradient
    with pytest.raises(MissingRule, match="join|repeat"):
        srcgrad.grad(joined_with_an_argument, jit=jit)(0.7, (1.0, 2.0))


def test_a_list_grown_in_place_is_the_joined_display(jit):
    # parts += [b a] (no other name holds parts) is parts = parts + [b a]: the display
    # [a, b a], as test_two_displays_joined_are_one's (was refused)
    a, b = 0.7, 1.3
    g = srcgrad.grad(joined_in_place, wrt=(0, 1), jit=jit)(a, b)
    np.testing.assert_allclose(g, (2 * a + 2 * a * b * b, 2 * a * a * b), rtol=1e-12)


def test_two_displays_joined_are_one(jit):
    # parts + [b a] of two displays is the display [a, b a]: f = a^2 + (a b)^2, so by
    # hand (2 a + 2 a b^2, 2 a^2 b)
    a, b = 0.7, 1.3
    g = srcgrad.grad(joined, wrt=(0, 1), jit=jit)(a, b)
    np.testing.assert_allclose(g, (2 * a + 2 * a * b * b, 2 * a * a * b), rtol=1e-12)
    assert_grad(joined, g, (a, b), [0, 1])


def test_a_display_repeated_by_a_literal_is_its_items_again(jit):
    # [a, b] * 2 is [a, b, a, b]: f = 1 a + 2 b + 3 a + 4 b, so by hand (4, 6)
    g = srcgrad.grad(repeated, wrt=(0, 1), jit=jit)(0.7, 1.3)
    np.testing.assert_allclose(g, (4.0, 6.0), rtol=1e-12)
    assert_grad(repeated, g, (0.7, 1.3), [0, 1])


def appended_in_a_loop(a, n):
    parts = []
    for i in range(n):
        parts.append(a * i)
    return np.sum(np.array(parts) ** 2)


def test_a_list_built_in_a_loop():
    # sum over i < 3 of (a i)^2 = 5 a^2: d/da = 10 a; forward mode follows the appends,
    # reverse mode fills an array (passes/lists.py)
    assert srcgrad.jvp(appended_in_a_loop, jit=False)(1.0, 3, 1.0)[1] == pytest.approx(10.0)
    assert srcgrad.grad(appended_in_a_loop, jit=False)(1.0, 3) == pytest.approx(10.0)


# ---- Python's sum of a list, a tuple or an array; max of one list ----


def sum_of_a_display(x):
    parts = [np.sin(x[i]) * i for i in range(3)]
    return sum(parts) + sum((x[0], x[1] * x[2]), 1.5) ** 2


def sum_of_rows(m):
    return np.sum(sum(m) ** 2)


def sum_of_arrays_from_a_number(x):
    return np.sum(sum([x[0] * x, x[1:2] ** 2], x[2]) ** 2)


@pytest.mark.parametrize("fun, arg", [
    (sum_of_a_display, np.array([0.3, 1.2, -0.7])),
    (sum_of_rows, np.array([[0.5, -1.0], [2.0, 0.25], [1.5, 1.0]])),
    (sum_of_rows, np.array([0.5, -1.0, 2.0])),
    (sum_of_arrays_from_a_number, np.array([0.3, 1.2, -0.7]))])
def test_builtin_sum_of_a_sequence(jit, fun, arg):
    # sum(L) of a list or tuple, sum(m) of a matrix's rows, sum(L, start): was MissingRule
    g = srcgrad.grad(fun, jit=jit)(arg)
    assert_grad(fun, [g], (arg,), [0])
    v = np.linspace(-1.0, 1.0, arg.size).reshape(arg.shape)
    assert srcgrad.jvp(fun, jit=jit)(arg, v)[1] == pytest.approx(np.sum(g * v), rel=1e-9)


def test_builtin_sum_by_hand():
    # sum of the rows of m, squared and summed: d/dm_ij = 2 (sum_k m_kj)
    m = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(srcgrad.grad(sum_of_rows, jit=False)(m),
                               [[8.0, 12.0], [8.0, 12.0]])


def two_parts(x):
    return [x[0], x[1] * 2.0]


def max_of_a_list(x):
    parts = two_parts(x)   # (not a display here: a helper's list)
    return max(parts)


def max_of_a_display(x):
    parts = [x[0], x[1] * 2.0]   # bound once: compared pairwise, as Python does
    more = parts + [x[0] * 3.0]   # (a join of displays is one too)
    return max(more) + min(parts)


@pytest.mark.parametrize("jit", [False, True])
def test_max_and_min_of_a_display_held_in_a_name(jit):
    # by hand at (1, 2): max is 2 x1 = 4, min is x0 = 1: gradient (1, 2)
    x = np.array([1.0, 2.0])
    g = srcgrad.grad(max_of_a_display, jit=jit)(x)
    np.testing.assert_allclose(g, [1.0, 2.0])
    assert_grad(max_of_a_display, (g,), (x,), [0])


def test_max_of_one_list_names_what_to_write():
    with pytest.raises(srcgrad.SrcgradError, match="np.max\\(np.array\\(L\\)\\)") as info:
        srcgrad.grad(max_of_a_list, jit=False)(np.array([1.0, 2.0]))
    assert "test_rules_building.py:" in str(info.value)
