"""scipy.stats under numba, continued (`runtime/stats.py` has the pattern): the normal
distribution's survival function, its log, and the inverses of the distribution and
survival functions, as generated code calls them (their records' `called_as`), with their
numba forms on floats broadcast as SciPy broadcasts them. As SciPy: a scale out of range
gives NaN, and so does a probability outside [0, 1] (ndtri's).
"""

from __future__ import annotations

import numpy as np
import scipy.special as special
from numba.extending import register_jitable

from .stats import scipy_form


@register_jitable
def _norm_sf(x, loc, scale):
    return special.ndtr((loc - x) / scale) if scale > 0.0 else np.nan


@register_jitable
def _norm_logsf(x, loc, scale):
    return special.log_ndtr((loc - x) / scale) if scale > 0.0 else np.nan


@register_jitable
def _norm_ppf(q, loc, scale):
    return loc + scale * special.ndtri(q) if scale > 0.0 else np.nan


@register_jitable
def _norm_isf(q, loc, scale):
    return loc - scale * special.ndtri(q) if scale > 0.0 else np.nan


# ---- the exponential distribution ----


@register_jitable
def _expon_logpdf(x, loc, scale):
    if not scale > 0.0:
        return np.nan
    z = (x - loc) / scale
    return -z - np.log(scale) if z >= 0.0 else -np.inf


@register_jitable
def _expon_pdf(x, loc, scale):
    return np.exp(_expon_logpdf(x, loc, scale))


@register_jitable
def _expon_cdf(x, loc, scale):
    if not scale > 0.0:
        return np.nan
    z = (x - loc) / scale
    return -np.expm1(-z) if z >= 0.0 else 0.0


# ---- the Python forms, with their numba forms ----

norm_sf = scipy_form("norm", "sf", _norm_sf)
norm_logsf = scipy_form("norm", "logsf", _norm_logsf)
norm_ppf = scipy_form("norm", "ppf", _norm_ppf, "q, loc=0.0, scale=1.0")
norm_isf = scipy_form("norm", "isf", _norm_isf, "q, loc=0.0, scale=1.0")
expon_logpdf = scipy_form("expon", "logpdf", _expon_logpdf)
expon_pdf = scipy_form("expon", "pdf", _expon_pdf)
expon_cdf = scipy_form("expon", "cdf", _expon_cdf)

