"""scipy.linalg's sqrtm under differentiation (`rules/scipy_linalg_gaps2.py`), and the
stand-ins of scipy.stats.betabinom's logpmf and pmf (`rules/scipy_gaps2.py`), which
compiled code calls in object mode: the
derivative of y = sqrtm(a) along e solves y dy + dy y = e, a Sylvester equation, which
scipy.linalg.solve_sylvester solves (compiled code calls it in object mode: numba has no
form of it). A complex root (of a matrix with a negative or complex eigenvalue) is refused:
a real matrix's root is differentiated where it is real.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.stats
from numba import objmode, types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from ..errors import MissingRule
from ..numba_ext import _OBJECT_MODE as OBJECT_MODE

_COMPLEX = ("scipy.linalg.sqrtm's root is complex here (the matrix has a negative or "
            "complex eigenvalue): its gradient is differentiated for real roots only")


def sqrtm_direction(y, e):
    """The derivative of sqrtm at y @ y along e: x with y x + x y = e.

    >>> sqrtm_direction(2.0 * np.eye(2), np.eye(2))
    array([[0.25, 0.  ],
           [0.  , 0.25]])
    """
    if np.iscomplexobj(y) or np.iscomplexobj(e):
        raise MissingRule(_COMPLEX)
    return scipy.linalg.solve_sylvester(y, y, e)


@overload(scipy.linalg.solve_sylvester)
def _solve_sylvester_typer(a, b, q):
    """SciPy's solve_sylvester called in object mode, for real matrices of any layout
    (`numba_ext.object_mode` types a call on C-ordered ones only: an adjoint passes
    transposes)."""
    if not all(isinstance(t, types.Array) and t.ndim == 2 and isinstance(t.dtype, types.Float)
               for t in (a, b, q)):
        return None

    def impl(a, b, q):
        with objmode(x="float64[:, ::1]"):
            x = np.ascontiguousarray(scipy.linalg.solve_sylvester(a, b, q), np.float64)
        return x
    return impl


OBJECT_MODE.add(id(scipy.linalg.solve_sylvester))   # (this form, not numba_ext's)


def real_root(a):
    """sqrtm(a), refused where it is complex: what compiled code calls in object mode."""
    y = scipy.linalg.sqrtm(a)
    if np.iscomplexobj(y):
        raise MissingRule(_COMPLEX)
    return np.ascontiguousarray(y, np.float64)


@overload(scipy.linalg.sqrtm)
def _sqrtm_typer(A, disp=True, blocksize=64):
    if not (isinstance(A, types.Array) and A.ndim == 2 and isinstance(A.dtype, types.Float)):
        return None

    def impl(A, disp=True, blocksize=64):
        with objmode(y="float64[:, ::1]"):
            y = real_root(A)
        return y
    return impl


OBJECT_MODE.add(id(scipy.linalg.sqrtm))


@overload(sqrtm_direction)
def _sqrtm_direction_typer(y, e):
    if any(isinstance(t, types.Array) and isinstance(t.dtype, types.Complex) for t in (y, e)):
        raise TypingError(f"srcgrad: {_COMPLEX}")
    return lambda y, e: scipy.linalg.solve_sylvester(y, y, e)


@register_jitable
def pivoted_rows(piv):
    """The rows of a in the order lu_factor's pivots `piv` put them (row i swapped with
    row piv[i], in turn): a[pivoted_rows(piv)] = L U.

    >>> pivoted_rows(np.array([1, 1]))
    array([1, 0])
    """
    order = np.arange(piv.shape[0])
    for i in range(piv.shape[0]):
        j = piv[i]
        order[i], order[j] = order[j], order[i]
    return order


# ---- scipy.stats.betabinom: its stand-ins, which compiled code runs in object mode ----


def betabinom_logpmf(k, n, a, b, loc=0):
    """scipy.stats.betabinom.logpmf, as generated code calls it."""
    return scipy.stats.betabinom.logpmf(k, n, a, b, loc)


def betabinom_pmf(k, n, a, b, loc=0):
    """scipy.stats.betabinom.pmf, as generated code calls it."""
    return scipy.stats.betabinom.pmf(k, n, a, b, loc)


def _in_object_mode(fun):
    """An overload of `fun` (real numbers and arrays) that calls it in object mode: its
    result a float64 of the arguments' broadcast dimensions."""
    def typer(k, n, a, b, loc=0):
        args = (k, n, a, b) if isinstance(loc, (types.Omitted, int)) else (k, n, a, b, loc)
        if not all(isinstance(t, (types.Number, types.Boolean)) or isinstance(t, types.Array)
                   and isinstance(t.dtype, (types.Integer, types.Float)) for t in args):
            return None
        ndim = max(t.ndim if isinstance(t, types.Array) else 0 for t in args)
        result = types.float64 if ndim == 0 else types.Array(types.float64, ndim, "C")

        def impl(k, n, a, b, loc=0):
            with objmode(y=result):
                y = fun(k, n, a, b, loc)
                y = np.ascontiguousarray(y, np.float64) if np.ndim(y) else float(y)
            return y
        return impl
    overload(fun)(typer)


_in_object_mode(betabinom_logpmf)
_in_object_mode(betabinom_pmf)
