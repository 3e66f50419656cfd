"""np.fft: the records of the one-dimensional transforms fft, ifft, rfft, irfft, hfft and
ihfft, the n-dimensional fftn, ifftn, rfftn, irfftn and their two-dimensional forms fft2,
ifft2, rfft2, irfft2, and fftshift and ifftshift (their adjoints in runtime/fourier.py:
an n-dimensional transform is one-dimensional ones along its axes, and its adjoint theirs
in the reverse order; a one-dimensional one is an n-dimensional one along one axis).
Each is linear in its array (R-linear: hfft and ihfft conjugate), so forward mode applies
the transform to the tangent. A shift's adjoint is the shift back.
"""

import numpy as np

from ..runtime.fourier import (
    fft_grad,
    fftn_grad,
    hfft_grad,
    ifft_grad,
    ifftn_grad,
    ihfft_grad,
    irfft_grad,
    irfftn_grad,
    rfft_grad,
    rfftn_grad,
)
from . import describe, linear, rule

FFT = np.fft


# ---- one-dimensional ----


@rule(FFT.fft)
def fft(dy, y, a, n=None, axis=-1, norm=None):
    return fft_grad(dy, a, n, axis, norm)


@rule(FFT.ifft)
def ifft(dy, y, a, n=None, axis=-1, norm=None):
    return ifft_grad(dy, a, n, axis, norm)


@rule(FFT.rfft)
def rfft(dy, y, a, n=None, axis=-1, norm=None):
    return rfft_grad(dy, a, n, axis, norm)


@rule(FFT.irfft)
def irfft(dy, y, a, n=None, axis=-1, norm=None):
    return irfft_grad(dy, a, n, axis, norm)


@rule(FFT.hfft)
def hfft(dy, y, a, n=None, axis=-1, norm=None):
    return hfft_grad(dy, a, n, axis, norm)


@rule(FFT.ihfft)
def ihfft(dy, y, a, n=None, axis=-1, norm=None):
    return ihfft_grad(dy, a, n, axis, norm)


# ---- n-dimensional, and two-dimensional (other default axes) ----


@rule(FFT.fftn)
def fftn(dy, y, a, s=None, axes=None, norm=None):
    return fftn_grad(dy, a, s, axes, norm)


@rule(FFT.ifftn)
def ifftn(dy, y, a, s=None, axes=None, norm=None):
    return ifftn_grad(dy, a, s, axes, norm)


@rule(FFT.rfftn)
def rfftn(dy, y, a, s=None, axes=None, norm=None):
    return rfftn_grad(dy, a, s, axes, norm)


@rule(FFT.irfftn)
def irfftn(dy, y, a, s=None, axes=None, norm=None):
    return irfftn_grad(dy, a, s, axes, norm)


@rule(FFT.fft2)
def fft2(dy, y, a, s=None, axes=(-2, -1), norm=None):
    return fftn_grad(dy, a, s, axes, norm)


@rule(FFT.ifft2)
def ifft2(dy, y, a, s=None, axes=(-2, -1), norm=None):
    return ifftn_grad(dy, a, s, axes, norm)


@rule(FFT.rfft2)
def rfft2(dy, y, a, s=None, axes=(-2, -1), norm=None):
    return rfftn_grad(dy, a, s, axes, norm)


@rule(FFT.irfft2)
def irfft2(dy, y, a, s=None, axes=(-2, -1), norm=None):
    return irfftn_grad(dy, a, s, axes, norm)


# ---- shifts ----


@rule(FFT.fftshift)
def fftshift(dy, y, x, axes=None):
    return np.fft.ifftshift(dy, axes)


@rule(FFT.ifftshift)
def ifftshift(dy, y, x, axes=None):
    return np.fft.fftshift(dy, axes)


_TRANSFORMS = (FFT.fft, FFT.ifft, FFT.rfft, FFT.irfft, FFT.hfft, FFT.ihfft, FFT.fftn,
               FFT.ifftn, FFT.rfftn, FFT.irfftn, FFT.fft2, FFT.ifft2, FFT.rfft2, FFT.irfft2)
_GRADS = (fft_grad, ifft_grad, rfft_grad, irfft_grad, hfft_grad, ihfft_grad, fftn_grad,
          ifftn_grad, rfftn_grad, irfftn_grad)
linear(*_TRANSFORMS, *_GRADS, FFT.fftshift, FFT.ifftshift)
describe(*_GRADS, pure=True, shape_only=1)
describe(*_TRANSFORMS, FFT.fftshift, FFT.ifftshift, array_result=True)
describe(FFT.fft, FFT.ifft, FFT.rfft, FFT.ihfft, FFT.fftn, FFT.ifftn, FFT.rfftn, FFT.fft2,
         FFT.ifft2, FFT.rfft2, complex_result=True)
