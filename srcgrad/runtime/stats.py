"""scipy.stats under numba: the functions generated code calls in place of the densities
srcgrad differentiates (their records' `called_as`), and the helpers of their rules.

`scipy.stats.norm.logpdf` is a bound method of a distribution instance, which numba cannot
type, so generated code calls `norm_logpdf` instead: its Python form is SciPy's method
itself, its numba form the density's formula on floats (with scipy.special's compiled
forms, `runtime/special.py`), broadcast over its arguments as SciPy broadcasts them. The
signatures are SciPy's (`loc` and `scale` default to 0 and 1), which is how srcgrad places
a call's keyword arguments. `scipy_form` writes both from the method's name, its
parameters and its form on floats, one line a method. As SciPy: a scale (df, a, b, mu)
out of range gives NaN, a point outside the support log 0 = -inf.
`multivariate_normal_logpdf` factors the covariance by Cholesky (SciPy by eigh: both read
its lower triangle), and a stack of points x of shape (n, d) gives n values (SciPy
squeezes n = 1 to a number).
"""

from __future__ import annotations

import math
import sys

import numpy as np
import scipy.special as special
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from scipy import stats

from ..errors import MissingRule
from . import special as _compiled_special  # noqa: F401  (scipy.special's numba forms)

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


# ---- the densities on floats ----


@register_jitable
def _norm_logpdf(x, loc, scale):
    if not scale > 0.0:
        return np.nan
    z = (x - loc) / scale
    return -0.5 * z * z - math.log(scale) - _HALF_LOG_2PI


@register_jitable
def _norm_pdf(x, loc, scale):
    return math.exp(_norm_logpdf(x, loc, scale))


@register_jitable
def _norm_cdf(x, loc, scale):
    return special.ndtr((x - loc) / scale) if scale > 0.0 else np.nan


@register_jitable
def _norm_logcdf(x, loc, scale):
    return special.log_ndtr((x - loc) / scale) if scale > 0.0 else np.nan


@register_jitable
def _t_logpdf(x, df, loc, scale):
    if not (scale > 0.0 and df > 0.0):
        return np.nan
    z = (x - loc) / scale
    return (special.gammaln(0.5 * (df + 1.0)) - special.gammaln(0.5 * df)
            - 0.5 * math.log(df * math.pi) - math.log(scale)
            - 0.5 * (df + 1.0) * math.log1p(z * z / df))


@register_jitable
def _poisson_logpmf(k, mu, loc):
    if not mu >= 0.0:
        return np.nan
    n = k - loc
    if n < 0.0 or n != math.floor(n):
        return -np.inf
    return special.xlogy(n, mu) - special.gammaln(n + 1.0) - mu


@register_jitable
def _gamma_logpdf(x, a, loc, scale):
    if not (scale > 0.0 and a > 0.0):
        return np.nan
    z = (x - loc) / scale
    if z < 0.0:
        return -np.inf
    return special.xlogy(a - 1.0, z) - z - special.gammaln(a) - math.log(scale)


@register_jitable
def _beta_logpdf(x, a, b, loc, scale):
    if not (scale > 0.0 and a > 0.0 and b > 0.0):
        return np.nan
    z = (x - loc) / scale
    if z < 0.0 or z > 1.0:
        return -np.inf
    return (special.xlog1py(b - 1.0, -z) + special.xlogy(a - 1.0, z)
            - special.betaln(a, b) - math.log(scale))


# ---- broadcast over arrays (numba compiles one loop per signature) ----


def _number(t) -> bool:
    # an omitted argument is its default: a Python number, or numba's Omitted of it
    return isinstance(t, (types.Float, types.Integer, types.Boolean, types.Omitted, int, float))


def _arrayish(t) -> bool:
    return _number(t) or isinstance(t, types.Array) and isinstance(
        t.dtype, (types.Float, types.Integer, types.Boolean))


@register_jitable
def _float(a):
    return np.asarray(a).astype(np.float64)   # numba broadcasts arrays of one dtype only


def _broadcast(scalar, count):
    """A jitable `apply(a, b, c[, d[, e]])`: `scalar` on floats, entry by entry over the
    arguments broadcast (a float if all of them are numbers: chosen per signature)."""
    if count == 3:
        def apply(a, b, c):
            xs = np.broadcast_arrays(_float(a), _float(b), _float(c))
            out = np.empty(xs[0].shape)
            for i in np.ndindex(out.shape):
                out[i] = scalar(float(xs[0][i]), float(xs[1][i]), float(xs[2][i]))
            return out
    elif count == 4:
        def apply(a, b, c, d):
            xs = np.broadcast_arrays(_float(a), _float(b), _float(c),
                                     _float(d))
            out = np.empty(xs[0].shape)
            for i in np.ndindex(out.shape):
                out[i] = scalar(float(xs[0][i]), float(xs[1][i]), float(xs[2][i]),
                                float(xs[3][i]))
            return out
    else:
        def apply(a, b, c, d, e):
            xs = np.broadcast_arrays(_float(a), _float(b), _float(c),
                                     _float(d), _float(e))
            out = np.empty(xs[0].shape)
            for i in np.ndindex(out.shape):
                out[i] = scalar(float(xs[0][i]), float(xs[1][i]), float(xs[2][i]),
                                float(xs[3][i]), float(xs[4][i]))
            return out
    return register_jitable(apply)


def _form(scalar, *args):
    """The jitable function of the arguments (numba types `args`): `scalar` itself on
    numbers, else its broadcast loop; None where an argument is neither."""
    if not all(_arrayish(t) for t in args):
        return None
    if all(_number(t) for t in args):
        return scalar
    return _broadcast(scalar, len(args))


def scipy_form(dist: str, method: str, scalar=None, params: str = "x, loc=0.0, scale=1.0"):
    """scipy.stats' `dist.method` as generated code calls it (its record's `called_as`):
    the function `{dist}_{method}(params)`, SciPy's parameters, that calls SciPy's method,
    and, given `scalar` (the method on floats, a jitable function of every parameter), its
    numba form: `scalar` on numbers, its loop over arrays broadcast (`_form`). Both are
    written from their source, for SciPy's signature (which places a call's keywords); the
    function's module is the caller's, as a namedtuple's is."""
    name = f"{dist}_{method}"
    args = ", ".join(p.split("=")[0] for p in params.split(", "))
    space = {"stats": stats, "__name__": sys._getframe(1).f_globals["__name__"]}
    exec(f"def {name}({params}):\n"
         f'    """scipy.stats.{dist}.{method}, as generated code calls it."""\n'
         f"    return stats.{dist}.{method}({args})\n", space)
    form = space[name]
    if scalar is not None:
        exec(f"@overload(form)\n"
             f"def _{name}_typer({params}):\n"
             f"    f = _form(scalar, {args})\n"
             f"    return f and (lambda {params}: f({args}))\n",
             {"overload": overload, "_form": _form, "form": form, "scalar": scalar})
    return form


# ---- the Python forms, with their numba forms ----

norm_logpdf = scipy_form("norm", "logpdf", _norm_logpdf)
norm_pdf = scipy_form("norm", "pdf", _norm_pdf)
norm_cdf = scipy_form("norm", "cdf", _norm_cdf)
norm_logcdf = scipy_form("norm", "logcdf", _norm_logcdf)
t_logpdf = scipy_form("t", "logpdf", _t_logpdf, "x, df, loc=0.0, scale=1.0")
poisson_logpmf = scipy_form("poisson", "logpmf", _poisson_logpmf, "k, mu, loc=0")
gamma_logpdf = scipy_form("gamma", "logpdf", _gamma_logpdf, "x, a, loc=0.0, scale=1.0")
beta_logpdf = scipy_form("beta", "logpdf", _beta_logpdf, "x, a, b, loc=0.0, scale=1.0")
multivariate_normal_logpdf = scipy_form("multivariate_normal", "logpdf",
                                        params="x, mean, cov")
dirichlet_logpdf = scipy_form("dirichlet", "logpdf", params="x, alpha")


# ---- multivariate normal: Cholesky factor, whitened points ----


@register_jitable
def _points(x, d):
    """x as an (n, d) float array: one point (a vector of d) or a stack of them."""
    if x.shape[-1] != d:
        raise ValueError("multivariate_normal.logpdf: the points' last axis must have the "
                         "length of mean")
    return np.ascontiguousarray(x).astype(np.float64).reshape((-1, d))


@register_jitable
def _lower_solve(low, b):
    """low^-1 b for a lower-triangular `low` and b of shape (d, m): forward substitution."""
    d, m = b.shape
    out = np.empty((d, m))
    for j in range(m):
        for i in range(d):
            s = b[i, j]
            for k in range(i):
                s -= low[i, k] * out[k, j]
            out[i, j] = s / low[i, i]
    return out


@register_jitable
def _whitened(x, mean, cov):
    """(L, W): L the Cholesky factor of cov, W = L^-1 (x - mean)^T, a column per point."""
    d = mean.shape[0]
    low = np.linalg.cholesky(np.ascontiguousarray(cov).astype(np.float64))
    r = _points(x, d) - mean.astype(np.float64)
    return low, _lower_solve(low, np.ascontiguousarray(r.T))


@register_jitable
def _mvn_values(x, mean, cov):
    low, w = _whitened(x, mean, cov)
    d, n = w.shape
    half_logdet = 0.0
    for i in range(d):
        half_logdet += math.log(low[i, i])
    out = np.empty(n)
    for j in range(n):
        out[j] = -0.5 * np.sum(w[:, j] ** 2) - half_logdet - d * _HALF_LOG_2PI
    return out


@overload(multivariate_normal_logpdf)
def _mvn_logpdf_typer(x, mean, cov):
    if not (isinstance(x, types.Array) and isinstance(mean, types.Array) and mean.ndim == 1
            and isinstance(cov, types.Array) and cov.ndim == 2 and x.ndim in (1, 2)):
        raise TypingError("srcgrad: scipy.stats.multivariate_normal.logpdf compiles with "
                          "x a vector or a stack of them (n, d), mean a vector and cov a "
                          "matrix")
    if x.ndim == 1:
        return lambda x, mean, cov: _mvn_values(x, mean, cov)[0]
    return lambda x, mean, cov: _mvn_values(x, mean, cov)


@register_jitable
def _lower_t_solve(low, b):
    """low^-T b for a lower-triangular `low`: back substitution with its transpose."""
    d, m = b.shape
    out = np.empty((d, m))
    for j in range(m):
        for i in range(d - 1, -1, -1):
            s = b[i, j]
            for k in range(i + 1, d):
                s -= low[k, i] * out[k, j]
            out[i, j] = s / low[i, i]
    return out


def _seen(cov):
    """The symmetric matrix cov's lower triangle stands for (what Cholesky and eigh read)."""
    low = np.tril(cov)
    return low + np.tril(cov, -1).T


_SHAPES = ("scipy.stats.multivariate_normal.logpdf is differentiated with x a point or a "
           "stack of them (n, d), mean a vector of d and cov a (d, d) matrix")


def multivariate_normal_solved(x, mean, cov):
    """cov^-1 (x - mean) per point, shaped as x (which every rule's helper reads first).

    >>> multivariate_normal_solved(np.array([2.0, 3.0]), np.zeros(2), 2.0 * np.eye(2))
    array([1. , 1.5])
    """
    if np.ndim(mean) != 1 or np.shape(cov) != (np.size(mean),) * 2 or \
            np.ndim(x) not in (1, 2) or np.shape(x)[-1] != np.size(mean):
        raise MissingRule(_SHAPES)
    r = np.asarray(x, dtype=float) - mean
    return np.linalg.solve(_seen(cov), r.reshape(-1, r.shape[-1]).T).T.reshape(r.shape)


@overload(multivariate_normal_solved)
def _solved_typer(x, mean, cov):
    if not (isinstance(x, types.Array) and x.ndim in (1, 2) and isinstance(mean, types.Array)
            and mean.ndim == 1 and isinstance(cov, types.Array) and cov.ndim == 2):
        raise TypingError(f"srcgrad: {_SHAPES}")

    def impl(x, mean, cov):
        low, w = _whitened(x, mean, cov)
        return np.ascontiguousarray(_lower_t_solve(low, w).T).reshape(x.shape)
    return impl


@register_jitable
def _weights(dy, n):
    """dy as n weights, one per point (a number weighs them all)."""
    w = np.asarray(dy, dtype=np.float64).ravel()
    return w if w.size == n else np.full(n, w[0])


@register_jitable
def multivariate_normal_grads(dy, x, mean, cov):
    """The gradients of dy . logpdf(x, mean, cov) in x, mean and cov. With A the rows
    cov^-1 (x_i - mean): -dy_i A_i, sum_i dy_i A_i, and in cov, on its lower triangle (the
    one read), G_ij + G_ji below the diagonal and G_ii on it for the symmetric
    G = (A^T diag(dy) A - sum(dy) cov^-1) / 2."""
    d = mean.shape[0]
    a = multivariate_normal_solved(x, mean, cov).reshape((-1, d))
    w = _weights(dy, a.shape[0])
    weighted = a * w.reshape((-1, 1))
    inv = multivariate_normal_solved(np.eye(d), np.zeros(d), cov)
    g = 0.5 * (weighted.T @ a - np.sum(w) * inv)
    return (-weighted.reshape(x.shape), np.sum(weighted, axis=0),
            2.0 * np.tril(g, -1) + np.diag(np.diag(g)))


def per_point(values, x):
    """A value per point of x: a number for one point (x a vector), else a vector."""
    return values[0] if np.ndim(x) == 1 else values


@overload(per_point)
def _per_point_typer(values, x):
    if x.ndim == 1:
        return lambda values, x: values[0]
    return lambda values, x: values


@register_jitable
def multivariate_normal_cov_slope(dc, x, mean, cov):
    """The tangent of logpdf(x, mean, cov) along dc, a tangent of cov (its lower triangle,
    the one read, seen as the symmetric S): (A_i^T S A_i - tr(cov^-1 S)) / 2 per point."""
    d = mean.shape[0]
    a = multivariate_normal_solved(x, mean, cov).reshape((-1, d))
    s = np.tril(dc) + np.tril(dc, -1).T
    inv = multivariate_normal_solved(np.eye(d), np.zeros(d), cov)
    trace = np.sum(inv * s)
    out = np.empty(a.shape[0])
    for k in range(a.shape[0]):
        out[k] = 0.5 * (np.dot(a[k], np.dot(s, a[k])) - trace)
    return per_point(out, x)


# ---- Dirichlet: points are the columns of x (k, n), or x is one ----


@register_jitable
def _simplex(x, k):
    """x as a (k, n) float array of points (columns), the last coordinate appended where
    x gives k - 1 (as SciPy); ValueError off the simplex, as SciPy's."""
    pts = np.ascontiguousarray(x).astype(np.float64).reshape((x.shape[0], -1))
    if pts.shape[0] == k - 1:
        full = np.empty((k, pts.shape[1]))
        full[:k - 1] = pts
        full[k - 1] = 1.0 - pts.sum(axis=0)
        pts = full
    elif pts.shape[0] != k:
        raise ValueError("dirichlet.logpdf: x must have as many coordinates as alpha (or "
                         "one fewer)")
    if pts.size and (np.min(pts) < 0.0 or np.max(pts) > 1.0 or
                     np.max(np.abs(pts.sum(axis=0) - 1.0)) > 1e-9):
        raise ValueError("dirichlet.logpdf: each point x must lie within the simplex")
    return pts


@overload(dirichlet_logpdf)
def _dirichlet_logpdf_typer(x, alpha):
    if not (isinstance(x, types.Array) and x.ndim in (1, 2) and isinstance(alpha, types.Array)
            and alpha.ndim == 1):
        raise TypingError("srcgrad: scipy.stats.dirichlet.logpdf compiles with x a vector "
                          "or a matrix of points as columns, and alpha a vector")

    def impl(x, alpha):
        pts, a = _simplex(x, alpha.shape[0]), alpha.astype(np.float64)
        norm = special.gammaln(np.sum(a)) - np.sum(special.gammaln(a))
        out = np.empty(pts.shape[1])
        for j in range(pts.shape[1]):
            out[j] = norm + np.sum(special.xlogy(a - 1.0, pts[:, j]))
        return per_point(out, x)
    return impl


@register_jitable
def _dirichlet_slopes(x, alpha):
    """(per coordinate, per point) slopes of logpdf in x and in alpha: (alpha - 1) / x and
    psi(sum alpha) - psi(alpha) + log x, for the points of `_simplex`."""
    pts, a = _simplex(x, alpha.shape[0]), alpha.astype(np.float64)
    return ((a - 1.0).reshape((-1, 1)) / pts,
            (special.psi(np.sum(a)) - special.psi(a)).reshape((-1, 1)) + np.log(pts))


@register_jitable
def _implied(g, x):
    """The slopes in the coordinates x gives: where it gives k - 1, the last one is
    1 - their sum, so each slope loses the last coordinate's."""
    if x.shape[0] == g.shape[0]:
        return g
    return g[:-1] - g[-1:]


@register_jitable
def dirichlet_grads(dy, x, alpha):
    """The gradients of dy . logpdf(x, alpha) in x (shaped as x) and alpha: the partial
    derivatives of the density's formula, as JAX's (x is not kept on the simplex)."""
    gx, ga = _dirichlet_slopes(x, alpha)
    w = _weights(dy, gx.shape[1]).reshape((1, -1))
    return (np.ascontiguousarray(_implied(gx, x) * w).reshape(x.shape),
            np.sum(ga * w, axis=1))


@register_jitable
def dirichlet_x_slope(dx, x, alpha):
    """The tangent of logpdf(x, alpha) along dx, a tangent of x."""
    gx = _implied(_dirichlet_slopes(x, alpha)[0], x)
    return per_point(np.sum(gx * np.ascontiguousarray(dx).reshape((gx.shape[0], -1)),
                            axis=0), x)


@register_jitable
def dirichlet_alpha_slope(da, x, alpha):
    """The tangent of logpdf(x, alpha) along da, a tangent of alpha."""
    ga = _dirichlet_slopes(x, alpha)[1]
    return per_point(np.sum(ga * da.reshape((-1, 1)), axis=0), x)


# ---- second order: the gradients' helpers moved along one argument ----
# With A the rows cov^-1 (x_i - mean) and P = cov^-1 (S the symmetric matrix a tangent dc
# of cov stands for): along x, dA_i = P dx_i; along mean, dA_i = -P dmean; along cov,
# dA = -A S P and dP = -P S P. multivariate_normal_grads is bilinear in (dy, A) with P
# entering through its cov part only, so each tangent is its formula with A moved once.


@register_jitable
def _mvn_grads_along(w, a, da, dp, x):
    """The tangent of multivariate_normal_grads where A moves by dA and P by dP."""
    wa, wda = a * w.reshape((-1, 1)), da * w.reshape((-1, 1))
    g = 0.5 * (wda.T @ a + wa.T @ da - np.sum(w) * dp)
    return (-wda.reshape(x.shape), np.sum(wda, axis=0),
            2.0 * np.tril(g, -1) + np.diag(np.diag(g)))


@register_jitable
def multivariate_normal_grads_along_x(dx, dy, x, mean, cov):
    """The tangent of multivariate_normal_grads(dy, x, mean, cov) along dx, x's."""
    d = mean.shape[0]
    a = multivariate_normal_solved(x, mean, cov).reshape((-1, d))
    da = multivariate_normal_solved(dx, np.zeros(d), cov).reshape((-1, d))
    return _mvn_grads_along(_weights(dy, a.shape[0]), a, da, np.zeros((d, d)), x)


@register_jitable
def multivariate_normal_grads_along_mean(dm, dy, x, mean, cov):
    """The tangent of multivariate_normal_grads(dy, x, mean, cov) along dm, mean's."""
    d = mean.shape[0]
    a = multivariate_normal_solved(x, mean, cov).reshape((-1, d))
    da = np.zeros(a.shape) - multivariate_normal_solved(dm, np.zeros(d), cov).reshape((1, d))
    return _mvn_grads_along(_weights(dy, a.shape[0]), a, da, np.zeros((d, d)), x)


@register_jitable
def multivariate_normal_grads_along_cov(dc, dy, x, mean, cov):
    """The tangent of multivariate_normal_grads(dy, x, mean, cov) along dc, cov's (its
    lower triangle, the one read)."""
    d = mean.shape[0]
    a = multivariate_normal_solved(x, mean, cov).reshape((-1, d))
    s = np.tril(dc) + np.tril(dc, -1).T
    inv = multivariate_normal_solved(np.eye(d), np.zeros(d), cov)
    return _mvn_grads_along(_weights(dy, a.shape[0]), a, -(a @ s) @ inv, -(inv @ s) @ inv, x)


# With the points' coordinates p (the last one implied where x gives k - 1): the slopes
# (alpha - 1) / p in x move by -(alpha - 1) dp / p^2 along x and by dalpha / p along alpha;
# psi(sum alpha) - psi(alpha) + log p in alpha by dp / p along x and by
# psi'(sum alpha) sum(dalpha) - psi'(alpha) dalpha along alpha.


@register_jitable
def _simplex_tangent(dx, k):
    """A tangent of x as one of `_simplex`'s (k, n) points: the implied last coordinate
    moves by minus the others' sum."""
    t = np.ascontiguousarray(dx).astype(np.float64).reshape((dx.shape[0], -1))
    if t.shape[0] == k:
        return t
    full = np.empty((k, t.shape[1]))
    full[:k - 1] = t
    full[k - 1] = -t.sum(axis=0)
    return full


@register_jitable
def dirichlet_grads_along_x(dx, dy, x, alpha):
    """The tangent of dirichlet_grads(dy, x, alpha) along dx, x's."""
    pts, a = _simplex(x, alpha.shape[0]), alpha.astype(np.float64)
    t = _simplex_tangent(dx, alpha.shape[0])
    w = _weights(dy, pts.shape[1]).reshape((1, -1))
    gx = -(a - 1.0).reshape((-1, 1)) * t / pts ** 2
    return (np.ascontiguousarray(_implied(gx, x) * w).reshape(x.shape),
            np.sum(t / pts * w, axis=1))


@register_jitable
def dirichlet_grads_along_alpha(da, dy, x, alpha):
    """The tangent of dirichlet_grads(dy, x, alpha) along da, alpha's."""
    pts, a = _simplex(x, alpha.shape[0]), alpha.astype(np.float64)
    t = np.asarray(da).astype(np.float64)
    w = _weights(dy, pts.shape[1]).reshape((1, -1))
    gx = t.reshape((-1, 1)) / pts
    ga = (special.polygamma(1, np.sum(a)) * np.sum(t) - special.polygamma(1, a) * t) * np.sum(w)
    return np.ascontiguousarray(_implied(gx, x) * w).reshape(x.shape), ga
