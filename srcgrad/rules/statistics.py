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
rounding reaches (at a perfect correlation, R_ij is at its maximum and its slope 0). With
bias= or ddof= (deprecated, without effect) np.corrcoef is refused, and np.cov with
fweights=, aweights= or dtype=. The rules hold for real values (complex ones are refused).
"""

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from ..numba_ext import _is_none
from ..runtime import reshape_as
from . import describe, linear, real_only, rule, tangent

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
def _divisor(x, bias, ddof):
    """f = N - ddof: np.cov's divisor (ddof None: 0 with bias, else 1)."""
    n = x.shape[1]
    if ddof is None:
        return n - (0 if bias else 1)
    return n - ddof


@register_jitable
def _centred(x):
    out = np.empty(x.shape)
    for i in range(x.shape[0]):
        out[i] = x[i] - np.mean(x[i])
    return out


@register_jitable
def covariance_matrix(x, bias=False, ddof=None):
    """Xc Xc^T / f for the observations X (one variable per row).

    >>> covariance_matrix(np.array([[1.0, 2.0, 3.0]]))
    array([[1.]])
    """
    xc = _centred(x)
    return xc @ xc.T / _divisor(x, bias, ddof)


@register_jitable
def cov_grad(dc, x, bias=False, ddof=None):
    """The gradient of X of ``C = covariance_matrix(X, bias, ddof)``: (dC + dC^T) Xc / f
    (dC any shape of C's k x k entries).

    >>> cov_grad(np.ones((1, 1)), np.array([[1.0, 2.0, 3.0]]))
    array([[-1.,  0.,  1.]])
    """
    k = x.shape[0]
    g = np.ascontiguousarray(np.asarray(dc) * 1.0).reshape((k, k))
    return (g + g.T) @ _centred(x) / _divisor(x, bias, ddof)


@register_jitable
def cov_cross(dx, x, bias=False, ddof=None):
    """The tangent of ``covariance_matrix(X)`` along dX: (dXc Xc^T + Xc dXc^T) / f.

    >>> cov_cross(np.array([[1.0, 0.0, 0.0]]), np.array([[1.0, 2.0, 3.0]]))
    array([[-1.]])
    """
    p = _centred(dx) @ _centred(x).T
    return (p + p.T) / _divisor(x, bias, ddof)


def covariance(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
               dtype=None):
    """np.cov itself, which generated code calls in its place (numba's np.cov reads a
    vector with rowvar=False as many variables).

    >>> covariance(np.array([1.0, 2.0, 3.0]))
    array(1.)
    """
    return np.cov(m, y, rowvar, bias, ddof, fweights, aweights, dtype=dtype)


def _weights_given(fweights, aweights, dtype):
    if not (_is_none(fweights) and _is_none(aweights) and _is_none(dtype)):
        raise TypingError("srcgrad: " + _WEIGHTED)


_WEIGHTED = "np.cov with fweights=, aweights= or dtype= has no gradient rule"


@overload(covariance)
def _covariance_typer(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None,
                      aweights=None, dtype=None):
    _weights_given(fweights, aweights, dtype)
    if isinstance(m, types.Array) and m.ndim == 1 and _is_none(y):
        def vector(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None,
                   aweights=None, dtype=None):
            c = covariance_matrix(observations(m, y, rowvar), bias, ddof)
            return c.reshape(())
        return vector

    def matrix(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
               dtype=None):
        c = covariance_matrix(observations(m, y, rowvar), bias, ddof)
        if c.shape[0] == 1:
            raise ValueError("srcgrad: np.cov of one variable given as a matrix compiles "
                             "as a matrix: pass the variable as a vector")
        return c
    return matrix


def _cov_refused(options) -> str | None:
    if any(options.get(k) is not None for k in ("fweights", "aweights", "dtype")):
        return "fweights=, aweights= and dtype= have no gradient rule"
    return None


@rule(np.cov, covariance, refuse=_cov_refused)
def cov(dc, c, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
        dtype=None):
    return (unobserved(cov_grad(dc, observations(m, y, rowvar), bias, ddof), m, y, rowvar, 0),
            unobserved(cov_grad(dc, observations(m, y, rowvar), bias, ddof), m, y, rowvar, 1),
            None, None, None, None, None, None)


@tangent(np.cov, covariance)
def cov_tangent(dx, c, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None,
                aweights=None, dtype=None):
    return (reshape_as(cov_cross(observed(dx, m, y, rowvar, 0), observations(m, y, rowvar),
                                 bias, ddof), c),
            reshape_as(cov_cross(observed(dx, m, y, rowvar, 1), observations(m, y, rowvar),
                                 bias, ddof), c),
            None, None, None, None, None, None)


@tangent(cov_grad)
def cov_grad_tangent(dx, g, dc, x, bias=False, ddof=None):
    return cov_grad(dx, x, bias, ddof), cov_grad(dc, dx, bias, ddof), None, None


@tangent(covariance_matrix)
def covariance_matrix_tangent(dx, c, x, bias=False, ddof=None):
    return cov_cross(dx, x, bias, ddof), None, None


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
describe(np.cov, compiled_as=covariance)
describe(np.corrcoef, compiled_as=correlation)
describe(observations, unobserved, observed, covariance_matrix, cov_grad, cov_cross,
         correlation_matrix, corr_grad, corr_slope, covariance, correlation, pure=True)
