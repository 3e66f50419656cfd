"""More NumPy functions JAX differentiates, each written (`expanded`) as functions with
rules, with the positions they read from index helpers of no gradient
(runtime/numpy_gaps2.py); what the two would compute differently is refused at the
call's line or where it runs, not approximated.

* np.insert(arr, obj, values, axis): np.take of arr's entries and values' joined, at the
  positions np.insert places them (`insertion_order`: np.insert of their positions), so
  both arr and values get gradients (an entry of values NumPy repeats, its sum).
* np.resize(a, new_shape): np.take of a at its entries over again (`cycled`).
* np.trim_zeros(filt, trim): the slice between the zeros trimmed (`first_kept`,
  `last_kept`, which read the data: the gradient is the cotangent in the kept positions,
  zeros elsewhere); of a 1-D array (axis= refused).
* np.choose(a, choices, mode): np.take_along_axis of the choices stacked (np.stack: of
  one shape, on a last axis) and broadcast with a, at a (`choice_index`, with mode's
  wrap or clip); a has no gradient; out= refused.
* np.divmod(x1, x2): (np.floor_divide(x1, x2), np.mod(x1, x2)): the quotient's slope is
  zero, the remainder's np.mod's.
* np.frexp(x): (np.ldexp(x, -e), e) with e its exponents (`exponents`): the mantissa's
  slope is 2^-e, the exponent has none.
* np.sort_complex(a): np.sort(a) + 0j (NumPy's sort of complex values is by their real
  then imaginary parts, as sort_complex's).
* np.real_if_close(a, tol): np.real(a), where NumPy gives that; an array NumPy gives
  back complex is refused where it runs (`close_to_real`).
* np.unstack(x, axis) (NumPy 2.1): its pieces' gradients stacked again (`restacked`);
  compiled, its pieces are a list (NumPy's a tuple).
* np.apply_along_axis and np.piecewise call Python functions: refused (as before), their
  refusals saying what to write instead (a loop, np.where).
* np.spacing(x) is a step function of x (the distance to the next float): no gradient,
  as np.floor has none. np.nextafter has no rule, as JAX's has none: its refusal says so.
"""

import numpy as np

from ..errors import RuleError
from ..runtime.indexing import scattered
from ..runtime.numpy_gaps2 import (
    choice_index,
    choice_shape,
    close_to_real,
    cycled,
    divisor_index,
    exponents,
    first_kept,
    histogram_index,
    insertion_order,
    last_kept,
    quotient_length,
    remainder_start,
    restacked,
    roots_grad,
    roots_tangent,
)
from . import NOT_CONSTANT, describe, linear, nondifferentiable, real_only, rule, tangent


def _refused(name, given, *options, why="has no gradient rule"):
    for option in options:
        if option in given:
            raise RuleError(f"{name}(..., {option}=...) {why}")


def _insert(given):
    axis = "axis" if "axis" in given else "None"
    return ("np.take(np.concatenate((np.ravel(arr), np.ravel(values))), "
            f"insertion_order(arr, obj, values, {axis}))",
            {"insertion_order": insertion_order})


def _trim_zeros(given):
    _refused("np.trim_zeros", given, "axis", why="has no gradient rule: trim a 1-D array")
    trim = "trim" if "trim" in given else "'fb'"
    return (f"filt[first_kept(filt, {trim}):last_kept(filt, {trim})]",
            {"first_kept": first_kept, "last_kept": last_kept})


def _choose(given):
    _refused("np.choose", given, "out")
    mode = given.get("mode", "raise")
    if mode is not NOT_CONSTANT and mode not in ("raise", "wrap", "clip"):
        raise RuleError(f"np.choose: mode={mode!r} is not one NumPy takes")
    mode = "mode" if "mode" in given else "'raise'"
    # (stacked on a last axis, which broadcasting leaves last)
    return ("np.take_along_axis(np.broadcast_to(np.stack(choices, -1), "
            "choice_shape(a, np.stack(choices, -1))), "
            f"choice_index(a, np.stack(choices, -1), {mode}), -1)[..., 0]",
            {"choice_index": choice_index, "choice_shape": choice_shape})


def _ufunc_options(name, given):
    _refused(name, given, "out", "where", "casting", "order", "dtype", "subok", "signature",
             why="has no gradient rule: call it without")


def _divmod_signature(x1, x2, out=None, *, where=True, casting="same_kind", order="K",
                      dtype=None, subok=True, signature=None):
    """np.divmod's signature, which normalize binds a call to (NumPy 1's ufuncs have
    none); np.frexp's has one argument."""


def _frexp_signature(x, out=None, *, where=True, casting="same_kind", order="K",
                     dtype=None, subok=True, signature=None):
    """np.frexp's signature (a ufunc's, which NumPy 1 does not give)."""


def _divmod(given):
    _ufunc_options("np.divmod", given)
    return "(np.floor_divide(x1, x2), np.mod(x1, x2))"


def _frexp(given):
    _ufunc_options("np.frexp", given)
    return "(np.ldexp(x, -exponents(x)), exponents(x))", {"exponents": exponents}


def _real_if_close(given):
    tol = "tol" if "tol" in given else "100"
    return f"np.real(a) + close_to_real(a, {tol})", {"close_to_real": close_to_real}


describe(np.insert, expanded=_insert)
describe(np.resize, expanded=lambda given: ("np.take(a, cycled(a, new_shape))",
                                            {"cycled": cycled}))
describe(np.trim_zeros, expanded=_trim_zeros)
describe(np.choose, expanded=_choose, sequence=True)
describe(np.divmod, expanded=_divmod, signature=_divmod_signature)
describe(np.frexp, expanded=_frexp, signature=_frexp_signature)
describe(np.sort_complex, expanded=lambda given: "np.sort(a) + 0j")
describe(np.real_if_close, expanded=_real_if_close)
nondifferentiable(np.spacing)
nondifferentiable(exponents, cycled, first_kept, last_kept, insertion_order, choice_index,
                  close_to_real, pure=True)
nondifferentiable(choice_shape, pure=True, scalar_result=True)


# ---- polynomials ----


@rule(np.poly)
def poly(dy, y, seq_of_zeros):
    return roots_grad(dy, seq_of_zeros)


@tangent(np.poly)
def poly_tangent(dx, y, seq_of_zeros):
    return roots_tangent(dx, seq_of_zeros)


def _polydiv(given):
    quotient = ("np.linalg.solve(np.take(np.append(v, 0.0), divisor_index(u, v)), "
                "u[:quotient_length(u, v)])")
    # (the quotient written twice: an expansion is one expression, and a name bound in it
    # could be the user's)
    return (f"({quotient}, (u - np.convolve({quotient}, v))[remainder_start(u, v):])",
            {"divisor_index": divisor_index, "quotient_length": quotient_length,
             "remainder_start": remainder_start})


real_only(np.poly)
describe(np.polydiv, expanded=_polydiv)
nondifferentiable(divisor_index, pure=True)
nondifferentiable(quotient_length, remainder_start, pure=True, scalar_result=True)


# ---- np.histogram with weights ----


def _histogram(given):
    if "weights" not in given:   # (counts: ints, with no gradient; the edges would have one)
        return None
    if given.get("density") not in (None, False):
        raise RuleError("np.histogram(..., density=True) has no gradient rule: divide the "
                        "weighted counts by their sum times np.diff of the edges")
    bins = given.get("bins", 10)
    if bins is NOT_CONSTANT:   # the edges (refused where they run if not)
        edges = "np.asarray(bins)"
    elif "range" in given and isinstance(bins, int):
        edges = "np.linspace(range[0], range[1], bins + 1)"
    else:
        raise RuleError("np.histogram(a, bins=<a count>) without range= has edges that "
                        "move with a's minimum and maximum: give range= or the edges "
                        "(then the counts' slope in a is zero where it is defined)")
    bins = "bins" if "bins" in given else "10"
    edges = edges.replace("bins", bins)
    return (f"(scattered(np.zeros(len({edges})), histogram_index(a, {edges}), "
            f"np.ravel(weights))[:-1], {edges})",
            {"scattered": scattered, "histogram_index": histogram_index})


describe(np.histogram, expanded=_histogram)
nondifferentiable(histogram_index, pure=True)


# ---- functions of Python functions: refused, saying what to write ----

describe(np.apply_along_axis, instead=(
    "it calls a Python function on each 1-D slice, which srcgrad cannot differentiate "
    "through: write the loop over the slices (`np.stack([f(a[:, j]) for j in "
    "range(a.shape[1])])`), or the function itself along the axis"))
describe(np.piecewise, instead=(
    "it calls Python functions on the entries each condition selects, which srcgrad "
    "cannot differentiate through: write np.where(cond, f(x), g(x)) (with each f given "
    "inputs it is defined at) or a loop"))


# ---- np.unstack (NumPy 2.1): its pieces' gradients stacked again ----

if hasattr(np, "unstack"):
    @rule(np.unstack, view=True)
    def unstack(dy, y, x, axis=0):
        return restacked(dy, x, axis)

    @rule(restacked)
    def restacked_rule(dy, y, dx, x, axis=0):
        return np.unstack(dy, axis=axis), None, None

    linear(np.unstack, restacked)
