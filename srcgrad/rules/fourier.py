"""np.fft's one-dimensional transforms: the records of np.fft.fft, ifft, rfft and irfft
(their adjoints in runtime/fourier.py). Each is linear in its array, so forward mode
applies the transform to the tangent.
"""

import numpy as np

from ..runtime.fourier import fft_grad, ifft_grad, irfft_grad, rfft_grad
from . import describe, linear, rule


@rule(np.fft.fft)
def fft(dy, y, a, n=None, axis=-1, norm=None):
    return fft_grad(dy, a, n, axis, norm)


@rule(np.fft.ifft)
def ifft(dy, y, a, n=None, axis=-1, norm=None):
    return ifft_grad(dy, a, n, axis, norm)


@rule(np.fft.rfft)
def rfft(dy, y, a, n=None, axis=-1, norm=None):
    return rfft_grad(dy, a, n, axis, norm)


@rule(np.fft.irfft)
def irfft(dy, y, a, n=None, axis=-1, norm=None):
    return irfft_grad(dy, a, n, axis, norm)


linear(np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft,
       fft_grad, ifft_grad, rfft_grad, irfft_grad)
describe(fft_grad, ifft_grad, rfft_grad, irfft_grad, pure=True, shape_only=1)
describe(np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft, array_result=True)
describe(np.fft.fft, np.fft.ifft, np.fft.rfft, complex_result=True)
