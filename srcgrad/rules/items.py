"""`x.item()` and `x.item(k)`: the record of the array method that reads one entry as a
number, and the helpers its rule calls (each Python form beside its numba form).

``x.item(k)`` is x's entry k in C order (``x.item()``: x's only entry), so its gradient is
dy at that entry and 0 elsewhere, and it is linear: its tangent is the same entry of dx.
A multi-index (``x.item(i, j)``) is refused: write ``x[i, j]``.
"""

import numpy as np
from numba import types
from numba.extending import overload

from . import describe, linear, rule


def item(x, index=None):
    """``x.item(index)``: the entry of x at a flat index as a number (`index` None: x's
    only entry). What array.item() calls as srcgrad's operation table sees it.

    >>> item(np.array([[1.0, 2.0], [3.0, 4.0]]), 2)
    3.0
    """
    return np.asarray(x).item() if index is None else np.asarray(x).item(index)


@overload(item)
def _item_typer(x, index=None):
    if isinstance(x, types.Number):
        return lambda x, index=None: x
    if not isinstance(x, types.Array):
        return None
    if index is None or isinstance(index, (types.NoneType, types.Omitted)):
        return lambda x, index=None: x.item()
    return lambda x, index=None: x.ravel()[index]


def item_grad(dy, x, index=None):
    """The gradient of x of ``y = x.item(index)``: dy at that entry, 0 elsewhere.

    >>> item_grad(5.0, np.zeros((2, 2)), 1)
    array([[0., 5.],
           [0., 0.]])
    """
    g = np.zeros(np.size(x))
    g[0 if index is None else index] = dy
    return g.reshape(np.shape(x))


@overload(item_grad)
def _item_grad_typer(dy, x, index=None):
    if not isinstance(x, types.Array):
        return None
    at_zero = index is None or isinstance(index, (types.NoneType, types.Omitted))

    def impl(dy, x, index=None):
        g = np.zeros(x.size)
        g[0 if at_zero else index] = dy
        return g.reshape(x.shape)
    return impl


@rule(item, methods=("item",))
def item_rule(dy, y, x, index=None):
    return item_grad(dy, x, index)


linear(item)   # its tangent is item(dx, index)
linear(item_grad)
describe(item, item_grad, pure=True)
describe(item, called_as=item)   # numba's array.item takes no index: generated code calls item
describe(item_grad, shape_only=1)
