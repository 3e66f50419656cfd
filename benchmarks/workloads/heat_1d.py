"""Explicit 1-D heat equation, slice-update stencil, fixed ends; gradient wrt the initial
state and the diffusion number."""

import numpy as np
from numba import njit

POINTS, STEPS = 1000, 1000  # STEPS a module constant: JAX sees the trip count at trace time
DESCRIPTION = (f"1-D heat equation, {POINTS} points, {STEPS} explicit steps as a slice update, "
               f"loss sum(u**2); wrt u0, alpha")
WRT = (0, 1)


def primal(u0, alpha):
    u = u0.copy()
    for _ in range(STEPS):
        u[1:-1] = u[1:-1] + alpha * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u ** 2)


def jax_primal(jnp, lax):
    def f(u0, alpha):
        def step(_, u):
            return u.at[1:-1].set(u[1:-1] + alpha * (u[2:] - 2.0 * u[1:-1] + u[:-2]))

        return jnp.sum(lax.fori_loop(0, STEPS, step, u0) ** 2)

    return f


def inputs(rng):
    return rng.standard_normal(POINTS), 0.2  # alpha <= 0.5 keeps the scheme stable


# A step is u' = u + alpha L u on the interior (the ends stay). Backward, with c the
# cotangent of u' zeroed at the ends: du = du' + alpha (c[i-1] - 2 c[i] + c[i+1]), and
# dalpha += <c, L u>, which needs the state before the step: the trajectory is stored.


@njit
def hand_numba(u0, alpha):
    n = u0.shape[0]
    U = np.empty((STEPS + 1, n))  # the trajectory, 8 MB: each step writes the next row
    U[0] = u0
    for t in range(STEPS):
        u, v = U[t], U[t + 1]
        v[0] = u[0]
        for i in range(1, n - 1):
            v[i] = u[i] + alpha * (u[i + 1] - 2.0 * u[i] + u[i - 1])
        v[n - 1] = u[n - 1]
    b = 2.0 * U[STEPS]
    nb = np.empty(n)
    acc = np.zeros(n)  # dalpha per point, summed once at the end: the loop vectorises
    for t in range(STEPS - 1, -1, -1):
        u = U[t]
        b0, bl = b[0], b[n - 1]
        b[0] = 0.0  # c: the ends of u' do not depend on alpha or on neighbours
        b[n - 1] = 0.0
        for i in range(1, n - 1):
            acc[i] += b[i] * (u[i + 1] - 2.0 * u[i] + u[i - 1])
            nb[i] = b[i] + alpha * (b[i - 1] - 2.0 * b[i] + b[i + 1])
        nb[0] = b0 + alpha * b[1]
        nb[n - 1] = bl + alpha * b[n - 2]
        b, nb = nb, b
    return b, acc.sum()


def hand_numpy(u0, alpha):
    n = u0.shape[0]
    U = np.empty((STEPS + 1, n))
    U[0] = u0
    for t in range(STEPS):
        u, v = U[t], U[t + 1]
        v[:] = u
        v[1:-1] += alpha * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    b = 2.0 * U[STEPS]
    balpha = 0.0
    for t in range(STEPS - 1, -1, -1):
        u = U[t]
        c = b[1:-1].copy()
        balpha += c @ (u[2:] - 2.0 * u[1:-1] + u[:-2])
        b[1:-1] -= 2.0 * alpha * c
        b[:-2] += alpha * c
        b[2:] += alpha * c
    return b, balpha
