"""Gradient rules of Python's operators (`+ - * / ** @ % //`, unary minus, comparisons).

The reverse pass maps each operator node to the `operator` function it denotes
(`OPERATORS`), so an operator and its NumPy ufunc (`*` and `np.multiply`) share a rule.
"""

import operator

import gast
import numpy as np

from ..runtime import matmul_jvp, matmul_lhs_grad, matmul_rhs_grad, matmul_tangent, unbroadcast
from ..runtime.matmul import matrix_product
from . import Joint, describe, nondifferentiable, rule, tangent

OPERATORS = {
    gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
    gast.Div: operator.truediv, gast.Pow: operator.pow, gast.MatMult: operator.matmul,
    gast.Mod: operator.mod, gast.FloorDiv: operator.floordiv,
    gast.USub: operator.neg, gast.UAdd: operator.pos, gast.Not: operator.not_,
    gast.Invert: operator.invert,
    gast.Eq: operator.eq, gast.NotEq: operator.ne, gast.Lt: operator.lt,
    gast.LtE: operator.le, gast.Gt: operator.gt, gast.GtE: operator.ge,
    gast.Is: operator.is_, gast.IsNot: operator.is_not, gast.In: operator.contains,
    gast.NotIn: operator.contains,
    gast.BitAnd: operator.and_, gast.BitOr: operator.or_, gast.BitXor: operator.xor,
    gast.LShift: operator.lshift, gast.RShift: operator.rshift,
    gast.And: operator.and_, gast.Or: operator.or_,
}


# ---- arithmetic ----
@rule(operator.add, np.add, elementwise=True)
def add(dy, y, a, b):
    return unbroadcast(dy, a), unbroadcast(dy, b)


@rule(operator.sub, np.subtract, elementwise=True)
def sub(dy, y, a, b):
    return unbroadcast(dy, a), unbroadcast(-dy, b)


@rule(operator.mul, np.multiply, elementwise=True)
def mul(dy, y, a, b):
    return unbroadcast(dy * b, a), unbroadcast(dy * a, b)


@rule(operator.truediv, np.divide, np.true_divide, elementwise=True)
def truediv(dy, y, a, b):
    return unbroadcast(dy / b, a), unbroadcast(-dy * y / b, b)


@rule(operator.pow, np.power, np.float_power, pow, elementwise=True)
def power(dy, y, a, b):
    return unbroadcast(dy * b * a ** (b - 1), a), unbroadcast(dy * y * np.log(a), b)


@rule(operator.mod, np.mod, np.remainder, elementwise=True)
def mod(dy, y, a, b):
    # a % b = a - b * floor(a / b); floor has zero gradient
    return unbroadcast(dy, a), unbroadcast(-dy * np.floor(a / b), b)


@rule(operator.neg, np.negative, elementwise=True)
def neg(dy, y, x):
    return -dy


@rule(operator.pos, np.positive, elementwise=True)
def pos(dy, y, x):
    return dy


# ---- linear algebra (1-D and 2-D operands) ----
def _matmul_signature(x1, x2, /, out=None, *, dtype=None):
    """np.matmul's signature (a ufunc has none), which normalize binds a call to: a call
    of the two operands alone is written `x1 @ x2`."""


@rule(operator.matmul, np.matmul, np.dot)
def matmul(dy, y, a, b):
    return matmul_lhs_grad(dy, a, b), matmul_rhs_grad(dy, a, b)


@tangent(operator.matmul, np.matmul, np.dot)
def matmul_derivative(dx, y, a, b):
    return dx @ b, a @ dx


# where both factors vary, forward mode computes the product and its tangent in one call
describe(operator.matmul, np.matmul,
         joint=Joint(operator.matmul, (0, 1), matmul_jvp, matmul_tangent))
describe(np.matmul, compiled_as=matrix_product, signature=_matmul_signature,
         expanded=lambda given: "x1 @ x2" if given.keys() == {"x1", "x2"} else None)
describe(np.dot, methods=("dot",))
describe(np.negative, fusable=True)


# ---- no gradient ----
nondifferentiable(
    operator.floordiv, np.floor_divide, operator.not_, operator.invert,
    operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge,
    operator.is_, operator.is_not, operator.contains, operator.and_, operator.or_,
    operator.xor, operator.lshift, operator.rshift,
    np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
    np.logical_and, np.logical_or, np.logical_not, np.logical_xor,
)
