"""Shapes, joins, splits and reorderings: the records of np.hstack, vstack, dstack,
column_stack, row_stack, append, split, array_split, hsplit, vsplit, dsplit, atleast_1d/
2d/3d, broadcast_to, flip, flipud, fliplr, roll, rot90, moveaxis, swapaxes, rollaxis,
repeat, tile and pad; the adjoint of np.transpose with axes (its record is in
numpy_rules); and the numba forms of the calls numba lacks (an axis to np.flip, np.roll,
np.repeat; axes to np.rot90; tuples to np.squeeze and np.expand_dims; a list to
np.transpose; vectors among matrices to np.vstack; np.tile, np.pad, np.rollaxis,
np.row_stack, x.swapaxes), each helper beside its numba form.

Every function here is linear (np.pad with constants is affine: their tangent is zero):
it moves, copies or drops entries of its argument, so its adjoint sends each entry of dy
back to the entry it came from, adding where an entry was copied. A permutation (flip,
roll, rot90, moveaxis, transpose) is undone by the inverse permutation; a join by cutting
dy into pieces shaped like the arrays, a split by joining the pieces' gradients; a copy
(broadcast_to, repeat, tile, the edges and reflections of pad) by summing the copies.
"""

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, overload_method, register_jitable
from numba.np.numpy_support import as_dtype
from numba.np.unsafe.ndarray import to_fixed_tuple

from ..errors import MissingRule
from ..numba_ext import normalize_axis
from ..runtime import reshape_as, unbroadcast, zeros_like
from . import describe, linear, nondifferentiable, rule, tangent

# ---- joins: the adjoint cuts dy into pieces shaped like the arrays ----


def unjoin(dy, arrays, axis):
    """The adjoint of joining `arrays` along `axis` of the result (each raised to its
    rank first, as np.hstack, vstack, dstack, column_stack and append do): dy cut along
    that axis into one piece per array, each with its array's shape. An axis past the
    last is the last (np.hstack joins vectors along axis 0, matrices along axis 1); None
    is axis 0 of the flattened arrays (np.append without an axis).

    >>> [p.shape for p in unjoin(np.ones((2, 5)), (np.zeros(2), np.zeros((2, 4))), 1)]
    [(2,), (2, 4)]
    """
    dy = np.asarray(dy)
    ax = 0 if axis is None else axis + dy.ndim if axis < 0 else min(axis, dy.ndim - 1)
    rest = dy.size // dy.shape[ax] if dy.shape[ax] else 0
    widths = [np.size(a) // rest if rest else 0 for a in arrays]
    pieces = np.split(dy, np.cumsum(widths)[:-1], axis=ax)
    return tuple(reshape_as(p, a) for p, a in zip(pieces, arrays, strict=True))


@register_jitable
def _cut(dy, ax, start, stop):
    """Entries start:stop of `dy` along axis `ax`."""
    return np.swapaxes(np.swapaxes(dy, ax, 0)[start:stop], ax, 0)


@overload(unjoin)
def _unjoin_typer(dy, arrays, axis):
    if not isinstance(dy, types.Array) or not isinstance(arrays, types.BaseTuple):
        return None
    n, nd = len(arrays), dy.ndim
    body = ["def unjoin(dy, arrays, axis):",
            "    ax = 0" if _absent(axis) else
            f"    ax = axis + {nd} if axis < 0 else min(axis, {nd - 1})",
            "    rest = dy.size // dy.shape[ax] if dy.shape[ax] else 0",
            "    o0 = 0"]
    body += [f"    o{i + 1} = o{i} + (np.size(arrays[{i}]) // rest if rest else 0)"
             for i in range(n)]
    pieces = "".join(f"reshape_as(cut(dy, ax, o{i}, o{i + 1}), arrays[{i}]), "
                     for i in range(n))
    body.append(f"    return ({pieces})")
    namespace = {"np": np, "cut": _cut, "reshape_as": reshape_as}
    exec("\n".join(body), namespace)
    return namespace["unjoin"]


@rule(np.hstack)
def hstack(dy, y, tup):
    return unjoin(dy, tup, 1)


@rule(np.vstack, np.row_stack)
def vstack(dy, y, tup):
    return unjoin(dy, tup, 0)


@rule(np.dstack)
def dstack(dy, y, tup):
    return unjoin(dy, tup, 2)


@rule(np.column_stack)
def column_stack(dy, y, tup):
    return unjoin(dy, tup, 1)


@rule(np.append)
def append(dy, y, arr, values, axis=None):
    return unjoin(dy, (arr, values), axis)


@overload(np.row_stack)
def _np_row_stack(tup):
    # NumPy keeps row_stack as vstack's deprecated alias; numba has vstack only
    return lambda tup: np.vstack(tup)


@overload(np.vstack)
def _np_vstack_ranks(tup):
    # numba's np.vstack takes arrays of one rank: vectors (rows) among matrices here
    if not isinstance(tup, types.Tuple) or not all(isinstance(t, types.Array) for t in tup):
        return None
    rows = "".join(f"np.atleast_2d(tup[{i}]), " for i in range(len(tup)))
    namespace = {"np": np}
    exec(f"def vstack(tup):\n    return np.concatenate(({rows}))\n", namespace)
    return namespace["vstack"]


# ---- splits: the result is a list of pieces; the adjoint joins their gradients ----


@rule(np.split, np.array_split, view=True)
def split(dy, y, ary, indices_or_sections=1, axis=0):
    return unsplit(dy, ary, axis)


@rule(np.hsplit, view=True)
def hsplit(dy, y, ary, indices_or_sections=1):
    return unsplit(dy, ary, 1)


@rule(np.vsplit, view=True)
def vsplit(dy, y, ary, indices_or_sections=1):
    return unsplit(dy, ary, 0)


@rule(np.dsplit, view=True)
def dsplit(dy, y, ary, indices_or_sections=1):
    return unsplit(dy, ary, 2)


def unsplit(dy, ary, axis):
    """The adjoint of np.split(ary, ..., axis) and its kin: the gradients of the pieces
    (a list) joined again along `axis`; an axis past the last is the last (np.hsplit
    splits a vector along axis 0).

    >>> unsplit([np.ones(2), np.zeros(1)], np.zeros(3), 1)
    array([1., 1., 0.])
    """
    return np.concatenate(dy, axis=axis if axis < 0 else min(axis, np.ndim(ary) - 1))


@overload(unsplit)
def _unsplit_typer(dy, ary, axis):
    if not (isinstance(dy, types.List) and isinstance(dy.dtype, types.Array)
            and isinstance(ary, types.Array)):
        return None
    dtype = as_dtype(dy.dtype.dtype)
    if dtype.kind not in "fc":
        dtype = np.dtype(np.float64)

    def join(dy, ary, axis):
        ax = normalize_axis(axis if axis < 0 else min(axis, ary.ndim - 1), ary.ndim)
        out = np.zeros(ary.shape, dtype)
        rows = np.swapaxes(out, ax, 0)
        start = 0
        for piece in dy:
            part = np.swapaxes(piece, ax, 0)
            rows[start:start + part.shape[0]] = part
            start += part.shape[0]
        if start != rows.shape[0]:
            raise ValueError("unsplit: the pieces do not make up the array")
        return out
    return join


@overload(zeros_like)
def _zeros_like_pieces(x):
    # the zero gradient of the pieces np.split gives (a list of arrays): one each
    if not (isinstance(x, types.List) and isinstance(x.dtype, types.Array)):
        return None
    dtype = as_dtype(x.dtype.dtype)
    if dtype.kind not in "fc":
        dtype = np.dtype(np.float64)
    return lambda x: [np.zeros(p.shape, dtype) for p in x]

# ---- raising the rank, broadcasting ----


@rule(np.atleast_1d, np.atleast_2d, np.atleast_3d)
def atleast(dy, y, x):
    return reshape_as(dy, x)


@rule(np.broadcast_to)
def broadcast_to(dy, y, x, shape=None):
    return unbroadcast(dy, x)


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


# ---- copies: the adjoint sums them ----


@rule(np.repeat)
def repeat(dy, y, x, repeats=1, axis=None):
    return repeat_grad(dy, x, repeats, axis)


@rule(np.tile)
def tile(dy, y, x, reps=1):
    return tile_grad(dy, x, reps)


def repeat_grad(dy, x, repeats, axis=None):
    """The adjoint of ``np.repeat(x, repeats, axis)``: the copies of each entry (of x
    flattened, without an axis) summed.

    >>> repeat_grad(np.array([1.0, 2.0, 3.0]), np.zeros(2), [2, 1])
    array([3., 3.])
    """
    dy = np.asarray(dy)
    k = 0 if axis is None else axis % np.ndim(x)
    moved = np.ravel(dy) if axis is None else np.moveaxis(dy, k, 0)
    n = np.size(x) if axis is None else np.shape(x)[k]
    out = np.zeros((n,) + moved.shape[1:], np.result_type(dy, 0.0))
    np.add.at(out, np.repeat(np.arange(n), repeats), moved)
    return reshape_as(out, x) if axis is None else np.moveaxis(out, 0, k)


@register_jitable
def _counts(repeats, n):
    """How many copies each of `n` entries gets (an intp array), as np.repeat reads
    `repeats`: one count for all, or one each."""
    r = _ints(repeats)
    if len(r) != 1 and len(r) != n:
        raise ValueError("repeats does not match the length of the axis")
    out = np.empty(n, np.intp)
    for i in range(n):
        out[i] = r[i if len(r) > 1 else 0]
        if out[i] < 0:
            raise ValueError("negative dimensions are not allowed")
    return out


@register_jitable
def _repeat_rows(rows, counts):
    """Row i of the matrix `rows` copied counts[i] times."""
    out = np.empty((counts.sum(), rows.shape[1]), rows.dtype)
    j = 0
    for i in range(rows.shape[0]):
        for _ in range(counts[i]):
            out[j] = rows[i]
            j += 1
    return out


@register_jitable
def _unrepeat_rows(rows, counts):
    """The sum of each run of counts[i] rows of the matrix `rows`."""
    out = np.zeros((len(counts), rows.shape[1]))
    j = 0
    for i in range(len(counts)):
        for _ in range(counts[i]):
            out[i] += rows[j]
            j += 1
    return out


@overload(np.repeat)
def _np_repeat(a, repeats, axis=None):
    # numba's np.repeat flattens the array
    if not isinstance(a, types.Array) or _absent(axis) or a.ndim == 0:
        return None

    def repeat(a, repeats, axis=None):
        k = normalize_axis(axis, a.ndim)
        b = np.ascontiguousarray(np.swapaxes(a, k, 0))
        n = b.shape[0]
        counts = _counts(repeats, n)
        rows = _repeat_rows(b.reshape((n, b.size // n if n else 0)), counts)
        return np.ascontiguousarray(np.swapaxes(
            rows.reshape((rows.shape[0],) + b.shape[1:]), k, 0))
    return repeat


@overload(repeat_grad)
def _repeat_grad_typer(dy, x, repeats, axis=None):
    if not isinstance(dy, types.Array):
        return None
    if _absent(axis):
        def flat(dy, x, repeats, axis=None):
            g = np.ascontiguousarray(dy).reshape((dy.size, 1))
            return reshape_as(_unrepeat_rows(g, _counts(repeats, np.size(x))).ravel(), x)
        return flat
    if not isinstance(x, types.Array):
        return None

    def along(dy, x, repeats, axis=None):
        k = normalize_axis(axis, x.ndim)
        n = x.shape[k]
        shape = np.swapaxes(x, k, 0).shape
        g = np.ascontiguousarray(np.swapaxes(dy, k, 0))
        rows = g.reshape((g.shape[0], x.size // n if n else 0))
        out = _unrepeat_rows(rows, _counts(repeats, n))
        return np.ascontiguousarray(np.swapaxes(out.reshape(shape), k, 0))
    return along


def tile_grad(dy, x, reps):
    """The adjoint of ``np.tile(x, reps)``: the tiles of dy summed, in x's shape.

    >>> tile_grad(np.arange(6.0), np.zeros(2), 3)
    array([6., 9.])
    """
    reps = tuple(np.atleast_1d(reps))
    d = max(np.ndim(x), len(reps))
    shape = (1,) * (d - np.ndim(x)) + np.shape(x)
    reps = (1,) * (d - len(reps)) + reps
    tiles = np.reshape(dy, [n for pair in zip(reps, shape, strict=True) for n in pair])
    return reshape_as(np.sum(tiles, axis=tuple(range(0, 2 * d, 2))), x)


def _tile_source(head: str, array: str, nx: int, nreps: int, body: list[str]) -> str:
    """Source of a numba form `head` (a def line) taking `array` of rank nx and reps of
    nreps ints: it names the padded reps R0.. and shape S0.. (np.tile pads both to the
    larger rank), then runs `body`."""
    d = max(nx, nreps)
    lines = [head, "    r = ints(reps)"]
    for i in range(d):
        lines.append(f"    R{i} = r[{i - (d - nreps)}]" if i >= d - nreps else f"    R{i} = 1")
        lines.append(f"    S{i} = {array}.shape[{i - (d - nx)}]" if i >= d - nx
                     else f"    S{i} = 1")
    return "\n".join(lines + [f"    {line}" for line in body]) + "\n"


def _compile(source: str, name: str):
    namespace = {"np": np, "ints": _ints, "reshape_as": reshape_as}
    exec(source, namespace)
    return namespace[name]


@overload(np.tile)
def _np_tile(A, reps):
    if not isinstance(A, types.Array):
        return None
    n = 1 if isinstance(reps, types.Integer) else len(reps) \
        if isinstance(reps, types.BaseTuple) and _int_sequence(reps) else None
    if n is None:
        raise TypingError("srcgrad: np.tile takes an int or a tuple of ints as reps here")
    d = max(A.ndim, n)
    pairs = ", ".join(f"R{i}, S{i}" for i in range(d))
    ones = ", ".join(f"1, S{i}" for i in range(d))
    out = ", ".join(f"R{i} * S{i}" for i in range(d))
    source = _tile_source("def tile(A, reps):", "A", A.ndim, n, [
        f"src = np.ascontiguousarray(A).reshape(({ones},))",
        f"return np.ascontiguousarray(np.broadcast_to(src, ({pairs},))).reshape(({out},))"])
    return _compile(source, "tile")


@overload(tile_grad)
def _tile_grad_typer(dy, x, reps):
    if not isinstance(dy, types.Array):
        return None
    nx = x.ndim if isinstance(x, types.Array) else 0
    n = 1 if isinstance(reps, types.Integer) else len(reps) \
        if isinstance(reps, types.BaseTuple) and _int_sequence(reps) else None
    if n is None:
        raise TypingError("srcgrad: np.tile takes an int or a tuple of ints as reps here")
    d = max(nx, n)
    pairs = ", ".join(f"R{i}, S{i}" for i in range(d))
    body = [f"g = np.ascontiguousarray(dy).reshape(({pairs},))"]
    # the axis of the copies of axis i is at i once those before it are summed
    body += [f"g = np.sum(g, axis={i})" for i in range(d)]
    body.append("return reshape_as(g, x)")
    return _compile(_tile_source("def tile_grad(dy, x, reps):", "x", nx, n, body), "tile_grad")



# ---- padding: the adjoint adds each padded entry into the entry it copies ----


@rule(np.pad)
def pad(dy, y, x, pad_width=0, mode="constant", constant_values=0, reflect_type="even"):
    return pad_grad(dy, x, pad_width, mode, reflect_type)


@tangent(np.pad)
def pad_tangent(dx, y, x, pad_width=0, mode="constant", constant_values=0,
                reflect_type="even"):
    # padding with constants is affine: their tangent is zero
    return padded(dx, pad_width, mode, reflect_type)


_PAD_MODES = ("constant", "edge", "reflect")
_PAD_MISSING = ("np.pad has a gradient rule for the modes 'constant', 'edge' and "
                "'reflect' (reflect_type 'even') only")


@register_jitable
def _source(j, n, code):
    """The entry of an axis of length `n` that entry j (counted from the first entry of
    the axis, negative in the padding before it) of the padded axis copies: for mode
    `code` 0 (constant) -1 outside the axis; 1 (edge) the nearest end; 2 (reflect) the
    mirror image about the ends, again and again (period 2 (n - 1))."""
    if 0 <= j < n:
        return j
    if code == 0:
        return -1
    if n == 0:
        raise ValueError("can't extend an empty axis with mode 'edge' or 'reflect'")
    if code == 1:
        return 0 if j < 0 else n - 1
    if n == 1:
        return 0
    period = 2 * (n - 1)
    j = abs(j) % period
    return period - j if j > n - 1 else j


def _mode_code(mode, reflect_type):
    """The mode as `_source` takes it, or MissingRule for a mode it does not know."""
    if mode not in _PAD_MODES or reflect_type != "even":
        raise MissingRule(_PAD_MISSING)
    return _PAD_MODES.index(mode)


@overload(_mode_code)
def _mode_code_typer(mode, reflect_type):
    def code(mode, reflect_type):
        if reflect_type != "even":
            raise MissingRule(_PAD_MISSING)
        if mode == "constant":
            return 0
        if mode == "edge":
            return 1
        if mode == "reflect":
            return 2
        raise MissingRule(_PAD_MISSING)
    return code


def _widths(pad_width, ndim):
    """np.pad's `pad_width` (an int, a pair, or a pair per axis) as an (ndim, 2) array.

    >>> _widths((1, 2), 2).tolist()
    [[1, 2], [1, 2]]
    """
    return np.broadcast_to(np.asarray(pad_width, np.intp).reshape(-1, 2)
                           if np.size(pad_width) > 1 else np.asarray(pad_width, np.intp),
                           (ndim, 2))


@overload(_widths)
def _widths_typer(pad_width, ndim):
    if isinstance(pad_width, types.Integer):
        return lambda pad_width, ndim: np.full((ndim, 2), pad_width, np.intp)
    nested = isinstance(pad_width, types.BaseTuple) and all(
        isinstance(t, types.BaseTuple) for t in pad_width)
    if not nested and not _int_sequence(pad_width):
        raise TypingError("srcgrad: np.pad's pad_width must be ints here")
    rows = [f"ints(pad_width[{i}])" for i in range(len(pad_width))] if nested \
        else ["ints(pad_width)"]
    source = ("def widths(pad_width, ndim):\n"
              f"    rows = ({', '.join(rows)},)\n"
              "    out = np.empty((ndim, 2), np.intp)\n"
              "    for k in range(ndim):\n"
              "        row = rows[k if len(rows) > 1 else 0]\n"
              "        if len(rows) not in (1, ndim) or len(row) not in (1, 2):\n"
              "            raise ValueError('pad_width does not match the array')\n"
              "        out[k, 0] = row[0]\n"
              "        out[k, 1] = row[len(row) - 1]\n"
              "    return out\n")
    namespace = {"np": np, "ints": _ints}
    exec(source, namespace)
    return namespace["widths"]


def padded(x, pad_width, mode="constant", reflect_type="even"):
    """``np.pad(x, pad_width, mode)`` with zeros as the constants: the tangent of np.pad.

    >>> padded(np.array([1.0, 2.0]), 1)
    array([0., 1., 2., 0.])
    """
    _mode_code(mode, reflect_type)
    return np.pad(x, pad_width, mode) if mode != "reflect" else np.pad(x, pad_width, mode,
                                                                       reflect_type="even")


def pad_grad(dy, x, pad_width, mode="constant", reflect_type="even"):
    """The adjoint of ``np.pad(x, pad_width, mode)``: each entry of dy added into the entry
    of x it copies, axis by axis from the last (constants copy none).

    >>> pad_grad(np.arange(5.0), np.zeros(2), (1, 2), "edge")
    array([1., 9.])
    """
    code, g = _mode_code(mode, reflect_type), np.asarray(dy)
    widths = _widths(pad_width, np.ndim(x))
    for k in reversed(range(np.ndim(x))):
        n, before = np.shape(x)[k], widths[k, 0]
        source = np.array([_source(j - before, n, code) for j in range(g.shape[k])], np.intp)
        moved = np.moveaxis(g, k, 0)
        out = np.zeros((n,) + moved.shape[1:], np.result_type(g, 0.0))
        np.add.at(out, source[source >= 0], moved[source >= 0])
        g = np.moveaxis(out, 0, k)
    return reshape_as(g, x)


@register_jitable
def _pad_axis(a, k, before, after, code, value):
    """`a` padded along axis `k` (see `_source`), as a C-contiguous copy."""
    b = np.swapaxes(a, k, 0)
    n = b.shape[0]
    out = np.empty((before + n + after,) + b.shape[1:], a.dtype)
    for p in range(before + n + after):
        j = _source(p - before, n, code)
        if j >= 0:
            out[p] = b[j]
        else:
            out[p] = value
    return np.ascontiguousarray(np.swapaxes(out, k, 0))


@register_jitable
def _unpad_axis(g, k, before, n, code):
    """The adjoint of `_pad_axis` along axis `k` of length `n`."""
    b = np.swapaxes(g, k, 0)
    out = np.zeros((n,) + b.shape[1:], g.dtype)
    for p in range(b.shape[0]):
        j = _source(p - before, n, code)
        if j >= 0:
            out[j] += b[p]
    return np.ascontiguousarray(np.swapaxes(out, k, 0))


@overload(np.pad)
def _np_pad(array, pad_width, mode="constant", constant_values=0, reflect_type="even"):
    # numba has no np.pad: these modes, with one constant
    if not isinstance(array, types.Array) or array.ndim == 0:
        return None
    if not isinstance(constant_values, (types.Number, int, float)) and not (
            isinstance(constant_values, types.Omitted)):
        raise TypingError("srcgrad: np.pad compiles with one number as constant_values")

    def pad(array, pad_width, mode="constant", constant_values=0, reflect_type="even"):
        code = _mode_code(mode, reflect_type)
        widths = _widths(pad_width, array.ndim)
        out = np.ascontiguousarray(array)
        for k in range(array.ndim):
            out = _pad_axis(out, k, widths[k, 0], widths[k, 1], code, constant_values)
        return out
    return pad


@overload(padded)
def _padded_typer(x, pad_width, mode="constant", reflect_type="even"):
    if isinstance(x, types.Array):
        return lambda x, pad_width, mode="constant", reflect_type="even": np.pad(
            x, pad_width, mode, 0, reflect_type)
    return None


@overload(pad_grad)
def _pad_grad_typer(dy, x, pad_width, mode="constant", reflect_type="even"):
    if not isinstance(dy, types.Array) or not isinstance(x, types.Array):
        return None
    dtype = as_dtype(dy.dtype) if as_dtype(dy.dtype).kind in "fc" else np.dtype(np.float64)

    def unpad(dy, x, pad_width, mode="constant", reflect_type="even"):
        code = _mode_code(mode, reflect_type)
        widths = _widths(pad_width, x.ndim)
        g = np.ascontiguousarray(dy).astype(dtype)
        for k in range(x.ndim - 1, -1, -1):
            g = _unpad_axis(g, k, widths[k, 0], x.shape[k], code)
        return g
    return unpad

linear(np.hstack, np.vstack, np.row_stack, np.dstack, np.column_stack, np.atleast_1d,
       np.atleast_2d, np.atleast_3d, np.broadcast_to, np.flip, np.flipud, np.fliplr, np.roll,
       np.rot90, np.moveaxis, np.swapaxes, np.rollaxis, np.repeat, np.tile, np.split,
       np.array_split, np.hsplit, np.vsplit, np.dsplit, unjoin, unsplit, untranspose, roll_grad,
       repeat_grad, tile_grad, pad_grad, padded)
linear(np.append, positions=(0, 1))
describe(unjoin, unsplit, untranspose, roll_grad, repeat_grad, tile_grad, pad_grad, padded,
         pure=True)
nondifferentiable(rolled_to)
describe(repeat_grad, tile_grad, pad_grad, shape_only=1)

