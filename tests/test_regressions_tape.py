"""Named regressions: values the adjoint reads back from inside a loop (issue 26, item 1).

A rule whose adjoint reads its result or its operands (tanh, division, ...) needs the
value of the iteration it reverses. Each gradient is checked against central differences
and, where there is one, a value by hand; compiled and as Python (the `jit` fixture).
"""

import gradbench as G
import numpy as np
import pytest
from fd import assert_grad

import srcgrad


def tanh_twice(x):
    for _ in range(2):
        x = np.tanh(x)
    return x


def reciprocal_twice(x):
    for _ in range(2):
        x = 1.0 / (1.0 + x)
    return x


def sin_then_divide(x, y, z):
    for i in range(2):
        t1 = x[1 - i] * (-1.12)  # noqa: F841 (the fuzzer's dead local)
        x = np.sin(x) + y.reshape(1, -1)
        z = z / (1.0 + x[i - 1] ** 2)
    return np.sum(z)


def test_tanh_overwritten_in_loop(jit):
    g = srcgrad.grad(tanh_twice, jit=jit)(0.5)
    t1 = np.tanh(0.5)
    want = (1 - np.tanh(t1) ** 2) * (1 - t1 ** 2)   # chain rule by hand: 0.63981...
    assert g == pytest.approx(want, rel=1e-12)
    assert g == pytest.approx(0.639808, abs=1e-6)


def test_reciprocal_overwritten_in_loop(jit):
    # x1 = 1/(1+x), x2 = 1/(1+x1) = (1+x)/(2+x); d/dx = 1/(2+x)**2 = 0.16 at 0.5
    assert srcgrad.grad(reciprocal_twice, jit=jit)(0.5) == pytest.approx(0.16, rel=1e-12)


def test_sin_then_divide_fuzzer_case(jit):
    r = np.random.default_rng(3)
    args = (r.normal(size=(2, 5)), r.normal(size=5), r.normal(size=(2, 5)))
    grads = srcgrad.grad(sin_then_divide, wrt=(0, 1, 2), jit=jit)(*args)
    assert_grad(sin_then_divide, grads, args, [0, 1, 2])


def test_loop_index_and_unwritten_inputs_are_not_taped(jit):
    """Issue 26 item 16: each loop reuses `i`; the reversed loops set it themselves, and
    `x[i]` (x is never written) is read again in the adjoint rather than taped."""
    x = np.linspace(0.5, 1.0, 6)
    g = srcgrad.grad(G.ode, jit=jit)
    assert_grad(G.ode, (g(x, 4),), (x, 4), [0])
    source = g.source
    assert "i_tape" not in source
    taped = {line.split(".append(")[1].rstrip(")") for line in source.splitlines()
             if ".append(" in line}
    reads_of_x = {line.split(" = ")[0].strip() for line in source.splitlines()
                  if " = x[" in line}
    assert reads_of_x and not taped & reads_of_x, taped


def accumulator_written_after_its_reads(x0, x1, x2):
    acc1 = x0 * 1.5
    for _ in range(2):
        x1 += acc1
        acc2 = 0
        for _ in range(1):
            acc2 = acc2 + x2 * x1
            x2 = acc2 @ acc2
        acc2[1] = np.max(acc2)
    return np.sum(x1) + np.sum(x2 ** 2)


def test_a_value_saved_where_it_is_read_is_a_copy_if_written_later():
    # fuzzer seed 802407: acc2, saved on the tape where the adjoint of x2 = acc2 @ acc2
    # reads it, was saved as the array itself; acc2[1] = ... then changed the saved
    # value (silently wrong). Python form: numba cannot type acc2 = 0, then an array
    x0, x1 = np.array([-0.78, 0.2]), np.array([-0.21, -0.38])
    got = srcgrad.grad(accumulator_written_after_its_reads, jit=False)(x0, x1.copy(), -0.823)
    assert_grad(lambda a: accumulator_written_after_its_reads(a, x1.copy(), -0.823), (got,),
                (x0,), (0,))


def written_at_listed_indices(x, n):
    t = np.ones((2, 3))
    for _ in range(n):
        t[[1, 1, 0], [2, 2, 0]] -= x[[2, 0, 0]] * 1.0
    return np.sum(t ** 2)


def test_a_list_of_indices_in_a_loop_is_made_again_not_taped(jit):
    # fuzzer seed 8600204 (a method form): the lists `[1, 1, 0]` were taped, and numba has
    # no tape of a list ("numba cannot compile the gradient"); t[1, 2] and t[0, 0] end as
    # 1 - n x0 (the last of the repeated writes is x[0]'s), so d/dx0 = -4 n (1 - n x0)
    x = np.array([1.0, 0.5, 0.25])
    g = srcgrad.grad(written_at_listed_indices, jit=jit)
    np.testing.assert_allclose(g(x, 2), [8.0, 0.0, 0.0])
    assert_grad(written_at_listed_indices, (g(x, 3),), (x, 3), [0])


# ---- a list a method changes in place (fuzzer seed 9800887) ----


def indexed_by_its_length(x):
    L = []
    s = 0.0
    for j in range(4):
        L.append(j + 1.0)
        s = s + L[len(L) - 1] * x * x
    return s


def last_row_of_a_list(x):
    L = []
    s = 0.0
    for j in range(4):
        L.append(np.ones(2) * (j + 1.0))
        s = s + np.sum(L[-1] * x * x)
    return s


def list_rebuilt_per_iteration(x):
    s = 0.0
    for _ in range(2):
        L = [1.0]
        for _ in range(3):
            L.append(L[-1] * 2.0)
        t = L[-1]
        s = s + t * np.sin(x)
    return s


@pytest.mark.parametrize("fun, want", [
    (indexed_by_its_length, 2 * 0.7 * (1 + 2 + 3 + 4)),
    (last_row_of_a_list, 2 * 2 * 0.7 * (1 + 2 + 3 + 4)),
    (list_rebuilt_per_iteration, 2 * 8 * np.cos(0.7)),
])
def test_a_list_appended_to_is_not_made_again_from_its_display(fun, want, jit):
    # the adjoint made `L = []` (or `len(L)`) again where it read L, as if the appends
    # after it had not happened: an IndexError, or the last iteration's entry everywhere
    assert srcgrad.grad(fun, jit=jit)(0.7) == pytest.approx(want, rel=1e-12)
    assert_grad(fun, (srcgrad.grad(fun, jit=jit)(0.3),), (0.3,), [0])


def read_then_appended(x):
    L = [1.0]
    s = 0.0
    for _ in range(3):
        s = s + np.sum(np.multiply(L, x))
        L.append(2.0)
    return s


def test_a_list_the_gradient_reads_before_an_append_is_refused():
    with pytest.raises(srcgrad.UnsupportedSyntax, match=r"reads 'L', which a later call "
                       r"changes in place \(line \d+\)") as info:
        srcgrad.grad(read_then_appended, jit=False)(0.7)
    line = read_then_appended.__code__.co_firstlineno + 4
    assert f"test_regressions_tape.py:{line}:" in str(info.value)


# ---- a value whose shape changes from one iteration to the next ----


def slice_to_the_index(x):
    s = 0.0
    for j in range(1, 4):
        t = x[:j] * x[0]
        s = s + np.sum(t)
    return s


def ones_of_the_index(x):
    s = 0.0
    for j in (1, 3):
        c = np.ones(j)
        t = c * x[0]
        s = s + np.sum(t * t)
    return s


def arange_of_the_index(x):
    s = 0.0
    for j in range(1, 3):
        t = np.arange(2 * j - 1.0) + x[0]
        s = s + np.sum(np.sin(t))
    return s


def rebound_to_a_longer_slice(x):
    s = 0.0
    c = x[:1]
    for _ in range(3):
        t = c * x[1]
        s = s + np.sum(t ** 2)
        c = x[:3]
    return s


def grown_by_concatenate(x):
    s = 0.0
    c = x[:1]
    for _ in range(3):
        t = np.exp(c) * x[1]
        s = s + np.sum(t)
        c = np.concatenate((c, x[:1] * 0.0))
    return s


def slice_to_a_branch_value(x):
    s = 0.0
    for j in range(3):
        k = 1 if j == 0 else 3
        t = np.tanh(x[:k]) * x[3]
        s = s + np.sum(t * t)
    return s


@pytest.mark.parametrize("fun", [slice_to_the_index, ones_of_the_index, arange_of_the_index,
                                 rebound_to_a_longer_slice, grown_by_concatenate,
                                 slice_to_a_branch_value])
def test_a_value_whose_shape_changes_between_iterations(fun, jit):
    # `sum_grad(dy, t)` read t for its shape only: the adjoint of every iteration took
    # the last one's (ones_of_the_index: 3.6 for 2.4, no error). Compiled, numba may
    # refuse the tape of a value that changes shape: an error, never another number.
    x = np.array([0.3, -0.7, 1.1, 0.5])
    try:
        got = srcgrad.grad(fun, jit=jit)(x)
    except srcgrad.SrcgradError as exc:
        assert jit and "changed shape" in str(exc), str(exc)
        got = srcgrad.grad(fun, jit=False)(x)
    assert_grad(fun, (got,), (x,), [0])
    if fun is ones_of_the_index:   # s = (1 + 3) x0**2
        np.testing.assert_allclose(got, [8 * 0.3, 0.0, 0.0, 0.0], rtol=1e-12)


def shape_by_branch(x):
    s = 0.0
    for j in range(3):
        if j == 0:
            t = x[0] * 2.0
        else:
            t = x * 2.0
        s = s + np.sum(t * x[1])
    return s


def test_a_value_whose_shape_depends_on_the_branch_taken():
    # t is a number at the first iteration, an array after: its product's sum_grad took
    # the array's shape at every iteration (-7.0 for -4.2). (numba cannot type t.)
    x = np.array([0.3, -0.7, 1.1])
    got = srcgrad.grad(shape_by_branch, jit=False)(x)
    # s = 2 x0 x1 + 2 * 2 x1 sum(x)
    want = [2 * x[1] + 4 * x[1], 2 * x[0] + 4 * np.sum(x) + 4 * x[1], 4 * x[1]]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def grows_by_broadcasting(x):
    c = x[0] * 1.0
    s = 0.0
    for _ in range(3):
        t = c * x[1]
        s = s + np.sum(t * t)
        c = c * x
    return s


def test_a_carried_value_that_grows_by_broadcasting_is_refused(jit):
    # c is a number at the first iteration and an array after: t's sum_grad read t at
    # the last shape (silently wrong before); a check after the loop refuses it
    with pytest.raises(srcgrad.SrcgradError, match=r"'c' changes shape in this loop"):
        srcgrad.grad(grows_by_broadcasting, jit=jit)(np.array([0.3, -0.7, 1.1]))


def accumulates_a_vector_into_a_number(x):
    acc = x[0] * 1.0
    for j in range(3):
        acc = acc + x * j
    return np.sum(acc * acc)


def stays_a_number(x):
    acc = x[0] * 1.0
    for j in range(3):
        acc = acc + x[j] * j
    return acc * acc


def sums_into_a_vector_from_zero(x, w):
    s = 0.0
    for i in range(3):
        s = s + x[i] * w
    return np.sum(s * s)


def test_a_carried_value_read_for_its_own_shape_that_grows_is_refused(jit):
    # acc is a number at the first iteration and an array after: the adjoint read it for
    # its shape (`unbroadcast(dacc, acc)`) at the last one (a NumPy ValueError before)
    with pytest.raises(srcgrad.SrcgradError, match=r"'acc' changes shape in this loop"):
        srcgrad.grad(accumulates_a_vector_into_a_number, jit=jit)(np.array([0.5, -1.0, 2.0]))
    # a number all along passes the check: acc = x0 + x1 + 2 x2, gradient 2 acc (1, 1, 2)
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(srcgrad.grad(stays_a_number, jit=jit)(x),
                               2 * 3.5 * np.array([1.0, 1.0, 2.0]), rtol=1e-12)
    # growing from a constant is fine (the adjoint of its start is dropped):
    # s = sum(x) w, so the gradients are 2 sum(x) sum(w^2) and 2 sum(x)^2 w
    w = np.array([1.0, 2.0])
    if jit:   # (numba types no name that is a number, then an array: a clear error)
        with pytest.raises(srcgrad.SrcgradError, match="a number, then an array"):
            srcgrad.grad(sums_into_a_vector_from_zero, wrt=(0, 1), jit=jit)(x, w)
        return
    dx, dw = srcgrad.grad(sums_into_a_vector_from_zero, wrt=(0, 1), jit=jit)(x, w)
    np.testing.assert_allclose(dx, np.full(3, 2 * 1.5 * 5.0), rtol=1e-12)
    np.testing.assert_allclose(dw, 2 * 1.5 ** 2 * w, rtol=1e-12)


def row_sines(x):
    total = 0.0
    for p in range(x.shape[0]):
        top = np.max(x[p])   # read by four statements of the iteration
        total = total + np.sin(top) + top * np.cos(top)
    top = np.max(x)   # (bound twice: top is taped where the adjoint reads it)
    return total - top


def test_a_value_read_by_several_statements_of_an_iteration_is_pushed_once(jit):
    x = np.array([[0.3, -1.2, 2.0], [1.5, 1.1, -0.4]])
    g = srcgrad.grad(row_sines, jit=jit)
    # once in the loop, once after it (five pushes and pops before)
    assert g.source.count("top_tape.append(") == 2, g.source
    assert g.source.count("top_tape.pop()") == 2, g.source
    # by hand: each row's largest entry t gets cos t + cos t - t sin t; x's largest, -1
    want = np.zeros_like(x)
    for p, k in enumerate(np.argmax(x, axis=1)):
        t = x[p, k]
        want[p, k] = 2 * np.cos(t) - t * np.sin(t)
    want[0, 2] -= 1.0
    np.testing.assert_allclose(g(x), want, rtol=1e-12)
    assert_grad(row_sines, [g(x)], (x,), [0])


def row_tops_until(x):
    total = 0.0
    for p in range(x.shape[0]):
        top = np.max(x[p])
        total = total + top * top
        if total > 5.0:
            break   # the iteration may end between two reads of top: both are pushed
        total = total + np.sin(top)
    top = np.max(x)
    return total + top


def row_top_then_bottom(x):
    total = 0.0
    for p in range(x.shape[0]):
        top = np.max(x[p])
        total = total + np.sin(top)
        top = np.min(x[p])   # changed between two reads: each is pushed
        total = total + top * np.cos(top)
    return total


@pytest.mark.parametrize("fun", [row_tops_until, row_top_then_bottom])
def test_reads_a_jump_or_a_change_separates_are_pushed_each(fun, jit):
    x = np.array([[0.3, -1.2, 2.0], [1.5, 1.7, -0.4], [0.9, 2.2, 0.1]])
    g = srcgrad.grad(fun, jit=jit)
    assert g.source.count("top_tape.append(") >= 2, g.source
    assert_grad(fun, [g(x)], (x,), [0])


def lower_from_vector(v, m):
    d = m.shape[0]
    low = np.zeros((d, d))
    e = d   # counted as ADBench's GMM does: `e += 1` changes a number, shared with nothing
    for i in range(d):
        for j in range(i + 1, d):
            low[j, i] = v[e - d]
            e += 1
    return np.sum((low + m) ** 2)


def test_a_counter_bound_to_a_shapes_item_is_a_number(jit):
    v, m = np.array([0.5, -1.0, 2.0]), np.arange(9.0).reshape(3, 3) / 4
    g = srcgrad.grad(lower_from_vector, jit=jit)
    assert "unshared" not in g.source and g.source.count("e_tape.append(") == 1, g.source
    # by hand: v fills low[1, 0], low[2, 0], low[2, 1]; d/dv_k = 2 (v_k + m[j, i])
    want = 2 * (v + np.array([m[1, 0], m[2, 0], m[2, 1]]))
    np.testing.assert_allclose(g(v, m), want, rtol=1e-12)
    assert_grad(lower_from_vector, [g(v, m)], (v, m), [0])
