"""Complex intermediates (srcgrad/rules/builtin_rules.py `real_sign`, and
np.linalg.norm's direction): refused until srcgrad differentiates through complex numbers.
Before, abs of a complex value gave np.sign(z) as its derivative, and real losses of
complex intermediates got silently wrong (and complex) gradients.
"""

import numpy as np
import pytest

import srcgrad

CASES = []   # no rule of its own: abs and norm have their cases in tests/test_rules.py


def abs_of_complex(a):
    return np.sum(np.abs(a * (1 + 2j)))


def builtin_abs_of_complex(a):
    return abs(a[0] * (1 + 2j))


def modulus_of_phase(a):
    return np.sum(np.absolute(np.exp(1j * a)) * a)


def norm_of_complex(a):
    return np.linalg.norm(a * (1 + 2j))


@pytest.mark.parametrize("fun", [abs_of_complex, builtin_abs_of_complex, modulus_of_phase,
                                 norm_of_complex])
def test_a_real_loss_of_complex_values_is_refused(fun, jit):
    with pytest.raises(srcgrad.MissingRule, match="complex"):
        srcgrad.grad(fun, jit=jit)(np.array([0.3, -0.7]))


def test_forward_mode_refuses_it_too(jit):
    with pytest.raises(srcgrad.MissingRule, match="complex"):
        srcgrad.jvp(abs_of_complex, jit=jit)(np.array([0.3, -0.7]), np.ones(2))


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
