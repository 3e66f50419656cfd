"""Real losses of complex intermediates (srcgrad/rules/complex_numbers.py and
fourier.py): the rule sweep's cases, real inputs against central differences, and what
stays refused. Complex inputs, forward mode and values by hand: tests/test_complex.py.
"""

import numpy as np
import pytest
from sweep import check, parametrize

import srcgrad
from srcgrad.checks import numerical_grad
from srcgrad.runtime.complex_numbers import (
    abs_slope,
    angle_slope,
    imag_slope,
    real_dy,
    real_values,
)

WEIGHTS = np.array([0.3, -1.2, 0.5, 2.0, 0.7, -0.4, 1.1, 0.9])


def parts(a):
    z = a * (1.5 - 0.5j) + 0.2j
    return np.sum(np.real(z) * np.imag(z) + np.angle(np.conj(z)) * a
                  + np.real(np.conjugate(z) * z) + z.real * z.imag + np.abs(z) * a)


def angle_in_degrees(a):
    return np.sum(np.angle(a + 0.5j, deg=True) * a)


def slopes(a):
    # the helpers generated code calls, called on real values (their second derivatives)
    return np.sum(real_dy(a * a, a) + abs_slope(a) * a + angle_slope(a) * a
                  + imag_slope(a) * a + real_values(a, "f") ** 2)


def fourier(a):
    f = np.fft.fft(a * (1 + 0.5j))
    g = np.fft.ifft(f * WEIGHTS[:6], n=7)
    r = np.fft.rfft(a * a)
    return (np.sum(np.abs(f) ** 2 * WEIGHTS[:6]) + np.sum(np.real(g) + np.imag(g) ** 2)
            + np.sum(np.abs(r)) + np.sum(np.fft.irfft(r * (1 - 2j)) * WEIGHTS[:6]))


def fft_keywords(n, axis, norm):
    def f(a):
        return np.sum(np.abs(np.fft.fft(a * (1 + 2j), n, axis, norm)) ** 2 * 0.7
                      + np.real(np.fft.ifft(a, n=n, axis=axis, norm=norm)) ** 2)
    return f


def rfft_keywords(n, axis, norm):
    def f(a):
        r = np.fft.rfft(a, n=n, axis=axis, norm=norm)
        return np.sum(np.imag(r) * 1.3 + np.abs(r) ** 2) + np.sum(
            np.fft.irfft(r * (1 + 1j), n=n, axis=axis, norm=norm) ** 3)
    return f


def _cases():
    rng = np.random.default_rng(20)
    a6 = rng.uniform(-2.0, 2.0, 6)
    yield "complex-parts", (np.real, np.imag, np.conj, np.conjugate, np.angle), parts, \
        (a6,), [0], True
    yield "angle-deg", (np.angle,), angle_in_degrees, (a6,), [0], False
    yield "complex-slopes", (real_dy, abs_slope, angle_slope, imag_slope, real_values), \
        slopes, (a6,), [0], True
    yield "fft", (np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft), fourier, (a6,), \
        [0], True
    m = rng.uniform(-2.0, 2.0, (5, 4))
    for n, axis, norm in [(None, -1, None), (7, 0, "ortho"), (3, 1, "forward"),
                          (6, 0, "backward"), (None, 0, "ortho")]:
        yield f"fft-{n}-{axis}-{norm}", (np.fft.fft, np.fft.ifft), \
            fft_keywords(n, axis, norm), (m,), [0], False
        yield f"rfft-{n}-{axis}-{norm}", (np.fft.rfft, np.fft.irfft), \
            rfft_keywords(n, axis, norm), (m,), [0], False


CASES = list(_cases())


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


def norm_of_complex(a):
    return np.linalg.norm(a * (1 + 2j))


def var_of_complex(a):
    return np.var(a * (1 + 1j))


def svd_of_complex(a):
    return np.sum(np.linalg.svd(np.outer(a, a) * 1j + np.eye(2), compute_uv=False))


def eigh_of_complex(a):
    w, v = np.linalg.eigh(np.outer(a, a) * (1 + 1j) + np.eye(2))
    return np.sum(w)


@pytest.mark.parametrize("fun", [norm_of_complex, var_of_complex, svd_of_complex,
                                 eigh_of_complex])
def test_rules_for_real_values_only_refuse_complex_ones(fun, jit):
    # their rules leave out the conjugates a complex value needs (before, a real input
    # through them got a wrong real gradient once its complex part was dropped)
    with pytest.raises(srcgrad.SrcgradError, match="complex"):
        srcgrad.grad(fun, jit=jit)(np.array([0.3, -0.7]))


def test_forward_mode_refuses_them_too():
    with pytest.raises(srcgrad.SrcgradError, match="complex"):
        srcgrad.jvp(var_of_complex, jit=False)(np.array([0.3, -0.7]), np.ones(2))


def abs_of_real(a):
    return np.sum(np.abs(a - 0.1) * a) + abs(a[1])


def test_abs_of_a_real_value_by_hand(jit):
    # d/da_i (|a_i - 0.1| a_i) = sign(a_i - 0.1) a_i + |a_i - 0.1|, and |a_1| adds sign(a_1)
    a = np.array([0.3, -0.7])
    g = srcgrad.grad(abs_of_real, jit=jit)(a)
    np.testing.assert_allclose(g, [0.3 + 0.2, 0.7 + 0.8 - 1.0], rtol=1e-15)


def complex_scaled_sum(a):
    return np.sum(a * (1 + 2j))


def complex_square(a):
    z = a * (1 + 2j)
    return np.sum(z * z) + 1.0


@pytest.mark.parametrize("fun", [complex_scaled_sum, complex_square])
def test_a_complex_result_is_refused_with_its_line(fun, jit):
    # gave 1+2j per entry (silently wrong: the function has no real derivative); JAX
    # refuses a complex output of grad too
    with pytest.raises(srcgrad.SrcgradError, match="complex") as info:
        srcgrad.grad(fun, jit=jit)(np.array([0.3, -0.7]))
    assert "test_rules_complex.py:" in str(info.value)
    with pytest.raises(srcgrad.SrcgradError, match="complex"):
        srcgrad.value_and_grad(fun, jit=jit)(np.array([0.3, -0.7]))


MIXING = np.array([[1.0 + 2.0j, 0.5j, 1.0], [2.0, 1.0 - 1.0j, 0.3j]])   # a global


def real_times_complex(x):
    return np.sum(np.abs(x @ MIXING) ** 2) + np.sum(np.real(x @ MIXING[:, 0]))


def test_a_real_matrix_times_a_global_complex_one(jit):
    # a global complex array makes the code complex: the real x's gradient is real (the
    # real part), and numba's @ gets operands of one dtype (runtime/matmul.py)
    x = np.array([[0.4, -1.1], [0.8, 0.3], [-0.6, 1.5]])
    g = srcgrad.grad(real_times_complex, jit=jit)
    got = g(x)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, numerical_grad(real_times_complex, (x,), 0), rtol=1e-6)
    # at x = 0 the squares give 0, and real(x @ m0) = x[:, 0] * 1 + x[:, 1] * 2
    np.testing.assert_array_equal(g(np.zeros((3, 2))), [[1.0, 2.0]] * 3)


def real_part_squared(x):
    return np.sum(np.real(x @ MIXING) ** 2)


def test_hvp_over_the_real_part_of_a_cotangent():
    # the gradient takes the real part of x's cotangent (real_part): linear, so hvp
    # differentiates it
    x, v = np.array([[0.4, -1.1], [0.8, 0.3]]), np.array([[1.0, 0.5], [-0.3, 2.0]])
    g = srcgrad.grad(real_part_squared, jit=False)
    want = (g(x + 1e-6 * v) - g(x - 1e-6 * v)) / 2e-6
    np.testing.assert_allclose(srcgrad.hvp(real_part_squared, jit=False)(x, v), want,
                               rtol=1e-6)
