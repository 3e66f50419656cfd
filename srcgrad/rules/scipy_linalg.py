"""scipy.linalg: the record of solve_triangular, its adjoint's helper, and its numba form.

y = op(a)^-1 b, op(a) = a or a^T (`trans`), reads one triangle of a (the lower with
``lower=True``), and not its diagonal with ``unit_diagonal=True``. Then db = op(a)^-T dy
(one more triangular solve, with the other `trans`) and d op(a) = -db y^T, kept on the
entries read (the others have no effect: their gradient is 0). Forward mode: dy =
op(a)^-1 (db - op(da) y), da kept on the entries read. ``overwrite_b=True`` is refused
(the solve may write into b).
"""

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from scipy.linalg import solve_triangular

from . import describe, real_only, rule, tangent

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


# ---- the numba form: substitution, forward or backward as op(a) is lower or upper ----


@register_jitable
def _substitute(a, b, t, lower, unit_diagonal):
    """x with op(a) x = b, for b of shape (n, m)."""
    n, m = b.shape
    out = np.empty((n, m))
    forward = lower != t
    for j in range(m):
        for step in range(n):
            i = step if forward else n - 1 - step
            lo, hi = (0, i) if forward else (i + 1, n)
            s = b[i, j]
            for k in range(lo, hi):
                s -= (a[k, i] if t else a[i, k]) * out[k, j]
            out[i, j] = s if unit_diagonal else s / a[i, i]
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
