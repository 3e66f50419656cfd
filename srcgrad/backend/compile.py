"""compile: generated modules and the user functions they call, compiled by numba.

`jit_module` njits every function of a generated module (`cache=True`: a second process
loads the machine code from disk), once per source and namespace fingerprint. The user
functions the code calls are compiled on the way (`njit_user`), without writing into the
user's modules; a transform's entry point called by another transform's code is that
transform's compiled entry point (`NESTED`).
"""

from __future__ import annotations

import threading
import types
import weakref
from typing import Any

import gast

from .. import codegen, runtime
from ..compiler import Generated

_JIT_CACHE: dict[str, dict[str, Any]] = {}
_JIT_LOCK = threading.RLock()  # (a nested transform compiles its own code inside)


def jit_module(gen: Generated, stem: str) -> dict[str, Any]:
    """njit every generated function and every user function they call (cache=True)."""
    import numba

    from .. import numba_ext  # registers overloads the generated code may need

    with _JIT_LOCK:
        ns = gen.namespace.globals(lambda obj, jit: njit_user(obj) if jit else obj)
        for node in gast.walk(gast.parse(gen.source)):
            if isinstance(node, gast.Call):
                numba_ext.object_mode(gen.namespace.called(node))
        key = codegen.fingerprint(gen.source, ns)
        if key in _JIT_CACHE:
            return _JIT_CACHE[key]
        module = codegen.load(gen.source, ns, stem, "jit")
        gen.register(module)   # (what a dispatcher's `py_func` is)
        compiled = {}
        for name in gen.functions:
            fun = getattr(module, name)
            fun = getattr(fun, "__wrapped__", fun)
            compiled[name] = numba.njit(cache=True)(
                runtime.jit_kernel(fun) if name in gen.kernels else fun)
            setattr(module, name, compiled[name])
        _JIT_CACHE[key] = compiled
        return compiled


_NJITTED: dict[Any, Any] = {}
# a transform's generated entry point (as Python) -> the transform, whose compiled entry
# point runs where another transform's compiled code calls it
NESTED: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def njit_user(fun):
    """`fun` compiled: a user function, or a transform's entry point (its compiled form)."""
    import numba
    from numba.core.registry import CPUDispatcher

    if isinstance(fun, CPUDispatcher) or not isinstance(fun, types.FunctionType):
        return fun
    if fun in NESTED:
        return NESTED[fun].compiled_entry()
    if fun not in _NJITTED:
        _callable_from_jit(fun, set())
        _NJITTED[fun] = numba.njit(cache=True)(fun)
    return _NJITTED[fun]


def _callable_from_jit(fun, seen: set) -> None:
    """Let numba compile the user functions `fun` calls (a rule's helpers), without
    writing into the user's modules: numba's `register_jitable` overloads each one."""
    from numba.extending import register_jitable

    from ..frontend.parse import is_user_function

    codes = [fun.__code__]
    while codes:
        code = codes.pop()
        codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
        for name in code.co_names:
            obj = fun.__globals__.get(name)
            if is_user_function(obj) and obj not in seen and obj not in _JITABLE:
                seen.add(obj)
                _callable_from_jit(obj, seen)
                register_jitable(obj)
                _JITABLE.add(obj)


_JITABLE: set = set()
