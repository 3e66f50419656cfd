"""Cumulative sums and products, and differences: the records of np.cumsum, np.cumprod,
np.diff and np.gradient, their helpers (each Python form beside its numba form), and
the forms of them numba lacks (an axis, prepend and append, np.gradient itself).

The adjoint of y = cumsum(x) along an axis is the cumulative sum of dy taken from the
other end: entry i of x reaches entries i, i+1, ... of y. For y = cumprod(x), entry j of
x reaches y_i (i >= j) through the product of the other factors of y_i, so
dx_j = y_{j-1} r_j with r_j = dy_j + x_{j+1} r_{j+1} summed from the end (y_{-1} = 1); the
tangent is dy_i = dy_{i-1} x_i + y_{i-1} dx_i. Neither divides by x, so zeros in x are
no special case. np.diff and np.gradient are linear: the adjoint of a difference
y_j = x_{j+1} - x_j gives dx_j = dy_{j-1} - dy_j, and np.gradient's (central differences
inside, one-sided ones at the two ends) is the transpose of that stencil, summed over
the axes where it gives one array per axis; with coordinates as spacing or edge_order 2
the stencil's weights are read from np.gradient itself (`_stencil_adjoint`). Their
`prepend`, `append` and spacings are constants of the rules. The numba forms of
np.gradient take any axes, numbers or coordinates as spacings (one, or one per axis) and
edge_order 1 or 2, with NumPy's weights (`_stencil`).
"""

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from numba.np.unsafe.ndarray import to_fixed_tuple

from ..numba_ext import normalize_axis, omitted
from . import describe, linear, rule, tangent


def cumsum_grad(dy, x, axis=None):
    """The gradient of x of ``y = np.cumsum(x, axis)``: dy summed from the end, in x's
    shape (x is read for its shape only).

    >>> cumsum_grad(np.array([1.0, 1.0, 1.0]), np.zeros(3))
    array([3., 2., 1.])
    """
    dy = np.asarray(dy)
    if axis is None:
        return np.reshape(np.cumsum(dy.ravel()[::-1])[::-1], np.shape(x))
    return np.flip(np.cumsum(np.flip(dy, axis), axis=axis), axis)


@register_jitable
def lanes(a, axis):
    """`a` as (before, n, after), its `axis` of length n in the middle: one lane per
    (before, after) pair."""
    k = normalize_axis(axis, a.ndim)
    n, before = a.shape[k], 1
    for i in range(k):
        before *= a.shape[i]
    after = a.size // (before * n) if before * n else 0
    return np.ascontiguousarray(a).reshape((before, n, after))


@register_jitable
def _cumsum_along(a, axis, reverse):
    """`a`'s cumulative sum along `axis` (from the end if `reverse`), as float64."""
    k = normalize_axis(axis, a.ndim)
    n, before = a.shape[k], 1
    for i in range(k):
        before *= a.shape[i]
    after = a.size // (before * n) if before * n else 0
    flat = np.ascontiguousarray(a).reshape((before, n, after))
    out = np.empty((before, n, after))
    for p in range(before):
        for q in range(after):
            total = 0.0
            for j in range(n):
                i = n - 1 - j if reverse else j
                total += flat[p, i, q]
                out[p, i, q] = total
    return out.reshape(a.shape)


@overload(cumsum_grad)
def _cumsum_grad_typer(dy, x, axis=None):
    if not isinstance(dy, types.Array):
        return None
    if axis is None or isinstance(axis, (types.NoneType, types.Omitted)):
        def flat(dy, x, axis=None):
            return _cumsum_along(dy.ravel(), 0, True).reshape(np.shape(x))
        return flat
    return lambda dy, x, axis=None: _cumsum_along(dy, axis, True)


@overload(np.cumsum)
def _np_cumsum(a, axis=None):
    # numba's np.cumsum takes the array alone: this form serves the calls with an axis
    # (x.cumsum(axis=...) compiles through it on numba >= 0.60)
    if not isinstance(a, types.Array) or axis is None or isinstance(
            axis, (types.NoneType, types.Omitted)):
        return None
    return lambda a, axis=None: _cumsum_along(a, axis, False)


@rule(np.cumsum, methods=("cumsum",))
def cumsum(dy, y, x, axis=None):
    return cumsum_grad(dy, x, axis)


linear(np.cumsum, cumsum_grad)
describe(cumsum_grad, pure=True, shape_only=1)


def _along_front(a, axis):
    """`a` with `axis` moved to the front (`a` flattened where axis is None)."""
    return np.ravel(a)[:, None] if axis is None else np.moveaxis(a, axis, 0)


def _put_back(out, x, axis):
    """`_along_front`'s inverse: `out` in x's shape."""
    return np.reshape(out, np.shape(x)) if axis is None else np.moveaxis(out, 0, axis)


def cumprod_grad(dy, x, axis=None):
    """The gradient of x of ``y = np.cumprod(x, axis)`` (no division: zeros in x are fine).

    >>> cumprod_grad(np.ones(3), np.array([2.0, 0.0, 3.0]))
    array([1., 8., 0.])
    """
    g, xs = _along_front(np.asarray(dy), axis), _along_front(np.asarray(x), axis)
    out = np.empty(np.broadcast_shapes(g.shape, xs.shape), np.result_type(g, xs, 1.0))
    r = 0.0
    for j in range(len(xs) - 1, -1, -1):   # r_j = dy_j + x_{j+1} r_{j+1}
        r = g[j] + (xs[j + 1] * r if j + 1 < len(xs) else 0.0)
        out[j] = r
    prod = 1.0
    for j in range(len(xs)):               # times y_{j-1}, the product before j
        out[j] *= prod
        prod = prod * xs[j]
    return _put_back(out, x, axis)


def cumprod_tangent(dx, x, axis=None):
    """The tangent of ``y = np.cumprod(x, axis)`` in the direction dx.

    >>> cumprod_tangent(np.array([1.0, 0.0, 0.0]), np.array([2.0, 0.0, 3.0]))
    array([1., 0., 0.])
    """
    t, xs = _along_front(np.asarray(dx), axis), _along_front(np.asarray(x), axis)
    out = np.empty(np.broadcast_shapes(t.shape, xs.shape), np.result_type(t, xs, 1.0))
    prod, dprod = 1.0, 0.0
    for j in range(len(xs)):               # d(y_{j-1} x_j) = dy_{j-1} x_j + y_{j-1} dx_j
        dprod = dprod * xs[j] + prod * t[j]
        prod = prod * xs[j]
        out[j] = dprod
    return np.ravel(out) if axis is None else np.moveaxis(out, 0, axis)


def cumprod_grad_tangent(dy, x, dx, axis=None):
    """The tangent of ``cumprod_grad(dy, x, axis)`` as x moves along dx (for second
    derivatives): of y_{j-1} r_j, dy_{j-1} r_j + y_{j-1} dr_j, where
    dr_j = dx_{j+1} r_{j+1} + x_{j+1} dr_{j+1}.

    >>> cumprod_grad_tangent(np.ones(2), np.array([2.0, 3.0]), np.array([0.0, 1.0]))
    array([1., 0.])
    """
    g, xs = _along_front(np.asarray(dy), axis), _along_front(np.asarray(x), axis)
    t = _along_front(np.asarray(dx), axis)
    shape, dtype = np.broadcast_shapes(g.shape, xs.shape), np.result_type(g, xs, t, 1.0)
    rs, drs, out = np.zeros(shape, dtype), np.zeros(shape, dtype), np.empty(shape, dtype)
    for j in range(len(xs) - 1, -1, -1):
        rs[j] = g[j]
        if j + 1 < len(xs):
            rs[j] += xs[j + 1] * rs[j + 1]
            drs[j] = t[j + 1] * rs[j + 1] + xs[j + 1] * drs[j + 1]
    prod, dprod = 1.0, 0.0
    for j in range(len(xs)):
        out[j] = dprod * rs[j] + prod * drs[j]
        prod, dprod = prod * xs[j], dprod * xs[j] + prod * t[j]
    return _put_back(out, x, axis)


@register_jitable
def _cumprod_second(x, g, t, axis):
    """`cumprod_grad_tangent` of the cotangent g and direction t along `axis`, as lanes
    of float64 in x's shape."""
    xs, gs, ts = lanes(x, axis), lanes(g, axis), lanes(t, axis)
    before, n, after = xs.shape
    out = np.empty(xs.shape)
    rs, drs = np.zeros(n), np.zeros(n)
    for p in range(before):
        for q in range(after):
            for j in range(n - 1, -1, -1):
                rs[j], drs[j] = gs[p, j, q], 0.0
                if j + 1 < n:
                    rs[j] += xs[p, j + 1, q] * rs[j + 1]
                    drs[j] = ts[p, j + 1, q] * rs[j + 1] + xs[p, j + 1, q] * drs[j + 1]
            prod, dprod = 1.0, 0.0
            for j in range(n):
                out[p, j, q] = dprod * rs[j] + prod * drs[j]
                prod, dprod = prod * xs[p, j, q], dprod * xs[p, j, q] + prod * ts[p, j, q]
    return out.reshape(x.shape)


@overload(cumprod_grad_tangent)
def _cumprod_grad_tangent_typer(dy, x, dx, axis=None):
    if not isinstance(x, types.Array):
        return None
    if _flat(axis):
        return lambda dy, x, dx, axis=None: _cumprod_second(
            x.ravel(), dy.ravel(), np.broadcast_to(dx, x.shape).ravel(), 0).reshape(x.shape)
    return lambda dy, x, dx, axis=None: _cumprod_second(
        x, np.broadcast_to(dy, x.shape), np.broadcast_to(dx, x.shape), axis)


@register_jitable
def _cumprod_lanes(x, g, axis, mode):
    """Along `axis` of x: its cumulative product (mode 0), the tangent of that in the
    direction g (mode 1) or its adjoint of the cotangent g (mode 2); g has x's shape."""
    xs, gs = lanes(x, axis), lanes(g, axis)
    before, n, after = xs.shape
    out = np.empty(xs.shape)
    for p in range(before):
        for q in range(after):
            if mode == 2:
                r = 0.0
                for j in range(n - 1, -1, -1):
                    r = gs[p, j, q] + (xs[p, j + 1, q] * r if j + 1 < n else 0.0)
                    out[p, j, q] = r
            prod, dprod = 1.0, 0.0
            for j in range(n):
                if mode == 2:
                    out[p, j, q] *= prod
                else:
                    dprod = dprod * xs[p, j, q] + prod * gs[p, j, q]
                    out[p, j, q] = dprod if mode == 1 else prod * xs[p, j, q]
                prod *= xs[p, j, q]
    return out.reshape(x.shape)


def _flat(axis):
    """Whether a numba form was given no axis (None or the default None)."""
    return axis is None or isinstance(axis, (types.NoneType, types.Omitted))


@overload(cumprod_grad)
def _cumprod_grad_typer(dy, x, axis=None):
    if not isinstance(x, types.Array):
        return None
    if _flat(axis):
        return lambda dy, x, axis=None: _cumprod_lanes(
            x.ravel(), dy.ravel(), 0, 2).reshape(x.shape)
    return lambda dy, x, axis=None: _cumprod_lanes(x, np.broadcast_to(dy, x.shape), axis, 2)


@overload(cumprod_tangent)
def _cumprod_tangent_typer(dx, x, axis=None):
    if not isinstance(x, types.Array):
        return None
    if _flat(axis):
        return lambda dx, x, axis=None: _cumprod_lanes(x.ravel(), dx.ravel(), 0, 1)
    return lambda dx, x, axis=None: _cumprod_lanes(x, np.broadcast_to(dx, x.shape), axis, 1)


@overload(np.cumprod)
def _np_cumprod(a, axis=None):
    # numba's np.cumprod takes the array alone: this form serves the calls with an axis
    if not isinstance(a, types.Array) or _flat(axis):
        return None
    return lambda a, axis=None: _cumprod_lanes(a, a, axis, 0)


@rule(np.cumprod, methods=("cumprod",))
def cumprod(dy, y, x, axis=None):
    return cumprod_grad(dy, x, axis)


@tangent(np.cumprod)
def cumprod_tangent_rule(dx, y, x, axis=None):
    return cumprod_tangent(dx, x, axis)


@tangent(cumprod_grad)
def cumprod_grad_tangent_rule(dx, y, dy, x, axis=None):
    # linear in the cotangent dy; second derivatives through x
    return cumprod_grad(dx, x, axis), cumprod_grad_tangent(dy, x, dx, axis)


describe(cumprod_grad, cumprod_tangent, cumprod_grad_tangent, pure=True)


# ---- differences ----


def _added(v, axis):
    """How many entries np.diff's `prepend` or `append` value `v` adds along `axis`."""
    return 0 if v is None else 1 if np.ndim(v) == 0 else np.shape(v)[axis]


def diff_grad(dy, a, n=1, axis=-1, prepend=None, append=None):
    """The gradient of a of ``y = np.diff(a, n, axis, prepend=..., append=...)``: each
    difference taken back (dx_j = dy_{j-1} - dy_j), n times, then the part of the
    extended array that is a.

    >>> diff_grad(np.array([1.0, 2.0]), np.zeros(3))
    array([-1., -1.,  2.])
    """
    g = np.asarray(dy)
    if n == 0:   # np.diff returns a itself, prepend and append unread
        return g
    for _ in range(n):
        g = -np.diff(g, axis=axis, prepend=0.0, append=0.0)
    start = _added(prepend, axis)
    return np.take(g, np.arange(start, start + np.shape(a)[axis]), axis=axis)


def diff_tangent(dx, n=1, axis=-1, prepend=None, append=None):
    """The tangent of ``y = np.diff(a, n, axis, prepend=..., append=...)`` in the
    direction dx: the same differences of dx, with zeros where prepend and append were
    (they are constants).

    >>> diff_tangent(np.array([1.0, 4.0, 9.0]), 1, -1, 5.0)
    array([1., 3., 5.])
    """
    if n == 0:
        return dx
    shape = list(np.shape(dx))
    sides = []
    for v in (prepend, append):
        shape[axis] = _added(v, axis)
        sides.append(np.zeros(shape))
    return np.diff(np.concatenate([sides[0], dx, sides[1]], axis=axis), n, axis=axis)


def _side(v, a, axis):
    """np.diff's prepend or append value `v` as lanes beside the lanes `a` (numba only:
    its form is the overload below)."""


@overload(_side)
def _side_typer(v, a, axis):
    if v is None or isinstance(v, (types.NoneType, types.Omitted)):
        return lambda v, a, axis: np.empty((a.shape[0], 0, a.shape[2]))
    if isinstance(v, (types.Number, types.Boolean)):
        return lambda v, a, axis: np.full((a.shape[0], 1, a.shape[2]), v, np.float64)
    return lambda v, a, axis: lanes(v, axis).astype(np.float64)


@register_jitable
def _differences(a, n, axis, pre, app):
    """The lanes of np.diff(a, n, axis) of the lanes of a, pre and app joined."""
    ext = np.concatenate((pre, lanes(a, axis).astype(np.float64), app), axis=1)
    for _ in range(n):
        ext = ext[:, 1:, :] - ext[:, :-1, :]
    return ext


@register_jitable
def _differences_back(g, n, start, m):
    """The lanes of diff_grad of the lanes g, taking entries start..start+m at the end."""
    g = g.astype(np.float64)
    for _ in range(n):
        h = np.zeros((g.shape[0], g.shape[1] + 1, g.shape[2]))
        h[:, :-1, :] -= g
        h[:, 1:, :] += g
        g = h
    return np.ascontiguousarray(g[:, start:start + m, :])


@register_jitable
def _with_length(shape, axis, length):
    """`shape` (an array) with `length` along `axis`."""
    out = np.array(shape)
    out[normalize_axis(axis, len(shape))] = length
    return out


@overload(diff_grad)
def _diff_grad_typer(dy, a, n=1, axis=-1, prepend=None, append=None):
    if not isinstance(a, types.Array):
        return None

    def grad(dy, a, n=1, axis=-1, prepend=None, append=None):
        if n == 0:
            return np.ascontiguousarray(dy).astype(np.float64).reshape(a.shape)
        g = lanes(np.ascontiguousarray(dy), axis)
        start = _side(prepend, g, axis).shape[1]
        k = normalize_axis(axis, a.ndim)
        return _differences_back(g, n, start, a.shape[k]).reshape(a.shape)
    return grad


@overload(diff_tangent)
def _diff_tangent_typer(dx, n=1, axis=-1, prepend=None, append=None):
    if not isinstance(dx, types.Array):
        return None
    nd = dx.ndim

    def tangent(dx, n=1, axis=-1, prepend=None, append=None):
        base = lanes(dx, axis)
        out = _differences(dx, n, axis, 0.0 * _side(prepend, base, axis),
                           0.0 * _side(append, base, axis))
        return out.reshape(to_fixed_tuple(_with_length(dx.shape, axis, out.shape[1]), nd))
    return tangent


@overload(np.diff)
def _np_diff(a, n=1, axis=-1, prepend=None, append=None):
    # numba's np.diff takes (a, n): this form serves the calls with an axis, prepend or
    # append
    if not isinstance(a, types.Array) or all(omitted(v) for v in (axis, prepend, append)):
        return None
    nd = a.ndim

    def impl(a, n=1, axis=-1, prepend=None, append=None):
        if n < 0:
            raise ValueError("order must be non-negative")
        if n == 0:   # a itself, as NumPy gives it (prepend and append unread)
            return a.astype(np.float64)
        base = lanes(a, axis)
        out = _differences(a, n, axis, _side(prepend, base, axis), _side(append, base, axis))
        return out.reshape(to_fixed_tuple(_with_length(a.shape, axis, out.shape[1]), nd))
    return impl


@rule(np.diff)
def diff(dy, y, a, n=1, axis=-1, prepend=None, append=None):
    return diff_grad(dy, a, n, axis, prepend, append)


@tangent(np.diff)
def diff_tangent_rule(dx, y, a, n=1, axis=-1, prepend=None, append=None):
    return diff_tangent(dx, n, axis, prepend, append)


linear(diff_grad, diff_tangent)
describe(diff_grad, diff_tangent, pure=True)
describe(diff_grad, shape_only=1)


# ---- np.gradient: central differences inside, one-sided ones at the ends ----


def _gradient_layout(f, spacings, axis):
    """The axes np.gradient(f, *spacings, axis=axis) differentiates along, and the
    spacing of each (a number, or coordinates along it)."""
    nd = np.ndim(f)
    axes = tuple(range(nd)) if axis is None else \
        (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    given = [h for h in spacings if h is not None]
    per = given * len(axes) if len(given) == 1 and np.ndim(given[0]) == 0 else given
    return tuple(int(k) % nd for k in axes), per or [1.0] * len(axes)


def _stencil_adjoint(g, h, k, edge_order):
    """The adjoint along axis k of np.gradient with spacing h (a number or coordinates)
    and `edge_order`. Its stencil reaches no further than two entries from the diagonal,
    so np.gradient of the five combs e_r (1 at j = r mod 5) gives it whole: row i of comb
    r holds the weight of the one entry j = r (mod 5) in [i - 2, i + 2]."""
    g = np.moveaxis(np.asarray(g, dtype=np.result_type(g, 1.0)), k, -1)
    n = g.shape[-1]
    combs = (np.arange(n) % 5 == np.arange(5)[:, None]) * 1.0
    weights = np.gradient(combs, h, axis=1, edge_order=edge_order)
    out = np.zeros(g.shape, g.dtype)
    for step in range(-2, 3):   # dx_j += D[j + step, j] dy_{j + step}
        j = np.arange(max(0, -step), min(n, n - step))
        out[..., j] += weights[j % 5, j + step] * g[..., j + step]
    return np.moveaxis(out, -1, k)


def gradient_grad(dy, f, spacing=1.0, spacing_1=None, spacing_2=None, spacing_3=None,
                  axis=None, edge_order=1):
    """The gradient of f of ``y = np.gradient(f, spacing, spacing_1, ..., axis=axis,
    edge_order=edge_order)`` (the spacings are np.gradient's positional *varargs): the
    sum over the axes of the transposes of their stencils, dy holding one cotangent per
    axis where y is a tuple.

    >>> gradient_grad(np.array([1.0, 0.0, 0.0]), np.zeros(3))
    array([-1.,  1.,  0.])
    """
    axes, per = _gradient_layout(f, (spacing, spacing_1, spacing_2, spacing_3), axis)
    cotangents = list(dy) if len(axes) > 1 else [dy]
    out = np.zeros(np.shape(f), np.result_type(*cotangents, 1.0))
    for k, h, g in zip(axes, per, cotangents, strict=True):
        if np.ndim(h) == 0 and edge_order == 1:
            out += _uniform_adjoint(g, h, k)
        else:
            out += _stencil_adjoint(g, h, k, edge_order)
    return out


def _uniform_adjoint(dy, spacing, k):
    """The transpose of (f_1 - f_0) / h, (f_{i+1} - f_{i-1}) / 2h, (f_{n-1} - f_{n-2}) / h
    along axis k."""
    g = np.moveaxis(np.asarray(dy), k, 0) / spacing
    dx = np.zeros(g.shape, np.result_type(g, 1.0))
    dx[1] += g[0]
    dx[0] -= g[0]
    dx[2:] += g[1:-1] / 2.0
    dx[:-2] -= g[1:-1] / 2.0
    dx[-1] += g[-1]
    dx[-2] -= g[-1]
    return np.moveaxis(dx, 0, k)


def _steps(h, n):
    """The n - 1 steps between the points of an axis of n entries: h each (a number), or
    the differences of n coordinates h."""
    h = np.asarray(h, dtype=float)
    if h.ndim == 0:
        return np.full(n - 1, float(h))
    if h.shape != (n,):
        raise ValueError("when 1d, distances must match the length of the corresponding "
                         "dimension")
    return np.diff(h)


@overload(_steps)
def _steps_typer(h, n):
    if isinstance(h, types.Number):
        return lambda h, n: np.full(n - 1, float(h))

    def coordinates(h, n):
        if h.shape[0] != n:
            raise ValueError("when 1d, distances must match the length of the "
                             "corresponding dimension")
        return np.diff(h.astype(np.float64))
    return coordinates


@register_jitable
def _stencil(h, n, edge_order):
    """np.gradient along an axis of n entries with spacing h (a number or coordinates):
    entry i of the result is sum_m w[i, m] f[at[i, m]] (NumPy's second-order weights
    inside, one-sided ones of `edge_order` at the ends)."""
    dx = _steps(h, n)
    at, w = np.zeros((n, 3), np.intp), np.zeros((n, 3))
    for i in range(1, n - 1):
        hs, hd = dx[i - 1], dx[i]
        at[i, 0], at[i, 1], at[i, 2] = i - 1, i, i + 1
        w[i, 0] = -hd / (hs * (hd + hs))
        w[i, 1] = (hd - hs) / (hd * hs)
        w[i, 2] = hs / (hd * (hd + hs))
    at[0, 1], at[n - 1, 0] = 1, n - 2
    at[n - 1, 1] = at[n - 1, 2] = n - 1
    if edge_order == 1:
        w[0, 0], w[0, 1] = -1.0 / dx[0], 1.0 / dx[0]
        w[n - 1, 0], w[n - 1, 1] = -1.0 / dx[n - 2], 1.0 / dx[n - 2]
        return at, w
    a, b = dx[0], dx[1]
    at[0, 2] = 2
    w[0, 0] = -(2.0 * a + b) / (a * (a + b))
    w[0, 1] = (a + b) / (a * b)
    w[0, 2] = -a / (b * (a + b))
    a, b = dx[n - 3], dx[n - 2]
    at[n - 1, 0], at[n - 1, 1] = n - 3, n - 2
    w[n - 1, 0] = b / (a * (a + b))
    w[n - 1, 1] = -(b + a) / (a * b)
    w[n - 1, 2] = (2.0 * b + a) / (b * (a + b))
    return at, w


@register_jitable
def _central(x, h, axis, adjoint, edge_order):
    """np.gradient of x along `axis` with spacing h (a number or coordinates) and
    `edge_order`, or its adjoint of the cotangent x (`adjoint`), as float64."""
    if edge_order != 1 and edge_order != 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    xs = lanes(x, axis)
    before, n, after = xs.shape
    if n < edge_order + 1:
        raise ValueError("Shape of array too small to calculate a numerical gradient, "
                         "at least (edge_order + 1) elements are required.")
    at, w = _stencil(h, n, edge_order)
    out = np.zeros(xs.shape)
    for p in range(before):
        for q in range(after):
            for i in range(n):
                for m in range(3):
                    if adjoint:
                        out[p, at[i, m], q] += w[i, m] * xs[p, i, q]
                    else:
                        out[p, i, q] += w[i, m] * xs[p, at[i, m], q]
    return out.reshape(x.shape)


@register_jitable
def _distinct(axes, ndim):
    """`axes` (a tuple of them), checked as NumPy does: in range, none repeated."""
    for i in range(len(axes)):
        for j in range(i):
            if normalize_axis(axes[i], ndim) == normalize_axis(axes[j], ndim):
                raise ValueError("repeated axis")


_SPACINGS = ("spacing", "spacing_1", "spacing_2", "spacing_3")


def _gradient_plan(f, spacings, axis, edge_order):
    """At typing, what the numba forms compute: per result, (its axis, its spacing) as
    source text; refused with a TypingError where the numba forms lack the form (a
    spacing of coordinates)."""
    if f.ndim == 0:
        raise TypingError("srcgrad: np.gradient of a 0-d array")
    given = [name for name, h in zip(_SPACINGS, spacings, strict=True)
             if not (_flat(h) or name == "spacing" and omitted(h))]
    if not all(isinstance(h, types.Number) or isinstance(h, types.Array) and h.ndim == 1
               for name, h in zip(_SPACINGS, spacings, strict=True) if name in given):
        raise TypingError("srcgrad: np.gradient's spacings are numbers or coordinates (1-D)")
    if not (omitted(edge_order) or isinstance(edge_order, types.Integer)):
        raise TypingError("srcgrad: np.gradient's edge_order is 1 or 2")
    if _flat(axis):
        axes = [str(k) for k in range(f.ndim)]
    elif isinstance(axis, types.Integer):
        axes = ["axis"]
    elif isinstance(axis, types.UniTuple) and isinstance(axis.dtype, types.Integer):
        axes = [f"axis[{k}]" for k in range(len(axis))]
    else:
        raise TypingError("srcgrad: np.gradient's axis is None, an int or a tuple of ints")
    single = dict(zip(_SPACINGS, spacings, strict=True)).get(given[0]) if given else None
    if len(given) > 1 and len(given) != len(axes) or \
            isinstance(single, types.Array) and len(given) < len(axes):
        raise TypingError("srcgrad: np.gradient takes one spacing, or one per axis")
    hs = given * len(axes) if len(given) == 1 else given or ["1.0"] * len(axes)
    return list(zip(axes, hs, strict=True))


_GRADIENT_PARAMS = ("f, spacing=1.0, spacing_1=None, spacing_2=None, spacing_3=None, "
                    "axis=None, edge_order=1")


def _gradient_form(plan, params, term, summed, tuple_axis):
    """A numba form from its `plan`: each result's `term` (from its position k, axis and
    spacing h), summed (the adjoint), or in a tuple where there are several (np.gradient
    itself); `params`, its parameters; `tuple_axis`: axis is a tuple, checked first."""
    terms = [term.format(k=k, axis=a, h=h) for k, (a, h) in enumerate(plan)]
    value = " + ".join(terms) if summed or len(terms) == 1 else "(" + ", ".join(terms) + ",)"
    check = "    _distinct(axis, f.ndim)\n" if tuple_axis else ""
    namespace = {"np": np, "_central": _central, "_distinct": _distinct}
    exec(f"def form({params}):\n{check}    return {value}\n", namespace)
    return namespace["form"]


@overload(gradient_grad)
def _gradient_grad_typer(dy, f, spacing=1.0, spacing_1=None, spacing_2=None, spacing_3=None,
                         axis=None, edge_order=1):
    if not isinstance(f, types.Array):
        return None
    plan = _gradient_plan(f, (spacing, spacing_1, spacing_2, spacing_3), axis, edge_order)
    item = "dy" if len(plan) == 1 else "dy[{k}]"
    return _gradient_form(plan, "dy, " + _GRADIENT_PARAMS,
                          f"_central(np.ascontiguousarray({item}), {{h}}, {{axis}}, True, "
                          "edge_order)", True, isinstance(axis, types.UniTuple))


@overload(np.gradient)
def _np_gradient(f, spacing=1.0, spacing_1=None, spacing_2=None, spacing_3=None, axis=None,
                 edge_order=1):
    # numba has no np.gradient: this form takes numbers or coordinates as spacings
    if not isinstance(f, types.Array):
        return None
    plan = _gradient_plan(f, (spacing, spacing_1, spacing_2, spacing_3), axis, edge_order)
    return _gradient_form(plan, _GRADIENT_PARAMS, "_central(f, {h}, {axis}, False, edge_order)",
                          False, isinstance(axis, types.UniTuple))


# the rule's spacings are np.gradient's positional `*varargs` (its axis and edge_order are
# keyword-only), up to four: one per axis of an array of up to four dimensions
@rule(np.gradient)
def gradient(dy, y, f, spacing=1.0, spacing_1=None, spacing_2=None, spacing_3=None,
             axis=None, edge_order=1):
    return gradient_grad(dy, f, spacing, spacing_1, spacing_2, spacing_3, axis, edge_order)


linear(np.gradient, gradient_grad)
describe(gradient_grad, pure=True, shape_only=1)


def unwrapped(p, discont=None, axis=-1, period=2.0 * np.pi):
    """np.unwrap itself, which compiled code calls in its place: this one's numba form
    takes an axis.

    >>> unwrapped(np.array([[0.0, 0.0], [6.0, 0.5]]), axis=0)
    array([[ 0.        ,  0.        ],
           [-0.28318531,  0.5       ]])
    """
    return np.unwrap(p, discont, axis, period=period)


@overload(unwrapped)
def _unwrapped_typer(p, discont=None, axis=-1, period=2.0 * np.pi):
    def impl(p, discont=None, axis=-1, period=2.0 * np.pi):
        return np.moveaxis(np.unwrap(np.moveaxis(p, axis, -1), discont, -1, period), -1, axis)
    return impl


# np.unwrap adds whole periods to entries, as many as the jumps before them: a step
# function, constant wherever it is differentiable, so the derivative is the identity
# (JAX's too). The period and discontinuity are constants of the rules.
@rule(np.unwrap, unwrapped)
def unwrap(dy, y, p, discont=None, axis=-1, period=2.0 * np.pi):
    return dy


@tangent(np.unwrap, unwrapped)
def unwrap_tangent(dp, y, p, discont=None, axis=-1, period=2.0 * np.pi):
    return dp


describe(np.unwrap, compiled_as=unwrapped)
