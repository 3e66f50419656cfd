"""scipy.signal's convolve, correlate and fftconvolve of vectors: each computes what
np.convolve computes (correlate(in1, in2) is the convolution of in1 with in2 reversed;
mode='same' is the full result's len(in1) entries from (len(in2) - 1) // 2), so
`normalize` writes every call as np.convolve (the records' `expanded`) and its rule
differentiates it, compiled as NumPy's is.

Of vectors only, real ones (np.convolve's rule refuses complex values, whose correlation
conjugates in2): arrays of more dimensions, which SciPy convolves along each axis, are
refused by np.convolve when the call runs. method= ('auto', 'direct', 'fft') changes only
how SciPy computes (the FFT's rounding): it is read as 'direct'. fftconvolve's axes= is
refused.
"""

import scipy.signal

from ..errors import RuleError
from . import NOT_CONSTANT, describe

NEEDS = ("scipy.signal",)   # SciPy modules this imports (rules/__init__)


def _convolution(name, second):
    """The `expanded` of scipy.signal.`name`, whose second vector is `second` (in2 or its
    reversal) in np.convolve."""
    def expanded(given):
        mode = given.get("mode", "full")
        if mode is NOT_CONSTANT or mode not in ("full", "valid", "same"):
            raise RuleError(f"scipy.signal.{name}'s mode= is differentiated as the literal "
                            f"'full', 'valid' or 'same'")
        if given.get("axes") is not None:
            raise RuleError(f"scipy.signal.{name}(..., axes=) is not differentiated: "
                            f"convolve vectors")
        if given.get("method", "auto") is NOT_CONSTANT:
            raise RuleError(f"scipy.signal.{name}'s method= is differentiated as a literal")
        if mode == "same":
            return (f"np.convolve(in1, {second})"
                    f"[(len(in2) - 1) // 2:][:len(in1)]")
        return f"np.convolve(in1, {second}, mode={mode!r})"
    expanded.__name__ = name
    return expanded


describe(scipy.signal.convolve, expanded=_convolution("convolve", "in2"))
describe(scipy.signal.correlate, expanded=_convolution("correlate", "in2[::-1]"))
describe(scipy.signal.fftconvolve, expanded=_convolution("fftconvolve", "in2"))
