"""np.average: its record, the helpers its rule calls (each Python form beside its numba
form), and `weighted_mean`, which generated code calls in np.average's place (numba's
np.average takes an axis and raises; its numba form takes one).

``y = np.average(a, axis, weights)`` is sum(w a) / sum(w) along the axis (the mean without
weights), so the gradient of a is dy w / sum(w), spread along the axis, and that of the
weights dy (a - y) / sum(w). Weights of a's own shape are differentiated; 1-D weights
along an axis of a larger a are refused (broadcast them to a's shape first), and so is
`returned=True`.
"""

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from ..errors import MissingRule
from ..numba_ext import _is_none, _static_bool
from ..runtime import mean_grad, sum_grad
from . import describe, rule, tangent

_OTHER_SHAPE = ("np.average with weights of another shape than a has no gradient rule: "
                "give them a's shape (w * np.ones_like(a))")


def _refused(options) -> str | None:
    if options.get("returned"):
        return "returned=True gives a tuple with the weights' sum: compute it apart"
    return None


def _weights_of(a, weights):
    if np.shape(weights) != np.shape(a):
        raise MissingRule(_OTHER_SHAPE)
    return weights


def average_grad(dy, a, axis=None, weights=None, keepdims=False):
    """The gradient of a: dy w / sum(w) along the axis (dy / n without weights).

    >>> average_grad(1.0, np.array([3.0, 5.0]), None, np.array([1.0, 3.0]))
    array([0.25, 0.75])
    """
    if weights is None:
        return mean_grad(dy, a, axis, keepdims)
    w = _weights_of(a, weights)
    return sum_grad(dy, a, axis, keepdims) * w / np.sum(w, axis=axis, keepdims=True)


def average_weights_grad(dy, y, a, axis=None, weights=None, keepdims=False):
    """The gradient of the weights: dy (a - y) / sum(w) along the axis.

    >>> average_weights_grad(1.0, 4.5, np.array([3.0, 5.0]), None, np.array([1.0, 3.0]))
    array([-0.375,  0.125])
    """
    w = _weights_of(a, weights)
    return sum_grad(dy, a, axis, keepdims) * (a - sum_grad(y, a, axis, keepdims)) / \
        np.sum(w, axis=axis, keepdims=True)


def _typed(a, weights) -> bool:
    """Whether numba's forms serve these types: weights None, or an array of a's rank."""
    if not isinstance(a, types.Array):
        return False
    if _is_none(weights):
        return True
    if not (isinstance(weights, types.Array) and weights.ndim == a.ndim):
        raise TypingError(f"srcgrad: {_OTHER_SHAPE}")
    return True


@overload(average_grad)
def _average_grad_typer(dy, a, axis=None, weights=None, keepdims=False):
    if not _typed(a, weights):
        return None
    if _is_none(weights):
        return lambda dy, a, axis=None, weights=None, keepdims=False: mean_grad(
            dy, a, axis, keepdims)
    return lambda dy, a, axis=None, weights=None, keepdims=False: sum_grad(
        dy, a, axis, keepdims) * weights / np.sum(weights, axis=axis, keepdims=True)


@overload(average_weights_grad)
def _average_weights_grad_typer(dy, y, a, axis=None, weights=None, keepdims=False):
    if not _typed(a, weights) or _is_none(weights):
        return None
    return lambda dy, y, a, axis=None, weights=None, keepdims=False: sum_grad(
        dy, a, axis, keepdims) * (a - sum_grad(y, a, axis, keepdims)) / np.sum(
        weights, axis=axis, keepdims=True)


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
    return lambda a, axis=None, weights=None, returned=False, keepdims=False: np.sum(
        a * weights, axis=axis, keepdims=keep) / np.sum(weights, axis=axis, keepdims=keep)


@rule(np.average, weighted_mean, refuse=_refused)
def average(dy, y, a, axis=None, weights=None, returned=False, keepdims=False):
    return (average_grad(dy, a, axis, weights, keepdims), None,
            average_weights_grad(dy, y, a, axis, weights, keepdims), None, None)


@tangent(np.average, weighted_mean)
def average_tangent(dx, y, a, axis=None, weights=None, returned=False, keepdims=False):
    return (weighted_mean(dx, axis, weights, False, keepdims), None,
            np.sum(dx * (a - sum_grad(y, a, axis, keepdims)), axis=axis, keepdims=keepdims) /
            np.sum(weights, axis=axis, keepdims=keepdims), None, None)


describe(average_grad, average_weights_grad, pure=True)
describe(np.average, compiled_as=weighted_mean)
