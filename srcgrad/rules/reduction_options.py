"""The options of reductions their rules do not take: `initial=` and `where=` of np.sum,
np.prod, np.mean, np.max/np.amax, np.min/np.amin, np.std and np.var (and their array
methods), written by `normalize` as operations that have rules (the records' `expanded`),
and the numba forms of the reductions with a float64 `dtype=`.

`where=m` (a mask, not differentiated) puts the reduction's identity where m is False:
0 for sums, 1 for products, -inf for maxima and inf for minima; np.mean divides by the
count of True along the axis, and np.var and np.std take that mean and count (less
ddof). `initial=c` is added (sum), multiplied (prod) or taken as one more entry
(``np.maximum(np.max(...), c)``), so a differentiated c gets its gradient, and the
entries that c beats get 0: where c ties with the maximum, each gets half of dy, as in
JAX (whose reductions apply their operation to the result and initial the same way).
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

from ..errors import RuleError
from ..numba_ext import _is_none, _static_bool, omitted
from . import describe

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


def _extreme(reduce, pairwise, identity):
    """np.max and np.min: `initial` as one more entry, after the masked reduction."""
    def expanded(given):
        if not {"initial", "where"} & given.keys():
            return None
        if "initial" not in given:
            raise RuleError(f"{reduce}(..., where=...) needs initial= (as in NumPy: the "
                            f"reduction has no identity)")
        return f"{pairwise}({reduce}({_masked(given, identity)}, axis=axis, " \
               f"keepdims=keepdims), initial)"
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
describe(np.max, np.amax, expanded=_extreme("np.max", "np.maximum", "-np.inf"))
describe(np.min, np.amin, expanded=_extreme("np.min", "np.minimum", "np.inf"))
describe(np.mean, expanded=_mean)
describe(np.var, expanded=_variance(False))
describe(np.std, expanded=_variance(True))


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
