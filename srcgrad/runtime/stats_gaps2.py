"""scipy.stats.betabinom's logpmf and pmf as generated code calls them
(`rules/scipy_stats_gaps2.py`): stand-ins that call SciPy's, which compiled code runs in
object mode (numba has no form of them).
"""

from __future__ import annotations

import numpy as np
import scipy.stats
from numba import objmode, types
from numba.extending import overload


def betabinom_logpmf(k, n, a, b, loc=0):
    """scipy.stats.betabinom.logpmf, as generated code calls it."""
    return scipy.stats.betabinom.logpmf(k, n, a, b, loc)


def betabinom_pmf(k, n, a, b, loc=0):
    """scipy.stats.betabinom.pmf, as generated code calls it."""
    return scipy.stats.betabinom.pmf(k, n, a, b, loc)


def _in_object_mode(fun):
    """An overload of `fun` (real numbers and arrays) that calls it in object mode: its
    result a float64 of the arguments' broadcast dimensions."""
    def typer(k, n, a, b, loc=0):
        args = (k, n, a, b) if isinstance(loc, (types.Omitted, int)) else (k, n, a, b, loc)
        if not all(isinstance(t, (types.Number, types.Boolean)) or isinstance(t, types.Array)
                   and isinstance(t.dtype, (types.Integer, types.Float)) for t in args):
            return None
        ndim = max(t.ndim if isinstance(t, types.Array) else 0 for t in args)
        result = types.float64 if ndim == 0 else types.Array(types.float64, ndim, "C")

        def impl(k, n, a, b, loc=0):
            with objmode(y=result):
                y = fun(k, n, a, b, loc)
                y = np.ascontiguousarray(y, np.float64) if np.ndim(y) else float(y)
            return y
        return impl
    overload(fun)(typer)


_in_object_mode(betabinom_logpmf)
_in_object_mode(betabinom_pmf)
