"""Reductions that skip NaNs, and the range: the records of np.nansum, np.nanmean and
np.ptp, and their numba forms with `axis` and `keepdims` (numba's take the array alone).

np.nansum is the sum of the entries that are not NaN, so its gradient is dy's spread
there and 0 at a NaN (as in JAX); np.nanmean divides by how many there are along the
axis. np.ptp is max - min: the max's gradient (dy split among tied maxima) less the
min's; where every entry ties (a range of 0) the two cancel.
"""

import numpy as np
from numba import types
from numba.extending import overload

from ..numba_ext import _is_none, _static_bool
from ..runtime import extremum_grad, sum_grad
from . import describe, rule, tangent


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


describe(np.nansum, np.nanmean, np.ptp, pure=True)


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
