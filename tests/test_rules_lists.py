"""The rules of the helpers that hold a list appended to in a loop (srcgrad/rules/lists.py):
`fill_row`, `filled` and `stacked` are what a list built in a loop becomes
(srcgrad/passes/lists.py), so their case is such a list. The lists themselves are tested in
tests/test_lists_runtime.py."""

import numpy as np
from sweep import check, domains, parametrize

from srcgrad.runtime.lists import fill_row, filled, joined, stacked, unjoined, unstacked

any_, _, _, _ = domains(1)


def rows_op(a, b):
    parts = []
    for i in range(3):
        parts.append(a[i] * b)
    return np.sum(np.stack(parts) ** 2) + np.sum(parts[1])


def joins_op(a, b):
    parts = []
    for i in range(3):
        parts.append(np.outer(b, a[i:i + 2]))
    c = np.concatenate(parts, axis=1) * np.arange(12.0).reshape(2, 6)
    return np.sum(np.stack(parts, axis=-1) ** 2 * a[0]) + np.sum(c * a[1])


def inverses_op(a):
    rows = a.reshape(2, 3, 2)
    return np.sum(unstacked(rows, 1) * np.arange(12.0).reshape(3, 2, 2)) + \
        np.sum(np.sin(unjoined(a.reshape(3, 4), rows, 1)))


CASES = [("list_rows", (fill_row, filled, stacked), rows_op, (any_(4), any_(2)), [0, 1], True),
         ("list_joins", (stacked, joined), joins_op, (any_(4), any_(2)), [0, 1], True),
         ("list_inverses", (unstacked, unjoined), inverses_op, (any_(12),), [0], True)]


@parametrize(CASES)
def test_case(case, jit):
    check(case, jit)
