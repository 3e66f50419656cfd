"""scipy.special under numba, continued (`runtime/special.py` has the pattern): erfcx,
erfcinv, rgamma, i0e, i1e, log_expit, loggamma (of a real argument), gammasgn and beta
call cython_special's float64 forms; `multigammaln(a, d)` sums gammaln over its d terms
(d a number, as SciPy's). The helpers of their rules beside their numba forms:
`i1e_slope`, the derivative of i1e, and `multipolygamma(n, a, d)`, the sum over j < d of
polygamma(n, a - j/2) (n = 0: the derivative of multigammaln)."""

from __future__ import annotations

import math

import numpy as np
import scipy.special as special
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from .special import _binary, _called, _export, _polygamma, _real, _unary

_C = {name: _export(name, 1) for name in (
    "erfcx", "erfcinv", "rgamma", "i0e", "i1e", "log_expit", "loggamma", "gammasgn")}
for _name, _c in _C.items():
    _unary(getattr(special, _name), _called(_c))
_binary(special.beta, _export("beta", 2))
_I0E, _I1E = _C["i0e"], _C["i1e"]
_LOGGAMMA = _C["loggamma"]
_LOG_PI = math.log(math.pi)


def i1e_slope(x):
    """The derivative of i1e(x) = exp(-|x|) i1(x): i0e(x) - (sign(x) + 1/x) i1e(x), and
    its limit 1/2 at x = 0.

    >>> float(i1e_slope(0.0))
    0.5
    """
    x = np.asarray(x, dtype=float)
    ratio = special.i1e(x) / np.where(x == 0.0, 1.0, x)
    return np.where(x == 0.0, 0.5, special.i0e(x) - ratio - np.sign(x) * special.i1e(x))[()]


@register_jitable
def _i1e_slope(x):
    if x == 0.0:
        return 0.5
    e = _I1E(x, 0)
    return _I0E(x, 0) - e / x - math.copysign(1.0, x) * e


_unary(i1e_slope, _i1e_slope)


def multipolygamma(n, a, d):
    """The sum over j = 0 .. d-1 of polygamma(n, a - j/2): the derivative of
    multigammaln(a, d) in a for n = 0, and of this sum for n + 1.

    >>> float(multipolygamma(0, 3.0, 1)) == float(special.psi(3.0))
    True
    """
    a = np.asarray(a, dtype=float)
    return sum(special.polygamma(n, a - 0.5 * j) for j in range(int(d)))[()]


@register_jitable
def _multigammaln(a, d):
    if not a > 0.5 * (d - 1):
        raise ValueError("multigammaln: the condition a > (d - 1) / 2 is not met")
    total = d * (d - 1) * 0.25 * _LOG_PI
    for j in range(int(d)):
        total += _LOGGAMMA(a - 0.5 * j, 0)
    return total


@register_jitable
def _multipolygamma(n, a, d):
    total = 0.0
    for j in range(int(d)):
        total += _polygamma(n, a - 0.5 * j)
    return total


def _d_number(fun, d):
    if not isinstance(d, types.Integer):
        raise TypingError(f"srcgrad: scipy.special.{fun} compiles with d an int (the "
                          "dimension), not an array or a float")


@overload(special.multigammaln)
def _multigammaln_typer(a, d):
    _d_number("multigammaln", d)
    if _real(a):
        return lambda a, d: _multigammaln(float(a), d)
    if isinstance(a, types.Array) and _real(a.dtype):
        def array(a, d):
            flat = a.ravel()
            out = np.empty(flat.size)
            for i in range(flat.size):
                out[i] = _multigammaln(float(flat[i]), d)
            return out.reshape(a.shape)
        return array
    return None


@overload(multipolygamma)
def _multipolygamma_typer(n, a, d):
    _d_number("multigammaln", d)
    if _real(a):
        return lambda n, a, d: _multipolygamma(n, float(a), d)
    if isinstance(a, types.Array) and _real(a.dtype):
        def array(n, a, d):
            flat = a.ravel()
            out = np.empty(flat.size)
            for i in range(flat.size):
                out[i] = _multipolygamma(n, float(flat[i]), d)
            return out.reshape(a.shape)
        return array
    return None
