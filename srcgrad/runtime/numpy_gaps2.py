"""Index and check helpers the records of rules/numpy_gaps2.py call, each a NumPy
function with its numba form right after it. None carries a gradient: each gives the
positions a call reads its arguments' entries at, or checks what NumPy would do
differently from the operations the record writes the call as.

* `exponents(x)`: np.frexp(x)'s exponents.
* `close_to_real(a, tol)`: 0, where np.real_if_close(a, tol) gives a's real part.
* `cycled(a, new_shape)`: the flat positions np.resize(a, new_shape) reads.
* `first_kept(filt, trim)`, `last_kept(filt, trim)`: the bounds np.trim_zeros keeps.
* `insertion_order(arr, obj, values, axis)`: the positions np.insert's result reads, in
  arr's entries followed by values'.
* `choice_index(a, choices, mode)`, `choice_shape(a, choices)`: np.choose's index into
  its stacked choices, broadcast, and those choices' shape broadcast.
"""

from __future__ import annotations

import math

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from ..errors import MissingRule


def exponents(x):
    """np.frexp(x)'s second result: the powers of two x is a mantissa in [0.5, 1) times.

    >>> exponents(np.array([1.0, 0.3, 0.0]))
    array([ 1, -1,  0], dtype=int32)
    """
    return np.frexp(x)[1]


@overload(exponents)
def _exponents_typer(x):
    if isinstance(x, types.Float):
        return lambda x: math.frexp(x)[1]
    if isinstance(x, types.Array) and isinstance(x.dtype, types.Float):
        def each(x):
            e = np.empty(x.shape, np.int32)
            flat = e.reshape(-1)
            for k, v in enumerate(x.ravel()):
                flat[k] = math.frexp(v)[1]
            return e
        return each
    return None


_COMPLEX = ("np.real_if_close: an entry of the array is not close to real, so NumPy gives "
            "it complex, as it is; srcgrad differentiates its real result only: take "
            "np.real(a) or a itself")


def close_to_real(a, tol=100):
    """0 (an int, which changes no dtype added) where np.real_if_close(a, tol) is a's
    real part: refused where it is a, complex.

    >>> close_to_real(np.array([1.0 + 1e-20j]))
    0
    """
    a = np.asarray(a)
    if not np.iscomplexobj(a):
        return 0
    if tol > 1:
        tol = np.finfo(a.dtype).eps * tol
    if not np.all(np.abs(a.imag) < tol):
        raise MissingRule(_COMPLEX)
    return 0


@overload(close_to_real)
def _close_to_real_typer(a, tol=100):
    dtype = a.dtype if isinstance(a, types.Array) else a
    if not isinstance(dtype, types.Complex):
        return lambda a, tol=100: 0
    eps = float(np.finfo(np.complex64 if dtype.bitwidth == 64 else np.complex128).eps)

    def checked(a, tol=100):
        bound = eps * tol if tol > 1 else tol
        if not np.all(np.abs(np.imag(a)) < bound):
            raise MissingRule(_COMPLEX)
        return 0
    return checked


def cycled(a, new_shape):
    """The flat positions of `a` np.resize(a, new_shape) reads: a's entries over again.

    >>> cycled(np.ones(3), (2, 2))
    array([[0, 1],
           [2, 0]])
    """
    if np.size(a) == 0:
        raise MissingRule("np.resize of an empty array gives zeros: write np.zeros")
    return np.resize(np.arange(np.size(a)), new_shape)


@overload(cycled)
def _cycled_typer(a, new_shape):
    def impl(a, new_shape):
        if np.size(a) == 0:
            raise MissingRule("np.resize of an empty array gives zeros: write np.zeros")
        return np.resize(np.arange(np.size(a)), new_shape)
    return impl


def _trimmed(filt):
    if np.ndim(filt) != 1:
        raise MissingRule("np.trim_zeros of an array of more than one dimension has no "
                          "gradient rule: trim a 1-D array")


def first_kept(filt, trim="fb"):
    """Where np.trim_zeros(filt, trim) starts: after filt's leading zeros if trim has 'f'.

    >>> first_kept(np.array([0.0, 0.0, 2.0, 0.0]), "fb")
    2
    """
    _trimmed(filt)
    if "f" not in trim.lower():
        return 0
    nonzero = np.flatnonzero(filt)
    return int(nonzero[0]) if nonzero.size else len(filt)


def last_kept(filt, trim="fb"):
    """Where np.trim_zeros(filt, trim) stops: before filt's trailing zeros if trim has
    'b' (and not before where it starts).

    >>> last_kept(np.array([0.0, 0.0, 2.0, 0.0]), "fb")
    3
    """
    _trimmed(filt)
    start = first_kept(filt, trim)
    if "b" not in trim.lower():
        return len(filt)
    nonzero = np.flatnonzero(filt)
    return max(int(nonzero[-1]) + 1 if nonzero.size else 0, start)


def _trim_typer(filt, trim):
    if not (isinstance(filt, types.Array) and filt.ndim == 1):
        return None
    return True


@overload(first_kept)
def _first_kept_typer(filt, trim="fb"):
    if _trim_typer(filt, trim) is None:
        return None

    def impl(filt, trim="fb"):
        if "f" not in trim and "F" not in trim:
            return 0
        for k in range(len(filt)):
            if filt[k] != 0:
                return k
        return len(filt)
    return impl


@overload(last_kept)
def _last_kept_typer(filt, trim="fb"):
    if _trim_typer(filt, trim) is None:
        return None

    def impl(filt, trim="fb"):
        start = first_kept(filt, trim)
        if "b" not in trim and "B" not in trim:
            return len(filt)
        for k in range(len(filt) - 1, start - 1, -1):
            if filt[k] != 0:
                return k + 1
        return start
    return impl


_CAST = ("np.insert of float values into an array of ints casts them to ints, which "
         "have no gradient: insert into a float array")


def insertion_order(arr, obj, values, axis=None):
    """The positions np.insert(arr, obj, values, axis) reads, of arr's entries (flat)
    followed by values' (flat): np.insert of their positions, as NumPy places them.

    >>> insertion_order(np.ones(3), 1, [7.0, 8.0])
    array([0, 3, 4, 1, 2])
    """
    arr, values = np.asarray(arr), np.asarray(values)
    if np.issubdtype(arr.dtype, np.integer) and not np.issubdtype(values.dtype, np.integer):
        raise MissingRule(_CAST)
    return np.insert(np.arange(arr.size).reshape(arr.shape), obj,
                     arr.size + np.arange(values.size).reshape(values.shape), axis)


@overload(insertion_order)
def _insertion_order_typer(arr, obj, values, axis=None):
    if not isinstance(arr, types.Array):
        return None
    kind = values.dtype if isinstance(values, types.Array) else values
    if isinstance(arr.dtype, types.Integer) and not isinstance(kind, types.Integer):
        def refused(arr, obj, values, axis=None):
            raise MissingRule(_CAST)
        return refused
    if not (isinstance(axis, (types.NoneType, types.Omitted)) or axis is None):
        raise TypingError("srcgrad: np.insert along an axis is not compiled (it runs "
                          "as Python)")
    if isinstance(values, types.Array) and values.ndim > 1 or not (
            isinstance(obj, types.Integer)
            or isinstance(obj, types.Array) and obj.ndim == 1
            and isinstance(obj.dtype, types.Integer)):
        raise TypingError("srcgrad: np.insert is compiled of an int or a 1-D array of "
                          "ints at a time, of 1-D values, without axis=")

    def flat(arr, obj, values, axis=None):
        n, m = arr.size, np.asarray(values).size
        at = np.asarray(obj).ravel()
        for k in range(at.size):
            if at[k] < -n or at[k] > n:
                raise IndexError("np.insert: an index is out of bounds")
        at = np.where(at < 0, at + n, at)
        if at.size == 1:   # (every value at that position, as NumPy)
            pos = at[0]
            out = np.empty(n + m, np.intp)
            out[:pos] = np.arange(pos)
            out[pos:pos + m] = n + np.arange(m)
            out[pos + m:] = np.arange(pos, n)
            return out
        if m != 1 and m != at.size:
            raise ValueError("np.insert: the values do not match the indices")
        out = np.full(n + at.size, -1, np.intp)
        order = np.argsort(at, kind="mergesort")
        for r in range(at.size):   # the r-th in order moves r places on
            out[at[order[r]] + r] = n + (order[r] if m != 1 else 0)
        k = 0
        for p in range(out.size):
            if out[p] < 0:
                out[p] = k
                k += 1
        return out
    return flat


_MODES = ("raise", "wrap", "clip")


def choice_index(a, choices, mode="raise"):
    """np.choose(a, choices, mode=mode)'s index into its choices stacked (first axis),
    broadcast with them and given a first axis of 1 (np.take_along_axis's).

    >>> choice_index(np.array([1, 0]), np.zeros((2, 2)))
    array([[1, 0]])
    """
    a, n = np.asarray(a), np.shape(choices)[0]
    shape = np.broadcast_shapes(a.shape, np.shape(choices)[1:])
    if mode == "wrap":
        a = a % n
    elif mode == "clip":
        a = np.clip(a, 0, n - 1)
    elif np.any((a < 0) | (a >= n)):
        raise ValueError("invalid entry in choice array")
    return np.broadcast_to(a, shape)[None]


def choice_shape(a, choices):
    """The shape np.choose(a, choices) gives each choice stacked, broadcast with `a`.

    >>> choice_shape(np.zeros((3, 1), int), np.zeros((2, 4)))
    (2, 3, 4)
    """
    return (np.shape(choices)[0],) + np.broadcast_shapes(np.shape(a), np.shape(choices)[1:])


@overload(choice_index)
def _choice_index_typer(a, choices, mode="raise"):
    if not isinstance(choices, types.Array):
        return None

    def impl(a, choices, mode="raise"):
        n = choices.shape[0]
        b = np.asarray(a) + np.zeros(choices.shape[1:], np.intp)
        if mode == "wrap":
            b = b % n
        elif mode == "clip":
            b = np.minimum(np.maximum(b, 0), n - 1)
        elif np.any((b < 0) | (b >= n)):
            raise ValueError("invalid entry in choice array")
        return b.reshape((1,) + b.shape)
    return impl


@overload(choice_shape)
def _choice_shape_typer(a, choices):
    if not isinstance(choices, types.Array):
        return None

    def impl(a, choices):
        b = np.asarray(a) + np.zeros(choices.shape[1:], np.intp)
        return (choices.shape[0],) + b.shape
    return impl
