"""Forward mode and higher-order derivatives: jvp, grad(grad(f)), hessian, hvp, jacobian.

The functions and test points live in `higher.py`. Expected values come from hand
derivations and from finite differences written here with plain NumPy, never from srcgrad:

* jvp: central directional differences (f(x + h v) - f(x - h v)) / 2h;
* second derivatives of a scalar function: the five-point second difference;
* Hessians and Hessian-vector products: central differences of a complex-step gradient
  (exact to rounding, for the functions that run on complex numbers) or second central
  differences of f, and hand-derived Hessians (two_var, rosenbrock);
* jacobians: one central difference per input element;
* forward against reverse: the dot-product test <u, J v> == <J^T u, v> with srcgrad's vjp.

A moderate set of cases runs compiled with numba (jit=True, so failing to compile is an
error, not a silent fallback) as well as plain Python; the broad sweep runs with
jit=False, since every distinct compiled function costs seconds.
"""

import inspect
import os
import zlib

import higher as H
import numpy as np
import pytest

import srcgrad
from srcgrad import SrcgradError
from srcgrad.runtime import (
    matmul_lhs_grad_tangent,
    matmul_rhs_grad_tangent,
    matmul_tangent,
    products,
)

JITS = [pytest.param(True, id="numba"), pytest.param(False, id="python")]


# ---- independent reference derivatives (plain NumPy) ----


def positions_of(fun, wrt):
    """wrt (a position, a name, or a tuple of them) as a tuple of positions."""
    names = list(inspect.signature(fun).parameters)
    many = wrt if isinstance(wrt, tuple) else (wrt,)
    return tuple(names.index(w) if isinstance(w, str) else w for w in many)


def shifted(args, moves):
    """args with args[p] + d for each (p, d) in moves; scalars stay Python floats."""
    out = list(args)
    for p, d in moves:
        moved = np.asarray(out[p], dtype=float) + d
        out[p] = moved if np.ndim(moved) else float(moved)
    return out


def fd_jvp(fun, args, positions, tangents, h=1e-6):
    """Central directional difference of fun along `tangents` (one per position)."""
    size = max(1.0, *(float(np.max(np.abs(args[p]))) for p in positions))
    step = h * size
    plus = fun(*shifted(args, [(p, step * t) for p, t in zip(positions, tangents, strict=True)]))
    minus = fun(*shifted(args, [(p, -step * t) for p, t in zip(positions, tangents, strict=True)]))
    return (np.asarray(plus) - np.asarray(minus)) / (2 * step)


def fd_second(fun, args, pos=0, h=1e-3):
    """Five-point second difference of a scalar function of the scalar args[pos]."""
    x = float(args[pos])
    step = h * max(1.0, abs(x))
    f = [float(fun(*shifted(args, [(pos, k * step)]))) for k in (-2, -1, 0, 1, 2)]
    return (-f[0] + 16.0 * f[1] - 30.0 * f[2] + 16.0 * f[3] - f[4]) / (12.0 * step * step)


def fd_jacobian(fun, args, pos, h=1e-6):
    """Central differences, one input element at a time (a step relative to that
    element): shape f.shape + x.shape."""
    x = np.asarray(args[pos], dtype=float)
    out_shape = np.shape(fun(*args))
    jac = np.zeros(out_shape + x.shape)
    for idx in np.ndindex(x.shape):
        step = h * max(1.0, abs(x[idx]))
        e = np.zeros(x.shape)
        e[idx] = step
        plus = np.asarray(fun(*shifted(args, [(pos, e)])))
        minus = np.asarray(fun(*shifted(args, [(pos, -e)])))
        jac[(Ellipsis,) + idx] = (plus - minus) / (2 * step)
    return jac


def cs_grad(fun, args, pos, h=1e-30):
    """Complex-step gradient of a scalar function that runs on complex numbers: exact to
    rounding (no subtraction), so central differences of it give accurate Hessians."""
    x = np.asarray(args[pos], dtype=float)
    out = np.zeros(x.shape)
    for idx in np.ndindex(x.shape):
        xc = x.astype(complex)
        xc[idx] += 1j * h
        moved = list(args)
        moved[pos] = xc if x.ndim else complex(xc)
        out[idx] = np.imag(fun(*moved)) / h
    return out


def cs_hessian(fun, args, pos, h=1e-5):
    """Central differences of the complex-step gradient: shape x.shape + x.shape."""
    return fd_jacobian(lambda *a: cs_grad(fun, a, pos), args, pos, h=h)


def cs_hvp(fun, args, pos, v, h=1e-5):
    return fd_jvp(lambda *a: cs_grad(fun, a, pos), args, (pos,), (v,), h=h)


def fd_hessian(fun, args, pos, h=1e-4):
    """Second central differences of a scalar function (for the ones with branches,
    which cannot take the complex step); steps relative to each element."""
    x = np.asarray(args[pos], dtype=float)
    steps = h * np.maximum(1.0, np.abs(x))
    hess = np.zeros(x.shape + x.shape)

    def at(i, si, j, sj):
        d = np.zeros(x.shape)
        d[i] += si * steps[i]
        d[j] += sj * steps[j]
        return float(fun(*shifted(args, [(pos, d)])))

    for i in np.ndindex(x.shape):
        for j in np.ndindex(x.shape):
            hess[i + j] = (at(i, 1, j, 1) - at(i, 1, j, -1) - at(i, -1, j, 1)
                           + at(i, -1, j, -1)) / (4.0 * steps[i] * steps[j])
    return hess


def close(got, want, rtol=1e-6, atol=1e-8):
    """Same shape, and equal to a tolerance scaled by the size of `want`."""
    assert np.shape(got) == np.shape(want), (np.shape(got), np.shape(want))
    scale = max(1.0, float(np.max(np.abs(want)))) if np.size(want) else 1.0
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * scale)


def random_like(x, rng):
    return rng.normal(size=np.shape(x)) if np.ndim(x) else float(rng.normal())


# hand derivatives of two_var(x, y) = x**2 y + sin(x y)
def two_var_hessian(x, y):
    s, c = np.sin(x * y), np.cos(x * y)
    fxx = 2.0 * y - y * y * s
    fxy = 2.0 * x + c - x * y * s
    fyy = -x * x * s
    return np.array([[fxx, fxy], [fxy, fyy]])


def rosenbrock_hessian(x):
    n = x.shape[0]
    hess = np.zeros((n, n))
    for i in range(n - 1):
        hess[i, i] += 1200.0 * x[i] ** 2 - 400.0 * x[i + 1] + 2.0
        hess[i + 1, i + 1] += 200.0
        hess[i, i + 1] += -400.0 * x[i]
        hess[i + 1, i] += -400.0 * x[i]
    return hess


# ---- the references themselves (plain NumPy; no srcgrad) ----


def test_reference_derivatives_agree_with_hand_values():
    p = np.array([0.6, -1.1])
    x, y = p
    c = np.cos(x * y)
    close(cs_grad(H.two_var_packed, (p,), 0), [2 * x * y + y * c, x * x + x * c], rtol=1e-13)
    close(cs_hessian(H.two_var_packed, (p,), 0), two_var_hessian(x, y), rtol=1e-8)
    close(fd_hessian(H.two_var_packed, (p,), 0), two_var_hessian(x, y), rtol=1e-5, atol=1e-6)
    close(fd_hessian(H.rosenbrock, (H.X6,), 0), rosenbrock_hessian(H.X6), rtol=1e-5, atol=1e-6)
    close(cs_hessian(H.rosenbrock, (H.X6,), 0), rosenbrock_hessian(H.X6), rtol=1e-8)
    e = np.exp(np.sin(0.7))
    close(fd_second(H.exp_sin, (0.7,)), e * (np.cos(0.7) ** 2 - np.sin(0.7)), rtol=1e-8)
    close(fd_second(H.power_loop, (1.2, 5)), 20.0 * 1.2 ** 3, rtol=1e-8)
    close(fd_jacobian(H.curve, (0.4,), 0), np.array([1.0, 2.0, 3.0]) * np.cos(0.4) + 0.8)
    v = np.array([0.3, -2.0])
    close(fd_jvp(H.two_var_packed, (p,), (0,), (v,)),
          np.dot([2 * x * y + y * c, x * x + x * c], v), rtol=1e-8)


def test_reference_pendulum_and_mlp_second_differences_agree():
    """The complex-step Hessians of the two workloads against plain second differences."""
    args = (H.P_PEND, H.S_PEND, H.DT_PEND, H.STEPS_PEND)
    close(cs_hessian(H.pendulum, args, 0), fd_hessian(H.pendulum, args, 0),
          rtol=1e-4, atol=1e-5)
    close(cs_hessian(H.pendulum, args, 1), fd_hessian(H.pendulum, args, 1),
          rtol=1e-4, atol=1e-5)
    close(cs_hessian(H.mlp_loss, H.MLP_ARGS, 0), fd_hessian(H.mlp_loss, H.MLP_ARGS, 0),
          rtol=1e-4, atol=1e-5)


# ---- jvp: hand values, forms ----


@pytest.mark.parametrize("jit", JITS)
def test_jvp_cube_by_hand(jit):
    f = srcgrad.jvp(H.cube, jit=jit)
    value, dvalue = f(2.0, 1.0)
    assert value == 8.0 and dvalue == 12.0
    value, dvalue = f(-1.5, 0.5)
    assert value == pytest.approx(-3.375, rel=1e-15)
    assert dvalue == pytest.approx(3.0 * 2.25 * 0.5, rel=1e-15)


def test_jvp_decorator_forms():
    @srcgrad.jvp
    def a(x):
        return x * x

    @srcgrad.jvp(wrt="y", jit=False)
    def b(x, y):
        return x * y * y

    assert a(3.0, 1.0) == (9.0, 6.0)
    assert b(2.0, 3.0, 1.0) == (18.0, 12.0)
    c = srcgrad.jvp(H.two_var, wrt=1, jit=False)
    value, dvalue = c(0.6, -1.1, 2.0)
    assert value == pytest.approx(H.two_var(0.6, -1.1), rel=1e-14)
    assert dvalue == pytest.approx(2.0 * (0.36 + 0.6 * np.cos(-0.66)), rel=1e-13)


@pytest.mark.parametrize("jit", JITS)
def test_jvp_tuple_wrt_takes_a_tuple_of_tangents(jit):
    x, y = 0.6, -1.1
    f = srcgrad.jvp(H.two_var, wrt=(0, 1), jit=jit)
    fx = 2 * x * y + y * np.cos(x * y)
    fy = x * x + x * np.cos(x * y)
    for tx, ty in [(1.0, 0.0), (0.0, 1.0), (0.5, -2.0)]:
        value, dvalue = f(x, y, (tx, ty))
        assert value == pytest.approx(H.two_var(x, y), rel=1e-14)
        assert dvalue == pytest.approx(fx * tx + fy * ty, rel=1e-12)


def test_jvp_wrt_names_in_a_tuple():
    x, w = H.X4, 0.8
    tx, tw = np.array([0.1, -0.2, 0.3, 0.4]), -0.7
    value, dvalue = srcgrad.jvp(H.jv_calls, wrt=("w", "x"), jit=False)(x, w, (tw, tx))
    close(value, H.jv_calls(x, w), rtol=1e-14)
    close(dvalue, fd_jvp(H.jv_calls, (x, w), (1, 0), (tw, tx)))


def test_jvp_is_linear_in_the_tangent(rng):
    f = srcgrad.jvp(H.jv_writes, jit=False)
    v1, v2 = rng.normal(size=6), rng.normal(size=6)
    _, d1 = f(H.X6, v1)
    _, d2 = f(H.X6, v2)
    _, d12 = f(H.X6, 2.0 * v1 - 3.0 * v2)
    close(d12, 2.0 * d1 - 3.0 * d2, rtol=1e-12, atol=1e-14)
    _, d0 = f(H.X6, np.zeros(6))
    np.testing.assert_array_equal(d0, np.zeros(6))


# ---- jvp: the control-flow and NumPy corpus against directional differences ----


def jvp_params():
    for case_id, fun, args, wrt, numba in H.JVP_CASES:
        for jit in ([True, False] if numba else [False]):
            yield pytest.param(fun, args, wrt, jit,
                               id=f"{case_id}-{'numba' if jit else 'python'}")


@pytest.mark.parametrize("fun,args,wrt,jit", list(jvp_params()))
def test_jvp_against_directional_differences(fun, args, wrt, jit):
    rng = np.random.default_rng(zlib.crc32(fun.__name__.encode()))
    positions = positions_of(fun, wrt)
    tangents = tuple(random_like(args[p], rng) for p in positions)
    tangent = tangents if isinstance(wrt, tuple) else tangents[0]
    value, dvalue = srcgrad.jvp(fun, wrt=wrt, jit=jit)(*args, tangent)
    close(value, fun(*args), rtol=1e-10, atol=1e-12)
    close(dvalue, fd_jvp(fun, args, positions, tangents), rtol=1e-6, atol=1e-8)


# ---- forward against reverse: the dot-product test ----


def dot_params():
    for case_id, fun, args, pos, numba in H.DOT_CASES:
        for jit in ([True, False] if numba else [False]):
            yield pytest.param(fun, args, pos, jit,
                               id=f"{case_id}-{'numba' if jit else 'python'}")


@pytest.mark.parametrize("fun,args,pos,jit", list(dot_params()))
def test_dot_product_jvp_against_vjp(fun, args, pos, jit, rng):
    value, pullback = srcgrad.vjp(fun, wrt=pos, jit=jit)(*args)
    jvp = srcgrad.jvp(fun, wrt=pos, jit=jit)
    for _ in range(3):  # one tape, many cotangents
        v = random_like(args[pos], rng)
        u = rng.normal(size=np.shape(value))
        primal, jv = jvp(*args, v)
        close(primal, value, rtol=1e-12, atol=1e-14)
        vjp_u = pullback(u)
        assert np.shape(vjp_u) == np.shape(args[pos])
        lhs = float(np.sum(u * jv))
        rhs = float(np.sum(vjp_u * v))
        assert lhs == pytest.approx(rhs, rel=1e-10, abs=1e-12)
        close(jv, fd_jvp(fun, args, (pos,), (v,)), rtol=1e-6, atol=1e-8)


# ---- grad(grad(f)): hand values ----


@pytest.mark.parametrize("jit", JITS)
def test_second_derivative_of_cube(jit):
    g2 = srcgrad.grad(srcgrad.grad(H.cube, jit=jit), jit=jit)
    for x in (1.0, 2.5, -0.75):
        assert g2(x) == pytest.approx(6.0 * x, rel=1e-14)


@pytest.mark.parametrize("jit", JITS)
def test_third_derivative_of_cube(jit):
    g3 = srcgrad.grad(srcgrad.grad(srcgrad.grad(H.cube, jit=jit), jit=jit), jit=jit)
    assert g3(1.0) == pytest.approx(6.0, rel=1e-14)
    assert g3(-2.0) == pytest.approx(6.0, rel=1e-14)


def test_derivatives_of_pow3():
    g = srcgrad.grad(H.pow3, jit=False)
    g2 = srcgrad.grad(g, jit=False)
    g3 = srcgrad.grad(g2, jit=False)
    assert g(2.0) == pytest.approx(12.0, rel=1e-14)
    assert g2(2.0) == pytest.approx(12.0, rel=1e-14)
    assert g3(2.0) == pytest.approx(6.0, rel=1e-14)
    assert g3(0.3) == pytest.approx(6.0, rel=1e-14)


def test_fourth_derivative_of_the_issue_example():
    """chain is x**4: 4 x**3, 12 x**2, 24 x, 24."""
    g = srcgrad.grad(H.chain, jit=False)
    g2 = srcgrad.grad(g, jit=False)
    g3 = srcgrad.grad(g2, jit=False)
    g4 = srcgrad.grad(g3, jit=False)
    assert g(3.0) == 108.0
    assert g2(3.0) == pytest.approx(108.0, rel=1e-14)
    assert g3(3.0) == pytest.approx(72.0, rel=1e-14)
    assert g4(3.0) == pytest.approx(24.0, rel=1e-14)


@pytest.mark.parametrize("jit", JITS)
def test_second_derivative_of_the_issue_example(jit):
    assert srcgrad.grad(H.chain, jit=jit)(3.0) == 108.0
    assert srcgrad.grad(srcgrad.grad(H.chain, jit=jit), jit=jit)(3.0) == pytest.approx(108.0)


def test_derivative_of_the_gradient_wrt_an_intermediate():
    """d/dx of dz/dy (= 2 y = 2 x**2) is 4 x."""
    inner = srcgrad.grad(H.chain, wrt="y", jit=False)
    assert inner(3.0) == 18.0
    assert srcgrad.grad(inner, jit=False)(3.0) == pytest.approx(12.0, rel=1e-14)


@pytest.mark.parametrize("jit", JITS)
def test_second_derivative_of_exp_sin(jit):
    g2 = srcgrad.grad(srcgrad.grad(H.exp_sin, jit=jit), jit=jit)
    for x in (0.7, -1.3, 2.0):
        want = np.exp(np.sin(x)) * (np.cos(x) ** 2 - np.sin(x))
        assert g2(x) == pytest.approx(want, rel=1e-13)


@pytest.mark.parametrize("inner,outer,k", [
    (0, 0, (0, 0)), (0, 1, (0, 1)), (1, 0, (1, 0)), (1, 1, (1, 1)),
    ("x", "y", (0, 1)), ("y", "x", (1, 0)),
])
def test_mixed_second_derivatives_of_two_var(inner, outer, k):
    x, y = 0.6, -1.1
    got = srcgrad.grad(srcgrad.grad(H.two_var, wrt=inner, jit=False), wrt=outer, jit=False)(x, y)
    assert got == pytest.approx(two_var_hessian(x, y)[k], rel=1e-13)


@pytest.mark.parametrize("jit", JITS)
def test_inner_and_outer_wrt_differ(jit):
    x, y = 0.6, -1.1
    got = srcgrad.grad(srcgrad.grad(H.two_var, wrt=0, jit=jit), wrt=1, jit=jit)(x, y)
    assert got == pytest.approx(two_var_hessian(x, y)[0, 1], rel=1e-13)


def test_outer_wrt_a_tuple():
    x, y = 0.6, -1.1
    got = srcgrad.grad(srcgrad.grad(H.two_var, wrt=0, jit=False), wrt=(0, 1), jit=False)(x, y)
    assert isinstance(got, tuple) and len(got) == 2
    hess = two_var_hessian(x, y)
    assert got[0] == pytest.approx(hess[0, 0], rel=1e-13)
    assert got[1] == pytest.approx(hess[0, 1], rel=1e-13)


@pytest.mark.parametrize("jit", JITS)
def test_outer_wrt_an_array(jit):
    """grad(grad(f, wrt=0), wrt=1)(x, w) with x scalar and w an array: w's shape."""
    x, w = 0.7, H.X4
    got = srcgrad.grad(srcgrad.grad(H.mixed, wrt=0, jit=jit), wrt=1, jit=jit)(x, w)
    want = 2.0 * w * np.cos(x * w) - x * w * w * np.sin(x * w) + 2.0 * x
    close(got, want, rtol=1e-13, atol=1e-15)
    # and against differences of the hand-written inner gradient
    def inner(x, w):
        return np.sum(w * w * np.cos(x * w)) + 2.0 * x * np.sum(w)
    close(got, fd_jacobian(inner, (x, w), 1), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("jit", JITS)
def test_power_loop_second_derivative(jit):
    g2 = srcgrad.grad(srcgrad.grad(H.power_loop, jit=jit), jit=jit)
    for x, n in [(1.2, 5), (0.8, 3), (-1.5, 4), (2.0, 1), (2.0, 0)]:
        assert g2(x, n) == pytest.approx(n * (n - 1) * x ** (n - 2) if n >= 2 else 0.0,
                                         rel=1e-13, abs=1e-15)


# ---- grad(grad(f)) through annotations ----


@pytest.mark.parametrize("jit", JITS)
def test_stop_gradient_second_derivative_is_zero(jit):
    g = srcgrad.grad(H.self_stopped, jit=jit)
    g2 = srcgrad.grad(srcgrad.grad(H.self_stopped, jit=jit), jit=jit)
    for x in (0.5, -2.0, 3.0):
        assert g(x) == pytest.approx(x, rel=1e-15)
        assert g2(x) == 0.0


def test_stop_gradient_in_a_product_second_derivative():
    g2 = srcgrad.grad(srcgrad.grad(H.cube_stopped, jit=False), jit=False)
    for x in (1.5, -0.7):
        assert srcgrad.grad(H.cube_stopped, jit=False)(x) == pytest.approx(3.0 * x ** 3)
        assert g2(x) == pytest.approx(6.0 * x * x, rel=1e-14)


# ---- grad(grad(f)) through loops and branches, against second differences ----


def second_params():
    for case_id, fun, args, numba in H.SECOND_CASES:
        for jit in ([True, False] if numba else [False]):
            yield pytest.param(fun, args, jit, id=f"{case_id}-{'numba' if jit else 'python'}")


@pytest.mark.parametrize("fun,args,jit", list(second_params()))
def test_second_derivative_against_differences(fun, args, jit):
    got = srcgrad.grad(srcgrad.grad(fun, jit=jit), jit=jit)(*args)
    assert np.ndim(got) == 0
    assert float(got) == pytest.approx(fd_second(fun, args), rel=1e-6, abs=1e-7)


# ---- hessian ----


@pytest.mark.parametrize("jit", JITS)
def test_hessian_of_a_scalar_is_a_scalar(jit):
    got = srcgrad.hessian(H.cube, jit=jit)(2.0)
    assert np.ndim(got) == 0 and float(got) == pytest.approx(12.0, rel=1e-15)


@pytest.mark.parametrize("jit", JITS)
def test_hessian_of_two_var_by_hand(jit):
    p = np.array([0.6, -1.1])
    got = srcgrad.hessian(H.two_var_packed, jit=jit)(p)
    close(got, two_var_hessian(*p), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("wrt,k", [(0, (0, 0)), (1, (1, 1)), ("x", (0, 0)), ("y", (1, 1))])
def test_hessian_wrt_one_scalar_argument(wrt, k):
    got = srcgrad.hessian(H.two_var, wrt=wrt, jit=False)(0.6, -1.1)
    assert float(got) == pytest.approx(two_var_hessian(0.6, -1.1)[k], rel=1e-13)


def test_hessian_of_a_quadratic_is_constant():
    got = srcgrad.hessian(H.sum_squares, jit=False)(H.X4)
    close(got, 2.0 * np.eye(4), rtol=0, atol=1e-15)


@pytest.mark.parametrize("jit", JITS)
def test_hessian_of_rosenbrock_loop_by_hand(jit):
    got = srcgrad.hessian(H.rosenbrock, jit=jit)(H.X6)
    close(got, rosenbrock_hessian(H.X6), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("wrt,pos,jit", [
    pytest.param(0, 0, True, id="p-numba"), pytest.param(0, 0, False, id="p-python"),
    pytest.param("s", 1, False, id="s-python"), pytest.param("p", 0, False, id="p-name-python"),
])
def test_hessian_of_the_rk4_pendulum(wrt, pos, jit):
    args = (H.P_PEND, H.S_PEND, H.DT_PEND, H.STEPS_PEND)
    got = srcgrad.hessian(H.pendulum, wrt=wrt, jit=jit)(*args)
    n = np.size(args[pos])
    assert got.shape == (n, n)
    close(got, cs_hessian(H.pendulum, args, pos), rtol=1e-7, atol=1e-9)
    close(got, got.T, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("jit", JITS)
def test_hessian_of_an_mlp_loss(jit):
    got = srcgrad.hessian(H.mlp_loss, jit=jit)(*H.MLP_ARGS)
    assert got.shape == (3, 4, 3, 4)
    close(got, cs_hessian(H.mlp_loss, H.MLP_ARGS, 0), rtol=1e-7, atol=1e-9)


def test_hessian_of_the_mlp_loss_wrt_the_bias():
    got = srcgrad.hessian(H.mlp_loss, wrt="b", jit=False)(*H.MLP_ARGS)
    assert got.shape == (4, 4)
    close(got, cs_hessian(H.mlp_loss, H.MLP_ARGS, 1), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("fun,args,pos", [
    (H.jv_continue, (H.X6,), 0),
    (H.jv_nested, (H.X4, np.array([0.5, -1.3, 0.8])), 1),
    (H.jv_nested, (H.X4, np.array([0.5, -1.3, 0.8])), 0),
], ids=["continue", "nested-y", "nested-x"])
def test_hessian_of_loops_against_second_differences(fun, args, pos):
    got = srcgrad.hessian(fun, wrt=pos, jit=False)(*args)
    close(got, fd_hessian(fun, args, pos), rtol=1e-5, atol=1e-6)


# ---- hvp ----


@pytest.mark.parametrize("jit", JITS)
def test_hvp_of_rosenbrock_by_hand(jit, rng):
    f = srcgrad.hvp(H.rosenbrock, jit=jit)
    for _ in range(2):
        v = rng.normal(size=6)
        close(f(H.X6, v), rosenbrock_hessian(H.X6) @ v, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("jit", JITS)
def test_hvp_of_the_rk4_pendulum(jit, rng):
    args = (H.P_PEND, H.S_PEND, H.DT_PEND, H.STEPS_PEND)
    v = rng.normal(size=3)
    got = srcgrad.hvp(H.pendulum, jit=jit)(*args, v)
    assert got.shape == (3,)
    close(got, cs_hvp(H.pendulum, args, 0, v), rtol=1e-7, atol=1e-9)
    close(got, cs_hessian(H.pendulum, args, 0) @ v, rtol=1e-7, atol=1e-9)


def test_hvp_equals_hessian_times_v(rng):
    args = (H.P_PEND, H.S_PEND, H.DT_PEND, H.STEPS_PEND)
    hess = srcgrad.hessian(H.pendulum, wrt="s", jit=False)(*args)
    hvp = srcgrad.hvp(H.pendulum, wrt="s", jit=False)
    for _ in range(3):
        v = rng.normal(size=2)
        close(hvp(*args, v), hess @ v, rtol=1e-10, atol=1e-12)
        close(hvp(*args, v), cs_hvp(H.pendulum, args, 1, v), rtol=1e-7, atol=1e-9)


def test_hvp_of_the_mlp_loss_has_the_weights_shape(rng):
    V = rng.normal(size=(3, 4))
    got = srcgrad.hvp(H.mlp_loss, jit=False)(*H.MLP_ARGS, V)
    assert got.shape == (3, 4)
    want = np.tensordot(cs_hessian(H.mlp_loss, H.MLP_ARGS, 0), V, axes=2)
    close(got, want, rtol=1e-7, atol=1e-9)
    close(got, cs_hvp(H.mlp_loss, H.MLP_ARGS, 0, V), rtol=1e-7, atol=1e-9)


def two_layer(W1, W2, x, y):
    h = np.tanh(x @ W1)
    r = h @ W2 - y
    return np.sum(r * r)


@pytest.mark.parametrize("jit", JITS)
def test_hvp_through_joint_products(jit, rng):
    # W2 is thin (48 x 2): the generated code computes h @ W2 with its tangent, reading h
    # once, and the tangent of h's adjoint r @ W2.T as one product of thin operands
    args = (rng.normal(size=(5, 48)) * 0.3, rng.normal(size=(48, 2)) * 0.3,
            rng.normal(size=(64, 5)), rng.normal(size=(64, 2)))
    f = srcgrad.hvp(two_layer, wrt=(0, 1), jit=jit)
    for call in ("matmul_jvp(h, W2,", "matmul_lhs_grad_jvp(", "= matmul_rhs_grad_tangent("):
        assert call in f.source
    v = (rng.normal(size=(5, 48)), rng.normal(size=(48, 2)))
    got = f(*args, v)
    for k in (0, 1):
        want = fd_jvp(lambda *a, k=k: cs_grad(two_layer, a, k), args, (0, 1), v, h=1e-5)
        close(got[k], want, rtol=1e-7, atol=1e-9)


@pytest.mark.compiled
@pytest.mark.skipif(bool(os.environ.get("SRCGRAD_DISABLE_JIT")), reason="compiles loops")
def test_python_form_of_a_compiled_hvp_runs_the_thin_product_loop(rng, monkeypatch):
    # once a transform has compiled, its Python form (which jit="auto" may pick) computes
    # h @ W2 with its tangent, and the tangent of W2's adjoint, in products' compiled
    # loops; under jit=False it never does (compiling in the foreground: in the
    # background, a second Python form has the loops, test_background.py)
    monkeypatch.setenv("SRCGRAD_BACKGROUND", "0")
    calls = []

    def counted(name):
        loop = getattr(products, name)
        return lambda *x: calls.append(name) or loop(*x)
    for name in ("_jvp_rows", "_grad_cols"):
        monkeypatch.setattr(products, name, counted(name))
    args = (rng.normal(size=(5, 48)) * 0.3, rng.normal(size=(48, 2)) * 0.3,
            rng.normal(size=(64, 5)), rng.normal(size=(64, 2)))
    v = (rng.normal(size=(5, 48)), rng.normal(size=(48, 2)))
    srcgrad.hvp(two_layer, wrt=(0, 1), jit=False)(*args, v)
    assert not calls
    f = srcgrad.hvp(two_layer, wrt=(0, 1))
    for _ in range(3):
        f(*args, v)
    got = f.py_func(*args, *v)
    assert set(calls) == {"_jvp_rows", "_grad_cols"}
    for k in (0, 1):
        want = fd_jvp(lambda *a, k=k: cs_grad(two_layer, a, k), args, (0, 1), v, h=1e-5)
        close(got[k], want, rtol=1e-7, atol=1e-9)


def biased_tanh(W, b, x):
    a = x @ W + b
    h = np.tanh(a)
    return np.sum(h * h * a)


@pytest.mark.parametrize("jit", JITS)
def test_hvp_through_kernels_that_sum(jit, rng):
    # the gradient's kernel returns its value and its sums to the bias's shape (da, db =
    # da_fused_1(...)); the hvp differentiates it inlined, and its own kernels sum again
    assert "da, d_t1, db = da_fused_1(" in srcgrad.grad(biased_tanh, wrt=(0, 1)).source
    args = (rng.normal(size=(3, 4)) * 0.5, rng.normal(size=4), rng.normal(size=(5, 3)))
    f = srcgrad.hvp(biased_tanh, wrt=(0, 1), jit=jit)
    assert "unbroadcast(" in f.source.split("@elementwise", 1)[1], f.source
    v = (rng.normal(size=(3, 4)), rng.normal(size=4))
    got = f(*args, v)
    for k in (0, 1):
        want = fd_jvp(lambda *a, k=k: cs_grad(biased_tanh, a, k), args, (0, 1), v, h=1e-5)
        close(got[k], want, rtol=1e-7, atol=1e-9)


def sin_x2(x):
    return np.sum(np.sin(x) * x ** 2)


@pytest.mark.parametrize("jit", JITS)
def test_jvp_of_an_hvp_by_hand(jit):
    # f = sum(sin(x) x**2): second derivative (2 - x**2) sin x + 4 x cos x, third
    # (6 - x**2) cos x - 6 x sin x, entry by entry
    x, v, u = np.array([0.3, -1.2, 0.7]), np.array([1.0, 0.5, -2.0]), np.array([0.2, 0.1, -0.4])
    hv, dhv = srcgrad.jvp(srcgrad.hvp(sin_x2, jit=jit), jit=jit)(x, v, u)
    close(hv, ((2 - x ** 2) * np.sin(x) + 4 * x * np.cos(x)) * v, rtol=1e-13)
    close(dhv, ((6 - x ** 2) * np.cos(x) - 6 * x * np.sin(x)) * v * u, rtol=1e-13)
    with pytest.raises(TypeError, match="then the tangents of"):
        srcgrad.jvp(srcgrad.hvp(sin_x2, jit=jit), jit=jit)(x, u)  # no tangent for the hvp


def test_third_order_through_joint_products(rng):
    # jvp of the hvp: its joint calls read as value and tangent, with rules of their own
    x, y = rng.normal(size=(64, 5)), rng.normal(size=(64, 2))
    w = (rng.normal(size=(5, 48)) * 0.3, rng.normal(size=(48, 2)) * 0.3)
    v = (rng.normal(size=(5, 48)), rng.normal(size=(48, 2)))
    u = (rng.normal(size=(5, 48)), rng.normal(size=(48, 2)))
    hvp = srcgrad.hvp(two_layer, wrt=(0, 1), jit=False)
    assert "matmul_rhs_grad_tangent(" in hvp.source and "matmul_jvp(" in hvp.source
    _, got = srcgrad.jvp(hvp, wrt=(0, 1), jit=False)(*w, x, y, v, u)

    def hv(W1, W2):  # H v by differences of the complex-step gradient
        args = (W1, W2, x, y)
        return [fd_jvp(lambda *a, k=k: cs_grad(two_layer, a, k), args, (0, 1), v, h=1e-5)
                for k in (0, 1)]
    e = 1e-3  # five-point differences along u
    f = {s: hv(w[0] + s * e * u[0], w[1] + s * e * u[1]) for s in (-2, -1, 1, 2)}
    for k in (0, 1):
        want = (f[-2][k] - 8.0 * f[-1][k] + 8.0 * f[1][k] - f[2][k]) / (12.0 * e)
        close(got[k], want, rtol=1e-6, atol=1e-7)


def products_tangent(a, b, da, db):
    return np.sum(np.sin(matmul_tangent(a, b, da, db)))


def lhs_tangent(dy, a, b, ddy, db):
    return np.sum(np.sin(matmul_lhs_grad_tangent(dy, a, b, ddy, db)))


def rhs_tangent(dy, a, b, ddy, da):
    return np.sum(np.sin(matmul_rhs_grad_tangent(dy, a, b, ddy, da)))


@pytest.mark.parametrize("fun,shapes", [
    (products_tangent, [(6, 4), (4, 3), (6, 4), (4, 3)]),
    (lhs_tangent, [(6, 3), (6, 4), (4, 3), (6, 3), (4, 3)]),
    (rhs_tangent, [(6, 3), (6, 4), (4, 3), (6, 3), (6, 4)]),
], ids=["matmul_tangent", "matmul_lhs_grad_tangent", "matmul_rhs_grad_tangent"])
def test_tangent_rules_of_the_products_tangents(fun, shapes, rng):
    # what third order differentiates (the second result of a joint call), along every
    # argument (a zero tangent along a of matmul_lhs_grad, b of matmul_rhs_grad: only
    # their shapes are read); the helpers are called here as a user would
    args = tuple(rng.normal(size=s) for s in shapes)
    for k, s in enumerate(shapes):
        t = rng.normal(size=s)
        _, got = srcgrad.jvp(fun, wrt=k, jit=False)(*args, t)
        close(got, fd_jvp(fun, args, (k,), (t,)), rtol=1e-7, atol=1e-9)


def test_hvp_wrt_a_scalar():
    got = srcgrad.hvp(H.two_var, wrt=1, jit=False)(0.6, -1.1, 2.0)
    assert float(got) == pytest.approx(2.0 * two_var_hessian(0.6, -1.1)[1, 1], rel=1e-13)


def test_hvp_of_a_branching_loop(rng):
    v = rng.normal(size=6)
    got = srcgrad.hvp(H.jv_continue, jit=False)(H.X6, v)
    close(got, fd_hessian(H.jv_continue, (H.X6,), 0) @ v, rtol=1e-5, atol=1e-6)


# ---- jacobian ----

TALL_ARGS = (np.array([0.3, -0.8]), np.linspace(0.5, 2.0, 6))
WIDE_ARGS = (H.X6, np.random.default_rng(3).normal(size=(2, 6)))


@pytest.mark.parametrize("jit", JITS)
def test_jacobian_more_outputs_than_inputs(jit):
    got = srcgrad.jacobian(H.tall, jit=jit)(*TALL_ARGS)
    assert got.shape == (6, 2)
    x, c = TALL_ARGS
    want = np.stack([c * np.cos(x[0] * c) + x[1], 2.0 * x[1] * c + x[0]], axis=1)
    close(got, want, rtol=1e-13, atol=1e-15)
    close(got, fd_jacobian(H.tall, TALL_ARGS, 0))


@pytest.mark.parametrize("jit", JITS)
def test_jacobian_fewer_outputs_than_inputs(jit):
    got = srcgrad.jacobian(H.wide, jit=jit)(*WIDE_ARGS)
    assert got.shape == (2, 6)
    close(got, fd_jacobian(H.wide, WIDE_ARGS, 0))


@pytest.mark.parametrize("fun,args,wrt,shape", [
    (H.wide_writes, (H.X6,), 0, (2, 6)),
    (H.tall, TALL_ARGS, "c", (6, 6)),
    (H.jv_range, (H.X4, 5), 0, (4, 4)),
    (H.jv_writes, (H.X6,), 0, (6, 6)),
    (H.jv_heat, (np.sin(np.linspace(0.0, 3.0, 7)), 0.2, 4), 0, (7, 7)),
    (H.jv_heat, (np.sin(np.linspace(0.0, 3.0, 7)), 0.2, 4), "alpha", (7,)),
    (H.jv_outer, (H.X4,), 0, (4, 4, 4)),
    (H.op_matmul_t, (H.M34[:2], H.M34[1:]), 0, (2, 2, 2, 4)),
    (H.jv_rnn, (H.M34[:, :3] * 0.5, H.M34[:, 1:]), 0, (3, 3, 3)),
    (H.curve, (0.4,), 0, (3,)),
    (H.rosenbrock, (H.X6,), 0, (6,)),
], ids=["wide_writes", "tall-name", "range-square", "writes", "heat", "heat-alpha", "outer",
        "matmul", "rnn", "scalar-input", "scalar-output"])
def test_jacobian_against_differences(fun, args, wrt, shape):
    got = srcgrad.jacobian(fun, wrt=wrt, jit=False)(*args)
    assert np.shape(got) == shape
    [pos] = positions_of(fun, wrt)
    close(got, fd_jacobian(fun, args, pos), rtol=1e-6, atol=1e-8)


# ---- errors ----


@pytest.mark.parametrize("jit", JITS)
def test_second_derivative_needs_a_scalar_inner_gradient(jit):
    with pytest.raises(SrcgradError) as info:
        srcgrad.grad(srcgrad.grad(H.sum_squares, jit=jit), jit=jit)(H.X4)
    assert str(info.value)


@pytest.mark.parametrize("jit", JITS)
def test_jvp_tangent_of_the_wrong_shape(jit):
    with pytest.raises((SrcgradError, ValueError)):
        srcgrad.jvp(H.op_trig, jit=jit)(H.X6, np.ones(4))


@pytest.mark.parametrize("transform", [
    lambda: srcgrad.jvp(H.two_var, wrt="q", jit=False)(0.6, -1.1, 1.0),
    lambda: srcgrad.hessian(H.two_var, wrt="q", jit=False)(0.6, -1.1),
    lambda: srcgrad.hvp(H.two_var, wrt="q", jit=False)(0.6, -1.1, 1.0),
    lambda: srcgrad.jacobian(H.two_var, wrt="q", jit=False)(0.6, -1.1),
    lambda: srcgrad.grad(srcgrad.grad(H.two_var, wrt="q", jit=False), jit=False)(0.6, -1.1),
    lambda: srcgrad.grad(srcgrad.grad(H.two_var, jit=False), wrt="q", jit=False)(0.6, -1.1),
    lambda: srcgrad.jvp(H.two_var, wrt=("x", "q"), jit=False)(0.6, -1.1, (1.0, 1.0)),
], ids=["jvp", "hessian", "hvp", "jacobian", "grad-grad-inner", "grad-grad-outer",
        "jvp-tuple"])
def test_wrt_naming_nothing(transform):
    with pytest.raises(SrcgradError) as info:
        transform()
    assert "q" in str(info.value)


# ---- generated source ----


@pytest.mark.parametrize("make", [
    lambda: srcgrad.jvp(H.jv_writes, jit=False),
    lambda: srcgrad.jvp(H.pendulum, wrt=(0, 1), jit=False),
    lambda: srcgrad.hvp(H.rosenbrock, jit=False),
    lambda: srcgrad.grad(srcgrad.grad(H.cube, jit=False), jit=False),
], ids=["jvp", "jvp-tuple", "hvp", "grad-grad"])
def test_source_is_python(make):
    source = make().source
    assert isinstance(source, str) and source.strip() and "def " in source
    compile(source, "<generated>", "exec")


# ---- a gradient called inside the function differentiated (issue 26 #11) ----


def inner_product(x, y):
    return x * x * y


inner_product_grad = srcgrad.grad(inner_product, wrt="x")


def uses_a_gradient(y):
    return inner_product_grad(1.5, y) * y


def potential(p, q):
    return np.sum(p ** 2) * np.sum(np.sin(q)) + np.dot(p, q)


potential_force = srcgrad.grad(potential, wrt=(0, 1))
potential_value_and_grad = srcgrad.value_and_grad(potential)


def uses_gradients_of_arrays(p, q):
    fp, fq = potential_force(p, q)
    total = 0.0
    for _ in range(2):
        v, g = potential_value_and_grad(q, p)
        total = total + v * np.sum(g)
    return np.sum(fp ** 2) + np.sum(fq * q) + total


@pytest.mark.parametrize("jit", JITS)
def test_a_gradient_inside_the_function_differentiated(jit):
    # outer(y) = d/dx (x^2 y) at x = 1.5, times y = 3 y^2: 12 at y = 2, second derivative 6
    assert srcgrad.grad(uses_a_gradient, jit=jit)(2.0) == pytest.approx(12.0, rel=1e-12)
    value, slope = srcgrad.jvp(uses_a_gradient, jit=jit)(2.0, 1.0)
    assert (value, slope) == pytest.approx((12.0, 12.0), rel=1e-12)
    assert srcgrad.hessian(uses_a_gradient, jit=jit)(2.0) == pytest.approx(6.0, rel=1e-9)
    # arrays, a tuple of gradients, value_and_grad, in a loop: against differences of f
    p, q = np.array([0.3, -0.5, 0.8]), np.array([1.1, 0.2, -0.4])
    grads = srcgrad.grad(uses_gradients_of_arrays, wrt=(0, 1), jit=jit)(p, q)
    for k, g in enumerate(grads):
        for i in range(3):
            e = np.zeros(3)
            e[i] = 1.0
            want = fd_jvp(uses_gradients_of_arrays, [p, q], (k,), (e,))
            assert g[i] == pytest.approx(float(want), rel=1e-6, abs=1e-8)


inner_product_jvp = srcgrad.jvp(inner_product)


def uses_a_jvp(x):
    return inner_product_jvp(x, 2.0, 1.0)[1]


def test_a_transform_that_cannot_be_differentiated_inside_says_so():
    with pytest.raises(srcgrad.MissingRule, match="only grad and value_and_grad"):
        srcgrad.grad(uses_a_jvp, jit=False)(1.0)


def _sum_of_a_list(x):
    p = [x * 2.0, np.sin(x)]
    return np.sum(sum(p) ** 2)


def test_hvp_through_the_sum_of_a_list(jit):
    # the gradient's `sum_items_grad` (the adjoint of Python's sum of a list) had no
    # tangent: hvp, hessian and grad of grad of a function summing a list were refused
    x, v = np.array([0.5, 1.2]), np.array([1.0, -0.5])
    got = srcgrad.hvp(_sum_of_a_list, jit=jit)(x, v)
    # by hand: f = sum((2x + sin x)^2), a diagonal Hessian
    # 2 ((2 + cos x)^2 - (2x + sin x) sin x)
    diag = 2 * ((2 + np.cos(x)) ** 2 - (2 * x + np.sin(x)) * np.sin(x))
    np.testing.assert_allclose(got, diag * v, rtol=1e-12)
    np.testing.assert_allclose(srcgrad.hessian(_sum_of_a_list, jit=jit)(x), np.diag(diag),
                               rtol=1e-12)


def _three_terms_squared(x):
    return np.sum((np.cos(x) + np.exp(x) + np.sin(x + 1.0) * 0.2) ** 2)


def test_hvp_of_a_gradient_that_adds_in_place_into_a_new_array(jit):
    # the gradient's code ends `dx = d_t4; dx = dx + d_t2 * _t2; dx += ...`: dx's last
    # binding is the sum's new array, which no other name shares, but hvp refused the
    # `+=` as a change of the array `dx = d_t4` shared (`inplace._fresh`)
    x, v = np.array([0.3, -0.5, 1.2]), np.array([1.0, 0.5, -0.2])
    # by hand: g = cos x + exp x + 0.2 sin(x + 1), f = sum(g^2): H = diag 2 (g'^2 + g g'')
    g = np.cos(x) + np.exp(x) + 0.2 * np.sin(x + 1.0)
    g1 = -np.sin(x) + np.exp(x) + 0.2 * np.cos(x + 1.0)
    g2 = -np.cos(x) + np.exp(x) - 0.2 * np.sin(x + 1.0)
    got = srcgrad.hvp(_three_terms_squared, jit=jit)(x, v)
    np.testing.assert_allclose(got, 2 * (g1 ** 2 + g * g2) * v, rtol=1e-12)
