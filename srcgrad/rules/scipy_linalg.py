"""scipy.linalg: the records of solve_triangular and expm, their adjoints' helpers, and
their numba forms.

y = op(a)^-1 b, op(a) = a or a^T (`trans`), reads one triangle of a (the lower with
``lower=True``), and not its diagonal with ``unit_diagonal=True``. Then db = op(a)^-T dy
(one more triangular solve, with the other `trans`) and d op(a) = -db y^T, kept on the
entries read (the others have no effect: their gradient is 0). Forward mode: dy =
op(a)^-1 (db - op(da) y), da kept on the entries read. ``overwrite_b=True`` is refused
(the solve may write into b).

expm: its derivative at a along e is the Fréchet derivative L(a, e), the upper-right block
of expm([[a, e], [0, a]]) (Mathias 1996; Higham, Functions of Matrices, 3.2). The
tangent is L(a, da); the adjoint of dy is L(a^T, dy) (L(a, .)'s adjoint is L(a^T, .)).
Python computes L with scipy.linalg.expm_frechet; the numba form computes expm by
scaling and squaring with the degree-13 Padé approximant (Higham 2005) and L by the block
matrix. Real square matrices only.
"""

import llvmlite.binding as ll
import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import get_cython_function_address, overload, register_jitable
from scipy.linalg import expm, expm_frechet, solve_triangular

from . import describe, real_only, rule, tangent
from .matrix_chains import block_upper

NEEDS = ("scipy.linalg",)   # SciPy modules this imports (rules/__init__)

_TRANS = "scipy.linalg.solve_triangular compiles with trans 0 or 1 (a number), not a string"


def _transposes(trans) -> bool:
    return trans in (1, 2, "T", "C")


@register_jitable
def _read(m, lower, unit_diagonal):
    """The entries of m that solve_triangular reads, the others 0."""
    kept = np.tril(m) if lower else np.triu(m)
    if unit_diagonal:
        kept = kept - np.diag(np.diag(kept))
    return kept


@register_jitable
def _grads(dy, y, a, t, lower, unit_diagonal):
    n = a.shape[0]
    db = solve_triangular(a, dy, 0 if t else 1, lower, unit_diagonal)
    g = -(np.ascontiguousarray(db).reshape((n, -1)) @
          np.ascontiguousarray(y).reshape((n, -1)).T)
    return _read(g.T if t else g, lower, unit_diagonal), db


def triangular_grads(dy, y, a, b, trans=0, lower=False, unit_diagonal=False):
    """The gradients of dy . solve_triangular(a, b, trans, lower, unit_diagonal) in a and
    b (y is that solve).

    >>> triangular_grads(np.ones(2), np.array([1.0, 1.0]), 2.0 * np.eye(2), None, lower=True)
    (array([[-0.5,  0. ],
           [-0.5, -0.5]]), array([0.5, 0.5]))
    """
    return _grads(dy, y, a, _transposes(trans), lower, unit_diagonal)


@overload(triangular_grads)
def _triangular_grads_typer(dy, y, a, b, trans=0, lower=False, unit_diagonal=False):
    if isinstance(trans, (types.UnicodeType, types.StringLiteral)):
        raise TypingError(f"srcgrad: {_TRANS}")
    return lambda dy, y, a, b, trans=0, lower=False, unit_diagonal=False: _grads(
        dy, y, a, trans != 0, lower, unit_diagonal)


def read_product(da, y, trans=0, lower=False, unit_diagonal=False):
    """op(da) y, da kept on the entries solve_triangular reads: how its value moves
    along da, before the solve."""
    kept = _read(da, lower, unit_diagonal)
    return (kept.T if _transposes(trans) else kept) @ y


@overload(read_product)
def _read_product_typer(da, y, trans=0, lower=False, unit_diagonal=False):
    if isinstance(trans, (types.UnicodeType, types.StringLiteral)):
        raise TypingError(f"srcgrad: {_TRANS}")

    def impl(da, y, trans=0, lower=False, unit_diagonal=False):
        kept = _read(da, lower, unit_diagonal)
        return np.ascontiguousarray(kept.T if trans != 0 else kept) @ y
    return impl


@rule(solve_triangular, refuse=lambda keywords: "overwrite_b=True lets the solve write into "
      "b: pass a copy" if keywords.get("overwrite_b") else None)
def solve_triangular_rule(dy, y, a, b, trans=0, lower=False, unit_diagonal=False,
                          overwrite_b=False, check_finite=True):
    return triangular_grads(dy, y, a, b, trans, lower, unit_diagonal)


@tangent(solve_triangular)
def solve_triangular_tangent(dx, y, a, b, trans=0, lower=False, unit_diagonal=False,
                             overwrite_b=False, check_finite=True):
    return (-solve_triangular(a, read_product(dx, y, trans, lower, unit_diagonal), trans, lower,
                              unit_diagonal),
            solve_triangular(a, dx, trans, lower, unit_diagonal))


describe(triangular_grads, read_product, pure=True)


# ---- the numba form: BLAS's triangular solve (trsm) ----

_TRSM = "srcgrad_blas_dtrsm"
ll.add_symbol(_TRSM, get_cython_function_address("scipy.linalg.cython_blas", "dtrsm"))
_dtrsm = types.ExternalFunction(_TRSM, types.void(*[types.voidptr] * 11))


@register_jitable
def _substitute(a, b, t, lower, unit_diagonal):
    """x with op(a) x = b, for b of shape (n, m). BLAS's column order sees C-ordered a as
    a^T and b as b^T, so it solves x^T op(a)^T = b^T, with a from the right."""
    n, m = b.shape
    out = np.ascontiguousarray(b).astype(np.float64)
    if n == 0 or m == 0:
        return out
    seen = np.ascontiguousarray(a).astype(np.float64)
    side, uplo = np.array([ord("R")], np.uint8), np.array([ord("U" if lower else "L")], np.uint8)
    trans = np.array([ord("T" if t else "N")], np.uint8)
    diag = np.array([ord("U" if unit_diagonal else "N")], np.uint8)
    rows, cols = np.array([m], np.int32), np.array([n], np.int32)
    one = np.ones(1)
    _dtrsm(side.ctypes, uplo.ctypes, trans.ctypes, diag.ctypes, rows.ctypes, cols.ctypes,
           one.ctypes, seen.ctypes, cols.ctypes, out.ctypes, rows.ctypes)
    return out


@overload(solve_triangular)
def _solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                      check_finite=True):
    if not (isinstance(a, types.Array) and a.ndim == 2 and isinstance(b, types.Array)
            and b.ndim in (1, 2)):
        return None
    if isinstance(trans, (types.UnicodeType, types.StringLiteral)):
        raise TypingError(f"srcgrad: {_TRANS}")

    def impl(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
             check_finite=True):
        if a.shape[0] != a.shape[1] or b.shape[0] != a.shape[0]:
            raise ValueError("solve_triangular: a must be square and b have its rows")
        rows = np.ascontiguousarray(b).astype(np.float64).reshape((a.shape[0], -1))
        return _substitute(a, rows, trans != 0, lower, unit_diagonal).reshape(b.shape)
    return impl
real_only(solve_triangular)   # (trans="C" conjugates: rules/complex_numbers.py)


# ---- expm: its adjoint and tangent, and its numba form ----

def expm_direction(a, e):
    """L(a, e): the derivative of expm at a along e.

    >>> expm_direction(np.zeros((1, 1)), np.ones((1, 1)))
    array([[1.]])
    """
    return expm_frechet(np.asarray(a, np.float64), np.asarray(e, np.float64),
                        compute_expm=False)


@rule(expm)
def expm_rule(dy, y, A):
    return expm_direction(A.T, dy)


@tangent(expm)
def expm_tangent(dx, y, A):
    return expm_direction(A, dx)


@register_jitable
def expm_direction_along(a, e, da):
    """How L(a, e) moves along da: the upper-right block of L(M, [[da, 0], [0, da]]),
    M = [[a, e], [0, a]] (L(a, e) is that block of expm(M)); L is linear in e."""
    n = a.shape[0]
    moved = expm_direction(block_upper(a, e), block_upper(da, np.zeros_like(da)))
    return np.ascontiguousarray(moved[:n, n:])


@tangent(expm_direction)
def expm_direction_tangent(dx, y, a, e):
    # (forward mode through the rules above: hvp, grad of jvp)
    return expm_direction_along(a, e, dx), expm_direction(a, dx)


describe(expm_direction, expm_direction_along, pure=True)

# Padé 13 coefficients and the 1-norm up to which it is accurate unscaled (Higham 2005)
_PADE13 = np.array([64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
                    1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
                    33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0])
_THETA13 = 5.371920351148152


@register_jitable
def _expm(a):
    """expm(a) by scaling and squaring with the degree-13 Padé approximant."""
    n = a.shape[0]
    m = np.ascontiguousarray(a).astype(np.float64)
    if n == 0:
        return m
    norm = np.max(np.sum(np.abs(m), axis=0))
    s = 0
    if norm > _THETA13:
        s = int(np.ceil(np.log2(norm / _THETA13)))
    m = m / 2.0 ** s
    b = _PADE13
    eye = np.eye(n)
    m2 = m @ m
    m4 = m2 @ m2
    m6 = m4 @ m2
    u = m @ (m6 @ (b[13] * m6 + b[11] * m4 + b[9] * m2)
             + b[7] * m6 + b[5] * m4 + b[3] * m2 + b[1] * eye)
    v = m6 @ (b[12] * m6 + b[10] * m4 + b[8] * m2) + b[6] * m6 + b[4] * m4 + b[2] * m2 \
        + b[0] * eye
    r = np.ascontiguousarray(np.linalg.solve(v - u, v + u))
    for _ in range(s):
        r = r @ r
    return r


@register_jitable
def _expm_direction(a, e):
    return np.ascontiguousarray(_expm(block_upper(a, e))[:a.shape[0], a.shape[0]:])


def _square(a):
    return isinstance(a, types.Array) and a.ndim == 2 and \
        isinstance(a.dtype, (types.Float, types.Integer))


@overload(expm)
def _expm_typer(A):
    if not _square(A):
        return None

    def impl(A):
        if A.shape[0] != A.shape[1]:
            raise ValueError("expm: the matrix must be square")
        return _expm(A)
    return impl


@overload(expm_direction)
def _expm_direction_typer(a, e):
    if not (_square(a) and _square(e)):
        return None

    def impl(a, e):
        if a.shape[0] != a.shape[1] or e.shape != a.shape:
            raise ValueError("expm: the matrix must be square")
        return _expm_direction(a, e)
    return impl


real_only(expm)
