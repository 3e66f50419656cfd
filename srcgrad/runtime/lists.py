"""Lists appended to in a loop (`passes/lists.py`): the array that holds their rows.

`rows = fill_row(rows, k, value)` is `L.append(value)` for the k-th value appended: rows
is None before the first append and an array after, with room for at least k + 1 rows
(doubled when full, so a loop of n appends copies O(n) rows in all). Every row has the
shape of the first value; another shape (which the row would broadcast) is refused
(`UnsupportedSyntax`: Python's list keeps it, one array cannot). A value the rows cannot
hold exactly (1.5 after an int 0, the sum of no floats) makes them of a type that holds
both, as `np.array` of the list would; compiled, the rows' type is the one numba infers
for the values appended, and an int row for a float value is refused as it compiles.
`filled(rows, k)` is the list itself after the loop, its k rows as one array: for no
rows, the array `np.array([])` makes. `stacked(a)` is `np.stack` of that array (a copy;
none stacks nothing, as NumPy says).

The adjoints (`rules/lists.py`) never read the rows: the cotangent of the list is one
array of its k rows throughout, from which each append takes its row (`row_grad`). Row
k of the buffer before the k-th append is unwritten memory (or no buffer at all), which
no value reaches, so the rows' cotangent passes through unchanged. Each helper here has
its numba form next to it; `rows` is there an optional array (None, then an array).
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype

from ..errors import UnsupportedSyntax

DIFFER = ("the items of a list built in a loop (by append or a comprehension) differ in "
          "shape: srcgrad holds such a list as one array of its rows")
INT_ROWS = ("srcgrad: the values appended to a list in a loop are ints, then floats (as "
            "sum's 0 of no items, then a float sum): make the first a float (0.0, "
            "sum(..., 0.0))")
EMPTY_ROWS = "a list of arrays built in a loop is empty: compiled code cannot give its " \
    "value (run it with jit=False, where it is np.array([]))"
NONE_TO_STACK = "need at least one array to stack"
NONE_TO_JOIN = "need at least one array to concatenate"


def fill_row(rows, k, value):
    """`rows` with row k set to `value`, made (or grown) first where it has no row k.

    >>> r = fill_row(None, 0, np.array([1.0, 2.0])); r = fill_row(r, 1, np.array([3.0, 4.0]))
    >>> filled(r, 2)
    array([[1., 2.],
           [3., 4.]])
    """
    if rows is None:
        rows = np.empty((1,) + np.shape(value), np.asarray(value).dtype)
    elif k == len(rows):
        rows = np.concatenate([rows, np.empty_like(rows)])
    if np.shape(value) != rows.shape[1:]:
        raise UnsupportedSyntax(DIFFER)
    dtype = np.result_type(rows, value)
    if dtype != rows.dtype:
        rows = rows.astype(dtype)
    rows[k] = value
    return rows


@overload(fill_row)
def _fill_row_typer(rows, k, value):
    if isinstance(value, types.Array):
        dtype, shape = value.dtype, _array_shape
    elif isinstance(value, (types.Number, types.Boolean)):
        dtype, shape = value, _number_shape
    else:
        return None
    held = rows.type if isinstance(rows, types.Optional) else rows
    if isinstance(held, types.Array) and not np.can_cast(as_dtype(dtype), as_dtype(held.dtype),
                                                         "same_kind"):
        # (typed first with an int value that numba later unified with a float)
        raise TypingError(INT_ROWS)

    def fill(rows, k, value):
        if rows is None:
            out = np.empty((1,) + shape(value), dtype)
        elif k == rows.shape[0]:
            out = np.empty((2 * k,) + rows.shape[1:], rows.dtype)
            out[:k] = rows
        else:
            out = rows
        if shape(value) != out.shape[1:]:
            raise UnsupportedSyntax(DIFFER)
        out[k] = value
        return out
    return fill


@register_jitable
def _array_shape(value):
    return value.shape


@register_jitable
def _number_shape(value):
    return ()


def filled(rows, k):
    """The list of k rows that `fill_row` made: `rows[:k]` (a list of no rows is the
    array `np.array([])` gives).

    >>> filled(None, 0)
    array([], dtype=float64)
    """
    if rows is None:
        return np.empty(0)
    return rows[:k]


@overload(filled)
def _filled_typer(rows, k):
    held = rows.type if isinstance(rows, types.Optional) else rows
    if not isinstance(held, types.Array):
        return None
    if held.ndim == 1:
        dtype = held.dtype

        def numbers(rows, k):
            if rows is None:
                return np.empty(0, dtype)[:k]
            return rows[:k]
        return numbers

    def arrays(rows, k):
        if rows is None:
            raise ValueError(EMPTY_ROWS)
        return rows[:k]
    return arrays


def stacked(a, axis=0):
    """`np.stack(L, axis)` of the list `filled` made, `a`: a copy of it with its first axis
    moved to `axis`; of no rows, an error, as NumPy's.

    >>> stacked(np.array([[1.0, 2.0], [3.0, 4.0]]), axis=1)
    array([[1., 3.],
           [2., 4.]])
    """
    if len(a) == 0:
        raise ValueError(NONE_TO_STACK)
    return np.moveaxis(a, 0, axis).copy()


def unstacked(d, axis=0):
    """The rows `stacked(a, axis)` was made of: `d` with axis `axis` moved first (a copy),
    the adjoint of `stacked`, as `stacked` is its."""
    return np.moveaxis(d, axis, 0).copy()


def joined(a, axis=0):
    """`np.concatenate(L, axis)` of the list `filled` made, `a` (rows of one shape): the
    rows side by side along their axis `axis`, a copy; of no rows, an error, as NumPy's.

    >>> joined(np.array([[[1.0], [2.0]], [[3.0], [4.0]]]), axis=1)
    array([[1., 3.],
           [2., 4.]])
    """
    if len(a) == 0:
        raise ValueError(NONE_TO_JOIN)
    k = _row_axis(axis, np.ndim(a) - 1)
    moved = np.moveaxis(a, 0, k)
    return moved.reshape(moved.shape[:k] + (-1,) + moved.shape[k + 2:])


def unjoined(d, a, axis=0):
    """The rows `joined(a, axis)` was made of, from its value (or cotangent) `d`: the
    adjoint of `joined`, as `joined` is its (`a` is read for its shape only)."""
    k = _row_axis(axis, np.ndim(a) - 1)
    cut = d.reshape(d.shape[:k] + (a.shape[0], -1) + d.shape[k + 1:])
    return np.moveaxis(cut, k, 0).copy()


def _row_axis(axis, ndim):
    """`axis` of a row of `ndim` dimensions, counted from the front (NumPy's error for one
    it does not have; a number has none to join along)."""
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis + ndim if axis < 0 else axis


def _literal_axis(axis):
    """The value of a constant `axis` argument of a numba typing call (0 where it is left
    out), or None where it is not a constant."""
    if isinstance(axis, types.IntegerLiteral):
        return axis.literal_value
    if axis is None or isinstance(axis, (types.Omitted, types.NoneType)) or axis == 0:
        return 0
    return None


def _moved(ndim, source, dest):
    """The order of axes `np.moveaxis(x, source, dest)` gives an array of `ndim` axes."""
    source, dest = source % ndim, dest % ndim
    order = [k for k in range(ndim) if k != source]
    order.insert(dest, source)
    return tuple(order)


@overload(stacked, prefer_literal=True)
def _stacked_typer(a, axis=0):
    ax = _literal_axis(axis)
    if not isinstance(a, types.Array) or ax is None or not -a.ndim <= ax < a.ndim:
        return None
    order = _moved(a.ndim, 0, ax)

    def copy(a, axis=0):
        if a.shape[0] == 0:
            raise ValueError(NONE_TO_STACK)
        return np.transpose(a, order).copy()
    return copy


@overload(unstacked, prefer_literal=True)
def _unstacked_typer(d, axis=0):
    ax = _literal_axis(axis)
    if not isinstance(d, types.Array) or ax is None or not -d.ndim <= ax < d.ndim:
        return None
    order = _moved(d.ndim, ax, 0)
    return lambda d, axis=0: np.transpose(d, order).copy()


@overload(joined, prefer_literal=True)
def _joined_typer(a, axis=0):
    ax = _literal_axis(axis)
    if not isinstance(a, types.Array) or ax is None or not -(a.ndim - 1) <= ax < a.ndim - 1:
        return None
    k = ax % (a.ndim - 1)
    order = _moved(a.ndim, 0, k)

    shape = _shape_code("m", [*range(k), "-1", *range(k + 2, a.ndim)])
    return _compiled(f"""
def join(a, axis=0):
    if a.shape[0] == 0:
        raise ValueError(NONE_TO_JOIN)
    m = np.transpose(a, order).copy()
    return m.reshape({shape})""", "join", order=order, NONE_TO_JOIN=NONE_TO_JOIN)


@overload(unjoined, prefer_literal=True)
def _unjoined_typer(d, a, axis=0):
    ax = _literal_axis(axis)
    if not isinstance(d, types.Array) or not isinstance(a, types.Array) or ax is None or \
            not -d.ndim <= ax < d.ndim:
        return None
    k = ax % d.ndim
    order = _moved(a.ndim, k, 0)

    shape = _shape_code("d", [*range(k), "a.shape[0]", "-1", *range(k + 1, d.ndim)])
    return _compiled(f"""
def cut(d, a, axis=0):
    rows = np.ascontiguousarray(d).reshape({shape})
    return np.transpose(rows, order).copy()""", "cut", order=order)


def _shape_code(name, parts):
    """The source of a shape tuple: `name.shape[k]` for an int k, a string as it is."""
    return "(" + "".join(f"{name}.shape[{p}], " if isinstance(p, int) else f"{p}, "
                         for p in parts) + ")"


def _compiled(source, name, **namespace):
    """The function `name` that `source` defines (numba's form of a helper whose shapes
    depend on the number of axes), with NumPy and `namespace` as its globals."""
    namespace["np"] = np
    exec(source, namespace)
    return namespace[name]


def row_grad(d_rows, k, value):
    """The gradient of the k-th value appended, `value`: row k of the list's gradient
    `d_rows`, shaped like `value` (read for its shape only)."""
    if np.ndim(value) == 0:
        return d_rows[k] * 1.0
    return np.copy(d_rows[k])


@overload(row_grad)
def _row_grad_typer(d_rows, k, value):
    if not isinstance(d_rows, types.Array):
        return None
    if isinstance(value, types.Array):
        return lambda d_rows, k, value: d_rows[k].copy()
    return lambda d_rows, k, value: d_rows[k] * 1.0
