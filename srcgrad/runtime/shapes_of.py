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
