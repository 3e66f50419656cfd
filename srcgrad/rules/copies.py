"""Copies and padding: the records of np.repeat, np.tile and np.pad, the helpers their
rules call (`repeat_grad`, `tile_grad`, `pad_grad`, and `padded`, np.pad's tangent),
each beside its numba form, and the numba forms of the calls numba lacks (an axis to
np.repeat; np.tile; np.pad in the modes 'constant', 'edge', 'reflect', 'symmetric' and
'wrap').

Each of these copies entries of its argument: np.repeat each entry `repeats` times,
np.tile the whole array `reps` times, np.pad the entries at the edges (mode 'edge'),
their mirror images ('reflect', 'symmetric') or the entries a period away ('wrap') into
the padding; mode 'constant' fills it
with constants, which makes np.pad affine (their tangent is zero). So each is linear in
its argument, and the adjoint sends each entry of dy back to the entry it copies,
adding the copies: the runs of repeats, the tiles (dy seen as (reps, shape) pairs of
axes, summed over the reps), and for np.pad each padded entry into the entry it copies,
axis by axis from the last (constants copy none).
"""

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype

from ..errors import MissingRule
from ..numba_ext import _widen_method, normalize_axis
from ..runtime import reshape_as
from . import describe, linear, rule, tangent
from .shapes import _absent, _int_sequence, _ints

# ---- copies: the adjoint sums them ----


@rule(np.repeat, methods=("repeat",))
def repeat(dy, y, x, repeats=1, axis=None):
    return repeat_grad(dy, x, repeats, axis)


@rule(np.tile)
def tile(dy, y, x, reps=1):
    return tile_grad(dy, x, reps)


def repeat_grad(dy, x, repeats, axis=None):
    """The adjoint of ``np.repeat(x, repeats, axis)``: the copies of each entry (of x
    flattened, without an axis) summed.

    >>> repeat_grad(np.array([1.0, 2.0, 3.0]), np.zeros(2), [2, 1])
    array([3., 3.])
    """
    dy = np.asarray(dy)
    k = 0 if axis is None else axis % np.ndim(x)
    moved = np.ravel(dy) if axis is None else np.moveaxis(dy, k, 0)
    n = np.size(x) if axis is None else np.shape(x)[k]
    out = np.zeros((n,) + moved.shape[1:], np.result_type(dy, 0.0))
    np.add.at(out, np.repeat(np.arange(n), repeats), moved)
    return reshape_as(out, x) if axis is None else np.moveaxis(out, 0, k)


@register_jitable
def _counts(repeats, n):
    """How many copies each of `n` entries gets (an intp array), as np.repeat reads
    `repeats`: one count for all, or one each."""
    r = _ints(repeats)
    if len(r) != 1 and len(r) != n:
        raise ValueError("repeats does not match the length of the axis")
    out = np.empty(n, np.intp)
    for i in range(n):
        out[i] = r[i if len(r) > 1 else 0]
        if out[i] < 0:
            raise ValueError("negative dimensions are not allowed")
    return out


@register_jitable
def _repeat_rows(rows, counts):
    """Row i of the matrix `rows` copied counts[i] times."""
    out = np.empty((counts.sum(), rows.shape[1]), rows.dtype)
    j = 0
    for i in range(rows.shape[0]):
        for _ in range(counts[i]):
            out[j] = rows[i]
            j += 1
    return out


@register_jitable
def _unrepeat_rows(rows, counts):
    """The sum of each run of counts[i] rows of the matrix `rows`."""
    out = np.zeros((len(counts), rows.shape[1]))
    j = 0
    for i in range(len(counts)):
        for _ in range(counts[i]):
            out[i] += rows[j]
            j += 1
    return out


@overload(np.repeat)
def _np_repeat(a, repeats, axis=None):
    # numba's np.repeat flattens the array
    if not isinstance(a, types.Array) or _absent(axis) or a.ndim == 0:
        return None

    def repeat(a, repeats, axis=None):
        k = normalize_axis(axis, a.ndim)
        b = np.ascontiguousarray(np.swapaxes(a, k, 0))
        n = b.shape[0]
        counts = _counts(repeats, n)
        rows = _repeat_rows(b.reshape((n, b.size // n if n else 0)), counts)
        return np.ascontiguousarray(np.swapaxes(
            rows.reshape((rows.shape[0],) + b.shape[1:]), k, 0))
    return repeat


def _repeat_method(a, repeats, axis=None):
    """numba's ``a.repeat(repeats)``, widened to take an axis (numba_ext._widen_method)."""
    if _absent(axis):
        return lambda a, repeats, axis=None: np.repeat(a, repeats)
    return lambda a, repeats, axis=None: np.repeat(a, repeats, axis)


_widen_method("repeat", _repeat_method)


@overload(repeat_grad)
def _repeat_grad_typer(dy, x, repeats, axis=None):
    if not isinstance(dy, types.Array):
        return None
    if _absent(axis):
        def flat(dy, x, repeats, axis=None):
            g = np.ascontiguousarray(dy).reshape((dy.size, 1))
            return reshape_as(_unrepeat_rows(g, _counts(repeats, np.size(x))).ravel(), x)
        return flat
    if not isinstance(x, types.Array):
        return None

    def along(dy, x, repeats, axis=None):
        k = normalize_axis(axis, x.ndim)
        n = x.shape[k]
        shape = np.swapaxes(x, k, 0).shape
        g = np.ascontiguousarray(np.swapaxes(dy, k, 0))
        rows = g.reshape((g.shape[0], x.size // n if n else 0))
        out = _unrepeat_rows(rows, _counts(repeats, n))
        return np.ascontiguousarray(np.swapaxes(out.reshape(shape), k, 0))
    return along


def tile_grad(dy, x, reps):
    """The adjoint of ``np.tile(x, reps)``: the tiles of dy summed, in x's shape.

    >>> tile_grad(np.arange(6.0), np.zeros(2), 3)
    array([6., 9.])
    """
    reps = tuple(np.atleast_1d(reps))
    d = max(np.ndim(x), len(reps))
    shape = (1,) * (d - np.ndim(x)) + np.shape(x)
    reps = (1,) * (d - len(reps)) + reps
    tiles = np.reshape(dy, [n for pair in zip(reps, shape, strict=True) for n in pair])
    return reshape_as(np.sum(tiles, axis=tuple(range(0, 2 * d, 2))), x)


def _tile_source(head: str, array: str, nx: int, nreps: int, body: list[str]) -> str:
    """Source of a numba form `head` (a def line) taking `array` of rank nx and reps of
    nreps ints: it names the padded reps R0.. and shape S0.. (np.tile pads both to the
    larger rank), then runs `body`."""
    d = max(nx, nreps)
    lines = [head, "    r = ints(reps)"]
    for i in range(d):
        lines.append(f"    R{i} = r[{i - (d - nreps)}]" if i >= d - nreps else f"    R{i} = 1")
        lines.append(f"    S{i} = {array}.shape[{i - (d - nx)}]" if i >= d - nx
                     else f"    S{i} = 1")
    return "\n".join(lines + [f"    {line}" for line in body]) + "\n"


def _compile(source: str, name: str):
    namespace = {"np": np, "ints": _ints, "reshape_as": reshape_as}
    exec(source, namespace)
    return namespace[name]


@overload(np.tile)
def _np_tile(A, reps):
    if not isinstance(A, types.Array):
        return None
    n = 1 if isinstance(reps, types.Integer) else len(reps) \
        if isinstance(reps, types.BaseTuple) and _int_sequence(reps) else None
    if n is None:
        raise TypingError("srcgrad: np.tile takes an int or a tuple of ints as reps here")
    d = max(A.ndim, n)
    pairs = ", ".join(f"R{i}, S{i}" for i in range(d))
    ones = ", ".join(f"1, S{i}" for i in range(d))
    out = ", ".join(f"R{i} * S{i}" for i in range(d))
    source = _tile_source("def tile(A, reps):", "A", A.ndim, n, [
        f"src = np.ascontiguousarray(A).reshape(({ones},))",
        f"return np.ascontiguousarray(np.broadcast_to(src, ({pairs},))).reshape(({out},))"])
    return _compile(source, "tile")


@overload(tile_grad)
def _tile_grad_typer(dy, x, reps):
    if not isinstance(dy, types.Array):
        return None
    nx = x.ndim if isinstance(x, types.Array) else 0
    n = 1 if isinstance(reps, types.Integer) else len(reps) \
        if isinstance(reps, types.BaseTuple) and _int_sequence(reps) else None
    if n is None:
        raise TypingError("srcgrad: np.tile takes an int or a tuple of ints as reps here")
    d = max(nx, n)
    pairs = ", ".join(f"R{i}, S{i}" for i in range(d))
    body = [f"g = np.ascontiguousarray(dy).reshape(({pairs},))"]
    # the axis of the copies of axis i is at i once those before it are summed
    body += [f"g = np.sum(g, axis={i})" for i in range(d)]
    body.append("return reshape_as(g, x)")
    return _compile(_tile_source("def tile_grad(dy, x, reps):", "x", nx, n, body), "tile_grad")


# ---- padding: the adjoint adds each padded entry into the entry it copies ----


@rule(np.pad)
def pad(dy, y, x, pad_width=0, mode="constant", constant_values=0, reflect_type="even"):
    return pad_grad(dy, x, pad_width, mode, reflect_type)


@tangent(np.pad)
def pad_tangent(dx, y, x, pad_width=0, mode="constant", constant_values=0,
                reflect_type="even"):
    # padding with constants is affine: their tangent is zero
    return padded(dx, pad_width, mode, reflect_type)


_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")
_PAD_MISSING = ("np.pad has a gradient rule for the modes 'constant', 'edge', 'wrap', "
                "'reflect' and 'symmetric' (reflect_type 'even') only")


@register_jitable
def _source(j, n, code):
    """The entry of an axis of length `n` that entry j (counted from the first entry of
    the axis, negative in the padding before it) of the padded axis copies: for mode
    `code` 0 (constant) -1 outside the axis; 1 (edge) the nearest end; 2 (reflect) the
    mirror image about the end entries, again and again (period 2 (n - 1)); 3 (symmetric)
    the mirror image about the ends themselves (period 2 n); 4 (wrap) j modulo n."""
    if 0 <= j < n:
        return j
    if code == 0:
        return -1
    if n == 0:
        raise ValueError("can't extend an empty axis with modes other than 'constant'")
    if code == 1:
        return 0 if j < 0 else n - 1
    if code == 4:
        return j % n
    if code == 3:
        j = j % (2 * n)
        return 2 * n - 1 - j if j >= n else j
    if n == 1:
        return 0
    period = 2 * (n - 1)
    j = abs(j) % period
    return period - j if j > n - 1 else j


# NumPy before 2 pads in mode 'wrap' otherwise than periodically where a pad is wider than
# its axis (np.pad(np.arange(2), (1, 5), "wrap") ends [..., 1, 1, 0, 1]): refused there
_WRAP_PERIODIC = bool(np.array_equal(np.pad(np.arange(2), (1, 5), "wrap"), [1, 0] * 4))


@register_jitable
def _check_wrap(before, after, n, code):
    if code == 4 and not _WRAP_PERIODIC and (before > n or after > n):
        raise MissingRule("np.pad in mode 'wrap' with a pad wider than its axis has no "
                          "gradient rule under NumPy < 2 (it does not pad periodically)")


def _mode_code(mode, reflect_type):
    """The mode as `_source` takes it, or MissingRule for a mode it does not know."""
    if mode not in _PAD_MODES or reflect_type != "even":
        raise MissingRule(_PAD_MISSING)
    return _PAD_MODES.index(mode)


@overload(_mode_code)
def _mode_code_typer(mode, reflect_type):
    def code(mode, reflect_type):
        if reflect_type != "even":
            raise MissingRule(_PAD_MISSING)
        if mode == "constant":
            return 0
        if mode == "edge":
            return 1
        if mode == "reflect":
            return 2
        if mode == "symmetric":
            return 3
        if mode == "wrap":
            return 4
        raise MissingRule(_PAD_MISSING)
    return code


def _widths(pad_width, ndim):
    """np.pad's `pad_width` (an int, a pair, or a pair per axis) as an (ndim, 2) array.

    >>> _widths((1, 2), 2).tolist()
    [[1, 2], [1, 2]]
    """
    return np.broadcast_to(np.asarray(pad_width, np.intp).reshape(-1, 2)
                           if np.size(pad_width) > 1 else np.asarray(pad_width, np.intp),
                           (ndim, 2))


@overload(_widths)
def _widths_typer(pad_width, ndim):
    if isinstance(pad_width, types.Integer):
        return lambda pad_width, ndim: np.full((ndim, 2), pad_width, np.intp)
    nested = isinstance(pad_width, types.BaseTuple) and all(
        isinstance(t, types.BaseTuple) for t in pad_width)
    if not nested and not _int_sequence(pad_width):
        raise TypingError("srcgrad: np.pad's pad_width must be ints here")
    rows = [f"ints(pad_width[{i}])" for i in range(len(pad_width))] if nested \
        else ["ints(pad_width)"]
    source = ("def widths(pad_width, ndim):\n"
              f"    rows = ({', '.join(rows)},)\n"
              "    out = np.empty((ndim, 2), np.intp)\n"
              "    for k in range(ndim):\n"
              "        row = rows[k if len(rows) > 1 else 0]\n"
              "        if len(rows) not in (1, ndim) or len(row) not in (1, 2):\n"
              "            raise ValueError('pad_width does not match the array')\n"
              "        out[k, 0] = row[0]\n"
              "        out[k, 1] = row[len(row) - 1]\n"
              "    return out\n")
    namespace = {"np": np, "ints": _ints}
    exec(source, namespace)
    return namespace["widths"]


def padded(x, pad_width, mode="constant", reflect_type="even"):
    """``np.pad(x, pad_width, mode)`` with zeros as the constants: the tangent of np.pad.

    >>> padded(np.array([1.0, 2.0]), 1)
    array([0., 1., 2., 0.])
    """
    _mode_code(mode, reflect_type)
    return np.pad(x, pad_width, mode) if mode not in ("reflect", "symmetric") else \
        np.pad(x, pad_width, mode, reflect_type="even")


def pad_grad(dy, x, pad_width, mode="constant", reflect_type="even"):
    """The adjoint of ``np.pad(x, pad_width, mode)``: each entry of dy added into the entry
    of x it copies, axis by axis from the last (constants copy none).

    >>> pad_grad(np.arange(5.0), np.zeros(2), (1, 2), "edge")
    array([1., 9.])
    """
    code, g = _mode_code(mode, reflect_type), np.asarray(dy)
    widths = _widths(pad_width, np.ndim(x))
    for k in reversed(range(np.ndim(x))):
        n, before = np.shape(x)[k], widths[k, 0]
        _check_wrap(before, widths[k, 1], n, code)
        source = np.array([_source(j - before, n, code) for j in range(g.shape[k])], np.intp)
        moved = np.moveaxis(g, k, 0)
        out = np.zeros((n,) + moved.shape[1:], np.result_type(g, 0.0))
        np.add.at(out, source[source >= 0], moved[source >= 0])
        g = np.moveaxis(out, 0, k)
    return reshape_as(g, x)


@register_jitable
def _pad_axis(a, k, before, after, code, value):
    """`a` padded along axis `k` (see `_source`), as a C-contiguous copy."""
    b = np.swapaxes(a, k, 0)
    n = b.shape[0]
    _check_wrap(before, after, n, code)
    out = np.empty((before + n + after,) + b.shape[1:], a.dtype)
    for p in range(before + n + after):
        j = _source(p - before, n, code)
        if j >= 0:
            out[p] = b[j]
        else:
            out[p] = value
    return np.ascontiguousarray(np.swapaxes(out, k, 0))


@register_jitable
def _unpad_axis(g, k, before, n, code):
    """The adjoint of `_pad_axis` along axis `k` of length `n`."""
    b = np.swapaxes(g, k, 0)
    _check_wrap(before, b.shape[0] - before - n, n, code)
    out = np.zeros((n,) + b.shape[1:], g.dtype)
    for p in range(b.shape[0]):
        j = _source(p - before, n, code)
        if j >= 0:
            out[j] += b[p]
    return np.ascontiguousarray(np.swapaxes(out, k, 0))


@overload(np.pad)
def _np_pad(array, pad_width, mode="constant", constant_values=0, reflect_type="even"):
    # numba has no np.pad: these modes, with one constant
    if not isinstance(array, types.Array) or array.ndim == 0:
        return None
    if not isinstance(constant_values, (types.Number, int, float)) and not (
            isinstance(constant_values, types.Omitted)):
        raise TypingError("srcgrad: np.pad compiles with one number as constant_values")

    def pad(array, pad_width, mode="constant", constant_values=0, reflect_type="even"):
        code = _mode_code(mode, reflect_type)
        widths = _widths(pad_width, array.ndim)
        out = np.ascontiguousarray(array)
        for k in range(array.ndim):
            out = _pad_axis(out, k, widths[k, 0], widths[k, 1], code, constant_values)
        return out
    return pad


@overload(padded)
def _padded_typer(x, pad_width, mode="constant", reflect_type="even"):
    if isinstance(x, types.Array):
        return lambda x, pad_width, mode="constant", reflect_type="even": np.pad(
            x, pad_width, mode, 0, reflect_type)
    return None


@overload(pad_grad)
def _pad_grad_typer(dy, x, pad_width, mode="constant", reflect_type="even"):
    if not isinstance(dy, types.Array) or not isinstance(x, types.Array):
        return None
    dtype = as_dtype(dy.dtype) if as_dtype(dy.dtype).kind in "fc" else np.dtype(np.float64)

    def unpad(dy, x, pad_width, mode="constant", reflect_type="even"):
        code = _mode_code(mode, reflect_type)
        widths = _widths(pad_width, x.ndim)
        g = np.ascontiguousarray(dy).astype(dtype)
        for k in range(x.ndim - 1, -1, -1):
            g = _unpad_axis(g, k, widths[k, 0], x.shape[k], code)
        return g
    return unpad


linear(np.repeat, np.tile, repeat_grad, tile_grad, pad_grad, padded)
describe(repeat_grad, tile_grad, pad_grad, padded, pure=True)
describe(repeat_grad, tile_grad, pad_grad, shape_only=1)
