"""The options of reductions their rules do not take: `initial=` and `where=` of np.sum,
np.prod, np.mean, np.max/np.amax, np.min/np.amin, np.std and np.var (and their array
methods), written by `normalize` as operations that have rules (the records' `expanded`),
and the numba forms of the reductions with a float64 `dtype=`.

`where=m` (a mask, not differentiated) puts the reduction's identity where m is False:
0 for sums, 1 for products, -inf for maxima and inf for minima; np.mean divides by the
count of True along the axis, and np.var and np.std take that mean and count (less
ddof). `initial=c` is added (sum), multiplied (prod) or taken as one more entry
(``np.maximum(extremum_or(...), c)``), so a differentiated c gets its gradient, and the
entries that c beats get 0: where c ties with the maximum, each gets half of dy, as in
JAX (whose reductions apply their operation to the result and initial the same way).
`extremum_or` is np.max (np.min) with -inf (inf) where the axes reduced are empty, so
that an empty array (or an empty slice of one) gives c, as in NumPy, and c all of dy.
As in NumPy, np.max and np.min with where= need initial= (refused without one).

A `dtype=` is not an option of any rule: for the functions marked `casts` here (np.sum,
np.prod, np.mean, np.var, np.std, np.cumsum, np.cumprod and their nan forms),
`passes.base` differentiates a float64 one (np.float64, float, 'float64', 'f8', ...) as
if it were not given, and refuses the others (an integer cast has no gradient), and
every dtype of other functions. Generated code gives numba np.float64 for each
spelling; the forms below compute the calls numba lacks with it, of the array cast to
float64.
"""

import numpy as np
from numba import types
from numba.extending import overload
from numba.np.unsafe.ndarray import to_fixed_tuple

from ..errors import RuleError
from ..numba_ext import _is_none, _static_bool, omitted
from ..runtime.common import _is_scalar
from ..runtime.reductions import _reduced_axes, extremum_grad
from . import describe, rule, tangent

# ---- the expressions normalize writes ----


def _masked(given, identity):
    return f"np.where(where, a, {identity})" if "where" in given else "a"


def _count(keepdims):
    return f"np.sum(np.broadcast_to(where, np.shape(a)), axis=axis, keepdims={keepdims})"


def _additive(reduce, identity, combine):
    """np.sum and np.prod: `initial` combined with the reduction of the masked array."""
    def expanded(given):
        if not {"initial", "where"} & given.keys():
            return None
        value = f"{reduce}({_masked(given, identity)}, axis=axis, dtype=dtype, " \
                f"keepdims=keepdims)"
        return f"{value} {combine} initial" if "initial" in given else value
    return expanded


def _extreme(reduce, pairwise, identity, largest):
    """np.max and np.min: `initial` as one more entry, after the masked reduction (of an
    empty array, the identity: `extremum_or`)."""
    def expanded(given):
        if not {"initial", "where"} & given.keys():
            return None
        if "initial" not in given:
            raise RuleError(f"{reduce}(..., where=...) needs initial= (as in NumPy: the "
                            f"reduction has no identity)")
        return f"{pairwise}(extremum_or({_masked(given, identity)}, axis=axis, " \
               f"keepdims=keepdims, largest={largest}), initial)", \
            {"extremum_or": extremum_or}
    return expanded


def _mean(given):
    if "where" not in given:
        return None
    return f"np.sum(np.where(where, a, 0), axis=axis, dtype=dtype, keepdims=keepdims) / " \
           f"{_count('keepdims')}"


def _variance(root):
    def expanded(given):
        if "where" not in given:
            return None
        mean = f"np.sum(np.where(where, a, 0), axis=axis, keepdims=True) / {_count('True')}"
        deviation = f"np.where(where, a - {mean}, 0)"
        value = f"np.sum(np.real({deviation} * np.conj({deviation})), axis=axis, " \
                f"dtype=dtype, keepdims=keepdims) / ({_count('keepdims')} - ddof)"
        return f"np.sqrt({value})" if root else value
    return expanded


describe(np.sum, expanded=_additive("np.sum", 0, "+"))
describe(np.prod, expanded=_additive("np.prod", 1, "*"))
describe(np.max, np.amax, expanded=_extreme("np.max", "np.maximum", "-np.inf", True))
describe(np.min, np.amin, expanded=_extreme("np.min", "np.minimum", "np.inf", False))
describe(np.mean, expanded=_mean)
describe(np.var, expanded=_variance(False))
describe(np.std, expanded=_variance(True))


# ---- the extremum of an array that may be empty ----


def extremum_or(a, axis=None, keepdims=False, largest=True):
    """``np.max(a, axis, keepdims=keepdims)`` (np.min if not `largest`), and where the
    axes reduced are empty, the reduction's identity: -inf (inf), the lowest (highest)
    integer, False (True). np.max(a, initial=c) is ``np.maximum(extremum_or(a), c)``.

    >>> extremum_or(np.zeros((0, 2)), 0)
    array([-inf, -inf])
    """
    a = np.asarray(a)
    return (np.max if largest else np.min)(a, axis=axis, keepdims=keepdims,
                                           initial=_identity(a.dtype, largest))


def _identity(dtype, largest):
    if dtype.kind == "b":
        return not largest
    if dtype.kind in "iu":
        limits = np.iinfo(dtype)
        return limits.min if largest else limits.max
    return -np.inf if largest else np.inf


@overload(extremum_or)
def _extremum_or_typer(a, axis=None, keepdims=False, largest=True):
    if _is_scalar(a):
        return lambda a, axis=None, keepdims=False, largest=True: a
    if not isinstance(a, types.Array) or not isinstance(a.dtype, types.Float):
        return None
    nd = a.ndim

    def impl(a, axis=None, keepdims=False, largest=True):
        if a.size == 0:   # each reduced axis at length 1, holding the identity
            reduced = _reduced_axes(nd, axis)
            shape = np.empty(nd, np.intp)
            for i in range(nd):
                shape[i] = 1 if reduced[i] else a.shape[i]
            a = np.full(to_fixed_tuple(shape, nd), -np.inf if largest else np.inf)
        if largest:
            return np.max(a, axis=axis, keepdims=keepdims)
        return np.min(a, axis=axis, keepdims=keepdims)
    return impl


@rule(extremum_or)
def extremum_or_rule(dy, y, a, axis=None, keepdims=False, largest=True):
    return extremum_grad(dy, y, a, axis, keepdims)


@tangent(extremum_or)
def extremum_or_tangent(dx, y, a, axis=None, keepdims=False, largest=True):
    # the tangents at the extremum's positions, averaged over ties (the adjoint's split)
    return np.sum(dx * extremum_grad(np.ones_like(y), y, a, axis, True), axis=axis,
                  keepdims=keepdims)


# ---- numba forms with a float64 dtype ----


def _float64(dtype) -> bool:
    """Whether a numba form's dtype argument is NumPy's float64 (generated code writes
    each spelling of it as np.float64)."""
    return isinstance(dtype, (types.NumberClass, types.DType)) and \
        getattr(dtype, "instance_type", getattr(dtype, "dtype", None)) == types.float64


def _served(a, dtype, out) -> bool:
    return isinstance(a, types.Array) and _float64(dtype) and _is_none(out)


def _cast_reduction(fun):
    """numba's form of `fun` (np.sum, np.mean, ...: a, axis, dtype, out, keepdims) with
    dtype=np.float64: `fun` of the array cast (numba's own take no dtype, but np.sum's
    without keepdims)."""
    def typer(a, axis=None, dtype=None, out=None, keepdims=False):
        if not _served(a, dtype, out) or fun is np.sum and omitted(keepdims):
            return None
        keep = _static_bool(keepdims, "keepdims")
        if _is_none(axis) and not keep:
            return lambda a, axis=None, dtype=None, out=None, keepdims=False: fun(
                a.astype(np.float64))
        return lambda a, axis=None, dtype=None, out=None, keepdims=False: fun(
            a.astype(np.float64), axis=axis, keepdims=keep)
    return typer


def _cast_spread(fun):
    """numba's form of `fun` (np.var, np.std, np.nanvar, np.nanstd) with dtype=np.float64."""
    def typer(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        if not _served(a, dtype, out):
            return None
        keep = _static_bool(keepdims, "keepdims")
        if _is_none(axis) and not keep and omitted(ddof):
            return lambda a, axis=None, dtype=None, out=None, ddof=0, keepdims=False: fun(
                a.astype(np.float64))
        return lambda a, axis=None, dtype=None, out=None, ddof=0, keepdims=False: fun(
            a.astype(np.float64), axis=axis, ddof=ddof, keepdims=keep)
    return typer


def _cast_running(fun):
    """numba's form of `fun` (np.cumsum, np.cumprod and their nan forms) with
    dtype=np.float64."""
    def typer(a, axis=None, dtype=None, out=None):
        if not _served(a, dtype, out):
            return None
        if _is_none(axis):
            return lambda a, axis=None, dtype=None, out=None: fun(a.astype(np.float64))
        return lambda a, axis=None, dtype=None, out=None: fun(a.astype(np.float64), axis=axis)
    return typer


for _family, _functions in (
        (_cast_reduction, (np.sum, np.prod, np.mean, np.nansum, np.nanprod, np.nanmean)),
        (_cast_spread, (np.var, np.std, np.nanvar, np.nanstd)),
        (_cast_running, (np.cumsum, np.cumprod, np.nancumsum, np.nancumprod))):
    for _fun in _functions:
        overload(_fun)(_family(_fun))
        describe(_fun, casts=True)
