"""scipy.linalg's Cholesky family and solve: the records of cholesky, cho_factor,
cho_solve and solve, the helpers their rules call, and their numba forms (numba has none).

scipy.linalg.cholesky(a, lower) is np.linalg.cholesky(a, upper=not lower), with the same
rule (`decompositions`: the gradient lives on the triangle read). cho_factor gives
``(c, lower)``: c holds the factor in that triangle, and in the other one a's own entries
where the installed SciPy leaves them (LAPACK's potrf does; newer SciPy zeroes them; the
numba form here does as SciPy does, `_KEPT`), so the gradient of those entries goes to
a's unchanged (or is 0), and the factor's part is cholesky's. With
y = cho_solve((c, lower), b), solving a y = b for a = L L^T (L the factor, read as
lower): g = a^-1 dy is b's gradient, a gets G = -g y^T, and as da = dL L^T + L dL^T the
factor gets tril((G + G^T) L) = -tril(g (L^T y)^T + y (L^T g)^T) (transposed for an upper
factor); c's other triangle is not read (gradient 0). The flag `lower` has none.

scipy.linalg.solve(a, b, ...) solves m y = b for the matrix m its `assume_a` makes of a
(`system`): a itself (None, 'gen'; SciPy's own check of a's structure picks a solver, not
the solution), the symmetric matrix of one triangle ('sym', 'her', 'pos': the lower with
``lower=True``), a triangle, or the diagonal; transposed with ``transposed=True``. Then
with g = m^-T dy, b gets g and a gets the entries of -g y^T that m is made of
(`system_grad`, the adjoint of the linear map `system`). 'tridiagonal' and 'banded' are
refused, as are the keywords that let SciPy write into an argument (overwrite_a,
overwrite_b) and stacks of matrices in cho_solve and solve.
"""

import numpy as np
import scipy.linalg
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable
from scipy.linalg import solve_triangular

from ..errors import MissingRule
from . import describe, linear, real_only, rule, tangent
from .decompositions import (
    as_lower,
    cholesky_adjoint,
    inverse_sandwich,
    lower_half,
    seen,
    triangle_grad,
)
from .factorizations import results
from .linalg import columns
from .linalg import transposed as swapped
from .shapes import _absent

NEEDS = ("scipy.linalg",)   # SciPy modules this imports (rules/__init__)


def _overwrites(keywords) -> str | None:
    for name in ("overwrite_a", "overwrite_b"):
        if keywords.get(name):
            return f"{name}=True lets SciPy write into an argument: pass a copy"
    return None


def _one_matrix(a) -> None:
    if not (isinstance(a, types.Array) and a.ndim == 2):
        raise TypingError("srcgrad: numba takes one matrix here, not a stack of them")


# ---- cholesky ----


@rule(scipy.linalg.cholesky, refuse=_overwrites)
def cholesky(dy, y, a, lower=False, overwrite_a=False, check_finite=True):
    return triangle_grad(cholesky_adjoint(
        swapped(as_lower(y, not lower)) @ as_lower(dy, not lower), as_lower(y, not lower)),
        not lower)


@tangent(scipy.linalg.cholesky)
def cholesky_tangent(dx, y, a, lower=False, overwrite_a=False, check_finite=True):
    return as_lower(as_lower(y, not lower) @ lower_half(
        inverse_sandwich(as_lower(y, not lower), seen(dx, not lower))), not lower)


@register_jitable
def _factor(a, lower):
    if a.shape[0] != a.shape[1]:
        raise ValueError("scipy.linalg: the matrix to factor must be square")
    m = np.asarray(a, dtype=np.float64)
    return np.ascontiguousarray(as_lower(np.linalg.cholesky(seen(m, not lower)), not lower))


@overload(scipy.linalg.cholesky)
def _cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    _one_matrix(a)
    return lambda a, lower=False, overwrite_a=False, check_finite=True: _factor(a, lower)


# ---- cho_factor ----


# whether this SciPy's cho_factor leaves a's own entries in c's other triangle (LAPACK's
# potrf does, and older SciPy passes them on; newer SciPy zeroes them): read off SciPy
_KEPT = bool(scipy.linalg.cho_factor(np.array([[4.0, 2.0], [2.0, 5.0]]), lower=True)[0][0, 1]
             == 2.0)


@register_jitable
def other_triangle(m, lower):
    """The entries of `m` strictly outside the triangle a factor holds (the lower one if
    `lower`), the others 0; all 0 where this SciPy's cho_factor zeroes that triangle.

    >>> float(other_triangle(np.array([[1.0, 2.0], [3.0, 4.0]]), True)[1, 0])
    0.0
    """
    if not _KEPT:
        return np.zeros_like(m)
    return np.triu(m, 1) if lower else np.tril(m, -1)


@register_jitable
def factor_of(c, lower):
    """The factor that cho_factor's ``(c, lower)`` holds, as a lower triangular matrix.

    >>> factor_of(np.array([[2.0, 1.0], [9.0, 3.0]]), False)
    array([[2., 0.],
           [1., 3.]])
    """
    return np.tril(as_lower(c, not lower))


@rule(scipy.linalg.cho_factor, results=2, refuse=_overwrites)
def cho_factor(dy, y, a, lower=False, overwrite_a=False, check_finite=True):
    return triangle_grad(cholesky_adjoint(
        swapped(factor_of(y[0], lower)) @ as_lower(dy[0], not lower), factor_of(y[0], lower)),
        not lower) + other_triangle(dy[0], lower)


@tangent(scipy.linalg.cho_factor)
def cho_factor_tangent(dx, y, a, lower=False, overwrite_a=False, check_finite=True):
    return results(as_lower(factor_of(y[0], lower) @ lower_half(
        inverse_sandwich(factor_of(y[0], lower), seen(dx, not lower))), not lower) +
        other_triangle(dx, lower), y[1])


@overload(scipy.linalg.cho_factor)
def _cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    _one_matrix(a)

    def impl(a, lower=False, overwrite_a=False, check_finite=True):
        return _factor(a, lower) + other_triangle(np.asarray(a, dtype=np.float64), lower), lower
    return impl


# ---- cho_solve ----


@rule(scipy.linalg.cho_solve, refuse=_overwrites)
def cho_solve(dy, y, c_and_lower, b, overwrite_b=False, check_finite=True):
    return ((as_lower(-np.tril(
        columns(scipy.linalg.cho_solve(c_and_lower, dy), c_and_lower[0],
                "scipy.linalg.cho_solve") @
        swapped(swapped(factor_of(c_and_lower[0], c_and_lower[1])) @
                columns(y, c_and_lower[0], "scipy.linalg.cho_solve")) +
        columns(y, c_and_lower[0], "scipy.linalg.cho_solve") @
        swapped(swapped(factor_of(c_and_lower[0], c_and_lower[1])) @
                columns(scipy.linalg.cho_solve(c_and_lower, dy), c_and_lower[0],
                        "scipy.linalg.cho_solve"))),
        not c_and_lower[1]), 0.0),
        scipy.linalg.cho_solve(c_and_lower, dy))


@tangent(scipy.linalg.cho_solve)
def cho_solve_tangent(dx, y, c_and_lower, b, overwrite_b=False, check_finite=True):
    return (-scipy.linalg.cho_solve(c_and_lower, np.reshape(
        factor_of(dx[0], c_and_lower[1]) @ (
            swapped(factor_of(c_and_lower[0], c_and_lower[1])) @
            columns(y, c_and_lower[0], "scipy.linalg.cho_solve")) +
        factor_of(c_and_lower[0], c_and_lower[1]) @ (
            swapped(factor_of(dx[0], c_and_lower[1])) @
            columns(y, c_and_lower[0], "scipy.linalg.cho_solve")),
        np.shape(y))),
        scipy.linalg.cho_solve(c_and_lower, dx))


@overload(scipy.linalg.cho_solve)
def _cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    if not isinstance(c_and_lower, types.BaseTuple):
        return None
    _one_matrix(c_and_lower[0])

    def impl(c_and_lower, b, overwrite_b=False, check_finite=True):
        c, lower = c_and_lower
        if lower:
            return solve_triangular(c, solve_triangular(c, b, 0, True), 1, True)
        return solve_triangular(c, solve_triangular(c, b, 1, False), 0, False)
    return impl


linear(other_triangle)
linear(factor_of, positions=(0,))
describe(other_triangle, factor_of, pure=True)


# ---- solve ----

_KINDS = {None: "general", "gen": "general", "general": "general",
          "sym": "symmetric", "symmetric": "symmetric", "her": "symmetric",
          "hermitian": "symmetric", "pos": "symmetric", "positive definite": "symmetric",
          "upper triangular": "upper", "lower triangular": "lower", "diagonal": "diagonal"}


def _kind(assume_a) -> str:
    if not isinstance(assume_a, (str, type(None))) or assume_a not in _KINDS:
        raise MissingRule(f"scipy.linalg.solve with assume_a={assume_a!r} has no gradient "
                          f"rule: use one of {sorted(k for k in _KINDS if k)} or None")
    return _KINDS[assume_a]


def _kind_typed(assume_a) -> str:
    if _absent(assume_a):
        return "general"
    if not isinstance(assume_a, types.StringLiteral):
        raise TypingError("srcgrad: scipy.linalg.solve compiles with assume_a a constant")
    try:
        return _kind(assume_a.literal_value)
    except MissingRule as exc:
        raise TypingError(f"srcgrad: {exc.message}") from None


def system(a, assume_a=None, lower=False, transpose=False):
    """The matrix m that scipy.linalg.solve(a, b, lower, assume_a=assume_a,
    transposed=transpose) solves m y = b with: a, or what it reads of a.

    >>> system(np.array([[1.0, 2.0], [3.0, 4.0]]), "sym", lower=True)
    array([[1., 3.],
           [3., 4.]])
    """
    kind = _kind(assume_a)
    m = (a if kind == "general" else seen(a, not lower) if kind == "symmetric" else
         np.triu(a) if kind == "upper" else np.tril(a) if kind == "lower" else
         a * np.eye(np.shape(a)[-1]))
    return swapped(m) if transpose else m


def system_grad(s, assume_a=None, lower=False, transpose=False):
    """The gradient of a for `s`, the gradient of ``system(a, assume_a, lower,
    transpose)`` (the adjoint of that linear map).

    >>> system_grad(np.array([[1.0, 2.0], [3.0, 4.0]]), "sym", lower=True)
    array([[1., 0.],
           [5., 4.]])
    """
    kind = _kind(assume_a)
    s = swapped(s) if transpose else s
    return (s if kind == "general" else triangle_grad(s, not lower) if kind == "symmetric"
            else np.triu(s) if kind == "upper" else np.tril(s) if kind == "lower" else
            s * np.eye(np.shape(s)[-1]))


def _system_form(kind):
    def general(m, lower):
        return m

    def symmetric(m, lower):
        return seen(m, not lower)

    def upper(m, lower):
        return np.triu(m)

    def lower_(m, lower):
        return np.tril(m)

    def diagonal(m, lower):
        return np.diag(np.diag(m))

    return register_jitable(dict(general=general, symmetric=symmetric, upper=upper,
                                 lower=lower_, diagonal=diagonal)[kind])


@overload(system)
def _system_typer(a, assume_a=None, lower=False, transpose=False):
    _one_matrix(a)
    form = _system_form(_kind_typed(assume_a))

    def impl(a, assume_a=None, lower=False, transpose=False):
        m = np.ascontiguousarray(form(a, lower))
        return np.ascontiguousarray(m.T) if transpose else m
    return impl


@overload(system_grad)
def _system_grad_typer(s, assume_a=None, lower=False, transpose=False):
    _one_matrix(s)
    kind = _kind_typed(assume_a)
    form = (register_jitable(lambda m, lower: triangle_grad(m, not lower))
            if kind == "symmetric" else _system_form(kind))

    def impl(s, assume_a=None, lower=False, transpose=False):
        m = np.ascontiguousarray(s.T) if transpose else np.ascontiguousarray(s)
        return np.ascontiguousarray(form(m, lower))
    return impl


@rule(scipy.linalg.solve, refuse=_overwrites)
def solve(dy, y, a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
          assume_a=None, transposed=False):
    return (system_grad(-(columns(np.linalg.solve(
        swapped(system(a, assume_a, lower, transposed)), dy), a, "scipy.linalg.solve") @
        swapped(columns(y, a, "scipy.linalg.solve"))), assume_a, lower, transposed),
        np.linalg.solve(swapped(system(a, assume_a, lower, transposed)), dy))


@tangent(scipy.linalg.solve)
def solve_tangent(dx, y, a, b, lower=False, overwrite_a=False, overwrite_b=False,
                  check_finite=True, assume_a=None, transposed=False):
    return (-np.reshape(np.linalg.solve(system(a, assume_a, lower, transposed), system(
        dx, assume_a, lower, transposed) @ columns(y, a, "scipy.linalg.solve")), np.shape(y)),
        np.linalg.solve(system(a, assume_a, lower, transposed), dx))


@overload(scipy.linalg.solve)
def _solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
           assume_a=None, transposed=False):
    _one_matrix(a)

    def impl(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True,
             assume_a=None, transposed=False):
        return np.linalg.solve(system(np.asarray(a, dtype=np.float64), assume_a, lower,
                                      transposed), b)
    return impl


linear(system, system_grad)
describe(system, system_grad, pure=True)
# (Hermitian factors need conjugates these rules leave out: rules/complex_numbers.py)
real_only(scipy.linalg.cholesky, scipy.linalg.cho_factor, scipy.linalg.cho_solve,
          scipy.linalg.solve)
# (both arguments' gradients solve with dy: once, `inline.shared`)
describe(scipy.linalg.cho_solve, scipy.linalg.solve, once=True)
