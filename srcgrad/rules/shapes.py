"""Shapes and reorderings: the records of np.atleast_1d/2d/3d, broadcast_to, flip,
flipud, fliplr, roll, rot90, moveaxis, swapaxes and rollaxis; the adjoint of np.transpose
with axes (`untranspose`; its record is in numpy_rules); the numba forms of the calls
numba lacks (an axis to np.flip and np.roll; axes to np.rot90; tuples to np.squeeze and
np.expand_dims; a list to np.transpose; np.rollaxis, x.swapaxes), each helper beside its
numba form; and the typing helpers joins and copies share (`_ints`, `_int_sequence`,
`_absent`). Joins and splits are in joins, np.repeat, np.tile and np.pad in copies.

Every function here is linear: it moves entries of its argument (broadcast_to copies
them), so its adjoint sends each entry of dy back to the entry it came from. A
permutation is undone by the inverse permutation: a flip by the same flip, a roll by
the opposite shift, rot90 by as many turns the other way, moveaxis, swapaxes, rollaxis
and transpose by moving the axes back. Raising the rank is undone by reshaping dy to the
argument's shape; broadcast_to's copies are summed (`unbroadcast`).
"""

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, overload_method, register_jitable
from numba.np.unsafe.ndarray import to_fixed_tuple

from ..errors import MissingRule
from ..numba_ext import normalize_axis
from ..runtime import reshape_as, unbroadcast
from . import describe, linear, nondifferentiable, rule

# ---- raising the rank, broadcasting ----


@rule(np.atleast_1d, np.atleast_2d, np.atleast_3d)
def atleast(dy, y, x):
    return reshape_as(dy, x)


@rule(np.broadcast_to)
def broadcast_to(dy, y, x, shape=None):
    return unbroadcast(dy, x)


# ---- reshape and ravel, in C or Fortran order ----


@rule(np.reshape)
def reshape(dy, y, x, shape=None, order="C"):
    return reshape_back(dy, x, order)


@rule(np.ravel)
def ravel(dy, y, x, order="C"):
    return reshape_back(dy, x, order)


_ORDERS = "np.reshape and np.ravel have a gradient rule in order 'C' or 'F' only"


def reshape_back(dy, x, order="C"):
    """`dy` at x's shape, its entries read in `order`: the adjoint of reshape and ravel in
    that order is the reshape back. 'A' and 'K' (an order that x's memory layout picks)
    are refused.

    >>> reshape_back(np.arange(4.0), np.zeros((2, 2)), "F")
    array([[0., 2.],
           [1., 3.]])
    """
    if order == "C":
        return reshape_as(dy, x)
    if order == "F":
        return np.reshape(dy, np.shape(x), order="F")
    raise MissingRule(f"{_ORDERS}, not {order!r}")


@overload(reshape_back)
def _reshape_back_typer(dy, x, order="C"):
    value = order if isinstance(order, str) else order.value \
        if isinstance(order, types.Omitted) else getattr(order, "literal_value", None)
    if value == "C":
        return lambda dy, x, order="C": reshape_as(dy, x)
    if value == "F" and isinstance(dy, types.Array) and isinstance(x, types.Array):
        # Fortran order is C order of the axes reversed
        return lambda dy, x, order="C": np.ascontiguousarray(dy.T).reshape(x.shape[::-1]).T
    raise TypingError(f"srcgrad: {_ORDERS} (a constant)")


def _order_of(order) -> str | None:
    """The value of a constant `order` argument's numba type."""
    return order.value if isinstance(order, types.Omitted) else \
        getattr(order, "literal_value", None)


def _order(x, order, what: str) -> str | None:
    """The constant order ('C' or 'F') of np.reshape or np.ravel of `x` (numba types)
    given one, which numba's own forms do not take (these are typed first); None where
    none is given (numba's own serve); refused for another order."""
    if not isinstance(x, types.Array) or order is None or isinstance(order, types.Omitted) \
            and order.value is None:
        return None
    value = _order_of(order)
    if value not in ("C", "F"):
        raise TypingError(f"srcgrad: {what} compiles with order 'C' or 'F', a constant")
    return value


@overload(np.reshape, prefer_literal=True, target="cpu")
def _reshape_typer(a, newshape=None, order=None, shape=None):
    value = _order(a, order, "np.reshape")
    if value is None or shape is not None and not isinstance(shape, (types.Omitted,
                                                                     types.NoneType)):
        return None
    if value == "C":
        return lambda a, newshape=None, order=None, shape=None: np.reshape(a, newshape)

    def fortran(a, newshape=None, order=None, shape=None):
        # Fortran order is C order of the axes reversed
        return np.ascontiguousarray(a.T).reshape(_reversed(newshape)).T
    return fortran


@overload(np.ravel, prefer_literal=True, target="cpu")
def _ravel_typer(a, order=None):
    value = _order(a, order, "np.ravel")
    if value is None:
        return None
    if value == "C":
        return lambda a, order=None: np.ravel(a)
    return lambda a, order=None: np.ascontiguousarray(a.T).reshape(a.size)


def _reversed(shape):
    return shape[::-1] if isinstance(shape, tuple) else shape


@overload(_reversed)
def _reversed_typer(shape):
    if isinstance(shape, types.Integer):
        return lambda shape: shape
    return lambda shape: shape[::-1]


# ---- permutations of the entries: undone by the inverse permutation ----


@rule(np.flip)
def flip(dy, y, x, axis=None):
    return np.flip(dy, axis)


@rule(np.flipud)
def flipud(dy, y, x):
    return np.flipud(dy)


@rule(np.fliplr)
def fliplr(dy, y, x):
    return np.fliplr(dy)


@rule(np.roll)
def roll(dy, y, x, shift=0, axis=None):
    return roll_grad(dy, shift, axis)


@rule(np.rot90)
def rot90(dy, y, x, k=1, axes=(0, 1)):
    return np.rot90(dy, -k, axes)


@rule(np.moveaxis)
def moveaxis(dy, y, x, source=0, destination=0):
    return np.moveaxis(dy, destination, source)


@rule(np.swapaxes, methods=("swapaxes",))
def swapaxes(dy, y, x, axis1=0, axis2=0):
    return np.swapaxes(dy, axis1, axis2)


@rule(np.rollaxis)
def rollaxis(dy, y, x, axis=0, start=0):
    return np.moveaxis(dy, rolled_to(axis, start, np.ndim(x)), axis)


@register_jitable
def rolled_to(axis, start, ndim):
    """Where np.rollaxis(x, axis, start) puts `axis` of an x of rank `ndim` (as
    np.moveaxis's destination).

    >>> rolled_to(0, 3, 3), rolled_to(2, 0, 3)
    (2, 0)
    """
    axis = normalize_axis(axis, ndim)
    if start < 0:
        start += ndim
    if start < 0 or start > ndim:
        raise ValueError("rollaxis: start is out of bounds")
    return start - 1 if axis < start else start


@overload(np.rollaxis)
def _np_rollaxis(a, axis, start=0):
    if isinstance(a, types.Array):
        return lambda a, axis, start=0: np.moveaxis(a, axis, rolled_to(axis, start, a.ndim))
    return None


@overload_method(types.Array, "swapaxes")
def _array_swapaxes(a, axis1, axis2):
    return lambda a, axis1, axis2: np.swapaxes(a, axis1, axis2)


def untranspose(dy, axes=None, a1=None, a2=None, a3=None, a4=None, a5=None, a6=None,
                a7=None):
    """The adjoint of ``np.transpose(x, axes)``, ``x.T`` and ``x.transpose(*axes)`` (axes
    one by one, as the method takes them): dy transposed by the inverse permutation.

    >>> untranspose(np.zeros((2, 3, 4)), (1, 2, 0)).shape
    (4, 2, 3)
    """
    if axes is None:
        return np.transpose(dy)
    if np.ndim(axes) == 0:
        axes = [a for a in (axes, a1, a2, a3, a4, a5, a6, a7) if a is not None]
    return np.transpose(dy, np.argsort([a % np.ndim(dy) for a in axes]))


@register_jitable
def _inverse(perm, nd):
    """The inverse of the permutation `perm` of `nd` axes (an intp array)."""
    if len(perm) != nd:
        raise ValueError("axes don't match array")
    inverse = np.empty(nd, np.intp)
    for i in range(nd):
        inverse[normalize_axis(perm[i], nd)] = i
    return inverse


def _ints(v):
    """An int, or a tuple or list of ints, as a 1-D intp array.

    >>> _ints(3), _ints((1, 2))
    (array([3]), array([1, 2]))
    """
    return np.atleast_1d(np.asarray(v, np.intp))


def _int_sequence(t) -> bool:
    """A tuple or list of ints, or a 1-D array of them (numba's type)."""
    if isinstance(t, types.BaseTuple):
        return all(isinstance(e, types.Integer) for e in t)
    return isinstance(t, types.List) and isinstance(t.dtype, types.Integer) or isinstance(
        t, types.Array) and t.ndim == 1 and isinstance(t.dtype, types.Integer)


@overload(_ints)
def _ints_typer(v):
    if isinstance(v, types.Integer):
        return lambda v: np.full(1, v, np.intp)
    if isinstance(v, types.BaseTuple) and _int_sequence(v):  # its ints may differ in type
        source = f"def ints(v):\n    out = np.empty({len(v)}, np.intp)\n" + "".join(
            f"    out[{i}] = v[{i}]\n" for i in range(len(v))) + "    return out\n"
        namespace = {"np": np}
        exec(source, namespace)
        return namespace["ints"]
    if _int_sequence(v):
        def many(v):
            out = np.empty(len(v), np.intp)
            for i in range(len(v)):
                out[i] = v[i]
            return out
        return many
    raise TypingError(f"srcgrad: axes and shifts must be ints or tuples of ints, not {v}")


@overload(untranspose)
def _untranspose_typer(dy, axes=None, a1=None, a2=None, a3=None, a4=None, a5=None, a6=None,
                       a7=None):
    if not isinstance(dy, types.Array):
        return None
    nd = dy.ndim
    if isinstance(axes, types.Integer):
        given = 1 + sum(not _absent(a) for a in (a1, a2, a3, a4, a5, a6, a7))
        names = ["axes", "a1", "a2", "a3", "a4", "a5", "a6", "a7"][:given]
        source = (f"def impl(dy, axes=None, a1=None, a2=None, a3=None, a4=None, a5=None,"
                  f" a6=None, a7=None):\n"
                  f"    perm = np.empty({given}, np.intp)\n"
                  + "".join(f"    perm[{i}] = {a}\n" for i, a in enumerate(names)) +
                  f"    inverse = back(perm, {nd})\n"
                  f"    return np.transpose(dy, to_fixed_tuple(inverse, {nd}))\n")
        namespace = {"np": np, "back": _inverse, "to_fixed_tuple": to_fixed_tuple}
        exec(source, namespace)
        return namespace["impl"]
    if _int_sequence(axes):
        def by_sequence(dy, axes=None, a1=None, a2=None, a3=None, a4=None, a5=None, a6=None,
                        a7=None):
            inverse = _inverse(_ints(axes), nd)
            return np.transpose(dy, to_fixed_tuple(inverse, nd))
        return by_sequence
    if _absent(axes):
        return lambda dy, axes=None, a1=None, a2=None, a3=None, a4=None, a5=None, a6=None, \
            a7=None: np.transpose(dy)
    return None


def _absent(t) -> bool:
    return t is None or isinstance(t, types.NoneType) or (
        isinstance(t, types.Omitted) and t.value is None)


@overload(np.transpose)
def _np_transpose(a, axes=None):
    # numba takes a tuple of axes; a list is made one of the array's rank
    if not (isinstance(a, types.Array) and isinstance(axes, types.List)):
        return None
    nd = a.ndim
    return lambda a, axes=None: np.transpose(a, to_fixed_tuple(_ints(axes), nd))


# ---- numba forms of the permutations along given axes ----


@register_jitable
def _flip_along(a, k):
    """`a` reversed along axis `k`, as a C-contiguous copy."""
    return np.ascontiguousarray(np.swapaxes(np.swapaxes(a, k, -1)[..., ::-1], k, -1))


@overload(np.flip)
def _np_flip(m, axis=None):
    # numba's np.flip reverses every axis
    if not isinstance(m, types.Array) or isinstance(axis, types.Omitted) or axis is None:
        return None
    if isinstance(axis, types.NoneType):
        return lambda m, axis=None: np.flip(m)

    def flip(m, axis=None):
        out = np.ascontiguousarray(m)
        for k in _ints(axis):
            out = _flip_along(out, normalize_axis(k, m.ndim))
        return out
    return flip


@register_jitable
def _roll_along(a, shift, k):
    """`a` rolled by `shift` along axis `k`, as a C-contiguous copy."""
    b = np.ascontiguousarray(np.swapaxes(a, k, -1))
    out = np.empty_like(b)
    n = b.shape[-1]
    if n:
        s = shift % n
        out[..., s:] = b[..., :n - s]
        out[..., :s] = b[..., n - s:]
    return np.ascontiguousarray(np.swapaxes(out, k, -1))


@register_jitable
def _roll_axes(a, shifts, axes):
    """`a` rolled by each of `shifts` along the matching one of `axes` (intp arrays, one
    of them may hold a single entry for all), as NumPy's np.roll with an axis."""
    n = max(len(shifts), len(axes))
    if len(shifts) not in (1, n) or len(axes) not in (1, n):
        raise ValueError("shift and axis must have the same length")
    out = np.ascontiguousarray(a)
    for i in range(n):
        k = normalize_axis(axes[i if len(axes) > 1 else 0], a.ndim)
        out = _roll_along(out, shifts[i if len(shifts) > 1 else 0], k)
    return out


@overload(np.roll)
def _np_roll(a, shift, axis=None):
    # numba's np.roll rolls the flattened array
    if not isinstance(a, types.Array) or isinstance(axis, types.Omitted) or axis is None:
        return None
    if isinstance(axis, types.NoneType):
        return lambda a, shift, axis=None: np.roll(a, shift)
    return lambda a, shift, axis=None: _roll_axes(a, _ints(shift), _ints(axis))


def roll_grad(dy, shift, axis=None):
    """The adjoint of ``np.roll(x, shift, axis)``: dy rolled back.

    >>> roll_grad(np.array([3.0, 1.0, 2.0]), 1)
    array([1., 2., 3.])
    """
    return np.roll(dy, np.negative(shift), axis)


@overload(roll_grad)
def _roll_grad_typer(dy, shift, axis=None):
    if not isinstance(dy, types.Array):
        return None
    if not _absent(axis):
        return lambda dy, shift, axis=None: _roll_axes(dy, -_ints(shift), _ints(axis))
    if isinstance(shift, types.Integer):
        return lambda dy, shift, axis=None: np.roll(dy, -shift)
    raise TypingError("srcgrad: np.roll of a flattened array takes one int shift here")


@overload(np.rot90)
def _np_rot90(m, k=1, axes=(0, 1)):
    # numba's np.rot90 turns the first two axes
    if not isinstance(m, types.Array) or isinstance(axes, types.Omitted) or m.ndim < 2:
        return None

    def rot90(m, k=1, axes=(0, 1)):
        a0, a1 = normalize_axis(axes[0], m.ndim), normalize_axis(axes[1], m.ndim)
        if a0 == a1:
            raise ValueError("rot90: axes must be different")
        out = np.ascontiguousarray(m)
        turns = k % 4
        if turns == 1:    # as NumPy: the flip of axes[1], then the two axes swapped
            return np.ascontiguousarray(np.swapaxes(_flip_along(out, a1), a0, a1))
        if turns == 2:
            return _flip_along(_flip_along(out, a0), a1)
        if turns == 3:
            return _flip_along(np.ascontiguousarray(np.swapaxes(out, a0, a1)), a1)
        return out
    return rot90


# ---- numba forms of np.squeeze and np.expand_dims with a tuple of axes ----


@overload(np.squeeze)
def _np_squeeze_axes(a, axis=None):
    if not (isinstance(a, types.Array) and isinstance(axis, types.UniTuple)):
        return None
    nd = a.ndim - len(axis)

    def squeeze(a, axis=None):
        drop = np.zeros(a.ndim, np.bool_)
        for k in axis:
            drop[normalize_axis(k, a.ndim)] = True
        shape = np.empty(nd, np.intp)
        j = 0
        for i in range(a.ndim):
            if drop[i]:
                if a.shape[i] != 1:
                    raise ValueError("cannot select an axis to squeeze out which has size "
                                     "not equal to one")
            else:
                shape[j] = a.shape[i]
                j += 1
        if j != nd:
            raise ValueError("repeated axis")
        return np.ascontiguousarray(a).reshape(to_fixed_tuple(shape, nd))
    return squeeze


@overload(np.expand_dims)
def _np_expand_dims_axes(a, axis):
    if not (isinstance(a, types.Array) and isinstance(axis, types.UniTuple)):
        return None
    nd = a.ndim + len(axis)

    def expand_dims(a, axis):
        new = np.zeros(nd, np.bool_)
        for k in axis:
            k = normalize_axis(k, nd)
            if new[k]:
                raise ValueError("repeated axis")
            new[k] = True
        shape = np.ones(nd, np.intp)
        j = 0
        for i in range(nd):
            if not new[i]:
                shape[i] = a.shape[j]
                j += 1
        return np.ascontiguousarray(a).reshape(to_fixed_tuple(shape, nd))
    return expand_dims


linear(np.atleast_1d, np.atleast_2d, np.atleast_3d, np.broadcast_to, np.flip, np.flipud,
       np.fliplr, np.roll, np.rot90, np.moveaxis, np.swapaxes, np.rollaxis, untranspose,
       roll_grad)
linear(reshape_back, positions=(0,))
describe(untranspose, roll_grad, reshape_back, pure=True)
nondifferentiable(rolled_to)
