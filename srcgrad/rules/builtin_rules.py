"""Gradient rules of Python builtins and the `math` module (scalar code).

abs of a complex value is refused (`real_sign`): a real loss of complex intermediates
needs the conjugate in abs's rule and the real part where a gradient reaches a real
value, which srcgrad does not give yet (issue 20); np.sign(z) alone is silently wrong.
"""

import builtins
import math

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from ..errors import MissingRule
from ..runtime import unbroadcast
from . import describe, nondifferentiable, rule

COMPLEX = ("of a complex value has no gradient rule: srcgrad does not differentiate "
           "through complex numbers yet")


def real_sign(x):
    """np.sign(x), the derivative of abs at a real x; MissingRule for a complex x.

    >>> real_sign(np.array([-2.0, 0.0, 3.0]))
    array([-1.,  0.,  1.])
    """
    if np.iscomplexobj(x):
        raise MissingRule(f"abs {COMPLEX}")
    return np.sign(x)


@overload(real_sign)
def _real_sign_typer(x):
    if isinstance(getattr(x, "dtype", x), types.Complex):
        raise TypingError(f"srcgrad: abs {COMPLEX}")
    return lambda x: np.sign(x)


@rule(builtins.abs, math.fabs, np.abs, np.absolute, elementwise=True)
def abs_(dy, y, x):
    return dy * real_sign(x)


@rule(builtins.float, elementwise=True)
def float_(dy, y, x):
    return dy


@rule(builtins.max, np.maximum, np.fmax, elementwise=True)
def maximum(dy, y, a, b):
    # ties split the gradient evenly, as JAX does
    return (unbroadcast(dy * ((a > b) + 0.5 * (a == b)), a),
            unbroadcast(dy * ((b > a) + 0.5 * (a == b)), b))


@rule(builtins.min, np.minimum, np.fmin, elementwise=True)
def minimum(dy, y, a, b):
    return (unbroadcast(dy * ((a < b) + 0.5 * (a == b)), a),
            unbroadcast(dy * ((b < a) + 0.5 * (a == b)), b))


nondifferentiable(builtins.len, builtins.int, builtins.bool, builtins.round, builtins.range,
                  builtins.print, builtins.isinstance,
                  math.floor, math.ceil, math.trunc, math.isnan, math.isinf, math.isfinite,
                  math.copysign)

describe(builtins.len, builtins.int, builtins.bool, builtins.float, scalar_result=True)
describe(np.abs, np.absolute, np.maximum, np.minimum, fusable=True)
nondifferentiable(real_sign, fusable=True, pure=True)
describe(builtins.len, builtins.min, builtins.max, builtins.abs, builtins.int, builtins.float,
         builtins.bool, cheap=True)
