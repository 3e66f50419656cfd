"""Shapes the records of rules/numpy_gaps.py compute, beside their numba forms (numba
slices a tuple and multiplies its entries only where the counts are known when it
compiles): `sizes(shape)`, the number of entries of an array of that shape, and
`trailing(a, b)`, the entries of a's shape after b's dimensions (np.linalg.tensorsolve's
result's shape)."""

from __future__ import annotations

import math

import numpy as np
from numba import types
from numba.extending import overload

from ..errors import MissingRule


def sizes(shape):
    """The number of entries of an array of this shape.

    >>> sizes((2, 3)), sizes(())
    (6, 1)
    """
    return math.prod(shape)


@overload(sizes)
def _sizes_typer(shape):
    if isinstance(shape, types.BaseTuple):
        def product(shape):
            n = 1
            for k in shape:
                n *= k
            return n
        return product
    return None


def trailing(a, b):
    """a's shape after np.ndim(b) dimensions.

    >>> trailing(np.zeros((2, 3, 4)), np.zeros(2))
    (3, 4)
    """
    return np.shape(a)[np.ndim(b):]


@overload(trailing)
def _trailing_typer(a, b):
    if not isinstance(a, types.Array):
        return None
    k = b.ndim if isinstance(b, types.Array) else 0
    return lambda a, b: a.shape[k:]


def bins(x, minlength):
    """How many entries np.bincount(x, minlength=minlength) has, refusing what NumPy
    refuses (a negative entry, or one not an int).

    >>> bins(np.array([0, 3, 1]), 2), bins(np.zeros(0, int), 2)
    (4, 2)
    """
    x = np.asarray(x)
    if x.ndim != 1 or not (np.issubdtype(x.dtype, np.integer) or x.size == 0):
        raise TypeError("np.bincount takes a 1-D array of non-negative ints")
    if x.size and np.min(x) < 0:
        raise ValueError("np.bincount: an entry is negative")
    return max(int(np.max(x)) + 1 if x.size else 0, minlength)


@overload(bins)
def _bins_typer(x, minlength):
    if not (isinstance(x, types.Array) and x.ndim == 1 and isinstance(x.dtype, types.Integer)):
        return None

    def counted(x, minlength):
        top = -1
        for v in x:
            if v < 0:
                raise ValueError("np.bincount: an entry is negative")
            top = max(top, v)
        return max(top + 1, minlength)
    return counted


def kept(n, obj):
    """The indices np.delete(x, obj) keeps of an axis of length n.

    >>> kept(5, [0, 2])
    array([1, 3, 4])
    """
    return np.delete(np.arange(n), obj)


@overload(kept)
def _kept_typer(n, obj):
    return lambda n, obj: np.delete(np.arange(n), obj)


_SPECTRAL = ("np.linalg.cond: p= None, 2 or -2 (singular values) is differentiated as a "
             "literal, not a name")


def matrix_norm_order(p):
    """p, which np.linalg.cond was given as a name: a norm whose cond is norm(x, p)
    norm(inv(x), p), not None, 2 or -2 (singular values), which are refused.

    >>> matrix_norm_order(np.inf)
    inf
    """
    if p is None or (not isinstance(p, str) and p in (2, -2)):
        raise MissingRule(_SPECTRAL)
    return p


@overload(matrix_norm_order)
def _matrix_norm_order_typer(p):
    if isinstance(p, (types.NoneType, types.Omitted)):
        def refused(p):
            raise MissingRule(_SPECTRAL)
        return refused
    if isinstance(p, (types.Integer, types.Float)):
        def checked(p):
            if p == 2 or p == -2:
                raise MissingRule(_SPECTRAL)
            return p
        return checked
    return None
