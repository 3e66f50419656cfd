"""Matrix decompositions and what is computed through them: the records of
np.linalg.cholesky, eigvalsh, pinv and norm, the helpers their rules call (each Python
form beside its numba form), and the keyword forms numba lacks.

cholesky and eigvalsh read one triangle of `a` (the lower, or the upper with
``upper=True`` / ``UPLO='U'``) and see the symmetric matrix it stands for, so their
gradient lives on that triangle: for a gradient s of the symmetric matrix seen, entry
(i, j) of the triangle gets s_ij + s_ji (i != j) and the diagonal s_ii (`triangle_grad`;
JAX, which symmetrises its input, returns the symmetric (s + s^T) / 2 instead; both agree
along symmetric directions). With a = L L^T: L^-1 da L^-T = X + X^T for X = L^-1 dL, so
dL = L Phi(L^-1 da L^-T), Phi the lower triangle with the diagonal halved (L^-1 da L^-T by
two triangular solves: `inverse_sandwich`), and the adjoint
of L is s = L^-T Phi(L^T dL) L^-1 (Murray, 2016), L^-1 from LAPACK's triangular
inverse (`cholesky_adjoint`, which scipy.linalg's Cholesky rules share). With
w = eigvalsh(a) and its eigenvectors V: dw_i = v_i^T da v_i, so s = V diag(dw) V^T; at a
repeated eigenvalue this depends on the eigenvectors LAPACK picked, as JAX's does. pinv
uses Golub and Pereyra's derivative
dY = -Y da Y + Y Y^T da^T (I - a Y) + (I - Y a) da^T Y^T Y, true where the rank is fixed.
A norm's gradient is its `norm_direction` scaled by dy: x / |x|_2 (0 at x = 0, as in JAX),
sign(x) for ord 1, sign(x) (|x| / n)^(p-1) for ord p > 1, the sign at the largest (smallest)
|x_i| for inf (-inf), shared at ties as JAX's max; U V^T (nuclear) and u_1 v_1^T (spectral)
from the thin SVD x = U S V^T, and for a matrix's ord 1 (-1) and inf (-inf) sign(x) in the
column (row) of the largest (smallest) sum of |x|, shared at ties. Forward mode over these
gradients (hvp) differentiates
them once more, the SVD's through Townsend's (2016) derivatives of U and V.
"""


import llvmlite.binding as ll
import numpy as np
import scipy.linalg
from numba import types
from numba.core.errors import TypingError
from numba.extending import get_cython_function_address, overload, register_jitable
from scipy.linalg import solve_triangular

from ..errors import MissingRule
from . import describe, linear, rule, tangent
from .builtin_rules import COMPLEX
from .linalg import _ONE_MATRIX, transposed

NEEDS = ("scipy.linalg",)   # SciPy modules this imports (rules/__init__)

# ---- triangles ----


@register_jitable
def lower_half(m):
    """The lower triangle of `m` with its diagonal halved (Phi).

    >>> lower_half(np.ones((2, 2)))
    array([[0.5, 0. ],
           [1. , 0.5]])
    """
    return np.tril(m) - 0.5 * m * np.eye(m.shape[-1])


def as_lower(m, upper):
    """`m` transposed if `upper`: a factor or triangle read as the lower one.

    >>> as_lower(np.array([[1.0, 2.0], [0.0, 3.0]]), True)
    array([[1., 0.],
           [2., 3.]])
    """
    return transposed(m) if upper else m


@overload(as_lower)
def _as_lower_typer(m, upper):
    if isinstance(upper, types.BooleanLiteral):  # a constant: no copy, the layout known
        return (lambda m, upper: m.T) if upper.literal_value else (lambda m, upper: m)
    return lambda m, upper: np.ascontiguousarray(m.T) if upper else np.ascontiguousarray(m)


@register_jitable
def seen(m, upper):
    """The symmetric matrix that `m`'s lower triangle (upper if `upper`) stands for.

    >>> seen(np.array([[1.0, 9.0], [2.0, 3.0]]), False)
    array([[1., 2.],
           [2., 3.]])
    """
    low = as_lower(m, upper)
    return np.tril(low) + transposed(np.tril(low, -1))


@register_jitable
def triangle_grad(s, upper):
    """The gradient of the triangle read (lower, or upper if `upper`) for `s`, the
    gradient of the symmetric matrix `seen` makes of it.

    >>> triangle_grad(np.array([[1.0, 2.0], [3.0, 4.0]]), False)
    array([[1., 0.],
           [5., 4.]])
    """
    return as_lower(lower_half(s + transposed(s)), upper)


# ---- cholesky ----

_TRTRI = "srcgrad_lapack_dtrtri"
ll.add_symbol(_TRTRI, get_cython_function_address("scipy.linalg.cython_lapack", "dtrtri"))
_dtrtri = types.ExternalFunction(_TRTRI, types.void(*[types.voidptr] * 6))


def triangular_inverse(low):
    """The inverse of the lower triangle of `low` (of each matrix of a stack): LAPACK's
    trtri, a third of the work of a general inverse.

    >>> triangular_inverse(np.array([[2.0, 9.0], [1.0, 1.0]]))
    array([[ 0.5,  0. ],
           [-0.5,  1. ]])
    """
    if np.ndim(low) != 2 or np.result_type(low, 1.0) != np.float64:
        return np.linalg.inv(np.tril(low))
    inv, info = scipy.linalg.lapack.dtrtri(np.tril(low), lower=1)
    if info > 0:
        raise np.linalg.LinAlgError("Singular matrix")
    return np.tril(inv)


@overload(triangular_inverse)
def _triangular_inverse_typer(low):
    if not (isinstance(low, types.Array) and low.ndim == 2):
        raise TypingError(_ONE_MATRIX)

    def impl(low):
        # a C-ordered lower triangle is the upper one LAPACK's column order sees
        out = np.tril(low).astype(np.float64)
        uplo, diag = np.array([ord("U")], np.uint8), np.array([ord("N")], np.uint8)
        n, info = np.array([low.shape[0]], np.int32), np.zeros(1, np.int32)
        _dtrtri(uplo.ctypes, diag.ctypes, n.ctypes, out.ctypes, n.ctypes, info.ctypes)
        if info[0] > 0:
            raise np.linalg.LinAlgError("Singular matrix")
        return out
    return impl


@register_jitable
def cholesky_adjoint(m, low):
    """L^-T Phi(m) L^-1 for the lower factor L = `low`: with m = L^T dL, the gradient of the
    symmetric matrix L L^T for dL, L's (one triangular inverse, used twice).

    >>> cholesky_adjoint(np.eye(2), 2.0 * np.eye(2))
    array([[0.125, 0.   ],
           [0.   , 0.125]])
    """
    inverse = triangular_inverse(low)
    return transposed(inverse) @ lower_half(m) @ inverse


@tangent(cholesky_adjoint)
def cholesky_adjoint_tangent(dt, y, m, low):
    # linear in m; along low, d(L^-1) = -L^-1 dL L^-1 on both sides of Phi(m)
    return (cholesky_adjoint(dt, low),
            -(transposed(np.tril(dt) @ triangular_inverse(low)) @ y +
              y @ np.tril(dt) @ triangular_inverse(low)))


@rule(np.linalg.cholesky)
def cholesky(dy, y, a, upper=False):
    return triangle_grad(cholesky_adjoint(
        transposed(as_lower(y, upper)) @ as_lower(dy, upper), as_lower(y, upper)), upper)


def inverse_sandwich(low, s):
    """L^-1 s L^-T for the lower triangle L of `low` and a symmetric `s` (of each matrix of
    a stack): two triangular solves, as L^-1 (L^-1 s)^T.

    >>> inverse_sandwich(np.array([[2.0, 9.0], [0.0, 1.0]]), np.eye(2))
    array([[0.25, 0.  ],
           [0.  , 1.  ]])
    """
    if np.ndim(low) != 2:
        inverse = np.linalg.inv(np.tril(low))
        return inverse @ s @ transposed(inverse)
    return solve_triangular(low, transposed(solve_triangular(low, s, lower=True)), lower=True)


@overload(inverse_sandwich)
def _inverse_sandwich_typer(low, s):
    if not (isinstance(low, types.Array) and low.ndim == 2):
        raise TypingError(_ONE_MATRIX)
    # (solve_triangular's numba form: rules/scipy_linalg.py, loaded with this module)
    return lambda low, s: solve_triangular(
        low, np.ascontiguousarray(solve_triangular(low, s, 0, True).T), 0, True)


@tangent(np.linalg.cholesky)
def cholesky_tangent(dx, y, a, upper=False):
    return as_lower(as_lower(y, upper) @ lower_half(
        inverse_sandwich(as_lower(y, upper), seen(dx, upper))), upper)


@overload(np.linalg.cholesky)
def _np_cholesky(a, upper=False):
    # numba's np.linalg.cholesky takes the matrix alone: this form serves `upper=`
    if isinstance(upper, (types.Omitted, bool)) or upper is None:
        return None
    return lambda a, upper=False: as_lower(np.linalg.cholesky(seen(a, upper)), upper)


# ---- eigvalsh ----


def eigen_sum(d, a, UPLO="L"):
    """sum_i d_i v_i v_i^T over the eigenvectors v_i of ``eigh(a, UPLO)``: V diag(d) V^T.

    >>> eigen_sum(np.array([1.0, 1.0]), np.diag([2.0, 1.0]))
    array([[1., 0.],
           [0., 1.]])
    """
    v = np.linalg.eigh(a, UPLO)[1]
    return (v * np.expand_dims(d, -2)) @ transposed(v)


@overload(eigen_sum)
def _eigen_sum_typer(d, a, UPLO="L"):
    if not (isinstance(a, types.Array) and a.ndim == 2):
        raise TypingError(_ONE_MATRIX)

    def one(d, a, UPLO="L"):
        v = np.linalg.eigh(seen(a, UPLO == "U"))[1]
        return (v * d) @ v.T
    return one


def eigen_sum_slope(d, a, da, UPLO="L"):
    """The derivative of ``eigen_sum(d, a)`` along `da` (a symmetric change of the
    triangle read): V (K o (V^T da V)) V^T, K_ij = (d_j - d_i) / (w_j - w_i), 0 on the
    diagonal (Daleckii and Krein). Where w_i = w_j (i != j) and d_i != d_j the function
    has no derivative: the entry is nan.

    >>> eigen_sum_slope(np.ones(2), np.diag([2.0, 1.0]), np.ones((2, 2)))
    array([[0., 0.],
           [0., 0.]])
    """
    upper = UPLO == "U"
    w, v = np.linalg.eigh(seen(a, upper))
    gap = np.expand_dims(w, -2) - np.expand_dims(w, -1)
    rise = np.expand_dims(d, -2) - np.expand_dims(d, -1)
    safe = np.where(gap == 0, 1.0, gap)
    k = np.where(gap == 0, np.where(rise == 0, 0.0, np.nan), rise / safe)
    return v @ (k * (transposed(v) @ seen(da, upper) @ v)) @ transposed(v)


@overload(eigen_sum_slope)
def _eigen_sum_slope_typer(d, a, da, UPLO="L"):
    if not (isinstance(a, types.Array) and a.ndim == 2):
        raise TypingError(_ONE_MATRIX)
    return lambda d, a, da, UPLO="L": _eigen_sum_slope_one(d, a, da, UPLO)


@register_jitable
def _eigen_sum_slope_one(d, a, da, UPLO):
    upper = UPLO == "U"
    w, v = np.linalg.eigh(seen(a, upper))
    n = w.shape[0]
    k = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            gap, rise = w[j] - w[i], d[j] - d[i]
            if gap != 0:
                k[i, j] = rise / gap
            elif rise != 0:
                k[i, j] = np.nan
    return v @ (k * (v.T @ seen(da, upper) @ v)) @ v.T


@tangent(eigen_sum)
def eigen_sum_tangent(dx, y, d, a, UPLO="L"):
    return eigen_sum(dx, a, UPLO), eigen_sum_slope(d, a, dx, UPLO)


def eigvalsh_slope(da, a, UPLO="L"):
    """The derivative of ``eigvalsh(a, UPLO)`` along `da`: dw_i = v_i^T da v_i.

    >>> eigvalsh_slope(np.eye(2), np.diag([2.0, 1.0]))
    array([1., 1.])
    """
    upper = UPLO == "U"
    v = np.linalg.eigh(seen(a, upper))[1]
    return np.sum(v * (seen(da, upper) @ v), axis=-2)


@overload(eigvalsh_slope)
def _eigvalsh_slope_typer(da, a, UPLO="L"):
    if not (isinstance(a, types.Array) and a.ndim == 2):
        raise TypingError(_ONE_MATRIX)

    def one(da, a, UPLO="L"):
        upper = UPLO == "U"
        v = np.linalg.eigh(seen(a, upper))[1]
        return np.sum(v * (seen(da, upper) @ v), axis=0)
    return one


@rule(np.linalg.eigvalsh)
def eigvalsh(dy, y, a, UPLO="L"):
    return triangle_grad(eigen_sum(dy, a, UPLO), UPLO == "U")


@tangent(np.linalg.eigvalsh)
def eigvalsh_tangent(dx, y, a, UPLO="L"):
    return eigvalsh_slope(dx, a, UPLO)


@overload(np.linalg.eigvalsh)
def _np_eigvalsh(a, UPLO="L"):
    # numba's np.linalg.eigvalsh takes the matrix alone: this form serves `UPLO=`
    if isinstance(UPLO, (types.Omitted, str)) or UPLO is None:
        return None
    return lambda a, UPLO="L": np.linalg.eigvalsh(seen(a, UPLO == "U"))


# ---- pinv ----


def default_pinv(dy, rcond=None, hermitian=False, rtol=None):
    """`dy`, where pinv was called with its default cutoff and hermitian=False (the
    derivative below holds where no singular value was cut off); else MissingRule.

    >>> default_pinv(1.0)
    1.0
    """
    if rcond is not None or rtol is not None or hermitian:
        raise MissingRule("np.linalg.pinv with rcond=, rtol= or hermitian=True has no "
                          "gradient rule: call it with its defaults")
    return dy


@overload(default_pinv)
def _default_pinv_typer(dy, rcond=None, hermitian=False, rtol=None):
    if not all(isinstance(t, (types.Omitted, types.NoneType)) or t is None
               for t in (rcond, rtol)):
        raise TypingError("srcgrad: np.linalg.pinv with rcond= or rtol= has no gradient "
                          "rule: call it with its defaults")

    def keep(dy, rcond=None, hermitian=False, rtol=None):
        if hermitian:
            raise MissingRule("np.linalg.pinv with hermitian=True has no gradient rule")
        return dy
    return keep


@rule(np.linalg.pinv)
def pinv(dy, y, a, rcond=None, hermitian=False, rtol=None):
    return (-(transposed(y) @ default_pinv(dy, rcond, hermitian, rtol) @ transposed(y)) +
            transposed(default_pinv(dy, rcond, hermitian, rtol)) @ y @ transposed(y) -
            a @ (y @ transposed(default_pinv(dy, rcond, hermitian, rtol)) @ y @ transposed(y)) +
            transposed(y) @ y @ transposed(default_pinv(dy, rcond, hermitian, rtol)) -
            transposed(y) @ y @ transposed(default_pinv(dy, rcond, hermitian, rtol)) @ y @ a)


@tangent(np.linalg.pinv)
def pinv_tangent(dx, y, a, rcond=None, hermitian=False, rtol=None):
    return (-(y @ default_pinv(dx, rcond, hermitian, rtol) @ y) +
            y @ transposed(y) @ transposed(default_pinv(dx, rcond, hermitian, rtol)) -
            y @ transposed(y) @ transposed(default_pinv(dx, rcond, hermitian, rtol)) @ a @ y +
            transposed(default_pinv(dx, rcond, hermitian, rtol)) @ transposed(y) @ y -
            y @ a @ transposed(default_pinv(dx, rcond, hermitian, rtol)) @ transposed(y) @ y)


linear(lower_half, seen, triangle_grad, default_pinv)
linear(as_lower)
describe(lower_half, as_lower, seen, triangle_grad, eigen_sum, eigen_sum_slope,
         eigvalsh_slope, default_pinv, triangular_inverse, cholesky_adjoint, inverse_sandwich,
         pure=True)


# ---- norm ----


def spread(dy, x, axis=None, keepdims=False):
    """`dy`, of a norm's shape, shaped to broadcast against `x`: the reduced axes put back.

    >>> spread(np.ones(2), np.ones((2, 3)), 1).shape
    (2, 1)
    """
    if axis is None or keepdims or np.ndim(dy) == 0:
        return dy
    return np.expand_dims(dy, axis)


@overload(spread)
def _spread_typer(dy, x, axis=None, keepdims=False):
    if not isinstance(dy, types.Array) or not isinstance(axis, types.Integer) or \
            _static_bool(keepdims):
        return lambda dy, x, axis=None, keepdims=False: dy
    return lambda dy, x, axis=None, keepdims=False: np.expand_dims(dy, axis)


def _static_bool(t) -> bool:
    """The value of a numba argument type that must be a constant bool (`keepdims`)."""
    if isinstance(t, types.Omitted):
        return bool(t.value)
    if isinstance(t, types.BooleanLiteral):
        return t.literal_value
    if isinstance(t, bool):
        return t
    # a plain boolean: numba tries again with the literal
    raise TypingError(f"srcgrad: keepdims must be a constant, got {t}")


def _count(hit, axis):
    """How many entries of `hit` are set, per lane along `axis` (kept), or in all."""
    return np.sum(hit, axis=axis, keepdims=axis is not None)


@overload(_count)
def _count_typer(hit, axis):
    if isinstance(axis, types.Integer):
        return lambda hit, axis: np.sum(hit, axis=axis, keepdims=True)
    return lambda hit, axis: np.sum(hit)


@register_jitable
def _vector_direction(x, r, p, axis):
    """d||x||_p / dx along `axis`, r the norm spread against x: sign(x) (|x| / r)^(p-1);
    at a zero norm 0, at ties of the largest (smallest) |x_i| for p = inf (-inf) shared
    out, as in JAX."""
    safe = r + (r == 0)
    if p == 2.0:
        return x / safe
    if p == 1.0:
        return np.sign(x) * 1.0
    if p == np.inf or p == -np.inf:
        hit = (np.abs(x) == r) * 1.0
        return np.sign(x) * hit / _count(hit, axis)
    if p == 0.0:
        return x * 0.0
    # ord < 1: at a zero entry |x_i|^(p - 1) is infinite, and the derivative NaN, as JAX's;
    # ord < 0: a zero entry makes the norm 0 whatever the others are (their derivative 0)
    return np.sign(x) * (np.abs(x) / safe) ** (p - 1.0) * (r != 0)


@register_jitable
def _vector_curvature(x, r, dx, dr, p):
    """The change of `_vector_direction(x, r, p)` for changes dx of x and dr of r."""
    safe = r + (r == 0)
    if p == 2.0:
        return (dx - x * dr / safe) * (r != 0) / safe
    if p != 1.0 and p != 0.0 and p != np.inf and p != -np.inf:
        q = np.abs(x) / safe
        return (p - 1.0) * q ** (p - 2.0) * (dx - np.sign(x) * q * dr) * (r != 0) / safe
    return x * 0.0


def _matrix_axes(x, ord, axis) -> bool:
    """Whether np.linalg.norm(x, ord, axis) is a matrix norm."""
    if axis is None:
        return np.ndim(x) == 2 and ord is not None
    return isinstance(axis, tuple) and len(axis) == 2


def _induced_direction(x, ord, axis):
    """d/dx of the largest (ord 1) or smallest (-1) sum of |x| over a column, or over a
    row (inf, -inf), of the matrices of x over `axis` (the last two where None): sign(x)
    in that column (row), shared evenly among columns (rows) tied for it, as JAX's max.

    >>> _induced_direction(np.array([[1.0, -2.0], [3.0, 2.0]]), 1, None)
    array([[ 0.5, -0.5],
           [ 0.5,  0.5]])
    """
    rows, cols = axis if axis is not None else (-2, -1)
    along, across = (rows, cols) if ord in (1, -1) else (cols, rows)
    sums = np.sum(np.abs(x), axis=along, keepdims=True)
    best = (np.max if ord > 0 else np.min)(sums, axis=across, keepdims=True)
    pick = (sums == best) * 1.0
    return np.sign(x) * (pick / np.sum(pick, axis=across, keepdims=True))


@register_jitable
def _induced_direction_2d(x, ord):
    """`_induced_direction` of one matrix, as loops numba compiles."""
    n, m = x.shape
    columns = ord == 1 or ord == -1
    sums = np.zeros(m if columns else n)
    for i in range(n):
        for j in range(m):
            sums[j if columns else i] += abs(x[i, j])
    best = sums.max() if ord > 0 else sums.min()
    ties = np.sum(sums == best)
    out = np.zeros((n, m))
    for i in range(n):
        for j in range(m):
            if sums[j if columns else i] == best:
                out[i, j] = np.sign(x[i, j]) / ties
    return out


_INDUCED = (1, -1, np.inf, -np.inf)


def _singular_direction(x, top, axis):
    """d(nuclear norm)/dx = U V^T, or d(largest singular value)/dx = u_1 v_1^T if `top`,
    of the matrices of x over `axis` (the last two where None)."""
    if axis is not None:
        moved = np.moveaxis(x, axis, (-2, -1))
        return np.moveaxis(_singular_direction(moved, top, None), (-2, -1), axis)
    u, _, vh = np.linalg.svd(x, full_matrices=False)
    if top:
        return u[..., :, :1] @ vh[..., :1, :]
    return u @ vh


@register_jitable
def _singular_sum_slope_one(d, x, dx):
    """The derivative along dx of U diag(d) V^T, the thin SVD x = U diag(s) V^T: with
    P = U^T dx V, U^T dU and V^T dV follow from P and s (Townsend, 2016), and the parts of
    dU (dV) outside U's (V's) span are (I - U U^T) dx V S^-1 ((I - V V^T) dx^T U S^-1)."""
    u, s, vh = np.linalg.svd(x, False)
    p = u.T @ dx @ vh.T
    k = s.shape[0]
    inner = np.zeros((k, k))
    for i in range(k):
        for j in range(k):
            if i != j:
                total = (d[i] + d[j]) / (s[i] + s[j])
                gap, rise = s[j] - s[i], d[j] - d[i]
                q = rise / gap if gap != 0 else (0.0 if rise == 0 else np.nan)
                inner[i, j] = 0.5 * ((q + total) * p[i, j] + (q - total) * p[j, i])
    scale = d / s
    out = u @ inner @ vh
    out += ((dx @ vh.T - u @ p) * scale) @ vh
    out += u @ (np.expand_dims(scale, 1) * (u.T @ dx - p @ vh))
    return out


def _singular_slope(x, dx, top, axis):
    """The derivative along dx of `_singular_direction(x, top, axis)`."""
    if axis is not None:
        moved, dmoved = np.moveaxis(x, axis, (-2, -1)), np.moveaxis(dx, axis, (-2, -1))
        return np.moveaxis(_singular_slope(moved, dmoved, top, None), (-2, -1), axis)
    x, dx = np.asarray(x, dtype=float), np.broadcast_to(dx, np.shape(x))
    d = np.zeros(min(x.shape[-2:])) if top else np.ones(min(x.shape[-2:]))
    d[0] = 1.0
    out = np.empty(x.shape)
    for i in np.ndindex(x.shape[:-2]):
        out[i] = _singular_sum_slope_one(d, x[i], dx[i])
    return out


def norm_direction(x, n, ord=None, axis=None, keepdims=False):
    """d n / dx for n = ``np.linalg.norm(x, ord, axis, keepdims)``, entry by entry of x.

    >>> norm_direction(np.array([3.0, 4.0]), 5.0)
    array([0.6, 0.8])
    """
    if np.iscomplexobj(x):
        raise MissingRule(f"np.linalg.norm {COMPLEX}")
    x = np.asarray(x, dtype=float)
    r = spread(n, x, axis, keepdims)
    if ord is None or ord == "fro":
        return _vector_direction(x, r, 2.0, axis)
    if _matrix_axes(x, ord, axis):
        if ord in ("nuc", 2):
            return _singular_direction(x, ord == 2, axis)
        if ord in _INDUCED:
            return _induced_direction(x, ord, axis)
        raise MissingRule(f"np.linalg.norm of a matrix with ord={ord!r} has no gradient "
                          f"rule: ord None, 'fro', 'nuc', 2, 1, -1, inf and -inf have")
    return _vector_direction(x, r, float(ord), axis)


def norm_curvature(x, n, dx, dn, ord=None, axis=None, keepdims=False):
    """The change of ``norm_direction(x, n, ...)`` for changes dx of x and dn of n.

    >>> norm_curvature(np.array([3.0, 4.0]), 5.0, np.array([1.0, 0.0]), 0.0)
    array([0.2, 0. ])
    """
    x = np.asarray(x, dtype=float)
    r, dr = spread(n, x, axis, keepdims), spread(dn, x, axis, keepdims)
    if ord is None or ord == "fro":
        return _vector_curvature(x, r, dx, dr, 2.0)
    if _matrix_axes(x, ord, axis):  # U V^T or u_1 v_1^T: n is not read
        if ord in _INDUCED:   # (sign(x) in the columns or rows picked: constant nearby)
            return np.zeros(x.shape)
        return _singular_slope(x, dx, ord == 2, axis)
    return _vector_curvature(x, r, dx, dr, float(ord))


def _string_ord(x, ord, axis) -> str | None:
    """'fro' or 'nuc', where ord is that constant string and x one matrix (no axis: what
    numba's forms here compute); None for an ord that is not a string; else refused."""
    if not isinstance(ord, (types.StringLiteral, types.UnicodeType)):
        return None
    value = getattr(ord, "literal_value", None)
    if value not in ("fro", "nuc") or x.ndim != 2 or not (
            axis is None or isinstance(axis, (types.NoneType, types.Omitted))):
        raise TypingError("srcgrad: np.linalg.norm compiles a string ord as the constant "
                          "'fro' or 'nuc' of one matrix, with no axis")
    return value


def _norm_kind(x, ord, axis):
    """How numba computes a norm of these types: "two" (2-norm or Frobenius),
    "vector" (ord at run time), "matrix" (2 or refused at run time)."""
    if not (axis is None or isinstance(axis, (types.NoneType, types.Omitted, types.Integer))):
        raise TypingError("srcgrad: np.linalg.norm over a tuple of axes compiles with "
                          "numba only for the 2-norm of a matrix: give one axis")
    if isinstance(x.dtype, types.Complex):
        raise TypingError(f"srcgrad: np.linalg.norm {COMPLEX}")
    if ord is None or isinstance(ord, (types.NoneType, types.Omitted)):
        return "two"
    if isinstance(ord, (types.StringLiteral, types.UnicodeType)):
        return "two" if _string_ord(x, ord, axis) == "fro" else "nuclear"
    if not isinstance(ord, (types.Integer, types.Float)):
        raise TypingError(f"srcgrad: np.linalg.norm with ord of type {ord} does not compile")
    matrix = axis is None or isinstance(axis, (types.NoneType, types.Omitted))
    return "matrix" if matrix and x.ndim == 2 else "vector"


@overload(norm_direction)
def _norm_direction_typer(x, n, ord=None, axis=None, keepdims=False):
    kind = _norm_kind(x, ord, axis)
    if kind == "two":
        return lambda x, n, ord=None, axis=None, keepdims=False: _vector_direction(
            x, spread(n, x, axis, keepdims), 2.0, axis)
    if kind == "nuclear":   # U V^T of the thin SVD
        def nuclear(x, n, ord=None, axis=None, keepdims=False):
            u, _, vh = np.linalg.svd(np.asarray(x, dtype=np.float64), False)
            return u @ vh
        return nuclear
    if kind == "matrix":
        def matrix(x, n, ord=None, axis=None, keepdims=False):
            if ord == 1 or ord == -1 or ord == np.inf or ord == -np.inf:
                return _induced_direction_2d(x, ord)
            if ord != 2:
                raise MissingRule("np.linalg.norm of a matrix with this ord has no "
                                  "gradient rule: ord None, 'fro', 'nuc', 2, 1, -1, inf "
                                  "and -inf have")
            u, _, vh = np.linalg.svd(x, False)
            return np.outer(u[:, 0], vh[0])
        return matrix
    return lambda x, n, ord=None, axis=None, keepdims=False: _vector_direction(
        x, spread(n, x, axis, keepdims), float(ord), axis)


@overload(norm_curvature)
def _norm_curvature_typer(x, n, dx, dn, ord=None, axis=None, keepdims=False):
    kind = _norm_kind(x, ord, axis)
    if kind == "nuclear":
        def nuclear(x, n, dx, dn, ord=None, axis=None, keepdims=False):
            return _singular_sum_slope_one(np.ones(min(x.shape)),
                                           np.asarray(x, dtype=np.float64), dx * 1.0)
        return nuclear
    if kind == "matrix":
        def top(x, n, dx, dn, ord=None, axis=None, keepdims=False):
            if ord != 2:   # (1, -1, inf, -inf: sign(x) in the columns or rows picked)
                return np.zeros(x.shape)
            d = np.zeros(min(x.shape))
            d[0] = 1.0
            return _singular_sum_slope_one(d, x, dx)
        return top
    p = 2.0 if kind == "two" else None

    def vector(x, n, dx, dn, ord=None, axis=None, keepdims=False):
        return _vector_curvature(x, spread(n, x, axis, keepdims), dx,
                                 spread(dn, x, axis, keepdims),
                                 p if p is not None else float(ord))
    return vector


@rule(np.linalg.norm)
def norm(dy, y, x, ord=None, axis=None, keepdims=False):
    return spread(dy, x, axis, keepdims) * norm_direction(x, y, ord, axis, keepdims)


@tangent(np.linalg.norm)
def norm_tangent(dx, y, x, ord=None, axis=None, keepdims=False):
    return np.sum(norm_direction(x, y, ord, axis, keepdims) * dx, axis=axis,
                  keepdims=keepdims)


@tangent(norm_direction)
def norm_direction_tangent(dx, y, x, n, ord=None, axis=None, keepdims=False):
    return (norm_curvature(x, n, dx, 0.0, ord, axis, keepdims),
            norm_curvature(x, n, 0.0 * x, dx, ord, axis, keepdims))


@register_jitable
def _vector_norm(x, p, axis, keepdims):
    a = np.abs(x)
    if p == 2.0:
        return np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdims))
    if p == 1.0:
        return np.sum(a, axis=axis, keepdims=keepdims)
    if p == np.inf:
        return np.max(a, axis=axis, keepdims=keepdims)
    if p == -np.inf:
        return np.min(a, axis=axis, keepdims=keepdims)
    if p == 0.0:
        return np.sum((a != 0) * 1.0, axis=axis, keepdims=keepdims)
    return np.sum(a ** p, axis=axis, keepdims=keepdims) ** (1.0 / p)


@overload(np.linalg.norm)
def _np_norm(x, ord=None, axis=None, keepdims=False):
    # numba's np.linalg.norm takes (x, ord): this form serves an axis and keepdims
    if axis is None or isinstance(axis, (types.NoneType, types.Omitted)):
        if not _static_bool(keepdims):
            return None
        raise TypingError("srcgrad: np.linalg.norm with keepdims=True compiles with an "
                          "axis only")
    _norm_kind(x, ord, axis)  # refuses a tuple of axes and a string ord
    return lambda x, ord=None, axis=None, keepdims=False: _vector_norm(
        x, 2.0 if ord is None else float(ord), axis, keepdims)


@overload(np.linalg.norm, prefer_literal=True, target="cpu")
def _np_matrix_norm(x, ord=None, axis=None, keepdims=False):
    # 'fro' and 'nuc' of one matrix, which numba's own refuses when the code runs (this
    # form is typed before it, as the CPU's own, and with the string's value)
    string = _string_ord(x, ord, axis) if isinstance(x, types.Array) else None
    if string is None:
        return None
    if _static_bool(keepdims):
        raise TypingError("srcgrad: np.linalg.norm with keepdims=True compiles with an "
                          "axis only")
    if string == "fro":
        def frobenius(x, ord=None, axis=None, keepdims=False):
            a = np.abs(x)
            return np.sqrt(np.sum(a * a))
        return frobenius
    return lambda x, ord=None, axis=None, keepdims=False: np.sum(
        np.linalg.svd(x * 1.0, False)[1])


linear(spread)
describe(spread, norm_direction, norm_curvature, pure=True)
