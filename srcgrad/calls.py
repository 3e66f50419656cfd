"""calls: what a transform does with a call, beside the code it runs. The call's arguments
are checked against the function's signature and the `wrt` and `static` names (a position,
a name, or a variable the function assigns); a jvp's tangents against their arguments;
results are given back as NumPy and autograd do (a float64 scalar as a Python float); and
`vjp`'s pullbacks keep what the backward pass needs, to be called many times.

`api.Transform` binds each call with these; `dense` builds its columns with `direction`.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import SrcgradError, WrtError
from .frontend.parse import check_function

if TYPE_CHECKING:
    from .api import Transform


# ---- arguments ----
def signature_of(fun) -> inspect.Signature:
    """`fun`'s signature, for a function srcgrad can read."""
    check_function(fun)
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError) as exc:
        raise SrcgradError(f"cannot differentiate {fun!r}: {exc}") from None


def param_name(w, params: list[str], fun, option: str = "wrt") -> str:
    """The parameter (or, for `wrt`, the variable) that `w`, a position or a name, names."""
    if isinstance(w, bool) or not isinstance(w, (int, str)):
        raise WrtError(f"{option} must be a parameter position or name, or a tuple of them; "
                       f"got {w!r}")
    if isinstance(w, int):
        if not -len(params) <= w < len(params):
            raise WrtError(f"{option}={w} but {fun.__qualname__} has {len(params)} "
                           f"parameter(s): {', '.join(params)}")
        return params[w]
    if w not in params and not (option == "wrt" and w in _variables(fun)):
        what = "parameter or variable" if option == "wrt" else "parameter"
        raise WrtError(f"{option}={w!r} names no {what} of {fun.__qualname__} "
                       f"(parameters: {', '.join(params)})")
    return w


def _variables(fun) -> frozenset[str]:
    """Names `fun` assigns (a `wrt` may name one: the gradient of an intermediate)."""
    from .analysis.aliasing import assigned_names
    from .frontend.parse import parse

    try:
        return assigned_names(parse(fun).tree)
    except SrcgradError:
        return frozenset()


def check_differentiable(name: str, value: Any, fun) -> None:
    """Refuses an integer or boolean argument given for a `wrt` parameter."""
    if type(value) is np.ndarray:
        kind = value.dtype.kind
    else:
        kind = np.asarray(value).dtype.kind if not isinstance(value, (list, tuple)) else "f"
    if kind in "biu":
        what = "a boolean" if kind == "b" else "an integer"
        raise WrtError(f"cannot differentiate {fun.__qualname__} with respect to {name!r}: "
                       f"it is {what} ({value!r}); pass a float (e.g. {name}=5.0)")


# argument types that are never containers (`passes.pytrees.is_container`)
LEAF_TYPES = frozenset({np.ndarray, float, int, bool, np.float64, np.float32, np.int64,
                        np.int32, np.bool_})


# ---- tangents and results ----
def direction(inputs: list[np.ndarray], j: int, k: int, many: bool) -> Any:
    """The tangents of a jvp along entry k of input j (zero for the other inputs)."""
    tangents = [unit_like(v, k) if i == j else np.zeros_like(v) for i, v in enumerate(inputs)]
    return tuple(tangents) if many else tangents[0]


def unit_like(x: np.ndarray, k: int) -> Any:
    """The unit vector along entry k of an array shaped like `x` (1.0 for a scalar)."""
    e = np.zeros(np.shape(x))
    e.flat[k] = 1.0
    return e if e.ndim else 1.0


def checked_tangent(name: str, arg: Any, t: Any, fun) -> Any:
    """The tangent `t` given for argument `name` (value `arg`), checked and at its dtype."""
    if type(arg) is np.ndarray and type(t) is np.ndarray and t.dtype == arg.dtype \
            and t.shape == arg.shape and arg.dtype.char in "dD":
        return t  # the common case, decided without NumPy calls (hvp is called in loops)
    if np.shape(t) != np.shape(arg):
        raise SrcgradError(f"the tangent for {name!r} of {fun.__qualname__} has shape "
                           f"{np.shape(t)}, but {name} has shape {np.shape(arg)}")
    if isinstance(arg, np.ndarray):
        return np.asarray(t, dtype=np.result_type(arg.dtype, np.float64))
    return float(t) if np.ndim(arg) == 0 else t  # a scalar's tangent: a float, as it is


def map_nested(f, value):
    """`f` of each leaf of nested tuples."""
    return tuple(map_nested(f, v) for v in value) if isinstance(value, tuple) else f(value)


def plain(value: Any) -> Any:
    """A float64 scalar as a Python float (as autograd returns for a float input)."""
    if type(value) is np.ndarray and value.ndim:
        return value
    if isinstance(value, (np.floating, np.ndarray)) and np.ndim(value) == 0 \
            and value.dtype == np.float64:
        return float(value)
    return value


# ---- pullbacks ----
class Pullback:
    """`vjp`'s pullback: maps a cotangent of the result to gradients; callable many times."""

    def __init__(self, transform: Transform, saved: tuple):
        self._t = transform
        self._saved = saved

    def __call__(self, cotangent):
        return self._t._call("backward", tuple(self._saved) + (cotangent,))


class Regrouped:
    """`vjp`'s pullback for container arguments: gradients with their structure."""

    def __init__(self, pullback: Pullback, group):
        self._pullback, self._group = pullback, group

    def __call__(self, cotangent):
        return self._group(map_nested(plain, self._pullback(cotangent)))


class Transposed:
    """The pullback of `vjp` of a gradient: a jvp of another gradient (`Transform._transposed`)."""

    def __init__(self, jvp: Transform, values: tuple):
        self._jvp, self._values = jvp, values

    def __call__(self, cotangent):
        return self._jvp(*self._values, cotangent)[1]


class Columns:
    """The pullback of `vjp` of a gradient made by the user's rules: (J^T u)[k] is
    <J e_k, u>, with column J e_k from one jvp per entry of the `wrt` arguments (made on
    the first call, kept for the next)."""

    def __init__(self, jvp: Transform, values: tuple):
        self._jvp, self._values = jvp, values
        self._inputs = [np.asarray(values[jvp._params.index(w)], dtype=float)
                        for w in jvp.wrt]
        self._columns: list[list[Any]] | None = None

    def __call__(self, cotangent):
        if self._columns is None:
            many, inputs = self._jvp._many, self._inputs
            self._columns = [[self._jvp(*self._values, direction(inputs, j, k, many))[1]
                              for k in range(x.size)] for j, x in enumerate(inputs)]
        grads = [plain(np.array([_inner(c, cotangent) for c in cols]).reshape(x.shape))
                 for cols, x in zip(self._columns, self._inputs, strict=True)]
        return tuple(grads) if self._jvp._many else grads[0]


def _inner(a: Any, b: Any) -> float:
    """<a, b> for arrays, scalars, or tuples of them."""
    if isinstance(a, tuple):
        return sum(_inner(x, y) for x, y in zip(a, b, strict=True))
    return float(np.vdot(np.asarray(a, dtype=float), np.asarray(b, dtype=float)))
