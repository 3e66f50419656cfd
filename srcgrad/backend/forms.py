"""forms: the two forms a generated module runs in, and the choice between them.

Every generated module has a Python form (`codegen.load`, no wait) and a compiled form
(`compile.jit_module`). `Forms` holds both for one module and answers each call with one:
`jit=False` the Python form, `jit=True` the compiled form, compiled on the call that needs
it (a compile failure is a `SrcgradError` naming the user's line); code with loops under
`jit="auto"` too (its Python form is 100-1000x slower). Where numba cannot type the code,
"auto" runs it as Python after one `JitFallbackWarning` naming the reason.

The tiers (`jit="auto"`, straight-line code): per argument types, the Python form answers
calls while `background` compiles the module for those types (`_Tier`, the job submitted
once the first call has its result: the worker's start would slow it); once compiled,
the next calls alternate between the compiled form and the Python form, each timed, and
the faster serves from then on. No call waits on a compile it did not ask for, and no
call runs twice. With `SRCGRAD_BACKGROUND=0`, the second call compiles in the foreground
and times both forms on its arguments (`race`; code that prints or logs is not timed, a
try would report twice: it runs compiled). `eager()` makes calls compile in the
foreground (`Transform.compile`), and the second Python form's loops too.

Once both forms are loaded, the Python form's kernels (`runtime.elementwise`) and matrix
products (helpers with the `looped` fact) run their compiled loops too: that is decided
here, and nowhere else. In the background, those loops are compiled on a second Python
form, by one run of it in the background thread, so the form the caller runs never
compiles (code that reports is not run there: its form keeps NumPy's operations).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import re
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import codegen, runtime
from ..compiler import Generated
from ..errors import NONSCALAR_MARKER, JitFallbackWarning, NonScalarOutput, SrcgradError
from ..rules import fact
from . import background
from .compile import REREADS, compile_for, drop_unreadable_cache, jit_module, note_compile
from .locations import (
    compiler_failure,
    first_line,
    generated_location,
    in_numba_compiler,
    note_user_line,
)

_EAGER = threading.local()
# numba's ValueError where its eig of a real matrix meets complex eigenvalues
_DOMAIN_CHANGE = "must not cause a domain change"


@contextlib.contextmanager
def eager():
    """Calls in this block (in this thread) compile in the foreground, as `jit=True`
    does, where `jit="auto"` would compile in the background or not yet."""
    before = getattr(_EAGER, "on", False)
    _EAGER.on = True
    try:
        yield
    finally:
        _EAGER.on = before


class _Tier:
    """One argument-type key of one entry point under the tiers: "compiling" (the Python
    form answers), "ready" (the forms take turns, timed), "failed" (the compile's error is
    `error`), then "python" or "compiled" for good."""

    TIMED = 3   # calls of each form timed before the choice

    def __init__(self):
        self.state = "compiling"
        self.generation = background.generation()
        self.error: BaseException | None = None
        self.loops: dict[str, Any] | None = None   # the Python form with compiled loops
        self.started = {"python": 0, "compiled": 0}
        self.best = {"python": float("inf"), "compiled": float("inf")}
        self.timed = {"python": 0, "compiled": 0}

    def next_form(self) -> str:
        if self.state != "ready":
            return self.state if self.state != "compiling" else "python"
        form = min(self.started, key=lambda f: (self.started[f], f != "compiled"))
        self.started[form] += 1
        return form

    def record(self, form: str, seconds: float) -> None:
        if self.state != "ready":
            return
        self.best[form] = min(self.best[form], seconds)
        self.timed[form] += 1
        if min(self.timed.values()) >= self.TIMED:
            self.state = min(self.best, key=self.best.get)


class Forms:
    """The Python and compiled forms of one generated module (`gen`), for the user's
    function `fun`; `nonscalar(reason)` makes the error of a gradient of an array (or
    a complex) result."""

    def __init__(self, gen: Generated, jit: bool | str, fun: Callable,
                 nonscalar: Callable[[str], NonScalarOutput]):
        self.gen, self.jit, self.fun, self.nonscalar = gen, jit, fun, nonscalar
        self.stem = getattr(fun, "__name__", "f").replace("<", "").replace(">", "")
        self.fallback: str | None = None   # why numba could not compile it ("auto")
        self._py: dict[str, Any] | None = None
        self._compiled: dict[str, Any] | None = None
        self._ran_compiled = False
        self._choice: dict[tuple, str] = {}
        self._tiers: dict[tuple, _Tier] = {}
        self._lock = threading.Lock()

    @property
    def compiled(self) -> bool:
        """Whether the compiled form is loaded and has compiled for some arguments."""
        return self._compiled is not None and (
            self._ran_compiled or any(t.state in ("ready", "compiled", "python")
                                      for t in list(self._tiers.values())))

    @property
    def settled(self) -> bool:
        """Whether no background compile of this module is pending."""
        return all(t.state != "compiling" for t in list(self._tiers.values()))

    @property
    def label(self) -> str:
        """The function in log messages: "the gradient code of f"."""
        return f"the gradient code of {self.fun.__qualname__}"

    def functions(self, jit: bool) -> dict[str, Any]:
        """The module's functions by name, compiled or as Python (loaded on first use)."""
        with self._lock:
            if not jit:
                if self._py is None:
                    module = codegen.load(self.gen.source, self.gen.namespace.globals(),
                                          self.stem, "py")
                    self.gen.register(module)
                    self._py = {n: getattr(module, n) for n in self.gen.functions}
                    self._loops_compiled()
                return self._py
            if self._compiled is None:
                self._compiled = jit_module(self.gen, self.stem)
                self._loops_compiled()
            return self._compiled

    def _loops_compiled(self) -> None:
        """Once the module is compiled, its Python form may compile loops too: its
        kernels' (`runtime.elementwise`) and the matrix products' (`looped` helpers).
        jit="auto" races that form against the compiled one. (In the background, a
        second Python form gets them instead: `_looped_form`.)"""
        if self._py is not None and self._compiled is not None and not self._tiered():
            _run_loops(self._py, self.gen)

    def _tiered(self) -> bool:
        return self.jit == "auto" and not self.gen.has_loops and background.enabled()

    def call(self, role: str, args: tuple) -> Any:
        """Run the entry point for `role` on `args` in the form chosen for them."""
        name = self.gen.entries[role]
        if self.jit is False or self.fallback is not None:
            return self.run_python(name, args)
        if self.jit is True or self.gen.has_loops:
            return self.run_compiled(name, args)
        key = (role, _type_key(args))
        if getattr(_EAGER, "on", False):
            return self._compile_now(key, name, args)
        if background.enabled():
            return self._tiered_call(key, name, args)
        choice = self._choice.get(key)
        if choice is None:
            # straight-line code runs as Python on its first call (no compile wait), and
            # is compiled and raced against Python on its second
            self._choice[key] = choice = "first"
            return self.run_python(name, args)
        if choice == "python":
            return self.run_python(name, args)
        result = self.run_compiled(name, args)
        if choice == "first" and self.fallback is None:
            self._choice[key] = self.race(name, args)
        return result

    # ---- the tiers ----
    def _tiered_call(self, key: tuple, name: str, args: tuple) -> Any:
        with self._lock:
            tier = self._tiers.get(key)
            new = tier is None or tier.state == "compiling" and \
                tier.generation != background.generation()
            if new:
                self._tiers[key] = tier = _Tier()   # (first call; or the fork lost the job)
            form = tier.next_form()
        if form == "failed":
            return self._failed(tier.error, name, args, stacklevel=6)
        if form == "compiled":
            fn = self._compiled[name]
        else:
            fn = (tier.loops or self.functions(jit=False))[name]
        start = time.perf_counter()
        try:
            result = self._run(fn, form, name, args)
            seconds = time.perf_counter() - start
        finally:
            # (submitted after the first call: the worker's start, numba's import, would
            # hold the GIL while the call that starts it waits for its result)
            if new and not background.submit(functools.partial(self._build, tier, name, args)):
                with self._lock:
                    tier.state = "python"   # (the interpreter is exiting)
        with self._lock:
            tier.record(form, seconds)
        return result

    def _run(self, fn, form: str, name: str, args: tuple) -> Any:
        if form != "compiled":
            return self._python(fn, args)
        try:
            return fn(*args)
        except SrcgradError:
            raise
        except Exception as exc:
            return self._failed(exc, name, args, stacklevel=7)

    def _build(self, tier: _Tier, name: str, args: tuple) -> None:
        """The background job: compile the module for `args`' types, and give a second
        Python form its compiled loops by one run on `args`."""
        try:
            compiled = self.functions(jit=True)
            compile_for(compiled[name], args, self.label, blocking=False)
            looped = self._looped_form(name, args)
        except Exception as exc:
            with self._lock:
                if tier.state == "compiling":   # (not compiled meanwhile by `eager`)
                    tier.state, tier.error = "failed", exc
            return
        with self._lock:
            tier.loops = looped
            if tier.state == "compiling":
                tier.state = "ready"

    def _looped_form(self, name: str, args: tuple) -> dict[str, Any] | None:
        """A second Python form whose kernels and matrix products run compiled loops,
        which one run on `args` has compiled; None where there are none to compile, where
        the code reports (the run would print), or where the run fails."""
        if self.gen.reporting:
            return None
        module = codegen.load(self.gen.source, self.gen.namespace.globals(), self.stem,
                              "loops")
        functions = {n: getattr(module, n) for n in self.gen.functions}
        if not _run_loops(functions, self.gen):
            return None
        try:
            functions[name](*args)
        except Exception:
            return None
        return functions

    def _compile_now(self, key: tuple, name: str, args: tuple) -> Any:
        """`eager()`: compile for `args` in the foreground, then answer with the compiled
        form; under the tiers, the forms then take turns as when a background compile
        is done."""
        fn = self.functions(jit=True)[name]
        try:
            compile_for(fn, args, self.label, blocking=True)
        except SrcgradError:
            raise
        except Exception as exc:
            return self._failed(exc, name, args, stacklevel=6)
        if self._tiered():
            # and the Python form's kernels and matrix products, compiled by one run (kept
            # on disk: a later process's background job reads them; `_looped_form`)
            tier = self._tiers.get(key)
            looped = tier.loops if tier is not None and tier.loops is not None else \
                self._looped_form(name, args)
            with self._lock:
                tier = self._tiers.setdefault(key, _Tier())
                if tier.state in ("compiling", "failed"):
                    tier.state = "ready"
                tier.loops = tier.loops or looped
        else:
            self._choice[key] = "compiled"
        return self.run_compiled(name, args)

    def run_compiled(self, name: str, args: tuple, rereads: int = REREADS) -> Any:
        fn = (self._compiled or self.functions(jit=True))[name]   # (loaded: no lock)
        known, start = len(fn.overloads), time.perf_counter()
        try:
            result = fn(*args)
        except SrcgradError:
            raise
        except Exception as exc:
            if rereads and drop_unreadable_cache(exc):
                return self.run_compiled(name, args, rereads - 1)
            return self._failed(exc, name, args, stacklevel=6 + REREADS - rereads)
        if len(fn.overloads) > known:
            note_compile(fn, known, self.label, time.perf_counter() - start)
        self._ran_compiled = True
        return result

    def _failed(self, exc: BaseException, name: str, args: tuple, stacklevel: int) -> Any:
        """After the compiled form failed with `exc`: raise it if the compiled code raised
        it as it ran; else numba could not compile it, and (`jit="auto"`) run the Python
        form after one warning, or (`jit=True`) raise a `SrcgradError` naming the line."""
        from numba.core.errors import NumbaError

        # numba's compiler fails with its own errors, and with bare ones of its own
        # code (an AssertionError for a 2-D boolean mask): both are compile failures
        # and where numba's form of a function cannot compute what NumPy's does (a tape
        # entry changing shape; eig of a matrix with complex eigenvalues, which numba's
        # gives real only before NumPy 2.5), the compiled form stops and the Python form serves
        shape_changed = str(exc) == runtime.TAPE_SHAPE_CHANGED or \
            isinstance(exc, ValueError) and _DOMAIN_CHANGE in str(exc)
        if not isinstance(exc, NumbaError) and not in_numba_compiler(exc) and \
                not shape_changed:
            raise exc  # an error of the compiled code as it ran
        reason = str(exc) if isinstance(exc, NumbaError) or shape_changed else \
            compiler_failure(exc)
        hint = (" (numba's np.linalg.eig and eigvals of a real matrix give real "
                "eigenvalues only before NumPy 2.5: jit='auto' runs such a matrix as "
                "Python)") if _DOMAIN_CHANGE in reason else ""
        if re.search(r"Cannot unify (\w+ and array\(|array\(\S+ and \w+ )", reason):
            hint = (" (a variable that is a number, then an array: start it as an array "
                    "of the shape it will have, e.g. np.ones_like(x))")
        if NONSCALAR_MARKER in reason:
            raise self.nonscalar(reason) from None
        fn = self.functions(jit=True)[name]
        where = generated_location(exc, fn, inspect.unwrap(self.fun).__code__.co_filename)
        if self.jit is True:
            self.run_python(name, args)  # a user error there names its line; else:
            raise SrcgradError(f"numba cannot compile the gradient of "
                               f"{self.fun.__qualname__}: {first_line(reason)}{hint}",
                               **where) from None
        line = f" (at {os.path.basename(where['filename'])}:{where['lineno']})" \
            if where else ""
        with self._lock:
            told, self.fallback = self.fallback is not None, first_line(reason) + hint + line
        if not told:
            warnings.warn(f"srcgrad: running the gradient of {self.fun.__qualname__} as "
                          f"Python; numba cannot compile it: {self.fallback}",
                          JitFallbackWarning, stacklevel=stacklevel)
        return self.run_python(name, args)

    def run_python(self, name: str, args: tuple) -> Any:
        return self._python(self.functions(jit=False)[name], args)

    def _python(self, fn, args: tuple) -> Any:
        try:
            return fn(*args)
        except NonScalarOutput as exc:  # raised by `seed`, which cannot know the user's line
            raise self.nonscalar(str(exc)) from None
        except Exception as exc:
            note_user_line(exc, fn, inspect.unwrap(self.fun).__code__.co_filename)
            raise

    def race(self, name: str, args: tuple) -> str:
        """`jit="auto"`: which form runs this code faster for these argument types.

        On vectorised NumPy code numba is often slower than NumPy itself (its
        transcendental functions are scalar loops, NumPy's use SIMD), so straight-line
        code times both once per argument types, where a try is cheap. Code with loops is
        where Python loses by orders of magnitude, so it is never tried.
        """
        if self.gen.has_loops or self.gen.reporting:   # (a try would print again)
            return "compiled"
        compiled = self.functions(jit=True)[name]
        python = self.functions(jit=False)[name]
        best = {"compiled": float("inf"), "python": float("inf")}
        for _ in range(5):  # interleaved, best of five: a busy machine slows both alike
            for label, fn in (("compiled", compiled), ("python", python)):
                start = time.perf_counter()
                fn(*args)
                best[label] = min(best[label], time.perf_counter() - start)
        return min(best, key=best.get)


def _run_loops(functions: dict[str, Any], gen: Generated) -> bool:
    """Make a Python form's kernels and matrix products run their compiled loops; whether
    it has any."""
    for name in gen.kernels:
        functions[name].loops = True
    namespace = functions[gen.functions[0]].__globals__
    # (srcgrad's helpers only: a fact of a foreign callable, a dispatcher or a NumPy
    # function, makes the table load SciPy's records, importing scipy.stats: seconds)
    looped = [name for name, value in namespace.items() if inspect.isfunction(value)
              and value.__module__.startswith("srcgrad.") and fact(value, "looped")]
    for name in looped:
        namespace[name] = functools.partial(namespace[name], loops=True)
    return bool(gen.kernels or looped)


def _type_key(args: tuple) -> tuple:
    return tuple((np.ndarray, a.dtype, a.ndim) if type(a) is np.ndarray else
                 (type(a), getattr(a, "dtype", None), np.ndim(a)) for a in args)
