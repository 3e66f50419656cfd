"""scipy.special and scipy.linalg, the gaps to JAX and autograd (srcgrad/rules/special_gaps.py
with srcgrad/runtime/special_gaps.py, srcgrad/rules/scipy_linalg_gaps.py): hyp1f1,
hyp2f1, yn, sici and fresnel in the rule sweep against central differences, by hand and
compiled against SciPy's values; factorial, comb, scipy.linalg's inv, det, eigvalsh,
eigh(eigvals_only=True), svdvals, svd(compute_uv=False), norm, qr(mode='economic') and
scipy.integrate.trapezoid written as NumPy's functions, and scipy.signal's convolve,
correlate and fftconvolve of vectors written as np.convolve (srcgrad/rules/signal_gaps.py),
against differences; what they compute differently refused.
"""

import numba
import numpy as np
import pytest
import scipy.integrate
import scipy.linalg
import scipy.signal
from fd import assert_grad
from marks import compiles
from scipy import special
from sweep import check, check_jvp, domains, parametrize

import srcgrad

any_, pos, unit, distinct = domains(720)


def hypergeometric(x, a):
    # x in (-0.8, 0.8): hyp2f1 inside its circle; a: data
    return np.sum(special.hyp1f1(0.5, 1.5, x) + special.hyp1f1(a, 2.0 * a + 0.5, 2.0 * x) * 0.7 +
                  special.hyp2f1(0.5, 1.0, 1.5, x) + special.hyp2f1(a, 0.3, 2.5, x) * 0.4)


def bessel_yn(x):
    # x > 0; n = 0 (yn' = -y1), 1, 3
    return np.sum(special.yn(0, x) + special.yn(1, x) * 0.7 + special.yn(3, x) * 0.1)


def pairs(x):
    si, ci = special.sici(x)
    s, c = special.fresnel(x)
    return np.sum(si * 1.3 + ci + s * 0.7 + c * 2.0) + np.sum(special.sici(x)[0] ** 2)


def one_of_each(x):
    # one value of each pair read (the other's cotangent zero)
    return np.sum(special.sici(x)[1] * 1.1 + special.fresnel(x)[0] ** 2)


def cases():
    """(id, primals covered, function, arguments, positions, compiled too)."""
    hyp = (special.hyp1f1, special.hyp2f1)
    for shape in [(), (5,), (3, 4)]:
        yield "hyp", hyp, hypergeometric, (unit(*shape), pos()), [0], False
        yield "yn", (special.yn,), bessel_yn, (pos(*shape) + 0.3,), [0], False
        yield "sici-fresnel", (special.sici, special.fresnel), pairs, (pos(*shape),), [0], False
        yield "one-of-each", (special.sici, special.fresnel), one_of_each, (any_(*shape),), \
            [0], False
    yield "hyp-compiled", hyp, hypergeometric, (unit(4), pos()), [0], True
    yield "yn-compiled", (special.yn,), bessel_yn, (pos(3) + 0.3,), [0], True
    yield "sici-fresnel-compiled", (special.sici, special.fresnel), pairs, (pos(2, 3),), \
        [0], True


CASES = list(cases())


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_jvp_against_differences(k):
    check_jvp(CASES[k], False)


@compiles
def test_jvp_compiled():
    check_jvp(CASES[-1], True)


# ---- by hand ----


def at_one(x):
    si, ci = special.sici(x)
    s, c = special.fresnel(x)
    return si + ci + s + c + special.hyp1f1(1.0, 2.0, x)


def test_by_hand(jit):
    # at 1: Si' = sin 1, Ci' = cos 1; S' = sin(pi/2) = 1, C' = cos(pi/2) = 0;
    # hyp1f1(1, 2, x) = (e^x - 1) / x, whose slope (x e^x - e^x + 1) / x^2 is 1 there
    assert srcgrad.grad(at_one, jit=jit)(1.0) == pytest.approx(
        np.sin(1.0) + np.cos(1.0) + 2.0, rel=1e-14)


def hyp2f1_log(z):
    # hyp2f1(1, 1, 2, z) = -log(1 - z) / z
    return special.hyp2f1(1.0, 1.0, 2.0, z)


def test_hyp2f1_by_hand(jit):
    z = 0.5
    want = (z / (1 - z) + np.log(1 - z)) / z ** 2   # d/dz of -log(1 - z) / z
    assert srcgrad.grad(hyp2f1_log, jit=jit)(z) == pytest.approx(want, rel=1e-13)


def hyp1f1_a(x, a):
    return np.sum(special.hyp1f1(a, 1.5, x))


def yn_n(x, n):
    return np.sum(special.yn(n, x))


def test_parameters_and_orders_are_refused(jit):
    x = np.array([0.3, 0.6])
    with pytest.raises(srcgrad.MissingRule, match="a parameter, whose derivative"):
        srcgrad.grad(hyp1f1_a, wrt=(0, 1), jit=jit)(x, 0.5)
    with pytest.raises(srcgrad.MissingRule, match="an order"):
        srcgrad.grad(yn_n, wrt=(0, 1), jit=jit)(x, 2.0)


@numba.njit
def _compiled(x, a):
    return (special.hyp1f1(0.5, a, x), special.hyp2f1(0.5, 1.0, a, 0.5 * x),
            special.yn(2, x + 1.0), special.sici(x), special.fresnel(x),
            special.hyp1f1(0.5, 1.5, a), special.sici(a), special.fresnel(a))


@compiles
def test_compiled_forms_give_scipys_values():
    x, a = np.array([[-0.7, 0.0, 0.4], [1.5, 3.0, 30.0]]), 1.5
    got = _compiled(x, a)
    want = (special.hyp1f1(0.5, a, x), special.hyp2f1(0.5, 1.0, a, 0.5 * x),
            special.yn(2, x + 1.0), special.sici(x), special.fresnel(x),
            special.hyp1f1(0.5, 1.5, a), special.sici(a), special.fresnel(a))
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.array(g), np.array(w), rtol=1e-14)


# ---- factorial and comb: gamma and binom ----


def combinatorics(x):
    # x in (0.5, 2): factorial(x), factorial(x - 3) (0 below 0), comb with and without
    # repetition, and with k above N (0)
    return np.sum(special.factorial(x) + special.factorial(x - 3.0) +
                  special.factorial(x, exact=False) * 0.5 + special.comb(x + 3.0, 2.0) +
                  special.comb(x + 1.0, 1.5, repetition=True) * 0.3 +
                  special.comb(x, 4.0) + special.comb(x + 2.0, x, exact=False) * 0.2)


def test_factorial_and_comb():
    x = pos(4)
    assert_grad(combinatorics, srcgrad.grad(combinatorics, wrt=(0,), jit=False)(x), (x,), [0])


def factorial_of(v):
    return special.factorial(v) + special.comb(v + 1.0, 1.0)


def test_factorial_by_hand(jit):
    # factorial' = gamma'(x + 1) = gamma(x + 1) psi(x + 1): 1 - euler at 1; comb(x + 1, 1)
    # = x + 1, slope 1
    g = srcgrad.grad(factorial_of, jit=jit)(1.0)
    assert g == pytest.approx(2.0 - np.euler_gamma, rel=1e-13)


def factorial_exact(x):
    return special.factorial(x, exact=True)


def comb_exact(x):
    return special.comb(x, 2, exact=True)


def test_exact_is_refused():
    for fun in (factorial_exact, comb_exact):
        with pytest.raises(srcgrad.SrcgradError, match="exact=True"):
            srcgrad.grad(fun)(3.0)


# ---- scipy.linalg and scipy.integrate, written as NumPy's ----


def linalg_all(a, y):
    m = a + 3.0 * np.eye(3)
    s = m + m.T
    q, r = scipy.linalg.qr(m, mode="economic")
    return (np.sum(scipy.linalg.inv(m) * np.arange(9.0).reshape(3, 3)) +
            scipy.linalg.det(m) ** 2 + np.sum(scipy.linalg.eigvalsh(s) ** 3) +
            np.sum(scipy.linalg.eigh(s, eigvals_only=True, lower=False) * np.arange(3.0)) +
            np.sum(scipy.linalg.svdvals(m) ** 2) +
            np.sum(scipy.linalg.svd(m, compute_uv=False) ** 3) + scipy.linalg.norm(m) +
            np.sum(scipy.linalg.norm(m, axis=0)) + scipy.linalg.norm(y, ord=1) +
            np.sum(r * np.arange(9.0).reshape(3, 3)) + np.sum(q[0]) +
            scipy.integrate.trapezoid(y) + scipy.integrate.trapezoid(y ** 2, dx=0.5) +
            scipy.integrate.trapezoid(y, x=y ** 3))


def test_linalg_written_as_numpy():
    # as Python (NumPy's records are compiled in their own tests; below, compiled too)
    a, y = unit(3, 3), pos(5)
    g = srcgrad.grad(linalg_all, wrt=(0, 1), jit=False)(a, y)
    assert_grad(linalg_all, g, (a, y), [0, 1])


def test_linalg_by_hand(jit):
    # d det(m) / dm = det(m) inv(m)^T; d trapezoid(y) / dy = (1/2, 1, ..., 1, 1/2)
    m, y = unit(3, 3) + 3.0 * np.eye(3), pos(5)
    g = srcgrad.grad(scipy_det, jit=jit)(m)
    np.testing.assert_allclose(g, np.linalg.det(m) * np.linalg.inv(m).T, rtol=1e-12)
    g = srcgrad.grad(scipy_trapezoid, jit=jit)(y)
    np.testing.assert_allclose(g, [0.5, 1.0, 1.0, 1.0, 0.5], rtol=1e-15)


def scipy_det(m):
    return scipy.linalg.det(m)


def scipy_trapezoid(y):
    return scipy.integrate.trapezoid(y)


def eigh_vectors(s):
    w, v = scipy.linalg.eigh(s)
    return np.sum(v)


def svd_vectors(m):
    u, s, vt = scipy.linalg.svd(m)
    return np.sum(u)


def qr_full(m):
    q, r = scipy.linalg.qr(m)
    return np.sum(r)


def inv_positive(m):
    return np.sum(scipy.linalg.inv(m, assume_a="pos"))


def eigvalsh_generalized(s, b):
    return np.sum(scipy.linalg.eigvalsh(s, b))


@pytest.mark.parametrize("fun,match", [
    (eigh_vectors, "eigenvectors are not differentiated"),
    (svd_vectors, "singular vectors are not differentiated"),
    (qr_full, "mode='full'"), (eigvalsh_generalized, "b=")])
def test_what_numpy_computes_differently_is_refused(fun, match):
    m = np.eye(3) * 2.0
    args = (m, m) if fun is eigvalsh_generalized else (m,)
    with pytest.raises(srcgrad.SrcgradError, match=match):
        srcgrad.grad(fun)(*args)


@pytest.mark.skipif("assume_a" not in scipy.linalg.inv.__doc__, reason="SciPy < 1.17")
def test_inv_of_one_triangle_is_refused():
    with pytest.raises(srcgrad.SrcgradError, match="assume_a='pos'"):
        srcgrad.grad(inv_positive)(np.eye(3) * 2.0)


# ---- scipy.signal's convolutions of vectors, written as np.convolve ----


def convolutions(a, b):
    return (np.sum(scipy.signal.convolve(a, b) ** 2) +
            np.sum(np.sin(scipy.signal.convolve(a, b, mode="same"))) +
            np.sum(scipy.signal.correlate(a, b, "valid") ** 3) +
            np.sum(scipy.signal.correlate(a, b, mode="same", method="fft") * 1.3) +
            np.sum(scipy.signal.fftconvolve(a, b, "valid") ** 2) +
            np.sum(scipy.signal.correlate(b, a, "same") ** 2) +
            np.sum(scipy.signal.fftconvolve(b, a, mode="same") * np.arange(3.0)))


@pytest.mark.parametrize("n", [6, 7, 2])
def test_convolutions(n):
    a, b = any_(n), any_(3)
    g = srcgrad.grad(convolutions, wrt=(0, 1), jit=False)(a, b)
    assert_grad(convolutions, g, (a, b), [0, 1])


def correlation_at(a, b):
    return np.sum(scipy.signal.correlate(a, b, "same") * np.array([1.0, 2.0, 3.0]))


def test_correlation_by_hand(jit):
    # correlate(a, b, 'same')[k] = sum_j a[k + j - 1] b[j] (b of 3 entries, centred):
    # d/db_j = sum_k w_k a[k + j - 1] with w = (1, 2, 3) and a of 3 entries, 0 outside
    a, b = np.array([0.5, -1.0, 2.0]), np.array([0.3, 0.1, -0.2])
    da, db = srcgrad.grad(correlation_at, wrt=(0, 1), jit=jit)(a, b)
    want_b = [2.0 * a[0] + 3.0 * a[1], a[0] + 2.0 * a[1] + 3.0 * a[2], a[1] + 2.0 * a[2]]
    np.testing.assert_allclose(db, want_b, rtol=1e-14)
    want_a = [b[1] + 2.0 * b[0], b[2] + 2.0 * b[1] + 3.0 * b[0], 2.0 * b[2] + 3.0 * b[1]]
    np.testing.assert_allclose(da, want_a, rtol=1e-14)


def convolve_axes(a, b):
    return np.sum(scipy.signal.fftconvolve(a, b, axes=0))


def convolve_mode(a, b, mode):
    return np.sum(scipy.signal.convolve(a, b, mode=mode))


def test_convolution_options_refused():
    with pytest.raises(srcgrad.SrcgradError, match="axes="):
        srcgrad.grad(convolve_axes)(np.ones(3), np.ones(2))
    with pytest.raises(srcgrad.SrcgradError, match="mode= is differentiated as the literal"):
        srcgrad.grad(convolve_mode)(np.ones(3), np.ones(2), "full")
