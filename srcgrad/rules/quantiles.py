"""Order statistics: the records of np.median, np.quantile and np.percentile, the helpers
their rules call (each Python form beside its numba form).

With NumPy's default method ('linear'), the q-quantile of the n entries of a lane (all of
`a`, or `a` along `axis`) is its sorted entries s read at p = q (n - 1): (1 - f) s[lo] +
f s[hi], where lo = floor(p), hi = min(lo + 1, n - 1) and f = p - lo. So the gradient puts
(1 - f) dy on the entry sorted to lo and f dy on the one sorted to hi, found by a stable
argsort (where entries tie, one of the one-sided derivatives, as in JAX). q is
differentiated too: dy/dq = (n - 1) (s[hi] - s[lo]) (np.percentile: that over 100; the nan
forms: n counts a lane's entries that are not NaN), and q's gradient is the sum over lanes
of dy dy/dq, shaped as q. At a whole p (f = 0: q = 0, q = 1, and q = k / (n - 1)), where
y is piecewise linear in q with a kink and its derivative one-sided, dy/dq is 0, what JAX
returns (`jax.grad(lambda q: jnp.quantile(x, q))(0.25)` of 5 entries is 0.0: it reads
s[floor(p)] and s[ceil(p)], the same entry there); a's gradient there is the whole dy on
the entry sorted to lo, as JAX's. The median
is the 0.5-quantile; np.percentile takes q in percent. The other methods, `weights`, `out` and
`overwrite_input=True` are refused; `axis` may be a tuple in the Python form.
"""

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.unsafe.ndarray import to_fixed_tuple

from ..numba_ext import normalize_axis, omitted
from . import describe, rule, tangent
from .cumulative import lanes


def _refused(keywords) -> str | None:
    if keywords.get("method", "linear") != "linear" or keywords.get("interpolation"):
        return "only method='linear' (NumPy's default) is differentiated"
    if keywords.get("weights") is not None or keywords.get("out") is not None:
        return "weights= and out= are not differentiated"
    if keywords.get("overwrite_input"):
        return "overwrite_input=True lets NumPy reorder the argument: pass a copy"
    return None


def _rows(a, axis):
    """`a`'s lanes along `axis` (None: all of it; a tuple: those axes as one) as the rows
    of a matrix, and the function that puts a matrix of that shape back as `a` is."""
    a = np.asarray(a)
    axes = list(range(a.ndim)) if axis is None else \
        [k % a.ndim for k in (axis if isinstance(axis, tuple) else (axis,))]
    order = [k for k in range(a.ndim) if k not in axes] + axes
    moved = np.transpose(a, order)
    kept = len(order) - len(axes)
    rows = moved.reshape(int(np.prod(moved.shape[:kept])), -1)
    return rows, lambda m: np.transpose(m.reshape(moved.shape), np.argsort(order))


def _positions(q, n):
    """Per entry of q (flattened): the sorted places lo and hi it reads, and f."""
    p = np.ravel(np.asarray(q, dtype=np.float64)) * (n - 1)
    lo = np.floor(p).astype(np.intp)
    return lo, np.minimum(lo + 1, n - 1), p - lo


def quantile_grad(dy, a, q, axis=None):
    """The gradient of `a` of ``y = np.quantile(a, q, axis)`` (q in [0, 1]).

    >>> quantile_grad(1.0, np.array([3.0, 1.0, 2.0, 4.0]), 0.5)
    array([0.5, 0. , 0.5, 0. ])
    """
    rows, back = _rows(a, axis)
    m, n = rows.shape
    lo, hi, f = _positions(q, n)
    order = np.argsort(rows, axis=1, kind="stable")
    g = np.reshape(dy, (lo.size, m))
    out = np.zeros((m, n), np.result_type(g, rows, 1.0))
    r = np.arange(m)
    for j in range(lo.size):
        np.add.at(out, (r, order[:, lo[j]]), (1.0 - f[j]) * g[j])
        np.add.at(out, (r, order[:, hi[j]]), f[j] * g[j])
    return back(out)


def quantile_tangent(dx, y, a, q, axis=None):
    """The tangent of ``y = np.quantile(a, q, axis)`` along a's tangent dx.

    >>> quantile_tangent(np.array([10.0, 20.0, 30.0]), 2.0, np.array([3.0, 1.0, 2.0]), 0.5)
    30.0
    """
    rows, _ = _rows(a, axis)
    moved, _ = _rows(np.broadcast_to(dx, np.shape(a)), axis)
    n = rows.shape[1]
    lo, hi, f = _positions(q, n)
    taken = np.take_along_axis(moved, np.argsort(rows, axis=1, kind="stable"), axis=1)
    t = (1.0 - f)[:, None] * taken[:, lo].T + f[:, None] * taken[:, hi].T
    return t.reshape(np.shape(y)) if np.ndim(y) else float(t[0, 0])


# ---- numba forms: axis None or an int, q a number or an array ----


def _lanes_of(a, axis):
    """(numba) `a` as (before, n, after) lanes along `axis`; all of it as one if None."""


@overload(_lanes_of)
def _lanes_of_typer(a, axis):
    if axis is None or isinstance(axis, (types.NoneType, types.Omitted)):
        return lambda a, axis: np.ascontiguousarray(a).reshape((1, a.size, 1))
    return lambda a, axis: lanes(a, axis)


@register_jitable
def _place(q, n):
    pos = q * (n - 1)
    lo = int(np.floor(pos))
    return lo, min(lo + 1, n - 1), pos - lo


@register_jitable
def _order(lane, skip_nan):
    """The places of `lane`'s entries (skip_nan: those that are not NaN) in the stable
    order of their values."""
    if skip_nan:
        idx = np.nonzero(lane == lane)[0]
        return idx[np.argsort(lane[idx], kind="mergesort")]
    return np.argsort(lane, kind="mergesort")


@register_jitable
def _places(x3, qs, skip_nan):
    """The table of where the quantiles qs read the lanes of x3 (before, n, after): per
    entry j of qs and lane x3[p, :, r], at (j, p, r), the places in the lane of the
    entries sorted to lo and to hi, and f; and per lane, at (p, r), how many entries it
    sorts (skip_nan: those that are not NaN; an all-NaN lane sorts none, its places and
    f are 0)."""
    before, n, after = x3.shape
    lo = np.zeros((qs.size, before, after), np.intp)
    hi = np.zeros((qs.size, before, after), np.intp)
    f = np.zeros((qs.size, before, after))
    count = np.zeros((before, after), np.intp)
    for p in range(before):
        for r in range(after):
            order = _order(x3[p, :, r].copy(), skip_nan)
            count[p, r] = order.size
            for j in range(qs.size if order.size else 0):
                low, high, f[j, p, r] = _place(qs[j], order.size)
                lo[j, p, r], hi[j, p, r] = order[low], order[high]
    return lo, hi, f, count


@register_jitable
def _quantile_adjoint(g, x3, qs, skip_nan):
    """The gradient of lanes x3 (before, n, after) from cotangents g (qs.size, lanes);
    skip_nan: NaNs left out (an all-NaN lane gets 0)."""
    lo, hi, f, count = _places(x3, qs, skip_nan)
    out = np.zeros(x3.shape)
    for at in np.ndindex(lo.shape):
        j, p, r = at
        if count[p, r]:
            out[p, lo[at], r] += (1.0 - f[at]) * g[j, p * x3.shape[2] + r]
            out[p, hi[at], r] += f[at] * g[j, p * x3.shape[2] + r]
    return out


@register_jitable
def _quantile_lanes(t3, x3, qs, skip_nan):
    """Per entry of qs and lane of x3 (before, n, after): the tangent along x3's tangent
    t3 (skip_nan: NaNs left out; 0 for an all-NaN lane)."""
    lo, hi, f, count = _places(x3, qs, skip_nan)
    out = np.zeros(lo.shape)
    for at in np.ndindex(lo.shape):
        j, p, r = at
        if count[p, r]:
            out[at] = (1.0 - f[at]) * t3[p, lo[at], r] + f[at] * t3[p, hi[at], r]
    return out.reshape((qs.size, x3.shape[0] * x3.shape[2]))


@register_jitable
def _slope_lanes(t3, x3, qs, skip_nan):
    """Per entry of qs and lane of x3 (before, n, after): the slope in q of the quantile
    of lane t3 read at x3's sorted places, (n - 1) (t[hi] - t[lo]), and 0 at a whole p
    (f = 0), as JAX gives (skip_nan: n counts the entries that are not NaN; 0 for an
    all-NaN lane)."""
    lo, hi, f, count = _places(x3, qs, skip_nan)
    out = np.zeros(lo.shape)
    for at in np.ndindex(lo.shape):
        j, p, r = at
        if f[at] > 0.0:
            out[at] = (count[p, r] - 1) * (t3[p, hi[at], r] - t3[p, lo[at], r])
    return out.reshape((qs.size, x3.shape[0] * x3.shape[2]))


@register_jitable
def _slope_adjoint(g, x3, qs, skip_nan):
    """The transpose of `_slope_lanes` in t3: the lanes (before, n, after) that cotangents
    g (qs.size, lanes) give."""
    lo, hi, f, count = _places(x3, qs, skip_nan)
    out = np.zeros(x3.shape)
    for at in np.ndindex(lo.shape):
        j, p, r = at
        if f[at] > 0.0:
            w = (count[p, r] - 1) * g[j, p * x3.shape[2] + r]
            out[p, hi[at], r] += w
            out[p, lo[at], r] -= w
    return out


def _typed(a, axis) -> bool:
    """Whether a numba form serves these types (an array, an axis None or an int)."""
    if not isinstance(a, types.Array):
        return False
    if not (axis is None or isinstance(axis, (types.NoneType, types.Omitted, types.Integer))):
        raise TypingError("srcgrad: numba takes the axis of np.median, np.quantile and "
                          "np.percentile as None or an int")
    return True


@register_jitable
def _cotangents(dy, k, x3):
    return np.ascontiguousarray(np.asarray(dy, dtype=np.float64)).reshape(
        (k, x3.shape[0] * x3.shape[2]))


def _grad_typer(skip_nan):
    """numba's form of quantile_grad (skip_nan: nanquantile_grad's)."""
    def typer(dy, a, q, axis=None):
        if not _typed(a, axis):
            return None

        def grad(dy, a, q, axis=None):
            x3 = _lanes_of(a, axis)
            qs = np.asarray(q, dtype=np.float64).ravel()
            return _quantile_adjoint(_cotangents(dy, qs.size, x3), x3, qs,
                                     skip_nan).reshape(a.shape)
        return grad
    return typer


def _tangent_typer(skip_nan):
    """numba's form of quantile_tangent (skip_nan: nanquantile_tangent's)."""
    def typer(dx, y, a, q, axis=None):
        if not _typed(a, axis):
            return None

        @register_jitable
        def along(dx, y, a, q, axis=None):
            x3 = _lanes_of(a, axis)
            t3 = _lanes_of(np.ascontiguousarray(np.broadcast_to(dx, a.shape)), axis)
            return _quantile_lanes(t3, x3, np.asarray(q, dtype=np.float64).ravel(), skip_nan)
        if isinstance(y, types.Number):
            return lambda dx, y, a, q, axis=None: along(dx, y, a, q, axis)[0, 0]
        return lambda dx, y, a, q, axis=None: along(dx, y, a, q, axis).reshape(y.shape)
    return typer


overload(quantile_grad)(_grad_typer(False))
overload(quantile_tangent)(_tangent_typer(False))


# ---- the derivatives in q (skip_nan: of the nan forms) ----


def _slopes(t, a, q, axis, skip_nan):
    """(Python) `_slope_lanes` of t (a's shape) read at a's sorted places, (q's size,
    lanes)."""
    rows, _ = _rows(a, axis)
    moved, _ = _rows(np.broadcast_to(t, np.shape(a)), axis)
    qs = np.ravel(np.asarray(q, dtype=np.float64))
    return _slope_lanes(moved[:, :, None], rows[:, :, None], qs, skip_nan)


def quantile_q_grad(dy, t, a, q, axis=None, skip_nan=False):
    """The gradient of q of ``y = np.quantile(a, q, axis)`` from y's cotangent dy, with
    the slopes read from t (t = a; t = a's tangent in its own tangent): per entry of q,
    the sum over lanes of dy (n - 1) (t[hi] - t[lo]). Shaped as q.

    >>> quantile_q_grad(1.0, np.array([3.0, 1.0, 4.0, 1.5, 9.0]),
    ...                 np.array([3.0, 1.0, 4.0, 1.5, 9.0]), 0.3)
    6.0
    """
    s = _slopes(t, a, q, axis, skip_nan)
    g = np.sum(np.reshape(np.asarray(dy, dtype=np.float64), s.shape) * s, axis=1)
    return g.reshape(np.shape(q)) if np.ndim(q) else float(g[0])


def quantile_q_tangent(dq, y, t, a, q, axis=None, skip_nan=False):
    """The tangent of ``y = np.quantile(a, q, axis)`` along q's tangent dq (slopes read
    from t, as `quantile_q_grad`'s). Shaped as y."""
    s = _slopes(t, a, q, axis, skip_nan) * np.ravel(
        np.broadcast_to(np.asarray(dq, dtype=np.float64), np.shape(q)))[:, None]
    return s.reshape(np.shape(y)) if np.ndim(y) else float(s[0, 0])


def quantile_slope_grad(dy, dq, a, q, axis=None, skip_nan=False):
    """The tangent of `quantile_grad(dy, a, q, axis)` (a's gradient) along q's tangent
    dq: per entry of q and lane, dy dq (n - 1) at the entry sorted to hi, less that at
    the one sorted to lo (0 at a whole p). Shaped as a."""
    rows, back = _rows(a, axis)
    qs = np.ravel(np.asarray(q, dtype=np.float64))
    g = np.reshape(np.asarray(dy, dtype=np.float64), (qs.size, rows.shape[0])) * np.ravel(
        np.broadcast_to(np.asarray(dq, dtype=np.float64), np.shape(q)))[:, None]
    return back(_slope_adjoint(g, rows[:, :, None], qs, skip_nan)[:, :, 0])


@overload(quantile_q_grad)
def _q_grad_typer(dy, t, a, q, axis=None, skip_nan=False):
    if not _typed(a, axis):
        return None
    skip = _constant(skip_nan, "skip_nan")

    @register_jitable
    def summed(dy, t, a, q, axis):
        x3 = _lanes_of(a, axis)
        t3 = _lanes_of(np.ascontiguousarray(np.broadcast_to(t, a.shape)), axis)
        qs = np.asarray(q, dtype=np.float64).ravel()
        return np.sum(_cotangents(dy, qs.size, x3) * _slope_lanes(t3, x3, qs, skip), axis=1)
    if isinstance(q, types.Number) or isinstance(q, types.Array) and q.ndim == 0:
        return lambda dy, t, a, q, axis=None, skip_nan=False: summed(dy, t, a, q, axis)[0]
    return lambda dy, t, a, q, axis=None, skip_nan=False: summed(dy, t, a, q, axis).reshape(
        np.shape(q))


@overload(quantile_q_tangent)
def _q_tangent_typer(dq, y, t, a, q, axis=None, skip_nan=False):
    if not _typed(a, axis):
        return None
    skip = _constant(skip_nan, "skip_nan")

    @register_jitable
    def along(dq, y, t, a, q, axis):
        x3 = _lanes_of(a, axis)
        t3 = _lanes_of(np.ascontiguousarray(np.broadcast_to(t, a.shape)), axis)
        qs = np.asarray(q, dtype=np.float64).ravel()
        d = np.asarray(dq, dtype=np.float64).ravel()
        return _slope_lanes(t3, x3, qs, skip) * d.reshape((d.size, 1))
    if isinstance(y, types.Number):
        return lambda dq, y, t, a, q, axis=None, skip_nan=False: along(
            dq, y, t, a, q, axis)[0, 0]
    return lambda dq, y, t, a, q, axis=None, skip_nan=False: along(
        dq, y, t, a, q, axis).reshape(y.shape)


@overload(quantile_slope_grad)
def _slope_grad_typer(dy, dq, a, q, axis=None, skip_nan=False):
    if not _typed(a, axis):
        return None
    skip = _constant(skip_nan, "skip_nan")

    def grad(dy, dq, a, q, axis=None, skip_nan=False):
        x3 = _lanes_of(a, axis)
        qs = np.asarray(q, dtype=np.float64).ravel()
        d = np.asarray(dq, dtype=np.float64).ravel()
        g = _cotangents(dy, qs.size, x3) * d.reshape((d.size, 1))
        return _slope_adjoint(g, x3, qs, skip).reshape(a.shape)
    return grad


# numba's np.median, np.quantile and np.percentile take no axis or keepdims: these forms
# serve the calls that give one


@register_jitable
def _quantile_values(x3, qs, mean, skip_nan):
    """Per entry of qs and lane of x3 (before, n, after): the quantile (NumPy's `_lerp`;
    `mean`: the median's mean of the two middle entries, as np.median computes it;
    skip_nan: of the entries that are not NaN, NaN for an all-NaN lane)."""
    lo, hi, f, count = _places(x3, qs, skip_nan)
    out = np.empty(lo.shape)
    for at in np.ndindex(lo.shape):
        j, p, r = at
        if count[p, r] == 0:
            out[at] = np.nan
            continue
        low, high = x3[p, lo[at], r], x3[p, hi[at], r]
        diff = high - low
        out[at] = (low + high) / 2.0 if mean and f[at] > 0.0 else \
            high - diff * (1.0 - f[at]) if f[at] >= 0.5 else low + diff * f[at]
    return out.reshape((qs.size, x3.shape[0] * x3.shape[2]))


@register_jitable
def _kept_shape(shape, axis, keep, qshape):
    """q's shape, then `shape` without `axis` (None: all of it), or with 1 there (keep)."""
    out = list(qshape)
    for k in range(len(shape)):
        if axis is None or k == normalize_axis(axis, len(shape)):
            if keep:
                out.append(1)
        else:
            out.append(shape[k])
    return np.array(out, dtype=np.intp)


def _constant(v, name):
    if omitted(v):
        return False
    if isinstance(v, types.BooleanLiteral):
        return v.literal_value
    raise TypingError(f"srcgrad: numba takes {name} as a constant True or False")


def _quantile_form(a, q, axis, keepdims, scale, mean=False, skip_nan=False):
    """numba's form of a quantile with an axis or keepdims (numba's own take the array and
    q alone); skip_nan: of a nan quantile."""
    if not isinstance(a, types.Array) or omitted(axis) and omitted(keepdims):
        return None
    _typed(a, axis)
    keep = _constant(keepdims, "keepdims")
    flat = axis is None or isinstance(axis, (types.NoneType, types.Omitted))
    qnd = 0 if isinstance(q, types.Number) else q.ndim if isinstance(q, types.Array) else 1
    nd = qnd + (a.ndim if keep else 0 if flat else a.ndim - 1)

    @register_jitable
    def impl(a, q, axis=None, keepdims=False):
        qs = np.asarray(q, dtype=np.float64).ravel() / scale
        values = _quantile_values(_lanes_of(a, axis), qs, mean, skip_nan)
        return values.reshape(to_fixed_tuple(_kept_shape(
            a.shape, axis, keep, np.shape(np.asarray(q))), nd))
    if nd == 0:
        return register_jitable(lambda a, q, axis=None, keepdims=False: impl(
            a, q, axis, keepdims)[0, 0])
    return register_jitable(impl)


def _quantile_typer(scale, skip_nan=False):
    """numba's form of np.quantile (scale 1) or np.percentile (q in percent: 100), or of
    their nan forms (skip_nan)."""
    def typer(a, q, axis=None, out=None, overwrite_input=False, method="linear",
              keepdims=False):
        form = _quantile_form(a, q, axis, keepdims, scale, skip_nan=skip_nan)
        return None if form is None else (
            lambda a, q, axis=None, out=None, overwrite_input=False, method="linear",
            keepdims=False: form(a, q, axis, keepdims))
    return typer


overload(np.quantile)(_quantile_typer(1.0))
overload(np.percentile)(_quantile_typer(100.0))


@overload(np.median)
def _np_median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    form = _quantile_form(a, types.float64, axis, keepdims, 1.0, True)
    return None if form is None else (
        lambda a, axis=None, out=None, overwrite_input=False, keepdims=False:
        form(a, 0.5, axis, keepdims))


# ---- the records ----


# q is differentiated too (a positional parameter: q= given by name is placed there)
@rule(np.quantile, refuse=_refused)
def quantile(dy, y, a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, weights=None, interpolation=None):
    return quantile_grad(dy, a, q, axis), quantile_q_grad(dy, a, a, q, axis)


@tangent(np.quantile)
def quantile_tangents(dx, y, a, q, axis=None, out=None, overwrite_input=False,
                      method="linear", keepdims=False, weights=None, interpolation=None):
    return quantile_tangent(dx, y, a, q, axis), quantile_q_tangent(dx, y, a, a, q, axis)


@rule(np.percentile, refuse=_refused)
def percentile(dy, y, a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, weights=None, interpolation=None):
    return (quantile_grad(dy, a, np.asarray(q) / 100.0, axis),
            quantile_q_grad(dy, a, a, np.asarray(q) / 100.0, axis) / 100.0)


@tangent(np.percentile)
def percentile_tangents(dx, y, a, q, axis=None, out=None, overwrite_input=False,
                        method="linear", keepdims=False, weights=None, interpolation=None):
    return (quantile_tangent(dx, y, a, np.asarray(q) / 100.0, axis),
            quantile_q_tangent(dx / 100.0, y, a, a, np.asarray(q) / 100.0, axis))


@rule(np.median, refuse=_refused)
def median(dy, y, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return quantile_grad(dy, a, 0.5, axis)


@tangent(np.median)
def median_tangent(dx, y, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return quantile_tangent(dx, y, a, 0.5, axis)


# the helpers' own tangents (hvp, grad of grad): each is linear in its cotangent or
# tangent, and in the array its slopes are read from; a's gradient and the slopes are
# constant in a between ties, and the slopes constant in q between whole p (None there)


@tangent(quantile_grad)
def quantile_grad_tangent(d, g, dy, a, q, axis=None):
    return quantile_grad(d, a, q, axis), None, quantile_slope_grad(dy, d, a, q, axis)


@tangent(quantile_tangent)
def quantile_tangent_tangent(d, t, dx, y, a, q, axis=None):
    return quantile_tangent(d, y, a, q, axis), None, None, quantile_q_tangent(d, y, dx, a, q,
                                                                               axis)


@tangent(quantile_q_grad)
def quantile_q_grad_tangent(d, g, dy, t, a, q, axis=None, skip_nan=False):
    return (quantile_q_grad(d, t, a, q, axis, skip_nan),
            quantile_q_grad(dy, d, a, q, axis, skip_nan), None, None)


@tangent(quantile_q_tangent)
def quantile_q_tangent_tangent(d, t, dq, y, s, a, q, axis=None, skip_nan=False):
    return (quantile_q_tangent(d, y, s, a, q, axis, skip_nan), None,
            quantile_q_tangent(dq, y, d, a, q, axis, skip_nan), None, None)


@tangent(quantile_slope_grad)
def quantile_slope_grad_tangent(d, g, dy, dq, a, q, axis=None, skip_nan=False):
    return (quantile_slope_grad(d, dq, a, q, axis, skip_nan),
            quantile_slope_grad(dy, d, a, q, axis, skip_nan), None, None)


describe(quantile_grad, quantile_tangent, quantile_q_grad, quantile_q_tangent,
         quantile_slope_grad, pure=True)
