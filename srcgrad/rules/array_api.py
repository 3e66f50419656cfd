"""NumPy 2's array-API functions (np.linalg.vector_norm, matrix_norm, vecdot, matmul, outer,
tensordot, diagonal, trace, cross, matrix_transpose; np.vecdot, np.matrix_transpose,
np.matvec, np.vecmat, np.cumulative_sum, np.cumulative_prod): each is the NumPy function
it computes with other defaults, so `normalize` writes every call as that function (the
records' `expanded`) and its rule differentiates it. They exist from NumPy 2.0 (matvec and
vecmat from 2.2): a name this NumPy lacks has no record.

matrix_norm takes one matrix (np.linalg.norm of a stack of them raises). What the two
spellings compute differently is refused, not approximated: vector_norm's
axis= must be an int (np.linalg.norm over a tuple of two axes is a matrix norm), and
keepdims=True without it, and cumulative_sum's include_initial=True are refused at the
call's line; a dtype= is passed on to the function it is written as.
"""

import numpy as np

from ..errors import RuleError
from . import NOT_CONSTANT, describe


def _written(name, source):
    """A record's `expanded`: every call as `source`, which names the call's options."""
    def expanded(given):
        return source
    expanded.__name__ = name
    return expanded


def _vector_norm(given):
    keepdims = given.get("keepdims", False)
    if "axis" not in given:
        if keepdims is not False:
            raise RuleError("np.linalg.vector_norm(..., keepdims=True) is differentiated "
                            "with an int axis=")
        return "np.linalg.norm(np.ravel(x), ord=ord)"
    if type(given["axis"]) is not int or keepdims is NOT_CONSTANT:
        raise RuleError("np.linalg.vector_norm's axis= is differentiated as an int literal "
                        "(over a tuple of axes np.linalg.norm is a matrix norm), keepdims= "
                        "as a literal")
    return f"np.linalg.norm(x, ord=ord, axis=axis, keepdims={keepdims})"


def _matrix_norm(given):
    # np.linalg.norm of one matrix, without axis= (numba's forms compile 'fro' and 'nuc'
    # so); of a stack of matrices np.linalg.norm raises
    ord_ = "ord" if "ord" in given else "'fro'"
    keepdims = "keepdims" if "keepdims" in given else "False"
    return f"np.linalg.norm(x, ord={ord_}, keepdims={keepdims})"


def _trace(given):
    # (a dtype= is np.trace's, which its record takes or refuses)
    return "np.trace(x, offset, -2, -1, dtype)" if "dtype" in given else \
        "np.trace(x, offset, -2, -1)"


def _cumulative(name, function):
    def expanded(given):
        if given.get("include_initial", False) is not False:
            raise RuleError(f"{name}(..., include_initial=True) has no gradient rule: "
                            f"concatenate a zero to np.{function}(x) instead")
        options = "".join(f", {k}={k}" for k in ("axis", "dtype") if k in given)
        return f"np.{function}(x{options})"   # (dtype=: np.cumsum's record's `casts`)
    return expanded


def _vecdot(x1, x2, axis=-1):
    """np.vecdot's signature, which normalize binds a call to (a ufunc has none)."""


def _matvec(x1, x2):
    """np.matvec's and np.vecmat's signature (ufuncs)."""


_EXPANDED = [
    ("vector_norm", np.linalg, _vector_norm, None),
    ("matrix_norm", np.linalg, _matrix_norm, None),
    ("vecdot", np.linalg, _written("vecdot", "np.sum(np.conj(x1) * x2, axis=axis)"), None),
    ("vecdot", np, _written("vecdot", "np.sum(np.conj(x1) * x2, axis=axis)"), _vecdot),
    ("matmul", np.linalg, _written("matmul", "np.matmul(x1, x2)"), None),
    ("outer", np.linalg, _written("outer", "np.outer(x1, x2)"), None),
    ("tensordot", np.linalg, _written("tensordot", "np.tensordot(x1, x2, axes=axes)"), None),
    ("diagonal", np.linalg, _written("diagonal", "np.diagonal(x, offset, -2, -1)"), None),
    ("trace", np.linalg, _trace, None),
    ("cross", np.linalg, _written("cross", "np.cross(x1, x2, axis=axis)"), None),
    ("matrix_transpose", np.linalg, _written("matrix_transpose", "np.swapaxes(x, -1, -2)"),
     None),
    ("matrix_transpose", np, _written("matrix_transpose", "np.swapaxes(x, -1, -2)"), None),
    ("matvec", np, _written("matvec", "np.matmul(x1, x2[..., None])[..., 0]"), _matvec),
    ("vecmat", np, _written("vecmat", "np.matmul(np.conj(x1)[..., None, :], x2)[..., 0, :]"),
     _matvec),
    ("cumulative_sum", np, _cumulative("np.cumulative_sum", "cumsum"), None),
    ("cumulative_prod", np, _cumulative("np.cumulative_prod", "cumprod"), None),
]

for _name, _module, _how, _signature in _EXPANDED:
    if (_fun := getattr(_module, _name, None)) is not None:
        describe(_fun, expanded=_how, signature=_signature)
