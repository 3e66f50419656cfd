"""Linear algebra: the records of np.linalg.inv, det and solve, and the helpers their
rules call (each Python form beside its numba form).

With y = inv(a): dy = -y da y, so the adjoint is -y^T dy y^T. With y = det(a):
dy = y tr(a^-1 da) (Jacobi's formula), so the adjoint is dy y a^-T. With y = solve(a, b):
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


@rule(np.linalg.det)
def det(dy, y, a):
    return per_matrix(dy * y) * transposed(np.linalg.inv(a))


@tangent(np.linalg.det)
def det_tangent(dx, y, a):
    return y * traces(np.linalg.inv(a) @ dx)


def columns(v, a):
    """`v`, a vector (n,) or matrix (n, k) solved for with the matrix `a`, as a matrix of
    columns: (n, 1) or (n, k). A stack of matrices `a` has no gradient rule in solve.

    >>> columns(np.ones(2), np.eye(2)).shape
    (2, 1)
    """
    if np.ndim(a) != 2:
        raise MissingRule("np.linalg.solve of a stack of matrices has no gradient rule: "
                          "solve one matrix at a time")
    return np.reshape(v, (np.shape(v)[0], -1))


@overload(columns)
def _columns_typer(v, a):
    if not (isinstance(a, types.Array) and a.ndim == 2):
        raise TypingError(_ONE_MATRIX)
    return lambda v, a: np.ascontiguousarray(v).reshape(v.shape[0], -1)


@rule(np.linalg.solve)
def solve(dy, y, a, b):
    return (-(columns(np.linalg.solve(transposed(a), dy), a) @ transposed(columns(y, a))),
            np.linalg.solve(transposed(a), dy))


@tangent(np.linalg.solve)
def solve_tangent(dx, y, a, b):
    return (-np.reshape(np.linalg.solve(a, dx @ columns(y, a)), np.shape(y)),
            np.linalg.solve(a, dx))


linear(columns)
linear(transposed, per_matrix, traces)
describe(transposed, per_matrix, traces, columns, pure=True)
