"""scipy.linalg, more gaps to JAX: the structured matrices (toeplitz, circulant, hankel,
block_diag, companion, convolution_matrix), pinv, pinvh, eig and eigvals, each
written (the records' `expanded`) as the operations with rules that compute it, so
`normalize` writes every call as them and their rules differentiate it, compiled as
theirs are.

The structured matrices gather their entries from the vectors given: toeplitz(c, r)[i, j]
is c[i - j] on and below the diagonal and r[j - i] above it (of concatenate((c[::-1],
r[1:])) the entry m - 1 - i + j, r = c by default), hankel(c, r)[i, j] is c[i + j] or
r[i + j - m + 1] (of concatenate((c, r[1:])) the entry i + j, r = zeros by default),
circulant(c)[i, j] is c[(i - j) mod n], companion(a) has -a[1:] / a[0] as its first row
and ones below the diagonal, and convolution_matrix(a, n)[i, j] is a[i - j] (0 outside
a): its rows are those of the full convolution, from min(m, n) - 1 ('valid', max(m, n) -
min(m, n) + 1 rows) or (min(m, n) - 1) // 2 ('same', max(m, n) rows). Each is an index
into one vector: a SciPy that makes stacks of matrices of stacks of vectors (1.14 on) is
refused such a stack when the call runs (the vector's reshape fails), and where SciPy
flattens them (older), so does the call here. block_diag(a0, ..., a7) is the sum of its
blocks padded with zeros to their places (each np.atleast_2d, as SciPy's), of up to eight
blocks (more are not written, and have no rule).

pinv is NumPy's (the same SVD; SciPy's default cut-off of small singular values
is max(m, n) eps times the largest, NumPy's 1e-15 times it: they differ only on a matrix
that is singular to rounding, where no gradient exists); pinvh is NumPy's pinv of the
symmetric matrix read from a's lower (lower=True) or upper triangle, as SciPy reads it.
A cut-off given (atol=, rtol=) and return_rank=True are refused (lstsq is not written as
NumPy's: its residues of a vector b are a number, NumPy's a vector). eig's and
eigvals's generalized problem (b=), left eigenvectors and homogeneous eigenvalues are
refused; eig's right eigenvectors are LAPACK's geev's, as NumPy's (unit length, their
phase LAPACK's choice in both).

lu(a) is lu_factor's factors unpacked (its rule differentiates them: rules/scipy_lu.py):
with lu, piv = lu_factor(a), L = tril(lu, -1) + I, U = triu(lu) and P the permutation
with a = P L U (P's columns those of I in the order `pivoted_rows(piv)`, constant: no
gradient); permute_l=True gives (P L, U). Square matrices only, as lu_factor's rule;
p_indices=True is refused. expm_frechet(A, E) is the upper-right block of expm([[A, E],
[0, A]]) (with expm(A) unless compute_expm=False), expm's rule differentiating it.

solve_sylvester(a, b, q) = x with a x + x b = q: its adjoint is one more Sylvester solve,
g = solve_sylvester(a^T, b^T, dy), giving q g, a -g x^T and b -x^T g; its tangent is
solve_sylvester(a, b, dq - da x - x db). sqrtm(a) = y with y y = a moves along da by the
solution of y dy + dy y = da (`runtime/scipy_gaps2.py`), its adjoint by that of y^T:
real roots only (a real matrix with a negative or complex eigenvalue has a complex root,
refused when the gradient runs). Both real only; compiled code calls SciPy's
solve_sylvester and sqrtm in object mode.
"""

import warnings

import numpy as np
import scipy.linalg

from ..errors import RuleError
from ..runtime.scipy_gaps2 import pivoted_rows, sqrtm_direction
from . import NOT_CONSTANT, describe, nondifferentiable, real_only, rule, tangent

NEEDS = ("scipy.linalg",)   # SciPy modules this imports (rules/__init__)


def _stacks() -> bool:
    """Whether this SciPy's toeplitz makes a stack of matrices of a stack of vectors (1.14
    on) rather than flattening it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return scipy.linalg.toeplitz(np.ones((2, 2))).ndim == 3


# one vector: SciPy from 1.14 makes a stack of matrices of a stack of vectors, which the
# reshape refuses when the call runs; an older one flattens them, as np.ravel does
_VECTOR = "np.reshape({0}, (np.shape({0})[-1],))" if _stacks() else "np.ravel({0})"


def _literal(name, option, value):
    if value is NOT_CONSTANT:
        raise RuleError(f"scipy.linalg.{name}'s {option}= is differentiated as a literal")
    return value


def _refused(name, given, options, why):
    for option in options:
        if given.get(option) is not None and given.get(option) is not False:
            raise RuleError(f"scipy.linalg.{name}(..., {option}=) is not differentiated: "
                            f"{why}")


def _vector(name):
    return _VECTOR.format(name)


def _toeplitz(given):
    c = _vector("c")
    r = _vector("r") if "r" in given else c
    return (f"np.concatenate(({c}[::-1], {r}[1:]))[len({c}) - 1 - "
            f"np.arange(len({c}))[:, None] + np.arange(len({r}))[None, :]]")


def _hankel(given):
    c = _vector("c")
    if "r" not in given:
        return (f"np.concatenate(({c}, 0.0 * {c}[1:]))["
                f"np.arange(len({c}))[:, None] + np.arange(len({c}))[None, :]]")
    r = _vector("r")
    return (f"np.concatenate(({c}, {r}[1:]))["
            f"np.arange(len({c}))[:, None] + np.arange(len({r}))[None, :]]")


def _circulant(given):
    c = _vector("c")
    return (f"{c}[(np.arange(len({c}))[:, None] - np.arange(len({c}))[None, :]) % "
            f"len({c})]")


def _companion(given):
    a = _vector("a")
    return (f"np.where(np.arange(len({a}) - 1)[:, None] == 0, -{a}[1:] / {a}[0], "
            f"np.eye(len({a}) - 1, len({a}) - 1, -1))")


def _convolution_matrix(given):
    mode = _literal("convolution_matrix", "mode", given.get("mode", "full"))
    a = _vector("a")
    m = f"len({a})"
    if mode == "full":
        first, rows = "0", f"{m} + n - 1"
    elif mode == "valid":
        first, rows = f"min({m}, n) - 1", f"max({m}, n) - min({m}, n) + 1"
    elif mode == "same":
        first, rows = f"(min({m}, n) - 1) // 2", f"max({m}, n)"
    else:
        raise RuleError("scipy.linalg.convolution_matrix's mode= is differentiated as the "
                        "literal 'full', 'valid' or 'same'")
    gap = f"(np.arange({first}, {first} + {rows})[:, None] - np.arange(n)[None, :])"
    return (f"np.where(({gap} >= 0) & ({gap} < {m}), "
            f"{a}[np.clip({gap}, 0, {m} - 1)], 0.0)")


_BLOCKS = tuple(f"a{k}" for k in range(8))


def _block_diag_signature(a0=None, a1=None, a2=None, a3=None, a4=None, a5=None, a6=None,
                          a7=None):
    """block_diag's signature, which normalize binds a call to: up to eight blocks (a
    call of more, or of a starred list, is not written, and has no rule)."""


def _block_diag(given):
    names = [k for k in _BLOCKS if k in given]
    if not names:
        return None
    shapes = [f"np.shape(np.atleast_2d({k}))" for k in names]
    terms = []
    for i, k in enumerate(names):
        before = [shapes[j] for j in range(i)]
        after = [shapes[j] for j in range(i + 1, len(names))]
        pads = []
        for axis in (0, 1):
            pads.append(tuple(" + ".join(f"{s}[{axis}]" for s in side) or "0"
                              for side in (before, after)))
        rows, cols = pads
        terms.append(f"np.pad(np.atleast_2d({k}), (({rows[0]}, {rows[1]}), "
                     f"({cols[0]}, {cols[1]})))")
    return " + ".join(terms)


def _pinv(given):
    _refused("pinv", given, ("atol", "rtol", "return_rank", "cond", "rcond"),
             "a cut-off of the singular values and the rank have no rule")
    return "np.linalg.pinv(a)"


def _pinvh(given):
    _refused("pinvh", given, ("atol", "rtol", "return_rank", "cond", "rcond"),
             "a cut-off of the eigenvalues and the rank have no rule")
    lower = _literal("pinvh", "lower", given.get("lower", True))
    read = "np.tril(a)" if lower else "np.triu(a)"
    return f"np.linalg.pinv({read} + np.transpose({read}) - np.diag(np.diag(a)))"


_GENERALIZED = ("b", "left", "homogeneous_eigvals")


def _eig(given):
    _refused("eig", given, _GENERALIZED, "the generalized problem, left eigenvectors and "
             "homogeneous eigenvalues have no rule")
    if _literal("eig", "right", given.get("right", True)) is not True:
        return "np.linalg.eigvals(a)"
    return "np.linalg.eig(a)"


def _eigvals(given):
    _refused("eigvals", given, _GENERALIZED, "the generalized problem and homogeneous "
             "eigenvalues have no rule")
    return "np.linalg.eigvals(a)"


_EXPANDED = [
    ("toeplitz", _toeplitz, None),
    ("hankel", _hankel, None),
    ("circulant", _circulant, None),
    ("companion", _companion, None),
    ("convolution_matrix", _convolution_matrix, None),
    ("block_diag", _block_diag, _block_diag_signature),
    ("pinv", _pinv, None),
    ("pinvh", _pinvh, None),
    ("eig", _eig, None),
    ("eigvals", _eigvals, None),
]

for _name, _how, _signature in _EXPANDED:
    if (_fun := getattr(scipy.linalg, _name, None)) is not None:
        describe(_fun, expanded=_how, signature=_signature)


# ---- expm_frechet: expm of the block matrix [[A, E], [0, A]] ----


def _expm_frechet(given):
    compute = _literal("expm_frechet", "compute_expm", given.get("compute_expm", True))
    if _literal("expm_frechet", "method", given.get("method")) not in (None, "SPS", "blockEnlarge"):
        return None
    frechet = ("scipy.linalg.expm(np.concatenate((np.concatenate((A, E), axis=1), "
               "np.concatenate((0.0 * A, A), axis=1))))[:len(A), len(A):]")
    helpers = {"scipy": scipy}
    if compute is False:
        return frechet, helpers
    return f"(scipy.linalg.expm(A), {frechet})", helpers


describe(scipy.linalg.expm_frechet, expanded=_expm_frechet)


# ---- solve_sylvester and sqrtm: their derivatives solve Sylvester equations ----


@rule(scipy.linalg.solve_sylvester)
def solve_sylvester_rule(dy, y, a, b, q):
    return (-(scipy.linalg.solve_sylvester(np.transpose(a), np.transpose(b), dy) @
              np.transpose(y)),
            -(np.transpose(y) @
              scipy.linalg.solve_sylvester(np.transpose(a), np.transpose(b), dy)),
            scipy.linalg.solve_sylvester(np.transpose(a), np.transpose(b), dy))


@tangent(scipy.linalg.solve_sylvester)
def solve_sylvester_tangent(dx, y, a, b, q):
    return (-scipy.linalg.solve_sylvester(a, b, dx @ y),
            -scipy.linalg.solve_sylvester(a, b, y @ dx),
            scipy.linalg.solve_sylvester(a, b, dx))


def _sqrtm_refused(keywords) -> str | None:
    if keywords.get("disp", True) is not True:
        return "disp=False (the root and an error estimate) is not differentiated: disp=True"
    return None


@rule(scipy.linalg.sqrtm, refuse=_sqrtm_refused)
def sqrtm_rule(dy, y, A):
    return sqrtm_direction(np.transpose(y), dy)


@tangent(scipy.linalg.sqrtm)
def sqrtm_tangent(dx, y, A):
    return sqrtm_direction(y, dx)


describe(scipy.linalg.solve_sylvester, once=True)
describe(sqrtm_direction, pure=True)
real_only(scipy.linalg.solve_sylvester, scipy.linalg.sqrtm)


# ---- lu: lu_factor's factors, unpacked ----


def _lu(given):
    _refused("lu", given, ("p_indices",), "the permutation as indices: P is differentiated "
             "as a matrix")
    factor = "scipy.linalg.lu_factor(a)"
    lower = f"(np.tril({factor}[0], -1) + np.eye(len(a)))"
    upper = f"np.triu({factor}[0])"
    permutation = f"np.eye(len(a))[:, pivoted_rows({factor}[1])]"
    helpers = {"scipy": scipy, "pivoted_rows": pivoted_rows}
    if _literal("lu", "permute_l", given.get("permute_l", False)) is True:
        return f"({permutation} @ {lower}, {upper})", helpers
    return f"({permutation}, {lower}, {upper})", helpers


describe(scipy.linalg.lu, expanded=_lu)
nondifferentiable(pivoted_rows)   # (of lu_factor's integer pivots)
