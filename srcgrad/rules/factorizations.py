"""Factorisations: the records of np.linalg.slogdet, eigh, qr and svd (each with the
`results` fact: the call gives a tuple and the rule's dy is the tuple of the results'
cotangents), of np.linalg.svdvals, the helpers their rules call (each Python form beside
its numba form), and the keyword forms numba lacks. A tangent rule builds its tuple with
`results`.

slogdet: d log|det a| = tr(a^-1 da), so the adjoint is dy a^-T; the sign is piecewise
constant (no gradient). eigh (a = V diag(w) V^T, the triangle read as in eigvalsh): with
P = V^T da V, dw = diag(P) and dV = V (F o P), F_ij = 1 / (w_j - w_i) off the diagonal,
so the adjoint is V (diag(dw) + F o (V^T dV)) V^T, on the triangle read. qr (reduced,
m >= n, a = Q R): with C = Q^T da R^-1, dR = (C - S) R and dQ = Q S + da R^-1 - Q C,
S = tril(C, -1) - tril(C, -1)^T; the adjoint is (dQ + Q copyltu(R dR^T - dQ^T Q)) R^-T
(copyltu: the symmetric matrix of the lower triangle). svd (thin, a = U diag(s) V^T): with
P = U^T da V and F_ij = 1 / (s_j^2 - s_i^2), ds = diag(P), dU = U (F o (P S + S P^T)) +
(I - U U^T) da V S^-1 and dV likewise with P^T (Townsend, 2016); the adjoint is the
transpose of that, and svdvals' is U diag(ds) V^T. Where eigenvalues (singular values)
repeat, the vectors have no derivative: an entry of F o m with a zero gap is 0 where m is
0 (the vectors' cotangent unused: the values' gradient stays finite, as in JAX) and nan
otherwise (JAX gives inf or nan there too). svd's vectors also need nonzero singular
values (S^-1).
"""

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from ..errors import MissingRule
from . import describe, linear, rule, tangent
from .decompositions import _singular_sum_slope_one, seen, triangle_grad
from .linalg import _ONE_MATRIX, per_matrix, traces, transposed


@register_jitable
def results(*values):
    """The tuple of `values`: a tangent rule's tangent of a tuple-valued primal.

    >>> results(1.0, 2.0)
    (1.0, 2.0)
    """
    return values


def diag_of(v):
    """The diagonal matrix of the vector `v` (of each vector of a stack).

    >>> diag_of(np.array([1.0, 2.0]))
    array([[1., 0.],
           [0., 2.]])
    """
    return np.expand_dims(v, -1) * np.eye(np.shape(v)[-1])


@overload(diag_of)
def _diag_of_typer(v):
    if isinstance(v, types.Array) and v.ndim == 1:
        return lambda v: np.diag(v)
    raise TypingError(_ONE_MATRIX)


def diagonals(m):
    """The diagonal of the matrix `m` (of each matrix of a stack).

    >>> diagonals(np.array([[1.0, 2.0], [3.0, 4.0]]))
    array([1., 4.])
    """
    return np.diagonal(m, axis1=-2, axis2=-1).copy()


@overload(diagonals)
def _diagonals_typer(m):
    if isinstance(m, types.Array) and m.ndim == 2:
        return lambda m: np.diag(m)
    raise TypingError(_ONE_MATRIX)


def gaps(w):
    """G_ij = w_j - w_i for the vector `w` (each vector of a stack).

    >>> gaps(np.array([1.0, 3.0]))
    array([[ 0.,  2.],
           [-2.,  0.]])
    """
    return np.expand_dims(w, -2) - np.expand_dims(w, -1)


@overload(gaps)
def _gaps_typer(w):
    if isinstance(w, types.Array) and w.ndim == 1:
        return lambda w: w.reshape(1, -1) - w.reshape(-1, 1)
    raise TypingError(_ONE_MATRIX)


def gap_product(w, m):
    """F o m, F_ij = 1 / (w_j - w_i) off the diagonal and 0 on it; where w_j = w_i
    (i != j) the entry is 0 if m_ij is 0 and nan otherwise (no derivative there).

    >>> gap_product(np.array([1.0, 3.0, 3.0]), np.array([[1.0, 2.0, 0.0],
    ...                                                  [4.0, 1.0, 0.0],
    ...                                                  [1.0, 1.0, 1.0]]))
    array([[ 0. ,  1. ,  0. ],
           [-2. ,  0. ,  0. ],
           [-0.5,  nan,  0. ]])
    """
    g = gaps(w)
    off = ~np.eye(np.shape(w)[-1], dtype=bool)
    return np.where(g != 0, m / np.where(g != 0, g, 1.0),
                    np.where(off & (m != 0), np.nan, 0.0))


@register_jitable
def gap_times(w, m):
    """F o m (`gap_product`) of one matrix, complex where m is: its numba form, which
    `rules.eigen` calls as Python too."""
    n = w.shape[0]
    out = np.zeros_like(m)
    for i in range(n):
        for j in range(n):
            gap = w[j] - w[i]
            if gap != 0:
                out[i, j] = m[i, j] / gap
            elif i != j and m[i, j] != 0:
                out[i, j] = np.nan
    return out


@overload(gap_product)
def _gap_product_typer(w, m):
    if not (isinstance(w, types.Array) and w.ndim == 1):
        raise TypingError(_ONE_MATRIX)
    return lambda w, m: gap_times(w, m)


@tangent(gap_product)
def gap_product_tangent(dx, y, w, m):
    return -gap_product(w, gap_product(w, m) * gaps(dx)), gap_product(w, dx)


# ---- slogdet ----


@rule(np.linalg.slogdet, results=2)
def slogdet(dy, y, a):
    return per_matrix(dy[1]) * transposed(np.linalg.inv(a))


@tangent(np.linalg.slogdet)
def slogdet_tangent(dx, y, a):
    return results(0.0 * y[0], traces(np.linalg.solve(a, dx)))


# ---- eigh ----


@rule(np.linalg.eigh, results=2)
def eigh(dy, y, a, UPLO="L"):
    return triangle_grad(y[1] @ (diag_of(dy[0]) + gap_product(y[0], transposed(y[1]) @ dy[1])) @
                         transposed(y[1]), UPLO == "U")


@tangent(np.linalg.eigh)
def eigh_tangent(dx, y, a, UPLO="L"):
    return results(diagonals(transposed(y[1]) @ seen(dx, UPLO == "U") @ y[1]),
                   y[1] @ gap_product(y[0], transposed(y[1]) @ seen(dx, UPLO == "U") @ y[1]))


@overload(np.linalg.eigh)
def _np_eigh(a, UPLO="L"):
    # numba's np.linalg.eigh takes the matrix alone: this form serves `UPLO=`
    if isinstance(UPLO, (types.Omitted, str)) or UPLO is None:
        return None
    return lambda a, UPLO="L": np.linalg.eigh(seen(a, UPLO == "U"))


# ---- qr ----


@register_jitable
def qr_factors(y, a, mode="reduced"):
    """`y`, the (Q, R) of ``np.linalg.qr(a, mode)``, where mode is 'reduced' and a has
    no more columns than rows; else MissingRule.

    >>> qr_factors((1.0, 2.0), np.ones((3, 2)))
    (1.0, 2.0)
    """
    if mode != "reduced":
        raise MissingRule("np.linalg.qr has a gradient rule for mode='reduced' only")
    if a.shape[-2] < a.shape[-1]:
        raise MissingRule("np.linalg.qr of a wide matrix (more columns than rows) has no "
                          "gradient rule: R's last columns are not determined smoothly")
    return y


@register_jitable
def copyltu(m):
    """The symmetric matrix of `m`'s lower triangle.

    >>> copyltu(np.array([[1.0, 9.0], [2.0, 3.0]]))
    array([[1., 2.],
           [2., 3.]])
    """
    return np.tril(m) + transposed(np.tril(m, -1))


@register_jitable
def skew_lower(c):
    """tril(c, -1) - tril(c, -1)^T.

    >>> skew_lower(np.array([[1.0, 9.0], [2.0, 3.0]]))
    array([[ 0., -2.],
           [ 2.,  0.]])
    """
    return np.tril(c, -1) - transposed(np.tril(c, -1))


@register_jitable
def over(b, r):
    """b r^-1 (for each matrix of a stack).

    >>> over(np.array([[2.0, 4.0]]), np.array([[2.0, 0.0], [0.0, 4.0]]))
    array([[1., 1.]])
    """
    return transposed(np.linalg.solve(transposed(r), transposed(b)))


@rule(np.linalg.qr, results=2)
def qr(dy, y, a, mode="reduced"):
    return transposed(np.linalg.solve(qr_factors(y, a, mode)[1], transposed(
        dy[0] + y[0] @ copyltu(y[1] @ transposed(dy[1]) - transposed(dy[0]) @ y[0]))))


@tangent(np.linalg.qr)
def qr_tangent(dx, y, a, mode="reduced"):
    return results(
        qr_factors(y, a, mode)[0] @ skew_lower(transposed(y[0]) @ over(dx, y[1])) +
        over(dx, y[1]) - y[0] @ (transposed(y[0]) @ over(dx, y[1])),
        (transposed(y[0]) @ over(dx, y[1]) - skew_lower(transposed(y[0]) @ over(dx, y[1]))) @
        y[1])


@overload(np.linalg.qr)
def _np_qr(a, mode="reduced"):
    # numba's np.linalg.qr takes the matrix alone: this form serves mode='reduced'
    if isinstance(mode, types.Omitted) or mode is None:
        return None
    if not (isinstance(mode, types.StringLiteral) and mode.literal_value == "reduced"):
        raise TypingError("srcgrad: np.linalg.qr compiles with mode='reduced' only")
    return lambda a, mode="reduced": np.linalg.qr(a)


# ---- svd ----

_SVD_ONLY = ("np.linalg.svd has a gradient rule with hermitian=False and compute_uv a "
             "constant only")


@register_jitable
def thin_svd(y, a, full_matrices=True, compute_uv=True, hermitian=False):
    """`y`, the (U, s, Vh) of ``np.linalg.svd(a, full_matrices, ...)``, where they are the
    thin factors (full_matrices=False, or a square) and compute_uv=True,
    hermitian=False; else MissingRule.

    >>> thin_svd((1.0, 2.0, 3.0), np.ones((2, 2)))
    (1.0, 2.0, 3.0)
    """
    if not compute_uv or hermitian:
        raise MissingRule(_SVD_ONLY)
    if full_matrices and a.shape[-2] != a.shape[-1]:
        raise MissingRule("np.linalg.svd with full_matrices=True has a gradient rule for "
                          "a square matrix only: call np.linalg.svd(a, full_matrices=False)")
    return y


@rule(np.linalg.svd, results=3)
def svd(dy, y, a, full_matrices=True, compute_uv=True, hermitian=False):
    return (
        thin_svd(y, a, full_matrices, compute_uv, hermitian)[0] @ (
            diag_of(dy[1]) +
            gap_product(y[1] ** 2, transposed(y[0]) @ dy[0] - transposed(dy[0]) @ y[0]) @
            diag_of(y[1]) +
            diag_of(y[1]) @
            gap_product(y[1] ** 2, y[2] @ transposed(dy[2]) - dy[2] @ transposed(y[2]))) @ y[2] +
        (dy[0] - y[0] @ (transposed(y[0]) @ dy[0])) @ diag_of(1.0 / y[1]) @ y[2] +
        y[0] @ diag_of(1.0 / y[1]) @ (dy[2] - (dy[2] @ transposed(y[2])) @ y[2]))


@tangent(np.linalg.svd)
def svd_tangent(dx, y, a, full_matrices=True, compute_uv=True, hermitian=False):
    return results(
        thin_svd(y, a, full_matrices, compute_uv, hermitian)[0] @ gap_product(
            y[1] ** 2, transposed(y[0]) @ dx @ transposed(y[2]) @ diag_of(y[1]) +
            diag_of(y[1]) @ y[2] @ transposed(dx) @ y[0]) +
        (dx @ transposed(y[2]) - y[0] @ (transposed(y[0]) @ dx @ transposed(y[2]))) @
        diag_of(1.0 / y[1]),
        diagonals(transposed(y[0]) @ dx @ transposed(y[2])),
        transposed(gap_product(
            y[1] ** 2, diag_of(y[1]) @ transposed(y[0]) @ dx @ transposed(y[2]) +
            y[2] @ transposed(dx) @ y[0] @ diag_of(y[1]))) @ y[2] +
        diag_of(1.0 / y[1]) @ (transposed(y[0]) @ dx -
                               (transposed(y[0]) @ dx @ transposed(y[2])) @ y[2]))


def _constant(t):
    """The value of an argument's numba type where it is a constant (a literal, an
    omitted default, or the default itself); else None."""
    if isinstance(t, types.Literal):
        return t.literal_value
    if isinstance(t, types.Omitted):
        return t.value
    return t if isinstance(t, (bool, int, float, str)) or t is None else None


@overload(np.linalg.svd)
def _np_svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    # numba's np.linalg.svd takes (a, full_matrices): this form serves compute_uv=True
    # and hermitian=False written out
    if all(isinstance(t, types.Omitted) or t is None for t in (compute_uv, hermitian)):
        return None

    if _constant(compute_uv) is False and not _constant(hermitian):
        return lambda a, full_matrices=True, compute_uv=True, hermitian=False: \
            np.linalg.svd(a, False)[1]
    if isinstance(compute_uv, types.Boolean) and not isinstance(compute_uv, types.Literal):
        raise TypingError("srcgrad: compute_uv of np.linalg.svd must be a constant")

    def given(a, full_matrices=True, compute_uv=True, hermitian=False):
        if not compute_uv or hermitian:
            raise MissingRule(_SVD_ONLY)
        return np.linalg.svd(a, full_matrices)
    return given


# ---- svdvals ----


def singular_sum(d, x):
    """U diag(d) V^T for the thin SVD x = U diag(s) V^T (of each matrix of a stack): the
    gradient of sum(d * svdvals(x)).

    >>> singular_sum(np.array([1.0, 1.0]), np.diag([2.0, -3.0]))
    array([[ 1.,  0.],
           [ 0., -1.]])
    """
    u, _, vh = np.linalg.svd(x, full_matrices=False)
    return (u * np.expand_dims(d, -2)) @ vh


@overload(singular_sum)
def _singular_sum_typer(d, x):
    if not (isinstance(x, types.Array) and x.ndim == 2):
        raise TypingError(_ONE_MATRIX)

    def one(d, x):
        u, _, vh = np.linalg.svd(x, False)
        return (u * d) @ vh
    return one


def singular_sum_slope(d, x, dx):
    """The derivative of ``singular_sum(d, x)`` along dx (`_singular_sum_slope_one`).

    >>> singular_sum_slope(np.ones(2), np.diag([2.0, 1.0]), np.zeros((2, 2)))
    array([[0., 0.],
           [0., 0.]])
    """
    x, dx = np.asarray(x, dtype=float), np.broadcast_to(dx, np.shape(x))
    d = np.broadcast_to(d, x.shape[:-2] + (min(x.shape[-2:]),))
    out = np.empty(x.shape)
    for i in np.ndindex(x.shape[:-2]):
        out[i] = _singular_sum_slope_one(d[i], x[i], dx[i])
    return out


@overload(singular_sum_slope)
def _singular_sum_slope_typer(d, x, dx):
    if not (isinstance(x, types.Array) and x.ndim == 2):
        raise TypingError(_ONE_MATRIX)
    return lambda d, x, dx: _singular_sum_slope_one(d, x, dx)


def svdvals_slope(dx, x):
    """The derivative of ``np.linalg.svdvals(x)`` along dx: ds_i = u_i^T dx v_i.

    >>> svdvals_slope(np.eye(2), np.diag([2.0, 1.0]))
    array([1., 1.])
    """
    u, _, vh = np.linalg.svd(x, full_matrices=False)
    return np.sum(u * (dx @ transposed(vh)), axis=-2)


@overload(svdvals_slope)
def _svdvals_slope_typer(dx, x):
    if not (isinstance(x, types.Array) and x.ndim == 2):
        raise TypingError(_ONE_MATRIX)

    def one(dx, x):
        u, _, vh = np.linalg.svd(x, False)
        return np.sum(u * (dx @ vh.T), axis=0)
    return one


@tangent(singular_sum)
def singular_sum_tangent(dx, y, d, x):
    return singular_sum(dx, x), singular_sum_slope(d, x, dx)


def singular_values(x):
    """``np.linalg.svd(x, compute_uv=False)``: what srcgrad differentiates such a call as
    (the singular values of each matrix of a stack, as np.linalg.svdvals gives them)."""
    return np.linalg.svd(x, compute_uv=False)


@rule(singular_values, *([np.linalg.svdvals] if hasattr(np.linalg, "svdvals") else []))
def svdvals(dy, y, x):
    return singular_sum(dy, x)


@tangent(singular_values, *([np.linalg.svdvals] if hasattr(np.linalg, "svdvals") else []))
def svdvals_tangent(dx, y, x):
    return svdvals_slope(dx, x)


describe(np.linalg.svd, alias=lambda keywords: singular_values
         if keywords.get("compute_uv") is False and not keywords.get("hermitian") else None)


if hasattr(np.linalg, "svdvals"):  # NumPy >= 2.0
    @overload(np.linalg.svdvals)
    def _np_svdvals(x):
        # numba has no np.linalg.svdvals
        return lambda x: np.linalg.svd(x, False)[1]


linear(diag_of, diagonals, gaps, copyltu, skew_lower, qr_factors, thin_svd, svdvals_slope)
describe(results, diag_of, diagonals, gaps, gap_product, qr_factors, copyltu, skew_lower,
         over, thin_svd, singular_sum, singular_sum_slope, svdvals_slope, pure=True)
