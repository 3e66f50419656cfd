"""Sorting and selection: the records of np.sort, np.partition and np.select, the helpers
their rules call (each Python form beside its numba form), and under numba np.sort,
np.partition and np.argsort along an axis (numba's take the last axis alone) and np.select
with an array default (numba's takes a number).

np.sort and np.partition reorder x along an axis: y_k = x_{p(k)} for a permutation p, so
dx_{p(k)} = dy_k and the tangent is dy_k = dx_{p(k)}. The permutation is found by matching
values: a stable argsort of x and one of y list equal values in the same order, so
p(argsort(y)_i) = argsort(x)_i. For np.sort, y is sorted and p is NumPy's stable argsort
of x (tied entries keep their order); for np.partition it is the one that made y,
whatever the arrangement NumPy's or numba's algorithm chose (np.argpartition need not
arrange entries as np.partition does). Where x has ties the function is not
differentiable and this is one of its one-sided derivatives, as in JAX. np.select takes
entry i from the first choice whose condition holds there (else from `default`), so each
choice's gradient is dy where it was taken and 0 elsewhere, and the default's is dy where
no condition holds (summed to the default's shape: a number takes the sum).
"""

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from ..numba_ext import omitted
from ..runtime import unbroadcast
from . import describe, linear, nondifferentiable, rule, tangent
from .cumulative import lanes


def _stable_order(a, axis):
    """The order that sorts `a` along `axis`, equal entries kept in their order."""
    return np.argsort(a, axis=axis, kind="stable")


def matched_grad(dy, y, x, axis=-1):
    """The gradient of x where y is x reordered along `axis` (all of x flattened where
    axis is None): each entry of dy goes to the entry of x it came from, found by value.

    >>> matched_grad(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0]),
    ...              np.array([3.0, 1.0, 2.0]))
    array([3., 1., 2.])
    """
    if axis is None:
        return np.reshape(matched_grad(np.ravel(dy), y, np.ravel(x), 0), np.shape(x))
    dx = np.zeros(np.shape(x), np.result_type(dy, x, 1.0))
    taken = np.take_along_axis(np.broadcast_to(dy, np.shape(y)), _stable_order(y, axis), axis)
    np.put_along_axis(dx, _stable_order(x, axis), taken, axis)
    return dx


def matched_tangent(dx, y, x, axis=-1):
    """The tangent of y, x reordered along `axis` (flattened where None), in the
    direction dx: `matched_grad`'s transpose.

    >>> matched_tangent(np.array([10.0, 20.0, 30.0]), np.array([1.0, 2.0, 3.0]),
    ...                 np.array([3.0, 1.0, 2.0]))
    array([20., 30., 10.])
    """
    if axis is None:
        return matched_tangent(np.ravel(np.broadcast_to(dx, np.shape(x))), y, np.ravel(x), 0)
    dy = np.zeros(np.shape(y), np.result_type(dx, x, 1.0))
    taken = np.take_along_axis(np.broadcast_to(dx, np.shape(x)), _stable_order(x, axis), axis)
    np.put_along_axis(dy, _stable_order(y, axis), taken, axis)
    return dy


@register_jitable
def _matched(g, y, x, axis, adjoint):
    """`matched_grad` (adjoint; g has y's shape) or `matched_tangent` (g has x's shape)
    along `axis`, as (before, n, after)."""
    ys, xs, gs = lanes(y, axis), lanes(x, axis), lanes(g, axis)
    out = np.zeros(xs.shape)
    for p in range(xs.shape[0]):
        for q in range(xs.shape[2]):
            ox = np.argsort(xs[p, :, q].copy(), kind="mergesort")   # stable
            oy = np.argsort(ys[p, :, q].copy(), kind="mergesort")
            for i in range(xs.shape[1]):
                if adjoint:
                    out[p, ox[i], q] = gs[p, oy[i], q]
                else:
                    out[p, oy[i], q] = gs[p, ox[i], q]
    return out


def _flat(axis):
    """Whether a numba form was given axis=None (the default, -1, is an axis)."""
    return axis is None or isinstance(axis, types.NoneType)


@overload(matched_grad)
def _matched_grad_typer(dy, y, x, axis=-1):
    if not isinstance(x, types.Array):
        return None
    if _flat(axis):
        return lambda dy, y, x, axis=-1: _matched(
            np.broadcast_to(dy, y.shape), y, x.ravel(), 0, True).reshape(x.shape)
    return lambda dy, y, x, axis=-1: _matched(
        np.broadcast_to(dy, y.shape), y, x, axis, True).reshape(x.shape)


@overload(matched_tangent)
def _matched_tangent_typer(dx, y, x, axis=-1):
    if not isinstance(x, types.Array):
        return None
    if _flat(axis):
        return lambda dx, y, x, axis=-1: _matched(
            np.broadcast_to(dx, x.shape).ravel(), y, x.ravel(), 0, False).reshape(y.shape)
    return lambda dx, y, x, axis=-1: _matched(
        np.broadcast_to(dx, x.shape), y, x, axis, False).reshape(y.shape)


@register_jitable
def _sorted_lanes(a, axis, kth, whole):
    """`a` sorted (`whole`) or partitioned at `kth` along `axis`, as (before, n, after)."""
    parts = lanes(a, axis)
    out = np.empty(parts.shape)
    for p in range(parts.shape[0]):
        for q in range(parts.shape[2]):
            lane = parts[p, :, q].copy()
            out[p, :, q] = np.sort(lane) if whole else np.partition(lane, kth)
    return out


@overload(np.sort)
def _np_sort(a, axis=-1, kind=None, stable=None):
    # numba's np.sort takes the array alone: this form serves the calls with an axis,
    # a kind or `stable` (every kind sorts to the same values)
    if not isinstance(a, types.Array) or all(omitted(v) for v in (axis, kind, stable)):
        return None
    if _flat(axis):
        return lambda a, axis=-1, kind=None, stable=None: _sorted_lanes(
            a.ravel(), 0, 0, True).ravel()
    return lambda a, axis=-1, kind=None, stable=None: _sorted_lanes(
        a, axis, 0, True).reshape(a.shape)


@overload(np.partition)
def _np_partition(a, kth, axis=-1, kind="introselect"):
    # numba's np.partition takes (a, kth): this form serves the calls with an axis or
    # a kind
    if not isinstance(a, types.Array) or all(omitted(v) for v in (axis, kind)):
        return None
    if _flat(axis):
        return lambda a, kth, axis=-1, kind="introselect": _sorted_lanes(
            a.ravel(), 0, kth, False).ravel()
    return lambda a, kth, axis=-1, kind="introselect": _sorted_lanes(
        a, axis, kth, False).reshape(a.shape)


@register_jitable
def _argsorted_lanes(a, axis):
    """The stable order that sorts `a` along `axis`, as (before, n, after)."""
    parts = lanes(a, axis)
    out = np.empty(parts.shape, np.intp)
    for p in range(parts.shape[0]):
        for q in range(parts.shape[2]):
            out[p, :, q] = np.argsort(parts[p, :, q].copy(), kind="mergesort")
    return out


@overload(np.argsort)
def _np_argsort(a, axis=-1, kind=None, order=None, stable=None):
    # numba's np.argsort takes (a, kind): this form serves the calls with an axis or
    # `stable`, and sorts stably whatever the kind (NumPy's default kind leaves the order
    # of ties to its algorithm: either order is a sorting one)
    if not isinstance(a, types.Array) or omitted(axis) and omitted(stable):
        return None
    if not (omitted(order) or isinstance(order, types.NoneType)):
        raise TypingError("srcgrad: np.argsort compiles without order=")
    if _flat(axis):
        return lambda a, axis=-1, kind=None, order=None, stable=None: _argsorted_lanes(
            a.ravel(), 0).ravel()
    return lambda a, axis=-1, kind=None, order=None, stable=None: _argsorted_lanes(
        a, axis).reshape(a.shape)


# any `kind` (or `stable`) sorts to the same values; the gradient is matched by value
@rule(np.sort)
def sort(dy, y, a, axis=-1, kind=None, stable=None):
    return matched_grad(dy, y, a, axis)


@tangent(np.sort)
def sort_tangent(dx, y, a, axis=-1, kind=None, stable=None):
    return matched_tangent(dx, y, a, axis)


@rule(np.partition)
def partition(dy, y, a, kth, axis=-1, kind="introselect"):
    return matched_grad(dy, y, a, axis), None


@tangent(np.partition)
def partition_tangent(dx, y, a, kth, axis=-1, kind="introselect"):
    return matched_tangent(dx, y, a, axis), None


linear(matched_grad, matched_tangent)
describe(matched_grad, matched_tangent, pure=True)


# ---- selection ----


def select_grads(dy, condlist, choicelist):
    """The gradients of the choices of ``y = np.select(condlist, choicelist, default)``:
    dy where a choice was taken (its condition the first to hold), 0 elsewhere; each in
    its choice's shape.

    >>> select_grads(np.ones(2), [np.array([True, False])], [np.zeros(2)])
    (array([1., 0.]),)
    """
    taken = np.zeros(np.shape(dy), bool)
    out = []
    for cond, choice in zip(condlist, choicelist, strict=True):
        here = np.logical_and(cond, np.logical_not(taken))
        out.append(unbroadcast(np.where(here, dy, 0.0), choice))
        taken = np.logical_or(taken, here)
    return tuple(out)


_SELECT_STEP = ("    here = np.logical_and(condlist[{k}], np.logical_not(taken))\n"
                "    g{k} = unbroadcast(np.where(here, dy, 0.0), choicelist[{k}])\n"
                "    taken = np.logical_or(taken, here)\n")


@overload(select_grads)
def _select_grads_typer(dy, condlist, choicelist):
    if not isinstance(dy, types.Array):
        return None
    if isinstance(choicelist, types.List):   # a list in, a list out
        def grads(dy, condlist, choicelist):
            taken = np.zeros(dy.shape, np.bool_)
            out = []
            for k in range(len(choicelist)):
                here = np.logical_and(condlist[k], np.logical_not(taken))
                out.append(unbroadcast(np.where(here, dy, 0.0), choicelist[k]))
                taken = np.logical_or(taken, here)
            return out
        return grads
    if not isinstance(choicelist, types.BaseTuple):
        return None
    n = len(choicelist)   # a tuple in, a tuple out: its items' types may differ
    body = ("def grads(dy, condlist, choicelist):\n"
            "    taken = np.zeros(dy.shape, np.bool_)\n"
            + "".join(_SELECT_STEP.format(k=k) for k in range(n))
            + "    return (" + "".join(f"g{k}, " for k in range(n)) + ")\n")
    namespace = {"np": np, "unbroadcast": unbroadcast}
    exec(body, namespace)
    return namespace["grads"]


def unselected(condlist, y):
    """Where ``y = np.select(condlist, choicelist, default)`` took `default`: no condition
    holds there (a boolean array of y's shape).

    >>> unselected([np.array([True, False])], np.zeros(2))
    array([False,  True])
    """
    none = np.ones(np.shape(y), bool)
    for cond in condlist:
        none = np.logical_and(none, np.logical_not(cond))
    return none


@overload(unselected)
def _unselected_typer(condlist, y):
    if not isinstance(condlist, (types.List, types.UniTuple)):
        return None

    def impl(condlist, y):
        none = np.ones(np.shape(y), np.bool_)
        for k in range(len(condlist)):
            none = np.logical_and(none, np.logical_not(condlist[k]))
        return none
    return impl


@rule(np.select)
def select(dy, y, condlist, choicelist, default=0):
    return (None, select_grads(dy, condlist, choicelist),
            unbroadcast(np.where(unselected(condlist, y), dy, 0.0), default))


@tangent(np.select)
def select_tangent(dx, y, condlist, choicelist, default=0):
    # dx: the choices' tangents, then the default's
    return None, np.select(condlist, dx, 0.0), np.where(unselected(condlist, y), dx, 0.0)


@overload(np.select)
def _select_typer(condlist, choicelist, default=0):
    # numba's own takes a number as the default only: an array one, entry i from the first
    # choice whose condition holds there, as np.where from the last choice to the first
    if not (isinstance(default, types.Array) and isinstance(condlist, (types.List, types.UniTuple))
            and isinstance(choicelist, (types.List, types.UniTuple))):
        return None

    def impl(condlist, choicelist, default=0):
        n = len(condlist)
        if n == 0 or len(choicelist) != n:
            raise ValueError("np.select: condlist and choicelist must be of the same, "
                             "nonzero length")
        out = np.where(condlist[n - 1], choicelist[n - 1], default)
        for k in range(n - 2, -1, -1):
            out = np.where(condlist[k], choicelist[k], out)
        return out
    return impl


linear(select_grads)
describe(select_grads, pure=True)
nondifferentiable(unselected, pure=True)
