"""NumPy functions JAX and autograd differentiate that are other functions with rules:
each record's `expanded` writes every call as those (normalize), whose rules differentiate
it; what the two would compute differently is refused at the call's line, not
approximated. And the windows, predicates and integer-valued functions, which have no
gradient (`constructor`, `nondifferentiable`).

* np.asanyarray, np.require, np.astype (NumPy 2.1): np.asarray (with the dtype= given);
  np.asfortranarray and np.asarray_chkfinite likewise (their values are the argument's:
  the Fortran layout and the check for NaN and inf are not kept).
* np.kaiser(M, beta): i0(beta sqrt(1 - r^2)) / i0(beta), r spaced evenly over [-1, 1]
  (np.linspace's M points; 1 where M is 1, as NumPy's), differentiated in beta.
* np.linalg.cond(x, p): the largest singular value over the smallest (p None or 2, the
  reverse for -2, of a matrix or a stack of them), else norm(x, p) norm(inv(x), p) of
  one matrix (np.linalg.norm of a stack raises); p given as a name (np.inf) is checked
  not to be None, 2 or -2 where it runs (`matrix_norm_order`).
* np.linalg.tensorinv, np.linalg.tensorsolve: np.linalg.inv and np.linalg.solve of the
  matrices NumPy reshapes them to (tensorsolve's axes= is refused).
* np.polyadd, np.polysub (the shorter padded with leading zeros), np.polymul
  (np.convolve), np.polyfit (np.linalg.lstsq of the Vandermonde matrix with NumPy's
  column scaling and rcond, so the same coefficients; w= weights rows; full= and cov=
  refused).
* np.compress, np.extract: np.take of np.flatnonzero of the condition; np.delete: np.take
  of the indices np.delete leaves of an np.arange (`kept`).
* np.broadcast_arrays(a, b, ...) (up to four): np.broadcast_to of each to their
  np.broadcast_shapes (views, as NumPy's: a write through one is refused).
* np.bincount(x, weights): the weights added into zeros at x (`scattered`, np.add.at's
  form), linear in them; without weights, counts (ints, no gradient).
"""

import numpy as np

from ..errors import RuleError
from ..runtime.indexing import scattered
from ..runtime.shapes_of import bins, kept, matrix_norm_order, sizes, trailing
from . import NOT_CONSTANT, constructor, describe, nondifferentiable


def _refused(name, given, *options, why="has no gradient rule"):
    for option in options:
        if option in given:
            raise RuleError(f"{name}(..., {option}=...) {why}")


# ---- copies: np.asarray ----


def _as_array(name, *refused):
    def expanded(given):
        _refused(name, given, *refused)
        return "np.asarray(a, dtype)" if "dtype" in given else "np.asarray(a)"
    expanded.__name__ = name.rsplit(".", 1)[-1]
    return expanded


def _astype(given):
    if given.get("copy", True) is not True:
        raise RuleError("np.astype(..., copy=False) has no gradient rule (it may share x)")
    _refused("np.astype", given, "device")
    return "np.asarray(x, dtype)"


def _asanyarray(a, dtype=None, order=None, *, like=None):
    """np.asanyarray's signature, which normalize binds a call to (NumPy 1's is a builtin
    without one); np.asfortranarray's has no order."""


def _asfortranarray(a, dtype=None, *, like=None):
    """np.asfortranarray's signature (a builtin in NumPy 1)."""


describe(np.asanyarray, expanded=_as_array("np.asanyarray", "like"), signature=_asanyarray)
describe(np.asfortranarray, expanded=_as_array("np.asfortranarray", "like"),
         signature=_asfortranarray)
describe(np.asarray_chkfinite, expanded=_as_array("np.asarray_chkfinite"))
describe(np.require, expanded=_as_array("np.require", "like"))
if hasattr(np, "astype"):
    describe(np.astype, expanded=_astype)


# ---- windows ----


def _kaiser(given):
    m = given["M"]
    if m is NOT_CONSTANT:   # (r is 0 where M is 1: the window is [1.0], as NumPy's)
        return "np.i0(beta * np.sqrt(1.0 - np.linspace(-1.0, 1.0, M) ** 2 * (M > 1))) " \
               "/ np.i0(beta)"
    if m == 1:
        return "np.ones(1) + 0.0 * beta"
    return "np.i0(beta * np.sqrt(1.0 - np.linspace(-1.0, 1.0, M) ** 2)) / np.i0(beta)"


describe(np.kaiser, expanded=_kaiser)
# the other windows are functions of their length alone
constructor(np.bartlett, np.blackman, np.hamming, np.hanning)


# ---- np.linalg ----


def _cond(given):
    p = given.get("p")
    if p is NOT_CONSTANT:   # (np.inf, or a name: refused at run time where it is 2)
        return ("np.linalg.norm(x, matrix_norm_order(p)) * "
                "np.linalg.norm(np.linalg.inv(x), matrix_norm_order(p))",
                {"matrix_norm_order": matrix_norm_order})
    s = "np.linalg.svd(x, compute_uv=False)"
    if p in (None, 2):
        return f"{s}[..., 0] / {s}[..., -1]"
    if p == -2:
        return f"{s}[..., -1] / {s}[..., 0]"
    if p not in (1, -1, np.inf, -np.inf, "fro", "nuc"):
        raise RuleError(f"np.linalg.cond: p={p!r} is not a matrix norm NumPy takes")
    # (of one matrix: np.linalg.norm of a stack raises, where NumPy's cond takes one)
    return "np.linalg.norm(x, p) * np.linalg.norm(np.linalg.inv(x), p)"


def _tensorinv(given):
    if given.get("ind", 2) is NOT_CONSTANT:
        raise RuleError("np.linalg.tensorinv's ind= is differentiated as an int literal")
    return ("np.reshape(np.linalg.inv(np.reshape(a, (sizes(a.shape[:ind]), "
            "sizes(a.shape[ind:])))), a.shape[ind:] + a.shape[:ind])", {"sizes": sizes})


def _tensorsolve(given):
    _refused("np.linalg.tensorsolve", given, "axes",
             why="has no gradient rule: move the axes with np.moveaxis first")
    return ("np.reshape(np.linalg.solve(np.reshape(a, (np.size(b), sizes(trailing(a, b)))), "
            "np.ravel(b)), trailing(a, b))", {"sizes": sizes, "trailing": trailing})


describe(np.linalg.cond, expanded=_cond)
describe(np.linalg.tensorinv, expanded=_tensorinv)
describe(np.linalg.tensorsolve, expanded=_tensorsolve)
nondifferentiable(np.linalg.matrix_rank, sizes, bins, scalar_result=True)
nondifferentiable(trailing, kept, matrix_norm_order, pure=True)


# ---- polynomials ----


def _padded(a, b):
    """`a` as a 1-D array with leading zeros to b's length (NumPy's polyadd)."""
    return f"np.pad(np.atleast_1d({a}), (max(np.size({b}) - np.size({a}), 0), 0))"


def _polyfit(given):
    _refused("np.polyfit", given, "full", "cov")
    v = "np.vander(x, deg + 1)"
    if "w" in given:
        v, y = "(np.vander(x, deg + 1) * w[:, None])", "(y.T * w).T"
    else:
        y = "y"
    rcond = "rcond" if "rcond" in given else "np.size(x) * 2.220446049250313e-16"
    # NumPy's column scaling, which its rcond is relative to: the same coefficients
    scale = f"np.sqrt(np.sum({v} ** 2, axis=0))"
    return f"(np.linalg.lstsq({v} / {scale}, {y}, rcond={rcond})[0].T / {scale}).T"


describe(np.polyadd, expanded=lambda given: f"{_padded('a1', 'a2')} + {_padded('a2', 'a1')}")
describe(np.polysub, expanded=lambda given: f"{_padded('a1', 'a2')} - {_padded('a2', 'a1')}")
describe(np.polymul, expanded=lambda given: "np.convolve(np.atleast_1d(a1), np.atleast_1d(a2))")
describe(np.polyfit, expanded=_polyfit)


# ---- selections ----


def _compress(given):
    _refused("np.compress", given, "out")
    axis = ", axis=axis" if "axis" in given else ""
    return f"np.take(a, np.flatnonzero(condition){axis})"


def _bincount_signature(x, weights=None, minlength=0):
    """np.bincount's signature (a builtin in NumPy 1)."""


def _bincount(given):
    # (without weights, counts: ints, with no gradient)
    if "weights" not in given:
        return None
    minlength = "minlength" if "minlength" in given else "0"
    return (f"scattered(np.zeros(bins(x, {minlength})), x, weights)",
            {"scattered": scattered, "bins": bins})


def _delete(given):
    if "axis" in given:
        return "np.take(arr, kept(np.shape(arr)[axis], obj), axis=axis)", {"kept": kept}
    return "np.take(arr, kept(np.size(arr), obj))", {"kept": kept}


describe(np.compress, expanded=_compress)
describe(np.bincount, expanded=_bincount, signature=_bincount_signature)
describe(np.delete, expanded=_delete)
describe(np.extract, expanded=lambda given: "np.take(arr, np.flatnonzero(condition))")


# ---- np.broadcast_arrays ----


def _broadcast_arrays(a0, a1=None, a2=None, a3=None, subok=False):
    """np.broadcast_arrays's signature, which normalize binds a call to: up to four
    arrays (a call of more, or of a starred list, is not written, and has no rule)."""


def _broadcast(given):
    _refused("np.broadcast_arrays", given, "subok")
    names = [k for k in ("a0", "a1", "a2", "a3") if k in given]
    shape = f"np.broadcast_shapes({', '.join(f'np.shape({k})' for k in names)})"
    return "(" + "".join(f"np.broadcast_to({k}, {shape}), " for k in names) + ")"


describe(np.broadcast_arrays, expanded=_broadcast, signature=_broadcast_arrays)


# ---- no gradient: integer values, predicates ----

nondifferentiable(np.nanargmax, np.nanargmin, np.argpartition, np.lexsort, np.digitize,
                  np.isneginf, np.isposinf, np.iscomplex, np.isreal, np.signbit, np.isin,
                  np.diag_indices_from, np.tril_indices_from, np.triu_indices_from)
nondifferentiable(*(f for name in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
                                    "invert", "left_shift", "right_shift", "gcd", "lcm",
                                    "bitwise_count", "bitwise_invert", "bitwise_left_shift",
                                    "bitwise_right_shift")
                    if (f := getattr(np, name, None)) is not None))
nondifferentiable(np.broadcast_shapes, np.isscalar, np.isfortran, np.may_share_memory,
                  np.shares_memory, scalar_result=True)
nondifferentiable(np.array_equal, np.array_equiv, np.iscomplexobj, np.isrealobj,
                  scalar_result=True)
constructor(np.tri, np.tril_indices, np.triu_indices, np.diag_indices, np.indices,
            np.fft.fftfreq, np.fft.rfftfreq)
