"""Issue 20's leftovers: np.fmax.reduce / np.fmin.reduce with initial= of empty arrays
and axes (NumPy's c, its gradient to c; NaN entries skipped), d.setdefault(k, v) on a
local dict at a constant key, and lists rebound to a display in a loop, compiled.
Each gradient against central differences and a value worked out by hand, compiled and
as Python."""

import numpy as np
import pytest
from fd import assert_grad, slope

import srcgrad

# ---- np.fmax.reduce / np.fmin.reduce with initial= ----


def fmax_of_empty(x, c):
    # the whole of an empty array, an empty axis reduced (kept), an empty axis kept
    return np.fmax.reduce(x[0, :0], initial=c) * 2.0 + \
        np.sum(np.fmin.reduce(x[:, :0], axis=1, initial=c)) + \
        np.sum(np.fmax.reduce(x[:0], axis=0, initial=c) * np.array([1.0, 2.0, 4.0])) + \
        np.sum(np.fmin.reduce(x[:, :0], axis=1, keepdims=True, initial=-c) ** 2) + \
        np.fmax.reduce(x[:0], axis=None, initial=c)


def test_fmax_reduce_initial_of_empty_by_hand(jit):
    """NumPy gives c (the empty reduction is c); srcgrad raised "zero-size array to
    reduction operation fmax which has no identity". All of dy goes to c: 2 + 2 (two
    rows) + (1 + 2 + 4) + 2 (-c)^2 over two rows' d/dc = 2 * 2c + 1."""
    x = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])
    c = 0.75
    want = 2 * c + 2 * c + 7 * c + 2 * c ** 2 + c
    assert fmax_of_empty(x, c) == pytest.approx(want)
    value, (gx, gc) = srcgrad.value_and_grad(fmax_of_empty, wrt=(0, 1), jit=jit)(x, c)
    assert value == pytest.approx(want)
    np.testing.assert_array_equal(gx, np.zeros((2, 3)))
    assert gc == pytest.approx(2 + 2 + 7 + 4 * c + 1)
    assert_grad(fmax_of_empty, (gx, gc), (x, c), [0, 1])


def fmax_initial_full(x, c):
    # c competes with the entries; a NaN entry is skipped, a row of NaNs gives c
    return np.sum(np.fmax.reduce(x, axis=1, initial=c) * np.array([1.0, 10.0, 100.0])) + \
        np.fmin.reduce(x[0], initial=c) * 1000.0


NANS = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan], [0.5, -1.0, np.nan]])


def test_fmax_reduce_initial_competes_and_skips_nans_by_hand(jit):
    """Rows of NANS with c = 2: row 0's max 3 beats c (dy 1 to x[0, 2]); row 1 is all NaN,
    so c (10 to c); row 2's 0.5 loses to c (100 to c). fmin of row 0 with c: 1 (1000 to
    x[0, 0]). No NaN entry gets a gradient."""
    c = 2.0
    want = 3.0 + 10 * c + 100 * c + 1000 * 1.0
    assert fmax_initial_full(NANS, c) == pytest.approx(want)
    value, (gx, gc) = srcgrad.value_and_grad(fmax_initial_full, wrt=(0, 1), jit=jit)(NANS, c)
    assert value == pytest.approx(want)
    np.testing.assert_array_equal(gx, [[1000.0, 0.0, 1.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    assert gc == pytest.approx(110.0)
    # c = 0.2 loses to row 2's 0.5 (100 to it) and beats fmin's 1 (1000 to c)
    gx, gc = srcgrad.grad(fmax_initial_full, wrt=(0, 1), jit=jit)(NANS, 0.2)
    np.testing.assert_array_equal(gx, [[0.0, 0.0, 1.0], [0.0, 0.0, 0.0], [100.0, 0.0, 0.0]])
    assert gc == pytest.approx(1010.0)
    # against differences where there are no NaNs (central differences of a NaN are NaN)
    x = np.array([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0], [0.3, 0.1, -0.2]])
    assert_grad(fmax_initial_full, srcgrad.grad(fmax_initial_full, wrt=(0, 1), jit=jit)(
        x, 0.7), (x, 0.7), [0, 1])


def fmax_pair(a, c):
    return np.fmax(a[0], c) + 10.0 * np.fmin(c, a[1]) + 100.0 * np.fmax(a[0], a[1])


def test_fmax_of_a_nan_gives_the_other_argument_its_gradient(jit):
    """np.fmax(nan, c) is c: its gradient is 1 to c (srcgrad gave 0, silently: neither
    a > b nor a == b holds with a NaN). fmax(nan, nan) is NaN; neither gets any."""
    a = np.array([np.nan, np.nan])
    gx, gc = srcgrad.grad(fmax_pair, wrt=(0, 1), jit=jit)(a, 0.5)
    np.testing.assert_array_equal(gx, [0.0, 0.0])
    assert gc == 11.0
    a = np.array([np.nan, 2.0])
    gx, gc = srcgrad.grad(fmax_pair, wrt=(0, 1), jit=jit)(a, 0.5)
    np.testing.assert_array_equal(gx, [0.0, 100.0])
    assert gc == 11.0
    _, t = srcgrad.jvp(fmax_pair, wrt=(0, 1), jit=jit)(a, 0.5, (np.array([1.0, 2.0]), 3.0))
    assert t == pytest.approx(3.0 + 10 * 3.0 + 100 * 2.0)


# ---- d.setdefault(k, v) on a local dict at a constant key ----


def setdefault_known(x, y):
    d = {"a": x, "n": 2.0}
    kept = d.setdefault("a", 3.0 * y)        # there: x (3y is not stored)
    added = d.setdefault("b", y * y)         # not there: binds y^2, returns it
    again = d.setdefault("b", np.sin(x))     # there now: y^2
    for _ in range(2):
        d["a"] = d["a"] * d.setdefault("b", x)   # there: a = x y^4 after the loop
    picked = d.setdefault("n", y) if x > 0.0 else d.setdefault("a", y)
    return kept * added + again + d["a"] + picked * d["b"]


def test_setdefault_at_known_keys_by_hand(jit):
    """x y^2 + y^2 + x y^4 + 2 y^2 (x > 0): d/dx = y^2 + y^4, d/dy = 2xy + 2y + 4xy^3 + 4y.
    srcgrad refused setdefault ("not its attribute 'setdefault'")."""
    x, y = 0.5, 1.5
    want = x * y ** 2 + y ** 2 + x * y ** 4 + 2 * y ** 2
    assert setdefault_known(x, y) == pytest.approx(want)
    value, (gx, gy) = srcgrad.value_and_grad(setdefault_known, wrt=(0, 1), jit=jit)(x, y)
    assert value == pytest.approx(want)
    assert gx == pytest.approx(y ** 2 + y ** 4)
    assert gy == pytest.approx(2 * x * y + 2 * y + 4 * x * y ** 3 + 4 * y)
    assert_grad(setdefault_known, (gx, gy), (x, y), [0, 1])
    # x < 0: the other branch picks d["a"] = x y^4
    gx, gy = srcgrad.grad(setdefault_known, wrt=(0, 1), jit=jit)(-x, y)
    assert gx == pytest.approx(y ** 2 + y ** 4 + y ** 4 * y ** 2)
    assert_grad(setdefault_known, (gx, gy), (-x, y), [0, 1])


def setdefault_arrays(x):
    d = {"w": x}
    s = d.setdefault("s", np.sin(x))
    d["w"] = d.setdefault("w", x * 0.0) * s
    return np.sum(d["w"] + d["s"] ** 2)


def test_setdefault_of_arrays_by_hand(jit):
    # sum(x sin x + sin^2 x): sin x + x cos x + 2 sin x cos x
    x = np.array([0.3, -1.1, 2.0])
    g = srcgrad.grad(setdefault_arrays, jit=jit)(x)
    np.testing.assert_allclose(g, np.sin(x) + x * np.cos(x) + 2 * np.sin(x) * np.cos(x))
    assert_grad(setdefault_arrays, (g,), (x,), [0])


def setdefault_in_loop(x):
    d = {"a": x}
    for i in range(2):
        d.setdefault("b", x * i)
    return d["a"] + d["b"]


def setdefault_in_branch(x):
    d = {"a": x}
    if x > 0.0:
        d.setdefault("b", x)
    return d["a"]


def setdefault_conditional(x):
    d = {"a": x}
    y = d.setdefault("b", x) if x > 0.0 else x
    return y + d["a"]


def setdefault_computed_key(x):
    d = {"a": x}
    k = "a"
    return d.setdefault(k, x)


@pytest.mark.parametrize("fun, line, what", [
    (setdefault_in_loop, "d.setdefault(\"b\", x * i)", "may or may not hold 'b'"),
    (setdefault_in_branch, "d.setdefault(\"b\", x)", "may or may not hold 'b'"),
    (setdefault_conditional, "y = d.setdefault(\"b\", x) if x > 0.0 else x",
     "evaluated here only in some cases"),
    (setdefault_computed_key, "return d.setdefault(k, x)", "at a constant key alone"),
])
def test_setdefault_where_the_key_may_be_there_or_not_is_refused(fun, line, what):
    """Where srcgrad cannot tell when it compiles whether the key is there, it refuses,
    naming the file, the line and its source (it refused every setdefault, saying only
    "not its attribute 'setdefault'")."""
    with pytest.raises(srcgrad.SrcgradError) as info:
        srcgrad.grad(fun, jit=False)(0.5)
    message = str(info.value)
    assert "test_issue20_leftovers.py:" in message and line in message, message
    assert what in message, message


# ---- lists rebound to a display in a loop ----


def displays_in_loops(x, a, b):
    # np.stack, np.concatenate, np.array and an index of a display bound in a loop; p
    # bound before the loop and again in it (on the tape)
    s = 0.0
    p = [x[0], x[1]]
    for i in range(3):
        q = [x[i], 2.0 * x[i]]
        r = [x * i, np.sin(x)]
        parts = [a * x[i], b]
        s = s + np.sum(np.stack(q) ** 2) + np.sum(r[0] * r[1]) + \
            np.sum(np.concatenate(r)) + np.sum(np.array(parts)) + p[0] * p[1]
        p = [p[1], p[0] * x[2]]
    return s


def test_displays_rebound_in_loops_compile_by_hand(jit):
    """Per iteration i: 5 x_i^2; sum(i x sin x) + sum(i x) + sum(sin x); a x_i + b; and
    p[0] p[1] of p = (x0, x1), (x1, x0 x2), (x0 x2, x1 x2): x0 x1 (1 + x2 + x2^2). They
    compiled only as Python (numba: no np.concatenate of a list, no tape of lists, no
    adjoint of np.stack of a list), and np.concatenate(r) with r[0] read raised
    TypeError as Python."""
    x = np.array([0.3, 1.2, -0.7])
    a, b = 1.5, 0.25
    x0, x1, x2 = x
    c = 1 + x2 + x2 ** 2
    want = 5 * np.sum(x ** 2) + 3 * np.sum(x * np.sin(x)) + 3 * np.sum(x) + \
        3 * np.sum(np.sin(x)) + a * np.sum(x) + 3 * b + x0 * x1 * c
    assert displays_in_loops(x, a, b) == pytest.approx(want)
    value, (gx, ga, gb) = srcgrad.value_and_grad(displays_in_loops, wrt=(0, 1, 2),
                                                 jit=jit)(x, a, b)
    assert value == pytest.approx(want)
    hand = 10 * x + 3 * (np.sin(x) + x * np.cos(x)) + 3 + 3 * np.cos(x) + a
    hand += np.array([x1 * c, x0 * c, x0 * x1 * (1 + 2 * x2)])
    np.testing.assert_allclose(gx, hand)
    assert ga == pytest.approx(np.sum(x))
    assert gb == pytest.approx(3.0)
    assert_grad(displays_in_loops, (gx, ga, gb), (x, a, b), [0, 1, 2])
    t = np.array([0.5, -1.0, 2.0])
    _, tangent = srcgrad.jvp(displays_in_loops, wrt=0, jit=jit)(x, a, b, t)
    assert tangent == pytest.approx(hand @ t)
    assert tangent == pytest.approx(slope(lambda x: displays_in_loops(x, a, b), (x,), (t,)))


def product_of_two(q):
    return q[0] * q[1]


def items_added_in_loops(x):
    # the adjoint of a display bound in a loop, reached whole (sum, a helper, a slice)
    # and by index: its items' adjoints add item by item
    s = 0.0
    for i in range(3):
        p = [x[i], x[i] + 1.0]
        s = s + product_of_two(p) + sum(p) + p[1] + len(p) + max(p)
        r = [x * i, np.sin(x)]
        s = s + np.sum(product_of_two(r)) + np.sum(sum(r[::-1])) + np.sum(r[0])
    return s


def test_adjoints_of_displays_in_loops_add_item_by_item_by_hand(jit):
    """Per i: x_i (x_i + 1) + (2 x_i + 1) + (x_i + 1) + 2 + (x_i + 1): 2 x_i + 5 to x_i;
    sum(i x sin x) + sum(i x + sin x) + sum(i x): 3 (sin x + x cos x) + 3 + 3 cos x + 3.
    srcgrad gave x_i 1 (`dp += sum_items_grad(...)` extended the list of the items'
    adjoints, silently) and raised TypeError (`dr[1] += ...` into a tuple)."""
    x = np.array([0.3, 1.2, -0.7])
    g = srcgrad.grad(items_added_in_loops, jit=jit)(x)
    hand = 2 * x + 5 + 3 * (np.sin(x) + x * np.cos(x)) + 3 + 3 * np.cos(x) + 3
    np.testing.assert_allclose(g, hand)
    assert_grad(items_added_in_loops, (g,), (x,), [0])
    t = np.array([0.5, -1.0, 2.0])
    _, tangent = srcgrad.jvp(items_added_in_loops, jit=jit)(x, t)
    assert tangent == pytest.approx(hand @ t)


# ---- copies of an argument's dict: dict(p), dict(p, k=v), p.copy(), {**p, k: v} ----


def copied_then_defaulted(p, x):
    q = dict(p)
    q.setdefault("b", 2.0)     # not in p: q's own entry
    q.setdefault("a", x)       # in p: q["a"] as it is
    q["a"] = q["a"] * 2.0      # q's entry bound again; p["a"] unchanged
    return np.sum(q["a"] * x) * q["b"] + np.sum(p["a"])


def copied_with_keywords(p, x):
    q = dict(p, c=x)
    q["a"][0] = 5.0            # the array q and p share (the caller's is copied first)
    return np.sum(q["a"] * q["c"])


def copied_by_method(p, x):
    q = p.copy()
    q.update(a=q["a"] + x)
    return np.sum(q["a"] ** 2) + np.sum(q["w"])


def spread(p, x):
    q = {**p, "c": 3.0, "w": x}
    return np.sum(q["a"] * x) * q["c"] + np.sum(q["w"] ** 2)


@pytest.mark.parametrize("fun, by_hand", [
    # 2 sum(2 a x) + sum(a): 4x + 1, 4a (w not read)
    (copied_then_defaulted, lambda a, w, x: (4 * x + 1, 0 * w, 4 * a)),
    # sum(a' x) with a'[0] = 5: (0, x1), a' = (5, a1)
    (copied_with_keywords, lambda a, w, x: ([0.0, x[1]], 0 * w, [5.0, a[1]])),
    # sum((a + x)^2) + sum(w): 2(a + x), 1, 2(a + x)
    (copied_by_method, lambda a, w, x: (2 * (a + x), 1 + 0 * w, 2 * (a + x))),
    # 3 sum(a x) + sum(x^2): 3x, 0 (replaced by x), 3a + 2x
    (spread, lambda a, w, x: (3 * x, 0 * w, 3 * a + 2 * x)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_copies_of_an_argument_dict_by_hand(fun, by_hand, jit):
    """srcgrad refused them ("using it whole ... binding it to another name")."""
    a, w, x = np.array([1.0, 2.0]), np.array([0.5]), np.array([3.0, -4.0])
    p = {"a": a.copy(), "w": w.copy()}
    gp, gx = srcgrad.grad(fun, wrt=(0, 1), jit=jit)(p, x)
    want_a, want_w, want_x = by_hand(a, w, x)
    np.testing.assert_allclose(gp["a"], want_a)
    np.testing.assert_allclose(gp["w"], want_w)
    np.testing.assert_allclose(gx, want_x)
    np.testing.assert_array_equal(p["a"], a)   # the caller's dict and arrays as they were
    assert sorted(gp) == ["a", "w"]
    srcgrad.check_grad(fun, {"a": a.copy(), "w": w.copy()}, x, wrt=(0, 1))


def copied_nested(p, x):
    q = dict(p)
    return np.sum(q["inner"]["a"] * x)


def test_a_copy_of_a_dict_of_dicts_is_refused():
    # a copy shares the nested dict; srcgrad's literal would not: refused, naming the line
    p = {"inner": {"a": np.ones(2)}}
    with pytest.raises(srcgrad.UnsupportedSyntax, match=r"test_issue20_leftovers.py:\d+: "
                                                        r"'p' is a dict of arrays"):
        srcgrad.grad(copied_nested, jit=False)(p, np.ones(2))
