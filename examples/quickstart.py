"""Differentiate a function with srcgrad and print the gradient code it generated.

    python examples/quickstart.py
"""

import numpy as np

import srcgrad


@srcgrad.grad(wrt=("x", "y"))
def f(x, y):
    return x**2 + x*y + 3.0


def loss(W, b, X, Y):
    """A softmax classifier's mean cross-entropy, with a stable logsumexp."""
    logits = X @ W + b
    m = np.max(logits, axis=1, keepdims=True)
    lse = m + np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
    return np.mean(np.sum(Y * (lse - logits), axis=1))


if __name__ == "__main__":
    print("grad of x**2 + x*y + 3 at (5, 3):", f(5.0, 3.0))   # (13.0, 5.0)
    print(f.source)

    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(32, 4)), np.eye(3)[rng.integers(0, 3, size=32)]
    W, b = np.zeros((4, 3)), np.zeros(3)
    dloss = srcgrad.value_and_grad(loss, wrt=("W", "b"))
    for step in range(5):
        value, (dW, db) = dloss(W, b, X, Y)
        W, b = W - 0.5 * dW, b - 0.5 * db
        print(f"step {step}: loss {value:.4f}")
    print(dloss.source)
