"""Contractions and matrix structure (srcgrad/rules/diagonals.py, tensor_products.py,
matrix_chains.py, einsum.py): the sweep's cases (`CASES`, read by
test_rules.test_every_rule_has_a_case), gradients by hand, and jvp and hvp against
central differences."""

import numpy as np
import pytest
from fd import assert_grad
from marks import compiles
from sweep import check, domains, parametrize

import srcgrad

any_, pos, unit, distinct = domains(7)
W33 = np.arange(9.0).reshape(3, 3) / 4.0
W34 = np.arange(12.0).reshape(3, 4) / 4.0


def diagonal_op(a):
    # a function, a method, an offset and swapped axes
    return np.sum(np.diagonal(a) ** 2) + np.sum(np.sin(a.diagonal(1))) + \
        np.sum(np.diagonal(a, -1, 1, 0) ** 3)


def trace_op(a):
    return np.trace(a) ** 2 + np.sin(a.trace(offset=-1)) + np.trace(a, 1, 1, 0) * 3.0


def diagonal_of_a_stack(a):
    # (3, 2, 4): the diagonals of axes 0 and 2, and the traces along them
    return np.sum(np.diagonal(a, 1, 0, 2) ** 2) + np.sum(np.trace(a, -1, 2, 0) ** 3)


def diag_op(v, a):
    # a vector to a matrix (above the diagonal), a matrix to a vector (below it)
    return np.sum(np.diag(v, 1) * W33) + np.sum(np.sin(np.diag(a, -1))) \
        + np.sum(np.diag(a) ** 2)


def triangles_op(a):
    return np.sum(np.triu(a) ** 2) + np.sum(np.triu(a, 1) * W34) + \
        np.sum(np.tril(a, k=-1) ** 3) + np.sum(np.sin(np.tril(a, 1)))


def kron_op(a, b):
    return np.sum(np.kron(a, b) ** 2)


def kron_vectors(a, b):
    return np.sum(np.sin(np.kron(a, b)))


def inner_op(a, b):
    return np.sum(np.inner(a, b) ** 2)


def inner_vectors(a, b):
    return np.inner(a, b) ** 2


def matrix_power_op(a, n):
    m = a + 3.0 * np.eye(3)  # well conditioned, for the negative powers
    return np.sum(np.linalg.matrix_power(m, n) * W33)


def einsum_op(a, b, c):
    # a product, a trace, a total, the implicit result, an ellipsis, three operands and
    # a diagonal
    return (np.sum(np.einsum("ij,jk->ik", a, b) ** 2) + np.einsum("ii->", a[:, :3]) ** 2
            + np.sum(np.einsum("ij->", b) * 2.0) + np.sum(np.sin(np.einsum("ij,jk", a, b)))
            + np.sum(np.einsum("...ij,...jk->...ik", c, b) ** 2)
            + np.sum(np.einsum("ij,jk,kl->il", a, b, b.T) ** 2)
            + np.sum(np.einsum("ii->i", b[:3, :3] * 1.5) ** 2))


def einsum_broadcasting(a, b, v):
    # an ellipsis of different ranks and a size-1 axis, a vector product, optimize=,
    # a letter of one operand alone (summed), a transpose
    return (np.sum(np.einsum("...j,...j->...", a, b) ** 2)
            + np.einsum("i,i", v, v) + np.sum(np.einsum("ij,j->i", a[0], v, optimize=True) ** 2)
            + np.sum(np.einsum("ij,k->jk", a[0], v) ** 2) + np.sum(np.einsum("ji", a[0]) * W34))


def tensordot_op(a, b, c):
    # an int, pairs of tuples and of lists, a negative axis, the full and the outer product
    return (np.sum(np.tensordot(a, b, 1) ** 2)
            + np.sum(np.sin(np.tensordot(c, a, axes=((1, 2), (0, 1)))))
            + np.tensordot(a, a) ** 2 + np.sum(np.tensordot(c, c, axes=([2, 0], [0, 2])) ** 2)
            + np.sum(np.tensordot(a, b, axes=0) * 0.5)
            + np.sum(np.tensordot(c, b, axes=(-1, 0)) ** 2))


def multi_dot_op(a, b, c, v):
    # a list of matrices; tuples with a vector first, last, or both
    return (np.sum(np.linalg.multi_dot([a, b, c]) ** 2)
            + np.linalg.multi_dot((v, b, c, v[:2])) ** 2
            + np.sum(np.sin(np.linalg.multi_dot((v, b))))
            + np.sum(np.linalg.multi_dot((a, b, v[:2])) ** 2))


CASES = [
    ("einsum", (np.einsum,), einsum_op, (any_(3, 4), any_(4, 3), any_(2, 3, 4)), [0, 1, 2],
     True),
    ("einsum-broadcasting", (np.einsum,), einsum_broadcasting,
     (any_(2, 4, 3), any_(1, 3), any_(3)), [0, 1, 2], False),
    ("diagonal", (np.diagonal,), diagonal_op, (any_(3, 4),), [0], True),
    ("trace", (np.trace,), trace_op, (any_(3, 3),), [0], True),
    ("diagonal-stack", (np.diagonal, np.trace), diagonal_of_a_stack, (any_(3, 2, 4),), [0],
     False),
    ("diag", (np.diag,), diag_op, (any_(2), any_(3, 4)), [0, 1], True),
    ("triangles", (np.triu, np.tril), triangles_op, (any_(3, 4),), [0], True),
    ("kron", (np.kron,), kron_op, (any_(2, 3), any_(3, 2)), [0, 1], True),
    ("kron-vectors", (np.kron,), kron_vectors, (any_(2), any_(3)), [0, 1], True),
    ("inner", (np.inner,), inner_op, (any_(2, 4), any_(3, 4)), [0, 1], True),
    ("inner-vector-matrix", (np.inner,), inner_op, (any_(4), any_(2, 3, 4)), [0, 1], False),
    ("inner-vectors", (np.inner,), inner_vectors, (any_(4), any_(4)), [0, 1], True),
    ("tensordot", (np.tensordot,), tensordot_op, (any_(3, 4), any_(4, 2), any_(4, 3, 4)),
     [0, 1, 2], True),
    ("multi_dot", (np.linalg.multi_dot,), multi_dot_op,
     (any_(3, 4), any_(4, 2), any_(2, 2), any_(4)), [0, 1, 2, 3], True),
    ("matrix_power-3", (np.linalg.matrix_power,), matrix_power_op, (unit(3, 3), 3), [0],
     True),
    ("matrix_power-0", (np.linalg.matrix_power,), matrix_power_op, (unit(3, 3), 0), [0],
     False),
    ("matrix_power-neg", (np.linalg.matrix_power,), matrix_power_op, (unit(3, 3), -2), [0],
     False),
]


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


def assert_forward(fun, args, tangents, jit, wrt=0):
    """jvp against central differences of fun, and hvp against central differences of
    grad (wrt one argument)."""
    h = 1e-6
    positions = (wrt,) if isinstance(wrt, int) else wrt
    ts = tangents if isinstance(wrt, tuple) else tangents[0]

    def moved(sign):
        out = list(args)
        for k, t in zip(positions, tangents, strict=True):
            out[k] = args[k] + sign * h * t
        return out

    slope = srcgrad.jvp(fun, wrt=wrt, jit=jit)(*args, ts)[1]
    assert slope == pytest.approx((fun(*moved(1)) - fun(*moved(-1))) / (2 * h), rel=1e-6)
    k = positions[0]
    grad = srcgrad.grad(fun, wrt=k, jit=False)  # (the reference: its Python form)
    up, down = list(args), list(args)
    up[k], down[k] = args[k] + h * tangents[0], args[k] - h * tangents[0]
    np.testing.assert_allclose(srcgrad.hvp(fun, wrt=k, jit=jit)(*args, tangents[0]),
                               (grad(*up) - grad(*down)) / (2 * h), rtol=1e-5, atol=1e-6)


def weighted_trace(a, w):
    return np.trace(a * w) + np.trace(a, 1)


def test_trace_and_diagonals_by_hand_and_forward(jit, rng):
    # d tr(a * w)/da = w on the diagonal; the diagonal 1 adds ones above it
    a, w = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    g = srcgrad.grad(weighted_trace, jit=jit)(a, w)
    want = np.diag(np.diag(w)) @ np.eye(3, 4) + np.eye(3, 4, 1)
    np.testing.assert_allclose(g, want)
    da = rng.standard_normal((3, 4))
    assert_forward(diagonal_op, (a,), (da,), jit)
    assert_forward(trace_op, (a[:, :3],), (da[:, :3],), jit)
    assert_forward(triangles_op, (a,), (da,), jit)
    assert_forward(diag_op, (a[0, :2], a), (da[0, :2], da), jit, wrt=(0, 1))


@compiles
def test_diagonal_of_a_stack_compiled_is_a_clear_error():
    # as Python: the sweep's case "diagonal-stack"
    with pytest.raises(srcgrad.SrcgradError, match="one matrix"):
        srcgrad.grad(diagonal_of_a_stack, jit=True)(any_(3, 2, 4))


def trace_in_float32(a):
    return np.trace(a, dtype=np.float32)


def test_trace_with_dtype_is_refused():
    with pytest.raises(srcgrad.errors.MissingRule, match="dtype"):
        srcgrad.grad(trace_in_float32, jit=False)(np.ones((2, 2)))


def test_kron_by_hand_and_forward(jit, rng):
    # kron([a0, a1], b) = [a0 b, a1 b]: d sum(w * y)/da_i = w_i . b, d/db = sum_i a_i w_i
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0])
    w = np.arange(6.0)

    def weighted(a, b):
        return np.sum(np.kron(a, b) * w)

    da, db = srcgrad.grad(weighted, wrt=(0, 1), jit=jit)(a, b)
    np.testing.assert_allclose(da, [w[:3] @ b, w[3:] @ b])
    np.testing.assert_allclose(db, 1.0 * w[:3] + 2.0 * w[3:])
    args = (rng.standard_normal((2, 3)), rng.standard_normal((3, 2)))
    tangents = (rng.standard_normal((2, 3)), rng.standard_normal((3, 2)))
    assert_forward(kron_op, args, tangents, jit, wrt=(0, 1))
    assert_forward(kron_op, args, tangents[::-1], jit, wrt=(1, 0))


def test_kron_of_different_ranks_is_refused():
    with pytest.raises(srcgrad.errors.MissingRule, match="np.kron"):
        srcgrad.grad(kron_op, jit=False)(np.ones(2), np.ones((2, 2)))


def test_inner_forward(jit, rng):
    args = (rng.standard_normal((2, 4)), rng.standard_normal((3, 4)))
    tangents = (rng.standard_normal((2, 4)), rng.standard_normal((3, 4)))
    assert_forward(inner_op, args, tangents, jit, wrt=(0, 1))
    assert_forward(inner_op, args, tangents[::-1], jit, wrt=(1, 0))


@pytest.mark.parametrize("n", [3, 0, -2])
def test_matrix_power_by_hand_and_forward(n, jit, rng):
    # a = diag(p, q): a^n = diag(p^n, q^n), so d sum(w * a^n)/da has n p^(n-1) w_00 and
    # n q^(n-1) w_11 on the diagonal; off it, (p^n - q^n)/(p - q) times w (the divided
    # difference of the power, Daleckii-Krein)
    p, q = 1.5, 2.5
    a = np.diag([p, q]) - 3.0 * np.eye(2)
    w = np.array([[1.0, 2.0], [3.0, 4.0]])

    def weighted(a):
        return np.sum(np.linalg.matrix_power(a + 3.0 * np.eye(2), n) * w)

    g = srcgrad.grad(weighted, jit=jit)(a)
    divided = (p ** n - q ** n) / (p - q)
    np.testing.assert_allclose(g, [[n * p ** (n - 1) * w[0, 0], divided * w[0, 1]],
                                   [divided * w[1, 0], n * q ** (n - 1) * w[1, 1]]],
                               rtol=1e-12, atol=1e-14)
    m, dm = unit(3, 3), rng.standard_normal((3, 3))
    assert_forward(matrix_power_op, (m, n), (dm,), jit)


def einsum_trace_and_total(a, w):
    return np.einsum("ii->", a) + np.sum(np.einsum("ij,jk->ik", a, w))


def test_einsum_by_hand_and_forward(jit, rng):
    # d tr(a)/da = I; d sum(a w)/da = 1 w^T (each row: the row sums of w)
    a, w = rng.standard_normal((3, 3)), rng.standard_normal((3, 2))
    g = srcgrad.grad(einsum_trace_and_total, jit=jit)(a, w)
    np.testing.assert_allclose(g, np.eye(3) + np.outer(np.ones(3), w.sum(axis=1)))
    args = (rng.standard_normal((3, 4)), rng.standard_normal((4, 3)),
            rng.standard_normal((2, 3, 4)))
    tangents = tuple(rng.standard_normal(x.shape) for x in args)
    h = 1e-6
    slope = srcgrad.jvp(einsum_op, wrt=(0, 1, 2), jit=jit)(*args, tangents)[1]
    up = [x + h * t for x, t in zip(args, tangents, strict=True)]
    down = [x - h * t for x, t in zip(args, tangents, strict=True)]
    assert slope == pytest.approx((einsum_op(*up) - einsum_op(*down)) / (2 * h), rel=1e-6)


def einsum_products(a, w):
    # two and three operands, and a trace
    return (np.einsum("ii->", a) ** 2 + np.sum(np.einsum("ij,jk->ik", a, w) ** 2)
            + np.sum(np.einsum("ij,jk,kl->il", a, w, w.T) ** 3))


def test_einsum_second_order(jit, rng):
    # hvp reads the tangents of the operands' gradients (einsum_grad's, one per operand);
    # by hand: the trace's gradient I is constant, so hvp of tr(a) + sum(a w) is zero
    a, w = rng.standard_normal((3, 3)), rng.standard_normal((3, 2))
    np.testing.assert_array_equal(
        srcgrad.hvp(einsum_trace_and_total, jit=jit)(a, w, rng.standard_normal((3, 3))), 0.0)
    assert_forward(einsum_products, (a, w), (rng.standard_normal((3, 3)),), jit)
    if not jit:   # (the same compiled forms, along the other operand)
        assert_forward(einsum_products, (a, w), (rng.standard_normal((3, 2)),), jit, wrt=1)


def einsum_with_constants(x):
    return np.sum(np.einsum("ij,jk,kl->il", x, W34, W34.T) ** 2)


def einsum_twice(a):
    # a is two operands: each one's gradient moves with the other (einsum_grad_along)
    return np.sum(np.einsum("ij,jk,ki->i", a, a, W33) ** 2)


def test_einsum_computes_the_differentiated_operands_gradients_only(jit, rng):
    x = rng.standard_normal((2, 3))
    g = srcgrad.grad(einsum_with_constants, jit=jit)
    assert g.source.count("einsum_grad(") == 1, g.source   # W34's two are not computed
    assert_grad(einsum_with_constants, [g(x)], (x,), [0])
    assert_forward(einsum_twice, (W33 - 0.7 * np.eye(3),), (rng.standard_normal((3, 3)),),
                   jit)


def einsum_of(subscripts, a):
    return np.sum(np.einsum(subscripts, a, a) ** 2)


@compiles
def test_einsum_subscripts_not_in_the_call_compiled_is_a_clear_error():
    a = np.ones((2, 2))
    assert_grad(einsum_of, [srcgrad.grad(einsum_of, wrt=1, jit=False)("ij,jk", a)],
                ("ij,jk", a), [1])
    with pytest.raises(srcgrad.SrcgradError, match="subscripts written as a string"):
        srcgrad.grad(einsum_of, wrt=1, jit=True)("ij,jk", a)


def einsum_in_float32(a):
    return np.sum(np.einsum("ij->i", a, dtype=np.float32, casting="same_kind"))


def test_einsum_with_dtype_is_refused():
    with pytest.raises(srcgrad.errors.MissingRule, match="dtype"):
        srcgrad.grad(einsum_in_float32, jit=False)(np.ones((2, 2)))


def tensordot_pair(a, c):
    return np.sum(np.tensordot(c, a, axes=((1, 2), (0, 1))) ** 2)


def test_tensordot_by_hand_and_forward(jit, rng):
    # tensordot(a, b, 1) = a @ b: d sum(w * (a @ b))/da = w b^T, d/db = a^T w
    a, b, w = rng.standard_normal((2, 3)), rng.standard_normal((3, 4)), rng.standard_normal((2, 4))

    def weighted(a, b):
        return np.sum(np.tensordot(a, b, 1) * w)

    da, db = srcgrad.grad(weighted, wrt=(0, 1), jit=jit)(a, b)
    np.testing.assert_allclose(da, w @ b.T)
    np.testing.assert_allclose(db, a.T @ w)
    args = (rng.standard_normal((3, 4)), rng.standard_normal((4, 3, 4)))
    tangents = tuple(rng.standard_normal(x.shape) for x in args)
    assert_forward(tensordot_pair, args, tangents, jit, wrt=(0, 1))
    assert_forward(tensordot_pair, args, tangents[::-1], jit, wrt=(1, 0))


def tensordot_by(a, b, k):
    return np.sum(np.tensordot(a, b, k) ** 2)


@compiles
def test_tensordot_axes_unknown_when_compiling_is_a_clear_error():
    a = np.ones((2, 2))
    with pytest.raises(srcgrad.SrcgradError, match="np.tensordot compiles with axes"):
        srcgrad.grad(tensordot_by, jit=True)(a, a, 1)


def test_multi_dot_by_hand_and_forward(jit, rng):
    # u^T M v: d/du = M v, d/dM = u v^T, d/dv = M^T u
    u, m, v = rng.standard_normal(2), rng.standard_normal((2, 3)), rng.standard_normal(3)

    def bilinear(u, m, v):
        return np.linalg.multi_dot((u, m, v))

    du, dm, dv = srcgrad.grad(bilinear, wrt=(0, 1, 2), jit=jit)(u, m, v)
    np.testing.assert_allclose(du, m @ v)
    np.testing.assert_allclose(dm, np.outer(u, v))
    np.testing.assert_allclose(dv, m.T @ u)
    args = (rng.standard_normal((3, 4)), rng.standard_normal((4, 2)), rng.standard_normal((2, 2)),
            rng.standard_normal(4))
    tangents = tuple(rng.standard_normal(x.shape) for x in args)
    h = 1e-6
    slope = srcgrad.jvp(multi_dot_op, wrt=(0, 1, 2, 3), jit=jit)(*args, tangents)[1]
    up = [x + h * t for x, t in zip(args, tangents, strict=True)]
    down = [x - h * t for x, t in zip(args, tangents, strict=True)]
    assert slope == pytest.approx((multi_dot_op(*up) - multi_dot_op(*down)) / (2 * h),
                                  rel=1e-6)
    # u^T M v is linear in each: its Hessian in u is zero, in (u, M) d2/du dM_ij = v_j
    np.testing.assert_array_equal(srcgrad.hvp(bilinear, jit=jit)(u, m, v, u), 0.0)
    np.testing.assert_allclose(
        srcgrad.jvp(srcgrad.grad(bilinear, jit=jit), wrt=1, jit=jit)(u, m, v, m)[1], m @ v)
    for k in range(4):   # a list of matrices and tuples with vectors
        assert_forward(multi_dot_op, args, (rng.standard_normal(args[k].shape),), jit, wrt=k)
