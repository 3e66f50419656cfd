"""Tapes and value checks: the arrays that keep loop values for the adjoint, snapshots,
and the run-time checks of arrays that may share memory (`unshared`, `unaliased`).
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from ..errors import UnsupportedSyntax

# The compiled tape holds one shape per variable; the api runs the Python form instead.
TAPE_SHAPE_CHANGED = "srcgrad: a value saved on the tape changed shape between loop iterations"


def new_tape(sample, trips):
    """A tape with one entry per loop iteration (`trips` of them), known when the loop
    starts. In Python it is a list: each entry keeps the type and shape of what was
    recorded there, so a variable that starts as the int 1 and becomes a float (or an
    array) comes back as each iteration had it. Compiled, it is an array shaped like
    `sample` per entry (see the numba form below: a variable's type is one type there).

    >>> len(new_tape(np.zeros(2), 3))
    3
    """
    return [None] * max(trips, 0)


@overload(new_tape)
def _new_tape_typer(sample, trips):
    if isinstance(sample, types.Array):
        dtype = sample.dtype
        return lambda sample, trips: np.empty((max(trips, 0),) + sample.shape, dtype)
    if isinstance(sample, (types.Number, types.Boolean)):
        dtype = sample
        return lambda sample, trips: np.empty(max(trips, 0), dtype)
    if isinstance(sample, types.BaseTuple):   # what a function returns: a list of them
        def tuples(sample, trips):
            tape = [sample]
            for _ in range(max(trips, 1) - 1):
                tape.append(sample)
            return tape
        return tuples
    return None


def record(tape, k, value):
    """``tape[k] = value``: entry `k` of a tape (`new_tape`) holds `value`, an array
    copied (a later write into it must not change the entry).

    (A helper, because numba compiles an array assignment with its error-message
    machinery, seconds of compile time; the copy there is a plain loop.)

    >>> t = new_tape(np.zeros(2), 3); a = np.ones(2); record(t, 1, a); a[0] = 5.0; t[1]
    array([1., 1.])
    """
    tape[k] = np.copy(value) if isinstance(value, np.ndarray) else value


@overload(record)
def _record_typer(tape, k, value):
    if not isinstance(value, types.Array):
        def store(tape, k, value):
            tape[k] = value
        return store

    def copy_in(tape, k, value):
        row = tape[k].ravel()  # a view: the entry is C-contiguous
        flat = value.ravel()
        if value.shape != tape.shape[1:]:
            raise ValueError(TAPE_SHAPE_CHANGED)
        for j in range(row.size):
            row[j] = flat[j]
    return copy_in


def snapshot(x):
    """A copy of `x` that later writes into the array it came from cannot change: what
    the tape saves before a subscript write overwrites it. Scalars are values already.

    >>> a = np.arange(3.0); s = snapshot(a[1:]); a[1] = 9.0; s
    array([1., 2.])
    """
    return np.copy(x) if isinstance(x, np.ndarray) else x


@overload(snapshot)
def _snapshot_typer(x):
    if isinstance(x, types.Array):
        return lambda x: x.copy()
    return lambda x: x


def unshared(v, message):
    """`v` itself, checked before `v op= e`: an array there may be shared (a row of a
    matrix, a caller's array), and changing it in place cannot be differentiated."""
    if isinstance(v, np.ndarray):
        raise UnsupportedSyntax(message)
    return v


@overload(unshared)
def _unshared_typer(v, message):
    if isinstance(v, types.Array):
        raise TypingError(f"srcgrad: {getattr(message, 'literal_value', message)}")
    return lambda v, message: v


def unaliased(v, array, message):
    """`v`, a value taken from `array`: refused if it is a view of it that is read after
    a write into `array` (or into an item of it, a tuple) the gradient cannot follow (see
    `passes/views.py`'s `retake_views`)."""
    arrays = array if isinstance(array, (tuple, list)) else (array,)
    if isinstance(v, np.ndarray) and any(np.shares_memory(v, a) for a in arrays):
        raise UnsupportedSyntax(message)
    return v


@overload(unaliased)
def _unaliased_typer(v, array, message):
    if isinstance(v, types.Array) and isinstance(array, types.Array):
        # a view lies in its base's memory, a copy in new memory: the bounds tell them
        # apart as np.shares_memory does (numba has no np.shares_memory)
        def check(v, array, message):
            if v.size and array.size:
                v_lo, v_hi = _bounds(v)
                a_lo, a_hi = _bounds(array)
                if v_lo < a_hi and a_lo < v_hi:
                    raise UnsupportedSyntax(message)
            return v
        return check
    if isinstance(v, types.Array):   # (refused compiled; the Python form checks)
        raise TypingError(f"srcgrad: {getattr(message, 'literal_value', message)}")
    return lambda v, array, message: v


def retake(old, new):
    """`v = z[0]` taken again after a write into z: the new row where the first was a
    view (z a matrix), the old number where it was one (z a vector)."""
    return new if isinstance(old, np.ndarray) else old


@overload(retake)
def _retake_typer(old, new):
    if isinstance(old, types.Array):
        return lambda old, new: new
    return lambda old, new: old


def retake_grad(dy, old):
    """The gradients of `retake(old, new)`'s operands: (to old, to new)."""
    return (0.0 * dy, dy) if isinstance(old, np.ndarray) else (dy, 0.0 * dy)


@overload(retake_grad)
def _retake_grad_typer(dy, old):
    if isinstance(old, types.Array):
        return lambda dy, old: (0.0 * dy, dy)
    return lambda dy, old: (dy, 0.0 * dy)


@register_jitable
def _bounds(a):
    """The first and one past the last byte address `a`'s entries take."""
    lo = hi = a.ctypes.data
    for k in range(a.ndim):
        step = (a.shape[k] - 1) * a.strides[k]
        if step < 0:
            lo += step
        else:
            hi += step
    return lo, hi + a.itemsize
