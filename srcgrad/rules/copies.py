"""Copies and padding: the records of np.repeat, np.tile and np.pad, the helpers their
rules call (`repeat_grad`, `tile_grad`, `pad_grad`, and `padded`, np.pad's tangent),
each beside its numba form, and the numba forms of the calls numba lacks (an axis to
np.repeat; np.tile; np.pad).

Each of these copies entries of its argument: np.repeat each entry `repeats` times,
np.tile the whole array `reps` times, np.pad the entries at the edges (mode 'edge'),
their mirror images ('reflect', 'symmetric') or the entries a period away ('wrap') into
the padding; mode 'constant' fills it
with constants, which makes np.pad affine (their tangent is zero). So each is linear in
its argument, and the adjoint sends each entry of dy back to the entry it copies,
adding the copies: the runs of repeats, the tiles (dy seen as (reps, shape) pairs of
axes, summed over the reps), and for np.pad each padded entry into the entry it copies,
axis by axis from the last (constants copy none).

np.pad's other modes compute their padding, axis by axis too (a later axis's statistics
and ramps read the earlier axes padded, as NumPy's do): an odd reflection (2 edge -
mirrored), 'mean' and 'linear_ramp' are linear in the argument (the end values are
constants), and 'maximum', 'minimum' and 'median' pick entries by their values: linear
in the entries they pick, which `pad_grad` and `padded` find from x's values (so x is
read for more than its shape). `pad_grad` says where a tie's cotangent goes.
"""

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.numpy_support import as_dtype

from ..errors import MissingRule
from ..numba_ext import _widen_method, normalize_axis
from ..runtime import reshape_as, unbroadcast
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


# ---- padding: the adjoint adds each padded entry into the entries it is made of ----


@rule(np.pad)
def pad(dy, y, x, pad_width=0, mode="constant", constant_values=0, reflect_type="even",
        stat_length=None, end_values=0):
    return pad_grad(dy, x, pad_width, mode, reflect_type, stat_length)


@tangent(np.pad)
def pad_tangent(dx, y, x, pad_width=0, mode="constant", constant_values=0,
                reflect_type="even", stat_length=None, end_values=0):
    # the constants and end values are constants: their tangent is zero
    return padded(dx, x, pad_width, mode, reflect_type, stat_length)


# codes 0-4 copy entries (`_source`); 5 and 6 are 'reflect' and 'symmetric' with
# reflect_type 'odd'; 7 on, the statistics and the ramp (`_pad_rows`)
_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")
_PAD_MORE = ("mean", "maximum", "minimum", "linear_ramp", "median")
_MEAN, _MAXIMUM, _MINIMUM, _RAMP, _MEDIAN = 7, 8, 9, 10, 11
_PAD_MISSING = ("np.pad has a gradient rule for the modes 'constant', 'edge', 'wrap', "
                "'reflect' and 'symmetric' (reflect_type 'even' or 'odd'), 'mean', "
                "'maximum', 'minimum', 'median' and 'linear_ramp' only")


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
    """The mode as `_source` and `_pad_rows` take it, or MissingRule for a mode (or a
    reflect_type) they do not know."""
    if reflect_type not in ("even", "odd"):
        raise MissingRule(_PAD_MISSING)
    if mode in ("reflect", "symmetric") and reflect_type == "odd":
        return 5 if mode == "reflect" else 6
    if mode in _PAD_MODES:
        return _PAD_MODES.index(mode)
    if mode in _PAD_MORE:
        return _MEAN + _PAD_MORE.index(mode)
    raise MissingRule(_PAD_MISSING)


@overload(_mode_code)
def _mode_code_typer(mode, reflect_type):
    def code(mode, reflect_type):
        odd = reflect_type == "odd"
        if reflect_type != "even" and not odd:
            raise MissingRule(_PAD_MISSING)
        if mode == "constant":
            return 0
        if mode == "edge":
            return 1
        if mode == "reflect":
            return 5 if odd else 2
        if mode == "symmetric":
            return 6 if odd else 3
        if mode == "wrap":
            return 4
        if mode == "mean":
            return 7
        if mode == "maximum":
            return 8
        if mode == "minimum":
            return 9
        if mode == "linear_ramp":
            return 10
        if mode == "median":
            return 11
        raise MissingRule(_PAD_MISSING)
    return code


def _widths(pad_width, ndim):
    """np.pad's `pad_width` (an int, a pair, or a pair per axis) as an (ndim, 2) array,
    read as NumPy reads it (`_as_pairs`: a (2, 1) array is one width per axis).

    >>> _widths((1, 2), 2).tolist()
    [[1, 2], [1, 2]]
    >>> _widths(((1,), (2,)), 2).tolist()
    [[1, 1], [2, 2]]
    """
    return _pairs(np.asarray(pad_width, np.intp), ndim)


def _pairs(x, ndim):
    """An option of np.pad given once, as a pair or as a pair per axis, as an (ndim, 2)
    array (NumPy's `_as_pairs`)."""
    if x.size == 1:
        return np.full((ndim, 2), x.ravel()[0], x.dtype)
    if x.size == 2 and x.shape != (2, 1):
        return np.broadcast_to(x.ravel(), (ndim, 2))
    return np.broadcast_to(x, (ndim, 2))


def _pair_source(name: str, arg: str, option, dtype: str, convert: str) -> str:
    """Source of the numba form `name(arg, ndim)` of an (ndim, 2) reading of an np.pad
    option `arg` of numba type `option`: a number, a tuple of one or two, or a tuple of
    those per axis."""
    nested = isinstance(option, types.BaseTuple) and all(
        isinstance(t, types.BaseTuple) for t in option)
    rows = [f"{convert}({arg}[{i}])" for i in range(len(option))] if nested \
        else [f"{convert}({arg})"]
    return (f"def {name}({arg}, ndim):\n"
            f"    rows = ({', '.join(rows)},)\n"
            f"    out = np.empty((ndim, 2), {dtype})\n"
            "    for k in range(ndim):\n"
            "        row = rows[k if len(rows) > 1 else 0]\n"
            "        if len(rows) not in (1, ndim) or len(row) not in (1, 2):\n"
            "            raise ValueError('an option of np.pad does not match the array')\n"
            "        out[k, 0] = row[0]\n"
            "        out[k, 1] = row[len(row) - 1]\n"
            "    return out\n")


@overload(_widths)
def _widths_typer(pad_width, ndim):
    if isinstance(pad_width, types.Integer):
        return lambda pad_width, ndim: np.full((ndim, 2), pad_width, np.intp)
    nested = isinstance(pad_width, types.BaseTuple) and all(
        isinstance(t, types.BaseTuple) for t in pad_width)
    if not nested and not _int_sequence(pad_width):
        raise TypingError("srcgrad: np.pad's pad_width must be ints here")
    namespace = {"np": np, "ints": _ints}
    exec(_pair_source("widths", "pad_width", pad_width, "np.intp", "ints"), namespace)
    return namespace["widths"]


def _stat_lengths(stat_length, ndim):
    """np.pad's `stat_length` as an (ndim, 2) intp array, -1 for the whole axis (None).

    >>> _stat_lengths(None, 1).tolist(), _stat_lengths(((1, 2), (3, None)), 2).tolist()
    ([[-1, -1]], [[1, 2], [3, -1]])
    """
    if stat_length is None:
        return np.full((ndim, 2), -1, np.intp)
    x = np.asarray(stat_length, object)
    absent = np.vectorize(lambda v: v is None, otypes=[bool])(x)
    # (rounded, as NumPy's `_as_pairs` rounds an index)
    lengths = np.round(np.where(absent, -1, x).astype(np.float64)).astype(np.intp)
    if np.any(lengths[~absent] < 0):
        raise ValueError("index can't contain negative values")
    return _pairs(lengths, ndim)


@overload(_stat_lengths)
def _stat_lengths_typer(stat_length, ndim):
    if _absent(stat_length):
        return lambda stat_length, ndim: np.full((ndim, 2), -1, np.intp)

    def lengths(stat_length, ndim):
        out = _widths(stat_length, ndim)
        if np.any(out < 0):
            raise ValueError("index can't contain negative values")
        return out
    return lengths


def _end_values(end_values, ndim):
    """np.pad's `end_values` as an (ndim, 2) float array."""
    return _pairs(np.asarray(end_values, np.float64), ndim)


def _floats(v):
    return np.atleast_1d(np.asarray(v, np.float64))


@overload(_floats)
def _floats_typer(v):
    if isinstance(v, (types.Integer, types.Float)):
        return lambda v: np.full(1, v, np.float64)
    if isinstance(v, types.BaseTuple) and all(
            isinstance(e, (types.Integer, types.Float)) for e in v):
        source = f"def floats(v):\n    out = np.empty({len(v)})\n" + "".join(
            f"    out[{i}] = v[{i}]\n" for i in range(len(v))) + "    return out\n"
        namespace = {"np": np}
        exec(source, namespace)
        return namespace["floats"]
    raise TypingError("srcgrad: np.pad's end_values must be numbers here")


@overload(_end_values)
def _end_values_typer(end_values, ndim):
    if isinstance(end_values, types.Omitted):
        value = float(end_values.value)
        return lambda end_values, ndim: np.full((ndim, 2), value, np.float64)
    if isinstance(end_values, (types.Integer, types.Float)):
        return lambda end_values, ndim: np.full((ndim, 2), end_values, np.float64)
    namespace = {"np": np, "floats": _floats}
    exec(_pair_source("ends", "end_values", end_values, "np.float64", "floats"), namespace)
    return namespace["ends"]


def padded(dx, x, pad_width, mode="constant", reflect_type="even", stat_length=None):
    """The tangent of ``np.pad(x, pad_width, mode)`` along `dx`: dx padded with zeros as
    the constants and end values (x's values say which entries the statistics
    'maximum' and 'minimum' read).

    >>> padded(np.array([1.0, 2.0]), np.zeros(2), 1)
    array([0., 1., 2., 0.])
    """
    code = _mode_code(mode, reflect_type)
    if code <= 4:
        return np.pad(dx, pad_width, mode)
    ndim = np.ndim(x)
    return _padded_more(np.asarray(dx, np.result_type(dx, 0.0)), np.asarray(x, np.float64),
                        _widths(pad_width, ndim), code, _stat_lengths(stat_length, ndim))


def pad_grad(dy, x, pad_width, mode="constant", reflect_type="even", stat_length=None):
    """The adjoint of ``np.pad(x, pad_width, mode)``: each entry of dy added into the
    entries of x it is made of, axis by axis from the last (constants are made of none).

    A padded entry of mode 'mean' is the mean of its stretch (the `stat_length` entries
    at its end): its cotangent is spread evenly over them. One of 'maximum' or 'minimum'
    is its stretch's extremum: its cotangent goes to the entry that attains it, and where
    several do (a tie), it is split evenly among them, as JAX's gradient of max splits
    it. One of 'median' sends it to the middle entry of the stretch (sorted stably, so a
    tie sends it to one of the tied entries) or splits it between the two middle ones, as
    np.median's gradient does (rules/quantiles.py).
    One of 'linear_ramp', ``end + i (edge - end) / width`` (i counted from the outer
    end), sends i / width of its cotangent to the edge entry; the end values are
    constants. One of an odd reflection, ``2 edge - mirrored``, sends it to both.

    >>> pad_grad(np.arange(5.0), np.zeros(2), (1, 2), "edge")
    array([1., 9.])
    >>> pad_grad(np.ones(5), np.array([1.0, 2.0, 3.0]), 1, "mean")
    array([1.66666667, 1.66666667, 1.66666667])
    """
    code, g = _mode_code(mode, reflect_type), np.asarray(dy)
    widths = _widths(pad_width, np.ndim(x))
    if code > 4:
        return _unpad_more(np.asarray(g, np.result_type(g, 0.0)), np.asarray(x, np.float64),
                           widths, code, _stat_lengths(stat_length, np.ndim(x)))
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


# ---- the modes that compute their padding (codes 5 on), on an axis seen as rows ----


@register_jitable
def _reflect_rows(out, before, after, n, symmetric):
    """The odd reflection of rows out[before:before + n] into the rows around them, in
    place, chunk by chunk as NumPy makes it (numpy/lib/_arraypad_impl.py,
    `_set_reflect_both`): a chunk is ``2 edge - mirrored`` of the rows padded so far,
    whose edge is the last row padded."""
    m = before + n + after
    if n == 1:   # (NumPy extends a single entry as its edge)
        for p in range(m):
            out[p] = out[before]
        return
    left, right = before, after
    while left > 0 or right > 0:
        old = m - right - left
        if symmetric:
            old, offset = old // n * n, 1
        else:
            old, offset = (old - 1) // (n - 1) * (n - 1), 0
        if left > 0:
            c = min(old, left)
            edge = out[left].copy()
            for i in range(c):
                out[left - c + i] = 2 * edge - out[left - offset + c - i]
            left -= c
        if right > 0:
            c = min(old, right)
            edge = out[m - right - 1].copy()
            for i in range(c):
                out[m - right + i] = 2 * edge - out[m - right + offset - 2 - i]
            right -= c


@register_jitable
def _stretch(n, length, first):
    """The rows (lo, hi) a statistic reads: `length` (-1: all) at the first or last end of
    an axis of length n."""
    count = n if length < 0 or length > n else length
    if count == 0:
        raise ValueError("stat_length of 0 yields no value for padding")
    return (0, count) if first else (n - count, n)


@register_jitable
def _stat_weights(column, code):
    """d stat / d column for the statistic `code`: 1 / len evenly (mean); for the maximum
    or minimum, 1 / ties on each entry equal to it (a tie splits it, as JAX does); for
    the median, 1 on the middle entry of a stable sort, or 1/2 on each of the two middle
    ones (np.median's gradient, `rules/quantiles.py`)."""
    w = np.zeros(len(column))
    if code == _MEAN:
        w[:] = 1.0 / len(column)
        return w
    if code == _MEDIAN:
        order = np.argsort(column, kind="mergesort")
        half = len(column) // 2
        if len(column) % 2:
            w[order[half]] = 1.0
        else:
            w[order[half - 1]] += 0.5
            w[order[half]] += 0.5
        return w
    best = np.max(column) if code == _MAXIMUM else np.min(column)
    ties = 0
    for i in range(len(column)):
        if column[i] == best:
            ties += 1
    for i in range(len(column)):
        if column[i] == best:
            w[i] = 1.0 / ties
    return w


@register_jitable
def _pad_rows(rows, before, after, code, first, last, end0, end1):
    """The (n, r) matrix `rows` padded along its first axis in mode `code` (5 on), with
    the statistics read over `first` and `last` rows at each end (-1: all) and the ramps
    going to the end values `end0` and `end1`."""
    n, r = rows.shape
    m = before + n + after
    out = np.empty((m, r), rows.dtype)
    out[before:before + n] = rows
    if n == 0:
        if before + after > 0:
            raise ValueError("can't extend an empty axis with modes other than 'constant'")
        return out
    if code == 5 or code == 6:
        _reflect_rows(out, before, after, n, code == 6)
    elif code == _RAMP:
        # np.linspace(end, edge, width, endpoint=False): end + i (edge - end) / width
        for i in range(before):
            out[i] = end0 + i * ((out[before] - end0) / before)
        for i in range(after):
            out[m - 1 - i] = end1 + i * ((out[before + n - 1] - end1) / after)
    else:
        for side in range(2):
            lo, hi = _stretch(n, first if side == 0 else last, side == 0)
            stat = np.empty(r, rows.dtype)
            for c in range(r):
                column = rows[lo:hi, c]
                stat[c] = np.mean(column) if code == _MEAN else np.max(column) \
                    if code == _MAXIMUM else np.min(column) if code == _MINIMUM \
                    else np.median(column)
            for p in range(before) if side == 0 else range(before + n, m):
                out[p] = stat
    return out


@register_jitable
def _as_rows(a, k):
    """`a` with axis k first and the others flattened: an (n, rest) C-contiguous copy."""
    b = np.ascontiguousarray(np.swapaxes(a, k, 0))
    n = b.shape[0]
    return b.reshape((n, b.size // n if n else 0))


@register_jitable
def _from_rows(rows, a, k):
    """The rows (m, rest) of `_as_rows(a, k)` padded, in the shape of a padded along k."""
    b = np.swapaxes(a, k, 0)
    out = np.ascontiguousarray(rows).reshape((rows.shape[0],) + b.shape[1:])
    return np.ascontiguousarray(np.swapaxes(out, k, 0))


@register_jitable
def _pad_more(a, widths, code, lengths, ends):
    """``np.pad`` in a mode coded 5 on (see `_pad_rows`), axis by axis from the first."""
    out = np.ascontiguousarray(a)
    for k in range(a.ndim):
        rows = _pad_rows(_as_rows(out, k), widths[k, 0], widths[k, 1], code, lengths[k, 0],
                         lengths[k, 1], ends[k, 0], ends[k, 1])
        out = _from_rows(rows, out, k)
    return out


@register_jitable
def _partly_padded(x, widths, code, lengths):
    """x padded along its axes before each axis k (for k = 0 .. ndim - 1): what np.pad
    reads its statistics on along axis k (each is x itself for the other modes)."""
    out = [np.ascontiguousarray(x)]
    for k in range(x.ndim - 1):
        stat = code == _MEAN or code == _MAXIMUM or code == _MINIMUM or code == _MEDIAN
        out.append(_from_rows(_pad_rows(_as_rows(out[k], k), widths[k, 0], widths[k, 1],
                                        code, lengths[k, 0], lengths[k, 1], 0.0, 0.0),
                              out[k], k) if stat else out[k])
    return out


@register_jitable
def _unpad_more(g, x, widths, code, lengths):
    """`pad_grad` in a mode coded 5 on: axis by axis from the last, each padded row of g
    added into the rows it is made of (weighted)."""
    values = _partly_padded(x, widths, code, lengths)
    for k in range(x.ndim - 1, -1, -1):
        n, before = x.shape[k], widths[k, 0]
        rows = _as_rows(g, k)
        m, r = rows.shape
        after = m - before - n
        out = np.zeros((n, r), rows.dtype)
        out[:] = rows[before:before + n]
        if n == 0 and m > 0:
            raise ValueError("can't extend an empty axis with modes other than 'constant'")
        if code == 5 or code == 6 or code == _RAMP:
            # the map is the same on every column: its matrix, the padded identity
            weights = _pad_rows(np.eye(n), before, after, code, -1, -1, 0.0, 0.0)
            for p in range(before):
                for j in range(n):
                    if weights[p, j] != 0.0:
                        out[j] += weights[p, j] * rows[p]
            for p in range(before + n, m):
                for j in range(n):
                    if weights[p, j] != 0.0:
                        out[j] += weights[p, j] * rows[p]
        elif n > 0:
            seen = _as_rows(values[k], k)
            for side in range(2):
                lo, hi = _stretch(n, lengths[k, 0] if side == 0 else lengths[k, 1], side == 0)
                for c in range(r):
                    total = np.sum(rows[:before, c]) if side == 0 else \
                        np.sum(rows[before + n:, c])
                    w = _stat_weights(seen[lo:hi, c], code)
                    for i in range(hi - lo):
                        out[lo + i, c] += w[i] * total
        g = _from_rows(out, g, k)
    return g


@register_jitable
def _padded_more(dx, x, widths, code, lengths):
    """`padded` in a mode coded 5 on: the modes but the statistics are linear (dx padded
    with zero end values); a statistic's tangent is its weights (`_stat_weights`, read on
    x's values) times dx's stretch."""
    values = _partly_padded(x, widths, code, lengths)
    out = np.ascontiguousarray(dx)
    for k in range(x.ndim):
        d = _as_rows(out, k)
        n, r = d.shape
        before, after = widths[k, 0], widths[k, 1]
        if code == 5 or code == 6 or code == _RAMP or n == 0:
            rows = _pad_rows(d, before, after, code, -1, -1, 0.0, 0.0)
        else:
            seen = _as_rows(values[k], k)
            m = before + n + after
            rows = np.empty((m, r), d.dtype)
            rows[before:before + n] = d
            for side in range(2):
                lo, hi = _stretch(n, lengths[k, 0] if side == 0 else lengths[k, 1], side == 0)
                stat = np.empty(r, d.dtype)
                for c in range(r):
                    stat[c] = np.sum(_stat_weights(seen[lo:hi, c], code) * d[lo:hi, c])
                for p in range(before) if side == 0 else range(before + n, m):
                    rows[p] = stat
        out = _from_rows(rows, out, k)
    return out


def _paths(mode, reflect_type) -> tuple[bool, bool]:
    """Whether a call's numba form needs the modes that copy (codes 0-4), and those that
    compute their padding (5 on): one of them where numba sees the mode as a constant
    (the forms prefer literals), so that a call compiles what its mode runs only."""
    def constant(t):
        if isinstance(t, str):   # (an argument left out: its default)
            return t
        if isinstance(t, types.Omitted):
            return t.value
        return t.literal_value if isinstance(t, types.StringLiteral) else None
    m, r = constant(mode), constant(reflect_type)
    if not isinstance(m, str) or not isinstance(r, str):
        return True, True
    try:
        code = _mode_code(m, r)
    except MissingRule:
        return True, False   # (raised again at run time, by _mode_code's numba form)
    return code <= 4, code > 4


@overload(np.pad, prefer_literal=True)
def _np_pad(array, pad_width, mode="constant", constant_values=0, reflect_type="even",
            stat_length=None, end_values=0):
    # numba has no np.pad: these modes, with one constant
    if not isinstance(array, types.Array) or array.ndim == 0:
        return None
    if not isinstance(constant_values, (types.Number, int, float)) and not (
            isinstance(constant_values, types.Omitted)):
        raise TypingError("srcgrad: np.pad compiles with one number as constant_values")
    copying, computing = _paths(mode, reflect_type)
    if computing and not copying and as_dtype(array.dtype).kind == "f":
        def computed(array, pad_width, mode="constant", constant_values=0,
                     reflect_type="even", stat_length=None, end_values=0):
            return _pad_more(array, _widths(pad_width, array.ndim),
                             _mode_code(mode, reflect_type),
                             _stat_lengths(stat_length, array.ndim),
                             _end_values(end_values, array.ndim))
        return computed
    if as_dtype(array.dtype).kind != "f" or not computing:
        # the modes that compute their padding compile for float arrays (NumPy rounds
        # an integer mean, and truncates an integer ramp)
        def copies(array, pad_width, mode="constant", constant_values=0,
                   reflect_type="even", stat_length=None, end_values=0):
            code = _mode_code(mode, reflect_type)
            if code > 4:
                raise ValueError("srcgrad compiles np.pad in this mode for float arrays only")
            widths = _widths(pad_width, array.ndim)
            out = np.ascontiguousarray(array)
            for k in range(array.ndim):
                out = _pad_axis(out, k, widths[k, 0], widths[k, 1], code, constant_values)
            return out
        return copies

    def pad(array, pad_width, mode="constant", constant_values=0, reflect_type="even",
            stat_length=None, end_values=0):
        code = _mode_code(mode, reflect_type)
        widths = _widths(pad_width, array.ndim)
        if code > 4:
            return _pad_more(array, widths, code, _stat_lengths(stat_length, array.ndim),
                             _end_values(end_values, array.ndim))
        out = np.ascontiguousarray(array)
        for k in range(array.ndim):
            out = _pad_axis(out, k, widths[k, 0], widths[k, 1], code, constant_values)
        return out
    return pad


@overload(padded, prefer_literal=True)
def _padded_typer(dx, x, pad_width, mode="constant", reflect_type="even", stat_length=None):
    if not isinstance(dx, types.Array) or not isinstance(x, types.Array):
        return None
    if not _paths(mode, reflect_type)[1]:
        return lambda dx, x, pad_width, mode="constant", reflect_type="even", \
            stat_length=None: np.pad(dx, pad_width, mode, 0, reflect_type)

    def tangent(dx, x, pad_width, mode="constant", reflect_type="even", stat_length=None):
        code = _mode_code(mode, reflect_type)
        if code <= 4:
            return np.pad(dx, pad_width, mode, 0, reflect_type)
        return _padded_more(dx, x.astype(np.float64), _widths(pad_width, x.ndim), code,
                            _stat_lengths(stat_length, x.ndim))
    return tangent


@overload(pad_grad, prefer_literal=True)
def _pad_grad_typer(dy, x, pad_width, mode="constant", reflect_type="even",
                    stat_length=None):
    if not isinstance(dy, types.Array) or not isinstance(x, types.Array):
        return None
    dtype = as_dtype(dy.dtype) if as_dtype(dy.dtype).kind in "fc" else np.dtype(np.float64)
    # (the modes coded 5 on compile for real cotangents, and where the mode may be one)
    more = dtype.kind == "f" and _paths(mode, reflect_type)[1]

    def copies(dy, x, pad_width, mode="constant", reflect_type="even", stat_length=None):
        code = _mode_code(mode, reflect_type)
        if code > 4:
            raise MissingRule("srcgrad differentiates np.pad in this mode for real "
                              "cotangents only")
        widths = _widths(pad_width, x.ndim)
        g = np.ascontiguousarray(dy).astype(dtype)
        for k in range(x.ndim - 1, -1, -1):
            g = _unpad_axis(g, k, widths[k, 0], x.shape[k], code)
        return g

    def unpad(dy, x, pad_width, mode="constant", reflect_type="even", stat_length=None):
        code = _mode_code(mode, reflect_type)
        widths = _widths(pad_width, x.ndim)
        g = np.ascontiguousarray(dy).astype(dtype)
        if code > 4:
            return _unpad_more(g, x.astype(np.float64), widths, code,
                               _stat_lengths(stat_length, x.ndim))
        for k in range(x.ndim - 1, -1, -1):
            g = _unpad_axis(g, k, widths[k, 0], x.shape[k], code)
        return g
    return unpad if more else copies


linear(np.repeat, np.tile, repeat_grad, tile_grad, pad_grad, padded)
describe(repeat_grad, tile_grad, pad_grad, padded, pure=True)
describe(repeat_grad, tile_grad, shape_only=1)


# ---- np.copyto: normalize writes `np.copyto(dst, src)` as `dst[...] = copied_into(dst,
# src)` (the record's `updates`), a write the passes follow. Where `where` holds, the entry
# is src's (broadcast), else dst's: each cotangent goes back to the one it came from ----


def copied_into(dst, src, casting="same_kind", where=True):
    """A copy of `dst` with `src` copied into it as np.copyto copies it (broadcast, cast
    to dst's type, where `where` holds).

    >>> copied_into(np.zeros(3), 2.0, where=np.array([True, False, True]))
    array([2., 0., 2.])
    """
    out = np.array(dst, copy=True)
    np.copyto(out, src, casting=casting, where=where)
    return out


@overload(copied_into)
def _copied_into_typer(dst, src, casting="same_kind", where=True):
    if not isinstance(dst, types.Array):
        raise TypingError("srcgrad: np.copyto copies into an array")
    kind = src.dtype if isinstance(src, types.Array) else src
    if isinstance(dst.dtype, types.Integer) and not isinstance(kind, (types.Integer,
                                                                      types.Boolean)):
        raise TypingError("srcgrad: np.copyto of non-integer values into an integer array "
                          "(NumPy refuses the cast)")
    masked = isinstance(where, types.Array)

    def impl(dst, src, casting="same_kind", where=True):
        values = np.broadcast_to(np.asarray(src), dst.shape)
        if masked:
            return np.where(np.broadcast_to(where, dst.shape), values, dst).astype(dst.dtype)
        if where:
            return values.astype(dst.dtype)
        return dst.copy()
    return impl


@rule(copied_into)
def copied_into_(dy, y, dst, src, casting="same_kind", where=True):
    return dy * np.logical_not(where), unbroadcast(dy * where, src)


linear(copied_into, positions=(0, 1))
describe(np.copyto, updates=(None, copied_into))
