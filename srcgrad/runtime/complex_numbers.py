"""Adjoint helpers of complex values (`rules/complex_numbers.py`, `rules/fourier.py`),
each NumPy function with its numba form after it.

The convention is JAX's: the cotangent c of a complex value z = x + iy is the number with
dL = Re(c dz), that is c = dL/dx - i dL/dy. Holomorphic rules need no change under it (the
cotangent of z = f(w) is c f'(w), as for real values), and the gradient of a real loss
with respect to a complex input is dL/dx - i dL/dy (JAX's `grad`; step along its
conjugate to descend). A product gives a real operand w a cotangent whose imaginary part
means nothing (w in z = w * 1j gets c * 1j); only its real part counts. So where values
may be complex, the adjoint takes it where it makes a cotangent of one of several
operands (`real_part`; `unbroadcast` and the rules of np.fft do the same): a real value's
cotangent is real everywhere, and a real input's gradient real. The rules of functions
from complex to real (abs, angle, real, imag) read Re(dy) (`real_dy`).

A function h from complex to real is R-linear at z in dz through its `slope` s:
dh = Re(s dz), so its tangent is Re(s t) and its adjoint Re(dy) s: abs has s = conj(z)/|z|
(0 at 0, as JAX), angle s = -i/z, imag s = -i, real s = 1. At a real argument they are
sign(x), 0, 0 and 1 (abs of a real x is |x|; the others are constant in x).
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload

from ..errors import MissingRule


def _complex(t) -> bool:
    """Whether numba type `t` (an array or a number) holds complex numbers."""
    return isinstance(getattr(t, "dtype", t), types.Complex)


def real_dy(dy, x):
    """The cotangent `dy` of a real function of `x`, its meaningful part: Re(dy), complex
    where x is (the cotangent of x is complex), `dy` itself where x is real.

    >>> real_dy(np.array([1.0 + 2.0j]), np.array([3.0j]))
    array([1.+0.j])
    """
    if not np.iscomplexobj(x):
        return dy
    return np.real(dy) + 0j


@overload(real_dy)
def _real_dy_typer(dy, x):
    if not _complex(x):
        return lambda dy, x: dy
    return lambda dy, x: np.real(dy) + 0j


def real_part(g, like):
    """The cotangent `g` made for operand `like`: its real part where `like` is real (an
    operand of a product with a complex value gets a complex one, whose imaginary part
    means nothing), `g` itself where `like` is complex. Generated code of complex values
    applies it to each rule's cotangent of an operand (`passes.reverse`), so a real
    value's cotangent is real wherever it is made, as a `grad_of` block or a user's rule
    sees it.

    >>> real_part(np.array([1.0 + 2.0j]), np.array([3.0])), real_part(2j, 1j)
    (array([1.]), 2j)
    """
    if isinstance(g, (list, tuple)):   # (a list operand's cotangents: made per item)
        return g
    if np.iscomplexobj(g) and not np.iscomplexobj(like):
        return np.real(g)
    return g


@overload(real_part)
def _real_part_typer(g, like):
    if _complex(g) and not _complex(like):
        return lambda g, like: g.real
    return lambda g, like: g


def abs_slope(x):
    """The slope of |x| (see the module's docstring): conj(x)/|x| at a complex x, 0 at 0;
    sign(x) at a real x.

    >>> abs_slope(np.array([3.0 + 4.0j, 0j]))
    array([0.6-0.8j, 0. +0.j ])
    """
    if not np.iscomplexobj(x):
        return np.sign(x)
    if np.ndim(x) == 0:
        return np.conj(x) / abs(x) if x != 0 else 0j
    r = np.abs(x)
    return np.where(r == 0.0, 0j, np.conj(x) / np.where(r == 0.0, 1.0, r))


@overload(abs_slope)
def _abs_slope_typer(x):
    if not _complex(x):
        return lambda x: np.sign(x)
    if isinstance(x, types.Array):
        def arrays(x):
            out = np.empty(x.shape, x.dtype)
            flat, o = x.ravel(), out.reshape(x.size)
            for i in range(x.size):
                r = abs(flat[i])
                o[i] = flat[i].conjugate() / r if r != 0.0 else 0j
            return out
        return arrays
    return lambda x: x.conjugate() / abs(x) if x != 0 else 0j


def angle_slope(x, deg=False):
    """The slope of np.angle(x, deg): -i/x at a complex x (0 at 0), in degrees with
    `deg`; 0 at a real x.

    >>> angle_slope(np.array([2.0]))
    array([0.])
    """
    if not np.iscomplexobj(x):
        return np.zeros(np.shape(x)) if np.ndim(x) else 0.0
    unit = 180.0 / np.pi if deg else 1.0
    if np.ndim(x) == 0:
        return -1j * unit / x if x != 0 else 0j
    return np.where(x == 0, 0j, -1j * unit / np.where(x == 0, 1.0, x))


@overload(angle_slope)
def _angle_slope_typer(x, deg=False):
    if not _complex(x):
        if isinstance(x, types.Array):
            return lambda x, deg=False: np.zeros(x.shape)
        return lambda x, deg=False: 0.0
    if isinstance(x, types.Array):
        def arrays(x, deg=False):
            unit = 180.0 / np.pi if deg else 1.0
            out = np.empty(x.shape, x.dtype)
            flat, o = x.ravel(), out.reshape(x.size)
            for i in range(x.size):
                o[i] = -1j * unit / flat[i] if flat[i] != 0 else 0j
            return out
        return arrays

    def number(x, deg=False):
        unit = 180.0 / np.pi if deg else 1.0
        return -1j * unit / x if x != 0 else 0j
    return number


def imag_slope(x):
    """The slope of np.imag(x): -i at a complex x, 0 at a real one (a number: it
    broadcasts against dy).

    >>> imag_slope(np.array([1j])) == -1j, imag_slope(np.array([1.0]))
    (True, 0.0)
    """
    return -1j if np.iscomplexobj(x) else 0.0


@overload(imag_slope)
def _imag_slope_typer(x):
    if _complex(x):
        return lambda x: -1j
    return lambda x: 0.0


SECOND_ORDER = ("a second derivative through abs, angle or imag of a complex value: "
                "srcgrad differentiates complex values to first order")


def slope_grad(dy, x):
    """The gradient of a slope (`abs_slope`, ...) of x: 0 at a real x (the slopes are
    constant there), MissingRule at a complex one (second order is not supported)."""
    if np.iscomplexobj(x):
        raise MissingRule(SECOND_ORDER)
    return np.zeros(np.shape(x)) if np.ndim(x) else 0.0


@overload(slope_grad)
def _slope_grad_typer(dy, x):
    if _complex(x):
        raise TypingError(f"srcgrad: {SECOND_ORDER}")
    if isinstance(x, types.Array):
        return lambda dy, x: np.zeros(x.shape)
    return lambda dy, x: 0.0



def real_values(x, what):
    """`x`, an argument of `what`, whose gradient rule holds for real values only; a
    MissingRule if it is complex (a tuple's items are checked).

    >>> real_values(2.0, "np.var")
    2.0
    """
    if _holds_complex(x):
        raise MissingRule(f"{what} {REAL_ONLY}")
    return x


def _holds_complex(x) -> bool:
    if isinstance(x, (tuple, list)):
        return any(_holds_complex(item) for item in x)
    dtype = getattr(x, "dtype", None)
    return dtype.kind == "c" if isinstance(dtype, np.dtype) else isinstance(x, complex)


REAL_ONLY = ("of a complex value has no gradient rule: its rule holds for real values "
             "only")


@overload(real_values)
def _real_values_typer(x, what):
    items = x.types if isinstance(x, types.BaseTuple) else (x,)
    if any(_complex(t) or isinstance(t, types.List) and _complex(t.dtype) for t in items):
        name = getattr(what, "literal_value", "this function")
        raise TypingError(f"srcgrad: {name} {REAL_ONLY}")
    return lambda x, what: x

