"""Train a binary-weight network (BinaryConnect) with a straight-through gradient.

The forward pass multiplies by the signs of the weights only, `np.sign(W)`, whose
gradient is zero almost everywhere: on its own, nothing would learn. The straight-through
estimator gives `np.sign` the gradient of hard tanh instead (pass `dy` where |w| <= 1,
zero elsewhere). The rule is registered once with `srcgrad.register_gradient` and
applied to `np.sign` with a `srcgrad.gradient_override` block, as TensorFlow's
`RegisterGradient` + `gradient_override_map` would. Adam (in NumPy) updates the real
"latent" weights, which are clipped to [-1, 1] after every step, as in BinaryConnect
(Courbariaux et al., 2015): the clip keeps them where the straight-through gradient
flows, and their signs are the network.

    python examples/binary_net.py
"""

import time

import numpy as np

import srcgrad


@srcgrad.register_gradient("HardTanhST")
def hard_tanh_st(dy, y, x):
    """Straight-through sign: the gradient of hard tanh, np.clip(x, -1, 1)."""
    return np.where(np.abs(x) <= 1.0, dy, 0.0)


def loss(W1, b1, W2, b2, X, Y):
    """Mean softmax cross-entropy of a 2-layer network with binary weights."""
    with srcgrad.gradient_override({np.sign: "HardTanhST"}):
        B1 = np.sign(W1)
        B2 = np.sign(W2)
    h = np.tanh((X @ B1) / np.sqrt(X.shape[1]) + b1)
    logits = (h @ B2) / np.sqrt(h.shape[1]) + b2
    m = np.max(logits, axis=1, keepdims=True)
    lse = m + np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
    return np.mean(np.sum(Y * (lse - logits), axis=1))


def plain_loss(W1, b1, W2, b2, X, Y):
    """The same network with no override: np.sign passes no gradient."""
    h = np.tanh((X @ np.sign(W1)) / np.sqrt(X.shape[1]) + b1)
    return np.sum(h)


def predict(W1, b1, W2, b2, X):
    h = np.tanh((X @ np.sign(W1)) / np.sqrt(X.shape[1]) + b1)
    return np.argmax((h @ np.sign(W2)) / np.sqrt(h.shape[1]) + b2, axis=1)


def make_data(rng, n, dim=8, classes=3, clusters=2):
    """Gaussian blobs, `clusters` per class, so that no linear model separates them."""
    centers = rng.normal(scale=3.0, size=(classes * clusters, dim))
    which = rng.integers(0, classes * clusters, size=n)
    return centers[which] + rng.normal(size=(n, dim)), which % classes


def main():
    start = time.perf_counter()
    rng = np.random.default_rng(0)
    classes, hidden = 3, 64
    X, labels = make_data(rng, 3000, classes=classes)
    X_train, y_train, X_test, y_test = X[:2400], labels[:2400], X[2400:], labels[2400:]
    Y_train = np.eye(classes)[y_train]
    params = [rng.uniform(-1.0, 1.0, size=(X.shape[1], hidden)), np.zeros(hidden),
              rng.uniform(-1.0, 1.0, size=(hidden, classes)), np.zeros(classes)]
    binarized = (0, 2)  # W1 and W2: their latent weights stay in [-1, 1]

    # Vectorised NumPy code runs about as fast as Python as it does compiled by numba
    # (here within 10%), so jit=False: no compile wait on the first run.
    dloss = srcgrad.value_and_grad(loss, wrt=("W1", "b1", "W2", "b2"), jit=False)
    source = dloss.source.splitlines()  # the forward sign and its straight-through adjoint
    print("\n".join(source[:6] + ["    ..."] + source[-7:]) + "\n")

    # without the override, np.sign's gradient is zero and W1 could not learn
    no_st = srcgrad.grad(plain_loss, jit=False)(*params, X_train, Y_train)
    assert not np.any(no_st), "np.sign should pass no gradient by itself"

    lr, beta1, beta2, eps = 0.01, 0.9, 0.999, 1e-8  # Adam
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    step, batch = 0, 100
    for epoch in range(1, 11):
        order = rng.permutation(len(X_train))
        total = 0.0
        for i in range(0, len(order), batch):
            idx = order[i:i + batch]
            value, grads = dloss(*params, X_train[idx], Y_train[idx])
            total += value * len(idx)
            step += 1
            for k, (p, g) in enumerate(zip(params, grads, strict=True)):
                m[k] = beta1 * m[k] + (1.0 - beta1) * g
                v[k] = beta2 * v[k] + (1.0 - beta2) * g * g
                m_hat, v_hat = m[k] / (1.0 - beta1**step), v[k] / (1.0 - beta2**step)
                p -= lr * m_hat / (np.sqrt(v_hat) + eps)
                if k in binarized:
                    np.clip(p, -1.0, 1.0, out=p)
        train_acc = np.mean(predict(*params, X_train) == y_train)
        test_acc = np.mean(predict(*params, X_test) == y_test)
        print(f"epoch {epoch:2d}: loss {total / len(X_train):.4f}  train accuracy "
              f"{train_acc:.1%}  test accuracy {test_acc:.1%}  "
              f"({time.perf_counter() - start:.1f} s)")

    assert np.all(np.abs(params[0]) <= 1.0) and np.all(np.abs(params[2]) <= 1.0)
    assert test_acc > 0.90, f"test accuracy {test_acc:.1%} <= 90%"
    print(f"binary weights (+1/-1 only): {test_acc:.1%} test accuracy "
          f"in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
