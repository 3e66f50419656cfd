"""Matrix products: the adjoints of `a @ b`, their in-place and joint (value and
tangent) forms, and the products of their tangents (thin factors go to `products`).
"""

from __future__ import annotations

import operator

import numpy as np
from numba.core import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype

from ..errors import SrcgradError
from . import broadcasting, products
from .common import _ndim


@overload(operator.matmul, target="cpu")
def _mixed_matmul(a, b):
    # numba's @ takes operands of one dtype: a real one beside a complex one is made
    # complex first, as NumPy does (typed before numba's own)
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)) or \
            a.dtype == b.dtype or not (isinstance(a.dtype, types.Complex)
                                       or isinstance(b.dtype, types.Complex)):
        return None
    kind = np.result_type(as_dtype(a.dtype), as_dtype(b.dtype)).type
    return lambda a, b: a.astype(kind) @ b.astype(kind)


def matrix_product(a, b):
    """np.matmul itself, which generated code calls in its place: numba takes NumPy 2's
    np.matmul (a ufunc) for an elementwise one and fails to compile it; this one's numba
    form is `a @ b`.

    >>> matrix_product(np.eye(2), np.array([1.0, 2.0]))
    array([1., 2.])
    """
    return np.matmul(a, b)


@overload(matrix_product)
def _matrix_product_typer(a, b):
    return lambda a, b: a @ b


def matmul_lhs_grad(dy, a, b):
    """Adjoint of ``y = a @ b`` with respect to `a` (stacks of matrices too, as Python).

    >>> matmul_lhs_grad(np.ones((2, 2, 2)), np.ones((2, 2, 3)), np.ones((3, 2))).shape
    (2, 2, 3)
    """
    if _ndim(a) > 2 or _ndim(b) > 2:
        return _stacked_grad(dy, a, b, True)
    if _ndim(b) == 1:
        return _outer(dy, b) if _ndim(a) == 2 else dy * b
    return dy @ b.T if _ndim(a) == 2 else b @ dy


def _stacked_grad(dy, a, b, lhs):
    """The adjoint of `a` (`lhs`) or `b` of ``a @ b`` where one is a stack of matrices:
    NumPy's rules (a 1-D operand is a matrix of one row or column, the stack dimensions
    broadcast), then summed back to the operand's shape."""
    a2 = a[None, :] if np.ndim(a) == 1 else a
    b2 = b[:, None] if np.ndim(b) == 1 else b
    dy2 = np.asarray(dy)
    if np.ndim(a) == 1:
        dy2 = dy2[..., None, :]
    if np.ndim(b) == 1:
        dy2 = dy2[..., None]
    if lhs:
        g = dy2 @ np.swapaxes(b2, -1, -2)
        g = g[..., 0, :] if np.ndim(a) == 1 else g
        return broadcasting.unbroadcast(g, a)
    g = np.swapaxes(a2, -1, -2) @ dy2
    g = g[..., 0] if np.ndim(b) == 1 else g
    return broadcasting.unbroadcast(g, b)


def _two_dims(a, b):
    if getattr(a, "ndim", 0) > 2 or getattr(b, "ndim", 0) > 2:
        raise TypingError("srcgrad: numba's @ takes 1-D and 2-D arrays, not stacks of "
                          "matrices")


@overload(matmul_lhs_grad)
def _matmul_lhs_grad_typer(dy, a, b):
    _two_dims(a, b)
    if getattr(b, "ndim", 0) == 1:
        if getattr(a, "ndim", 0) == 2:
            return lambda dy, a, b: _outer(dy, b)
        return lambda dy, a, b: dy * b
    if getattr(a, "ndim", 0) == 2:
        return lambda dy, a, b: dy @ b.T
    return lambda dy, a, b: b @ dy


def matmul_rhs_grad(dy, a, b):
    """Adjoint of ``y = a @ b`` with respect to `b` (stacks of matrices too, as Python).

    >>> matmul_rhs_grad(np.ones((2, 2, 2)), np.ones((2, 2, 3)), np.ones((3, 2))).shape
    (3, 2)
    """
    if _ndim(a) > 2 or _ndim(b) > 2:
        return _stacked_grad(dy, a, b, False)
    if _ndim(a) == 1:
        return _outer(a, dy) if _ndim(b) == 2 else dy * a
    return a.T @ dy


@overload(matmul_rhs_grad)
def _matmul_rhs_grad_typer(dy, a, b):
    _two_dims(a, b)
    if getattr(a, "ndim", 0) == 1:
        if getattr(b, "ndim", 0) == 2:
            return lambda dy, a, b: _outer(a, dy)
        return lambda dy, a, b: dy * a
    return lambda dy, a, b: a.T @ dy


def held_in_place(out):
    """`out`, an array an adjoint is added into in place; a number (whose `+=` would
    bind a new value the caller never sees) is refused. It is one where a loop starts a
    variable as a number and makes it an array (`acc = 0`, then `acc = acc + x`): the
    adjoint of an outer loop's later iteration starts from that number's shape."""
    if not isinstance(out, np.ndarray):
        raise SrcgradError("a variable that is a number, then an array, in a loop has "
                           "its gradient added in place: start it as an array of the "
                           "shape it will have (acc = np.zeros_like(x), not acc = 0)")
    return out


def add_matmul_lhs_grad(out, dy, a, b):
    """``out += matmul_lhs_grad(dy, a, b)``, in place (an outer product is not built)."""
    held_in_place(out)[...] += matmul_lhs_grad(dy, a, b)


@overload(add_matmul_lhs_grad)
def _add_matmul_lhs_grad_typer(out, dy, a, b):
    if getattr(b, "ndim", 0) == 1 and getattr(a, "ndim", 0) == 2:
        return lambda out, dy, a, b: _add_outer(out, dy, b)

    def impl(out, dy, a, b):
        out += matmul_lhs_grad(dy, a, b)
    return impl


def add_matmul_rhs_grad(out, dy, a, b):
    """``out += matmul_rhs_grad(dy, a, b)``, in place (an outer product is not built)."""
    held_in_place(out)[...] += matmul_rhs_grad(dy, a, b)


@overload(add_matmul_rhs_grad)
def _add_matmul_rhs_grad_typer(out, dy, a, b):
    if getattr(a, "ndim", 0) == 1 and getattr(b, "ndim", 0) == 2:
        return lambda out, dy, a, b: _add_outer(out, a, dy)

    def impl(out, dy, a, b):
        out += matmul_rhs_grad(dy, a, b)
    return impl


def matmul_sum(a1, b1, a2, b2):
    """``a1 @ b1 + a2 @ b2``. For 2-D float64 operands whose inner dimensions are small
    beside the (m, n) result, one product of the operands side by side,
    ``[a1 a2] @ [b1; b2]``, which writes the result once and adds nothing.

    >>> matmul_sum(np.eye(2), np.ones((2, 2)), np.ones((2, 1)), np.array([[1.0, 2.0]]))
    array([[2., 3.],
           [2., 3.]])
    """
    if products.float64_matrices(a1, b1, a2, b2):
        m, n = a1.shape[0], b1.shape[1]
        k = a1.shape[1] + a2.shape[1]
        if a2.shape[0] == m and b2.shape[1] == n and k * (m + n) * 4 <= m * n:
            return np.concatenate((a1, a2), axis=1) @ np.concatenate((b1, b2), axis=0)
    return a1 @ b1 + a2 @ b2


@overload(matmul_sum)
def _matmul_sum_typer(a1, b1, a2, b2):
    return lambda a1, b1, a2, b2: a1 @ b1 + a2 @ b2


def matmul_jvp(a, b, da, db, *, loops=False):
    """``(a @ b, da @ b + a @ db)``: a product and its tangent. For 2-D float64 factors
    with thin right ones, `a` is read once (``a @ [b db]``); with thin left ones, `b`
    once (``[a; da] @ b``). A thin inner dimension is `matmul_sum`'s case. With
    ``loops=True`` (a `looped` helper), thin right factors go to a compiled loop (`products`).

    >>> y, dy = matmul_jvp(np.eye(2), np.ones((2, 2)), np.zeros((2, 2)), np.eye(2))
    >>> y.tolist(), dy.tolist()
    ([[1.0, 1.0], [1.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]])
    """
    if loops and products.thin_right(a, b, da, db):
        return products.jvp_thin_right(a, b, da, db)
    if products.float64_matrices(a, b, da, db) and da.shape == a.shape \
            and db.shape == b.shape:
        (m, k), n = a.shape, b.shape[1]
        if 4 * n <= min(m, k):
            both = a @ np.concatenate((b, db), axis=1)
            return both[:, :n].copy(), both[:, n:] + da @ b
        if 4 * m <= min(n, k):
            both = np.concatenate((a, da)) @ b
            return both[:m], both[m:] + a @ db
    return a @ b, matmul_tangent(a, b, da, db)


@overload(matmul_jvp)
def _matmul_jvp_typer(a, b, da, db):
    return lambda a, b, da, db: (a @ b, da @ b + a @ db)


def matmul_tangent(a, b, da, db):
    """``da @ b + a @ db``, the second result of `matmul_jvp` alone."""
    return matmul_sum(da, b, a, db)


@overload(matmul_tangent)
def _matmul_tangent_typer(a, b, da, db):
    return lambda a, b, da, db: da @ b + a @ db


def matmul_lhs_grad_jvp(dy, a, b, ddy, db):
    """`matmul_lhs_grad(dy, a, b)` and its tangent along `ddy` and `db` (as `matmul_jvp`)."""
    if _ndim(a) == _ndim(b) == 2:
        return matmul_jvp(dy, b.T, ddy, db.T)
    return matmul_lhs_grad(dy, a, b), matmul_lhs_grad_tangent(dy, a, b, ddy, db)


@overload(matmul_lhs_grad_jvp)
def _matmul_lhs_grad_jvp_typer(dy, a, b, ddy, db):
    return lambda dy, a, b, ddy, db: (matmul_lhs_grad(dy, a, b),
                                      matmul_lhs_grad_tangent(dy, a, b, ddy, db))


def matmul_lhs_grad_tangent(dy, a, b, ddy, db):
    """The second result of `matmul_lhs_grad_jvp` alone."""
    if _ndim(a) == _ndim(b) == 2:
        return matmul_sum(ddy, b.T, dy, db.T)
    return matmul_lhs_grad(ddy, a, b) + matmul_lhs_grad(dy, a, db)


@overload(matmul_lhs_grad_tangent)
def _matmul_lhs_grad_tangent_typer(dy, a, b, ddy, db):
    return lambda dy, a, b, ddy, db: \
        matmul_lhs_grad(ddy, a, b) + matmul_lhs_grad(dy, a, db)


def matmul_rhs_grad_jvp(dy, a, b, ddy, da):
    """`matmul_rhs_grad(dy, a, b)` and its tangent along `ddy` and `da` (as `matmul_jvp`)."""
    if _ndim(a) == _ndim(dy) == 2:
        return matmul_jvp(a.T, dy, da.T, ddy)
    return matmul_rhs_grad(dy, a, b), matmul_rhs_grad_tangent(dy, a, b, ddy, da)


@overload(matmul_rhs_grad_jvp)
def _matmul_rhs_grad_jvp_typer(dy, a, b, ddy, da):
    return lambda dy, a, b, ddy, da: (matmul_rhs_grad(dy, a, b),
                                      matmul_rhs_grad_tangent(dy, a, b, ddy, da))


def matmul_rhs_grad_tangent(dy, a, b, ddy, da, *, loops=False):
    """The second result of `matmul_rhs_grad_jvp` alone. With ``loops=True``
    (a `looped` helper), thin `dy` and `ddy` go to a compiled loop (`products`)."""
    if loops and products.thin_grad(a, ddy, da, dy):
        return products.grad_tangent_thin(a, ddy, da, dy)
    if _ndim(a) == _ndim(dy) == 2:
        return matmul_sum(a.T, ddy, da.T, dy)
    return matmul_rhs_grad(ddy, a, b) + matmul_rhs_grad(dy, da, b)


@overload(matmul_rhs_grad_tangent)
def _matmul_rhs_grad_tangent_typer(dy, a, b, ddy, da):
    return lambda dy, a, b, ddy, da: \
        matmul_rhs_grad(ddy, a, b) + matmul_rhs_grad(dy, da, b)


def _outer(u, v):
    """The outer product of vectors `u` and `v`."""
    return np.outer(u, v)


@overload(_outer)
def _outer_typer(u, v):
    # numba's own np.outer takes seconds to compile; these loops take a fraction.
    if not (isinstance(u, types.Array) and isinstance(v, types.Array)):
        return None
    dtype = np.result_type(as_dtype(u.dtype), as_dtype(v.dtype))

    def impl(u, v):
        out = np.empty((u.size, v.size), dtype)
        for i in range(u.size):
            for j in range(v.size):
                out[i, j] = u[i] * v[j]
        return out
    return impl


@register_jitable
def _add_outer(out, u, v):
    for i in range(u.size):
        for j in range(v.size):
            out[i, j] += u[i] * v[j]
