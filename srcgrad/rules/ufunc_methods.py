"""The methods of NumPy's ufuncs: the records of `ufunc.reduce` (add, multiply, maximum,
minimum, fmax, fmin, logaddexp, logaddexp2), `ufunc.accumulate` (add, multiply, maximum,
minimum) and `ufunc.outer` (every binary ufunc of two floats whose rule is elementwise),
and the stand-ins generated code calls in their place (numba compiles no ufunc method).

A reduction is the function it names: ``np.add.reduce(a, axis)`` is np.sum, multiply's
np.prod, maximum's and minimum's np.max and np.min (dy split evenly among ties, as in JAX),
fmax's and fmin's the extremum of the entries that are not NaN (np.nanmax's rule: a NaN
gets no gradient; a slice of NaNs alone gives NaN, and its entries 0), logaddexp's the
log of the sum of the exponentials (scipy.special.logsumexp: its gradient is
exp(a - y)), logaddexp2's in base 2 (2^(a - y)).
Their rules call the reductions' own helpers (`sum_grad`, `extremum_grad`,
`prod_others`). NumPy's default axis is 0 here, not None; None and tuples of axes are
taken as NumPy takes them. `initial=c` and `where=m` are written by normalize as
``ufunc(ufunc.reduce(np.where(m, a, identity), ...), c)`` (`_reduce_expanded`), but
logaddexp's where= (refused); fmax's and fmin's put NaN, which they skip, for the
identity they lack, and reduce with `fmax_reduce_or_skipped`, NaN of an empty slice, so
that an empty array or axis gives c with all of dy to c, as np.max's initial= does. A
float64 `dtype=` (np.float64, float, 'f8', ...) of a reduction or an accumulation is
differentiated as if not given (the records' `casts`; compiled, the stand-ins compute
in float64); another dtype and `out=` are refused.

An accumulation is np.cumsum (add) or np.cumprod (multiply) along the axis (their rules'
helpers, zeros in the array included); maximum's and minimum's is the running extremum
y_i = maximum(y_{i-1}, a_i), whose gradient is that recursion's under np.maximum's rule:
dy_i goes to a_i where a_i exceeds y_{i-1}, back along the run where it does not, and
half each way on a tie. JAX's lax.cummax applies the same rule over the tree of its
associative scan: off ties, and on ties of up to three entries, the two agree; on a
longer tie JAX splits by its tree (jax.grad of cummax([1, 1, 1, 1])[-1] is 1/4 each,
this 1/8, 1/8, 1/4, 1/2). logaddexp's is the running log-sum-exp y_j = log sum_{i<=j}
exp(a_i): dy_j reaches a_i (i <= j) weighted by exp(a_i - y_j), so a_i gets
exp(a_i - y_i) c_i with c_i = dy_i + exp(y_i - y_{i+1}) c_{i+1} summed from the end, and
the tangent is t_j = exp(y_{j-1} - y_j) t_{j-1} + exp(a_j - y_j) da_j; y never decreases
and y_i >= a_i, so no exponential exceeds 1 (logaddexp2's: powers of 2). `axis=None` is refused by
NumPy itself, `out=` by srcgrad.

``ufunc.outer(a, b)`` is the ufunc of a reshaped to a.shape + (1,) * b.ndim and b
(`outer_operand`): its rule and tangent are made from the ufunc's own elementwise rule,
applied to those operands, a's gradient reshaped back to a's shape (`_OuterRule`).
"""

import copy
import inspect
from dataclasses import dataclass
from typing import Any

import gast
import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype, from_dtype
from numba.np.unsafe.ndarray import to_fixed_tuple

from .. import builder as b
from ..errors import RuleError
from ..numba_ext import _is_none, _static_bool
from ..runtime import broadcast_like, extremum_grad, reshape_as, sum_grad, unbroadcast
from ..runtime.reductions import _reduced_axes, _reduced_index
from . import (
    Rule,
    Tangent,
    _op,
    describe,
    linear,
    lookup,
    nondifferentiable,
    records,
    rule,
    tangent,
)
from .cumulative import cumprod_grad, cumprod_tangent, cumsum_grad, lanes
from .elementwise import prod_others
from .reduction_options import _float64, _identity, extremum_or

REDUCED = (np.add, np.multiply, np.maximum, np.minimum, np.fmax, np.fmin, np.logaddexp,
           np.logaddexp2)
ACCUMULATED = (np.add, np.multiply, np.maximum, np.minimum, np.logaddexp, np.logaddexp2)


def _refused(options) -> str | None:
    """Why a call's options are refused: srcgrad differentiates a method's plain form."""
    given = [f"{k}=" for k in ("dtype", "out") if options.get(k) is not None]
    given += ["initial="] if "initial" in options else []
    given += ["where="] if options.get("where", True) is not True else []
    if given:
        return (f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} not supported "
                f"(no gradient rule): reduce or accumulate the plain way, then convert, "
                f"mask or combine the result")
    return None


# ---- the stand-ins: each ufunc method's Python form (NumPy's) beside its numba form ----


def _named(form, name: str, doc: str):
    form.__name__ = form.__qualname__ = name
    form.__doc__ = doc
    globals()[name] = form
    return form


# (each form's closure holds the ufunc, which the disk cache's key names, not its method)


def _reduce_form(ufunc):
    def form(array, axis=0, dtype=None, out=None, keepdims=False):
        return ufunc.reduce(array, axis=axis, dtype=dtype, out=out, keepdims=keepdims)
    name = f"{ufunc.__name__}_reduce"
    overload(_named(form, name, f"np.{ufunc.__name__}.reduce, which generated code calls "
                    f"in its place (numba has no ufunc methods)"))(_reduce_typer(ufunc))
    return form


def _reduce_or_skipped_form(ufunc):
    """``ufunc.reduce`` (np.fmax's or np.fmin's) that gives what the ufunc skips, NaN, for
    an empty slice instead of raising (the lowest or highest integer of an integer
    result): ``np.fmax(fmax_reduce_or_skipped(a, ...), c)`` is
    ``np.fmax.reduce(a, ..., initial=c)``, an empty slice's too."""
    largest = ufunc is np.fmax

    def form(array, axis=0, dtype=None, out=None, keepdims=False):
        array = np.asarray(array)
        kind = np.dtype(array.dtype if dtype is None else dtype)
        skipped = np.nan if kind.kind in "fc" else _identity(kind, largest)
        return ufunc.reduce(array, axis=axis, dtype=dtype, out=out, keepdims=keepdims,
                            initial=skipped)
    name, doc = f"{ufunc.__name__}_reduce_or_skipped", _reduce_or_skipped_form.__doc__
    overload(_named(form, name, doc.replace("``ufunc.reduce`` (np.fmax's or np.fmin's)",
                                            f"np.{ufunc.__name__}.reduce")))(
        _reduce_typer(ufunc, or_skipped=True))
    return form


def _accumulate_form(ufunc):
    def form(array, axis=0, dtype=None, out=None):
        return ufunc.accumulate(array, axis=axis, dtype=dtype, out=out)
    name = f"{ufunc.__name__}_accumulate"
    overload(_named(form, name, f"np.{ufunc.__name__}.accumulate, which generated code "
                    f"calls in its place (numba has no ufunc methods)"))(
        _accumulate_typer(ufunc))
    return form


def _plain(array, dtype, out) -> None:
    if not isinstance(array, types.Array) or array.ndim == 0:
        raise TypingError("srcgrad: a ufunc method compiles for an array of 1 or more "
                          "dimensions")
    if not ((_is_none(dtype) or _float64(dtype)) and _is_none(out)):
        raise TypingError("srcgrad: a ufunc method compiles without out= and with no "
                          "dtype= but float64")


def _given(axis):
    """An axis's numba type (the default's where the call leaves it out)."""
    if isinstance(axis, types.Omitted):
        axis = axis.value
    return axis if isinstance(axis, types.Type) else types.none if axis is None else \
        types.literal(axis)


def _result_type(ufunc, method, array, dtype):
    """The numba type of the entries of ufunc.<method> of an array of `array`'s type
    (float64 where the call's dtype is)."""
    if _float64(dtype):
        return types.float64
    return from_dtype(getattr(ufunc, method)(np.ones(1, as_dtype(array.dtype))).dtype)


@register_jitable
def _combine_into(a, reduced, combine, has_identity, identity, cast):
    """ufunc.reduce of `a` over the axes `reduced` (a mask), flat in C order of the kept
    axes: each slice folded from its first entry in C order, as NumPy folds it."""
    n = 1
    for i in range(a.ndim):
        if not reduced[i]:
            n *= a.shape[i]
    out = np.empty(n, cast)
    seen = np.zeros(n, np.bool_)
    for idx in np.ndindex(a.shape):
        k = _reduced_index(idx, a.shape, reduced)
        if seen[k]:
            out[k] = combine(out[k], a[idx])
        else:
            out[k], seen[k] = a[idx], True
    for k in range(n):
        if not seen[k]:
            if not has_identity:
                raise ValueError("zero-size array to reduction operation which has no "
                                 "identity")
            out[k] = identity
    return out


@register_jitable
def _kept_shape(shape, reduced, keep, count):
    """The shape of a reduction over `reduced` of an array of `shape` (an intp array);
    ValueError if the axes given (`count` of them) repeat one."""
    if count >= 0 and np.sum(reduced) != count:
        raise ValueError("duplicate value in 'axis'")
    out = np.empty(len(shape) - (0 if keep else np.sum(reduced)), np.intp)
    j = 0
    for i in range(len(shape)):
        if not reduced[i] or keep:
            out[j] = 1 if reduced[i] else shape[i]
            j += 1
    return out


def _reduce_typer(ufunc, or_skipped=False):
    """numba's form of ``ufunc.reduce``; `or_skipped`: an empty slice gives what np.fmax
    or np.fmin skip (`_reduce_or_skipped_form`), not the ufunc's identity or an error."""
    combine = register_jitable(lambda u, v: ufunc(u, v))

    def typer(array, axis=0, dtype=None, out=None, keepdims=False):
        _plain(array, dtype, out)
        keep, nd = _static_bool(keepdims, "keepdims"), array.ndim
        cast = _result_type(ufunc, "reduce", array, dtype)
        has_identity = or_skipped or ufunc.identity is not None
        if not or_skipped:
            identity = ufunc.identity if has_identity else 0
        elif isinstance(cast, types.Float):
            identity = np.nan
        else:
            identity = _identity(as_dtype(cast), ufunc is np.fmax)
        omitted, axis = not isinstance(axis, types.Type) or isinstance(
            axis, types.Omitted), _given(axis)
        if omitted and isinstance(axis, types.Integer):
            static = (axis.literal_value,)
        elif isinstance(axis, types.BaseTuple) and all(
                isinstance(t, types.IntegerLiteral) for t in axis):
            static = tuple(t.literal_value for t in axis)   # (a literal tuple: its values)
        elif not (isinstance(axis, (types.Integer, types.UniTuple)) and isinstance(
                getattr(axis, "dtype", axis), types.Integer) or _is_none(axis) or
                isinstance(axis, types.BaseTuple) and len(axis) == 0):
            raise TypingError("srcgrad: a ufunc's reduce takes an axis, None or a tuple of "
                              "axes")
        else:
            static = None
        count = 1 if isinstance(axis, types.Integer) else nd if _is_none(axis) else len(axis)
        nd_out = nd if keep else nd - count
        if static == ():
            mask = register_jitable(lambda nd, axis: np.zeros(nd, np.bool_))
        elif static is None:
            mask = register_jitable(lambda nd, axis: _reduced_axes(nd, axis))
        else:
            mask = register_jitable(lambda nd, axis: _reduced_axes(nd, static))
        checked = count if isinstance(axis, types.BaseTuple) else -1

        def impl(array, axis=0, dtype=None, out=None, keepdims=False):
            reduced = mask(nd, axis)
            flat = _combine_into(array, reduced, combine, has_identity, identity, cast)
            return flat.reshape(to_fixed_tuple(
                _kept_shape(np.array(array.shape), reduced, keep, checked), nd_out))

        def whole(array, axis=0, dtype=None, out=None, keepdims=False):
            reduced = mask(nd, axis)
            _kept_shape(np.array(array.shape), reduced, keep, checked)
            return _combine_into(array, reduced, combine, has_identity, identity, cast)[0]

        return whole if nd_out == 0 else impl
    return typer


def _accumulate_typer(ufunc):
    combine = register_jitable(lambda u, v: ufunc(u, v))

    def typer(array, axis=0, dtype=None, out=None):
        _plain(array, dtype, out)
        if not isinstance(_given(axis), types.Integer):
            raise TypingError("srcgrad: a ufunc's accumulate takes one axis (an int)")
        cast = _result_type(ufunc, "accumulate", array, dtype)

        def impl(array, axis=0, dtype=None, out=None):
            xs = lanes(array, axis)
            before, n, after = xs.shape
            ys = np.empty(xs.shape, cast)
            for p in range(before):
                for q in range(after):
                    acc = cast(xs[p, 0, q]) if n else cast(0)
                    for j in range(n):
                        acc = combine(acc, xs[p, j, q]) if j else acc
                        ys[p, j, q] = acc
            return ys.reshape(array.shape)
        return impl
    return typer


_REDUCE = {u: _reduce_form(u) for u in REDUCED}
_ACCUMULATE = {u: _accumulate_form(u) for u in ACCUMULATED}
_OR_SKIPPED = {u: _reduce_or_skipped_form(u) for u in (np.fmax, np.fmin)}
for _u in REDUCED:   # (casts: a float64 dtype= is differentiated as if not given)
    describe(_u.reduce, compiled_as=_REDUCE[_u], casts=True)
    describe(_REDUCE[_u], casts=True)
describe(*_OR_SKIPPED.values(), casts=True)
for _u in ACCUMULATED:
    describe(_u.accumulate, compiled_as=_ACCUMULATE[_u], casts=True)
    describe(_ACCUMULATE[_u], casts=True)
add_reduce = _REDUCE[np.add]


# ---- reductions ----


@rule(np.add.reduce, add_reduce, refuse=_refused)
def add_reduce_rule(dy, y, a, axis=0, dtype=None, out=None, keepdims=False, initial=None,
                    where=True):
    return sum_grad(dy, a, axis, keepdims)


linear(np.add.reduce, add_reduce)


@rule(np.multiply.reduce, _REDUCE[np.multiply], refuse=_refused)
def multiply_reduce_rule(dy, y, a, axis=0, dtype=None, out=None, keepdims=False, initial=None,
                    where=True):
    return sum_grad(dy, a, axis, keepdims) * prod_others(a, axis)


@tangent(np.multiply.reduce, _REDUCE[np.multiply])
def multiply_reduce_tangent(dx, y, a, axis=0, dtype=None, out=None, keepdims=False,
                            initial=None, where=True):
    return add_reduce(dx * prod_others(a, axis), axis, None, None, keepdims)


_EXTREMA = [u.reduce for u in (np.maximum, np.minimum)] + \
    [_REDUCE[u] for u in (np.maximum, np.minimum)]


@rule(*_EXTREMA, refuse=_refused)
def extremum_reduce(dy, y, a, axis=0, dtype=None, out=None, keepdims=False, initial=None,
                    where=True):
    return extremum_grad(dy, y, a, axis, keepdims)


@tangent(*_EXTREMA)
def extremum_reduce_tangent(dx, y, a, axis=0, dtype=None, out=None, keepdims=False,
                            initial=None, where=True):
    # the tangents at the extremum's positions, averaged over ties (the adjoint's split)
    return add_reduce(dx * extremum_grad(np.ones_like(y), y, a, axis, True), axis, None,
                      None, keepdims)


# fmax's and fmin's skip NaNs: np.nanmax's rule (a NaN entry, and so each entry of a slice
# of NaNs alone, gets 0)
_SKIPPING = [u.reduce for u in (np.fmax, np.fmin)] + \
    [_REDUCE[u] for u in (np.fmax, np.fmin)] + list(_OR_SKIPPED.values())


@rule(*_SKIPPING, refuse=_refused)
def skipping_extremum_reduce(dy, y, a, axis=0, dtype=None, out=None, keepdims=False,
                             initial=None, where=True):
    return np.where(np.isnan(a), 0.0, extremum_grad(dy, y, a, axis, keepdims))


@tangent(*_SKIPPING)
def skipping_extremum_reduce_tangent(dx, y, a, axis=0, dtype=None, out=None, keepdims=False,
                                     initial=None, where=True):
    return add_reduce(dx * np.where(np.isnan(a), 0.0, extremum_grad(
        np.ones_like(y), y, a, axis, True)), axis, None, None, keepdims)


@rule(np.logaddexp.reduce, _REDUCE[np.logaddexp], refuse=_refused)
def logaddexp_reduce_rule(dy, y, a, axis=0, dtype=None, out=None, keepdims=False, initial=None,
                     where=True):
    return sum_grad(dy, a, axis, keepdims) * np.exp(a - sum_grad(y, a, axis, keepdims))


@tangent(np.logaddexp.reduce, _REDUCE[np.logaddexp])
def logaddexp_reduce_tangent(dx, y, a, axis=0, dtype=None, out=None, keepdims=False,
                             initial=None, where=True):
    return add_reduce(dx * np.exp(a - sum_grad(y, a, axis, keepdims)), axis, None, None,
                      keepdims)


@rule(np.logaddexp2.reduce, _REDUCE[np.logaddexp2], refuse=_refused)
def logaddexp2_reduce_rule(dy, y, a, axis=0, dtype=None, out=None, keepdims=False, initial=None,
                      where=True):
    return sum_grad(dy, a, axis, keepdims) * np.exp2(a - sum_grad(y, a, axis, keepdims))


@tangent(np.logaddexp2.reduce, _REDUCE[np.logaddexp2])
def logaddexp2_reduce_tangent(dx, y, a, axis=0, dtype=None, out=None, keepdims=False,
                              initial=None, where=True):
    return add_reduce(dx * np.exp2(a - sum_grad(y, a, axis, keepdims)), axis, None, None,
                      keepdims)


# ---- initial= and where= of reduce, written by normalize (the records' `expanded`) ----


def reduce_signature(array, axis=0, dtype=None, out=None, keepdims=False, initial=None,
                     where=True):
    """NumPy's signature of ufunc.reduce, to which normalize binds a call's arguments (the
    method's own has initial= and where= in its **kwargs)."""


# what where= puts in place of a masked entry: the reduction's identity
# (fmax's and fmin's NaN, which they skip: -inf would beat a NaN initial)
_MASKED = {np.add: "0", np.multiply: "1", np.maximum: "-np.inf", np.minimum: "np.inf",
           np.fmax: "np.nan", np.fmin: "np.nan"}


def _reduce_expanded(ufunc):
    """``ufunc.reduce(a, ..., initial=c, where=m)`` as ``ufunc(ufunc.reduce(np.where(m,
    a, identity), ...), c)``: the masked entries the reduction's identity, c combined
    with the result as one more entry (the extrema's ties with c split dy in half, as
    np.max's initial= does). logaddexp's where= is refused: a slice whose entries are
    all masked reduces to -inf, where its tangent is NaN."""
    name = f"np.{ufunc.__name__}"

    def expanded(given):
        if not {"initial", "where"} & given.keys():
            return None
        a = "array"
        if "where" in given:
            if ufunc not in _MASKED:
                raise RuleError(f"{name}.reduce(..., where=...) is not supported (a slice "
                                f"whose entries are all masked has no gradient): mask "
                                f"the entries with -np.inf instead")
            if "initial" not in given and ufunc.identity is None:
                raise RuleError(f"{name}.reduce(..., where=...) needs initial= (as in "
                                f"NumPy: the reduction has no identity)")
            # (the mask broadcast to the array's shape, not the array to the mask's: a
            # larger mask raises, as in NumPy)
            a = f"np.where(np.broadcast_to(where, np.shape(array)), array, {_MASKED[ufunc]})"
        if "initial" in given and "dtype" not in given and ufunc in (np.maximum, np.minimum):
            # (of an empty array, the identity, and so initial: np.max's `extremum_or`)
            value = f"extremum_or({a}, axis=axis, keepdims=keepdims, " \
                    f"largest={ufunc is np.maximum})"
            return f"{name}({value}, initial)", {"extremum_or": extremum_or}
        if "initial" in given and ufunc in _OR_SKIPPED:
            # (of an empty array or a slice of NaNs alone, NaN, which fmax skips: initial)
            form = _OR_SKIPPED[ufunc]
            value = f"{form.__name__}({a}, axis=axis, dtype=dtype, keepdims=keepdims)"
            return f"{name}({value}, initial)", {form.__name__: form}
        value = f"{name}.reduce({a}, axis=axis, dtype=dtype, keepdims=keepdims)"
        return f"{name}({value}, initial)" if "initial" in given else value
    return expanded


for _u in REDUCED:
    describe(_u.reduce, expanded=_reduce_expanded(_u), signature=reduce_signature)


# ---- accumulations ----


def running_extremum_grad(dy, y, a, axis, largest):
    """The gradient of a of ``y = np.maximum.accumulate(a, axis)`` (np.minimum's if not
    `largest`): the recursion y_i = maximum(y_{i-1}, a_i) taken back under np.maximum's
    rule (dy to the larger, half each on a tie, none to a NaN).

    >>> running_extremum_grad(np.ones(4), np.array([1.0, 3.0, 3.0, 3.0]),
    ...                       np.array([1.0, 3.0, 2.0, 3.0]), 0, True)
    array([1. , 2.5, 0. , 0.5])
    """
    ys, xs, gs = lanes(y, axis), lanes(a, axis), lanes(dy, axis)
    before, n, after = xs.shape
    out = np.zeros(xs.shape)
    g = np.zeros((before, after))
    for i in range(n - 1, 0, -1):
        g = g + gs[:, i, :]
        to_a, back = _shares(ys[:, i - 1, :], xs[:, i, :], largest)
        out[:, i, :], g = g * to_a, g * back
    if n:
        out[:, 0, :] = g + gs[:, 0, :]
    return out.reshape(np.shape(a))


def running_extremum_tangent(dx, y, a, axis, largest):
    """The tangent of ``y = np.maximum.accumulate(a, axis)`` (np.minimum's if not
    `largest`) in the direction dx: dy_i = dx_i where a_i exceeds y_{i-1}, dy_{i-1}
    where it does not, their mean on a tie.

    >>> running_extremum_tangent(np.array([1.0, 2.0, 4.0]), np.array([1.0, 3.0, 3.0]),
    ...                          np.array([1.0, 3.0, 3.0]), 0, True)
    array([1., 2., 3.])
    """
    ys, xs, ts = lanes(y, axis), lanes(a, axis), lanes(dx, axis)
    n = xs.shape[1]
    out = np.zeros(xs.shape)
    if n:
        out[:, 0, :] = ts[:, 0, :]
    for i in range(1, n):
        to_a, back = _shares(ys[:, i - 1, :], xs[:, i, :], largest)
        out[:, i, :] = ts[:, i, :] * to_a + out[:, i - 1, :] * back
    return out.reshape(np.shape(a))


@register_jitable
def _shares(prev, cur, largest):
    """np.maximum's (np.minimum's if not `largest`) rule at maximum(prev, cur): the
    shares of dy that go to cur and to prev."""
    tie = 0.5 * (cur == prev)
    if largest:
        return (cur > prev) + tie, (prev > cur) + tie
    return (cur < prev) + tie, (prev < cur) + tie


@register_jitable
def _running_lanes(g, y, a, axis, largest, adjoint):
    """`running_extremum_grad` (`adjoint`) or `running_extremum_tangent` of g, by loops."""
    ys, xs, gs = lanes(y, axis), lanes(a, axis), lanes(g, axis)
    before, n, after = xs.shape
    out = np.zeros(xs.shape)
    for p in range(before):
        for q in range(after):
            carry = 0.0
            for j in range(n):
                i = n - 1 - j if adjoint else j
                if i == 0:
                    to_a, back = 1.0, 0.0
                else:
                    to_a, back = _shares(ys[p, i - 1, q], xs[p, i, q], largest)
                if adjoint:
                    carry += gs[p, i, q]
                    out[p, i, q], carry = carry * to_a, carry * back
                else:
                    carry = gs[p, i, q] * to_a + carry * back
                    out[p, i, q] = carry
    return out.reshape(a.shape)


@overload(running_extremum_grad)
def _running_extremum_grad_typer(dy, y, a, axis, largest):
    if isinstance(a, types.Array):
        return lambda dy, y, a, axis, largest: _running_lanes(
            np.broadcast_to(dy, a.shape), y, a, axis, largest, True)


@overload(running_extremum_tangent)
def _running_extremum_tangent_typer(dx, y, a, axis, largest):
    if isinstance(a, types.Array):
        return lambda dx, y, a, axis, largest: _running_lanes(
            np.broadcast_to(dx, a.shape), y, a, axis, largest, False)


def _one_axis(options) -> str | None:
    if options.get("axis", 0) is None:
        return "axis=None: accumulate does not allow multiple axes (NumPy's error)"
    return _refused(options)


@rule(np.add.accumulate, _ACCUMULATE[np.add], refuse=_one_axis)
def add_accumulate_rule(dy, y, a, axis=0, dtype=None, out=None):
    return cumsum_grad(dy, a, axis)


linear(np.add.accumulate, _ACCUMULATE[np.add])


@rule(np.multiply.accumulate, _ACCUMULATE[np.multiply], refuse=_one_axis)
def multiply_accumulate_rule(dy, y, a, axis=0, dtype=None, out=None):
    return cumprod_grad(dy, a, axis)


@tangent(np.multiply.accumulate, _ACCUMULATE[np.multiply])
def multiply_accumulate_tangent(dx, y, a, axis=0, dtype=None, out=None):
    return cumprod_tangent(dx, a, axis)


@rule(np.maximum.accumulate, _ACCUMULATE[np.maximum], refuse=_one_axis)
def maximum_accumulate_rule(dy, y, a, axis=0, dtype=None, out=None):
    return running_extremum_grad(dy, y, a, axis, True)


@tangent(np.maximum.accumulate, _ACCUMULATE[np.maximum])
def maximum_accumulate_tangent(dx, y, a, axis=0, dtype=None, out=None):
    return running_extremum_tangent(dx, y, a, axis, True)


@rule(np.minimum.accumulate, _ACCUMULATE[np.minimum], refuse=_one_axis)
def minimum_accumulate_rule(dy, y, a, axis=0, dtype=None, out=None):
    return running_extremum_grad(dy, y, a, axis, False)


@tangent(np.minimum.accumulate, _ACCUMULATE[np.minimum])
def minimum_accumulate_tangent(dx, y, a, axis=0, dtype=None, out=None):
    return running_extremum_tangent(dx, y, a, axis, False)


def running_logsumexp_grad(dy, y, a, axis, base2):
    """The gradient of a of ``y = np.logaddexp.accumulate(a, axis)`` (np.logaddexp2's if
    `base2`): a_i gets exp(a_i - y_i) c_i, c_i = dy_i + exp(y_i - y_{i+1}) c_{i+1}.

    >>> running_logsumexp_grad(np.array([0.0, 1.0]), np.log([1.0, 2.0]), np.zeros(2), 0,
    ...                        False)
    array([0.5, 0.5])
    """
    power = np.exp2 if base2 else np.exp
    ys, xs, gs = lanes(y, axis), lanes(a, axis), lanes(np.broadcast_to(dy, np.shape(a)), axis)
    out = np.zeros(xs.shape)
    c = np.zeros((xs.shape[0], xs.shape[2]))
    for i in range(xs.shape[1] - 1, -1, -1):
        c = gs[:, i, :] + (c * power(ys[:, i, :] - ys[:, i + 1, :]) if i + 1 < xs.shape[1]
                           else 0.0)
        out[:, i, :] = power(xs[:, i, :] - ys[:, i, :]) * c
    return out.reshape(np.shape(a))


def running_logsumexp_tangent(dx, y, a, axis, base2):
    """The tangent of ``y = np.logaddexp.accumulate(a, axis)`` (np.logaddexp2's if
    `base2`) in the direction dx: t_j = exp(y_{j-1} - y_j) t_{j-1} + exp(a_j - y_j) dx_j.

    >>> running_logsumexp_tangent(np.array([1.0, 3.0]), np.log([1.0, 2.0]), np.zeros(2),
    ...                           0, False)
    array([1., 2.])
    """
    power = np.exp2 if base2 else np.exp
    ys, xs, ts = lanes(y, axis), lanes(a, axis), lanes(np.broadcast_to(dx, np.shape(a)), axis)
    out = np.zeros(xs.shape)
    for i in range(xs.shape[1]):
        out[:, i, :] = power(xs[:, i, :] - ys[:, i, :]) * ts[:, i, :]
        if i:
            out[:, i, :] += power(ys[:, i - 1, :] - ys[:, i, :]) * out[:, i - 1, :]
    return out.reshape(np.shape(a))


@register_jitable
def _power(v, base2):
    return np.exp2(v) if base2 else np.exp(v)


@register_jitable
def _logsumexp_lanes(g, y, a, axis, base2, adjoint):
    """`running_logsumexp_grad` (`adjoint`) or `running_logsumexp_tangent` of g, by loops."""
    ys, xs, gs = lanes(y, axis), lanes(a, axis), lanes(g, axis)
    before, n, after = xs.shape
    out = np.zeros(xs.shape)
    for p in range(before):
        for q in range(after):
            carry = 0.0
            for j in range(n):
                i = n - 1 - j if adjoint else j
                if adjoint:
                    step = _power(ys[p, i, q] - ys[p, i + 1, q], base2) if j else 0.0
                    carry = gs[p, i, q] + carry * step
                    out[p, i, q] = _power(xs[p, i, q] - ys[p, i, q], base2) * carry
                else:
                    step = _power(ys[p, i - 1, q] - ys[p, i, q], base2) if i else 0.0
                    carry = carry * step + _power(xs[p, i, q] - ys[p, i, q], base2) * gs[p, i, q]
                    out[p, i, q] = carry
    return out.reshape(a.shape)


@overload(running_logsumexp_grad)
def _running_logsumexp_grad_typer(dy, y, a, axis, base2):
    if isinstance(a, types.Array):
        return lambda dy, y, a, axis, base2: _logsumexp_lanes(
            np.broadcast_to(dy, a.shape), y, a, axis, base2, True)


@overload(running_logsumexp_tangent)
def _running_logsumexp_tangent_typer(dx, y, a, axis, base2):
    if isinstance(a, types.Array):
        return lambda dx, y, a, axis, base2: _logsumexp_lanes(
            np.broadcast_to(dx, a.shape), y, a, axis, base2, False)


@rule(np.logaddexp.accumulate, _ACCUMULATE[np.logaddexp], refuse=_one_axis)
def logaddexp_accumulate_rule(dy, y, a, axis=0, dtype=None, out=None):
    return running_logsumexp_grad(dy, y, a, axis, False)


@tangent(np.logaddexp.accumulate, _ACCUMULATE[np.logaddexp])
def logaddexp_accumulate_tangent(dx, y, a, axis=0, dtype=None, out=None):
    return running_logsumexp_tangent(dx, y, a, axis, False)


@rule(np.logaddexp2.accumulate, _ACCUMULATE[np.logaddexp2], refuse=_one_axis)
def logaddexp2_accumulate_rule(dy, y, a, axis=0, dtype=None, out=None):
    return running_logsumexp_grad(dy, y, a, axis, True)


@tangent(np.logaddexp2.accumulate, _ACCUMULATE[np.logaddexp2])
def logaddexp2_accumulate_tangent(dx, y, a, axis=0, dtype=None, out=None):
    return running_logsumexp_tangent(dx, y, a, axis, True)


def log_base(base2):
    """d/dv of 2^v over 2^v where `base2`, of e^v over e^v otherwise.

    >>> log_base(False)
    1.0
    """
    return 0.6931471805599453 if base2 else 1.0


@overload(log_base)
def _log_base_typer(base2):
    return lambda base2: 0.6931471805599453 if base2 else 1.0


# (second order) each helper is linear in its first argument; each of its terms
# e^(a_i - y_j) g moves with a_i by itself, and with y_j by minus itself
@tangent(running_logsumexp_grad)
def running_logsumexp_grad_tangent(dx, y, dy, ys, a, axis, base2):
    return (running_logsumexp_grad(dx, ys, a, axis, base2),
            -running_logsumexp_grad(dy * dx, ys, a, axis, base2) * log_base(base2),
            y * dx * log_base(base2), None, None)


@tangent(running_logsumexp_tangent)
def running_logsumexp_tangent_tangent(dx, y, da, ys, a, axis, base2):
    return (running_logsumexp_tangent(dx, ys, a, axis, base2),
            -y * dx * log_base(base2),
            running_logsumexp_tangent(da * dx, ys, a, axis, base2) * log_base(base2),
            None, None)


nondifferentiable(log_base)
describe(running_logsumexp_grad, running_logsumexp_tangent, log_base, pure=True)


# piecewise constant in y and a: linear in the cotangent (the tangent) alone
linear(running_extremum_grad, running_extremum_tangent)
describe(running_extremum_grad, running_extremum_tangent, pure=True)
describe(*_REDUCE.values(), *_ACCUMULATE.values(), pure=True)


# ---- outer products: ufunc.outer(a, b) = ufunc(outer_operand(a, b), b) ----


def outer_operand(a, b):
    """`a` reshaped to a.shape + (1,) * b.ndim, so that the ufunc of it and b is the
    ufunc's outer product.

    >>> outer_operand(np.arange(2.0), np.ones((3, 4))).shape
    (2, 1, 1)
    """
    return np.reshape(a, np.shape(a) + (1,) * np.ndim(b))


@overload(outer_operand)
def _outer_operand_typer(a, b):
    if isinstance(a, (types.Number, types.Boolean)):
        return lambda a, b: a
    if not isinstance(a, types.Array):
        return None
    ones = (1,) * (b.ndim if isinstance(b, types.Array) else 0)
    return lambda a, b: np.ascontiguousarray(a).reshape(a.shape + ones)


@rule(outer_operand)
def outer_operand_rule(dy, y, a, b):
    return reshape_as(dy, a), None


linear(outer_operand)
describe(outer_operand, pure=True, view=True)


def _outer_form(ufunc):
    def form(A, B):
        return ufunc.outer(A, B)
    name = f"{ufunc.__name__}_outer"
    form = _named(form, name, f"np.{ufunc.__name__}.outer, which generated code calls in "
                  f"its place (numba has no ufunc methods)")
    overload(form)(lambda A, B: lambda A, B: ufunc(outer_operand(A, B), B))
    return form


@dataclass(eq=False)
class _OuterRule(Rule):
    """The rule (or, `forward`, the tangent rule) of ``ufunc.outer(a, b)``, read from the
    ufunc's elementwise rule `base`: its templates with a replaced by
    ``outer_operand(a, b)``; the adjoint's gradient of a reshaped back to a's shape, each
    tangent broadcast to the result's shape (an elementwise rule read as a tangent drops
    its `unbroadcast`, as forward mode does)."""

    base: Rule | None = None
    forward: bool = False
    _made: Any = None

    @property
    def template(self) -> list[gast.AST | None]:
        if self._made is None:
            base, glob = self.base, self.base.globals_of()
            dy, y, a, bb = list(_parameters(base.fn))[:4]
            swap = {a: b.call(b.name("outer_operand"), b.name(a), b.name(bb))}
            if self.forward:
                swap[dy] = b.call(b.name("outer_operand"), b.name(dy), b.name(bb))
            made = []
            if not isinstance(base.template, list):
                raise RuleError(f"{base.name}: an outer product's rule is read from the "
                                f"ufunc's rule of one gradient per argument")
            for k, t in enumerate(base.template):
                if t is None:
                    made.append(None)
                    continue
                if self.forward and isinstance(t, gast.Call) and isinstance(t.func, gast.Name) \
                        and glob.get(t.func.id) is unbroadcast:
                    t = t.args[0]
                t = _Replace(swap if k == 0 or not self.forward else {a: swap[a]}).visit(
                    copy.deepcopy(t))
                if self.forward:
                    t = b.call(b.name("broadcast_like"), t, b.name(y))
                elif k == 0:
                    t = b.call(b.name("reshape_as"), t, b.name(a))
                made.append(t)
            self._made = made
        return self._made

    def globals_of(self) -> dict[str, Any]:
        return {**self.base.globals_of(), "outer_operand": outer_operand,
                "reshape_as": reshape_as, "broadcast_like": broadcast_like}


def _parameters(fn):
    return inspect.signature(fn).parameters


class _Replace(gast.NodeTransformer):
    def __init__(self, swap):
        self.swap = swap

    def visit_Name(self, node):
        return copy.deepcopy(self.swap[node.id]) if node.id in self.swap else node


def _outer_record(ufunc) -> None:
    """ufunc.outer's record (and its stand-in's), from the ufunc's elementwise rule."""
    base, form = lookup(ufunc), _outer_form(ufunc)
    adjoint, forward = (_OuterRule(base.fn, "rule", list(base.params), {},
                                   real_only=base.real_only, base=base, forward=forward)
                        for forward in (False, True))
    for primal in (ufunc.outer, form):
        _op(primal).rule, _op(primal).tangent = adjoint, Tangent("rule", forward)
    describe(ufunc.outer, compiled_as=form)
    describe(form, pure=True)


# NumPy's binary ufuncs whose rules are elementwise (np.add, np.arctan2, np.maximum, ...),
# read from the records (a question about a ufunc without one would import SciPy's)
OUTER = sorted({u for u in (r.primal for r in records()) if isinstance(u, np.ufunc) and
                getattr(np, u.__name__, None) is u and u.nin == 2 and u.nout == 1 and
                "dd->d" in u.types and   # (two floats: np.ldexp's exponent is an int)
                (r := lookup(u)) is not None and r.kind == "rule" and r.elementwise and
                len(r.params) == 2},
               key=lambda u: u.__name__)
for _u in OUTER:
    _outer_record(_u)
