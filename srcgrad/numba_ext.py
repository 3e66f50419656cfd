"""NumPy forms that numba's nopython mode rejects, made to compile with NumPy's results.

Generated gradient code is plain NumPy, and so is the user code srcgrad compiles next to
it, but numba (0.59-0.68) types only part of NumPy's reduction API. Importing this
module registers numba overloads for:

* ``np.sum(a, axis, keepdims=...)`` and ``a.sum(...)``: numba has no ``keepdims``;
* ``np.mean``, ``np.max``/``np.amax``, ``np.min``/``np.amin``, ``np.prod``, ``np.var``,
  ``np.std`` and the array methods of the same names, with ``axis`` (an integer, negative
  allowed), ``keepdims`` and, for ``var``/``std``, ``ddof``: numba takes the array alone;
* ``np.squeeze(a, axis)`` and ``a.squeeze(axis)`` with an integer axis;
* ``np.clip(scalar, lo, hi)``: numba's ``np.clip`` needs an array first argument.

Every overload returns ``None`` for the argument types numba implements itself, so a
call never has two candidate implementations and numba's own code keeps serving the
plain forms. ``keepdims`` must be a compile-time constant (a literal or omitted) since
it fixes the rank of the result; ``axis`` may be a runtime integer. Not covered:
tuple axes (except ``np.sum``'s own), ``dtype=``/``out=`` arguments, complex
``var``/``std`` along an axis, and ``np.squeeze(a)`` without an axis on arrays of rank
1 or more, whose result rank depends on the runtime shape and so cannot be typed.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.core.typing.templates import builtin_registry
from numba.extending import overload, overload_method, register_jitable
from numba.np import arraymath  # noqa: F401  (registers the method templates widened here)
from numba.np.numpy_support import as_dtype
from numba.np.unsafe.ndarray import to_fixed_tuple


def _omitted(t) -> bool:
    """Whether an optional argument was left out (overloads then see its default)."""
    return isinstance(t, (types.Omitted, bool, int)) or t is None


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


@register_jitable
def normalize_axis(axis, ndim):
    """`axis` counted from the front, checked against `ndim` as NumPy does."""
    if axis < -ndim or axis >= ndim:
        raise np.exceptions.AxisError("axis is out of bounds for array")
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
def _max(a, ddof):
    if a.size == 0:
        raise ValueError("zero-size array to reduction operation maximum which has no "
                         "identity")
    m = a[0]
    for v in a:
        if v != v:  # NaN wins, as in NumPy
            return v
        if v > m:
            m = v
    return m


@register_jitable
def _min(a, ddof):
    if a.size == 0:
        raise ValueError("zero-size array to reduction operation minimum which has no "
                         "identity")
    m = a[0]
    for v in a:
        if v != v:
            return v
        if v < m:
            m = v
    return m


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


def _reduction(name, a, axis, keepdims):
    """A jitable ``(a, axis, ddof) -> np.<name>(a, axis, keepdims=..., ddof=ddof)``, or None."""
    if not isinstance(a, types.Array) or a.ndim == 0:
        return None
    if not (_is_none(axis) or isinstance(axis, types.Integer)):
        return None
    if name in ("max", "min", "var", "std") and isinstance(a.dtype, types.Complex):
        return None
    keep = _static_bool(keepdims, "keepdims")
    nd = a.ndim
    kernel = _KERNELS[name]
    cast = getattr(np, name)(np.ones(1, as_dtype(a.dtype))).dtype.type

    if _is_none(axis) or nd == 1:
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
    given = {k for k, t in passed.items() if not _omitted(t)}
    if given <= _NATIVE.get(name, set()) or not (_is_none(dtype) and _is_none(out)):
        return None
    if not (_omitted(ddof) or isinstance(ddof, (types.Integer, types.Float))):
        return None
    return _reduction(name, a, axis, keepdims)


def _forwards_natively(name, axis, dtype, out, keepdims, ddof=0) -> bool:
    """Whether an array method call is one numba's own function form handles."""
    if not _omitted(keepdims):
        # Fails on a non-literal keepdims, so that numba retries with literals and
        # the forwarded call still sees a constant.
        _static_bool(keepdims, "keepdims")
    passed = {"axis": axis, "dtype": dtype, "out": out, "keepdims": keepdims, "ddof": ddof}
    return {k for k, t in passed.items() if not _omitted(t)} <= _NATIVE.get(name, set())


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


# ---- np.squeeze ----

@overload(np.squeeze)
@overload_method(types.Array, "squeeze")
def _np_squeeze(a, axis=None):
    if not isinstance(a, types.Array):
        return None
    if _is_none(axis):
        if a.ndim == 0:
            return lambda a, axis=None: a
        raise TypingError("srcgrad: np.squeeze(a) without axis has a rank that depends on "
                          "a's runtime shape, which numba cannot type; pass axis=")
    if not isinstance(axis, types.Integer):
        return None

    nd_out = a.ndim - 1

    def impl(a, axis=None):
        ax = normalize_axis(axis, a.ndim)
        if a.shape[ax] != 1:
            raise ValueError("cannot select an axis to squeeze out which has size "
                             "not equal to one")
        # numba reshapes only C-contiguous arrays: a view of those, a copy of others.
        return np.ascontiguousarray(a).reshape(
            to_fixed_tuple(reduced_shape(a.shape, ax, False), nd_out))
    return impl


# ---- np.clip of a scalar ----

@overload(np.clip)
def _np_clip(a, a_min, a_max, out=None):
    if not isinstance(a, (types.Number, types.Boolean)) or not _is_none(out):
        return None
    lo, hi = not _is_none(a_min), not _is_none(a_max)
    if lo and hi:
        return lambda a, a_min, a_max, out=None: np.minimum(np.maximum(a, a_min), a_max)
    if lo:
        return lambda a, a_min, a_max, out=None: np.maximum(a, a_min)
    if hi:
        return lambda a, a_min, a_max, out=None: np.minimum(a, a_max)
    return None
