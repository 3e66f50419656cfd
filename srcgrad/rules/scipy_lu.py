"""scipy.linalg's LU family: the records of lu_factor and lu_solve, the row permutations
their rules use, and their numba forms (numba has none).

lu_factor(a) gives ``(lu, piv)``: with the rows of a swapped as piv says (row i with row
piv[i], in turn: `pivot`), a_p = L U, L unit lower triangular (below lu's diagonal) and U
upper (on and above it). The factors move as a_p does (dL U + L dU = da_p), so with
X = L^-1 da_p U^-1, dL = L tril(X, -1) and dU = triu(X) U (forward mode), and the adjoint
of that map sends lu's gradient (L's below the diagonal, U's on and above it) to
a_p's L^-T (tril(L^T dL, -1) + triu(dU U^T)) U^-T (JAX's lu jvp, transposed), which
`unpivot` gives back to a's rows. lu is the factorisation cho_factor's c is: a value with
a gradient of its own, so sums of lu differentiate too. piv has no gradient.

y = lu_solve((lu, piv), b, trans) solves m y = b with m = a (trans=0) or a^T (1, 2: real
values only): g = m^-T dy (one more lu_solve, with the other trans) is b's gradient, m
gets -g y^T, a gets that or its transpose (`system_grad`), and lu gets what the product
L U makes of it: tril(a_p' U^T, -1) + triu(L^T a_p'), a_p' being a's gradient pivoted.
Square matrices only; stacks of matrices, and the keywords that let SciPy write into an
argument, are refused.
"""

import llvmlite.binding as ll
import numpy as np
import scipy.linalg
from numba import types
from numba.core.errors import TypingError
from numba.extending import get_cython_function_address, overload, register_jitable
from scipy.linalg import solve_triangular

from ..errors import MissingRule
from . import describe, linear, real_only, rule, tangent
from .factorizations import results
from .linalg import columns
from .linalg import transposed as swapped
from .scipy_cholesky import _one_matrix, _overwrites, system, system_grad

NEEDS = ("scipy.linalg",)   # SciPy modules this imports (rules/__init__)


@register_jitable
def _rows(piv):
    """The order of a's rows in the matrix L U that lu_factor's pivots `piv` stand for."""
    order = np.arange(piv.shape[0])
    for i in range(piv.shape[0]):
        j = piv[i]
        order[i], order[j] = order[j], order[i]
    return order


def unit_lower(lu):
    """L, the unit lower triangular factor that lu_factor's `lu` holds below its diagonal.

    >>> unit_lower(np.array([[4.0, 3.0], [0.25, 1.25]]))
    array([[1.  , 0.  ],
           [0.25, 1.  ]])
    """
    if np.ndim(lu) != 2 or np.shape(lu)[0] != np.shape(lu)[1]:
        raise MissingRule("scipy.linalg.lu_factor and lu_solve have gradient rules for one "
                          "square matrix only: factor one square matrix at a time")
    return np.tril(lu, -1) + np.eye(np.shape(lu)[0])


@overload(unit_lower)
def _unit_lower_typer(lu):
    _one_matrix(lu)

    def impl(lu):
        if lu.shape[0] != lu.shape[1]:
            raise ValueError("srcgrad: scipy.linalg.lu_factor's gradient needs a square matrix")
        return np.tril(lu, -1) + np.eye(lu.shape[0])
    return impl


@tangent(unit_lower)
def unit_lower_tangent(dx, y, lu):
    return np.tril(dx, -1)


def pivot(m, piv):
    """`m`'s rows in the order lu_factor's pivots `piv` put a's in (a_p = L U).

    >>> pivot(np.array([[1.0, 0.0], [2.0, 5.0]]), np.array([1, 1]))
    array([[2., 5.],
           [1., 0.]])
    """
    return np.asarray(m)[_rows(piv)]


def unpivot(m, piv):
    """The rows of `m` put back where `pivot` took them from (its inverse, and adjoint).

    >>> unpivot(np.array([[2.0, 5.0], [1.0, 0.0]]), np.array([1, 1]))
    array([[1., 0.],
           [2., 5.]])
    """
    out = np.zeros_like(m)
    out[_rows(piv)] = m
    return out


@overload(pivot)
def _pivot_typer(m, piv):
    return lambda m, piv: np.ascontiguousarray(m[_rows(piv)])


@overload(unpivot)
def _unpivot_typer(m, piv):
    def impl(m, piv):
        out = np.zeros_like(m)
        out[_rows(piv)] = m
        return out
    return impl


linear(pivot, unpivot, positions=(0,))
describe(pivot, unpivot, unit_lower, pure=True)


# ---- lu_factor ----


@rule(scipy.linalg.lu_factor, results=2, refuse=_overwrites)
def lu_factor(dy, y, a, overwrite_a=False, check_finite=True):
    return unpivot(swapped(solve_triangular(y[0], swapped(solve_triangular(
        y[0], np.tril(swapped(unit_lower(y[0])) @ np.tril(dy[0], -1), -1) +
        np.triu(np.triu(dy[0]) @ swapped(np.triu(y[0]))), 1, True, True)), 0, False)), y[1])


@tangent(scipy.linalg.lu_factor)
def lu_factor_tangent(dx, y, a, overwrite_a=False, check_finite=True):
    return results(
        unit_lower(y[0]) @ np.tril(swapped(solve_triangular(y[0], swapped(solve_triangular(
            y[0], pivot(dx, y[1]), 0, True, True)), 1, False)), -1) +
        np.triu(swapped(solve_triangular(y[0], swapped(solve_triangular(
            y[0], pivot(dx, y[1]), 0, True, True)), 1, False))) @ np.triu(y[0]),
        y[1])


# LAPACK's getrf, as SciPy's lu_factor calls it (the same pivots and factors)
_GETRF = "srcgrad_lapack_dgetrf"
ll.add_symbol(_GETRF, get_cython_function_address("scipy.linalg.cython_lapack", "dgetrf"))
_dgetrf = types.ExternalFunction(_GETRF, types.void(*[types.voidptr] * 6))


@register_jitable
def _getrf(a):
    n = a.shape[0]
    if a.shape[1] != n:
        raise ValueError("srcgrad: scipy.linalg.lu_factor compiles for square matrices only")
    # C-ordered a.T is a in LAPACK's column order, and its factors read back transposed
    f = np.ascontiguousarray(np.asarray(a, dtype=np.float64).T)
    ipiv, size, info = np.zeros(n, np.int32), np.array([n], np.int32), np.zeros(1, np.int32)
    if n > 0:
        _dgetrf(size.ctypes, size.ctypes, f.ctypes, size.ctypes, ipiv.ctypes, info.ctypes)
    if info[0] < 0:
        raise ValueError("scipy.linalg.lu_factor: illegal value in getrf")
    return np.ascontiguousarray(f.T), ipiv - np.int32(1)


@overload(scipy.linalg.lu_factor)
def _lu_factor(a, overwrite_a=False, check_finite=True):
    _one_matrix(a)
    return lambda a, overwrite_a=False, check_finite=True: _getrf(a)


# ---- lu_solve ----


@rule(scipy.linalg.lu_solve, refuse=_overwrites)
def lu_solve(dy, y, lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    return ((np.tril(pivot(system_grad(-(columns(
        scipy.linalg.lu_solve(lu_and_piv, dy, int(trans == 0)), lu_and_piv[0],
        "scipy.linalg.lu_solve") @ swapped(columns(y, lu_and_piv[0], "scipy.linalg.lu_solve"))),
        transpose=trans != 0), lu_and_piv[1]) @ swapped(np.triu(lu_and_piv[0])), -1) +
        np.triu(swapped(unit_lower(lu_and_piv[0])) @
                pivot(system_grad(-(columns(
                    scipy.linalg.lu_solve(lu_and_piv, dy, int(trans == 0)), lu_and_piv[0],
                    "scipy.linalg.lu_solve") @
                    swapped(columns(y, lu_and_piv[0], "scipy.linalg.lu_solve"))),
                    transpose=trans != 0), lu_and_piv[1])), 0.0),
        scipy.linalg.lu_solve(lu_and_piv, dy, int(trans == 0)))


@tangent(scipy.linalg.lu_solve)
def lu_solve_tangent(dx, y, lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    return (-scipy.linalg.lu_solve(lu_and_piv, np.reshape(system(unpivot(
        np.tril(dx[0], -1) @ np.triu(lu_and_piv[0]) +
        unit_lower(lu_and_piv[0]) @ np.triu(dx[0]),
        lu_and_piv[1]), transpose=trans != 0) @
        columns(y, lu_and_piv[0], "scipy.linalg.lu_solve"), np.shape(y)), trans),
        scipy.linalg.lu_solve(lu_and_piv, dx, trans))


@overload(scipy.linalg.lu_solve)
def _lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    if not isinstance(lu_and_piv, types.BaseTuple):
        return None
    _one_matrix(lu_and_piv[0])
    if isinstance(trans, (types.UnicodeType, types.StringLiteral)):
        raise TypingError("srcgrad: scipy.linalg.lu_solve compiles with trans 0, 1 or 2")

    def impl(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
        lu, piv = lu_and_piv
        rhs = np.asarray(b, dtype=np.float64)
        if trans == 0:
            return solve_triangular(lu, solve_triangular(lu, pivot(rhs, piv), 0, True, True),
                                    0, False)
        return unpivot(solve_triangular(lu, solve_triangular(lu, rhs, 1, False), 1, True, True),
                       piv)
    return impl


# (complex values: trans=2 conjugates, rules/complex_numbers.py)
real_only(scipy.linalg.lu_factor, scipy.linalg.lu_solve)
# (both arguments' gradients solve with dy: once, `inline.shared`)
describe(scipy.linalg.lu_solve, once=True)
