"""np.linspace, np.logspace and np.geomspace of differentiated ends: their records, and
the helpers their rules call (each Python form beside its numba form, or one form numba
compiles too).

``y = np.linspace(start, stop, num, endpoint)`` is y_i = (1 - t_i) start + t_i stop with
t_i = i / (num - 1) (i / num without the endpoint; t = 0 for a single point), so it is
linear in (start, stop): the gradient of start is the sum over the points of (1 - t_i) dy_i
and that of stop the sum of t_i dy_i (array ends: summed over the new first axis).
`axis` other than 0, `retstep=True` and `dtype=` are refused.

``y = np.logspace(start, stop, num, endpoint, base)`` is base^L with L that linspace, so
the cotangent of L is dy y log(base), and base's gradient sum dy y L / base (a number
base: an array one, which NumPy places on a new axis, is refused). ``y =
np.geomspace(start, stop, num, endpoint)`` is start^(1 - t_i) stop^t_i (its signs those
of start and stop, which NumPy requires alike), so the gradient of start is the sum of
(1 - t_i) dy_i y_i / start and that of stop the sum of t_i dy_i y_i / stop.
"""

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from ..errors import MissingRule
from ..runtime import unbroadcast
from . import describe, linear, rule, tangent


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


# ---- np.logspace and np.geomspace ----


def number_base(base):
    """np.logspace's base, where it is a number (an array base is refused).

    >>> number_base(2.0)
    2.0
    """
    if np.ndim(base) != 0:
        raise MissingRule("np.logspace with an array base has no gradient rule: call it "
                          "once per base")
    return base


@overload(number_base)
def _number_base_typer(base):
    if not isinstance(base, (types.Float, types.Integer)):
        raise TypingError("srcgrad: np.logspace with an array base has no gradient rule: "
                          "call it once per base")
    return lambda base: base


@rule(np.logspace, refuse=_refused)
def logspace(dy, y, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    return (unbroadcast(weighted_points(1.0 - spacing(num, endpoint), dy * y)
                        * np.log(number_base(base)), start),
            unbroadcast(weighted_points(spacing(num, endpoint), dy * y)
                        * np.log(number_base(base)), stop),
            None, None,
            (np.sum(weighted_points(1.0 - spacing(num, endpoint), dy * y) * start)
             + np.sum(weighted_points(spacing(num, endpoint), dy * y) * stop))
            / number_base(base), None, None)


@tangent(np.logspace)
def logspace_tangent(dx, y, start, stop, num=50, endpoint=True, base=10.0, dtype=None,
                     axis=0):
    return (y * np.log(number_base(base)) * np.linspace(dx, 0.0 * dx, num, endpoint),
            y * np.log(number_base(base)) * np.linspace(0.0 * dx, dx, num, endpoint),
            None, None,
            dx * y * np.linspace(start, stop, num, endpoint) / number_base(base), None, None)


@rule(np.geomspace, refuse=_refused)
def geomspace(dy, y, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    return (unbroadcast(weighted_points(1.0 - spacing(num, endpoint), dy * y) / start, start),
            unbroadcast(weighted_points(spacing(num, endpoint), dy * y) / stop, stop))


@tangent(np.geomspace)
def geomspace_tangent(dx, y, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    return (y * np.linspace(dx / start, 0.0 * dx, num, endpoint),
            y * np.linspace(0.0 * dx, dx / stop, num, endpoint))


describe(number_base, pure=True)


def _numbers(*values) -> bool:
    return all(isinstance(v, (types.Float, types.Integer)) for v in values)


@overload(np.logspace)
def _np_logspace(start, stop, num=50, endpoint=True, base=10.0):
    # numba's np.logspace takes start, stop and num: this form serves endpoint= and base=
    if isinstance(endpoint, types.Omitted) and isinstance(base, types.Omitted) \
            or not _numbers(start, stop):
        return None

    def impl(start, stop, num=50, endpoint=True, base=10.0):
        return np.power(base, np.linspace(start, stop, num, endpoint))
    return impl


@overload(np.geomspace)
def _np_geomspace(start, stop, num=50, endpoint=True):
    # numba's np.geomspace takes start, stop and num: this form serves endpoint=
    if isinstance(endpoint, (types.Omitted, bool)) or not _numbers(start, stop):
        return None

    def impl(start, stop, num=50, endpoint=True):
        if endpoint:
            return np.geomspace(start, stop, num)
        return np.geomspace(start, stop, num + 1)[:-1].copy()
    return impl
