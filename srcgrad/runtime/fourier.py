"""Adjoint helpers of np.fft's one-dimensional transforms (`rules/fourier.py`).

Under the convention of runtime/complex_numbers.py the adjoint of a C-linear map is its
transpose, not its conjugate transpose. The DFT matrix is symmetric, so the adjoint of
y = fft(a, n) is fft(dy) with the same norm, cut or padded back to a's length along the
axis (fft pads or cuts a to n first); ifft likewise. rfft(a, n) is the first n//2 + 1
entries of fft(a, n) of a real a: its adjoint pads dy to n, transforms it, and keeps the
real part. irfft(a, n) = s sum_k w_k Re(a_k e^{2 pi i k t / n}) (s its norm's scale,
w_k = 1 at k = 0 and at n/2, 2 between; the imaginary parts of a_0 and a_{n/2} are not
read), so its adjoint is w_k s conj(sum_t dy_t e^{-2 pi i k t / n}): the rfft of dy with
the norm whose scale is s, conjugated and weighted.
"""

from __future__ import annotations

import numpy as np
from numba import objmode, types
from numba.extending import overload
from numba.np.numpy_support import as_dtype

# the norm of the forward transform with the scale an inverse one has under `norm`
_DUAL = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def fitted(g, length: int, axis: int):
    """`g` cut, or padded with zeros at the end, to `length` along `axis`.

    >>> fitted(np.array([1.0, 2.0, 3.0]), 2, -1), fitted(np.array([1.0]), 3, 0)
    (array([1., 2.]), array([1., 0., 0.]))
    """
    have = g.shape[axis]
    if have == length:
        return g
    if have > length:
        return np.moveaxis(np.moveaxis(g, axis, -1)[..., :length], -1, axis)
    pad = [(0, 0)] * g.ndim
    pad[axis] = (0, length - have)
    return np.pad(g, pad)


def _like(g, a):
    """A gradient for `a`: its real part where `a` is real."""
    return g if np.iscomplexobj(a) else np.real(g)


def fft_grad(dy, a, n=None, axis=-1, norm=None):
    """The gradient of a of ``y = np.fft.fft(a, n, axis, norm)``.

    >>> fft_grad(np.array([1.0, 0.0]), np.zeros(2))
    array([1., 1.])
    """
    return _like(fitted(np.fft.fft(dy, axis=axis, norm=norm), np.shape(a)[axis], axis), a)


def ifft_grad(dy, a, n=None, axis=-1, norm=None):
    """The gradient of a of ``y = np.fft.ifft(a, n, axis, norm)``."""
    return _like(fitted(np.fft.ifft(dy, axis=axis, norm=norm), np.shape(a)[axis], axis), a)


def rfft_grad(dy, a, n=None, axis=-1, norm=None):
    """The gradient of (real) a of ``y = np.fft.rfft(a, n, axis, norm)``.

    >>> rfft_grad(np.array([1.0, 0.0]), np.zeros(3))
    array([1., 1., 1.])
    """
    length = np.shape(a)[axis] if n is None else n
    g = np.fft.fft(fitted(dy, length, axis), axis=axis, norm=norm)
    return fitted(np.real(g), np.shape(a)[axis], axis)


def irfft_grad(dy, a, n=None, axis=-1, norm=None):
    """The gradient of a of ``y = np.fft.irfft(a, n, axis, norm)``.

    >>> irfft_grad(np.ones(4), np.zeros(3, complex))
    array([1.+0.j, 0.+0.j, 0.+0.j])
    """
    length = 2 * (np.shape(a)[axis] - 1) if n is None else n
    g = np.conj(np.fft.rfft(np.real(dy), axis=axis, norm=_DUAL[norm]))
    weights = np.full(g.shape[axis], 2.0)
    weights[0] = 1.0
    if length % 2 == 0:
        weights[-1] = 1.0
    shape = [1] * g.ndim
    shape[axis] = -1
    return _like(fitted(g * weights.reshape(shape), np.shape(a)[axis], axis), a)


# ---- numba forms: numba has no np.fft, so compiled code calls NumPy's in object mode ----

def _in_object_mode(fun, dtype_of):
    """A numba form of `fun(a, n, axis, norm)` (or `fun(dy, a, n, axis, norm)`: `grad`)
    that runs NumPy's in an object-mode block; `dtype_of(a)` is its result's dtype."""

    def transform(a, n=None, axis=-1, norm=None):
        if not isinstance(a, types.Array):
            return None
        result = types.Array(dtype_of(a.dtype), a.ndim, "C")
        dtype = as_dtype(result.dtype)

        def impl(a, n=None, axis=-1, norm=None):
            with objmode(out=result):
                out = np.ascontiguousarray(fun(a, n, axis, norm), dtype)
            return out
        return impl

    def grad(dy, a, n=None, axis=-1, norm=None):
        if not isinstance(a, types.Array):
            return None
        result = types.Array(dtype_of(a.dtype), a.ndim, "C")
        dtype = as_dtype(result.dtype)

        def impl(dy, a, n=None, axis=-1, norm=None):
            with objmode(out=result):
                out = np.ascontiguousarray(fun(dy, a, n, axis, norm), dtype)
            return out
        return impl
    return transform, grad


def _complex(dtype):
    return types.complex128


def _same(dtype):
    return types.complex128 if isinstance(dtype, types.Complex) else types.float64


def _real(dtype):
    return types.float64


for _fun, _dtype in ((np.fft.fft, _complex), (np.fft.ifft, _complex),
                     (np.fft.rfft, _complex), (np.fft.irfft, _real)):
    overload(_fun)(_in_object_mode(_fun, _dtype)[0])
for _fun, _dtype in ((fft_grad, _same), (ifft_grad, _same), (rfft_grad, _real),
                     (irfft_grad, _same)):
    overload(_fun)(_in_object_mode(_fun, _dtype)[1])
