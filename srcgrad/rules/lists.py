"""The records of the helpers that hold a list appended to in a loop (`runtime/lists.py`).

The cotangent of the list is one array of its rows, read back row by row: each append
takes its row (`row_grad`), and the rows' array passes through every other helper as it
is (the rows a later append writes are unwritten memory before it, reached by nothing).
All are linear in the rows and the values they hold, so their tangents are themselves.
"""

from ..runtime.lists import fill_row, filled, joined, row_grad, stacked, unjoined, unstacked
from . import describe, linear, rule


@rule(fill_row)
def fill_row_rule(dy, y, rows, k, value):
    return dy, None, row_grad(dy, k, value)


@rule(filled)
def filled_rule(dy, y, rows, k):
    return dy, None


@rule(stacked)
def stacked_rule(dy, y, a, axis=0):
    return unstacked(dy, axis), None


@rule(unstacked)
def unstacked_rule(dy, y, d, axis=0):
    return stacked(dy, axis), None


@rule(joined)
def joined_rule(dy, y, a, axis=0):
    return unjoined(dy, a, axis), None


@rule(unjoined)
def unjoined_rule(dy, y, d, a, axis=0):
    return joined(dy, axis), None, None


linear(fill_row, positions=(0, 2))
linear(filled, stacked, unstacked, joined, unjoined, row_grad)
describe(filled, stacked, unstacked, joined, unjoined, row_grad, pure=True)
describe(unjoined, shape_only=1)
describe(row_grad, shape_only=2)
