"""np.cross: its record, with its axis keywords, the helpers its rules call, and its numba
form with those keywords (numba's np.cross takes none).

y = np.cross(a, b, axisa, axisb, axisc, axis) takes the 3-vectors of a along axisa and of
b along axisb, and puts those of y along axisc (`axis`, where given, is all three): the
plain cross product of the arrays with those axes moved last (`vectors`), y's axis moved
back. The scalar triple product's cycle, dy . (a x b) = a . (b x dy) = b . (dy x a),
gives a's gradient b x dy and b's dy x a, summed over the broadcast axes, each with its
vector axis moved back where the argument had it. Pairs of 2-vectors (a scalar z
component each, a form NumPy 2 deprecates) have no gradient rule.
"""

import numpy as np
from numba import types
from numba.extending import overload

from ..errors import MissingRule
from ..numba_ext import _is_none
from ..runtime import unbroadcast
from . import describe, linear, nondifferentiable, rule, tangent


def vector_axis(given, axis=None):
    """The axis of the vectors: `axis` where np.cross is given it, else `given` (its
    axisa, axisb or axisc).

    >>> vector_axis(0, None), vector_axis(0, 1)
    (0, 1)
    """
    return given if axis is None else axis


@overload(vector_axis)
def _vector_axis_typer(given, axis=None):
    if _is_none(axis):
        return lambda given, axis=None: given
    return lambda given, axis=None: axis


def vectors(m, given, axis=None):
    """`m` with its axis of 3-vectors (`vector_axis(given, axis)`) moved last.

    >>> vectors(np.zeros((3, 2)), 0).shape
    (2, 3)
    """
    m = np.moveaxis(m, vector_axis(given, axis), -1)
    if np.shape(m)[-1] != 3:
        raise MissingRule("np.cross of 2-vectors has no gradient rule: give the vectors "
                          "a zero third component")
    return m


def _last(given, axis) -> bool:
    """Whether the vectors are known at compile time to lie along the last axis."""
    value = getattr(given, "literal_value", getattr(given, "value", given))
    return _is_none(axis) and isinstance(value, int) and value == -1


@overload(vectors, prefer_literal=True)
def _vectors_typer(m, given, axis=None):
    if not isinstance(m, types.Array):
        return None
    if _last(given, axis):
        def impl(m, given, axis=None):
            if m.shape[-1] != 3:
                raise ValueError("srcgrad: np.cross's gradient takes 3-vectors only")
            return m
        return impl

    def moved(m, given, axis=None):
        out = np.moveaxis(m, vector_axis(given, axis), -1)
        if out.shape[-1] != 3:
            raise ValueError("srcgrad: np.cross's gradient takes 3-vectors only")
        return out
    return moved


def vectors_back(m, given, axis=None):
    """`m`, its 3-vectors along its last axis, with them moved to `vector_axis(given,
    axis)`: the inverse of `vectors`.

    >>> vectors_back(np.zeros((2, 3)), 0).shape
    (3, 2)
    """
    return np.moveaxis(m, -1, vector_axis(given, axis))


@overload(vectors_back, prefer_literal=True)
def _vectors_back_typer(m, given, axis=None):
    if _last(given, axis):
        return lambda m, given, axis=None: m
    return lambda m, given, axis=None: np.moveaxis(m, -1, vector_axis(given, axis))


def cross_along(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """np.cross itself, which compiled code calls in its place: this one's numba form
    takes the axis keywords.

    >>> cross_along(np.eye(3), np.array([0.0, 1.0, 0.0]), axisa=0)
    array([[ 0.,  0.,  1.],
           [ 0.,  0.,  0.],
           [-1.,  0.,  0.]])
    """
    return np.cross(a, b, axisa, axisb, axisc, axis)


@overload(cross_along, prefer_literal=True)
def _cross_along_typer(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if all(_last(k, axis) for k in (axisa, axisb, axisc)):
        return lambda a, b, axisa=-1, axisb=-1, axisc=-1, axis=None: np.cross(a, b)

    def impl(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
        return np.moveaxis(np.cross(np.moveaxis(a, vector_axis(axisa, axis), -1),
                                    np.moveaxis(b, vector_axis(axisb, axis), -1)),
                           -1, vector_axis(axisc, axis))
    return impl


@rule(np.cross, cross_along)
def cross(dy, y, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    # dy . (a x b) = a . (b x dy) = b . (dy x a): the scalar triple product's cycle
    return (vectors_back(unbroadcast(np.cross(vectors(b, axisb, axis), vectors(dy, axisc, axis)),
                                     vectors(a, axisa, axis)), axisa, axis),
            vectors_back(unbroadcast(np.cross(vectors(dy, axisc, axis), vectors(a, axisa, axis)),
                                     vectors(b, axisb, axis)), axisb, axis))


@tangent(np.cross, cross_along)
def cross_tangent(dx, y, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    return (cross_along(dx, b, axisa, axisb, axisc, axis),
            cross_along(a, dx, axisa, axisb, axisc, axis))


linear(vectors, vectors_back, positions=(0,))
nondifferentiable(vector_axis)
describe(vectors, vectors_back, vector_axis, pure=True)
describe(np.cross, compiled_as=cross_along)
