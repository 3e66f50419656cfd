"""srcgrad.vecmath.tanh against NumPy's tanh: accuracy in ulp, special values, and that a
kernel ending in np.tanh computes it in its loop."""

import numpy as np
import pytest
from numba import njit

from srcgrad import vecmath


@njit(error_model="numpy")
def _tanh_all(x, out):
    for i in range(x.size):
        out[i] = vecmath.tanh(x[i])


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
