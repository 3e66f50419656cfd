"""Arrays built from differentiated values: the records of np.array and np.asarray, the
helpers their rules call (each Python form beside its numba form), and the forms of
np.array numba lacks (of an array, of lists or tuples of arrays, with ``dtype=float``).

y = np.array(obj) copies the numbers of obj (a number, an array, or lists and tuples of
them, nested) into one array, so it is linear: its tangent is np.array of the tangents,
and its adjoint gives each item the part of dy at its place, dy[i] for item i (the
adjoint of the list display ``[a, b, c]`` reads it as ``dobj[i]``; a number gets a
number). Compiled, that is dy itself; as Python, `Items`, which add item by item where
a list is read twice and refuse what the arithmetic rules of `+` and `*` would do with
the gradient of a list joined or repeated. A gradient flows through float64
results only: an integer (or other) dtype is refused, as are the keywords other than
``dtype`` and np.asarray's ``device`` (which can only be the CPU). np.asarray gives its
argument itself where it may: a view.
"""

import numpy as np
from numba import literal_unroll, types
from numba.core.errors import TypingError
from numba.extending import overload
from numba.np.numpy_support import as_dtype

from ..errors import MissingRule
from . import describe, linear, rule, tangent


def _refuse(y, keywords):
    """Raise MissingRule unless y holds float64 values and no keyword but dtype was given
    (`keywords`: name -> value, None where not given; np.array's ``copy=True`` copies)."""
    given = [k for k, v in keywords.items() if v is not None and (k, v) != ("copy", True)]
    if given:
        raise MissingRule(f"np.array and np.asarray with {given[0]}= have no gradient rule: "
                          f"only dtype= (a float64 dtype) is supported")
    if np.result_type(y) != np.float64:
        raise MissingRule(f"np.array and np.asarray give {np.result_type(y)} values here, "
                          f"through which no gradient flows: build float64 values "
                          f"(dtype=float)")


class Items(tuple):
    """The gradients of the items of a list or tuple that np.array read, one per item.
    `+` adds two of them item by item (a tuple's `+` would join them, where a list read
    twice gathers its gradient). Multiplied, or summed to a shape by `unbroadcast`, they
    are refused: that is the adjoint of lists joined with `+` or repeated with `*` (the
    rules of `+` and `*` are arithmetic), which has no gradient rule.

    >>> Items((1.0, 2.0)) + (10.0, 20.0)
    (11.0, 22.0)
    """

    def __add__(self, other):
        return Items(a + b for a, b in zip(self, other, strict=True))

    __radd__ = __add__

    def _joined(self, *args, **kwargs):
        raise MissingRule("a list or tuple that np.array reads was joined with another "
                          "(+) or repeated (*), which has no gradient rule: build the "
                          "array with np.concatenate, or np.array of one list display")

    __mul__ = __rmul__ = _joined
    dtype = property(_joined)   # what `unbroadcast` reads of a gradient, after its shape


def _items(dy, obj):
    """dy given back to obj (a number, an array, or lists and tuples of them): `Items`
    for a list or tuple, a number for a number."""
    dy = np.asarray(dy)
    if isinstance(obj, (list, tuple)):
        return Items(_items(dy[i], item) for i, item in enumerate(obj))
    return dy[()] if dy.ndim == 0 else dy


def copied_back(dy, y, obj, order=None, copy=None, like=None, subok=None, ndmin=None):
    """The gradient of obj in ``y = np.array(obj)`` (or np.asarray): dy, given back to
    the items of obj where it is a list or tuple (the adjoint of the list display reads
    item i's as ``dobj[i]``); a number where y is 0-d. Compiled, it is dy in y's shape,
    whose item i is dy[i] too.

    >>> [float(g) for g in copied_back(np.array([1.0, 2.0]), np.zeros(2), [3.0, 4.0])]
    [1.0, 2.0]
    """
    _refuse(y, dict(order=order, copy=copy, like=like, subok=subok, ndmin=ndmin))
    return _items(dy, obj)


def copied_on(dx, y, order=None, copy=None, like=None, subok=None, ndmin=None):
    """The tangent of ``y = np.array(obj)`` (or np.asarray) where obj's tangent is dx
    (a number, an array, or lists and tuples of them): np.array of dx, as float64.

    >>> copied_on([1.0, 2.0], np.zeros(2))
    array([1., 2.])
    """
    _refuse(y, dict(order=order, copy=copy, like=like, subok=subok, ndmin=ndmin))
    return np.array(dx, dtype=np.float64)


def _check_typer(y, keywords):
    """The numba form of `_refuse`: a clear typing error, or None."""
    if any(k is not None and not isinstance(k, (types.Omitted, types.NoneType))
           for k in keywords):
        raise TypingError("srcgrad: np.array and np.asarray with a keyword other than "
                          "dtype have no gradient rule")
    if not (isinstance(y, types.Array) and y.dtype == types.float64):
        raise TypingError(f"srcgrad: np.array and np.asarray give {y} here, through which "
                          f"no gradient flows: build float64 values (dtype=float)")


@overload(copied_back)
def _copied_back_typer(dy, y, obj, order=None, copy=None, like=None, subok=None, ndmin=None):
    _check_typer(y, (order, copy, like, subok, ndmin))
    if y.ndim == 0 and isinstance(dy, types.Array):
        return lambda dy, y, obj, order=None, copy=None, like=None, subok=None, \
            ndmin=None: dy[()]
    return lambda dy, y, obj, order=None, copy=None, like=None, subok=None, ndmin=None: dy


@overload(copied_on)
def _copied_on_typer(dx, y, order=None, copy=None, like=None, subok=None, ndmin=None):
    _check_typer(y, (order, copy, like, subok, ndmin))
    return lambda dx, y, order=None, copy=None, like=None, subok=None, ndmin=None: \
        np.array(dx, np.float64)


@rule(np.array)
def array(dy, y, obj, dtype=None, copy=None, order=None, subok=None, ndmin=None, like=None):
    return copied_back(dy, y, obj, order, copy, like, subok, ndmin)


@tangent(np.array)
def array_tangent(dx, y, obj, dtype=None, copy=None, order=None, subok=None, ndmin=None,
                  like=None):
    return copied_on(dx, y, order, copy, like, subok, ndmin)


@rule(np.asarray, methods=("astype",))   # x.astype(dtype): np.asarray(x, dtype)
def asarray(dy, y, a, dtype=None, order=None, device=None, copy=None, like=None):
    return copied_back(dy, y, a, order, copy, like)


@tangent(np.asarray)
def asarray_tangent(dx, y, a, dtype=None, order=None, device=None, copy=None, like=None):
    return copied_on(dx, y, order, copy, like)


describe(np.array, array_result=True)
describe(np.asarray, array_result=True, view=True)
linear(copied_back, copied_on)   # in dy, dx: hvp and higher orders pass through them
describe(copied_back, copied_on, pure=True)
describe(copied_back, shape_only=2)   # obj: its nesting, the same on every trip of a loop


# ---- np.array under numba: of arrays, and with dtype=float ----


def _layout(t):
    """(depth, leaf type) of numbers or arrays (their layouts aside) in lists and tuples
    nested `depth` deep, every leaf of one type; None if they differ or t is else."""
    if isinstance(t, types.Array):
        return 0, types.Array(t.dtype, t.ndim, "A")
    if isinstance(t, types.Number):
        return 0, t
    if isinstance(t, types.List):
        inner = _layout(t.dtype)
    elif isinstance(t, types.BaseTuple) and len(t) > 0:
        inner = {_layout(u) for u in t.types}
        inner = inner.pop() if len(inner) == 1 else None
    else:
        return None
    return None if inner is None else (inner[0] + 1, inner[1])


def _float64(dtype):
    """Whether a numba dtype argument asks for float64 (np.float64 or the builtin float)."""
    return (isinstance(dtype, types.NumberClass) and dtype.instance_type == types.float64) \
        or getattr(dtype, "typing_key", None) is float


def _shape_of(obj):
    """The shape np.array(obj) has, for obj arrays of one shape in lists and tuples."""
    return np.shape(obj)


@overload(_shape_of)
def _shape_of_typer(obj):
    if isinstance(obj, types.Array):
        return lambda obj: obj.shape
    if isinstance(obj, (types.List, types.BaseTuple)):
        return lambda obj: (len(obj),) + _shape_of(obj[0])
    return None


def _fill(out, obj):
    """Copy obj (arrays of out's trailing shape in lists and tuples) into out."""
    out[...] = np.array(obj)


@overload(_fill)
def _fill_typer(out, obj):
    if isinstance(obj, types.Array):
        def leaf(out, obj):
            if out.shape != obj.shape:
                raise ValueError("np.array: the arrays must all have one shape")
            out[...] = obj
        return leaf
    if isinstance(obj, types.List) or isinstance(obj, types.UniTuple):
        def items(out, obj):
            if len(obj) != out.shape[0]:
                raise ValueError("np.array: the lists must all have one length")
            for i in range(len(obj)):
                _fill(out[i], obj[i])
        return items
    if isinstance(obj, types.BaseTuple):
        def mixed(out, obj):
            if len(obj) != out.shape[0]:
                raise ValueError("np.array: the lists must all have one length")
            i = 0
            for item in literal_unroll(obj):
                _fill(out[i], item)
                i += 1
        return mixed
    return None


@overload(np.array)
def _np_array(obj, dtype=None):
    # numba's np.array takes numbers in lists and tuples, with a NumPy dtype: this form
    # serves an array, arrays in lists and tuples, and dtype=float
    plain = dtype is None or isinstance(dtype, (types.NoneType, types.Omitted))
    layout = _layout(obj)
    if layout is None or not (plain or _float64(dtype)):
        return None
    depth, leaf = layout
    if isinstance(leaf, types.Number):   # numba's own form, but for the builtin float
        if plain or isinstance(dtype, types.NumberClass):
            return None
        return lambda obj, dtype=None: np.array(obj, np.float64)
    kind = np.float64 if not plain else as_dtype(leaf.dtype).type
    if depth == 0:
        return lambda obj, dtype=None: obj.astype(kind)
    if leaf.ndim == 0:
        return None

    def built(obj, dtype=None):
        out = np.empty(_shape_of(obj), kind)
        _fill(out, obj)
        return out
    return built
