"""np.linalg.lstsq: its record (the `results` fact: the call gives (x, residuals, rank,
sv)), the helpers its rules call, and the numba form of the call with rcond=None.

For a of full column rank (no more columns than rows, rank = columns), x = pinv(a) b =
(a^T a)^-1 a^T b and the residuals are the column sums of r^2, r = b - a x. Then
dx = (a^T a)^-1 (da^T r - a^T da x + a^T db), and, since a^T r = 0, d res = 2 r^T (db -
da x) per column. The adjoint, with w = pinv(a^T) dx_bar and z = pinv(a) w
((a^T a)^-1 dx_bar): b_bar = w + 2 r res_bar, a_bar = r z^T - w x^T - 2 (r res_bar) x^T.
Both apply (a^T a)^-1 = m^-1 m^-T through a's QR factors (a = q m), never a^T a, whose
condition number is squared.
The singular values are those of a (ds_i = u_i^T da v_i, a_bar = U diag(s_bar) V^T);
the rank has none. A rank-deficient or wide a is refused at run time: x is then the
minimum-norm solution, whose derivative this record does not give.
"""

import numpy as np
from numba import types
from numba.extending import overload, register_jitable

from ..errors import MissingRule
from . import describe, linear, rule, tangent
from .linalg import transposed

_FULL_RANK = ("np.linalg.lstsq has a gradient rule for a matrix of full column rank only "
              "(no more columns than rows, and rank = columns): the minimum-norm solution "
              "of a rank-deficient or wide system is not differentiated")


@register_jitable
def lstsq_checked(y, a):
    """`y`, the result of ``np.linalg.lstsq(a, b)``, where a has full column rank; else
    MissingRule.

    >>> lstsq_checked((1.0, 2.0, 2, 3.0), np.eye(2))
    (1.0, 2.0, 2, 3.0)
    """
    if a.shape[0] < a.shape[1] or y[2] < a.shape[1]:
        raise MissingRule(_FULL_RANK)
    return y


def columns(v):
    """`v` as a matrix: a vector is one column.

    >>> columns(np.array([1.0, 2.0])).shape
    (2, 1)
    """
    return np.reshape(v, (np.shape(v)[0], -1))


@overload(columns)
def _columns_typer(v):
    if isinstance(v, types.Array) and v.ndim == 1:
        return lambda v: np.ascontiguousarray(v).reshape((v.shape[0], 1))
    return lambda v: v


@register_jitable
def lstsq_grads(dy, y, a, b):
    """The gradients of a and b of ``y = np.linalg.lstsq(a, b)``, dy the cotangents of
    (x, residuals, rank, sv)."""
    x = columns(lstsq_checked(y, a)[0])
    r = columns(b) - a @ x
    q, m = np.linalg.qr(a)
    v = np.linalg.solve(transposed(m), columns(dy[0]))
    w = q @ v
    z = np.linalg.solve(m, v)
    da = r @ transposed(z) - w @ transposed(x)
    db = w
    if dy[1].size > 0:
        rs = r * dy[1]
        da = da - 2.0 * (rs @ transposed(x))
        db = db + 2.0 * rs
    if np.any(dy[3] != 0.0):
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        da = da + (u * dy[3]) @ vh
    return da, np.reshape(db, np.shape(b))


@register_jitable
def lstsq_along_a(da, y, a, b):
    """The tangent of ``y = np.linalg.lstsq(a, b)`` along da, the tangent of a."""
    x = columns(lstsq_checked(y, a)[0])
    r = columns(b) - a @ x
    dax = da @ x
    q, m = np.linalg.qr(a)
    dx = np.linalg.solve(m, np.linalg.solve(transposed(m), transposed(da) @ r) -
                         transposed(q) @ dax)
    if y[1].size > 0:
        dres = -2.0 * np.sum(r * dax, axis=0)
    else:
        dres = y[1] * 0.0
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.reshape(dx, np.shape(y[0])), dres, 0, np.sum(u * (da @ transposed(vh)), axis=0)


@register_jitable
def lstsq_along_b(db, y, a, b):
    """The tangent of ``y = np.linalg.lstsq(a, b)`` along db, the tangent of b."""
    x = columns(lstsq_checked(y, a)[0])
    dx = np.linalg.lstsq(a, columns(db))[0]
    if y[1].size > 0:
        dres = 2.0 * np.sum((columns(b) - a @ x) * columns(db), axis=0)
    else:
        dres = y[1] * 0.0
    return np.reshape(dx, np.shape(y[0])), dres, 0, y[3] * 0.0


@rule(np.linalg.lstsq, results=4)
def lstsq(dy, y, a, b, rcond=None):
    return lstsq_grads(dy, y, a, b)


@tangent(np.linalg.lstsq)
def lstsq_tangent(dx, y, a, b, rcond=None):
    return lstsq_along_a(dx, y, a, b), lstsq_along_b(dx, y, a, b)


@overload(np.linalg.lstsq)
def _np_lstsq(a, b, rcond=None):
    # numba's np.linalg.lstsq takes a number for rcond: this form serves NumPy's default
    if not isinstance(rcond, types.NoneType):
        return None
    return lambda a, b, rcond=None: np.linalg.lstsq(a, b)


@tangent(lstsq_checked)
def lstsq_checked_tangent(dx, y, yv, a):
    return dx, None


linear(columns)
describe(lstsq_checked, columns, lstsq_grads, lstsq_along_a, lstsq_along_b, pure=True)
