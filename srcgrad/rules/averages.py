"""np.average: its record, the helpers its rule calls (each Python form beside its numba
form), and `weighted_mean`, which generated code calls in np.average's place (numba's
np.average takes an axis and raises; its numba form takes one).

``y = np.average(a, axis, weights)`` is sum(w a) / sum(w) along the axis (the mean without
weights), so the gradient of a is dy w / sum(w), spread along the axis, and that of the
weights dy (a - y) / sum(w). Weights of a's own shape are differentiated, and so are 1-D
weights along an integer axis of a larger a, which NumPy broadcasts over a's other axes
(`spread_weights`; their gradient is the one of that broadcast summed over those axes,
`gather_weights`). Weights of another shape (along a tuple of axes) are refused (give
them a's shape first).

``np.average(..., returned=True)`` is written by normalize (the record's `expanded`) as
the tuple of the average and the sum of the weights along the axis (of the weights
spread to a's shape, as NumPy sums them; the count of a's entries along the axis
without weights), each differentiated by its own rule; `returned=` must be a constant.
"""

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from ..errors import MissingRule, RuleError
from ..numba_ext import _is_none, _static_bool
from ..runtime import mean_grad, sum_grad
from . import NOT_CONSTANT, describe, linear, rule, tangent

_OTHER_SHAPE = ("np.average with weights of another shape than a (but 1-D ones along an "
                "integer axis) has no gradient rule: give them a's shape (w * np.ones_like(a))")


def _refused(options) -> str | None:
    if options.get("returned"):
        return "returned=True gives a tuple with the weights' sum: compute it apart"
    return None


def spread_weights(weights, a, axis=None):
    """The weights in a's shape: themselves where they have it, and 1-D weights along
    an integer axis broadcast over a's other axes, as np.average reads them.

    >>> spread_weights(np.array([1.0, 3.0]), np.zeros((3, 2)), 1)
    array([[1., 3.],
           [1., 3.],
           [1., 3.]])
    """
    if np.shape(weights) == np.shape(a):
        return weights
    if np.ndim(weights) != 1 or not isinstance(axis, (int, np.integer)):
        raise MissingRule(_OTHER_SHAPE)
    shape = [1] * np.ndim(a)
    shape[axis] = -1
    return np.broadcast_to(np.reshape(weights, shape), np.shape(a))


def gather_weights(g, weights, axis=None):
    """The adjoint of `spread_weights`: g (in a's shape) summed over the axes the weights
    were broadcast over.

    >>> gather_weights(np.ones((3, 2)), np.ones(2), -1)
    array([3., 3.])
    """
    if np.shape(g) == np.shape(weights):
        return g
    along = axis % np.ndim(g)
    return np.sum(g, axis=tuple(k for k in range(np.ndim(g)) if k != along))


@register_jitable
def _sides(shape, axis):
    """The sizes before and after the axis: a as (outer, n, inner)."""
    nd = len(shape)
    along = axis + nd if axis < 0 else axis
    outer, inner = 1, 1
    for k in range(nd):
        if k < along:
            outer *= shape[k]
        elif k > along:
            inner *= shape[k]
    return outer, inner


def _along_axis(weights, a, axis) -> bool:
    """Whether numba's forms see 1-D weights along an integer axis of a larger a."""
    if weights.ndim == a.ndim:
        return False
    if weights.ndim == 1 and isinstance(axis, types.Integer):
        return True
    raise TypingError(f"srcgrad: {_OTHER_SHAPE}")


@overload(spread_weights)
def _spread_weights_typer(weights, a, axis=None):
    if not _along_axis(weights, a, axis):
        return lambda weights, a, axis=None: weights

    def impl(weights, a, axis=None):
        outer, inner = _sides(a.shape, axis)
        n = weights.shape[0]
        out = np.empty((outer, n, inner))
        for i in range(outer):
            for j in range(n):
                out[i, j, :] = weights[j]
        return out.reshape(a.shape)
    return impl


@overload(gather_weights)
def _gather_weights_typer(g, weights, axis=None):
    if not _along_axis(weights, g, axis):
        return lambda g, weights, axis=None: g

    def impl(g, weights, axis=None):
        outer, inner = _sides(g.shape, axis)
        parts = np.ascontiguousarray(g).reshape((outer, weights.shape[0], inner))
        return parts.sum(axis=0).sum(axis=1)
    return impl


@rule(spread_weights)
def _spread_weights_rule(dy, y, weights, a, axis=None):
    return gather_weights(dy, weights, axis), None


@rule(gather_weights)
def _gather_weights_rule(dy, y, g, weights, axis=None):
    return spread_weights(dy, g, axis), None


linear(spread_weights)
linear(gather_weights)
describe(spread_weights, gather_weights, shape_only=1)


def average_grad(dy, a, axis=None, weights=None, keepdims=False):
    """The gradient of a: dy w / sum(w) along the axis (dy / n without weights).

    >>> average_grad(1.0, np.array([3.0, 5.0]), None, np.array([1.0, 3.0]))
    array([0.25, 0.75])
    """
    if weights is None:
        return mean_grad(dy, a, axis, keepdims)
    w = spread_weights(weights, a, axis)
    return sum_grad(dy, a, axis, keepdims) * w / np.sum(w, axis=axis, keepdims=True)


def average_weights_grad(dy, y, a, axis=None, weights=None, keepdims=False):
    """The gradient of the weights: dy (a - y) / sum(w) along the axis (summed over the
    other axes for 1-D weights).

    >>> average_weights_grad(1.0, 4.5, np.array([3.0, 5.0]), None, np.array([1.0, 3.0]))
    array([-0.375,  0.125])
    """
    w = spread_weights(weights, a, axis)
    return gather_weights(sum_grad(dy, a, axis, keepdims) * (a - sum_grad(y, a, axis, keepdims))
                          / np.sum(w, axis=axis, keepdims=True), weights, axis)


def _typed(a, weights) -> bool:
    """Whether numba's forms serve these types: weights None, or an array of a's rank."""
    if not isinstance(a, types.Array):
        return False
    if _is_none(weights):
        return True
    if not (isinstance(weights, types.Array) and weights.ndim in (1, a.ndim)):
        raise TypingError(f"srcgrad: {_OTHER_SHAPE}")
    return True


@overload(average_grad)
def _average_grad_typer(dy, a, axis=None, weights=None, keepdims=False):
    if not _typed(a, weights):
        return None
    if _is_none(weights):
        return lambda dy, a, axis=None, weights=None, keepdims=False: mean_grad(
            dy, a, axis, keepdims)

    def impl(dy, a, axis=None, weights=None, keepdims=False):
        w = spread_weights(weights, a, axis)
        return sum_grad(dy, a, axis, keepdims) * w / np.sum(w, axis=axis, keepdims=True)
    return impl


@overload(average_weights_grad)
def _average_weights_grad_typer(dy, y, a, axis=None, weights=None, keepdims=False):
    if not _typed(a, weights) or _is_none(weights):
        return None

    def impl(dy, y, a, axis=None, weights=None, keepdims=False):
        w = spread_weights(weights, a, axis)
        return gather_weights(sum_grad(dy, a, axis, keepdims) * (
            a - sum_grad(y, a, axis, keepdims)) / np.sum(w, axis=axis, keepdims=True),
            weights, axis)
    return impl


def weighted_mean(a, axis=None, weights=None, returned=False, keepdims=False):
    """np.average itself, which generated code calls in its place: numba's np.average
    takes an axis and raises, this one's numba form takes it.

    >>> weighted_mean(np.array([[1.0, 2.0], [3.0, 5.0]]), axis=1)
    array([1.5, 4. ])
    """
    return np.average(a, axis=axis, weights=weights, returned=returned, keepdims=keepdims)


@overload(weighted_mean)
def _weighted_mean_typer(a, axis=None, weights=None, returned=False, keepdims=False):
    if _static_bool(returned, "returned") or not _typed(a, weights) or \
            not (_is_none(axis) or isinstance(axis, types.Integer)):
        return None
    keep = _static_bool(keepdims, "keepdims")
    if _is_none(weights):
        return lambda a, axis=None, weights=None, returned=False, keepdims=False: np.mean(
            a, axis=axis, keepdims=keep)

    def impl(a, axis=None, weights=None, returned=False, keepdims=False):
        w = spread_weights(weights, a, axis)
        return np.sum(a * w, axis=axis, keepdims=keep) / np.sum(w, axis=axis, keepdims=keep)
    return impl


@rule(np.average, weighted_mean, refuse=_refused)
def average(dy, y, a, axis=None, weights=None, returned=False, keepdims=False):
    return (average_grad(dy, a, axis, weights, keepdims), None,
            average_weights_grad(dy, y, a, axis, weights, keepdims), None, None)


@tangent(np.average, weighted_mean)
def average_tangent(dx, y, a, axis=None, weights=None, returned=False, keepdims=False):
    return (weighted_mean(dx, axis, weights, False, keepdims), None,
            np.sum(spread_weights(dx, a, axis) * (a - sum_grad(y, a, axis, keepdims)),
                   axis=axis, keepdims=keepdims) /
            np.sum(spread_weights(weights, a, axis), axis=axis, keepdims=keepdims), None, None)


def _returned(given):
    """np.average(..., returned=True) as (the average, the sum of the weights)."""
    if "returned" not in given:
        return None
    if given["returned"] is NOT_CONSTANT:
        raise RuleError("np.average(..., returned=...) is differentiated with a constant "
                        "True or False alone")
    if not given["returned"]:
        return None
    along = "axis" in given   # (numba before 0.60 has no np.sum(x, axis=None))
    weights = f"spread_weights(weights, a, {'axis' if along else 'None'})" \
        if "weights" in given else "np.ones_like(a)"
    return (f"(np.average(a, axis=axis, weights=weights, keepdims=keepdims), "
            f"np.sum({weights}{', axis=axis' if along else ''}, keepdims=keepdims))",
            {"spread_weights": spread_weights})


describe(average_grad, average_weights_grad, spread_weights, gather_weights, pure=True)
describe(np.average, compiled_as=weighted_mean, expanded=_returned)
