"""scipy.stats under numba, continued (`runtime/stats.py` has the pattern): the normal
distribution's survival function, its log, and the inverses of the distribution and
survival functions, as generated code calls them (their records' `called_as`), with their
numba forms on floats broadcast as SciPy broadcasts them. As SciPy: a scale out of range
gives NaN, and so does a probability outside [0, 1] (ndtri's).
"""

from __future__ import annotations

import numpy as np
import scipy.special as special
from numba.extending import overload, register_jitable
from scipy import stats

from .stats import _form


def norm_sf(x, loc=0.0, scale=1.0):
    """scipy.stats.norm.sf, as generated code calls it."""
    return stats.norm.sf(x, loc, scale)


def norm_logsf(x, loc=0.0, scale=1.0):
    """scipy.stats.norm.logsf, as generated code calls it."""
    return stats.norm.logsf(x, loc, scale)


def norm_ppf(q, loc=0.0, scale=1.0):
    """scipy.stats.norm.ppf, as generated code calls it."""
    return stats.norm.ppf(q, loc, scale)


def norm_isf(q, loc=0.0, scale=1.0):
    """scipy.stats.norm.isf, as generated code calls it."""
    return stats.norm.isf(q, loc, scale)


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


@overload(norm_sf)
def _norm_sf_typer(x, loc=0.0, scale=1.0):
    f = _form(_norm_sf, x, loc, scale)
    return f and (lambda x, loc=0.0, scale=1.0: f(x, loc, scale))


@overload(norm_logsf)
def _norm_logsf_typer(x, loc=0.0, scale=1.0):
    f = _form(_norm_logsf, x, loc, scale)
    return f and (lambda x, loc=0.0, scale=1.0: f(x, loc, scale))


@overload(norm_ppf)
def _norm_ppf_typer(q, loc=0.0, scale=1.0):
    f = _form(_norm_ppf, q, loc, scale)
    return f and (lambda q, loc=0.0, scale=1.0: f(q, loc, scale))


@overload(norm_isf)
def _norm_isf_typer(q, loc=0.0, scale=1.0):
    f = _form(_norm_isf, q, loc, scale)
    return f and (lambda q, loc=0.0, scale=1.0: f(q, loc, scale))


# ---- the exponential distribution ----


def expon_logpdf(x, loc=0.0, scale=1.0):
    """scipy.stats.expon.logpdf, as generated code calls it."""
    return stats.expon.logpdf(x, loc, scale)


def expon_pdf(x, loc=0.0, scale=1.0):
    """scipy.stats.expon.pdf, as generated code calls it."""
    return stats.expon.pdf(x, loc, scale)


def expon_cdf(x, loc=0.0, scale=1.0):
    """scipy.stats.expon.cdf, as generated code calls it."""
    return stats.expon.cdf(x, loc, scale)


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


@overload(expon_logpdf)
def _expon_logpdf_typer(x, loc=0.0, scale=1.0):
    f = _form(_expon_logpdf, x, loc, scale)
    return f and (lambda x, loc=0.0, scale=1.0: f(x, loc, scale))


@overload(expon_pdf)
def _expon_pdf_typer(x, loc=0.0, scale=1.0):
    f = _form(_expon_pdf, x, loc, scale)
    return f and (lambda x, loc=0.0, scale=1.0: f(x, loc, scale))


@overload(expon_cdf)
def _expon_cdf_typer(x, loc=0.0, scale=1.0):
    f = _form(_expon_cdf, x, loc, scale)
    return f and (lambda x, loc=0.0, scale=1.0: f(x, loc, scale))
