"""Passes as before/after pairs, plus a semantics check: the normalized function computes
what the original computes."""

import textwrap

import astor
import gast
import numpy as np
import pytest

from srcgrad.frontend.parse import Env
from srcgrad.naming import Namer, names_in
from srcgrad.passes.normalize import normalize

PAIRS = [
    (  # nested expressions become one operation per statement, in evaluation order
        """
        def f(x, y):
            return np.sin(x * y) + 2.0
        """,
        """
        def f(x, y):
            _t1 = x * y
            _t2 = np.sin(_t1)
            _t3 = _t2 + 2.0
            return _t3
        """,
    ),
    (  # reassignment and augmented assignment give new versions
        """
        def f(x):
            x = x * 2.0
            x += 1.0
            return x
        """,
        """
        def f(x):
            x_1 = x * 2.0
            x_2 = x_1 + 1.0
            return x_2
        """,
    ),
    (  # tuple targets, swapped without losing a value
        """
        def f(a, b):
            a, b = b, a
            return a - b
        """,
        """
        def f(a, b):
            _t1 = b
            _t2 = a
            a_1 = _t1
            b_1 = _t2
            _t3 = a_1 - b_1
            return _t3
        """,
    ),
    (  # chained comparison (middle operand evaluated once), methods on locals
        """
        def f(x):
            ok = 0.0 < x[0, 0] < 1.0
            return x.sum(axis=-1) * ok
        """,
        """
        def f(x):
            _t1 = x[0, 0]
            _t2 = 0.0 < _t1
            _t3 = _t1 < 1.0
            ok = _t2 and _t3
            _t4 = x.sum(axis=-1)
            _t5 = _t4 * ok
            return _t5
        """,
    ),
    (  # unpacking a call's result
        """
        def f(x):
            n, m = x.shape
            return x[0, 1:n] * m
        """,
        """
        def f(x):
            _t1 = x.shape
            n = _t1[0]
            m = _t1[1]
            _t2 = x[0, 1:n]
            _t3 = _t2 * m
            return _t3
        """,
    ),
    (  # a loop over rows indexes them; what follows a jump moves into the other branch
        """
        def f(x):
            s = 0.0
            for row in x:
                if row[0] > 0.5:
                    break
                s += row.sum()
            return s
        """,
        """
        def f(x):
            s = 0.0
            _t1 = len(x)
            for k in range(_t1):
                row = x[k]
                _t2 = row[0]
                _t3 = _t2 > 0.5
                if _t3:
                    break
                else:
                    _t4 = row.sum()
                    s = s + _t4
            return s
        """,
    ),
    (  # a while test that takes statements runs before the loop and at its end;
       # names assigned in a loop keep their name; subscript writes stay writes
        """
        def f(x):
            y = x.copy()
            k = 0
            while y[0, 0] < 5.0:
                y[0, 0] += 1.0
                k += 1
            return y * k
        """,
        """
        def f(x):
            y = x.copy()
            k = 0
            _t1 = y[0, 0]
            _t2 = _t1 < 5.0
            while _t2:
                _t3 = y[0, 0]
                _t4 = _t3 + 1.0
                y[0, 0] = _t4
                k = k + 1
                _t1 = y[0, 0]
                _t2 = _t1 < 5.0
            _t5 = y * k
            return _t5
        """,
    ),
    (  # a return inside a loop sets the result and breaks; the rest runs if it did not
        """
        def f(x):
            for i, v in enumerate(x[0]):
                if v > 0.5:
                    return v * x
            return -x
        """,
        """
        def f(x):
            returned = False
            _t1 = x[0]
            _t2 = len(_t1)
            for i in range(_t2):
                v = _t1[i]
                _t3 = v > 0.5
                if _t3:
                    result = v * x
                    returned = True
                    break
            _t4 = not returned
            if _t4:
                result = -x
            return result
        """,
    ),
]


def _normalized(source: str) -> str:
    fn = gast.parse(textwrap.dedent(source)).body[0]
    out = normalize(fn, Env({"np": np}), Namer(names_in(fn)), "f.py")
    return astor.to_source(gast.gast_to_ast(out)).strip()


@pytest.mark.parametrize("before,after", PAIRS)
def test_normalize_pairs(before, after):
    assert _normalized(before) == textwrap.dedent(after).strip()


@pytest.mark.parametrize("before,after", PAIRS)
def test_normalize_keeps_semantics(before, after):
    rng = np.random.default_rng(3)
    original, normalized = {"np": np}, {"np": np}
    exec(textwrap.dedent(before), original)
    exec(_normalized(before), normalized)
    nargs = original["f"].__code__.co_argcount
    args = [rng.uniform(0.1, 0.9, size=(3, 4)) for _ in range(nargs)]
    np.testing.assert_array_equal(original["f"](*args), normalized["f"](*args))
