"""What the runtime modules share: the gradient dtype, and numba type tests and
small element helpers (each Python form with its numba overload).
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload
from numba.np.numpy_support import as_dtype

_NONSCALAR = "grad needs a scalar result; this function returns an array (use vjp)"


_FLOAT64 = np.dtype(np.float64)


def _float_dtype(dtype) -> np.dtype:
    """`dtype` if floating or complex, else float64: the dtype of a gradient."""
    dtype = np.dtype(dtype)
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


_BAD_SHAPE = " gave a gradient whose shape is not the shape of its variable"


def _ndim(x) -> int:
    return x.ndim if type(x) is np.ndarray else np.ndim(x)


def _item(v):
    """The value of a scalar, a 0-d array unwrapped."""
    return v[()] if isinstance(v, np.ndarray) else v


@overload(_item)
def _item_typer(v):
    if isinstance(v, types.Array):
        return lambda v: v[()]
    return lambda v: v


def _ravel(v):
    """`v` as a 1-D array; a scalar as one element."""
    return np.ravel(v)


@overload(_ravel)
def _ravel_typer(v):
    if isinstance(v, types.Array):  # a view of a C-contiguous v; compiles faster than ravel
        return lambda v: np.ascontiguousarray(v).reshape(v.size)
    return lambda v: np.full(1, v)


def _flat(v):
    """An array as 1-D (a view of a C-contiguous one); a scalar as itself."""
    return np.ravel(v) if isinstance(v, np.ndarray) else v


@overload(_flat)
def _flat_typer(v):
    if isinstance(v, types.Array):  # only C-contiguous arrays come here: a view
        return lambda v: v.reshape(v.size)
    return lambda v: v


def _elem(v, i):
    """Entry `i` of a 1-D array; a scalar is every entry."""
    return v[i] if isinstance(v, np.ndarray) else v


@overload(_elem)
def _elem_typer(v, i):
    if isinstance(v, types.Array):
        return lambda v, i: v[i]
    return lambda v, i: v


def _shaped_like(v, like):
    """Whether `v` is a scalar or has like's shape (then no broadcasting pairs them)."""
    return not isinstance(v, np.ndarray) or v.shape == like.shape


@overload(_shaped_like)
def _shaped_like_typer(v, like):
    if isinstance(v, types.Array):
        return lambda v, like: v.shape == like.shape
    return lambda v, like: True


def _is_scalar(t) -> bool:
    return isinstance(t, (types.Number, types.Boolean)) or (
        isinstance(t, types.Array) and t.ndim == 0)


def _float_scalar(t):
    """The NumPy scalar type of a gradient for numba type `t` (array or scalar)."""
    return _float_dtype(as_dtype(t.dtype if isinstance(t, types.Array) else t)).type


def _is_none(t) -> bool:
    return t is None or isinstance(t, types.NoneType) or (
        isinstance(t, types.Omitted) and t.value is None)


def _sequence(t) -> bool:
    """A 1-D integer index array or list (numba's type)."""
    return isinstance(t, types.Array) and t.ndim == 1 and isinstance(t.dtype, types.Integer) \
        or isinstance(t, types.List) and isinstance(t.dtype, types.Integer)


def _ranked(t) -> bool:
    """An integer index array of rank >= 2, or a list of lists of ints (numba's type)."""
    if isinstance(t, types.List) and isinstance(t.dtype, types.List):
        while isinstance(t, types.List):
            t = t.dtype
        return isinstance(t, types.Integer)
    return isinstance(t, types.Array) and t.ndim >= 2 and isinstance(t.dtype, types.Integer)


def formatted(template: str, *values):
    """An f-string of the user's code, `f"loss {y:.3f}"`, as generated code writes it:
    `formatted("loss {:.3f}", y)`. numba formats no values into strings (its f-strings
    print a float as "<object type:float64>"): compiled, it is refused at the user's line,
    so that jit="auto" runs the code as Python.

    >>> formatted("loss {:.3f} at {}", 0.5, 3)
    'loss 0.500 at 3'
    """
    return template.format(*values)


@overload(formatted)
def _formatted_typer(template, *values):
    from numba.core.errors import TypingError
    raise TypingError("srcgrad: an f-string formats values in the gradient's Python form "
                      "only (jit=False, or jit='auto', which falls back to it): numba "
                      "formats no values into strings")
