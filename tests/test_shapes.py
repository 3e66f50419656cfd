"""Shape facts (srcgrad/analysis/shapes.py) in optimize (`shaped`), and a gradient's value-only
forward work (`unvalued`): what goes from the generated code, what must stay (broadcasting,
complex values, names set again), and gradients against central differences and by hand."""

import re
import textwrap

import gast
import numpy as np
from fd import assert_grad

import srcgrad
from benchmarks.workloads import gmm_small, rosen_loop, softmax_xent
from srcgrad import runtime
from srcgrad.passes.base import Namespace
from srcgrad.passes.optimize import shaped


def unbroadcasts(source: str) -> list[tuple[str, str]]:
    """The (g, like) of each `unbroadcast(g, like)` of `source`."""
    return re.findall(r"unbroadcast\((.+?), (\w+)\)$", source, re.M)


def rewritten(source: str) -> str:
    """`source`'s function after `shaped`, as source."""
    fn = gast.parse(textwrap.dedent(source)).body[0]
    ns = Namespace()
    for name in ("unbroadcast", "sum_grad", "seed"):
        ns.bind(name, getattr(runtime, name))
    ns.bind("np", np)
    return gast.unparse(shaped(fn, ns))


# ---- the workloads: what goes ----

def test_softmax_xent_reads_no_forward_value_for_its_shape_alone(jit, rng):
    g = srcgrad.grad(softmax_xent.primal, jit=jit)
    pairs = unbroadcasts(g.source)
    # left: the cotangent of Y * (lse - logits) to logits (Y may broadcast), and of lse
    # and of m (their shape, m's, is the row reduction's: they are summed over a row)
    assert {like for _, like in pairs} == {"logits", "m"} and len(pairs) == 3, g.source
    assert not re.search(r"^\s*lse = ", g.source, re.M), g.source   # lse is not made
    W, X, Y = softmax_xent.inputs(rng)
    X, Y = X[:40], Y[:40]
    got = g(W, X, Y)
    assert_grad(softmax_xent.primal, [got], (W, X, Y), [0])
    np.testing.assert_allclose(got, softmax_xent.hand_numpy(W, X, Y)[0], rtol=1e-10)


def test_gmm_recomputes_no_square_for_its_shape(rng):
    # (as Python only: compiling it takes a minute here; the code is the same)
    g = srcgrad.grad(gmm_small.primal, wrt=gmm_small.WRT, jit=False)
    # mahal * mahal is made once (the forward's); the adjoint's sum_grad reads mahal
    assert len(re.findall(r"^\s*\w+ = mahal \* mahal$", g.source, re.M)) == 1, g.source
    assert re.search(r"sum_grad\(\w+, mahal, 1\)", g.source), g.source
    alphas, means, icf, x = gmm_small.inputs(rng)
    args = (alphas, means, icf, x[:30])
    got = g(*args)
    assert_grad(gmm_small.primal, got, args, [0, 1, 2], rtol=1e-6)
    for mine, hand in zip(got, gmm_small.hand_numpy(*args), strict=True):
        np.testing.assert_allclose(mine, hand, rtol=1e-9, atol=1e-12)


def _forward(source: str) -> list[gast.stmt]:
    fn = gast.parse(source).body[0]
    check = next(k for k, s in enumerate(fn.body) if "seed(" in gast.unparse(s))
    return fn.body[:check]


def test_rosen_loop_runs_its_value_loop_only_as_python(jit, rng):
    # grad does not return the value: the loop that only makes it is under checking(),
    # which numba types (so the check that it is a number stays) and does not run
    g = srcgrad.grad(rosen_loop.primal, jit=jit)
    forward = _forward(g.source)
    assert not any(isinstance(s, gast.For) for s in forward), g.source
    [guarded] = [s for s in forward if isinstance(s, gast.If) and
                 any(isinstance(t, gast.For) for t in s.body)]
    assert gast.unparse(guarded.test).strip() == "checking()"
    x = rng.standard_normal(7)
    got = g(x)
    assert_grad(rosen_loop.primal, [got], (x,), [0])
    np.testing.assert_allclose(got, rosen_loop.hand_numba(x)[0], rtol=1e-12)


def test_the_value_keeps_its_forward_work(jit, rng):
    f = srcgrad.value_and_grad(rosen_loop.primal, jit=jit)
    assert "checking()" not in f.source
    x = rng.standard_normal(5)
    value, grad = f(x)
    assert value == rosen_loop.primal(x)
    np.testing.assert_allclose(grad, rosen_loop.hand_numba(x)[0], rtol=1e-12)


# ---- what stays ----

def bias(x, b):
    return np.sum(np.tanh(x + b) * x)


def keepdims(x):
    m = np.max(x, axis=1, keepdims=True)
    return np.sum(np.exp(x - m) * x)


def complex_scale(x, c):
    return np.sum(np.abs(x * c) ** 2)


def test_a_broadcast_operand_keeps_its_unbroadcast(jit, rng):
    g = srcgrad.grad(bias, wrt=(0, 1), jit=jit)
    assert ("d_t1", "b") in unbroadcasts(g.source) or \
        any(like == "b" for _, like in unbroadcasts(g.source)), g.source
    x, b = rng.standard_normal((3, 4)), rng.standard_normal(4)
    assert_grad(bias, g(x, b), (x, b), [0, 1])


def test_a_row_reduction_keeps_its_unbroadcast(jit, rng):
    g = srcgrad.grad(keepdims, jit=jit)
    assert any(like == "m" for _, like in unbroadcasts(g.source)), g.source
    x = rng.standard_normal((3, 4))
    assert_grad(keepdims, [g(x)], (x,), [0])


def test_a_real_operand_of_a_complex_product_keeps_its_unbroadcast(jit, rng):
    # x * c has x's shape, but its cotangent is complex: x's is its real part
    g = srcgrad.grad(complex_scale, jit=jit)
    assert any(like == "x" for _, like in unbroadcasts(g.source)), g.source
    x = rng.standard_normal(4)
    c = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    got = g(x, c)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, 2 * x * np.abs(c) ** 2, rtol=1e-12)   # by hand
    assert_grad(complex_scale, [got], (x, c), [0])


def test_a_name_set_again_is_not_a_like():
    # a's second value has another shape: t keeps its own
    new = rewritten('''
        def f(x, w, y, g):
            a = x @ w
            t = a * 2.0
            a = y @ w
            dt = unbroadcast(g * 2.0, t)
            return dt, a
    ''')
    assert "unbroadcast(g * 2.0, t)" in new, new


def test_a_like_set_in_a_loop_is_not_replaced_by_one_from_before():
    new = rewritten('''
        def f(x, w, g, n):
            a = x @ w
            for i in range(n):
                a = x @ w
                t = a * 2.0
                dt = unbroadcast(g * 2.0, t)
            return dt
    ''')
    assert "unbroadcast(g * 2.0, a)" in new, new   # the a of the same trip
    new = rewritten('''
        def f(x, w, g, n):
            a = x @ w
            t = a * 2.0
            for i in range(n):
                dt = unbroadcast(g * 2.0, t)
                a = x @ w
            return dt
    ''')
    assert "unbroadcast(g * 2.0, t)" in new, new


def test_lists_are_not_broadcast():
    # l + l joins two lists: its shape is not l's
    new = rewritten('''
        def f(l, g):
            a = l + l
            s = seed(1.0)
            da = unbroadcast(s * np.exp(g), a)
            return da
    ''')
    assert "unbroadcast(" in new, new


def test_a_cotangent_of_a_float_is_dropped_only_where_the_shapes_agree():
    new = rewritten('''
        def f(x, w, y):
            a = x @ w
            m = np.sum(a, axis=0, keepdims=True)
            t = a - m
            u = np.exp(t)
            s = seed(np.sum(u))
            du = s * u
            dt = unbroadcast(du * 1.0, t)
            da = unbroadcast(dt, a)
            dm = unbroadcast(-dt, m)
            dy = unbroadcast(du, y)
            return da, dm, dy
    ''')
    assert "dt = du * 1.0" in new and "da = dt" in new, new
    assert "unbroadcast(-dt, m)" in new and "unbroadcast(du, y)" in new, new


def test_a_cotangent_that_may_be_an_int_keeps_its_unbroadcast():
    # (a vjp's cotangent may be an int array): unbroadcast makes it a float
    new = rewritten('''
        def f(x, w):
            a = x @ w
            t = a * 2.0
            da = unbroadcast(a * 2, t)
            return da
    ''')
    assert "unbroadcast(a * 2, a)" in new, new


def test_an_array_made_by_numpy_and_stored_into_keeps_its_shape():
    # L's shape cannot change by item writes: v = 3 * (L * x) has t's shape
    new = rewritten('''
        def f(x, g, n):
            L = np.zeros((n, n))
            L[0, 0] = 2.0
            t = L * x
            v = 3.0 * (L * x)
            dv = unbroadcast(g * 2.0, v)
            return t, dv
    ''')
    assert "unbroadcast(g * 2.0, t)" in new, new
    # a parameter may be a dict, whose items a write adds: no fact mentions it
    new = rewritten('''
        def f(x, L, g):
            L[0] = 2.0
            t = L * x
            v = 3.0 * (L * x)
            dv = unbroadcast(g * 2.0, v)
            return t, dv
    ''')
    assert "unbroadcast(g * 2.0, v)" in new, new


def _lower_quadratic(w, xs):
    """sum_p |L x_p|^2, L the lower triangle of w filled into an array of zeros."""
    n, d = xs.shape
    L = np.zeros((d, d))
    for i in range(d):
        L[i, :i + 1] = w[i, :i + 1]
    total = 0.0
    for p in range(n):
        t = np.sum(L * xs[p][None, :], axis=1)
        total = total + np.sum(t * t)
    return total


def test_a_loop_adjoint_makes_no_product_again_for_its_shape(jit, rng):
    # the adjoint of the sum over L * x_p needs that product's shape only: a stand-in of
    # L's and x_p's shapes, so the reverse loop multiplies nothing of the product again
    g = srcgrad.grad(_lower_quadratic, wrt=(0, 1), jit=jit)
    assert len(re.findall(r"^\s*\w+ = L \* \w+$", g.source, re.M)) == 1, g.source
    assert "like_broadcast(" in g.source, g.source
    w, xs = rng.standard_normal((4, 4)), rng.standard_normal((6, 4))
    dw, dxs = g(w, xs)
    assert_grad(_lower_quadratic, [dw, dxs], (w, xs), [0, 1])
    L = np.tril(w)
    # by hand: d/dL = 2 sum_p (L x_p) x_p^T on the lower triangle; d/dx_p = 2 L^T L x_p
    np.testing.assert_allclose(dw, np.tril(2.0 * (xs @ L.T).T @ xs), rtol=1e-12)
    np.testing.assert_allclose(dxs, 2.0 * xs @ L.T @ L, rtol=1e-12)
