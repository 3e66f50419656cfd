"""The NumPy functions JAX and autograd differentiate that srcgrad/rules/numpy_gaps.py
writes as functions with rules (np.asanyarray and the other copies, np.kaiser,
np.linalg.cond, tensorinv and tensorsolve, np.polyadd, polysub, polymul and polyfit,
np.compress, np.extract, np.delete, np.bincount with weights): against central
differences (grad, jvp, hvp), by hand, and what is refused; and the functions it marks
as having no gradient (windows, predicates, integer values), differentiated around."""

import numpy as np
import pytest
import scipy.special
from sweep import check, check_hvp, check_jvp, parametrize

import srcgrad
from srcgrad.checks import numerical_grad

WEIGHTS = np.array([0.3, -1.2, 0.5, 2.0, 0.7, -0.4, 1.1, 0.9, -0.6, 1.4, 0.2, -0.8])
ASTYPE = getattr(np, "astype", None)   # (NumPy 2.1)


def copies(x):
    y = (np.asanyarray(x) * np.asfortranarray(x) + np.asarray_chkfinite(x) ** 3
         + np.sin(np.require(x, float)))
    return np.sum(y * WEIGHTS[:6].reshape(2, 3))


def copies_and_cast(x):
    return copies(x) + np.sum(np.astype(x, np.float64) ** 2 * WEIGHTS[6:12].reshape(2, 3))


def selections(x, beta, w):
    # np.kaiser, np.compress, np.extract, np.delete, np.bincount and the polynomials'
    # sums and product, compiled once
    return (np.sum(np.kaiser(5, beta) * WEIGHTS[:5])
            + np.sum(np.compress(np.array([True, False, True, True]), w) ** 2)
            + np.sum(np.extract(x > 0.0, x) ** 3)
            + np.sum(np.delete(x, np.array([0, 4])) * WEIGHTS[:6])
            + np.sum(np.bincount(np.array([0, 3, 3, 1]), w) * WEIGHTS[:4])
            + np.sum(np.polyadd(w, x[0]) * WEIGHTS[:4])
            + np.sum(np.polysub(x[1], w) ** 2)
            + np.sum(np.polymul(w, x[0]) * WEIGHTS[:7])
            + np.sum(np.broadcast_arrays(w, x)[0] * x))


def matrices(a, t, b, x, y):
    # np.linalg.cond, tensorinv, tensorsolve and np.polyfit, compiled once
    return (np.linalg.cond(a) + np.linalg.cond(a, 1) + np.linalg.cond(a, -2)
            + np.linalg.cond(a, "fro")
            + np.sum(np.linalg.tensorinv(t, 1)[:, :, 0] * WEIGHTS[:6].reshape(3, 2))
            + np.sum(np.linalg.tensorsolve(t, b) ** 2)
            + np.sum(np.polyfit(x, y, 2) * WEIGHTS[:3]))


def kaiser(m):
    def f(beta):
        return np.sum(np.kaiser(m, beta) * WEIGHTS[:m])
    return f


def kaiser_of_a_length(beta, m):
    return np.sum(np.kaiser(m, beta) ** 2)


def cond_2(a):
    return np.linalg.cond(a)


def cond_1(a):
    return np.linalg.cond(a, 1)


def cond_others(a):
    return (np.linalg.cond(a, 2) * np.linalg.cond(a, -2) + np.linalg.cond(a, p=-1)
            + np.linalg.cond(a, np.inf) ** 2 + np.linalg.cond(a, -np.inf)
            + np.sin(np.linalg.cond(a, "fro")) + np.linalg.cond(a, "nuc"))


def conditions_of_a_stack(a):
    return np.sum(np.linalg.cond(a) * WEIGHTS[:a.shape[0]]) + np.sum(np.linalg.cond(a, -2))


def tensor_inverse(t):
    y = np.linalg.tensorinv(t)
    return np.sum(np.sin(y) * np.cos(np.arange(y.size)).reshape(y.shape))


def tensor_inverse_1(t):
    y = np.linalg.tensorinv(t, ind=1)
    return np.sum(np.sin(y) * np.cos(np.arange(y.size)).reshape(y.shape))


def tensor_solution(a, b):
    y = np.linalg.tensorsolve(a, b)
    return np.sum(np.sin(y) * WEIGHTS[:y.size].reshape(y.shape))


def sums(p, q):
    return (np.sum(np.polyadd(p, q) * WEIGHTS[:max(np.size(p), np.size(q))])
            + np.sum(np.polysub(q, p) ** 2))


def product(p, q):
    y = np.polymul(p, q)
    return np.sum(y * WEIGHTS[:y.size])


def fit(deg):
    def f(x, y):
        c = np.polyfit(x, y, deg)
        return np.sum(np.sin(c) * WEIGHTS[:c.size].reshape(c.shape))
    return f


def weighted_fit(x, y, w):
    return np.sum(np.polyfit(x, y, 2, w=w) * WEIGHTS[:3]) \
        + np.sum(np.polyfit(x, y, 1, 1e-10) ** 2)


def compressed(axis):
    def f(a):
        y = np.compress(np.array([True, False, True]), a, axis=axis)
        return np.sum(y ** 2 * WEIGHTS[:y.size].reshape(y.shape))
    return f


def extracted(a):
    return np.sum(np.extract(np.abs(a) > 0.5, a) ** 3)


def deleted(a):
    return (np.sum(np.delete(a, 1, axis=0) ** 2 * WEIGHTS[:8].reshape(2, 4))
            + np.sum(np.delete(a, [0, 2], 1) * WEIGHTS[:6].reshape(3, 2))
            + np.sum(np.sin(np.delete(a, slice(2, 9))) * WEIGHTS[:5]))


def counted(w):
    return np.sum(np.bincount(np.array([2, 0, 2, 5, 1]), w, minlength=8) ** 2 * WEIGHTS[:8])


def broadcast(a, b, c):
    p, q = np.broadcast_arrays(a, b)
    r = np.broadcast_arrays(a, b, c, 2.0)
    return (np.sum(p * WEIGHTS.reshape(3, 4)) + np.sum(q ** 2)
            + np.sum(np.sin(r[2]) * r[0] * r[3]))


def _cases():
    rng = np.random.default_rng(72)
    x = rng.uniform(-2.0, 2.0, (2, 3))
    yield "copies", (np.asanyarray, np.asfortranarray, np.asarray_chkfinite, np.require) + \
        ((ASTYPE,) if ASTYPE is not None else ()), \
        copies if ASTYPE is None else copies_and_cast, (x,), [0], True
    yield "selections", (np.kaiser, np.compress, np.extract, np.delete, np.bincount,
                         np.polyadd, np.polysub, np.polymul, np.broadcast_arrays), selections, \
        (rng.uniform(-2.0, 2.0, (2, 4)), 2.5, rng.uniform(-2.0, 2.0, 4)), [0, 1, 2], True
    a = rng.uniform(-1.0, 1.0, (3, 3)) + 2.0 * np.eye(3)
    t = rng.uniform(-1.0, 1.0, (6, 3, 2))
    yield "matrices", (np.linalg.cond, np.linalg.tensorinv, np.linalg.tensorsolve,
                       np.polyfit), matrices, \
        (a, t, rng.uniform(-1.0, 1.0, (6,)), rng.uniform(-1.0, 1.0, 5),
         rng.uniform(-1.0, 1.0, 5)), [0, 1, 2, 3, 4], True
    for m in (0, 1, 2, 6):
        yield f"kaiser-{m}", (np.kaiser,), kaiser(m), (3.1,), [0], False
    yield "kaiser-length", (np.kaiser,), kaiser_of_a_length, (0.4, 4), [0], False
    for fun in (cond_2, cond_1, cond_others):
        yield fun.__name__, (np.linalg.cond,), fun, (a,), [0], False
    yield "cond-stack", (np.linalg.cond,), conditions_of_a_stack, \
        (rng.uniform(-1.0, 1.0, (4, 2, 2)) + np.eye(2),), [0], False
    for ind, shape in [(1, (6, 2, 3)), (2, (2, 3, 6)), (2, (2, 2, 2, 2))]:
        yield f"tensorinv-{ind}-{shape}", (np.linalg.tensorinv,), \
            tensor_inverse_1 if ind == 1 else tensor_inverse, \
            (rng.uniform(-1.0, 1.0, shape),), [0], False
    for sa, sb in [((2, 3, 6), (2, 3)), ((4, 2, 2), (4,)), ((3, 3), (3,))]:
        yield f"tensorsolve-{sa}", (np.linalg.tensorsolve,), tensor_solution, \
            (rng.uniform(-1.0, 1.0, sa), rng.uniform(-1.0, 1.0, sb)), [0, 1], False
    for sp, sq in [((3,), (5,)), ((4,), (2,)), ((3,), (3,)), ((), (2,))]:
        p = rng.uniform(-2.0, 2.0, sp) if sp else 0.8
        q = rng.uniform(-2.0, 2.0, sq)
        yield f"polyadd-{sp}-{sq}", (np.polyadd, np.polysub), sums, (p, q), [0, 1], False
        yield f"polymul-{sp}-{sq}", (np.polymul,), product, (p, q), [0, 1], False
    xs = np.linspace(-1.0, 1.0, 6) + rng.uniform(-0.05, 0.05, 6)
    for deg, sy in [(0, (6,)), (1, (6,)), (3, (6,)), (2, (6, 2))]:
        yield f"polyfit-{deg}-{sy}", (np.polyfit,), fit(deg), \
            (xs, rng.uniform(-1.0, 1.0, sy)), [0, 1], False
    yield "polyfit-w-rcond", (np.polyfit,), weighted_fit, \
        (xs, rng.uniform(-1.0, 1.0, 6), rng.uniform(0.5, 1.5, 6)), [0, 1, 2], False
    for axis in (None, 0, 1):
        yield f"compress-{axis}", (np.compress,), compressed(axis), \
            (rng.uniform(-2.0, 2.0, (3, 4)),), [0], False
    yield "extract", (np.extract,), extracted, (rng.uniform(-2.0, 2.0, (3, 4)),), [0], False
    yield "delete", (np.delete,), deleted, (rng.uniform(-2.0, 2.0, (3, 4)),), [0], False
    yield "broadcast_arrays", (np.broadcast_arrays,), broadcast, \
        (rng.uniform(-2.0, 2.0, (3, 1)), rng.uniform(-2.0, 2.0, 4), 0.6), [0, 1, 2], False
    yield "bincount", (np.bincount,), counted, (rng.uniform(-2.0, 2.0, 5),), [0], False


CASES = list(_cases())


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


@parametrize([c[:5] + (False,) for c in CASES])
def test_jvp_against_differences(case, jit):
    check_jvp(case, jit, 11)


@parametrize([c[:5] + (False,) for c in CASES
              if c[0] not in ("copies", "selections", "matrices")])
def test_hvp_against_differences_of_the_gradient(case, jit):
    check_hvp(case, jit)


# ---- by hand ----


def kaiser_sum(beta):
    return np.sum(np.kaiser(3, beta))


def inverse_sum(a):
    return np.sum(np.linalg.tensorinv(a, 1))


def slope(x, y):
    return np.polyfit(x, y, 1)[0]


def weighted_bins(w):
    return np.sum(np.bincount(np.array([1, 1, 3]), w) * np.array([5.0, 7.0, 9.0, 11.0]))


def weighted_sum(p, q):
    return np.sum(np.polyadd(p, q) * WEIGHTS[:4])


def product_sum(p, q):
    return np.sum(np.polymul(p, q))


def two_deleted(a):
    return np.sum(np.delete(a, [0, 2]))


def second_column(a):
    return np.sum(np.compress([False, True], a, axis=1))


def test_by_hand():
    grad = srcgrad.grad(kaiser_sum, jit=False)
    # the window at 3 points is [1/i0(b), 1, 1/i0(b)]: the sum's slope is -2 i1(b)/i0(b)^2
    beta = 1.7
    want = -2.0 * scipy.special.i1(beta) / scipy.special.i0(beta) ** 2
    assert grad(beta) == pytest.approx(want, rel=1e-12)
    # the 2-norm condition number of diag(3, 1) is 3/1: its slopes are 1/1 and -3/1^2
    np.testing.assert_allclose(srcgrad.grad(cond_2, jit=False)(np.diag([3.0, 1.0])),
                               [[1.0, 0.0], [0.0, -3.0]], atol=1e-12)
    # the 1-norm condition number of diag(4, 2): |4| |1/2| = 2 (each norm's maximum
    # column alone moves it): slopes 1/2 and -4/2^2
    np.testing.assert_allclose(srcgrad.grad(cond_1, jit=False)(np.diag([4.0, 2.0])),
                               [[0.5, 0.0], [0.0, -1.0]], atol=1e-12)
    # tensorinv of a matrix with ind=1 is its inverse: d sum(inv(a)) = -inv(a)^T 1 1^T inv(a)^T
    a = np.array([[2.0, 1.0], [0.5, 3.0]])
    inv = np.linalg.inv(a)
    np.testing.assert_allclose(srcgrad.grad(inverse_sum, jit=False)(a),
                               -inv.T @ np.ones((2, 2)) @ inv.T, rtol=1e-12)
    # the line through two points: its slope (y1 - y0) / (x1 - x0)
    gx, gy = srcgrad.grad(slope, wrt=(0, 1), jit=False)(np.array([1.0, 3.0]),
                                                        np.array([2.0, 6.0]))
    np.testing.assert_allclose(gy, [-0.5, 0.5], rtol=1e-12)
    np.testing.assert_allclose(gx, [1.0, -1.0], rtol=1e-12)   # slope 2, moved by +-2/2
    # each weight's gradient is the weight of the bin it is added into
    np.testing.assert_allclose(srcgrad.grad(weighted_bins, jit=False)(np.ones(3)),
                               [7.0, 7.0, 11.0])
    # polyadd pads the shorter with leading zeros: p's entries meet the last weights
    p, q = np.ones(2), np.ones(4)
    gp, gq = srcgrad.grad(weighted_sum, wrt=(0, 1), jit=False)(p, q)
    np.testing.assert_allclose(gp, WEIGHTS[2:4])
    np.testing.assert_allclose(gq, WEIGHTS[:4])
    # polymul's every coefficient of the sum moves by the other's sum
    gp = srcgrad.grad(product_sum, jit=False)(p, np.arange(4.0))
    np.testing.assert_allclose(gp, [6.0, 6.0])
    # the entries np.delete and np.compress drop get zero
    np.testing.assert_allclose(srcgrad.grad(two_deleted, jit=False)(np.ones(4)),
                               [0.0, 1.0, 0.0, 1.0])
    np.testing.assert_allclose(srcgrad.grad(second_column, jit=False)(np.ones((2, 2))),
                               [[0.0, 1.0], [0.0, 1.0]])


def fitted(x, y, w):
    return np.sum(np.sin(np.polyfit(x, y, 3, w=w))) + np.sum(np.polyfit(x, y[:, 0], 6))


def windowed(b):
    return np.sum(np.sin(np.kaiser(7, b))) + np.sum(np.kaiser(1, b))


def others(x):
    return (np.linalg.cond(np.reshape(x[:4], (2, 2)), -np.inf)
            + np.sum(np.sin(np.polysub(x[:2], x))) + np.sum(np.bincount(np.array([4, 0]),
                                                                        x[:2], 3)))


def test_values_are_numpys():
    # each call as the functions it is written as computes what NumPy's does
    rng = np.random.default_rng(3)
    x, y, w = rng.uniform(-1, 1, 7), rng.uniform(-1, 1, (7, 2)), rng.uniform(0.5, 1, 7)
    for fun, args in [(fitted, (x, y, w)), (windowed, (4.3,)), (others, (x,))]:
        value, _ = srcgrad.value_and_grad(fun, jit=False)(*args)
        assert value == pytest.approx(fun(*args), rel=1e-10)


# ---- no gradient: differentiated around ----


def around(x):
    k = np.nanargmax(x) + np.nanargmin(x)
    order = np.argpartition(x, 2)
    bins = np.digitize(x, np.array([0.0, 0.5]))
    flags = np.signbit(x) | np.isneginf(x) | np.isposinf(x) | np.isin(x, x[:1])
    return (x[k % x.size] * np.sum(np.where(flags, x, 2.0 * x) * bins) + x[order[0]]
            + np.sum(np.hanning(x.size) * x) + np.sum(np.tri(x.size)[1] * x))


def test_functions_without_gradient_differentiated_around():
    x = np.array([0.3, -1.2, 0.9, 0.6, -0.1])
    g = srcgrad.grad(around, jit=False)(x)
    np.testing.assert_allclose(g, numerical_grad(around, (x,), 0), rtol=1e-6, atol=1e-8)


# ---- refused ----


def full_fit(x, y):
    return np.sum(np.polyfit(x, y, 1, full=True)[0])


def covariance_fit(x, y):
    return np.sum(np.polyfit(x, y, 1, cov=True)[0])


def solved_along(a, b):
    return np.sum(np.linalg.tensorsolve(a, b, axes=(0,)))


def cond_of_a_name(a, p):
    return np.linalg.cond(a, p)


def cond_of_an_odd_norm(a):
    return np.linalg.cond(a, 3)


def inverse_of_a_name(a, ind):
    return np.sum(np.linalg.tensorinv(a, ind))


def cast_in_place(x):
    return np.sum(np.astype(x, np.float64, copy=False))


def frequencies(d):
    return np.sum(np.fft.fftfreq(4, d))


def five_broadcast(a):
    return np.sum(np.broadcast_arrays(a, a, a, a, a)[0])


def written_through(a, b):
    p, q = np.broadcast_arrays(a, b)   # (views: NumPy refuses the write too)
    p[0] = 1.0
    return np.sum(p * q)


def window(m):
    return np.sum(np.hanning(m))


REFUSED = [
    (full_fit, (np.arange(3.0), np.ones(3)), "full="),
    (covariance_fit, (np.arange(3.0), np.ones(3)), "cov="),
    (solved_along, (np.ones((2, 2)), np.ones(2)), "axes="),
    (cond_of_a_name, (np.eye(2), 2), "p= None, 2 or -2"),
    (cond_of_an_odd_norm, (np.eye(2),), "not a matrix norm"),
    (inverse_of_a_name, (np.eye(2), 1), "ind= is differentiated as an int literal"),
    (frequencies, (0.5,), "fftfreq"),
    (window, (4.0,), "hanning"),
    (five_broadcast, (np.ones(2),), "broadcast_arrays"),
    (written_through, (np.ones((2, 1)), np.ones(3)), r"writing into p\["),
] + ([(cast_in_place, (np.ones(2),), "copy=False")] if ASTYPE is not None else [])


@pytest.mark.parametrize("fun,args,message", REFUSED, ids=[r[0].__name__ for r in REFUSED])
def test_refused(fun, args, message):
    with pytest.raises(srcgrad.SrcgradError, match=message):
        srcgrad.grad(fun, jit=False)(*args)
