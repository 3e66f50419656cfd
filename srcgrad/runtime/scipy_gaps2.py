"""scipy.linalg's sqrtm under differentiation (`rules/scipy_linalg_gaps2.py`): the
derivative of y = sqrtm(a) along e solves y dy + dy y = e, a Sylvester equation, which
scipy.linalg.solve_sylvester solves (compiled code calls it in object mode: numba has no
form of it). A complex root (of a matrix with a negative or complex eigenvalue) is refused:
a real matrix's root is differentiated where it is real.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
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
