"""Every registered gradient rule against central finite differences.

The sweep is driven by the rule table itself: `test_every_rule_has_a_case` fails the
moment a rule is registered without a case here, so no rule goes untested. Each case
runs at several shapes (scalars, vectors, matrices, broadcasting pairs) under numba and
as Python.
"""

import builtins
import math
import operator

import numpy as np
import pytest
from fd import assert_grad
from marks import compiles
from sweep import (
    binary,
    check,
    domains,
    family_cases,
    parametrize,
    scalar_binary,
    scalar_unary,
    unary,
)

import srcgrad
from srcgrad.rules import OPS, lookup_tangent
from srcgrad.runtime import in_place_array, retake, snapshot, unaliased, unshared

any_, pos, unit, distinct = domains(1)


# ---- function templates: one source each, the operation comes from the closure ----
def reduce_(op, axis=None, keepdims=False):
    if keepdims:
        def f(x):
            return np.sum(op(x, axis=axis, keepdims=True) ** 2)
    elif axis is not None:
        def f(x):
            return np.sum(op(x, axis=axis) ** 2)
    else:
        def f(x):
            return np.sum(op(x) ** 2)
    return f


def add_op(a, b):
    return a + b


def sub_op(a, b):
    return a - b


def mul_op(a, b):
    return a * b


def div_op(a, b):
    return a / b


def pow_op(a, b):
    return a ** b


def mod_op(a, b):
    return a % b


def neg_op(x):
    return -x


def matmul_op(a, b):
    return a @ b


def transpose_attr(x):
    return np.sum(x.T * np.arange(6.0).reshape(3, 2))


def where_op(c, a, b):
    return np.sum(np.where(c, a, b) * 1.3)


def clip_op(x, lo, hi):
    return np.sum(np.clip(x, lo, hi) * 1.3)


def reshape_op(x):
    return np.sum(np.reshape(x, (3, 2)) * np.arange(6.0).reshape(3, 2))


def ravel_op(x):
    return np.sum(np.ravel(x) * np.arange(6.0))


def squeeze_op(x):
    return np.sum(np.squeeze(x) * np.arange(3.0))


def expand_op(x):
    return np.sum(np.expand_dims(x, 0) * np.arange(3.0))


def copy_op(x):
    return np.sum(np.copy(x) * np.ascontiguousarray(x))


def cross_op(a, b):
    return np.sum(np.cross(a, b) * np.arange(12.0).reshape(4, 3))


def outer_op(a, b):
    return np.sum(np.outer(a, b) * np.arange(12.0).reshape(3, 4))


def retake_op(a, b, c):
    # a row taken again (old an array: the new one), an entry (old a number: kept)
    return np.sum(retake(a * 2.0, b) ** 2) + retake(c * 3.0, b[0]) ** 2


def unshared_op(a):
    # the check before `v op= e` on a value that may be shared: the number itself
    return unshared(a * 2.0, "not an array") ** 2


def in_place_array_op(a):
    # the check before srcgrad's `v[:] op= e` of `v op= e` on a value a view is taken of
    return np.sum(in_place_array(a * 2.0, "not a number") ** 2)


def snapshot_op(a, b):
    # the copy on entry of a parameter that may be a number: an array and a number
    return np.sum(snapshot(a * 2.0) ** 2) + snapshot(b * 3.0) ** 2


def unaliased_op(a, b):
    # the check after a write into b on a value that may be a view of it: a number here
    return unaliased(a * 2.0, b, "not a view") ** 2 + np.sum(b)


def concatenate_op(a, b):
    return np.sum(np.concatenate((a, b * 2.0), axis=1) ** 2) + np.sum(np.concatenate((a, b)))


def take_op(a):
    # repeated entries add: flat (an index of rank 2), a method (axis=: test_regressions_index)
    return np.sum(np.take(a, [[5, 5], [0, 11]]) ** 2) + np.sum(a.take([1, 1])) + \
        np.sum(np.take(a, [13, -14], mode="wrap") ** 3) + \
        np.sum(a.take([20, -3], axis=1, mode="clip") * 1.7)


def take_along_axis_op(a, order):
    picks = np.array([[0, 0, 3], [2, 1, 1], [3, 3, 3]])
    return np.sum(np.take_along_axis(a, order, axis=1) * np.arange(12.0).reshape(3, 4)) + \
        np.sum(np.take_along_axis(a, picks, axis=-1) ** 2) + \
        np.sum(np.take_along_axis(a, np.array([[2, 2, 0, 1]]), axis=0) ** 3)


def cumsum_op(a):
    # flat, along each axis, and as a method
    return np.sum(np.cumsum(a) ** 2) + np.sum(np.sin(np.cumsum(a, axis=1)) * np.arange(4.0)) \
        + np.sum(np.cumsum(a, axis=0) ** 3) + np.sum(a.cumsum() ** 2)


def cumsum_method_along_an_axis(a):
    return np.sum(a.cumsum(axis=-1) ** 2)


def linalg_op(a):
    # a well-conditioned matrix: inv and det, and det of a stack (Python form)
    m = a[:, :3] + 3.0 * np.eye(3)
    return np.sum(np.linalg.inv(m) * np.arange(9.0).reshape(3, 3)) + np.linalg.det(m) ** 2


def solve_op(a, b):
    # a right-hand side that is a vector, and one that is a matrix
    m = a[:, :3] + 3.0 * np.eye(3)
    return np.sum(np.linalg.solve(m, b) ** 2) + np.sum(np.sin(np.linalg.solve(m, a)))


def stack_op(a, b):
    return np.sum(np.stack((a, b), axis=-1) * np.arange(2.0)) + np.sum(np.stack((a, a)) ** 2)


def float_op(x):
    return float(x) * 2.0


def pos_op(x):
    return +x * np.positive(x)


ELEMENTWISE = [
    ((np.sin,), any_), ((np.cos,), any_), ((np.tan,), unit), ((np.arcsin,), unit),
    ((np.arccos,), unit), ((np.arctan,), any_), ((np.sinh,), any_), ((np.cosh,), any_),
    ((np.tanh,), any_), ((np.exp,), any_), ((np.exp2,), any_), ((np.expm1,), any_),
    ((np.log,), pos), ((np.log2,), pos), ((np.log10,), pos), ((np.log1p,), pos),
    ((np.sqrt,), pos), ((np.cbrt,), pos), ((np.square,), any_), ((np.reciprocal,), pos),
    ((np.negative,), any_), ((np.abs, np.absolute), distinct),
]
MATH = [math.sin, math.cos, math.tan, math.asin, math.acos, math.atan, math.sinh,
        math.cosh, math.tanh, math.exp, math.expm1, math.log, math.log2, math.log10,
        math.log1p, math.sqrt, math.fabs]
MATH_DOMAIN = {math.asin: unit, math.acos: unit, math.tan: unit, math.log: pos,
               math.log2: pos, math.log10: pos, math.log1p: pos, math.sqrt: pos,
               math.fabs: distinct}
BINARY = [
    ((operator.add, np.add), add_op, any_, any_),
    ((operator.sub, np.subtract), sub_op, any_, any_),
    ((operator.mul, np.multiply), mul_op, any_, any_),
    ((operator.truediv, np.divide, np.true_divide), div_op, any_, pos),
    ((operator.pow, np.power, np.float_power, builtins.pow), pow_op, pos, any_),
    ((operator.mod, np.mod, np.remainder), mod_op, pos, pos),
    ((np.arctan2,), np.arctan2, any_, any_),
    ((np.hypot,), np.hypot, any_, any_),
    ((np.logaddexp,), np.logaddexp, any_, any_),
    ((np.maximum,), np.maximum, distinct, distinct),
    ((np.minimum,), np.minimum, distinct, distinct),
    ((np.fmax,), np.fmax, distinct, distinct),
    ((np.fmin,), np.fmin, distinct, distinct),
]
SHAPES_1 = [(), (5,), (3, 4)]
SHAPES_2 = [((), ()), ((4,), (4,)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((), (2, 3)),
            ((2, 3), ())]


def cases():
    """(id, primals covered, function, arguments, positions to differentiate, and whether
    to run it compiled too). Every case runs as Python; compiled, each rule runs at the
    shapes that take distinct paths through numba (scalar, array, one broadcast), since
    each case costs a numba compile of seconds."""
    for primals, dom in ELEMENTWISE:
        for shape in SHAPES_1:
            yield (primals[0].__name__, primals, unary(primals[0]), (dom(*shape),), [0],
                   shape != (5,))
    for op in MATH:
        x = MATH_DOMAIN.get(op, any_)()
        yield f"math.{op.__name__}", (op,), scalar_unary(op), (x,), [0], True
    for primals, op, da, db in BINARY:
        name = getattr(primals[0], "__name__", str(primals[0]))
        for sa, sb in SHAPES_2:
            compiled = (sa, sb) in (((), ()), ((3, 4), (4,))) or primals[0] is operator.mul
            yield name, primals, binary(op), (da(*sa), db(*sb)), [0, 1], compiled
        if primals[0] in (np.maximum, np.minimum):  # Python's max/min share the rule
            builtin = builtins.max if primals[0] is np.maximum else builtins.min
            yield builtin.__name__, (builtin,), scalar_binary(builtin), (1.3, -0.4), [0, 1], True
    for fun in (math.atan2, math.hypot):
        yield f"math.{fun.__name__}", (fun,), scalar_binary(fun), (0.7, -1.2), [0, 1], True
    yield "neg", (operator.neg,), unary(neg_op), (any_(3, 2),), [0], True
    yield "pos", (operator.pos, np.positive), pos_op, (any_(),), [0], True
    yield "abs", (builtins.abs,), scalar_unary(builtins.abs), (-1.5,), [0], True
    yield "float", (builtins.float,), float_op, (1.7,), [0], True
    yield "identity", (srcgrad.identity,), unary(srcgrad.identity), (any_(3, 2),), [0], True
    for sa, sb in [((3, 4), (4, 2)), ((3, 4), (4,)), ((4,), (4, 2)), ((4,), (4,))]:
        args = (any_(*sa), any_(*sb))
        yield "matmul", (operator.matmul, np.matmul), binary(matmul_op), args, [0, 1], True
        yield "dot", (np.dot,), binary(np.dot), args, [0, 1], True
    for kw in [{}, {"axis": 0}, {"axis": -1}, {"axis": 1, "keepdims": True}]:
        for ops, dom in [((np.sum,), any_), ((np.mean,), any_), ((np.prod,), pos),
                         ((np.max, np.amax), distinct), ((np.min, np.amin), distinct),
                         ((np.var,), any_), ((np.std,), any_)]:
            compiled = ops[0] in (np.sum, np.max) or kw in ({}, {"axis": 1, "keepdims": True})
            yield f"{ops[0].__name__}-{kw}", ops, reduce_(ops[0], **kw), (dom(3, 4),), [0], compiled
    yield "sum-1d", (np.sum,), reduce_(np.sum), (any_(5),), [0], True
    yield "max-1d", (np.max,), reduce_(np.max, axis=0), (distinct(5),), [0], True
    yield "transpose", (np.transpose,), unary(np.transpose), (any_(3, 4),), [0], True
    yield "T", (np.transpose,), transpose_attr, (any_(2, 3),), [0], True
    cond = unit(3, 4) > 0.0   # the same draws as uniform(size=(3, 4)) > 0.5
    yield "where", (np.where,), where_op, (cond, any_(3, 4), any_(4)), [1, 2], True
    yield "clip", (np.clip,), clip_op, (distinct(3, 4), -0.5, 0.55), [0, 1, 2], True
    yield "reshape", (np.reshape,), reshape_op, (any_(2, 3),), [0], True
    yield "ravel", (np.ravel,), ravel_op, (any_(2, 3),), [0], True
    yield "squeeze", (np.squeeze,), squeeze_op, (any_(1, 3),), [0], True
    yield "expand_dims", (np.expand_dims,), expand_op, (any_(3),), [0], True
    yield "copy", (np.copy, np.ascontiguousarray), copy_op, (any_(3, 2),), [0], True
    yield "outer", (np.outer,), outer_op, (any_(3), any_(4)), [0, 1], True
    yield "cross", (np.cross,), cross_op, (any_(4, 3), any_(3)), [0, 1], True
    yield "retake", (retake,), retake_op, (any_(3), any_(3), 0.7), [0, 1, 2], True
    yield "unshared", (unshared,), unshared_op, (0.7,), [0], True
    yield "in_place_array", (in_place_array,), in_place_array_op, (any_(3),), [0], True
    yield "snapshot", (snapshot,), snapshot_op, (any_(3), 0.7), [0, 1], True
    yield "unaliased", (unaliased,), unaliased_op, (0.7, any_(3)), [0, 1], True
    yield "concatenate", (np.concatenate,), concatenate_op, (any_(2, 3), any_(2, 3)), [0, 1], True
    yield "stack", (np.stack,), stack_op, (any_(2, 3), any_(2, 3)), [0, 1], True
    yield "take", (np.take,), take_op, (any_(3, 4),), [0], True
    yield "cumsum", (np.cumsum,), cumsum_op, (any_(3, 4),), [0], True
    yield "linalg", (np.linalg.inv, np.linalg.det), linalg_op, (any_(3, 4),), [0], True
    yield "solve", (np.linalg.solve,), solve_op, (any_(3, 4), any_(3)), [0, 1], True
    yield "take_along_axis", (np.take_along_axis,), take_along_axis_op, \
        (any_(3, 4), np.argsort(any_(3, 4), axis=1)), [0], True


CASES = list(cases())


def test_every_rule_has_a_case():
    every = CASES + family_cases()
    covered = {id(p) for _, primals, *_ in every for p in primals}
    compiled = {id(p) for _, primals, *_, jit in every if jit for p in primals}
    assert covered == compiled, "every rule runs compiled at least once"
    missing = [p for p, r in OPS.items() if r.rule is not None and r.rule.kind == "rule"
               and r.rule.origin is None and id(p) not in covered]  # (user rules have one)
    assert not missing, f"rules without a test case: {missing}"


def test_every_rule_has_a_tangent():
    # forward mode (jvp, hvp, hessian, grad of grad) differentiates every built-in rule
    missing = [p for p, r in OPS.items() if r.rule is not None and r.rule.kind == "rule"
               and r.rule.origin is None and lookup_tangent(p) is None]
    assert not missing, f"rules without a tangent rule: {missing}"


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


def test_rules_are_plain_functions():
    """A rule is callable directly with the public signature rule(dy, y, *args)."""
    from srcgrad.rules.numpy_rules import sin, tanh
    from srcgrad.rules.operator_rules import mul
    assert sin(2.0, np.sin(0.3), 0.3) == pytest.approx(2.0 * np.cos(0.3))
    assert tanh(1.0, np.tanh(0.5), 0.5) == pytest.approx(1 - np.tanh(0.5) ** 2)
    da, db = mul(1.0, 6.0, 2.0, 3.0)
    assert (da, db) == (3.0, 2.0)


# ---- uniform rules: the cotangent of a full reduction kept as a scalar ----


def mean_square(r, y):
    return np.mean((r - y) ** 2)


def sum_sin(x):
    return np.sum(np.sin(x))


def mean_of_product(a, b):
    return np.mean(a * b)  # a (3, 1), b (1, 4): neither operand has the result's shape


def mean_read_twice(x):
    s = x ** 2
    return np.mean(s) + np.sum(s[0])


def sum_over_axis(x):
    return np.sum(np.sum(x ** 2, axis=0))


def mean_then_overwritten(x):
    r = x * 2.0
    loss = np.mean(r ** 2)  # the adjoint reads r's size here: r's value at this line
    r = r[1:]
    return loss + r[0]


UNIFORM_CASES = {
    # f, args, the gradient wrt argument 0 by hand
    mean_square: (lambda rng: (rng.standard_normal((4, 3)), rng.standard_normal((4, 3))),
                  lambda r, y: 2.0 * (r - y) / r.size),
    sum_sin: (lambda rng: (rng.standard_normal(5),), np.cos),
    mean_of_product: (lambda rng: (rng.standard_normal((3, 1)), rng.standard_normal((1, 4))),
                      lambda a, b: np.broadcast_to(np.sum(b) / 12.0, (3, 1))),
    mean_read_twice: (lambda rng: (rng.standard_normal((2, 3)),),
                      lambda x: 2.0 * x / x.size + np.concatenate([2.0 * x[:1], 0 * x[1:]])),
    sum_over_axis: (lambda rng: (rng.standard_normal((2, 3)),), lambda x: 2.0 * x),
    mean_then_overwritten: (lambda rng: (rng.standard_normal(4),),
                            lambda x: 8.0 * x / x.size + np.array([0.0, 2.0, 0.0, 0.0])),
}


@pytest.mark.parametrize("fun", list(UNIFORM_CASES), ids=lambda f: f.__name__)
def test_uniform_cotangent_of_a_full_reduction(fun, jit, rng):
    # where a full sum or mean reduces a value that an elementwise rule made from one
    # variable, the adjoint passes the cotangent on as a scalar (no array is filled);
    # elsewhere it fills one: both checked against the gradient by hand and differences
    make, by_hand = UNIFORM_CASES[fun]
    args = make(rng)
    source = srcgrad.grad(fun).source
    scalar = fun in (mean_square, sum_sin, mean_then_overwritten)
    assert ("mean_grad(" not in source and "sum_grad(" not in source) == scalar, source
    got = srcgrad.grad(fun, jit=jit)(*args)
    np.testing.assert_allclose(got, by_hand(*args), rtol=1e-12, atol=1e-15)
    assert_grad(fun, [got], args, [0])


def test_grad_computes_no_value_it_does_not_need(jit, rng):
    # a full reduction is a scalar by construction: grad needs neither its value (to
    # check it) nor the square under it (the uniform rule reads the residual's size)
    r, y = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    source = srcgrad.grad(mean_square).source
    code = "\n".join(line for line in source.splitlines() if not line.strip().startswith("#"))
    assert "np.mean(" not in code and "** 2" not in code, source
    assert "np.mean(" in srcgrad.value_and_grad(mean_square).source
    np.testing.assert_allclose(srcgrad.grad(mean_square, jit=jit)(r, y),
                               2.0 * (r - y) / r.size, rtol=1e-12)
    value, grad = srcgrad.value_and_grad(mean_square, jit=jit)(r, y)
    assert value == pytest.approx(np.mean((r - y) ** 2), rel=1e-14)
    np.testing.assert_allclose(grad, 2.0 * (r - y) / r.size, rtol=1e-12)


def test_a_float32_gradient_stays_float32_as_python(rng):
    x = rng.standard_normal(5).astype(np.float32)
    got = srcgrad.grad(sum_sin, jit=False)(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.cos(x), rtol=1e-6)


def test_cumsum_method_along_an_axis(jit):
    # numba < 0.60 (the oldest env) has x.cumsum() without an axis only
    import numba
    if jit and numba.version_info[:2] < (0, 60):
        pytest.skip("numba < 0.60: x.cumsum takes no axis")
    a = np.arange(12.0).reshape(3, 4) / 10.0
    g = srcgrad.grad(cumsum_method_along_an_axis, jit=jit)(a)
    assert_grad(cumsum_method_along_an_axis, [g], (a,), [0])


def weighted_cumsum(x, w, axis):
    return np.sum(np.cumsum(x, axis=axis) * w)


def test_cumsum_by_hand_and_forward(jit, rng):
    # entry i of x reaches entries i, i+1, ... of y: d/dx_i = sum over j >= i of w_j
    x = np.array([1.0, 2.0, 3.0])
    g = srcgrad.grad(weighted_cumsum, jit=jit)(x, np.array([1.0, 10.0, 100.0]), 0)
    np.testing.assert_allclose(g, [111.0, 110.0, 100.0])
    w = np.array([[1.0, 2.0], [10.0, 20.0]])
    g = srcgrad.grad(weighted_cumsum, jit=jit)(np.ones((2, 2)), w, 0)
    np.testing.assert_allclose(g, [[11.0, 22.0], [10.0, 20.0]])
    # forward mode: cumsum is linear (its tangent is the cumsum of dx); the hvp goes
    # through the adjoint's helper, against differences of grad
    a, da = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    h = 1e-6
    slope = srcgrad.jvp(cumsum_op, jit=jit)(a, da)[1]
    assert slope == pytest.approx((cumsum_op(a + h * da) - cumsum_op(a - h * da)) / (2 * h),
                                  rel=1e-6)
    grad = srcgrad.grad(cumsum_op, jit=False)  # (the reference: its Python form)
    np.testing.assert_allclose(srcgrad.hvp(cumsum_op, jit=jit)(a, da),
                               (grad(a + h * da) - grad(a - h * da)) / (2 * h),
                               rtol=1e-5, atol=1e-6)


def inverse_and_determinant(a, w):
    return np.sum(np.linalg.inv(a) * w) + np.linalg.det(a)


def determinants_of_a_stack(a):
    return np.sum(np.linalg.det(a) ** 2) + np.sum(np.linalg.inv(a))


def test_inv_and_det_by_hand_and_forward(jit, rng):
    # det [[p, q], [r, s]] = ps - qr: d/da = [[s, -r], [-q, p]]; with a = diag(2, 4) and
    # w = ones, d sum(inv(a))/da = -inv(a)^T ones inv(a)^T = -[[1/4, 1/8], [1/8, 1/16]]
    a = np.array([[2.0, 0.0], [0.0, 4.0]])
    g = srcgrad.grad(inverse_and_determinant, jit=jit)(a, np.ones((2, 2)))
    np.testing.assert_allclose(g, -np.array([[1 / 4, 1 / 8], [1 / 8, 1 / 16]]) +
                               np.array([[4.0, 0.0], [0.0, 2.0]]))
    m, dm = rng.standard_normal((3, 3)) + 3.0 * np.eye(3), rng.standard_normal((3, 3))
    w = rng.standard_normal((3, 3))
    h = 1e-6
    slope = srcgrad.jvp(inverse_and_determinant, jit=jit)(m, w, dm)[1]
    assert slope == pytest.approx((inverse_and_determinant(m + h * dm, w) -
                                   inverse_and_determinant(m - h * dm, w)) / (2 * h), rel=1e-6)
    grad = srcgrad.grad(inverse_and_determinant, jit=False)  # (the reference: its Python form)
    np.testing.assert_allclose(srcgrad.hvp(inverse_and_determinant, jit=jit)(m, w, dm),
                               (grad(m + h * dm, w) - grad(m - h * dm, w)) / (2 * h),
                               rtol=1e-5, atol=1e-5)


STACK = np.random.default_rng(2).standard_normal((2, 3, 3)) + 3.0 * np.eye(3)


def test_inv_and_det_of_a_stack():
    # as Python; numba's inv and det take one matrix (below)
    g = srcgrad.grad(determinants_of_a_stack, jit=False)(STACK)
    assert_grad(determinants_of_a_stack, [g], (STACK,), [0])


@compiles
def test_inv_and_det_of_a_stack_compiled_is_a_clear_error():
    with pytest.raises(srcgrad.SrcgradError, match="numba takes one matrix"):
        srcgrad.grad(determinants_of_a_stack, jit=True)(STACK)


def solved_sum(a, b):
    return np.sum(np.linalg.solve(a, b))


def test_solve_by_hand_and_of_a_stack(jit):
    # a = 2 I: y = b / 2, so d sum(y)/db = 1/2 and d/da = -g y^T with g = a^-T 1 = 1/2
    a, b = 2.0 * np.eye(2), np.array([1.0, 3.0])
    da, db = srcgrad.grad(solved_sum, wrt=(0, 1), jit=jit)(a, b)
    np.testing.assert_allclose(db, [0.5, 0.5])
    np.testing.assert_allclose(da, -0.25 * np.outer([1.0, 1.0], b))
    with pytest.raises(srcgrad.SrcgradError, match="stack of matrices|one matrix"):
        srcgrad.grad(solved_sum, jit=jit)(STACK, np.ones((2, 3, 1)))
    # forward mode (dy = a^-1 (db - da y)) and the hvp, against differences
    rng = np.random.default_rng(3)
    m, b2 = rng.standard_normal((3, 3)) + 3.0 * np.eye(3), rng.standard_normal((3, 2))
    dm, db2 = rng.standard_normal((3, 3)), rng.standard_normal((3, 2))
    h = 1e-6
    slope = srcgrad.jvp(solve_op, wrt=(0, 1), jit=jit)(m, b2[:, 0], (dm, db2[:, 0]))[1]
    assert slope == pytest.approx((solve_op(m + h * dm, b2[:, 0] + h * db2[:, 0]) -
                                   solve_op(m - h * dm, b2[:, 0] - h * db2[:, 0])) / (2 * h),
                                  rel=1e-6)
    grad = srcgrad.grad(solved_sum, wrt=0, jit=False)  # (the reference: its Python form)
    np.testing.assert_allclose(srcgrad.hvp(solved_sum, wrt=0, jit=jit)(m, b2, dm),
                               (grad(m + h * dm, b2) - grad(m - h * dm, b2)) / (2 * h),
                               rtol=1e-5, atol=1e-6)


def taken_wrapped(x, w):
    return np.sum(np.take(x, [4, -1], mode="wrap") * w)


def taken_clipped(x, w):
    return np.sum(x.take(np.array([5, -7]), mode="clip") * w)


def test_take_modes_by_hand(jit):
    x, w = np.array([1.0, 2.0, 3.0]), np.array([10.0, 100.0])
    # wrap reads entries 1 and 2; clip reads 2 and 0 (a negative index clips to 0)
    np.testing.assert_allclose(srcgrad.grad(taken_wrapped, jit=jit)(x, w), [0.0, 10.0, 100.0])
    np.testing.assert_allclose(srcgrad.grad(taken_clipped, jit=jit)(x, w), [100.0, 0.0, 10.0])
    value, slope = srcgrad.jvp(taken_clipped, jit=jit)(x, w, np.array([1.0, 2.0, 4.0]))
    assert (value, slope) == (taken_clipped(x, w), 4.0 * 10.0 + 1.0 * 100.0)
