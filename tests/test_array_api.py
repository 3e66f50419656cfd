"""NumPy 2's array-API functions (srcgrad/rules/array_api.py): each differentiated as the
function it computes, against values known by hand and central differences, compiled and as
Python, in reverse and forward mode; what the two spellings compute differently refused."""

import numpy as np
import pytest
from fd import assert_grad, slope

import srcgrad

pytestmark = pytest.mark.skipif(not hasattr(np.linalg, "vector_norm"),
                                reason="NumPy < 2.0 has no array-API functions")

X = np.array([0.3, -0.5, 1.2, 0.7])
M = np.array([[1.0, 0.2, -0.4], [0.3, 2.0, 0.5]])
W = np.array([[0.5, -1.0], [2.0, 0.25], [1.5, -0.75]])
C = np.array([[1.0, 2.0], [3.0, 4.0]])


def norms(x):
    return np.linalg.vector_norm(x) + np.linalg.vector_norm(x, ord=1) * 2.0


def norms_along(m):
    return np.sum(np.linalg.vector_norm(m, axis=-1) ** 2) + \
        np.sum(np.linalg.vector_norm(m, axis=0, keepdims=True, ord=np.inf))


def fro(m):
    return np.linalg.matrix_norm(m) + np.linalg.matrix_norm(m[:, :2], ord="nuc")


def products(m, w):
    # vecdot over the last axis, matmul, matrix_transpose, the trace of m w
    return np.sum(np.linalg.vecdot(m, m)) + np.sum(np.vecdot(m[0], m[1])) + \
        np.sum(np.linalg.matmul(m, w) * np.linalg.matrix_transpose(C)) + \
        np.linalg.trace(np.linalg.matmul(m, w)) + np.sum(np.matrix_transpose(m) * w)


def pieces(m):
    return np.sum(np.linalg.diagonal(m) ** 2) + np.sum(np.linalg.outer(m[0], m[1]) ** 2) + \
        np.sum(np.linalg.cross(m[0], m[1]) ** 2) + \
        np.sum(np.linalg.tensordot(m, m, axes=2))


def cumulative(x):
    return np.sum(np.cumulative_sum(x) ** 2) + np.sum(np.cumulative_prod(x, axis=0))


def test_by_hand(jit):
    # |x|' = x / |x|, |x|_1' = sign(x); along rows: 2 m; the column maxima's |.|: sign
    g = srcgrad.grad(norms, jit=jit)(X)
    np.testing.assert_allclose(g, X / np.linalg.norm(X) + 2.0 * np.sign(X), rtol=1e-13)
    g = srcgrad.grad(norms_along, jit=jit)(M)
    want = 2.0 * M + np.where(np.abs(M) == np.abs(M).max(axis=0), np.sign(M), 0.0)
    np.testing.assert_allclose(g, want, rtol=1e-13)
    # sum(m * m) + m0 . m1 + sum((m w) * C^T) + trace(m w) + sum(m^T * w):
    # 2 m + [m1; m0] + C^T w^T + w^T + w^T
    g = srcgrad.grad(products, wrt=0, jit=jit)(M, W)
    np.testing.assert_allclose(g, 2.0 * M + M[::-1] + C.T @ W.T + 2.0 * W.T, rtol=1e-13)


def cumulative_float(x):
    return np.sum(np.cumulative_sum(x, dtype=np.float64) ** 2)


def test_a_float64_dtype(jit):
    # d/dx_i sum(c^2), c the running sum: 2 times the sum of c_j over j >= i
    c = np.cumsum(X)
    np.testing.assert_allclose(srcgrad.grad(cumulative_float, jit=jit)(X),
                               2.0 * np.cumsum(c[::-1])[::-1], rtol=1e-13)


def test_matrix_norms(jit):
    # the Frobenius norm's gradient is m / |m|; the nuclear norm's U V^T
    u, _, vt = np.linalg.svd(M[:, :2])
    want = M / np.linalg.norm(M)
    want[:, :2] += u @ vt
    np.testing.assert_allclose(srcgrad.grad(fro, jit=jit)(M), want, rtol=1e-12)


@pytest.mark.parametrize("fun, args", [(norms, (X,)), (norms_along, (M,)), (fro, (M,)),
                                       (products, (M, W)), (pieces, (M,)),
                                       (cumulative, (X,))],
                         ids=["norms", "along", "fro", "products", "pieces", "cumulative"])
def test_differences(fun, args):
    wrt = tuple(range(len(args)))
    g = srcgrad.grad(fun, wrt=wrt, jit=False)(*args)
    assert_grad(fun, g, args, list(wrt))
    tangents = tuple(np.cos(np.arange(a.size)).reshape(a.shape) for a in args)
    _, d = srcgrad.jvp(fun, wrt=wrt, jit=False)(*args, tangents)
    assert d == pytest.approx(slope(fun, args, tangents), rel=1e-6)


def test_compiled():
    # one compiled function of several of them, against differences
    g = srcgrad.grad(pieces, jit=True)(M)
    assert_grad(pieces, (g,), (M,), [0])
    g = srcgrad.grad(cumulative, jit=True)(X)
    assert_grad(cumulative, (g,), (X,), [0])


def matvecs(m, x):
    return np.sum(np.matvec(m, x[:3]) ** 2) + np.sum(np.vecmat(x[:2], m))


@pytest.mark.skipif(not hasattr(np, "matvec"), reason="NumPy < 2.2 has no np.matvec")
def test_matvec_and_vecmat(jit):
    # d/dx3 |m x3|^2 = 2 m^T m x3; d/dx2 sum(x2 m) = the row sums of m
    g = srcgrad.grad(matvecs, wrt=(0, 1), jit=jit)(M, X)
    want = np.zeros(4)
    want[:3] = 2.0 * M.T @ M @ X[:3]
    want[:2] += M.sum(axis=1)
    np.testing.assert_allclose(g[1], want, rtol=1e-13)
    assert_grad(matvecs, g, (M, X), [0, 1])


def tuple_axes(m):
    return np.linalg.vector_norm(m, axis=(0, 1))


def kept_without_axis(x):
    return np.sum(np.linalg.vector_norm(x, keepdims=True))


def with_initial(x):
    return np.sum(np.cumulative_sum(x, include_initial=True))


def int_trace(m):
    return np.linalg.trace(m, dtype=np.int64)


@pytest.mark.parametrize("fun, words", [
    (tuple_axes, "axis= is differentiated as an int literal"),
    (kept_without_axis, "keepdims=True\\) is differentiated with an int axis="),
    (with_initial, "include_initial=True\\) has no gradient rule"),
    (int_trace, "dtype= has no gradient rule")], ids=["tuple-axes", "keepdims", "initial", "dtype"])
def test_refused(fun, words):
    # what np.linalg.norm (np.cumsum, np.trace) would compute otherwise: refused at its line
    with pytest.raises(srcgrad.SrcgradError, match=words) as info:
        srcgrad.grad(fun, jit=False)(M)
    assert "test_array_api.py:" in str(info.value)
