"""Gradient annotations end to end: stop_gradient, identity + gradient_override with
register_gradient, @adjoint and grad_of.

The functions live in `annotated.py`. An annotated gradient is, on purpose, not the
derivative of the function's value, so it is checked against central finite differences
of a *surrogate*: a function equal to the original at the test point whose derivative is
the intended gradient (for the straight-through sign, sign(w0) + clip(w) - clip(w0)), and
against values derived by hand. Nothing is checked against srcgrad itself. Every test
runs compiled with numba (jit=True: failing to compile is an error) and as plain Python.
"""

import inspect
import os
import warnings

import annotated as A
import numpy as np
import pytest
from fd import assert_grad

import srcgrad
from srcgrad import RuleError, SrcgradError, UnsupportedSyntax
from srcgrad.checks import numerical_grad

HERE = os.path.basename(__file__)
R = np.random.default_rng(7)
NUMBA_ON = os.environ.get("SRCGRAD_DISABLE_JIT", "").strip() in ("", "0")


def line_of(fun, text):
    """The line number of the one line of `fun`'s source that starts with `text`."""
    lines, first = inspect.getsourcelines(fun)
    [offset] = [k for k, line in enumerate(lines) if line.strip().startswith(text)]
    return first + offset


def value_and_grads(fun, args, positions, jit):
    """value_and_grad wrt `positions`; the value must be the plain function's."""
    value, grads = srcgrad.value_and_grad(fun, wrt=tuple(positions), jit=jit)(*args)
    np.testing.assert_allclose(value, fun(*args), rtol=1e-12, atol=1e-14)
    return grads


def assert_intended(surrogate, fun, grads, args, positions, **tolerances):
    """`grads` against finite differences of `surrogate(*args, base=args)`, a function
    with the value of `fun` at `args` whose derivative is the intended gradient."""
    np.testing.assert_allclose(surrogate(*args, base=args), fun(*args), rtol=1e-12)
    assert_grad(lambda *a: surrogate(*a, base=args), grads, args, positions, **tolerances)


def ste_sign(u, u0):
    """sign(u0) at u = u0, with derivative 1{|u| <= 1}: the intended straight-through
    sign (u0 is the value at the test point, so it is a constant for the differences)."""
    return np.sign(u0) + np.clip(u, -1.0, 1.0) - np.clip(u0, -1.0, 1.0)


def away(size, rng=R):
    """Weights away from 0 and from |w| = 1, where sign and its rule have kinks."""
    return rng.choice([-2.1, -1.4, -0.7, -0.3, 0.3, 0.7, 1.4, 2.1], size=size)


W = np.array([0.3, -1.5, -0.2, 2.0, 0.8, -0.6])
X = np.array([1.0, 2.0, 3.0, 4.0, -1.0, 0.5])
MASK = (np.abs(W) <= 1.0).astype(float)


# ---- the issue's example ----


def binary_dense_surrogate(w, x, base):
    return np.sum((x @ ste_sign(w, base[0])) ** 2)


def test_issue_example_by_hand(jit):
    w = np.array([[0.5, -1.5], [-0.3, 0.7]])
    x = np.array([[1.0, 2.0], [0.5, -1.0]])
    # x @ sign(w) = [[-1, 1], [1.5, -1.5]]; x.T @ (2 x @ sign(w)) = [[-.5, .5], [-7, 7]],
    # masked where |w| > 1
    dw = srcgrad.grad(A.binary_dense, jit=jit)(w, x)
    np.testing.assert_allclose(dw, [[-0.5, 0.0], [-7.0, 7.0]], rtol=1e-12)


def test_issue_example_against_the_surrogate(jit, rng):
    w = np.array([[0.3, -1.5], [-0.2, 2.0], [0.8, -0.6]])
    x = rng.normal(size=(4, 3))
    args = (w, x)
    [dw] = value_and_grads(A.binary_dense, args, [0], jit)
    assert_intended(binary_dense_surrogate, A.binary_dense, [dw], args, [0])
    want = (x.T @ (2.0 * x @ np.sign(w))) * (np.abs(w) <= 1.0)
    np.testing.assert_allclose(dw, want, rtol=1e-12)
    # the gradient wrt x is the ordinary one: sign(w) is a constant for it
    [dx] = value_and_grads(A.binary_dense, args, [1], jit)
    assert_grad(A.binary_dense, [dx], args, [1])


def test_issue_example_rule_is_inlined():
    source = srcgrad.grad(A.binary_dense).source
    assert "where(np.abs(w) <= 1.0" in source, source
    assert "quantize_grad(" not in source, source  # inlined, not called


# ---- gradient_override: the straight-through sign, every way of writing it ----


def layer_surrogate(w, x, base):
    return np.sum(ste_sign(w, base[0]) * x)


@pytest.mark.parametrize("fun", [A.binary_layer, A.binary_layer_key_name,
                                 A.binary_layer_key_dotted, A.binary_layer_rule_value],
                         ids=["function-key", "name-key", "dotted-key", "rule-value"])
def test_binary_layer(fun, jit):
    [dw] = value_and_grads(fun, (W, X), [0], jit)
    np.testing.assert_array_equal(dw, X * MASK)
    assert_intended(layer_surrogate, fun, [dw], (W, X), [0])


def test_sign_outside_the_block_has_the_normal_gradient(jit):
    dw = srcgrad.grad(A.sign_inside_and_outside, jit=jit)(W, X)
    np.testing.assert_allclose(dw, X * MASK + np.sign(W), rtol=1e-12)
    np.testing.assert_array_equal(srcgrad.grad(A.plain_sign, jit=jit)(W, X), np.zeros(6))


def scaled_surrogate(w, x, base):
    return np.sum(ste_sign(2.0 * w, 2.0 * base[0]) * x)


def steps_surrogate(w, x, n, base):
    total = 0.0
    for k in range(n):
        c = k + 1.0
        total += c * np.sum(ste_sign(c * w, c * base[0]) * x)
    return total


def in_loop_surrogate(w, x, n, base):
    return sum(np.sum(ste_sign(w - 0.25 * k, base[0] - 0.25 * k) * x) for k in range(n))


def branch_surrogate(w, x, flag, base):
    if flag > 0:
        return np.sum(ste_sign(w, base[0]) * x)
    return np.sum(-2.0 * ste_sign(-w, -base[0]) * x)


def block_in_branch_surrogate(w, x, flag, base):
    return np.sum((ste_sign(w, base[0]) if flag > 0 else np.sign(w)) * x)


def mlp_surrogate(w1, w2, x, base):
    h = np.tanh(x @ ste_sign(w1, base[0]))
    out = h @ ste_sign(w2, base[1])
    return np.sum(out * out)


def soft_sign_surrogate(w, x, base):
    return np.sum((np.sign(base[0]) + np.tanh(w) - np.tanh(base[0])) * x)


def round_surrogate(x, base):
    r = np.round(base[0]) + x - base[0]
    return np.sum(r * r * x)


def lexical_surrogate(w, x, base):
    return np.sum((ste_sign(w, base[0]) + 10.0 * np.sign(w)) * x)


def nested_keys_surrogate(w, x, base):
    # identity reversed, then the straight-through sign: sign(w0) - (clip(w) - clip(w0))
    return np.sum((np.sign(base[0]) - np.clip(w, -1.0, 1.0) + np.clip(base[0], -1.0, 1.0))
                  * x)


def two_keys_surrogate(w, x, base):
    r = 2.0 * base[0] - w  # the value of w, the gradient of -w
    return np.sum(ste_sign(w, base[0]) * x) + np.sum(r * r)


def two_calls_surrogate(w, x, base):
    return np.sum(ste_sign(w, base[0]) * ste_sign(2.0 * w, 2.0 * base[0]) * x)


def break_surrogate(w, x, base):
    return sum(np.sum(ste_sign(w - 0.1 * k, base[0] - 0.1 * k) * x) for k in range(2))


def names_clash_surrogate(w, t, base):
    u, u0 = w * t * t, base[0] * base[1] * base[1]
    return np.sum((np.sign(u0) + np.tanh(u) - np.tanh(u0)) * t)


def bare_names_surrogate(w, x, base):
    return np.sum(ste_sign(w, base[0]) * x) + np.sum(x * w * w)


T6 = np.array([0.5, 1.2, -0.7, 0.9, 1.1, -0.4])

STE = [
    (A.binary_scaled, scaled_surrogate, (W, X), [0],
     2.0 * X * (np.abs(2.0 * W) <= 1.0)),
    (A.binary_steps, steps_surrogate, (W, X, 3), [0],
     X * sum((k + 1.0) ** 2 * (np.abs((k + 1.0) * W) <= 1.0) for k in range(3))),
    (A.binary_in_loop, in_loop_surrogate, (W, X, 3), [0],
     X * sum(np.abs(W - 0.25 * k) <= 1.0 for k in range(3))),
    (A.binary_branch, branch_surrogate, (W, X, 1), [0], X * MASK),
    (A.binary_branch, branch_surrogate, (W, X, 0), [0], 2.0 * X * MASK),
    (A.block_in_branch, block_in_branch_surrogate, (W, X, 1), [0], X * MASK),
    (A.block_in_branch, block_in_branch_surrogate, (W, X, 0), [0], np.zeros(6)),
    (A.binary_mlp, mlp_surrogate, (away((3, 4)), away((4, 2)), R.normal(size=(5, 3))),
     [0, 1], None),
    (A.soft_sign, soft_sign_surrogate, (W, X), [0], X * (1.0 - np.tanh(W) ** 2)),
    (A.round_through, round_surrogate, (np.array([0.3, 1.2, -2.7, 3.4]),), [0],
     np.array([0.0, 2.0 * 1.2 + 1.0, -2.0 * 3.0 * -2.7 + 9.0, 2.0 * 3.0 * 3.4 + 9.0])),
    (A.override_is_lexical, lexical_surrogate, (W, X), [0], X * MASK),
    (A.nested_different_keys, nested_keys_surrogate, (W, X), [0], -X * MASK),
    (A.two_keys, two_keys_surrogate, (W, X), [0], X * MASK - 2.0 * W),
    (A.two_calls, two_calls_surrogate, (W, X), [0],
     X * (np.sign(2.0 * W) * MASK + 2.0 * np.sign(W) * (np.abs(2.0 * W) <= 1.0))),
    (A.return_in_block, layer_surrogate, (W, X), [0], X * MASK),
    (A.override_then_break, break_surrogate, (W, X), [0],
     X * ((np.abs(W) <= 1.0) + 1.0 * (np.abs(W - 0.1) <= 1.0))),
    (A.calls_binary_helper, layer_surrogate, (W, X), [0], X * MASK),
    (A.rule_names_clash, names_clash_surrogate, (W, T6), [0, 1], None),
    (A.bare_names, bare_names_surrogate, (W, X), [0], X * MASK + 2.0 * X * W),
]


@pytest.mark.parametrize("fun,surrogate,args,positions,want", STE,
                         ids=[f"{c[0].__name__}-{k}" for k, c in enumerate(STE)])
def test_override_against_the_surrogate(fun, surrogate, args, positions, want, jit):
    grads = value_and_grads(fun, args, positions, jit)
    assert_intended(surrogate, fun, grads, args, positions)
    if want is not None:
        np.testing.assert_allclose(grads[0], want, rtol=1e-12, atol=1e-15)


def test_rule_reading_the_result_in_a_loop(jit):
    # T_TanhFromResult is tanh's true derivative, so plain differences are the reference
    args = rnn_args()
    grads = value_and_grads(A.rnn_rule_from_result, args, [0, 1, 2], jit)
    assert_grad(A.rnn_rule_from_result, grads, args, [0, 1, 2])


def test_rule_calling_a_helper_function(jit):
    [dw] = value_and_grads(A.uses_helper_rule, (W, X), [0], jit)
    np.testing.assert_array_equal(dw, X * MASK)


# ---- nesting, identity, user functions as keys ----


def test_nested_blocks_innermost_wins(jit):
    # a: outer rule (2), b: inner rule (3), c: outer again (2), d: no override (1)
    assert srcgrad.grad(A.nested_overrides, jit=jit)(0.7) == pytest.approx(
        2.0 + 10.0 * 3.0 + 100.0 * 2.0 + 1000.0 * 1.0, rel=1e-14)


def test_identity_with_a_rule_function_and_a_name_key(jit):
    x = 1.3  # 3 * identity(x * x), the rule halving: 3 * 0.5 * 2x
    assert srcgrad.grad(A.identity_halved, jit=jit)(x) == pytest.approx(3.0 * x, rel=1e-14)


def test_identity_without_override_is_the_identity(jit, rng):
    x = rng.normal(size=4)
    [dx] = value_and_grads(A.identity_plain, (x,), [0], jit)
    np.testing.assert_allclose(dx, 3.0 * x * x, rtol=1e-12)
    assert_grad(A.identity_plain, [dx], (x,), [0])


@pytest.mark.parametrize("fun", [A.override_user_function, A.override_user_function_by_name],
                         ids=["function-key", "name-key"])
def test_override_a_user_function(fun, jit):
    # the overridden cube contributes the rule's 2, the one after the block 3 x^2
    x = 1.7
    assert srcgrad.grad(fun, jit=jit)(x) == pytest.approx(2.0 + 3.0 * x * x, rel=1e-12)


# ---- gradient reversal ----


def dann_task(w, X, t):
    return np.sum((X @ w - t) ** 2)


def dann_adversary(w, a, X, d):
    return np.sum(np.log(1.0 + np.exp(-d * a * (X @ w))))


def dann_args():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(6, 3))
    return (rng.normal(size=3) * 0.5, 0.8, X, rng.normal(size=6),
            np.array([1.0, -1.0, 1.0, 1.0, -1.0, -1.0]))


@pytest.mark.parametrize("fun", [A.dann, A.dann_key_name, A.dann_rule_value],
                         ids=["function-key", "name-key", "rule-value"])
def test_gradient_reversal_domain_adversarial(fun, jit):
    args = dann_args()
    w, a, X, t, d = args
    dw, da = value_and_grads(fun, args, [0, 1], jit)

    def reversed_loss(w, a, X, t, d):  # task - adversary: what w's gradient descends
        return dann_task(w, X, t) - dann_adversary(w, a, X, d)

    assert_grad(reversed_loss, [dw], args, [0])
    assert_grad(fun, [da], args, [1])  # the adversary's own weight is not reversed
    # and it is really reversed: the gradient of task + adversary is another one
    unreversed = numerical_grad(lambda w: dann_task(w, X, t) + dann_adversary(w, a, X, d),
                                (w,), 0)
    assert not np.allclose(dw, unreversed, rtol=1e-3)


def test_gradient_reversal_scalar(jit):
    # identity(x) + reversed identity(x * x): 1 - 2x
    assert srcgrad.grad(A.reversal_scalar, jit=jit)(0.6) == pytest.approx(1.0 - 1.2, rel=1e-14)


# ---- stop_gradient ----


@pytest.mark.parametrize("x", [0.7, -1.3])
def test_stop_gradient_trick_flips_the_gradient(x, jit):
    value, dx = srcgrad.value_and_grad(A.stop_trick, jit=jit)(x)
    assert value == pytest.approx(x * x, rel=1e-14)  # the value of f
    assert dx == pytest.approx(-2.0 * x, rel=1e-14)  # the gradient of t = -f
    assert srcgrad.grad(A.no_trick, jit=jit)(x) == pytest.approx(2.0 * x, rel=1e-14)


def test_straight_through_round(jit):
    x = np.array([0.3, 1.2, -2.7, 3.4, -0.1])
    value, dx = srcgrad.value_and_grad(A.round_straight_through, jit=jit)(x)
    assert value == pytest.approx(np.sum(np.round(x) ** 2), rel=1e-14)
    np.testing.assert_allclose(dx, 2.0 * np.round(x), rtol=1e-14)


def entrywise_surrogate(x, mask, base):
    E = np.sin(x) * x
    E0 = np.sin(base[0]) * base[0]
    out = (1.0 - mask) * E0 + mask * E
    return np.sum(out * out)


def test_entrywise_stop_gradient(jit, rng):
    x = rng.normal(size=(3, 4))
    mask = (rng.uniform(size=(3, 4)) < 0.5).astype(float)
    assert 0.0 < mask.sum() < mask.size
    args = (x, mask)
    [dx] = value_and_grads(A.entrywise_stop, args, [0], jit)
    E = np.sin(x) * x
    np.testing.assert_allclose(dx, 2.0 * E * mask * (x * np.cos(x) + np.sin(x)), rtol=1e-12,
                               atol=1e-15)
    assert_intended(entrywise_surrogate, A.entrywise_stop, [dx], args, [0])


def test_stop_gradient_of_a_factor(jit):
    assert srcgrad.grad(A.times_stopped, jit=jit)(3.0) == 3.0  # d/dx of x * c, c = 3


def test_stop_gradient_of_everything_is_zero_of_the_input_shape(jit):
    dx = srcgrad.grad(A.all_stopped, jit=jit)(np.array([1.0, -2.0, 3.0]))
    assert np.shape(dx) == (3,)
    np.testing.assert_array_equal(dx, np.zeros(3))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_stop_gradient_in_a_loop(n, jit):
    x = 1.1
    value, dx = srcgrad.value_and_grad(A.stop_in_loop, jit=jit)(x, n)
    assert value == pytest.approx(x ** (2 ** n), rel=1e-13)
    assert dx == pytest.approx(x ** (2 ** n - 1), rel=1e-13)


def test_stop_gradient_of_a_target(jit, rng):
    x, y = rng.normal(size=4), rng.normal(size=4)
    dx, dy = value_and_grads(A.stop_one_argument, (x, y), [0, 1], jit)
    r = x * y - (2.0 * y + x)
    np.testing.assert_allclose(dx, 2.0 * r * y, rtol=1e-12)
    np.testing.assert_allclose(dy, 2.0 * r * x, rtol=1e-12)


# ---- @adjoint ----


def test_softplus_adjoint_is_finite_where_exp_overflows(jit):
    x = np.array([800.0, 0.5, -3.0])
    with np.errstate(over="ignore"):
        dx = srcgrad.grad(A.softplus_loss, jit=jit)(x)
    np.testing.assert_allclose(dx, 1.0 / (1.0 + np.exp(-x)), rtol=1e-12)
    assert dx[0] == 1.0


def test_softplus_adjoint_against_differences(jit):
    x = np.array([2.0, 0.5, -3.0])
    [dx] = value_and_grads(A.softplus_loss, (x,), [0], jit)
    assert_grad(A.softplus_loss, [dx], (x,), [0])


def softmax(x):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)


@pytest.mark.parametrize("x", [np.array([800.0, 799.0, -3.0]), np.array([0.2, -1.0, 0.7])],
                         ids=["large", "small"])
def test_logsumexp_adjoint(x, jit):
    t = np.array([0.0, 1.0, 0.0])
    [dx] = value_and_grads(A.cross_entropy, (x, t), [0], jit)
    assert np.all(np.isfinite(dx))
    np.testing.assert_allclose(dx, softmax(x) - t, rtol=1e-12, atol=1e-15)
    assert_grad(A.cross_entropy, [dx], (x, t), [0])


@pytest.mark.parametrize("c,want", [(0.1, 0.3), (2.0, 1.0), (-5.0, -1.0)])
def test_clipping_inside_a_custom_adjoint(c, want, jit):
    dx = srcgrad.grad(A.amplify_loss, jit=jit)(0.4, c)
    assert dx == pytest.approx(want, rel=1e-14)


def test_clipping_inside_a_custom_adjoint_elementwise(jit):
    c = np.array([0.1, 2.0, -5.0, -0.2])
    dx = srcgrad.grad(A.amplify_loss, jit=jit)(np.ones(4), c)
    np.testing.assert_allclose(dx, [0.3, 1.0, -1.0, -0.6], rtol=1e-14)


@pytest.mark.parametrize("n,want", [(1, 0.3), (2, 0.9), (3, 1.0), (4, 1.0)])
def test_custom_adjoint_in_a_loop(n, want, jit):
    # the adjoint 0.1 goes through n clipped steps: 0.3, 0.9, clip(2.7) = 1, clip(3) = 1
    assert srcgrad.grad(A.amplify_loop, jit=jit)(0.5, n) == pytest.approx(want, rel=1e-14)


def test_two_argument_adjoint_returns_a_tuple(jit):
    da, db = value_and_grads(A.hypot_loss, (3.0, 4.0), [0, 1], jit)
    assert (da, db) == (pytest.approx(2.0 * 0.6 + 1.0, rel=1e-14),
                        pytest.approx(2.0 * 0.8, rel=1e-14))
    assert_grad(A.hypot_loss, [da, db], (3.0, 4.0), [0, 1])


def test_two_argument_adjoint_on_arrays(jit, rng):
    a, b = rng.normal(size=5), rng.normal(size=5)
    grads = value_and_grads(lambda a, b: np.sum(A.hypot(a, b)), (a, b), [0, 1], jit)
    assert_grad(lambda a, b: np.sum(A.hypot(a, b)), grads, (a, b), [0, 1])


def test_adjoint_none_means_no_gradient(jit, rng):
    x, k = rng.normal(size=4), 1.7
    dx, dk = value_and_grads(A.scale_by_loss, (x, k), [0, 1], jit)
    np.testing.assert_allclose(dx, 2.0 * x * k * k, rtol=1e-12)
    assert dk == 0.0


def test_adjoint_replaces_a_body_without_rules(jit):
    x = np.array([0.5, -2.0, 1.5])  # x * x is largest at index 1
    [dx] = value_and_grads(A.top_loss, (x,), [0], jit)
    np.testing.assert_allclose(dx, [0.0, -4.0, 0.0], rtol=1e-14)


def test_custom_adjoint_of_a_call_in_a_called_function(jit):
    # 0.5 (amplify(x) + x): amplify's adjoint clip(3 * 0.5) = 1, plus 0.5 (not 2.0)
    assert srcgrad.grad(A.amplify_nested, jit=jit)(0.3) == pytest.approx(1.5, rel=1e-14)


def test_custom_adjoint_with_a_keyword_argument(jit):
    # hypot_adjoint is hypot's true derivative: plain differences are the reference
    grads = value_and_grads(A.hypot_keyword, (3.0, 2.0), [0, 1], jit)
    assert_grad(A.hypot_keyword, grads, (3.0, 2.0), [0, 1])


def test_custom_adjoint_gets_the_default_of_an_omitted_argument(jit):
    assert srcgrad.grad(A.uses_scaled_default, jit=jit)(1.0) == pytest.approx(5.0, rel=1e-14)


def test_single_expression_adjoint_is_inlined():
    source = srcgrad.grad(A.amplify_loss).source
    assert "np.clip(3.0 *" in source, source
    assert "amplify_clipped(" not in source, source


# ---- grad_of ----


@pytest.mark.parametrize("x", [0.9, -1.4])
def test_grad_of_scales_a_gradient(x, jit):
    assert srcgrad.grad(A.grad_of_scale, jit=jit)(x) == pytest.approx(
        x * np.cos(x * x), rel=1e-12)


def test_grad_of_sees_only_the_adjoint_after_the_block(jit):
    x = 0.8
    assert srcgrad.grad(A.grad_of_sees_what_follows, jit=jit)(x) == pytest.approx(
        2.0 * x * (3.0 + 0.5 * np.cos(x * x)), rel=1e-12)


def test_grad_of_clips_elementwise(jit):
    x = np.array([0.1, -0.2, 0.5, -3.0])
    dx = srcgrad.grad(A.grad_of_clip, jit=jit)(x)
    np.testing.assert_allclose(dx, 2.0 * np.clip(4.0 * x, -1.0, 1.0), rtol=1e-14)


def test_grad_of_an_argument(jit, rng):
    x = rng.normal(size=3)
    np.testing.assert_allclose(srcgrad.grad(A.grad_of_input, jit=jit)(x), 2.0 * np.cos(x),
                               rtol=1e-12)


@pytest.mark.parametrize("flag,factor", [(1, 10.0), (0, 1.0)])
def test_grad_of_in_a_branch(flag, factor, jit):
    x = 0.7
    assert srcgrad.grad(A.grad_of_in_branch, jit=jit)(x, flag) == pytest.approx(
        factor * 6.0 * x, rel=1e-14)


@pytest.mark.parametrize("scale", [1.0, 0.01], ids=["clipped", "unclipped"])
def test_grad_of_clip_by_norm(scale, jit):
    x = np.array([0.3, -0.4, 0.1]) * scale
    dh = 6.0 * x  # the adjoint of h = 3x in sum(h * h)
    norm = np.sqrt(np.sum(dh * dh))
    assert (norm > 1.0) == (scale == 1.0)
    want = 3.0 * (dh / norm if norm > 1.0 else dh)
    np.testing.assert_allclose(srcgrad.grad(A.grad_of_norm_clip, jit=jit)(x), want,
                               rtol=1e-12)


def test_grad_of_prints_the_gradient(jit, capfd):
    x = 2.0
    assert srcgrad.grad(A.grad_of_print, jit=jit)(x) == pytest.approx(36.0, rel=1e-14)
    out = capfd.readouterr().out
    assert "dh =" in out, out
    printed = float(out.split("dh =")[-1].split()[0])
    assert printed == pytest.approx(12.0, rel=1e-12)  # 2 h, h = 3 x


@pytest.mark.parametrize("n", [1, 3])
def test_grad_of_in_a_loop_scales_every_step(n, jit):
    # y_k = x y_{k-1}: the adjoint of y_k, halved at each of the n steps, reaches x as
    # x^(n-1) (1/2 + 1/4 + ... + 1/2^n)
    x = 1.3
    assert srcgrad.grad(A.grad_of_scaled_loop, jit=jit)(x, n) == pytest.approx(
        x ** (n - 1) * (1.0 - 0.5 ** n), rel=1e-12)


def reads_loop_state_by_hand(x, n):
    ys = [x]
    for _ in range(n):
        ys.append(ys[-1] * x)
    dy, dx = 1.0, 0.0
    for k in reversed(range(n)):
        dy = dy * ys[k + 1] / (1.0 + k)  # the hook, with y and c of iteration k
        dx += dy * ys[k]
        dy = dy * x
    return dx + dy


@pytest.mark.parametrize("n", [1, 2, 4])
def test_grad_of_reads_the_state_of_its_iteration(n, jit):
    x = 1.3
    dx = srcgrad.grad(A.grad_of_reads_loop_state, jit=jit)(x, n)
    assert dx == pytest.approx(reads_loop_state_by_hand(x, n), rel=1e-12)


def test_grad_of_in_a_while_loop(jit):
    # y = x^4 after three steps; the adjoints of y_3, y_2, y_1 are halved: x^3 (1/2 + 1/4 +
    # 1/8) from the steps and x^3 / 8 from y_0 = x
    x = 1.3
    assert srcgrad.grad(A.grad_of_in_while, jit=jit)(x) == pytest.approx(x ** 3, rel=1e-12)


def test_grad_of_then_the_variable_is_bound_again(jit):
    x = 0.8
    assert srcgrad.grad(A.grad_of_then_rebind, jit=jit)(x) == pytest.approx(
        0.5 * np.cos(x * x) * 2.0 * x + 3.0, rel=1e-12)


def test_grad_of_in_a_called_function(jit):
    assert srcgrad.grad(A.calls_hook_helper, jit=jit)(0.7) == pytest.approx(2.1, rel=1e-14)


def test_grad_of_imported_by_name(jit):
    assert srcgrad.grad(A.grad_of_bare_name, jit=jit)(0.7) == pytest.approx(24.0 * 0.7,
                                                                             rel=1e-14)


def rnn_args():
    rng = np.random.default_rng(3)
    return rng.normal(size=(3, 3)), rng.normal(size=(5, 3)), rng.normal(size=3) * 0.5


def rnn_clipped_by_hand(W, xs, h0, bound):
    """The backward pass of `rnn_clipped`, written out: the adjoint of each new state is
    clipped before it goes through the tanh."""
    hs = [h0]
    for t in range(xs.shape[0]):
        hs.append(np.tanh(W @ hs[-1] + xs[t]))
    dh = 2.0 * hs[-1]
    dW, dxs = np.zeros_like(W), np.zeros_like(xs)
    for t in reversed(range(xs.shape[0])):
        dh = np.clip(dh, -bound, bound)
        da = dh * (1.0 - hs[t + 1] ** 2)
        dW += np.outer(da, hs[t])
        dxs[t] = da
        dh = W.T @ da
    return dW, dxs, dh


def test_grad_of_clips_every_step_of_an_rnn(jit):
    W, xs, h0 = rnn_args()
    bound = 0.2
    grads = value_and_grads(A.rnn_clipped, (W, xs, h0, bound), [0, 1, 2], jit)
    want = rnn_clipped_by_hand(W, xs, h0, bound)
    for got, expected in zip(grads, want, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)
    # the clipping is active: without it the gradient is another one
    unclipped = rnn_clipped_by_hand(W, xs, h0, 1e9)
    assert not np.allclose(want[0], unclipped[0])


def test_grad_of_with_a_loose_bound_is_the_plain_gradient(jit):
    W, xs, h0 = rnn_args()
    grads = value_and_grads(A.rnn_clipped, (W, xs, h0, 1e9), [0, 1, 2], jit)
    assert_grad(A.rnn_plain, grads, (W, xs, h0), [0, 1, 2])


# ---- the annotated functions are plain Python ----

PLAIN = [  # the functions whose value no other test compares
    (A.nested_overrides, (0.7,)),
    (A.identity_halved, (1.3,)),
    (A.override_user_function, (1.7,)),
    (A.amplify_loop, (0.5, 3)),
    (A.amplify_nested, (0.3,)),
    (A.grad_of_sees_what_follows, (0.8,)),
    (A.grad_of_norm_clip, (np.array([0.3, -0.4, 0.1]),)),
    (A.grad_of_in_branch, (0.7, 1)),
    (A.grad_of_scaled_loop, (1.3, 3)),
    (A.grad_of_reads_loop_state, (1.3, 3)),
    (A.grad_of_then_rebind, (0.8,)),
    (A.calls_hook_helper, (0.7,)),
]


@pytest.mark.parametrize("fun,args", PLAIN, ids=[c[0].__name__ for c in PLAIN])
def test_plain_python_value(fun, args, jit):
    """Undecorated, the function runs and gives the value value_and_grad gives."""
    value, _ = srcgrad.value_and_grad(fun, jit=jit)(*args)
    np.testing.assert_allclose(value, fun(*args), rtol=1e-12, atol=1e-14)


def test_plain_python_grad_of_block_sees_a_zero_gradient(capsys):
    assert A.grad_of_print(2.0) == 36.0
    out = capsys.readouterr().out
    assert float(out.split("dh =")[-1].split()[0]) == 0.0


def test_vjp_with_an_override(jit):
    def binary_map(w, x):
        with srcgrad.gradient_override({np.sign: "T_QuantizeGrad"}):
            s = np.sign(w)
        return s * x

    value, pullback = srcgrad.vjp(binary_map, jit=jit)(W, X)
    np.testing.assert_array_equal(value, np.sign(W) * X)
    cot = np.arange(1.0, 7.0)
    np.testing.assert_allclose(pullback(cot), cot * X * MASK, rtol=1e-14)


# ---- registration ----


def uses_twice_a(x):
    with srcgrad.gradient_override({srcgrad.identity: "T_err_twice_a"}):
        y = srcgrad.identity(x)
    return y


def uses_twice_a_again(x):
    with srcgrad.gradient_override({srcgrad.identity: "T_err_twice_a"}):
        y = srcgrad.identity(x)
    return y


def test_registering_a_name_twice():
    @srcgrad.register_gradient("T_err_twice_a", replace=True)
    def first(dy, y, x):
        return 2.0 * dy

    with pytest.raises(RuleError) as info:
        @srcgrad.register_gradient("T_err_twice_a")
        def second(dy, y, x):
            return 3.0 * dy
    message = str(info.value)
    assert "T_err_twice_a" in message and "replace=True" in message, message
    line = line_of(test_registering_a_name_twice, "def second(dy, y, x):")
    assert f"{HERE}:{line}" in message or f"{HERE}:{line - 1}" in message, message
    assert srcgrad.grad(uses_twice_a, jit=False)(1.0) == 2.0  # the first rule stays

    @srcgrad.register_gradient("T_err_twice_a", replace=True)
    def third(dy, y, x):
        return 5.0 * dy
    assert srcgrad.grad(uses_twice_a_again, jit=False)(1.0) == 5.0


def uses_replaced(x):
    with srcgrad.gradient_override({srcgrad.identity: "T_err_replaced"}):
        y = srcgrad.identity(x)
    return y


def test_a_new_gradient_uses_the_replaced_rule(jit):
    @srcgrad.register_gradient("T_err_replaced", replace=True)
    def seven(dy, y, x):
        return 7.0 * dy
    assert srcgrad.grad(uses_replaced, jit=jit)(1.0) == 7.0

    @srcgrad.register_gradient("T_err_replaced", replace=True)
    def eleven(dy, y, x):
        return 11.0 * dy
    assert srcgrad.grad(uses_replaced, jit=jit)(1.0) == 11.0


# ---- bad input: a clear SrcgradError naming file:line ----


def assert_names(info, lines, *fragments):
    """The error is a RuleError or UnsupportedSyntax naming this file at one of `lines`."""
    assert isinstance(info.value, (RuleError, UnsupportedSyntax)), type(info.value)
    message = str(info.value)
    assert any(f"{HERE}:{line}:" in message for line in lines), (lines, message)
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def test_register_gradient_rule_with_too_few_parameters():
    with pytest.raises(SrcgradError) as info:
        @srcgrad.register_gradient("T_err_short", replace=True)
        def short(dy, y):
            return dy
    line = line_of(test_register_gradient_rule_with_too_few_parameters, "def short(dy, y)")
    assert_names(info, [line, line - 1])


def two(a, b):
    return a * b


def test_adjoint_rule_with_too_few_parameters():
    with pytest.raises(SrcgradError) as info:
        @srcgrad.adjoint(two)
        def short(dy, y):
            return dy
    line = line_of(test_adjoint_rule_with_too_few_parameters, "def short(dy, y)")
    assert_names(info, [line, line - 1])


def three(a, b, c):
    return a * b * c


def calls_three(x):
    return three(x, 2.0, 3.0)


def test_adjoint_rule_for_the_wrong_number_of_arguments():
    with pytest.raises(SrcgradError) as info:
        @srcgrad.adjoint(three)
        def wrong(dy, y, a, b):
            return dy * b, dy * a
        srcgrad.grad(calls_three, jit=False)(1.0)
    fun = test_adjoint_rule_for_the_wrong_number_of_arguments
    line = line_of(fun, "def wrong(dy, y, a, b)")
    assert_names(info, [line, line - 1, line_of(calls_three, "return three(")])


def short_rule(dy, y):
    return dy


def override_with_short_rule(x):
    with srcgrad.gradient_override({srcgrad.identity: short_rule}):
        y = srcgrad.identity(x)
    return y


def test_rule_function_with_too_few_parameters_as_a_value(jit):
    with pytest.raises(SrcgradError) as info:
        srcgrad.grad(override_with_short_rule, jit=jit)(1.0)
    assert_names(info, [line_of(override_with_short_rule, "with srcgrad"),
                        line_of(short_rule, "def short_rule")])


def unknown_name(x):
    with srcgrad.gradient_override({srcgrad.identity: "T_err_never_registered"}):
        y = srcgrad.identity(x)
    return y


def test_unknown_registered_name(jit):
    with pytest.raises(SrcgradError) as info:
        srcgrad.grad(unknown_name, jit=jit)(1.0)
    assert_names(info, [line_of(unknown_name, "with srcgrad")], "T_err_never_registered")


def key_matches_nothing(w):
    with srcgrad.gradient_override({np.tanh: "T_QuantizeGrad"}):
        s = np.sign(w)
    return np.sum(s * w)


def test_key_that_matches_no_call(jit):
    with pytest.raises(SrcgradError) as info:
        srcgrad.grad(key_matches_nothing, jit=jit)(W)
    assert_names(info, [line_of(key_matches_nothing, "with srcgrad")])


def uses_count(x):
    with srcgrad.gradient_override({srcgrad.identity: "T_err_count"}):
        y = srcgrad.identity(x)
    return y * y


def test_rule_returning_two_gradients_for_one_argument(jit):
    with pytest.raises(SrcgradError) as info:
        @srcgrad.register_gradient("T_err_count", replace=True)
        def two_for_one(dy, y, x):
            return dy, dy
        srcgrad.grad(uses_count, jit=jit)(1.5)
    fun = test_rule_returning_two_gradients_for_one_argument
    assert_names(info, [line_of(fun, "def two_for_one"), line_of(fun, "def two_for_one") - 1,
                        line_of(fun, "return dy, dy"), line_of(uses_count, "y = srcgrad.")])


def mul(a, b):
    return a * b


def uses_mul(a, b):
    return mul(a, b) * 2.0


def test_adjoint_returning_one_gradient_for_two_arguments(jit):
    with pytest.raises(SrcgradError) as info:
        @srcgrad.adjoint(mul)
        def one_for_two(dy, y, a, b):
            return dy * b
        srcgrad.grad(uses_mul, wrt=(0, 1), jit=jit)(1.5, 2.0)
    fun = test_adjoint_returning_one_gradient_for_two_arguments
    assert_names(info, [line_of(fun, "def one_for_two"), line_of(fun, "def one_for_two") - 1,
                        line_of(fun, "return dy * b"), line_of(uses_mul, "return mul(")])


def uses_sum_shape(x):
    with srcgrad.gradient_override({srcgrad.identity: "T_err_sum_shape"}):
        y = srcgrad.identity(x)
    return np.sum(y * y)


def test_rule_returning_a_wrong_shape(jit):
    @srcgrad.register_gradient("T_err_sum_shape", replace=True)
    def summed(dy, y, x):
        return np.sum(dy)

    g = srcgrad.grad(uses_sum_shape, jit=jit)
    with pytest.raises(SrcgradError) as info:
        g(np.array([1.0, 2.0, 3.0]))
    assert_names(info, [line_of(uses_sum_shape, "y = srcgrad.identity(x)")])


def squash(x):
    return np.tanh(x)


def uses_squash(x):
    return np.sum(squash(x) ** 2)


def test_adjoint_returning_a_wrong_shape(jit):
    @srcgrad.adjoint(squash)
    def summed(dy, y, x):
        return np.sum(dy * (1.0 - y * y))

    g = srcgrad.grad(uses_squash, jit=jit)
    with pytest.raises(SrcgradError) as info:
        g(np.array([0.1, 0.2, 0.3]))
    assert_names(info, [line_of(uses_squash, "return np.sum(squash(x)")])


def opens_a_file(x):
    with open(os.devnull) as f:
        f.read()
    return x * x


def test_with_that_is_not_an_annotation(jit):
    with pytest.raises(SrcgradError) as info:
        srcgrad.grad(opens_a_file, jit=jit)(1.0)
    assert_names(info, [line_of(opens_a_file, "with open")])


def grad_of_without_as(x):
    h = x * x
    with srcgrad.grad_of(h):
        pass
    return h


def grad_of_an_expression(x):
    h = x * x
    with srcgrad.grad_of(h * 2.0) as dh:
        dh = dh * 0.5
    return h


def grad_of_assigns_a_variable(x):
    h = x * x
    with srcgrad.grad_of(h) as dh:
        h = dh * 0.5
    return h


def grad_of_returns(x):
    h = x * x
    with srcgrad.grad_of(h) as dh:
        return dh
    return h


@pytest.mark.parametrize("fun,text", [
    (grad_of_without_as, "with srcgrad.grad_of(h):"),
    (grad_of_an_expression, "with srcgrad.grad_of(h * 2.0) as dh:"),
    (grad_of_assigns_a_variable, "h = dh * 0.5"),
    (grad_of_returns, "return dh"),
], ids=["no-as", "expression", "assigns", "return"])
def test_grad_of_misuse(fun, text, jit):
    with pytest.raises(SrcgradError) as info:
        srcgrad.grad(fun, jit=jit)(1.0)
    lines = [line_of(fun, text)]
    if fun in (grad_of_assigns_a_variable, grad_of_returns):
        lines.append(line_of(fun, "with srcgrad"))  # the block, or the line inside it
    assert_names(info, lines)


def grad_of_changes_the_shape(x):
    h = 2.0 * x
    with srcgrad.grad_of(h) as dh:
        dh = np.sum(dh)
    return np.sum(h * h)


def test_grad_of_that_changes_the_shape(jit):
    x = np.array([0.1, 0.2, 0.3])
    try:
        dx = srcgrad.grad(grad_of_changes_the_shape, jit=jit)(x)
    except SrcgradError as exc:
        assert f"{HERE}:" in str(exc), str(exc)
        return
    assert np.shape(dx) == (3,), dx


def grad_of_before_the_variable(x):
    with srcgrad.grad_of(h) as dh:  # noqa: F821  (h is assigned after the block)
        dh = 2.0 * dh
    h = x * x
    return h


def test_grad_of_before_the_variable_is_assigned(jit):
    with pytest.raises(UnboundLocalError):
        grad_of_before_the_variable(0.5)
    with pytest.raises(SrcgradError) as info:
        srcgrad.grad(grad_of_before_the_variable, jit=jit)(0.5)
    assert_names(info, [line_of(grad_of_before_the_variable, "with srcgrad")])


# ---- jit="auto" compiles annotated code without falling back ----


def test_auto_compiles_annotations_without_falling_back():
    calls = [(A.binary_dense, (W.reshape(3, 2), np.ones((2, 3)))),
             (A.dann, dann_args()), (A.entrywise_stop, (np.ones(3), np.array([1.0, 0, 1]))),
             (A.cross_entropy, (np.ones(3), np.array([0.0, 1.0, 0.0]))),
             (A.hypot_loss, (3.0, 4.0)), (A.rnn_clipped, rnn_args() + (0.2,)),
             (A.grad_of_norm_clip, (np.ones(3),))]
    with warnings.catch_warnings():
        warnings.simplefilter("error", srcgrad.JitFallbackWarning)
        for fun, args in calls:
            srcgrad.grad(fun)(*args)  # jit="auto"


# ---- gradient_override matches method calls of the function it names ----


@srcgrad.register_gradient("T_sum_twice")
def _sum_twice(dy, y, x, axis=None):
    return 2.0 * srcgrad.runtime.sum_grad(dy, x, axis)


def method_sum_by_function(w):
    with srcgrad.gradient_override({np.sum: "T_sum_twice"}):
        s = (w * w).sum(axis=0)   # np.sum's key matches the method
        m = w.mean()              # not np.sum: its own gradient
    return np.sum(s) + m


def method_sum_by_name(w):
    with srcgrad.gradient_override({"sum": "T_sum_twice"}):
        s = w.sum()
    return s * s


def test_override_keys_match_method_calls(jit, rng):
    w = rng.standard_normal((3, 2))
    # d/dw of 2 * sum((w * w).sum(axis=0)) + mean(w): 4 w + 1 / w.size
    g = srcgrad.grad(method_sum_by_function, jit=jit)(w)
    np.testing.assert_allclose(g, 4.0 * w + 1.0 / w.size, rtol=1e-12)
    assert_grad(lambda w: 2.0 * np.sum(w * w) + np.mean(w), [g], (w,), [0])
    assert method_sum_by_function(w) == pytest.approx(np.sum(w * w) + np.mean(w))
    # s = sum(w): ds/dw doubled, so d(s^2)/dw = 2 s * 2
    g = srcgrad.grad(method_sum_by_name, jit=jit)(w)
    np.testing.assert_allclose(g, np.full_like(w, 4.0 * np.sum(w)), rtol=1e-12)
    # the forward code calls the methods as written
    source = srcgrad.grad(method_sum_by_function).source
    assert ".sum(axis=0)" in source and "w.mean()" in source, source


# ---- a lambda as the rule; grad_of on a variable no gradient flows through ----
HALF = 0.5
NEGATE = lambda dy, y, x: -dy  # noqa: E731 (a rule alone on its line: inlined too)


def override_with_a_lambda(w, c):
    with srcgrad.gradient_override(
            {np.sign: lambda dy, y, x: np.where(np.abs(x) <= 1.0, dy * HALF, 0.0)}):
        wb = np.sign(w)
    return np.sum(wb * c)


def ste_surrogate(w, c, base):
    # equal to override_with_a_lambda at `base`; its derivative is the intended gradient
    w0 = base[0]
    return np.sum((np.sign(w0) + HALF * (np.clip(w, -1, 1) - np.clip(w0, -1, 1))) * c)


def test_a_lambda_as_the_rule(jit, rng):
    w, c = rng.uniform(-1.5, 1.5, (3, 4)), rng.standard_normal((3, 4))
    got = srcgrad.grad(override_with_a_lambda, jit=jit)(w, c)
    np.testing.assert_allclose(got, np.where(np.abs(w) <= 1.0, HALF * c, 0.0), rtol=1e-14)
    assert_grad(lambda w_, c_: ste_surrogate(w_, c_, (w, c)), [got], (w, c), [0])
    source = srcgrad.grad(override_with_a_lambda).source
    assert "where(np.abs(w) <= 1.0, dwb * HALF, 0.0)" in source, source  # inlined


def reversed_by_a_global_lambda(x):
    with srcgrad.gradient_override({srcgrad.identity: NEGATE}):
        y = srcgrad.identity(x)
    return 3.0 * y


def test_a_global_lambda_as_the_rule(jit):
    assert srcgrad.grad(reversed_by_a_global_lambda, jit=jit)(0.4) == -3.0
    assert "checked_grad(-dy," in srcgrad.grad(reversed_by_a_global_lambda).source


def lambda_reading_a_local(x):
    s = 2.0
    with srcgrad.gradient_override({np.sin: lambda dy, y, x: dy * s}):
        y = np.sin(x)
    return y


def lambda_returning_two(x):
    with srcgrad.gradient_override({np.sin: lambda dy, y, x: (dy, dy)}):
        y = np.sin(x)
    return y


@pytest.mark.parametrize("fun,fragment", [(lambda_reading_a_local, "variables (s)"),
                                          (lambda_returning_two, "returns 2 gradient(s)")])
def test_a_bad_lambda_rule(fun, fragment, jit):
    with pytest.raises(SrcgradError) as info:
        srcgrad.grad(fun, jit=jit)(1.0)
    assert_names(info, [line_of(fun, "with srcgrad")], fragment)


def grad_of_inactive(x, c):
    h = x * 2.0
    with srcgrad.grad_of(c) as dc:
        print("dc =", dc)
    k = c * 3.0
    with srcgrad.grad_of(k) as dk:
        dk = np.clip(dk, -1.0, 1.0)
    return h * c


def test_grad_of_a_variable_without_gradient_sees_zero(jit, capfd):
    # wrt x only: no gradient flows through c or k; their blocks still run, with zero
    assert srcgrad.grad(grad_of_inactive, jit=jit)(1.0, 4.0) == 8.0
    out = capfd.readouterr().out
    assert float(out.split("dc =")[-1].split()[0]) == 0.0, out
    code = [line.strip() for line in srcgrad.grad(grad_of_inactive).source.splitlines()]
    assert "k = c * 3.0" not in code  # the clip of a zero nobody reads is dead code
