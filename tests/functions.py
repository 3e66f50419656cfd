"""A corpus of plain functions, one per language feature or workload.

They are ordinary NumPy code: run undecorated they compute values, which is what the
finite-difference checks differentiate.
"""

import math
from math import sin

import helpers  # another module: calls into it are differentiated too
import numpy as np

SCALE = 0.5


def poly(x, y):
    return x**2 + x*y + 3.0


def sum_squared(x):
    return np.sum(x) ** 2


def mlp_loss(W1, b1, W2, b2, X, Y):
    h = np.tanh(X @ W1 + b1)
    out = h @ W2 + b2
    return np.mean((out - Y) ** 2)


def softmax_xent(W, X, Y):
    logits = X @ W
    m = np.max(logits, axis=1, keepdims=True)
    lse = m + np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
    return np.mean(np.sum(Y * (lse - logits), axis=1))


def reassign(x, y):
    x = x * y
    x = np.sin(x) + x
    y = x * y
    return y


def augmented(x):
    z = x * 1.0  # a new array: `z *= 3.0` on `z = x` would scale the caller's x in place
    z *= 3.0
    z += x ** 2
    z -= 1.0
    z /= 2.0
    return np.sum(z)


def tuples(x, y):
    a, b = x * 2.0, y + 1.0
    a, b = b, a
    (c, d), e = (a * b, a - b), 3.0
    return c + d * e


def chained(x):
    flag = 0.0 < x < 10.0
    return x * 2.0 + flag


def method_calls(x, w):
    h = x.dot(w)
    return h.sum() + (x * x).mean(axis=0).sum() + x.T.max() + x.reshape(-1).prod()


def attributes(x):
    n = x.shape[0]
    m = len(x)
    return np.sum(x) / n + x.size * np.sum(x ** 2) / m


def math_module(x):
    return math.exp(sin(x)) + math.sqrt(x * x + 1.0)


def builtins_(x, y):
    return abs(x - y) + max(x, y) * min(x, 2.0) + float(x)


def integer_mix(x, n):
    k = n // 2
    r = n % 3
    return x * k + x ** 2 * r + (x // 1.0)


def globals_and_closures(x):
    return helpers.cube(x) * SCALE + helpers.THREE


def user_calls(x, y):
    a = helpers.scaled_norm2(x, y)
    b = local_helper(x)
    return a + b


def local_helper(v):
    return np.sum(np.tanh(v))


def subscripts(x):
    a = x[0]
    b = x[1:, 0]
    c = x[:, -1]
    d = x[1, 2]
    return a.sum() * d + np.sum(b * c[1:])


def nondifferentiable_paths(x):
    s = np.sign(x)
    i = np.argmax(x)
    f = np.floor(x)
    return np.sum(x * s) + i + np.sum(f)


def unused_argument(x, y):
    return np.sum(x * 2.0)


def constant_result(x):
    return 3.0


def keyword_arguments(x):
    return np.sum(np.mean(x, axis=1) ** 2) + np.sum(np.clip(x, a_min=-0.5, a_max=0.5))
