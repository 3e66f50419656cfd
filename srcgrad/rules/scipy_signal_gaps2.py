"""scipy.signal.detrend, a gap to JAX, written (its record's `expanded`) as the operations
with rules that compute it, so `normalize` writes every call as them and their rules
differentiate it, compiled as theirs are.

detrend(data, axis, type) takes away from data along axis its mean ('constant') or its
least-squares line ('linear': the mean and the projection onto t - (n - 1) / 2, t = 0,
..., n - 1, whose squares sum to n (n^2 - 1) / 12); SciPy's bp= (a line per segment) is
refused.
"""

import numpy as np
from scipy import signal

from ..errors import RuleError
from . import NOT_CONSTANT, describe

NEEDS = ("scipy.signal",)   # SciPy modules this imports (rules/__init__)


def _literal(name, option, value):
    if value is NOT_CONSTANT:
        raise RuleError(f"{name}'s {option}= is differentiated as a literal")
    return value


def _detrend(given):
    kind = _literal("scipy.signal.detrend", "type", given.get("type", "linear"))
    if given.get("bp", 0) is NOT_CONSTANT or np.any(given.get("bp", 0)):
        raise RuleError("scipy.signal.detrend(..., bp=) is not differentiated: detrend "
                        "each segment")
    axis = "axis" if "axis" in given else "-1"
    if kind in ("constant", "c"):
        return f"data - np.mean(data, axis={axis}, keepdims=True)"
    if kind not in ("linear", "l"):
        raise RuleError("scipy.signal.detrend's type= is differentiated as the literal "
                        "'linear' or 'constant'")
    lanes = "data" if axis == "-1" else f"np.moveaxis(data, {axis}, -1)"
    n = f"np.shape({lanes})[-1]"
    t = f"(np.arange({n}) - ({n} - 1) / 2.0)"
    line = (f"{lanes} - np.mean({lanes}, axis=-1, keepdims=True) - {t} * "
            f"np.sum({lanes} * {t}, axis=-1, keepdims=True) / "
            f"max({n} * ({n} * {n} - 1) / 12.0, 1.0)")
    return line if axis == "-1" else f"np.moveaxis({line}, -1, {axis})"


describe(signal.detrend, expanded=_detrend)
