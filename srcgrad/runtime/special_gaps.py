"""scipy.special under numba, the functions JAX and autograd differentiate that the other
parts lack (`runtime/special.py` has the pattern): the confluent and Gauss hypergeometric
functions hyp1f1 and hyp2f1 and the Bessel function yn of the second kind call
cython_special's float64 forms; sici and fresnel, which give two values, call its float64
forms that write them through pointers. Broadcast as SciPy broadcasts them; a complex
argument has no numba form here (SciPy's Python functions take it).
"""

from __future__ import annotations

import llvmlite.binding as ll
import numpy as np
import scipy.special as special
import scipy.special.cython_special as cython_special
from numba import types
from numba.extending import get_cython_function_address, overload, register_jitable

from .special import _capsule_name, _export, _float, _number, _real
from .special_extra import _binary, _floats, _ternary

_ternary(special.hyp1f1, _export("hyp1f1", 3))
_binary(special.yn, _export("yn", 2))   # (yn of a float n, as SciPy's ufunc on floats)
_HYP2F1 = _export("hyp2f1", 4)


@overload(special.hyp2f1)
def _hyp2f1_typer(a, b, c, z):
    args = (a, b, c, z)
    if all(_number(t) for t in args):
        return lambda a, b, c, z: _HYP2F1(_float(a), _float(b), _float(c), _float(z), 0)
    if not all(_real(t) or isinstance(t, types.Array) and _real(t.dtype) for t in args):
        return None

    def arrays(a, b, c, z):
        xs = np.broadcast_arrays(_floats(a), _floats(b), _floats(c), _floats(z))
        out = np.empty(xs[0].shape)
        for i in np.ndindex(out.shape):
            out[i] = _HYP2F1(xs[0][i], xs[1][i], xs[2][i], xs[3][i], 0)
        return out
    return arrays


def _export_pair(name: str) -> types.ExternalFunction:
    """cython_special's float64 `name` that writes its two values through pointers
    (`void (double, double *, double *)`)."""
    for key, capsule in cython_special.__pyx_capi__.items():
        if key.endswith(name) and key.replace(name, "").strip("_pyxfuse0123456789") == "" \
                and _capsule_name(capsule).decode() == "void (double, double *, double *)":
            symbol = f"srcgrad_special_{name}_pair"
            ll.add_symbol(symbol, get_cython_function_address(
                "scipy.special.cython_special", key))
            return types.ExternalFunction(symbol, types.void(
                types.float64, types.CPointer(types.float64), types.CPointer(types.float64)))
    raise LookupError(f"scipy.special.cython_special exports no float64 {name}")


def _pair(fun, c) -> None:
    """The numba form of `fun`, of one argument and two values (a tuple of two floats or
    of two arrays of its shape)."""
    @register_jitable
    def scalar(x):
        out = np.empty(2)
        c(x, out[0:].ctypes, out[1:].ctypes)
        return out[0], out[1]

    @overload(fun)
    def _typer(x):
        if _real(x):
            return lambda x: scalar(float(x))
        if isinstance(x, types.Array) and _real(x.dtype):
            def arrays(x):
                flat = x.ravel()
                first, second = np.empty(flat.size), np.empty(flat.size)
                for i in range(flat.size):
                    first[i], second[i] = scalar(float(flat[i]))
                return first.reshape(x.shape), second.reshape(x.shape)
            return arrays
        return None


_pair(special.sici, _export_pair("sici"))
_pair(special.fresnel, _export_pair("fresnel"))
