"""compiled: the heaviest runtime helpers as numba functions compiled once per machine.

An overload (`@overload(unbroadcast)`) is typed and compiled again inside every process
that compiles a gradient calling it; numba's disk cache keeps only the gradient's own
machine code. Here the helpers that cost the most compile time in loop code are wrapped in
``numba.njit(cache=True)`` functions, which `backend.compile.jit_module` binds in a
generated module's namespace under jit only: the generated source and the Python form
(which calls the plain NumPy helpers) are unchanged. numba compiles a wrapper once per
argument types and keeps it on disk, so the next gradient, in this process or another,
loads it instead of typing and optimising it again. The call costs nothing at steady
state: numba links the wrapper's code into its caller before LLVM optimises the whole, so
it is inlined there as an overload is.

Never stale: numba's disk cache checks only the timestamp of the file a cached function
is in, not of those it calls. The wrappers' source is therefore written by `codegen.load`
to a file of the srcgrad cache directory whose name digests srcgrad's whole source and
numba's and NumPy's versions: an edit to a helper makes a new file, compiled afresh.

numba's own `raise_with_shape_context` (the ValueError of `a[...] = b` with shapes that
differ, seconds of string formatting per rank) is bound to such a wrapper too, for the
whole process: the same message, compiled once per machine. A wrapper's disk cache entry
that cannot be read is removed and compiled again.

Requires: the wrapped helpers have numba overloads and only positional parameters, and
numba types their arguments the same without literal values (the dispatcher's way).
Guarantees: `cached(obj)` is `obj`'s wrapper (a numba dispatcher with `obj`'s parameters)
or `obj` itself; the same wrappers for the whole process.
"""

from __future__ import annotations

import inspect
import threading
from typing import Any

from .broadcasting import unbroadcast, zeros_like
from .matmul import (
    add_matmul_lhs_grad,
    add_matmul_rhs_grad,
    matmul_lhs_grad,
    matmul_rhs_grad,
)
from .tapes import add_kept, new_tape, record

# helpers whose overloads take tenths of a second each to compile (numba's event
# recorder, rnn_loss); the scalar paths of small ones compile in milliseconds
WRAPPED = (unbroadcast, zeros_like, matmul_lhs_grad, matmul_rhs_grad, add_matmul_lhs_grad,
           add_matmul_rhs_grad, new_tape, record, add_kept)

# numba's stub (`numba.np.arrayobj`) that its slice assignment lowers a call to, with the
# shapes, when they differ; its overload raises the ValueError
_SHAPE_ERROR = "raise_with_shape_context"
_WRAPPERS: dict[Any, Any] = {}
_LOCK = threading.Lock()


def cached(obj: Any) -> Any:
    """The once-per-machine compiled wrapper of the runtime helper `obj`, or `obj`. The
    first call makes the wrappers (compiled on first use) and numba's slice-assignment
    error (`_SHAPE_ERROR`)."""
    with _LOCK:
        if not _WRAPPERS:
            _WRAPPERS.update(_build())
    if callable(obj) and any(obj is w for w in WRAPPED):
        return _WRAPPERS[obj]
    return obj


def _build() -> dict[Any, Any]:
    import numba
    from numba.np import arrayobj

    from .. import codegen

    # numba (0.59 on) compiles, with each `a[...] = array` of a new rank, an overload that
    # formats the shapes into its error message: seconds of string code (heat_1d: half
    # its compile). Bound to a wrapper of it, that is compiled once per machine too.
    shape_error = getattr(arrayobj, _SHAPE_ERROR, None)
    helpers = WRAPPED + ((shape_error,) if shape_error is not None else ())
    lines, namespace = [], {}
    for helper in helpers:
        params = list(inspect.signature(helper).parameters)
        name = helper.__name__
        namespace[f"_{name}"] = helper
        lines += [f"def {name}({', '.join(params)}):",
                  f"    return _{name}({', '.join(params)})", ""]
    module = codegen.load("\n".join(lines), namespace, "srcgrad_runtime", "jit")
    # numba's disk cache rebuilds a compiled function's environment by importing the module
    # its globals name. A user's own cached function compiled in this process links the
    # shape-error wrapper's, and must load where srcgrad never made this module (a process
    # without srcgrad): its globals name this module, which any process can import.
    module.__dict__["__name__"] = __name__
    wrappers = {helper: _misses_unreadable(numba.njit(cache=True)(
        getattr(module, helper.__name__))) for helper in helpers}
    if shape_error is not None:
        setattr(arrayobj, _SHAPE_ERROR, wrappers.pop(shape_error))
    return wrappers


def _misses_unreadable(dispatcher: Any) -> Any:
    """`dispatcher`, whose disk cache entries that cannot be read (truncated, garbled)
    are removed and compiled again. (A gradient's own entry is read again by the caller,
    `backend.compile`; a wrapper's is read while numba types that gradient, once per
    wrapper, so there.)"""
    from ..backend.compile import drop_unreadable_cache

    cache, load = dispatcher._cache, dispatcher._cache.load_overload

    def load_overload(sig, target_context):
        try:
            return load(sig, target_context)
        except Exception as exc:
            if not drop_unreadable_cache(exc):
                raise
            return None   # (a miss: numba compiles it, and writes the entry again)
    cache.load_overload = load_overload
    return dispatcher
