"""Custom adjoints: give your own function the gradient you choose, with @srcgrad.adjoint.

`@srcgrad.adjoint(fun)` on a rule `rule(dy, y, *args)` makes srcgrad use the rule for
every call to `fun` in differentiated code, instead of differentiating `fun`'s source
(TensorFlow's `tf.custom_gradient`, JAX's `jax.custom_vjp`). `dy` is the gradient of
the result `y`; the rule returns the gradient of each argument (a tuple, `None` for an
argument that gets none). Two uses:

1. a numerically stable gradient. softplus(x) = log(1 + exp(x)) overflows at x = 800:
   exp(800) is inf, and the chain rule multiplies 1 / inf by inf, which is nan. Its
   derivative is the logistic sigmoid, which never overflows when computed as
   0.5 * (1 + tanh(x / 2)). Likewise log-sum-exp: its value is stable when shifted by
   max(x), and its gradient is softmax(x) = exp(x - y), read off the result y.
2. a gradient that differs from the function's on purpose: `clip_gradient` is the
   identity going forward and clips the gradient going back.

    python examples/custom_adjoint.py
"""

import numpy as np

import srcgrad


# ---- 1. numerically stable gradients ----
def softplus_naive(x):
    return np.log(1.0 + np.exp(x))


def softplus(x):                     # the same formula, with the adjoint below
    return np.log(1.0 + np.exp(x))


@srcgrad.adjoint(softplus)
def _softplus_adjoint(dy, y, x):
    return dy * 0.5 * (1.0 + np.tanh(0.5 * x))          # sigmoid(x), no overflow


def total_naive(x):
    return np.sum(softplus_naive(x))


def total(x):
    return np.sum(softplus(x))


def logsumexp_naive(x):
    return np.log(np.sum(np.exp(x)))


def logsumexp(x):                    # stable value: shift by the largest entry
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


@srcgrad.adjoint(logsumexp)
def _logsumexp_adjoint(dy, y, x):
    return dy * np.exp(x - y)                           # softmax(x), from the result y


def cross_entropy_naive(logits, k):
    return logsumexp_naive(logits) - logits[k]


def cross_entropy(logits, k):
    """-log softmax(logits)[k]."""
    return logsumexp(logits) - logits[k]


# ---- 2. a gradient that is not the function's ----
def clip_gradient(lo, hi, x):
    """The identity, whose gradient is clipped to [lo, hi] on the way back."""
    return x


@srcgrad.adjoint(clip_gradient)
def _clip_gradient_adjoint(dy, y, lo, hi, x):
    return None, None, np.clip(dy, lo, hi)              # lo and hi get no gradient


def energy(x):
    return 0.5 * x ** 2


def energy_clipped(x):
    return 0.5 * clip_gradient(-1.0, 1.0, x) ** 2


def main():
    dxent = srcgrad.value_and_grad(cross_entropy)
    print(dxent.source)

    x = np.array([-800.0, 0.0, 800.0])
    with np.errstate(over="ignore", invalid="ignore"):   # the naive versions overflow
        value, g = srcgrad.value_and_grad(total_naive)(x)
        print(f"sum(softplus(x)) at x = {x}, naive:   value {value}, gradient {g}")
        assert value == np.inf and np.isnan(g[2])
        value, g = srcgrad.value_and_grad(total)(x)
        print(f"sum(softplus(x)) at x = {x}, adjoint: value {value}, gradient {g}")
        assert value == np.inf                            # the value still overflows,
        assert np.array_equal(g, [0.0, 0.5, 1.0])         # the gradient no longer does

        logits = np.array([800.0, 799.0, 0.0])
        value, g = srcgrad.value_and_grad(cross_entropy_naive)(logits, 0)
        print(f"cross-entropy at logits {logits}, naive:   value {value}, gradient {g}")
        assert value == np.inf and np.all(np.isnan(g[:2]))
    value, g = dxent(logits, 0)
    print(f"cross-entropy at logits {logits}, adjoint: value {value:.6f}, gradient {g}")
    e = np.exp(-1.0)      # softmax(logits) = (1, e, 0) / (1 + e): exp(-800) is 0 in float64
    assert np.isclose(value, np.log1p(e))
    assert np.allclose(g, [1.0 / (1.0 + e) - 1.0, e / (1.0 + e), 0.0])
    srcgrad.check_grad(cross_entropy, np.array([0.5, -1.0, 2.0]), 0)

    slope = srcgrad.grad(energy)(800.0)
    clipped = srcgrad.grad(energy_clipped)(800.0)
    print(f"d/dx 0.5 x**2 at x = 800: {slope}; through clip_gradient(-1, 1, x): {clipped}")
    assert slope == 800.0 and clipped == 1.0
    assert energy_clipped(800.0) == energy(800.0)       # same value, clipped gradient


if __name__ == "__main__":
    main()
