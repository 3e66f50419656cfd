"""Index and check helpers the records of rules/numpy_gaps2.py call, each a NumPy
function with its numba form right after it. None carries a gradient: each gives the
positions a call reads its arguments' entries at, or checks what NumPy would do
differently from the operations the record writes the call as.

* `exponents(x)`: np.frexp(x)'s exponents.
* `close_to_real(a, tol)`: 0, where np.real_if_close(a, tol) gives a's real part.
* `cycled(a, new_shape)`: the flat positions np.resize(a, new_shape) reads.
* `first_kept(filt, trim)`, `last_kept(filt, trim)`: the bounds np.trim_zeros keeps.
* `insertion_order(arr, obj, values, axis)`: the positions np.insert's result reads, in
  arr's entries followed by values'.
* `choice_index(a, choices, mode)`, `choice_shape(a, choices)`: np.choose's index into
  its choices stacked on a last axis, broadcast, and their shape broadcast.
"""

from __future__ import annotations

import math

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from ..errors import MissingRule


def exponents(x):
    """np.frexp(x)'s second result: the powers of two x is a mantissa in [0.5, 1) times.

    >>> exponents(np.array([1.0, 0.3, 0.0]))
    array([ 1, -1,  0], dtype=int32)
    """
    return np.frexp(x)[1]


@overload(exponents)
def _exponents_typer(x):
    if isinstance(x, types.Float):
        return lambda x: math.frexp(x)[1]
    if isinstance(x, types.Array) and isinstance(x.dtype, types.Float):
        def each(x):
            e = np.empty(x.shape, np.int32)
            flat = e.reshape(-1)
            for k, v in enumerate(x.ravel()):
                flat[k] = math.frexp(v)[1]
            return e
        return each
    return None


_COMPLEX = ("np.real_if_close: an entry of the array is not close to real, so NumPy gives "
            "it complex, as it is; srcgrad differentiates its real result only: take "
            "np.real(a) or a itself")


def close_to_real(a, tol=100):
    """0 (an int, which changes no dtype added) where np.real_if_close(a, tol) is a's
    real part: refused where it is a, complex.

    >>> close_to_real(np.array([1.0 + 1e-20j]))
    0
    """
    a = np.asarray(a)
    if not np.iscomplexobj(a):
        return 0
    if tol > 1:
        tol = np.finfo(a.dtype).eps * tol
    if not np.all(np.abs(a.imag) < tol):
        raise MissingRule(_COMPLEX)
    return 0


@overload(close_to_real)
def _close_to_real_typer(a, tol=100):
    dtype = a.dtype if isinstance(a, types.Array) else a
    if not isinstance(dtype, types.Complex):
        return lambda a, tol=100: 0
    eps = float(np.finfo(np.complex64 if dtype.bitwidth == 64 else np.complex128).eps)

    def checked(a, tol=100):
        bound = eps * tol if tol > 1 else tol
        if not np.all(np.abs(np.imag(a)) < bound):
            raise MissingRule(_COMPLEX)
        return 0
    return checked


def cycled(a, new_shape):
    """The flat positions of `a` np.resize(a, new_shape) reads: a's entries over again.

    >>> cycled(np.ones(3), (2, 2))
    array([[0, 1],
           [2, 0]])
    """
    if np.size(a) == 0:
        raise MissingRule("np.resize of an empty array gives zeros: write np.zeros")
    return np.resize(np.arange(np.size(a)), new_shape)


@overload(cycled)
def _cycled_typer(a, new_shape):
    def impl(a, new_shape):
        if np.size(a) == 0:
            raise MissingRule("np.resize of an empty array gives zeros: write np.zeros")
        return np.resize(np.arange(np.size(a)), new_shape)
    return impl


def _trimmed(filt):
    if np.ndim(filt) != 1:
        raise MissingRule("np.trim_zeros of an array of more than one dimension has no "
                          "gradient rule: trim a 1-D array")


def first_kept(filt, trim="fb"):
    """Where np.trim_zeros(filt, trim) starts: after filt's leading zeros if trim has 'f'.

    >>> first_kept(np.array([0.0, 0.0, 2.0, 0.0]), "fb")
    2
    """
    _trimmed(filt)
    if "f" not in trim.lower():
        return 0
    nonzero = np.flatnonzero(filt)
    return int(nonzero[0]) if nonzero.size else len(filt)


def last_kept(filt, trim="fb"):
    """Where np.trim_zeros(filt, trim) stops: before filt's trailing zeros if trim has
    'b' (and not before where it starts).

    >>> last_kept(np.array([0.0, 0.0, 2.0, 0.0]), "fb")
    3
    """
    _trimmed(filt)
    start = first_kept(filt, trim)
    if "b" not in trim.lower():
        return len(filt)
    nonzero = np.flatnonzero(filt)
    return max(int(nonzero[-1]) + 1 if nonzero.size else 0, start)


def _trim_typer(filt, trim):
    if not (isinstance(filt, types.Array) and filt.ndim == 1):
        return None
    return True


@overload(first_kept)
def _first_kept_typer(filt, trim="fb"):
    if _trim_typer(filt, trim) is None:
        return None

    def impl(filt, trim="fb"):
        if "f" not in trim and "F" not in trim:
            return 0
        for k in range(len(filt)):
            if filt[k] != 0:
                return k
        return len(filt)
    return impl


@overload(last_kept)
def _last_kept_typer(filt, trim="fb"):
    if _trim_typer(filt, trim) is None:
        return None

    def impl(filt, trim="fb"):
        start = first_kept(filt, trim)
        if "b" not in trim and "B" not in trim:
            return len(filt)
        for k in range(len(filt) - 1, start - 1, -1):
            if filt[k] != 0:
                return k + 1
        return start
    return impl


_CAST = ("np.insert of float values into an array of ints casts them to ints, which "
         "have no gradient: insert into a float array")


def insertion_order(arr, obj, values, axis=None):
    """The positions np.insert(arr, obj, values, axis) reads, of arr's entries (flat)
    followed by values' (flat): np.insert of their positions, as NumPy places them.

    >>> insertion_order(np.ones(3), 1, [7.0, 8.0])
    array([0, 3, 4, 1, 2])
    """
    arr, values = np.asarray(arr), np.asarray(values)
    if np.issubdtype(arr.dtype, np.integer) and not np.issubdtype(values.dtype, np.integer):
        raise MissingRule(_CAST)
    return np.insert(np.arange(arr.size).reshape(arr.shape), obj,
                     arr.size + np.arange(values.size).reshape(values.shape), axis)


@overload(insertion_order)
def _insertion_order_typer(arr, obj, values, axis=None):
    if not isinstance(arr, types.Array):
        return None
    kind = values.dtype if isinstance(values, types.Array) else values
    if isinstance(arr.dtype, types.Integer) and not isinstance(kind, types.Integer):
        def refused(arr, obj, values, axis=None):
            raise MissingRule(_CAST)
        return refused
    if not (isinstance(axis, (types.NoneType, types.Omitted)) or axis is None):
        raise TypingError("srcgrad: np.insert along an axis is not compiled (it runs "
                          "as Python)")
    if isinstance(values, types.Array) and values.ndim > 1 or not (
            isinstance(obj, types.Integer)
            or isinstance(obj, types.Array) and obj.ndim == 1
            and isinstance(obj.dtype, types.Integer)):
        raise TypingError("srcgrad: np.insert is compiled of an int or a 1-D array of "
                          "ints at a time, of 1-D values, without axis=")

    def flat(arr, obj, values, axis=None):
        n, m = arr.size, np.asarray(values).size
        at = np.asarray(obj).ravel()
        for k in range(at.size):
            if at[k] < -n or at[k] > n:
                raise IndexError("np.insert: an index is out of bounds")
        at = np.where(at < 0, at + n, at)
        if at.size == 1:   # (every value at that position, as NumPy)
            pos = at[0]
            out = np.empty(n + m, np.intp)
            out[:pos] = np.arange(pos)
            out[pos:pos + m] = n + np.arange(m)
            out[pos + m:] = np.arange(pos, n)
            return out
        if m != 1 and m != at.size:
            raise ValueError("np.insert: the values do not match the indices")
        out = np.full(n + at.size, -1, np.intp)
        for j in range(at.size):   # moved on by the values placed before it (NumPy's
            before = 0             # stable order of the indices)
            for i in range(at.size):
                if at[i] < at[j] or at[i] == at[j] and i < j:
                    before += 1
            out[at[j] + before] = n + (j if m != 1 else 0)
        k = 0
        for p in range(out.size):
            if out[p] < 0:
                out[p] = k
                k += 1
        return out
    return flat


_MODES = ("raise", "wrap", "clip")


def choice_index(a, choices, mode="raise"):
    """np.choose(a, choices, mode=mode)'s index into its choices stacked on a last axis,
    broadcast with them and given a last axis of 1 (np.take_along_axis's).

    >>> choice_index(np.array([1, 0]), np.zeros((2, 2)))
    array([[1],
           [0]])
    """
    a, n = np.asarray(a), np.shape(choices)[-1]
    shape = np.broadcast_shapes(a.shape, np.shape(choices)[:-1])
    if mode == "wrap":
        a = a % n
    elif mode == "clip":
        a = np.clip(a, 0, n - 1)
    elif np.any((a < 0) | (a >= n)):
        raise ValueError("invalid entry in choice array")
    return np.broadcast_to(a, shape)[..., None]


def choice_shape(a, choices):
    """The shape of np.choose(a, choices)'s choices stacked on a last axis, broadcast
    with `a`.

    >>> choice_shape(np.zeros((3, 1), int), np.zeros((4, 2)))
    (3, 4, 2)
    """
    return np.broadcast_shapes(np.shape(a), np.shape(choices)[:-1]) + (np.shape(choices)[-1],)


@overload(choice_index)
def _choice_index_typer(a, choices, mode="raise"):
    if not isinstance(choices, types.Array):
        return None

    def impl(a, choices, mode="raise"):
        n = choices.shape[-1]
        b = np.asarray(a) + np.zeros(choices.shape[:-1], np.intp)
        if mode == "wrap":
            b = b % n
        elif mode == "clip":
            b = np.minimum(np.maximum(b, 0), n - 1)
        elif np.any((b < 0) | (b >= n)):
            raise ValueError("invalid entry in choice array")
        return b.reshape(b.shape + (1,))
    return impl


@overload(choice_shape)
def _choice_shape_typer(a, choices):
    if not isinstance(choices, types.Array):
        return None

    def impl(a, choices):
        b = np.asarray(a) + np.zeros(choices.shape[:-1], np.intp)
        return b.shape + (choices.shape[-1],)
    return impl


# ---- np.poly, np.polydiv ----

def _real_roots(r):
    r = np.asarray(r)
    if r.ndim != 1 or np.iscomplexobj(r):
        raise MissingRule("np.poly is differentiated of a 1-D array of real roots (not "
                          "of a matrix, nor of complex roots)")
    return r


def _deflated(r, k):
    """The coefficients of the product of (x - r_i) over i other than k."""
    q = np.zeros(len(r))
    q[0] = 1.0
    m = 1
    for i in range(len(r)):
        if i != k:
            for j in range(m, 0, -1):
                q[j] -= r[i] * q[j - 1]
            m += 1
    return q


def roots_grad(dy, r):
    """The gradient of r of ``y = np.poly(r)``: y = (x - r_k) q_k, so moving r_k moves
    y by -[0, q_k] (q_k the product of the other factors), dotted with dy.

    >>> roots_grad(np.array([0.0, 1.0, 0.0]), np.array([2.0, 3.0]))
    array([-1., -1.])
    """
    r = _real_roots(r)
    return np.array([-np.dot(dy[1:], _deflated(r, k)) for k in range(len(r))])


def roots_tangent(tr, r):
    """The tangent of ``y = np.poly(r)`` along tr: -sum_k tr_k [0, q_k].

    >>> roots_tangent(np.array([1.0, 0.0]), np.array([2.0, 3.0]))
    array([ 0., -1.,  3.])
    """
    r = _real_roots(r)
    out = np.zeros(len(r) + 1)
    for k in range(len(r)):
        out[1:] -= tr[k] * _deflated(r, k)
    return out


_deflated_compiled = register_jitable(_deflated)


@overload(roots_grad)
def _roots_grad_typer(dy, r):
    if not (isinstance(r, types.Array) and isinstance(r.dtype, types.Float)):
        return None

    def impl(dy, r):
        g = np.empty(len(r))
        for k in range(len(r)):
            g[k] = -np.dot(dy[1:], _deflated_compiled(r, k))
        return g
    return impl


@overload(roots_tangent)
def _roots_tangent_typer(tr, r):
    if not (isinstance(r, types.Array) and isinstance(r.dtype, types.Float)):
        return None

    def impl(tr, r):
        out = np.zeros(len(r) + 1)
        for k in range(len(r)):
            out[1:] -= tr[k] * _deflated_compiled(r, k)
        return out
    return impl


@overload(np.poly)
def _np_poly(seq_of_zeros):
    # numba has no np.poly: of a 1-D array of real roots, as NumPy's product of factors
    if not (isinstance(seq_of_zeros, types.Array) and seq_of_zeros.ndim == 1
            and isinstance(seq_of_zeros.dtype, (types.Float, types.Integer))):
        return None

    def impl(seq_of_zeros):
        c = np.zeros(len(seq_of_zeros) + 1)
        c[0] = 1.0
        for i in range(len(seq_of_zeros)):
            for j in range(i + 1, 0, -1):
                c[j] -= seq_of_zeros[i] * c[j - 1]
        return c
    return impl


def _divided(u, v):
    u, v = np.asarray(u), np.asarray(v)
    if u.ndim != 1 or v.ndim != 1 or len(v) > len(u):
        raise MissingRule("np.polydiv is differentiated of 1-D coefficients, the divisor "
                          "no longer than the dividend (else the quotient is 0 and the "
                          "remainder u: write them)")
    return len(u) - len(v) + 1


def quotient_length(u, v):
    """How many coefficients np.polydiv(u, v)'s quotient has.

    >>> quotient_length(np.ones(4), np.ones(2))
    3
    """
    return _divided(u, v)


def divisor_index(u, v):
    """The k x k lower-triangular Toeplitz matrix of v (k the quotient's length) as
    positions in v followed by a zero (position len(v)): the matrix q solves, its first k
    equations u[:k] = (q * v)[:k].

    >>> divisor_index(np.ones(3), np.ones(2))
    array([[0, 2],
           [1, 0]])
    """
    k, n = _divided(u, v), len(v)
    d = np.arange(k)[:, None] - np.arange(k)
    return np.where((d >= 0) & (d < n), d, n)


def remainder_start(u, v):
    """Where np.polydiv(u, v)'s remainder starts in u - q * v: after the quotient's k
    entries and the leading ones NumPy trims as close to zero.

    >>> remainder_start(np.array([1.0, 2.0, 1.0]), np.array([1.0, 1.0]))
    2
    """
    _divided(u, v)
    return len(u) - len(np.polydiv(u, v)[1])


@overload(quotient_length)
def _quotient_length_typer(u, v):
    def impl(u, v):
        if len(v) > len(u):
            raise MissingRule("np.polydiv is differentiated of a divisor no longer than "
                              "the dividend")
        return len(u) - len(v) + 1
    return impl


@overload(divisor_index)
def _divisor_index_typer(u, v):
    def impl(u, v):
        k, n = quotient_length(u, v), len(v)
        out = np.empty((k, k), np.intp)
        for i in range(k):
            for j in range(k):
                out[i, j] = i - j if 0 <= i - j < n else n
        return out
    return impl


@overload(remainder_start)
def _remainder_start_typer(u, v):
    def impl(u, v):   # NumPy's division, then its trim of leading entries close to 0
        k, n = quotient_length(u, v), len(v)
        r = u.astype(np.float64)
        for i in range(k):
            q = r[i] / v[0]
            for j in range(n):
                r[i + j] -= q * v[j]
        start = 0
        while start < len(u) - 1 and abs(r[start]) <= 1e-8:
            start += 1
        return start
    return impl


# ---- np.histogram ----

_EDGES = ("np.histogram's bins must increase (srcgrad differentiates it with fixed edges; "
          "NumPy widens a range of one point by 0.5 each way: give such edges)")


def histogram_index(a, edges):
    """The bin np.histogram(a, edges) counts each entry of a (flat) in, len(edges) - 1
    (one past the last) for those outside the edges.

    >>> histogram_index(np.array([0.5, 2.0, 3.0, 1.0]), np.array([0.0, 1.0, 2.0]))
    array([0, 1, 2, 1])
    """
    edges = np.asarray(edges)
    if edges.ndim != 1 or len(edges) < 2 or np.any(np.diff(edges) <= 0):
        raise MissingRule(_EDGES)
    a = np.ravel(a)
    n = len(edges) - 1
    k = np.searchsorted(edges, a, "right") - 1
    k[a == edges[-1]] = n - 1   # (the last bin holds its right edge)
    return np.where((k < 0) | (k >= n), n, k)


@overload(histogram_index)
def _histogram_index_typer(a, edges):
    if not isinstance(edges, types.Array):
        return None

    def impl(a, edges):
        n = len(edges) - 1
        if n < 1:
            raise MissingRule(_EDGES)
        for i in range(n):
            if not edges[i + 1] > edges[i]:
                raise MissingRule(_EDGES)
        flat = np.asarray(a).ravel()
        k = np.searchsorted(edges, flat, "right") - 1
        for i in range(flat.size):
            if flat[i] == edges[n]:
                k[i] = n - 1
            elif k[i] < 0 or k[i] >= n:
                k[i] = n
        return k
    return impl


# ---- np.unstack (NumPy 2.1) ----


def restacked(dy, x, axis=0):
    """The adjoint of np.unstack(x, axis): the pieces' gradients (a list) stacked again
    along `axis`.

    >>> restacked([np.ones(2), np.zeros(2)], np.zeros((2, 2)), 1)
    array([[1., 0.],
           [1., 0.]])
    """
    return np.stack([np.asarray(d) for d in dy], axis=axis)


@overload(restacked)
def _restacked_typer(dy, x, axis=0):
    if not (isinstance(dy, types.List) and isinstance(x, types.Array)):
        return None

    def stacked(dy, x, axis=0):
        out = np.zeros(x.shape)
        rows = np.moveaxis(out, axis, 0)
        for k in range(len(dy)):
            rows[k] = dy[k]
        return out
    return stacked


if hasattr(np, "unstack"):
    @overload(np.unstack)
    def _np_unstack(x, axis=0):
        # numba has no np.unstack: its pieces as a list of views (NumPy's is a tuple)
        if not isinstance(x, types.Array):
            return None

        def pieces(x, axis=0):
            rows = np.moveaxis(x, axis, 0)
            return [rows[k] for k in range(rows.shape[0])]
        return pieces
