"""Lists appended to in a loop (`passes/lists.py`): the array that holds their rows.

`rows = fill_row(rows, k, value)` is `L.append(value)` for the k-th value appended: rows
is None before the first append and an array after, with room for at least k + 1 rows
(doubled when full, so a loop of n appends copies O(n) rows in all). Every row has the
shape and type of the first value; another shape (which the row would broadcast) or a
value the row cannot hold exactly (an int row cutting 1.5 to 1) is a ValueError, as
`np.stack` refuses the first and Python's list keeps the value the array would not.
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
from numba.extending import overload, register_jitable

DIFFER = "the values appended to a list in a loop differ in shape or type"
EMPTY_ROWS = "a list of arrays built in a loop is empty: compiled code cannot give its " \
    "value (run it with jit=False, where it is np.array([]))"
NONE_TO_STACK = "need at least one array to stack"


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
        raise ValueError(DIFFER)
    rows[k] = value
    if not np.all((rows[k] == value) | (rows[k] != rows[k])):   # (NaN is kept)
        raise ValueError(DIFFER)
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
    # a value of the rows' own type fits them exactly: only its shape is checked
    exact = not isinstance(held, types.Array) or held.dtype == dtype

    def fill(rows, k, value):
        if rows is None:
            out = np.empty((1,) + shape(value), dtype)
        elif k == rows.shape[0]:
            out = np.empty((2 * k,) + rows.shape[1:], rows.dtype)
            out[:k] = rows
        else:
            out = rows
        if shape(value) != out.shape[1:]:
            raise ValueError(DIFFER)
        out[k] = value
        if not exact and not np.all((out[k] == value) | (out[k] != out[k])):
            raise ValueError(DIFFER)
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


def stacked(a):
    """`np.stack` of the rows of `a` (a list `filled` made): a copy of it; of no rows,
    an error, as NumPy's.

    >>> stacked(np.array([[1.0, 2.0]]))
    array([[1., 2.]])
    """
    if len(a) == 0:
        raise ValueError(NONE_TO_STACK)
    return np.copy(a)


@overload(stacked)
def _stacked_typer(a):
    if not isinstance(a, types.Array):
        return None

    def copy(a):
        if a.shape[0] == 0:
            raise ValueError(NONE_TO_STACK)
        return a.copy()
    return copy


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
