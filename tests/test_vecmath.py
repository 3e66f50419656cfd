"""srcgrad.runtime.vecmath.tanh and exp against NumPy's: accuracy in ulp (of NumPy's value and of
the exact one, from long double), special values and hand values. That a kernel ending in
np.tanh or np.exp computes it in its loop: tests/test_fuse.py."""

import numpy as np
import pytest
from numba import njit

from srcgrad.runtime import vecmath


@njit(error_model="numpy")
def _each(fun, x, out):
    for i in range(x.size):
        out[i] = fun(x[i])


def _tanh_all(x, out):
    _each(vecmath.tanh, x, out)


def _ulps(x):
    out = np.empty_like(x)
    _tanh_all(x, out)
    ref = np.tanh(x)
    return np.abs(out - ref) / np.spacing(np.abs(ref))


@pytest.mark.parametrize("scale", [1e-300, 1e-8, 1e-3, 0.3, 0.55, 1.0, 5.0, 19.0, 20.5, 1e3])
def test_within_four_ulp_of_numpy(rng, scale):
    x = rng.uniform(-1.0, 1.0, 20000) * scale
    assert _ulps(x).max() <= 4.0


@pytest.mark.skipif(np.finfo(np.longdouble).nmant <= 52, reason="long double is double")
def test_within_3_3_ulp_of_the_exact_value(rng):
    # the reference: tanh in long double (64-bit mantissa on x86), over |x| from 1e-4 to 20
    x = rng.uniform(-1.0, 1.0, 200000) * np.exp(rng.uniform(np.log(1e-4), np.log(20.0), 200000))
    out = np.empty_like(x)
    _tanh_all(x, out)
    exact = np.tanh(x.astype(np.longdouble))
    ulps = np.abs(out.astype(np.longdouble) - exact) / np.spacing(np.abs(out))
    assert ulps.max() <= 3.3


def test_special_values_are_numpys():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -1e-320, 19.06, -700.0])
    out = np.empty_like(x)
    _tanh_all(x, out)
    np.testing.assert_array_equal(out, np.tanh(x))
    np.testing.assert_array_equal(np.signbit(out), np.signbit(np.tanh(x)))


def test_hand_values():
    out = np.empty(3)
    _tanh_all(np.array([0.5, -1.0, 2.0]), out)
    # tanh(x) = (e^2x - 1) / (e^2x + 1)
    e = np.exp(2 * np.array([0.5, -1.0, 2.0]))
    np.testing.assert_allclose(out, (e - 1) / (e + 1), rtol=4e-16)
    np.testing.assert_allclose(out, [0.46211715726000974, -0.7615941559557649,
                                     0.9640275800758169], rtol=4e-16)


def _exp(x):
    out = np.empty_like(x)
    _each(vecmath.exp, x, out)
    return out


# near 0, moderate, the whole range, the subnormal results and those next to overflow
@pytest.mark.parametrize(("low", "high"), [(-1e-8, 1e-8), (-1.0, 1.0), (-30.0, 30.0),
                                           (-700.0, 700.0), (-745.1, -708.4),
                                           (700.0, 709.78)])
def test_exp_within_a_few_ulp_of_numpy(rng, low, high):
    # ours is within 2 ulp of the exact value (next test); NumPy's own np.exp is not
    # always within 1 (up to 2.52 ulp in the AVX512F loops of NumPy 1.24, the `oldest` env)
    x = rng.uniform(low, high, 50000)
    ref = np.exp(x)
    assert (np.abs(_exp(x) - ref) / np.spacing(ref)).max() <= 4.5


@pytest.mark.skipif(np.finfo(np.longdouble).nmant <= 52, reason="long double is double")
def test_exp_within_two_ulp_of_the_exact_value(rng):
    x = rng.uniform(-745.1, 709.78, 200000)
    out = _exp(x)
    exact = np.exp(x.astype(np.longdouble))
    assert (np.abs(out.astype(np.longdouble) - exact) / np.spacing(out)).max() <= 2.0


def test_exp_special_values_are_numpys():
    # 0 and -0, infinities, NaN, the largest finite result and the first overflow, the
    # smallest subnormal result and the first that rounds to 0, far out of range
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 709.78, 709.79, 1e300, -745.1,
                  -745.2, -1e300, 5e-324])
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(_exp(x), np.exp(x))


def test_exp_hand_values():
    np.testing.assert_allclose(_exp(np.array([1.0, -1.0, 0.5, np.log(10.0)])),
                               [2.718281828459045, 0.36787944117144233,
                                1.6487212707001282, 10.0], rtol=4.5e-16)
