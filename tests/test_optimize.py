"""The dead-code pass (srcgrad/passes/optimize.py): what goes, what must stay, and that the
pruned function computes what the original does."""

import textwrap

import gast
import numba
import numpy as np
import pytest
from fd import assert_grad
from functions import softmax_xent

import srcgrad
from benchmarks.workloads.rosen_loop import primal as rosenbrock
from srcgrad import builder as b
from srcgrad import runtime
from srcgrad.codegen import to_source
from srcgrad.errors import NonScalarOutput
from srcgrad.passes.base import Namespace
from srcgrad.passes.optimize import dead_code


def pruned(source: str) -> tuple[str, dict]:
    """The function in `source` without its dead code, as source, and the globals both
    forms run with."""
    fn = gast.parse(textwrap.dedent(source)).body[0]
    ns = Namespace()
    for name, obj in [("np", np), ("zeros_like", runtime.zeros_like), ("print", print),
                      ("range", range), ("len", len)]:
        ns.bind(name, obj)
    return to_source(b.make(gast.Module, body=[dead_code(fn, ns)])), ns.globals()


def same_results(source: str, *calls: tuple) -> str:
    """The pruned source, after checking it returns what the original returns."""
    new, env = pruned(source)
    old_ns, new_ns = dict(env), dict(env)
    exec(textwrap.dedent(source), old_ns)
    exec(new, new_ns)
    name = next(k for k in new_ns if k not in env and k != "__builtins__")
    for args in calls:
        np.testing.assert_equal(new_ns[name](*args), old_ns[name](*args))
    return new


def statement(source: str, start: str) -> bool:
    """Whether a line of `source` starts with `start`."""
    return any(line.strip().startswith(start) for line in source.splitlines())


def test_unread_values_go_with_their_comments():
    new = same_results('''
        def f(x):
            "doc"
            "__srcgrad_comment__:line 1: a = x * 2"
            a = x * 2
            unused = np.sin(a)
            "__srcgrad_comment__:line 2: dead = np.cos(x)"
            dead = np.cos(x)
            "__srcgrad_comment__:line 3: return a"
            return a
    ''', (1.5,), (np.arange(3.0),))
    assert "unused" not in new and "dead" not in new and "np.cos" not in new
    assert "# line 1: a = x * 2" in new and "line 2" not in new and "# line 3" in new
    assert '"""doc"""' in new


def test_a_value_read_on_the_next_trip_of_a_loop_stays():
    new = same_results('''
        def f(x, n):
            prev = 0.0
            s = 0.0
            for i in range(n):
                s = s + prev
                prev = x * i
                waste = prev * 3.0
            return s
    ''', (2.0, 0), (2.0, 4))
    assert "prev = x * i" in new and "waste" not in new


def test_while_break_continue_and_branches():
    new = same_results('''
        def f(x):
            k = 0
            y = x
            last = 0.0
            while k < 10:
                k = k + 1
                if k == 3:
                    continue
                z = y * 2.0
                t = np.exp(z)
                if z > 50.0:
                    last = z
                    break
                y = z
            return last + y
    ''', (1.0,), (0.25,))
    assert "np.exp" not in new and not statement(new, "t =")
    assert "last = z" in new and "break" in new and "continue" in new


def test_effects_stay():
    new, _ = pruned('''
        def f(x, tape):
            a = tape.pop()
            b = np.random.normal()
            c = zeros_like(x)
            c[0] = 1.0
            d = np.zeros(3)
            np.add(x, x, out=d)
            e = print(x)
            g = np.add(x, x, out=np.zeros(3))
            return x
    ''')
    for line in ["a = tape.pop()", "b = np.random.normal()", "c[0] = 1.0",
                 "np.add(x, x, out=d)", "e = print(x)", "g = np.add(x, x, out="]:
        assert line in new, (line, new)
    # c and d are read by statements that stay; nothing else is dead here
    assert "c = zeros_like(x)" in new and "d = np.zeros(3)" in new


def test_an_emptied_block_keeps_a_pass():
    new = same_results('''
        def f(x):
            if x > 0.0:
                a = x * 2.0
            else:
                print(x)
            return x
    ''', (1.0,), (-1.0,))
    assert not statement(new, "a =") and "pass" in new and "print(x)" in new


def test_emptied_branches_and_loops_go():
    new = same_results('''
        def f(x, n):
            if x > 0.0:
                a = x * 2.0
            else:
                a = x * 3.0
            for i in range(3):
                w = i * x
            for j in range(n):
                v = j * x
            return x * j
    ''', (1.0, 2), (-1.0, 3))
    assert not statement(new, "if") and not statement(new, "for i")
    assert statement(new, "for j in range(n):")   # j is read after it


def mlp(W1, b1, W2, X):
    h = np.tanh(X @ W1 + b1)
    return np.sum((h @ W2) ** 2)


def test_hvp_computes_no_gradient(jit, rng):
    # hvp needs the tangent of the gradient, not the gradient: the products that compute
    # dW1, db1, dW2 are gone from its code (tdW1, their tangent, stays), and the product
    # matches differences of the gradient
    hvp = srcgrad.hvp(mlp, wrt=(0, 1, 2), jit=jit)
    source = hvp.source
    for grad_only in ["dW1 =", "db1 =", "dW2 ="]:
        assert not statement(source, grad_only), source
    assert statement(source, "tdW1 ="), source
    W1, b1, W2, X = (rng.standard_normal(s) for s in [(3, 4), 4, (4, 2), (5, 3)])
    v = tuple(rng.standard_normal(np.shape(a)) for a in (W1, b1, W2))
    got = hvp(W1, b1, W2, X, v)
    g = srcgrad.grad(mlp, wrt=(0, 1, 2), jit=False)
    h = 1e-5
    plus = g(*(a + h * d for a, d in zip((W1, b1, W2), v, strict=True)), X)
    minus = g(*(a - h * d for a, d in zip((W1, b1, W2), v, strict=True)), X)
    for out, p, m in zip(got, plus, minus, strict=True):
        np.testing.assert_allclose(out, (p - m) / (2 * h), rtol=1e-6, atol=1e-8)


def dead_determinant(x, n):
    for _ in range(n):
        t = np.linalg.det(np.outer(x, x))   # noqa: F841 (singular; dead, so no tangent)
    return np.sum(x * x)


def test_a_dead_linalg_value_and_its_tangent_go(jit):
    # fuzzer seed 3100288: jvp kept the dead tangent of a determinant, through inv
    f = srcgrad.jvp(dead_determinant, jit=jit)
    assert "np.linalg" not in f.source
    x = np.array([1.0, 2.0])
    value, slope = f(x, 2, np.array([1.0, -1.0]))
    assert value == 5.0 and slope == 2 * (1.0 - 2.0)   # by hand: 2 x . v


def test_a_number_result_frees_the_adjoint_of_the_forward_values(jit, rng):
    # the result is checked to be a number, so every term that reached it was one: the
    # adjoint moves its cotangents unchanged and reads no value of the forward loop
    g = srcgrad.grad(rosenbrock, jit=jit)
    adjoint = g.source.split("seed(s)")[1]
    assert "unbroadcast(ds" not in adjoint and "unbroadcast(d_t11" not in adjoint, g.source
    assert statement(adjoint, "d_t11 = ds") and statement(adjoint, "ds = d_t11")
    x = rng.standard_normal(6)
    assert_grad(rosenbrock, [g(x)], (x,), [0])
    value, grad = srcgrad.value_and_grad(rosenbrock, jit=jit)(x)
    assert value == rosenbrock(x)
    np.testing.assert_array_equal(grad, g(x))


def test_a_result_that_is_not_a_number_is_still_refused(jit):
    # rows of a matrix: the sum is an array, refused (at compile time under numba)
    with pytest.raises(NonScalarOutput):
        srcgrad.grad(rosenbrock, jit=jit)(np.ones((4, 2)))


def row_norms(x):
    s = 0.0
    for i in range(x.shape[0]):
        r = x[i] * x[i]
        s = s + np.sum(r) * 0.5
    return s


def test_a_value_not_shown_a_number_keeps_its_unbroadcast(rng):
    # r is a row: only its sum reached the result, which says nothing of r's shape
    g = srcgrad.grad(row_norms, jit=False)
    assert "unbroadcast(" in g.source.split("seed(s)")[1]
    x = rng.standard_normal((3, 2))
    assert_grad(row_norms, [g(x)], (x,), [0])


def polynomial(x, c):
    s = 0.0
    for k in range(4):
        s = s + c[k] * x ** k
    return s


@pytest.mark.parametrize("jit, x", [pytest.param(True, 0.0, id="numba-zero"),
                                    pytest.param(False, 0.0, id="python-zero"),
                                    pytest.param(False, 0.7, id="python")])
def test_powers_of_numbers_fold_in_the_unrolled_adjoint(jit, x):
    # unrolled, x ** k has k = 0, 1: the adjoint's x ** 0 (of x ** 1) and 0 * x ** -1 (of
    # x ** 0, infinite at 0) go, and the terms are numbers: no unbroadcast either
    g = srcgrad.grad(polynomial, wrt=(0, 1), unroll=True, jit=jit)
    adjoint = g.source.split("seed(")[1]
    for gone in ["** 0", "** -1", "unbroadcast("]:
        assert gone not in adjoint, g.source
    c = np.array([1.0, -2.0, 0.5, 3.0])
    assert_grad(polynomial, g(x, c), (x, c), [0, 1])


def test_a_name_assigned_to_itself_goes():
    new = same_results('''
        def f(x, n):
            a = x * 2
            for i in range(n):
                a = a
                a = a + 1
            b = a
            b = b
            return b
    ''', (1.5, 2), (np.arange(3.0), 0))
    assert "a = a + 1" in new
    assert not any(line.strip() in ("a = a", "b = b") for line in new.splitlines()), new


def test_a_value_read_for_its_shape_only_is_not_computed(jit, rng):
    # the adjoint reads Y * (lse - logits) and its row sums for their shapes only
    # (sum_grad, mean_grad), and no earlier value has them: stand-ins with no data take
    # their place, and the forward work that made them (and lse) goes
    g = srcgrad.grad(softmax_xent, jit=jit)
    forward = code(g.source.split("# adjoint")[0])
    assert "axis=1)" not in forward and "np.log" not in forward, g.source
    assert "sum_grad(d_t7, like_broadcast(Y, logits), 1)" in g.source, g.source
    W, X = rng.standard_normal((4, 3)), rng.standard_normal((5, 4))
    Y = np.eye(3)[[0, 2, 1, 1, 0]]
    got = g(W, X, Y)
    e = np.exp(X @ W)
    softmax = e / np.sum(e, axis=1, keepdims=True)
    np.testing.assert_allclose(got, X.T @ (softmax * np.sum(Y, axis=1, keepdims=True) - Y) / 5,
                               rtol=1e-12, atol=1e-14)   # by hand
    assert_grad(softmax_xent, [got], (W, X, Y), [0])
    with pytest.raises(ValueError):   # Y does not broadcast with the logits
        g(W, X, Y[:, :2])


def code(source: str) -> str:
    """`source` without its comments."""
    return "\n".join(line for line in source.splitlines() if not line.strip().startswith("#"))


def mean_of_sums(x, y):
    return np.mean(np.sum(np.exp(x) * y, axis=-1, keepdims=True)) + np.mean(np.sum(x, axis=1))


def test_stand_ins_of_reductions(jit, rng):
    g = srcgrad.grad(mean_of_sums, wrt=(0, 1), jit=jit)
    assert "like_reduced(x, 1)" in g.source, g.source
    assert "like_reduced(like_broadcast(x, y), -1, True)" in g.source, g.source
    assert "np.sum" not in code(g.source.split("# adjoint")[0].split("if checking")[0]), \
        g.source
    x, y = rng.standard_normal((2, 3, 4)), rng.standard_normal(4)
    got = g(x, y)
    np.testing.assert_allclose(got[0], np.exp(x) * y / 6 + 1 / 8)   # by hand
    np.testing.assert_allclose(got[1], np.sum(np.exp(x), axis=(0, 1)) / 6)
    assert_grad(mean_of_sums, got, (x, y), [0, 1])


def test_stand_ins_have_the_shapes_of_what_they_stand_for():
    x = np.zeros((2, 3, 4))
    for axis, keepdims in [(1, False), ((0, -1), True), ((2, 0), False), (None, True)]:
        want = np.sum(x, axis, keepdims=keepdims).shape
        assert runtime.like_reduced(x, axis, keepdims).shape == want
        compiled = numba.njit(lambda x, a=axis, k=keepdims: runtime.like_reduced(x, a, k).shape)
        assert compiled(x) == want, (axis, keepdims)
    assert runtime.like_reduced(x, None) == 0.0
    assert runtime.like_broadcast(np.zeros((3, 1)), np.zeros(4)).shape == (3, 4)
    assert numba.njit(lambda a, b: runtime.like_broadcast(a, b).shape)(
        np.zeros((3, 1)), np.zeros((2, 1, 4))) == (2, 3, 4)
    with pytest.raises(ValueError):
        numba.njit(lambda a, b: runtime.like_broadcast(a, b))(np.zeros(3), np.zeros(4))


def scaled_cross_entropy(W, X, Y):
    t = Y * (X @ W)
    return np.mean(np.sum(t, axis=1)) * np.sum(t)


def test_a_like_whose_value_is_needed_is_kept(rng):
    # t's value is needed (the product's adjoint reads it): no stand-in for it
    g = srcgrad.grad(scaled_cross_entropy, jit=False)
    assert "like_" not in g.source, g.source
    W, X, Y = rng.standard_normal((4, 3)), rng.standard_normal((5, 4)), rng.standard_normal((5, 3))
    assert_grad(scaled_cross_entropy, [g(W, X, Y)], (W, X, Y), [0])


def column_means(a, b):
    return np.sum(np.mean(np.sin(a) * b, axis=0))


def kept_rows(a, b):
    return np.mean(np.sum(np.sin(a) + b, axis=-1, keepdims=True) * 2.0)


@pytest.mark.parametrize("f", [column_means, kept_rows])
def test_stand_ins_for_broadcasts(f, jit, rng):
    g = srcgrad.grad(f, wrt=(0, 1), jit=jit)
    assert "like_broadcast(a, b)" in g.source and "np.sum" not in code(
        g.source.split("# adjoint")[0]), g.source
    a, b = rng.standard_normal((3, 1)), rng.standard_normal(4)
    assert_grad(f, g(a, b), (a, b), [0, 1])
