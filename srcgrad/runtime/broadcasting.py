"""Adjoint helpers of broadcasting: `unbroadcast` (a gradient summed to the shape of
what was broadcast), zeros, seeds and unit cotangents, `where`, reshapes.

The numba forms use explicit loops rather than broadcasting ufuncs: numba takes seconds
to compile each broadcasting ufunc call, and the loops run as fast.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype
from numba.np.unsafe.ndarray import to_fixed_tuple

from ..errors import NONSCALAR_MARKER, NonScalarOutput, RuleError
from .common import (
    _BAD_SHAPE,
    _FLOAT64,
    _NONSCALAR,
    _elem,
    _flat,
    _float_dtype,
    _float_scalar,
    _is_scalar,
    _item,
    _shaped_like,
)


def unbroadcast(g, like):
    """Sum the gradient `g` down to the shape of `like` (NumPy broadcasting, reversed).

    >>> unbroadcast(np.ones((2, 3)), np.zeros((1, 3)))
    array([[2., 2., 2.]])
    """
    if type(g) is np.ndarray and type(like) is np.ndarray and g.shape == like.shape \
            and g.ndim and (g.dtype.kind == "f" or g.dtype.kind == like.dtype.kind == "c"):
        return g  # the common case first: generated code calls this on every adjoint
    if np.iscomplexobj(g) and not np.iscomplexobj(like):
        g = np.real(g)   # a real operand of a complex product (runtime/complex_numbers.py)
    return _sum_to(g, like.shape if type(like) is np.ndarray else np.shape(like))


@overload(unbroadcast)
def _unbroadcast_typer(g, like):
    if _complex(g) and not _complex(like):
        return lambda g, like: unbroadcast(g.real, like)
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


def _complex(t) -> bool:
    return isinstance(getattr(t, "dtype", t), types.Complex)


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
    """The zero gradient of `x`: a float scalar, a float array of x's shape, or a list of
    those for a list or tuple; None for None (a list's rows before its first append).

    >>> zeros_like(np.arange(3))
    array([0., 0., 0.])
    """
    if isinstance(x, (list, tuple)):   # the items of np.stack([...]): one zero each, in a
        # list, which the adjoint adds into item by item (a tuple result, np.gradient's)
        return [zeros_like(item) for item in x]
    if x is None:
        return None
    dtype = _float_dtype(np.result_type(x))
    if np.ndim(x) == 0:
        return dtype.type(0.0)
    return np.zeros(np.shape(x), dtype)


@overload(zeros_like)
def _zeros_like_typer(x):
    if isinstance(x, (types.UniTuple, types.List)):
        # one zero per item, as a list: the pieces np.split gives, or the adjoint of a
        # tuple read at an index known at run time (`p[i]` in a loop: the list of its
        # items' adjoints; numba lists take entries, tuples do not)
        return lambda x: [zeros_like(item) for item in x]
    if isinstance(x, types.NoneType):
        return lambda x: None
    cast = _float_scalar(x)
    if _is_scalar(x):
        return lambda x: cast(0.0)
    if isinstance(x, types.Array):
        return lambda x: np.zeros(x.shape, cast)


def checked_grad(g, x, where):
    """`g`, a gradient for `x` that user code gave (a rule, a grad_of block), if it has
    x's shape; else a RuleError that names the code and the call (`where`)."""
    if np.shape(g) != np.shape(x):
        raise RuleError(f"{where}{_BAD_SHAPE}: {np.shape(g)} for {np.shape(x)}")
    return g


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


# what `seed` says of a complex result (the api's error names the user's line)
COMPLEX_RESULT = "a complex result"


def seed(y):
    """The cotangent 1.0 that starts the backward pass of a scalar result `y`."""
    if np.ndim(y) != 0:
        raise NonScalarOutput(_NONSCALAR)
    if np.iscomplexobj(y):
        raise NonScalarOutput(COMPLEX_RESULT)
    dtype = np.result_type(y)
    return dtype.type(1.0) if dtype.kind == "f" else 1.0


@overload(seed)
def _seed_typer(y):
    if isinstance(y, types.Array) and y.ndim > 0:
        raise TypingError(f"{NONSCALAR_MARKER}: {_NONSCALAR}")
    dtype = y.dtype if isinstance(y, types.Array) else y
    if isinstance(dtype, types.Complex):
        raise TypingError(f"{NONSCALAR_MARKER}: {COMPLEX_RESULT}")
    one = as_dtype(dtype).type(1.0) if isinstance(dtype, types.Float) else 1.0
    return lambda y: one


def checking():
    """True as Python, False compiled: `if checking():` holds the forward work only the
    check of a gradient's result (`seed`) reads, which Python runs and numba types (the
    check is made at compile time) but does not run (`passes.optimize.unvalued`)."""
    return True


@overload(checking)
def _checking_typer():
    return lambda: False


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


@overload(unit)
def _unit_typer(x, k):
    if _is_scalar(x):
        return lambda x, k: zeros_like(x) + 1.0

    def impl(x, k):
        one = zeros_like(x)
        one.reshape(one.size)[k] = 1.0
        return one
    return impl


def tree_vdot(a, b):
    """The sum of the entries of a * b, over tuples of arrays and numbers alike (the
    cotangent of a gradient applied to its tangent).

    >>> tree_vdot((np.ones(2), 3.0), (np.arange(2.0), 2.0))
    7.0
    """
    if isinstance(a, tuple):
        return sum((tree_vdot(x, y) for x, y in zip(a, b, strict=True)), 0.0)
    return float(np.sum(np.multiply(a, b)))


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


def broadcast_like(d, y):
    """`d` at the shape of `y`, into which it broadcasts: the tangent of `y = a + b` where
    only `a` varies and `b` is larger (the adjoint's `unbroadcast`, forward)."""
    if np.shape(d) == np.shape(y):
        return d
    return d + zeros_like(y)


@overload(broadcast_like)
def _broadcast_like_typer(d, y):
    if _is_scalar(y) or isinstance(d, types.List) and isinstance(y, (types.BaseTuple,
                                                                     types.List)):
        return lambda d, y: d   # (a tuple's adjoint: the list of its items' adjoints)
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


def like_broadcast(a, b):
    """A stand-in with no data (zero strides) of the shape of ``a + b``, for a helper that
    reads its argument for its shape only (`sum_grad`, `mean_grad`, `reshape_as`): the
    value it stands for is not computed (`passes.optimize.shaped`). A number where both are.

    >>> like_broadcast(np.zeros((2, 1)), np.zeros(3)).shape
    (2, 3)
    """
    shape = np.broadcast_shapes(np.shape(a), np.shape(b))
    return np.broadcast_to(0.0, shape) if shape else 0.0


@overload(like_broadcast)
def _like_broadcast_typer(a, b):
    na, nb = _rank(a), _rank(b)
    if na is None or nb is None:
        return None
    n = max(na, nb)
    if n == 0:
        return lambda a, b: 0.0
    if n <= _UNROLLED_RANK:
        return _like_broadcast_unrolled(na, nb)

    def impl(a, b):
        shape = np.ones(n, np.intp)
        for dims in (_dims(a), _dims(b)):
            lead = n - dims.size
            for i in range(dims.size):
                d, have = dims[i], shape[lead + i]
                if have == 1:
                    shape[lead + i] = d
                elif d != 1 and d != have:
                    raise ValueError("operands could not be broadcast together")
        return np.broadcast_to(np.zeros(1), to_fixed_tuple(shape, n))
    return impl


_UNROLLED_RANK = 6


@functools.cache
def _like_broadcast_unrolled(na: int, nb: int):
    """`like_broadcast`'s numba form for ranks `na` and `nb`, its shape a tuple of the
    operands' sizes: no arrays made for the shapes (it runs once a loop step)."""
    n = max(na, nb)
    sizes = []
    for i in range(n):
        ia, ib = i - (n - na), i - (n - nb)
        pa = f"np.shape(a)[{ia}]" if ia >= 0 else "1"
        pb = f"np.shape(b)[{ib}]" if ib >= 0 else "1"
        sizes.append(f"_broadcast_size({pa}, {pb})")
    source = (f"def impl(a, b):\n"
              f"    return np.broadcast_to(np.zeros(1), ({', '.join(sizes)},))\n")
    scope = {"np": np, "_broadcast_size": _broadcast_size}
    exec(source, scope)
    return scope["impl"]


@register_jitable
def _broadcast_size(p, q):
    """The size of an axis of sizes `p` and `q` broadcast together."""
    if p == 1:
        return q
    if q != 1 and q != p:
        raise ValueError("operands could not be broadcast together")
    return p


def _rank(t) -> int | None:
    """The rank of a value of numba type `t` (array or number), else None."""
    if isinstance(t, types.Array):
        return t.ndim
    return 0 if isinstance(t, (types.Number, types.Boolean)) else None


def _dims(x):
    """The shape of `x` (an array or a number), as an array: numba's form only."""
    return np.asarray(np.shape(x), np.intp)


@overload(_dims)
def _dims_typer(x):
    n = _rank(x)
    if n is None:
        return None

    def impl(x):
        out = np.empty(n, np.intp)
        for i in range(n):
            out[i] = x.shape[i]
        return out
    return (lambda x: np.empty(0, np.intp)) if not isinstance(x, types.Array) else impl


def reshape_as(dy, x):
    """`dy` with x's shape: the adjoint of reshape, ravel, squeeze, expand_dims, copy."""
    if np.ndim(x) == 0:
        return np.reshape(dy, ())[()]
    return np.reshape(dy, np.shape(x))


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


def reshaped(a, shape):
    """`a.reshape(shape)`, in C order, whatever a's memory layout: what generated code
    calls for the user's reshapes and those of rules (`passes.reshapes`). NumPy's
    reshape copies where no view has the shape; numba's compiles for contiguous layouts
    only, and raises at run time where a transpose (an 'F' array) has no such view.

    Its numba form keeps a view where numba types `a` C-contiguous (a 1-D contiguous
    array too), the hot path, and reshapes a C-contiguous copy otherwise ('A': a strided
    slice, which the copy checks at run time, copying only where it is not contiguous;
    'F' of rank 2 or more). A copy is safe in generated code only: its writes through a
    view are refused (`passes.check`) and its views are taken again after a write into
    their array (`passes.views`), so a value copied here reads what a view would. The
    user's own numba code is not changed: numba still refuses its strided reshapes.

    >>> reshaped(np.arange(6.0)[::2], (3, 1)).shape
    (3, 1)
    """
    return np.reshape(a, shape)


@overload(reshaped)
def _reshaped_typer(a, shape):
    if not isinstance(a, types.Array):
        return None
    if a.layout == "C" or a.layout == "F" and a.ndim <= 1:
        return lambda a, shape: a.reshape(shape)
    return lambda a, shape: np.ascontiguousarray(a).reshape(shape)


@register_jitable
def _broadcast_index(idx, shape, lead):
    """The flat C-order index into an array of `shape` that index `idx` (with `lead`
    extra leading entries) reads under broadcasting: size-1 axes contribute 0."""
    k = 0
    for i in range(len(shape)):
        if shape[i] != 1:
            k = k * shape[i] + idx[lead + i]
    return k


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
