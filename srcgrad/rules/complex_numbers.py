"""Complex values: the records of np.real, np.imag (and the attributes `x.real`,
`x.imag`), np.conj / np.conjugate (and `x.conj()`), np.angle, and of the slopes their
rules and abs's call (runtime/complex_numbers.py, which states the convention: JAX's).

real, imag and angle go from complex to real: each rule is Re(dy) times the function's
slope s, its tangent Re(s dx). conj is R-linear: its adjoint conjugates dy, its tangent
conjugates dx. At a real argument real is the identity, and imag and angle are constant.
Second derivatives through the slopes of complex values are refused (`slope_grad`).

The rules of NumPy's functions below leave out the conjugates a complex argument needs
(a Hermitian factorization's, a variance's |x - mean|^2): their arguments pass through
`real_values` in generated code, which refuses complex ones (SciPy's are marked in their
own modules). Every other rule is holomorphic, a selection or real-linear, and holds for
complex values as it is under the convention; np.sign keeps its zero gradient at
complex values too, as in JAX.
"""

import numpy as np

from ..runtime.complex_numbers import (
    abs_slope,
    angle_slope,
    imag_slope,
    real_dy,
    real_part,
    real_values,
    slope_grad,
)
from . import describe, linear, nondifferentiable, real_only, rule, tangent
from .factorizations import singular_values


@rule(np.real, attributes=("real",), view=True)
def real(dy, y, x):
    return real_dy(dy, x)


@rule(np.imag, attributes=("imag",), view=True)
def imag(dy, y, x):
    return real_dy(dy, x) * imag_slope(x)


@rule(np.conj, np.conjugate, methods=("conj", "conjugate"))
def conj(dy, y, x):
    return np.conj(dy)


@rule(np.angle)
def angle(dy, y, x, deg=False):
    return real_dy(dy, x) * angle_slope(x, deg)


@tangent(np.angle)
def angle_tangent(dx, y, x, deg=False):
    return np.real(angle_slope(x, deg) * dx)


linear(np.real, np.imag, np.conj, np.conjugate)


# ---- the helpers generated code calls ----

@rule(real_dy)
def real_dy_(dy, y, g, x):
    return real_dy(dy, x), None


linear(real_dy)
# (the real part of an operand's cotangent: forward mode over a gradient, `hvp`)
linear(real_part, positions=(0,))


@rule(abs_slope, imag_slope)
def slope(dy, y, x):
    return slope_grad(dy, x)


@tangent(abs_slope, imag_slope)
def slope_tangent(dx, y, x):
    return slope_grad(dx, x)


@rule(angle_slope)
def angle_slope_(dy, y, x, deg=False):
    return slope_grad(dy, x)


@tangent(angle_slope)
def angle_slope_tangent(dx, y, x, deg=False):
    return slope_grad(dx, x)


@rule(real_values)
def real_values_(dy, y, x, what):
    return dy, None


linear(real_values)

real_only(np.var, np.std, np.linalg.cholesky, np.linalg.eigh, np.linalg.eigvalsh,
          np.linalg.svd, np.linalg.qr, np.linalg.slogdet, np.linalg.pinv, np.linalg.lstsq,
          singular_values, *([np.linalg.svdvals] if hasattr(np.linalg, "svdvals") else []))
nondifferentiable(slope_grad, pure=True)
describe(real_dy, real_values, abs_slope, angle_slope, imag_slope, pure=True, fusable=True)
describe(np.real, np.imag, np.conj, np.conjugate, fusable=True)
