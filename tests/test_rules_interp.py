"""np.interp (srcgrad/rules/interpolation.py): the gradients of x, xp, fp, left and right
against central differences (grad, jvp and hvp, compiled and as Python), with period=
(x, xp, fp and the period differentiated), and by hand. The points avoid the knots,
where the slope jumps."""

import numpy as np
import pytest
from sweep import check, check_jvp, parametrize

import srcgrad
from srcgrad.rules.interpolation import _flat, _scatter, _shaped, period_of

XP = np.array([0.0, 1.0, 2.5, 4.0])
FP = np.array([1.0, 3.0, 2.0, 5.0])
X = np.array([-0.5, 0.3, 1.7, 3.2, 4.5])   # left of, inside, right of the knots


def of_x(x):
    return np.sum(np.interp(x, XP, FP) ** 2)


def of_everything(x, xp, fp):
    return np.sum(np.sin(np.interp(x, xp, fp)) * np.arange(1.0, 6.0))


def with_sides(x, lo, hi):
    return np.sum(np.interp(x, XP, FP, lo, hi) ** 2)


def of_a_number(t, fp):
    return np.interp(t, XP, fp) ** 2


def periodic(x, xp, fp, p):
    # x and xp read modulo |p|; xp's last knot 3.4 - 4.5 reads as 3.4, its second as 1
    return np.sum(np.sin(np.interp(x, xp, fp, period=p)) * np.arange(1.0, 6.0))


HELPERS = (np.interp, _flat, _shaped, _scatter)
CASES = [
    ("interp_x", HELPERS, of_x, (X,), [0], True),
    ("interp_all", HELPERS, of_everything, (X, XP, FP), [0, 1, 2], True),
    ("interp_sides", HELPERS, with_sides, (X, 0.5, 7.0), [0, 1, 2], True),
    ("interp_number", HELPERS, of_a_number, (1.7, FP), [0, 1], True),
    ("interp_period", HELPERS + (period_of,), periodic,
     (X, np.array([0.2, 5.5, 2.5, -1.1]), FP, 4.5), [0, 1, 2, 3], True),
]


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


@parametrize(CASES)
def test_jvp_against_differences(case, jit):
    check_jvp(case, jit, 7)


def of_knots(xp):
    return np.sum(np.interp(X, xp, FP) * np.arange(1.0, 6.0))


@pytest.mark.parametrize("fun,at", [(of_x, X), (of_knots, XP)], ids=["x", "xp"])
def test_hvp_against_differences_of_the_gradient(jit, fun, at):
    v = np.linspace(0.3, 1.1, at.size)
    g = srcgrad.grad(fun, jit=False)  # (the reference: its Python form)
    h = 1e-5
    np.testing.assert_allclose(srcgrad.hvp(fun, jit=jit)(at, v),
                               (g(at + h * v) - g(at - h * v)) / (2 * h), atol=1e-6)


def test_by_hand(jit):
    # x = 0.3 reads between knots 0 and 1 (fp 1 and 3) at t = 0.3: y = 1 + 2 x = 1.6
    g = srcgrad.grad(of_everything, wrt=(0, 2), jit=jit)(np.full(5, 0.3), XP, FP)
    c = np.cos(1.6) * np.arange(1.0, 6.0)   # y = 1.6 at x = 0.3
    np.testing.assert_allclose(g[0], 2.0 * c)
    np.testing.assert_allclose(g[1], [0.7 * c.sum(), 0.3 * c.sum(), 0.0, 0.0])
    # left of the knots y = lo, right of them hi: 2 y to each, none to x
    dx, dlo, dhi = srcgrad.grad(with_sides, wrt=(0, 1, 2), jit=jit)(
        np.array([-1.0, -0.5, 5.0]), 0.5, 7.0)
    np.testing.assert_allclose(dx, [0.0, 0.0, 0.0])
    assert (dlo, dhi) == (pytest.approx(2.0), pytest.approx(14.0))


def right_by_keyword(x, hi):
    return np.sum(np.interp(x, XP, FP, right=hi) ** 2)


def test_a_side_given_by_keyword_is_differentiated(jit):
    """Regression: `right=hi` stayed a keyword, which the rule's check refused as a
    keyword given a differentiated value; left takes its default before it."""
    dx, dhi = srcgrad.grad(right_by_keyword, wrt=(0, 1), jit=jit)(np.array([4.5, 5.0]), 7.0)
    np.testing.assert_allclose(dx, [0.0, 0.0])
    assert dhi == pytest.approx(28.0)   # 2 hi for each of the two points right of xp


def wrapped(x, fp):
    return np.sum(np.interp(x, XP, fp, None, None, 5.0))   # (period by position)


def test_period_by_hand(jit):
    # modulo 5, x = 6.3 reads as 1.3, between knots 1 and 2.5 (fp 3 and 2) at t = 0.2:
    # slope -2/3; x = 4.5 between knot 4 and knot 0 + 5 (fp 5 and 1) at t = 0.5: slope -4
    dx, dfp = srcgrad.grad(wrapped, wrt=(0, 1), jit=jit)(np.array([6.3, 4.5]), FP)
    np.testing.assert_allclose(dx, [-2.0 / 3.0, -4.0])
    np.testing.assert_allclose(dfp, [0.5, 0.8, 0.2, 0.5])



def period_by_name(x, fp, p):
    return np.sum(np.interp(x, XP, fp, period=p))


def period_none(x, fp):
    return np.sum(np.interp(x, XP, fp, period=None))


def test_a_period_of_zero_raises_and_none_is_no_period(jit):
    # as NumPy: period=0 is a ValueError (it gave nan values before), and period=None
    # given by name is no period (it was a TypeError): slope -2/3 at x = 1.3 as above
    x = np.array([1.3])
    with pytest.raises(ValueError, match="period must be a non-zero value"):
        srcgrad.grad(period_by_name, jit=jit)(x, FP, 0.0)
    np.testing.assert_allclose(srcgrad.grad(period_none, jit=jit)(x, FP), [-2.0 / 3.0])
