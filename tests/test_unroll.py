"""unroll as before/after pairs, plus a semantics check: the specialised, unrolled function
returns what the original returns."""

import textwrap

import astor
import gast
import numpy as np
import pytest

from srcgrad.errors import UnsupportedSyntax
from srcgrad.passes import unroll as unroll_module
from srcgrad.passes.unroll import unroll


def parse(src):
    return gast.parse(textwrap.dedent(src).strip()).body[0]


def render(fn):
    return astor.to_source(gast.gast_to_ast(fn)).strip()


def transform(src, constants=None, unroll_loops=False):
    return unroll(parse(src), constants or {}, unroll_loops, "f.py")


# (before, constants, unroll_loops, after)
PAIRS = [
    pytest.param(
        """
        def f(x, n, w):
            y = x * n + w[1]
            return y / len(w)
        """,
        {"n": 3, "w": (0.5, 2.0)}, False,
        """
        def f(x, n, w):
            y = x * 3 + 2.0
            return y / 2
        """, id="static-substitution"),
    pytest.param(  # only what is fully constant folds; `0 * x` stays
        """
        def f(x, n):
            a = x * (n * 2 + 1) - 0 * x
            b = min(n, 4) + abs(-n) + float(n) + int(2.5) - (n > 2) + (-n) ** 2
            return a + b + x[n - 1, 1:n] + 2 ** 100 + 1 / 0
        """,
        {"n": 3}, False,
        """
        def f(x, n):
            a = x * 7 - 0 * x
            b = 19.0
            return a + b + x[2, 1:3] + 2 ** 100 + 1 / 0
        """, id="folding"),
    pytest.param(  # a negative literal is a minus sign on a number, as Python parses it
        """
        def f(x, n):
            return n ** x + x ** n + (-n) ** x - float("inf") * n
        """,
        {"n": -2}, False,
        """
        def f(x, n):
            return (-2) ** x + x ** -2 + 2 ** x - float("inf") * -2
        """, id="negative-literals"),
    pytest.param(
        """
        def f(x, mode):
            if mode == 0:
                x = x + 1.0
            elif mode == 1:
                x = x * 2.0
            elif x > 0.0:
                x = -x
            else:
                x = x - 1.0
            return x
        """,
        {"mode": 1}, False,
        """
        def f(x, mode):
            x = x * 2.0
            return x
        """, id="elif-taken"),
    pytest.param(
        """
        def f(x, mode):
            if mode == 0:
                x = x + 1.0
            elif mode == 1:
                x = x * 2.0
            elif x > 0.0:
                x = -x
            else:
                x = x - 1.0
            return x
        """,
        {"mode": 2}, False,
        """
        def f(x, mode):
            if x > 0.0:
                x = -x
            else:
                x = x - 1.0
            return x
        """, id="elif-data-dependent-rest"),
    pytest.param(  # a branch not taken disappears; a block it empties gets a `pass`
        """
        def f(x, m, debug, flag):
            if debug and x > 0.0:
                print(x)
            for i in range(m):
                if debug:
                    print(i)
            if flag is None:
                x = x + 1.0
            while flag and m > 3:
                x = x * 2.0
            return x if debug else -x
        """,
        {"debug": False, "flag": None}, False,
        """
        def f(x, m, debug, flag):
            for i in range(m):
                pass
            x = x + 1.0
            return -x
        """, id="branches-not-taken"),
    pytest.param(  # not fully constant: kept as written, with the static folded
        """
        def f(x, n):
            if n > 2 and x > 0.0:
                x = x * 2.0
            return x
        """,
        {"n": 3}, False,
        """
        def f(x, n):
            if True and x > 0.0:
                x = x * 2.0
            return x
        """, id="partly-constant-test"),
    pytest.param(
        """
        def f(x):
            s = 0.0
            for i in range(3):
                s += x[i] * i
            return s
        """,
        {}, True,
        """
        def f(x):
            s = 0.0
            s += x[0] * 0
            s += x[1] * 1
            s += x[2] * 2
            return s
        """, id="range-3"),
    pytest.param(
        """
        def f(x):
            for i in range(1, 7, 2):
                x = x * i
            for j in range(5, 0, -2):
                x = x - j
            return x
        """,
        {}, True,
        """
        def f(x):
            x = x * 1
            x = x * 3
            x = x * 5
            x = x - 5
            x = x - 3
            x = x - 1
            return x
        """, id="start-stop-step-and-negative-step"),
    pytest.param(  # a zero-trip loop vanishes and assigns nothing
        """
        def f(x, n):
            for i in range(n):
                x = x * 2.0
            return x + i
        """,
        {"n": 0}, False,
        """
        def f(x, n):
            return x + i
        """, id="zero-trip"),
    pytest.param(  # the inner bound depends on the outer index: it unrolls too
        """
        def f(x, n):
            s = 0.0
            for i in range(n):
                for j in range(i):
                    if j == 0:
                        s += x[i]
                    s += x[i, j]
            return s
        """,
        {"n": 3}, False,
        """
        def f(x, n):
            s = 0.0
            s += x[1]
            s += x[1, 0]
            s += x[2]
            s += x[2, 0]
            s += x[2, 1]
            return s
        """, id="nested-range-t"),
    pytest.param(  # the index is read after the loop: its last value is assigned
        """
        def f(x):
            for i in range(3):
                x = x * 2.0
            return x + i
        """,
        {}, True,
        """
        def f(x):
            x = x * 2.0
            x = x * 2.0
            x = x * 2.0
            i = 2
            return x + i
        """, id="index-read-after"),
    pytest.param(  # a data-dependent break keeps the loop, with its bounds folded
        """
        def f(x, n):
            for i in range(n + 1):
                if x > 10.0:
                    break
                x = x * 2.0
            return x
        """,
        {"n": 3}, False,
        """
        def f(x, n):
            for i in range(4):
                if x > 10.0:
                    break
                x = x * 2.0
            return x
        """, id="data-dependent-break"),
    pytest.param(  # jumps that fold to unconditional ones cut the copies
        """
        def f(x):
            for i in range(10):
                if i % 2 == 1:
                    continue
                x = x + i
                if i == 4:
                    break
                x = x * 2.0
            return x
        """,
        {}, True,
        """
        def f(x):
            x = x + 0
            x = x * 2.0
            x = x + 2
            x = x * 2.0
            x = x + 4
            return x
        """, id="constant-break-continue"),
    pytest.param(  # a break inside an inner loop leaves that loop, not the unrolled one
        """
        def f(x):
            for i in range(2):
                while x > 1.0:
                    x = x / 2.0
                    if x < 3.0:
                        break
                x = x + i
            return x
        """,
        {}, True,
        """
        def f(x):
            while x > 1.0:
                x = x / 2.0
                if x < 3.0:
                    break
            x = x + 0
            while x > 1.0:
                x = x / 2.0
                if x < 3.0:
                    break
            x = x + 1
            return x
        """, id="inner-loop-break"),
    pytest.param(
        """
        def f(x, n):
            for i in range(3):
                x = x + i
            for j in range(n):
                x = x * j
            return x
        """,
        {"n": 2}, False,
        """
        def f(x, n):
            for i in range(3):
                x = x + i
            x = x * 0
            x = x * 1
            return x
        """, id="only-static-bounds-without-unroll-loops"),
    pytest.param(  # refused: a return, an assigned index, an else clause, a non-range
        """
        def f(x, ys):
            for i in range(3):
                if x > 1.0:
                    return x
            for i in range(3):
                i = i * 2
                x = x + i
            for i in range(3):
                x = x + i
            else:
                x = -x
            for y in ys:
                x = x + y
            return x
        """,
        {}, True,
        """
        def f(x, ys):
            for i in range(3):
                if x > 1.0:
                    return x
            for i in range(3):
                i = i * 2
                x = x + i
            for i in range(3):
                x = x + i
            else:
                x = -x
            for y in ys:
                x = x + y
            return x
        """, id="loops-kept"),
    pytest.param(
        """
        def f(x):
            for i in range(100000):
                x = x + i
            for j in range(3000):
                x = x + j
                x = x * 0.5
            return x
        """,
        {}, True,
        """
        def f(x):
            for i in range(100000):
                x = x + i
            for j in range(3000):
                x = x + j
                x = x * 0.5
            return x
        """, id="budget"),
]


@pytest.mark.parametrize("before, constants, unroll_loops, after", PAIRS)
def test_pairs(before, constants, unroll_loops, after):
    assert render(transform(before, constants, unroll_loops)) == render(parse(after))


def test_budget_counts_the_whole_function(monkeypatch):
    monkeypatch.setattr(unroll_module, "MAX_UNROLLED_STATEMENTS", 10)
    out = transform("""
        def f(x):
            for i in range(4):
                x = x + i
            for j in range(8):
                x = x * j
            return x
        """, unroll_loops=True)
    assert render(out) == render(parse("""
        def f(x):
            x = x + 0
            x = x + 1
            x = x + 2
            x = x + 3
            for j in range(8):
                x = x * j
            return x
        """))


@pytest.mark.parametrize("write, line", [("n = n + 1", 3), ("n += 1", 3),
                                         ("for n in range(2): y = y * 2.0", 3),
                                         ("n[0] = 1.0", 3)])
def test_assigning_a_static_parameter_is_refused(write, line):
    src = f"def f(x, n):\n    y = x\n    {write}\n    return y\n"
    with pytest.raises(UnsupportedSyntax, match=f"static parameter 'n' is assigned on line "
                                                f"{line}"):
        unroll(gast.parse(src).body[0], {"n": 2}, False, "f.py")


def test_no_op_and_input_untouched():
    src = """
        def f(x, n):
            if 1 > 2:
                x = 2 * 3 * x
            for i in range(3):
                x = x + i
            return x
        """
    fn = parse(src)
    before = gast.dump(fn)
    assert gast.dump(unroll(fn, {}, False, "f.py")) == before
    unroll(fn, {"n": 2}, True, "f.py")
    assert gast.dump(fn) == before


def test_copies_keep_the_user_lines():
    out = transform("""
        def f(x, n):
            for i in range(n):
                x = x * i
            return x + i
        """, {"n": 2})
    assert [(type(s).__name__, s.lineno) for s in out.body] == [
        ("Assign", 3), ("Assign", 3), ("Assign", 2), ("Return", 4)]
    assert out.body[1].value.right.lineno == 3  # the literal that replaced `i`


def test_static_values_numpy_scalars_and_arrays():
    src = """
        def f(x, n, w):
            return x * n + w
        """
    out = transform(src, {"n": np.int64(3), "w": np.ones(2)})
    assert render(out) == render(parse("""
        def f(x, n, w):
            return x * 3 + w
        """))


# ---- semantics: the transformed code computes what the original computes ----
SEMANTICS = [
    pytest.param(
        """
        def f(x, n):
            s = 0.0
            for i in range(n):
                for j in range(i + 1):
                    if j == i:
                        s += x ** j
                    elif j % 2 == 0:
                        s -= x * j
                    else:
                        s *= 1.0 + x
            return s + i
        """, [{"n": 1}, {"n": 3}, {"n": 5}], False, id="triangle"),
    pytest.param(
        """
        def f(x, n):
            k = 0
            for k in range(n):
                if x > 40.0:
                    break
                x = x * 3.0
            return x + k
        """, [{"n": 0}, {"n": 4}], True, id="data-dependent-break"),
    pytest.param(
        """
        def f(x):
            t = 0.0
            for i in range(10, 0, -3):
                if i % 2 == 0:
                    continue
                t = t * x + i
                if i < 5:
                    break
            return t * i
        """, [{}], True, id="negative-step-jumps"),
    pytest.param(
        """
        def f(x, coeffs, mode):
            y = 0.0
            for p in range(len(coeffs)):
                y = y * x + coeffs[p]
            if mode == "square" and len(coeffs) > 1:
                y = y * y
            elif mode is None:
                y = -y
            while x > 1.0:
                x = x / 2.0
                y = y + 1.0
            return y
        """, [{"coeffs": (1.0, -2.0, 0.5), "mode": "square"},
              {"coeffs": (3.0,), "mode": None}, {"coeffs": (), "mode": "other"}],
        False, id="tuple-and-string-statics"),
    pytest.param(
        """
        def f(x, n):
            return n ** x + x ** n - (-n) ** (x * n)
        """, [{"n": -2}, {"n": 3}], False, id="negative-static"),
]


@pytest.mark.parametrize("src, constant_sets, unroll_loops", SEMANTICS)
def test_semantics(src, constant_sets, unroll_loops):
    namespace = {}
    exec(textwrap.dedent(src), namespace)
    original = namespace["f"]
    for constants in constant_sets:
        out = unroll(parse(src), constants, unroll_loops, "f.py")
        assert "for " not in render(out) or "break" in render(out)
        namespace = {}
        exec(compile(render(out), "<unrolled>", "exec"), namespace)
        for x in (-1.5, 0.25, 2.0, 7.0):
            assert namespace["f"](x, **constants) == original(x, **constants)
