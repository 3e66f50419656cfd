"""forms: the two forms a generated module runs in, and the choice between them.

Every generated module has a Python form (`codegen.load`, no wait) and a compiled form
(`compile.jit_module`). `Forms` holds both for one module and answers each call with one:
`jit=False` the Python form, `jit=True` the compiled form (a compile failure is a
`SrcgradError` naming the user's line), `jit="auto"` straight-line code as Python on its
first call, then compiled and timed against Python once per argument types (`race`;
code that prints or logs is not timed, a try would report twice: it runs compiled); code
with loops compiled at once. Where numba cannot type the code, "auto" runs it as Python
after one `JitFallbackWarning` naming the reason.

Once both forms are loaded, the Python form's kernels (`runtime.elementwise`) and matrix
products (helpers with the `looped` fact) run their compiled loops too: that is decided
here, when the compiled form has loaded, and nowhere else.
"""

from __future__ import annotations

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
from .compile import jit_module
from .locations import (
    compiler_failure,
    first_line,
    generated_location,
    in_numba_compiler,
    note_user_line,
)


class Forms:
    """The Python and compiled forms of one generated module (`gen`), for the user's
    function `fun`; `nonscalar()` makes the error of a gradient of an array result."""

    def __init__(self, gen: Generated, jit: bool | str, fun: Callable,
                 nonscalar: Callable[[], NonScalarOutput]):
        self.gen, self.jit, self.fun, self.nonscalar = gen, jit, fun, nonscalar
        self.stem = getattr(fun, "__name__", "f").replace("<", "").replace(">", "")
        self.fallback: str | None = None   # why numba could not compile it ("auto")
        self._py: dict[str, Any] | None = None
        self._compiled: dict[str, Any] | None = None
        self._choice: dict[tuple, str] = {}
        self._lock = threading.Lock()

    @property
    def compiled(self) -> bool:
        """Whether the compiled form is loaded."""
        return self._compiled is not None

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
        jit="auto" races that form against the compiled one."""
        if self._py is not None and self._compiled is not None:
            for name in self.gen.kernels:
                self._py[name].loops = True
            namespace = self._py[self.gen.functions[0]].__globals__
            for name, value in list(namespace.items()):
                if fact(value, "looped"):
                    namespace[name] = functools.partial(value, loops=True)

    def call(self, role: str, args: tuple) -> Any:
        """Run the entry point for `role` on `args` in the form chosen for them."""
        name = self.gen.entries[role]
        if self.jit is False or self.fallback is not None:
            return self.run_python(name, args)
        if self.jit is True:
            return self.run_compiled(name, args)
        key = (role, _type_key(args))
        choice = self._choice.get(key)
        if choice is None and not self.gen.has_loops:
            # tiered: straight-line code runs as Python on its first call (no compile
            # wait), and is compiled and raced against Python on its second
            self._choice[key] = choice = "first"
            return self.run_python(name, args)
        if choice == "python":
            return self.run_python(name, args)
        result = self.run_compiled(name, args)
        if choice in (None, "first") and self.fallback is None:
            self._choice[key] = self.race(name, args)
        return result

    def run_compiled(self, name: str, args: tuple) -> Any:
        from numba.core.errors import NumbaError
        fn = self.functions(jit=True)[name]
        try:
            return fn(*args)
        except SrcgradError:
            raise
        except Exception as exc:
            # numba's compiler fails with its own errors, and with bare ones of its own
            # code (an AssertionError for a 2-D boolean mask): both are compile failures
            shape_changed = str(exc) == runtime.TAPE_SHAPE_CHANGED
            if not isinstance(exc, NumbaError) and not in_numba_compiler(exc) and \
                    not shape_changed:
                raise  # an error of the compiled code as it ran
            reason = str(exc) if isinstance(exc, NumbaError) or shape_changed else \
                compiler_failure(exc)
            hint = ""
            if re.search(r"Cannot unify (\w+ and array\(|array\(\S+ and \w+ )", reason):
                hint = (" (a variable that is a number, then an array: start it as an array "
                        "of the shape it will have, e.g. np.ones_like(x))")
            if NONSCALAR_MARKER in reason:
                raise self.nonscalar() from None
            where = generated_location(exc, fn, inspect.unwrap(self.fun).__code__.co_filename)
            if self.jit is True:
                self.run_python(name, args)  # a user error there names its line; else:
                raise SrcgradError(f"numba cannot compile the gradient of "
                                   f"{self.fun.__qualname__}: {first_line(reason)}{hint}",
                                   **where) from None
            line = f" (at {os.path.basename(where['filename'])}:{where['lineno']})" \
                if where else ""
            self.fallback = first_line(reason) + hint + line
            warnings.warn(f"srcgrad: running the gradient of {self.fun.__qualname__} as "
                          f"Python; numba cannot compile it: {self.fallback}",
                          JitFallbackWarning, stacklevel=5)
            return self.run_python(name, args)

    def run_python(self, name: str, args: tuple) -> Any:
        fn = self.functions(jit=False)[name]
        try:
            return fn(*args)
        except NonScalarOutput:  # raised by `seed`, which cannot know the user's line
            raise self.nonscalar() from None
        except Exception as exc:
            if not isinstance(exc, SrcgradError):
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


def _type_key(args: tuple) -> tuple:
    return tuple((np.ndarray, a.dtype, a.ndim) if type(a) is np.ndarray else
                 (type(a), getattr(a, "dtype", None), np.ndim(a)) for a in args)
