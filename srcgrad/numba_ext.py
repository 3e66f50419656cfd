"""NumPy forms that numba's nopython mode rejects, made to compile with NumPy's results.

Generated gradient code is plain NumPy, and so is the user code srcgrad compiles next to
it, but numba (checked on 0.68) types only part of NumPy's reduction API. Importing
this module registers numba overloads for:

* ``np.sum(a, axis, keepdims=...)`` and ``a.sum(...)``: numba has no ``keepdims``;
* ``np.mean``, ``np.max``/``np.amax``, ``np.min``/``np.amin``, ``np.prod``, ``np.var``,
  ``np.std`` and the array methods of the same names, with ``axis`` (an integer, negative
  allowed), ``keepdims`` and, for ``var``/``std``, ``ddof``: numba takes the array alone;
* ``np.squeeze(a, axis)`` and ``a.squeeze(axis)`` with an integer axis, and without an
  axis for the shapes whose result rank is known from the input rank (see below);
* ``a.round(decimals)``: numba has ``np.round`` but not the method;
* ``np.clip(scalar, lo, hi)`` with scalar (or None) bounds: numba's ``np.clip`` needs an
  array first argument;
* a list of ints or bools (nested for a rank-2 index) as an index, alone or in a tuple
  (``x[[0, 0, 1]]``, ``x[idx, :] = v`` with ``idx`` a list): numba indexes with arrays only,
  so the list becomes ``np.array(idx)``, which NumPy's indexing treats the same way;
* a boolean mask of rank 2 or more alone as an index (``x[m]``, ``x[m] = v``): numba's
  own typing gives it a result of the wrong rank and its lowering fails;
* ``x[...]`` alone, read: numba types it but has no lowering of it;

Every overload returns ``None`` for the argument types numba implements itself, so a
call never has two candidate implementations and numba's own code keeps serving the
plain forms. ``keepdims`` must be a compile-time constant (a literal or omitted) since
it fixes the rank of the result; ``axis`` may be a runtime integer. Results have
NumPy's shapes and dtypes; an axis reduction returns a new C-contiguous array.

``np.squeeze(a)`` without an axis has a result rank that depends on the runtime shape,
which numba cannot type; it compiles with rank ``a.ndim - 1`` (exactly one axis of
length 1) or, for a 1-D ``a``, rank 1 (nothing to squeeze), and raises ValueError when
the shape at run time is another one. Not covered: tuple axes (beyond numba's own
``np.sum``), ``dtype=``/``out=`` arguments, and complex ``max``/``min``/``var``/``std``
in the added forms.

Importing it also makes numba number the functions it compiles at random
(`distinct_names`), so that code compiled by different processes never shares a name.
"""

from __future__ import annotations

import functools
import math
import operator
import secrets

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.core.typing import arraydecl, npydecl
from numba.core.typing.templates import builtin_registry
from numba.extending import overload, overload_method, register_jitable
from numba.np import arraymath  # noqa: F401  (registers the method templates widened here)
from numba.np.numpy_support import as_dtype
from numba.np.unsafe.ndarray import to_fixed_tuple

from . import (
    linkonly,
    numba_inplace,  # noqa: F401  (in-place operators check shapes, as NumPy's)
)


class _RandomIds:
    """An endless supply of random function numbers for numba (see `distinct_names`)."""

    def __iter__(self):
        return self

    def __next__(self) -> int:
        return 1 + secrets.randbits(62)


def distinct_names() -> None:
    """Number the functions numba compiles in this process at random.

    numba names compiled code by module, qualified name, argument types and the number
    of the function in the process that compiled it (`FunctionIdentity._unique_ids`, a
    counter from 1), and a process that loads two pieces of cached code defining one
    name links both calls to the first. Closures with one qualified name (an overload's
    `lambda`, `_reduction`'s `along` for np.min and for np.var) compiled by two
    processes into the disk cache can get the same number; a third process loading both
    then runs one in place of the other. Measured: the gradient of
    ``np.sum(np.var(x, axis=1, keepdims=True) ** 2)``, compiled in one process, was
    wrong, silently, in a process that had loaded the gradient of the np.min form from
    the cache first (numba's issue 10486; pytensor draws at random too). The numbers
    come from os.urandom, so a forked child does not repeat its parent's, as it would
    a counter's.
    """
    from numba.core.bytecode import FunctionIdentity
    if hasattr(FunctionIdentity, "_unique_ids"):
        FunctionIdentity._unique_ids = _RandomIds()


distinct_names()
linkonly.install()   # overload implementations: LLVM IR for their callers, no machine code


def omitted(t) -> bool:
    """Whether an overload's optional argument was left out: numba passes Omitted, or
    (numba < 0.60, some calls) the default itself, a Python value."""
    return isinstance(t, types.Omitted) or not isinstance(t, types.Type)


def _is_none(t) -> bool:
    return t is None or isinstance(t, types.NoneType) or (
        isinstance(t, types.Omitted) and t.value is None)


def _static_bool(t, what: str) -> bool:
    """The compile-time value of a boolean argument such as ``keepdims``."""
    if isinstance(t, bool):
        return t
    if isinstance(t, types.Omitted):
        return bool(t.value)
    if isinstance(t, types.BooleanLiteral):
        return t.literal_value
    # A plain boolean type fails here and numba retries with literal types.
    raise TypingError(f"srcgrad: {what} must be a compile-time constant, got {t}")


# NumPy >= 1.25 moved AxisError (a ValueError and IndexError) to np.exceptions.
_AxisError = np.exceptions.AxisError if hasattr(np, "exceptions") else np.AxisError


@register_jitable
def normalize_axis(axis, ndim):
    """`axis` counted from the front, checked against `ndim` as NumPy does."""
    if axis < -ndim or axis >= ndim:
        raise _AxisError("axis is out of bounds for array")
    return axis + ndim if axis < 0 else axis


@register_jitable
def reduced_shape(shape, axis, keep):
    """`shape` without `axis` (or with 1 there if `keep`), as an intp array."""
    out = np.empty(len(shape) - (0 if keep else 1), np.intp)
    j = 0
    for i in range(len(shape)):
        if i != axis:
            out[j] = shape[i]
            j += 1
        elif keep:
            out[j] = 1
            j += 1
    return out


@register_jitable
def _rows(a, axis):
    """A copy of `a` with `axis` moved last, as a C-contiguous (others, len(axis)) matrix."""
    # Explicit loops: np.moveaxis takes seconds to compile.
    m = 1
    for i in range(a.ndim):
        if i != axis:
            m *= a.shape[i]
    out = np.empty((m, a.shape[axis]), a.dtype)
    for idx in np.ndindex(a.shape):
        row = 0
        for i in range(a.ndim):
            if i != axis:
                row = row * a.shape[i] + idx[i]
        out[row, idx[axis]] = a[idx]
    return out


# ---- kernels: (1-D array, ddof) -> scalar; loops compile faster than numba's nditer ----

@register_jitable
def _sum(a, ddof):
    return np.sum(a)


@register_jitable
def _mean(a, ddof):
    return np.mean(a)


@register_jitable
def _prod(a, ddof):
    return np.prod(a)


@register_jitable
def _extremum(a, largest, name):
    if a.size == 0:
        raise ValueError("zero-size array to reduction operation " + name +
                         " which has no identity")
    m = a[0]
    for v in a:
        if v != v:  # NaN wins, as in NumPy
            return v
        if (v > m) if largest else (v < m):
            m = v
    return m


@register_jitable
def _max(a, ddof):
    return _extremum(a, True, "maximum")


@register_jitable
def _min(a, ddof):
    return _extremum(a, False, "minimum")


@register_jitable
def _var(a, ddof):
    # NumPy's definition: squared deviations summed, over max(n - ddof, 0).
    m = np.mean(a)
    ssd = 0.0
    for v in a:
        ssd += (v - m) * (v - m)
    dof = a.size - ddof
    if dof > 0:
        return ssd / dof
    return np.nan if ssd == 0 else np.inf


@register_jitable
def _std(a, ddof):
    return np.sqrt(_var(a, ddof))


_KERNELS = {"sum": _sum, "mean": _mean, "prod": _prod, "max": _max, "min": _min,
            "var": _var, "std": _std}
# Arguments numba's own implementation of each reduction accepts besides the array.
_NATIVE = {"sum": {"axis", "dtype"}}


@functools.cache
def _reduction(name, a, over_all, keep):
    """A jitable ``(a, axis, ddof) -> np.<name>(a, axis, keepdims=keep, ddof=ddof)``
    reducing over all axes if `over_all`, or None if the dtype is not supported.

    Cached on these compile-time facts alone, so that aliases and forwarded calls
    (np.max, np.amax, a.max) share one compiled implementation.
    """
    if name in ("max", "min", "var", "std") and isinstance(a.dtype, types.Complex):
        return None
    nd = a.ndim
    kernel = _KERNELS[name]
    cast = getattr(np, name)(np.ones(1, as_dtype(a.dtype))).dtype.type

    if over_all or nd == 1:
        ones = (1,) * nd

        def whole(a, axis, ddof):
            if axis is not None:
                normalize_axis(axis, 1)
            return cast(kernel(np.ravel(a), ddof))

        def whole_kept(a, axis, ddof):
            return np.full(ones, whole(a, axis, ddof))
        whole = register_jitable(whole)
        return register_jitable(whole_kept) if keep else whole

    nd_out = nd if keep else nd - 1

    def along(a, axis, ddof):
        ax = normalize_axis(axis, nd)
        rows = _rows(a, ax)
        out = np.empty(rows.shape[0], cast)
        for i in range(rows.shape[0]):
            out[i] = kernel(rows[i], ddof)
        return out.reshape(to_fixed_tuple(reduced_shape(a.shape, ax, keep), nd_out))
    return register_jitable(along)


def _implementation(name, a, axis, dtype, out, keepdims, ddof=0):
    """`_reduction` for the calls numba lacks; None for those it has (or nobody has)."""
    passed = {"axis": axis, "dtype": dtype, "out": out, "keepdims": keepdims, "ddof": ddof}
    given = {k for k, t in passed.items() if not omitted(t)}
    if given <= _NATIVE.get(name, set()) or not (_is_none(dtype) and _is_none(out)):
        return None
    if not (omitted(ddof) or isinstance(ddof, (types.Integer, types.Float))):
        return None
    if not isinstance(a, types.Array) or a.ndim == 0:
        return None
    if not (_is_none(axis) or isinstance(axis, types.Integer)):
        return None
    return _reduction(name, a, _is_none(axis), _static_bool(keepdims, "keepdims"))


def _forwards_natively(name, axis, dtype, out, keepdims, ddof=0) -> bool:
    """Whether an array method call is one numba's own function form handles."""
    if not omitted(keepdims):
        # Fails on a non-literal keepdims, so that numba retries with literals and
        # the forwarded call still sees a constant.
        _static_bool(keepdims, "keepdims")
    passed = {"axis": axis, "dtype": dtype, "out": out, "keepdims": keepdims, "ddof": ddof}
    return {k for k, t in passed.items() if not omitted(t)} <= _NATIVE.get(name, set())


# Three signature families, as in NumPy; each gives the np.<name> overload and the
# ndarray.<name> method, which forwards to np.<name> (see `_widen_method`).

def _family_dtype(name):
    np_fun = getattr(np, name)

    def function(a, axis=None, dtype=None, out=None, keepdims=False):
        impl = _implementation(name, a, axis, dtype, out, keepdims)
        if impl is not None:
            return lambda a, axis=None, dtype=None, out=None, keepdims=False: impl(a, axis, 0)

    def method(a, axis=None, dtype=None, out=None, keepdims=False):
        if not _forwards_natively(name, axis, dtype, out, keepdims):
            return (lambda a, axis=None, dtype=None, out=None, keepdims=False:
                    np_fun(a, axis, dtype, out, keepdims))
        if name == "sum":
            return lambda a, axis=None, dtype=None, out=None, keepdims=False: np.sum(a, axis, dtype)
        return lambda a, axis=None, dtype=None, out=None, keepdims=False: np_fun(a)
    return function, method


def _family_out(name):
    np_fun = getattr(np, name)

    def function(a, axis=None, out=None, keepdims=False):
        impl = _implementation(name, a, axis, None, out, keepdims)
        if impl is not None:
            return lambda a, axis=None, out=None, keepdims=False: impl(a, axis, 0)

    def method(a, axis=None, out=None, keepdims=False):
        if not _forwards_natively(name, axis, None, out, keepdims):
            return lambda a, axis=None, out=None, keepdims=False: np_fun(a, axis, out, keepdims)
        return lambda a, axis=None, out=None, keepdims=False: np_fun(a)
    return function, method


def _family_ddof(name):
    np_fun = getattr(np, name)

    def function(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        impl = _implementation(name, a, axis, dtype, out, keepdims, ddof)
        if impl is not None:
            return (lambda a, axis=None, dtype=None, out=None, ddof=0, keepdims=False:
                    impl(a, axis, ddof))

    def method(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        if not _forwards_natively(name, axis, dtype, out, keepdims, ddof):
            return (lambda a, axis=None, dtype=None, out=None, ddof=0, keepdims=False:
                    np_fun(a, axis, dtype, out, ddof, keepdims))
        return lambda a, axis=None, dtype=None, out=None, ddof=0, keepdims=False: np_fun(a)
    return function, method


def _widen_method(name, method):
    """Make numba's own ``ndarray.<name>`` typing and lowering call `method`.

    numba keys a method's lowering by (type, name) alone, so a second
    ``overload_method(types.Array, name)`` would shadow or break numba's; instead the
    one template numba registered for the method is pointed at `method`, which
    forwards each call to the ``np.<name>`` function form.
    """
    overload(method)(method)
    for template in builtin_registry.attributes:
        if (getattr(template, "is_method", False) and template.key is types.Array
                and getattr(template, "_attr", None) == name):
            template._overload_func = staticmethod(method)


def _unshadow_old_sum():
    """Make numba < 0.60's typing of ``np.sum`` decline ``keepdims``.

    Those versions type ``np.sum`` by redirecting to ``ndarray.sum``, which ignores
    ``keepdims`` and then fails to lower the call; declining lets the overload here
    take it. (Their ``a.sum(keepdims=...)`` method form stays unsupported.)
    """
    for value, typ in npydecl.registry.globals:
        if value is np.sum and isinstance(typ, types.Function):
            for template in typ.templates:
                if getattr(template, "method_name", None) == "sum":
                    generic = template.generic

                    def generic_without_keepdims(self, args, kws, generic=generic):
                        return None if "keepdims" in kws else generic(self, args, kws)
                    template.generic = generic_without_keepdims


_unshadow_old_sum()
for _name, _family, _functions in (
        ("sum", _family_dtype, (np.sum,)),
        ("mean", _family_dtype, (np.mean,)),
        ("prod", _family_dtype, (np.prod,)),
        ("max", _family_out, (np.max, np.amax)),
        ("min", _family_out, (np.min, np.amin)),
        ("var", _family_ddof, (np.var,)),
        ("std", _family_ddof, (np.std,))):
    _function, _method = _family(_name)
    for _np_fun in _functions:
        overload(_np_fun)(_function)
    _widen_method(_name, _method)


# ---- a.round(decimals): numba has np.round but not the method ----


@overload_method(types.Array, "round")
def _array_round(a, decimals=0, out=None):
    if _is_none(out):
        return lambda a, decimals=0, out=None: np.round(a, decimals)


# ---- np.squeeze ----
# Without an axis, NumPy's result rank depends on the runtime shape, which numba cannot
# type. We fix it at compile time to the common case -- exactly one axis of length 1
# for rank >= 2, nothing to squeeze for rank 1 -- and raise when the shape disagrees.

_SQUEEZE_RANK = ("numba fixes the rank of np.squeeze(a) at compile time: a.ndim - 1 "
                 "(exactly one axis of length 1), or 1 for a 1-D a of length other than "
                 "1; pass axis= for other shapes")


def _squeeze_axis(a, axis):
    """``np.squeeze(a, axis)`` for an integer axis (numba only)."""


@overload(_squeeze_axis)
def _squeeze_axis_typer(a, axis):
    nd_out = a.ndim - 1

    def impl(a, axis):
        ax = normalize_axis(axis, a.ndim)
        if a.shape[ax] != 1:
            raise ValueError("cannot select an axis to squeeze out which has size not "
                             "equal to one")
        # numba reshapes only C-contiguous arrays: a view of those, a copy of others.
        return np.ascontiguousarray(a).reshape(
            to_fixed_tuple(reduced_shape(a.shape, ax, False), nd_out))
    return impl


@overload(np.squeeze)
@overload_method(types.Array, "squeeze")
def _np_squeeze(a, axis=None):
    if not isinstance(a, types.Array):
        return None
    if isinstance(axis, types.Integer):
        return lambda a, axis=None: _squeeze_axis(a, axis)
    if not _is_none(axis):
        return None
    if a.ndim == 0:
        return lambda a, axis=None: a

    def squeeze_1d(a, axis=None):
        if a.shape[0] == 1:
            raise ValueError(_SQUEEZE_RANK)
        return a

    def squeeze_one(a, axis=None):
        unit = -1
        for i in range(a.ndim):
            if a.shape[i] == 1:
                if unit >= 0:
                    raise ValueError(_SQUEEZE_RANK)
                unit = i
        if unit < 0:
            raise ValueError(_SQUEEZE_RANK)
        return _squeeze_axis(a, unit)
    return squeeze_1d if a.ndim == 1 else squeeze_one


# ---- np.clip of a scalar ----

def _is_scalar_or_none(t) -> bool:
    return isinstance(t, (types.Number, types.Boolean)) or _is_none(t)


@overload(np.clip)
def _np_clip(a, a_min, a_max, out=None):
    if not (isinstance(a, (types.Number, types.Boolean)) and _is_scalar_or_none(a_min)
            and _is_scalar_or_none(a_max) and _is_none(out)):
        return None
    lo, hi = not _is_none(a_min), not _is_none(a_max)
    if lo and hi:
        return lambda a, a_min, a_max, out=None: np.minimum(np.maximum(a, a_min), a_max)
    if lo:
        return lambda a, a_min, a_max, out=None: np.maximum(a, a_min)
    if hi:
        return lambda a, a_min, a_max, out=None: np.minimum(a, a_max)
    return None


# ---- np.stack of numbers: numba's np.stack takes a tuple of arrays only ----

def _number_items(t) -> list | None:
    """The item types of a non-empty tuple or list of numbers (or booleans), else None."""
    if isinstance(t, types.BaseTuple):
        items = list(t.types)
    elif isinstance(t, types.List):
        items = [t.dtype]
    else:
        return None
    scalar = all(isinstance(u, (types.Number, types.Boolean)) for u in items)
    return items if items and scalar else None


@overload(np.stack)
def _np_stack_numbers(arrays, axis=0):
    # NumPy makes each number a 0-d array and stacks those: a vector of the numbers, of
    # their common dtype, whose one axis is 0 or -1
    items = _number_items(arrays)
    if items is None:
        return None
    dtype = np.result_type(*(as_dtype(u) for u in items))
    if isinstance(arrays, types.List):
        def from_list(arrays, axis=0):
            normalize_axis(axis, 1)
            if len(arrays) == 0:
                raise ValueError("need at least one array to stack")
            out = np.empty(len(arrays), dtype)
            for i in range(len(arrays)):
                out[i] = arrays[i]
            return out
        return from_list
    fills = "".join(f"    out[{i}] = arrays[{i}]\n" for i in range(len(items)))
    namespace = {"np": np, "dtype": dtype, "normalize_axis": normalize_axis}
    exec(f"def from_tuple(arrays, axis=0):\n    normalize_axis(axis, 1)\n"
         f"    out = np.empty({len(items)}, dtype)\n{fills}    return out\n", namespace)
    return namespace["from_tuple"]


# ---- a list as an index: x[[0, 0, 1]], x[idx, :] = v with idx = [0, 2] ----

def _list_index(t) -> bool:
    while isinstance(t, types.List):
        t = t.dtype
    return isinstance(t, (types.Integer, types.Boolean))


def as_index(index):
    """`index` as numba indexes with it: a list of ints (or bools) as an array."""
    return np.array(index) if isinstance(index, list) else index


@overload(as_index)
def _as_index(index):
    if isinstance(index, types.List):
        return lambda index: np.array(index)
    return lambda index: index


def _with_lists(index) -> int:
    """The length of a tuple index with a list in it (1 for a list alone); 0 for none."""
    if isinstance(index, types.List):
        return 1 if _list_index(index) else 0
    if isinstance(index, types.BaseTuple) and any(
            isinstance(t, types.List) and _list_index(t) for t in index.types):
        return len(index.types)
    return 0


@overload(operator.getitem)
def _getitem_list(a, index):
    n = _with_lists(index) if isinstance(a, types.Array) else 0
    if n == 1:
        return lambda a, index: a[as_index(index)]
    if n == 2:
        return lambda a, index: a[as_index(index[0]), as_index(index[1])]
    if n == 3:
        return lambda a, index: a[as_index(index[0]), as_index(index[1]),
                                  as_index(index[2])]
    return None


@overload(operator.setitem)
def _setitem_list(a, index, v):
    n = _with_lists(index) if isinstance(a, types.Array) else 0
    if n == 1:
        def one(a, index, v):
            a[as_index(index)] = v
        return one
    if n == 2:
        def two(a, index, v):
            a[as_index(index[0]), as_index(index[1])] = v
        return two
    if n == 3:
        def three(a, index, v):
            a[as_index(index[0]), as_index(index[1]), as_index(index[2])] = v
        return three
    return None


# ---- a boolean mask of rank >= 2 as an index: x[m], x[m] = v ----
# numba types x[m] as if m were an integer index (a result of the wrong rank) and its
# lowering asserts m is 1-D: its templates decline such an index (`_declines_masks`), and
# the forms here take a mask alone, of rank <= x's, as NumPy does: the entries (or the
# blocks of x's other axes) where m holds, in C order.

def _mask(t) -> bool:
    return isinstance(t, types.Array) and t.ndim >= 2 and isinstance(t.dtype, types.Boolean)


def _declines_masks(template) -> None:
    generic = template.generic

    def generic_without_masks(self, args, kws, generic=generic):
        parts = args[1].types if isinstance(args[1], types.BaseTuple) else (args[1],)
        if any(_mask(t) for t in parts) or \
                template is arraydecl.GetItemBuffer and isinstance(args[1], types.EllipsisType):
            return None   # (`x[...]` alone: typed, but numba has no lowering of it)
        return generic(self, args, kws)
    template.generic = generic_without_masks


_declines_masks(arraydecl.GetItemBuffer)
_declines_masks(arraydecl.SetItemBuffer)


@overload(operator.getitem)
def _getitem_ellipsis(a, index):
    """`x[...]` alone: the whole array (a view of it, as NumPy's)."""
    if isinstance(a, types.Array) and isinstance(index, types.EllipsisType):
        return lambda a, index: a
    return None


@register_jitable
def _masked_count(shape, mask):
    """How many entries `mask` selects, checked against the axes of `shape` it covers."""
    for i in range(mask.ndim):
        if mask.shape[i] != shape[i]:
            raise IndexError("boolean index did not match indexed array")
    return np.count_nonzero(mask)


def _mask_rank(a, index) -> int | None:
    """The rank of the mask `index` that indexes array `a` (None: not such an index)."""
    if not (isinstance(a, types.Array) and _mask(index)):
        return None
    if index.ndim > a.ndim:
        raise TypingError(f"too many indices for array: {a.ndim}-dimensional, but "
                          f"a mask of {index.ndim} dimensions indexes it")
    return index.ndim


@overload(operator.getitem)
def _getitem_mask(a, index):
    k = _mask_rank(a, index)
    if k is None:
        return None

    def impl(a, index):
        out = np.empty((_masked_count(a.shape, index),) + a.shape[k:], a.dtype)
        c = 0
        for at in np.ndindex(index.shape):
            if index[at]:
                out[c] = a[at]
                c += 1
        return out
    return impl


@overload(operator.setitem)
def _setitem_mask(a, index, v):
    k = _mask_rank(a, index)
    if k is None:
        return None
    if isinstance(v, (types.Number, types.Boolean)):
        def scalar(a, index, v):
            _masked_count(a.shape, index)
            for at in np.ndindex(index.shape):
                if index[at]:
                    a[at] = v
        return scalar
    if not isinstance(v, types.Array):
        return None

    def values(a, index, v):   # v broadcast to (count,) + a's other axes
        w = np.broadcast_to(v, (_masked_count(a.shape, index),) + a.shape[k:])
        c = 0
        for at in np.ndindex(index.shape):
            if index[at]:
                a[at] = w[c]
                c += 1
    return values


# ---- reductions of a scalar, np.size, math.log2 (numba 0.59 has none of them) ----

def _reduce_scalar(fun, impl):
    @overload(fun)
    def _scalar(a):
        if isinstance(a, (types.Number, types.Boolean)):
            return impl
        return None


for _fun in (np.sum, np.max, np.amax, np.min, np.amin, np.prod):
    _reduce_scalar(_fun, lambda a: a)
_reduce_scalar(np.mean, lambda a: a * 1.0)
_reduce_scalar(np.size, lambda a: 1)


@overload(np.size)
def _np_size(a):
    if isinstance(a, types.Array):
        return lambda a: a.size
    return None


@overload(math.log2)
def _math_log2(x):
    if isinstance(x, (types.Number, types.Boolean)):
        return lambda x: np.log2(x)
    return None


# ---- SciPy (and NumPy) functions numba does not compile: called in object mode ----

_OBJECT_MODE: set[int] = set()


def object_mode(fun) -> bool:
    """Let compiled code call `fun`, a SciPy or NumPy function numba has no implementation
    of (`scipy.special.multigammaln`, `gammaln`), through `numba.objmode`: the rest of the
    gradient stays compiled (issue 26 #14: one such call sent all of it to Python). The
    result's type is that of `fun` on ones of the arguments' types. Whether `fun` was
    taken (or numba compiles it already); anything else stays as it was."""
    import numba

    module = getattr(fun, "__module__", None) or ""
    if id(fun) in _OBJECT_MODE:
        return True
    if not (isinstance(fun, np.ufunc) or callable(fun) and module.split(".")[0] in (
            "scipy", "numpy")) or isinstance(fun, type):
        return False
    try:
        numba.typeof(fun)
        return False  # numba's own
    except ValueError:
        pass

    @overload(fun)
    def _in_object_mode(*args):
        args = args[0].types if len(args) == 1 and isinstance(args[0], types.StarArgTuple) \
            else args
        try:
            result = numba.typeof(fun(*map(_ones, args)))
        except Exception:  # noqa: BLE001 (untypable arguments or result: numba says so)
            return None
        if isinstance(result, types.Array):
            # any layout: on ones the result may look contiguous where on the real
            # arguments it is a strided view (np.moveaxis), read wrongly as contiguous
            result = result.copy(layout="A")

        def impl(*args):
            with numba.objmode(out=result):
                out = fun(*args)
            return out
        return impl

    _OBJECT_MODE.add(id(fun))
    return True


def _ones(t):
    """A value of numba type `t`: ones, as an argument to learn a function's result type."""
    if isinstance(t, types.Boolean):
        return True
    if isinstance(t, types.Number):
        return as_dtype(t).type(1)
    if isinstance(t, types.Array) and t.layout in "CA":
        return np.ones((1,) * t.ndim, as_dtype(t.dtype))
    raise TypeError(f"no sample value of {t}")
