"""A catalogue of plain Python/NumPy functions that customise their gradients with srcgrad's
annotations: `stop_gradient`, `identity` + `gradient_override`, `register_gradient`,
`@adjoint` and `grad_of`.

They are ordinary code: run undecorated, `stop_gradient` and `identity` return their
argument, `gradient_override` does nothing and a `grad_of` block runs once on a zero
gradient, so every function computes the same value with or without srcgrad.

The rules registered here are global, so their names start with "T_" (no other module uses
that prefix) and they pass `replace=True`: the module may be imported twice (pytest's
collection, a rerun under xdist) without a "registered already" error. Test points, chosen
in `test_annotations.py`, stay away from the kinks of the rules (|w| = 1 for the
straight-through sign) and from the jumps of the primals (0 for sign, .5 for round).
"""

import numpy as np

import srcgrad
from srcgrad import grad_of, gradient_override, identity, stop_gradient

# ---- named rules ----


@srcgrad.register_gradient("T_QuantizeGrad", replace=True)
def quantize_grad(dy, y, x):
    """Hard-tanh gradient for sign: the straight-through estimator of binary networks."""
    return np.where(np.abs(x) <= 1.0, dy, 0.0)


@srcgrad.register_gradient("T_Reverse", replace=True)
def reverse(dy, y, x):
    """Gradient reversal (domain-adversarial training)."""
    return -dy


@srcgrad.register_gradient("T_Double", replace=True)
def double_grad(dy, y, x):
    return 2.0 * dy


@srcgrad.register_gradient("T_Triple", replace=True)
def triple_grad(dy, y, x):
    return 3.0 * dy


@srcgrad.register_gradient("T_Through", replace=True)
def through_grad(dy, y, x):
    """The plain straight-through estimator: the gradient of the identity."""
    return dy


@srcgrad.register_gradient("T_SoftSign", replace=True)
def soft_sign_grad(dy, y, x):
    """A rule of several statements: the derivative of tanh, a smooth stand-in for sign."""
    t = np.tanh(x)
    slope = 1.0 - t * t
    return dy * slope


@srcgrad.register_gradient("T_TanhFromResult", replace=True)
def tanh_from_result(dy, y, x):
    """The true derivative of tanh, written with the result y (taped per call)."""
    return dy * (1.0 - y * y)


def within(x, limit):
    """A helper of a rule (not a NumPy function)."""
    return np.abs(x) <= limit


@srcgrad.register_gradient("T_HelperRule", replace=True)
def helper_rule(dy, y, x):
    """A rule that calls a helper function of its module."""
    return np.where(within(x, 1.0), dy, 0.0)


def halve(dy, y, x):
    """A rule given to gradient_override as a function, never registered."""
    return 0.5 * dy


# ---- gradient_override: the straight-through sign ----


def binary_dense(w, x):
    """The issue's example: forward sign, backward QuantizeGrad."""
    with srcgrad.gradient_override({np.sign: "T_QuantizeGrad"}):
        wb = np.sign(w)
    return np.sum((x @ wb) ** 2)


def binary_layer(w, x):
    """DESIGN's example."""
    with srcgrad.gradient_override({np.sign: "T_QuantizeGrad"}):
        wb = np.sign(w)
    return np.sum(wb * x)


def binary_layer_key_name(w, x):
    with srcgrad.gradient_override({"sign": "T_QuantizeGrad"}):
        wb = np.sign(w)
    return np.sum(wb * x)


def binary_layer_key_dotted(w, x):
    with srcgrad.gradient_override({"np.sign": "T_QuantizeGrad"}):
        wb = np.sign(w)
    return np.sum(wb * x)


def binary_layer_rule_value(w, x):
    """The value is the rule function itself, not a registered name."""
    with srcgrad.gradient_override({np.sign: quantize_grad}):
        wb = np.sign(w)
    return np.sum(wb * x)


def binary_scaled(w, x):
    """The rule sees the call's argument (2 w), and the chain rule goes on to w."""
    with srcgrad.gradient_override({np.sign: "T_QuantizeGrad"}):
        wb = np.sign(2.0 * w)
    return np.sum(wb * x)


def sign_inside_and_outside(w, x):
    """Only the sign inside the block is overridden; the one after it has gradient 0, but
    `w * b` still has gradient b through its first factor."""
    with srcgrad.gradient_override({np.sign: "T_QuantizeGrad"}):
        a = np.sign(w)
    b = np.sign(w)
    return np.sum(a * x) + np.sum(b * x * x) + np.sum(w * b)


def plain_sign(w, x):
    """No annotation: sign is piecewise constant, its gradient is zero."""
    return np.sum(np.sign(w) * x)


def binary_steps(w, x, n):
    """A loop inside the block: every call of the loop body is overridden."""
    total = 0.0
    with srcgrad.gradient_override({np.sign: "T_QuantizeGrad"}):
        for k in range(n):
            c = k + 1.0
            total = total + c * np.sum(np.sign(c * w) * x)
    return total


def binary_in_loop(w, x, n):
    """The block inside a loop body."""
    total = 0.0
    for k in range(n):
        with srcgrad.gradient_override({np.sign: "T_QuantizeGrad"}):
            s = np.sign(w - 0.25 * k)
        total = total + np.sum(s * x)
    return total


def binary_branch(w, x, flag):
    """Branches inside the block: both calls are overridden."""
    with srcgrad.gradient_override({np.sign: "T_QuantizeGrad"}):
        if flag > 0:
            s = np.sign(w)
        else:
            s = -2.0 * np.sign(-w)
    return np.sum(s * x)


def block_in_branch(w, x, flag):
    """The block inside one branch only."""
    if flag > 0:
        with srcgrad.gradient_override({np.sign: "T_QuantizeGrad"}):
            s = np.sign(w)
    else:
        s = np.sign(w)
    return np.sum(s * x)


def binary_mlp(w1, w2, x):
    """Two binarised layers in one block, a nonlinearity between them."""
    with srcgrad.gradient_override({np.sign: "T_QuantizeGrad"}):
        h = np.tanh(x @ np.sign(w1))
        out = h @ np.sign(w2)
    return np.sum(out * out)


def soft_sign(w, x):
    """A rule of several statements."""
    with srcgrad.gradient_override({np.sign: "T_SoftSign"}):
        s = np.sign(w)
    return np.sum(s * x)


def round_through(x):
    """Straight-through rounding by override, keyed by the function's name."""
    with srcgrad.gradient_override({"round": "T_Through"}):
        r = np.round(x)
    return np.sum(r * r * x)


def sign_helper(w):
    return np.sign(w)


def override_is_lexical(w, x):
    """The override applies to calls written in the block, not to calls inside a
    function called from it."""
    with srcgrad.gradient_override({np.sign: "T_QuantizeGrad"}):
        s = np.sign(w) + 10.0 * sign_helper(w)
    return np.sum(s * x)


def two_calls(w, x):
    """Two overridden calls in one expression."""
    with srcgrad.gradient_override({np.sign: "T_QuantizeGrad"}):
        s = np.sign(w) * np.sign(2.0 * w)
    return np.sum(s * x)


def return_in_block(w, x):
    with srcgrad.gradient_override({np.sign: "T_QuantizeGrad"}):
        return np.sum(np.sign(w) * x)


def override_then_break(w, x):
    """A break inside the block: the calls of the iterations that ran are overridden."""
    total = 0.0
    for k in range(5):
        with srcgrad.gradient_override({np.sign: "T_QuantizeGrad"}):
            s = np.sign(w - 0.1 * k)
            if k >= 2:
                break
        total = total + np.sum(s * x)
    return total


def binary_helper(w):
    with srcgrad.gradient_override({np.sign: "T_QuantizeGrad"}):
        s = np.sign(w)
    return s


def calls_binary_helper(w, x):
    """The block is in a user function called by the differentiated one."""
    return np.sum(binary_helper(w) * x)


def rule_names_clash(w, t):
    """The multi-statement rule T_SoftSign has temporaries `t` and `slope`, names this
    function also uses, and reads after the rule in the backward pass."""
    slope = t * t
    with srcgrad.gradient_override({np.sign: "T_SoftSign"}):
        s = np.sign(w * slope)
    return np.sum(s * t)


def rnn_rule_from_result(W, xs, h0):
    """A rule reading the call's result y, in a loop: y must be each step's."""
    h = h0
    with srcgrad.gradient_override({np.tanh: "T_TanhFromResult"}):
        for t in range(xs.shape[0]):
            h = np.tanh(W @ h + xs[t])
    return np.sum(h * h)


def uses_helper_rule(w, x):
    with srcgrad.gradient_override({np.sign: "T_HelperRule"}):
        s = np.sign(w)
    return np.sum(s * x)


def bare_names(w, x):
    """The annotations imported by name: `from srcgrad import gradient_override, ...`."""
    with gradient_override({np.sign: "T_QuantizeGrad"}):
        s = np.sign(w)
    h = stop_gradient(x) * w
    return np.sum(s * x) + np.sum(h * identity(w))


# ---- gradient_override: several keys, nesting, identity, user functions ----


def nested_overrides(x):
    """Innermost wins; the outer block applies again after the inner one; none after."""
    with srcgrad.gradient_override({srcgrad.identity: "T_Double"}):
        a = srcgrad.identity(x)
        with srcgrad.gradient_override({srcgrad.identity: "T_Triple"}):
            b = srcgrad.identity(x)
        c = srcgrad.identity(x)
    d = srcgrad.identity(x)
    return a + 10.0 * b + 100.0 * c + 1000.0 * d


def nested_different_keys(w, x):
    """The inner block maps another function: the outer mapping still applies in it."""
    with srcgrad.gradient_override({np.sign: "T_QuantizeGrad"}):
        with srcgrad.gradient_override({srcgrad.identity: "T_Reverse"}):
            s = np.sign(srcgrad.identity(w))
    return np.sum(s * x)


def two_keys(w, x):
    with srcgrad.gradient_override({np.sign: "T_QuantizeGrad", srcgrad.identity: "T_Reverse"}):
        s = np.sign(w)
        r = srcgrad.identity(w)
    return np.sum(s * x) + np.sum(r * r)


def identity_halved(x):
    """A rule function as the value, the key by name."""
    with srcgrad.gradient_override({"identity": halve}):
        y = srcgrad.identity(x * x)
    return 3.0 * y


def identity_plain(x):
    """identity without an override has the gradient of the identity."""
    return np.sum(srcgrad.identity(x) ** 3)


def cube(x):
    return x * x * x


def override_user_function(x):
    with srcgrad.gradient_override({cube: "T_Double"}):
        y = cube(x)
    return y + cube(x)


def override_user_function_by_name(x):
    with srcgrad.gradient_override({"cube": "T_Double"}):
        y = cube(x)
    return y + cube(x)


# ---- gradient reversal: a domain-adversarial toy ----


def dann(w, a, X, t, d):
    """feature = X w; the task fits t, the adversary (weight a) tells the domains d = +-1
    apart from the feature, through a gradient-reversal layer."""
    feature = X @ w
    task = np.sum((feature - t) ** 2)
    with srcgrad.gradient_override({srcgrad.identity: "T_Reverse"}):
        shared = srcgrad.identity(feature)
    adversary = np.sum(np.log(1.0 + np.exp(-d * a * shared)))
    return task + adversary


def dann_key_name(w, a, X, t, d):
    feature = X @ w
    task = np.sum((feature - t) ** 2)
    with srcgrad.gradient_override({"identity": "T_Reverse"}):
        shared = srcgrad.identity(feature)
    adversary = np.sum(np.log(1.0 + np.exp(-d * a * shared)))
    return task + adversary


def dann_rule_value(w, a, X, t, d):
    feature = X @ w
    task = np.sum((feature - t) ** 2)
    with srcgrad.gradient_override({srcgrad.identity: reverse}):
        shared = srcgrad.identity(feature)
    adversary = np.sum(np.log(1.0 + np.exp(-d * a * shared)))
    return task + adversary


def reversal_scalar(x):
    y = srcgrad.identity(x)
    with srcgrad.gradient_override({srcgrad.identity: "T_Reverse"}):
        z = srcgrad.identity(x * x)
    return y + z


# ---- stop_gradient ----


def stop_trick(x):
    """`t + stop_gradient(f - t)`: the value of f, the gradient of t = -f."""
    f = x ** 2
    t = -f
    return t + srcgrad.stop_gradient(f - t)


def no_trick(x):
    f = x ** 2
    return f


def round_straight_through(x):
    """Value round(x), gradient 1."""
    r = x + srcgrad.stop_gradient(np.round(x) - x)
    return np.sum(r * r)


def entrywise_stop(x, mask):
    """Stop the gradient of the entries where mask is 0 (mask is 0/1)."""
    E = np.sin(x) * x
    mask_h = 1.0 - mask
    out = srcgrad.stop_gradient(mask_h * E) + mask * E
    return np.sum(out * out)


def times_stopped(x):
    return x * srcgrad.stop_gradient(x)


def all_stopped(x):
    return np.sum(srcgrad.stop_gradient(x) ** 2)


def stop_in_loop(x, n):
    """y <- y * stop(y): the value is x ** (2 ** n), the gradient x ** (2 ** n - 1)."""
    y = x
    for _ in range(n):
        y = y * srcgrad.stop_gradient(y)
    return y


def stop_one_argument(x, y):
    """A target-network style loss: the target's inputs get no gradient."""
    target = srcgrad.stop_gradient(2.0 * y + x)
    return np.sum((x * y - target) ** 2)


# ---- @adjoint: custom adjoints of user functions ----


def softplus(x):
    """Naive: exp overflows for large x (the value becomes inf)."""
    return np.log(1.0 + np.exp(x))


@srcgrad.adjoint(softplus)
def softplus_adjoint(dy, y, x):
    """sigmoid(x) written with the result y: 1 - exp(-y), finite for every x."""
    return dy * (1.0 - np.exp(-y))


def softplus_loss(x):
    return np.sum(softplus(x))


def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


@srcgrad.adjoint(logsumexp)
def logsumexp_adjoint(dy, y, x):
    """The softmax, exp(x - lse), finite even for x = 800."""
    return dy * np.exp(x - y)


def cross_entropy(x, t):
    """Softmax cross-entropy of the logits x against the one-hot t."""
    return logsumexp(x) - np.sum(x * t)


def amplify(x):
    return 3.0 * x


@srcgrad.adjoint(amplify)
def amplify_clipped(dy, y, x):
    """Gradient clipping inside a custom adjoint."""
    return np.clip(3.0 * dy, -1.0, 1.0)


def amplify_loss(x, c):
    return np.sum(c * amplify(x))


def amplify_loop(x, n):
    """The custom adjoint of every call in a loop: each step's gradient is clipped."""
    y = x
    for _ in range(n):
        y = amplify(y)
    return 0.1 * y


def hypot(a, b):
    return np.sqrt(a * a + b * b)


@srcgrad.adjoint(hypot)
def hypot_adjoint(dy, y, a, b):
    """Two arguments, a tuple of two gradients; several statements."""
    s = dy / y
    return s * a, s * b


def hypot_loss(a, b):
    return 2.0 * hypot(a, b) + a


def scale_by(x, k):
    return x * k


@srcgrad.adjoint(scale_by)
def scale_by_adjoint(dy, y, x, k):
    """None: no gradient for the second argument."""
    return dy * k, None


def scale_by_loss(x, k):
    return np.sum(scale_by(x, k) ** 2)


def top_by_sort(x):
    """np.sort has no gradient rule: with a custom adjoint srcgrad never reads this body."""
    return np.sort(x)[-1]


@srcgrad.adjoint(top_by_sort)
def top_by_sort_adjoint(dy, y, x):
    return np.where(x == y, dy, 0.0)


def top_loss(x):
    return top_by_sort(x * x)


def amplify_inside(x):
    return amplify(x) + x


def amplify_nested(x):
    """The custom adjoint of a call inside a user function called by this one."""
    return 0.5 * amplify_inside(x)


def hypot_keyword(a, b):
    """A keyword argument, and a variable named like the rule's temporary `s`."""
    s = 2.0 * b
    return hypot(a, b=s) * s


def scaled_default(x, k=2.0):
    return x * k


@srcgrad.adjoint(scaled_default)
def scaled_default_adjoint(dy, y, x, k):
    return dy * k, None


def uses_scaled_default(x):
    """The call leaves k to its default."""
    return scaled_default(x) + scaled_default(x, 3.0)


# ---- grad_of: hooks in the backward pass ----


def grad_of_scale(x):
    h = x * x
    with srcgrad.grad_of(h) as dh:
        dh = 0.5 * dh
    return np.sin(h)


def grad_of_sees_what_follows(x):
    """The hook sees (and halves) only the adjoint from the statements after it."""
    h = x * x
    a = 3.0 * h
    with srcgrad.grad_of(h) as dh:
        dh = 0.5 * dh
    return a + np.sin(h)


def grad_of_clip(x):
    h = 2.0 * x
    with srcgrad.grad_of(h) as dh:
        dh = np.clip(dh, -1.0, 1.0)
    return np.sum(h * h)


def grad_of_input(x):
    """A hook on an argument, before any use: it scales the whole gradient."""
    with srcgrad.grad_of(x) as dx:
        dx = 2.0 * dx
    return np.sum(np.sin(x))


def grad_of_print(x):
    h = 3.0 * x
    with srcgrad.grad_of(h) as dh:
        print("dh =", dh)
    return h * h


def grad_of_in_branch(x, flag):
    h = x * x
    if flag > 0:
        with srcgrad.grad_of(h) as dh:
            dh = 10.0 * dh
    return 3.0 * h


def grad_of_norm_clip(x):
    """Clip by norm: a temporary and a branch inside the hook."""
    h = 3.0 * x
    with srcgrad.grad_of(h) as dh:
        norm = np.sqrt(np.sum(dh * dh))
        if norm > 1.0:
            dh = dh / norm
    return np.sum(h * h)


def rnn_clipped(W, xs, h0, bound):
    """A tanh RNN whose hidden-state adjoint is clipped at every step."""
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
        with srcgrad.grad_of(h) as dh:
            dh = np.clip(dh, -bound, bound)
    return np.sum(h * h)


def rnn_plain(W, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
    return np.sum(h * h)


def grad_of_scaled_loop(x, n):
    """y <- x * y, the adjoint of y halved at every step."""
    y = 1.0
    for _ in range(n):
        y = x * y
        with srcgrad.grad_of(y) as dy:
            dy = 0.5 * dy
    return y


def grad_of_reads_loop_state(x, n):
    """The hook reads variables of its iteration: c, and y itself."""
    y = x
    for k in range(n):
        c = 1.0 + k
        y = y * x
        with srcgrad.grad_of(y) as dy:
            dy = dy * y / c
    return y


def grad_of_in_while(x):
    y = x
    k = 0
    while k < 3:
        y = y * x
        with srcgrad.grad_of(y) as dy:
            dy = 0.5 * dy
        k = k + 1
    return y


def grad_of_then_rebind(x):
    """h is bound again after the hook: the later h is another variable's value."""
    h = x * x
    with srcgrad.grad_of(h) as dh:
        dh = 0.5 * dh
    y = np.sin(h)
    h = 3.0 * x
    return y + h


def hook_helper(x):
    h = x * x
    with srcgrad.grad_of(h) as dh:
        dh = 0.5 * dh
    return h


def calls_hook_helper(x):
    """The hook is in a user function called by the differentiated one."""
    return 3.0 * hook_helper(x)


def grad_of_bare_name(x):
    """grad_of imported by name."""
    h = 2.0 * x
    with grad_of(h) as dh:
        dh = 3.0 * dh
    return h * h
