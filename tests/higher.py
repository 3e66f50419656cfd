"""A catalogue of plain Python/NumPy functions for forward mode (`jvp`) and higher-order
derivatives (`grad(grad(f))`, `hessian`, `hvp`, `jacobian`), and the points they are tested
at. `test_higher.py` checks srcgrad on them against hand-derived values and finite
differences; nothing here depends on srcgrad except `self_stopped` / `cube_stopped`, which
use `srcgrad.stop_gradient` (the identity when run as plain Python).

Like `loops.py`, these are ordinary code: run undecorated they compute values, which is
what the finite differences differentiate. The functions that the tests run compiled
(`numba=True` in the case tables, and the ones named in `NUMBA_FUNCTIONS`) also compile
as they are with `numba.njit` and give the Python value (checked when the catalogue was
written), so a failure under `jit=True` is srcgrad's, not the catalogue's. Test points
stay well away from branch switches and from the kinks of max/clip/maximum/where, so
central differences (first and second) are valid there.

Arrays written by subscript are always ones the function allocated (`np.zeros`) or copied
(`.copy()`), never the caller's.
"""

import numpy as np

import srcgrad

# ---- scalar functions with derivatives known by hand ----


def cube(x):
    return x * x * x


def pow3(x):
    return x ** 3


def exp_sin(x):
    return np.exp(np.sin(x))


def chain(x):
    """The issue's example: f = x**4 by way of an intermediate."""
    y = x * x
    z = y * y
    return z


def two_var(x, y):
    return x ** 2 * y + np.sin(x * y)


def two_var_packed(p):
    """two_var with (x, y) = p, for a 2 x 2 Hessian."""
    return p[0] ** 2 * p[1] + np.sin(p[0] * p[1])


def sum_squares(x):
    return np.sum(x * x)


def self_stopped(x):
    """The gradient is stop_gradient(x): its derivative is 0 (JAX agrees)."""
    return x * srcgrad.stop_gradient(x)


def cube_stopped(x):
    """The gradient is 3 x**2 * stop_gradient(x): its derivative is 6 x * x."""
    return x * x * x * srcgrad.stop_gradient(x)


def mixed(x, w):
    """Scalar x, array w: d/dw (df/dx) = 2 w cos(x w) - x w**2 sin(x w) + 2 x."""
    return np.sum(np.sin(x * w) * w) + x * x * np.sum(w)


# ---- scalar functions with loops and branches (second derivatives) ----


def power_loop(x, n):
    """x**n by a loop: second derivative n (n - 1) x**(n - 2)."""
    y = 1.0
    for _ in range(n):
        y = y * x
    return y


def sin_map(x, n):
    """A loop-carried value overwritten every iteration (the tape)."""
    y = x
    for _ in range(n):
        y = np.sin(y) * x + 0.5 * y
    return y


def while_count(x):
    """A while loop whose trip count depends on the data."""
    y = x
    while y < 10.0:
        y = y * 1.3 + 0.2 * np.sin(y)
    return y * y


def while_break(x):
    """while True with a data-dependent break."""
    y = x
    total = 0.0
    while True:
        y = 0.9 * y + np.cos(y)
        total = total + y * x
        if total > 5.0:
            break
    return total


def branchy(x):
    if x > 1.0:
        y = x * x * np.exp(-x)
    elif x > -1.0:
        y = np.sin(x) * x
    else:
        y = x ** 3
    return y


def loop_branch(x, n):
    """The branch taken depends on the loop-carried state."""
    y = x
    for _ in range(n):
        if y > 1.0:
            y = np.sqrt(y) + 0.3 * x
        else:
            y = y * y + 0.6
    return y


def scalar_helper(u, a):
    return a * u * u + np.sin(u)


def calls_helper(x):
    """A user function called in a loop."""
    y = x
    for _ in range(3):
        y = scalar_helper(y, 0.3) * 0.5
    return y


# ---- workloads ----


def pendulum(p, s, dt, steps):
    """A damped pendulum theta'' = -c theta' - (g / L) sin(theta), classical RK4.
    p = (damping c, gravity g, length L), s = (theta0, omega0); the loss is on the
    final state. Written with np.sin so that it also runs on complex numbers (the tests'
    complex-step gradient)."""
    c = p[0]
    k = p[1] / p[2]
    theta = s[0]
    omega = s[1]
    for _ in range(steps):
        k1t = omega
        k1w = -c * omega - k * np.sin(theta)
        t2 = theta + 0.5 * dt * k1t
        w2 = omega + 0.5 * dt * k1w
        k2t = w2
        k2w = -c * w2 - k * np.sin(t2)
        t3 = theta + 0.5 * dt * k2t
        w3 = omega + 0.5 * dt * k2w
        k3t = w3
        k3w = -c * w3 - k * np.sin(t3)
        t4 = theta + dt * k3t
        w4 = omega + dt * k3w
        k4t = w4
        k4w = -c * w4 - k * np.sin(t4)
        theta = theta + dt / 6.0 * (k1t + 2.0 * k2t + 2.0 * k3t + k4t)
        omega = omega + dt / 6.0 * (k1w + 2.0 * k2w + 2.0 * k3w + k4w)
    return theta ** 2 + omega ** 2


def mlp_loss(W, b, v, x, y):
    """One tanh hidden layer (W is 3 x 4), a linear read-out, mean squared error."""
    h = np.tanh(x @ W + b)
    out = h @ v
    r = out - y
    return np.mean(r * r)


def rosenbrock(x):
    total = 0.0
    for i in range(x.shape[0] - 1):
        total = total + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return total


# ---- control flow for jvp (mostly array valued) ----


def jv_branch(x):
    """if/elif/else on data."""
    s = np.sum(x)
    if s > 1.0:
        y = np.sin(x) * s
    elif s > -1.0:
        y = np.exp(x) - s
    else:
        y = x * x
    return y


def jv_range(x, n):
    """A for loop whose trip count is an argument."""
    y = x
    for _ in range(n):
        y = np.tanh(y) * 1.5 + 0.1 * x
    return y


def jv_while_break(x):
    """while with a data-dependent break."""
    y = x
    k = 0
    while k < 100:
        y = 0.8 * y + 0.3 * np.sin(y)
        k += 1
        if np.sum(y * y) < 0.5:
            break
    return y


def jv_nested(x, y):
    """Nested loops reading elements."""
    total = 0.0
    for i in range(x.shape[0]):
        for j in range(y.shape[0]):
            total = total + np.sin(x[i] * y[j]) * x[i]
    return total


def jv_early_return(x):
    s = np.sum(x * x)
    if s > 4.0:
        return np.sqrt(s) * x
    t = np.cos(x)
    return t * s


def cell(h, w):
    return np.tanh(h * w + 0.1)


def jv_calls(x, w):
    """A user function called in a loop."""
    h = x
    for _ in range(3):
        h = cell(h, w) + 0.5 * h
    return h


def jv_writes(x):
    """Subscript writes into a local array, in a loop, reading what it wrote."""
    n = x.shape[0]
    y = np.zeros(n)
    for i in range(n):
        if i == 0:
            y[i] = x[0] * x[0]
        else:
            y[i] = y[i - 1] * 0.5 + x[i] * x[i - 1]
    return y


def jv_unpack(x, n):
    """Tuple unpacking of a loop-carried pair."""
    a = x
    b = 1.0
    for _ in range(n):
        a, b = b, a * 0.5 + b * x
    return a + b


def jv_continue(x):
    total = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0.0:
            continue
        total = total + np.exp(-x[i]) * x[i] * x[i]
    return total


def jv_heat(u0, alpha, steps):
    """Slice writes into a copy, in a loop."""
    u = u0.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + alpha * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return u


def jv_outer(x):
    """Nested loops with an augmented 2-d subscript write; a matrix result."""
    n = x.shape[0]
    S = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1):
            S[i, j] += x[i] * np.sin(x[j])
    return S


def jv_rnn(W, xs):
    """for over the rows of an array."""
    h = np.zeros(W.shape[0])
    for x_t in xs:
        h = np.tanh(W @ h + x_t)
    return h


def jv_pendulum_state(s, c, steps):
    """Explicit Euler on the pendulum, the state in a local array written in the loop."""
    z = s.copy()
    dt = 0.05
    for _ in range(steps):
        theta = z[0]
        omega = z[1]
        z[0] = theta + dt * omega
        z[1] = omega - dt * (c * omega + 9.81 * np.sin(theta))
    return z


# ---- NumPy operations for jvp ----


def op_trig(x):
    return np.sin(x) * np.cos(x) + np.tanh(x)


def op_explog(x):
    return np.exp(x) * np.log(x) + np.sqrt(x)


def op_sum_axis(X):
    return np.sum(np.sin(X) * X, axis=1)


def op_mean_axis(X):
    return np.mean(X * X, axis=0) + np.mean(X)


def op_max(x):
    return np.max(x) * x


def op_matmul_t(A, B):
    return A @ B.T + A @ np.transpose(B)


def op_reshape(x):
    y = x.reshape((2, 3))
    return y.T @ y


def op_where(x):
    return np.where(x > 0.0, x * x, np.sin(x))


def op_clip(x):
    return np.clip(x, -0.5, 0.5) * x


def op_maximum(x, y):
    return np.maximum(x, y) * x


def op_index(x):
    return x[0] * x[2] + x[1] ** 2


def op_slice(x):
    return x[1:] * x[:-1] + x[:2].sum()


def op_write(x):
    y = np.zeros(3)
    y[0] = x[1] * x[2]
    y[1] = np.sin(x[0])
    y[2] = x[0] + x[3] * x[3]
    return y


# ---- jacobians: more outputs than inputs, fewer, square ----


def tall(x, c):
    """R^2 -> R^6."""
    return np.sin(x[0] * c) + x[1] * x[1] * c + x[0] * x[1]


def wide(x, A):
    """R^6 -> R^2."""
    return np.tanh(A @ x) * np.sum(x * x)


def wide_writes(x):
    """R^6 -> R^2 through subscript writes."""
    y = np.zeros(2)
    y[0] = np.sum(x * x)
    y[1] = np.sum(np.sin(x[:3]) * x[3:])
    return y


def curve(t):
    """R -> R^3: a scalar input."""
    return np.array([1.0, 2.0, 3.0]) * np.sin(t) + t * t


# ---- test points ----

R = np.random.default_rng(20240607)

X4 = np.array([0.3, -0.7, 1.1, 0.45])
X6 = np.array([0.2, -0.4, 0.9, 0.55, -1.2, 0.7])
M34 = R.normal(size=(3, 4))
P_PEND = np.array([0.3, 9.81, 1.5])     # damping, gravity, length
S_PEND = np.array([0.9, -0.4])          # theta0, omega0
DT_PEND = 0.02
STEPS_PEND = 50

MLP_ARGS = (R.normal(size=(3, 4)) * 0.7, R.normal(size=4) * 0.3, R.normal(size=4),
            R.normal(size=(5, 3)), R.normal(size=5))

# (id, function, args, wrt, run under numba as well as Python)
JVP_CASES = [
    ("jv_branch-if", jv_branch, (np.array([0.8, 0.5, 0.2]),), 0, True),
    ("jv_branch-elif", jv_branch, (np.array([0.3, -0.2, 0.1]),), 0, False),
    ("jv_branch-else", jv_branch, (np.array([-0.9, -0.5, -0.4]),), 0, False),
    ("jv_range", jv_range, (X4, 5), 0, True),
    ("jv_range-zero-trips", jv_range, (X4, 0), 0, False),
    ("jv_while_break", jv_while_break, (np.array([1.2, -0.8, 0.5]),), 0, True),
    ("jv_nested-x", jv_nested, (X4, np.array([0.5, -1.3, 0.8])), 0, False),
    ("jv_nested-y", jv_nested, (X4, np.array([0.5, -1.3, 0.8])), 1, False),
    ("jv_nested-both", jv_nested, (X4, np.array([0.5, -1.3, 0.8])), (0, 1), True),
    ("jv_early_return-early", jv_early_return, (np.array([1.5, -1.2, 0.9]),), 0, True),
    ("jv_early_return-late", jv_early_return, (np.array([0.5, -0.2, 0.9]),), 0, False),
    ("jv_calls-x", jv_calls, (X4, 0.8), 0, True),
    ("jv_calls-w", jv_calls, (X4, 0.8), 1, False),
    ("jv_writes", jv_writes, (X6,), 0, True),
    ("jv_unpack", jv_unpack, (0.7, 6), 0, True),
    ("jv_continue", jv_continue, (X6,), 0, False),
    ("jv_heat-u0", jv_heat, (np.sin(np.linspace(0.0, 3.0, 7)), 0.2, 4), 0, True),
    ("jv_heat-alpha", jv_heat, (np.sin(np.linspace(0.0, 3.0, 7)), 0.2, 4), "alpha", False),
    ("jv_outer", jv_outer, (X4,), 0, False),
    ("jv_rnn-W", jv_rnn, (R.normal(size=(3, 3)) * 0.5, R.normal(size=(4, 3))), 0, True),
    ("jv_rnn-xs", jv_rnn, (R.normal(size=(3, 3)) * 0.5, R.normal(size=(4, 3))), 1, False),
    ("jv_pendulum_state", jv_pendulum_state, (S_PEND, 0.3, 40), 0, False),
    ("pendulum-p", pendulum, (P_PEND, S_PEND, DT_PEND, STEPS_PEND), 0, True),
    ("pendulum-both", pendulum, (P_PEND, S_PEND, DT_PEND, STEPS_PEND), (0, 1), False),
    ("mlp_loss-W-b", mlp_loss, MLP_ARGS, (0, 1), False),
    ("rosenbrock", rosenbrock, (X6,), 0, False),
    ("sin_map", sin_map, (0.8, 7), 0, False),
    ("while_count", while_count, (1.7,), 0, False),
    ("while_break", while_break, (0.9,), 0, False),
    ("loop_branch", loop_branch, (1.3, 6), 0, False),
    ("calls_helper", calls_helper, (0.9,), 0, False),
    # NumPy operations
    ("op_trig", op_trig, (X6,), 0, False),
    ("op_explog", op_explog, (np.abs(X6) + 0.1,), 0, False),
    ("op_sum_axis", op_sum_axis, (M34,), 0, False),
    ("op_mean_axis", op_mean_axis, (M34,), 0, False),
    ("op_max", op_max, (X6,), 0, False),
    ("op_matmul_t-A", op_matmul_t, (M34[:2], M34[1:]), 0, False),
    ("op_matmul_t-both", op_matmul_t, (M34[:2], M34[1:]), (0, 1), False),
    ("op_reshape", op_reshape, (X6,), 0, False),
    ("op_where", op_where, (X6,), 0, False),
    ("op_clip", op_clip, (X6,), 0, False),
    ("op_maximum", op_maximum, (X6, X6[::-1].copy()), (0, 1), False),
    ("op_index", op_index, (X4,), 0, False),
    ("op_slice", op_slice, (X6,), 0, False),
    ("op_write", op_write, (X4,), 0, False),
    ("exp_sin", exp_sin, (0.7,), 0, False),
    ("two_var-y", two_var, (0.6, -1.1), "y", False),
]

# Vector-valued functions for the dot-product test <u, J v> == <J^T u, v>:
# (id, function, args, wrt position, run under numba as well as Python)
DOT_CASES = [
    ("jv_writes", jv_writes, (X6,), 0, True),
    ("jv_heat", jv_heat, (np.sin(np.linspace(0.0, 3.0, 7)), 0.2, 4), 0, True),
    ("jv_calls", jv_calls, (X4, 0.8), 0, False),
    ("jv_rnn", jv_rnn, (R.normal(size=(3, 3)) * 0.5, R.normal(size=(4, 3))), 0, False),
    ("jv_range", jv_range, (X4, 5), 0, False),
    ("jv_early_return", jv_early_return, (np.array([1.5, -1.2, 0.9]),), 0, False),
    ("jv_outer", jv_outer, (X4,), 0, False),
    ("jv_pendulum_state", jv_pendulum_state, (S_PEND, 0.3, 40), 0, False),
    ("op_matmul_t", op_matmul_t, (M34[:2], M34[1:]), 1, False),
    ("op_sum_axis", op_sum_axis, (M34,), 0, False),
]

# Scalar functions of one scalar for grad(grad(f)) against second differences:
# (id, function, args, run under numba as well as Python)
SECOND_CASES = [
    ("sin_map", sin_map, (0.8, 7), True),
    ("while_count", while_count, (1.7,), True),
    ("while_break", while_break, (0.9,), False),
    ("branchy-high", branchy, (1.8,), False),
    ("branchy-mid", branchy, (0.4,), False),
    ("branchy-low", branchy, (-1.6,), False),
    ("loop_branch", loop_branch, (1.3, 6), True),
    ("calls_helper", calls_helper, (0.9,), False),
    ("power_loop", power_loop, (1.2, 5), False),
    ("exp_sin", exp_sin, (0.7,), False),
    ("jv_unpack", jv_unpack, (0.7, 6), False),
]
