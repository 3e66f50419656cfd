"""scipy.special, a third part (srcgrad/rules/special.py, their compiled forms in
srcgrad/runtime/special_extra.py): gammainc, gammaincc, betainc, exp1, expi, expn, zeta
and the Bessel functions j0, j1, y0, y1, jv, yv, iv, ive, kv, kve, spherical_jn and
spherical_yn in the rule sweep, by hand, forward mode and hvp against central
differences, the compiled forms against SciPy's values, and the refusal of the arguments
without a gradient rule (the shape parameters of gammainc and betainc, the orders of the
Bessel functions and of expn, zeta's s).
"""

import math

import numba
import numpy as np
import pytest
from marks import compiles
from scipy import special
from sweep import (
    check,
    check_hvp,
    check_jvp,
    check_refused_first_argument,
    domains,
    parametrize,
)

import srcgrad
from srcgrad.errors import MissingRule
from srcgrad.runtime.special_extra import (
    boxcox_slope,
    ellipe_slope,
    ellipk_slope,
    expn_all,
    j1_slope,
    spence_slope,
    spherical_jn_slope,
    spherical_yn_slope,
    y1_slope,
)

any_, pos, unit, distinct = domains(31)

SHAPES_1 = [(), (5,), (3, 4)]
SHAPES_2 = [((), ()), ((4,), (4,)), ((3, 4), (4,)), ((3, 1), (1, 4))]


# ---- the functions differentiated: several rules each (few functions to compile) ----


def incomplete(a, x):
    # x in (0.5, 2), a in (0.5, 2): the densities of the incomplete gamma and beta
    return np.sum(special.gammainc(a, x) + special.gammaincc(a + 1.0, x) * 0.7 +
                  special.betainc(a, 2.5, x * 0.4) * 1.3 + special.betainc(1.5, a, x * 0.3))


def integrals(x):
    # expn of orders 0, 1, 2 (the slope of order 0 is expn_all(-1, x)) and expn_all itself
    return np.sum(special.exp1(x) + special.expi(x) * 0.5 + special.expn(2, x) * 1.2 +
                  special.expn(0, x) * 0.3 + expn_all(-1, x) * 0.2 + expn_all(1, x) * 0.4)


def bessel(v, x):
    # x in (0.5, 2) (yv, kv are singular at 0, iv and jv of a fractional order real for
    # x > 0 only)
    return np.sum(special.jv(v, x) + special.yv(v, x) * 0.3 + special.iv(v, x) * 0.8 +
                  special.ive(v, x) * 1.1 + special.kv(v, x) * 0.6 + special.kve(v, x) * 0.9)


def bessel_signed(x):
    # an integer order: jv, iv and ive are real for x < 0 too (sign(x) in ive's slope)
    return np.sum(special.jv(2, x) + special.iv(1, x) * 0.7 + special.ive(3, x) * 1.2 +
                  special.ive(0, x) + special.j0(x) * 0.5 + special.j1(x) * 1.4 +
                  j1_slope(x) * 0.6)


def bessel_integer(x):
    return np.sum(special.j0(x) + special.j1(x) * 0.8 + special.y0(x) * 0.6 +
                  special.y1(x) * 1.1 + j1_slope(x) * 0.4 + y1_slope(x) * 0.3)


def zetas(s, q):
    # s in (2, 3.5): zeta(s, q) in q, and Riemann's zeta(s) of s not differentiated
    return np.sum(special.zeta(s, q) + special.zeta(s + 1.0, q * 2.0) * 0.5 +
                  special.zeta(s) * q)


def spherical(x):
    return np.sum(special.spherical_jn(2, x) + special.spherical_yn(1, x) * 0.3 +
                  special.spherical_jn(0, x) * 1.2 + special.spherical_yn(0, x) * 0.4 +
                  spherical_jn_slope(1, x) * 0.7 + spherical_yn_slope(2, x) * 0.2)


# SciPy 1.11 gave spherical_jn negative arguments (NaN before) and float orders
NEW_SPHERICAL = not np.isnan(special.spherical_jn(1, -1.0))


def spherical_signed(x):
    return np.sum(special.spherical_jn(3, x) + special.spherical_jn(1, x) * 0.8 +
                  spherical_jn_slope(2, x) * 1.1)


def unary_more(x):
    # x in (-0.8, 0.8): erfi, dawsn, wrightomega; the elliptic integrals of m = x; spence
    # of 1 + x (its slope's limit at z = 1 aside)
    return np.sum(special.erfi(x) + special.dawsn(x) * 1.3 + special.wrightomega(x) * 0.7 +
                  special.ellipk(x) * 0.9 + special.ellipe(x) * 1.1 +
                  special.spence(x + 1.1) * 0.6 + ellipk_slope(x) * 0.2 +
                  ellipe_slope(x) * 0.4 + spence_slope(x + 1.2) * 0.3)


def binary_more(a, b):
    # a, b in (0.5, 2)
    return np.sum(special.kl_div(a, b) + special.huber(a, b - 1.2) * 0.8 +
                  special.pseudo_huber(a, b - 1.0) * 1.2 + special.poch(a, b) * 0.5 +
                  special.binom(a + 2.0, b) * 0.3 + special.owens_t(b - 1.0, a) * 1.5)


def boxcoxes(x, lmbda):
    # x in (0.5, 2), lmbda in (-0.8, 0.8)
    return np.sum(special.boxcox(x, lmbda) + special.boxcox1p(x - 0.3, lmbda) * 0.8 +
                  special.inv_boxcox(x - 0.4, lmbda) * 1.2 +
                  boxcox_slope(x, lmbda, 1) * 0.5 + boxcox_slope(x, lmbda, 2) * 0.3)


INCOMPLETE = (special.gammainc, special.gammaincc, special.betainc)
INTEGRALS = (special.exp1, special.expi, special.expn, expn_all)
BESSEL = (special.jv, special.yv, special.iv, special.ive, special.kv, special.kve)
INTEGER = (special.j0, special.j1, special.y0, special.y1, j1_slope, y1_slope)
UNARY_MORE = (special.erfi, special.dawsn, special.wrightomega, special.ellipk,
              special.ellipe, special.spence, ellipk_slope, ellipe_slope, spence_slope)
BINARY_MORE = (special.kl_div, special.huber, special.pseudo_huber, special.poch,
               special.binom, special.owens_t)
BOXCOX = (special.boxcox, special.boxcox1p, special.inv_boxcox, boxcox_slope)
SPHERICAL = (special.spherical_jn, special.spherical_yn, spherical_jn_slope,
             spherical_yn_slope)


def cases():
    """(id, primals covered, function, arguments, positions, compiled too)."""
    for sa, sx in SHAPES_2:
        yield "incomplete", INCOMPLETE, incomplete, (pos(*sa), pos(*sx)), [1], False
    for shape in SHAPES_1:
        yield "integrals", INTEGRALS, integrals, (pos(*shape),), [0], False
        yield "bessel-integer", INTEGER, bessel_integer, (pos(*shape),), [0], False
        yield "bessel-signed", (*BESSEL[:4:2], special.ive, special.j0, special.j1,
                                j1_slope), bessel_signed, (any_(*shape),), [0], False
        yield "spherical", SPHERICAL, spherical, (pos(*shape),), [0], False
        yield "unary-more", UNARY_MORE, unary_more, (unit(*shape),), [0], False
        if NEW_SPHERICAL:
            yield "spherical-signed", (special.spherical_jn, spherical_jn_slope), \
                spherical_signed, (any_(*shape),), [0], False
    for sv, sx in SHAPES_2:
        yield "bessel", BESSEL, bessel, (pos(*sv) + 0.3, pos(*sx)), [1], False
        yield "zeta", (special.zeta,), zetas, (pos(*sv) + 1.5, pos(*sx)), [1], False
        yield "binary-more", BINARY_MORE, binary_more, (pos(*sv), pos(*sx)), [0, 1], False
        yield "boxcox", BOXCOX, boxcoxes, (pos(*sv), unit(*sx)), [0, 1], False
    yield "incomplete-compiled", INCOMPLETE, incomplete, (pos(3, 1), pos(4)), [1], True
    yield "integrals-compiled", INTEGRALS, integrals, (pos(2, 3),), [0], True
    yield "bessel-compiled", BESSEL, bessel, (1.3, pos(2, 3)), [1], True
    yield "bessel-integer-compiled", INTEGER, bessel_integer, (pos(),), [0], True
    yield "bessel-signed-compiled", (special.ive,), bessel_signed, (any_(5),), [0], True
    yield "zeta-compiled", (special.zeta,), zetas, (pos(3, 1) + 1.5, pos(4)), [1], True
    yield "spherical-compiled", SPHERICAL, spherical, (pos(2, 3),), [0], True
    if NEW_SPHERICAL:
        yield "spherical-signed-compiled", (special.spherical_jn, spherical_jn_slope), \
            spherical_signed, (any_(),), [0], True
    yield "unary-more-compiled", UNARY_MORE, unary_more, (unit(5),), [0], True
    yield "binary-more-compiled", BINARY_MORE, binary_more, (pos(3, 1), pos(4)), [0, 1], True
    yield "boxcox-compiled", BOXCOX, boxcoxes, (pos(), unit(3)), [0, 1], True


CASES = list(cases())


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


# forward mode compiled for the functions of two arguments (few compiles), as Python for all
JVP_COMPILED = ("incomplete-compiled", "bessel-compiled", "binary-more-compiled",
                "boxcox-compiled")


def test_jvp_against_differences(jit):
    for case in CASES:
        if case[0] in JVP_COMPILED:
            check_jvp(case, jit)


def test_jvp_as_python():
    for case in CASES[-11:]:
        if case[0] not in JVP_COMPILED:
            check_jvp(case, jit=False)
    for case in CASES:
        if case[0] in ("incomplete", "bessel", "zeta", "binary-more", "boxcox") and \
                np.ndim(case[3][0]) == 2:
            check_jvp(case, jit=False)


def test_hvp_against_differences_of_the_gradient():
    # the rules' own rules: xlogy's and gammaln's in gammainc's slope, expn_all's,
    # j1_slope's and y1_slope's, and the orders v - 1, v + 1 of the Bessel functions
    for k in range(-11, 0):
        check_hvp(CASES[k], jit=False)
    check_hvp(("", (), boxcoxes, (pos(2, 3), unit(3)), [1], False), jit=False)


# ---- by hand ----


def gamma_and_beta(x):
    return special.gammainc(2.0, x) + special.gammaincc(2.0, x) * 3.0 + \
        special.betainc(2.0, 1.0, x * 0.5)


def exponential(x):
    return special.exp1(x) + special.expi(x) * 2.0 + special.expn(0, x) * 5.0


def half_orders(x):
    return special.jv(0.5, x) + special.iv(0.5, x) * 2.0 + special.kv(0.5, x) * 3.0 + \
        special.kve(0.5, x) * 5.0 + special.yv(0.5, x) * 7.0


def at_zero(x):
    return np.sum(special.jv(2, x) + special.iv(1, x) * 0.7 + special.ive(0, x) +
                  special.j0(x) * 0.5 + special.j1(x) * 1.4)


def zeta_and_spherical(x):
    return special.zeta(2.0, x) + special.spherical_jn(0, x) * 2.0 + \
        special.spherical_yn(0, x) * 3.0


def more_by_hand(x):
    return special.erfi(x) + special.dawsn(x) * 2.0 + special.ellipk(x) * 3.0 + \
        special.ellipe(x) * 5.0 + special.spence(x + 1.0) * 7.0 + special.wrightomega(x)


def pairs_by_hand(a, b):
    return special.kl_div(a, b) + special.huber(a, b) * 2.0 + special.pseudo_huber(a, b) * 3.0 + \
        special.poch(a, b) * 5.0 + special.binom(a + 2.0, b) * 7.0 + special.owens_t(b, a) * 11.0


def boxcox_by_hand(x, lmbda):
    return special.boxcox(x, lmbda) + special.boxcox1p(x - 1.0, lmbda) * 2.0 + \
        special.inv_boxcox(x - 1.0, lmbda) * 3.0


def test_more_by_hand(jit):
    # at 0: erfi' = 2/sqrt(pi), dawsn' = 1, K'(0) = pi/8, E'(0) = -pi/8, spence'(1) = -1,
    # wrightomega(0) = W(1) = 0.567...: omega / (1 + omega)
    w = 0.5671432904097838
    want = 2.0 / math.sqrt(math.pi) + 2.0 + (3.0 - 5.0) * math.pi / 8.0 - 7.0 + w / (1.0 + w)
    assert srcgrad.grad(more_by_hand, jit=jit)(0.0) == pytest.approx(want, rel=1e-13)
    # a = 1, b = 2: kl_div = a log(a/b) - a + b: log(1/2), 1 - 1/2; huber (|b| > a): delta
    # (|b| - a/2): |b| - a = 1, a = 1; pseudo_huber = a^2 (sqrt(1 + (b/a)^2) - 1): 2 a (s - 1)
    # - b^2 / (a s), b / s with s = sqrt(5); poch(1, b) = gamma(1 + b): gamma(3) (psi(3) -
    # psi(1)), gamma(3) psi(3); binom(3, b) = 3 at b = 2: 3 (psi(4) - psi(2)), 3 (psi(2) -
    # psi(3)); owens_t(h, a) at h = 2, a = 1: -phi(2) erf(2/sqrt 2) / 2, e^-4 / (4 pi)
    s5, psi = math.sqrt(5.0), special.psi
    phi2 = math.exp(-2.0) / math.sqrt(2.0 * math.pi)
    da = (math.log(0.5) + 2.0 * 1.0 + 3.0 * (2.0 * (s5 - 1.0) - 4.0 / s5) +
          5.0 * 2.0 * (psi(3.0) - psi(1.0)) + 7.0 * 3.0 * (psi(4.0) - psi(2.0)) +
          11.0 * math.exp(-4.0) / (4.0 * math.pi))
    db = (0.5 + 2.0 * 1.0 + 3.0 * 2.0 / s5 + 5.0 * 2.0 * psi(3.0) +
          7.0 * 3.0 * (psi(2.0) - psi(3.0)) - 11.0 * 0.5 * phi2 * math.erf(math.sqrt(2.0)))
    got = srcgrad.grad(pairs_by_hand, wrt=(0, 1), jit=jit)(1.0, 2.0)
    assert got == pytest.approx((da, db), rel=1e-12)
    # lmbda = 0: boxcox = log x, boxcox1p(x - 1) = log x, inv_boxcox(x - 1) = e^(x - 1); in
    # lmbda: (log x)^2 / 2 twice, -e^(x - 1) (x - 1)^2 / 2
    x = 2.0
    got = srcgrad.grad(boxcox_by_hand, wrt=(0, 1), jit=jit)(x, 0.0)
    want = (3.0 / x + 3.0 * math.e, 3.0 * math.log(x) ** 2 / 2.0 - 3.0 * math.e / 2.0)
    assert got == pytest.approx(want, rel=1e-13)


def test_by_hand(jit):
    # gammainc(2, x) = 1 - (1 + x) e^-x: slope x e^-x, e^-1 at x = 1; gammaincc's is minus
    # that; betainc(2, 1, u) = u^2: d/dx (x/2)^2 = x/2
    got = srcgrad.grad(gamma_and_beta, jit=jit)(1.0)
    assert got == pytest.approx(math.exp(-1.0) * (1.0 - 3.0) + 0.5, rel=1e-13)
    # exp1' = -e^-x / x, expi' = e^x / x, expn(0, x) = e^-x / x: slope -e^-x (1/x + 1/x^2)
    got = srcgrad.grad(exponential, jit=jit)(2.0)
    want = -math.exp(-2.0) / 2.0 + 2.0 * math.exp(2.0) / 2.0 - 5.0 * math.exp(-2.0) * 0.75
    assert got == pytest.approx(want, rel=1e-13)
    # the orders 1/2: jv = sqrt(2/(pi x)) sin x, iv = sqrt(2/(pi x)) sinh x, kv = sqrt(pi/(2x))
    # e^-x, kve = sqrt(pi/(2x)), yv = -sqrt(2/(pi x)) cos x
    x, c = 0.8, math.sqrt(2.0 / math.pi)
    want = (c * (math.cos(x) / math.sqrt(x) - 0.5 * math.sin(x) * x ** -1.5) +
            2.0 * c * (math.cosh(x) / math.sqrt(x) - 0.5 * math.sinh(x) * x ** -1.5) -
            3.0 * math.sqrt(math.pi / 2.0) * math.exp(-x) * (x ** -0.5 + 0.5 * x ** -1.5) -
            5.0 * 0.5 * math.sqrt(math.pi / 2.0) * x ** -1.5 +
            7.0 * c * (math.sin(x) / math.sqrt(x) + 0.5 * math.cos(x) * x ** -1.5))
    assert srcgrad.grad(half_orders, jit=jit)(x) == pytest.approx(want, rel=1e-12)
    # at 0: j0' = -j1 = 0, j1' = 1/2, iv(1, x)' = (i0 + i2)/2 = 1/2, jv(2, x)' = (j1 - j3)/2 = 0,
    # ive(0, x)' = i1e(x) - sign(x) i0e(x) = 0
    assert srcgrad.grad(at_zero, jit=jit)(np.zeros(2)) == pytest.approx([1.05] * 2, abs=1e-15)
    # d/dq zeta(2, q) = -2 zeta(3, q), -2 zeta(3) at q = 1 (Apery's constant); the orders 0:
    # spherical_jn = sin x / x, spherical_yn = -cos x / x
    x = 1.0
    want = -2.0 * 1.2020569031595942 + 2.0 * (x * math.cos(x) - math.sin(x)) / x ** 2 + \
        3.0 * (x * math.sin(x) + math.cos(x)) / x ** 2
    assert srcgrad.grad(zeta_and_spherical, jit=jit)(x) == pytest.approx(want, rel=1e-13)


# ---- refusals: no gradient in a shape parameter or an order ----


def shape_a(a, x):
    return np.sum(special.gammainc(a, x))


def shape_ac(a, x):
    return np.sum(special.gammaincc(a, x))


def shape_b(b, x):
    return np.sum(special.betainc(1.5, b, x))


def order_v(v, x):
    return np.sum(special.kve(v, x) + special.jv(1.0, x))


def order_n(n, x):
    return np.sum(special.expn(n, x))


def zeta_s(s, q):
    return np.sum(special.zeta(s, q))


def riemann_s(s, q):
    return np.sum(special.zeta(s) * q)


def order_spherical(n, x):
    return np.sum(special.spherical_yn(n, x) + special.spherical_jn(1, x))


def order_polygamma(n, x):
    return np.sum(special.polygamma(n, x))


def dimension_multigammaln(d, x):
    return np.sum(special.multigammaln(x + 3.0, d))


_SHAPE, _ORDER = "is a shape parameter, whose derivative has no closed form", "is an order"
REFUSED = [(shape_a, _SHAPE), (shape_ac, _SHAPE), (shape_b, _SHAPE), (order_v, _ORDER),
           (order_n, _ORDER), (zeta_s, "is the exponent s"), (riemann_s, "is the exponent s"),
           (order_polygamma, _ORDER), (dimension_multigammaln, "is the dimension"),
           *([(order_spherical, _ORDER)] if NEW_SPHERICAL else [])]


def test_refusals(jit):
    # refused where srcgrad compiles, at the call's line, in both modes: never a zero
    # gradient (polygamma's n and multigammaln's d were one)
    for fun, words in REFUSED:
        check_refused_first_argument(fun, words, jit, np.array([0.3, 0.6]))


def spherical_derivative(x):
    return np.sum(special.spherical_jn(1, x, derivative=True))


def test_spherical_derivative_refused(jit):
    with pytest.raises(MissingRule, match="derivative=True has no gradient rule"):
        srcgrad.grad(spherical_derivative, jit=jit)(np.array([0.3, 0.6]))


# ---- the compiled forms ----


@numba.njit
def _compiled(a, x, v):
    return (special.gammainc(a, x), special.gammaincc(a, x), special.betainc(a, v, x / 3.0),
            special.exp1(x), special.expi(x), special.expi(-x), special.expn(3, x),
            expn_all(-2, x), special.j0(x), special.j1(x), special.y0(x), special.y1(x),
            j1_slope(x), y1_slope(x), special.jv(v, x), special.yv(v, x), special.iv(v, x),
            special.ive(v, x), special.kv(v, x), special.kve(v, x), special.jv(2, x),
            special.zeta(a + 1.5, x), special.zeta(a + 1.5), special.zeta(4, x - 0.5),
            special.spherical_jn(3, x), special.spherical_yn(2, x),
            special.spherical_jn(2, x - 0.5), special.spherical_jn(1, x, True),
            spherical_jn_slope(0, x - 0.5), spherical_yn_slope(3, x), special.erfi(x - 1.0),
            special.dawsn(x - 1.0), special.wrightomega(x - 1.0), special.ellipk(x / 3.0),
            special.ellipe(x / 3.0), special.spence(x), special.kl_div(a, x),
            special.huber(v, x - 1.0), special.pseudo_huber(v, x - 1.0), special.poch(a, x),
            special.binom(a + 3.0, x), special.owens_t(x - 1.0, v), special.boxcox(x, a - 1.0),
            special.boxcox1p(x - 0.05, a - 1.0), special.inv_boxcox(x - 0.05, a - 1.0),
            boxcox_slope(x, a - 1.0, 1))


def _scipy(a, x, v):
    m = 2.0   # E_-2(x) = 2 e^-x (1 + x + x^2/2) / x^3
    return (special.gammainc(a, x), special.gammaincc(a, x), special.betainc(a, v, x / 3.0),
            special.exp1(x), special.expi(x), special.expi(-x), special.expn(3, x),
            m * np.exp(-x) * (1.0 + x + x * x / 2.0) / x ** 3, special.j0(x), special.j1(x),
            special.y0(x), special.y1(x), special.j0(x) - special.j1(x) / x,
            special.y0(x) - special.y1(x) / x, special.jv(v, x), special.yv(v, x),
            special.iv(v, x), special.ive(v, x), special.kv(v, x), special.kve(v, x),
            special.jv(2, x), special.zeta(a + 1.5, x), special.zeta(a + 1.5),
            special.zeta(4, x - 0.5), special.spherical_jn(3, x), special.spherical_yn(2, x),
            special.spherical_jn(2, x - 0.5), special.spherical_jn(1, x, True),
            special.spherical_jn(0, x - 0.5, True), special.spherical_yn(3, x, True),
            special.erfi(x - 1.0), special.dawsn(x - 1.0), special.wrightomega(x - 1.0),
            special.ellipk(x / 3.0), special.ellipe(x / 3.0), special.spence(x),
            special.kl_div(a, x), special.huber(v, x - 1.0), special.pseudo_huber(v, x - 1.0),
            special.poch(a, x), special.binom(a + 3.0, x), special.owens_t(x - 1.0, v),
            special.boxcox(x, a - 1.0), special.boxcox1p(x - 0.05, a - 1.0),
            special.inv_boxcox(x - 0.05, a - 1.0), _boxcox_slope_by_hand(x, a - 1.0))


def _boxcox_slope_by_hand(x, lmbda):
    # (lmbda log(x) x^lmbda - (x^lmbda - 1)) / lmbda^2, or (log x)^2 / 2 at lmbda = 0
    x, lmbda = np.broadcast_arrays(np.asarray(x, dtype=float), lmbda)
    u, p = np.log(x), x ** lmbda
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(lmbda == 0.0, u * u / 2.0, (lmbda * u * p - (p - 1.0)) / lmbda ** 2)


@compiles
def test_compiled_forms_give_scipys_values(rng):
    # arrays only, one compile (the forms of numbers are the gradient cases' 0-d runs):
    # chosen points in a column, random ones beside them, broadcast against v
    chosen = np.array([(0.3, 0.4), (2.5, 1.7), (1.0, 30.0), (7.0, 0.05), (1.0, 2.0)])
    a = np.concatenate([chosen[:, :1], rng.uniform(0.2, 3, (3, 1))])
    x = np.concatenate([np.repeat(chosen[:, 1:], 4, axis=1), rng.uniform(0.1, 3, (3, 4))])
    v = np.array([1.2, 0.5, 3.0, 2.0])
    for got, want in zip(_compiled(a, x, v), _scipy(a, x, v), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)
