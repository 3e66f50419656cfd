"""scipy.special under numba: the compiled forms of the functions srcgrad differentiates,
and the helpers their rules call (`i1_slope`, logsumexp's `times_weights`), each beside
its numba form.

numba compiles no scipy.special function. The elementwise ones call the float64
specialisations scipy exports from `scipy.special.cython_special` (found by their C
signature, as the exported names of fused functions differ between scipy releases),
declared to LLVM under srcgrad's own symbol names so that numba's disk cache stays valid
across processes. `polygamma` has no such export: its compiled form sums the Hurwitz zeta
function (Euler-Maclaurin), psi^(n)(x) = (-1)^(n+1) n! zeta(n+1, x). `logsumexp`,
`softmax` and `log_softmax` loop over the reduced axis of `a` seen as (before, n, after)
blocks, shifted by the finite maximum as SciPy's are (loops compile in a fraction of the
time NumPy reductions with keepdims take)."""

from __future__ import annotations

import ctypes
import math
import re

import llvmlite.binding as ll
import numpy as np
import scipy.special as special
import scipy.special.cython_special as cython_special
from numba import types
from numba.core.errors import TypingError
from numba.extending import get_cython_function_address, overload, register_jitable
from numba.np.unsafe.ndarray import to_fixed_tuple

from ..errors import MissingRule
from ..numba_ext import _static_bool, normalize_axis, reduced_shape

_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype, _capsule_name.argtypes = ctypes.c_char_p, [ctypes.py_object]

_SIGN = ("scipy.special.logsumexp(return_sign=True) is not supported (no gradient rule, "
         "no compiled form): take the log of the absolute value of the weighted sum")


def _export(name: str, nargs: int) -> types.ExternalFunction:
    """cython_special's float64 form of `name` (`erf` -> `__pyx_fuse_1erf`), callable from
    compiled code as ``f(x, ..., 0)`` (the last argument is Cython's skip-dispatch flag)."""
    want = f"double ({', '.join(['double'] * nargs)}, int __pyx_skip_dispatch)"
    for key, capsule in cython_special.__pyx_capi__.items():
        if re.fullmatch(rf"(__pyx_fuse_\d+)?{name}", key) and \
                _capsule_name(capsule).decode() == want:
            symbol = f"srcgrad_special_{name}"
            ll.add_symbol(symbol, get_cython_function_address(
                "scipy.special.cython_special", key))
            return types.ExternalFunction(symbol, types.float64(*[types.float64] * nargs,
                                                                types.intc))
    raise LookupError(f"scipy.special.cython_special exports no float64 {name}")


def _real(t) -> bool:
    return isinstance(t, (types.Float, types.Integer, types.Boolean))


def _number(t) -> bool:
    """A real number, or a 0-d array of one (`np.where` of numbers): a SciPy ufunc gives a
    number of either, as NumPy's does. (numba would make the ufunc's call on a 0-d array an
    array expression, which fails to broadcast to its 0-d result: fuzz seed 10871151.)"""
    return _real(t) or isinstance(t, types.Array) and t.ndim == 0 and _real(t.dtype)


def _float(x):
    """`x`, a number or a 0-d array, as a float (compiled code's `float` takes numbers)."""
    return float(x)


@overload(_float)
def _float_typer(x):
    if isinstance(x, types.Array):
        return lambda x: float(x[()])
    return lambda x: float(x)


def _unary(fun, scalar) -> None:
    """The numba form of `fun`, a function of one number applied entry by entry, from
    `scalar`, its jitable form on a float."""
    @overload(fun)
    def _typer(x):
        if _number(x):
            return lambda x: scalar(_float(x))
        if isinstance(x, types.Array) and _real(x.dtype):
            def array(x):
                flat = x.ravel()
                out = np.empty(flat.size)
                for i in range(flat.size):
                    out[i] = scalar(float(flat[i]))
                return out.reshape(x.shape)
            return array
        return None


def _called(c):
    """A C function of one double (and Cython's flag) as a jitable function of a float."""
    return register_jitable(lambda x: c(x, 0))


def _binary(fun, c) -> None:
    """The numba form of the scipy ufunc `fun` of two arguments (broadcast)."""
    @overload(fun)
    def _typer(x, y):
        if _number(x) and _number(y):
            return lambda x, y: c(_float(x), _float(y), 0)
        if not all(_real(t) or isinstance(t, types.Array) and _real(t.dtype) for t in (x, y)):
            return None

        def arrays(x, y):
            xs, ys = np.broadcast_arrays(np.asarray(x), np.asarray(y))
            out = np.empty(xs.shape)
            for i in np.ndindex(xs.shape):
                out[i] = c(float(xs[i]), float(ys[i]), 0)
            return out
        return arrays


_C = {name: _export(name, 1) for name in (
    "expit", "logit", "gammaln", "psi", "gamma", "erf", "erfc", "erfinv", "ndtr", "log_ndtr",
    "ndtri", "entr", "i0", "i1")}
for _name, _c in _C.items():
    _unary(getattr(special, _name), _called(_c))
for _name in ("betaln", "xlogy", "xlog1py", "rel_entr"):
    _binary(getattr(special, _name), _export(_name, 2))
_I0, _I1, _PSI = _C["i0"], _C["i1"], _C["psi"]


def i1_slope(x):
    """The derivative of the modified Bessel function i1: i0(x) - i1(x) / x, and its
    limit 1/2 at x = 0.

    >>> float(i1_slope(0.0))
    0.5
    """
    x = np.asarray(x, dtype=float)
    ratio = special.i1(x) / np.where(x == 0.0, 1.0, x)
    return np.where(x == 0.0, 0.5, special.i0(x) - ratio)[()]


@register_jitable
def _i1_slope(x):
    return 0.5 if x == 0.0 else _I0(x, 0) - _I1(x, 0) / x


_unary(i1_slope, _i1_slope)

# ---- polygamma ----

# B_2, B_4, ..., B_20 (Bernoulli numbers), for Euler-Maclaurin's tail of the zeta sum
_BERNOULLI = np.array([1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6,
                       -3617 / 510, 43867 / 798, -174611 / 330])


@register_jitable
def _hurwitz_zeta(s, q):
    """zeta(s, q) = sum over k >= 0 of (q + k)^-s, for an integer s >= 2: the first terms
    summed until q + k >= s + 20, the rest by Euler-Maclaurin (10 Bernoulli terms give
    float64 accuracy there)."""
    if q <= 0.0 and q == math.floor(q):
        return np.inf
    total = 0.0
    a = q
    while a < s + 20.0:
        total += 1.0 / a ** s
        a += 1.0
    power = 1.0 / a ** s
    total += power * a / (s - 1) + 0.5 * power
    factor = s / 2.0   # s (s+1) ... (s+2j-2) / (2j)!
    power /= a
    for j in range(_BERNOULLI.size):
        total += _BERNOULLI[j] * factor * power
        factor *= (s + 2 * j + 1) * (s + 2 * j + 2) / ((2 * j + 3) * (2 * j + 4))
        power /= a * a
    return total


@register_jitable
def _polygamma(n, x):
    """psi^(n)(x): digamma for n = 0, else (-1)^(n+1) n! zeta(n + 1, x); NaN for an n
    that is not a natural number (as SciPy's)."""
    if n < 0 or n != math.floor(n):
        return np.nan
    k = int(n)
    if k == 0:
        return _PSI(float(x), 0)
    sign = 1.0 if k % 2 == 1 else -1.0
    return sign * math.gamma(k + 1.0) * _hurwitz_zeta(k + 1, float(x))


@overload(special.polygamma)
def _polygamma_typer(n, x):
    if not _real(n):
        raise TypingError("srcgrad: scipy.special.polygamma compiles with one order n (a "
                          "number), not an array of them")
    if _real(x):
        return lambda n, x: _polygamma(n, x)
    if isinstance(x, types.Array) and _real(x.dtype):
        def array(n, x):
            flat = x.ravel()
            out = np.empty(flat.size)
            for i in range(flat.size):
                out[i] = _polygamma(n, flat[i])
            return out.reshape(x.shape)
        return array
    return None


# ---- log-sum-exp and softmax: loops over (before, n, after) blocks, fast to compile ----


def _omitted_or_none(t) -> bool:
    return t is None or isinstance(t, (types.Omitted, types.NoneType))


@register_jitable
def _blocks(a, axis):
    """`a` as a C-ordered float (before, n, after) array, n the length of `axis`."""
    k = normalize_axis(axis, a.ndim)
    n, before = a.shape[k], 1
    for i in range(k):
        before *= a.shape[i]
    after = a.size // (before * n) if before * n else 0
    return np.ascontiguousarray(a).astype(np.float64).reshape((before, n, after))


@register_jitable
def _shift(x, p, q):
    """The maximum of x[p, :, q], 0 if it is not finite (SciPy's shift: an infinite entry
    gives an infinite result, not NaN)."""
    m = -np.inf
    for j in range(x.shape[1]):
        m = max(m, x[p, j, q])
    return m if np.isfinite(m) else 0.0


@register_jitable
def _logsumexp_blocks(x, w):
    """log sum_j w[p, j, q] exp(x[p, j, q]) per (p, q) (w of one entry: all weights 1)."""
    out = np.empty((x.shape[0], x.shape[2]))
    for p in range(x.shape[0]):
        for q in range(x.shape[2]):
            m, total = _shift(x, p, q), 0.0
            for j in range(x.shape[1]):
                total += np.exp(x[p, j, q] - m) * (w[p, j, q] if w.size > 1 else w[0, 0, 0])
            out[p, q] = np.log(total) + m
    return out


@register_jitable
def _softmax_blocks(x, log):
    """softmax (or, if `log`, log_softmax) of each x[p, :, q]."""
    out = np.empty(x.shape)
    for p in range(x.shape[0]):
        for q in range(x.shape[2]):
            m, total = _shift(x, p, q), 0.0
            for j in range(x.shape[1]):
                out[p, j, q] = x[p, j, q] - m
                total += np.exp(out[p, j, q])
            for j in range(x.shape[1]):
                out[p, j, q] = out[p, j, q] - np.log(total) if log else \
                    np.exp(out[p, j, q]) / total
    return out


def _over(a, axis):
    """The implementation of `(a, axis) -> blocks` for a compile-time `axis` (None: all
    of a, one block)."""
    if _omitted_or_none(axis):
        return register_jitable(lambda a, axis: _blocks(a.ravel(), 0))
    return register_jitable(lambda a, axis: _blocks(a, axis))


@overload(special.logsumexp)
def _logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    if not isinstance(a, types.Array):
        return None
    if not (return_sign is False or isinstance(return_sign, types.Omitted) or isinstance(
            return_sign, types.BooleanLiteral) and not return_sign.literal_value):
        raise TypingError(f"srcgrad: {_SIGN}")
    keep, over, nd = _static_bool(keepdims, "keepdims"), _over(a, axis), a.ndim
    if _omitted_or_none(b):
        values = register_jitable(lambda a, axis, b: _logsumexp_blocks(
            over(a, axis), np.ones((1, 1, 1))))
    else:
        values = register_jitable(lambda a, axis, b: _logsumexp_blocks(
            over(a, axis), over(np.broadcast_to(b, a.shape), axis)))

    if _omitted_or_none(axis):
        ones = (1,) * nd
        if keep:
            return lambda a, axis=None, b=None, keepdims=False, return_sign=False: \
                np.full(ones, values(a, axis, b)[0, 0])
        return lambda a, axis=None, b=None, keepdims=False, return_sign=False: \
            values(a, axis, b)[0, 0]

    nd_out = nd if keep else nd - 1

    def along(a, axis=None, b=None, keepdims=False, return_sign=False):
        shape = reduced_shape(a.shape, normalize_axis(axis, nd), keep)
        return values(a, axis, b).reshape(to_fixed_tuple(shape, nd_out))
    return along


def _softmax_form(log):
    def typer(x, axis=None):
        if not isinstance(x, types.Array):
            return None
        over = _over(x, axis)

        def impl(x, axis=None):
            # (before, n, after) is x's C order: the result reshapes back as it is
            return _softmax_blocks(over(x, axis), log).reshape(x.shape)
        return impl
    return typer


overload(special.softmax)(_softmax_form(False))
overload(special.log_softmax)(_softmax_form(True))


def times_weights(g, b=None, return_sign=False):
    """`g` times logsumexp's weights `b` (g itself where there are none), in the adjoint
    of ``logsumexp(a, axis, b)``: the weights are not differentiated.

    >>> times_weights(np.ones(2), np.array([2.0, 3.0]))
    array([2., 3.])
    """
    if return_sign:
        raise MissingRule(_SIGN)
    if b is None:
        return g
    if np.broadcast_shapes(np.shape(g), np.shape(b)) != np.shape(g):
        raise MissingRule("scipy.special.logsumexp with weights b of more dimensions than "
                          "a has no gradient rule: broadcast a first")
    return g * b


@overload(times_weights)
def _times_weights_typer(g, b=None, return_sign=False):
    if isinstance(b, types.Array) and (not isinstance(g, types.Array) or b.ndim > g.ndim):
        raise TypingError("srcgrad: scipy.special.logsumexp with weights b of more "
                          "dimensions than a has no gradient rule")

    def impl(g, b=None, return_sign=False):
        if return_sign:
            raise MissingRule(_SIGN)
        return g if b is None else g * b
    return impl
