"""ADBench's LSTM objective (Microsoft ADBench, "D-LSTM"): a stack of LSTM layers whose
weight matrices are diagonal, run over a character sequence (each character its bits),
predicting each next character; gradient wrt the main and the extra parameters. ADBench's
smallest size: 2 layers, 1024 characters of 14 bits.

ADBench's layout: main_params has two rows per layer, its weights then its biases, each
the four gates' b entries (forget, input, output, change); extra_params is the input
weight, output weight and output bias; state has two rows per layer, hidden then cell.
One layer, input x, state (h, c), all products elementwise:

    f = sigmoid(x w_f + b_f), i = sigmoid(h w_i + b_i), o = sigmoid(x w_o + b_o),
    g = tanh(h w_c + b_c), c' = c f + i g, h' = o tanh(c').

A step feeds seq[t] * in_weight to the first layer, each layer's new hidden state to the
next, and predicts y = h_top * out_weight + out_bias; the loss is
-sum_t <seq[t + 1], y - log(sum(exp(y)) + 2)> / ((T - 1) b), the "+ 2" as in ADBench.

By hand (backpropagation through time, hidden and cell states kept per step): with
dy = -(gold - sum(gold) exp(y) / (sum(exp(y)) + 2)) / ((T - 1) b) and, per layer from the
top, dc_total = dc + dh o (1 - tanh(c')^2): the pre-activation adjoints
dz_f = dc_total c f (1 - f), dz_i = dc_total g i (1 - i), dz_o = dh tanh(c') o (1 - o),
dz_c = dc_total i (1 - g^2); dw = dz * (x or h), db = dz; the layer below gets
dz_f w_f + dz_o w_o, the previous step dh = dz_i w_i + dz_c w_c and dc = dc_total f.
"""

import math

import numpy as np
from numba import njit

LAYERS, CHARS, BITS = 2, 1024, 14
DESCRIPTION = (f"ADBench LSTM (diagonal), {LAYERS} layers, {CHARS} characters of {BITS} bits; "
               f"wrt main and extra params")
WRT = (0, 1)


def primal(main_params, extra_params, state, sequence):
    b = sequence.shape[1]
    layers = state.shape[0] // 2
    hidden = state[0::2].copy()  # each layer's hidden state, then its cell state
    cell = state[1::2].copy()
    total = 0.0
    for t in range(sequence.shape[0] - 1):
        x = sequence[t] * extra_params[0]
        for i in range(layers):
            w = main_params[2 * i]
            bias = main_params[2 * i + 1]
            h = hidden[i]
            forget = 1.0 / (1.0 + np.exp(-(x * w[:b] + bias[:b])))
            ingate = 1.0 / (1.0 + np.exp(-(h * w[b:2 * b] + bias[b:2 * b])))
            outgate = 1.0 / (1.0 + np.exp(-(x * w[2 * b:3 * b] + bias[2 * b:3 * b])))
            change = np.tanh(h * w[3 * b:] + bias[3 * b:])
            c = cell[i] * forget + ingate * change
            x = outgate * np.tanh(c)
            hidden[i] = x
            cell[i] = c
        ypred = x * extra_params[1] + extra_params[2]
        ynorm = ypred - np.log(np.sum(np.exp(ypred)) + 2.0)
        total = total + np.sum(sequence[t + 1] * ynorm)
    return -total / ((sequence.shape[0] - 1) * b)


def jax_primal(jnp, lax):
    def f(main_params, extra_params, state, sequence):
        b = sequence.shape[1]
        layers = state.shape[0] // 2

        def step(carry, pair):
            hidden, cell = carry
            x = pair[0] * extra_params[0]
            new_hidden, new_cell = [], []
            for i in range(layers):
                gates = jnp.concatenate((x, hidden[i], x, hidden[i])) * main_params[2 * i] \
                    + main_params[2 * i + 1]
                forget = 1.0 / (1.0 + jnp.exp(-gates[:b]))
                ingate = 1.0 / (1.0 + jnp.exp(-gates[b:2 * b]))
                outgate = 1.0 / (1.0 + jnp.exp(-gates[2 * b:3 * b]))
                c = cell[i] * forget + ingate * jnp.tanh(gates[3 * b:])
                x = outgate * jnp.tanh(c)
                new_hidden.append(x)
                new_cell.append(c)
            ypred = x * extra_params[1] + extra_params[2]
            ynorm = ypred - jnp.log(jnp.sum(jnp.exp(ypred)) + 2.0)
            return (jnp.stack(new_hidden), jnp.stack(new_cell)), jnp.sum(pair[1] * ynorm)

        pairs = jnp.stack((sequence[:-1], sequence[1:]), axis=1)
        _, terms = lax.scan(step, (state[0::2], state[1::2]), pairs)
        return -jnp.sum(terms) / ((sequence.shape[0] - 1) * b)

    return f


def autograd_primal(anp):
    """The primal for autograd, which cannot differentiate writes into arrays: each layer's
    state in a list, as ADBench's autograd version keeps it."""
    def f(main_params, extra_params, state, sequence):
        b = sequence.shape[1]
        layers = state.shape[0] // 2
        hidden = [state[2 * i] for i in range(layers)]
        cell = [state[2 * i + 1] for i in range(layers)]
        total = 0.0
        for t in range(sequence.shape[0] - 1):
            x = sequence[t] * extra_params[0]
            for i in range(layers):
                w = main_params[2 * i]
                bias = main_params[2 * i + 1]
                forget = 1.0 / (1.0 + anp.exp(-(x * w[:b] + bias[:b])))
                ingate = 1.0 / (1.0 + anp.exp(-(hidden[i] * w[b:2 * b] + bias[b:2 * b])))
                outgate = 1.0 / (1.0 + anp.exp(-(x * w[2 * b:3 * b] + bias[2 * b:3 * b])))
                change = anp.tanh(hidden[i] * w[3 * b:] + bias[3 * b:])
                cell[i] = cell[i] * forget + ingate * change
                hidden[i] = x = outgate * anp.tanh(cell[i])
            ypred = x * extra_params[1] + extra_params[2]
            ynorm = ypred - anp.log(anp.sum(anp.exp(ypred)) + 2.0)
            total = total + anp.sum(sequence[t + 1] * ynorm)
        return -total / ((sequence.shape[0] - 1) * b)

    return f


def inputs(rng):
    """Parameters and state uniform in [0, 1) as ADBench's generator draws them; the
    sequence a random text of printable characters, each as its BITS bits."""
    codes = rng.integers(32, 127, CHARS)
    sequence = ((codes[:, None] >> np.arange(BITS)) & 1).astype(np.float64)
    return (rng.uniform(0.0, 1.0, (2 * LAYERS, 4 * BITS)), rng.uniform(0.0, 1.0, (3, BITS)),
            rng.uniform(0.0, 1.0, (2 * LAYERS, BITS)), sequence)


@njit(cache=True)
def _sigmoid(z):
    return 1.0 / (1.0 + math.exp(-z))


@njit(cache=True)
def hand_numba(main_params, extra_params, state, sequence):
    steps, b = sequence.shape[0] - 1, sequence.shape[1]
    layers = state.shape[0] // 2
    hs = np.empty((steps + 1, layers, b))  # the states after each step, the given one first
    cs = np.empty((steps + 1, layers, b))
    for i in range(layers):
        hs[0, i] = state[2 * i]
        cs[0, i] = state[2 * i + 1]
    for t in range(steps):
        for i in range(layers):
            w, bias = main_params[2 * i], main_params[2 * i + 1]
            for j in range(b):
                x = sequence[t, j] * extra_params[0, j] if i == 0 else hs[t + 1, i - 1, j]
                h = hs[t, i, j]
                c = (cs[t, i, j] * _sigmoid(x * w[j] + bias[j])
                     + _sigmoid(h * w[b + j] + bias[b + j])
                     * math.tanh(h * w[3 * b + j] + bias[3 * b + j]))
                cs[t + 1, i, j] = c
                hs[t + 1, i, j] = _sigmoid(x * w[2 * b + j] + bias[2 * b + j]) * math.tanh(c)
    g_main = np.zeros_like(main_params)
    g_extra = np.zeros_like(extra_params)
    scale = 1.0 / (steps * b)
    dh = np.zeros((layers, b))  # the adjoints of the states carried back to step t
    dc = np.zeros((layers, b))
    dx = np.empty(b)
    for t in range(steps - 1, -1, -1):
        top = hs[t + 1, layers - 1]
        norm, gold = 2.0, 0.0
        for j in range(b):
            norm += math.exp(top[j] * extra_params[1, j] + extra_params[2, j])
            gold += sequence[t + 1, j]
        for j in range(b):
            y = top[j] * extra_params[1, j] + extra_params[2, j]
            dy = -scale * (sequence[t + 1, j] - gold * math.exp(y) / norm)
            g_extra[1, j] += dy * top[j]
            g_extra[2, j] += dy
            dx[j] = dy * extra_params[1, j]
        for i in range(layers - 1, -1, -1):
            w, bias = main_params[2 * i], main_params[2 * i + 1]
            gw, gb = g_main[2 * i], g_main[2 * i + 1]
            for j in range(b):
                x = sequence[t, j] * extra_params[0, j] if i == 0 else hs[t + 1, i - 1, j]
                h, c = hs[t, i, j], cs[t, i, j]
                f = _sigmoid(x * w[j] + bias[j])
                ig = _sigmoid(h * w[b + j] + bias[b + j])
                o = _sigmoid(x * w[2 * b + j] + bias[2 * b + j])
                g = math.tanh(h * w[3 * b + j] + bias[3 * b + j])
                tc = math.tanh(cs[t + 1, i, j])
                dhj = dh[i, j] + dx[j]
                dct = dc[i, j] + dhj * o * (1.0 - tc * tc)
                zf = dct * c * f * (1.0 - f)
                zi = dct * g * ig * (1.0 - ig)
                zo = dhj * tc * o * (1.0 - o)
                zc = dct * ig * (1.0 - g * g)
                gw[j] += zf * x
                gw[b + j] += zi * h
                gw[2 * b + j] += zo * x
                gw[3 * b + j] += zc * h
                gb[j] += zf
                gb[b + j] += zi
                gb[2 * b + j] += zo
                gb[3 * b + j] += zc
                dh[i, j] = zi * w[b + j] + zc * w[3 * b + j]
                dc[i, j] = dct * f
                dx[j] = zf * w[j] + zo * w[2 * b + j]  # to the layer below (its new state)
        for j in range(b):
            g_extra[0, j] += dx[j] * sequence[t, j]
    return g_main, g_extra


def hand_numpy(main_params, extra_params, state, sequence):
    # The recurrences are the only loops; every factor that does not depend on the adjoints
    # is computed for all steps at once before the backward loop, the weight gradients after it.
    steps, b = sequence.shape[0] - 1, sequence.shape[1]
    layers = state.shape[0] // 2
    w = main_params[0::2].reshape(layers, 4, b)
    bias = main_params[1::2].reshape(layers, 4, b)
    hs = np.empty((steps + 1, layers, b))
    cs = np.empty((steps + 1, layers, b))
    hs[0], cs[0] = state[0::2], state[1::2]
    xs = np.empty((steps, layers, b))  # each layer's input at each step
    gates = np.empty((steps, layers, 4, b))  # f, i, o after the sigmoid; g after the tanh
    xs[:, 0] = sequence[:-1] * extra_params[0]
    for t in range(steps):
        for i in range(layers):
            if i:
                xs[t, i] = hs[t + 1, i - 1]
            z = gates[t, i]
            z[0::2] = xs[t, i] * w[i, 0::2] + bias[i, 0::2]  # f and o read the input
            z[1::2] = hs[t, i] * w[i, 1::2] + bias[i, 1::2]  # i and g the hidden state
            z[:3] = 1.0 / (1.0 + np.exp(-z[:3]))
            np.tanh(z[3], out=z[3])
            cs[t + 1, i] = cs[t, i] * z[0] + z[1] * z[3]
            hs[t + 1, i] = z[2] * np.tanh(cs[t + 1, i])
    f, ig, o, g = (gates[:, :, k] for k in range(4))
    tc = np.tanh(cs[1:])
    to_cell = o * (1.0 - tc * tc)  # dc_total = dc + dh * to_cell
    factors = np.stack((cs[:-1] * f * (1.0 - f), g * ig * (1.0 - ig), tc * o * (1.0 - o),
                        ig * (1.0 - g * g)), axis=2)  # dz_f, dz_i, dz_c by dc_total, dz_o by dh
    ys = hs[1:, -1] * extra_params[1] + extra_params[2]
    e = np.exp(ys)
    gold = sequence[1:]
    dys = -(gold - gold.sum(axis=1, keepdims=True) * e / (e.sum(axis=1, keepdims=True) + 2.0))
    dys /= steps * b
    dxs = dys * extra_params[1]  # the top layer's hidden-state adjoints from the outputs
    dz = np.empty((steps, layers, 4, b))
    dh = np.zeros((layers, b))
    dc = np.zeros((layers, b))
    for t in range(steps - 1, -1, -1):
        dx = dxs[t]
        for i in range(layers - 1, -1, -1):
            dhi = dh[i] + dx
            dct = dc[i] + dhi * to_cell[t, i]
            z = dz[t, i]
            np.multiply(dct, factors[t, i], out=z)
            z[2] = dhi * factors[t, i, 2]
            dh[i] = z[1] * w[i, 1] + z[3] * w[i, 3]
            dc[i] = dct * f[t, i]
            dx = z[0] * w[i, 0] + z[2] * w[i, 2]
        dxs[t] = dx  # now the adjoint of the first layer's input
    g_w = np.empty((layers, 4, b))
    g_w[:, 0::2] = np.einsum("tikj,tij->ikj", dz[:, :, 0::2], xs)
    g_w[:, 1::2] = np.einsum("tikj,tij->ikj", dz[:, :, 1::2], hs[:-1])
    g_main = np.empty_like(main_params)
    g_main[0::2] = g_w.reshape(layers, 4 * b)
    g_main[1::2] = dz.sum(axis=0).reshape(layers, 4 * b)
    g_extra = np.stack((np.einsum("tj,tj->j", dxs, sequence[:-1]),
                        np.einsum("tj,tj->j", dys, hs[1:, -1]), dys.sum(axis=0)))
    return g_main, g_extra
