"""Outer products a loop's adjoint adds up, kept for one product after the loop
(srcgrad/passes/batch.py, runtime.tapes' keep_product): which adds are kept, which must
not be, and the gradients against central differences."""

import gast
import numpy as np
from fd import assert_grad

import srcgrad
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
