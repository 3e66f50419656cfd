"""Elementwise fusion (srcgrad/passes/fuse.py) and its kernels (runtime.elementwise):
what becomes a kernel, what must not move, and that a kernel's compiled loop computes what
NumPy computes (NumPy is the reference, never srcgrad)."""

import gc
import os
import re

import numpy as np
import pytest
from fd import assert_grad
from numba import njit

import srcgrad
from srcgrad.runtime import elementwise, jit_kernel, unbroadcast, vecmath


def mlp(W1, b1, W2, X):
    h = np.tanh(X @ W1 + b1)
    return np.sum((h @ W2) ** 2)


def mlp_hand(W1, b1, W2, X):
    h = np.tanh(X @ W1 + b1)
    dout = 2 * (h @ W2)
    da = (dout @ W2.T) * (1 - h ** 2)
    return X.T @ da, da.sum(axis=0), h.T @ dout


def mlp_args(rng, n=5):
    return (rng.standard_normal((3, 4)), rng.standard_normal(4),
            rng.standard_normal((4, 2)), rng.standard_normal((n, 3)))


def test_tanh_adjoint_is_one_kernel(jit, rng):
    g = srcgrad.grad(mlp, wrt=(0, 1, 2), jit=jit)
    source = g.source
    # the bias's gradient is summed in the kernel; so is d_t1, a sum to the value's own
    # shape (the value itself), and d_t2 is not returned: nothing else reads it
    assert "d_t1, db1 = d_t2_fused(dh, h, _t1, b1)" in source, source
    assert ("@elementwise\ndef d_t2_fused(dh, h, _t1, b1):\n    d_t2 = dh * (1.0 - h * h)\n"
            "    return unbroadcast(d_t2, _t1), unbroadcast(d_t2, b1)") in source
    # the forward's sum and tanh: one kernel, tanh last
    assert "h = h_fused(_t1, b1)" in source
    assert "def h_fused(_t1, b1):\n    return np.tanh(_t1 + b1)" in source
    args = mlp_args(rng)
    got = g(*args)
    for want, out in zip(mlp_hand(*args), got, strict=True):
        np.testing.assert_allclose(out, want, rtol=1e-12)
    assert_grad(mlp, got, args, (0, 1, 2))


@pytest.mark.skipif(bool(os.environ.get("SRCGRAD_DISABLE_JIT")), reason="compiles loops")
def test_auto_runs_compiled_loops(rng, monkeypatch):
    # jit="auto" on large arrays: the kernel's compiled loop (float64, broadcast bias), in
    # the Python form the caller runs when it compiles in the foreground
    monkeypatch.setenv("SRCGRAD_BACKGROUND", "0")
    g = srcgrad.grad(mlp, wrt=(0, 1, 2))
    args = mlp_args(rng, n=300)
    for _ in range(3):
        got = g(*args)
    kernel = g.py_func.__globals__["d_t2_fused"]
    assert kernel.loops
    ((ndim, _, sums),) = kernel._compiled  # one loop, which sums the bias's gradient
    assert (ndim, sums) == (2, (("i1",),))
    for want, out in zip(mlp_hand(*args), g.py_func(*args), strict=True):
        np.testing.assert_allclose(out, want, rtol=1e-10)
    for want, out in zip(mlp_hand(*args), got, strict=True):
        np.testing.assert_allclose(out, want, rtol=1e-10)


def named_like_the_loop(W, X):
    out = X @ W
    i0 = out * 2.0 + 1.0
    return np.sum(np.tanh(i0 * out) * out)


@pytest.mark.skipif(bool(os.environ.get("SRCGRAD_DISABLE_JIT")), reason="compiles loops")
def test_kernel_arguments_may_have_the_loops_own_names(rng):
    # the compiled loop's own names (its result, its indices) are not the user's `out`, `i0`
    g = srcgrad.grad(named_like_the_loop)
    args = (rng.standard_normal((30, 40)), rng.standard_normal((50, 30)))
    for _ in range(3):
        got = g(*args)
    kernels = [v for v in g.py_func.__globals__.values() if isinstance(v, elementwise)]
    assert kernels and all(k.loops and None not in k._compiled.values() for k in kernels)
    assert any("out" in k.__wrapped__.__code__.co_varnames for k in kernels)
    assert_grad(named_like_the_loop, [got], args, (0,))


def test_hvp_inlines_kernels_and_fuses_again(jit, rng):
    hv = srcgrad.hvp(mlp, wrt=(0, 1, 2), jit=jit)
    # the gradient's kernel is inlined (only the comment naming its line shows it), and the
    # tangent code has kernels of its own
    code = [line for line in hv.source.splitlines() if not line.strip().startswith("#")]
    assert not any(re.search(r"\bd_t2_fused\b", line) for line in code), hv.source
    assert "@elementwise" in hv.source
    args = mlp_args(rng)
    v = tuple(rng.standard_normal(np.shape(a)) for a in args[:3])
    eps = 1e-5
    plus = mlp_hand(*(a + eps * d for a, d in zip(args[:3], v, strict=True)), args[3])
    minus = mlp_hand(*(a - eps * d for a, d in zip(args[:3], v, strict=True)), args[3])
    for out, p, m in zip(hv(*args, v), plus, minus, strict=True):
        np.testing.assert_allclose(out, (p - m) / (2 * eps), rtol=1e-6, atol=1e-8)


def scalar_chain(x, y):
    a = x * y + 1.0
    return a * a - x


def tanh_times_input(W, X, b):
    a = X @ W + b
    h = np.tanh(a)
    return np.sum(h * h * a)


def test_a_kernel_returns_its_value_too_where_it_is_read_again(jit, rng):
    # da accumulates in the kernel (da = da + ...), is returned, and is summed to the
    # shapes of _t1 and of the bias b
    g = srcgrad.grad(tanh_times_input, wrt=(0, 2), jit=jit)
    assert "da, d_t1, db = da_fused_1(da, dh, h, _t1, b)" in g.source, g.source
    args = (rng.standard_normal((3, 4)), rng.standard_normal((5, 3)), rng.standard_normal(4))
    assert_grad(tanh_times_input, list(g(*args)), args, (0, 2))


def test_scalar_code_is_not_fused(jit):
    g = srcgrad.grad(scalar_chain, wrt=(0, 1), jit=jit)
    assert "elementwise" not in g.source and "_fused" not in g.source, g.source
    # z = (x y + 1)^2 - x at (2, 3): dz/dx = 2 (x y + 1) y - 1 = 41, dz/dy = 2 (x y + 1) x = 28
    assert g(2.0, 3.0) == (41.0, 28.0)


def written_between(W, X):
    a = X @ W
    t = a * 2.0
    a[0, 0] = 5.0
    return np.sum(a * (t + 1.0))


def test_a_temporary_does_not_move_past_a_write_of_what_it_reads(jit, rng):
    g = srcgrad.grad(written_between, jit=jit)
    source = g.source
    assert source.index("t = a * 2.0") < source.index("a[0, 0] = 5.0"), source
    args = (rng.standard_normal((3, 2)), rng.standard_normal((4, 3)))
    assert_grad(written_between, [g(*args)], args, (0,))


def bnn(W, X):
    with srcgrad.gradient_override({np.sign: lambda dy, y, x: np.where(np.abs(x) <= 1.0,
                                                                          dy, 0.0)}):
        Wb = np.sign(W)
    return np.sum((X @ Wb) ** 2)


def test_a_mask_and_where_are_one_kernel(jit, rng):
    # W is known to be an array (sign keeps the shape of a matrix product's operand)
    g = srcgrad.grad(bnn, jit=jit)
    assert "return where(np.abs(W) <= 1.0, dWb, 0.0)" in g.source, g.source
    W, X = rng.uniform(-1.5, 1.5, (4, 3)), rng.standard_normal((5, 4))
    want = np.where(np.abs(W) <= 1.0, 2 * X.T @ (X @ np.sign(W)), 0.0)
    np.testing.assert_allclose(g(W, X), want, rtol=1e-12)


# ---- runtime.elementwise: the compiled loop against NumPy ----
def compiled(fun):
    kernel = elementwise(fun)
    kernel.loops = not os.environ.get("SRCGRAD_DISABLE_JIT")
    return kernel


def poly(a, b, c):
    return a * (1.0 - b * b) + -(2 * c) / b


def masked(w, g):
    return np.where(np.abs(w) <= 1.0, g, 0.0)


def compare(a, b):
    return a * 2.0 < b


def tanh_of_sum(a, b):
    return np.tanh(a - 2.0 * b)


@pytest.mark.parametrize("shapes", [[(40, 30)] * 3, [(40, 30), (30,), (40, 1)],
                                    [(1000,), (1000,), ()], [(), (25, 40), (40,)]])
def test_loop_is_numpy(rng, shapes):
    args = [rng.standard_normal(s) if s else 0.5 for s in shapes]
    np.testing.assert_allclose(compiled(poly)(*args), poly(*args), rtol=1e-15, atol=0)


def exp_of_sum(a, b):
    return np.exp(a - 2.0 * b)


def sin_of_sum(a, b):
    return np.sin(a - 2.0 * b)


def test_a_last_transcendental_is_numpys(rng):
    a, b = rng.standard_normal((40, 30)), rng.standard_normal(30)
    np.testing.assert_array_equal(compiled(sin_of_sum)(a, b), np.sin(a - 2.0 * b))


def tanh_with_sums(a, b, u):
    x = np.tanh(a - 2.0 * b)
    return x, unbroadcast(x, u)


def exp_with_sums(a, b, u):
    x = np.exp(a - 2.0 * b)
    return x, unbroadcast(x, u)


# (the kernel, the ufunc, its loop form and how many ulp of NumPy's that is within:
# tests/test_vecmath.py)
IN_LOOP_CASES = [(tanh_of_sum, tanh_with_sums, np.tanh, vecmath.tanh, 4),
                 (exp_of_sum, exp_with_sums, np.exp, vecmath.exp, 2)]


# even and odd lengths of the innermost loop, which runs its two halves side by side (and
# an odd last entry on its own), in two dimensions and in one
@pytest.mark.parametrize("shape", [(40, 30), (41, 31), (1001,), (1000,)])
@pytest.mark.parametrize(("plain", "with_sums", "ufunc", "form", "ulps"), IN_LOOP_CASES)
def test_a_last_tanh_or_exp_is_computed_in_the_loop(rng, shape, plain, with_sums, ufunc,
                                                    form, ulps):
    a, b = 3 * rng.standard_normal(shape), rng.standard_normal(shape[-1])
    kernel = compiled(plain)
    out, ref = kernel(a, b), ufunc(a - 2.0 * b)
    assert np.all(np.abs(out - ref) <= ulps * np.spacing(np.abs(ref)))
    if kernel.loops:
        ((loop, last),) = kernel._compiled.values()
        assert last is None and loop.py_func.__globals__["__last"] is form
    # summed as it goes: each entry once (the odd one too), as np.sum has it
    summing = compiled(with_sums)
    x, total = summing(a, b, np.zeros(shape[-1] if len(shape) == 2 else 1))
    np.testing.assert_array_equal(x, out)
    want = ref.sum(axis=0) if len(shape) == 2 else np.full(1, ref.sum())
    np.testing.assert_allclose(total, want, rtol=1e-12, atol=1e-12)


@pytest.mark.skipif(bool(os.environ.get("SRCGRAD_DISABLE_JIT")), reason="compiles kernels")
@pytest.mark.parametrize(("plain", "ufunc", "form", "ulps"),
                         [(tanh_of_sum, np.tanh, vecmath.tanh, 4),
                          (exp_of_sum, np.exp, vecmath.exp, 2)])
def test_a_kernels_numba_form_computes_tanh_and_exp_with_vecmath(rng, plain, ufunc, form,
                                                                 ulps):
    # under numba, np.tanh and np.exp are libm's scalar functions: a compiled kernel
    # computes float64 with vecmath's instead, entry by entry as vecmath.tanh(x) has it,
    # within vecmath's bound of NumPy's values
    kernel = njit(jit_kernel(plain))
    a, b = rng.standard_normal((7, 5)), rng.standard_normal(5)
    got, ref = kernel(a, b), ufunc(a - 2.0 * b)
    assert np.all(np.abs(got - ref) <= ulps * np.spacing(np.abs(ref)))
    want = np.array([form(v) for v in (a - 2.0 * b).ravel()]).reshape(a.shape)
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.float64 and np.any(got != ufunc(a - 2.0 * b))  # not libm's
    np.testing.assert_array_equal(kernel(1.5, 0.25), form(1.0))  # a number, as a number
    # other dtypes are NumPy's ufunc, as they were: float32 stays float32
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    got32 = njit(jit_kernel(DIFFERENCES[ufunc]))(a32, b32)
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, ufunc(a32 - b32), rtol=1e-6)
    assert jit_kernel(poly) is poly  # nothing to swap: the kernel itself


def tanh_of_difference(a, b):
    return np.tanh(a - b)


def exp_of_difference(a, b):
    return np.exp(a - b)


DIFFERENCES = {np.tanh: tanh_of_difference, np.exp: exp_of_difference}


def test_loop_where_is_np_where(rng):
    w = rng.uniform(-2, 2, (50, 20))
    g = rng.standard_normal((50, 20))
    w[0, :4] = [np.nan, np.inf, -1.0, 1.0]
    g[1, :3] = [np.inf, np.nan, -0.0]
    w[1, :3] = 0.0
    out = compiled(masked)(w, g)
    want = np.where(np.abs(w) <= 1.0, g, 0.0)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(np.signbit(out), np.signbit(want))


def with_sums(a, b, u, v):
    x = a * b + 1.0
    return x, unbroadcast(x, u), unbroadcast(x, v)


def sums_only(a, b, u):
    x = a * (b - 2.0)
    return unbroadcast(x, u)


# (shape of u, shape of v): leading rows, a row, a column, the value's own shape
@pytest.mark.parametrize(("u_shape", "v_shape"), [((30,), (1, 30)), ((40, 1), (40, 30))])
def test_a_loop_that_sums_is_numpys_sum(rng, u_shape, v_shape):
    a, b = rng.standard_normal((40, 30)), rng.standard_normal(30)
    kernel = compiled(with_sums)
    x, su, sv = kernel(a, b, np.zeros(u_shape), np.zeros(v_shape))
    want = a * b + 1.0
    np.testing.assert_array_equal(x, want)
    sums = {(30,): want.sum(axis=0), (1, 30): want.sum(axis=0, keepdims=True),
            (40, 1): want.sum(axis=1, keepdims=True), (40, 30): want}
    for got, shape in ((su, u_shape), (sv, v_shape)):
        assert got.shape == shape
        np.testing.assert_allclose(got, sums[shape], rtol=1e-13)
    if v_shape == (40, 30):
        assert sv is x  # a sum to the value's own shape is the value, as unbroadcast gives
    if kernel.loops:
        assert len(kernel._compiled) == 1 and None not in kernel._compiled.values()


@pytest.mark.parametrize("like", [2.0, np.zeros(()), np.zeros(7)])
def test_sums_the_loop_does_not_serve_are_numpys(rng, like):
    # a scalar or 0-d shape: np.sum's; a shape the value does not broadcast from: its error
    a, b = rng.standard_normal((40, 30)), rng.standard_normal(30)
    kernel = compiled(sums_only)
    if np.shape(like) == (7,):
        with pytest.raises(ValueError, match="cannot unbroadcast"):
            kernel(a, b, like)
    else:
        np.testing.assert_allclose(kernel(a, b, like), np.sum(a * (b - 2.0)), rtol=1e-13)
    assert not kernel._compiled


def test_a_loop_that_sums_accumulates_from_zero_each_call(rng):
    a, b, u = rng.standard_normal((40, 30)), rng.standard_normal(30), np.zeros(30)
    kernel = compiled(sums_only)
    first = kernel(a, b, u)
    second = kernel(a, b, u)
    np.testing.assert_allclose(second, (a * (b - 2.0)).sum(axis=0), rtol=1e-13)
    assert second is not first
    np.testing.assert_array_equal(first, second)


def test_loop_divides_by_zero_as_numpy_does():
    b = np.zeros((30, 30))
    with np.errstate(divide="ignore", invalid="ignore"):
        want = poly(np.ones((30, 30)), b, np.ones((30, 30)))
    np.testing.assert_array_equal(compiled(poly)(np.ones((30, 30)), b, np.ones((30, 30))),
                                  want)


@pytest.mark.parametrize("case", ["float32", "small", "3-d", "int"])
def test_other_arguments_run_as_numpy(rng, case):
    a, b, c = (rng.standard_normal((30, 30)) for _ in range(3))
    if case == "float32":
        a, b, c = (x.astype(np.float32) for x in (a, b, c))
    elif case == "small":
        a, b, c = a[:2, :2], b[:2, :2], c[:2, :2]
    elif case == "3-d":
        a, b, c = (x.reshape(2, 15, 30) for x in (a, b, c))
    else:
        a, b, c = (np.arange(900).reshape(30, 30) + 1 for _ in range(3))
    kernel = compiled(poly)
    out = kernel(a, b, c)
    want = poly(a, b, c)
    assert out.dtype == want.dtype
    np.testing.assert_array_equal(out, want)
    assert not kernel._compiled  # no loop was made for these arguments


def test_a_number_numba_cannot_type_runs_as_numpy(rng):
    a, b, c = (rng.standard_normal((30, 30)) for _ in range(3))
    huge = 2 ** 70  # no int64
    kernel = compiled(poly)
    np.testing.assert_array_equal(kernel(a, b, huge), poly(a, b, huge))
    np.testing.assert_array_equal(kernel(a, b, c), poly(a, b, c))


def test_a_boolean_result_runs_as_numpy(rng):
    a, b = rng.standard_normal((40, 40)), rng.standard_normal((40, 40))
    kernel = compiled(compare)
    out = kernel(a, b)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, compare(a, b))
    assert all(loop is None for loop in kernel._compiled.values())


@pytest.mark.skipif(bool(os.environ.get("SRCGRAD_DISABLE_JIT")), reason="compiles loops")
def test_a_result_buffer_is_reused_only_when_nothing_holds_it(rng):
    kernel = compiled(poly)
    x = [rng.standard_normal((40, 30)) for _ in range(3)]
    y = [rng.standard_normal((40, 30)) for _ in range(3)]
    first = kernel(*x)
    view = kernel(*y)[1:]  # only a view of the second result is held
    third = kernel(*x)
    np.testing.assert_array_equal(first, poly(*x))
    np.testing.assert_array_equal(view, poly(*y)[1:])
    assert not np.shares_memory(third, first) and not np.shares_memory(third, view)
    address = first.ctypes.data
    del first
    gc.collect()
    again = kernel(*y)  # the first result's memory, now free, is used again
    assert again.ctypes.data == address
    np.testing.assert_array_equal(again, poly(*y))
    np.testing.assert_array_equal(third, poly(*x))


def rows_of(W, X):
    total = 0.0
    for t in range(X.shape[0]):
        z = X[t] * W + 1.0
        total = total + np.sum(np.exp(-(z * z)))
    return total


def test_a_loop_over_the_rows_of_an_array_is_fused(jit, rng):
    # no matrix product: X is an array because its shape is read (X is bound once), and
    # X[t] one too; the chains on its rows become kernels in the loop and in its adjoint
    g = srcgrad.grad(rows_of, jit=jit)
    assert "_t7 = _t7_fused(z)" in g.source and "d_t5 = d_t5_fused(d_t7, _t7)" in g.source, \
        g.source
    W, X = rng.standard_normal(4), rng.standard_normal((6, 4))
    z = X * W + 1.0
    by_hand = np.sum(-2.0 * z * np.exp(-z * z) * X, axis=0)  # d/dW sum exp(-z^2)
    np.testing.assert_allclose(g(W, X), by_hand, rtol=1e-12)
    assert_grad(rows_of, [g(W, X)], (W, X), (0,))

