"""Gradient assertions against central finite differences (never against srcgrad itself)."""

import numpy as np

from srcgrad.checks import numerical_grad


def assert_grad(fun, grads, args, positions, rtol=1e-5, atol=1e-7):
    """Check `grads` (one per position) against central differences of `fun`."""
    for pos, got in zip(positions, grads, strict=True):
        want = numerical_grad(fun, args, pos)
        assert np.shape(got) == np.shape(want), (pos, np.shape(got), np.shape(want))
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol,
                                   err_msg=f"gradient wrt argument {pos}")


def slope(fun, args, tangents, h=1e-6):
    """The directional derivative of `fun` at `args` along `tangents`, by central
    differences."""
    up = [a + h * t for a, t in zip(args, tangents, strict=True)]
    down = [a - h * t for a, t in zip(args, tangents, strict=True)]
    return (fun(*up) - fun(*down)) / (2 * h)
