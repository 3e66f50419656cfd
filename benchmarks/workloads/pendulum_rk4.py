"""Damped pendulum integrated by classic RK4, scalar state; gradient wrt its 3 parameters."""

import math

import numpy as np
from numba import njit

STEPS = 10_000  # a module constant: JAX sees the trip count at trace time
DT = 1e-3
DESCRIPTION = (f"damped pendulum, RK4 inline, {STEPS} steps of {DT} s, loss theta**2 + omega**2 "
               f"at the end; wrt g_over_l, damping, theta0")
WRT = (0, 1, 2)


def primal(g_over_l, damping, theta0):
    h = DT
    theta = theta0
    omega = 0.0
    for _ in range(STEPS):
        k1t = omega
        k1w = -g_over_l * np.sin(theta) - damping * k1t
        k2t = omega + 0.5 * h * k1w
        k2w = -g_over_l * np.sin(theta + 0.5 * h * k1t) - damping * k2t
        k3t = omega + 0.5 * h * k2w
        k3w = -g_over_l * np.sin(theta + 0.5 * h * k2t) - damping * k3t
        k4t = omega + h * k3w
        k4w = -g_over_l * np.sin(theta + h * k3t) - damping * k4t
        theta = theta + h / 6.0 * (k1t + 2.0 * k2t + 2.0 * k3t + k4t)
        omega = omega + h / 6.0 * (k1w + 2.0 * k2w + 2.0 * k3w + k4w)
    return theta ** 2 + omega ** 2


def jax_primal(jnp, lax):
    def f(g_over_l, damping, theta0):
        h = DT

        def step(_, state):
            theta, omega = state
            k1t = omega
            k1w = -g_over_l * jnp.sin(theta) - damping * k1t
            k2t = omega + 0.5 * h * k1w
            k2w = -g_over_l * jnp.sin(theta + 0.5 * h * k1t) - damping * k2t
            k3t = omega + 0.5 * h * k2w
            k3w = -g_over_l * jnp.sin(theta + 0.5 * h * k2t) - damping * k3t
            k4t = omega + h * k3w
            k4w = -g_over_l * jnp.sin(theta + h * k3t) - damping * k4t
            return (theta + h / 6.0 * (k1t + 2.0 * k2t + 2.0 * k3t + k4t),
                    omega + h / 6.0 * (k1w + 2.0 * k2w + 2.0 * k3w + k4w))

        theta, omega = lax.fori_loop(0, STEPS, step, (theta0, jnp.zeros_like(theta0)))
        return theta ** 2 + omega ** 2

    return f


def inputs(rng):
    # Python floats: scalars, as a user passes them (numba types them float64).
    return (9.81 + 0.1 * float(rng.standard_normal()), 0.1 + 0.01 * float(rng.standard_normal()),
            1.0 + 0.1 * float(rng.standard_normal()))


@njit
def hand_numba(g_over_l, damping, theta0):
    # Forward: the primal loop, keeping omega and the sin and cos of the four stages
    # (10 floats a step, 800 kB); backward: the reverse loop, arithmetic only.
    h = DT
    hh = 0.5 * h
    h6 = h / 6.0
    g, c = g_over_l, damping
    om = np.empty(STEPS)
    sn = np.empty((STEPS, 4))
    cs = np.empty((STEPS, 4))
    theta = theta0
    omega = 0.0
    for n in range(STEPS):
        om[n] = omega
        s = theta
        s1 = math.sin(s)
        sn[n, 0] = s1
        cs[n, 0] = math.cos(s)
        k1t = omega
        k1w = -g * s1 - c * k1t
        s = theta + hh * k1t
        s2 = math.sin(s)
        sn[n, 1] = s2
        cs[n, 1] = math.cos(s)
        k2t = omega + hh * k1w
        k2w = -g * s2 - c * k2t
        s = theta + hh * k2t
        s3 = math.sin(s)
        sn[n, 2] = s3
        cs[n, 2] = math.cos(s)
        k3t = omega + hh * k2w
        k3w = -g * s3 - c * k3t
        s = theta + h * k3t
        s4 = math.sin(s)
        sn[n, 3] = s4
        cs[n, 3] = math.cos(s)
        k4t = omega + h * k3w
        k4w = -g * s4 - c * k4t
        theta = theta + h6 * (k1t + 2.0 * k2t + 2.0 * k3t + k4t)
        omega = omega + h6 * (k1w + 2.0 * k2w + 2.0 * k3w + k4w)
    bth = 2.0 * theta
    bom = 2.0 * omega
    bg = 0.0
    bc = 0.0
    for n in range(STEPS - 1, -1, -1):
        omega = om[n]
        s1, s2, s3, s4 = sn[n, 0], sn[n, 1], sn[n, 2], sn[n, 3]
        # the stage slopes of theta, recomputed (they feed the damping gradient)
        k1t = omega
        k1w = -g * s1 - c * k1t
        k2t = omega + hh * k1w
        k2w = -g * s2 - c * k2t
        k3t = omega + hh * k2w
        k3w = -g * s3 - c * k3t
        k4t = omega + h * k3w
        bk1t = h6 * bth
        bk2t = 2.0 * bk1t
        bk3t = bk2t
        bk4t = bk1t
        bk4w = h6 * bom
        bk3w = 2.0 * bk4w
        bk2w = bk3w
        bk1w = bk4w
        # k4w = -g sin(theta + h k3t) - c k4t
        bs = -g * cs[n, 3] * bk4w
        bk4t -= c * bk4w
        bg -= s4 * bk4w
        bc -= k4t * bk4w
        bom += bk4t
        bk3w += h * bk4t
        bth += bs
        bk3t += h * bs
        # k3w = -g sin(theta + hh k2t) - c k3t
        bs = -g * cs[n, 2] * bk3w
        bk3t -= c * bk3w
        bg -= s3 * bk3w
        bc -= k3t * bk3w
        bom += bk3t
        bk2w += hh * bk3t
        bth += bs
        bk2t += hh * bs
        # k2w = -g sin(theta + hh k1t) - c k2t
        bs = -g * cs[n, 1] * bk2w
        bk2t -= c * bk2w
        bg -= s2 * bk2w
        bc -= k2t * bk2w
        bom += bk2t
        bk1w += hh * bk2t
        bth += bs
        bk1t += hh * bs
        # k1w = -g sin(theta) - c k1t, k1t = omega
        bs = -g * cs[n, 0] * bk1w
        bk1t -= c * bk1w
        bg -= s1 * bk1w
        bc -= k1t * bk1w
        bom += bk1t
        bth += bs
    return bg, bc, bth


# The loop is inherently scalar: plain Python runs the same code (math on floats).
hand_numpy = hand_numba.py_func
