"""np.linspace of differentiated ends: its record, and the helpers its rule calls (each
Python form beside its numba form, or one form numba compiles too).

``y = np.linspace(start, stop, num, endpoint)`` is y_i = (1 - t_i) start + t_i stop with
t_i = i / (num - 1) (i / num without the endpoint; t = 0 for a single point), so it is
linear in (start, stop): the gradient of start is the sum over the points of (1 - t_i) dy_i
and that of stop the sum of t_i dy_i (array ends: summed over the new first axis).
`axis` other than 0, `retstep=True` and `dtype=` are refused.
"""

import numpy as np
from numba import types
from numba.extending import overload, register_jitable

from ..runtime import unbroadcast
from . import describe, linear, rule


def _refused(options) -> str | None:
    if options.get("retstep"):
        return "retstep=True gives a tuple with the step: compute the step apart"
    if options.get("dtype") is not None:
        return "dtype= is not differentiated: leave it out (float64)"
    if options.get("axis", 0) != 0:
        return "only axis=0 (the default) is differentiated: move the axis after"
    return None


@register_jitable
def spacing(num, endpoint=True):
    """The places t_i in [0, 1] of np.linspace's points.

    >>> spacing(5)
    array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """
    div = num - 1 if endpoint else num
    return np.arange(num) / div if div > 0 else np.zeros(num)


def weighted_points(w, dy):
    """The sum over the first axis of dy (np.linspace's points) weighted by w."""
    return np.tensordot(w, dy, 1)


@overload(weighted_points)
def _weighted_points_typer(w, dy):
    if not isinstance(dy, types.Array):
        return None
    if dy.ndim == 1:
        return lambda w, dy: np.dot(w, dy)

    def impl(w, dy):
        rows = np.ascontiguousarray(dy).reshape((dy.shape[0], -1))
        return (w @ rows).reshape(dy.shape[1:])
    return impl


@rule(np.linspace, refuse=_refused)
def linspace(dy, y, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    return (unbroadcast(weighted_points(1.0 - spacing(num, endpoint), dy), start),
            unbroadcast(weighted_points(spacing(num, endpoint), dy), stop))


linear(np.linspace, positions=(0, 1))
linear(weighted_points, positions=(1,))
describe(weighted_points, pure=True)


@overload(np.linspace)
def _np_linspace(start, stop, num=50, endpoint=True):
    # numba's np.linspace takes start, stop and num: this form serves endpoint=
    if isinstance(endpoint, (types.Omitted, bool)) or not all(
            isinstance(v, (types.Float, types.Integer)) for v in (start, stop)):
        return None

    def impl(start, stop, num=50, endpoint=True):
        if endpoint:
            return np.linspace(start, stop, num)
        return np.arange(num) * ((stop - start) / num) + start
    return impl
