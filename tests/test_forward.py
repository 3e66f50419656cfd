"""The forward-mode pass and the transforms built on it: what the independent corpus
(tests/higher.py) does not cover -- the generated code's form and the errors."""

import numba
import numpy as np
import pytest
from fd import assert_grad, slope

import srcgrad
from srcgrad.rules import OPS, Op, rule, tangent


def poly(x, y):
    return x ** 2 * y + 3.0 * x


def accumulate(x, n):
    s = 0.0
    for _ in range(n):
        s = s * x + 1.0
    return s


@srcgrad.register_gradient("ForwardTestSTE")
def _ste(dy, y, x):
    return dy


def quantized(w):
    with srcgrad.gradient_override({np.round: "ForwardTestSTE"}):
        q = np.round(w)
    return np.sum(q * w)


def hooked(x):
    y = x * x
    with srcgrad.grad_of(y) as dy:
        dy = dy * 0.0
    return y * x


def test_jvp_hand_values(jit):
    # d(x^2 y + 3x) = (2xy + 3) dx + x^2 dy at (2, 5)
    assert srcgrad.jvp(poly, wrt=("x", "y"), jit=jit)(2.0, 5.0, (1.0, 0.0)) == (26.0, 23.0)
    assert srcgrad.jvp(poly, wrt=("x", "y"), jit=jit)(2.0, 5.0, (0.0, 1.0)) == (26.0, 4.0)
    # s = 1 + x + x^2 (n = 3): ds/dx = 1 + 2x
    assert srcgrad.jvp(accumulate, jit=jit)(2.0, 3, 1.0) == (7.0, 5.0)


def test_jvp_source_keeps_the_loop_and_names():
    src = srcgrad.jvp(accumulate).source
    assert "def accumulate_jvp(x, n, tx):" in src   # tx: the tangent of x
    assert "for _ in range(n):" in src
    assert "ts = zeros_like(s)" in src      # s starts as a constant, then varies with x
    assert "tape" not in src                # forward mode needs no tape
    compile(src, "<jvp>", "exec")


def square_sum(x):
    return np.sum(x * x)


def test_equal_tangent_terms_are_counted_once(jit, rng):
    # d(x * x) = tx * x + x * tx, written once with its count
    src = srcgrad.jvp(square_sum).source
    assert "2 * (tx * x)" in src and "tx * x + tx * x" not in src, src
    x, v = rng.standard_normal(4), rng.standard_normal(4)
    value, slope = srcgrad.jvp(square_sum, jit=jit)(x, v)
    assert slope == pytest.approx(2.0 * np.dot(x, v), rel=1e-12)


def test_grad_of_grad_source_is_forward_over_the_gradient():
    src = srcgrad.grad(srcgrad.grad(poly)).source
    assert "def poly_grad_grad(x, y):" in src and "poly_grad_jvp(" in src
    assert srcgrad.grad(srcgrad.grad(poly))(2.0, 5.0) == 10.0   # d2/dx2 = 2y


def test_custom_adjoint_is_refused_by_jvp_and_differentiated_by_hessian():
    with pytest.raises(srcgrad.MissingRule, match=r"custom gradient rule.*forward mode"):
        srcgrad.jvp(quantized, jit=False)(np.array([0.4, 1.6]), np.ones(2))
    assert np.allclose(srcgrad.grad(quantized, jit=False)(np.array([0.4, 1.6])), [0.4, 3.6])
    # forward over the generated gradient differentiates the gradient the rule defines:
    # d/dw (round(w) + w) = 1 where round's own derivative is 0
    assert np.allclose(srcgrad.hessian(quantized, jit=False)(np.array([0.4, 1.6])), np.eye(2))


def test_jvp_ignores_grad_of_hooks(jit):
    # the hook zeroes dy in the backward pass only; the derivative of x^3 is 3x^2
    assert srcgrad.grad(hooked, jit=jit)(2.0) == 4.0
    assert srcgrad.jvp(hooked, jit=jit)(2.0, 1.0) == (8.0, 12.0)


def test_jvp_wrt_an_intermediate_is_refused():
    with pytest.raises(srcgrad.WrtError, match="parameters only"):
        srcgrad.jvp(accumulate, wrt="s", jit=False)(2.0, 3, 1.0)


def test_tangent_count_and_shape_are_checked():
    with pytest.raises(srcgrad.SrcgradError, match="one tangent per wrt"):
        srcgrad.jvp(poly, wrt=("x", "y"), jit=False)(2.0, 5.0, 1.0)
    with pytest.raises(srcgrad.SrcgradError, match="shape"):
        srcgrad.jvp(accumulate, jit=False)(2.0, 3, np.ones(2))


def test_grad_of_a_non_scalar_transform_is_refused():
    with pytest.raises(srcgrad.SrcgradError, match="scalar"):
        srcgrad.grad(srcgrad.jvp(poly))


def reductions(x):
    return (np.max(x) + np.var(x) + np.sum(np.std(x, axis=0)) + np.prod(x)
            + np.sum(np.max(x, axis=1)) + np.sum(np.mean(x.T, axis=1) ** 2))


def test_reduction_tangent_rules_against_differences(jit, rng):
    # max/min, var, std, prod have tangent rules of their own; sum, mean, transpose are
    # linear; checked against a central difference along v
    x, v = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    value, slope = srcgrad.jvp(reductions, jit=jit)(x, v)
    h = 1e-6
    assert value == pytest.approx(reductions(x), rel=1e-12)
    assert slope == pytest.approx((reductions(x + h * v) - reductions(x - h * v)) / (2 * h),
                                  rel=1e-6)


def piecewise(x):
    return np.sum(x * np.where(x > 0.0, x ** 2, 2.0))  # x^3 where x > 0, else 2x


def test_hvp_through_the_where_of_a_generated_gradient(jit, rng):
    # the gradient calls srcgrad's `where` (np.where's faster numba form); forward mode
    # over it needs that helper's tangent (the cotangent it moves, x, is varied here):
    # H v = where(x > 0, 6 x v, 0) by hand
    assert "(where(" in srcgrad.grad(piecewise).source
    x, v = rng.standard_normal(7), rng.standard_normal(7)
    hv = srcgrad.hvp(piecewise, jit=jit)(x, v)
    np.testing.assert_allclose(hv, np.where(x > 0.0, 6.0 * x * v, 0.0), rtol=1e-12)


def mixed(x, y):
    return np.sum(x ** 2 * y) + np.sum(np.sin(x))


def test_vjp_of_a_gradient_by_hand_and_differences(jit, rng):
    # grad_x = 2 x y + cos x: d/dx = diag(2 y - sin x), d/dy = diag(2 x); the pullback
    # of u is (J_x^T u, J_y^T u), called many times
    x, y = rng.standard_normal(3), rng.standard_normal(3)
    gx = srcgrad.grad(mixed, wrt=0)
    value, pullback = srcgrad.vjp(gx, wrt=(0, 1), jit=jit)(x, y)
    np.testing.assert_allclose(value, 2 * x * y + np.cos(x), rtol=1e-12)
    for _ in range(2):
        u, w = rng.standard_normal(3), rng.standard_normal(3)
        px, py = pullback(u)
        np.testing.assert_allclose(px, (2 * y - np.sin(x)) * u, rtol=1e-12)
        np.testing.assert_allclose(py, 2 * x * u, rtol=1e-12)
        # <J_y^T u, w> = <u, J_y w>, J_y w by differences of the gradient along w
        h = 1e-6
        plain = srcgrad.grad(mixed, wrt=0, jit=False)
        jw = (plain(x, y + h * w) - plain(x, y - h * w)) / (2 * h)
        assert np.dot(py, w) == pytest.approx(np.dot(u, jw), rel=1e-6)
    # the third derivative of x^3 is 6: the pullback of grad(grad(cube)) at any x
    value, pullback = srcgrad.vjp(srcgrad.grad(srcgrad.grad(cube)), jit=jit)(2.0)
    assert value == 12.0 and pullback(1.0) == 6.0 and pullback(0.5) == 3.0


def cube(x):
    return x * x * x


@srcgrad.register_gradient("T_fwd_double", replace=True)
def _double(dy, y, x):
    return 2.0 * dy


def doubled_input(x, w):
    with srcgrad.gradient_override({srcgrad.identity: "T_fwd_double"}):
        u = srcgrad.identity(x)
    return np.sum(u * w * w)


def test_vjp_of_a_gradient_made_by_a_rule(jit, rng):
    # the rule doubles: grad_x = 2 w^2, so d grad_x / dw = diag(4 w) and the pullback of
    # u is 4 w u. That gradient field is not a true gradient (d/dx grad_w = 2 w u): the
    # Hessian-symmetry shortcut would be wrong here
    x, w = rng.standard_normal(3), rng.standard_normal(3)
    gx = srcgrad.grad(doubled_input, wrt=0)
    value, pullback = srcgrad.vjp(gx, wrt=1, jit=jit)(x, w)
    np.testing.assert_allclose(value, 2 * w * w, rtol=1e-12)
    plain = srcgrad.grad(doubled_input, wrt=0, jit=False)
    for _ in range(2):
        u, v = rng.standard_normal(3), rng.standard_normal(3)
        got = pullback(u)
        np.testing.assert_allclose(got, 4 * w * u, rtol=1e-12)
        h = 1e-6  # <J^T u, v> = <u, J v>, J v by differences of the gradient along v
        jv = (plain(x, w + h * v) - plain(x, w - h * v)) / (2 * h)
        assert np.dot(got, v) == pytest.approx(np.dot(u, jv), rel=1e-6)


def test_vjp_of_a_transform_that_is_not_a_gradient_is_refused():
    with pytest.raises(srcgrad.SrcgradError, match="vjp of a transform"):
        srcgrad.vjp(srcgrad.jvp(poly))
    assert "def " in srcgrad.vjp(srcgrad.grad(poly)).source  # the pullback's code


def crossed(a, b):
    return np.sum(np.cross(a, b) ** 2)


def test_cross_tangent_against_differences(jit, rng):
    # np.cross is bilinear: its tangent is cross(da, b) + cross(a, db)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal(3)
    da, db = rng.standard_normal((4, 3)), rng.standard_normal(3)
    value, slope = srcgrad.jvp(crossed, wrt=(0, 1), jit=jit)(a, b, (da, db))
    h = 1e-6
    assert value == pytest.approx(crossed(a, b), rel=1e-12)
    assert slope == pytest.approx(
        (crossed(a + h * da, b + h * db) - crossed(a - h * da, b - h * db)) / (2 * h), rel=1e-6)


def taken(a, order):
    return np.sum(np.take(a, [[5, 5], [0, 11]]) ** 2) + \
        np.sum(np.take_along_axis(a, order, axis=1) ** 3)


def test_take_tangents_against_differences(jit, rng):
    # np.take and np.take_along_axis are linear in the array: the tangent is taken alike;
    # and the hvp (forward over their adjoints, take_grad) against differences of grad
    a, da = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    order = np.argsort(rng.standard_normal((3, 4)), axis=1)
    value, slope = srcgrad.jvp(taken, jit=jit)(a, order, da)
    h = 1e-6
    assert value == pytest.approx(taken(a, order), rel=1e-12)
    assert slope == pytest.approx((taken(a + h * da, order) - taken(a - h * da, order)) /
                                  (2 * h), rel=1e-6)
    g = srcgrad.grad(taken, jit=False)  # (the reference: its Python form)
    np.testing.assert_allclose(srcgrad.hvp(taken, jit=jit)(a, order, da),
                               (g(a + h * da, order) - g(a - h * da, order)) / (2 * h),
                               rtol=1e-5, atol=1e-6)


def fit(a, b):
    # one operation whose result is a tuple, both arguments varied
    x, residuals, rank, sv = np.linalg.lstsq(a, b, rcond=None)
    return np.sum(x ** 2) + np.sum(residuals) + np.sum(sv)


def test_tuple_tangents_add_item_by_item(jit, rng):
    # the tangent parts of (x, residuals, rank, sv) along a and along b are tuples: they
    # add entry by entry (`+` would join them into a tuple of eight)
    a, b = rng.standard_normal((4, 2)), rng.standard_normal(4)
    ta, tb = rng.standard_normal((4, 2)), rng.standard_normal(4)
    jvp = srcgrad.jvp(fit, wrt=(0, 1), jit=jit)
    assert "add_items(" in jvp.source
    h = 1e-6
    expected = (fit(a + h * ta, b + h * tb) - fit(a - h * ta, b - h * tb)) / (2 * h)
    assert jvp(a, b, (ta, tb))[1] == pytest.approx(expected, rel=1e-6)


# ---- a called tangent rule that reads the result (y) ----

@numba.njit
def scale_exp(a, b):
    return a * np.exp(b)


def _scale_exp(dy, y, a, b):
    return dy * np.exp(b), dy * y


def _scale_exp_tangent(dx, y, a, b):
    # two statements: called as a helper, with y passed
    e = np.exp(b)
    return e * dx, y * dx


@pytest.fixture
def scale_exp_rules(monkeypatch):
    """scale_exp's rules, for this test only (the rule sweep of test_rules asks every
    rule registered for a case of its own)."""
    monkeypatch.setitem(OPS, scale_exp, Op(scale_exp))
    rule(scale_exp)(_scale_exp)
    tangent(scale_exp)(_scale_exp_tangent)


def scaled(a, b):
    y = scale_exp(a, b)
    for _ in range(2):
        a = scale_exp(a, b)   # the target is an operand too
    return np.sum(y * a)


def test_a_called_tangent_rule_reads_the_new_result(jit, scale_exp_rules):
    # forward mode read y of a called tangent rule as the value before the statement
    # (`y_prev = y`, y unbound: UnboundLocalError) where two operands varied: the parts
    # of the call shared y's node, and renaming one renamed the other. By hand, with
    # e = exp(b): f = e^3 sum(a^2), so df = e^3 (2 a . da + 3 a^2 . db)
    a, bb = np.array([0.7, -1.2]), np.array([0.3, 0.1])
    da, db = np.array([1.0, 0.5]), np.array([-0.4, 0.8])
    value, slope_ = srcgrad.jvp(scaled, wrt=(0, 1), jit=jit)(a, bb, (da, db))
    e3 = np.exp(3 * bb)
    assert value == pytest.approx(np.sum(e3 * a ** 2), rel=1e-12)
    assert slope_ == pytest.approx(np.sum(e3 * (2 * a * da + 3 * a ** 2 * db)), rel=1e-12)
    assert slope_ == pytest.approx(slope(scaled, [a, bb], [da, db]), rel=1e-6)


# ---- hvp of a loop that reads np.std of the value it carries ----

def standardized(x):
    v = x
    for _ in range(3):
        v = (v - np.mean(v)) / np.std(v)
    return np.sum(v ** 3)


def test_hvp_of_a_loop_standardizing_with_std(jit, rng):
    # the gradient ends `dx = dv` after its loop accumulates `dv += ...`; the in-place
    # check took dx and dv for one array changed in place and refused the hvp ("'dv +=
    # ...' changes in place an array that another name shares"). H v against central
    # differences of the gradient, itself checked against differences of f
    x, v = rng.standard_normal(4), rng.standard_normal(4)
    g = srcgrad.grad(standardized, jit=False)
    assert_grad(standardized, [g(x)], (x,), [0])
    h = 1e-6
    want = (g(x + h * v) - g(x - h * v)) / (2 * h)
    np.testing.assert_allclose(srcgrad.hvp(standardized, jit=jit)(x, v), want,
                               rtol=1e-5, atol=1e-7)
