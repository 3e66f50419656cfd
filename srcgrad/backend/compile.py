"""compile: generated modules and the user functions they call, compiled by numba.

`jit_module` njits every function of a generated module (`cache=True`: a second process
loads the machine code from disk), once per source and namespace fingerprint; the module
calls the heaviest runtime helpers through their once-per-machine compiled wrappers
(`runtime.compiled`). The user
functions the code calls are compiled on the way (`njit_user`), without writing into the
user's modules; a transform's entry point called by another transform's code is that
transform's compiled entry point (`NESTED`).
"""

from __future__ import annotations

import logging
import os
import threading
import time
import types
import weakref
from typing import Any

import gast

from .. import codegen, runtime
from ..compiler import Generated

log = logging.getLogger("srcgrad")
SLOW_COMPILE = 2.0   # seconds: a blocking compile this long is worth telling the user once
_told_slow = False
REREADS = 3   # compiles tried again after removing an unreadable disk cache entry

_JIT_CACHE: dict[str, dict[str, Any]] = {}
_JIT_LOCK = threading.RLock()  # (a nested transform compiles its own code inside)


def jit_module(gen: Generated, stem: str) -> dict[str, Any]:
    """njit every generated function and every user function they call (cache=True)."""
    import numba

    from .. import numba_ext  # registers overloads the generated code may need

    with _JIT_LOCK:
        ns = gen.namespace.globals(
            lambda obj, jit: njit_user(obj) if jit else runtime.compiled.cached(obj))
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
            if (chosen := getattr(fun, "srcgrad_jit", None)) is not None:
                compiled[name] = chosen(compiled)   # (runtime.scalarised)
            else:
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


def compile_for(dispatcher, args: tuple, label: str, blocking: bool) -> None:
    """Compile `dispatcher` for the numba types of `args` (without running it), reading
    numba's disk cache again once if an entry of it could not be read."""
    sig = tuple(dispatcher.typeof_pyval(a) for a in args)
    start = time.perf_counter()
    for attempt in range(REREADS + 1):
        try:
            dispatcher.compile(sig)
            break
        except Exception as exc:
            if attempt == REREADS or not drop_unreadable_cache(exc):
                raise
    _report(dispatcher, sig, label, time.perf_counter() - start, blocking)


def note_compile(dispatcher, known: int, label: str, seconds: float) -> None:
    """Report the compile a call of `dispatcher` made, if it made one: it had `known`
    compiled signatures before the call, and the call took `seconds`."""
    if len(dispatcher.overloads) > known:
        sig = list(dispatcher.overloads)[-1]
        _report(dispatcher, sig, label, seconds, True)


def _report(dispatcher, sig: tuple, label: str, seconds: float, blocking: bool) -> None:
    global _told_slow
    hit = dispatcher.stats.cache_hits.get(tuple(sig), 0) > 0
    where = "blocking" if blocking else "in the background"
    log.debug("srcgrad: compiled %s for (%s), %s: %.2f s (disk cache %s)", label,
              ", ".join(map(str, sig)), where, seconds, "hit" if hit else "miss")
    if blocking and seconds > SLOW_COMPILE and not _told_slow:
        _told_slow = True
        log.info("srcgrad: compiling %s took %.1f s, blocking the call; the compiled code is "
                 "kept on disk for the next process (jit='auto' compiles straight-line code "
                 "in the background, code with loops on its first call)", label, seconds)


def drop_unreadable_cache(exc: BaseException) -> bool:
    """If `exc` was raised reading numba's disk cache (a truncated or corrupt file),
    remove the index of the entry it read, so that the next compile writes it again;
    whether it was such an error."""
    indexes, causes = set(), [exc]
    while causes:   # (numba re-raises a callee's failure as its own typing error)
        cause = causes.pop()
        causes += [c for c in (cause.__cause__, cause.__context__) if c is not None]
        tb = cause.__traceback__
        while tb is not None:
            frame = tb.tb_frame
            if frame.f_code.co_filename.endswith(os.path.join("numba", "core", "caching.py")):
                owner = frame.f_locals.get("self")
                owner = getattr(owner, "_cache_file", owner)
                if getattr(owner, "_index_path", None) and "load" in frame.f_code.co_name:
                    indexes.add(owner._index_path)
            tb = tb.tb_next
    for path in indexes:
        log.warning("srcgrad: numba's disk cache entry %s could not be read (%s: %s); "
                    "compiling it again", path, type(exc).__name__, exc)
        try:
            os.remove(path)
        except FileNotFoundError:   # (another thread read it too, and removed it first)
            pass
    return bool(indexes)
