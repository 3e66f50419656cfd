"""The records of the helpers generated code calls (`srcgrad.runtime`).

Forward mode over a generated gradient (`hvp`, `hessian`, `grad(grad(f))`) meets these
helpers. Most are linear in the cotangent they move (`unbroadcast(g, like)` in `g`);
the tape helpers are linear in what they store; the adjoints of a product are bilinear.
Their facts tell the passes which change no argument (`pure`: dead code may go), which
read an argument for its shape only, and the faster forms of the products' adjoints.
"""

from ..runtime import (
    add_at,
    add_matmul_lhs_grad,
    add_matmul_rhs_grad,
    broadcast_like,
    checked_grad,
    extremum_grad,
    in_place_array,
    like_broadcast,
    like_reduced,
    matmul_jvp,
    matmul_lhs_grad,
    matmul_lhs_grad_jvp,
    matmul_lhs_grad_tangent,
    matmul_rhs_grad,
    matmul_rhs_grad_jvp,
    matmul_rhs_grad_tangent,
    matmul_tangent,
    mean_grad,
    new_tape,
    put_flat,
    record,
    reshape_as,
    retake,
    retake_grad,
    same_shape,
    scattered,
    seed,
    snapshot,
    split_like,
    sum_grad,
    take_along_axis_grad,
    take_grad,
    tree_vdot,
    unaliased,
    unbroadcast,
    unit,
    unshared,
    unstack_like,
    where,
    written_grad,
    zeros_like,
)
from ..runtime.common import formatted
from ..runtime.sequences import sum_items_grad
from . import Joint, describe, linear, nondifferentiable, rule, tangent

linear(unbroadcast, broadcast_like, sum_grad, mean_grad, extremum_grad, reshape_as, split_like,
       unstack_like, snapshot, checked_grad, new_tape, written_grad, take_grad,
       take_along_axis_grad, sum_items_grad)
# `record(tape, k, v)` writes v into the tape; `put_flat(g, k, v)` into entry k of g;
# `add_at(g, index, v)` adds v into g at index
linear(record, put_flat, add_at, positions=(0, 2))
describe(record, put_flat, add_at, writes=0)
# `retake(old, new)` is one of them, the same one for their tangents
linear(retake, positions=(0, 1))
linear(retake_grad, unshared, in_place_array)
# `unaliased(v, array, message)` is v, checked against array
linear(unaliased, positions=(0,))
# `scattered(like, index, v)`: v added into zeros at index (np.add.at's change), like read
# for its shape only
linear(scattered, positions=(2,))
# `where(cond, a, b)`, the form of np.where in generated adjoints: jointly linear in a, b
linear(where, positions=(1, 2))
nondifferentiable(seed, zeros_like, unit, same_shape)
nondifferentiable(formatted)   # (a string)
# stand-ins with no data of the shape of a value not computed (`passes.optimize.shaped`)
nondifferentiable(like_broadcast, like_reduced, pure=True)

# helpers that only return a value (record, put_flat, add_at and the in-place adders write
# into an argument; seed's check that the result is a scalar is its point)
describe(unbroadcast, broadcast_like, sum_grad, mean_grad, extremum_grad, retake, retake_grad,
         reshape_as, split_like, unstack_like, snapshot, zeros_like, unit, where, new_tape,
         take_grad, take_along_axis_grad, scattered, sum_items_grad, pure=True)
# an argument read for its shape only (at this position): in a loop, any iteration's value
# of it will do, so the adjoint need not get the value back
describe(zeros_like, scattered, shape_only=0)
describe(unbroadcast, broadcast_like, sum_grad, mean_grad, reshape_as, checked_grad,
         take_grad, take_along_axis_grad, sum_items_grad, shape_only=1)
# the adjoints of a product: `d += helper(...)` into an adjoint the generated code owns is
# written `adder(d, ...)`; forward mode computes one and its tangent in one call
describe(matmul_lhs_grad, pure=True, array_result=True, add_into=add_matmul_lhs_grad,
         joint=Joint(matmul_lhs_grad, (0, 2), matmul_lhs_grad_jvp, matmul_lhs_grad_tangent))
describe(matmul_rhs_grad, pure=True, array_result=True, add_into=add_matmul_rhs_grad,
         joint=Joint(matmul_rhs_grad, (0, 1), matmul_rhs_grad_jvp, matmul_rhs_grad_tangent))
# they take `loops=True` (a compiled `products` loop where it pays), which the Python form
# of a transform that compiles passes them
describe(matmul_jvp, matmul_rhs_grad_tangent, looped=True)
describe(where, fusable=True)


@tangent(matmul_lhs_grad)
def matmul_lhs_grad_derivative(dx, y, dy, a, b):
    return matmul_lhs_grad(dx, a, b), None, matmul_lhs_grad(dy, a, dx)


@tangent(matmul_rhs_grad)
def matmul_rhs_grad_derivative(dx, y, dy, a, b):
    return matmul_rhs_grad(dx, a, b), matmul_rhs_grad(dy, dx, b), None


@tangent(tree_vdot)
def tree_vdot_derivative(dx, y, a, b):
    return tree_vdot(dx, b), tree_vdot(a, dx)


# the tangents of the products' tangents (their `Joint`s), for third order: each is
# bilinear in (a, db), (da, b) or the like
@tangent(matmul_tangent)
def matmul_tangent_derivative(dx, y, a, b, da, db):
    return dx @ db, da @ dx, dx @ b, a @ dx


@tangent(matmul_lhs_grad_tangent)
def matmul_lhs_grad_tangent_derivative(dx, y, dy, a, b, ddy, db):
    return (matmul_lhs_grad(dx, a, db), None, matmul_lhs_grad(ddy, a, dx),
            matmul_lhs_grad(dx, a, b), matmul_lhs_grad(dy, a, dx))


@tangent(matmul_rhs_grad_tangent)
def matmul_rhs_grad_tangent_derivative(dx, y, dy, a, b, ddy, da):
    return (matmul_rhs_grad(dx, da, b), matmul_rhs_grad(ddy, dx, b), None,
            matmul_rhs_grad(dx, a, b), matmul_rhs_grad(dy, dx, b))


@rule(retake)
def retake_adjoint(dy, y, old, new):
    return retake_grad(dy, old)


@rule(scattered)
def scattered_adjoint(dy, y, like, index, v):
    # each entry of v was added at its place in the index: it reads dy there (repeats too)
    return None, None, unbroadcast(dy[index], v)


@rule(snapshot)
def snapshot_adjoint(dy, y, x):
    return dy


@rule(unshared)
def unshared_adjoint(dy, y, v, message):
    return dy, None


@rule(in_place_array)
def in_place_array_adjoint(dy, y, v, message):
    return dy, None


@rule(unaliased)
def unaliased_adjoint(dy, y, v, array, message):
    return dy, None, None
