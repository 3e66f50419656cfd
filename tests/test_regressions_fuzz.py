"""Named regressions: defects the differential fuzzer (tests/fuzz), third-party programs
and reviews found, each shrunk to the few lines that show it. Gradients are checked against central
differences and, where there is one, a value by hand; compiled and as Python (the `jit`
fixture)."""

import os
import warnings

import numpy as np
import pytest
import scipy.special
from fd import assert_grad
from marks import compiles, needs_numba_advanced_indexing

import srcgrad


def subtract_scalar_parameter(x0, x1):
    s = np.zeros(2)
    s[1:] = x0 ** 3
    t = s  # noqa: F841 (an alias the fuzzer left)
    s -= x1
    return np.sum(x0 ** 2) + np.sum(x1)


def test_augmented_assignment_does_not_copy_its_operand(jit):
    # fuzzer seed 5208/5262: `s -= x1` took x1 for a view of s, and copied the float
    # parameter x1 on entry (AttributeError: 'float' object has no attribute 'copy')
    args = (1.0, 1.6)
    g = srcgrad.grad(subtract_scalar_parameter, wrt=(0, 1), jit=jit)(*args)
    assert g == pytest.approx((2.0, 1.0))
    assert_grad(subtract_scalar_parameter, g, args, (0, 1))


def int_accumulator_broadcast(x, n):
    acc = 0
    for _ in range(n):
        acc = acc + np.expand_dims(x * np.ones(2), 1) + x * np.ones(3)
    if x > -5.0:
        return np.sum(acc * acc)
    return x


@pytest.mark.parametrize("n", [1, 2, 3])
def test_int_accumulator_grows_by_broadcasting(n):
    # fuzzer seed 5344: `acc = 0` becomes (2, 1) + (3,) = (2, 3) in the first iteration;
    # the adjoint read the last iteration's acc for the shape of the first one's
    # (ValueError: cannot unbroadcast a gradient of shape (2, 1) to (2, 3))
    g = srcgrad.grad(int_accumulator_broadcast, jit=False)(0.3, n)
    assert g == pytest.approx(6 * 2 * (2 * n) ** 2 * 0.3)   # sum of six (2 n x)**2
    assert_grad(int_accumulator_broadcast, (g,), (0.3, n), (0,))


@compiles
def test_int_accumulator_that_becomes_an_array_is_refused_compiled():
    # numba types a variable once: the primal itself does not compile; the error says why
    with pytest.raises(srcgrad.SrcgradError, match="a number, then an array"):
        srcgrad.grad(int_accumulator_broadcast, jit=True)(0.3, 2)


def add_to_larger_constant(x):
    a = np.ones((2, 1)) + x      # only x varies; a is (2, 3)
    return a[1, 2] * a[0, 1] + np.sum(np.ones((2, 3)) - x)


def test_jvp_of_a_sum_that_broadcasts_a_varied_operand(jit):
    # fuzzer seed 1: the tangent of `a = c + x` (c inactive and larger) was dx, of x's
    # shape, not a's (IndexError in a helper indexing da[1, 2]; a wrong shape elsewhere)
    x, v = np.array([0.5, 1.5, -1.0]), np.array([1.0, 2.0, 3.0])
    value, slope = srcgrad.jvp(add_to_larger_constant, jit=jit)(x, v)
    # a[1, 2] = 1 + x[2], a[0, 1] = 1 + x[1]; the sum is 6 - 2 * sum(x)
    assert value == pytest.approx(0.0 * 2.5 + 6 - 2 * 1.0)
    assert slope == pytest.approx(v[2] * 2.5 + 0.0 * v[1] - 2 * np.sum(v))
    g = srcgrad.grad(add_to_larger_constant, jit=jit)(x)
    assert slope == pytest.approx(g @ v)
    assert_grad(add_to_larger_constant, (g,), (x,), (0,))


def parameter_grows_in_loop(x, n):
    for _ in range(n):
        x = x + np.ones((2, 3)) * x     # (2, 1) -> (2, 3) in the first iteration
    return np.sum(x * x)


@pytest.mark.parametrize("n", [1, 2])
def test_gradient_of_a_parameter_the_loop_broadcasts_has_its_shape(jit, n):
    # the adjoint of x at the loop's start has the shape the loop gave x; the gradient
    # is x's shape, its entries the sums of those of the broadcast copies
    x = np.array([[0.5], [-1.0]])
    g = srcgrad.grad(parameter_grows_in_loop, jit=jit)(x, n)
    assert g.shape == (2, 1)
    # x_n = 2**n x, broadcast to three columns: sum(x_n**2) = 3 * 4**n * x**2
    np.testing.assert_allclose(g, 6 * 4 ** n * x)
    assert_grad(parameter_grows_in_loop, (g,), (x, n), (0,))


def wishart_prior(qd, gamma, m):
    # GradBench's GMM prior: a constant of SciPy's that numba does not compile, in a helper
    p = qd.shape[1]
    s = 0.0
    for i in range(qd.shape[0]):
        s = s + np.sum(np.log1p(qd[i] ** 2))
    return _prior(qd, gamma, m, p) + s


def _prior(qd, gamma, m, p):
    n = p + m + 1
    c = n * p * (np.log(gamma) - 0.5 * np.log(2.0)) - scipy.special.multigammaln(0.5 * n, p)
    return np.sum(0.5 * gamma ** 2 * np.sum(qd ** 2, axis=1)) - qd.shape[0] * c


def test_scipy_constant_keeps_the_gradient_compiled():
    # issue 26 #14: `multigammaln` on ints made numba refuse the whole gradient, which then
    # ran as Python; it now runs in numba's object mode and the rest stays compiled
    qd, gamma = np.random.default_rng(3).random((5, 3)), 1.5
    with warnings.catch_warnings():
        warnings.simplefilter("error")        # no JitFallbackWarning
        g = srcgrad.grad(wishart_prior, wrt=(0, 1), jit=True)(qd, gamma, 2)
    assert_grad(wishart_prior, g, (qd, gamma, 2), (0, 1))
    n, p = 6, 3   # d/dgamma of the prior: sum(gamma * |qd_k|**2) - k n p / gamma
    want = gamma * np.sum(qd ** 2) - 5 * n * p / gamma
    assert g[1] == pytest.approx(want, rel=1e-12)


def _constant_pair(a):
    b = np.ones((2, 3))
    return b[0] * 2.0, b


def calls_helper_returning_constants(x):
    for _ in range(2):
        t1, _t2 = _constant_pair(np.ones((2, 1)) * x)
    return np.sum(x ** 2) + np.sum(t1)


def test_jvp_of_helper_whose_tuple_result_is_constant(jit):
    # fuzzer seed 20073: the helper's jvp returned zeros_like of the tuple (TypeError:
    # Cannot construct a dtype from an array)
    x, v = np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0, 1.0])
    value, slope = srcgrad.jvp(calls_helper_returning_constants, jit=jit)(x, v)
    assert (value, slope) == pytest.approx((14.0 + 6.0, 2 * np.sum(x)))


def int_accumulator_in_nested_loop(x, n):
    s = 0.0
    for _i in range(2):
        acc = 1
        for _j in range(n):
            acc = acc * np.tanh(x)
        s = s + np.sum(acc[:, 0])
    return s


def test_int_accumulator_restarted_in_outer_loop():
    # fuzzer seed 20966: the adjoint of acc[:, 0] made d(acc) as zeros shaped like the
    # value the inner loop's reversal had restored (the number 1): IndexError
    x = np.array([[0.5, 1.0, 2.0], [0.3, -0.2, 0.1]])
    g = srcgrad.grad(int_accumulator_in_nested_loop, jit=False)(x, 3)
    t = np.tanh(x[:, 0])   # s = 2 sum(tanh(x[:, 0])**3)
    np.testing.assert_allclose(g[:, 0], 6 * t ** 2 * (1 - t ** 2))
    assert not g[:, 1:].any()
    assert_grad(int_accumulator_in_nested_loop, (g,), (x, 3), (0,))


def write_reads_reversed_row(x):
    x[0] -= np.sin(x[0][::-1])
    return np.sum(x * x)


def test_view_of_a_view_read_before_a_write_into_its_base(jit):
    # fuzzer seed 20080: sin's adjoint read x[0][::-1] after x[0] was written (a view of
    # a view of x was not taken as a copy); a wrong gradient, no error
    x = np.array([[1.0, -1.1, -0.8], [0.5, -0.7, -0.9]])
    g = srcgrad.grad(write_reads_reversed_row, jit=jit)(x)
    r = x[0] - np.sin(x[0][::-1])   # d/dx[0][j] = 2 r_j - 2 r_(2-j) cos(x[0][j])
    np.testing.assert_allclose(g[0], 2 * r - 2 * r[::-1] * np.cos(x[0]), rtol=1e-12)
    np.testing.assert_allclose(g[1], 2 * x[1], rtol=1e-12)
    assert_grad(write_reads_reversed_row, (g,), (x,), (0,))


def same_name_nested_loops(x, n):
    s = 0.0
    for _ in range(2):
        for _ in range(n):
            s = s + np.sum(np.sin(x) * s) + x[0]
    return s


def loop_variable_assigned(x):
    for i in range(3):
        i = i + 1
        x = x * i
    return x


def test_loop_variable_rebound_inside_its_loop(jit):
    # `for _ in ...: for _ in ...:` (and `i = i + 1` in a loop over i) was refused; as
    # in Python, the loop rebinds its name at each iteration, whatever the body did to it
    x = np.array([0.5, 1.0, 2.0])
    g = srcgrad.grad(same_name_nested_loops, jit=jit)(x, 3)
    assert_grad(same_name_nested_loops, (g,), (x, 3), (0,))
    assert srcgrad.grad(loop_variable_assigned, jit=jit)(1.5) == pytest.approx(1 * 2 * 3)


def row_read_then_written(x0, x1):
    v = x0[1]             # a row of a matrix: a view, which the write below changes
    x0[1, 0] = x1
    return np.sum(np.sin(x0)) + np.sum(np.sin(v)) + np.sum(v)


def entry_read_then_written(x, a):
    t = x[0]              # an entry of a vector: a number, which the write leaves alone
    x[0] = a * 2.0
    return t * x[0] + np.sum(x)


def test_int_indexed_view_read_after_a_write_into_its_base(jit):
    # fuzzer seeds 70 and 114: v = x0[1] then x0[1, 0] = ...; v was taken for a copy, so
    # its gradient went to the old x0[1, 0] (a wrong gradient, no error)
    x = np.array([[-0.03, 0.47, -0.23], [-0.32, -0.11, 0.39]])
    g = srcgrad.grad(row_read_then_written, wrt=(0, 1), jit=jit)(x, 0.57)
    assert_grad(row_read_then_written, g, (x, 0.57), (0, 1))
    assert g[0][1, 0] == 0.0 and g[1] == pytest.approx(2 * np.cos(0.57) + 1)
    value, slope = srcgrad.jvp(row_read_then_written, jit=jit)(x, 0.57, np.ones_like(x))
    assert slope == pytest.approx(np.sum(g[0]))
    g = srcgrad.grad(entry_read_then_written, wrt=(0, 1), jit=jit)(np.array([1.0, 2.0, 3.0]), 0.5)
    np.testing.assert_allclose(g[0], [2 * 0.5, 1.0, 1.0])   # t * 2a + 2a + x1 + x2
    assert g[1] == pytest.approx(2 * 1.0 + 2.0)


def copies_onto_itself(x, y):
    y = y * x
    y[:] = y
    return np.sum(y ** 2)


def test_whole_slice_write_of_an_array_into_itself(jit):
    # fuzzer seed 134: `y[:] = y` zeroed y's gradient (its own part was added, then the
    # written entries zeroed)
    g = srcgrad.grad(copies_onto_itself, wrt=(0, 1), jit=jit)(0.5, np.array([1.0, 2.0]))
    assert g[0] == pytest.approx(2 * 0.5 * 5.0)          # sum((x y)**2) = 5 x**2
    np.testing.assert_allclose(g[1], 2 * 0.25 * np.array([1.0, 2.0]))


def alias_read_after_write(x0):
    x1 = x0               # the same array: it sees the write below
    x0[-1] -= np.sin(x0[0])
    return np.sum(x0) + np.sum(x1 ** 2)


def test_alias_of_an_array_written_into(jit):
    # fuzzer seed 154: x1 = x0, then a write into x0, then x1 read: the gradient took x1
    # for the value before the write
    x = np.array([[0.5, 1.0, -0.3], [0.2, 0.4, 0.9]])
    g = srcgrad.grad(alias_read_after_write, jit=jit)(x)
    assert_grad(alias_read_after_write, (g,), (x,), (0,))


def row_changed_in_place(x0):
    v = x0[1]
    v += 2.0 * x0[0]      # changes x0[1] in place
    return np.sum(x0)


def _subtract_first(a, b):
    b -= b[0] * 2.0       # changes the caller's array in place
    return a


def helper_changes_argument(x0, x1):
    _subtract_first(x0, x1)
    t = _subtract_first(x0, x1)
    return np.sum(x0 ** 2) + np.sum(x1 * t)


def entry_changed(x):
    v = x[1]              # a number: `v += 2.0` is a new value
    v += 2.0
    return v * x[0]


@pytest.mark.parametrize("fun", [row_changed_in_place, helper_changes_argument])
def test_in_place_change_of_a_shared_array_is_refused(fun, jit):
    # fuzzer seeds 89, 114, 157: a row or a helper's argument changed in place by an
    # augmented assignment; the gradient missed the change (a wrong gradient, no error)
    x = np.array([[0.5, 1.0, -0.3], [0.2, 0.4, 0.9]])
    args = (x,) if fun is row_changed_in_place else (x, x + 1.0)
    with pytest.raises(srcgrad.UnsupportedSyntax, match=r"changes in place an array"):
        srcgrad.grad(fun, wrt=len(args) - 1, jit=jit)(*args)
    np.testing.assert_array_equal(x, [[0.5, 1.0, -0.3], [0.2, 0.4, 0.9]])
    g = srcgrad.grad(entry_changed, jit=jit)(np.array([1.0, 2.0]))
    np.testing.assert_allclose(g, [4.0, 1.0])      # v * x0 = (x1 + 2) x0


# ---- seeds 100145-100846 of `python -m tests.fuzz --seed 100000 --programs 3000` ----


def gather_in_loop(x, idx, n):
    for _ in range(n):
        x = x[idx]
    return np.sum(x * x)


def gather_after_loop(x, idx, n):
    for _ in range(n):
        x = x * 2.0
    x = x[idx]
    return np.sum(x)


def test_gather_into_the_same_name(jit):
    # seeds 100697, 100846: `x = x[idx]` in a loop; its adjoint zeroed dx, then read it
    # as the incoming gradient: zero. Gathers with repeats: sum(x[[1,1,0]][[1,1,0]]**2)
    # = 2 x1^2 + x1^2 (at n = 2), so d/dx = (0, 6 x1, 0, 0)
    x, idx = np.array([0.1, 0.2, 0.3, 0.5]), np.array([1, 1, 0])
    with warnings.catch_warnings():   # compiled, a tape holds one shape: run as Python
        warnings.simplefilter("ignore", srcgrad.JitFallbackWarning)
        got = srcgrad.grad(gather_in_loop, jit="auto" if jit else False)(x, idx, 2)
    np.testing.assert_allclose(got, [0.0, 6 * 0.2, 0.0, 0.0], rtol=1e-12)
    assert_grad(lambda x: gather_in_loop(x, idx, 2), (got,), (x,), (0,))
    if jit and not os.environ.get("SRCGRAD_DISABLE_JIT"):   # (before: a bare ValueError)
        with pytest.raises(srcgrad.SrcgradError, match="changed shape between loop"):
            srcgrad.grad(gather_in_loop, jit=True)(x, idx, 2)
    # the old x has another shape than the new one: d/dx = 4 (1, 0, 2, 0, 0) at n = 2
    x, idx = np.array([0.1, 0.2, 0.3, 0.5, 0.7]), np.array([2, 0, 0])
    got = srcgrad.grad(gather_after_loop, jit=jit)(x, idx, 2)
    np.testing.assert_allclose(got, [8.0, 0.0, 4.0, 0.0, 0.0], rtol=1e-12)


def tuple_alias_changed_in_place(x0, x1):
    t1, t2 = np.sin(x0), x1
    t2 *= np.tanh(x0)
    return np.sum(x1) + np.sum(t1)


def returns_its_argument(a):
    return a, np.sum(a)


def helper_alias_changed_in_place(x):
    t, s = returns_its_argument(x)
    t += 0.5
    return np.sum(x ** 2) + s


def returns_a_new_array(a):
    return a * 2.0, np.sum(a)


def helper_result_changed_in_place(x):
    t, s = returns_a_new_array(x)
    t += s
    return np.sum(t ** 2)


def returns_a_rebound_argument(a):
    a = a * 2.0
    return a, np.sum(a) / 2.0


def rebound_result_changed_in_place(x):
    t, s = returns_a_rebound_argument(x)
    t += s
    return np.sum(t ** 2)


def test_in_place_change_of_an_alias_is_refused(jit):
    # seeds 100145, 100787, 100830: `t2 *= ...` where t2 is x1 (a tuple target, or what a
    # helper returned) changed x1 in place, which the adjoint never saw
    x = np.array([0.3, -0.4, 0.8])
    with pytest.raises(srcgrad.UnsupportedSyntax, match="'t2 \\*= ...' changes in place"):
        srcgrad.grad(tuple_alias_changed_in_place, jit=jit)(0.5, x)
    with pytest.raises(srcgrad.UnsupportedSyntax, match="'t \\+= ...' changes in place"):
        srcgrad.grad(helper_alias_changed_in_place, jit=jit)(x)
    assert np.array_equal(x, [0.3, -0.4, 0.8])
    # a helper that returns a new array: t = 2 x + sum(x), so d sum(t^2)/dx = 4 t + 2 sum(t);
    # also when it makes it under the argument's name (`a = a * 2.0`)
    t = 2 * x + np.sum(x)
    for fun in (helper_result_changed_in_place, rebound_result_changed_in_place):
        got = srcgrad.grad(fun, jit=jit)(x)
        np.testing.assert_allclose(got, 4 * t + 2 * np.sum(t), rtol=1e-12)


def alias_of_a_view(x1, x2):
    v4 = x1[1:]
    t6, t7 = np.sin(x2) * np.ones(2), v4
    t6, t7 = t7, t6
    x1[1] = 2.0 * x2
    return np.sum(x1) + np.sum(t6 * 3.0)


def test_an_alias_of_a_view_reads_the_write(jit):
    # seed 100770: t6 is v4, a view of x1; after x1[1] = 2 x2 it reads 2 x2:
    # x1[0] + 2 x2 + x1[2] + 3 (2 x2 + x1[2]): d/dx1 = (1, 0, 4), d/dx2 = 8
    x = np.array([-0.26, -1.65, 1.24])
    d1, d2 = srcgrad.grad(alias_of_a_view, wrt=(0, 1), jit=jit)(x, 0.5)
    np.testing.assert_allclose(d1, [1.0, 0.0, 4.0], rtol=1e-12)
    assert d2 == pytest.approx(8.0, rel=1e-12)


def row_of_a_reassigned_matrix(x0, n):
    acc = np.ones((2, 3))
    for _ in range(n):
        acc = acc * x0[1]
    v = acc[1]
    for _ in range(n):
        acc[1, 0] = x0[0] * v[0]
    return np.sum(v ** 2)


def entry_of_a_reassigned_vector(x0, n):
    acc = np.ones(3)
    for _ in range(n):
        acc = acc * 2.0
    v = acc[1]
    for _ in range(n):
        acc[1] = x0[0] * v
    return v ** 2 + np.sum(acc)


def test_a_view_of_a_reassigned_array_read_after_a_write(jit):
    # seeds 114, 157, 100620: v = acc[1] where acc is assigned more than once is not
    # taken again after acc[1, 0] = ...: the adjoint read v as unwritten (a wrong
    # gradient); now refused when v is a view (a row), kept when it is a number
    x = np.array([0.5, 0.2])
    with pytest.raises(srcgrad.SrcgradError, match="'v' is a view of 'acc' read after a "
                       "write into 'acc'"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", srcgrad.JitFallbackWarning)
            srcgrad.grad(row_of_a_reassigned_matrix, jit="auto" if jit else False)(x, 3)
    # v = acc[1] = 8 is a number: acc[1] = 8 x0 at the end, d/dx = (8, 0)
    got = srcgrad.grad(entry_of_a_reassigned_vector, jit=jit)(x, 3)
    np.testing.assert_allclose(got, [8.0, 0.0], rtol=1e-12)


def sum_of_a_negated_broadcast(x1):
    t10 = np.negative(np.ones((2, 1)) * x1).sum()
    return t10 + np.sum(x1)


def test_sum_of_a_rule_that_does_not_read_its_operand(jit):
    # seed 200014: the sum of np.negative(...) kept its cotangent a scalar (a uniform
    # reduction), but -dy does not take the operand's shape: the broadcast product's rule
    # then summed a (2, 1) cotangent to x1's (3,) (a ValueError). d/dx = -2 + 1
    x = np.array([0.44, -0.22, -1.34])
    got = srcgrad.grad(sum_of_a_negated_broadcast, jit=jit)(x)
    np.testing.assert_allclose(got, [-1.0, -1.0, -1.0], rtol=1e-12)


def swap_with_a_constant_in_a_loop(x0, n):
    for _ in range(2):
        t5, t6 = np.ones(3), np.sin(x0)
        t5, t6 = t6, t5
        if x0[0] > -0.24:
            return np.sum(t5 ** 2) + np.sum(t6)
    return 0.0


def test_a_constant_copied_into_a_differentiated_name(jit):
    # seeds 400145, 401970, 402140: `t5 = _t1` (np.ones) in a loop where t5 is also
    # differentiated: the adjoint added into d_t1, which nothing had made (UnboundLocalError)
    # sum(sin(x)^2) + 3: d/dx = 2 sin(x) cos(x) = sin(2x)
    x = np.array([-0.2, -0.86, -0.18])
    got = srcgrad.grad(swap_with_a_constant_in_a_loop, jit=jit)(x, 1)
    np.testing.assert_allclose(got, np.sin(2 * x), rtol=1e-12)


def accumulator_started_again_each_trip(x1, n):
    for _ in range(2):
        acc4 = 0
        for _ in range(n):
            acc4 = acc4 + (x1 * np.ones((2, 3)))
            x1 = x1 + acc4[1, 2] * 0.1
    return x1 ** 2


def test_an_int_accumulator_started_again_in_an_outer_loop():
    # seeds 400658, 400977: the adjoint of `acc4` was made before the inner loop as zeros
    # like acc4 there, the number 0 it starts as, and then indexed (IndexError). Python
    # form only: numba cannot type a variable that is a number, then an array
    got = srcgrad.grad(accumulator_started_again_each_trip, jit=False)(0.5, 2)
    assert_grad(lambda x: accumulator_started_again_each_trip(x, 2), (got,), (0.5,), (0,))


def reads_a_name_reassigned_later(x0, n):
    acc3 = 1
    for _ in range(n):
        acc3 = acc3 * 1.5
    for _ in range(n):
        x0[:] -= np.tanh(acc3 * np.ones(3))
    acc3 = np.sum(x0)   # noqa: F841 (differentiated, never used)
    return np.sum(np.sin(x0))


def test_an_adjoint_added_into_in_a_loop_is_made_before_it(jit):
    # seeds 402572, 402583: `dacc3 = zeros_like(acc3)` before the loop was dead code to
    # the optimizer, which did not count `dacc3 += ...` as a read (UnboundLocalError)
    x = np.array([0.94, 0.2, 1.85])
    got = srcgrad.grad(reads_a_name_reassigned_later, jit=jit)(x, 2)
    np.testing.assert_allclose(got, np.cos(x - 2 * np.tanh(2.25)), rtol=1e-12)


def column_read_before_a_row_write(x0, x1):
    x1 = x1 - np.minimum(x0[:, 0], np.ones(2) + 3.0)
    x0[0] *= np.sin(x0[0])
    return np.sum(x0 ** 2) + np.sum(x1 ** 2)


def test_a_view_read_is_not_fused_past_a_write_into_its_array(jit):
    # seed 404649: the tangent of `x0[:, 0]` was folded into a kernel after `x0[0] = ...`
    # had changed the column it views (fuse did not know the view and x0 share memory)
    x0 = np.array([[1.19, -0.59, -0.17], [-0.61, -0.74, 0.11]])
    x1 = np.array([-0.62, 0.49])
    v0 = np.array([[0.33, -0.16, 0.03], [-0.01, 0.23, 0.78]])
    v1 = np.array([-0.77, -0.03])
    value, got = srcgrad.jvp(column_read_before_a_row_write, wrt=(0, 1), jit=jit)(
        x0.copy(), x1.copy(), (v0, v1))
    eps = 1e-6
    want = (column_read_before_a_row_write(x0 + eps * v0, x1 + eps * v1)
            - column_read_before_a_row_write(x0 - eps * v0, x1 - eps * v1)) / (2 * eps)
    assert value == pytest.approx(column_read_before_a_row_write(x0.copy(), x1))
    assert got == pytest.approx(want, rel=1e-6)
    grads = srcgrad.grad(column_read_before_a_row_write, wrt=(0, 1), jit=jit)(x0.copy(), x1)
    assert_grad(lambda a, b: column_read_before_a_row_write(a.copy(), b), grads, (x0, x1),
                (0, 1))


def view_by_functions_read_in_a_loop(x0, n):
    t3 = np.ravel(np.expand_dims(np.squeeze(np.reshape(x0, (1, 3))), 0))
    acc = 0
    for _ in range(n):
        acc = acc + np.dot(t3[1:], t3[1:])
        x0 *= np.tanh(acc)
    return np.sum(np.sin(x0))


def test_a_view_the_adjoint_recomputes_from_is_taped_as_a_copy(jit):
    # seed 402881: the adjoint recomputed t3[1:] from t3, a view of x0 made by NumPy
    # functions; t3 was taped as that view, which the write into x0 then changed
    x = np.array([-1.68, -0.78, -0.49])
    got = srcgrad.grad(view_by_functions_read_in_a_loop, jit=jit)(x.copy(), 2)
    assert_grad(lambda a: view_by_functions_read_in_a_loop(a.copy(), 2), (got,), (x,), (0,))


def loop_index_reused_by_a_later_loop(x0, x2, n):
    i = 0
    while i < 2:
        i += 1
        x0[i % 2] *= x2
    t = 1.0
    for i in range(n):   # noqa: B007 (rebinds i, which the adjoint of the while reads)
        t = t * 2.0
    return np.sum(x0 ** 2) + t


def test_a_loop_without_adjoint_gives_back_the_index_it_overwrote(jit):
    # seed 406330: the later for loop saved i (its index overwrites it) but had no adjoint
    # work, so nothing restored i, and the while loop's adjoint read i % 2 with i = 0
    # x0[1] *= x2, then x0[0] *= x2: d/dx0 of sum((x0 x2)^2) = 2 x0 x2^2
    x = np.array([0.96, 0.83])
    got = srcgrad.grad(loop_index_reused_by_a_later_loop, jit=jit)(x.copy(), -0.53, 1)
    np.testing.assert_allclose(got, 2 * x * 0.53 ** 2, rtol=1e-12)
    assert_grad(lambda a: loop_index_reused_by_a_later_loop(a.copy(), -0.53, 1), (got,),
                (x,), (0,))


def stack_of_numbers_in_a_branch(x2, n):
    if n == 1:
        x2 = x2 * 2.0
    else:
        x2 = np.stack([np.ones(3)[0], np.ones(3)[2]])
    return np.sum(x2)


def test_the_tangent_of_a_stack_of_numbers_is_zero():
    # seed 601469 (and 402084): the tangent of np.stack([1.0, 1.0]) was np.stack of
    # zeros_like of the list, and zeros_like took the list for a dtype (TypeError: Field
    # elements must be 2- or 3-tuples). Python form: numba has no np.stack of numbers
    x = np.array([0.26, 0.9])
    assert srcgrad.jvp(stack_of_numbers_in_a_branch, jit=False)(x, 3, np.ones(2)) == (2.0, 0.0)
    value, slope = srcgrad.jvp(stack_of_numbers_in_a_branch, jit=False)(x, 1, np.ones(2))
    assert (value, slope) == pytest.approx((2.32, 4.0))
    np.testing.assert_array_equal(srcgrad.grad(stack_of_numbers_in_a_branch, jit=False)(x, 3),
                                  [0.0, 0.0])


def masked_sum_in_a_loop(x0):
    t3 = x0 * np.ones(3)
    for _ in range(2):
        x0 = np.sum(np.fmax(t3 - 3.0, x0)[np.fmax(t3 - 3.0, x0) > -1.11] ** 2)
    return x0 ** 2


def test_entries_a_mask_selects_may_change_length_in_a_loop(jit):
    # seed 601789: x[x > c] selected no entry in one iteration and three in the next; the
    # adjoint read the last iteration's selection for its shape in every iteration
    # (ValueError: operands could not be broadcast together with shapes (3,) (0,)).
    # At x0 = -2: nothing is selected, then x0 = 0 three times: the value is 0, so is
    # the gradient; at 2: x1 = 3 x0^2, x2 = 27 x0^4, f = 729 x0^8
    assert srcgrad.grad(masked_sum_in_a_loop, jit=jit)(-2.0) == 0.0
    got = srcgrad.grad(masked_sum_in_a_loop, jit=jit)(1.1)
    assert got == pytest.approx(8 * 729 * 1.1 ** 7, rel=1e-12)
    assert_grad(masked_sum_in_a_loop, (got,), (1.1,), (0,))


def int_accumulator_written_into(x0, n):
    for _ in range(2):
        acc = 1
        for _ in range(n):
            acc = acc * x0
        for _ in range(2):
            acc[n % 2] *= acc[-1]
    return np.sum(acc)


def test_a_write_into_an_int_accumulator_started_again_in_an_outer_loop():
    # seed 404667: the adjoint of acc started again as zeros of the number 1 at the end of
    # each outer iteration, and the write acc[k] *= ... then indexed it (IndexError: 0-d)
    # Python form: numba cannot type a variable that is a number, then an array.
    # acc = x^3 with acc[1] *= acc[-1] twice: (x0^3, x1^3 x2^6, x2^3)
    x = np.array([-1.0, -1.5, -0.4])
    got = srcgrad.grad(int_accumulator_written_into, jit=False)(x, 3)
    want = [3 * x[0] ** 2, 3 * x[1] ** 2 * x[2] ** 6, 6 * x[1] ** 3 * x[2] ** 5 + 3 * x[2] ** 2]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert_grad(int_accumulator_written_into, (got,), (x, 3), (0,))


def pair_of_a_product(a):
    b = np.dot(a * np.ones(2), a * np.ones(2))
    return np.cos(np.mean(a * np.ones((2, 3)))), b


def inner_loop_reads_outer_locals(x1, n):
    for _ in range(n):
        t5, t6 = pair_of_a_product(x1[1, 2])
        acc = np.zeros(3)
        for _ in range(n):
            acc = acc + np.fmax((t6 * np.ones(2)) @ x1 - 3.0, t5 * np.ones(3))
    return np.sum(x1) + np.sum(t6) + np.sum(acc ** 2)


def test_a_recomputation_in_an_inner_loop_reads_an_outer_loop_local(jit):
    # seed 400334: recomputing t6 * np.ones(2) in the inner loop's adjoint needs t6, a
    # local of the outer loop's body; where it is needed was kept as an index into the
    # inner body and used in the outer one (IndexError in the tape planner). Compiled,
    # the tape of the tuple the helper returns is a list of tuples
    x1 = np.array([[0.09, -2.04, -0.36], [0.24, 0.81, 0.72]])
    got = srcgrad.grad(inner_loop_reads_outer_locals, jit=jit)(x1, 2)
    assert_grad(inner_loop_reads_outer_locals, (got,), (x1, 2), (0,))


def products_of_neighbours(x, n):
    for _ in range(n):
        x = x[1:] * x[:-1]
    return np.sum(x)


SHRINKING = np.array([0.5, 1.2, -0.3, 0.8])
# n = 2: x0 x1^2 x2 + x1 x2^2 x3, differentiated by hand
_X0, _X1, _X2, _X3 = SHRINKING
SHRINKING_GRAD = [_X1 ** 2 * _X2, 2 * _X0 * _X1 * _X2 + _X2 ** 2 * _X3,
                  _X0 * _X1 ** 2 + 2 * _X1 * _X2 * _X3, _X1 * _X2 ** 2]


def test_an_array_a_loop_shrinks():
    # x = x[1:] * x[:-1] rebinds x to one entry fewer each trip: the adjoint made dx
    # shaped like the last x in every trip (ValueError).
    x = SHRINKING
    got = srcgrad.grad(products_of_neighbours, jit=False)(x, 2)
    np.testing.assert_allclose(got, SHRINKING_GRAD, rtol=1e-12)
    assert_grad(products_of_neighbours, (got,), (x, 2), (0,))


@compiles
def test_an_array_a_loop_shrinks_compiled():
    # compiled, the tape needs one shape: jit=True says so, "auto" runs the Python form
    with pytest.raises(srcgrad.SrcgradError, match="changed shape between loop"):
        srcgrad.grad(products_of_neighbours, jit=True)(SHRINKING, 2)
    with pytest.warns(srcgrad.JitFallbackWarning):
        got = srcgrad.grad(products_of_neighbours)(SHRINKING, 2)
    np.testing.assert_allclose(got, SHRINKING_GRAD, rtol=1e-12)


def reset_in_outer_loop(s, n):
    i = 0
    while i < 2:
        i += 1
        acc = 1
        for _ in range(n):
            acc = acc * (np.ones((2, 1)) * s)
            acc *= np.tanh(s)
    return np.sum(acc)


def test_accumulator_started_as_int_and_reset_in_an_outer_loop():
    # seed 900298 (crashed): `acc = 1` kills acc's adjoint each trip of the outer loop,
    # made as zeros of the number acc is set to, but the adjoint then meets acc as the
    # (2, 3) array the trip ended with: a zero broadcasts to it (any nonzero still
    # raises). Compiled, acc cannot be a number and then an array (the Python form runs).
    # n = 2: 2 sum((s tanh s)^2), so d/ds = 4 s tanh s (tanh s + s sech^2 s)
    s = np.array([0.3, -0.5, 0.7])
    got = srcgrad.grad(reset_in_outer_loop, jit=False)(s, 2)
    t = np.tanh(s)
    np.testing.assert_allclose(got, 4 * s * t * (t + s * (1 - t ** 2)), rtol=1e-12)
    assert_grad(reset_in_outer_loop, (got,), (s, 2), (0,))


def test_a_nonzero_gradient_of_the_wrong_shape_still_raises():
    from srcgrad.runtime import unbroadcast
    np.testing.assert_array_equal(unbroadcast(np.zeros(3), np.ones((2, 3))), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="cannot unbroadcast"):
        unbroadcast(np.ones(3), np.ones((2, 3)))
    with pytest.raises(ValueError, match="cannot unbroadcast"):
        unbroadcast(np.zeros(2), np.ones((2, 3)))


def sine_and_itself(a):
    b = a
    return np.sin(a), b


def item_of_a_checked_tuple(x, n):
    for _ in range(n):
        t6, t7 = sine_and_itself(x[1, 2])
        j = 0
        while j < n:
            j += 1
            x[1, 0] = t7
    return np.sum(x) + t6


def test_item_of_a_returned_tuple_checked_for_aliasing(jit):
    # seed 911006 (crashed): the tuple a helper returns, checked at run time for being a
    # view of x (`unaliased`), was no longer known as a returned tuple: its adjoint was
    # made as a tuple and then written into. x[1, 0] becomes x[1, 2]: d/dx is ones but
    # 0 at [1, 0], 2 + cos(x[1, 2]) at [1, 2]
    x = np.arange(6.0).reshape(2, 3) / 7
    got = srcgrad.grad(item_of_a_checked_tuple, jit=jit)(x, 2)
    want = np.ones((2, 3))
    want[1, 0], want[1, 2] = 0.0, 2.0 + np.cos(x[1, 2])
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert_grad(item_of_a_checked_tuple, (got,), (x, 2), (0,))


def writes_into_its_arguments(a, b):
    a += b[-1]
    b[1] = np.dot(b[1:], b[1:])
    return a[1:]


def result_unused(x0, x1):
    t = writes_into_its_arguments(x1, np.take(x0, [4, 4, 0]))  # noqa: F841
    return np.sum(np.sin(x0)) + np.sum(x1)


def test_a_helper_writing_into_its_arguments_with_its_result_unused():
    # seed 1003625 (silently wrong): a helper srcgrad refuses to differentiate was called
    # as it is where its result is not used, and its `a += ...` changed x1, the
    # caller's array, unseen by the gradient (d/dx0[0, 0] lost 3). Refused now.
    x0, x1 = np.arange(6.0).reshape(2, 3) / 7, np.array([1.0, 2.0, 3.0])
    before = x1.copy()
    with pytest.raises(srcgrad.SrcgradError, match="writing into b\\[...\\] in a helper"):
        srcgrad.grad(result_unused, jit=False)(x0, x1)
    np.testing.assert_array_equal(x1, before)


def fancy_update_after_a_shift(x, y):
    x = x - 0.5
    x[[0, 1, 0]] *= np.sin(y)
    return np.sum(np.sin(x))


def fancy_writes_into_arguments(x, y):
    x[[0, 1, 0]] *= np.sin(y)
    y[[2, 2]] = x[:2] ** 2
    return np.sum(np.sin(x)) + np.sum(y ** 3)


def test_fancy_writes_tangents_and_arguments(jit):
    # seed 1004682 (jvp wrong): x - 0.5 has the tangent dx itself, and the write
    # dx[[0, 1, 0]] = ... then changed the caller's tangent: a new array's tangent that
    # is written into is a copy. And a write through a fancy index into an argument is a
    # write into it (copied on entry), not refused as one in a helper
    x, y = np.array([0.75, 2.04]), np.array([0.3, -0.2, 0.5])
    dx, dy = np.array([-1.0, 0.45]), np.array([0.2, 0.7, -0.3])
    kept = [a.copy() for a in (x, y, dx, dy)]
    h = 1e-6
    for fun in (fancy_update_after_a_shift, fancy_writes_into_arguments):
        value, slope = srcgrad.jvp(fun, wrt=(0, 1), jit=jit)(x, y, (dx, dy))
        want = (fun(x + h * dx, y + h * dy) - fun(x - h * dx, y - h * dy)) / (2 * h)
        assert slope == pytest.approx(want, rel=1e-6)
        for a, k in zip((x, y, dx, dy), kept, strict=True):
            np.testing.assert_array_equal(a, k)
        g = srcgrad.grad(fun, wrt=(0, 1), jit=jit)(x, y)
        assert_grad(lambda a, b, fun=fun: fun(a.copy(), b.copy()), g, (x, y), (0, 1))
        for a, k in zip((x, y, dx, dy), kept, strict=True):
            np.testing.assert_array_equal(a, k)
    # by hand: x0 <- (x0 - 0.5) sin(y2) (the last of the repeated writes), x1 <- (x1 - 0.5)
    # sin(y1): d/dy2 = cos(x0') (x0 - 0.5) cos(y2), and y0 has no part
    g = srcgrad.grad(fancy_update_after_a_shift, wrt=1, jit=jit)(x, y)
    x0n = (x[0] - 0.5) * np.sin(y[2])
    assert g[0] == 0.0
    assert np.isclose(g[2], np.cos(x0n) * (x[0] - 0.5) * np.cos(y[2]))


def pair_of_itself(a):
    b = a
    return a, b


def changed_with_a_returned_alias(x):
    t4, t5 = pair_of_itself(x)
    x += np.sum(t5 * 1.5)
    return np.sum(x ** 2) + np.sum(t5)


def test_op_assign_on_an_array_a_helper_returned():
    # seed 1006769 (silently wrong): t5 is x (the helper returns its argument), so
    # `x += e` changes t5 too, in NumPy; the gradient took x += e as a new x. Refused now.
    x = np.array([0.3, 0.7, 0.6])
    with pytest.raises(srcgrad.SrcgradError, match="'x \\+= ...' changes in place an array "
                                                   "that another name shares"):
        srcgrad.grad(changed_with_a_returned_alias, jit=False)(x)
    np.testing.assert_array_equal(x, [0.3, 0.7, 0.6])


def changed_with_an_alias_in_a_branch(x):
    t4, t5 = pair_of_itself(x)
    if x[0] > 10.0:
        x += 1.0
    return np.sum(x ** 2) + np.sum(t5)


@compiles
def test_a_compiled_refusal_says_why_not_the_type_of_its_message():
    # fuzz seed 9997005: numba types the in-place check with its message as a literal and
    # as a str; the message of the second, "unicode_type", was what jit=True said. The
    # check now compiles and refuses where it runs, as the Python form does
    x = np.array([11.0, 0.7, 0.6])
    with pytest.raises(srcgrad.SrcgradError, match="'x \\+= ...' changes in place an array "
                                                   "that another name shares") as info:
        srcgrad.grad(changed_with_an_alias_in_a_branch, jit=True)(x)
    assert "unicode_type" not in str(info.value)


def test_an_in_place_change_of_an_alias_in_a_branch_not_taken_compiles(jit):
    # fuzz seeds 9997005, 9997034: the branch does not run, and the Python form gives the
    # gradient, 2 x + 1 by hand; compiled, the check refused it when typed (jit="auto"
    # fell back to Python)
    x = np.array([0.3, 0.7, 0.6])
    got = srcgrad.grad(changed_with_an_alias_in_a_branch, jit=jit)(x)
    np.testing.assert_allclose(got, 2 * x + 1, rtol=1e-15)
    assert_grad(changed_with_an_alias_in_a_branch, (got,), (x,), (0,))


def changed_through_an_alias(x, y):
    a, c = x * 2.0, y * 3.0
    a, c = c, a
    t = a
    t *= np.tanh(x)
    return np.sum(a * x)


def test_op_assign_on_an_alias_of_a_name_read_later():
    # seed 1106101 (silently wrong): `t = a; t *= e` changes a, read afterwards, in
    # NumPy; the gradient took t *= e as a new t (t itself is not read again). Refused.
    with pytest.raises(srcgrad.SrcgradError, match="'t \\*= ...' changes in place"):
        srcgrad.grad(changed_through_an_alias, jit=False)(np.ones(3), np.ones(3))


def changed_through_a_tuple_alias(x, n):
    a, b = np.sin(x), x
    a, b = b, a
    for _ in range(n):
        x += np.std(b * x)
        y = a * 2.0
    return np.sum(x ** 2) + np.sum(y)


def test_op_assign_on_an_array_a_tuple_assignment_aliased():
    # seed 1209528 (silently wrong): `a, b = ..., x` binds b to x's array (and the swap
    # after it, a); x += e then changes a too, in NumPy, while the gradient took it as
    # a new x. An item of a tuple assignment shares like `v = x` (a swap alone does not)
    with pytest.raises(srcgrad.SrcgradError, match="'x \\+= ...' changes in place"):
        srcgrad.grad(changed_through_a_tuple_alias, jit=False)(np.ones(2), 2)


def changed_through_a_tuple_value(x):
    p = (x * 2.0, x)
    t = p[1]
    for _ in range(2):
        x -= np.sin(t)
    return np.sum(np.sin(x))


def rebound_beside_a_tuple_value(x):
    p = [x * 2.0, (x, 1.0)]
    t = p[1][0]
    for _ in range(2):
        x = x - np.sin(t)
    return np.sum(np.sin(x)) + np.sum(p[0] * t)


def test_op_assign_on_an_array_a_tuple_value_holds(jit):
    # seed 1400736 (silently wrong): `p = (..., x)` holds x's array, so `t = p[1]` is x
    # and `x -= e` changes t too, in NumPy; the gradient took it as a new x. A name bound
    # to a tuple or list display shares its items: refused. Rebinding x stays right.
    with pytest.raises(srcgrad.SrcgradError, match="'x -= ...' changes in place"):
        srcgrad.grad(changed_through_a_tuple_value, jit=False)(np.array([-1.1, 0.7]))
    x = np.array([-1.1, 0.7])
    assert_grad(rebound_beside_a_tuple_value,
                [srcgrad.grad(rebound_beside_a_tuple_value, jit=jit)(x)], (x,), [0])


def tuple_of_tuples(x):
    p = ((x * 2.0, 3.0), (x, 1.0))
    t = p[1][0]
    return np.sum(p[0][0] * t)


def tuple_read_at_a_loop_index(x):
    p = (x, x * 2.0)
    s = 0.0
    for i in range(2):
        s = s + np.sum(p[i] ** 2)
    return s


def test_items_of_nested_tuples(jit):
    # found while reducing seed 1400736 (crashed: 'tuple' object does not support item
    # assignment): an item of a tuple that is a tuple itself is read like its parent
    x = np.array([-1.1, 0.7])
    g = srcgrad.grad(tuple_of_tuples, jit=jit)(x)
    assert_grad(tuple_of_tuples, [g], (x,), [0])
    np.testing.assert_allclose(g, 4.0 * x)   # by hand: sum(2 x * x)
    v = np.array([0.3, -0.2])
    np.testing.assert_allclose(srcgrad.jvp(tuple_of_tuples, jit=jit)(x, v)[1], 4.0 * x @ v)


def test_tuple_read_at_an_index_known_at_run_time():
    # its adjoint is a list of the items' adjoints (numba has no such list of arrays:
    # the compiled form is refused, and jit="auto" runs this form)
    x = np.array([-1.1, 0.7])
    g = srcgrad.grad(tuple_read_at_a_loop_index, jit=False)(x)
    assert_grad(tuple_read_at_a_loop_index, [g], (x,), [0])
    np.testing.assert_allclose(g, 10.0 * x)   # by hand: sum(x^2) + sum(4 x^2)


def written_after_a_shifted_copy(x):
    y = x - 1.0
    x[[0, 2, 0]] += np.logaddexp(1.0, y)
    return np.sum(x) + np.sum(y)


def test_tangent_of_a_new_array_is_not_the_written_one(jit):
    # seed 1408091 (jvp wrong): the tangent of y = x - 1.0 is dx itself; the write into
    # x then wrote into dy too, read at the return. A tangent that a later write reaches
    # is a copy where it names a new array
    x = np.array([-0.18443442, -1.96073963, 1.31819129])
    v = np.array([-0.48474939, 0.7707104, 0.4916553])
    g = srcgrad.grad(written_after_a_shifted_copy, jit=jit)(x.copy())
    assert_grad(written_after_a_shifted_copy, [g], (x.copy(),), [0])
    dy = srcgrad.jvp(written_after_a_shifted_copy, jit=jit)(x.copy(), v)[1]
    np.testing.assert_allclose(dy, g @ v, rtol=1e-12)
    # by hand: x[0] ends as x0 + s(x2 - 1) (the last write wins), x[2] as x2 + s(x1 - 1),
    # s = logaddexp(1, .) with s'(t) = sigmoid(t - 1): d/dx = 2 + (0, sigmoid(x1 - 2),
    # sigmoid(x2 - 2))
    sigmoid = 1.0 / (1.0 + np.exp(2.0 - x))
    np.testing.assert_allclose(g, [2.0, 2.0 + sigmoid[1], 2.0 + sigmoid[2]])


def passed_back(a):
    return a


def changed_through_a_helper_result_in_a_tuple(x):
    p = (np.ones(2), passed_back(x[1:]))
    t = p[1]
    t -= np.log1p(t ** 2)
    return np.sum(x)


def changed_under_a_helper_result_in_a_tuple(x):
    p = (np.ones(2), passed_back(x))
    x -= np.log1p(x ** 2)
    return np.sum(p[1])


def test_op_assign_through_a_helper_result_held_in_a_tuple():
    # seed 1401637 (silently wrong): `p = (..., h(x[1:]))` with a helper that returns its
    # argument holds a view of x; `t = p[1]; t -= e` changed x in NumPy, unseen by the
    # gradient. Both directions are refused, like `t = h(x)` alone
    x = np.array([-0.82300397, -0.92718229, 2.08962807])
    for fun in (changed_through_a_helper_result_in_a_tuple,
                changed_under_a_helper_result_in_a_tuple):
        with pytest.raises(srcgrad.SrcgradError, match="-= ...' changes in place"):
            srcgrad.grad(fun, jit=False)(x)


def view_taken_last_in_a_loop(x0, x1):
    for _ in range(2):
        x1 -= np.sum(x0 * 2.0)
        x1 -= np.sum(x0 * 2.0)
        x0 = x1[:, 0]
    return np.sum(x0 ** 2) + np.sum(x1)


def view_taken_last_in_a_loop_read_before_the_write(x0, x1):
    for _ in range(2):
        x1 -= np.sum(x0 * 2.0)
        x0 = x1[:, 0]
    return np.sum(x0 ** 2) + np.sum(x1)


def test_view_a_loop_takes_last_is_there_at_its_next_start(jit):
    # seed 1402593 (silently wrong): `x0 = x1[:, 0]` at the end of the body is a view
    # of x1 when the next iteration writes x1 and then reads x0, which NumPy shows
    # changed; the gradient read the copy it took. Refused where x0 is read between the
    # write and the view's next taking; right where it is not
    x0, x1 = np.array([0.8239, -0.0074]), np.array([[0.45, 0.33, 0.18], [-0.45, -0.37, -0.39]])
    with pytest.raises(srcgrad.SrcgradError, match="'x0' is a view of 'x1' read after"):
        srcgrad.grad(view_taken_last_in_a_loop, wrt=(0, 1), jit=False)(x0, x1)
    fun = view_taken_last_in_a_loop_read_before_the_write
    args = (x0, x1)
    assert_grad(fun, srcgrad.grad(fun, wrt=(0, 1), jit=jit)(*args), args, [0, 1])


def second_argument(a, b):
    return b


def changed_through_a_view_of_a_helper_result(x0, x1):
    t8, t9 = second_argument(x0, x1[0])[::-2], x0 * 2.0
    t8, t9 = t9, t8
    t9 += t8[0] ** 2
    return np.sum(x1 ** 2)


def changed_through_a_slice_of_a_helper_result(x0, x1):
    t9 = second_argument(x0, x1[0])[::-2]
    t9 += x0[0] ** 2
    return np.sum(x1 ** 2)


def test_op_assign_through_a_view_of_what_a_helper_returned():
    # seed 1505881 (silently wrong): `h(a, x1[0])[::-2]` with a helper that returns its
    # second argument is a view of x1; `t += e` on it changed x1 in NumPy, unseen by
    # the gradient (zero where it is 27 at these values). Refused, as `t = h(a, x1[0])`
    x0, x1 = np.array([0.65, 1.05]), np.array([[-0.11, 1.98, -0.64], [-0.30, -1.45, -0.87]])
    for fun in (changed_through_a_view_of_a_helper_result,
                changed_through_a_slice_of_a_helper_result):
        with pytest.raises(srcgrad.SrcgradError, match="'t9 \\+= ...' changes in place"):
            srcgrad.grad(fun, jit=False)(x0, x1)


def row_at_a_computed_index_read_after_a_write(x1, n):
    t4 = x1[n % 2]
    x1[:, 1:] += 0.5
    return np.sum(np.cos(t4))


def rows_at_an_index_array_read_after_a_write(x1, idx):
    t4 = x1[idx]
    x1[0, 1:] += 0.5
    return np.sum(np.cos(t4))


def test_name_index_is_a_view_or_a_copy_as_the_code_runs(jit):
    # seed 1506167 (silently wrong): `t4 = x1[n % 2]` is a row, a view, that NumPy shows
    # changed after `x1[:, 1:] += ...`; the gradient took it as a copy (a name index may
    # be an index array, which copies). Checked when the code runs: refused where it is
    # a view, right where it is a copy (the rows at an index array keep their values)
    x1 = np.array([[1.5, 0.25, 0.9], [-0.4, -0.26, -1.9]])
    with pytest.raises(srcgrad.SrcgradError, match="'t4' is a view of 'x1' read after"):
        srcgrad.grad(row_at_a_computed_index_read_after_a_write, jit=jit)(x1, 1)
    idx = np.array([0, 1, 0])
    fun = rows_at_an_index_array_read_after_a_write
    g = srcgrad.grad(fun, jit=jit)(x1, idx)
    assert_grad(fun, [g], (x1, idx), [0])
    np.testing.assert_allclose(g, [-2.0 * np.sin(x1[0]), -np.sin(x1[1])])   # by hand


def view_of_a_helper_result_read_after_a_write(x):
    t3 = passed_back(np.exp2(np.cos(x)))
    v8 = t3[1:]
    t3[1] = np.sum(x * t3)
    return np.sum(np.sin(v8))


def view_of_a_helper_result(x):
    t3 = passed_back(np.exp2(np.cos(x)))
    v8 = t3[1:]
    return np.sum(np.sin(v8))


def test_view_of_a_helper_result_read_after_a_write_into_it(jit):
    # seed 1605020 (silently wrong): `v8 = t3[1:]` of what a helper returned was taken
    # for a view of the helper's arguments only; the write into t3 itself went unseen.
    # Refused (t3 may be an array the caller passed); without the write it differentiates
    x = np.array([0.09, 0.92, 0.3])
    with pytest.raises(srcgrad.SrcgradError, match="'v8' is a view of 't3', which "
                       "passed_back returned"):
        srcgrad.grad(view_of_a_helper_result_read_after_a_write, jit=False)(x)
    g = srcgrad.grad(view_of_a_helper_result, jit=jit)(x)
    assert_grad(view_of_a_helper_result, [g], (x,), [0])


def changed_after_a_swap_of_an_alias(x, y):
    t4, t5 = x * 1.0, y * 2.0
    t2 = t4
    t4, t5 = t5, t4
    t5 += 1.0
    return np.sum(t2 ** 2) + np.sum(t4)


def swapped_new_arrays_changed(x, y):
    a, b = x * 2.0, y * 3.0
    a, b = b, a
    a += 1.0
    return np.sum(a ** 2) + np.sum(b)


def test_a_swap_passes_on_the_sharing_of_what_it_swaps(jit):
    # seed 1608959 (silently wrong): `t4, t5 = t2, ...; t4, t5 = t5, t4` makes t5 the
    # array t2 names; `t5 += e` changed t2 in NumPy, unseen by the gradient. A swap makes
    # no new sharing, but the name that gets an array shares what it shared: refused.
    # Swapping arrays nobody else names stays differentiable
    x, y = np.array([0.3, 0.5]), np.array([1.0, -2.0])
    with pytest.raises(srcgrad.SrcgradError, match="'t5 \\+= ...' changes in place"):
        srcgrad.grad(changed_after_a_swap_of_an_alias, wrt=(0, 1), jit=False)(x, y)
    g = srcgrad.grad(swapped_new_arrays_changed, wrt=(0, 1), jit=jit)(x, y)
    assert_grad(swapped_new_arrays_changed, g, (x, y), [0, 1])
    np.testing.assert_allclose(g[1], 6.0 * (3.0 * y + 1.0))   # by hand: d sum((3y+1)^2)


def reset_matmul_accumulator(w, v, n):
    for _ in range(n):
        acc = 1
        for _ in range(2):
            acc = (acc * w) @ v
    return np.sum(acc)


def test_accumulator_reset_in_an_outer_loop_then_a_matrix_product():
    # seed 2002711 (crashed): `acc = 1` kills acc's adjoint each outer trip, made again as
    # zeros of the number 1; the adjoint of `@` needs it at the vector's shape
    # (ValueError from matmul_rhs_grad). Only the last trip reaches the result.
    # f = 1^T w ((w v) * v): with u = w v, c = w^T 1,
    # df/dw = 1 (u v)^T + (c v) v^T and df/dv = c u + w^T (c v).
    w, v = np.array([[0.5, -0.2], [0.3, 0.8]]), np.array([1.0, -0.6])
    got = srcgrad.grad(reset_matmul_accumulator, wrt=(0, 1), jit=False)(w, v, 3)
    u, c = w @ v, w.sum(axis=0)
    np.testing.assert_allclose(got[0], np.outer(np.ones(2), u * v) + np.outer(c * v, v))
    np.testing.assert_allclose(got[1], c * u + w.T @ (c * v))
    assert_grad(reset_matmul_accumulator, got, (w, v, 3), (0, 1))


@compiles
def test_accumulator_reset_then_a_matrix_product_is_refused_compiled():
    # numba types acc once; the error says why, not from inside srcgrad's matmul helpers
    w, v = np.array([[0.5, -0.2], [0.3, 0.8]]), np.array([1.0, -0.6])
    with pytest.raises(srcgrad.SrcgradError, match="a number, then an array"):
        srcgrad.grad(reset_matmul_accumulator, jit=True)(w, v, 3)


def variance_with_differentiated_ddof(x, d):
    return np.var(x, ddof=d)


def appended_in_a_loop(x):
    parts = []
    for i in range(3):
        parts.append(x * i)
    return np.sum(np.stack(parts) ** 2)


def stacked_twice(x, y):
    p = (x, y)
    s = np.stack(p) + np.stack(p)
    return np.sum(s * s)


def test_a_keyword_argument_receiving_a_differentiated_value_is_refused(jit):
    # found in review: rules differentiate positional arguments, so d/dd of
    # np.var(x, ddof=d) came out 0.0 (right: 0.963 at the point below); grad and jvp
    # refuse it, and a constant keyword still differentiates
    x = np.array([0.3, -1.2, 0.8])
    with pytest.raises(srcgrad.MissingRule, match="keyword argument ddof= receives"):
        srcgrad.grad(variance_with_differentiated_ddof, wrt=(0, 1), jit=jit)(x, 1.5)
    with pytest.raises(srcgrad.MissingRule, match="keyword argument ddof= receives"):
        srcgrad.jvp(variance_with_differentiated_ddof, wrt=(0, 1), jit=jit)(x, 1.5, (x, 1.0))
    g = srcgrad.grad(variance_with_differentiated_ddof, jit=jit)(x, 1.5)
    np.testing.assert_allclose(g, 2 * (x - x.mean()) / (3 - 1.5))


def test_a_call_kept_for_its_effect_on_a_differentiated_value_is_refused(jit):
    # found in review: grad dropped `parts.append(v)`, so the gradient was zero
    # (right: 10 x); it was refused since, and is now an array the loop fills
    # (passes/lists.py); jvp follows an append, and gets it right (as Python: numba has
    # no np.stack of a list)
    x = np.array([0.3, -1.2, 0.8])
    np.testing.assert_allclose(srcgrad.grad(appended_in_a_loop, jit=jit)(x), 10 * x)
    value, slope = srcgrad.jvp(appended_in_a_loop, jit=False)(x, np.ones(3))
    assert slope == pytest.approx(10 * np.sum(x))


def test_adjoints_of_a_tuple_read_twice_add_item_by_item(jit):
    # found in review: `dp = dp + unstack_like(...)` joined the two tuples, so the
    # gradient was half: s = 2 (x, y) stacked, so d sum(s * s) = 8 (x, y)
    x, y = np.array([0.3, -1.2, 0.8]), np.array([1.0, 0.5, -0.4])
    got = srcgrad.grad(stacked_twice, wrt=(0, 1), jit=jit)(x, y)
    np.testing.assert_allclose(got[0], 8 * x)
    np.testing.assert_allclose(got[1], 8 * y)
    assert_grad(stacked_twice, got, (x, y), (0, 1))


def pair_of(a):
    return [a, a * 2.0]


def repeated_pair(a):
    return np.sum(np.array(pair_of(a) * 2) ** 2)


def test_repeating_a_list_a_helper_returned_is_refused(jit):
    # found in review: `pair_of(a) * 2` repeats the list; compiled, `*`'s rule took it
    # for arithmetic and gave 2 (a*a + 4 a*a) * 2 ... silently wrong; now refused
    with pytest.raises(srcgrad.MissingRule, match="repeating a list a function returned"):
        srcgrad.grad(repeated_pair, jit=jit)(1.5)


def stacked_products(x, z, v):
    return np.sum(np.sin(x @ z)) + np.sum((x @ x) ** 2) + np.sum(np.cos(v @ x)) + \
        np.sum(np.tanh(x @ v))


def test_matrix_products_of_stacks(rng):
    # found in review: the adjoints of @ handled 1-D and 2-D operands only, and a stack
    # of matrices got a silently wrong gradient (off by 6.8 for np.sum(x @ z)); as
    # Python (numba's @ takes 1-D and 2-D arrays: compiled, a clear error)
    x, z, v = rng.standard_normal((2, 3, 3)), rng.standard_normal((3, 3)), rng.standard_normal(3)
    got = srcgrad.grad(stacked_products, wrt=(0, 1, 2), jit=False)(x, z, v)
    assert_grad(stacked_products, got, (x, z, v), (0, 1, 2))
    # by hand: d sum(x @ z)/dz = sum over the stack of x^T 1
    simple = srcgrad.grad(lambda_free_sum, wrt=(0, 1), jit=False)(x, z)
    np.testing.assert_allclose(simple[1], np.einsum("sij,sik->jk", x, np.ones((2, 3, 3))))
    np.testing.assert_allclose(simple[0], np.broadcast_to(z.sum(axis=1), (2, 3, 3)))


def lambda_free_sum(x, z):
    return np.sum(x @ z)


def inv(a):   # (named as the np.linalg function it calls)
    return np.sum(np.linalg.inv(a))


def test_a_function_named_as_a_function_it_calls_is_not_recursive(jit):
    # found in review: `inv` reading np.linalg.inv was taken to call itself, and
    # specialising it on its (absent) int arguments recursed without end
    # (RecursionError); d sum(inv(a))/da = -inv(a)^T 1 1^T inv(a)^T = -1/4 at a = 2 I
    got = srcgrad.grad(inv, jit=jit)(2.0 * np.eye(2))
    np.testing.assert_allclose(got, np.full((2, 2), -0.25))


def test_generated_source_does_not_depend_on_string_hashes():
    # found while splitting normalize (fuzz seed 5000281): the tape of `_t84 + _t85` was
    # made in set order, so two processes generated different sources (and cache entries)
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys, hashlib, tempfile; from pathlib import Path; import srcgrad; "
            "from fuzz.grammar import Grammar; from fuzz.runner import load; "
            "src, specs = Grammar(5000281, True).program(); "
            "f = load(src, 5000281, Path(tempfile.mkdtemp())); "
            "wrt = tuple(f'x{k}' for k, s in enumerate(specs) if s != 'int'); "
            "print(hashlib.sha1(srcgrad.grad(f, wrt=wrt, jit=False).source.encode())"
            ".hexdigest())")
    here = Path(__file__).resolve().parent
    digests = {subprocess.run([sys.executable, "-c", code], cwd=here, capture_output=True,
                              text=True, check=True,
                              env={**os.environ, "PYTHONHASHSEED": seed}).stdout
               for seed in ("1", "3")}
    assert len(digests) == 1


def views_row_then_scales_all(x0):
    x0 *= np.tanh(np.multiply(x0, x0[1, 2]))
    t2 = x0[0] - 1.0            # its tangent is the tangent of x0[0]: a view
    x0 *= np.tanh(t2)           # written through x0, so t2's tangent must be a copy
    v4 = x0[1]                  # noqa: F841 (a view taken after: x0[0] is one too)
    x0[1, 0] = t2[-1]
    return np.sum(np.sin(x0))


def test_jvp_of_a_shifted_row_of_an_array_written_later(jit):
    # fuzzer seed 3403774 (jvp silently wrong): `t2 = x0[0] - 1.0` took the tangent of the
    # view x0[0] as its own, and the write `x0 *= ...` changed it
    x = np.array([[1.43, -0.88, 1.80], [-0.93, -1.04, -0.03]])
    v = np.array([[-0.95, 0.59, -0.30], [-1.64, 0.70, -0.70]])
    h = 1e-6
    want = (views_row_then_scales_all(x + h * v) - views_row_then_scales_all(x - h * v)) / (2 * h)
    _, slope = srcgrad.jvp(views_row_then_scales_all, jit=jit)(x.copy(), v)
    assert slope == pytest.approx(want, rel=1e-6)


def _tail_of_second(a, b):
    return b[1:]


def scales_a_number_beside_a_helper_view(x, y):
    v = _tail_of_second(x, y)   # v may be either argument: both are copied on entry
    v[0] = 1.0
    x *= 3.0
    return x * np.sum(v)


def test_a_number_parameter_written_beside_a_helper_view_is_not_copied_as_an_array(jit):
    # fuzzer seed 3801190 (crash): `x *= ...` on a float parameter, with a helper's result
    # written into, made the copy on entry `x.copy()` on a float (AttributeError)
    y = np.array([0.5, -2.0, 4.0])
    g = srcgrad.grad(scales_a_number_beside_a_helper_view, wrt=(0, 1), jit=jit)
    dx, dy = g(2.0, y.copy())
    # f = 3x (1 + y[2]): df/dx = 3 (1 + y[2]) = 15, df/dy = (0, 0, 3x) = (0, 0, 6)
    assert dx == pytest.approx(15.0)
    np.testing.assert_allclose(dy, [0.0, 0.0, 6.0])
    assert_grad(scales_a_number_beside_a_helper_view, (dx, dy), (2.0, y), (0, 1))
    assert np.array_equal(y, [0.5, -2.0, 4.0])   # the caller's array is unchanged


def flipped_row_then_written(x, n):
    t4 = x * np.ones((2, 3))
    t5 = np.flip(t4[0])   # a view of a view of t4
    t4[:, 0] += t5[0] ** 2
    if n % 2 == 1:
        return np.sum(t5 ** 2)
    t4 = t5 * t4   # t4 assigned twice: the view t4[0] cannot be taken again
    return np.sum(x)


def flipped_row_then_written_once(x):
    t4 = x * np.ones((2, 3))
    t5 = np.flip(t4[0])
    t4[:, 0] += t5[0] ** 2
    return np.sum(t5 ** 2)


def test_a_view_of_a_view_that_cannot_be_taken_again_is_refused(jit):
    # fuzzer seed 9510430 (silently wrong): t5 = flip(t4[0]) was taken again after the write
    # from the row t4[0], which itself was not (t4 is assigned twice), so the adjoint went
    # from t5 to t4 as it was before the write and skipped the write's adjoint
    x = np.array([0.3, 0.5, 0.7])
    with pytest.raises(srcgrad.UnsupportedSyntax, match="'t5' is a view of 't4'"):
        srcgrad.grad(flipped_row_then_written, jit=jit)(x.copy(), 3)


def test_a_view_of_a_view_taken_again_after_a_write(jit):
    # f = x2^2 + x1^2 + (x0 + x2^2)^2, t5 reading the written t4[0, 0]
    x = np.array([0.3, 0.5, 0.7])
    g = srcgrad.grad(flipped_row_then_written_once, jit=jit)(x.copy())
    np.testing.assert_allclose(g, [1.58, 1.0, 1.4 + 1.58 * 1.4])
    assert_grad(flipped_row_then_written_once, (g,), (x,), (0,))


def _apply(fn, a):
    return fn(a)


def _tail(v):
    return v[1:]


def _through_tail(a):
    return _tail(a)


def tail_through_apply_then_scaled(x):
    def rest(v):
        return v[1:]
    t = _apply(rest, x)   # a view of x, through a function passed to a helper
    x *= 2.0
    return np.sum(t ** 2)


def tail_through_a_helper_then_scaled(x):
    t = _through_tail(x)   # a view of x, through a helper calling a helper
    x *= 2.0
    return np.sum(t ** 2)


def doubled_through_apply_then_scaled(x):
    def doubled(v):
        return v * 2.0
    t = _apply(doubled, x)   # a new array: x can change in place
    x *= 2.0
    return np.sum(t ** 2) + np.sum(x)


@pytest.mark.parametrize("fun", [tail_through_apply_then_scaled,
                                 tail_through_a_helper_then_scaled])
def test_a_view_returned_through_a_helper_call_is_shared(fun, jit):
    # fuzzer seed 9520315 (silently wrong): `t4 = apply_t4(c_t4, x0)` with c_t4 returning
    # x0[1:], then `x0 -= ...`: the helper's `return fn(a)` (and `return tail(a)`) was not
    # known to return its argument, so t4 kept the values from before the write
    x = np.array([-1.27, 0.6, 0.56])
    with pytest.raises(srcgrad.UnsupportedSyntax, match="'x \\*= ...' changes in place"):
        srcgrad.grad(fun, jit=jit)(x.copy())


def test_a_new_array_returned_through_a_function_passed_to_a_helper(jit):
    # f = sum((2x)^2) + sum(2x): df/dx = 8x + 2, x scaled after t is made
    x = np.array([-1.27, 0.6, 0.56])
    g = srcgrad.grad(doubled_through_apply_then_scaled, jit=jit)(x.copy())
    np.testing.assert_allclose(g, 8 * x + 2)
    assert_grad(doubled_through_apply_then_scaled, (g,), (x,), (0,))


def joined_in_a_loop(x, n):
    t = x
    for _ in range(n):
        p = [x, x * 2.0]
        q = p + [x * 0.5]
        t = t * q[2]
    return np.sum(t)


def test_a_join_of_displays_bound_in_a_loop(jit):
    # fuzz seed 9987164: `q = p + [v]` in a loop, p a display bound there, was taken for
    # arithmetic: the adjoint unbroadcast a list and crashed (AttributeError from
    # generated code); then refused (MissingRule); now the display [p[0], p[1], v]. By
    # hand, t = x (x / 2)^n: dt_i/dx_i = (n + 1) x_i^n / 2^n, 3 x^2 / 4 at n = 2.
    x = np.array([1.0, 2.0])
    g = srcgrad.grad(joined_in_a_loop, jit=jit)(x, 2)
    np.testing.assert_allclose(g, [0.75, 3.0], rtol=1e-12)
    assert_grad(lambda x: joined_in_a_loop(x, 2), (g,), (x,), [0])


# ---- fuzz seed 9999483: an item of a joined list changed in place ----


def item_of_a_join_changed(x0, x2, n):
    p5 = [x2, x0]
    q6 = p5 + [x2 * 0.5]
    t4 = q6[1]            # x0's array: the join holds p5's items
    i = 0
    while i < n:
        i += 1
        t4 -= np.sum(x2)  # NumPy changes x0 in place
    return np.sum(np.sin(x0))


def _shared_through(form, folder):
    """f(x0, x2, n) where t is bound to x0's array through `form`, then `t -= sum(x2)`
    n times (NumPy changes x0 in place), returning sum(sin(x0))."""
    lines = {"repeat": ["q = [x0] * 2", "t = q[1]"],
             "starred": ["p, *q = [x2, x0, x2 * 0.5]", "t = q[0]"],
             "copy": ["p = [x2, x0]", "q = list(p)", "t = q[1]"],
             "tuple_join": ["p = (x2, x0)", "q = p + (x2 * 0.5,)", "t = q[1]"],
             "unpack_list": ["a, t = [x2, x0]"],
             "conditional": ["t = x0 if n > 0 else x2"],
             "max_key": ["t = max([x2, x0], key=lambda v: -np.sum(v))"],
             "pop": ["p = [x2, x0]", "t = p.pop()"],
             "zip": ["for a, t in zip([x2], [x0]):", "    pass"],
             "astype": ["t = x0.astype(np.float64, copy=False)"],
             "comprehension": ["q = [v for v in [x2, x0]]", "t = q[1]"],
             "inline_join": ["t = ([x2] + [x0])[1]"],
             "view_of_a_branch": ["t = (x0 if n > 0 else x2)[:]"],
             "helper_pop": ["t = taken(x0, x2)"],
             "helper_or": ["t = either(x0, x2)"]}[form]
    helpers = ["def taken(a, b):", "    p = [b, a]", "    return p.pop()",
               "def either(a, b):", "    return np.sum(b) > 9.0 and b or a"]
    source = "\n".join([*helpers, "def f(x0, x2, n):", *("    " + s for s in lines),
                        "    for _ in range(n):", "        t -= np.sum(x2)",
                        "    return np.sum(np.sin(x0))", ""])
    path = str(folder / f"shared_{form}.py")   # (srcgrad reads the source from its file)
    with open(path, "w") as out:
        out.write(source)
    namespace = {"np": np}
    exec(compile(source, path, "exec"), namespace)
    return namespace["f"]


@pytest.mark.parametrize("fun", [item_of_a_join_changed] + [
    pytest.param(form, id=form) for form in
    ("repeat", "starred", "copy", "tuple_join", "unpack_list", "conditional", "max_key",
     "pop", "zip", "astype", "comprehension", "inline_join", "view_of_a_branch",
     "helper_pop", "helper_or")])
def test_an_array_shared_through_a_join_or_a_copy_changed_in_place_is_refused(fun, jit,
                                                                             tmp_path):
    # seed 9999483: t4 = (p5 + [...])[1] is x0's array, and `t4 -= ...` changes x0. The
    # aliasing analysis did not carry a join's items to the names read from it, and gave
    # cos(x0) where the function is sum(sin(x0 - n * sum(x2))); the same held for the
    # other ways a name takes an array out of a list, a branch or a call, and for what a
    # helper returns that way
    fun = fun if callable(fun) else _shared_through(fun, tmp_path)
    x0, x2 = np.array([0.5, -1.0]), np.array([0.3, 0.2])
    changed = x0.copy()
    fun(changed, x2.copy(), 1)   # (plain NumPy does change x0)
    np.testing.assert_allclose(changed, x0 - 0.5)
    # (`x0.astype(..., copy=False)` is refused as it is compiled: a view of x0)
    with pytest.raises(srcgrad.UnsupportedSyntax, match="'t4? -= ...' changes in place an "
                                                        "array that another name shares|"
                                                        "'t' is a view of 'x0'"):
        srcgrad.grad(fun, jit=jit)(x0.copy(), x2.copy(), 1)
    if fun.__code__.co_filename.endswith(("astype.py", "branch.py")):
        return   # (a number has no .astype, nor a slice)
    # on numbers `t -= ...` is a new value: the gradient of sum(sin(x0)) is cos(x0)
    g = srcgrad.grad(fun, wrt=(0, 1), jit=jit)(0.5, 0.3, 1)
    np.testing.assert_allclose(g, (np.cos(0.5), 0.0))


# ---- fuzz seed 9999687: a run of slice statements whose value is read after its loop ----


def branch_on_a_value_the_loop_leaves(x, n):
    acc = x[:-1] * 0.0
    t = x[:-1]
    for _ in range(n):
        acc = x[1:] * 2.0 + x[:-1]   # (one run of slice statements with the next line)
        t = x[1:]
    if acc[0] > 0.0:                 # read after the loop, for the branch only
        return np.sum(t ** 2)
    return np.sum(t)


def test_a_value_a_scalarised_run_leaves_for_after_its_loop_is_kept(jit):
    # seed 9999687: scalarise made the loop's two statements one call returning t only:
    # acc, assigned before the loop too, was taken for not read after the run, so the
    # branch read acc's value from before the loop (here: the wrong branch, sum(t) where
    # it is sum(t**2); in the seed an IndexError of a number)
    x = np.array([0.3, 0.4, 0.8])
    g = srcgrad.grad(branch_on_a_value_the_loop_leaves, jit=jit)(x, 2)
    np.testing.assert_allclose(g, [0.0, 0.8, 1.6])   # t = x[1:], d sum(t^2) = 2t
    assert_grad(branch_on_a_value_the_loop_leaves, (g,), (x, 2), (0,))


def stacked_items(x):
    y = np.stack([x[0], x[2]])
    return np.sum(y ** 2) + np.sum(np.stack((x[1], 2.0 * x[0]), axis=-1) * np.array([1.0, 3.0]))


def test_stack_of_numbers_compiles(jit):
    # fuzz seeds 9997002, 9997008: np.stack([x1[0], x1[2]]) was refused compiled ("numba
    # cannot compile ... stack"), numba's np.stack taking tuples of arrays only
    x = np.array([0.5, -1.5, 2.0])
    g = srcgrad.grad(stacked_items, jit=jit)(x)
    np.testing.assert_allclose(g, [2 * 0.5 + 6.0, 1.0, 2 * 2.0])
    assert_grad(stacked_items, (g,), (x,), (0,))


def write_at_an_int_index(x0, x1, n):
    x1[n % 2] = np.sin(x0)
    x0[n % 2] *= x1[1, 0]
    return np.sum(x1 ** 2) + np.sum(x0)


def test_write_at_an_index_not_known_to_be_an_int_compiles(jit):
    # fuzz seeds 9997007, 9997011: `x1[n % 2] = v` took the gradient of v through
    # written_grad, whose compiled form took index arrays only ("written_grad compiles
    # 1-D index arrays on one axis...")
    x0, x1 = np.array([0.3, -0.8, 1.1]), np.array([[0.2, 0.4, -0.6], [1.0, -2.0, 0.5]])
    g = srcgrad.grad(write_at_an_int_index, wrt=(0, 1), jit=jit)(x0.copy(), x1.copy(), 3)
    # n = 3: row 1 of x1 is sin(x0), then x0[1] *= sin(x0[0])
    s, c = np.sin(x0), np.cos(x0)
    want0 = 2 * s * c + np.array([0.0, 0.0, 0.0])
    want0[0] += x0[1] * c[0]
    want0[1] += s[0] - 1.0
    want0 += 1.0
    np.testing.assert_allclose(g[0], want0)
    np.testing.assert_allclose(g[1], np.vstack([2 * x1[0], np.zeros(3)]))
    assert_grad(write_at_an_int_index, g, (x0, x1, 3), (0, 1))


def write_at_a_rank_2_index(x0, x1):
    x0[[[0, 2, 0]]] = np.sin(x1)
    return np.sum(x0 ** 3) + np.sum(x1)


def scale_at_a_rank_2_index(x0, x1):
    x0[np.array([[1, 0], [1, 1]])] *= x1
    return np.sum(x0 ** 2)


def test_write_at_a_rank_2_index_compiles(jit):
    # the fuzzer's x[[[0, 2, 0]]] = v (a (1, 3) index): written_grad's compiled form took
    # 1-D index arrays only ("written_grad compiles 1-D index arrays...")
    needs_numba_advanced_indexing(jit)   # (the write itself, x0[[[0, 2, 0]]] = ...)
    x0, x1 = np.array([0.3, -0.7, 1.2]), np.array([0.5, 1.5, -0.4])
    g = srcgrad.grad(write_at_a_rank_2_index, wrt=(0, 1), jit=jit)(x0.copy(), x1.copy())
    # x0 becomes [sin(x1[2]), x0[1], sin(x1[1])]: the first write into x0[0] is lost
    s, c = np.sin(x1), np.cos(x1)
    np.testing.assert_allclose(g[0], [0.0, 3 * 0.7 ** 2, 0.0])
    np.testing.assert_allclose(g[1], [1.0, 1 + 3 * s[1] ** 2 * c[1], 1 + 3 * s[2] ** 2 * c[2]])
    assert_grad(write_at_a_rank_2_index, g, (x0, x1), (0, 1))


def test_scale_at_a_rank_2_index_array_compiles(jit):
    needs_numba_advanced_indexing(jit)   # (x0[idx] itself)
    x0, x1 = np.array([0.3, -0.7, 1.2]), np.array([0.5, 1.5])
    g = srcgrad.grad(scale_at_a_rank_2_index, wrt=(0, 1), jit=jit)(x0.copy(), x1.copy())
    # x0[idx] = x0[idx] * x1 keeps the last write of each row: x0[1] * x1[1], x0[0] * x1[1]
    np.testing.assert_allclose(g[0], [2 * 0.3 * 1.5 ** 2, 2 * -0.7 * 1.5 ** 2, 2 * 1.2])
    np.testing.assert_allclose(g[1], [0.0, 2 * 1.5 * (0.3 ** 2 + 0.7 ** 2)])
    assert_grad(scale_at_a_rank_2_index, g, (x0, x1), (0, 1))


def slice_added_to_itself(x0, n):
    s1 = x0 * 1.0
    for _ in range(n):
        s1[:] += s1 * 0.5
    return np.sum(s1 ** 2)


def test_a_sliced_array_read_whole_in_its_run_is_not_scalarised(jit):
    # fuzz seed 9997058: `s1[:] += s1` in a loop became the index loop
    # `s1[i] = s1[i] + s1`, which numba cannot type: jvp was refused compiled
    x = np.array([0.5, 1.5])
    value, slope = srcgrad.jvp(slice_added_to_itself, jit=jit)(x, 2, np.array([1.0, -2.0]))
    # s1 = 1.5 ** 2 x: the value 1.5 ** 4 |x|^2, its slope 2 * 1.5 ** 4 <x, t>
    np.testing.assert_allclose((value, slope), (1.5 ** 4 * 2.5, 2 * 1.5 ** 4 * -2.5))
    g = srcgrad.grad(slice_added_to_itself, jit=jit)(x, 2)
    np.testing.assert_allclose(g, 2 * 1.5 ** 4 * x)
    assert_grad(slice_added_to_itself, (g,), (x, 2), (0,))


def reversed_tuple_item(a, b):
    p = (np.sin(a), b)
    t = p[::-1][0]
    return np.sum(t * 2.0) + np.sum(p[0])


def reversed_tuple_item_in_a_loop(a, b, n):
    s = 0.0
    for i in range(n):
        p = (np.sin(a) * i, b * a)
        t = p[::-1][0]
        s = s + np.sum(t * 2.0) + np.sum(p[0])
    return s


def test_the_adjoint_of_a_slice_of_a_tuple_made_in_a_loop(jit):
    # fuzzer seed 10330223: the same in a loop, where p is no tuple srcgrad follows item
    # by item: `dp[::-1] += d_t` extended the list. s = 6 sum(a b) + 3 sum(sin a) for n = 3
    a, b = np.array([0.3, 0.5]), np.array([1.0, 2.0])
    g = srcgrad.grad(reversed_tuple_item_in_a_loop, wrt=(0, 1), jit=jit)(a, b, 3)
    np.testing.assert_allclose(g[0], 6.0 * b + 3.0 * np.cos(a))
    np.testing.assert_allclose(g[1], 6.0 * a)
    assert_grad(reversed_tuple_item_in_a_loop, g, (a, b, 3), (0, 1))


def test_the_adjoint_of_a_slice_of_a_tuple_adds_item_by_item(jit):
    # fuzzer seed 10110914: the adjoint of p[::-1] was `dp[::-1] = dp[::-1] + d_t`, which
    # joined the two lists of item adjoints (ValueError) instead of adding them item by item
    a, b = np.array([0.3, 0.5]), np.array([1.0, 2.0])
    g = srcgrad.grad(reversed_tuple_item, wrt=(0, 1), jit=jit)(a, b)
    np.testing.assert_allclose(g[0], np.cos(a))   # t is b: d/da sum(sin a), d/db sum(2b)
    np.testing.assert_allclose(g[1], [2.0, 2.0])
    assert_grad(reversed_tuple_item, g, (a, b), (0, 1))


def rebound_argument_written_at_repeated_columns(x0, x1):
    x0 = x0
    x0[:, [0, 2, 0]] += x1 / (x0[0, :3] ** 2 + 1.0)
    return np.sum(x0 ** 2) + np.sum(np.sin(x1))


def test_a_write_into_an_argument_bound_again_to_itself(jit):
    # fuzzer seed 10120197: `x0 = x0` then a write at repeated columns. A change that let
    # such writes through (87202e8, reverted) gave 0.99 where differences give 0.40: the
    # adjoint read x0[0, :3] as a view after the write, since the check that copies such
    # views compared the view's root (x0's copy) with the name written (x0 bound again).
    # Now `x0 = x0` passes the array on without sharing it, and the view is copied
    x0, x1 = np.arange(6.0).reshape(2, 3) / 5, np.array([0.2, 0.4, 0.6])
    g = srcgrad.grad(rebound_argument_written_at_repeated_columns, wrt=(0, 1), jit=jit)(
        x0.copy(), x1)
    # by hand: `x0[:, [0, 2, 0]] += u` assigns x0[:, idx] + u, the last of the repeated
    # columns winning (NumPy's buffered fancy write): column 0 gets u2, column 2 gets u1,
    # and u0 is lost; u = x1 / (x0[0] ** 2 + 1) reads row 0 before the write
    u = x1 / (x0[0] ** 2 + 1.0)
    end = x0 + np.array([u[2], 0.0, u[1]])
    du = -2.0 * x0[0] * x1 / (x0[0] ** 2 + 1.0) ** 2   # du_k / dx0[0, k]
    by_hand = 2.0 * end
    by_hand[0] += [0.0, 2.0 * end[:, 2].sum() * du[1], 2.0 * end[:, 0].sum() * du[2]]
    np.testing.assert_allclose(g[0], by_hand)
    assert_grad(rebound_argument_written_at_repeated_columns, g, (x0, x1), (0, 1))


# ---- a 0-d array item of a list built by a comprehension or appends, changed in place ----


def item_of_a_comprehension_changed(a, b):
    c = [v for v in (a, b)][1]
    c -= np.sin(a)                      # on 0-d arrays NumPy changes b
    return np.sum(b * 3.0) + np.sum(c * a)


def item_of_appends_changed(a, b):
    parts = []
    for v in (a, b):
        parts.append(v)
    c = parts[1]
    c -= np.sin(a)
    return np.sum(b * 3.0) + np.sum(c * a)


@pytest.mark.parametrize("fun", [item_of_a_comprehension_changed, item_of_appends_changed])
def test_a_0d_array_item_of_a_built_list_changed_in_place_is_refused(fun, jit):
    # the list becomes an array of its items, where a 0-d array item is a number that no
    # longer is b: `c -= ...` passed the in-place check, and the gradient was that of
    # floats (0.542, 3.4) where b changes too (by differences: (-2.221, 3.4))
    a, b = np.array(0.4), np.array(1.3)
    changed = b.copy()
    fun(a.copy(), changed)
    assert changed == pytest.approx(1.3 - np.sin(0.4))   # (plain NumPy does change b)
    with pytest.raises(srcgrad.UnsupportedSyntax, match="'c -= ...' changes in place"):
        srcgrad.grad(fun, wrt=(0, 1), jit=jit)(a.copy(), b.copy())
    # on floats `c -= ...` is a new value: f = 3b + (b - sin a) a
    g = srcgrad.grad(fun, wrt=(0, 1), jit=jit)(0.4, 1.3)
    assert g == pytest.approx((1.3 - np.sin(0.4) - 0.4 * np.cos(0.4), 3.4))
    assert_grad(fun, g, (0.4, 1.3), (0, 1))


# ---- reshapes of arrays numba types as strided ('A') or transposed ('F') ----


def reshaped_column(x0, x1):
    return np.sum(x0[:, 0].reshape(2, 1) * x1)


def test_reshape_of_a_strided_column_compiles(jit):
    # fuzz seed 9997028: `x0[:, 0].reshape(2, 1)`, a column numba types as strided ('A'
    # layout), which numba reshapes not ("reshape() supports contiguous array only", the
    # refusal's first line read "Resolution failure for literal arguments:")
    x0, x1 = np.arange(6.0).reshape(2, 3) / 4.0 - 0.3, np.array([0.5, -1.0, 2.0])
    g = srcgrad.grad(reshaped_column, wrt=(0, 1), jit=jit)(x0, x1)
    # f = sum(x0[:, 0]) * sum(x1)
    want0 = np.zeros((2, 3))
    want0[:, 0] = np.sum(x1)
    np.testing.assert_allclose(g[0], want0)
    np.testing.assert_allclose(g[1], np.full(3, np.sum(x0[:, 0])))
    assert_grad(reshaped_column, g, (x0, x1), (0, 1))
    t0, t1 = np.ones((2, 3)), np.ones(3)
    value, tangent = srcgrad.jvp(reshaped_column, wrt=(0, 1), jit=jit)(x0, x1, (t0, t1))
    assert value == pytest.approx(np.sum(x0[:, 0]) * np.sum(x1))
    assert tangent == pytest.approx(2.0 * np.sum(x1) + 3.0 * np.sum(x0[:, 0]))


def first_column_spread(a):
    return a[:, 0].reshape(2, 1) * np.ones((2, 2))


def helper_reshapes_a_reversed_array(x0, x1):
    t = np.zeros((2, 2))
    for _ in range(2):
        t = t + first_column_spread((x1.reshape(2, 1) * x0)[::-1])
    return np.sum(t)


def test_helper_reshaping_a_column_of_a_reversed_array_compiles(jit):
    # fuzz seed 9997071: a helper's `a[:, 0].reshape(2, 1)` of a reversed slice `(...)[::-1]`
    # (strided, 'A'): numba refused the helper's gradient and its tangent
    x0, x1 = np.array([0.7, -0.2, 1.1]), np.array([1.5, -0.5])
    g = srcgrad.grad(helper_reshapes_a_reversed_array, wrt=(0, 1), jit=jit)(x0, x1)
    # f = 2 * 2 * x0[0] * sum(x1): two iterations, two columns of ones
    np.testing.assert_allclose(g[0], [4.0 * np.sum(x1), 0.0, 0.0])
    np.testing.assert_allclose(g[1], np.full(2, 4.0 * x0[0]))
    assert_grad(helper_reshapes_a_reversed_array, g, (x0, x1), (0, 1))
    t0, t1 = np.array([1.0, 2.0, 3.0]), np.array([1.0, -1.0])
    _, tangent = srcgrad.jvp(helper_reshapes_a_reversed_array, wrt=(0, 1), jit=jit)(
        x0, x1, (t0, t1))
    assert tangent == pytest.approx(4.0 * (t0[0] * np.sum(x1) + x0[0] * np.sum(t1)))


def reshaped_transpose(x):
    return np.sum(np.sin(x.T.reshape(6)) * np.arange(6.0))


def test_reshape_of_a_transpose_runs_compiled(jit):
    # x.T is Fortran-ordered ('F'): numba's reshape compiles but raised as it ran
    # ("incompatible shape for array"), where NumPy copies
    x = np.arange(6.0).reshape(2, 3) / 5.0
    g = srcgrad.grad(reshaped_transpose, jit=jit)(x)
    # x.T.reshape(6)[k] is x[k % 2, k // 2]: weight k on entry (k % 2, k // 2)
    k = np.arange(6)
    want = np.zeros((2, 3))
    want[k % 2, k // 2] = k * np.cos(x[k % 2, k // 2])
    np.testing.assert_allclose(g, want)
    assert_grad(reshaped_transpose, (g,), (x,), (0,))


def reshape_then_subtract(x0):
    t = np.reshape(x0, (1, -1))
    x0 -= 1.0
    return np.sum(t * t) + np.sum(x0 ** 3)


def reshape_of_a_local_then_subtract(x0):
    y = x0 * 2.0
    t = np.reshape(y, (1, 1))
    y -= 1.0
    return np.sum(t) + y ** 2


@pytest.mark.parametrize("fun", [reshape_then_subtract, reshape_of_a_local_then_subtract])
def test_a_number_changed_in_place_after_its_view_is_taken_is_refused(fun, jit):
    # fuzz seeds 10861165, 10880003: `x0 -= e` after `np.reshape(x0, ...)` is NumPy's
    # change in place of an array (the view sees it) and srcgrad writes it `x0[:] -= e`;
    # of a float x0 it called `x0.copy()` (AttributeError). A number's "view" is a new
    # array and `-=` binds again: refused, naming the line
    line = fun.__code__.co_firstlineno + (2 if fun is reshape_then_subtract else 3)
    with pytest.raises(srcgrad.UnsupportedSyntax,
                       match=rf"test_regressions_fuzz.py:{line}: '\w+ -= \.\.\.' with \w+ a "
                             r"number, after a view of it is taken"):
        srcgrad.grad(fun, jit=jit)(2.0)
    assert "in_place_array(" in srcgrad.grad(fun).source   # (the check that refuses it)


def test_an_array_changed_in_place_after_its_view_is_taken(jit):
    # the same code of an array: the view t sees x0 - 1, so the loss is
    # sum((x0 - 1)**2) + sum((x0 - 1)**3), of gradient 2 (x0 - 1) + 3 (x0 - 1)**2
    x = np.array([2.0, 0.5])
    g = srcgrad.grad(reshape_then_subtract, jit=jit)(x.copy())
    np.testing.assert_allclose(g, [5.0, -0.25])
    assert_grad(reshape_then_subtract, (g,), (x,), (0,))
    v = np.array([1.0, -2.0])
    assert srcgrad.jvp(reshape_then_subtract, jit=jit)(x.copy(), v)[1] == pytest.approx(5.5)


def expit_of_a_where_of_numbers(x1):
    s = np.sum(x1 ** 2)
    return np.sum(x1) + scipy.special.expit(np.where(s > 1.01, s, 2 * s))


def test_a_scipy_ufunc_of_a_0d_array_runs_compiled(jit):
    # fuzz seed 10871151 (compiled only): np.where of numbers is a 0-d array, and numba
    # made scipy.special.expit of it an array expression, which raised "unable to
    # broadcast argument 0 to output array"; SciPy's ufunc gives a number, as NumPy's do.
    # s = 4.6 > 1.01: the slope is 1 + expit'(s) 2 x1
    x = np.array([0.3, 0.2, 2.1])
    s = np.sum(x ** 2)
    g = srcgrad.grad(expit_of_a_where_of_numbers, jit=jit)(x)
    np.testing.assert_allclose(g, 1.0 + scipy.special.expit(s) * (1 - scipy.special.expit(s))
                               * 2 * x)
    assert_grad(expit_of_a_where_of_numbers, (g,), (x,), (0,))
