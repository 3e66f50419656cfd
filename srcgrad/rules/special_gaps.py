"""scipy.special, the gaps to what JAX and autograd differentiate (numba forms in
`runtime/special_gaps.py`): hyp1f1, hyp2f1 and yn in their argument x, sici and fresnel
(two values each), and factorial and comb of exact=False, written as the gamma and
binomial functions they compute.

Derivatives: d/dx hyp1f1(a, b, x) = a / b hyp1f1(a + 1, b + 1, x); d/dz hyp2f1(a, b, c, z)
= a b / c hyp2f1(a + 1, b + 1, c + 1, z) (both holomorphic: they hold for a complex
argument, whose numba form is not here); their parameters a, b, c are refused, their
derivatives having no closed form. yn' = (y_(n-1) - y_(n+1)) / 2, as yv's, its order n
refused. sici(x) = (Si, Ci): Si' = sin(x) / x (sinc, 1 at 0), Ci' = cos(x) / x; fresnel(x)
= (S, C): S' = sin(pi x^2 / 2), C' = cos(pi x^2 / 2). factorial(n) is gamma(n + 1), 0 for
n < 0 (extend='complex': gamma(n + 1) there too); comb(N, k) is binom(N, k) where 0 <= k
<= N, else 0, and with repetition=True comb(N + k - 1, k). Their exact=True gives
integers (Python's), with no gradient: refused at the call's line.
"""

import numpy as np
from scipy import special

from ..errors import RuleError
from ..runtime import (
    special_gaps,  # noqa: F401  (scipy.special's numba forms)
    unbroadcast,
)
from . import NOT_CONSTANT, describe, rule, tangent
from .factorizations import results

NEEDS = ("scipy.special",)   # SciPy modules this imports (rules/__init__)

_ORDER = "an order, with no gradient"
_PARAMETER = "a parameter, whose derivative has no closed form"


@rule(special.hyp1f1, elementwise=True, no_gradient={"a": _PARAMETER, "b": _PARAMETER})
def hyp1f1(dy, y, a, b, x):
    return None, None, unbroadcast(dy * a / b * special.hyp1f1(a + 1.0, b + 1.0, x), x)


@rule(special.hyp2f1, elementwise=True,
      no_gradient={"a": _PARAMETER, "b": _PARAMETER, "c": _PARAMETER})
def hyp2f1(dy, y, a, b, c, z):
    return None, None, None, unbroadcast(
        dy * a * b / c * special.hyp2f1(a + 1.0, b + 1.0, c + 1.0, z), z)


@rule(special.yn, elementwise=True, no_gradient={"n": _ORDER})
def yn(dy, y, n, x):
    return None, unbroadcast(dy * 0.5 * (special.yn(n - 1, x) - special.yn(n + 1, x)), x)


@rule(special.sici, results=2)
def sici(dy, y, x):
    return dy[0] * np.sinc(x / np.pi) + dy[1] * np.cos(x) / x


@tangent(special.sici)
def sici_tangent(dx, y, x):
    return results(dx * np.sinc(x / np.pi), dx * np.cos(x) / x)


@rule(special.fresnel, results=2)
def fresnel(dy, y, x):
    return dy[0] * np.sin(0.5 * np.pi * x * x) + dy[1] * np.cos(0.5 * np.pi * x * x)


@tangent(special.fresnel)
def fresnel_tangent(dx, y, x):
    return results(dx * np.sin(0.5 * np.pi * x * x), dx * np.cos(0.5 * np.pi * x * x))


# ---- factorial and comb: the functions they compute (each record's `expanded`) ----


def _inexact(name, given):
    if given.get("exact", False) is not False:
        raise RuleError(f"scipy.special.{name}(..., exact=True) gives integers, with no "
                        f"gradient: differentiate exact=False (floats)")


def _factorial(given):
    _inexact("factorial", given)
    extend = given.get("extend", "zero")
    if extend == "complex":
        return "special.gamma(n + 1.0)", {"special": special}
    if extend != "zero":
        raise RuleError("scipy.special.factorial's extend= is differentiated as the literal "
                        "'zero' or 'complex'")
    return "np.where(n < 0, 0.0, special.gamma(n + 1.0))", {"special": special}


def _comb(given):
    _inexact("comb", given)
    # (legacy=, of SciPy < 1.14, changes exact=True's results only)
    repetition = given.get("repetition", False)
    if repetition is NOT_CONSTANT:
        raise RuleError("scipy.special.comb's repetition= is differentiated as a literal")
    top = "N + k - 1.0" if repetition else "N"
    return (f"np.where((k >= 0) & (k <= {top}) & ({top} >= 0), special.binom({top}, k), 0.0)",
            {"special": special})


describe(special.factorial, expanded=_factorial)
describe(special.comb, expanded=_comb)
