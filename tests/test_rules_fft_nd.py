"""np.fft's n-dimensional transforms, its shifts and hfft/ihfft (srcgrad/rules/fourier.py):
real losses of their complex values against central differences (grad and jvp, every
keyword: s that pads and cuts, axes in any order, repeated, or one; the norms), complex
inputs (JAX's convention: df/dx - i df/dy), values by hand, and what is refused.
"""

import numpy as np
import pytest
from sweep import check, check_hvp, check_jvp, parametrize
from test_complex import complex_grad

import srcgrad
from srcgrad.checks import numerical_grad

FFT = np.fft
W3 = np.random.default_rng(70).uniform(-1.0, 1.0, (9, 9, 9))
W = W3[0]


def planes(a):
    # the two-dimensional transforms and the shifts: every one compiled once
    f = FFT.fft2(a * (1 + 0.5j))
    g = FFT.ifft2(f * W[:3, :4], s=(4, 3))
    r = FFT.rfft2(a * a)
    return (np.sum(np.abs(FFT.fftshift(f)) ** 2 * W[:3, :4]) + np.sum(np.real(g) + np.imag(g) ** 2)
            + np.sum(np.abs(r)) + np.sum(FFT.irfft2(r * (1 - 2j)) * W[:3, :4])
            + np.sum(FFT.ifftshift(a, axes=1) * W[1:4, :4]))


def volumes(a):
    # the n-dimensional transforms and hfft/ihfft
    f = FFT.fftn(a * (1 - 0.5j), axes=(1, 0))
    g = FFT.ifftn(f * W[:3, :4], s=(2, 5), axes=(0, 1), norm="ortho")
    r = FFT.rfftn(a ** 3)
    h = FFT.hfft(r, axis=0)
    return (np.sum(np.abs(f) ** 2 * W[:3, :4]) + np.sum(np.real(g) * np.imag(g))
            + np.sum(FFT.irfftn(r * (2 + 1j), s=(3, 4), axes=(0, 1)) * W[:3, :4])
            + np.sum(h * W[:4, :3])
            + np.sum(np.abs(FFT.ihfft(a, n=5)) ** 2))


def complex_n(s, axes, norm):
    def f(a):
        z = FFT.fftn(a * (1 + 2j), s, axes, norm)
        w = FFT.ifftn(a + 0.5j, s, axes, norm)
        return np.sum(np.abs(z) ** 2 * W3[:z.shape[0], :z.shape[1], :z.shape[2]]) \
            + np.sum(np.real(w) * np.imag(w) + np.real(w) ** 3)
    return f


def real_n(s, axes, norm):
    def f(a):
        r = FFT.rfftn(a, s, axes, norm)
        back = FFT.irfftn(r * (1 + 1j), s, axes, norm)
        return np.sum(np.imag(r) * 1.3 + np.abs(r) ** 2) + np.sum(back ** 3)
    return f


def two_d(s, axes, norm):
    def f(a):
        z = FFT.fft2(a, s, axes, norm)
        r = FFT.rfft2(a * a, s, axes, norm)
        return np.sum(np.abs(z) ** 3) + np.sum(np.real(FFT.ifft2(z * 1j, s, axes, norm))
                                                ** 2) \
            + np.sum(FFT.irfft2(r, s, axes, norm) * 0.7) + np.sum(np.abs(r))
    return f


def shifts(axes):
    def f(a):
        return np.sum(FFT.fftshift(a, axes) * W[:a.shape[0], :a.shape[1]] ** 2) \
            + np.sum(FFT.ifftshift(a * a, axes) * W[1:a.shape[0] + 1, :a.shape[1]])
    return f


def hermitian(n, axis, norm):
    def f(a):
        h = FFT.hfft(a * (1 - 2j), n, axis, norm)
        k = FFT.ihfft(a, n, axis, norm)
        return np.sum(h ** 2 * 0.3) + np.sum(np.abs(k) ** 2 + np.imag(k))
    return f


def _cases():
    rng = np.random.default_rng(71)
    m, cube = rng.uniform(-1.0, 1.0, (3, 4)), rng.uniform(-1.0, 1.0, (3, 4, 2))
    yield "fft2-shifts", (FFT.fft2, FFT.ifft2, FFT.rfft2, FFT.irfft2, FFT.fftshift,
                          FFT.ifftshift), planes, (m,), [0], True
    yield "fftn-hfft", (FFT.fftn, FFT.ifftn, FFT.rfftn, FFT.irfftn, FFT.hfft, FFT.ihfft), \
        volumes, (m,), [0], True
    for s, axes, norm in [(None, None, None), ((4, 3, 3), (0, 1, 2), "ortho"),
                          ((2, 5), (2, 0), "forward"), (None, (1,), "backward"),
                          ((3, 3), (0, 0), None), (None, (-1, 0, 1), "ortho")]:
        yield f"fftn-{s}-{axes}-{norm}", (FFT.fftn, FFT.ifftn), complex_n(s, axes, norm), \
            (cube,), [0], False
        yield f"rfftn-{s}-{axes}-{norm}", (FFT.rfftn, FFT.irfftn), real_n(s, axes, norm), \
            (cube,), [0], False
    for s, axes, norm in [(None, (-2, -1), None), ((2, 6), (1, 0), "ortho"),
                          ((5, 3), (0, 2), "forward")]:
        yield f"fft2-{s}-{axes}-{norm}", (FFT.fft2, FFT.ifft2, FFT.rfft2, FFT.irfft2), \
            two_d(s, axes, norm), (cube,), [0], False
    for axes in (None, 0, (1, 0), -1):
        yield f"shift-{axes}", (FFT.fftshift, FFT.ifftshift), shifts(axes), (m,), [0], False
    yield "shift-one", (FFT.fftshift, FFT.ifftshift), shifts(None), \
        (np.array([[0.7]]),), [0], False
    for n, axis, norm in [(None, -1, None), (7, 0, "ortho"), (3, 1, "forward"),
                          (4, 0, "backward")]:
        yield f"hfft-{n}-{axis}-{norm}", (FFT.hfft, FFT.ihfft), hermitian(n, axis, norm), \
            (m,), [0], False
    yield "fftn-one", (FFT.fftn, FFT.ifftn), complex_n(None, None, None), \
        (np.array([[[0.4]]]),), [0], False
    yield "rfftn-one", (FFT.rfftn, FFT.irfftn), real_n((1, 1, 2), (0, 1, 2), None), \
        (np.array([[[0.4]]]),), [0], False


CASES = list(_cases())


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


@parametrize([c for c in CASES if c[5] or c[0].endswith(("None", "ortho"))])
def test_jvp_against_differences(case, jit):
    check_jvp(case, jit, 7)


@parametrize([c for c in CASES if c[0].startswith("shift")])
def test_hvp_of_the_shifts(case, jit):
    # (complex values are differentiated to first order: the transforms' hvp is refused)
    check_hvp(case, jit)


def whole_input(a):
    # NumPy 2 reads -1 in s as the input's length along that axis
    return np.sum(np.abs(FFT.fftn(a, s=(-1, 6), axes=(0, 1))) ** 2 * W[:3, :6]) \
        + np.sum(FFT.irfftn(a + 0j, s=(-1, -1), axes=(0, 1)) * W[:3, :4])


def test_s_of_minus_one():
    if np.lib.NumpyVersion(np.__version__) < "2.0.0":
        pytest.skip("NumPy < 2 reads no -1 in s")
    a = np.random.default_rng(72).uniform(-1.0, 1.0, (3, 4))
    g = srcgrad.grad(whole_input, jit=False)(a)
    np.testing.assert_allclose(g, numerical_grad(whole_input, (a,), 0), rtol=1e-6, atol=1e-8)


def complex_input(z):
    f = FFT.fft2(z, s=(4, 3))
    r = FFT.irfftn(z, axes=(1, 0), norm="ortho")
    return np.sum(np.abs(f) ** 2 * W[:4, :3]) + np.sum(r ** 2) \
        + np.sum(np.real(FFT.fftshift(z)) * np.imag(FFT.ifftn(z, axes=(0,)))) \
        + np.sum(FFT.hfft(z, 5, 0, "ortho") ** 2 * W[:5, :4])


def test_complex_input(jit):
    rng = np.random.default_rng(73)
    z = rng.uniform(-1.0, 1.0, (3, 4)) + 1j * rng.uniform(-1.0, 1.0, (3, 4))
    g = srcgrad.grad(complex_input, jit=jit)(z)
    assert g.dtype == np.complex128
    np.testing.assert_allclose(g, complex_grad(complex_input, (z,), 0), rtol=1e-6,
                               atol=1e-8)


def energy(a):
    return np.sum(np.abs(FFT.fft2(a)) ** 2)


def energy_ortho(a):
    return np.sum(np.abs(FFT.fftn(a, norm="ortho")) ** 2)


def mean_of_inverse(a):
    return np.sum(FFT.irfft2(a))


def shifted(a):
    return np.sum(FFT.fftshift(a) * np.array([1.0, 2.0, 3.0, 4.0, 5.0]))


def hermitian_sum(a):
    return np.sum(FFT.hfft(a, 6))


def test_by_hand(jit):
    a = np.array([[0.3, -1.2, 0.5], [2.0, 0.7, -0.4]])
    # Parseval: sum |fft2(a)|^2 = 6 sum a^2, and sum a^2 with the unitary norm
    np.testing.assert_allclose(srcgrad.grad(energy, jit=jit)(a), 12.0 * a, rtol=1e-12)


def test_more_by_hand():
    a = np.array([[0.3, -1.2, 0.5], [2.0, 0.7, -0.4]])
    np.testing.assert_allclose(srcgrad.grad(energy_ortho, jit=False)(a), 2.0 * a,
                               rtol=1e-12)
    # the sum of an inverse transform's values is the real part of its constant term
    want = np.zeros((2, 3))
    want[0, 0] = 1.0
    np.testing.assert_allclose(srcgrad.grad(mean_of_inverse, jit=False)(a), want,
                               atol=1e-15)
    # hfft is irfft of conj(a) unscaled: its 6 values sum to 6 Re(a_0)
    np.testing.assert_allclose(srcgrad.grad(hermitian_sum, jit=False)(a[0]),
                               [6.0, 0.0, 0.0], atol=1e-14)
    # fftshift of 5 values is [a3, a4, a0, a1, a2]
    np.testing.assert_allclose(srcgrad.grad(shifted, jit=False)(np.zeros(5)),
                               [3.0, 4.0, 5.0, 1.0, 2.0])
    # jvp: the tangent of sum |fft2(a)|^2 along t is 12 sum a t
    t = np.array([[1.0, 0.5, -2.0], [0.0, 3.0, 1.0]])
    value, tangent = srcgrad.jvp(energy, jit=False)(a, t)
    assert tangent == pytest.approx(12.0 * np.sum(a * t), rel=1e-12)


def into_out(a):
    return np.sum(np.abs(FFT.fftn(a, out=np.empty((2, 2), complex))))


def test_out_is_refused():
    with pytest.raises(srcgrad.SrcgradError, match="out="):
        srcgrad.grad(into_out, jit=False)(np.ones((2, 2)))


def test_second_order_of_a_transform_is_refused():
    # srcgrad differentiates complex values to first order
    a = np.ones((2, 3))
    with pytest.raises(srcgrad.MissingRule, match="first order"):
        srcgrad.hvp(energy, jit=False)(a, a)
