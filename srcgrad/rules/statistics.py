"""Covariance and correlation: the records of np.cov and np.corrcoef, the helpers their
rules call (each Python form beside its numba form), and `covariance` and `correlation`,
which generated code calls in their place (numba's np.cov gives nan for a vector with
rowvar=False, where NumPy reads the vector as one variable whatever rowvar says).

Both read their arguments as the matrix X of observations, one variable per row
(`observations`: m, and y below it, transposed where rowvar is False, a vector one row),
which they are linear in. np.cov is C = Xc Xc^T / f, Xc = X less its row means and
f = N - ddof (ddof 1, or 0 with bias=True), so its gradient is (dC + dC^T) Xc / f
(`cov_grad`; Xc's rows have mean 0, so the centring passes it as it is), cut back into
m's and y's shapes (`unobserved`). np.corrcoef is R = C o s s^T, s = diag(C)^(-1/2), so
dC = dR o s s^T less, on the diagonal, s_k^2 sum_j (dR + dR^T)_kj R_kj / 2 (`corr_grad`;
R's diagonal, 1 by construction, has no gradient); NumPy clips R to [-1, 1], which only
rounding reaches (at a perfect correlation, R_ij is at its maximum and its slope 0).

With weights (w = fweights aweights per observation, s = sum(w)) np.cov is
C = Xc W Xc^T / f, Xc X less its rows' weighted means, f = s where ddof is 0, s - ddof
without aweights and s - ddof sum(w aweights) / s with them; the gradient of X is
(dC + dC^T) Xc W / f, and the weights' is `cov_weights_grad` (the fweights' as the
real numbers NumPy's formula reads them; it refuses ones that are not integers).
Second order along weights being differentiated: hvp along the aweights alone (through
the helpers' source); where the gradient of X would need it, it is refused.
With bias= or ddof= (deprecated, without effect) np.corrcoef is refused; np.cov's dtype=
is differentiated where it is float64 (`casts`: the gradient is the one without it), and
refused otherwise. The rules hold for real values (complex ones are refused).
"""

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from ..numba_ext import _is_none
from ..runtime import reshape_as
from . import describe, linear, real_only, rule, tangent
from .reduction_options import _float64

# ---- the observations: one variable per row ----


def observations(m, y=None, rowvar=True):
    """The matrix np.cov reads: m (a vector: one row), transposed where rowvar is False,
    with y's rows below.

    >>> observations(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([5.0, 6.0]), False)
    array([[1., 3.],
           [2., 4.],
           [5., 6.]])
    """
    x = _rows_of(m, rowvar)
    return x if y is None else np.concatenate((x, _rows_of(y, rowvar)), axis=0)


def _rows_of(a, rowvar):
    a = np.atleast_2d(np.asarray(a, dtype=np.result_type(a, 1.0)))
    return a.T if not rowvar and a.shape[0] != 1 else a


@register_jitable
def _rows(a, rowvar):
    if a.ndim == 1:
        return np.ascontiguousarray(a.reshape((1, a.size))) * 1.0
    if not rowvar and a.shape[0] != 1:
        return np.ascontiguousarray(a.T) * 1.0
    return np.ascontiguousarray(a) * 1.0


def _two_dimensional(a) -> bool:
    if not (isinstance(a, types.Array) and a.ndim in (1, 2)):
        raise TypingError("srcgrad: np.cov and np.corrcoef read vectors and matrices")
    return True


@overload(observations)
def _observations_typer(m, y=None, rowvar=True):
    _two_dimensional(m)
    if _is_none(y):
        return lambda m, y=None, rowvar=True: _rows(m, rowvar)
    _two_dimensional(y)
    return lambda m, y=None, rowvar=True: np.concatenate((_rows(m, rowvar), _rows(y, rowvar)))


def unobserved(dx, m, y=None, rowvar=True, which=0):
    """The part of dx (a cotangent of `observations(m, y, rowvar)`) that is m's
    (`which` 0) or y's (1), in that argument's shape.

    >>> unobserved(np.arange(6.0).reshape(3, 2), np.zeros((2, 2)), np.zeros(2), False, 1)
    array([4., 5.])
    """
    k = _rows_of(m, rowvar).shape[0]
    a = m if which == 0 else y
    part = dx[:k] if which == 0 else dx[k:]
    if np.ndim(a) == 2 and not rowvar and np.shape(a)[0] != 1:
        part = part.T
    return part.reshape(np.shape(a))


@register_jitable
def _unrows(part, a, rowvar):
    if a.ndim == 2 and not rowvar and a.shape[0] != 1:
        return np.ascontiguousarray(part.T).reshape(a.shape)
    return np.ascontiguousarray(part).reshape(a.shape)


@overload(unobserved)
def _unobserved_typer(dx, m, y=None, rowvar=True, which=0):
    if _is_none(y):
        return lambda dx, m, y=None, rowvar=True, which=0: _unrows(dx, m, rowvar)

    if _which(which) == 0:
        return lambda dx, m, y=None, rowvar=True, which=0: _unrows(
            dx[:_rows(m, rowvar).shape[0]], m, rowvar)
    return lambda dx, m, y=None, rowvar=True, which=0: _unrows(
        dx[_rows(m, rowvar).shape[0]:], y, rowvar)


def _which(t) -> int:
    """The compile-time value of `which` (0: m, 1: y)."""
    if isinstance(t, int):
        return t
    if isinstance(t, types.IntegerLiteral):
        return t.literal_value
    if isinstance(t, types.Omitted):
        return t.value
    raise TypingError(f"srcgrad: which= must be a constant, got {t}")   # (retried as one)


def observed(d, m, y=None, rowvar=True, which=0):
    """`observations` of the tangent d of m (`which` 0) or of y (1), the other argument's
    rows zero: the tangent of X along one argument's.

    >>> observed(np.ones(2), np.zeros(2), np.zeros(2), True, 1)
    array([[0., 0.],
           [1., 1.]])
    """
    if which == 0:
        return observations(d, None if y is None else np.zeros(np.shape(y)), rowvar)
    return observations(np.zeros(np.shape(m)), d, rowvar)


@overload(observed)
def _observed_typer(d, m, y=None, rowvar=True, which=0):
    if _is_none(y):
        return lambda d, m, y=None, rowvar=True, which=0: observations(d, None, rowvar)

    if _which(which) == 0:
        return lambda d, m, y=None, rowvar=True, which=0: observations(
            d, np.zeros(y.shape), rowvar)
    return lambda d, m, y=None, rowvar=True, which=0: observations(np.zeros(m.shape), d, rowvar)


# ---- covariance ----


@register_jitable
def _ddof(bias, ddof):
    """NumPy's ddof: as given, or 0 with bias and 1 without."""
    if ddof is None:
        return 0 if bias else 1
    return ddof


@register_jitable
def _scaled(v, weights):
    """v times the weights (v where there are none)."""
    if weights is None:
        return v
    return v * weights


@register_jitable
def _weight(x, fweights=None, aweights=None):
    """w = fweights aweights per observation (a column of X; ones where neither)."""
    return _scaled(_scaled(np.ones(x.shape[1]), fweights), aweights)


@register_jitable
def _divisor(x, bias, ddof, fweights=None, aweights=None):
    """f: np.cov's divisor. Without weights N - ddof; with them (w their product, s its
    sum) s where ddof is 0, s - ddof without aweights, else s - ddof sum(w a) / s."""
    d = _ddof(bias, ddof)
    if fweights is None and aweights is None:
        return x.shape[1] - d + 0.0
    w = _weight(x, fweights, aweights)
    s = np.sum(w)
    if d == 0:
        return s
    return s - d * _aweighted(w, aweights) / s


@register_jitable
def _aweighted(w, aweights):
    """sum(w a) (1 per unit of s where there are no aweights: s - ddof)."""
    if aweights is None:
        return np.sum(w)
    return np.sum(w * aweights)


@register_jitable
def _centred(x, w):
    """X less its rows' means, weighted by w."""
    out = np.empty(x.shape)
    s = np.sum(w)
    for i in range(x.shape[0]):
        out[i] = x[i] - np.sum(x[i] * w) / s
    return out


@register_jitable
def covariance_matrix(x, bias=False, ddof=None, fweights=None, aweights=None):
    """Xc W Xc^T / f for the observations X (one variable per row), W the weights'
    diagonal (the identity without them) and Xc X less its rows' weighted means.

    >>> covariance_matrix(np.array([[1.0, 2.0, 3.0]]))
    array([[1.]])
    >>> covariance_matrix(np.array([[1.0, 2.0, 4.0]]), True, None, np.array([1, 2, 1]))
    array([[1.1875]])
    """
    w = _weight(x, fweights, aweights)
    xc = _centred(x, w)
    return xc @ (xc * w).T / _divisor(x, bias, ddof, fweights, aweights)


@register_jitable
def cov_grad(dc, x, bias=False, ddof=None, fweights=None, aweights=None):
    """The gradient of X of ``C = covariance_matrix(X, bias, ddof, fweights, aweights)``:
    (dC + dC^T) Xc W / f (dC any shape of C's k x k entries; Xc W's rows sum to 0, so
    the centring passes the gradient as it is).

    >>> cov_grad(np.ones((1, 1)), np.array([[1.0, 2.0, 3.0]]))
    array([[-1.,  0.,  1.]])
    """
    k = x.shape[0]
    w = _weight(x, fweights, aweights)
    g = np.ascontiguousarray(np.asarray(dc) * 1.0).reshape((k, k))
    return (g + g.T) @ (_centred(x, w) * w) / _divisor(x, bias, ddof, fweights, aweights)


@register_jitable
def cov_cross(dx, x, bias=False, ddof=None, fweights=None, aweights=None):
    """The tangent of ``covariance_matrix(X)`` along dX: (dXc W Xc^T + Xc W dXc^T) / f.

    >>> cov_cross(np.array([[1.0, 0.0, 0.0]]), np.array([[1.0, 2.0, 3.0]]))
    array([[-1.]])
    """
    w = _weight(x, fweights, aweights)
    p = _centred(dx, w) @ (_centred(x, w) * w).T
    return (p + p.T) / _divisor(x, bias, ddof, fweights, aweights)


@register_jitable
def _weight_slopes(x, bias, ddof, fweights, aweights):
    """Per observation k, for C = S / f with S = Xc W Xc^T: Xc (one column per k),
    C, f, df/dw_k (the aweights held) and df/da_k (w held). dS/dw_k = Xc_k Xc_k^T: the
    centring's own change, sum_j w_j Xc_j = 0, drops out."""
    w = _weight(x, fweights, aweights)
    fact = _divisor(x, bias, ddof, fweights, aweights)
    xc = _centred(x, w)
    n = x.shape[1]
    by_w, by_a = np.ones(n), np.zeros(n)
    d = _ddof(bias, ddof)
    if aweights is not None:
        if d != 0:
            s = np.sum(w)
            by_w = 1.0 - d * (aweights / s - np.sum(w * aweights) / (s * s))
            by_a = -d * w / s
    return xc, xc @ (xc * w).T / fact, fact, by_w, by_a


@register_jitable
def cov_weights_grad(dc, x, bias=False, ddof=None, fweights=None, aweights=None, which=1):
    """The gradient of the aweights (`which` 1) or of the fweights (0, as real numbers) of
    ``C = covariance_matrix(X, bias, ddof, fweights, aweights)``: with w = f a,
    dL/dw_k = (Xc^T dC Xc)_kk / f - <dC, C> (df/dw_k) / f, times a_k for f_k, and f_k
    for a_k, less <dC, C> (df/da_k) / f.

    >>> cov_weights_grad(np.ones((1, 1)), np.array([[0.0, 2.0]]), True, None, None,
    ...                  np.array([1.0, 1.0]))
    array([0., 0.])
    """
    k = x.shape[0]
    g = np.ascontiguousarray(np.asarray(dc) * 1.0).reshape((k, k))
    xc, c, fact, by_w, by_a = _weight_slopes(x, bias, ddof, fweights, aweights)
    both = np.sum(g * c) / fact
    per_w = np.sum(xc * (g @ xc), axis=0) / fact - both * by_w
    if which == 0:
        return _scaled(per_w, aweights)
    return _scaled(per_w, fweights) - both * by_a


@register_jitable
def cov_weights_cross(dv, x, bias=False, ddof=None, fweights=None, aweights=None,
                      which=1):
    """The tangent of ``covariance_matrix(X, ...)`` along the aweights' tangent dv
    (`which` 1) or the fweights' (0): Xc diag(dw) Xc^T / f - C df / f.

    >>> cov_weights_cross(np.array([1.0, 0.0]), np.array([[0.0, 2.0]]), True, None, None,
    ...                   np.array([1.0, 1.0]))
    array([[0.]])
    """
    xc, c, fact, by_w, by_a = _weight_slopes(x, bias, ddof, fweights, aweights)
    if which == 0:
        dw = _scaled(dv, aweights)
        df = np.sum(by_w * dw)
    else:
        dw = _scaled(dv, fweights)
        df = np.sum(by_w * dw) + np.sum(by_a * dv)
    return (xc @ (xc * dw).T - c * df) / fact


def covariance(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
               dtype=None):
    """np.cov itself, which generated code calls in its place (numba's np.cov reads a
    vector with rowvar=False as many variables, and takes no weights). Given float
    fweights and aweights, np.cov multiplies the fweights by the aweights in place (the
    caller's array): this one gives it a copy, which the gradient reads unchanged.

    >>> covariance(np.array([1.0, 2.0, 3.0]))
    array(1.)
    """
    if fweights is not None:
        fweights = np.array(fweights, dtype=float)
    return np.cov(m, y, rowvar, bias, ddof, fweights, aweights, dtype=dtype)


def _weights_given(fweights, aweights, dtype):
    if not (_is_none(dtype) or _float64(dtype)):   # (float64: what np.cov gives anyway)
        raise TypingError("srcgrad: np.cov compiles with dtype=np.float64 alone")
    for w in (fweights, aweights):
        if not (_is_none(w) or isinstance(w, types.Array) and w.ndim == 1):
            raise TypingError("srcgrad: np.cov's fweights= and aweights= are vectors")


@register_jitable
def _checked(x, fweights, aweights):
    """NumPy's checks of the weights (its errors' messages)."""
    _check_weights(x, fweights)
    _check_weights(x, aweights)
    if fweights is not None:
        if np.any(fweights != np.floor(fweights * 1.0)):
            raise ValueError("srcgrad: np.cov: fweights must be integer")
    return x


@register_jitable
def _check_weights(x, w):
    if w is not None:
        if w.shape[0] != x.shape[1]:
            raise ValueError("srcgrad: np.cov: incompatible numbers of samples and weights")
        if np.any(w < 0):
            raise ValueError("srcgrad: np.cov: weights cannot be negative")


@overload(covariance)
def _covariance_typer(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None,
                      aweights=None, dtype=None):
    _weights_given(fweights, aweights, dtype)
    if isinstance(m, types.Array) and m.ndim == 1 and _is_none(y):
        def vector(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None,
                   aweights=None, dtype=None):
            x = _checked(observations(m, y, rowvar), fweights, aweights)
            return covariance_matrix(x, bias, ddof, fweights, aweights).reshape(())
        return vector

    def matrix(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
               dtype=None):
        x = _checked(observations(m, y, rowvar), fweights, aweights)
        c = covariance_matrix(x, bias, ddof, fweights, aweights)
        if c.shape[0] == 1:
            raise ValueError("srcgrad: np.cov of one variable given as a matrix compiles "
                             "as a matrix: pass the variable as a vector")
        return c
    return matrix


# (dtype= is not a parameter of the rules: a float64 one is differentiated as if not
# given, others refused, as the reductions' are: `casts`, passes/base.py)
@rule(np.cov, covariance)
def cov(dc, c, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    return (unobserved(cov_grad(dc, observations(m, y, rowvar), bias, ddof, fweights,
                                aweights), m, y, rowvar, 0),
            unobserved(cov_grad(dc, observations(m, y, rowvar), bias, ddof, fweights,
                                aweights), m, y, rowvar, 1),
            None, None, None,
            cov_weights_grad(dc, observations(m, y, rowvar), bias, ddof, fweights, aweights, 0),
            cov_weights_grad(dc, observations(m, y, rowvar), bias, ddof, fweights, aweights, 1))


@tangent(np.cov, covariance)
def cov_tangent(dx, c, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None,
                aweights=None):
    return (reshape_as(cov_cross(observed(dx, m, y, rowvar, 0), observations(m, y, rowvar),
                                 bias, ddof, fweights, aweights), c),
            reshape_as(cov_cross(observed(dx, m, y, rowvar, 1), observations(m, y, rowvar),
                                 bias, ddof, fweights, aweights), c),
            None, None, None,
            reshape_as(cov_weights_cross(dx, observations(m, y, rowvar), bias, ddof,
                                         fweights, aweights, 0), c),
            reshape_as(cov_weights_cross(dx, observations(m, y, rowvar), bias, ddof,
                                         fweights, aweights, 1), c))


# second order along weights being differentiated is refused: cov_grad's tangent rule
# gives dc's and x's alone, and cov_weights_grad has none
@tangent(cov_grad)
def cov_grad_tangent(dx, g, dc, x, bias=False, ddof=None, fweights=None, aweights=None):
    return (cov_grad(dx, x, bias, ddof, fweights, aweights),
            cov_grad(dc, dx, bias, ddof, fweights, aweights))


@tangent(covariance_matrix)
def covariance_matrix_tangent(dx, c, x, bias=False, ddof=None, fweights=None, aweights=None):
    return (cov_cross(dx, x, bias, ddof, fweights, aweights), None, None,
            cov_weights_cross(dx, x, bias, ddof, fweights, aweights, 0),
            cov_weights_cross(dx, x, bias, ddof, fweights, aweights, 1))


# ---- correlation ----


@register_jitable
def correlation_matrix(c):
    """R = C o s s^T, s = diag(C)^(-1/2), clipped to [-1, 1] as NumPy's.

    >>> correlation_matrix(np.array([[4.0, 2.0], [2.0, 4.0]]))
    array([[1. , 0.5],
           [0.5, 1. ]])
    """
    s = 1.0 / np.sqrt(np.diag(c))
    return np.minimum(np.maximum(c * np.outer(s, s), -1.0), 1.0)


@register_jitable
def corr_grad(dr, r, c):
    """The gradient of C (k x k) of ``R = correlation_matrix(C)``: dR o s s^T less, on
    the diagonal, s_k^2 sum_j (dR + dR^T)_kj R_kj / 2.

    >>> corr_grad(np.ones((1, 1)), np.ones((1, 1)), np.array([[4.0]]))
    array([[0.]])
    """
    k = c.shape[0]
    g = np.ascontiguousarray(np.asarray(dr) * 1.0).reshape((k, k))
    rr = np.ascontiguousarray(np.asarray(r) * 1.0).reshape((k, k))
    s = 1.0 / np.sqrt(np.diag(c))
    out = g * np.outer(s, s)
    both = (g + g.T) * rr
    for i in range(k):
        out[i, i] -= 0.5 * s[i] * s[i] * np.sum(both[i])
    return out


@register_jitable
def corr_slope(dc, c):
    """The tangent of ``correlation_matrix(C)`` along dC: dC o s s^T - R o (u 1^T +
    1 u^T), u = s^2 diag(dC) / 2.

    >>> corr_slope(np.array([[1.0, 0.0], [0.0, 0.0]]), np.array([[4.0, 2.0], [2.0, 4.0]]))
    array([[ 0.    , -0.0625],
           [-0.0625,  0.    ]])
    """
    s = 1.0 / np.sqrt(np.diag(c))
    u = 0.5 * s * s * np.diag(dc)
    r = c * np.outer(s, s)
    return dc * np.outer(s, s) - r * (np.expand_dims(u, 1) + np.expand_dims(u, 0))


def correlation(x, y=None, rowvar=True, bias=None, ddof=None, dtype=None):
    """np.corrcoef itself, which generated code calls in its place.

    >>> correlation(np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]))
    array([[ 1., -1.],
           [-1.,  1.]])
    """
    return np.corrcoef(x, y, rowvar) if dtype is None else \
        np.corrcoef(x, y, rowvar, dtype=dtype)


@overload(correlation)
def _correlation_typer(x, y=None, rowvar=True, bias=None, ddof=None, dtype=None):
    if not (_is_none(bias) and _is_none(ddof) and _is_none(dtype)):
        raise TypingError("srcgrad: " + _CORR_OPTIONS)
    if isinstance(x, types.Array) and x.ndim == 1 and _is_none(y):
        return lambda x, y=None, rowvar=True, bias=None, ddof=None, dtype=None: 1.0

    def impl(x, y=None, rowvar=True, bias=None, ddof=None, dtype=None):
        return correlation_matrix(covariance_matrix(observations(x, y, rowvar)))
    return impl


_CORR_OPTIONS = "np.corrcoef with bias=, ddof= (without effect) or dtype= has no gradient rule"


def _corr_refused(options) -> str | None:
    if any(options.get(k) is not None for k in ("bias", "ddof", "dtype")):
        return "bias= and ddof= (deprecated, without effect) and dtype= have no gradient rule"
    return None


@rule(np.corrcoef, correlation, refuse=_corr_refused)
def corrcoef(dr, r, x, y=None, rowvar=True, bias=None, ddof=None, dtype=None):
    return (unobserved(cov_grad(corr_grad(dr, r, covariance_matrix(observations(
                x, y, rowvar))), observations(x, y, rowvar)), x, y, rowvar, 0),
            unobserved(cov_grad(corr_grad(dr, r, covariance_matrix(observations(
                x, y, rowvar))), observations(x, y, rowvar)), x, y, rowvar, 1),
            None, None, None, None)


@tangent(np.corrcoef, correlation)
def corrcoef_tangent(dx, r, x, y=None, rowvar=True, bias=None, ddof=None, dtype=None):
    return (reshape_as(corr_slope(cov_cross(observed(dx, x, y, rowvar, 0), observations(
                x, y, rowvar)), covariance_matrix(observations(x, y, rowvar))), r),
            reshape_as(corr_slope(cov_cross(observed(dx, x, y, rowvar, 1), observations(
                x, y, rowvar)), covariance_matrix(observations(x, y, rowvar))), r),
            None, None, None, None)


linear(observations, positions=(0, 1))
linear(unobserved, observed)
real_only(np.cov, covariance, np.corrcoef, correlation)
describe(np.cov, compiled_as=covariance, casts=True)
describe(covariance, casts=True)
describe(np.corrcoef, compiled_as=correlation)
describe(observations, unobserved, observed, covariance_matrix, cov_grad, cov_cross,
         cov_weights_grad, cov_weights_cross, correlation_matrix, corr_grad, corr_slope,
         covariance, correlation, pure=True)
