"""Gradient rules of Python builtins and the `math` module (scalar code)."""

import builtins
import math

import numpy as np

from ..runtime import unbroadcast
from . import describe, nondifferentiable, rule


@rule(builtins.abs, math.fabs, np.abs, np.absolute, elementwise=True)
def abs_(dy, y, x):
    return dy * np.sign(x)


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
describe(builtins.len, builtins.min, builtins.max, builtins.abs, builtins.int, builtins.float,
         builtins.bool, cheap=True)
