"""scipy.linalg's inv, det, eigvalsh, svdvals, norm and qr, and scipy.integrate.trapezoid:
each computes what a NumPy function with a record computes, so `normalize` writes every
call as that function (the records' `expanded`) and its rule differentiates it, compiled
as NumPy's is.

What the two spellings compute differently is refused at the call's line, not
approximated: inv's assume_a= other than a general matrix (SciPy reads one triangle),
eigvalsh's and eigh's generalized problem (b=) and subsets, eigh's and svd's vectors (their
signs are LAPACK's choice, which SciPy's and NumPy's drivers may make differently:
differentiate np.linalg.eigh or np.linalg.svd, whose vectors are what the gradient is of),
qr's pivoting= and its modes other than 'economic' (NumPy's 'reduced', which has a rule;
the default 'full' is refused, its Q's further columns having none). Options that change
only how SciPy computes (overwrite_a=, check_finite=, driver=, lapack_driver=, lwork=) are
read as their defaults:
the call written as NumPy's neither overwrites nor checks (a non-finite entry gives NaN
or NumPy's LinAlgError where SciPy raises ValueError).
"""

import numpy as np
import scipy.integrate
import scipy.linalg

from ..errors import RuleError
from . import describe
from .scipy_linalg_gaps2 import _literal, _refused

NEEDS = ("scipy.integrate", "scipy.linalg")   # SciPy modules this imports (rules/__init__)


def _inv(given):
    assume = _literal("inv", "assume_a", given.get("assume_a"))
    if assume not in (None, "general", "gen"):
        raise RuleError(f"scipy.linalg.inv(..., assume_a={assume!r}) is not differentiated "
                        f"(SciPy reads one triangle of the matrix): differentiate a "
                        f"general matrix's inverse")
    return "np.linalg.inv(a)"


_GENERALIZED = ("b", "subset_by_index", "subset_by_value", "eigvals", "turbo")


def _eigvalsh(given):
    _refused("eigvalsh", given, _GENERALIZED,
             "the generalized problem and subsets of eigenvalues have no rule")
    lower = _literal("eigvalsh", "lower", given.get("lower", True))
    return f"np.linalg.eigvalsh(a, UPLO={'L' if lower else 'U'!r})"


def _eigh(given):
    _refused("eigh", given, _GENERALIZED,
             "the generalized problem and subsets of eigenvalues have no rule")
    if _literal("eigh", "eigvals_only", given.get("eigvals_only", False)) is not True:
        raise RuleError("scipy.linalg.eigh's eigenvectors are not differentiated (their "
                        "signs are LAPACK's choice, which SciPy's and NumPy's drivers may "
                        "make differently): differentiate np.linalg.eigh, or "
                        "eigvals_only=True")
    lower = _literal("eigh", "lower", given.get("lower", True))
    return f"np.linalg.eigvalsh(a, UPLO={'L' if lower else 'U'!r})"


def _svd(given):
    if _literal("svd", "compute_uv", given.get("compute_uv", True)) is not False:
        raise RuleError("scipy.linalg.svd's singular vectors are not differentiated (their "
                        "signs are LAPACK's choice, which SciPy's and NumPy's drivers may "
                        "make differently): differentiate np.linalg.svd, or "
                        "compute_uv=False")
    return "np.linalg.svd(a, compute_uv=False)"


def _norm(given):
    options = "".join(f", {k}={k}" for k in ("ord", "axis", "keepdims") if k in given)
    return f"np.linalg.norm(a{options})"


def _qr(given):
    _refused("qr", given, ("pivoting",), "a pivoted QR has no rule")
    mode = _literal("qr", "mode", given.get("mode", "full"))
    if mode != "economic":
        raise RuleError(f"scipy.linalg.qr(..., mode={mode!r}) is not differentiated (the "
                        f"columns of a full Q beyond the matrix's have no rule): "
                        f"mode='economic'")
    return "np.linalg.qr(a, mode='reduced')"


_TRAPEZOID = getattr(np, "trapezoid", None) or np.trapz


def _trapezoid(given):
    options = "".join(f", {k}={k}" for k in ("x", "dx", "axis") if k in given)
    return f"trapezoid(y{options})", {"trapezoid": _TRAPEZOID}


_EXPANDED = [
    (scipy.linalg, "inv", _inv),
    (scipy.linalg, "det", lambda given: "np.linalg.det(a)"),
    (scipy.linalg, "eigvalsh", _eigvalsh),
    (scipy.linalg, "eigh", _eigh),
    (scipy.linalg, "svdvals", lambda given: "np.linalg.svd(a, compute_uv=False)"),
    (scipy.linalg, "svd", _svd),
    (scipy.linalg, "norm", _norm),
    (scipy.linalg, "qr", _qr),
    (scipy.integrate, "trapezoid", _trapezoid),
]

# (NumPy's functions, should SciPy re-export one, keep their own records)
_NUMPYS = {id(f) for f in (np.trapz if hasattr(np, "trapz") else None, _TRAPEZOID,
                           np.linalg.inv, np.linalg.det, np.linalg.norm)}
for _module, _name, _how in _EXPANDED:
    _fun = getattr(_module, _name, None)
    if _fun is not None and id(_fun) not in _NUMPYS:
        describe(_fun, expanded=_how)
