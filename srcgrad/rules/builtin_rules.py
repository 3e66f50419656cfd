"""Gradient rules of Python builtins and the `math` module (scalar code).

abs serves real and complex values alike: its rule is Re(dy) times its slope, sign(x) at
a real x and conj(x)/|x| at a complex one (runtime/complex_numbers.py gives the
convention); np.sign(z) alone would be silently wrong for complex z.

max, min, np.maximum and np.minimum split dy evenly on a tie, as JAX does; np.fmax and
np.fmin the same, and a NaN argument, which they skip, gets none of it (the other one
all: fmax(nan, b) is b).
"""

import builtins
import math

import numpy as np

from ..runtime import unbroadcast
from ..runtime.complex_numbers import abs_slope, real_dy
from ..runtime.sequences import sum_items_grad
from . import describe, linear, nondifferentiable, rule, tangent

COMPLEX = ("of a complex value has no gradient rule: srcgrad differentiates abs, angle, "
           "real and imag of complex values, not this")


@rule(builtins.abs, math.fabs, np.abs, np.absolute, elementwise=True)
def abs_(dy, y, x):
    return real_dy(dy, x) * abs_slope(x)


@tangent(builtins.abs, math.fabs, np.abs, np.absolute)
def abs_tangent(dx, y, x):
    return np.real(abs_slope(x) * dx)


@rule(builtins.sum)
def sum_(dy, y, items, start=0):
    # the items of a tuple or list, or the rows of an array, and the start
    return sum_items_grad(dy, items), unbroadcast(dy, start)


# np.float64 (np.double is the same type) is float's twin on arrays and numbers: the
# identity on float64 values. np.float32 and np.float16 round, and are refused as
# np.asarray(x, dtype=np.float32) is (building.py): no gradient flows through them.
@rule(builtins.float, np.float64, elementwise=True)
def float_(dy, y, x):
    return dy


@rule(builtins.max, np.maximum, elementwise=True)
def maximum(dy, y, a, b):
    # ties split the gradient evenly, as JAX does
    return (unbroadcast(dy * ((a > b) + 0.5 * (a == b)), a),
            unbroadcast(dy * ((b > a) + 0.5 * (a == b)), b))


@rule(builtins.min, np.minimum, elementwise=True)
def minimum(dy, y, a, b):
    return (unbroadcast(dy * ((a < b) + 0.5 * (a == b)), a),
            unbroadcast(dy * ((b < a) + 0.5 * (a == b)), b))


# np.fmax and np.fmin skip a NaN: fmax(nan, b) is b, so b takes dy (`b != b` is isnan(b)
# in Python, NumPy and numba alike); of two NaNs, NaN, and neither takes any


@rule(np.fmax, elementwise=True)
def fmax(dy, y, a, b):
    return (unbroadcast(dy * ((a > b) + (b != b) * (a == a) + 0.5 * (a == b)), a),
            unbroadcast(dy * ((b > a) + (a != a) * (b == b) + 0.5 * (a == b)), b))


@rule(np.fmin, elementwise=True)
def fmin(dy, y, a, b):
    return (unbroadcast(dy * ((a < b) + (b != b) * (a == a) + 0.5 * (a == b)), a),
            unbroadcast(dy * ((b < a) + (a != a) * (b == b) + 0.5 * (a == b)), b))


linear(builtins.sum, positions=(0, 1))
nondifferentiable(builtins.len, builtins.int, builtins.bool, builtins.round, builtins.range,
                  builtins.print, builtins.isinstance,
                  math.floor, math.ceil, math.trunc, math.isnan, math.isinf, math.isfinite,
                  math.copysign,
                  # integer casts give no gradient, as int does
                  np.int64, np.int32, np.int16, np.int8, np.intp,
                  np.uint64, np.uint32, np.uint16, np.uint8, np.bool_)

describe(builtins.len, builtins.int, builtins.bool, builtins.float, scalar_result=True)
describe(np.abs, np.absolute, np.maximum, np.minimum, fusable=True)
describe(builtins.sorted, builtins.max, builtins.min, item_key=True)
describe(builtins.sum, sequence=True)   # (a list of numbers and arrays, passed as a tuple)
describe(builtins.len, builtins.min, builtins.max, builtins.abs, builtins.int, builtins.float,
         builtins.bool, np.float64, np.int64, cheap=True)
