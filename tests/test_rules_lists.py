"""The rules of the helpers that hold a list appended to in a loop (srcgrad/rules/lists.py):
`fill_row`, `filled` and `stacked` are what a list built in a loop becomes
(srcgrad/passes/lists.py), so their case is such a list. The lists themselves are tested in
tests/test_lists_runtime.py."""

import numpy as np
from sweep import check, domains, parametrize

from srcgrad.runtime.lists import fill_row, filled, stacked

any_, _, _, _ = domains(1)


def rows_op(a, b):
    parts = []
    for i in range(3):
        parts.append(a[i] * b)
    return np.sum(np.stack(parts) ** 2) + np.sum(parts[1])


CASES = [("list_rows", (fill_row, filled, stacked), rows_op, (any_(4), any_(2)), [0, 1], True)]


@parametrize(CASES)
def test_case(case, jit):
    check(case, jit)
