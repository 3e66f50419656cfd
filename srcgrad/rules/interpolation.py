"""np.interp: its record, the helpers its rules call (one form each, which numba compiles
too; `_flat`, `_shaped` and `_scatter` beside their numba forms), and np.interp with left=
and right= under numba (numba's takes x, xp and fp alone).

``y = np.interp(x, xp, fp)`` reads each x between the knots j and j + 1 that NumPy reads it
between (xp[j] <= x < xp[j + 1]; the last pair at x = xp[-1]), at
t = (x - xp[j]) / (xp[j + 1] - xp[j]): y = (1 - t) fp[j] + t fp[j + 1], of slope
s = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]). So there dy/dx = s, dy/dfp[j] = 1 - t,
dy/dfp[j + 1] = t, dy/dxp[j] = -s (1 - t) and dy/dxp[j + 1] = -s t. Left of xp[0], y is
`left` (fp[0] where it is not given) and right of xp[-1] `right` (fp[-1]), so the gradient
goes to them. At a knot this is the one-sided derivative of the pair NumPy reads (as
JAX's, for x inside xp). xp must increase, as NumPy requires; complex fp is refused.
Second order (hvp) differentiates the helpers by their source.

With `period=p`, NumPy reads x and xp modulo |p|, sorts xp (and fp with it), extends them
by one knot on each side (xp's last less |p|, its first plus |p|) and ignores left and
right: `normalize` writes such a call as those operations (the record's `expanded`), whose
rules (np.mod's, np.sort's, an index's, np.concatenate's) give the gradients of x, xp, fp
and p (|p| is `period_of`, which raises NumPy's ValueError for a period of 0).
"""

import numpy as np
from numba import types
from numba.extending import overload, register_jitable

from . import describe, linear, nondifferentiable, real_only, rule, tangent


def _refused(options) -> str | None:
    if options.get("period") is not None:   # (normalize writes such calls out: `_periodic`)
        return "period= is differentiated where the call names its options"
    return None


def _periodic(given):
    """np.interp(x, xp, fp, period=p) as NumPy computes it, by operations with rules."""
    if "period" not in given:
        return None
    p = "period_of(period)"
    knots = f"np.sort(np.mod(xp, {p}))"
    values = f"fp[np.argsort(np.mod(xp, {p}))]"
    return (f"np.interp(np.mod(x, {p}), np.concatenate(({knots}[-1:] - {p}, {knots}, "
            f"{knots}[:1] + {p})), np.concatenate(({values}[-1:], {values}, {values}[:1])))",
            {"period_of": period_of})


def _flat(x):
    """x as a flat float64 array (a number: of one entry)."""
    return np.ravel(np.asarray(x, dtype=np.float64))


@overload(_flat)
def _flat_typer(x):
    if isinstance(x, types.Array):
        return lambda x: np.ravel(x).astype(np.float64)
    if isinstance(x, (types.Float, types.Integer)):
        return lambda x: np.array([float(x)])


def _shaped(v, x):
    """The flat `v` in x's shape (a number where x is one)."""
    return np.reshape(v, np.shape(x)) if np.ndim(x) else float(v[0])


@overload(_shaped)
def _shaped_typer(v, x):
    if isinstance(x, types.Array):
        return lambda v, x: v.reshape(x.shape)
    if isinstance(x, (types.Float, types.Integer)):
        return lambda v, x: v[0]


def _scatter(n, index, w):
    """The n sums of the weights w of each index."""
    return np.bincount(index, weights=w, minlength=n)


@overload(_scatter)
def _scatter_typer(n, index, w):
    def impl(n, index, w):
        out = np.zeros(n)
        for k in range(index.size):
            out[index[k]] += w[k]
        return out
    return impl


@register_jitable
def _place(x, xp):
    """Per entry of the flat x: the knots j and j1 it is read between, t, its pair's slope
    factor 1 / (xp[j1] - xp[j]) (0 for a single knot), and whether it is left of xp[0]
    or right of xp[-1]."""
    n = len(xp)
    j = np.minimum(np.maximum(np.searchsorted(xp, x, side="right") - 1, 0), max(n - 2, 0))
    j1 = np.minimum(j + 1, n - 1)
    gap = xp[j1] - xp[j]
    inverse = np.where(gap > 0, 1.0 / np.where(gap > 0, gap, 1.0), 0.0)
    return j, j1, (x - xp[j]) * inverse, inverse, x < xp[0], x > xp[n - 1]


@register_jitable
def _slopes(xf, xp, fp):
    j, j1, t, inverse, below, above = _place(xf, xp)
    s = (fp[j1] - fp[j]) * inverse
    return j, j1, t, np.where(below | above, 0.0, s), below | above


def interp_slope(x, xp, fp):
    """dy/dx of ``y = np.interp(x, xp, fp)``: the slope at x, 0 outside xp.

    >>> interp_slope(np.array([0.5, 3.0]), np.array([0.0, 1.0, 2.0]), np.array([0.0, 2.0, 3.0]))
    array([2., 0.])
    """
    return _shaped(_slopes(_flat(x), xp, fp)[3], x)


def interp_fp_grad(dy, x, xp, left=None, right=None):
    """The gradient of fp: (1 - t) dy to knot j and t dy to j + 1, and the dy of x
    outside xp to fp[0] or fp[-1] where left or right is not given."""
    xf, d = _flat(x), _flat(dy)
    j, j1, t, inverse, below, above = _place(xf, xp)
    inside = np.where(below | above, 0.0, d)
    g = _scatter(len(xp), j, inside * (1.0 - t)) + _scatter(len(xp), j1, inside * t)
    if left is None:
        g[0] += np.sum(np.where(below, d, 0.0))
    if right is None:
        g[len(xp) - 1] += np.sum(np.where(above, d, 0.0))
    return g


def interp_xp_grad(dy, x, xp, fp):
    """The gradient of the knots xp: -s (1 - t) dy to knot j and -s t dy to j + 1."""
    xf, d = _flat(x), _flat(dy)
    j, j1, t, s, outside = _slopes(xf, xp, fp)
    return -(_scatter(len(xp), j, d * s * (1.0 - t)) + _scatter(len(xp), j1, d * s * t))


def interp_side_grad(dy, x, xp, side):
    """The gradient of `left` (side -1: the dy of x left of xp[0]) or of `right` (1)."""
    xf = _flat(x)
    return np.sum(np.where(xf < xp[0] if side < 0 else xf > xp[len(xp) - 1], _flat(dy), 0.0))


def interp_fp_tangent(dfp, x, xp, left=None, right=None):
    """The tangent of y along fp's tangent dfp: np.interp(x, xp, dfp), with 0 outside xp
    on a side whose value is given."""
    xf = _flat(x)
    j, j1, t, inverse, below, above = _place(xf, xp)
    out = np.where(below | above, 0.0, (1.0 - t) * dfp[j] + t * dfp[j1])
    if left is None:
        out = np.where(below, dfp[0], out)
    if right is None:
        out = np.where(above, dfp[len(xp) - 1], out)
    return _shaped(out, x)


def interp_xp_tangent(dxp, x, xp, fp):
    """The tangent of y along the knots' tangent dxp."""
    j, j1, t, s, outside = _slopes(_flat(x), xp, fp)
    return _shaped(-s * ((1.0 - t) * dxp[j] + t * dxp[j1]), x)


def interp_side_tangent(dv, x, xp, side):
    """The tangent of y along left's tangent (side -1) or right's (1)."""
    xf = _flat(x)
    return _shaped(np.where(xf < xp[0] if side < 0 else xf > xp[len(xp) - 1], dv, 0.0), x)


for _helper in (interp_slope, interp_fp_grad, interp_xp_grad, interp_side_grad,
                interp_fp_tangent, interp_xp_tangent, interp_side_tangent):
    register_jitable(_helper)


@rule(np.interp, refuse=_refused)
def interp(dy, y, x, xp, fp, left=None, right=None, period=None):
    return (dy * interp_slope(x, xp, fp), interp_xp_grad(dy, x, xp, fp),
            interp_fp_grad(dy, x, xp, left, right), interp_side_grad(dy, x, xp, -1),
            interp_side_grad(dy, x, xp, 1), None)


@tangent(np.interp)
def interp_tangent(dx, y, x, xp, fp, left=None, right=None, period=None):
    return (dx * interp_slope(x, xp, fp), interp_xp_tangent(dx, x, xp, fp),
            interp_fp_tangent(dx, x, xp, left, right), interp_side_tangent(dx, x, xp, -1),
            interp_side_tangent(dx, x, xp, 1), None)


real_only(np.interp)
describe(np.interp, expanded=_periodic)


@register_jitable
def period_of(p):
    """|p|, the period np.interp reads, or NumPy's ValueError for a period of 0.

    >>> period_of(-2.0)
    2.0
    """
    if p == 0:
        raise ValueError("period must be a non-zero value")
    return abs(p)


@rule(period_of)
def period_of_rule(dy, y, p):
    return dy * np.sign(p)


@tangent(period_of)
def period_of_tangent(dp, y, p):
    return dp * np.sign(p)


describe(period_of, pure=True)


# second order differentiates the helpers above by their source, through these
nondifferentiable(np.searchsorted)   # (indices)


@rule(_flat)
def _flat_rule(dy, y, x):
    return _shaped(dy, x)


@rule(_shaped)
def _shaped_rule(dy, y, v, x):
    return _flat(dy), None


@rule(_scatter)
def _scatter_rule(dy, y, n, index, w):
    return None, None, dy[index]


linear(_flat)
linear(_shaped)
linear(_scatter, positions=(2,))
describe(_shaped, shape_only=1)
describe(_flat, _shaped, _scatter, pure=True)


@overload(np.interp)
def _np_interp(x, xp, fp, left=None, right=None, period=None):
    # numba's np.interp takes x, xp and fp: this form serves the calls with left or right
    # (or period=None)
    plain = all(v is None or isinstance(v, (types.NoneType, types.Omitted))
                for v in (left, right))
    if plain and (period is None or isinstance(period, types.Omitted)) or not (
            period is None or isinstance(period, (types.NoneType, types.Omitted))):
        return None

    def impl(x, xp, fp, left=None, right=None, period=None):
        y = _flat(np.interp(x, xp, fp))
        xf = _flat(x)
        if left is not None:
            y = np.where(xf < xp[0], left, y)
        if right is not None:
            y = np.where(xf > xp[len(xp) - 1], right, y)
        return _shaped(y, x)
    return impl
