"""scipy.special under numba, a fourth part (`runtime/special.py` has the pattern): the
modified Bessel functions k0, k1, k0e, k1e, SciPy's expm1, log1p and cosm1, the inverses
of the incomplete gamma function gammaincinv and gammainccinv, and the distribution
functions stdtr, chdtr, pdtr and bdtr call cython_special's float64 forms (ints and
floats mixed, as `special_extra`'s forms of two and three arguments take them). bdtr's
is the one of an integer n (its float n form warns that a float n is deprecated, even a
whole one): n truncated as SciPy's, NaN where n is not finite or too large for a C long
(SciPy's value there)."""

from __future__ import annotations

import math
import re

import llvmlite.binding as ll
import scipy.special as special
import scipy.special.cython_special as cython_special
from numba import types
from numba.extending import get_cython_function_address, register_jitable

from .special import _called, _capsule_name, _export, _unary
from .special_extra import _binary, _ternary

for _name in ("k0", "k1", "k0e", "k1e", "expm1", "log1p", "cosm1"):
    _unary(getattr(special, _name), _called(_export(_name, 1)))
for _name in ("gammaincinv", "gammainccinv", "stdtr", "chdtr", "pdtr"):
    _binary(getattr(special, _name), _export(_name, 2))


def _bdtr_export() -> types.ExternalFunction:
    """cython_special's bdtr of a C long n (`__pyx_fuse_1bdtr`)."""
    want = "double (double, long, double, int __pyx_skip_dispatch)"
    for key, capsule in cython_special.__pyx_capi__.items():
        if re.fullmatch(r"(__pyx_fuse_\d+)?bdtr", key) and _capsule_name(capsule).decode() == want:
            ll.add_symbol("srcgrad_special_bdtr_long",
                          get_cython_function_address("scipy.special.cython_special", key))
            return types.ExternalFunction("srcgrad_special_bdtr_long", types.float64(
                types.float64, types.long_, types.float64, types.intc))
    raise LookupError("scipy.special.cython_special exports no bdtr of a long n")


_BDTR = _bdtr_export()


@register_jitable
def _bdtr(k, n, p, flag):
    if not abs(n) < 9.2e18:
        return math.nan
    return _BDTR(k, int(n), p, 0)


_ternary(special.bdtr, _bdtr)
