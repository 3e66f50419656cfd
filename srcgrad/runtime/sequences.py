"""The adjoints of `np.concatenate` and `np.stack`: one gradient per array; that of
Python's `sum` of a sequence, `sum_items_grad`; and `add_items`, the sum of two such tuples
(or lists) of gradients, item by item.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload, register_jitable

from .broadcasting import unbroadcast


def split_like(dy, arrays, axis=0):
    """Adjoint of `np.concatenate(arrays, axis)`: dy cut into pieces shaped like arrays."""
    sizes = [np.shape(a)[axis] for a in arrays]
    return tuple(np.split(dy, np.cumsum(sizes)[:-1], axis=axis))


@overload(split_like)
def _split_like_typer(dy, arrays, axis=0):
    if not isinstance(dy, types.Array) or not isinstance(arrays, types.BaseTuple):
        return None
    n, ndim, piece = len(arrays), dy.ndim, _piece(dy.ndim, "slice")
    body = ["def split(dy, arrays, axis=0):",
            f"    ax = axis + {ndim} if axis < 0 else axis",
            "    o0 = 0"]
    body += [f"    o{i + 1} = o{i} + arrays[{i}].shape[ax]" for i in range(n)]
    pieces = "".join(f"piece(dy, ax, o{i}, o{i + 1}), " for i in range(n))
    body.append(f"    return ({pieces})")
    namespace = {"piece": piece}
    exec("\n".join(body), namespace)
    return namespace["split"]


def unstack_like(dy, arrays, axis=0):
    """Adjoint of `np.stack(arrays, axis)`: the slices of dy along axis."""
    return tuple(np.take(dy, k, axis=axis) for k in range(len(arrays)))


@overload(unstack_like)
def _unstack_like_typer(dy, arrays, axis=0):
    if not isinstance(dy, types.Array) or not isinstance(arrays, types.BaseTuple):
        return None
    if dy.ndim == 1 and all(isinstance(t, (types.Number, types.Boolean)) for t in arrays):
        # np.stack of numbers (numba_ext's form): dy's items are their gradients, numbers
        # as NumPy's np.take gives them (an array would not add into an item of x)
        items = "".join(f"dy[{k}], " for k in range(len(arrays)))
        namespace = {}
        exec("def numbers(dy, arrays, axis=0):\n"
             "    if axis != 0 and axis != -1:\n"
             "        raise ValueError('axis out of range')\n"
             f"    return ({items})\n", namespace)
        return namespace["numbers"]
    n, ndim, piece = len(arrays), dy.ndim, _piece(dy.ndim, "index")
    body = ["def unstack(dy, arrays, axis=0):",
            f"    ax = axis + {ndim} if axis < 0 else axis",
            "    return (" + "".join(f"piece(dy, ax, {k}), " for k in range(n)) + ")"]
    namespace = {"piece": piece}
    exec("\n".join(body), namespace)
    return namespace["unstack"]


def _axis_code(ndim: int, index: str) -> str:
    """Source of `dy` indexed by `index` along a runtime axis `ax` (one branch per axis)."""
    lines = []
    for d in range(ndim):
        parts = [":"] * ndim
        parts[d] = index
        lines.append(f"    {'if' if d == 0 else 'elif'} ax == {d}:\n"
                     f"        return np.ascontiguousarray(dy[{', '.join(parts)}])")
    return "\n".join(lines) + "\n    raise ValueError('axis out of range')\n"


def sum_items_grad(dy, items):
    """Adjoint of Python's `sum(items)`: dy for each item of a tuple or list (summed to
    the item's shape, as broadcasting added it), and for each row of an array (its sum
    along the first axis).

    >>> sum_items_grad(2.0, (1.0, np.ones(2)))
    (2.0, array([2., 2.]))
    >>> sum_items_grad(np.array([1.0, 2.0]), np.zeros((3, 2)))[2]
    array([1., 2.])
    """
    if isinstance(items, (tuple, list)):
        return type(items)(unbroadcast(dy, item) for item in items)
    return np.broadcast_to(dy, np.shape(items)) * np.ones(np.shape(items))


@overload(sum_items_grad)
def _sum_items_grad_typer(dy, items):
    if isinstance(items, types.BaseTuple):
        return _item_by_item("dy, items", "unbroadcast(dy, items[{i}])", len(items),
                             unbroadcast=unbroadcast)
    if isinstance(items, types.List):
        return lambda dy, items: [unbroadcast(dy, item) for item in items]
    if isinstance(items, types.Array):
        def impl(dy, items):
            out = np.empty(items.shape)
            for i in range(items.shape[0]):
                out[i] = dy
            return out
        return impl
    return None


@overload(sum)
def _sum_typer(items, start=0):
    # what numba's own `sum` does not take: the rows of a matrix (its sum along the first
    # axis), a tuple of numbers and arrays, an array to start from
    numbers = isinstance(items, (types.UniTuple, types.List)) and \
        isinstance(items.dtype, types.Number) or \
        isinstance(items, types.Array) and items.ndim == 1
    if numbers and not isinstance(start, types.Array):
        return None
    if isinstance(items, types.BaseTuple):
        total = "".join(f" + items[{i}]" for i in range(len(items)))
        namespace = {}
        exec(f"def impl(items, start=0):\n    return start{total}", namespace)
        return namespace["impl"]
    if isinstance(items, types.Array):
        def impl(items, start=0):
            total = start + np.zeros(items.shape[1:])
            for i in range(len(items)):
                total = total + items[i]
            return total
        return impl
    if isinstance(items, types.List):
        def impl(items, start=0):
            if len(items) == 0:
                raise ValueError("sum() of an empty list of arrays is 0: compiled, the "
                                 "result must be an array (use jit=False)")
            total = start + items[0]
            for i in range(1, len(items)):
                total = total + items[i]
            return total
        return impl
    return None


def _item_by_item(params: str, item: str, n: int, **namespace):
    """A function of `params` returning the tuple of `item` (a format with `{i}`) for
    i < n: how numba's forms go through a tuple whose items have types of their own."""
    items = "".join(item.format(i=i) + ", " for i in range(n))
    exec(f"def impl({params}):\n    return ({items})", namespace)
    return namespace["impl"]


def _jit_source(name: str, source: str):
    namespace = {"np": np}
    exec(source, namespace)
    return register_jitable(namespace[name])


_PIECES: dict[tuple, object] = {}


def _piece(ndim: int, kind: str):
    """A jitable `(dy, ax, start, stop)` slicing (or `(dy, ax, k)` indexing) along `ax`."""
    key = (ndim, kind)
    if key not in _PIECES:
        head = ("def piece(dy, ax, start, stop):\n" if kind == "slice"
                else "def piece(dy, ax, k):\n")
        _PIECES[key] = _jit_source("piece", head + _axis_code(
            ndim, "start:stop" if kind == "slice" else "k"))
    return _PIECES[key]


def add_items(p, q):
    """`p + q` item by item for tuples and lists (nested ones too; None is zero): how
    forward mode adds the tangents of a value that is a tuple of gradients, where `+`
    would join them.

    >>> add_items((None, 1.0, (2.0, 3.0)), (None, 4.0, (5.0, None)))
    (None, 5.0, (7.0, 3.0))
    """
    if p is None:
        return q
    if q is None:
        return p
    if isinstance(p, (tuple, list)):
        return type(p)(add_items(x, y) for x, y in zip(p, q, strict=True))
    return p + q


@overload(add_items)
def _add_items_typer(p, q):
    if isinstance(p, types.NoneType):
        return lambda p, q: q
    if isinstance(q, types.NoneType):
        return lambda p, q: p
    if isinstance(p, types.BaseTuple):
        return _item_by_item("p, q", "add_items(p[{i}], q[{i}])", len(p), add_items=add_items)
    if isinstance(p, types.List):
        def impl(p, q):
            if len(p) != len(q):
                raise ValueError("add_items: lists of different lengths")
            return [add_items(p[i], q[i]) for i in range(len(p))]
        return impl
    return lambda p, q: p + q
