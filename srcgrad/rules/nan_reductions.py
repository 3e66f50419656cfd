"""Reductions that skip NaNs, and the range: the records of np.nansum, np.nanmean,
np.nanmax, np.nanmin, np.nanprod, np.nanvar, np.nanstd, np.nanmedian, np.nanquantile,
np.nanpercentile, np.nancumsum, np.nancumprod and np.ptp, and their numba forms with
`axis`, `keepdims` (and `ddof`) where numba's take the array alone.

Each is its NaN-free twin applied to the array with its NaNs replaced by the twin's
identity (0 for sums, 1 for products, left out of maxima, means, variances and order
statistics), so its gradient is the twin's there and 0 at a NaN (as in JAX, whose nan
functions select the NaNs away with a `where`): np.nansum spreads dy; np.nanmean divides
by how many entries are not NaN along the axis; np.nanmax and np.nanmin split dy among
tied extrema; np.nanprod gives each entry the product of the other entries that are not
NaN (no division: zeros are exact, as np.prod's rule); np.nanvar gives
2 (a - nanmean) / (count - ddof) and np.nanstd that over 2 y; np.nanquantile (and
np.nanmedian, its 0.5, and np.nanpercentile, q in percent) reads the sorted entries that
are not NaN as rules/quantiles.py does, method 'linear' only (the others are refused),
and is differentiated in q as it is there (n counting the entries that are not NaN);
np.nancumsum and np.nancumprod are np.cumsum and np.cumprod of the NaNs made 0 and 1.

An all-NaN slice: NumPy gives NaN for nanmax, nanmin, nanmean, nanvar, nanstd and the
order statistics (0 for nansum, 1 for nanprod), and every entry of the slice gets a
gradient (and tangent) of 0, as every NaN entry does: what JAX returns for nansum,
nanprod, nanmax, nanmin, nanmean, nanvar, nanstd, nancumsum and nancumprod, whose NaN
entries are replaced by a constant (`where`) before the reduction. For the order
statistics, 0 too (the value is NaN whatever the entries: the slope is 0); JAX's
gradient there, which reads sorted places of NaN entries, was not checked against.

np.ptp is max - min: the max's gradient (dy split among tied maxima) less the min's;
where every entry ties (a range of 0) the two cancel.
"""

import numpy as np
from numba import types
from numba.extending import overload, register_jitable

from ..numba_ext import _is_none, _static_bool
from ..runtime import extremum_grad, sum_grad
from . import describe, rule, tangent
from .cumulative import cumprod_grad, cumprod_tangent, cumsum_grad
from .elementwise import prod_others
from .quantiles import (
    _grad_typer,
    _quantile_adjoint,
    _quantile_form,
    _quantile_lanes,
    _quantile_typer,
    _refused,
    _rows,
    _tangent_typer,
    quantile_q_grad,
    quantile_q_tangent,
    quantile_slope_grad,
)


@rule(np.nansum, reduction=True)
def nansum(dy, y, a, axis=None, keepdims=False):
    return np.where(np.isnan(a), 0.0, sum_grad(dy, a, axis, keepdims))


@tangent(np.nansum)
def nansum_tangent(dx, y, a, axis=None, keepdims=False):
    return np.sum(np.where(np.isnan(a), 0.0, dx), axis=axis, keepdims=keepdims)


@rule(np.nanmean, reduction=True)
def nanmean(dy, y, a, axis=None, keepdims=False):
    return np.where(np.isnan(a), 0.0, sum_grad(dy, a, axis, keepdims) /
                    np.sum(~np.isnan(a), axis=axis, keepdims=True))


@tangent(np.nanmean)
def nanmean_tangent(dx, y, a, axis=None, keepdims=False):
    return np.sum(np.where(np.isnan(a), 0.0, dx), axis=axis, keepdims=keepdims) / \
        np.sum(~np.isnan(a), axis=axis, keepdims=keepdims)


@rule(np.ptp, reduction=True)
def ptp(dy, y, a, axis=None, keepdims=False):
    return extremum_grad(dy, np.max(a, axis=axis, keepdims=keepdims), a, axis, keepdims) - \
        extremum_grad(dy, np.min(a, axis=axis, keepdims=keepdims), a, axis, keepdims)


@tangent(np.ptp)
def ptp_tangent(dx, y, a, axis=None, keepdims=False):
    return np.sum(dx * (
        extremum_grad(np.ones_like(y), np.max(a, axis=axis, keepdims=keepdims), a, axis,
                      keepdims) -
        extremum_grad(np.ones_like(y), np.min(a, axis=axis, keepdims=keepdims), a, axis,
                      keepdims)), axis=axis, keepdims=keepdims)


@rule(np.nanmax, np.nanmin, reduction=True)
def nanextremum(dy, y, a, axis=None, keepdims=False):
    return np.where(np.isnan(a), 0.0, extremum_grad(dy, y, a, axis, keepdims))


@tangent(np.nanmax, np.nanmin)
def nanextremum_tangent(dx, y, a, axis=None, keepdims=False):
    # the tangents at the extremum's positions, averaged over ties (the adjoint's split)
    return np.sum(dx * np.where(np.isnan(a), 0.0, extremum_grad(np.ones_like(y), y, a, axis,
                                                                True)),
                  axis=axis, keepdims=keepdims)


@rule(np.nanprod, reduction=True)
def nanprod(dy, y, a, axis=None, keepdims=False):
    return np.where(np.isnan(a), 0.0, sum_grad(dy, a, axis, keepdims) *
                    prod_others(np.where(np.isnan(a), 1.0, a), axis))


@tangent(np.nanprod)
def nanprod_tangent(dx, y, a, axis=None, keepdims=False):
    return np.sum(np.where(np.isnan(a), 0.0, dx) *
                  prod_others(np.where(np.isnan(a), 1.0, a), axis), axis=axis, keepdims=keepdims)


@rule(np.nanvar)
def nanvar(dy, y, a, axis=None, keepdims=False, ddof=0):
    return np.where(np.isnan(a), 0.0, sum_grad(dy, a, axis, keepdims) * (
        2.0 * (a - np.nanmean(a, axis=axis, keepdims=True)) /
        (np.sum(~np.isnan(a), axis=axis, keepdims=True) - ddof)))


@tangent(np.nanvar)
def nanvar_tangent(dx, y, a, axis=None, keepdims=False, ddof=0):
    return np.sum(np.where(np.isnan(a), 0.0, (a - np.nanmean(a, axis=axis, keepdims=True)) * dx),
                  axis=axis, keepdims=keepdims) * 2.0 / \
        (np.sum(~np.isnan(a), axis=axis, keepdims=keepdims) - ddof)


@rule(np.nanstd)
def nanstd(dy, y, a, axis=None, keepdims=False, ddof=0):
    return np.where(np.isnan(a), 0.0, sum_grad(dy / y, a, axis, keepdims) * (
        (a - np.nanmean(a, axis=axis, keepdims=True)) /
        (np.sum(~np.isnan(a), axis=axis, keepdims=True) - ddof)))


@tangent(np.nanstd)
def nanstd_tangent(dx, y, a, axis=None, keepdims=False, ddof=0):
    return np.sum(np.where(np.isnan(a), 0.0, (a - np.nanmean(a, axis=axis, keepdims=True)) * dx),
                  axis=axis, keepdims=keepdims) / \
        ((np.sum(~np.isnan(a), axis=axis, keepdims=keepdims) - ddof) * y)


@rule(np.nancumsum)
def nancumsum(dy, y, a, axis=None):
    return np.where(np.isnan(a), 0.0, cumsum_grad(dy, a, axis))


@tangent(np.nancumsum)
def nancumsum_tangent(dx, y, a, axis=None):
    return np.cumsum(np.where(np.isnan(a), 0.0, dx), axis=axis)


@rule(np.nancumprod)
def nancumprod(dy, y, a, axis=None):
    return np.where(np.isnan(a), 0.0, cumprod_grad(dy, np.where(np.isnan(a), 1.0, a), axis))


@tangent(np.nancumprod)
def nancumprod_tangent(dx, y, a, axis=None):
    return cumprod_tangent(np.where(np.isnan(a), 0.0, dx), np.where(np.isnan(a), 1.0, a), axis)


describe(np.nansum, np.nanmean, np.ptp, np.nanmax, np.nanmin, np.nanprod, np.nanvar,
         np.nanstd, pure=True)


# ---- order statistics of the entries that are not NaN ----


def nanquantile_grad(dy, a, q, axis=None):
    """The gradient of `a` of ``y = np.nanquantile(a, q, axis)`` (q in [0, 1]).

    >>> nanquantile_grad(1.0, np.array([3.0, np.nan, 1.0, 2.0]), 0.5)
    array([0., 0., 0., 1.])
    """
    rows, back = _rows(a, axis)
    qs = np.ravel(np.asarray(q, dtype=np.float64))
    g = np.reshape(np.asarray(dy, dtype=np.float64), (qs.size, rows.shape[0]))
    return back(_quantile_adjoint(g, rows[:, :, None], qs, True)[:, :, 0])


def nanquantile_tangent(dx, y, a, q, axis=None):
    """The tangent of ``y = np.nanquantile(a, q, axis)`` along a's tangent dx.

    >>> nanquantile_tangent(np.array([10.0, 20.0, 30.0]), 2.0, np.array([3.0, np.nan, 2.0]),
    ...                     0.0)
    30.0
    """
    rows, _ = _rows(a, axis)
    moved, _ = _rows(np.broadcast_to(dx, np.shape(a)), axis)
    qs = np.ravel(np.asarray(q, dtype=np.float64))
    t = _quantile_lanes(moved[:, :, None], rows[:, :, None], qs, True)
    return t.reshape(np.shape(y)) if np.ndim(y) else float(t[0, 0])


overload(nanquantile_grad)(_grad_typer(True))
overload(nanquantile_tangent)(_tangent_typer(True))


# q is differentiated too, as np.quantile's (n: the entries that are not NaN)
@rule(np.nanquantile, refuse=_refused)
def nanquantile(dy, y, a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, weights=None, interpolation=None):
    return nanquantile_grad(dy, a, q, axis), quantile_q_grad(dy, a, a, q, axis, True)


@tangent(np.nanquantile)
def nanquantile_tangents(dx, y, a, q, axis=None, out=None, overwrite_input=False,
                         method="linear", keepdims=False, weights=None, interpolation=None):
    return (nanquantile_tangent(dx, y, a, q, axis),
            quantile_q_tangent(dx, y, a, a, q, axis, True))


@rule(np.nanpercentile, refuse=_refused)
def nanpercentile(dy, y, a, q, axis=None, out=None, overwrite_input=False,
                  method="linear", keepdims=False, weights=None, interpolation=None):
    return (nanquantile_grad(dy, a, np.asarray(q) / 100.0, axis),
            quantile_q_grad(dy, a, a, np.asarray(q) / 100.0, axis, True) / 100.0)


@tangent(np.nanpercentile)
def nanpercentile_tangents(dx, y, a, q, axis=None, out=None, overwrite_input=False,
                           method="linear", keepdims=False, weights=None, interpolation=None):
    return (nanquantile_tangent(dx, y, a, np.asarray(q) / 100.0, axis),
            quantile_q_tangent(dx / 100.0, y, a, a, np.asarray(q) / 100.0, axis, True))


@rule(np.nanmedian, refuse=_refused)
def nanmedian(dy, y, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return nanquantile_grad(dy, a, 0.5, axis)


@tangent(np.nanmedian)
def nanmedian_tangent(dx, y, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return nanquantile_tangent(dx, y, a, 0.5, axis)


# their own tangents, as np.quantile's helpers' (rules/quantiles.py)


@tangent(nanquantile_grad)
def nanquantile_grad_tangent(d, g, dy, a, q, axis=None):
    return nanquantile_grad(d, a, q, axis), None, quantile_slope_grad(dy, d, a, q, axis, True)


@tangent(nanquantile_tangent)
def nanquantile_tangent_tangent(d, t, dx, y, a, q, axis=None):
    return (nanquantile_tangent(d, y, a, q, axis), None, None,
            quantile_q_tangent(d, y, dx, a, q, axis, True))


describe(nanquantile_grad, nanquantile_tangent, pure=True)


# ---- numba forms along an axis (numba's own serve the array alone) ----


def _along(a, axis, keepdims) -> bool | None:
    """keepdims's value where a call is one numba lacks (an axis or keepdims given), else
    None."""
    if not isinstance(a, types.Array) or not (_is_none(axis) or isinstance(axis, types.Integer)):
        return None
    keep = _static_bool(keepdims, "keepdims")
    return keep if keep or not _is_none(axis) else None


@overload(np.nansum)
def _np_nansum(a, axis=None, dtype=None, out=None, keepdims=False):
    if (keep := _along(a, axis, keepdims)) is None or not (_is_none(dtype) and _is_none(out)):
        return None
    return lambda a, axis=None, dtype=None, out=None, keepdims=False: np.sum(
        np.where(np.isnan(a), 0.0, a), axis=axis, keepdims=keep)


@overload(np.nanmean)
def _np_nanmean(a, axis=None, dtype=None, out=None, keepdims=False):
    if (keep := _along(a, axis, keepdims)) is None or not (_is_none(dtype) and _is_none(out)):
        return None
    return lambda a, axis=None, dtype=None, out=None, keepdims=False: np.sum(
        np.where(np.isnan(a), 0.0, a), axis=axis, keepdims=keep) / np.sum(
        ~np.isnan(a), axis=axis, keepdims=keep)


@overload(np.ptp)
def _np_ptp(a, axis=None, out=None, keepdims=False):
    if (keep := _along(a, axis, keepdims)) is None or not _is_none(out):
        return None
    return lambda a, axis=None, out=None, keepdims=False: np.max(
        a, axis=axis, keepdims=keep) - np.min(a, axis=axis, keepdims=keep)


@overload(np.nanmax)
def _np_nanmax(a, axis=None, out=None, keepdims=False):
    if (keep := _along(a, axis, keepdims)) is None or not _is_none(out):
        return None
    return lambda a, axis=None, out=None, keepdims=False: _all_nan_is_nan(np.max(
        np.where(np.isnan(a), -np.inf, a), axis=axis, keepdims=keep), a, axis, keep)


@overload(np.nanmin)
def _np_nanmin(a, axis=None, out=None, keepdims=False):
    if (keep := _along(a, axis, keepdims)) is None or not _is_none(out):
        return None
    return lambda a, axis=None, out=None, keepdims=False: _all_nan_is_nan(np.min(
        np.where(np.isnan(a), np.inf, a), axis=axis, keepdims=keep), a, axis, keep)


@register_jitable
def _all_nan_is_nan(value, a, axis, keep):
    """`value`, a reduction of `a` over `axis`, NaN where a slice is all NaN (NumPy's)."""
    return np.where(np.sum(~np.isnan(a), axis=axis, keepdims=keep) == 0, np.nan, value)


@overload(np.nanprod)
def _np_nanprod(a, axis=None, dtype=None, out=None, keepdims=False):
    if (keep := _along(a, axis, keepdims)) is None or not (_is_none(dtype) and _is_none(out)):
        return None
    return lambda a, axis=None, dtype=None, out=None, keepdims=False: np.prod(
        np.where(np.isnan(a), 1.0, a), axis=axis, keepdims=keep)


def _nanvar_form(a, axis, dtype, out, ddof, keepdims, root):
    """numba's form of np.nanvar (np.nanstd if `root`) with an axis, keepdims or ddof."""
    if not isinstance(a, types.Array) or not (_is_none(dtype) and _is_none(out)) or not (
            _is_none(axis) or isinstance(axis, types.Integer)):
        return None
    keep = _static_bool(keepdims, "keepdims")
    if _is_none(axis) and not keep and isinstance(ddof, (types.Omitted, int)):
        return None   # numba's own

    # NaN where count - ddof <= 0, as NumPy's
    if _is_none(axis) and not keep:
        def whole(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
            d = np.where(np.isnan(a), 0.0, a - np.nanmean(a))
            dof = np.sum(~np.isnan(a)) - ddof
            v = np.sum(d * d) / dof if dof > 0 else np.nan
            return np.sqrt(v) if root else v
        return whole

    def form(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        d = np.where(np.isnan(a), 0.0, a - np.nanmean(a, axis=axis, keepdims=True))
        dof = np.sum(~np.isnan(a), axis=axis, keepdims=keep) - ddof
        v = np.where(dof > 0, np.sum(d * d, axis=axis, keepdims=keep) / np.maximum(dof, 1),
                     np.nan)
        return np.sqrt(v) if root else v
    return form


@overload(np.nanvar)
def _np_nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return _nanvar_form(a, axis, dtype, out, ddof, keepdims, False)


@overload(np.nanstd)
def _np_nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return _nanvar_form(a, axis, dtype, out, ddof, keepdims, True)


@overload(np.nancumsum)
def _np_nancumsum(a, axis=None, dtype=None, out=None):
    if not isinstance(a, types.Array) or _is_none(axis) or not (
            _is_none(dtype) and _is_none(out)):
        return None
    return lambda a, axis=None, dtype=None, out=None: np.cumsum(
        np.where(np.isnan(a), 0.0, a), axis=axis)


@overload(np.nancumprod)
def _np_nancumprod(a, axis=None, dtype=None, out=None):
    if not isinstance(a, types.Array) or _is_none(axis) or not (
            _is_none(dtype) and _is_none(out)):
        return None
    return lambda a, axis=None, dtype=None, out=None: np.cumprod(
        np.where(np.isnan(a), 1.0, a), axis=axis)


overload(np.nanquantile)(_quantile_typer(1.0, skip_nan=True))
overload(np.nanpercentile)(_quantile_typer(100.0, skip_nan=True))


@overload(np.nanmedian)
def _np_nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    form = _quantile_form(a, types.float64, axis, keepdims, 1.0, True, skip_nan=True)
    return None if form is None else (
        lambda a, axis=None, out=None, overwrite_input=False, keepdims=False:
        form(a, 0.5, axis, keepdims))
