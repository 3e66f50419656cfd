"""A binary-weight layer trained through sign() with the hard-tanh straight-through estimator:
mean squared error of X @ sign(W) against a target; gradient wrt W.

sign's true gradient is zero almost everywhere; the straight-through estimator passes the
incoming gradient through where |W| <= 1 (the gradient of hard-tanh, clip(W, -1, 1)) and
stops it elsewhere. In ``primal`` that is srcgrad's annotation (``gradient_override``),
which only srcgrad reads: so this workload gives the primal rows ``plain_primal``, and JAX
and autograd their own straight-through forms (``jax_primal``, ``autograd_primal``).
"""

import numpy as np
from numba import njit

import srcgrad

N, D, K = 512, 256, 64
DESCRIPTION = (f"X {N}x{D} @ sign(W {D}x{K}) (hard-tanh straight-through gradient), "
               f"mean squared error vs Y {N}x{K}; wrt W")
WRT = (0,)
# rebinding `np` in `primal` drops the annotation, so JAX or autograd would give sign its
# zero gradient: the "jax.jit(jax.grad)" row is not run, the other two use the forms below
NO_REBIND = "rebinding np in primal gives sign a zero gradient (gradient_override is srcgrad's)"


@srcgrad.register_gradient("HardTanhSTE")
def hard_tanh_ste(dy, y, x):
    return np.where(np.abs(x) <= 1.0, dy, 0.0)


def primal(W, X, Y):
    with srcgrad.gradient_override({np.sign: "HardTanhSTE"}):
        Wb = np.sign(W)
    return np.mean((X @ Wb - Y) ** 2)


def plain_primal(W, X, Y):
    Wb = np.sign(W)
    return np.mean((X @ Wb - Y) ** 2)


def jax_primal(jnp, lax):
    # the usual JAX form: the value of sign(W), the gradient of clip(W, -1, 1)
    def f(W, X, Y):
        Wc = jnp.clip(W, -1.0, 1.0)
        Wb = Wc + lax.stop_gradient(jnp.sign(W) - Wc)
        return jnp.mean((X @ Wb - Y) ** 2)

    return f


def autograd_primal(anp):
    # autograd has no stop_gradient; a primitive with its own vector-Jacobian product
    from autograd.extend import defvjp, primitive

    sign_ste = primitive(np.sign)
    defvjp(sign_ste, lambda y, x: lambda dy: anp.where(anp.abs(x) <= 1.0, dy, 0.0))

    def f(W, X, Y):
        return anp.mean((anp.dot(X, sign_ste(W)) - Y) ** 2)

    return f


def inputs(rng):
    # part of W outside [-1, 1], where the straight-through gradient is zero
    return (rng.uniform(-1.5, 1.5, (D, K)), rng.standard_normal((N, D)),
            rng.standard_normal((N, K)))


# With R = X @ sign(W) - Y: d loss / d sign(W) = X^T R * 2 / R.size, masked by |W| <= 1.


@njit
def hand_numba(W, X, Y):
    # two products by BLAS; the residual's subtraction and scale in one loop, the mask in
    # another (variants computing the sign in a loop, or scaling in the masking loop, timed
    # the same within noise)
    R = X @ np.sign(W)
    n, k = R.shape
    scale = 2.0 / R.size
    for i in range(n):
        for j in range(k):
            R[i, j] = (R[i, j] - Y[i, j]) * scale
    G = X.T @ R
    for i in range(W.shape[0]):
        for j in range(k):
            if abs(W[i, j]) > 1.0:
                G[i, j] = 0.0
    return (G,)


def hand_numpy(W, X, Y):
    R = X @ np.sign(W)
    R -= Y
    G = X.T @ R
    G *= np.where(np.abs(W) <= 1.0, 2.0 / R.size, 0.0)
    return (G,)
