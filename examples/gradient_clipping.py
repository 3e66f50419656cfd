"""Clip a recurrent network's gradient inside backpropagation through time.

`with srcgrad.grad_of(h) as dh:` is a block that runs in the backward pass, at the point
where the block stands: there `dh` is the gradient of the loss with respect to that
`h`, and assigning `dh` replaces it. Written inside the loop of a tanh RNN, it clips the
gradient flowing back through the hidden state at every time step, rather than the
finished gradient. The printed source shows the clip inside the reversed loop.

    python examples/gradient_clipping.py
"""

import numpy as np

import srcgrad


def rnn_loss(W, U, xs, target, c):
    """Squared error of a tanh RNN's last state; gradients through h clipped to [-c, c]."""
    h = np.zeros(W.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t])
        with srcgrad.grad_of(h) as dh:
            dh = np.clip(dh, -c, c)
    return 0.5 * np.sum((h - target) ** 2)


def bptt_by_hand(W, U, xs, target, c):
    """The same gradient, written out in NumPy, to check the generated one against."""
    hs = [np.zeros(W.shape[0])]
    for x in xs:
        hs.append(np.tanh(W @ hs[-1] + U @ x))
    dW, dU = np.zeros_like(W), np.zeros_like(U)
    dh = hs[-1] - target
    for t in range(len(xs) - 1, -1, -1):
        dh = np.clip(dh, -c, c)
        da = dh * (1.0 - hs[t + 1] ** 2)
        dW += np.outer(da, hs[t])
        dU += np.outer(da, xs[t])
        dh = W.T @ da
    return dW, dU


def main():
    rng = np.random.default_rng(0)
    n, m, steps = 6, 3, 50
    W = 3.0 * np.linalg.qr(rng.normal(size=(n, n)))[0]   # a large recurrent gain
    U = rng.normal(size=(n, m))
    xs = 0.1 * rng.normal(size=(steps, m))
    target = rng.uniform(-1.0, 1.0, size=n)

    dloss = srcgrad.grad(rnn_loss, wrt=("W", "U"))
    print(dloss.source)
    norms = []
    for c in (np.inf, 1.0, 0.1):
        dW, dU = dloss(W, U, xs, target, c)
        hand_dW, hand_dU = bptt_by_hand(W, U, xs, target, c)
        assert np.allclose(dW, hand_dW) and np.allclose(dU, hand_dU)
        norms.append(np.linalg.norm(dW))
        print(f"clip at {c:>4}: |dW| = {np.linalg.norm(dW):8.4f}   "
              f"|dU| = {np.linalg.norm(dU):8.4f}")
    assert norms[0] > norms[1] > norms[2]
    # c = inf clips nothing: the true gradient, checked against finite differences
    srcgrad.check_grad(rnn_loss, W, U, xs, target, np.inf, wrt=("W", "U"))
    print("clipped gradients match BPTT written by hand; unclipped, finite differences")


if __name__ == "__main__":
    main()
