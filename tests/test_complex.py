"""Complex inputs and forward mode (the rules' sweep over real inputs is in
tests/test_rules_complex.py). The gradient of a real f of a complex z = x + iy follows
JAX: df/dx - i df/dy, checked against central differences of the real and imaginary
parts taken apart.
"""

import numpy as np
import pytest
from fd import slope

import srcgrad
from srcgrad.checks import numerical_grad


def complex_grad(fun, args, position):
    """df/dx - i df/dy by central differences, for the complex argument at `position`."""
    z = args[position]

    def at(x, y):
        moved = list(args)
        moved[position] = x + 1j * y
        return fun(*moved)

    return (numerical_grad(lambda x: at(x, z.imag), (z.real,), 0)
            - 1j * numerical_grad(lambda y: at(z.real, y), (z.imag,), 0))


def squared_modulus(z):
    x, y = np.real(z), np.imag(z)
    return np.sum(x ** 2 + y ** 2)


def test_jax_convention_by_hand(jit):
    # |z|^2 = x^2 + y^2: 2x - 2iy = 2 conj(z), JAX's 6-8j at 3+4j
    g = srcgrad.grad(squared_modulus, jit=jit)(np.array([3.0 + 4.0j, -1.0j]))
    np.testing.assert_allclose(g, [6.0 - 8.0j, 2.0j], rtol=1e-15)


def modulus_of_a_real_scaled(a):
    return np.sum(np.abs(a * (1 + 2j)))


def test_a_real_loss_of_a_complex_value_by_hand(jit):
    # |a (1 + 2i)| = sqrt(5) |a|; the gradient is real, as its argument
    g = srcgrad.grad(modulus_of_a_real_scaled, jit=jit)(np.array([0.3, -0.7]))
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, [np.sqrt(5.0), -np.sqrt(5.0)], rtol=1e-15)


def mixed(z, a):
    w = np.exp(1j * a) * z + np.conj(z) * 0.5
    return np.sum(np.abs(w) * a + np.angle(w + 2.0) + np.real(w * w) - np.imag(z / (w + 3.0)))


def fourier_loss(z, a):
    f = np.fft.fft(z * a, n=5)
    return np.sum(np.abs(f) ** 2) + np.sum(np.fft.irfft(z, n=6) * a[:6] ** 2)


def loop_loss(z, a):
    t = 0.0
    for i in range(z.shape[0]):
        t = t + np.abs(z[i] * a[i] + 1j) ** 2 * a[i]
    return t


def matrix_loss(z, a):
    m = z[:3, None] * a[None, 3:] + np.diag(a[:3]) * (1 + 0.5j)
    return np.abs(np.linalg.det(m)) + np.sum(np.abs(np.linalg.inv(m) @ z[3:]))


@pytest.mark.parametrize("fun", [mixed, fourier_loss, loop_loss, matrix_loss])
def test_complex_and_real_inputs_against_differences(fun):
    rng = np.random.default_rng(3)
    z = rng.uniform(-1, 1, 6) + 1j * rng.uniform(-1, 1, 6)
    a = rng.uniform(0.5, 1.5, 6)
    gz, ga = srcgrad.grad(fun, wrt=(0, 1), jit=False)(z, a)
    np.testing.assert_allclose(gz, complex_grad(fun, (z, a), 0), rtol=1e-5, atol=1e-7)
    assert ga.dtype == np.float64
    np.testing.assert_allclose(ga, numerical_grad(fun, (z, a), 1), rtol=1e-5, atol=1e-7)


def test_compiled_complex_inputs():
    # numba: complex128 adjoints, the slopes' loops, np.fft in object mode
    rng = np.random.default_rng(4)
    z = rng.uniform(-1, 1, 6) + 1j * rng.uniform(-1, 1, 6)
    a = rng.uniform(0.5, 1.5, 6)
    for fun in (mixed, fourier_loss):
        gz, ga = srcgrad.grad(fun, wrt=(0, 1), jit=True)(z, a)
        np.testing.assert_allclose(gz, complex_grad(fun, (z, a), 0), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(ga, numerical_grad(fun, (z, a), 1), rtol=1e-5, atol=1e-7)


def test_vjp_and_value_and_grad_of_a_real_input_are_real(jit):
    a = np.array([0.3, -0.7])
    value, grad = srcgrad.value_and_grad(modulus_of_a_real_scaled, jit=jit)(a)
    assert value == pytest.approx(np.sqrt(5.0))
    assert grad.dtype == np.float64
    _, pullback = srcgrad.vjp(modulus_of_a_real_scaled, jit=jit)(a)
    np.testing.assert_allclose(pullback(2.0), 2.0 * np.sqrt(5.0) * np.sign(a), rtol=1e-15)


@pytest.mark.parametrize("fun", [mixed, fourier_loss])
def test_forward_mode(fun, jit):
    # along a complex tangent of z and a real one of a
    rng = np.random.default_rng(5)
    z = rng.uniform(-1, 1, 6) + 1j * rng.uniform(-1, 1, 6)
    a = rng.uniform(0.5, 1.5, 6)
    tz = rng.uniform(-1, 1, 6) + 1j * rng.uniform(-1, 1, 6)
    ta = rng.uniform(-1, 1, 6)
    value, dvalue = srcgrad.jvp(fun, wrt=(0, 1), jit=jit)(z, a, (tz, ta))
    assert value == pytest.approx(fun(z, a), rel=1e-12)
    assert dvalue == pytest.approx(slope(fun, (z, a), (tz, ta)), rel=1e-6)


def cubed_modulus(z):
    return np.sum(np.abs(z) ** 3)


def test_second_order_through_a_complex_slope_is_refused():
    with pytest.raises(srcgrad.SrcgradError, match="second derivative"):
        srcgrad.hvp(cubed_modulus, jit=False)(np.array([1.0 + 1.0j]), np.array([1.0 + 0j]))


def test_second_order_of_abs_of_real_values(jit):
    # the slopes' rules: zero at real values (d^2/da^2 |a|^3 = 6 |a|)
    a = np.array([0.5, -2.0])
    got = srcgrad.hvp(cubed_modulus, jit=jit)(a, np.ones(2))
    np.testing.assert_allclose(got, 6.0 * np.abs(a), rtol=1e-12)


def complex_sum(z):
    return np.sum(z * z)


def complex_weighted_sum(a, w):
    return np.mean(a * w)


def test_a_complex_full_reduction_is_refused(jit):
    # grad computes no value for a sum or mean; complex arguments are checked through
    # value_and_grad (before, grad gave the gradient of the real part of the result)
    z = np.array([1.0 + 1.0j])
    for transform in (srcgrad.grad, srcgrad.value_and_grad):
        with pytest.raises(srcgrad.SrcgradError, match="complex"):
            transform(complex_sum, jit=jit)(z)
        with pytest.raises(srcgrad.SrcgradError, match="complex"):
            transform(complex_weighted_sum, jit=jit)(np.array([0.5]), z)


def product_modulus(w, z):
    return np.abs(w @ z)


def test_vjp_of_a_real_input_through_a_complex_product_is_real():
    # a @ with a complex operand gives the real w a complex cotangent: its real part counts
    w, z = np.array([[0.5, -1.0], [2.0, 0.3]]), np.array([1.0 + 1.0j, -0.5j])
    _, pullback = srcgrad.vjp(product_modulus, jit=False)(w, z)
    u = np.array([0.7, -1.3])
    got = pullback(u)
    assert got.dtype == np.float64
    want = numerical_grad(lambda w: u @ product_modulus(w, z), (w,), 0)
    np.testing.assert_allclose(got, want, rtol=1e-6)


# ---- a real value's cotangent is real where it is made (passes.reverse, real_part) ----

def outer_seen(a, b, seen):
    with srcgrad.grad_of(a) as da:
        seen.append(da)
    z = np.outer(a, b * (1 + 2j))
    return np.sum(np.abs(z) ** 2)


def test_a_grad_of_block_sees_a_real_cotangent():
    # np.outer with a complex operand: no unbroadcast takes the real part of da there (as
    # Python: the block appends to a list; compiled, tree_loss's @ takes the same path)
    a, b = np.array([1.0, 2.0]), np.array([0.5, -1.0, 3.0])
    seen = []
    ga, gb = srcgrad.grad(outer_seen, wrt=(0, 1), jit=False)(a, b, seen)
    assert seen[-1].dtype == np.float64
    np.testing.assert_allclose(seen[-1], ga, rtol=1e-15)
    np.testing.assert_allclose(ga, numerical_grad(lambda a, b: outer_seen(a, b, []), (a, b), 0),
                               rtol=1e-6)
    np.testing.assert_allclose(gb, numerical_grad(lambda a, b: outer_seen(a, b, []), (a, b), 1),
                               rtol=1e-6)


def doubled(x):
    return 2.0 * x


SEEN_BY_RULE = []


@srcgrad.adjoint(doubled)
def _doubled_grad(dy, y, x):
    SEEN_BY_RULE.append(dy)
    return 2.0 * dy


def scaled_through_a_rule(x, z):
    s = doubled(x)
    return np.sum(np.abs(np.outer(s, z)) ** 2)


def test_a_users_rule_sees_a_real_cotangent_of_a_complex_argument():
    # z is a complex argument: np.outer gives the real s a cotangent that the rule reads
    SEEN_BY_RULE.clear()
    x, z = np.array([0.75, -0.5]), np.array([1.0 - 2.0j, 0.5j])
    g = srcgrad.grad(scaled_through_a_rule, jit=False)(x, z)
    assert SEEN_BY_RULE[-1].dtype == np.float64
    np.testing.assert_allclose(g, 8.0 * x * np.sum(np.abs(z) ** 2), rtol=1e-12)   # by hand
    np.testing.assert_allclose(g, numerical_grad(scaled_through_a_rule, (x, z), 0), rtol=1e-6)


def tree_loss(p, z):
    return np.sum(np.abs(p["w"] @ z) ** 2) + p["s"] * np.sum(np.abs(np.fft.fft(p["v"])))


def test_container_arguments_with_complex_values():
    # as Python: numba's @ takes no float and complex operands together
    rng = np.random.default_rng(6)
    p = {"w": rng.uniform(-1, 1, (2, 3)), "s": 0.5, "v": rng.uniform(-1, 1, 4)}
    z = rng.uniform(-1, 1, 3) + 1j * rng.uniform(-1, 1, 3)
    g = srcgrad.grad(tree_loss, jit=False)(p, z)
    for key in ("w", "v"):
        assert g[key].dtype == np.float64, key

        def moved(value, key=key):
            return tree_loss({**p, key: value}, z)
        np.testing.assert_allclose(g[key], numerical_grad(moved, (p[key],), 0), rtol=1e-6)
    assert g["s"] == pytest.approx(np.sum(np.abs(np.fft.fft(p["v"]))), rel=1e-12)


def outer_of_a_slice(z, a):
    return np.sum(np.abs(np.outer(z, a[1:])) ** 2)


def test_a_real_slice_in_a_product_with_a_complex_value():
    # the slice's cotangent, added into a's: before, complex (NumPy's casting error)
    z, a = np.array([1.0 + 1.0j, 0.5 - 2.0j]), np.array([0.3, -1.0, 2.0])
    g = srcgrad.grad(outer_of_a_slice, wrt=1, jit=False)(z, a)
    np.testing.assert_allclose(g, [0.0, *(2.0 * a[1:] * np.sum(np.abs(z) ** 2))], rtol=1e-12)
    np.testing.assert_allclose(g, numerical_grad(outer_of_a_slice, (z, a), 1), rtol=1e-6)
