"""A catalogue of plain Python/NumPy functions with control flow, one per form or workload.

Like `functions.py`, they are ordinary code: run undecorated they compute values, which is
what the finite-difference checks differentiate. Every one of them also compiles as it is
with `numba.njit` and gives the Python value (checked when the catalogue was written, with
the helpers njitted too), so a failure under `jit=True` is srcgrad's, not the catalogue's.
Test points stay well away from branch switches, so central differences are valid.

Arrays written by subscript (`y[i] = ...`, `S[i, j] += ...`, `u[1:-1] = ...`) are always
ones the function allocated (`np.zeros`, `np.empty`) or copied (`np.copy`, `.copy()`),
never the caller's.
"""

import math

import helpers  # another module: calls into it, inside loops, are differentiated too
import numpy as np

# ---- the issue's example ----


def issue_example(x, y):
    output = 1.0
    for i in range(y):
        if i > 1 and i < 5:
            output = output * x
    return output


# ---- workloads ----


def rosenbrock(x):
    total = 0.0
    for i in range(len(x) - 1):
        total = total + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return total


def rosenbrock_augmented(x):
    """The same sum, with `+=` and the trip count from the shape."""
    total = 0.0
    n = x.shape[0]
    for i in range(n - 1):
        a = x[i + 1] - x[i] * x[i]
        b = 1.0 - x[i]
        total += 100.0 * a * a + b * b
    return total


def pendulum_rk4(damping, gravity, length, theta0, omega0, dt, steps):
    """A damped pendulum theta'' = -c theta' - (g / L) sin(theta), classical RK4."""
    theta = theta0
    omega = omega0
    k = gravity / length
    for _ in range(steps):
        k1t = omega
        k1w = -damping * omega - k * math.sin(theta)
        t2 = theta + 0.5 * dt * k1t
        w2 = omega + 0.5 * dt * k1w
        k2t = w2
        k2w = -damping * w2 - k * math.sin(t2)
        t3 = theta + 0.5 * dt * k2t
        w3 = omega + 0.5 * dt * k2w
        k3t = w3
        k3w = -damping * w3 - k * math.sin(t3)
        t4 = theta + dt * k3t
        w4 = omega + dt * k3w
        k4t = w4
        k4w = -damping * w4 - k * math.sin(t4)
        theta = theta + dt / 6.0 * (k1t + 2.0 * k2t + 2.0 * k3t + k4t)
        omega = omega + dt / 6.0 * (k1w + 2.0 * k2w + 2.0 * k3w + k4w)
    return theta * theta + 0.5 * omega * omega


def rnn(W, U, b, xs, h0):
    """A tanh RNN over the rows of xs; the loss is on the last state."""
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + U @ xs[t] + b)
    return np.sum(h * h)


def rnn_rows(W, U, b, xs, h0):
    """The same cell iterating over the rows of xs, with a loss summed over all steps."""
    h = h0
    loss = 0.0
    for x_t in xs:
        h = np.tanh(W @ h + U @ x_t + b)
        loss = loss + np.sum(h * h)
    return loss


def heat(u0, alpha, steps):
    """Explicit heat equation, fixed ends, updating a copy of the input in place."""
    u = u0.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + alpha * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u * u)


def newton_sqrt(a):
    x = a
    while abs(x * x - a) > 1e-12 * a:
        x = 0.5 * (x + a / x)
    return x


def outer_accumulate(x, y):
    n = x.shape[0]
    m = y.shape[0]
    S = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            S[i, j] += x[i] * y[j]
    return np.sum(S * S)


# ---- branches ----


def piecewise(x):
    """if/elif/else on data: which branch runs changes from one iteration to the next."""
    total = 0.0
    for v in x:
        if v > 0.5:
            total = total + v * v
        elif v > -0.5:
            total = total + np.sin(v)
        else:
            total = total - 3.0 * v
    return total


def branch_on_state(x, steps):
    """The branch taken depends on the loop-carried state."""
    y = x
    for _ in range(steps):
        if y > 1.0:
            y = 0.8 * np.sqrt(y)
        else:
            y = y * y + 0.7
    return y


def branch_without_else(x, w):
    """An `if` with no `else`, assigning a loop-carried value in one branch only."""
    total = 0.0
    scale = 1.0
    for i in range(len(x)):
        z = x[i] * w
        if z > 0.0:
            scale = 0.5 * scale + z
        total = total + scale * z
    return total


def branch_return(x):
    if x > 0.0:
        return x * x
    y = np.sin(x)
    return 2.0 * y


def elif_return(x):
    if x > 2.0:
        return x * x * x
    elif x > 0.0:
        y = np.exp(x)
        return y * x
    y = x * 3.0
    return y - 1.0


# ---- for over range ----


def strided(x):
    n = x.shape[0]
    total = 0.0
    for i in range(1, n - 1, 2):
        total = total + x[i] * x[i + 1] - x[i - 1]
    return total


def backwards(x):
    """range(n - 1, -1, -1), a loop-carried value."""
    n = len(x)
    acc = 0.0
    total = 0.0
    for i in range(n - 1, -1, -1):
        acc = 0.5 * acc + x[i]
        total = total + acc * acc
    return total


def backwards_strided(x):
    total = 0.0
    for i in range(len(x) - 1, 0, -2):
        total = total * 0.5 + x[i] * x[i - 1]
    return total


def range_from_data(x, k):
    """Start and stop computed from the shape and an integer argument."""
    start = x.shape[0] // 3
    total = 0.0
    for i in range(start, x.shape[0] - k):
        total = total + np.sin(x[i]) * (i - start + 1)
    return total


def power_loop(x, n):
    y = x
    for _ in range(n):
        y = y * x
    return y


def sum_first(x, n):
    total = 0.0
    for i in range(n):
        total = total + x[i] ** 2
    return total


def array_through_loop(x, n):
    y = x * 2.0
    for _ in range(n):
        y = np.sin(y)
    return np.sum(y)


# ---- for over arrays, enumerate, zip ----


def over_array(x):
    total = 0.0
    for v in x:
        total = total * 0.9 + v ** 3
    return total


def over_rows(X, w):
    total = 0.0
    for row in X:
        total = total + np.tanh(np.sum(row * w))
    return total


def with_enumerate(x):
    total = 0.0
    for i, v in enumerate(x):
        total = total + (i + 1.0) * v * v
    return total


def with_zip(x, y):
    total = 0.0
    for a, b in zip(x, y):  # noqa: B905 (numba's zip takes no strict=)
        total = total + a * np.exp(b) - a * a * b
    return total


def enumerate_zip(x, y):
    total = 0.0
    for i, (a, b) in enumerate(zip(x, y), 1):  # noqa: B905
        total = total + i * a * b * b
    return total


def zip_rows(X, y):
    total = 0.0
    for row, s in zip(X, y):  # noqa: B905
        total = total + s * np.sum(row ** 2)
    return total


# ---- while ----


def while_counter(x, n):
    i = 0
    total = 0.0
    while i < n:
        total = total + x[i] * x[n - 1 - i]
        i += 1
    return total


def while_on_data(x):
    """The trip count depends on the (differentiated) value."""
    y = x
    while y < 10.0:
        y = y * 1.5 + 0.1
    return y * y


def while_never_runs(x, limit):
    y = x
    while y < limit:
        y = y * 2.0
    return y * y


def while_true(x):
    y = x
    k = 0
    while True:
        y = 0.9 * y + 0.1 * np.sin(y)
        k += 1
        if k >= 5:
            break
    return y


def while_continue(x):
    i = 0
    total = 0.0
    while i < len(x):
        v = x[i]
        i += 1
        if v < 0.0:
            continue
        total = total + v * v * i
    return total


# ---- break, continue, return in loops ----


def until_negative(x):
    total = 0.0
    for v in x:
        if v < 0.0:
            break
        total = total + v * v
    return total


def skip_negative(x):
    total = 0.0
    for i in range(len(x)):
        if x[i] < 0.0:
            continue
        total = total + x[i] ** 3
    return total


def first_above(x, threshold):
    for v in x:
        if v > threshold:
            return v * v
    return 0.0


def accumulate_until(x, limit):
    total = 0.0
    for i in range(len(x)):
        total = total + x[i] * x[i]
        if total > limit:
            return total * x[i]
    return -total


# ---- nested loops ----


def triangle(x):
    """The inner trip count depends on the outer index."""
    total = 0.0
    for i in range(len(x)):
        for j in range(i):
            total = total + x[i] * x[j]
    return total


def nested_break(x, limit):
    total = 0.0
    for i in range(len(x)):
        partial = 0.0
        for j in range(i, len(x)):
            partial = partial + x[j]
            if partial > limit:
                break
        total = total + partial * x[i]
    return total


# ---- values that live past the loop ----


def loop_variable_after(x):
    total = 0.0
    for i in range(len(x)):
        total = total + x[i]
    return total * x[i]


def element_after(x):
    total = 0.0
    for v in x:
        total = total + v
    return total * v


def running_max(x):
    best = x[0]
    where = 0
    for i in range(1, len(x)):
        if x[i] > best:
            best = x[i]
            where = i
    last = 0.0
    for v in x:
        last = v * best
    return best * best + last + where


# ---- arrays carried through loops ----


def iterate_map(x, w, steps):
    y = x
    for _ in range(steps):
        y = np.sin(y * w) + 0.5 * y
    return np.sum(y ** 2)


def matrix_recurrence(A, B, steps):
    M = A
    for _ in range(steps):
        M = 0.5 * (M @ B) + A
    return np.sum(M * M)


# ---- subscript writes ----


def fill_zeros(x):
    n = len(x)
    y = np.zeros(n)
    for i in range(n):
        y[i] = x[i] * x[i - 1]
    return np.sum(y * y)


def fill_empty(x):
    y = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        y[i] = np.sin(x[i]) + i
    return np.sum(y * x)


def cumprod_in_place(x):
    """Each write overwrites a value the adjoint needs."""
    y = x.copy()
    for i in range(1, len(y)):
        y[i] = y[i] * y[i - 1]
    return np.sum(y)


def prefix_sum_np_copy(x):
    y = np.copy(x)
    for i in range(1, len(y)):
        y[i] += y[i - 1]
    return np.sum(y * y)


def overwrite_after_read(x):
    y = x.copy()
    a = y[0]
    y[0] = 5.0
    return a * y[0] + np.sum(y)


def writes_outside_loop(a, b):
    S = np.zeros((2, 3))
    S[1, 2] += a * b
    S[0, 0] = a
    S[0, 1:3] = b
    S[1, 0:2] = S[0, 0:2] * b
    return np.sum(S * S)


def overlapping_slices(x):
    n = len(x)
    y = np.zeros(n + 1)
    for i in range(n):
        y[i:i + 2] = y[i:i + 2] * 0.5 + x[i]
    return np.sum(y * y)


def slice_from_array(x):
    y = np.copy(x)
    y[1:3] = np.sin(x[2:4])
    y[3:] = y[3:] * y[0]
    return np.sum(y * y)


def pairwise(x):
    n = len(x)
    A = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            A[i, j] = (x[i] - x[j]) ** 2
    return np.sum(np.exp(-A))


def row_writes(X, w):
    Y = np.zeros(X.shape)
    for i in range(X.shape[0]):
        Y[i, :] = np.tanh(X[i] * w)
    return np.sum(Y * X)


def row_recurrence(X):
    M = X.copy()
    for i in range(1, M.shape[0]):
        M[i] = M[i] + 0.5 * M[i - 1] * M[i]
    return np.sum(M ** 2)


# ---- user functions called inside loops ----


def accel(theta, omega, c, k):
    return -c * omega - k * math.sin(theta)


def euler_with_helper(c, k, theta0, dt, steps):
    theta = theta0
    omega = 0.0
    for _ in range(steps):
        a = accel(theta, omega, c, k)
        theta = theta + dt * omega
        omega = omega + dt * a
    return theta


def poly_loop(v, n):
    """A helper that has a loop of its own."""
    out = 0.0
    for i in range(n):
        out = out * v + (i + 1.0)
    return out


def calls_in_loop(x):
    total = 0.0
    for v in x:
        total = total + helpers.cube(v) * 0.1 + poly_loop(v, 3)
    return total


# ---- harder mixtures ----


def while_break_on_data(x):
    i = 0
    total = 0.0
    while i < len(x):
        if x[i] < 0.0:
            break
        total = total * 0.5 + np.exp(x[i])
        i += 1
    return total * x[0]


def nested_continue(X):
    total = 0.0
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            if X[i, j] < 0.0:
                continue
            total = total + X[i, j] * X[i, j - 1]
    return total


def return_from_nested_loops(x, limit):
    total = 0.0
    for i in range(len(x)):
        for j in range(i + 1):
            total = total + x[i] * x[j]
            if total > limit:
                return total * x[j]
    return total


def branch_assigns_array(x, w):
    y = x * 1.0
    for _ in range(4):
        if np.sum(y) > 0.0:
            y = np.tanh(y * w)
        else:
            y = y * w + 0.5
    return np.sum(y ** 2)


def conditional_writes(x):
    y = np.zeros(len(x))
    for i in range(len(x)):
        if x[i] > 0.0:
            y[i] = x[i] * x[i]
        else:
            y[i] = np.sin(x[i])
    return np.sum(y * x)


def over_slice(x):
    total = 0.0
    for v in x[1:-1]:
        total = total + v * v * v
    return total


def enumerate_start(X):
    total = 0.0
    for i, row in enumerate(X, 1):
        total = total + i * np.sum(np.sin(row))
    return total


def zip_three(x, y, z):
    total = 0.0
    for a, b, c in zip(x, y, z):  # noqa: B905
        total = total + a * b + b * c * c
    return total


def backwards_to_data(x, k):
    total = 1.0
    for i in range(len(x) - 1, k, -1):
        total = total * (1.0 + x[i] * x[i - 1])
    return total


def shift_in_place(x):
    """Each step reads the values the previous step wrote, through overlapping slices."""
    y = x.copy()
    for _ in range(3):
        y[1:] = y[1:] + 0.5 * y[:-1]
    return np.sum(y * y)


def long_power(x, n):
    y = 1.0
    for _ in range(n):
        y = y * x
    return y


def matrix_update_in_loop(A, v):
    M = A.copy()
    for i in range(M.shape[0]):
        M[i, i] += v[i] * M[i, i]
        M[:, i] = M[:, i] * np.tanh(v[i])
    return np.sum(M @ v)


def int_init_accumulator(x):
    """The accumulator starts as an int and becomes a float in the loop."""
    total = 0
    for i in range(len(x)):
        total = total + x[i] * x[i]
    return total


def rebind_input(x, n):
    """Rebinding a parameter in a loop is not a write into the caller's array."""
    for _ in range(n):
        x = np.sin(x) + 0.5 * x
    return np.sum(x)


def inplace_whole_array(x):
    y = x.copy()
    for _ in range(3):
        y *= x
        y += 0.5
    return np.sum(y)


# ---- more forms ----


def return_in_while(x):
    y = x
    k = 0
    while k < 10:
        y = y * 1.3
        if y > 5.0:
            return y * y
        k += 1
    return y


def data_step(x, k):
    total = 0.0
    for i in range(0, len(x), k):
        total = total + x[i] ** 2
    return total


def int_carried_index(x):
    y = np.zeros(len(x))
    j = 0
    for v in x:
        if v > 0.0:
            y[j] = v * v
            j += 1
    return np.sum(y * np.arange(1.0, len(x) + 1.0))


def and_or_conditions(x):
    total = 0.0
    for i in range(len(x)):
        if x[i] > 0.0 and x[i] < 1.0 or x[i] < -2.0:
            total = total + x[i] ** 3
        else:
            total = total + x[i]
    return total


def minmax_in_loop(x):
    best = -1e300
    low = 1e300
    for v in x:
        best = max(best, v)
        low = min(low, v * 2.0)
    return best * low


def negative_index_writes(x):
    y = np.zeros(4)
    y[-1] = x * 2.0
    y[-2] += x * x
    return np.sum(y * y)


def strided_slice_write(x):
    y = np.zeros(6)
    y[::2] = x
    y[1::2] = x * x
    return np.sum(np.sin(y))


def helper_allocates(v, n):
    out = np.zeros(n)
    for i in range(n):
        out[i] = v ** (i + 1)
    return out


def calls_allocating_helper(x):
    total = 0.0
    for v in x:
        total = total + np.sum(helper_allocates(v, 3))
    return total


def overwrite_then_read_later(x):
    y = np.zeros(3)
    total = 0.0
    for i in range(4):
        y[i % 3] = y[i % 3] * x[i] + x[i]
        total = total + y[0] * y[2]
    return total


def column_writes(X):
    Y = X.copy()
    for j in range(1, X.shape[1]):
        Y[:, j] = Y[:, j] * Y[:, j - 1]
    return np.sum(Y)


def scalar_from_array_in_loop(x):
    s = 0.0
    for i in range(3):
        s = s + np.sum(x * s) + np.max(x) * i
    return s


def loop_inside_branch(x, flag):
    if flag > 0:
        for _ in range(3):
            x = x * x + 0.1
    else:
        while x < 3.0:
            x = x + 1.0 * x
    return x


def early_return_array_loop(X):
    for row in X:
        if np.sum(row) > 1.0:
            return np.sum(row * row)
    return np.sum(X)


# ---- writes the implementation may refuse, but must never get wrong ----


def write_through_view_of_allocated(x):
    y = np.zeros((2, 3))
    r = y[0]
    r[1] = x * x
    return np.sum(y * y) + x


def write_through_alias_of_allocated(x):
    y = np.zeros(3)
    z = y
    z[0] = x * x
    z[1] = 3.0 * x
    return np.sum(y * y)


def for_else(x):
    total = 0.0
    for v in x:
        if v < 0.0:
            break
        total = total + v * v
    else:
        total = total * 2.0
    return total


def nested_else(x):
    """A `for ... else` inside a `while ... else`; the inner `else` continues the outer
    loop, a `break` of the inner loop breaks the outer one too (skipping its `else`)."""
    s = x
    k = 0
    while k < 4:
        for _ in range(3):
            if s > 5.0:
                break
            s = s * 1.5
        else:
            k += 1
            continue
        break
    else:
        s = s * s
    return s
