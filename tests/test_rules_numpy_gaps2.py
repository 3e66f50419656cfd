"""The NumPy functions srcgrad/rules/numpy_gaps2.py differentiates (np.insert, resize,
trim_zeros, choose, divmod, frexp, sort_complex, real_if_close, poly, polydiv, histogram
with weights, unstack; np.spacing without a gradient): against central differences (grad, jvp,
hvp), by hand, and what is refused (np.nextafter, which JAX does not differentiate
either, among them)."""

import warnings

import numpy as np
import pytest
from fd import assert_grad
from marks import compiles
from sweep import check, check_hvp, check_jvp, parametrize

import srcgrad
from srcgrad.runtime.numpy_gaps2 import restacked

WEIGHTS = np.array([0.3, -1.2, 0.5, 2.0, 0.7, -0.4, 1.1, 0.9, -0.6, 1.4, 0.2, -0.8])
EDGES = np.array([-1.0, 0.0, 1.0, 2.2])
UNSTACK = getattr(np, "unstack", None)


def compiled(x, v, z):
    # each record once, compiled: x has 5 entries, none on a step of divmod, frexp,
    # spacing or the histogram's edges
    q, r = np.divmod(x, 0.4)
    m, e = np.frexp(x)
    quotient, remainder = np.polydiv(x, np.array([1.3, v, -0.5]))
    return (np.sum(np.insert(x, np.array([3, 1]), v) ** 2 * WEIGHTS[:7])
            + np.sum(np.resize(x, (2, 4)) * WEIGHTS[:8].reshape(2, 4))
            + np.sum(np.trim_zeros(x * (np.abs(x) > 0.5)) ** 3)
            + np.sum(np.choose(np.array([0, 1, 1, 0, 1]), [x, z]) ** 2 * WEIGHTS[:5])
            + np.sum(r ** 2 + q * x) + np.sum(m ** 2 * e)
            + np.sum(np.abs(np.sort_complex(x)) * WEIGHTS[:5])
            + np.sum(np.real_if_close(x + 0j) * z)
            + np.sum(np.spacing(x) * 1e14 * x)
            + np.sum(np.poly(x) * WEIGHTS[:6])
            + np.sum(quotient * WEIGHTS[:3]) + np.sum(remainder ** 2)
            + np.sum(np.histogram(x, EDGES, weights=z ** 2)[0] * np.arange(3.0)))


def inserted(obj, axis):
    def f(a, v):
        y = np.insert(a, obj, v, axis)
        return np.sum(np.sin(y) * WEIGHTS[:y.size].reshape(y.shape))
    return f


def inserted_flat(a, v):
    return (np.sum(np.insert(a, -1, v) ** 2 * WEIGHTS[:7])
            + np.sum(np.insert(a, [4, 0, 4], v[0]) * WEIGHTS[:8])
            + np.sum(np.cos(np.insert(a, slice(1, 3), v)) * WEIGHTS[4:11]))


def resized(shape):
    def f(a):
        y = np.resize(a, shape)
        return np.sum(y ** 2 * WEIGHTS[:y.size].reshape(y.shape))
    return f


def trimmed(trim):
    def f(a):
        y = np.trim_zeros(a * (np.abs(a) > 0.5), trim)
        return np.sum(np.sin(y) * WEIGHTS[:y.size])
    return f


def chosen(mode):
    def f(c0, c1, c2):
        y = np.choose(np.array([[0, 3, 2], [-1, 1, 2]]), (c0, c1, c2), mode=mode)
        return np.sum(y ** 2 * WEIGHTS[:6].reshape(2, 3))
    return f


def divided(x1, x2):
    q, r = np.divmod(x1, x2)
    return np.sum(r ** 3 * WEIGHTS[:6].reshape(2, 3)) + np.sum(q * x1)


def mantissas(x):
    m, e = np.frexp(x)
    return np.sum(np.sin(m) * e * WEIGHTS[:x.size].reshape(x.shape))


def sorted_complex(z):
    return np.sum(np.abs(np.sort_complex(z)) ** 2 * WEIGHTS[:z.size])


def real_parts(x):
    return np.sum(np.real_if_close(x * (1.0 + 1e-20j), tol=1000) ** 2 * WEIGHTS[:x.size])


def from_roots(r):
    c = np.poly(r)
    return np.sum(np.sin(c) * WEIGHTS[:c.size])


def quotient_and_remainder(u, v):
    q, r = np.polydiv(u, v)
    return np.sum(np.sin(q) * WEIGHTS[:q.size]) + np.sum(r ** 2 * WEIGHTS[-r.size:])


def histogram_of(range_):
    def f(a, w):
        if range_ is None:
            counts, edges = np.histogram(a, EDGES, weights=w)
        else:
            counts, edges = np.histogram(a, 4, range_, weights=np.sin(w))
        return np.sum(counts ** 2 * WEIGHTS[:counts.size]) + np.sum(np.cos(edges) * a[0])
    return f


def unstacked(x):
    a, b = np.unstack(x, axis=1)
    pieces = np.unstack(x)
    return (np.sum(a ** 2 * WEIGHTS[:3]) + np.sum(np.sin(b)) + np.sum(pieces[2] ** 3)
            + np.sum(restacked([a * b, np.cos(b)], x, 1) * WEIGHTS[:6].reshape(3, 2)))


def _cases():
    rng = np.random.default_rng(73)
    x = np.array([0.55, 1.45, -0.7, 2.1, 0.3])
    yield "compiled", (np.insert, np.resize, np.trim_zeros, np.choose, np.divmod, np.frexp,
                       np.sort_complex, np.real_if_close, np.spacing, np.poly, np.polydiv,
                       np.histogram), compiled, (x, 0.4, x[::-1] + 0.1), [0, 1, 2], True
    a = rng.uniform(-2.0, 2.0, (2, 3))
    for obj, axis, v in [(1, 0, rng.uniform(-1, 1, 3)), (2, 1, rng.uniform(-1, 1, 2)),
                         (1, 1, rng.uniform(-1, 1, (2, 2))), ([0, 3, 1], 1, 0.7),
                         (slice(0, 2), 0, rng.uniform(-1, 1, 3)), (-1, None, 0.3)]:
        yield f"insert-{obj}-{axis}", (np.insert,), inserted(obj, axis), (a, v), [0, 1], \
            False
    yield "insert-flat", (np.insert,), inserted_flat, \
        (rng.uniform(-2, 2, 5), rng.uniform(-1, 1, 2)), [0, 1], False
    for shape in (7, (2, 2), (3, 4), 1):
        yield f"resize-{shape}", (np.resize,), resized(shape), (a,), [0], False
    t = np.array([0.1, 0.2, 0.9, -0.3, 1.5, 0.2, -0.8, 0.4, -0.1])
    for trim in ("fb", "f", "b", "B"):
        yield f"trim_zeros-{trim}", (np.trim_zeros,), trimmed(trim), (t,), [0], False
    for mode in ("wrap", "clip"):
        yield f"choose-{mode}", (np.choose,), chosen(mode), \
            (rng.uniform(-2, 2, 3), rng.uniform(-2, 2, 3), rng.uniform(-2, 2, 3)), [0, 1, 2], \
            False
    yield "divmod", (np.divmod,), divided, \
        (np.array([[0.7, -1.3, 2.9], [3.3, -0.2, 1.1]]), np.array([0.45, -0.6, 1.3])), \
        [0, 1], False
    yield "frexp", (np.frexp,), mantissas, (np.array([[0.3, -5.5, 3.0], [1e-3, 70.0, -0.7]]),), \
        [0], False
    yield "sort_complex", (np.sort_complex,), sorted_complex, (rng.uniform(-2, 2, 6),), [0], \
        False
    yield "real_if_close", (np.real_if_close,), real_parts, (rng.uniform(-2, 2, 4),), [0], \
        False
    for n in (1, 2, 5):
        yield f"poly-{n}", (np.poly,), from_roots, (rng.uniform(-2, 2, n),), [0], False
    for su, sv in [(5, 2), (4, 4), (6, 3), (3, 1)]:
        yield f"polydiv-{su}-{sv}", (np.polydiv,), quotient_and_remainder, \
            (rng.uniform(-2, 2, su), rng.uniform(0.5, 2, sv)), [0, 1], False
    h = np.array([0.45, 1.45, -0.7, 2.0, 0.3, 1.1, 3.0])
    for range_ in (None, (-1.0, 2.1)):
        yield f"histogram-{range_}", (np.histogram,), histogram_of(range_), \
            (h, rng.uniform(-2, 2, 7)), [0, 1], False

    if UNSTACK is not None:   # (NumPy 2.1)
        yield "unstack", (UNSTACK, restacked), unstacked, (rng.uniform(-2, 2, (3, 2)),), [0], \
            True


CASES = list(_cases())


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


@parametrize([c[:5] + (False,) for c in CASES])
def test_jvp_against_differences(case, jit):
    check_jvp(case, jit, 7)


@parametrize([c[:5] + (False,) for c in CASES
              if not c[0].startswith(("compiled", "poly-", "sort_complex"))])
def test_hvp_against_differences_of_the_gradient(case, jit):
    check_hvp(case, jit)


def test_values_are_numpys():
    # each call as the functions it is written as computes what NumPy's does
    for case in CASES:
        _, _, fun, args, positions, _ = case
        value, _ = srcgrad.value_and_grad(fun, wrt=tuple(positions), jit=False)(*args)
        assert value == pytest.approx(fun(*args), rel=1e-12), case[0]


# ---- by hand ----


def weighted_insert(x, v):
    return np.sum(np.insert(x, 1, v) * np.array([1.0, 2.0, 3.0, 4.0]))


def repeated_insert(x, v):
    return np.sum(np.insert(x, [0, 2], v))


def resized_sum(x):
    return np.sum(np.resize(x, 5))


def trimmed_sum(x):
    return np.sum(np.trim_zeros(x) * np.array([5.0, 6.0, 7.0]))


def chosen_sum(x, z):
    return np.sum(np.choose(np.array([0, 1, 0]), [x, z]))


def remainder(x1, x2):
    return np.divmod(x1, x2)[1] + np.divmod(x1, x2)[0]


def mantissa(x):
    return np.frexp(x)[0]


def sorted_first(x):
    return np.sum(np.real(np.sort_complex(x)) * np.array([1.0, 10.0, 100.0]))


def spaced(x):
    return np.spacing(x) * x


def constant_term(r):
    return np.poly(r)[2]


def middle_term(r):
    return np.poly(r)[1]


def second_quotient(u, v):
    return np.polydiv(u, v)[0][1]


def last_remainder(u, v):
    return np.polydiv(u, v)[1][0]


def weighted_counts(w):
    return np.sum(np.histogram(np.array([0.5, 1.5, 0.7]), EDGES, weights=w)[0]
                  * np.array([10.0, 20.0, 30.0]))


def grid_read(x):
    return np.sum(x[np.ix_([0, 2], [1])] * np.array([[3.0], [5.0]]))


def test_by_hand():
    g = srcgrad.grad(weighted_insert, wrt=(0, 1), jit=False)(np.ones(3), 9.0)
    np.testing.assert_allclose(g[0], [1.0, 3.0, 4.0])
    assert g[1] == 2.0
    # one value inserted at two places: its gradient is the sum of theirs
    g = srcgrad.grad(repeated_insert, wrt=(0, 1), jit=False)(np.ones(3), 9.0)
    np.testing.assert_allclose(g[0], [1.0, 1.0, 1.0])
    assert g[1] == 2.0
    # np.resize(x, 5) of 2 entries reads x0 three times and x1 twice
    np.testing.assert_allclose(srcgrad.grad(resized_sum, jit=False)(np.ones(2)), [3.0, 2.0])
    # the zeros trimmed get no gradient, those kept inside the weights'
    np.testing.assert_allclose(
        srcgrad.grad(trimmed_sum, jit=False)(np.array([0.0, 1.0, 0.0, 2.0, 0.0])),
        [0.0, 5.0, 6.0, 7.0, 0.0])
    g = srcgrad.grad(chosen_sum, wrt=(0, 1), jit=False)(np.ones(3), np.ones(3))
    np.testing.assert_allclose(g[0], [1.0, 0.0, 1.0])
    np.testing.assert_allclose(g[1], [0.0, 1.0, 0.0])
    # the remainder x1 - x2 floor(x1 / x2): slopes 1 and -floor(7.3 / 2) = -3; the
    # quotient's none
    assert srcgrad.grad(remainder, wrt=(0, 1), jit=False)(7.3, 2.0) == \
        pytest.approx((1.0, -3.0), abs=1e-15)
    # 3 = 0.75 * 2^2 and 0.3 = 0.6 * 2^-1: the mantissas' slopes 2^-2 and 2
    assert srcgrad.grad(mantissa, jit=False)(3.0) == 0.25
    assert srcgrad.grad(mantissa, jit=False)(0.3) == 2.0
    np.testing.assert_allclose(
        srcgrad.grad(sorted_first, jit=False)(np.array([2.0, -1.0, 0.5])), [100.0, 1.0, 10.0])
    # spacing has no slope: the product's is spacing(x) itself
    assert srcgrad.grad(spaced, jit=False)(3.0) == np.spacing(3.0)
    # (x - r0)(x - r1) = x^2 - (r0 + r1) x + r0 r1
    np.testing.assert_allclose(srcgrad.grad(constant_term, jit=False)(np.array([2.0, 5.0])),
                               [5.0, 2.0])
    np.testing.assert_allclose(srcgrad.grad(middle_term, jit=False)(np.array([2.0, 5.0])),
                               [-1.0, -1.0])
    # (4x^2 + 6x + 5) / (2x + 1): q1 = (u1 - u0 v1 / v0) / v0, r = u2 - q1 v1
    u, v = np.array([4.0, 6.0, 5.0]), np.array([2.0, 1.0])
    gu, gv = srcgrad.grad(second_quotient, wrt=(0, 1), jit=False)(u, v)
    np.testing.assert_allclose(gu, [-0.25, 0.5, 0.0], atol=1e-15)
    # d q1 / d v0 = -u1 / v0^2 + 2 u0 v1 / v0^3, d q1 / d v1 = -u0 / v0^2
    np.testing.assert_allclose(gv, [-1.5 + 1.0, -1.0], atol=1e-15)
    gu, gv = srcgrad.grad(last_remainder, wrt=(0, 1), jit=False)(u, v)
    np.testing.assert_allclose(gu, [0.25, -0.5, 1.0], atol=1e-15)
    np.testing.assert_allclose(gv, [0.5, -1.0], atol=1e-15)   # -v1 dq1/dv, - q1
    # each weight's gradient is the weight of the bin it is counted in
    np.testing.assert_allclose(srcgrad.grad(weighted_counts, jit=False)(np.ones(3)),
                               [20.0, 30.0, 20.0])
    # np.ix_ makes the index of a grid: the entries read get the weights
    np.testing.assert_allclose(srcgrad.grad(grid_read, jit=False)(np.ones((3, 2))),
                               [[0.0, 3.0], [0.0, 0.0], [0.0, 5.0]])


@pytest.mark.skipif(UNSTACK is None, reason="np.unstack is NumPy 2.1's")
def test_unstack_by_hand():
    # the piece read gets the weights, the others zeros
    np.testing.assert_allclose(srcgrad.grad(second_piece, jit=False)(np.ones((2, 3))),
                               [[0.0, 0.0, 0.0], [3.0, 4.0, 5.0]])


def second_piece(x):
    return np.sum(np.unstack(x)[1] * np.array([3.0, 4.0, 5.0]))


# ---- refused ----


def inserted_into_ints(v):
    return np.sum(np.insert(np.arange(3), 1, v))


def inserted_along(a, v):
    return np.sum(np.insert(a, 1, v, axis=1))


def trimmed_matrix(a):
    return np.sum(np.trim_zeros(a))


def chosen_into(x):
    return np.sum(np.choose(np.array([0, 1]), [x, x], out=np.zeros(2)))


def chosen_badly(x):
    return np.sum(np.choose(np.array([0, 1]), [x, x], mode="nearest"))


def chosen_outside(x):
    return np.sum(np.choose(np.array([0, 2]), [x, x]))


def mantissa_into(x):
    return np.sum(np.frexp(x, out=(np.zeros(2), np.zeros(2, np.int32)))[0])


def complex_kept(z):
    return np.sum(np.abs(np.real_if_close(z)))


def complex_roots(r):
    return np.sum(np.abs(np.poly(r)))


def characteristic(a):
    return np.sum(np.poly(a))


def longer_divisor(u, v):
    return np.sum(np.polydiv(u, v)[1])


def density(w):
    return np.sum(np.histogram(np.ones(3), EDGES, density=True, weights=w)[0])


def moving_edges(w):
    return np.sum(np.histogram(np.arange(3.0), 2, weights=w)[0])


def point_range(w):
    return np.sum(np.histogram(np.arange(3.0), 2, (1.0, 1.0), weights=w)[0])


def next_after(x):
    return np.sum(np.nextafter(x, 2.0))


def squared(v):
    return v * v


def pieces(x):
    return np.sum(np.piecewise(x, [x < 1.0], [squared, np.cos]))


def along(x):
    return np.sum(np.apply_along_axis(np.sum, 0, np.outer(x, x)))


def resized_empty(x):
    return np.sum(np.resize(x[:0], 3))


REFUSED = [
    (inserted_into_ints, (0.5,), "casts them to ints"),
    (trimmed_matrix, (np.ones((2, 2)),), "more than one dimension"),
    (chosen_into, (np.ones(2),), "out="),
    (chosen_badly, (np.ones(2),), "mode='nearest'"),
    (chosen_outside, (np.ones(2),), "invalid entry"),
    (mantissa_into, (np.ones(2),), "out="),
    (complex_kept, (np.array([1.0 + 1.0j]),), "not close to real"),
    (complex_roots, (np.array([1.0 + 1.0j]),), "complex"),
    (characteristic, (np.eye(2),), "1-D array of real roots"),
    (longer_divisor, (np.ones(2), np.ones(3)), "no longer than the dividend"),
    (density, (np.ones(3),), "density=True"),
    (moving_edges, (np.ones(3),), "without range="),
    (point_range, (np.ones(3),), "bins must increase"),
    (next_after, (np.ones(2),), "np.nextafter has no gradient rule"),
    (resized_empty, (np.ones(2),), "empty array"),
    (pieces, (np.ones(2),), r"np.piecewise has no gradient rule: .* write np.where\(cond"),
    (along, (np.ones(2),), "np.apply_along_axis has no gradient rule: .* write the loop"),
]


def of_constants(x):
    c = np.arange(6.0).reshape(2, 3)
    return np.sum(np.apply_along_axis(np.sum, 0, c) * x) + np.sum(
        np.piecewise(c[0], [c[0] < 1.0], [np.sin, np.cos]) * x)


def test_functions_of_python_functions_on_constants():
    # the refusals are of differentiated calls: on constants they are values
    c = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(srcgrad.grad(of_constants, jit=False)(np.ones(3)),
                               np.sum(c, 0) + np.where(c[0] < 1.0, np.sin(c[0]), np.cos(c[0])))


@pytest.mark.parametrize("fun,args,message", REFUSED, ids=[r[0].__name__ for r in REFUSED])
def test_refused(fun, args, message):
    with pytest.raises((srcgrad.SrcgradError, ValueError), match=message):
        srcgrad.grad(fun, jit=False)(*args)


def test_refused_compiled(jit):
    # a float inserted into ints is refused compiled too; along an axis, np.insert runs
    # as Python only
    with pytest.raises(srcgrad.SrcgradError, match="casts them to ints"):
        srcgrad.grad(inserted_into_ints, jit=jit)(0.5)
    if jit:
        with pytest.raises(srcgrad.SrcgradError, match="along an axis is not compiled"):
            srcgrad.grad(inserted_along, jit=True)(np.ones((2, 2)), 1.0)


@compiles
def test_insert_along_an_axis_falls_back_to_python():
    a, v = np.array([[0.3, -1.0], [2.0, 0.5]]), 0.7
    grad = srcgrad.grad(inserted_along, wrt=(0, 1), jit="auto")
    for _ in range(2):   # (before and after numba's attempt, which fails)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            g = grad(a, v)
        assert_grad(inserted_along, g, (a, v), [0, 1])
