"""scipy.special and the math twins of erf, erfc, gamma and lgamma (srcgrad/rules/special.py
and their compiled forms, srcgrad/runtime/special.py): the rule sweep's cases, gradients by
hand, forward mode against central differences, the compiled forms against SciPy's
values, and what is refused.
"""

import math

import numba
import numpy as np
import pytest
from marks import compiles
from scipy import special
from sweep import binary, check, domains, parametrize, unary

import srcgrad
from srcgrad.runtime.special import i1_slope

any_, pos, unit, distinct = domains(7)


def in_01(*shape):
    """Draws in [0.2, 0.8]: inside the domain of every function of one argument here."""
    return 0.5 + 0.375 * unit(*shape)


UNARY = [special.expit, special.logit, special.gammaln, special.psi, special.gamma,
         special.erf, special.erfc, special.erfinv, special.ndtr, special.log_ndtr,
         special.ndtri, special.entr, special.i0, special.i1]
DOMAIN = {special.expit: any_, special.gammaln: pos, special.psi: pos, special.gamma: pos,
          special.erf: any_, special.erfc: any_, special.ndtr: any_, special.log_ndtr: any_,
          special.i0: any_, special.i1: any_}
BINARY = [(special.betaln, pos, pos), (special.xlogy, any_, pos),
          (special.xlog1py, any_, pos), (special.rel_entr, pos, pos)]
MATH = [math.erf, math.erfc, math.gamma, math.lgamma]


def polygamma_op(x):
    return np.sum(special.polygamma(0, x) + special.polygamma(1, x) * 2.0 +
                  special.polygamma(3, x))


def every_unary(x):
    # each function of one argument once, on an array or a number (one compile for all),
    # and the derivative of i1 (whose own rule hvp and grad of grad use)
    return special.expit(x) + special.logit(x) * 0.3 + special.gammaln(x) * 0.7 + \
        special.psi(x) * 0.2 + special.gamma(x) + special.erf(x) * 1.1 + \
        special.erfc(x) * 0.9 + special.erfinv(x) * 0.4 + special.ndtr(x) * 1.2 + \
        special.log_ndtr(x) * 0.6 + special.ndtri(x) * 0.5 + special.entr(x) * 1.4 + \
        special.i0(x) * 0.8 + special.i1(x) * 1.5 + i1_slope(x) * 0.3


def every_unary_summed(x):
    return np.sum(every_unary(x) ** 2)


def math_twins(x):
    return math.erf(x) + math.erfc(x) * 0.5 + math.gamma(x) * 0.3 + math.lgamma(x) * 1.7 \
        + every_unary(x)


def every_binary(a, b):
    return np.sum(special.betaln(a, b) + special.xlogy(a, b) * 0.5 +
                  special.xlog1py(a, b) * 0.7 + special.rel_entr(a, b) * 1.3 +
                  special.polygamma(1, b) * 0.4 + special.polygamma(0, a) * 0.2)


def over_axes(a, w):
    # every form of each: all axes, one axis with and without kept dimensions, weights
    return (special.logsumexp(a) + np.sum(special.logsumexp(a, axis=1) ** 2) +
            np.sum(special.logsumexp(a, axis=0, keepdims=True) * w[:1]) +
            np.sum(special.logsumexp(a, axis=-1, b=w) * 0.5) +
            np.sum(special.softmax(a) * w) + np.sum(special.softmax(a, axis=0) * w ** 2) +
            np.sum(special.log_softmax(a) * w) + np.sum(special.log_softmax(a, axis=1) ** 2))


SHAPES_1 = [(), (5,), (3, 4)]
SHAPES_2 = [((), ()), ((4,), (4,)), ((3, 4), (4,)), ((3, 1), (1, 4))]


def cases():
    """(id, primals covered, function, arguments, positions to differentiate, compiled
    too). Each function runs as Python at several shapes; compiled, a few functions cover
    them all (each compile takes seconds)."""
    for op in UNARY:
        for shape in SHAPES_1:
            yield op.__name__, (op,), unary(op), (DOMAIN.get(op, in_01)(*shape),), [0], False
    yield "polygamma", (special.polygamma,), polygamma_op, (pos(3, 4),), [0], False
    yield "i1_slope", (i1_slope,), unary(i1_slope), (any_(3, 4),), [0], False
    for op, da, db in BINARY:
        for sa, sb in SHAPES_2:
            yield op.__name__, (op,), binary(op), (da(*sa), db(*sb)), [0, 1], False
    for op in MATH:
        yield f"math.{op.__name__}", (op,), unary(op), (pos(),), [0], False
    yield "every-unary-array", (*UNARY, i1_slope), every_unary_summed, (in_01(2, 3),), [0], True
    yield "every-unary-number-and-math", (*UNARY, *MATH, i1_slope), math_twins, (in_01(),), \
        [0], True
    yield "every-binary", tuple(op for op, _, _ in BINARY) + (special.polygamma,), \
        every_binary, (pos(3, 4), pos(4)), [0, 1], True
    yield "over-axes", (special.logsumexp, special.softmax, special.log_softmax), over_axes, \
        (any_(3, 4), pos(3, 4)), [0], True
    for op in (special.softmax, special.log_softmax):
        yield op.__name__, (op,), unary(op), (any_(5),), [0], False


CASES = list(cases())


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


# ---- by hand ----


def weighted_logsumexp(a, w):
    return np.sum(special.logsumexp(a, axis=0) * w)


def at_known_points(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15):
    return special.expit(x0) + special.gammaln(x1) + math.lgamma(x2) + math.gamma(x3) + \
        special.erf(x4) + math.erfc(x5) + special.psi(x6) + special.logit(x7) + \
        special.ndtr(x8) + special.ndtri(x9) + special.erfinv(x10) + special.entr(x11) + \
        special.i0(x12) + special.i1(x13) + special.xlogy(x14, x15)


POINTS = (0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.5, 0.0, 0.5, 0.0, 1.0, 0.0, 0.0, 2.0, np.e)
BY_HAND = (0.25, -np.euler_gamma, -np.euler_gamma, -np.euler_gamma, 2 / np.sqrt(np.pi),
           -2 / np.sqrt(np.pi), np.pi ** 2 / 6, 4.0, 1 / np.sqrt(2 * np.pi),
           np.sqrt(2 * np.pi), np.sqrt(np.pi) / 2, -1.0, 0.0, 0.5, 1.0, 2 / np.e)


def test_values_by_hand(jit):
    # expit'(0) = 1/4, gammaln'(1) = gamma'(1) = psi(1) = -euler_gamma, erf'(0) = 2/sqrt(pi),
    # psi'(1) = pi^2/6, logit'(1/2) = 4, ndtr'(0) = 1/sqrt(2 pi) = 1/ndtri'(1/2),
    # erfinv'(0) = sqrt(pi)/2, entr'(1) = -1, i0'(0) = 0, i1'(0) = 1/2, and xlogy(x, y)
    # at (2, e): log e = 1 and 2/e
    g = srcgrad.grad(at_known_points, wrt=tuple(range(16)), jit=jit)(*POINTS)
    np.testing.assert_allclose(g, BY_HAND, rtol=1e-14, atol=1e-15)
    # log_ndtr' far in the lower tail: the hazard t + 1/t - 2/t^3 + 10/t^5 - ... at t = 40
    # (the density and the distribution function underflow there; their ratio does not)
    t = 40.0
    assert srcgrad.grad(unary(special.log_ndtr), jit=jit)(-t) == \
        pytest.approx(1.3 * (t + 1 / t - 2 / t ** 3 + 10 / t ** 5), rel=1e-10)
    # psi''(1) = -2 zeta(3) (Apery's constant 1.2020569...)
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(srcgrad.grad(polygamma_op, jit=jit)(x)[0],
                               np.pi ** 2 / 6 + 2.0 * -2.0 * 1.2020569031595942 +
                               special.polygamma(4, 1.0), rtol=1e-12)
    # logsumexp of equal entries: log(n) + c, and each entry's share of the gradient 1/n
    a = np.full((4, 2), 0.7)
    assert special.logsumexp(a, axis=0) == pytest.approx(np.log(4) + 0.7)
    g = srcgrad.grad(weighted_logsumexp, jit=jit)(a, np.array([1.0, 3.0]))
    np.testing.assert_allclose(g, np.tile([0.25, 0.75], (4, 1)), rtol=1e-14)


def weighted_softmax(x, w):
    return np.sum(special.softmax(x) * w)


def test_softmax_of_equal_entries_by_hand(jit):
    # y = 1/n everywhere: d sum(w y)/dx = y (w - sum(w y)) = (w - mean(w)) / n
    w = np.array([1.0, 2.0, 6.0])
    g = srcgrad.grad(weighted_softmax, jit=jit)(np.full(3, -0.4), w)
    np.testing.assert_allclose(g, (w - 3.0) / 3.0, rtol=1e-14, atol=1e-15)


# ---- forward mode ----


def everything(x, a, b, w):
    return every_unary_summed(x) + every_binary(a, b) + over_axes(a - b, w)


def test_jvp_against_differences(rng):
    # every tangent rule, as Python (compiled: the next test, on fewer functions, as each
    # function costs compile time there)
    x, dx = 0.2 + 0.6 * rng.random((2, 3)), rng.standard_normal((2, 3))
    a, da = 0.5 + rng.random((3, 4)), rng.standard_normal((3, 4))
    b, db = 0.5 + rng.random(4), rng.standard_normal(4)
    w, h = rng.random((3, 4)), 1e-6
    slope = srcgrad.jvp(everything, wrt=(0, 1, 2), jit=False)(x, a, b, w, (dx, da, db))[1]
    want = (everything(x + h * dx, a + h * da, b + h * db, w) -
            everything(x - h * dx, a - h * da, b - h * db, w)) / (2 * h)
    assert slope == pytest.approx(want, rel=1e-6)


def some_of_each(a, w, c):
    # the rules over an axis, and elementwise ones of one and of two arguments
    return np.sum(special.logsumexp(a, axis=1, b=c) ** 2) + \
        np.sum(special.softmax(a, axis=0) * w) + np.sum(special.log_softmax(a) * w) + \
        np.sum(special.polygamma(1, w) * special.i1(a)) + np.sum(special.betaln(w, w[0]) * a)


def test_jvp_of_some_against_differences(jit, rng):
    a, da = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    w, dw = 0.5 + rng.random((3, 4)), rng.standard_normal((3, 4))
    h = 1e-6
    c = rng.random((3, 4))
    slope = srcgrad.jvp(some_of_each, wrt=(0, 1), jit=jit)(a, w, c, (da, dw))[1]
    want = (some_of_each(a + h * da, w + h * dw, c) -
            some_of_each(a - h * da, w - h * dw, c)) / (2 * h)
    assert slope == pytest.approx(want, rel=1e-6)


def test_math_twins_jvp_against_differences(jit):
    x, h = 0.6, 1e-6
    slope = srcgrad.jvp(math_twins, jit=jit)(x, 1.0)[1]
    assert slope == pytest.approx((math_twins(x + h) - math_twins(x - h)) / (2 * h), rel=1e-6)


def test_hvp_against_differences_of_the_gradient(jit, rng):
    a, w, da = rng.standard_normal((3, 4)), 0.5 + rng.random((3, 4)), rng.standard_normal((3, 4))
    h = 1e-6
    grad = srcgrad.grad(some_of_each, jit=False)  # (the reference: its Python form)
    np.testing.assert_allclose(srcgrad.hvp(some_of_each, jit=jit)(a, w, w[0], da),
                               (grad(a + h * da, w, w[0]) - grad(a - h * da, w, w[0])) / (2 * h),
                               rtol=1e-5, atol=1e-6)


# ---- the compiled forms ----


@numba.njit
def _compiled_unary(x):
    return (special.expit(x), special.logit(x), special.gammaln(x), special.psi(x),
            special.gamma(x), special.erf(x), special.erfc(x), special.erfinv(x),
            special.ndtr(x), special.log_ndtr(x), special.ndtri(x), special.entr(x),
            special.i0(x), special.i1(x))


@numba.njit
def _compiled_binary(a, b):
    return (special.betaln(a, b), special.xlogy(a, b), special.xlog1py(a, b),
            special.rel_entr(a, b))


@numba.njit
def _compiled_polygamma(n, x):
    return special.polygamma(n, x)


@numba.njit
def _compiled_reductions(a, w):
    return (special.logsumexp(a), special.logsumexp(a, axis=0), special.logsumexp(a, b=w),
            special.logsumexp(a, axis=1, b=w, keepdims=True), special.softmax(a),
            special.softmax(a, axis=1), special.log_softmax(a), special.log_softmax(a, axis=0))


@pytest.mark.compiled
@compiles
def test_compiled_forms_give_scipys_values(rng):
    x = np.array([[0.05, 0.3, 0.5], [0.7, 0.95, 0.999]])
    for got, fun in zip(_compiled_unary(x), UNARY, strict=True):
        np.testing.assert_allclose(got, fun(x), rtol=1e-15, err_msg=fun.__name__)
    for got, fun in zip(_compiled_unary(0.3), UNARY, strict=True):
        assert got == fun(0.3), fun.__name__
    assert _compiled_unary(2)[2] == special.gammaln(2.0)   # an integer argument
    a, b = rng.random((3, 4)) * 3.0, rng.random(4) * 3.0   # broadcast
    for got, fun in zip(_compiled_binary(a, b), [op for op, _, _ in BINARY], strict=True):
        np.testing.assert_allclose(got, fun(a, b), rtol=1e-15, err_msg=fun.__name__)
    for got, fun in zip(_compiled_binary(0.4, 1.5), [op for op, _, _ in BINARY], strict=True):
        assert got == fun(0.4, 1.5), fun.__name__
    a, w = rng.standard_normal((3, 4)), rng.random((3, 4))
    want = (special.logsumexp(a), special.logsumexp(a, axis=0), special.logsumexp(a, b=w),
            special.logsumexp(a, axis=1, b=w, keepdims=True), special.softmax(a),
            special.softmax(a, axis=1), special.log_softmax(a), special.log_softmax(a, axis=0))
    for got, value in zip(_compiled_reductions(a, w), want, strict=True):
        np.testing.assert_allclose(got, value, rtol=1e-14)
    a[0, 0] = np.inf   # SciPy's shift by a finite maximum: an infinite entry, not NaN
    assert _compiled_reductions(a, w)[0] == np.inf


@compiles
def test_compiled_polygamma_against_scipy():
    # the Hurwitz zeta sum: small, large and negative x, orders 0 to 6
    x = np.array([1e-3, 0.1, 0.5, 1.0, 2.5, 7.0, 19.5, 30.0, 250.0, -0.5, -1.5, -3.7])
    for n in range(7):
        np.testing.assert_allclose(_compiled_polygamma(n, x), special.polygamma(n, x),
                                   rtol=1e-13, err_msg=f"n = {n}")
        assert _compiled_polygamma(n, 1.5) == pytest.approx(special.polygamma(n, 1.5),
                                                            rel=1e-13)
    assert _compiled_polygamma(1, 0.0) == np.inf
    assert np.isnan(_compiled_polygamma(1.5, 1.0))


# ---- refused ----


def signed_logsumexp(x):
    value, sign = special.logsumexp(x, return_sign=True)
    return value * sign


def test_logsumexp_return_sign_is_refused(jit):
    # at the user's line, before any code runs (the result is a tuple with the sign), in
    # grad and jvp; and by the rule and its tangent rule if they are called so
    x = np.array([0.5, 1.0])
    with pytest.raises(srcgrad.MissingRule, match="return_sign=True gives a tuple"):
        srcgrad.grad(signed_logsumexp, jit=jit)(x)
    with pytest.raises(srcgrad.MissingRule, match="return_sign=True gives a tuple"):
        srcgrad.jvp(signed_logsumexp, jit=jit)(x, np.ones(2))
    from srcgrad.rules.special import logsumexp, logsumexp_tangent
    with pytest.raises(srcgrad.MissingRule, match="return_sign"):
        logsumexp(1.0, 0.0, np.zeros(2), return_sign=True)
    with pytest.raises(srcgrad.MissingRule, match="return_sign"):
        logsumexp_tangent(np.ones(2), 0.0, np.zeros(2), return_sign=True)


def uses_zeta(x):
    return np.sum(special.zeta(x, 2.0))


def test_a_scipy_function_without_a_rule_is_refused(jit):
    with pytest.raises(srcgrad.MissingRule, match="zeta"):
        srcgrad.grad(uses_zeta, jit=jit)(np.array([2.0, 3.0]))


def polygamma_of_orders(x):
    return np.sum(special.polygamma(np.array([1, 2]), x))


def test_polygamma_of_an_array_of_orders(jit):
    # compiled, through numba's object mode (srcgrad's compiled form takes one order)
    x = np.array([1.5, 2.5])
    np.testing.assert_allclose(srcgrad.grad(polygamma_of_orders, jit=jit)(x),
                               special.polygamma([2, 3], x), rtol=1e-14)


def logsumexp_weighted_by_itself(a):
    return special.logsumexp(a, b=a * a)


def test_differentiated_weights_are_refused(jit):
    # the rule differentiates a alone: weights b that are being differentiated are refused
    # (passes/check.py, check_followed: a keyword argument of a rule), by grad and by jvp
    x = np.array([0.5, 1.0, 2.0])
    with pytest.raises(srcgrad.MissingRule, match="b="):
        srcgrad.grad(logsumexp_weighted_by_itself, jit=jit)(x)
    with pytest.raises(srcgrad.MissingRule, match="b="):
        srcgrad.jvp(logsumexp_weighted_by_itself, jit=jit)(x, x)
