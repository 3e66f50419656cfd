"""linkonly: numba's overload implementations compiled to LLVM IR for their callers only.

numba compiles an ``@overload`` (or ``register_jitable``) implementation through a
dispatcher of its own, once per argument types and process, and, as for any dispatcher,
optimises its module and emits its machine code (MCJIT) so that Python could call it.
Nothing calls such a dispatcher from Python: its callers link its optimised IR into their
own module, where it is optimised and emitted again. A gradient calling the statistics or
linear-algebra helpers compiles a hundred or more of them; measured (numba 0.68,
NUMBA_OPT=1, a cov jvp test): a fifth of the compile's CPU time was these emissions, and
as much again their own optimisation.

`install()` makes numba keep those libraries as IR: a library compiled for an overload
implementation's dispatcher is optimised (its callers link it) but not added to the JIT
engine; its Python entry point is a stub that raises RuntimeError (a call from Python,
which numba never makes, is an error, not a crash), and its environment (what a dynamic
exception's message is formatted with) is defined in the engine as before, in a module of
its own. The library is emitted after all if anything asks for one of its functions'
addresses or serialises it. A library that refers to itself through numba's recursion
placeholders is emitted as before (numba resolves those through the engine).

SRCGRAD_LINK_ONLY: 1 (the default) as above; the code of every function Python calls is
the same as numba's own (a gradient links the same optimised IR). 2 also leaves those
libraries unoptimised, so that their code is optimised once, in the module that calls it,
not once more per library: the same values (LLVM's optimisations keep IEEE results
without fast-math), about twice the saving, but machine code that may differ, so the test
matrix (tox.ini) uses it and the benchmarks do not. 0 leaves numba as it is.

Requires: numba's internals as of 0.68 (`Dispatcher.compile`,
`_OverloadFunctionTemplate._get_jit_decorator`, `CPUContext.get_executable`, the
`CPUCodeLibrary` finalisation): under another numba release (`oldest`'s 0.59), or where
one of them is missing, nothing is changed.
Guarantees: a gradient loaded from numba's disk cache is unaffected (its machine code is
its own, with the helpers it links).
"""

from __future__ import annotations

import contextvars
import os
import threading
import weakref

_LINK_ONLY = contextvars.ContextVar("srcgrad_link_only", default=False)
_DONE = False
_LOCK = threading.Lock()
_RAW = os.environ.get("SRCGRAD_LINK_ONLY", "1").strip() == "2"
_STUB: list = []   # the refusing entry point's (dispatcher, address), made once


def install() -> bool:
    """Patch numba (once per process); whether the patch is in place."""
    global _DONE
    with _LOCK:
        if _DONE:
            return True
        if os.environ.get("SRCGRAD_LINK_ONLY", "1").strip() == "0" or not _tested_numba():
            return False
        try:
            from numba.core import codegen, cpu, dispatcher
            from numba.core.typing import templates
            parts = (dispatcher.Dispatcher.compile,
                     dispatcher.LiftedCode, dispatcher.ObjModeLiftedWith,
                     codegen.CPUCodeLibrary._optimize_final_module,
                     templates._OverloadFunctionTemplate._get_jit_decorator,
                     cpu.CPUContext.get_executable,
                     codegen.CPUCodeLibrary._finalize_final_module,
                     codegen.JITCodeLibrary.get_pointer_to_function,
                     codegen.CPUCodeLibrary.serialize_using_object_code)
        except (ImportError, AttributeError):
            return False
        _patch(*parts)
        _DONE = True
        return True


def _tested_numba() -> bool:
    """Whether numba is a release whose internals this was written against (0.68)."""
    import numba

    try:
        version = tuple(int(part) for part in numba.__version__.split(".")[:2])
    except ValueError:
        return False
    return version == (0, 68)


def _patch(compile_, _lifted, _objmode, optimize_final, jit_decorator, get_executable,
           finalize_final, get_pointer, serialize) -> None:
    from numba.core import codegen, cpu, dispatcher
    from numba.core.typing import templates

    def flagging_compile(original):
        # every compile sets the flag, to its own dispatcher's: the compiles nested in an
        # implementation's (the user functions it calls, its `with objmode` blocks, lifted
        # as LiftedCode) keep their entry points
        def compile(self, sig):
            token = _LINK_ONLY.set(getattr(self, "_srcgrad_link_only", False))
            try:
                return original(self, sig)
            finally:
                _LINK_ONLY.reset(token)
        return compile

    def _get_jit_decorator(self):
        jitter = jit_decorator(self)

        def flagging(*args, **kwargs):
            decorate = jitter(*args, **kwargs)

            def flagged(pyfunc):
                disp = decorate(pyfunc)
                if isinstance(disp, dispatcher.Dispatcher):
                    disp._srcgrad_link_only = True
                return disp
            return flagged
        return flagging

    def get_executable_(self, library, fndesc, env):
        if not (_LINK_ONLY.get() and isinstance(library, codegen.JITCodeLibrary)):
            return get_executable(self, library, fndesc, env)
        from numba import _dynfunc

        library._srcgrad_deferred = True
        _define_env(library.codegen, self.get_env_name(fndesc), env)
        doc = f"compiled wrapper for {fndesc.qualname!r} (linked into its callers only)"
        return _dynfunc.make_function(fndesc.lookup_module(), fndesc.qualname.split(".")[-1],
                                      doc, _stub_address(), env, (library,))

    def _finalize_final_module(self):
        if not getattr(self, "_srcgrad_deferred", False) or _recursive(self._final_module):
            self._srcgrad_deferred = False
            return finalize_final(self)
        self._finalize_dynamic_globals()
        self._verify_declare_only_symbols()
        # (numba's object-code hooks find the library so: `_finalize_final_module`)
        self._final_module._CPUCodeLibrary__library = weakref.proxy(self)
        self._finalized = True

    def _optimize_final_module(self):
        if getattr(self, "_srcgrad_deferred", False) and _RAW:
            return
        return optimize_final(self)

    def get_pointer_to_function(self, name):
        self._ensure_finalized()
        if getattr(self, "_srcgrad_deferred", False):
            _emit(self)
        return get_pointer(self, name)

    def serialize_using_object_code(self):
        self._ensure_finalized()
        if getattr(self, "_srcgrad_deferred", False):
            _emit(self)
        return serialize(self)

    dispatcher.Dispatcher.compile = flagging_compile(compile_)
    for lifted in (dispatcher.LiftedCode, dispatcher.LiftedLoop, dispatcher.LiftedWith,
                   dispatcher.ObjModeLiftedWith):
        if "compile" in vars(lifted):
            lifted.compile = flagging_compile(vars(lifted)["compile"])
    templates._OverloadFunctionTemplate._get_jit_decorator = _get_jit_decorator
    cpu.CPUContext.get_executable = get_executable_
    codegen.CPUCodeLibrary._finalize_final_module = _finalize_final_module
    codegen.CPUCodeLibrary._optimize_final_module = _optimize_final_module
    codegen.JITCodeLibrary.get_pointer_to_function = get_pointer_to_function
    codegen.CPUCodeLibrary.serialize_using_object_code = serialize_using_object_code


def _recursive(module) -> bool:
    from numba.core.codegen import RuntimeLinker

    return any(gv.name.startswith(RuntimeLinker.PREFIX) for gv in module.global_variables)


def _emit(library) -> None:
    """A deferred library added to the engine and emitted, as numba would have."""
    library._srcgrad_deferred = False
    cleanup = library._codegen._add_module(library._final_module)
    if cleanup:
        weakref.finalize(library, cleanup)
    library._finalize_specific()


def _define_env(cg, name: str, env) -> None:
    """The environment global `name` in the engine, pointing at `env` (numba's set_env),
    from a module of its own."""
    import llvmlite.binding as ll
    from llvmlite import ir
    from numba.core import cgutils

    module = cg._create_empty_module("srcgrad_env")
    gv = ir.GlobalVariable(module, cgutils.voidptr_t, name=name)
    gv.linkage = "common"
    gv.initializer = cgutils.get_null_value(gv.type.pointee)
    parsed = ll.parse_assembly(str(module))
    cg._engine.add_module(parsed)
    cg._engine.finalize_object()
    cg.set_env(name, env)
    _KEEP.append(parsed)


_KEEP: list = []   # the environments' modules (the engine holds their code)


def _stub_address() -> int:
    """The address of a numba entry point that raises RuntimeError (compiled once)."""
    if not _STUB:
        import numba

        def srcgrad_link_only():
            raise RuntimeError("srcgrad: a numba overload implementation compiled for "
                               "linking only was called from Python")
        stub = numba.njit(srcgrad_link_only)
        stub.compile(())
        cres = stub.overloads[()]
        _STUB.append((stub, cres.library.get_pointer_to_function(
            cres.fndesc.llvm_cpython_wrapper_name)))
    return _STUB[0][1]
