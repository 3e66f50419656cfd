"""Tapes and value checks: the arrays that keep loop values for the adjoint (and the
factors of the outer products a loop's adjoint adds up, `keep_product`), snapshots, and
the run-time checks of arrays that may share memory (`unshared`, `unaliased`,
`in_place_array`).
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from ..errors import UnsupportedSyntax
from .matmul import add_matmul_lhs_grad, add_matmul_rhs_grad, held_in_place

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
        # refused where it runs, as the Python form is: a branch that never runs with an
        # array there (fuzz seeds 9997005, 9997034) no longer keeps the rest from compiling
        def refuse(v, message):
            if v.size >= 0:   # always, but not known so when typed: v's type is kept
                raise UnsupportedSyntax(message)
            return v
        return refuse
    return lambda v, message: v


def in_place_array(v, message):
    """`v` itself, checked before `v[:] op= e`: srcgrad's form of `v op= e` where a view
    of v is taken, which NumPy makes in place on an array (the view sees it). On a number
    (whose "view", `np.reshape(v, ...)`, is a new array) `v op= e` binds a new value
    instead; that is refused, with `message`, where it runs."""
    if not isinstance(v, np.ndarray):
        raise UnsupportedSyntax(message)
    return v


@overload(in_place_array)
def _in_place_array_typer(v, message):
    if isinstance(v, types.Array):
        return lambda v, message: v

    def refuse(v, message):
        raise UnsupportedSyntax(message)
    return refuse


def same_shape(v, shape, message):
    """Check, after a loop, that `v` has the shape it had before it (`shape`): the
    adjoint reads values the loop computes from v for their shapes only, as they are at
    the end (a shape that grows by broadcasting, `c = c * x`, would be another one)."""
    if np.shape(v) != shape:
        raise UnsupportedSyntax(message)


@overload(same_shape)
def _same_shape_typer(v, shape, message):
    if len(getattr(shape, "types", ())) != getattr(v, "ndim", 0):
        raise TypingError(f"srcgrad: {getattr(message, 'literal_value', message)}")

    def check(v, shape, message):
        if np.shape(v) != shape:
            raise UnsupportedSyntax(message)
    return check


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


# ---- a product's adjoint kept as rows, for one product after the loop (passes/batch.py) ----

def _outer_factors(out, dy, a, b, lhs):
    """(u, v) with ``matmul_lhs_grad(dy, a, b) == np.outer(u, v)`` (`lhs`; else the same of
    `matmul_rhs_grad`), where that is the product of two float64 vectors added into a
    float64 matrix `out`: a matrix times a vector; else None."""
    matrix, vector = (a, b) if lhs else (b, a)
    if all(type(x) is np.ndarray and x.dtype == np.float64 for x in (out, dy, a, b)) and \
            out.ndim == matrix.ndim == 2 and vector.ndim == dy.ndim == 1:
        return (dy, b) if lhs else (a, dy)
    return None


def _outer_case(out, dy, a, b, lhs):
    """`_outer_factors`'s test on numba types (`lhs` a literal)."""
    matrix, vector = (a, b) if lhs else (b, a)
    return all(isinstance(x, types.Array) and x.dtype == types.float64
               for x in (out, dy, a, b)) and \
        out.ndim == matrix.ndim == 2 and vector.ndim == dy.ndim == 1


def product_rows(out, dy, a, b, trips, lhs):
    """Rows for `trips` iterations' `keep_product(out, ..., dy, a, b, lhs)`: two zero
    matrices, one row per iteration for each factor of the outer product, where the
    adjoint is one; else two empty vectors (nothing is kept).

    >>> [r.shape for r in product_rows(np.zeros((2, 3)), np.ones(2), np.ones((2, 3)),
    ...                                 np.ones(3), 4, True)]
    [(4, 2), (4, 3)]
    """
    factors = _outer_factors(out, dy, a, b, lhs)
    if factors is None:
        return np.zeros(0), np.zeros(0)
    u, v = factors
    return np.zeros((max(trips, 0), u.size)), np.zeros((max(trips, 0), v.size))


@overload(product_rows, prefer_literal=True)
def _product_rows_typer(out, dy, a, b, trips, lhs):
    if not isinstance(lhs, types.BooleanLiteral):
        return None
    if not _outer_case(out, dy, a, b, lhs.literal_value):
        return lambda out, dy, a, b, trips, lhs: (np.zeros(0), np.zeros(0))
    if lhs.literal_value:
        return lambda out, dy, a, b, trips, lhs: (np.zeros((max(trips, 0), dy.size)),
                                                  np.zeros((max(trips, 0), b.size)))
    return lambda out, dy, a, b, trips, lhs: (np.zeros((max(trips, 0), a.size)),
                                              np.zeros((max(trips, 0), dy.size)))


def keep_product(out, rows, k, dy, a, b, lhs):
    """``add_matmul_lhs_grad(out, dy, a, b)`` (`lhs`; else ``add_matmul_rhs_grad``), where
    that adds an outer product ``np.outer(u, v)`` and `rows` has room for it: then u and v
    are kept (copied) as row `k` of ``rows[0]`` and ``rows[1]``, for `add_kept` (a row
    not written, where the product was added at once, stays zero).

    >>> out = np.zeros((2, 2)); rows = product_rows(out, np.ones(2), out, np.ones(2), 1, True)
    >>> keep_product(out, rows, 0, np.ones(2), out, np.array([1.0, 2.0]), True); rows[1]
    array([[1., 2.]])
    """
    factors = _outer_factors(out, dy, a, b, lhs)
    if factors is not None and rows[0].ndim == 2 and \
            rows[0].shape[1:] == factors[0].shape and rows[1].shape[1:] == factors[1].shape:
        rows[0][k], rows[1][k] = factors
    elif lhs:
        add_matmul_lhs_grad(out, dy, a, b)
    else:
        add_matmul_rhs_grad(out, dy, a, b)


@overload(keep_product, prefer_literal=True)
def _keep_product_typer(out, rows, k, dy, a, b, lhs):
    if not isinstance(lhs, types.BooleanLiteral):
        return None
    adder = add_matmul_lhs_grad if lhs.literal_value else add_matmul_rhs_grad
    if not _outer_case(out, dy, a, b, lhs.literal_value):
        return lambda out, rows, k, dy, a, b, lhs: adder(out, dy, a, b)
    factors = _lhs_factors if lhs.literal_value else _rhs_factors

    def keep(out, rows, k, dy, a, b, lhs):
        u, v = factors(dy, a, b)
        if rows[0].shape[1] != u.size or rows[1].shape[1] != v.size:
            adder(out, dy, a, b)
            return
        for j in range(u.size):
            rows[0][k, j] = u[j]
        for j in range(v.size):
            rows[1][k, j] = v[j]
    return keep


@register_jitable
def _lhs_factors(dy, a, b):
    return dy, b


@register_jitable
def _rhs_factors(dy, a, b):
    return a, dy


def add_kept(out, rows):
    """``out += sum_k np.outer(rows[0][k], rows[1][k])``, as one matrix product (the
    outer products `keep_product` kept; nothing where it kept none).

    >>> out = np.zeros((1, 2)); add_kept(out, (np.ones((3, 1)), np.ones((3, 2)))); out
    array([[3., 3.]])
    """
    if rows[0].ndim == 2:
        held_in_place(out)[...] += rows[0].T @ rows[1]


@overload(add_kept)
def _add_kept_typer(out, rows):
    if rows[0].ndim == 2:
        def add(out, rows):
            out += rows[0].T @ rows[1]
        return add
    return lambda out, rows: None
