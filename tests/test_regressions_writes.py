"""Regressions: writes into arguments, views and fancy-index copies (issues 18 and 26).

Every gradient is checked against central differences of the user's function (called on
copies: a function that writes into its argument changes it), and the caller's arrays must
be bit-identical after every transform's call."""

import warnings

import numpy as np
import pytest
import scipy.stats
from fd import assert_grad
from fuzz.runner import run, summary

import srcgrad
from srcgrad.checks import numerical_grad

# ---- functions that write into their argument ----


def arg_write(x):
    x[0] = x[1] * 3.0
    return np.sum(x ** 2)


def arg_aug(x):
    x *= 2.0
    x[1] += x[0] * x[2]
    return np.sum(x ** 2)


def arg_loop(x):
    for i in range(1, x.shape[0]):
        x[i] = x[i - 1] * np.sin(x[i])
    return np.sum(x * x)


def arg_slice(x):
    x[0, 1:] = x[1, :2] * 2.0
    return np.sum(np.tanh(x))


def arg_view_read(x):
    v = x[1:]             # a view of the argument: sees the write below, as in NumPy
    x[1] = x[0] * 5.0
    return np.sum(v * v)


WRITERS = [(arg_write, np.array([1.0, 2.0, 3.0])),
           (arg_aug, np.array([1.0, -2.0, 0.5])),
           (arg_loop, np.array([0.3, 1.2, -0.7, 0.9])),
           (arg_slice, np.arange(6.0).reshape(2, 3) / 5.0),
           (arg_view_read, np.array([1.5, 2.0, -1.0]))]
IDS = [f.__name__ for f, _ in WRITERS]


def fd(fun, x):
    return numerical_grad(lambda a: fun(a.copy()), (x.copy(),), 0)


@pytest.mark.parametrize("fun,x", WRITERS, ids=IDS)
def test_grad_of_a_function_writing_into_its_argument(fun, x, jit):
    before = x.copy()
    got = srcgrad.grad(fun, jit=jit)(x)
    assert np.array_equal(x, before)
    assert_grad(lambda a: fun(a.copy()), [got], (x.copy(),), [0])
    value, got2 = srcgrad.value_and_grad(fun, jit=jit)(x)
    assert np.array_equal(x, before)
    assert value == pytest.approx(fun(x.copy()))
    np.testing.assert_allclose(got2, fd(fun, x), rtol=1e-5, atol=1e-7)


def test_hand_values_of_writes_into_arguments(jit):
    x = np.array([1.0, 2.0, 3.0])
    # arg_write: sum((3 x1)^2 + x1^2 + x2^2) -> [0, 20 x1, 2 x2]
    np.testing.assert_allclose(srcgrad.grad(arg_write, jit=jit)(x), [0.0, 40.0, 6.0])
    # arg_view_read: v = [5 x0, x2] -> [50 x0, 0, 2 x2]
    np.testing.assert_allclose(srcgrad.grad(arg_view_read, jit=jit)(x), [50.0, 0.0, 6.0])
    assert np.array_equal(x, [1.0, 2.0, 3.0])


@pytest.mark.parametrize("fun,x", WRITERS, ids=IDS)
def test_jvp_vjp_hvp_leave_the_argument(fun, x, jit):
    before = x.copy()
    want = fd(fun, x)
    t = np.linspace(0.5, 1.5, x.size).reshape(x.shape)
    value, dvalue = srcgrad.jvp(fun, jit=jit)(x, t)
    assert np.array_equal(x, before)
    assert value == pytest.approx(fun(x.copy()))
    assert dvalue == pytest.approx(np.sum(want * t), rel=1e-5, abs=1e-7)
    value, pullback = srcgrad.vjp(fun, jit=jit)(x)
    assert np.array_equal(x, before)
    np.testing.assert_allclose(pullback(2.0), 2.0 * want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(pullback(1.0), want, rtol=1e-5, atol=1e-7)
    assert np.array_equal(x, before)
    hv = srcgrad.hvp(fun, jit=jit)(x, t)
    assert np.array_equal(x, before)
    # H t by central differences of the gradient along t
    h = 1e-5
    g = srcgrad.grad(fun, jit=jit)
    np.testing.assert_allclose(hv, (g(x + h * t) - g(x - h * t)) / (2 * h), rtol=1e-4,
                               atol=1e-6)
    assert np.array_equal(x, before)


def test_grad_of_grad_of_a_writer(jit):
    def f(x):
        x[0] = x[0] * x[0] * x[1]
        return np.sum(x)

    def g(y):
        x = np.array([y, 2.0])
        return srcgrad.grad(f, jit=jit)(x)[0]

    # d/dx0 f = 2 x0 x1 = 4 y: its derivative is 4
    x = np.array([1.5, 2.0])
    before = x.copy()
    h = srcgrad.hessian(f, jit=jit)(x)
    assert np.array_equal(x, before)
    np.testing.assert_allclose(h, [[2 * 2.0, 2 * 1.5], [2 * 1.5, 0.0]], rtol=1e-6)
    assert g(1.5) == pytest.approx(4 * 1.5)


# ---- issue 26 item 2: a view taken before a write sees the written values ----


def view_slice(x):
    z = np.zeros(3)
    v = z[1:]
    z[1] = x[0] * 2.0
    return np.sum(v * x[1:])


def view_reshape_T(x):
    z = np.zeros(4)
    m = z.reshape(2, 2)
    t = m.T                      # a view of a view
    z[0] = x[0] * x[1]
    z[3] += x[2] * 3.0
    return np.sum(t * np.array([[1.0, 2.0], [3.0, 4.0]])) + np.sum(m[0] * x[:2])


def view_ravel_loop(x):
    z = np.ones((2, 2))
    r = z.ravel()
    s = 0.0
    for i in range(2):
        z[i, :] = x[i] * z[i, :] + x[2]
        s = s + np.sum(r * r)
    return s


def view_row_slice_write(x):
    z = np.zeros((2, 3))
    row = z[1, :]
    z[1:, 1:] = x[1:] * x[0]
    return np.sum(row ** 2)


@pytest.mark.parametrize("fun", [view_slice, view_reshape_T, view_ravel_loop,
                                 view_row_slice_write])
def test_view_taken_before_a_write(fun, jit):
    x = np.array([1.0, 2.0, 3.0])
    got = srcgrad.grad(fun, jit=jit)(x)
    assert_grad(fun, [got], (x.copy(),), [0])


def test_view_taken_before_a_write_by_hand(jit):
    # sum(v * x[1:]) with v = [2 x0, 0]: [2 x1, 2 x0, 0]
    np.testing.assert_allclose(srcgrad.grad(view_slice, jit=jit)(np.array([1.0, 2.0, 3.0])),
                               [4.0, 2.0, 0.0])


def test_a_write_into_a_view_is_refused_clearly():
    def f(x):
        z = np.zeros(3)
        v = z[1:]
        v[0] = x[0]
        return np.sum(z * x)
    with pytest.raises(srcgrad.SrcgradError, match="'v' is a view of 'z'"):
        srcgrad.grad(f, jit=False)(np.array([1.0, 2.0, 3.0]))


# ---- issue 26 item 10: a fancy index is a copy, writing into it is allowed ----


def fancy_write(x):
    t = x[np.array([2, 0, 1])]
    t[0] = 5.0
    return np.sum(t * x[0])


def fancy_list_write(x):
    t = x[[2, 0, 1]]
    t[0] = 5.0
    return np.sum(t * x[0])


def mask_write(x):
    t = x[x > 1.5]
    t[0] = t[0] * 3.0
    return np.sum(t * t) + np.sum(x)


@pytest.mark.parametrize("fun", [fancy_write, mask_write])
def test_writing_into_a_fancy_index_copy(fun, jit):
    x = np.array([1.0, 2.0, 3.0])
    got = srcgrad.grad(fun, jit=jit)(x)
    assert np.array_equal(x, [1.0, 2.0, 3.0])
    assert_grad(fun, [got], (x.copy(),), [0])


def test_fancy_write_by_hand(jit):
    # x0 * (5 + x0 + x1) -> [5 + 2 x0 + x1, x0, 0]
    np.testing.assert_allclose(srcgrad.grad(fancy_write, jit=jit)(np.array([1.0, 2.0, 3.0])),
                               [9.0, 1.0, 0.0])


def test_fancy_list_write_python_form():
    # a list index does not compile under numba (a separate limitation); the Python form
    x = np.array([1.0, 2.0, 3.0])
    got = srcgrad.grad(fancy_list_write, jit=False)(x)
    np.testing.assert_allclose(got, [9.0, 1.0, 0.0])
    assert_grad(fancy_list_write, [got], (x.copy(),), [0])
    assert "copy" not in srcgrad.grad(fancy_list_write, jit=False).source


def test_a_write_into_a_view_of_an_argument_is_refused_and_names_it(jit):
    def f(x):
        v = x[1:]
        v[0] = 3.0 * v[0]
        return np.sum(x)
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(srcgrad.SrcgradError, match="'v' is a view of 'x'") as info:
        srcgrad.grad(f, jit=jit)(x)
    assert "v[0] = 3.0 * v[0]" in str(info.value)
    assert np.array_equal(x, [1.0, 2.0, 3.0])


# ---- `z += e` on an array with views: in place, as in NumPy ----


def aug_arg_with_view(x):
    v = x[1:]
    x *= 2.0              # changes v too
    return np.sum(v * v)


def aug_local_with_reshape_view(x):
    z = np.ones(3)
    t = z.reshape(3, 1)
    z += x
    return np.sum(t * t)


def aug_scalars_and_aliases(x):
    s = x[0]
    t = s                 # a number: `s += ...` rebinds s, t keeps the old value
    s += x[1]
    return s * t


@pytest.mark.parametrize("fun", [aug_arg_with_view, aug_local_with_reshape_view,
                                 aug_scalars_and_aliases])
def test_augmented_assignment_with_views(fun, jit):
    x = np.array([1.0, 2.0, 3.0])
    got = srcgrad.grad(fun, jit=jit)(x)
    assert np.array_equal(x, [1.0, 2.0, 3.0])
    assert_grad(lambda a: fun(a.copy()), [got], (x.copy(),), [0])


def test_an_array_made_by_numpy_changed_in_place_after_its_view_is_taken_has_no_check():
    # np.ones makes an array: `z += x` needs no check that z is not a number (as the
    # parameter of `np.reshape(x0, ...); x0 -= 1.0` has: test_regressions_fuzz.py)
    source = srcgrad.grad(aug_local_with_reshape_view).source
    assert "in_place_array" not in source and "z[:] = " in source


def test_augmented_assignment_with_views_by_hand(jit):
    x = np.array([1.0, 2.0, 3.0])
    # v = 2 x[1:]: sum(4 x1^2 + 4 x2^2)
    np.testing.assert_allclose(srcgrad.grad(aug_arg_with_view, jit=jit)(x), [0.0, 16.0, 24.0])
    # t = 1 + x: 2 (1 + x)
    np.testing.assert_allclose(srcgrad.grad(aug_local_with_reshape_view, jit=jit)(x),
                               [4.0, 6.0, 8.0])


# ---- in-place calls: were silently wrong and changed the caller's array ----


def out_keyword(x):
    np.multiply(x, 2.0, out=x)
    return np.sum(x * x)


def sort_method(x):
    x.sort()
    return np.sum(x * np.arange(3.0))


def put_method(x):
    y = np.zeros(3)
    y.put([0, 2], x[:2])   # (np.put is differentiated: tests/test_rules_puts.py)
    return np.sum(y * x)


def copyto_call(x):
    y = np.zeros(3)
    np.copyto(y, x)
    return np.sum(y * x)


@pytest.mark.parametrize("fun,text", [(out_keyword, "np.multiply(x, 2.0, out=x)"),
                                      (sort_method, "x.sort()"),
                                      (put_method, "y.put([0, 2], x[:2])")])
def test_in_place_calls_are_refused(fun, text):
    x = np.array([3.0, 1.0, 2.0])
    with pytest.raises(srcgrad.SrcgradError, match="in place") as info:
        srcgrad.grad(fun, jit=False)(x)
    assert text in str(info.value) and "test_regressions_writes.py:" in str(info.value)
    assert np.array_equal(x, [3.0, 1.0, 2.0])


def test_copyto_is_the_write_it_makes(jit):
    # np.copyto is differentiated as the write `y[...] = x` (it was refused): sum(x * x)
    x = np.array([3.0, 1.0, 2.0])
    np.testing.assert_allclose(srcgrad.grad(copyto_call, jit=jit)(x), 2 * x)
    assert np.array_equal(x, [3.0, 1.0, 2.0])


# ---- a helper writing into its argument: its caller sees the write, so it is refused ----


def writing_helper(a):
    a[0] = a[1] * 5.0
    return np.sum(a)


def calls_writing_helper(x):
    z = x * 1.0
    s = writing_helper(z)
    return np.sum(z * x) + s


def test_a_helper_writing_into_its_argument_is_refused(jit):
    # copying inside the helper would hide the write from the caller: a wrong gradient
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(srcgrad.UnsupportedSyntax,
                       match=r"test_regressions_writes.py:\d+: writing_helper writes into "
                             r"its argument 'a', the array passed here as 'z'") as info:
        srcgrad.grad(calls_writing_helper, jit=jit)(x)
    assert "s = writing_helper(z)" in str(info.value)
    assert np.array_equal(x, [1.0, 2.0, 3.0])
    # differentiated itself, the helper works on a copy
    got = srcgrad.grad(writing_helper, jit=jit)(x)
    np.testing.assert_allclose(got, [0.0, 6.0, 1.0])
    assert np.array_equal(x, [1.0, 2.0, 3.0])
    assert_grad(lambda a: writing_helper(a.copy()), [got], (x.copy(),), [0])


def helper_writes_row(a, b):
    v2 = a[1]
    a[1, 0] = v2[-1]
    return np.amax(a)


def result_unused(x1, n):
    s10 = np.zeros((3,))
    s10[n % 3] = np.sum(x1[0] ** 2) - helper_writes_row(x1, s10[-1])
    return np.sum(x1)


def helper_copies_first(a, b):
    a = a.copy()
    a[0] = b
    return np.sum(a)


def calls_copying_helper(x, y):
    return helper_copies_first(x, y) * y


def passes_on(a):
    return helper_writes_row(a, 2.0)


def test_a_helper_whose_result_is_not_used_still_writes(jit):
    # fuzzer seed 50141: the helper's write changed x1 (sum(x1) counts x1[1, 2] twice),
    # but its result was not needed, so the adjoint never saw the write: d/dx1[1] was
    # [1, 1, 1], not [0, 1, 2]; and the caller's array was changed
    x1 = np.array([[0.3, -0.9, -0.5], [-0.04, 0.26, -0.33]])
    before = x1.copy()
    with pytest.raises(srcgrad.UnsupportedSyntax, match="helper_writes_row writes into its "
                       "argument 'a', the array passed here as 'x1'"):
        srcgrad.grad(result_unused, jit=jit)(x1, 1)
    with pytest.raises(srcgrad.UnsupportedSyntax, match=r"test_regressions_writes.py:\d+: "
                       r"helper_writes_row writes .* passed here as 'a'"):
        srcgrad.grad(passes_on, jit=jit)(x1)   # through a helper that passes it on
    assert np.array_equal(x1, before)


def test_a_helper_that_copies_its_argument_first_is_differentiated(jit):
    # y * (3 y + sum(x[1])): d/dx = [[0, 0, 0], [y, y, y]], d/dy = 6 y + sum(x[1])
    x, y = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), 2.0
    dx, dy = srcgrad.grad(calls_copying_helper, wrt=(0, 1), jit=jit)(x, y)
    np.testing.assert_allclose(dx, [[0.0, 0.0, 0.0], [2.0, 2.0, 2.0]])
    assert dy == pytest.approx(12.0 + 15.0)
    assert_grad(calls_copying_helper, (dx, dy), (x, y), (0, 1))
    assert np.array_equal(x, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])


# ---- views made by NumPy functions (np.reshape, np.squeeze, np.transpose, ...) ----


def write_through_function_view(x1):
    t3 = np.squeeze(np.reshape(x1, (1, 3)))
    t3[1] = t3[-1]
    return np.sum(x1 * x1)


def write_through_transpose(x):
    t = np.transpose(x)
    t[0] = 2.0 * t[1]
    return np.sum(x ** 2)


def function_view_read_after_write(x):
    z = np.zeros(4)
    v = np.reshape(z, (2, 2))
    z[1] = x[0] * 3.0
    return np.sum(v * x[1])


def test_a_write_through_a_view_made_by_a_function_is_refused(jit):
    # fuzzer seed 50165: np.squeeze(np.reshape(x1, ...)) is a view of x1; writing into it
    # changed the caller's x1 and the adjoint read x1 as unwritten
    x = np.array([0.6, 0.5, 0.2])
    with pytest.raises(srcgrad.UnsupportedSyntax, match="'t3' is a view of 'x1'"):
        srcgrad.grad(write_through_function_view, jit=jit)(x)
    m = np.array([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(srcgrad.UnsupportedSyntax, match="'t' is a view of 'x'"):
        srcgrad.grad(write_through_transpose, jit=jit)(m)
    assert np.array_equal(x, [0.6, 0.5, 0.2])
    assert np.array_equal(m, [[1.0, 2.0], [3.0, 4.0]])


def test_a_view_made_by_a_function_reads_the_write(jit):
    # v = np.reshape(z, ...) sees z[1] = 3 x0: sum(v) x1 = 3 x0 x1; gradient (3 x1, 3 x0)
    x = np.array([0.3, 0.7])
    got = srcgrad.grad(function_view_read_after_write, jit=jit)(x)
    np.testing.assert_allclose(got, [2.1, 0.9], rtol=1e-12)
    assert_grad(function_view_read_after_write, (got,), (x,), (0,))


def op_assign_on_an_item_of_a_tuple(x0, n):
    for _ in range(n):
        p = (x0 * 2, x0)
        t = p[1]
        t *= 0.5
    return np.sum(np.sin(x0))


def write_into_an_item_of_a_tuple(x0):
    p = (x0 * 2, x0)
    t = p[1]
    t[0] = 0.0
    return np.sum(np.sin(x0))


def test_an_array_taken_out_of_a_tuple_is_an_alias(jit):
    # fuzzer seed 407839: t = p[1] with p = (..., x0) is x0; `t *= 0.5` changed x0 in
    # place, and the gradient read x0 as unchanged (silently wrong); it is refused, as
    # `t = x0; t *= 0.5` is, and so is a write into it
    x = np.array([-1.6, 0.5, -0.7])
    with pytest.raises(srcgrad.UnsupportedSyntax, match="'t \\*= ...' changes in place"):
        srcgrad.grad(op_assign_on_an_item_of_a_tuple, jit=jit)(x, 2)
    with pytest.raises(srcgrad.UnsupportedSyntax, match="'t' is a view of 'x0'"):
        srcgrad.grad(write_into_an_item_of_a_tuple, jit=jit)(x)
    assert np.array_equal(x, [-1.6, 0.5, -0.7])


def op_assign_under_a_row(x, y):
    v = x[0]
    x += y
    return np.sum(v ** 2)


def op_assign_under_a_row_of_a_local(x, y):
    z = x * 1.0
    v = z[0]
    z += y
    return np.sum(v ** 2)


def op_assign_on_an_aliased_name(x, y):
    v = x
    x += y
    return np.sum(v ** 2)


def write_multiplied_by_its_alias(x):
    t = x
    x[:] *= t
    return np.sum(np.sin(x))


def test_op_assign_changes_a_row_taken_before_it(jit):
    # `x += y` changes x in place, and the row v = x[0] with it (v = x[0] + y[0]): it was
    # taken as a new x, and v kept the old row. d/dx = d/dy = 2 (x[0] + y[0]) in row 0
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    y = np.array([[0.5, 0.25], [1.0, 2.0]])
    want = np.array([[3.0, 4.5], [0.0, 0.0]])
    for fun in (op_assign_under_a_row, op_assign_under_a_row_of_a_local):
        got = srcgrad.grad(fun, wrt=(0, 1), jit=jit)(x.copy(), y)
        np.testing.assert_allclose(got[0], want, rtol=1e-12)
        np.testing.assert_allclose(got[1], want, rtol=1e-12)
        assert_grad(lambda a, b, fun=fun: fun(a.copy(), b), got, (x, y), (0, 1))
    # a vector's entry is a number, not a view: v = x[0] stays what it was
    got = srcgrad.grad(op_assign_under_a_row, jit=jit)(np.array([1.5, 2.0]), np.ones(2))
    np.testing.assert_allclose(got, [3.0, 0.0], rtol=1e-12)


def test_op_assign_on_an_array_another_name_holds_is_refused(jit):
    # fuzzer seed 406379: x0 = x2; x2 -= e changed x0 too, and the gradient read x0 as
    # the old x2 (silently wrong); as `v = x[1:]; v += e`, it is refused for arrays
    x = np.array([1.0, 2.0])
    with pytest.raises(srcgrad.UnsupportedSyntax, match="'x \\+= ...' changes in place"):
        srcgrad.grad(op_assign_on_an_aliased_name, jit=jit)(x, np.ones(2))
    # a number has no other name: v keeps the old value. d/dx (x^2) = 2 x
    assert srcgrad.grad(op_assign_on_an_aliased_name, jit=jit)(1.5, 1.0) == pytest.approx(3.0)


def test_a_write_reading_an_alias_of_its_array(jit):
    # fuzzer seed 600129: t = x; x[:] *= t is x = x * x, but the adjoint read t after the
    # write (x squared) instead of x; d/dx sum(sin(x^2)) = 2 x cos(x^2)
    x = np.array([0.33, 1.12])
    got = srcgrad.grad(write_multiplied_by_its_alias, jit=jit)(x.copy())
    np.testing.assert_allclose(got, 2 * x * np.cos(x ** 2), rtol=1e-12)
    assert_grad(lambda a: write_multiplied_by_its_alias(a.copy()), (got,), (x,), (0,))


def alias_taken_in_an_inner_loop(x0, x1, n):
    i = 0
    while i < 2:
        i += 1
        for _ in range(n):
            x0 = x1
        v = x1[1]
        x1[1, 0] = np.dot(v, v)
    return np.sum(x0) + np.sum(x1)


def entry_taken_in_a_loop(x, n):
    z = x * 1.0
    v = 0.0
    for _ in range(n):
        v = z[0]
    z[0] = 5.0
    return v * np.sum(z)


def test_a_view_taken_in_a_loop_and_read_after_a_write_after_it(jit):
    # fuzzer seed 601287: x0 = x1 in an inner loop, then x1[1, 0] = ... in the outer one:
    # x0 sees the write, but the view, taken in a loop, was never checked (silently
    # wrong); it is refused when it is a view, as a view assigned twice is
    x0, x1 = np.ones((2, 3)), np.array([[0.7, -0.9, -0.4], [-0.9, -0.2, -1.5]])
    with pytest.raises(srcgrad.SrcgradError, match="'x0' is a view of 'x1' read after a "
                       "write into 'x1'.*x0 = x1.copy()"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", srcgrad.JitFallbackWarning)
            srcgrad.grad(alias_taken_in_an_inner_loop, wrt=1, jit="auto" if jit else False)(
                x0, x1, 3)
    # an entry of a vector is a number: v = x[0]; d/dx of x0 (5 + x1 + x2) = (5 + x1 + x2, x0, x0)
    x = np.array([0.5, 0.2, -0.3])
    got = srcgrad.grad(entry_taken_in_a_loop, jit=jit)(x, 2)
    np.testing.assert_allclose(got, [5.0 + 0.2 - 0.3, 0.5, 0.5], rtol=1e-12)


def item_of_a_tuple_read_before_a_write(x0):
    p = (x0, np.max(x0 * np.ones(3)))
    t = p[0] * p[1]
    x0[-1] *= np.sum(t)
    return np.sum(np.sin(x0))


def test_an_item_of_a_tuple_the_adjoint_reads_is_kept_before_a_write(jit):
    # fuzzer seed 602412: p[0] is x0; the adjoint of t = p[0] * p[1] read it after
    # x0[-1] *= ... had changed it (p[0] was not known to be x0)
    x = np.array([-0.97, 0.62, -0.63])
    got = srcgrad.grad(item_of_a_tuple_read_before_a_write, jit=jit)(x.copy())
    assert_grad(lambda a: item_of_a_tuple_read_before_a_write(a.copy()), (got,), (x,), (0,))


def returns_its_argument(a):
    b = a
    return a, b


def returns_a_new_array(a):
    return a * 1.0, a + 0.0


def item_returned_by_a_helper_read_after_a_write(x0):
    t7, t8 = returns_its_argument(x0)
    x0[1:] = np.sum(x0) * 2.0
    return np.sum(x0) + np.sum(t8 ** 2)


def item_of_new_arrays_read_after_a_write(x0):
    t7, t8 = returns_a_new_array(x0)
    x0[1:] = np.sum(x0) * 2.0
    return np.sum(x0) + np.sum(t8 ** 2)


def test_what_a_helper_returns_read_after_a_write_into_its_argument(jit):
    # fuzzer seed 602458: t8 is x0 itself (the helper returns its argument) and sees the
    # write into x0; the adjoint gave t8's gradient to x0 before the write (silently wrong)
    x = np.array([-0.97, 0.62, -0.63])
    with pytest.raises(srcgrad.SrcgradError, match="'t8', returned by returns_its_argument, "
                       "is the array 'x0'"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", srcgrad.JitFallbackWarning)
            srcgrad.grad(item_returned_by_a_helper_read_after_a_write,
                         jit="auto" if jit else False)(x.copy())
    # a helper that returns new arrays: t8 = x0 before the write.
    # x0[0] + 4 sum(x0) + sum(x0^2) (x0[1:] = 2 sum(x0) at the end): (1, 0, 0) + 4 + 2 x0
    got = srcgrad.grad(item_of_new_arrays_read_after_a_write, jit=jit)(x.copy())
    np.testing.assert_allclose(got, np.array([1.0, 0.0, 0.0]) + 4 + 2 * x, rtol=1e-12)


def item_of_a_tuple_of_views_read_after_writes(x0, n):
    p = (np.stack([x0[0], x0[2]]), x0[1:])
    t6 = p[1]
    for _ in range(n):
        x0[:] = np.sum(np.arctan2(t6.reshape(2, 1) * np.ones(3), x0 ** 2 + 1.0), axis=0)
    x0 = x0 + np.concatenate([t6, t6[:1]])
    return np.sum(np.sin(x0))


def test_a_view_kept_in_a_tuple_read_after_a_write(jit):
    # fuzzer seed 600923: t6 = p[1] is the view x0[1:], which sees the writes into x0; the
    # adjoint took it for the first x0[1:] (silently wrong). Refused, with the names
    x = np.array([1.2, 1.95, -0.44])
    with pytest.raises(srcgrad.SrcgradError, match="'t6' is a view of 'x0' read after a "
                       "write into 'x0'"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", srcgrad.JitFallbackWarning)
            srcgrad.grad(item_of_a_tuple_of_views_read_after_writes,
                         jit="auto" if jit else False)(x.copy(), 2)


def row_swapped_in_then_op_assign(x0):
    t5, t6 = 2.0, x0[0]
    t5, t6 = t6, t5
    x0 += 0.5
    return np.sum(x0 ** 2) + np.sum(t5 ** 3)


def test_op_assign_changes_a_row_taken_by_a_tuple_assignment(jit):
    # fuzzer seed 403769: t5 is the row x0[0] (through a tuple swap) and `x0 += 0.5`
    # changes it in place; x0 += was taken as a new x0 (silently wrong).
    # d/dx0: 2 (x0 + 0.5) everywhere, plus 3 (x0[0] + 0.5)^2 in row 0
    x = np.array([[-1.37, 0.59, -1.69], [-0.41, -0.1, -0.4]])
    got = srcgrad.grad(row_swapped_in_then_op_assign, jit=jit)(x.copy())
    want = 2 * (x + 0.5)
    want[0] += 3 * (x[0] + 0.5) ** 2
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert_grad(lambda a: row_swapped_in_then_op_assign(a.copy()), (got,), (x,), (0,))


def _same(a):
    return a


def writes_into_what_a_helper_returned(x):
    y = x * 1.0
    z = _same(y)
    z[0] = 5.0
    return np.sum(y * x)


def test_a_write_into_a_helper_result_that_may_be_an_argument_read_again_is_refused(jit):
    # found by the closures work (silently wrong): z is y itself, so y[0] is 5 after the
    # write, and the gradient gave 5.3 = 5 + x[0] in the entry 0 (the differences: 5)
    with pytest.raises(srcgrad.UnsupportedSyntax, match="may be the array 'y'") as info:
        srcgrad.grad(writes_into_what_a_helper_returned, jit=jit)(np.array([0.3, -1.0, 2.4]))
    assert "test_regressions_writes.py:" in str(info.value)


def accumulated_then_named(x):
    acc = x * 0.0
    for i in range(3):
        acc += x * i
    out = acc
    return np.sum(out * out)


def test_op_assign_before_the_array_is_shared(jit):
    # `out = acc` after the loop that changes acc in place: nothing changes the array
    # once both names hold it, yet `acc += ...` was refused as a change of an array
    # another name shares. By hand: out = 3x, f = 9 sum(x^2), df/dx = 18 x
    x = np.array([1.0, -2.0, 0.5])
    g = srcgrad.grad(accumulated_then_named, jit=jit)(x.copy())
    np.testing.assert_allclose(g, 18.0 * x, rtol=1e-12)
    assert_grad(accumulated_then_named, [g], (x,), [0])


# ---- an item read from an array or a list, then changed in place ----


def row_of_a_local_changed(x):
    m = np.outer(x, x)
    t = m[0]
    t -= 1.0
    return np.sum(m ** 2)


def item_of_a_list_changed(x0, n):
    parts = []
    for _ in range(n + 1):
        parts.append(x0)
    t = parts[-1]
    t -= 0.03
    return np.sum(x0 ** 2)


def row_of_a_loop_changed(m):
    out = 0.0
    for row in m:
        row -= 1.0
        out += np.sum(row ** 2)
    return out + np.sum(m)


def test_an_item_changed_in_place_that_another_name_sees_is_refused(jit):
    # `t = m[0]; t -= 1` changes m's row, and the gradient read m as it was (25 against
    # 21: silently wrong); fuzzer seed 9700016: `t = parts[-1]; t -= e` changes x0 itself,
    # which the list holds; and `for row in m: row -= 1` changes m. Refused for arrays.
    x = np.array([1.0, 2.0])
    for fun, args in ((row_of_a_local_changed, (x,)), (item_of_a_list_changed, (x, 1)),
                      (row_of_a_loop_changed, (np.outer(x, x),))):
        with pytest.raises(srcgrad.UnsupportedSyntax, match="'(t|row) -= ...' changes in place"):
            srcgrad.grad(fun, jit=jit)(*args)


def rows_changed_and_read(m):
    rows = m * 1.0
    t = rows[0]
    t -= 1.0
    return np.sum(t ** 2) + np.sum(rows[1])


def first_entry_accumulated(x):
    acc = x[0]
    for i in range(1, x.shape[0]):
        acc += x[i] ** 2
    return acc


def test_an_item_changed_in_place_that_nothing_else_reads(jit):
    # nothing else reads row 0 of rows after it changes: sum((m0 - 1)^2) + sum(m1) has
    # gradient 2 (m0 - 1) in row 0 and 1 in row 1
    m = np.array([[1.0, 2.5], [-0.5, 3.0]])
    g = srcgrad.grad(rows_changed_and_read, jit=jit)(m.copy())
    np.testing.assert_allclose(g, [[0.0, 3.0], [1.0, 1.0]], rtol=1e-12)
    assert_grad(lambda a: rows_changed_and_read(a.copy()), [g], (m,), [0])
    # an entry of a vector is a number: x0 + x1^2 + x2^2 has gradient (1, 2 x1, 2 x2),
    # and its check is made once, where it is read, not in the loop
    x = np.array([0.5, 1.5, -2.0])
    np.testing.assert_allclose(srcgrad.grad(first_entry_accumulated, jit=jit)(x),
                               [1.0, 3.0, -4.0], rtol=1e-12)
    source = srcgrad.grad(first_entry_accumulated, jit=False).source
    loop = source[source.index("for i"):source.index("# adjoint")]
    assert "unshared" in source and "unshared" not in loop


# ---- names that pass an array on without sharing it: swaps, `x = x`, tuple assignments ----


def heat_double_buffer(x, n):
    u = x.copy()
    v = np.zeros_like(u)
    for _ in range(n):
        v[1:-1] = u[1:-1] + 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])
        v[0] = u[0]
        v[-1] = u[-1]
        u, v = v, u          # the two buffers exchange their arrays
    return np.sum(u ** 2)


@pytest.mark.parametrize("n", [0, 1, 3])
def test_a_double_buffer_swapped_in_a_loop(n, jit):
    # `u, v = v, u` was refused as 'v' a view of 'u' (the names' map is blind to flow):
    # a swap through temporaries read once leaves each array held by one name. By hand:
    # u ends as A^n x, A the stencil's matrix, so the gradient is 2 (A^n)^T A^n x
    x = np.linspace(0.2, 1.3, 6) ** 2
    a = np.eye(6)
    for i in range(1, 5):
        a[i, i - 1:i + 2] += 0.1 * np.array([1.0, -2.0, 1.0])
    an = np.linalg.matrix_power(a, n)
    g = srcgrad.grad(heat_double_buffer, jit=jit)(x.copy(), n)
    np.testing.assert_allclose(g, 2.0 * an.T @ an @ x, rtol=1e-10)
    assert_grad(heat_double_buffer, [g], (x, n), [0])
    t = np.linspace(-1.0, 1.0, 6)
    _, slope_ = srcgrad.jvp(heat_double_buffer, jit=jit)(x.copy(), n, t)
    assert slope_ == pytest.approx(np.dot(g, t), rel=1e-10)



@pytest.mark.parametrize("checkpoint", [True, 2])
def test_a_double_buffer_checkpointed(checkpoint, jit):
    # the segment function of `checkpoint=` carries the swap (it was refused as 'v' bound
    # from another name); by hand, 2 (A^n)^T A^n x as above
    x = np.linspace(0.2, 1.3, 6) ** 2
    a = np.eye(6)
    for i in range(1, 5):
        a[i, i - 1:i + 2] += 0.1 * np.array([1.0, -2.0, 1.0])
    an = np.linalg.matrix_power(a, 5)
    g = srcgrad.grad(heat_double_buffer, jit=jit, checkpoint=checkpoint)(x.copy(), 5)
    np.testing.assert_allclose(g, 2.0 * an.T @ an @ x, rtol=1e-10)

def swapped_then_written_after(x, n):
    u = x * 1.0
    v = x * 0.5
    for _ in range(n):
        u, v = v, u
        v[1:] = np.sin(u[1:]) * v[1:]
        r = u[:2]                     # a view taken after the swap, read before the next
        v[0] = np.sum(r ** 2)
    return np.sum(u ** 2) + np.sum(v ** 3)


def rotated_three(x, n):
    a, b, c = x * 1.0, x * 2.0, x * 3.0
    for _ in range(n):
        a, b, c = b, c, a
        a[0] = a[1] * c[2]
    return np.sum(a * b) + np.sum(c)


def swapped_outside_loops(x, n):
    a = x * 2.0
    b = x[[2, 0, 0]]
    a, b = b, a                       # fuzz seed 10100009: 'a_1' was 'a view of _t3'
    a[[0, 2, 0]] += b * 1.5
    b[1] = a[0] ** 2
    return np.sum(np.sin(a)) + np.sum(b ** 2)


def bound_again_in_a_loop_and_a_branch(x, n):
    for _ in range(n):
        x = x
        x[0] += x[1] * x[0]
    if n > 1:
        x = x
    return np.sum(x ** 2)


def swapped_through_a_temporary(x, n):
    a = x * 1.0
    b = np.zeros_like(a)
    for _ in range(n):
        b[1:] += np.sum(a) * a[:-1]
        tmp = a                       # the user's swap: normalize writes it `a, b = b, a`
        a = b
        b = tmp
    return np.sum(a ** 2) + np.sum(b)


def rotated_through_a_temporary(x, n):
    a, b, c = x * 1.0, x * 2.0, x * 3.0
    for _ in range(n):
        t = a
        a = b
        b = c
        c = t
        a[0] = a[1] * c[2]
    return np.sum(a * b) + np.sum(c)


def swapped_in_a_nested_loop(x, n):
    a = x * 1.0
    b = np.zeros_like(a)
    for _ in range(n):
        for _ in range(2):
            b[1:] = np.sin(a[:-1]) * 2.0
            a, b = b, a
    return np.sum(a ** 2) + np.sum(b)


def accumulated_in_a_nested_swap_loop(x, n):
    a = x * 1.0
    b = x * 0.5
    for _ in range(n):
        for _ in range(2):
            b[1:] += np.sin(a[:-1])
            a, b = b, a
    return np.sum(a ** 2) + np.sum(b)


@pytest.mark.parametrize("fun", [swapped_then_written_after, rotated_three,
                                 swapped_outside_loops, bound_again_in_a_loop_and_a_branch,
                                 swapped_through_a_temporary, rotated_through_a_temporary,
                                 swapped_in_a_nested_loop, accumulated_in_a_nested_swap_loop])
@pytest.mark.parametrize("n", [1, 2, 5])
def test_names_passing_an_array_on_are_differentiated(fun, n, jit):
    x = np.array([0.5, 1.2, 2.0])
    g = srcgrad.grad(fun, jit=jit)(x.copy(), n)
    assert_grad(lambda a, k: fun(a.copy(), k), [g], (x, n), [0])
    # nested swap loops: the tape of a list (an inner loop's) kept `a` itself where `a =
    # _t4` bound it again, and the next iteration wrote into that array as `b`: the
    # adjoint read sin's argument changed (x1 got 2.0, differences 2 cos x1 = 0.725);
    # `b[1:] +=` in the inner loop was refused as it ran ('_t1' a view of 'b' read after
    # a write), its view read again only after the body binds it again
    if fun is swapped_in_a_nested_loop and n == 1:
        # by hand: x0^2 + 4 sin^2(2 sin x0) + 2 sin x0 + 2 sin x1
        inner = 2 * np.sin(x[0])
        want = [2 * x[0] + 8 * np.sin(inner) * np.cos(inner) * 2 * np.cos(x[0])
                + 2 * np.cos(x[0]), 2 * np.cos(x[1]), 0.0]
        np.testing.assert_allclose(g, want, rtol=1e-12)
    if fun is swapped_through_a_temporary and n == 1:
        # by hand: a = (0, S x0, S x1) with S = sum(x), b = x: sum(a^2) + sum(x)
        sx = np.sum(x)
        q = x[0] ** 2 + x[1] ** 2
        np.testing.assert_allclose(g, 2 * sx * q + 2 * sx ** 2 * x * [1, 1, 0] + 1.0,
                                   rtol=1e-12)
    if fun is bound_again_in_a_loop_and_a_branch and n == 2:
        # by hand: x0 ends as e = x0 (1 + x1)^2, so 2 e (1 + x1)^2 for x0, and
        # 2 e x0 2 (1 + x1) + 2 x1 for x1
        e = 0.5 * 2.2 ** 2
        np.testing.assert_allclose(g, [2 * e * 2.2 ** 2, 2 * e * 0.5 * 2 * 2.2 + 2.4, 4.0],
                                   rtol=1e-12)


def view_across_the_swap(x, n):
    u = x * 1.0
    v = x * 0.5
    w = u[1:]                         # the array u holds now: v's after the first swap
    for _ in range(n):
        v[1:] = u[1:] * u[:-1]
        u, v = v, u
    return np.sum(w ** 2) + np.sum(u)


def view_carried_across_the_swap(x, n):
    u = x * 1.0
    v = x * 0.5
    w = u[:2] * 1.0
    for _ in range(n):
        v[0] = w[1] * u[1]
        u, v = v, u
        w = u[1:]                     # read in the next iteration, after the swap
    return np.sum(w ** 2) + np.sum(u)


def view_read_by_the_adjoint_after_the_swap_loop(x, n):
    u = x * 1.0
    v = np.zeros_like(u)
    s = np.sum(u[1:] ** 2)            # the adjoint reads u[1:] after the loop, which the
    for _ in range(n):                # second iteration writes into (as v)
        v[...] = np.sin(u) * u[0]
        u, v = v, u
    return s + np.sum(u ** 2)


def view_read_by_the_adjoint_after_a_swap_in_a_branch(x, n):
    u = x * 1.0
    v = x * 0.5
    if n > 0:
        s = np.sum(u[1:] ** 2)        # the adjoint read u[1:] after `v[1] = 3.0` changed
        u, v = v, u                   # it: x1 got 7.5, differences 3.9
        v[1] = 3.0
    else:
        s = 0.0
    return s + np.sum(v * u)


@pytest.mark.parametrize("fun", [view_across_the_swap, view_carried_across_the_swap,
                                 view_read_by_the_adjoint_after_the_swap_loop,
                                 view_read_by_the_adjoint_after_a_swap_in_a_branch])
def test_a_swap_whose_arrays_another_name_sees_is_refused(fun, jit):
    # a view read across the swap: a write under one name after the swap changes what
    # the view sees, which the names cannot follow (names that shared an array before
    # the swap: tests/test_errors.py, write_after_a_swap_of_shared_names)
    # (the swap in a branch: v is taken for a view of u, the array it holds after it)
    with pytest.raises(srcgrad.UnsupportedSyntax,
                       match="is bound from another name|'v' is a view of 'u'"):
        srcgrad.grad(fun, jit=jit)(np.array([0.5, 1.2, 2.0]), 3)


def views_taken_after_the_swap_loop(x, n):
    u = x * 1.0
    v = np.zeros_like(u)
    for _ in range(n):
        v[...] = np.sin(u) * u[0]
        u, v = v, u
    s = np.sum(u[1:] ** 2)            # a view of u taken after the loop
    if n > 1:
        w = u[1:]                     # and one in a branch
        s = s + np.sum(w * v[:2])
    for k in range(2):
        v[k] = v[k] * u[k + 1]        # and views taken in a loop after it
    return s + np.sum(v ** 2)


@pytest.mark.parametrize("n", [1, 2, 4])
def test_views_taken_after_the_swap_loop_are_differentiated(n, jit):
    # fuzz seeds 127, 153 (of the grammar's double buffers): a view of a swapped name
    # taken after the swap's loop, in a branch or a loop of their own, was refused as seen
    # across the swap
    x = np.array([0.5, 1.2, 2.0])
    fun = views_taken_after_the_swap_loop
    g = srcgrad.grad(fun, jit=jit)(x.copy(), n)
    assert_grad(lambda a, k: fun(a.copy(), k), [g], (x, n), [0])
    if n == 1:
        # by hand: u = x0 sin(x), v = x; s = x0^2 (sin^2 x1 + sin^2 x2), then v0 = x0 u1,
        # v1 = x1 u2: x0^4 sin^2 x1 + x0^2 x1^2 sin^2 x2 + x2^2 besides
        s0, s1, s2 = np.sin(x)
        c1, c2 = np.cos(x[1:])
        x0, x1, x2 = x
        want = [2 * x0 * (s1 ** 2 + s2 ** 2) + 4 * x0 ** 3 * s1 ** 2
                + 2 * x0 * x1 ** 2 * s2 ** 2,
                2 * x0 ** 2 * s1 * c1 + 2 * x0 ** 4 * s1 * c1 + 2 * x0 ** 2 * x1 * s2 ** 2,
                2 * x0 ** 2 * s2 * c2 + 2 * x0 ** 2 * x1 ** 2 * s2 * c2 + 2 * x2]
        np.testing.assert_allclose(g, want, rtol=1e-12)


@pytest.mark.parametrize("fun", [swapped_outside_loops, heat_double_buffer,
                                 swapped_through_a_temporary,
                                 accumulated_in_a_nested_swap_loop])
def test_hessian_products_through_names_passing_an_array_on(fun, jit):
    # the gradient's own code binds `da = d_t3` after `db_1 += ...`: the in-place check
    # of its forward mode took the two for sharing (nothing changes either in place
    # after the binding), and hvp was refused as it ran; in a loop, `da = d_t7` of the
    # swap, then `da = snapshot(da); da[:-1] += d; da += e` (a copy since the swap)
    x = np.array([0.5, 1.2, 2.0, 0.7])
    v = np.array([1.0, -0.5, 0.3, 0.2])
    if fun is swapped_outside_loops:
        x, v = x[:3], v[:3]
    g = srcgrad.grad(fun, jit=False)
    h = 1e-5
    want = (g(x + h * v, 2) - g(x - h * v, 2)) / (2 * h)
    np.testing.assert_allclose(srcgrad.hvp(fun, jit=jit)(x.copy(), 2, v), want,
                               rtol=1e-5, atol=1e-7)


def swapped_in_a_branch_then_written_in_a_loop(x0, x2, n):
    if n > 0:
        t7, t8 = x2, x0
        t7, t8 = t8, t7               # t7 is x0's array (its copy on entry)
        for _ in range(n):
            x0[n % 2] = np.sum(t7 * 2.0)   # NumPy: t7 sees this write next iteration
    return np.sum(np.sin(x0)) + np.sum(x2)


def test_a_name_swapped_in_a_branch_onto_an_array_written_in_a_loop_is_refused(jit):
    # fuzz seed 10420351: t7 reached x0 through the branch's swap (t7 = _t2, _t2 = t8,
    # t8 = x0), names that may each be a view; the adjoint took t7 for a value of its
    # own, so the writes into x0 never reached it: x0 got (0.39, -0.13) for n = 3 where
    # differences give (-0.41, -0.53), silently
    x0, x2 = np.array([-1.02, -1.15]), np.array([-1.63, -0.007])
    with pytest.raises(srcgrad.UnsupportedSyntax, match="'t7' is a view of 'x0'"):
        srcgrad.grad(swapped_in_a_branch_then_written_in_a_loop, jit=jit)(x0, x2, 3)


def rotated_onto_a_view_in_a_loop(x0, x1, n):
    t1 = x1 ** 2 + 1.0
    buf2 = x0 * 1.0
    buf3 = x1
    buf4 = np.zeros(3)
    for _ in range(n):
        buf3 = t1[::-1]                       # a view of t1, which the rotation passes on
        buf2, buf3, buf4 = buf3, buf4, buf2
    t1 += x0[2]                               # buf4 sees it when it is t1[::-1] (n >= 2)
    return np.sum(buf4 * 2.0) + np.sum(t1)


def swapped_onto_a_view_in_a_loop(x0, x1, n):
    t1 = x1 ** 2 + 1.0
    buf4 = np.zeros(3)
    for _ in range(n):
        buf3 = t1[::-1]
        buf4, buf3 = buf3, buf4
    t1[2] = x0[2]                             # buf4 sees it when it is t1[::-1] (n >= 1)
    return np.sum(buf4 * 2.0) + np.sum(t1)


@pytest.mark.parametrize("fun", [rotated_onto_a_view_in_a_loop, swapped_onto_a_view_in_a_loop])
def test_a_view_a_swap_in_a_loop_passes_on_is_followed_to_its_array(fun, jit):
    """Fuzz seed 10470095: `buf3 = t1[::-1]` in a loop, passed on by a rotation to
    buf4, which then sees a write into t1; the view was not followed through the loop's
    swap, and x0[2] got 1 where differences give 1 + 6 (by hand: 2 * 3 entries of
    buf4 = t1[::-1] each gain x0[2]), silently. Now refused as it runs where the swap
    binds buf4 from a name that may hold a view of t1 (the check is where the view is
    taken, and takes the name it comes from for the array: it refuses n = 1 of the
    rotation too, where buf4 is x0 * 1.0); with no iteration, differentiated."""
    x0, x1 = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])
    for n in (1, 2):
        with pytest.raises(srcgrad.UnsupportedSyntax, match="'buf4' is a view of 't1' "
                                                            "read after a write into 't1'"):
            srcgrad.grad(fun, wrt=(0, 1), jit=jit)(x0.copy(), x1.copy(), n)
    # n = 0: buf4 is zeros; sum(t1) is sum(x1^2 + 1) + 3 x0[2] (+=), or with t1[2] = x0[2]
    g0, g1 = srcgrad.grad(fun, wrt=(0, 1), jit=jit)(x0.copy(), x1.copy(), 0)
    added = fun is rotated_onto_a_view_in_a_loop
    np.testing.assert_allclose(g0, [0.0, 0.0, 3.0 if added else 1.0])
    np.testing.assert_allclose(g1, 2 * x1 * [1.0, 1.0, 1.0 if added else 0.0])
    assert_grad(lambda a, b: fun(a.copy(), b, 0), (g0, g1), (x0, x1), [0, 1])


# ---- a rule's result handed to another name, then written into ----


def swapped_then_written(x, y):
    t2, t3 = x * 2.0, np.exp(x)
    t2, t3 = t3, t2                           # t2 holds exp's result, which its adjoint reads
    t2[[0, 2, 0]] += y[0]                     # t2[0] and t2[2] gain y[0] (once each)
    return np.sum(t2 * x) + np.sum(t3)


def renamed_then_written(x, y):
    t = np.exp(x)
    u = t                                     # t is never read again: u takes its array over
    u[0] += y[0]
    return np.sum(u * x)


def unpacked_then_written_in_a_loop(x, y):
    a, b = np.exp(x), y * 2.0
    for i in range(3):
        a[i] += b[i] * a[i]
    return np.sum(a * x)


def handed_seed_10500393(x0, x1):
    t2, t3 = x1[1:].reshape(2, 1) * x1, np.logaddexp2(np.minimum(np.ones((2, 1)) * x0, x0 + 3.0),
                                                      scipy.stats.norm.logpdf(x0, x1, 1.5))
    t2, t3 = t3, t2
    t2[:, [0, 2, 0]] += x1[0]
    x0[:] -= (t2[1, 2] - t2[-1])
    return np.sum(x0 ** 2) + np.sum(x1)


HANDED_BY_HAND = {   # d/dx, d/dy of each, worked out by hand
    swapped_then_written: lambda x, y: (np.exp(x) * (1 + x) + [y[0], 0, y[0]] + 2.0,
                                        [x[0] + x[2], 0.0, 0.0]),
    renamed_then_written: lambda x, y: (np.exp(x) * (1 + x) + [y[0], 0, 0], [x[0], 0.0, 0.0]),
    unpacked_then_written_in_a_loop: lambda x, y: (np.exp(x) * (1 + 2 * y) * (1 + x),
                                                   2 * np.exp(x) * x),
}


@pytest.mark.parametrize("fun", list(HANDED_BY_HAND))
def test_a_rule_result_handed_to_another_name_is_kept_from_its_writes(fun, jit):
    """Fuzz seed 10500393: exp's adjoint reads its result; a rename, a tuple assignment
    or a swap hands that array to another name, which is written into. The tape saved
    nothing (the write was under another name) and the adjoint read the written array:
    x[0] of `renamed_then_written` got 5.94 for exp(1) * 2 + y0 = 5.69, silently."""
    x, y = np.array([1.0, 0.5, -1.0]), np.array([0.25, -0.5, 1.0])
    gx, gy = srcgrad.grad(fun, wrt=(0, 1), jit=jit)(x.copy(), y.copy())
    hx, hy = HANDED_BY_HAND[fun](x, y)
    np.testing.assert_allclose(gx, hx, rtol=1e-12)
    np.testing.assert_allclose(gy, hy, rtol=1e-12, atol=1e-15)
    assert_grad(lambda a, b: fun(a.copy(), b.copy()), (gx, gy), (x, y), [0, 1])
    tx, ty = np.array([0.3, -0.2, 0.7]), np.array([-0.1, 0.4, 0.2])
    _, t = srcgrad.jvp(fun, wrt=(0, 1), jit=jit)(x.copy(), y.copy(), (tx, ty))
    np.testing.assert_allclose(t, hx @ tx + np.dot(hy, ty), rtol=1e-10)


def test_the_swap_of_fuzz_seed_10500393(jit):
    """The seed as the fuzzer wrote it: logaddexp2's adjoint reads its result, which the
    swap hands to t2, written in place; x0 got (11.90, -0.38, -4.92), differences give
    (10.11, -0.38, -3.52)."""
    x0 = np.array([1.57446347, -0.29532036, 0.09053818])
    x1 = np.array([-0.46322312, 0.06416925, -0.0153408])
    g = srcgrad.grad(handed_seed_10500393, wrt=(0, 1), jit=jit)(x0.copy(), x1.copy())
    np.testing.assert_allclose(g[0], [10.11351456, -0.38272319, -3.51781356], rtol=1e-6)
    assert_grad(lambda a, b: handed_seed_10500393(a.copy(), b.copy()), g, (x0, x1), [0, 1],
                rtol=1e-5, atol=1e-6)


def unpacked_then_swapped_in_a_loop(x, y, n):
    u, v = np.exp(x), np.zeros(3)             # u takes exp's result over from a temporary
    for _ in range(n):
        v[:] = u * y                          # on the 2nd iteration: into exp's result
        u, v = v, u
    return np.sum(u * x) + np.sum(v)


def renamed_then_swapped_in_a_loop(x, y, n):
    u = np.exp(x)
    w = u                                     # u is never read again: w takes its array over
    v = np.zeros(3)
    for _ in range(n):
        v[1:] = w[1:] * y[1:]
        w, v = v, w
    return np.sum(w * x) + np.sum(v)


@pytest.mark.parametrize("fun", [unpacked_then_swapped_in_a_loop, renamed_then_swapped_in_a_loop])
def test_a_rule_result_a_swap_in_a_loop_writes_into_is_kept_for_its_adjoint(fun, jit):
    """exp's adjoint reads its result, bound outside the loop and handed to a name the
    loop's swap passes round; from the second iteration it is written into. The tape
    kept no copy: x got (0.91, 0.0033, 0.00025) for n = 2 where differences give (0.43,
    0.050, -0.017). Now the result is kept where the adjoint reads it."""
    x, y = np.array([1.0, 0.5, -1.0]), np.array([0.25, -0.5, 1.5])
    e = np.exp(x)
    for n in (1, 2, 3):
        gx, gy = srcgrad.grad(fun, wrt=(0, 1), jit=jit)(x.copy(), y.copy(), n)
        assert_grad(lambda a, b, n=n: fun(a.copy(), b.copy(), n), (gx, gy), (x, y), [0, 1])
        if fun is unpacked_then_swapped_in_a_loop and n == 2:
            # by hand: u = e * y * y, v = e * y: d/dx = e * y^2 * (1 + x) + e * y
            np.testing.assert_allclose(gx, e * y ** 2 * (1 + x) + e * y, rtol=1e-12)



def test_a_name_bound_again_from_a_temporary_in_a_branch():
    """Fuzz seed 10530217 (on a draft of the fix above, never on main): `d9.update(a=...)`
    in a branch binds d9_a again from a temporary; the draft took that binding for a
    change of the temporary's array and saved the temporary before it had a value
    (UnboundLocalError as the gradient ran). Replayed as the fuzzer makes it, checked
    against central differences and jvp."""
    results = run([10530217], jit=False, report=None)
    assert results["ok"] and not results["wrong"] + results["crashed"], summary(results)


# ---- a helper's result that may be its argument, handed to another name ----


def helper_result_unpacked_then_written(x):
    y = x * 2.0
    a, c = _same(y), 1.0                      # a is y itself
    a[0] = 5.0
    return np.sum(y * y) + c


def helper_result_renamed_then_written(x):
    y = x * 2.0
    z = _same(y)
    w = z                                     # z is never read again: w takes y's array
    w[0] = 5.0
    return np.sum(y * y)


@pytest.mark.parametrize("fun", [helper_result_unpacked_then_written,
                                 helper_result_renamed_then_written])
def test_a_helper_result_handed_to_another_name_then_written_is_refused(fun, jit):
    """Silently wrong on f6b7fb3: `z = h(y)` may be y, and a write into z is refused,
    but not one under a name z (or a tuple assignment's temporary) handed its array to:
    the gradient gave (20, 16, 24) at x = (1, 2, 3), the differences (0, 16, 24)."""
    with pytest.raises(srcgrad.UnsupportedSyntax, match="may be the array 'y'") as info:
        srcgrad.grad(fun, jit=jit)(np.array([1.0, 2.0, 3.0]))
    assert "test_regressions_writes.py:" in str(info.value)


# ---- a view of a value read nowhere else, written into ----


def flipped_join_written(x, y):
    t = np.flip(np.concatenate([x, y[:1]]))   # the join is read only here: t holds it
    t[1:] *= y[1]
    return np.sum(t * t)


def reversed_exp_written(x, y):
    t = np.exp(x)[::-1]                       # exp's adjoint reads its result: kept
    t[0] *= y[0]
    return np.sum(t * t)


def row_of_a_reshape_written_then_swapped(x, y):
    a, b = np.reshape(np.concatenate([x, x]), (2, 3))[-1], x * y
    a, b = b, a
    b[1] = y[0]
    return np.sum(a * b)


def taken_row_swapped_in_a_loop(x, y, n):
    u = np.cumprod(np.outer(x, y), axis=0)[-1]   # cumprod's adjoint reads its result
    v = np.zeros(3)
    for _ in range(n):
        v[:] = u * y
        u, v = v, u
    return np.sum(u * x) + np.sum(v)


def _viewed_by_hand(fun, x, y):
    """d/dx, d/dy of the functions above, by hand."""
    if fun is flipped_join_written:
        # t = (y0, x2, x1, x0) with the last three times y1
        return 2 * x * y[1] ** 2, [2 * y[0], 2 * y[1] * np.sum(x * x), 0.0]
    if fun is reversed_exp_written:
        # t = (e2 y0, e1, e0): sum t^2 = e^2x2 y0^2 + e^2x1 + e^2x0
        e2 = np.exp(2 * x)
        return [2 * e2[0], 2 * e2[1], 2 * e2[2] * y[0] ** 2], [2 * e2[2] * y[0], 0.0, 0.0]
    if fun is row_of_a_reshape_written_then_swapped:
        # a = x * y, b = (x0, y0, x2): x0^2 y0 + x1 y1 y0 + x2^2 y2
        return ([2 * x[0] * y[0], y[1] * y[0], 2 * x[2] * y[2]],
                [x[0] ** 2 + x[1] * y[1], x[1] * y[0], x[2] ** 2])
    return None


@pytest.mark.parametrize("fun", [flipped_join_written, reversed_exp_written,
                                 row_of_a_reshape_written_then_swapped])
def test_a_view_of_a_value_read_nowhere_else_is_written_into(fun, jit):
    """A view (`np.flip`, a slice, a row of a reshape) of a value nothing else reads holds
    the array it views, as a renamed name does: a write into it is differentiated, and
    what an adjoint reads of the array is kept from it (refused before: fuzz seeds
    10560009, 10560106)."""
    x, y = np.array([0.5, -1.0, 0.75]), np.array([1.5, -0.5, 2.0])
    gx, gy = srcgrad.grad(fun, wrt=(0, 1), jit=jit)(x.copy(), y.copy())
    hx, hy = _viewed_by_hand(fun, x, y)
    np.testing.assert_allclose(gx, hx, rtol=1e-12)
    np.testing.assert_allclose(gy, hy, rtol=1e-12, atol=1e-15)
    assert_grad(lambda a, b: fun(a.copy(), b.copy()), (gx, gy), (x, y), [0, 1])
    tx, ty = np.array([0.3, -0.2, 0.7]), np.array([-0.1, 0.4, 0.2])
    _, t = srcgrad.jvp(fun, wrt=(0, 1), jit=jit)(x.copy(), y.copy(), (tx, ty))
    np.testing.assert_allclose(t, np.dot(hx, tx) + np.dot(hy, ty), rtol=1e-10)


def test_a_row_taken_from_a_value_swapped_in_a_loop(jit):
    """Fuzz seed 10560041's form: a row of cumprod's result, swapped in a loop that writes
    into it from the second iteration on (refused before: the row was a view)."""
    x, y = np.array([0.5, -1.0, 0.75]), np.array([1.5, -0.5, 2.0])
    for n in (1, 2, 3):
        gx, gy = srcgrad.grad(taken_row_swapped_in_a_loop, wrt=(0, 1), jit=jit)(
            x.copy(), y.copy(), n)
        assert_grad(lambda a, b, n=n: taken_row_swapped_in_a_loop(a.copy(), b.copy(), n),
                    (gx, gy), (x, y), [0, 1])


# ---- calls that may return an array they are passed ----


def _exp_of(v):
    return v


def _first_of(v):
    return v, 1.0


def helper_passes_a_rule_result_on(x):
    t = _exp_of(np.exp(x))                    # t is exp's result, which its adjoint reads
    t[0] *= 3.0
    return np.sum(t * t)


def helper_item_passes_a_rule_result_on(x):
    t = _first_of(np.exp(x))[0]
    t[0] *= 3.0
    return np.sum(t * t)


def contiguous_rule_result_written(x):
    t = np.ascontiguousarray(np.exp(x))       # exp's result itself (it is contiguous)
    t[0] *= 3.0
    return np.sum(t * t)


@pytest.mark.parametrize("fun", [helper_passes_a_rule_result_on,
                                 helper_item_passes_a_rule_result_on,
                                 contiguous_rule_result_written])
def test_a_rule_result_a_call_passes_on_is_kept_from_its_writes(fun, jit):
    """exp's adjoint reads its result, which a helper returning its argument (or
    np.ascontiguousarray) passes on to t, written into: the adjoint read the written
    array, (146.8, 14.8, 1.1) for (48.9, 14.8, 1.1) by hand (silently wrong on f6b7fb3,
    but for the tuple's item, refused there). By hand: sum t^2 = 9 e^(2 x0) + e^(2 x1)
    + e^(2 x2)."""
    x = np.array([0.5, 1.0, -0.3])
    g = srcgrad.grad(fun, jit=jit)(x.copy())
    np.testing.assert_allclose(g, 2 * np.exp(2 * x) * [9.0, 1.0, 1.0], rtol=1e-12)
    assert_grad(lambda a: fun(a.copy()), (g,), (x,), [0])


def kept_as_itself(x):
    y = x * 2.0
    t = np.array(y, copy=False)               # y itself
    t[0] = 5.0
    return np.sum(y * y)


def cast_as_itself(x):
    y = x * 2.0
    t = y.astype(np.float64, copy=False)      # y itself
    t[0] = 5.0
    return np.sum(y * y)


def made_contiguous(x):
    y = x * 2.0
    t = np.ascontiguousarray(y)               # y itself
    t[0] = 5.0
    return np.sum(y * y)


def broadcast_together(x):
    y = x * 2.0
    t = np.broadcast_arrays(x, y)[1]          # a view of y
    t[0] = 5.0
    return np.sum(y * y)


def gridded_without_copies(x):
    y = x * 2.0
    t = np.meshgrid(y, x, copy=False)[0]      # a view of y
    t[0, 0] = 5.0
    return np.sum(y * y)


def at_least_1d_of_two(x):
    y = x * 2.0
    t = np.atleast_1d(x, y)[1]                # y itself
    t[0] = 5.0
    return np.sum(y * y)


@pytest.mark.parametrize("fun", [kept_as_itself, cast_as_itself, made_contiguous,
                                 broadcast_together, gridded_without_copies,
                                 at_least_1d_of_two])
def test_a_write_into_what_a_call_may_return_of_an_array_read_again_is_refused(fun):
    """Each result is (a view of) y, which the function reads after the write: silently
    wrong on f6b7fb3 for the first three ((20, 8, -2.4) for differences (0, 8, -2.4)),
    and on a draft that let a view of a value read once hold its array for the others."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)   # (NumPy's, on broadcasts)
        with pytest.raises(srcgrad.UnsupportedSyntax,
                           match="may be the array '[xy]'|is a view of 'y'") as info:
            srcgrad.grad(fun, jit=False)(np.array([0.5, 1.0, -0.3]))
    assert "test_regressions_writes.py:" in str(info.value)


def default_of_a_nested_def_written(x):
    y = x * 2.0

    def given(a=y):                           # the default is y's array
        return a
    t = given()
    t[0] = 5.0
    return np.sum(y * y)


def test_a_write_into_what_a_nested_def_returns_of_its_default_is_refused(jit):
    """`given()` returns its default, y itself, which the write changes: silently wrong on
    f6b7fb3 ((20, 8, -2.4) for differences (0, 8, -2.4)): the default, bound to a name
    of srcgrad's read only in the call, hid that y is read again."""
    with pytest.raises(srcgrad.UnsupportedSyntax, match="may be the array 'y'") as info:
        srcgrad.grad(default_of_a_nested_def_written, jit=jit)(np.array([0.5, 1.0, -0.3]))
    assert "test_regressions_writes.py:" in str(info.value)


def started_as_a_number_then_an_array(x, n):
    out = 0.0
    for _ in range(n):
        acc = 0                                   # a number, then an array
        for j in range(n):
            acc = acc + x * (j + 1.0)
        for _ in range(n):
            out = out + np.dot(np.ones(3), acc) ** 2
    return out


def test_an_adjoint_added_in_place_into_a_number_is_refused(jit):
    """Fuzz seed 10630399: the outer loop's adjoint starts acc's adjoint from acc's value
    there, the number it starts each iteration with, and np.dot's adjoint added into it
    in place: lost on every iteration but the last, silently in the Python form (50.4
    for differences' 100.8 at n = 2; numba refuses to unify a number with an array). Now
    the Python form refuses too, naming the line."""
    x = np.array([0.5, -0.3, 1.2])
    with pytest.raises(srcgrad.SrcgradError, match="a number, then an array") as info:
        srcgrad.grad(started_as_a_number_then_an_array, jit=jit)(x, 2)
    assert "test_regressions_writes.py:" in str(info.value)
    results = run([10630399], jit=False, report=None)
    assert not results["wrong"], summary(results)


def changed_then_put_in_a_tuple(a):
    d = np.zeros(3)
    d[1] = a[0]
    d += a
    t = (a, d)
    return np.sum(t[1] ** 2)


def put_in_a_tuple_then_changed(a):
    d = np.zeros(3)
    d[1] = a[0]
    t = (a, d)
    d += a
    return np.sum(t[1] ** 2)


def test_an_array_changed_in_place_before_a_tuple_holds_it(jit):
    # `d += a` before `t = (a, d)`: nothing changes the array t holds, and the sharing
    # no longer refuses the change (it was refused wherever the tuple was made).
    # d = (a0, a0 + a1, a2): the gradient of sum(d**2) is (2 d0 + 2 d1, 2 d1, 2 d2)
    a = np.array([1.0, 2.0, 3.0])
    g = srcgrad.grad(changed_then_put_in_a_tuple, jit=jit)(a)
    np.testing.assert_allclose(g, [8.0, 6.0, 6.0])
    assert_grad(changed_then_put_in_a_tuple, [g], (a,), [0])
    # after the tuple holds it, `d += a` changes t[1] too: still refused
    with pytest.raises(srcgrad.UnsupportedSyntax, match="'d \\+= ...' changes in place"):
        srcgrad.grad(put_in_a_tuple_then_changed, jit=jit)(a)
