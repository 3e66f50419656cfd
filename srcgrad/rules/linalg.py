"""Linear algebra: the records of np.linalg.inv, det and solve, and the helpers their
rules call (each Python form beside its numba form).

With y = inv(a): dy = -y da y, so the adjoint is -y^T dy y^T. With y = det(a):
dy = tr(adj(a) da) (Jacobi's formula), so the adjoint is dy adj(a)^T, with adj(a) = y a^-1
where a is invertible and from the SVD where it is singular (`adjugate`). With y = solve(a, b):
dy = a^-1 (db - da y), so with g = solve(a^T, dy) the adjoints are -g y^T and g. Stacks
of matrices (`a` of shape (..., n, n)) differentiate as Python for inv and det (numba
takes one matrix); solve takes one matrix `a` and a vector or matrix `b`.
"""

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from ..errors import MissingRule
from . import describe, linear, rule, tangent

_ONE_MATRIX = "srcgrad: numba takes one matrix here, not a stack of them"


def transposed(a):
    """`a` with its last two axes swapped: each matrix of a stack transposed.

    >>> transposed(np.arange(6.0).reshape(1, 2, 3)).shape
    (1, 3, 2)
    """
    return np.swapaxes(a, -1, -2)


@overload(transposed)
def _transposed_typer(a):
    if isinstance(a, types.Array) and a.ndim == 2:
        return lambda a: a.T
    raise TypingError(_ONE_MATRIX)


def per_matrix(v):
    """`v`, one number per matrix of a stack, shaped to scale each matrix (..., 1, 1).

    >>> per_matrix(np.array([2.0, 3.0])).shape
    (2, 1, 1)
    """
    return np.asarray(v)[..., None, None]


@overload(per_matrix)
def _per_matrix_typer(v):
    if isinstance(v, (types.Float, types.Integer)):
        return lambda v: v
    raise TypingError(_ONE_MATRIX)


def traces(m):
    """The trace of each matrix of a stack.

    >>> traces(np.ones((2, 3, 3)))
    array([3., 3.])
    """
    return np.trace(m, axis1=-2, axis2=-1)


@overload(traces)
def _traces_typer(m):
    if isinstance(m, types.Array) and m.ndim == 2:
        return lambda m: np.trace(m)
    raise TypingError(_ONE_MATRIX)


@rule(np.linalg.inv)
def inv(dy, y, a):
    return -(transposed(y) @ dy @ transposed(y))


@tangent(np.linalg.inv)
def inv_tangent(dx, y, a):
    return -(y @ dx @ y)


# (the singular values' formula below is for real matrices)
SINGULAR_COMPLEX = "np.linalg.det of a singular complex matrix has no gradient rule"


def adjugate(a, y):
    """The adjugate of each matrix of `a`, whose determinants are `y`: y a^-1 where a is
    invertible, and where it is singular (y = 0), V diag(prod_{j != i} s_j) U^T det(U V^T)
    from a = U diag(s) V^T, the same function's continuous value there.

    >>> adjugate(np.array([[1.0, 2.0], [2.0, 4.0]]), 0.0)
    array([[ 4., -2.],
           [-2.,  1.]])
    """
    a = np.asarray(a, dtype=np.result_type(a, 1.0))
    if np.all(np.asarray(y) != 0):
        return per_matrix(y) * np.linalg.inv(a)
    if np.iscomplexobj(a):
        raise MissingRule(SINGULAR_COMPLEX)
    u, s, vt = np.linalg.svd(a)
    n = s.shape[-1]
    others = np.stack([np.prod(np.delete(s, i, axis=-1), axis=-1) for i in range(n)], -1)
    sign = np.linalg.det(u) * np.linalg.det(vt)
    return per_matrix(sign) * (transposed(vt) * others[..., None, :]) @ transposed(u)


@overload(adjugate)
def _adjugate_typer(a, y):
    if not (isinstance(a, types.Array) and a.ndim == 2):
        raise TypingError(_ONE_MATRIX)
    if isinstance(a.dtype, types.Complex):
        def complex_matrix(a, y):
            if y == 0:
                raise MissingRule(SINGULAR_COMPLEX)
            return y * np.linalg.inv(a)
        return complex_matrix

    def impl(a, y):
        if y != 0:
            return y * np.linalg.inv(a)
        u, s, vt = np.linalg.svd(np.asarray(a, dtype=np.float64))
        n = s.shape[0]
        others = np.ones(n)
        for i in range(n):
            for j in range(n):
                if j != i:
                    others[i] *= s[j]
        sign = np.linalg.det(u) * np.linalg.det(vt)
        return sign * (vt.T * others.reshape((1, n))) @ u.T
    return impl


@rule(np.linalg.det)
def det(dy, y, a):
    return per_matrix(dy) * transposed(adjugate(a, y))


@tangent(np.linalg.det)
def det_tangent(dx, y, a):
    return traces(adjugate(a, y) @ dx)


@tangent(adjugate)
def adjugate_tangent(dx, y, a, det):
    # d(det a^-1) = d(det) a^-1 - det a^-1 da a^-1 (second order at a singular matrix
    # meets the inverse: an error, as before)
    return -(adjugate(a, det) @ dx @ np.linalg.inv(a)), per_matrix(dx) * np.linalg.inv(a)


def columns(v, a, what):
    """`v`, a vector (n,) or matrix (n, k) solved for with the matrix `a`, as a matrix of
    columns: (n, 1) or (n, k). `what` names the solver (np.linalg.solve, scipy.linalg's
    solve and cho_solve), which has no gradient rule for a stack of matrices `a`.

    >>> columns(np.ones(2), np.eye(2), "np.linalg.solve").shape
    (2, 1)
    """
    if np.ndim(a) != 2:
        raise MissingRule(f"{what} of a stack of matrices has no gradient rule: "
                          "solve with one matrix at a time")
    return np.reshape(v, (np.shape(v)[0], -1))


@overload(columns)
def _columns_typer(v, a, what):
    if not (isinstance(a, types.Array) and a.ndim == 2):
        raise TypingError(_ONE_MATRIX)
    return lambda v, a, what: np.ascontiguousarray(v).reshape(v.shape[0], -1)


@rule(np.linalg.solve)
def solve(dy, y, a, b):
    return (-(columns(np.linalg.solve(transposed(a), dy), a, "np.linalg.solve") @
              transposed(columns(y, a, "np.linalg.solve"))),
            np.linalg.solve(transposed(a), dy))


@tangent(np.linalg.solve)
def solve_tangent(dx, y, a, b):
    return (-np.reshape(np.linalg.solve(a, dx @ columns(y, a, "np.linalg.solve")),
                        np.shape(y)),
            np.linalg.solve(a, dx))


linear(columns)
linear(transposed, per_matrix, traces)
describe(transposed, per_matrix, traces, columns, adjugate, pure=True)
# a rule's gradients that solve or invert with the same operands twice do it once
describe(np.linalg.solve, np.linalg.inv, once=True)
