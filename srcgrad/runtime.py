"""The small helpers generated gradient code calls.

Each public helper is a plain NumPy function, which is what runs under ``jit=False``,
and has a numba overload with the same meaning, which is what runs under
``numba.njit``. The overload picks its implementation at numba compile time from the
argument types (scalar or array, ndim), so one generated source serves both modes and
the compiled code carries no runtime type dispatch. Importing this module registers the
overloads, and those of `numba_ext` for the NumPy forms generated code uses.

Conventions: a 0-d array counts as a scalar; gradients have the floating dtype of the
cotangent (float64 for integer data); the adjoint of a reduction accepts the reduced
cotangent with or without kept dimensions (numba tells them apart by rank, so
``keepdims`` need not be a constant there).
"""

from __future__ import annotations

import ast
import copy
import functools
import inspect
import math
import sys
import textwrap
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import types
from numba.core.errors import NumbaError, TypingError
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype

from . import (
    numba_ext,  # noqa: F401  (registers the NumPy forms generated code uses)
    products,
)
from .errors import NONSCALAR_MARKER, NonScalarOutput, RuleError, UnsupportedSyntax
from .numba_ext import as_index, normalize_axis

_NONSCALAR = "grad needs a scalar result; this function returns an array (use vjp)"


_FLOAT64 = np.dtype(np.float64)


def _float_dtype(dtype) -> np.dtype:
    """`dtype` if floating or complex, else float64: the dtype of a gradient."""
    dtype = np.dtype(dtype)
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


# ---- Python versions ----

def unbroadcast(g, like):
    """Sum the gradient `g` down to the shape of `like` (NumPy broadcasting, reversed).

    >>> unbroadcast(np.ones((2, 3)), np.zeros((1, 3)))
    array([[2., 2., 2.]])
    """
    if type(g) is np.ndarray and type(like) is np.ndarray and g.shape == like.shape \
            and g.ndim and g.dtype.kind in "fc":
        return g  # the common case first: generated code calls this on every adjoint
    return _sum_to(g, like.shape if type(like) is np.ndarray else np.shape(like))


def _sum_to(g, shape: tuple):
    """`g` summed to `shape` (NumPy broadcasting, reversed), as a float."""
    if not shape:
        return np.sum(g) if isinstance(g, np.ndarray) else g
    if np.ndim(g) == 0:
        return np.full(shape, g, _float_dtype(np.result_type(g)))
    dtype = g.dtype if g.dtype.kind in "fc" else _FLOAT64
    if g.shape == shape:
        return g if g.dtype == dtype else g.astype(dtype)
    try:
        axes, rows, cols = _summed_axes(g.shape, shape)
    except ValueError:
        # a zero made at a number's shape where the value became an array in a loop (an
        # accumulator started as an int, killed and set again each trip of an outer
        # loop): zero at any shape it broadcasts to. Anything else is a bug: raise.
        if g.any() or not _broadcasts_to(g.shape, shape):
            raise
        return np.zeros(shape, dtype)
    if dtype == _FLOAT64:
        # leading axes only (a bias's gradient) or trailing ones (a row's reduction, kept
        # as a column): a matrix-vector product, 2-6x faster than np.sum along the axes
        if rows and g.ndim == 2 and len(shape) == 1:
            return _ones(rows) @ g
        if rows:
            return (_ones(rows) @ g.reshape(rows, -1)).reshape(shape)
        if cols:
            return (g.reshape(-1, cols) @ _ones(cols)).reshape(shape)
    return np.sum(g, axis=axes, dtype=dtype).reshape(shape)


def _broadcasts_to(small: tuple, shape: tuple) -> bool:
    lead = len(shape) - len(small)
    return lead >= 0 and all(n in (1, m) for n, m in zip(small, shape[lead:], strict=True))


@functools.lru_cache(maxsize=64)
def _ones(n: int) -> np.ndarray:
    """A read-only vector of `n` ones, made once: a fresh one costs more than the
    product it takes part in (on a (256, 10) gradient)."""
    ones = np.ones(n)
    ones.flags.writeable = False
    return ones


@functools.lru_cache(maxsize=256)
def _summed_axes(gshape: tuple, shape: tuple) -> tuple[tuple[int, ...], int, int]:
    """The axes of a gradient of `gshape` that `unbroadcast` sums to reach `shape`; how
    many rows they make when they are the leading axes (else 0), and how many columns
    when they are the trailing axes of a gradient of `shape`'s rank (else 0)."""
    lead = len(gshape) - len(shape)
    tail = gshape[lead:]
    if lead < 0 or any(n != 1 and n != m for n, m in zip(shape, tail, strict=True)):
        raise ValueError(f"cannot unbroadcast a gradient of shape {gshape} to {shape}")
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and tail[i] != 1)
    leading = axes == tuple(range(len(axes)))
    trailing = not lead and axes == tuple(range(len(gshape) - len(axes), len(gshape)))
    return (axes, math.prod(gshape[:len(axes)]) if leading else 0,
            math.prod(gshape[len(gshape) - len(axes):]) if trailing and axes else 0)


def zeros_like(x):
    """The zero gradient of `x`: a float scalar, or a float array of x's shape.

    >>> zeros_like(np.arange(3))
    array([0., 0., 0.])
    """
    if isinstance(x, (list, tuple)):   # the items of np.stack([...]): one zero each
        return type(x)(zeros_like(item) for item in x)
    dtype = _float_dtype(np.result_type(x))
    if np.ndim(x) == 0:
        return dtype.type(0.0)
    return np.zeros(np.shape(x), dtype)


def checked_grad(g, x, where):
    """`g`, a gradient for `x` that user code gave (a rule, a grad_of block), if it has
    x's shape; else a RuleError that names the code and the call (`where`)."""
    if np.shape(g) != np.shape(x):
        raise RuleError(f"{where}{_BAD_SHAPE}: {np.shape(g)} for {np.shape(x)}")
    return g


_BAD_SHAPE = " gave a gradient whose shape is not the shape of its variable"


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


def record(tape, k, value):
    """``tape[k] = value``: entry `k` of a tape (`new_tape`) holds `value`, an array
    copied (a later write into it must not change the entry).

    (A helper, because numba compiles an array assignment with its error-message
    machinery, seconds of compile time; the copy there is a plain loop.)

    >>> t = new_tape(np.zeros(2), 3); a = np.ones(2); record(t, 1, a); a[0] = 5.0; t[1]
    array([1., 1.])
    """
    tape[k] = np.copy(value) if isinstance(value, np.ndarray) else value


def snapshot(x):
    """A copy of `x` that later writes into the array it came from cannot change: what
    the tape saves before a subscript write overwrites it. Scalars are values already.

    >>> a = np.arange(3.0); s = snapshot(a[1:]); a[1] = 9.0; s
    array([1., 2.])
    """
    return np.copy(x) if isinstance(x, np.ndarray) else x


def sum_grad(dy, x, axis=None, keepdims=False):
    """Adjoint of ``y = np.sum(x, axis, keepdims=keepdims)``: dy broadcast to x's shape.

    >>> sum_grad(np.array([1.0, 2.0]), np.zeros((2, 3)), axis=1)
    array([[1., 1., 1.],
           [2., 2., 2.]])
    """
    if np.ndim(x) == 0:
        return dy
    return _spread(dy, x, axis, 1)


def mean_grad(dy, x, axis=None, keepdims=False):
    """Adjoint of ``y = np.mean(x, axis, keepdims=keepdims)``."""
    if np.ndim(x) == 0:
        return dy
    return _spread(dy, x, axis, _count(x, axis))


def extremum_grad(dy, y, x, axis=None, keepdims=False):
    """Adjoint of ``y = np.max(x, axis)`` or ``np.min``: dy goes to the positions of x
    holding the extremum, split evenly among ties (as in JAX).

    >>> extremum_grad(1.0, 3.0, np.array([3.0, 1.0, 3.0]))
    array([0.5, 0. , 0.5])
    """
    if np.ndim(x) == 0:
        return dy
    top = _expand(y, x, axis)  # keepdims' shape, or a scalar
    share = (x == top).astype(_float_dtype(np.result_type(dy, x)))
    ties = _sum_to(share, np.shape(top))
    with np.errstate(divide="ignore", invalid="ignore"):  # a NaN extremum matches nothing
        share *= _expand(dy, x, axis) / ties
    return share


def seed(y):
    """The cotangent 1.0 that starts the backward pass of a scalar result `y`."""
    if np.ndim(y) != 0:
        raise NonScalarOutput(_NONSCALAR)
    dtype = np.result_type(y)
    return dtype.type(1.0) if dtype.kind == "f" else 1.0


def unit(x, k):
    """Basis vector k of x's space: 1.0 for a scalar x, else zeros of x's shape with a
    1.0 at flat index k (a direction for forward mode, one entry of a gradient at a time).

    >>> unit(np.zeros((2, 2)), 1)
    array([[0., 1.],
           [0., 0.]])
    """
    one = zeros_like(x)
    if np.ndim(x) == 0:
        return one + 1.0
    one.flat[k] = 1.0
    return one


def tree_vdot(a, b):
    """The sum of the entries of a * b, over tuples of arrays and numbers alike (the
    cotangent of a gradient applied to its tangent).

    >>> tree_vdot((np.ones(2), 3.0), (np.arange(2.0), 2.0))
    7.0
    """
    if isinstance(a, tuple):
        return sum((tree_vdot(x, y) for x, y in zip(a, b, strict=True)), 0.0)
    return float(np.sum(np.multiply(a, b)))


def put_flat(g, k, v):
    """`g` with flat entry k set to the scalar `v` (in place for an array; for a scalar
    g, `v` itself): how a gradient is filled in one forward-mode pass at a time."""
    if np.ndim(v) != 0:
        raise NonScalarOutput(_NONSCALAR)
    if np.ndim(g) == 0:
        return v
    g.flat[k] = v
    return g


def add_at(g, index, dy):
    """`g[index] += dy`, each occurrence of a repeated entry of a fancy index adding its
    part (NumPy's `+=` adds once per distinct entry; this is `np.add.at`). Returns g.

    >>> add_at(np.zeros(3), [0, 0, 2], 1.0)
    array([2., 0., 1.])
    """
    np.add.at(g, index, dy)
    return g


def take_grad(dy, a, indices, axis=None):
    """Adjoint of `np.take(a, indices, axis)`: dy added back where it was taken, each
    repeat of an index adding its part.

    >>> take_grad(np.ones(3), np.zeros((2, 2)), [3, 3, 0])
    array([[1., 0.],
           [0., 2.]])
    """
    g = np.zeros(np.shape(a), np.result_type(a, dy, 1.0))
    if axis is None:
        np.add.at(g.reshape(-1), indices, dy)
    else:
        np.add.at(g, (slice(None),) * (axis % g.ndim) + (indices,), dy)
    return g


def take_along_axis_grad(dy, a, indices, axis):
    """Adjoint of `np.take_along_axis(a, indices, axis)`: dy added back where it was
    taken, each repeat of an index adding its part.

    >>> take_along_axis_grad(np.ones((1, 3)), np.zeros((1, 2)), np.array([[1, 1, 0]]), 1)
    array([[1., 2.]])
    """
    if axis is None:   # along the flattened array: np.take's
        return take_grad(dy, a, indices)
    g = np.zeros(np.shape(a), np.result_type(a, dy, 1.0))
    shape = np.shape(dy)
    index = [np.arange(n).reshape((1,) * d + (n,) + (1,) * (len(shape) - d - 1))
             for d, n in enumerate(shape)]
    index[axis % g.ndim] = indices
    np.add.at(g, tuple(index), dy)
    return g


def written_grad(dy, index):
    """The gradient of `v` in `y[index] = v` from y's, `dy[index]`, where only the last
    write into a repeated entry of a fancy index counts (NumPy keeps it): the others
    are zero.

    >>> written_grad(np.array([1.0, 2.0, 3.0]), [0, 2, 0])
    array([0., 3., 1.])
    """
    g = np.asarray(dy)[index]
    ids = np.arange(g.size).reshape(g.shape)
    last = np.full(np.shape(dy), -1)
    last[index] = ids
    return np.where(last[index] == ids, g, 0.0 * g)


def unshared(v, message):
    """`v` itself, checked before `v op= e`: an array there may be shared (a row of a
    matrix, a caller's array), and changing it in place cannot be differentiated."""
    if isinstance(v, np.ndarray):
        raise UnsupportedSyntax(message)
    return v


def unaliased(v, array, message):
    """`v`, a value taken from `array`: refused if it is a view of it that is read after
    a write into `array` (or into an item of it, a tuple) the gradient cannot follow (see
    normalize's `_retake_views`)."""
    arrays = array if isinstance(array, (tuple, list)) else (array,)
    if isinstance(v, np.ndarray) and any(np.shares_memory(v, a) for a in arrays):
        raise UnsupportedSyntax(message)
    return v


def retake(old, new):
    """`v = z[0]` taken again after a write into z: the new row where the first was a
    view (z a matrix), the old number where it was one (z a vector)."""
    return new if isinstance(old, np.ndarray) else old


def retake_grad(dy, old):
    """The gradients of `retake(old, new)`'s operands: (to old, to new)."""
    return (0.0 * dy, dy) if isinstance(old, np.ndarray) else (dy, 0.0 * dy)


def _ndim(x) -> int:
    return x.ndim if type(x) is np.ndarray else np.ndim(x)


def matmul_lhs_grad(dy, a, b):
    """Adjoint of ``y = a @ b`` with respect to `a`, for 1-D and 2-D operands."""
    if _ndim(b) == 1:
        return _outer(dy, b) if _ndim(a) == 2 else dy * b
    return dy @ b.T if _ndim(a) == 2 else b @ dy


def matmul_rhs_grad(dy, a, b):
    """Adjoint of ``y = a @ b`` with respect to `b`, for 1-D and 2-D operands."""
    if _ndim(a) == 1:
        return _outer(a, dy) if _ndim(b) == 2 else dy * a
    return a.T @ dy


def add_matmul_lhs_grad(out, dy, a, b):
    """``out += matmul_lhs_grad(dy, a, b)``, in place (an outer product is not built)."""
    out += matmul_lhs_grad(dy, a, b)


def add_matmul_rhs_grad(out, dy, a, b):
    """``out += matmul_rhs_grad(dy, a, b)``, in place (an outer product is not built)."""
    out += matmul_rhs_grad(dy, a, b)


def matmul_sum(a1, b1, a2, b2):
    """``a1 @ b1 + a2 @ b2``. For 2-D float64 operands whose inner dimensions are small
    beside the (m, n) result, one product of the operands side by side,
    ``[a1 a2] @ [b1; b2]``, which writes the result once and adds nothing.

    >>> matmul_sum(np.eye(2), np.ones((2, 2)), np.ones((2, 1)), np.array([[1.0, 2.0]]))
    array([[2., 3.],
           [2., 3.]])
    """
    if products.float64_matrices(a1, b1, a2, b2):
        m, n = a1.shape[0], b1.shape[1]
        k = a1.shape[1] + a2.shape[1]
        if a2.shape[0] == m and b2.shape[1] == n and k * (m + n) * 4 <= m * n:
            return np.concatenate((a1, a2), axis=1) @ np.concatenate((b1, b2), axis=0)
    return a1 @ b1 + a2 @ b2


def matmul_jvp(a, b, da, db, *, loops=False):
    """``(a @ b, da @ b + a @ db)``: a product and its tangent. For 2-D float64 factors
    with thin right ones, `a` is read once (``a @ [b db]``); with thin left ones, `b`
    once (``[a; da] @ b``). A thin inner dimension is `matmul_sum`'s case. With
    ``loops=True`` (a `looped` helper), thin right factors go to a compiled loop (`products`).

    >>> y, dy = matmul_jvp(np.eye(2), np.ones((2, 2)), np.zeros((2, 2)), np.eye(2))
    >>> y.tolist(), dy.tolist()
    ([[1.0, 1.0], [1.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]])
    """
    if loops and products.thin_right(a, b, da, db):
        return products.jvp_thin_right(a, b, da, db)
    if products.float64_matrices(a, b, da, db) and da.shape == a.shape \
            and db.shape == b.shape:
        (m, k), n = a.shape, b.shape[1]
        if 4 * n <= min(m, k):
            both = a @ np.concatenate((b, db), axis=1)
            return both[:, :n].copy(), both[:, n:] + da @ b
        if 4 * m <= min(n, k):
            both = np.concatenate((a, da)) @ b
            return both[:m], both[m:] + a @ db
    return a @ b, matmul_tangent(a, b, da, db)


def matmul_tangent(a, b, da, db):
    """``da @ b + a @ db``, the second result of `matmul_jvp` alone."""
    return matmul_sum(da, b, a, db)


def matmul_lhs_grad_jvp(dy, a, b, ddy, db):
    """`matmul_lhs_grad(dy, a, b)` and its tangent along `ddy` and `db` (as `matmul_jvp`)."""
    if _ndim(a) == _ndim(b) == 2:
        return matmul_jvp(dy, b.T, ddy, db.T)
    return matmul_lhs_grad(dy, a, b), matmul_lhs_grad_tangent(dy, a, b, ddy, db)


def matmul_lhs_grad_tangent(dy, a, b, ddy, db):
    """The second result of `matmul_lhs_grad_jvp` alone."""
    if _ndim(a) == _ndim(b) == 2:
        return matmul_sum(ddy, b.T, dy, db.T)
    return matmul_lhs_grad(ddy, a, b) + matmul_lhs_grad(dy, a, db)


def matmul_rhs_grad_jvp(dy, a, b, ddy, da):
    """`matmul_rhs_grad(dy, a, b)` and its tangent along `ddy` and `da` (as `matmul_jvp`)."""
    if _ndim(a) == _ndim(dy) == 2:
        return matmul_jvp(a.T, dy, da.T, ddy)
    return matmul_rhs_grad(dy, a, b), matmul_rhs_grad_tangent(dy, a, b, ddy, da)


def matmul_rhs_grad_tangent(dy, a, b, ddy, da, *, loops=False):
    """The second result of `matmul_rhs_grad_jvp` alone. With ``loops=True``
    (a `looped` helper), thin `dy` and `ddy` go to a compiled loop (`products`)."""
    if loops and products.thin_grad(a, ddy, da, dy):
        return products.grad_tangent_thin(a, ddy, da, dy)
    if _ndim(a) == _ndim(dy) == 2:
        return matmul_sum(a.T, ddy, da.T, dy)
    return matmul_rhs_grad(ddy, a, b) + matmul_rhs_grad(dy, da, b)


def where(cond, x, y):
    """``np.where(cond, x, y)``, as generated adjoint code calls it (np.where's `faster`
    form: numba's np.where broadcasts a scalar branch and reads it through a strided flat
    iterator, ~14x slower than a loop, numba 0.68).

    A zero branch is the product with the mask where x is finite: np.where branches per
    entry, and on a mask without order (a hard tanh's |w| <= 1) it mispredicts the
    branch so often that it takes 2-3x the product's time.

    >>> where(np.array([True, False]), np.array([1.0, -2.0]), 0.0)
    array([1., 0.])
    """
    if type(x) is np.ndarray and type(cond) is np.ndarray and cond.dtype == np.bool_ \
            and cond.shape == x.shape and x.dtype.kind == "f" and np.ndim(y) == 0 \
            and y == 0 and np.result_type(x, y) == x.dtype and np.isfinite(x).all():
        out = x * cond
        out += 0.0  # -2.0 * False is -0.0, where np.where gives 0.0
        return out
    return np.where(cond, x, y)


class elementwise:  # noqa: N801  (a decorator, named as one)
    """``@elementwise``: a generated kernel (`passes.fuse`), one elementwise expression,
    returned, or assigned to a name and returned with its sums to the shapes of other
    arguments (``x = a * b; return x, unbroadcast(x, like)``: a bias's gradient).

    Under numba the kernel is compiled with the code that calls it (numba fuses the
    expression's array operations into one loop; a last tanh or exp is vecmath's,
    `jit_kernel`). As Python it is NumPy, one pass per
    operation, until `loops` is set by a transform that may compile: then float64 arrays
    of one or two dimensions go to a loop compiled from the expression (`_loop_source`:
    a loop nest, which runs several times faster than numba's fused array expression
    when an operand is broadcast), one pass and no temporaries. Everything else (scalars,
    small arrays, other dtypes or ranks, comparisons) stays NumPy, whose results the
    loop might not match. The loop adds each entry into the sums as it goes.
    """

    MIN_SIZE = 512  # below this, the compiled call's overhead is more than it saves
    KEEP = 2        # result arrays kept for reuse, per shape

    def __init__(self, fun):
        self.__wrapped__ = fun
        self.__name__ = fun.__name__
        self.loops = False
        self._compiled: dict[tuple, object] = {}
        self._plans: dict[tuple, object] = {}  # argument types -> `_plan`
        self._kept: dict[tuple, list[np.ndarray]] = {}
        self._lock = threading.Lock()
        self._form: _Form | None = None

    def __call__(self, *args):
        if self.loops:
            types = tuple((a.shape, a.dtype) if type(a) is np.ndarray else type(a)
                          for a in args)
            plan = self._plans.get(types, _UNPLANNED)
            if plan is _UNPLANNED:
                plan = self._plans[types] = self._plan(args)
            if plan is not None:
                shape, key, (loop, last), sums = plan
                out = self._buffer(shape)
                try:
                    if sums is not None:
                        return _summing(loop, out, sums, args)
                    loop(out, *args)
                except (NumbaError, OverflowError):  # numba cannot type these values
                    self._compiled[key] = None
                    self._plans.clear()
                    return self.__wrapped__(*args)
                if last is not None:
                    last(out, out=out)
                return out
        return self.__wrapped__(*args)

    def _plan(self, args: tuple):
        """`(result shape, loop key, (loop, last), sums)` for arguments like these (the
        same shapes, dtypes and types), or None where they stay NumPy. `sums`: None, or
        the positions of the arguments the loop reads and, per result, the shape of a sum
        (None: the value itself, or a sum to its own shape)."""
        if self._form is None:
            self._form = _Form.of(self.__wrapped__)
        form = self._form
        values = args if form.reads is None else [args[k] for k in form.reads]
        shape = _loop_shape(values, self.MIN_SIZE)
        if shape is None:
            return None
        indices = tuple(_indices(a, shape) if type(a) is np.ndarray else None
                        for a in values)
        sums, patterns = None, ()
        if form.reads is not None:
            sums = (form.reads, tuple(_sum_shape(args[k], shape) if k is not None else None
                                      for k in form.outputs))
            if _UNPLANNED in sums[1]:
                return None
            patterns = tuple(_indices(args[k], shape) for k, s in zip(form.outputs, sums[1],
                                                                      strict=True)
                             if s is not None)
        key = (len(shape), indices, patterns)
        compiled = self._loop(*key)
        return None if compiled is None else (shape, key, compiled, sums)

    def _buffer(self, shape: tuple) -> np.ndarray:
        """An array for the result: one this kernel returned before if nothing refers to
        it any more (its reference count says so), else a new one, kept for next time.
        Reusing memory is the point: a new large array costs a page fault per 4 KB when
        the allocator gave the last one back to the system."""
        with self._lock:
            kept = self._kept.setdefault(shape, [])
            for k in range(len(kept)):
                if sys.getrefcount(kept[k]) == _UNSHARED:
                    return kept[k]
            out = np.empty(shape)
            if len(kept) < self.KEEP:
                kept.append(out)
            return out

    def _loop(self, ndim: int, indices: tuple, sums: tuple):
        key = (ndim, indices, sums)
        if key not in self._compiled:
            self._compiled[key] = _compile_loop(self.__wrapped__, self._form, ndim, indices,
                                                sums)
        return self._compiled[key]


@dataclass(frozen=True)
class _Form:
    """What a kernel computes, read from its source once: the function, its expression,
    and, for a kernel that returns sums, the positions of the parameters the expression
    reads and, per result, None for the value or the position of the parameter whose
    shape it is summed to (`unbroadcast(x, like)`)."""

    fn: ast.FunctionDef
    expr: ast.expr
    reads: tuple[int, ...] | None = None
    outputs: tuple[int | None, ...] = (None,)

    @staticmethod
    def of(fun) -> _Form:
        fn = ast.parse(textwrap.dedent(inspect.getsource(fun))).body[0]
        if len(fn.body) == 1:
            return _Form(fn, fn.body[0].value)
        (assign, ret), params = fn.body, [a.arg for a in fn.args.args]
        returned = ret.value.elts if isinstance(ret.value, ast.Tuple) else [ret.value]
        read = {n.id for n in ast.walk(assign.value) if isinstance(n, ast.Name)}
        return _Form(fn, assign.value, tuple(k for k, p in enumerate(params) if p in read),
                     tuple(None if isinstance(r, ast.Name) else params.index(r.args[1].id)
                           for r in returned))


def _sum_shape(like, shape: tuple):
    """The shape of `unbroadcast(value, like)` for a value of `shape`, to add up in the
    loop; None where it is the value itself; `_UNPLANNED` where the loop does not serve
    (a scalar or 0-d `like`, or one the value does not broadcast from: NumPy then sums,
    or raises)."""
    if type(like) is not np.ndarray or not 0 < like.ndim <= len(shape):
        return _UNPLANNED
    try:
        _summed_axes(shape, like.shape)
    except ValueError:
        return _UNPLANNED
    return None if like.shape == shape else like.shape


def _summing(loop, out: np.ndarray, sums: tuple, args: tuple):
    """Run a kernel's loop that sums as it goes; its results, as the kernel returns them."""
    reads, shapes = sums
    totals = [np.zeros(s) for s in shapes if s is not None]
    loop(out, *totals, *[args[k] for k in reads])
    totals.reverse()
    results = tuple(out if s is None else totals.pop() for s in shapes)
    return results if len(results) > 1 else results[0]


def _indices(a: np.ndarray, shape: tuple) -> tuple[str, ...]:
    """How a loop over `shape` indexes `a`, which broadcasts to it: the loop's index, or
    0 along a broadcast axis of length 1 (``("i0", "0")`` for a (n, 1) column). The array
    is read in place, not through np.broadcast_to's strided view, so the loop vectorizes."""
    lead = len(shape) - a.ndim
    return tuple("0" if n == 1 and shape[lead + k] != 1 else f"i{lead + k}"
                 for k, n in enumerate(a.shape))


_LOOP_SCALARS = (float, int, np.float64)
_UNPLANNED = object()


def _unshared_count() -> int:
    kept = [np.empty(1)]
    return sys.getrefcount(kept[0])


_UNSHARED = _unshared_count()  # what `elementwise._buffer` sees of an array only it holds


def _loop_shape(args, min_size):
    """The shape of the result, if `args` are float64 arrays of 1 or 2 dimensions (not
    0-d) that broadcast together, and numbers, with `min_size` entries or more; else None."""
    shape = None
    same = True
    for a in args:
        if type(a) is np.ndarray:
            if a.dtype != np.float64 or a.ndim == 0:
                return None
            if shape is None:
                shape = a.shape
            elif a.shape != shape:
                same = False
        elif type(a) not in _LOOP_SCALARS:
            return None
    if shape is None:
        return None
    if not same:
        shape = np.broadcast_shapes(*[a.shape for a in args if type(a) is np.ndarray])
    if not 1 <= len(shape) <= 2 or math.prod(shape) < min_size:
        return None
    return shape


def _vectorized(ufunc, scalar):
    """A function meaning `ufunc` whose numba form computes float64 with `scalar`
    (its `in_loop` form), a loop over a contiguous array; other types go to the ufunc."""
    def call(x):
        return ufunc(x)

    @overload(call)
    def _call_typer(x):
        if isinstance(x, types.Array) and x.dtype == types.float64 and x.layout == "C":
            def each(x):
                out = np.empty_like(x)
                flat, values = out.reshape(out.size), x.reshape(x.size)
                for i in range(flat.size):
                    flat[i] = scalar(values[i])
                return out
            return each
        if x == types.float64:
            return lambda x: scalar(x)
        return lambda x: ufunc(x)
    call.__name__ = call.__qualname__ = ufunc.__name__
    return call


def _in_loop() -> dict[Any, Any]:
    """The ufuncs a kernel may end in that have an `in_loop` form, and that form."""
    from .rules import OPS
    return {r.primal: r.in_loop for r in OPS.values() if r.in_loop is not None}


@functools.lru_cache(maxsize=1)
def _jit_numpy():
    """NumPy as kernels see it under numba."""
    module = type(np)("srcgrad.runtime.jit_numpy")
    module.__dict__.update({k: v for k, v in vars(np).items() if not k.startswith("__")})
    module.__dict__.update({f.__name__: _vectorized(f, form) for f, form in _in_loop().items()})
    return module


def jit_kernel(fun):
    """`fun`, a kernel (`elementwise`), as numba compiles it: NumPy's tanh and exp, which
    numba computes with libm's scalar functions, as their vectorizable `in_loop` forms
    (a tanh RNN's gradient: 359 against 295 us, 64 entries a step). It sees its
    module's globals, but for those it reads: NumPy, and those ufuncs bound by name."""
    read = {name: fun.__globals__.get(name) for name in fun.__code__.co_names}
    in_loop, jit_numpy = _in_loop(), _jit_numpy()
    swapped = {name: jit_numpy if value is np else getattr(jit_numpy, value.__name__)
               for name, value in read.items()
               if value is np or any(value is f for f in in_loop)}
    if not swapped:
        return fun
    return type(fun)(fun.__code__, {**fun.__globals__, **swapped}, fun.__name__,
                     fun.__defaults__, fun.__closure__)


def _compile_loop(fun, form: _Form, ndim: int, indices: tuple, sums: tuple):
    """`fun`'s expression (`form`) as a numba-compiled loop nest writing into its first
    argument and adding into the next ones (`sums`: how each indexes the loop, as
    `_indices`), and the ufunc to apply last, in place (None: the expression does not end
    in one, or ends in one with an `in_loop` form, which the loop computes);
    None if a comparison's booleans are more than a `where`'s condition (NumPy's rules
    for them differ from numba's), or if a kernel that sums ends in a ufunc NumPy applies.
    """
    import numba

    from . import codegen

    def resolve(node: ast.expr):  # what a name of the kernel denotes
        return eval(compile(ast.Expression(node), "<kernel>", "eval"), fun.__globals__)

    class Select(ast.NodeTransformer):  # where(c, x, y) -> x if c else y, as np.where
        def visit_Call(self, node):
            self.generic_visit(node)
            if len(node.args) == 3 and resolve(node.func) in (np.where, where):
                return ast.IfExp(test=node.args[0], body=node.args[1], orelse=node.args[2])
            return node

    expr, last = form.expr, None
    if isinstance(expr, ast.Call) and len(expr.args) == 1:  # np.tanh(...): see passes.fuse
        last, expr = resolve(expr.func), expr.args[0]
    expr = Select().visit(copy.deepcopy(expr))
    names = dict(fun.__globals__)
    if (vectorizable := _in_loop().get(last)) is not None:  # the loop calls it
        names["__last"] = vectorizable
        expr, last = ast.Call(ast.Name("__last", ast.Load()), [expr], []), None
    if form.reads is not None and last is not None:
        return None
    params = [a.arg for a in form.fn.args.args]
    if form.reads is not None:
        params = [params[k] for k in form.reads]
    # a vectorizable transcendental is a long chain of dependent operations: two halves of
    # each row at a time give the core independent work to overlap (256 x 256 tanh:
    # 100 us against 120); memory-bound loops are faster as one stream
    text = _loop_source(params, expr, ndim, indices, sums, halves="__last" in names)
    if text is None:
        return None
    loads = {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}
    module = codegen.load(text, {k: v for k, v in names.items() if k in loads},
                          f"{fun.__name__}_loop{ndim}", "loop")
    return numba.njit(cache=True, error_model="numpy")(module.loop), last


def _loop_source(params: list[str], expr: ast.expr, ndim: int, indices: tuple,
                 sums: tuple = (), halves: bool = False) -> str | None:
    r"""The loop nest computing `expr` over the kernel parameters `params`, for a result
    of `ndim` dimensions; `indices` gives each array parameter's (`_indices`), None for a
    number; `sums`, the index of each sum the loop adds each entry into; `halves`: the
    innermost loop computes an entry of each half of its range per step. The loop's own
    names start with two underscores: the kernel's are the user's.

    >>> expr = ast.parse("a * b + c", mode="eval").body
    >>> print(_loop_source(["a", "b", "c"], expr, 2, (("i0", "i1"), None, ("i1",))))
    def loop(__out, a, b, c):
        for __i0 in range(__out.shape[0]):
            for __i1 in range(__out.shape[1]):
                __out[__i0, __i1] = a[__i0, __i1] * b + c[__i1]
    <BLANKLINE>
    >>> print(_loop_source(["a"], ast.parse("2.0 * a", mode="eval").body, 2,
    ...                    (("i0", "i1"),), (("i1",),)))
    def loop(__out, __sum0, a):
        for __i0 in range(__out.shape[0]):
            for __i1 in range(__out.shape[1]):
                __value = 2.0 * a[__i0, __i1]
                __out[__i0, __i1] = __value
                __sum0[__i1] += __value
    <BLANKLINE>
    >>> print(_loop_source(["a"], ast.parse("f(a)", mode="eval").body, 1, (("i0",),),
    ...                    halves=True))
    def loop(__out, a):
        __half = __out.shape[0] // 2
        for __i0 in range(__half):
            __out[__i0] = f(a[__i0])
            __j = __i0 + __half
            __out[__j] = f(a[__j])
        for __i0 in range(2 * __half, __out.shape[0]):
            __out[__i0] = f(a[__i0])
    <BLANKLINE>
    """
    tests = {id(n.test) for n in ast.walk(expr) if isinstance(n, ast.IfExp)}
    if any(isinstance(n, ast.Compare) and id(n) not in tests for n in ast.walk(expr)):
        return None  # a boolean result, or arithmetic on booleans: NumPy's rules differ
    last = ndim - 1
    totals = [f"__sum{k}" for k in range(len(sums))]

    def step(inner: str) -> list[str]:  # the body, `inner` the innermost index
        def at(ix: tuple) -> str:
            return ", ".join(i if i == "0" else inner if i == f"i{last}" else f"__{i}"
                             for i in ix)
        arrays = {p: at(ix) for p, ix in zip(params, indices, strict=True)
                  if ix is not None}

        class Index(ast.NodeTransformer):
            def visit_Name(self, node):
                return ast.parse(f"{node.id}[{arrays[node.id]}]", mode="eval").body \
                    if node.id in arrays else node
        body = ast.unparse(Index().visit(copy.deepcopy(expr)))
        index = at(tuple(f"i{k}" for k in range(ndim)))
        if not sums:
            return [f"__out[{index}] = {body}"]
        return [f"__value = {body}", f"__out[{index}] = __value",
                *[f"{t}[{at(ix)}] += __value" for t, ix in zip(totals, sums, strict=True)]]

    lines = [f"def loop({', '.join(['__out', *totals, *params])}):"]
    if halves:
        lines.append(f"    __half = __out.shape[{last}] // 2")
    for k in range(last):
        lines.append("    " * (k + 1) + f"for __i{k} in range(__out.shape[{k}]):")
    pad, inner = "    " * (last + 1), f"__i{last}"
    if not halves:
        lines.append(f"{pad}for {inner} in range(__out.shape[{last}]):")
        lines += [f"{pad}    {s}" for s in step(inner)]
    else:
        lines.append(f"{pad}for {inner} in range(__half):")
        lines += [f"{pad}    {s}" for s in step(inner)]
        lines.append(f"{pad}    __j = {inner} + __half")
        lines += [f"{pad}    {s}" for s in step("__j")]
        lines.append(f"{pad}for {inner} in range(2 * __half, __out.shape[{last}]):")
        lines += [f"{pad}    {s}" for s in step(inner)]
    return "\n".join(lines) + "\n"


def broadcast_like(d, y):
    """`d` at the shape of `y`, into which it broadcasts: the tangent of `y = a + b` where
    only `a` varies and `b` is larger (the adjoint's `unbroadcast`, forward)."""
    if np.shape(d) == np.shape(y):
        return d
    return d + zeros_like(y)


def reshape_as(dy, x):
    """`dy` with x's shape: the adjoint of reshape, ravel, squeeze, expand_dims, copy."""
    if np.ndim(x) == 0:
        return np.reshape(dy, ())[()]
    return np.reshape(dy, np.shape(x))


# ---- private helpers; all but `_expand` have a numba overload below ----

def _item(v):
    """The value of a scalar, a 0-d array unwrapped."""
    return v[()] if isinstance(v, np.ndarray) else v


def _ravel(v):
    """`v` as a 1-D array; a scalar as one element."""
    return np.ravel(v)


def _expand(v, x, axis):
    """`v`, a reduction of `x` over `axis`, at x's rank (size 1 on the reduced axes).

    A scalar stays a scalar and a `v` already at x's rank (keepdims) is returned as is;
    both broadcast against x.
    """
    if np.ndim(v) == 0 or np.ndim(v) == np.ndim(x):
        return v
    return np.expand_dims(v, axis)


def _outer(u, v):
    """The outer product of vectors `u` and `v`."""
    return np.outer(u, v)


def _flat(v):
    """An array as 1-D (a view of a C-contiguous one); a scalar as itself."""
    return np.ravel(v) if isinstance(v, np.ndarray) else v


def _elem(v, i):
    """Entry `i` of a 1-D array; a scalar is every entry."""
    return v[i] if isinstance(v, np.ndarray) else v


def _shaped_like(v, like):
    """Whether `v` is a scalar or has like's shape (then no broadcasting pairs them)."""
    return not isinstance(v, np.ndarray) or v.shape == like.shape


def _reduced_axes(ndim, axis):
    """A mask of the axes of an `ndim`-array that a reduction over `axis` removes."""
    mask = np.zeros(ndim, np.bool_)
    mask[slice(None) if axis is None else np.asarray(axis)] = True
    return mask


def _count(x, axis):
    """How many elements of `x` a reduction over `axis` combines, at least 1.

    Zero only occurs for an empty x, whose gradient is empty whatever it is divided by.
    """
    if axis is None:
        return max(np.size(x), 1)
    shape = np.asarray(np.shape(x), np.intp)
    return max(int(np.prod(shape[_reduced_axes(len(shape), axis)])), 1)


def _spread(dy, x, axis, n):
    """``dy / n`` broadcast back to x's shape, for a reduction of x over `axis`."""
    if np.ndim(dy) == 0:  # a whole reduction's: filled, cheaper than a broadcast view
        return np.full(np.shape(x), dy / n)
    spread = _expand(dy, x, axis)
    return np.broadcast_to(spread / n if n != 1 else spread, np.shape(x))


# ---- numba versions ----
# Helpers are module-level functions with overloads, not closures made per call, so
# numba compiles each once per signature and every caller shares it.

def _is_scalar(t) -> bool:
    return isinstance(t, (types.Number, types.Boolean)) or (
        isinstance(t, types.Array) and t.ndim == 0)


def _float_scalar(t):
    """The NumPy scalar type of a gradient for numba type `t` (array or scalar)."""
    return _float_dtype(as_dtype(t.dtype if isinstance(t, types.Array) else t)).type


def _is_none(t) -> bool:
    return t is None or isinstance(t, types.NoneType) or (
        isinstance(t, types.Omitted) and t.value is None)


@overload(_item)
def _item_typer(v):
    if isinstance(v, types.Array):
        return lambda v: v[()]
    return lambda v: v


@overload(_ravel)
def _ravel_typer(v):
    if isinstance(v, types.Array):  # a view of a C-contiguous v; compiles faster than ravel
        return lambda v: np.ascontiguousarray(v).reshape(v.size)
    return lambda v: np.full(1, v)


@register_jitable
def _broadcast_index(idx, shape, lead):
    """The flat C-order index into an array of `shape` that index `idx` (with `lead`
    extra leading entries) reads under broadcasting: size-1 axes contribute 0."""
    k = 0
    for i in range(len(shape)):
        if shape[i] != 1:
            k = k * shape[i] + idx[lead + i]
    return k


# Explicit loops rather than broadcasting ufuncs: numba takes seconds to compile each
# broadcasting ufunc call, and the loops run as fast.

@register_jitable
def _unbroadcast_sum(g, like, cast):
    lead = g.ndim - like.ndim
    for i in range(like.ndim):
        if like.shape[i] != 1 and like.shape[i] != g.shape[lead + i]:
            raise ValueError("cannot unbroadcast the gradient to the shape of like")
    out = np.zeros(like.shape, cast)
    flat = out.reshape(out.size)
    for idx in np.ndindex(g.shape):
        flat[_broadcast_index(idx, like.shape, lead)] += g[idx]
    return out


@overload(unbroadcast)
def _unbroadcast_typer(g, like):
    if _is_scalar(like):
        if isinstance(g, types.Array) and g.ndim > 0:
            return lambda g, like: np.sum(g)
        return lambda g, like: _item(g)
    if not isinstance(like, types.Array):
        return None
    cast = _float_scalar(g)
    if _is_scalar(g):
        return lambda g, like: np.full(like.shape, cast(_item(g)))
    if not isinstance(g, types.Array):
        return None
    if g.ndim < like.ndim:
        raise TypingError(f"srcgrad: cannot unbroadcast a gradient of rank {g.ndim} "
                          f"to rank {like.ndim}")
    if g.ndim > like.ndim:
        return lambda g, like: _unbroadcast_sum(g, like, cast)
    same = as_dtype(g.dtype) == np.dtype(cast)

    def same_rank(g, like):
        if g.shape == like.shape:
            return g if same else g.astype(cast)
        return _unbroadcast_sum(g, like, cast)
    return same_rank


@overload(zeros_like)
def _zeros_like_typer(x):
    cast = _float_scalar(x)
    if _is_scalar(x):
        return lambda x: cast(0.0)
    if isinstance(x, types.Array):
        return lambda x: np.zeros(x.shape, cast)


@overload(checked_grad)
def _checked_grad_typer(g, x, where):
    if getattr(g, "ndim", 0) != getattr(x, "ndim", 0):
        def mismatch(g, x, where):
            raise RuleError(where + _BAD_SHAPE)
            return zeros_like(x)  # (not reached) the type the adjoint has elsewhere
        return mismatch

    def impl(g, x, where):
        if np.shape(g) != np.shape(x):
            raise RuleError(where + _BAD_SHAPE)
        return g
    return impl


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


@overload(tree_vdot)
def _tree_vdot_typer(a, b):
    if isinstance(a, types.BaseTuple):   # one call per item, unrolled at compile time
        terms = " + ".join(f"tree_vdot(a[{k}], b[{k}])" for k in range(len(a))) or "0.0"
        scope: dict = {"tree_vdot": tree_vdot}
        exec(f"def impl(a, b):\n    return {terms}\n", scope)
        return scope["impl"]
    if isinstance(a, types.Array):
        return lambda a, b: float(np.sum(a * b))
    return lambda a, b: float(a * b)


@overload(snapshot)
def _snapshot_typer(x):
    if isinstance(x, types.Array):
        return lambda x: x.copy()
    return lambda x: x


# Reductions, seen from the reduced side: entry k of the flattened y (or dy) belongs to
# every index of x whose coordinates off the reduced axes, read in C order, give k;
# so no keepdims-shaped copy of y is ever built.

@overload(_reduced_axes)
def _reduced_axes_typer(ndim, axis):
    if _is_none(axis):
        return lambda ndim, axis: np.ones(ndim, np.bool_)
    if isinstance(axis, types.Integer):
        def one(ndim, axis):
            mask = np.zeros(ndim, np.bool_)
            mask[normalize_axis(axis, ndim)] = True
            return mask
        return one
    if isinstance(axis, types.UniTuple) and isinstance(axis.dtype, types.Integer):
        def several(ndim, axis):
            mask = np.zeros(ndim, np.bool_)
            for ax in axis:
                mask[normalize_axis(ax, ndim)] = True
            return mask
        return several


@register_jitable
def _reduced_index(idx, shape, reduced):
    """The flat index into the reduction over `reduced` that x's index `idx` feeds."""
    k = 0
    for i in range(len(shape)):
        if not reduced[i]:
            k = k * shape[i] + idx[i]
    return k


@register_jitable
def _check_reduced_size(size, shape, reduced):
    n = 1
    for i in range(len(shape)):
        if not reduced[i]:
            n *= shape[i]
    if size != n:
        raise ValueError("the cotangent does not match the shape of the reduction")


@register_jitable
def _row_start(r, shape, reduced):
    """The flat index into the reduction over `reduced` that the first entry of row `r`
    (x seen as rows along its last axis, in C order) feeds."""
    last = len(shape) - 1
    k, mult = 0, 1 if reduced[last] else shape[last]
    for i in range(last - 1, -1, -1):
        c = r % shape[i]
        r //= shape[i]
        if not reduced[i]:
            k += c * mult
            mult *= shape[i]
    return k


@overload(_spread)
def _spread_typer(dy, x, axis, n):
    cast = _float_scalar(dy)

    def impl(dy, x, axis, n):
        reduced = _reduced_axes(x.ndim, axis)
        d = _ravel(dy)
        _check_reduced_size(d.size, x.shape, reduced)
        q = np.empty(d.size, cast)
        for k in range(d.size):
            q[k] = d[k] / n
        out = np.empty(x.shape, cast)
        if out.size == 0:
            return out
        # a row at a time along the last axis: its entries read q at one index (that
        # axis reduced) or consecutive ones (kept), so no per-entry index arithmetic
        width = x.shape[x.ndim - 1]
        rows = out.reshape(out.size // width, width)  # a view: out is C-contiguous
        step = 0 if reduced[x.ndim - 1] else 1
        for r in range(rows.shape[0]):
            k = _row_start(r, x.shape, reduced)
            for j in range(width):
                rows[r, j] = q[k + j * step]
        return out
    return impl


@overload(sum_grad)
def _sum_grad_typer(dy, x, axis=None, keepdims=False):
    if _is_scalar(x):
        return lambda dy, x, axis=None, keepdims=False: dy
    if not isinstance(x, types.Array):
        return None
    if _is_scalar(dy) and _is_none(axis):
        cast = _float_scalar(dy)
        return lambda dy, x, axis=None, keepdims=False: np.full(x.shape, cast(_item(dy)))
    return lambda dy, x, axis=None, keepdims=False: _spread(dy, x, axis, 1)


@overload(mean_grad)
def _mean_grad_typer(dy, x, axis=None, keepdims=False):
    if _is_scalar(x):
        return lambda dy, x, axis=None, keepdims=False: dy
    if isinstance(x, types.Array):
        return lambda dy, x, axis=None, keepdims=False: _spread(dy, x, axis, _count(x, axis))


@overload(_count)
def _count_typer(x, axis):
    def impl(x, axis):
        reduced = _reduced_axes(x.ndim, axis)
        n = 1
        for i in range(x.ndim):
            if reduced[i]:
                n *= x.shape[i]
        return max(n, 1)
    return impl


@overload(extremum_grad)
def _extremum_grad_typer(dy, y, x, axis=None, keepdims=False):
    if _is_scalar(x):
        return lambda dy, y, x, axis=None, keepdims=False: dy
    if not isinstance(x, types.Array):
        return None
    cast = _float_scalar(dy)

    def impl(dy, y, x, axis=None, keepdims=False):
        reduced = _reduced_axes(x.ndim, axis)
        ys, ds = _ravel(y), _ravel(dy)
        _check_reduced_size(ys.size, x.shape, reduced)
        _check_reduced_size(ds.size, x.shape, reduced)
        count = np.zeros(ys.size, np.intp)
        for idx in np.ndindex(x.shape):
            k = _reduced_index(idx, x.shape, reduced)
            if x[idx] == ys[k]:
                count[k] += 1
        out = np.zeros(x.shape, cast)
        for idx in np.ndindex(x.shape):
            k = _reduced_index(idx, x.shape, reduced)
            if count[k] == 0:
                out[idx] = np.nan  # a NaN extremum: dy * 0 / 0, as in NumPy and JAX
            elif x[idx] == ys[k]:
                out[idx] = ds[k] / count[k]
        return out
    return impl


@overload(seed)
def _seed_typer(y):
    if isinstance(y, types.Array) and y.ndim > 0:
        raise TypingError(f"{NONSCALAR_MARKER}: {_NONSCALAR}")
    dtype = y.dtype if isinstance(y, types.Array) else y
    one = as_dtype(dtype).type(1.0) if isinstance(dtype, types.Float) else 1.0
    return lambda y: one


@overload(unit)
def _unit_typer(x, k):
    if _is_scalar(x):
        return lambda x, k: zeros_like(x) + 1.0

    def impl(x, k):
        one = zeros_like(x)
        one.reshape(one.size)[k] = 1.0
        return one
    return impl


@overload(put_flat)
def _put_flat_typer(g, k, v):
    if isinstance(v, types.Array) and v.ndim > 0:
        raise TypingError(f"{NONSCALAR_MARKER}: {_NONSCALAR}")
    if _is_scalar(g):
        return lambda g, k, v: g * 0.0 + _item(v)

    def impl(g, k, v):
        g.reshape(g.size)[k] = _item(v)
        return g
    return impl


def _sequence(t) -> bool:
    """A 1-D integer index array or list (numba's type)."""
    return isinstance(t, types.Array) and t.ndim == 1 and isinstance(t.dtype, types.Integer) \
        or isinstance(t, types.List) and isinstance(t.dtype, types.Integer)


def _ranked(t) -> bool:
    """An integer index array of rank >= 2, or a list of lists of ints (numba's type)."""
    if isinstance(t, types.List) and isinstance(t.dtype, types.List):
        while isinstance(t, types.List):
            t = t.dtype
        return isinstance(t, types.Integer)
    return isinstance(t, types.Array) and t.ndim >= 2 and isinstance(t.dtype, types.Integer)


@overload(add_at)
def _add_at_typer(g, index, dy):
    if not isinstance(g, types.Array):
        return None
    one = _is_scalar(dy)
    if _sequence(index):
        def along(g, index, dy):
            for k in range(len(index)):
                g[index[k]] += dy if one else dy[k]
            return g
        return along
    if _ranked(index):   # x[idx] with an index of rank >= 2: each of its entries a row
        def ranked(g, index, dy):
            flat = as_index(index).ravel()
            if one:
                for k in range(flat.size):
                    g[flat[k]] += dy
            else:
                d = np.ascontiguousarray(dy).reshape((flat.size,) + g.shape[1:])
                for k in range(flat.size):
                    g[flat[k]] += d[k]
            return g
        return ranked
    if isinstance(index, types.BaseTuple) and len(index) == 2 and g.ndim == 2:
        first, second = (_sequence(t) for t in index)
        if first and second:
            def pairs(g, index, dy):
                for k in range(len(index[0])):
                    g[index[0][k], index[1][k]] += dy if one else dy[k]
                return g
            return pairs
        if first:   # x[idx, j] or x[idx, a:b]
            def rows(g, index, dy):
                for k in range(len(index[0])):
                    g[index[0][k], index[1]] += dy if one else dy[k]
                return g
            return rows
        if second:  # x[i, idx] or x[:, idx]
            column = isinstance(index[0], types.Integer)

            def columns(g, index, dy):
                for k in range(len(index[1])):
                    if one:
                        g[index[0], index[1][k]] += dy
                    elif column:
                        g[index[0], index[1][k]] += dy[k]
                    else:
                        g[index[0], index[1][k]] += dy[..., k]
                return g
            return columns

    parts = index.types if isinstance(index, types.BaseTuple) else (index,)
    if any(isinstance(t, (types.Array, types.List)) and not isinstance(t.dtype, types.Boolean)
           for t in parts):   # (a mask selects each entry once)
        raise TypingError("srcgrad: add_at compiles an index array alone (of any rank) or "
                          "1-D index arrays on one axis of an array of rank <= 2 only")

    def basic(g, index, dy):
        g[index] += dy
        return g
    return basic


@overload(take_grad)
def _take_grad_typer(dy, a, indices, axis=None):
    if not isinstance(a, types.Array):
        return None
    if _is_none(axis):
        def flat(dy, a, indices, axis=None):
            g = np.zeros(a.shape)
            add_at(g.reshape(g.size), indices, dy)
            return g
        return flat
    if _sequence(indices):   # rows of g moved to axis 0, as dy's
        def along(dy, a, indices, axis=None):
            g = np.zeros(a.shape)
            ax = axis % g.ndim
            add_at(np.swapaxes(g, 0, ax), indices, np.swapaxes(dy, 0, ax))
            return g
        return along
    if isinstance(indices, types.Integer) and a.ndim <= 2:
        def one(dy, a, indices, axis=None):
            g = np.zeros(a.shape)
            add_at(np.swapaxes(g, 0, axis % g.ndim), indices, dy)
            return g
        return one
    raise TypingError("srcgrad: the gradient of np.take compiles an axis with a 1-D "
                      "index (or an int on a matrix) only")


@overload(take_along_axis_grad)
def _take_along_axis_grad_typer(dy, a, indices, axis):
    if not isinstance(a, types.Array) or a.ndim > 2 or not isinstance(indices, types.Array):
        if isinstance(a, types.Array):
            raise TypingError("srcgrad: the gradient of np.take_along_axis compiles arrays "
                              "of rank 1 and 2 only")
        return None
    if _is_none(axis) or a.ndim == 1:   # along the flattened array: np.take's
        return lambda dy, a, indices, axis: take_grad(dy, a, indices)

    def matrix(dy, a, indices, axis):
        g = np.zeros(a.shape)
        ax = axis % 2
        one_i, one_j = indices.shape[0] == 1, indices.shape[1] == 1
        for i in range(dy.shape[0]):
            for j in range(dy.shape[1]):
                k = indices[0 if one_i else i, 0 if one_j else j]
                if ax == 0:
                    g[k, j] += dy[i, j]
                else:
                    g[i, k] += dy[i, j]
        return g
    return matrix


def first_index(index):
    """The first part of a tuple index, as an array where it is a list."""
    return as_index(index[0])


@overload(first_index)
def _first_index(index):
    return lambda index: as_index(index[0])


@register_jitable
def _last_rows(g, first, n):
    """g (rows gathered at `first` from an array of n rows) with each row that a later
    entry of `first` writes again zeroed."""
    seen = np.zeros(n, np.bool_)
    for k in range(len(first) - 1, -1, -1):
        i = first[k] + n if first[k] < 0 else first[k]
        if seen[i]:
            g[k] = 0.0
        seen[i] = True
    return g


@overload(written_grad)
def _written_grad_typer(dy, index):
    pair = isinstance(index, types.BaseTuple) and len(index) == 2 and \
        isinstance(dy, types.Array) and dy.ndim == 2
    if isinstance(dy, types.Array) and (_sequence(index) or pair and _sequence(index[0])
                                        and not _sequence(index[1])):
        alone = _sequence(index)

        def rows(dy, index):   # y[idx] = v, y[idx, j] = v, y[idx, a:b] = v
            g = dy[as_index(index)]
            return _last_rows(g, first_index(index) if not alone else as_index(index),
                              dy.shape[0])
        return rows
    if pair and _sequence(index[0]) and _sequence(index[1]):
        def pairs(dy, index):   # y[idx, jdx] = v
            first, second = as_index(index[0]), as_index(index[1])
            g = dy[first, second]
            n, m = dy.shape
            seen = np.zeros((n, m), np.bool_)
            for k in range(len(first) - 1, -1, -1):
                i = first[k] + n if first[k] < 0 else first[k]
                j = second[k] + m if second[k] < 0 else second[k]
                if seen[i, j]:
                    g[k] = 0.0
                seen[i, j] = True
            return g
        return pairs
    if pair and _sequence(index[1]):
        def columns(dy, index):   # y[i, jdx] = v, y[:, jdx] = v
            second = as_index(index[1])
            g = dy[index[0], second]
            m = dy.shape[1]
            seen = np.zeros(m, np.bool_)
            for k in range(len(second) - 1, -1, -1):
                j = second[k] + m if second[k] < 0 else second[k]
                if seen[j]:
                    g[..., k] = 0.0
                seen[j] = True
            return g
        return columns
    raise TypingError("srcgrad: written_grad compiles 1-D index arrays on one axis of an "
                      "array of rank <= 2 only")


@overload(unshared)
def _unshared_typer(v, message):
    if isinstance(v, types.Array):
        raise TypingError(f"srcgrad: {getattr(message, 'literal_value', message)}")
    return lambda v, message: v


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


@overload(retake)
def _retake_typer(old, new):
    if isinstance(old, types.Array):
        return lambda old, new: new
    return lambda old, new: old


@overload(retake_grad)
def _retake_grad_typer(dy, old):
    if isinstance(old, types.Array):
        return lambda dy, old: (0.0 * dy, dy)
    return lambda dy, old: (dy, 0.0 * dy)


@overload(_outer)
def _outer_typer(u, v):
    # numba's own np.outer takes seconds to compile; these loops take a fraction.
    dtype = np.result_type(as_dtype(u.dtype), as_dtype(v.dtype))

    def impl(u, v):
        out = np.empty((u.size, v.size), dtype)
        for i in range(u.size):
            for j in range(v.size):
                out[i, j] = u[i] * v[j]
        return out
    return impl


@overload(matmul_lhs_grad)
def _matmul_lhs_grad_typer(dy, a, b):
    if getattr(b, "ndim", 0) == 1:
        if getattr(a, "ndim", 0) == 2:
            return lambda dy, a, b: _outer(dy, b)
        return lambda dy, a, b: dy * b
    if getattr(a, "ndim", 0) == 2:
        return lambda dy, a, b: dy @ b.T
    return lambda dy, a, b: b @ dy


@overload(matmul_rhs_grad)
def _matmul_rhs_grad_typer(dy, a, b):
    if getattr(a, "ndim", 0) == 1:
        if getattr(b, "ndim", 0) == 2:
            return lambda dy, a, b: _outer(a, dy)
        return lambda dy, a, b: dy * a
    return lambda dy, a, b: a.T @ dy


@overload(matmul_sum)
def _matmul_sum_typer(a1, b1, a2, b2):
    return lambda a1, b1, a2, b2: a1 @ b1 + a2 @ b2


@overload(matmul_jvp)
def _matmul_jvp_typer(a, b, da, db):
    return lambda a, b, da, db: (a @ b, da @ b + a @ db)


@overload(matmul_tangent)
def _matmul_tangent_typer(a, b, da, db):
    return lambda a, b, da, db: da @ b + a @ db


@overload(matmul_lhs_grad_jvp)
def _matmul_lhs_grad_jvp_typer(dy, a, b, ddy, db):
    return lambda dy, a, b, ddy, db: (matmul_lhs_grad(dy, a, b),
                                      matmul_lhs_grad_tangent(dy, a, b, ddy, db))


@overload(matmul_lhs_grad_tangent)
def _matmul_lhs_grad_tangent_typer(dy, a, b, ddy, db):
    return lambda dy, a, b, ddy, db: \
        matmul_lhs_grad(ddy, a, b) + matmul_lhs_grad(dy, a, db)


@overload(matmul_rhs_grad_jvp)
def _matmul_rhs_grad_jvp_typer(dy, a, b, ddy, da):
    return lambda dy, a, b, ddy, da: (matmul_rhs_grad(dy, a, b),
                                      matmul_rhs_grad_tangent(dy, a, b, ddy, da))


@overload(matmul_rhs_grad_tangent)
def _matmul_rhs_grad_tangent_typer(dy, a, b, ddy, da):
    return lambda dy, a, b, ddy, da: \
        matmul_rhs_grad(ddy, a, b) + matmul_rhs_grad(dy, da, b)


@register_jitable
def _add_outer(out, u, v):
    for i in range(u.size):
        for j in range(v.size):
            out[i, j] += u[i] * v[j]


@overload(add_matmul_lhs_grad)
def _add_matmul_lhs_grad_typer(out, dy, a, b):
    if getattr(b, "ndim", 0) == 1 and getattr(a, "ndim", 0) == 2:
        return lambda out, dy, a, b: _add_outer(out, dy, b)

    def impl(out, dy, a, b):
        out += matmul_lhs_grad(dy, a, b)
    return impl


@overload(add_matmul_rhs_grad)
def _add_matmul_rhs_grad_typer(out, dy, a, b):
    if getattr(a, "ndim", 0) == 1 and getattr(b, "ndim", 0) == 2:
        return lambda out, dy, a, b: _add_outer(out, a, dy)

    def impl(out, dy, a, b):
        out += matmul_rhs_grad(dy, a, b)
    return impl


@overload(_flat)
def _flat_typer(v):
    if isinstance(v, types.Array):  # only C-contiguous arrays come here: a view
        return lambda v: v.reshape(v.size)
    return lambda v: v


@overload(_elem)
def _elem_typer(v, i):
    if isinstance(v, types.Array):
        return lambda v, i: v[i]
    return lambda v, i: v


@overload(_shaped_like)
def _shaped_like_typer(v, like):
    if isinstance(v, types.Array):
        return lambda v, like: v.shape == like.shape
    return lambda v, like: True


@overload(where)
def _where_typer(cond, x, y):
    arrays = [t for t in (x, y) if isinstance(t, types.Array)]
    if not (isinstance(cond, types.Array) and cond.ndim > 0 and cond.layout == "C"
            and all(isinstance(t, types.Array) or _is_scalar(t) for t in (x, y))
            and all(a.layout == "C" and a.ndim == cond.ndim for a in arrays)):
        return lambda cond, x, y: np.where(cond, x, y)
    # the result dtype numba's np.where gives, so that both forms type alike
    dtype = np.promote_types(*[as_dtype(t.dtype if isinstance(t, types.Array)
                                        else types.unliteral(t)) for t in (x, y)])

    def impl(cond, x, y):
        if not (_shaped_like(x, cond) and _shaped_like(y, cond)):
            return np.where(cond, x, y)  # broadcasting
        out = np.empty(cond.shape, dtype)
        c, o, xs, ys = cond.reshape(cond.size), out.reshape(out.size), _flat(x), _flat(y)
        for i in range(o.size):
            o[i] = _elem(xs, i) if c[i] else _elem(ys, i)
        return out
    return impl


@overload(broadcast_like)
def _broadcast_like_typer(d, y):
    if _is_scalar(y):
        return lambda d, y: d
    if not isinstance(y, types.Array):
        return None
    if _is_scalar(d):
        return lambda d, y: np.full(y.shape, d)
    if isinstance(d, types.Array) and d.ndim == y.ndim:
        def same_rank(d, y):
            if d.shape == y.shape:
                return d
            return d + np.zeros(y.shape, d.dtype)
        return same_rank
    return lambda d, y: d + np.zeros(y.shape, d.dtype)


@overload(reshape_as)
def _reshape_as_typer(dy, x):
    if _is_scalar(x):
        if isinstance(dy, types.Array) and dy.ndim > 0:
            return lambda dy, x: np.ravel(dy)[0]
        return lambda dy, x: _item(dy)
    if not isinstance(x, types.Array):
        return None
    if _is_scalar(dy):
        return lambda dy, x: np.full(x.shape, _item(dy))
    return lambda dy, x: np.ascontiguousarray(dy).reshape(x.shape)


# ---- sequences: adjoints of np.concatenate and np.stack, one gradient per array ----

def split_like(dy, arrays, axis=0):
    """Adjoint of `np.concatenate(arrays, axis)`: dy cut into pieces shaped like arrays."""
    sizes = [np.shape(a)[axis] for a in arrays]
    return tuple(np.split(dy, np.cumsum(sizes)[:-1], axis=axis))


def unstack_like(dy, arrays, axis=0):
    """Adjoint of `np.stack(arrays, axis)`: the slices of dy along axis."""
    return tuple(np.take(dy, k, axis=axis) for k in range(len(arrays)))


def _axis_code(ndim: int, index: str) -> str:
    """Source of `dy` indexed by `index` along a runtime axis `ax` (one branch per axis)."""
    lines = []
    for d in range(ndim):
        parts = [":"] * ndim
        parts[d] = index
        lines.append(f"    {'if' if d == 0 else 'elif'} ax == {d}:\n"
                     f"        return np.ascontiguousarray(dy[{', '.join(parts)}])")
    return "\n".join(lines) + "\n    raise ValueError('axis out of range')\n"


def _jit_source(name: str, source: str):
    namespace = {"np": np}
    exec(source, namespace)
    return register_jitable(namespace[name])


_PIECES: dict[tuple, object] = {}


def _piece(ndim: int, kind: str):
    """A jitable `(dy, ax, start, stop)` slicing (or `(dy, ax, k)` indexing) along `ax`."""
    key = (ndim, kind)
    if key not in _PIECES:
        head = ("def piece(dy, ax, start, stop):\n" if kind == "slice"
                else "def piece(dy, ax, k):\n")
        _PIECES[key] = _jit_source("piece", head + _axis_code(
            ndim, "start:stop" if kind == "slice" else "k"))
    return _PIECES[key]


@overload(split_like)
def _split_like_typer(dy, arrays, axis=0):
    if not isinstance(dy, types.Array) or not isinstance(arrays, types.BaseTuple):
        return None
    n, ndim, piece = len(arrays), dy.ndim, _piece(dy.ndim, "slice")
    body = ["def split(dy, arrays, axis=0):",
            f"    ax = axis + {ndim} if axis < 0 else axis",
            "    o0 = 0"]
    body += [f"    o{i + 1} = o{i} + arrays[{i}].shape[ax]" for i in range(n)]
    pieces = "".join(f"piece(dy, ax, o{i}, o{i + 1}), " for i in range(n))
    body.append(f"    return ({pieces})")
    namespace = {"piece": piece}
    exec("\n".join(body), namespace)
    return namespace["split"]


@overload(unstack_like)
def _unstack_like_typer(dy, arrays, axis=0):
    if not isinstance(dy, types.Array) or not isinstance(arrays, types.BaseTuple):
        return None
    n, ndim, piece = len(arrays), dy.ndim, _piece(dy.ndim, "index")
    body = ["def unstack(dy, arrays, axis=0):",
            f"    ax = axis + {ndim} if axis < 0 else axis",
            "    return (" + "".join(f"piece(dy, ax, {k}), " for k in range(n)) + ")"]
    namespace = {"piece": piece}
    exec("\n".join(body), namespace)
    return namespace["unstack"]
