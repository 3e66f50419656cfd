"""Gradient reversal, the trick behind domain-adversarial training (Ganin & Lempitsky 2015).

A feature extractor feeds two heads: a label classifier, and a domain classifier (the
adversary) that tries to tell the source domain from the target domain. Between the
features and the adversary sits an identity whose gradient is negated, so one backward
pass trains the adversary to tell the domains apart and the features to fool it:

    forward:   R = F                     backward:   dF = -dR

In srcgrad: register the rule `reverse` under a name, and map `srcgrad.identity` onto it
with a `gradient_override` block, as TensorFlow's `RegisterGradient` +
`gradient_override_map({"Identity": ...})` would.

    python examples/gradient_reversal.py
"""

import numpy as np

import srcgrad


@srcgrad.register_gradient("GradientReversal")
def reverse(dy, y, x):
    return -dy


def logistic_loss(z, labels):
    """Mean logistic loss of logits `z` for labels in {-1, +1}."""
    return np.mean(np.logaddexp(0.0, -labels * z))


def dann_loss(Wf, wy, wd, X, y, d, lam):
    """Label loss + lam * domain loss, the domain head behind a gradient reversal."""
    F = np.tanh(X @ Wf)                                   # features
    with srcgrad.gradient_override({srcgrad.identity: "GradientReversal"}):
        R = srcgrad.identity(F)
    return logistic_loss(F @ wy, y) + lam * logistic_loss(R @ wd, d)


def adversary_term(Wf, wy, wd, X, y, d, lam):
    """The adversary's term alone, with the reversal."""
    F = np.tanh(X @ Wf)
    with srcgrad.gradient_override({srcgrad.identity: "GradientReversal"}):
        R = srcgrad.identity(F)
    return lam * logistic_loss(R @ wd, d)


def adversary_term_plain(Wf, wy, wd, X, y, d, lam):
    """The adversary's term alone, without the reversal."""
    F = np.tanh(X @ Wf)
    return lam * logistic_loss(F @ wd, d)


def intended(Wf, wy, wd, X, y, d, lam):
    """What the features descend on: the label loss minus lam * the domain loss."""
    F = np.tanh(X @ Wf)
    return logistic_loss(F @ wy, y) - lam * logistic_loss(F @ wd, d)


def numerical_grad(f, args, position, h=1e-6):
    """Central differences of scalar f(*args) with respect to args[position]."""
    x = args[position]
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = h
        plus, minus = list(args), list(args)
        plus[position], minus[position] = x + step, x - step
        out[i] = (f(*plus) - f(*minus)) / (2 * h)
    return out


def main():
    rng = np.random.default_rng(0)
    n, dim, k = 40, 5, 4
    X = rng.normal(size=(n, dim))
    y = np.sign(X[:, 0] + 0.1)                            # labels, +1/-1
    d = np.where(np.arange(n) < n // 2, 1.0, -1.0)        # domains: source +1, target -1
    X[d < 0] += 0.5                                       # the target domain is shifted
    Wf, wy, wd = rng.normal(size=(dim, k)), rng.normal(size=k), rng.normal(size=k)
    args = (Wf, wy, wd, X, y, d, 0.3)

    dann = srcgrad.grad(dann_loss, wrt=("Wf", "wy", "wd"))
    print(dann.source)

    # 1. the adversary's term: its gradient flips sign for the features, not for wd
    flipped = srcgrad.grad(adversary_term, wrt=("Wf", "wd"))(*args)
    plain = srcgrad.grad(adversary_term_plain, wrt=("Wf", "wd"))(*args)
    assert np.allclose(flipped[0], -plain[0]) and np.abs(plain[0]).max() > 1e-3
    assert np.allclose(flipped[1], plain[1])
    print("adversary's term, d/dWf[0]:  plain", np.round(plain[0][0], 4))
    print("                       reversed", np.round(flipped[0][0], 4))
    print("adversary's term, d/dwd:     plain", np.round(plain[1], 4))
    print("                       reversed", np.round(flipped[1], 4), "(unchanged)")

    # 2. the whole loss: the features get the gradient of (label - lam * domain), the
    # adversary the gradient of (label + lam * domain); check against finite differences
    dWf, dwy, dwd = dann(*args)
    assert np.allclose(dWf, numerical_grad(intended, args, 0), atol=1e-7)
    assert np.allclose(dwy, numerical_grad(dann_loss, args, 1), atol=1e-7)
    assert np.allclose(dwd, numerical_grad(dann_loss, args, 2), atol=1e-7)
    srcgrad.check_grad(intended, *args, wrt=("Wf", "wy"))
    try:  # the reversed gradient is, on purpose, not the gradient of dann_loss
        srcgrad.check_grad(dann_loss, *args, wrt="Wf")
    except srcgrad.SrcgradError:
        print("check_grad(dann_loss, wrt='Wf') fails, as it should: the gradient is reversed")
    else:
        raise AssertionError("the reversal changed nothing")
    print("gradient of dann_loss for Wf = finite differences of label - lam * domain")


if __name__ == "__main__":
    main()
