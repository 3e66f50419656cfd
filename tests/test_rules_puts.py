"""np.put, np.place and np.put_along_axis, called for their effect (srcgrad/rules/puts.py):
normalize writes them as writes (`y[...] = put_into(y, ind, v)`, `placed`, `put_along`),
which the passes follow as any write. Gradients by hand (linear losses, where the last
write into a repeated entry keeps its cotangent and v repeats cyclically) and against
central differences; forward mode and hvp; the values against NumPy's; what is refused."""

import numpy as np
import pytest
from fd import assert_grad, slope
from sweep import check, parametrize

import srcgrad
from srcgrad.rules.puts import placed, put_along, put_into

put_values = np.put   # np.put under another name
X = np.array([0.3, -0.5, 1.2, 0.7])
T = np.array([1.0, 0.5, -1.0, 0.25])
C = np.array([1.0, 2.0, 3.0, 4.0])


# ---- linear losses: the gradients by hand ----


def _put_repeats(x):
    y = x * 1.0
    np.put(y, [0, 0, 3], x[:2] * 3.0)   # 0 gets v0 then v1 (kept); 3 gets v0 again
    return np.sum(y * C)                # y = [3 x1, x1, x2, 3 x0]


def _put_modes(x):
    y = x * 1.0
    np.put(y, [4, -1], x[1:3], mode="wrap")   # 4 -> 0, -1 -> 3
    z = x * 1.0
    np.put(z, np.array([9, -5]), 2.0 * x[:2], mode="clip")   # 9 -> 3, -5 -> 0
    w = x * 1.0
    np.put(w, -2, x[3])   # mode 'raise': a negative index counts from the end
    return np.sum(y * C) + np.sum(z * C) + np.sum(w * C)


def _place(x):
    y = x * 1.0
    np.place(y, np.array([True, False, True, True]), x[:2] * 2.0)  # vals repeated: v0, v1, v0
    return np.sum(y * C)                # y = [2 x0, x1, 2 x1, 2 x0]


def _along(x):
    y = np.stack([x, 2.0 * x])
    np.put_along_axis(y, np.array([[0, 0], [3, 1]]), 5.0 * x[:2].reshape(2, 1), axis=1)
    return np.sum(y * (C + np.array([[0.0], [4.0]])))
    # y = [[5 x0, x1, x2, x3], [2 x0, 5 x1, 2 x2, 5 x1]] against [[1, 2, 3, 4], [5, 6, 7, 8]]


def _along_flat(x):
    y = x * 1.0
    np.put_along_axis(y, np.array([2, 2, -1]), 2.0 * x[:3], axis=None)
    return np.sum(y * C)                # y = [x0, x1, 2 x1, 2 x2]


BY_HAND = [
    (_put_repeats, [12.0, 5.0, 3.0, 0.0]),
    # y = [x1, x1, x2, x2], z = [2 x1, x1, x2, 2 x0], w = [x0, x1, x3, x3]
    (_put_modes, [0.0 + 8.0 + 1.0, 3.0 + 4.0 + 2.0, 7.0 + 3.0 + 0.0, 0.0 + 0.0 + 7.0]),
    (_place, [10.0, 8.0, 0.0, 0.0]),
    (_along, [15.0, 72.0, 17.0, 4.0]),
    (_along_flat, [1.0, 8.0, 8.0, 0.0]),
]


@pytest.mark.parametrize("fun,hand", BY_HAND, ids=[f.__name__ for f, _ in BY_HAND])
def test_by_hand(fun, hand):
    value, got = srcgrad.value_and_grad(fun, jit=False)(X)
    assert value == pytest.approx(fun(X), rel=1e-14)
    np.testing.assert_allclose(got, hand, rtol=1e-14)


# ---- nonlinear losses against differences ----


def _puts(x):
    a = np.outer(x, x)
    np.put(a, np.array([[5, 0], [-1, 5]]), np.sin(x[:3]))   # 2-D ind, 5 twice, v cycled
    b = x * 1.0
    np.put(b, [1, 2], 0.5, mode="clip")    # a constant: no gradient to v
    return np.sum(a ** 2 * np.arange(16.0).reshape(4, 4)) + np.sum(np.exp(b) * x)


def _places(x):
    a = np.outer(x, x)
    np.place(a, a > 0.1, np.cos(x[:3]))    # mask of a's shape, vals cycled
    b = x * 2.0
    np.place(b, x < 0, x[2:3] ** 2)        # one value for every True entry
    return np.sum(a ** 3 * np.arange(16.0).reshape(4, 4)) + np.sum(b ** 2)


def _alongs(x):
    a = np.outer(x, x[:3])                  # (4, 3)
    np.put_along_axis(a, np.array([[2, 0, 2]]), x[1:4] ** 2, axis=0)   # values broadcast
    b = np.outer(x, x)
    np.put_along_axis(b, np.argsort(b, axis=1)[:, :2], np.tanh(b[:, :2]), axis=-1)
    return np.sum(np.sin(a) * np.arange(12.0).reshape(4, 3)) + np.sum(b ** 3)


def _in_a_loop(x):
    y = x * 1.0
    for i in range(3):
        np.put(y, [i + 1], y[i] * y[i + 1])           # each write read by the next
        np.place(y, y > 0.5, np.sin(y[:2]))
        np.put_along_axis(y, np.array([i]), y[3] * 2.0, axis=None)
    return np.sum(y ** 2)


CASES = [   # (the rule sweep's: test_rules.py checks that every rule has a case)
    ("put", (put_into,), _puts, (X,), [0], True),
    ("place", (placed,), _places, (X,), [0], True),
    ("put_along_axis", (put_along,), _alongs, (X,), [0], True),
    ("puts-in-a-loop", (put_into, placed, put_along), _in_a_loop, (X,), [0], False),
]


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


@pytest.mark.parametrize("fun", [_puts, _places, _alongs])
def test_forward_mode_and_hvp(fun):
    value, dvalue = srcgrad.jvp(fun, jit=False)(X, T)
    assert value == pytest.approx(fun(X), rel=1e-14)
    assert dvalue == pytest.approx(slope(fun, (X,), (T,)), rel=1e-6)
    flat = srcgrad.grad(fun, jit=False)
    h = 1e-6
    np.testing.assert_allclose(srcgrad.hvp(fun, jit=False)(X, T),
                               (flat(X + h * T) - flat(X - h * T)) / (2 * h), rtol=1e-5,
                               atol=1e-6)


def test_values_are_numpys(jit):
    # the compiled forms of the helpers against NumPy, through a gradient's value
    m = np.arange(12.0).reshape(3, 4) * 0.1 - 0.35

    def many(x):
        a = x * 1.0
        np.put(a, [13, -13, 2], np.array([1.5, 2.5]), mode="wrap")
        b = x * 1.0
        np.put(b, [100, -100, 5, 5], x[0, :3], mode="clip")
        c = x * 1.0
        np.place(c, x > 0.0, x[1])
        d = x * 1.0
        np.put_along_axis(d, np.array([[1, -1, 0, 2]]), x[2], axis=0)
        e = x * 1.0
        np.put_along_axis(e, np.array([[3], [0], [-2]]), 7.0, axis=1)
        np.put(e, [0, 1], x[0, :0])   # an empty v writes nothing
        f = x * 1.0
        np.put(f, [1, 6], [x[0, 0] ** 2, x[1, 2]])   # a list of values
        return np.sum(np.stack([a, b, c, d, e, f]) ** 2 * np.arange(72.0).reshape(6, 3, 4))

    value, g = srcgrad.value_and_grad(many, jit=jit)(m)
    assert value == pytest.approx(many(m), rel=1e-14)
    assert_grad(many, [g], (m,), [0])


def test_a_put_into_an_argument_leaves_the_callers_array():
    def put_argument(x):
        np.put(x, [1], 0.0)
        return np.sum(x ** 2)
    x = X.copy()
    got = srcgrad.grad(put_argument, jit=False)(x)
    np.testing.assert_array_equal(x, X)
    np.testing.assert_allclose(got, 2 * X * [1.0, 0.0, 1.0, 1.0])


def test_an_empty_v_writes_nothing():
    def nothing(x):
        y = x * 2.0
        np.put(y, [0, 1], x[:0])
        return np.sum(y ** 2)
    np.testing.assert_allclose(srcgrad.grad(nothing, jit=False)(X), 8 * X)


# ---- what fails, and how ----


def test_out_of_range_and_bad_modes_fail_as_numpys(jit):
    def out_of_range(x):
        y = x * 1.0
        np.put(y, [4], x[0])
        return np.sum(y)

    def bad_mode(x):
        y = x * 1.0
        np.put(y, [1], x[0], mode="nearest")
        return np.sum(y)

    def short_mask(x):
        y = x * 1.0
        np.place(y, x[:2] > 0, x[0])
        return np.sum(y)

    def out_of_its_axis(x):
        y = np.outer(x, x)
        np.put_along_axis(y, np.array([[4], [0], [1], [2]]), x[0], axis=1)
        return np.sum(y)

    with pytest.raises(IndexError):
        srcgrad.grad(out_of_range, jit=jit)(X)
    with pytest.raises(IndexError):
        srcgrad.grad(out_of_its_axis, jit=jit)(X)
    with pytest.raises(ValueError):
        srcgrad.grad(bad_mode, jit=jit)(X)
    with pytest.raises(ValueError, match="same size"):
        srcgrad.grad(short_mask, jit=jit)(X)


def test_floats_into_an_integer_array_are_refused():
    # NumPy truncates them: a gradient through them would be wrong
    def truncated(x):
        y = np.zeros(4, dtype=np.int64)
        np.put(y, [0, 1], x[:2])
        return np.sum(y * x)

    def complex_into_real(x):
        y = x * 1.0
        np.place(y, x > 0, x[:1] * 1j)
        return np.sum(y)

    with pytest.raises(TypeError, match="NumPy casts them"):
        srcgrad.grad(truncated, jit=False)(X)
    with pytest.raises(TypeError, match="NumPy casts them"):
        srcgrad.grad(complex_into_real, jit=False)(X)
    # (numba refuses to type it, and jit=True then runs the Python form for its error)
    with pytest.raises(TypeError, match="NumPy casts them"):
        srcgrad.grad(truncated, jit=True)(X)


def test_the_put_method_stays_refused():
    def method(x):
        y = x * 1.0
        y.put([0], 1.0)
        return np.sum(y)
    with pytest.raises(srcgrad.UnsupportedSyntax, match=r"test_rules_puts.py:\d+: '\.put\(\)'"):
        srcgrad.grad(method, jit=False)(X)


def test_real_values_into_a_complex_array(jit):
    # a real value written into a complex array gets the real part of its cotangent
    # (JAX's convention); complex values their whole cotangent
    def mixed(x):
        y = x * (1 + 2j)
        np.put(y, [0, 3], x[1:2] * 2.0)
        np.place(y, x > 0.5, x[:1] * (0.5 - 1j))
        np.put_along_axis(y, np.array([1]), x[3] * 3.0, axis=None)
        return np.sum(np.abs(y) ** 2 * C) + np.sum(np.imag(y) * x)
    assert_grad(mixed, [srcgrad.grad(mixed, jit=jit)(X)], (X,), [0])


def _into_an_attribute(x):
    y = np.ones(4)
    z = x * y
    np.put(y.T, [0], 5.0)      # normalize cannot write it as a write: refused
    return np.sum(z)


def _into_a_view_of_a_view(x):
    y = np.ones(4)
    z = x * y
    np.place(y[::-1][:2], np.array([True, False]), 5.0)
    return np.sum(z)


def _its_value_taken(x):
    y = np.ones(4)
    z = x * y
    w = np.put_along_axis(y, np.array([0]), 5.0, axis=None)   # noqa: F841
    return np.sum(z)


def _copied_into_an_attribute(x):
    y = np.ones(4)
    z = x * y
    np.copyto(y.T, 5.0)   # (gave [5, 5, 5, 5], a silently wrong gradient)
    return np.sum(z)


def _diagonal_filled_in_an_attribute(x):
    y = np.ones((4, 4))
    z = x * y
    np.fill_diagonal(y.T, 5.0)
    return np.sum(z)


def _put_under_another_name(x):
    y = np.ones(4)
    z = x * y
    put_values(y, [0], x[0] * 3.0)
    return np.sum(z)


@pytest.mark.parametrize("fun", [_into_an_attribute, _into_a_view_of_a_view, _its_value_taken,
                                 _copied_into_an_attribute, _diagonal_filled_in_an_attribute])
def test_writes_it_cannot_follow_are_refused(fun):
    # (followed as they run, the adjoint of z = x * y would read y after the write)
    with pytest.raises(srcgrad.UnsupportedSyntax,
                       match=r"test_rules_puts.py:\d+: [\w.]+\(\) writes into an array in "
                             r"place"):
        srcgrad.grad(fun, jit=False)(X)


def test_put_under_another_name_is_followed(jit):
    # y (ones, read by z's adjoint before the write) gives x its gradient 1 each
    np.testing.assert_allclose(srcgrad.grad(_put_under_another_name, jit=jit)(X), np.ones(4))


def test_writes_into_a_constant_array_read_by_the_adjoint():
    def constant(x):
        y = np.ones(4)
        z = x * y
        for i in range(2):
            np.put(y, [i], 5.0)
        np.put(y[1:], [1], 3.0)
        return np.sum(z * y)     # y = [5, 5, 3, 1]
    np.testing.assert_allclose(srcgrad.grad(constant, jit=False)(X), [5.0, 5.0, 3.0, 1.0])
