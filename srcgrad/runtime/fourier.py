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


def _stages(shape, s, axes, kind):
    """The one-dimensional transforms np.fft's n-dimensional transform `kind` ("c": fftn
    or ifftn, "r": rfftn, "ir": irfftn) of an array of `shape` makes, in the order it
    makes them, as NumPy reads `s` and `axes`: (axis, the length along it before, the
    transform's n, whether it is the real one: rfft or irfft).

    >>> _stages((4, 6), None, None, "r")
    [(1, 6, 6, True), (0, 4, 4, False)]
    """
    ndim = len(shape)
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    axes = [int(ax) + ndim if int(ax) < 0 else int(ax) for ax in axes]
    if s is None:
        s = [None] * len(axes)
    if len(s) != len(axes) or not axes:
        raise ValueError("np.fft: s and axes have different lengths (or none)")
    s = [shape[ax] if n is not None and n == -1 else n for n, ax in zip(s, axes, strict=True)]
    last = len(axes) - 1
    order = {"c": range(last, -1, -1), "r": [last, *range(last - 1, -1, -1)],
             "ir": range(last + 1)}[kind]
    lengths, out = list(shape), []
    for k in order:
        ax, real = axes[k], kind != "c" and k == last
        have = lengths[ax]
        n = s[k]
        if n is None:
            n = 2 * (have - 1) if kind == "ir" and real else have
        out.append((ax, have, n, real))
        lengths[ax] = n // 2 + 1 if kind == "r" and real else n
    return out


def _back(dy, stages, inverse, norm):
    """dy taken back through `stages` (`_stages`), the last first: the transpose of
    each one-dimensional transform (the DFT matrix is symmetric): the forward transform
    (`inverse`: the inverse one) of dy with the same norm, fitted to the length before;
    rfft's and irfft's as the module's docstring says."""
    g = dy
    for axis, length, n, real in reversed(stages):
        if real and not inverse:   # rfft
            g = np.fft.fft(fitted(g, n, axis), axis=axis, norm=norm)
            g = fitted(np.real(g), length, axis)
        elif real:   # irfft
            g = np.conj(np.fft.rfft(np.real(g), axis=axis, norm=_DUAL[norm]))
            weights = np.full(g.shape[axis], 2.0)
            weights[0] = 1.0
            if n % 2 == 0:
                weights[-1] = 1.0
            shape = [1] * g.ndim
            shape[axis] = -1
            g = fitted(g * weights.reshape(shape), length, axis)
        else:
            step = np.fft.ifft if inverse else np.fft.fft
            g = fitted(step(g, axis=axis, norm=norm), length, axis)
    return g


def fftn_grad(dy, a, s=None, axes=None, norm=None):
    """The gradient of a of ``y = np.fft.fftn(a, s, axes, norm)`` (and of fft2's).

    >>> fftn_grad(np.array([[1.0, 0.0], [0.0, 0.0]]), np.zeros((2, 2)))
    array([[1., 1.],
           [1., 1.]])
    """
    return _like(_back(dy, _stages(np.shape(a), s, axes, "c"), False, norm), a)


def ifftn_grad(dy, a, s=None, axes=None, norm=None):
    """The gradient of a of ``y = np.fft.ifftn(a, s, axes, norm)`` (and of ifft2's)."""
    return _like(_back(dy, _stages(np.shape(a), s, axes, "c"), True, norm), a)


def rfftn_grad(dy, a, s=None, axes=None, norm=None):
    """The gradient of (real) a of ``y = np.fft.rfftn(a, s, axes, norm)`` (rfft2's)."""
    return np.real(_back(dy, _stages(np.shape(a), s, axes, "r"), False, norm))


def irfftn_grad(dy, a, s=None, axes=None, norm=None):
    """The gradient of a of ``y = np.fft.irfftn(a, s, axes, norm)`` (irfft2's)."""
    return _like(_back(dy, _stages(np.shape(a), s, axes, "ir"), True, norm), a)


def _one(n):
    return None if n is None else (n,)


def fft_grad(dy, a, n=None, axis=-1, norm=None):
    """The gradient of a of ``y = np.fft.fft(a, n, axis, norm)``: fftn's along one axis.

    >>> fft_grad(np.array([1.0, 0.0]), np.zeros(2))
    array([1., 1.])
    """
    return fftn_grad(dy, a, _one(n), (axis,), norm)


def ifft_grad(dy, a, n=None, axis=-1, norm=None):
    """The gradient of a of ``y = np.fft.ifft(a, n, axis, norm)``."""
    return ifftn_grad(dy, a, _one(n), (axis,), norm)


def rfft_grad(dy, a, n=None, axis=-1, norm=None):
    """The gradient of (real) a of ``y = np.fft.rfft(a, n, axis, norm)``.

    >>> rfft_grad(np.array([1.0, 0.0]), np.zeros(3))
    array([1., 1., 1.])
    """
    return rfftn_grad(dy, a, _one(n), (axis,), norm)


def irfft_grad(dy, a, n=None, axis=-1, norm=None):
    """The gradient of a of ``y = np.fft.irfft(a, n, axis, norm)``.

    >>> irfft_grad(np.ones(4), np.zeros(3, complex))
    array([1.+0.j, 0.+0.j, 0.+0.j])
    """
    return irfftn_grad(dy, a, _one(n), (axis,), norm)


def hfft_grad(dy, a, n=None, axis=-1, norm=None):
    """The gradient of a of ``y = np.fft.hfft(a, n, axis, norm)``, which is
    irfft(conj(a), n, axis) with the norm of the other direction: conj's adjoint is conj
    (the convention above).

    >>> hfft_grad(np.ones(4), np.zeros(3, complex))
    array([4.-0.j, 0.-0.j, 0.-0.j])
    """
    return _like(np.conj(irfft_grad(dy, a, n, axis, _DUAL[norm])), a)


def ihfft_grad(dy, a, n=None, axis=-1, norm=None):
    """The gradient of (real) a of ``y = np.fft.ihfft(a, n, axis, norm)``, which is
    conj(rfft(a, n, axis)) with the norm of the other direction."""
    return rfft_grad(np.conj(dy), a, n, axis, _DUAL[norm])


# ---- numba forms: numba has no np.fft, so compiled code calls NumPy's in object mode ----
# (each form has its function's parameters, for numba to place keyword arguments)


def _result(a, dtype_of):
    """The type of the result of a form given `a` (`dtype_of(a.dtype)`: its dtype), and
    that dtype; (None, None) where `a` is no array."""
    if not isinstance(a, types.Array):
        return None, None
    result = types.Array(dtype_of(a.dtype), a.ndim, "C")
    return result, as_dtype(result.dtype)


def _one_d(fun, dtype_of):
    def transform(a, n=None, axis=-1, norm=None):
        result, dtype = _result(a, dtype_of)

        def impl(a, n=None, axis=-1, norm=None):
            with objmode(out=result):
                out = np.ascontiguousarray(fun(a, n, axis, norm), dtype)
            return out
        return impl if result is not None else None
    return transform


def _one_d_grad(fun, dtype_of):
    def grad(dy, a, n=None, axis=-1, norm=None):
        result, dtype = _result(a, dtype_of)

        def impl(dy, a, n=None, axis=-1, norm=None):
            with objmode(out=result):
                out = np.ascontiguousarray(fun(dy, a, n, axis, norm), dtype)
            return out
        return impl if result is not None else None
    return grad


def _n_d(fun, dtype_of):
    def transform(a, s=None, axes=None, norm=None):
        result, dtype = _result(a, dtype_of)

        def impl(a, s=None, axes=None, norm=None):
            with objmode(out=result):
                out = np.ascontiguousarray(fun(a, s, axes, norm), dtype)
            return out
        return impl if result is not None else None
    return transform


def _n_d_grad(fun, dtype_of):
    def grad(dy, a, s=None, axes=None, norm=None):
        result, dtype = _result(a, dtype_of)

        def impl(dy, a, s=None, axes=None, norm=None):
            with objmode(out=result):
                out = np.ascontiguousarray(fun(dy, a, s, axes, norm), dtype)
            return out
        return impl if result is not None else None
    return grad


def _two_d(fun, dtype_of):
    def transform(a, s=None, axes=(-2, -1), norm=None):
        result, dtype = _result(a, dtype_of)

        def impl(a, s=None, axes=(-2, -1), norm=None):
            with objmode(out=result):
                out = np.ascontiguousarray(fun(a, s, axes, norm), dtype)
            return out
        return impl if result is not None else None
    return transform


def _shift(fun, dtype_of):
    def transform(x, axes=None):
        result, dtype = _result(x, dtype_of)

        def impl(x, axes=None):
            with objmode(out=result):
                out = np.ascontiguousarray(fun(x, axes), dtype)
            return out
        return impl if result is not None else None
    return transform


def _complex(dtype):
    return types.complex128


def _same(dtype):
    return types.complex128 if isinstance(dtype, types.Complex) else types.float64


def _real(dtype):
    return types.float64


def _kept(dtype):
    return dtype


_FFT = np.fft
for _form, _funs in (
        (_one_d, ((_FFT.fft, _complex), (_FFT.ifft, _complex), (_FFT.rfft, _complex),
                  (_FFT.irfft, _real), (_FFT.hfft, _real), (_FFT.ihfft, _complex))),
        (_n_d, ((_FFT.fftn, _complex), (_FFT.ifftn, _complex), (_FFT.rfftn, _complex),
                (_FFT.irfftn, _real))),
        (_two_d, ((_FFT.fft2, _complex), (_FFT.ifft2, _complex), (_FFT.rfft2, _complex),
                  (_FFT.irfft2, _real))),
        (_shift, ((_FFT.fftshift, _kept), (_FFT.ifftshift, _kept))),
        (_one_d_grad, ((fft_grad, _same), (ifft_grad, _same), (rfft_grad, _real),
                       (irfft_grad, _same), (hfft_grad, _same), (ihfft_grad, _real))),
        (_n_d_grad, ((fftn_grad, _same), (ifftn_grad, _same), (rfftn_grad, _real),
                     (irfftn_grad, _same)))):
    for _fun, _dtype in _funs:
        overload(_fun)(_form(_fun, _dtype))
