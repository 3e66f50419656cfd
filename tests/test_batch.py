"""Outer products a loop's adjoint adds up, kept for one product after the loop
(srcgrad/passes/batch.py, runtime.tapes' keep_product): which adds are kept, which must
not be, and the gradients against central differences."""

import gast
import numpy as np
from fd import assert_grad

import srcgrad
from benchmarks.workloads.rosen_loop import primal as rosen
from srcgrad.codegen import to_source
from srcgrad.passes.base import Namespace
from srcgrad.passes.batch import batch
from srcgrad.runtime import add_matmul_lhs_grad


def rnn(W, U, V, b, xs, ms):
    h = np.zeros(W.shape[0])
    s = 0.0
    for t in range(xs.shape[0]):
        # W @ vector and vector @ U: outer products; V @ matrix: not one
        h = np.tanh(W @ xs[t] + h @ U + b)
        s = s + np.sum(V @ ms[t])
    return np.sum(h ** 2) + s


def rnn_args(rng, steps):
    return (rng.standard_normal((3, 2)), 0.5 * rng.standard_normal((3, 3)),
            rng.standard_normal((2, 2)), rng.standard_normal(3),
            rng.standard_normal((steps, 2)), rng.standard_normal((steps, 2, 3)))


def test_outer_products_are_one_product_after_the_loop(jit, rng):
    g = srcgrad.grad(rnn, wrt=(0, 1, 2, 3), jit=jit)
    source = g.source
    for out, lhs in (("dW", True), ("dU", False), ("dV", True)):
        assert f"keep_product({out}, {out}_rows, t, " in source, source
        assert f"add_kept({out}, {out}_rows)" in source
        assert f", _t4, {lhs})" in source
    assert "if _t4 > 0:" in source
    args = rnn_args(rng, 4)
    assert_grad(rnn, g(*args), args, (0, 1, 2, 3))
    # no iteration: no rows were made, and none are added
    empty = rnn_args(rng, 0)
    for got, arg in zip(g(*empty), empty, strict=False):
        np.testing.assert_array_equal(got, np.zeros_like(arg))


def read_in_loop(W, xs):
    h = np.zeros(W.shape[0])
    s = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ xs[t] + h)
        s = s + np.sum(W * h[0])
    return np.sum(h ** 2) + s


def test_not_kept_where_the_loop_reads_the_sum(rng):
    # the loop's adjoint adds into dW in another statement too (`dW += ...`): the
    # products stay where they are
    g = srcgrad.grad(read_in_loop, jit=False)
    assert "add_matmul_lhs_grad(dW, d_t6, W, _t5)" in g.source, g.source
    assert "keep_product" not in g.source
    args = (rng.standard_normal((3, 2)), rng.standard_normal((4, 2)))
    assert_grad(read_in_loop, [g(*args)], args, (0,))


def _batched(body: str) -> str:
    ns = Namespace()
    ns.bind("range", range)
    ns.bind("add_matmul_lhs_grad", add_matmul_lhs_grad)
    fn = gast.parse(f"def f(W, xs, d, n):\n{body}").body[0]
    return to_source(batch(fn, ns))


def test_not_kept_where_the_array_is_read_under_any_name():
    loop = ("    for t in range(n):\n        x = xs[t]\n{read}"
            "        add_matmul_lhs_grad(dW, d, W, x)\n")
    plain = "    dW = 0 * W\n" + loop.format(read="") + "    return dW\n"
    assert "keep_product" in _batched(plain)
    for before, read in (("", "        s = dW[0, 0]\n"),
                         ("    dZ = dW\n", "        s = dZ[0, 0]\n"),
                         ("    dZ = (1, dW)\n", "        s = dZ[1]\n"),
                         ("    dZ = []\n    dZ.append(dW)\n", "        s = dZ[0]\n")):
        code = "    dW = 0 * W\n" + before + loop.format(read=read) + "    return dW\n"
        assert "keep_product" not in _batched(code), code


def test_not_kept_in_a_branch_or_a_loop_left_early():
    for body in ("        if t:\n            add_matmul_lhs_grad(dW, d, W, W)\n",
                 "        add_matmul_lhs_grad(dW, d, W, W)\n        if t:\n            break\n",
                 "        add_matmul_lhs_grad(dW, d, W, W)\n        n = n - 1\n"):
        code = "    dW = 0 * W\n    for t in range(n):\n" + body + "    return dW\n"
        assert "keep_product" not in _batched(code), code


def test_adds_into_x_i_and_x_i_plus_1_write_once_per_iteration(jit, rng):
    g = srcgrad.grad(rosen, jit=jit)
    assert "dx[_t4] += d_t5 + dx_carry" in g.source and "dx[0] += dx_carry" in g.source
    assert "dx[i] +=" not in g.source, g.source
    for n in (5, 2):
        x = rng.standard_normal(n)
        assert_grad(rosen, [g(x)], (x,), (0,))
    np.testing.assert_array_equal(g(np.ones(1)), np.zeros(1))   # no iteration


def rows(x):
    s = 0.0
    for i in range(x.shape[0] - 1):
        s = s + np.sum(x[i + 1] * np.sin(x[i]))
    return s


def test_rows_carried_to_the_next_iteration(rng):
    g = srcgrad.grad(rows, jit=False)
    assert "dx_carry" in g.source, g.source
    x = rng.standard_normal((4, 3))
    assert_grad(rows, [g(x)], (x,), (0,))


def _carried(body: str, params: str = "x, d, e, n") -> str:
    ns = Namespace()
    ns.bind("range", range)
    ns.bind("zeros_like", srcgrad.runtime.zeros_like)
    fn = gast.parse(f"def f({params}):\n    dx = zeros_like(x)\n{body}    return dx\n").body[0]
    return to_source(batch(fn, ns))


def test_not_carried_where_unsound():
    adds = "        a = -d[i]\n        dx[i] += a\n        j = i + 1\n        dx[j] += e\n"
    assert "dx_carry" in _carried("    for i in range(n - 1, -1, -1):\n" + adds)
    for loop, body in (
            ("range(n)", adds),                                     # forward: i + 1 comes next
            ("range(n - 1, -1, -2)", adds),                         # not every element
            ("range(n - 1, -1, -1)", adds + "        s = dx[i]\n"),  # the array read
            ("range(n - 1, -1, -1)", adds.replace("j = i + 1", "j = d[i]")),  # any index
            ("range(n - 1, -1, -1)", adds.replace("j = i + 1", "j = i + 2")),
            ("range(n - 1, -1, -1)", adds + "        j = i\n"),    # j bound twice
            ("range(n - 1, -1, -1)", adds.replace("a = -d[i]", "a = d")),   # not a new value
            ("range(n - 1, -1, -1)", adds + "        d[0] = a\n")):  # the value read again
        code = f"    for i in {loop}:\n" + body
        assert "dx_carry" not in _carried(code), code
    # an array passed in, which another argument may be
    code = "    for i in range(n - 1, -1, -1):\n" + adds.replace("dx[", "x[")
    assert "_carry" not in _carried(code)
