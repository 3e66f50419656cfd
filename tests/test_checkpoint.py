"""checkpoint=: the outermost loop run in segments, its tape bounded.

Every gradient is checked against central differences (tests/fd.py) and, where there is
a closed form, against the value by hand; compiled with numba and as Python (the `jit`
fixture). Equality with checkpoint=None is asserted only beside those checks.
"""

import os
import tracemalloc

import numpy as np
import pytest
from fd import assert_grad

import srcgrad

HERE = os.path.basename(__file__)


def power(x, a, n):
    for _ in range(n):
        x = x * a
    return x


@pytest.mark.parametrize("every", [True, 1, 3, 4, 20])
@pytest.mark.parametrize("n", [0, 1, 7, 12])
def test_power_by_hand(jit, every, n):
    """x_{t+1} = a x_t over n steps: d/dx0 = a^n, d/da = n a^(n-1) x0; k dividing n
    (3, 4 of 12), not (7), n < k (20), n = 0."""
    x0, a = 1.3, 0.9
    dx, da = srcgrad.grad(power, wrt=(0, 1), jit=jit, checkpoint=every)(x0, a, n)
    assert dx == pytest.approx(a ** n, rel=1e-12)
    assert da == pytest.approx(n * a ** (n - 1) * x0 if n else 0.0, rel=1e-12)
    assert_grad(power, (dx, da), (x0, a, n), (0, 1))


def coupled(x, y, a, n):
    for t in range(n):
        x = x * a + np.sin(y)
        y = y + 0.1 * x * t
    return x + y


@pytest.mark.parametrize("every", [True, 2, 5])
def test_two_carried_values(jit, every):
    args = (0.4, 0.2, 0.95, 11)
    g = srcgrad.grad(coupled, wrt=(0, 1, 2), jit=jit, checkpoint=every)(*args)
    assert_grad(coupled, g, args, (0, 1, 2))
    np.testing.assert_allclose(g, srcgrad.grad(coupled, wrt=(0, 1, 2), jit=jit)(*args),
                               rtol=1e-12)


def strided(x, a, lo, n):
    s = 0.0
    for i in range(lo, n, 3):
        x = x * a + 0.01 * i
        s = s + x * x
    return s


@pytest.mark.parametrize("every", [True, 2])
@pytest.mark.parametrize("lo,n", [(2, 20), (2, 21), (5, 3)])
def test_range_start_and_step(jit, every, lo, n):
    args = (0.7, 1.1, lo, n)
    g = srcgrad.grad(strided, wrt=(0, 1), jit=jit, checkpoint=every)(*args)
    assert_grad(strided, g, args, (0, 1))


def shift(u, c, n):
    total = 0.0
    for _ in range(n):
        for j in range(1, u.shape[0]):   # not segmented: only the outermost loop is
            u[j] = u[j] + c * u[j - 1]
        total = total + np.sum(u * u)
    return total


@pytest.mark.parametrize("every", [True, 3])
def test_subscript_writes_and_a_nested_loop(jit, every):
    u = np.array([0.5, -0.2, 0.3, 0.1])
    kept = u.copy()
    g = srcgrad.grad(shift, wrt=(0, 1), jit=jit, checkpoint=every)
    du, dc = g(u, 0.3, 7)
    np.testing.assert_array_equal(u, kept)  # the caller's array is not written into
    assert_grad(shift, (du, dc), (u, 0.3, 7), (0, 1))
    functions = {f.split("(")[0]: f for f in g.source.split("\ndef ")}
    code = {name: [line.strip() for line in f.splitlines()
                   if not line.strip().startswith("#")] for name, f in functions.items()}
    assert any(line.startswith("for j in") for line in code["shift_segment_vjp"])
    assert not any(line.startswith("for j in") for line in code["def shift_grad"])


def scaled_in_place(u, c, n):
    for _ in range(n):
        u += c * u        # in place: the segment changes a copy of what it is passed
    return np.sum(u * u)


def test_in_place_update_by_hand(jit):
    """u_n = (1 + c)^n u: d/dc sum(u_n^2) = 2n (1 + c)^(2n - 1) sum(u^2)."""
    u, c, n = np.array([0.5, -1.0, 2.0]), 0.1, 7
    kept = u.copy()
    dc = srcgrad.grad(scaled_in_place, wrt=1, jit=jit, checkpoint=3)(u, c, n)
    np.testing.assert_array_equal(u, kept)
    assert dc == pytest.approx(2 * n * (1 + c) ** (2 * n - 1) * np.sum(kept ** 2), rel=1e-12)
    assert_grad(scaled_in_place, (dc,), (u, c, n), (1,))


def in_a_branch(x, a, n):
    if n > 2:
        for _ in range(n):
            x = x * a
    return x


@pytest.mark.parametrize("n", [2, 5])
def test_a_loop_in_a_branch(jit, n):
    dx = srcgrad.grad(in_a_branch, jit=jit, checkpoint=2)(1.5, 0.8, n)
    assert dx == pytest.approx(0.8 ** n if n > 2 else 1.0, rel=1e-12)


def over_rows(w, xs, h):
    for x in xs:
        h = np.tanh(w @ h + x)
    return np.sum(h)


def enumerated(a, xs):
    s = 0.0
    for k, x in enumerate(xs, 1):
        s = s * a + k * x
    return s


def zipped(a, xs, ys):
    s = 0.0
    for x, y in zip(xs, ys):  # noqa: B905 (unequal lengths: the shorter one counts)
        s = np.sin(s * a + x * y)
    return s


@pytest.mark.parametrize("every", [True, 3])
def test_sequences(jit, every):
    """Over an array's rows, enumerate (with a start) and zip (of unequal lengths): the
    segments are passed slices."""
    r = np.random.default_rng(3)
    cases = [(over_rows, (0.5 * r.standard_normal((3, 3)), r.standard_normal((7, 3)),
                          r.standard_normal(3)), (0, 1, 2)),
             (enumerated, (0.9, r.standard_normal(8)), (0, 1)),
             (zipped, (0.7, r.standard_normal(6), r.standard_normal(5)), (0, 1, 2))]
    for fun, args, wrt in cases:
        g = srcgrad.grad(fun, wrt=wrt, jit=jit, checkpoint=every)
        assert_grad(fun, g(*args), args, wrt)
        assert "_part[" in g.source or "_part)" in g.source


def enumerated_by_hand(a, xs):
    s = 0.0
    for k, x in enumerate(xs, 2):
        s = s + a * k * x
    return s


def test_enumerate_start_by_hand(jit):
    """d/da sum_k a k x_k = sum_k k x_k, k from 2."""
    xs = np.array([0.5, -1.0, 2.0, 0.25, 3.0])
    da = srcgrad.grad(enumerated_by_hand, jit=jit, checkpoint=2)(0.3, xs)
    assert da == pytest.approx(np.sum(np.arange(2, 7) * xs), rel=1e-12)


def inner_index_only(x, a, n):
    for j in range(n - 5):    # no iterations for n <= 5: j stays unbound
        x = x + 0.1 * j
    for _ in range(n):
        for j in range(2):    # j is not passed to the segment: no iteration reads it first
            x = x * a + 0.01 * j
    return x


def test_a_name_only_an_inner_loop_assigns(jit):
    args = (0.7, 0.9, 3)
    g = srcgrad.grad(inner_index_only, wrt=(0, 1), jit=jit, checkpoint=2)(*args)
    assert g[0] == pytest.approx(0.9 ** 6, rel=1e-12)
    assert_grad(inner_index_only, g, args, (0, 1))


def becomes_an_array(x, n):
    acc = 1
    for _ in range(n):
        acc = acc * x             # a number before the loop, an array in it
        acc[0] = acc[0] * 0.5
    return np.sum(acc)


def test_a_number_that_becomes_an_array_written_into(jit):
    """acc_n[k] = x[k]^n (0.5^n for k = 0): d/dx[k] = n x[k]^(n-1) (times 0.5^n for k = 0)."""
    x, n = np.array([1.2, 0.8, -0.5]), 5
    g = srcgrad.grad(becomes_an_array, jit=jit, checkpoint=2)
    if jit is True and os.environ.get("SRCGRAD_DISABLE_JIT", "") in ("", "0"):
        with pytest.raises(srcgrad.SrcgradError, match="a number, then an array"):
            g(x, n)   # numba types a variable once, as without checkpoint=
        return
    dx = g(x, n)
    want = n * x ** (n - 1) * np.array([0.5 ** n, 1.0, 1.0])
    np.testing.assert_allclose(dx, want, rtol=1e-12)


def skipping(x, a, n):
    for i in range(n):
        if i % 3 == 1:
            continue
        x = np.tanh(x * a)
    return x


def test_continue(jit):
    args = (0.6, 1.2, 10)
    g = srcgrad.grad(skipping, wrt=(0, 1), jit=jit, checkpoint=3)(*args)
    assert_grad(skipping, g, args, (0, 1))


def grow(x, a, limit):
    y = 0.0
    while x < limit:
        x = x * a
        y = y + np.sin(x)
    return x + y


@pytest.mark.parametrize("every", [True, 1, 4])
def test_while(jit, every):
    """x_k = x0 a^k until x >= limit (k = 8 here, fixed near the point)."""
    x0, a = 1.0, 1.3
    args = (x0, a, 7.5)
    dx, da = srcgrad.grad(grow, wrt=(0, 1), jit=jit, checkpoint=every)(*args)
    k = 8
    xs = x0 * a ** np.arange(1, k + 1)
    want_dx = a ** k + np.sum(np.cos(xs) * a ** np.arange(1, k + 1))
    want_da = k * a ** (k - 1) * x0 + np.sum(np.cos(xs) * np.arange(1, k + 1) * xs / a)
    assert (dx, da) == pytest.approx((want_dx, want_da), rel=1e-12)
    assert_grad(grow, (dx, da), args, (0, 1))


def decay(x, a):
    n = 0
    while n < 3000:
        x = x + 0.001 * np.sin(a * x)
        n = n + 1
    return x


def test_a_long_while_grows_its_segments(jit):
    args = (0.5, 1.7)
    g = srcgrad.grad(decay, wrt=(0, 1), jit=jit, checkpoint=True)(*args)
    assert_grad(decay, g, args, (0, 1), rtol=1e-6)


def with_value(x, a, n):
    for _ in range(n):
        x = np.cos(x) * a
    return x


def test_value_and_vjp(jit):
    value, da = srcgrad.value_and_grad(with_value, wrt=1, jit=jit, checkpoint=4)(0.3, 0.8, 9)
    assert value == pytest.approx(with_value(0.3, 0.8, 9), rel=1e-14)
    assert_grad(with_value, (da,), (0.3, 0.8, 9), (1,))
    value, pullback = srcgrad.vjp(with_value, wrt=1, jit=jit, checkpoint=True)(0.3, 0.8, 9)
    assert pullback(2.0) == pytest.approx(2.0 * da, rel=1e-12)


def scaled_power(w, n):
    x = w[1]
    for _ in range(n):
        x = x * w[0]
    return x


def test_hvp_by_hand(jit):
    """f = w1 w0^n: H = [[n(n-1) w1 w0^(n-2), n w0^(n-1)], [n w0^(n-1), 0]]."""
    w, v, n = np.array([1.1, 0.7]), np.array([0.3, -0.5]), 6
    h = np.array([[n * (n - 1) * w[1] * w[0] ** (n - 2), n * w[0] ** (n - 1)],
                  [n * w[0] ** (n - 1), 0.0]])
    got = srcgrad.hvp(scaled_power, jit=jit, checkpoint=4)(w, n, v)
    np.testing.assert_allclose(got, h @ v, rtol=1e-12)


def test_grad_of_grad_by_hand(jit):
    """d2/da2 of x0 a^n = n (n - 1) a^(n - 2) x0."""
    g = srcgrad.grad(power, wrt=1, jit=jit, checkpoint=3)
    assert srcgrad.grad(g, wrt=1, jit=jit)(1.3, 0.9, 7) == \
        pytest.approx(42 * 0.9 ** 5 * 1.3, rel=1e-12)


def _peak(fun, *args) -> int:
    tracemalloc.start()
    try:
        fun(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_tape_is_bounded():
    """In the Python form, with n = 40000 steps of a 16-vector, the taped states are
    ~5 MB without checkpointing and ~2 sqrt(n) = 400 states (~50 kB) with it."""
    def state(x, a, n):
        for _ in range(n):
            x = np.tanh(x * a)
        return np.sum(x)

    x, n = np.linspace(-1.0, 1.0, 16), 40000
    plain = srcgrad.grad(state, wrt=1, jit=False)
    segmented = srcgrad.grad(state, wrt=1, jit=False, checkpoint=True)
    assert plain(x, 0.9, 10) == pytest.approx(segmented(x, 0.9, 10), rel=1e-12)
    full, bounded = _peak(plain, x, 0.9, n), _peak(segmented, x, 0.9, n)
    assert full > 16 * 8 * n
    assert bounded < full / 20, (full, bounded)


# ---- refused, naming the line ----

def leaves(x, a, n):
    for _ in range(n):
        x = x * a
        if x > 3.0:
            break
    return x


def returns(x, a, n):
    for _ in range(n):
        x = x * a
        if x > 3.0:
            return x
    return x


def over_a_call(x, ws):
    for w in reversed(ws):
        x = x * w
    return x


def changes_its_sequence(x, ws):
    for w in ws:
        x = x * w
        ws[0] = 1.0
    return x


def index_after(x, a, n):
    i = 0
    for i in range(n):
        x = x * a + 0.01 * i
    return x * i


def first_in_loop(x, a, n):
    for _ in range(n):
        y = x * a
        x = y
    return y


def shared(u, c, n):
    v = u
    for _ in range(n):
        u[0] = u[0] * c
    return np.sum(v)


def shared_in_place(u, c, n):
    v = u
    for _ in range(n):
        u += c * u
    return np.sum(v)


def with_else(x, a, n):
    for _ in range(n):
        x = x * a
    else:
        x = x + 1.0
    return x


def _line(fun, text):
    import inspect
    lines, first = inspect.getsourcelines(fun)
    return first + next(k for k, s in enumerate(lines) if text in s)


@pytest.mark.parametrize("fun,args,where,says", [
    (leaves, (1.0, 1.5, 9), "break", "`break` leaves the loop"),
    (returns, (1.0, 1.5, 9), "return x\n", "`return` leaves the loop"),
    (over_a_call, (1.0, np.ones(3)), "for w in reversed", "give what this one iterates"),
    (with_else, (1.0, 1.5, 3), "x = x + 1.0", "has an `else`"),
    (changes_its_sequence, (1.0, np.ones(3)), "for w in ws", "changes 'ws', which it"),
    (index_after, (1.0, 1.5, 9), "return x * i", "loop's variable 'i'"),
    (first_in_loop, (1.0, 1.5, 9), "return y", "'y' is first assigned in the loop"),
    (shared, (np.ones(2), 1.5, 3), "for _ in range(n)", "share its array with 'v'"),
    (shared_in_place, (np.ones(2), 1.5, 3), "for _ in range(n)", "share its array with 'v'"),
])
def test_refused(fun, args, where, says):
    with pytest.raises(srcgrad.SrcgradError) as err:
        srcgrad.grad(fun, wrt=0 if fun in (shared, shared_in_place) else 1, checkpoint=True,
                     jit=False)(*args)
    assert says in str(err.value)
    assert f"{HERE}:{_line(fun, where)}" in str(err.value)


@pytest.mark.parametrize("bad", [0, -2, 2.5, "yes"])
def test_a_bad_option(bad):
    with pytest.raises(srcgrad.SrcgradError, match="checkpoint must be"):
        srcgrad.grad(power, checkpoint=bad)


def cycled(x, w):
    k = 0
    s = 0.0
    for _ in range(7):
        s = s * w + x[k]
        k = k + 1
        if k == 3:
            k = 0
    return s


def cycled_while(x):
    k = 0
    s = 0.0
    while k < 7:
        s = np.sin(s) + x[k % 3]
        k = k + 1
    return s


def test_an_int_counter_the_segments_return_stays_an_int(jit):
    # the counter k came back from a segment in the tuple (s, k), which reverse took as a
    # float (k = 0 written k = 0.0): x[k] raised IndexError. By hand: s = sum_t w^(6-t)
    # x[t % 3], so ds/dx_j sums w^(6-t) over t = j mod 3
    x, w = np.array([0.5, -0.9, 0.7]), 0.8
    dx, dw = srcgrad.grad(cycled, wrt=(0, 1), jit=jit, checkpoint=2)(x, w)
    want = [sum(w ** (6 - t) for t in range(7) if t % 3 == j) for j in range(3)]
    np.testing.assert_allclose(dx, want, rtol=1e-12)
    assert_grad(cycled, (dx, dw), (x, w), (0, 1))
    g = srcgrad.grad(cycled_while, jit=False, checkpoint=True)(x)
    assert_grad(cycled_while, [g], (x,), [0])
