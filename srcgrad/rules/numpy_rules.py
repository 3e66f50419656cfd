"""The records of NumPy functions (and their `math` twins for scalar code).

One rule per function family, grouped by arity; identities from any calculus table
(e.g. d tanh = 1 - tanh^2, d logaddexp(a, b)/da = exp(a - y)). Array methods
(`x.sum(axis=0)`) and attributes (`x.T`) are facts of the function they call.
"""

import math

import gast
import numpy as np

from ..runtime import (
    extremum_grad,
    mean_grad,
    reshape_as,
    scattered,
    split_like,
    sum_grad,
    take_along_axis_grad,
    take_grad,
    unbroadcast,
    unstack_like,
    vecmath,
    where,
)
from . import constructor, describe, linear, nondifferentiable, rule, tangent, uniform
from .shapes import untranspose

# ---- elementwise, one argument ----


@rule(np.sin, math.sin, elementwise=True)
def sin(dy, y, x):
    return dy * np.cos(x)


@rule(np.cos, math.cos, elementwise=True)
def cos(dy, y, x):
    return -dy * np.sin(x)


@rule(np.tan, math.tan, elementwise=True)
def tan(dy, y, x):
    return dy * (1.0 + y * y)


@rule(np.arcsin, math.asin, elementwise=True)
def arcsin(dy, y, x):
    return dy / np.sqrt(1.0 - x * x)


@rule(np.arccos, math.acos, elementwise=True)
def arccos(dy, y, x):
    return -dy / np.sqrt(1.0 - x * x)


@rule(np.arctan, math.atan, elementwise=True)
def arctan(dy, y, x):
    return dy / (1.0 + x * x)


@rule(np.sinh, math.sinh, elementwise=True)
def sinh(dy, y, x):
    return dy * np.cosh(x)


@rule(np.cosh, math.cosh, elementwise=True)
def cosh(dy, y, x):
    return dy * np.sinh(x)


@rule(np.tanh, math.tanh, elementwise=True)
def tanh(dy, y, x):
    return dy * (1.0 - y * y)


@rule(np.exp, math.exp, elementwise=True)
def exp(dy, y, x):
    return dy * y


@rule(np.exp2, elementwise=True)
def exp2(dy, y, x):
    return dy * y * np.log(2.0)


@rule(np.expm1, math.expm1, elementwise=True)
def expm1(dy, y, x):
    return dy * (y + 1.0)


@rule(np.log, math.log, elementwise=True)
def log(dy, y, x):
    return dy / x


@rule(np.log2, math.log2, elementwise=True)
def log2(dy, y, x):
    return dy / (x * np.log(2.0))


@rule(np.log10, math.log10, elementwise=True)
def log10(dy, y, x):
    return dy / (x * np.log(10.0))


@rule(np.log1p, math.log1p, elementwise=True)
def log1p(dy, y, x):
    return dy / (1.0 + x)


@rule(np.sqrt, math.sqrt, elementwise=True)
def sqrt(dy, y, x):
    return dy * 0.5 / y


@rule(np.cbrt, elementwise=True)
def cbrt(dy, y, x):
    return dy / (3.0 * y * y)


@rule(np.square, elementwise=True, fusable=True)
def square(dy, y, x):
    return dy * 2.0 * x


@rule(np.reciprocal, elementwise=True)
def reciprocal(dy, y, x):
    return -dy * y * y


# ---- elementwise, two or three arguments ----


@rule(np.arctan2, math.atan2, elementwise=True)
def arctan2(dy, y, a, b):
    return (unbroadcast(dy * b / (a * a + b * b), a),
            unbroadcast(-dy * a / (a * a + b * b), b))


@rule(np.hypot, math.hypot, elementwise=True)
def hypot(dy, y, a, b):
    return unbroadcast(dy * a / y, a), unbroadcast(dy * b / y, b)


@rule(np.logaddexp, elementwise=True)
def logaddexp(dy, y, a, b):
    return unbroadcast(dy * np.exp(a - y), a), unbroadcast(dy * np.exp(b - y), b)


@rule(np.where, elementwise=True, fusable=True, faster=where)
def where(dy, y, cond, a, b):
    return None, unbroadcast(np.where(cond, dy, 0.0), a), unbroadcast(np.where(cond, 0.0, dy), b)


# ---- reductions ----


@rule(np.sum, reduction=True, methods=("sum",))
def sum_(dy, y, x, axis=None, keepdims=False):
    return sum_grad(dy, x, axis, keepdims)


@rule(np.mean, reduction=True, methods=("mean",))
def mean(dy, y, x, axis=None, keepdims=False):
    return mean_grad(dy, x, axis, keepdims)


@uniform(np.sum)
def sum_uniform(dy, y, x):
    return dy


@uniform(np.mean)
def mean_uniform(dy, y, x):
    return dy / np.size(x)


@rule(np.max, np.amax, np.min, np.amin, reduction=True)
def extremum(dy, y, x, axis=None, keepdims=False):
    return extremum_grad(dy, y, x, axis, keepdims)


@tangent(np.max, np.amax, np.min, np.amin)
def extremum_tangent(dx, y, x, axis=None, keepdims=False):
    # the tangents at the extremum's positions, averaged over ties (the adjoint's split)
    return np.sum(dx * extremum_grad(np.ones_like(y), y, x, axis, True), axis=axis,
                  keepdims=keepdims)


@rule(np.var, methods=("var",))
def var(dy, y, x, axis=None, keepdims=False, ddof=0):
    n = np.size(x) / np.size(y)
    centered = x - np.mean(x, axis=axis, keepdims=True)
    return sum_grad(dy, x, axis, keepdims) * (2.0 / (n - ddof)) * centered


@tangent(np.var)
def var_tangent(dx, y, x, axis=None, keepdims=False, ddof=0):
    n = np.size(x) / np.size(y)
    centered = x - np.mean(x, axis=axis, keepdims=True)
    return np.sum(centered * dx, axis=axis, keepdims=keepdims) * (2.0 / (n - ddof))


@rule(np.std, methods=("std",))
def std(dy, y, x, axis=None, keepdims=False, ddof=0):
    n = np.size(x) / np.size(y)
    centered = x - np.mean(x, axis=axis, keepdims=True)
    return sum_grad(dy / y, x, axis, keepdims) * (1.0 / (n - ddof)) * centered


@tangent(np.std)
def std_tangent(dx, y, x, axis=None, keepdims=False, ddof=0):
    n = np.size(x) / np.size(y)
    centered = x - np.mean(x, axis=axis, keepdims=True)
    return np.sum(centered * dx, axis=axis, keepdims=keepdims) / ((n - ddof) * y)


# ---- shapes and linear algebra ----


@rule(np.transpose, view=True, methods=("transpose",), attributes=("T",))
def transpose(dy, y, x, axes=None, a1=None, a2=None, a3=None, a4=None, a5=None, a6=None,
              a7=None):
    # x.transpose(1, 0, 2) passes the axes one by one (a1..a7)
    return untranspose(dy, axes, a1, a2, a3, a4, a5, a6, a7)


@rule(np.squeeze, np.expand_dims, np.ascontiguousarray, np.copy)
def reshape(dy, y, x, axis=None):   # (np.reshape and np.ravel: rules/shapes.py, `order`)
    return reshape_as(dy, x)


@rule(np.concatenate)
def concatenate(dy, y, arrays, axis=0):
    return split_like(dy, arrays, axis)


@rule(np.stack)
def stack(dy, y, arrays, axis=0):
    return unstack_like(dy, arrays, axis)


@rule(np.outer)
def outer(dy, y, a, b):
    return dy @ np.ravel(b), np.ravel(a) @ dy


@tangent(np.outer)
def outer_tangent(dx, y, a, b):
    return np.outer(dx, b), np.outer(a, dx)


@rule(np.take, methods=("take",))
def take(dy, y, a, indices, axis=None, mode="raise"):
    return take_grad(dy, a, indices, axis, mode), None


describe(np.take, method_lacks=("mode",))


@rule(np.take_along_axis)
def take_along_axis(dy, y, a, indices, axis):
    return take_along_axis_grad(dy, a, indices, axis), None, None


# np.add.at(x, index, v) adds into x in place, each repeat of an entry of the index adding
# its part: normalize writes it `x += scattered(x, index, v)` (np.subtract.at: `-=`), whose
# in-place change the passes follow (scattered's rule: rules/runtime_rules.py)
describe(np.add.at, updates=(gast.Add, scattered))
describe(np.subtract.at, updates=(gast.Sub, scattered))


# linear maps: the tangent is the map applied to the tangent
linear(np.sum, np.mean, np.transpose, np.reshape, np.ravel, np.squeeze, np.expand_dims,
       np.ascontiguousarray, np.copy, np.concatenate, np.stack, np.take, np.take_along_axis)


# ---- no gradient, and producers ----

nondifferentiable(
    np.floor, np.ceil, np.round, np.around, np.rint, np.trunc, np.fix, np.isnan, np.isinf,
    np.isfinite, np.argsort, np.zeros_like, np.ones_like, np.empty_like, np.count_nonzero,
)
nondifferentiable(np.sign, fusable=True)
nondifferentiable(np.isclose)
nondifferentiable(np.allclose, scalar_result=True)
nondifferentiable(np.argmax, methods=("argmax",))
nondifferentiable(np.argmin, methods=("argmin",))
nondifferentiable(np.any, methods=("any",))
nondifferentiable(np.all, methods=("all",))
nondifferentiable(np.shape, np.ndim, np.size, scalar_result=True)
constructor(np.zeros, np.ones, np.empty, np.full, np.arange, np.eye, np.identity,
            np.full_like)   # np.array and np.asarray: rules/building.py

# ---- facts of functions of a family, and array methods and attributes ----

describe(np.sqrt, fusable=True)
# a kernel may apply these last; tanh and exp, whose NumPy forms are SIMD only with
# AVX-512 (elsewhere libm's scalar functions, as numba's), in a vectorizable form
describe(np.sin, np.cos, np.log, last_in_kernel=True)
describe(np.tanh, last_in_kernel=True, in_loop=vecmath.tanh)
describe(np.exp, last_in_kernel=True, in_loop=vecmath.exp)
# results that may be views of the first argument (a write through one reaches it),
# with a rule or not
describe(np.reshape, np.ravel, np.squeeze, np.expand_dims, np.swapaxes, np.moveaxis,
         np.rollaxis, np.atleast_1d, np.atleast_2d, np.atleast_3d, np.asanyarray, np.real,
         np.imag, np.diagonal, np.broadcast_to, np.flip, np.fliplr, np.flipud, np.rot90,
         np.ascontiguousarray, np.asfortranarray, np.require, np.asarray_chkfinite,
         np.lib.stride_tricks.as_strided, np.lib.stride_tricks.sliding_window_view,
         view=True)
# they select entries by the data: an index of any length
describe(np.nonzero, np.flatnonzero, np.argwhere, np.unique, np.logical_and, np.logical_or,
         np.logical_not, np.logical_xor, np.isfinite, np.isnan, np.isinf, selects=True)
describe(np.max, methods=("max",))
describe(np.min, methods=("min",))
describe(np.reshape, methods=("reshape",))
describe(np.ravel, methods=("ravel", "flatten"))
describe(np.squeeze, methods=("squeeze",))
describe(np.copy, methods=("copy",))
describe(np.round, methods=("round",))   # (numba's form: numba_ext.py)
describe(np.shape, attributes=("shape",))
describe(np.ndim, attributes=("ndim",))
describe(np.size, attributes=("size",))
