"""np.i0, np.ediff1d, np.vdot (srcgrad/rules/numpy_more.py), np.logspace, np.geomspace
(rules/spacing.py), np.polyder and np.polyint (rules/polynomials.py): against central
differences (grad and jvp; one element, empty results, every keyword), by hand, and what
is refused."""

import numpy as np
import pytest
from sweep import check, check_hvp, check_jvp, parametrize
from test_complex import complex_grad

import srcgrad
from srcgrad.checks import numerical_grad
from srcgrad.rules.numpy_more import bessel_i1

WEIGHTS = np.array([0.3, -1.2, 0.5, 2.0, 0.7, -0.4, 1.1, 0.9, -0.6, 1.4])


def several(x, y):
    # np.i0, np.ediff1d and np.vdot, compiled once
    return (np.sum(np.i0(x) * WEIGHTS[:6].reshape(2, 3)) + np.i0(y[0])
            + np.sum(np.ediff1d(x, y[1:], y[0]) ** 2 * WEIGHTS[:8])
            + np.vdot(x, x * y) + np.vdot(y, y))


def slopes(x):
    # the slope of np.i0, which generated code calls (its second derivative)
    return np.sum(bessel_i1(x) * WEIGHTS[:3]) + bessel_i1(x[0]) ** 2


def bessel(x):
    return np.sum(np.i0(x) * WEIGHTS[:np.size(x)].reshape(np.shape(x)))


def bessel_of_a_number(x):
    return np.i0(x) * 1.3


def differences(x):
    return np.sum(np.ediff1d(x) ** 2 * WEIGHTS[:max(np.size(x) - 1, 0)])


def differences_and_ends(x, end, begin):
    y = np.ediff1d(x, to_end=end, to_begin=begin)
    return np.sum(np.sin(y) * WEIGHTS[:y.size])


def with_begin(x, begin):
    return np.sum(np.ediff1d(x, to_begin=begin) ** 3)


def inner(a, b):
    return np.vdot(a, b) ** 2 + np.vdot(b, a * 2.0)


def spaces(a, b, base):
    # np.logspace and np.geomspace, compiled once (numbers: numba's forms take numbers)
    return (np.sum(np.logspace(a, b, 5) * WEIGHTS[:5]) + np.sum(np.logspace(a, b, 4, False,
                                                                            base) ** 0.5)
            + np.sum(np.geomspace(a, b, 6) * WEIGHTS[:6])
            + np.sum(np.geomspace(b, a, 3, endpoint=False) ** 2))


def log_spaced(num, endpoint):
    def f(a, b, base):
        return np.sum(np.sin(np.logspace(a, b, num, endpoint, base)) * WEIGHTS[:num])
    return f


def base_as_a_keyword(b):
    return np.sum(np.logspace(1.0, 2.0, 3, base=b) ** 1.5)


def geometric(num, endpoint):
    def f(a, b):
        return np.sum(np.geomspace(a, b, num, endpoint) ** 2 * WEIGHTS[:num])
    return f


def array_ends(a, b):
    return np.sum(np.logspace(a, b, 3) ** 0.5) + np.sum(np.geomspace(a, b, 4, False) ** 2)


def polynomials(p, k):
    # np.polyder and np.polyint, compiled once
    return (np.sum(np.polyder(p) ** 2 * WEIGHTS[:p.size - 1])
            + np.sum(np.polyder(p, 2) * WEIGHTS[:p.size - 2])
            + np.sum(np.polyint(p) ** 2 * WEIGHTS[:p.size + 1])
            + np.sum(np.polyint(p, 2, k) * WEIGHTS[:p.size + 2])
            + np.sum(np.polyint(p, 3, k[0]) ** 2 * WEIGHTS[:p.size + 3]))


def derivative(m):
    def f(p):
        return np.sum(np.polyder(p, m) ** 2 * WEIGHTS[:max(p.size - m, 0)]) + p[0]
    return f


def integral(m):
    def f(p, k):
        return np.sum(np.polyint(p, m, k) ** 2 * WEIGHTS[:p.size + m])
    return f


def _cases():
    rng = np.random.default_rng(20)
    x, y = rng.uniform(-2.0, 2.0, (2, 3)), rng.uniform(-2.0, 2.0, 3)
    yield "several", (np.i0, np.ediff1d, np.vdot), several, (x, y), [0, 1], True
    yield "i1", (bessel_i1,), slopes, (np.array([0.3, -2.0, 4.5]),), [0], True
    for shape in [(), (1,), (5,), (2, 3)]:
        arg = rng.uniform(-3.0, 3.0, shape) if shape else 0.7
        yield f"i0-{shape}", (np.i0,), bessel if shape else bessel_of_a_number, (arg,), \
            [0], False
    yield "i0-large", (np.i0,), bessel, (np.array([-40.0, 25.0, 0.0]),), [0], False
    for shape in [(1,), (2,), (6,), (2, 3)]:
        yield f"ediff1d-{shape}", (np.ediff1d,), differences, (rng.uniform(-2, 2, shape),), \
            [0], False
    yield "ediff1d-ends", (np.ediff1d,), differences_and_ends, \
        (rng.uniform(-2, 2, (2, 2)), rng.uniform(-2, 2, (1, 2)), 0.4), [0, 1, 2], False
    yield "ediff1d-one", (np.ediff1d,), differences_and_ends, \
        (np.array([0.5]), 1.5, rng.uniform(-2, 2, 3)), [0, 1, 2], False
    yield "ediff1d-begin", (np.ediff1d,), with_begin, \
        (rng.uniform(-2, 2, 4), rng.uniform(-2, 2, 2)), [0, 1], False
    for sa, sb in [((1,), (1,)), ((4,), (4,)), ((2, 3), (6,)), ((3, 2), (2, 3))]:
        yield f"vdot-{sa}-{sb}", (np.vdot,), inner, \
            (rng.uniform(-2, 2, sa), rng.uniform(-2, 2, sb)), [0, 1], False
    yield "spaces", (np.logspace, np.geomspace), spaces, (0.3, 1.2, 2.5), [0, 1, 2], True
    for num, endpoint in [(1, True), (1, False), (2, True), (7, False)]:
        yield f"logspace-{num}-{endpoint}", (np.logspace,), log_spaced(num, endpoint), \
            (0.3, -0.5, 3.0), [0, 1, 2], False
        yield f"geomspace-{num}-{endpoint}", (np.geomspace,), geometric(num, endpoint), \
            (0.3, 2.5), [0, 1], False
    yield "logspace-base-keyword", (np.logspace,), base_as_a_keyword, (2.0,), [0], False
    yield "geomspace-negative", (np.geomspace,), geometric(5, True), (-0.3, -2.5), [0, 1], \
        False
    yield "spaces-arrays", (np.logspace, np.geomspace), array_ends, \
        (np.array([0.5, 1.0]), np.array([1.5, 0.2])), [0, 1], False
    p = rng.uniform(-2.0, 2.0, 5)
    yield "polynomials", (np.polyder, np.polyint), polynomials, (p, rng.uniform(-2, 2, 2)), \
        [0, 1], True
    for m, size in [(0, 3), (1, 1), (2, 5), (3, 3), (4, 2)]:
        yield f"polyder-{m}-{size}", (np.polyder,), derivative(m), (p[:size],), [0], False
    for m, k in [(0, 0.5), (1, 0.5), (2, np.array([0.5])), (2, np.array([0.5, -1.0, 2.0])),
                 (3, 1.5)]:
        yield f"polyint-{m}-{np.size(k)}", (np.polyint,), integral(m), (p[:3], k), [0, 1], \
            False
    yield "polyint-one", (np.polyint,), integral(2), (np.array([0.8]), 0.3), [0, 1], False


CASES = list(_cases())


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


JVP_CASES = [c[:5] + (c[0] == "several",) for c in CASES]


@parametrize(JVP_CASES)
def test_jvp_against_differences(case, jit):
    check_jvp(case, jit, 11)


@parametrize([c[:5] + (False,) for c in CASES if c[0] != "several"])
def test_hvp_against_differences_of_the_gradient(case, jit):
    check_hvp(case, jit)


def test_bessel_i1_against_differences_of_np_i0():
    # its own values (the slope of NumPy's i0), down to 0 and out to where i0 is large
    x = np.array([0.0, 1e-3, -0.5, 1.0, 3.7, -12.0, 30.0, 200.0])
    h = 1e-6 * np.maximum(1.0, np.abs(x))
    want = (np.i0(x + h) - np.i0(x - h)) / (2 * h)
    np.testing.assert_allclose(bessel_i1(x), want, rtol=1e-7, atol=1e-9)
    # i1(1) = 0.5651591039924851 (Abramowitz and Stegun, table 9.8)
    assert bessel_i1(1.0) == pytest.approx(0.5651591039924851, rel=1e-14)


@pytest.mark.parametrize("x", [np.array([0.0, 0.7, -3.0, 12.0]), 0.4])
def test_second_derivative_of_i0(x):
    # (i0)'' = i1' = i0 - i1 / x (1/2 at 0), against differences of the gradient
    case = ("i0", (np.i0,), bessel if np.ndim(x) else bessel_of_a_number, (x,), [0], False)
    check_hvp(case, False)


def straight(p):
    return np.sum(np.polyder(p)) + np.sum(np.polyint(p, 1, 2.0))


def integral_with_constant(p, k):
    return np.sum(np.polyint(p, 1, k))


def ten_to(a, b):
    return np.sum(np.logspace(a, b, 2))


def powers_of(base):
    return np.sum(np.logspace(1.0, 2.0, 2, True, base))


def three_points(a, b):
    return np.sum(np.geomspace(a, b, 3))


def weighted_differences(x):
    return np.sum(np.ediff1d(x) * np.array([1.0, 2.0, 3.0]))


def test_by_hand(jit):
    # d/dp sum(polyder(p)) = (3, 2, 1, 0); polyint(p) = (p0/4, p1/3, p2/2, p3, k)
    p = np.array([0.3, -1.5, 2.0, 0.1])
    np.testing.assert_allclose(srcgrad.grad(straight, jit=jit)(p),
                               [3.0 + 0.25, 2.0 + 1 / 3, 1.0 + 0.5, 1.0], rtol=1e-14)
    # sum(geomspace(a, b, 3)) = a + sqrt(ab) + b
    ga, gb = srcgrad.grad(three_points, wrt=(0, 1), jit=jit)(2.0, 8.0)
    assert (ga, gb) == (pytest.approx(1.0 + 0.5 * 2.0), pytest.approx(1.0 + 0.5 * 0.5))


def test_more_by_hand():
    assert srcgrad.grad(integral_with_constant, wrt=1, jit=False)(np.ones(3), 0.7) == 1.0
    # sum(logspace(a, b, 2)) = 10^a + 10^b; sum(logspace(1, 2, 2, base=c)) = c + c^2
    ga, gb = srcgrad.grad(ten_to, wrt=(0, 1), jit=False)(0.5, 1.5)
    assert (ga, gb) == (pytest.approx(np.log(10) * 10 ** 0.5),
                        pytest.approx(np.log(10) * 10 ** 1.5))
    assert srcgrad.grad(powers_of, jit=False)(3.0) == pytest.approx(7.0)
    # ediff1d(x) = (x1 - x0, x2 - x1, x3 - x2)
    np.testing.assert_allclose(srcgrad.grad(weighted_differences, jit=False)(np.zeros(4)),
                               [-1.0, -1.0, -1.0, 3.0])
    # vdot(a, b) = sum a b; i0'(0) = i1(0) = 0
    assert srcgrad.grad(bessel_of_a_number, jit=False)(0.0) == 0.0
    ga, gb = srcgrad.grad(inner, wrt=(0, 1), jit=False)(np.array([1.0, 2.0]),
                                                        np.array([3.0, -1.0]))
    # (a.b)^2 + 2 b.a with a.b = 1: 2 b + 2 b, 2 a + 2 a
    np.testing.assert_allclose(ga, [12.0, -4.0])
    np.testing.assert_allclose(gb, [4.0, 8.0])
    # jvp of sum(geomspace(a, b, 3)) along (1, 0)
    value, tangent = srcgrad.jvp(three_points, wrt=(0, 1), jit=False)(2.0, 8.0, (1.0, 0.0))
    assert (value, tangent) == (pytest.approx(14.0), pytest.approx(2.0))


def complex_inner(z, w):
    return np.abs(np.vdot(z, w)) ** 2 + np.real(np.vdot(w, z * 1j))


def test_vdot_of_complex_values():
    # vdot conjugates its first argument: JAX's convention, against differences
    rng = np.random.default_rng(21)
    z = rng.uniform(-1, 1, 3) + 1j * rng.uniform(-1, 1, 3)
    w = rng.uniform(-1, 1, 3) + 1j * rng.uniform(-1, 1, 3)
    gz, gw = srcgrad.grad(complex_inner, wrt=(0, 1), jit=False)(z, w)
    np.testing.assert_allclose(gz, complex_grad(complex_inner, (z, w), 0), rtol=1e-6)
    np.testing.assert_allclose(gw, complex_grad(complex_inner, (z, w), 1), rtol=1e-6)


def array_base(a):
    return np.sum(np.logspace(a, 2.0, 3, True, np.array([2.0, 3.0, 4.0])))


def geometric_float32(a):
    return np.sum(np.geomspace(a, 2.0, 3, dtype=np.float32))


def log_along_axis_one(a):
    return np.sum(np.logspace(a, np.ones(2), 3, axis=1))


@pytest.mark.parametrize("fun,args,message", [
    (array_base, (0.5,), "array base"),
    (geometric_float32, (0.5,), "dtype= is not differentiated"),
    (log_along_axis_one, (np.zeros(2),), "only axis=0"),
], ids=["array-base", "dtype", "axis"])
def test_refused(fun, args, message):
    with pytest.raises(srcgrad.MissingRule, match=message):
        srcgrad.grad(fun, jit=False)(*args)
    assert np.all(np.isfinite(numerical_grad(fun, args, 0)))
