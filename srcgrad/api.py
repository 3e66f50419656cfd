"""api: the transforms users call (`grad`, `value_and_grad`, `vjp`), options and caches.

A transform returns a `Transform`: callable like the gradient it denotes, with
`functools.wraps` metadata, `.source` (the generated module), `.py_func` (the generated
entry point as plain Python) and `.fun` (the original). Code is generated on first use
(first call or `.source`), so a function may refer to helpers defined after it.

Execution: `jit=True` compiles the generated code with numba (`cache=True`, so a second
process loads machine code from disk); `jit=False` runs it as Python; `jit="auto"`
runs straight-line code as Python on its first call, then compiles it and keeps whichever
form is faster for the argument types (see `_race`); code with loops is compiled at once.
Where numba cannot type the code, it runs as Python after one `JitFallbackWarning` naming
the reason. `SRCGRAD_DISABLE_JIT=1` forces `jit=False`.
"""

from __future__ import annotations

import functools
import inspect
import linecache
import os
import re
import sys
import threading
import time
import types
import warnings
import weakref
from typing import Any

import gast
import numpy as np

from . import codegen, runtime
from .compiler import Generated, calls_itself, generate, generate_grad_of, generate_jvp
from .errors import (
    NONSCALAR_MARKER,
    JitFallbackWarning,
    NonScalarOutput,
    SrcgradError,
    WrtError,
)
from .frontend.parse import check_function
from .rules import fact


def _jit_disabled() -> bool:
    return os.environ.get("SRCGRAD_DISABLE_JIT", "").strip() not in ("", "0")


class Transform:
    """A differentiated function; see `grad`, `value_and_grad`, `vjp`."""

    srcgrad_transform = True

    def __init__(self, fun, kind: str, wrt, jit, static, unroll, checkpoint, constants=None):
        if jit not in ("auto", True, False):
            raise SrcgradError(f"jit must be 'auto', True or False, not {jit!r}")
        if checkpoint is not None:
            raise SrcgradError("checkpoint= is not supported yet: a loop's tape keeps every "
                               "iteration's saved values")
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.inner = fun if isinstance(fun, Transform) else None
        if self.inner is not None and kind in ("grad", "value_and_grad") \
                and self.inner.kind != "grad":
            raise SrcgradError(f"grad needs a scalar result; {self.inner!r} returns a "
                               f"tuple or an array (use jacobian)")
        if self.inner is not None and static:
            raise SrcgradError(f"{kind} of a transform (here {self.inner!r}) takes no "
                               f"static=")
        if self.inner is not None and kind == "vjp" and self.inner.kind != "grad":
            raise SrcgradError(f"vjp of a transform differentiates a gradient (grad); "
                               f"{self.inner!r} is not one: use jvp or jacobian")
        self.kind = kind
        self.jit = False if _jit_disabled() else jit
        self.unroll = bool(unroll)
        self.constants = dict(constants or {})
        self._signature = _signature(fun)
        self._params = list(self._signature.parameters)
        self._many = isinstance(wrt, (tuple, list))
        self.wrt = [_param_name(w, self._params, fun) for w in (wrt if self._many else [wrt])]
        for name in self.wrt:
            if kind in ("jvp", "hvp") and name not in self._params:
                raise WrtError(f"wrt={name!r}: forward mode differentiates with respect to "
                               f"parameters only ({', '.join(self._params)})")
        static = static if isinstance(static, (tuple, list)) else (static,)
        self.static = [_param_name(w, self._params, fun, "static") for w in static]
        for name in self.static:
            if name in self.wrt:
                raise WrtError(f"{name!r} cannot be both static and differentiated")
        # a function calling itself is specialised on its int arguments (compiler._specialize)
        self._recursive = not (self.static or self.constants or self.inner) \
            and calls_itself(fun)
        self._options = (kind, wrt, jit, unroll)
        self._wrt_option = wrt
        self._specialized: dict[tuple, Transform] = {}
        self._generated: Generated | None = None
        self._py: dict[str, Any] | None = None
        self._compiled: dict[str, Any] | None = None
        self._fallback: str | None = None
        self._choice: dict[tuple, str] = {}
        self._lock = threading.Lock()
        self._transposing = bool(self.inner) and kind == "vjp"

    @functools.cached_property
    def _transposed(self) -> Transform:
        """The pullback of vjp(grad(g, wrt=a), wrt=b): u -> (d grad_a g / db)^T u. Where
        grad_a is g's true gradient, the Hessian is symmetric and that is the derivative
        of grad_b g along u in a: one jvp. Where the user's rules made grad_a (`custom`),
        it is not: then the jvp of grad_a along each entry of b gives J's columns."""
        inner = self.inner
        if inner.custom:
            return Transform(inner, "jvp", self._wrt_option, self.jit, (), self.unroll, None)
        grad_b = Transform(inner.fun, "grad", self._wrt_option, self.jit, (), self.unroll,
                           None)
        return Transform(grad_b, "jvp", inner._wrt_option, self.jit, (), self.unroll, None)

    @property
    def custom(self) -> bool:
        """Whether a gradient the user wrote (a rule, a grad_of block) is part of this."""
        return self.generated.custom or self.inner is not None and self.inner.custom

    # ---- generated code ----
    @property
    def generated(self) -> Generated:
        with self._lock:
            if self._generated is None:
                self._generated = self._generate()
        return self._generated

    def _generate(self) -> Generated:
        if self._transposing:  # the pullback's code; the value is the inner's
            return self._transposed.generated
        if self.kind == "hvp":  # forward over reverse: the jvp of the gradient's code
            inner = Transform(self.fun, "grad", self._wrt_option, self.jit, (), self.unroll,
                              None, self.constants)
            return generate_jvp(inner.entry_function(), self.wrt, self._many,
                                only=inner.projection)
        if self.kind == "jvp":
            fun = self.inner.entry_function() if self.inner else self.fun
            return generate_jvp(fun, self.wrt, self._many, self.constants, self.unroll)
        if self.inner is not None:
            return generate_grad_of(self.inner.entry_function(), self.inner.projection,
                                    self.inner.label, self.wrt, self._many)
        kinds = ("vjp",) if self.kind == "vjp" else ("grad",)
        return generate(self.fun, self.wrt, kinds, self._many, self.constants, self.unroll,
                        value=self.kind != "grad")

    @property
    def role(self) -> str:
        """The generated entry point that computes this transform."""
        return {"vjp": "backward", "jvp": "jvp", "hvp": "jvp"}.get(self.kind, "grad")

    @property
    def projection(self) -> tuple[int, ...]:
        """Where in what the entry point returns this transform's result is (a `grad`
        of a transform returns the value too, to check that it is a scalar)."""
        return (1,) if self.kind == "grad" and self.inner is not None else ()

    def nested_entry(self):
        """The generated entry point that a function being differentiated calls in this
        transform's place (returning what the transform returns), or None where there is
        none: only `grad` and `value_and_grad` of a function, without `static` (or the
        int arguments a function that calls itself is specialised on)."""
        if self.kind not in ("grad", "value_and_grad") or self.inner is not None or \
                self.static or self._recursive:
            return None
        entry = self.entry_function()
        _NESTED[entry] = self   # compiled, it is this transform's compiled entry
        return entry

    def entry_function(self):
        """The generated entry point as plain Python (what a transform of this one reads)."""
        return self._functions(jit=False)[self.generated.entries[self.role]]

    @property
    def source(self) -> str:
        """The generated forward and adjoint code, as one module."""
        return self.generated.source

    @property
    def py_func(self):
        """The generated entry point as plain (not compiled) Python."""
        return self.entry_function()

    def _functions(self, jit: bool) -> dict[str, Any]:
        gen = self.generated
        with self._lock:
            if not jit:
                if self._py is None:
                    module = codegen.load(gen.source, gen.namespace.globals(),
                                          _stem(self.fun), "py")
                    self._py = {n: getattr(module, n) for n in gen.functions}
                    self._kernels_compiled(gen)
                return self._py
            if self._compiled is None:
                self._compiled = _jit_module(gen, _stem(self.fun))
                self._kernels_compiled(gen)
            return self._compiled

    def _kernels_compiled(self, gen: Generated) -> None:
        """Once the module is compiled, its Python form may compile loops too: its
        kernels' (`runtime.elementwise`) and the matrix products' (`looped` helpers).
        jit="auto" races that form against the compiled one."""
        if self._py is not None and self._compiled is not None:
            for name in gen.kernels:
                self._py[name].loops = True
            namespace = self._py[gen.functions[0]].__globals__
            for name, value in list(namespace.items()):
                if fact(value, "looped"):
                    namespace[name] = functools.partial(value, loops=True)

    def _call(self, role: str, args: tuple) -> Any:
        name = self.generated.entries[role]
        if self.jit is False or self._fallback is not None:
            return self._run_python(name, args)
        if self.jit is True:
            return self._run_compiled(name, args)
        key = (role, _type_key(args))
        choice = self._choice.get(key)
        if choice is None and not self.generated.has_loops:
            # tiered: straight-line code runs as Python on its first call (no compile
            # wait), and is compiled and raced against Python on its second
            self._choice[key] = choice = "first"
            return self._run_python(name, args)
        if choice == "python":
            return self._run_python(name, args)
        result = self._run_compiled(name, args)
        if choice in (None, "first") and self._fallback is None:
            self._choice[key] = self._race(name, args)
        return result

    def _run_compiled(self, name: str, args: tuple) -> Any:
        from numba.core.errors import NumbaError
        fn = self._functions(jit=True)[name]
        try:
            return fn(*args)
        except SrcgradError:
            raise
        except Exception as exc:
            # numba's compiler fails with its own errors, and with bare ones of its own
            # code (an AssertionError for a 2-D boolean mask): both are compile failures
            shape_changed = str(exc) == runtime.TAPE_SHAPE_CHANGED
            if not isinstance(exc, NumbaError) and not _in_numba_compiler(exc) and \
                    not shape_changed:
                raise  # an error of the compiled code as it ran
            reason = str(exc) if isinstance(exc, NumbaError) or shape_changed else \
                _compiler_failure(exc)
            hint = ""
            if re.search(r"Cannot unify (\w+ and array\(|array\(\S+ and \w+ )", reason):
                hint = (" (a variable that is a number, then an array: start it as an array "
                        "of the shape it will have, e.g. np.ones_like(x))")
            if NONSCALAR_MARKER in reason:
                raise self._nonscalar() from None
            where = _generated_location(exc, fn, inspect.unwrap(self.fun).__code__.co_filename)
            if self.jit is True:
                self._run_python(name, args)  # a user error there names its line; else:
                raise SrcgradError(f"numba cannot compile the gradient of "
                                   f"{self.fun.__qualname__}: {_first_line(reason)}{hint}",
                                   **where) from None
            line = f" (at {os.path.basename(where['filename'])}:{where['lineno']})" \
                if where else ""
            self._fallback = _first_line(reason) + hint + line
            warnings.warn(f"srcgrad: running the gradient of {self.fun.__qualname__} as "
                          f"Python; numba cannot compile it: {self._fallback}",
                          JitFallbackWarning, stacklevel=4)
            return self._run_python(name, args)

    def _run_python(self, name: str, args: tuple) -> Any:
        fn = self._functions(jit=False)[name]
        try:
            return fn(*args)
        except NonScalarOutput:  # raised by `seed`, which cannot know the user's line
            raise self._nonscalar() from None
        except Exception as exc:
            if not isinstance(exc, SrcgradError):
                _note_user_line(exc, fn, inspect.unwrap(self.fun).__code__.co_filename)
            raise

    def _race(self, name: str, args: tuple) -> str:
        """`jit="auto"`: which form runs this code faster for these argument types.

        On vectorised NumPy code numba is often slower than NumPy itself (its
        transcendental functions are scalar loops, NumPy's use SIMD), so straight-line
        code times both once per argument types, where a try is cheap. Code with loops is
        where Python loses by orders of magnitude, so it is never tried.
        """
        if self.generated.has_loops:
            return "compiled"
        compiled = self._functions(jit=True)[name]
        python = self._functions(jit=False)[name]
        best = {"compiled": float("inf"), "python": float("inf")}
        for _ in range(5):  # interleaved, best of five: a busy machine slows both alike
            for label, fn in (("compiled", compiled), ("python", python)):
                start = time.perf_counter()
                fn(*args)
                best[label] = min(best[label], time.perf_counter() - start)
        return min(best, key=best.get)

    def _nonscalar(self) -> NonScalarOutput:
        if self.inner is not None:
            return NonScalarOutput(f"grad needs a scalar result, but {self.inner!r} returns "
                                   f"an array (use jacobian, or hessian of the function)")
        filename, lineno = self.generated.result_line
        return NonScalarOutput(f"grad needs a scalar result, but {self.fun.__qualname__} "
                               f"returns an array; use vjp with a cotangent",
                               filename=filename, lineno=lineno)

    # ---- calling ----
    def _args(self, args, kwargs) -> tuple:
        """The arguments of the code this transform differentiates, checked: f's, and for
        a transform of a jvp or hvp, that one's tangents (its last argument) after them,
        one per wrt argument, as its generated code takes them."""
        if self.inner is not None and self.inner.kind in ("jvp", "hvp"):
            if not args or not kwargs and len(args) != len(self._params) + 1:
                raise TypeError(f"{self!r} takes {self.fun.__qualname__}'s arguments "
                                f"({', '.join(self._params)}), then the tangents of "
                                f"{self.inner!r}, then its own")
            values = self.inner._args(args[:-1], kwargs)
            for name in self.wrt:
                _check_differentiable(name, values[self._params.index(name)], self.fun)
            return values + self.inner._tangents(values, args[-1])
        if not kwargs and len(args) == len(self._params):
            for name in self.wrt:
                if name in self._params:
                    _check_differentiable(name, args[self._params.index(name)], self.fun)
            return args
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{self.fun.__qualname__}: {exc}") from None
        bound.apply_defaults()
        values = tuple(bound.arguments[p] for p in self._params)
        for name in self.wrt:
            if name in self._params:
                _check_differentiable(name, bound.arguments[name], self.fun)
        return values

    def specialized(self, values: tuple) -> Transform:
        """The transform compiled for these values of the static arguments (of a function
        that calls itself: of its int arguments, which may set the recursion's depth)."""
        static = self.static or [p for p, v in zip(self._params, values, strict=True)
                                 if p not in self.wrt and isinstance(v, (int, np.integer))]
        constants = {n: values[self._params.index(n)] for n in static}
        try:
            key = tuple(constants.items())
            hash(key)
        except TypeError:
            raise SrcgradError(f"static arguments of {self.fun.__qualname__} must be "
                               f"hashable values (numbers, tuples): {constants!r}") from None
        if key not in self._specialized:
            kind, wrt, jit, unroll = self._options
            self._specialized[key] = Transform(self.fun, kind, wrt, jit, (), unroll, None,
                                               constants)
        return self._specialized[key]

    def __call__(self, *args, **kwargs):
        if self.kind in ("jvp", "hvp"):
            if not args:
                raise TypeError(f"{self!r} takes the arguments, then the tangents")
            return self._along(args[:-1], kwargs, args[-1])
        values = self._args(args, kwargs)
        if self.static or self._recursive:
            return self.specialized(values)(*values)
        if self._transposing:
            pullback = _Columns if self.inner.custom else _Transposed
            return self.inner(*values), pullback(self._transposed, values)
        if self.kind == "vjp":
            value, saved = self._call("forward", values)
            return value, _Pullback(self, saved)
        if self.kind == "grad" and self.inner is None:  # the generated code checks
            grads = self._call("grad", values)
        else:
            value, grads = self._call("grad", values)
            if np.ndim(value) != 0:
                raise self._nonscalar()
        grads = self._shaped(grads if self._many else (grads,), values)
        grads = grads if self._many else grads[0]
        return (_plain(value), grads) if self.kind == "value_and_grad" else grads

    def _shaped(self, grads: tuple, values: tuple) -> tuple:
        """Each gradient at its argument's shape. A parameter the function rebinds in a
        loop to a larger shape (`x = x * np.ones(3)` with a number x) has an adjoint at the
        shape the loop gave it, whose broadcast entries each carry a part of x's."""
        out = []
        for name, g in zip(self.wrt, grads, strict=True):
            x = values[self._params.index(name)] if name in self._params else g
            if np.shape(g) != np.shape(x) and np.ndim(g) >= np.ndim(x):
                g = runtime.unbroadcast(g, np.asarray(x))
            out.append(_plain(g))
        return tuple(out)

    def _along(self, args: tuple, kwargs: dict, tangents: Any) -> Any:
        """jvp: `(value, derivative along tangents)`; hvp: the Hessian times them."""
        values = self._args(args, kwargs)
        if self.static or self._recursive:
            return self.specialized(values)._along(values, {}, tangents)
        checked = self._tangents(values, tangents)
        if self.kind == "hvp":  # the entry returns the product only
            return _tree(_plain, self._call(self.role, values + checked))
        value, dvalue = self._call(self.role, values + checked)
        for k in self.inner.projection if self.inner else ():
            value, dvalue = value[k], dvalue[k]
        return _tree(_plain, value), _tree(_plain, dvalue)

    def _tangents(self, values: tuple, tangents: Any) -> tuple:
        """The tangents of a jvp or hvp call, one per wrt argument, checked against
        `values` (the arguments)."""
        given = tangents if self._many else (tangents,)
        if not isinstance(given, (tuple, list)) or len(given) != len(self.wrt):
            raise SrcgradError(f"{self!r} takes one tangent per wrt argument "
                               f"({', '.join(self.wrt)}), as a tuple if wrt is a tuple")
        return tuple(_tangent(name, values[self._params.index(name)], t, self.fun)
                     for name, t in zip(self.wrt, given, strict=True))

    @property
    def label(self) -> str:
        """What this transform computes, in words: "grad of f wrt x"."""
        of = self.inner.label if self.inner else self.fun.__qualname__
        return f"{self.kind} of {of} wrt {', '.join(self.wrt)}"

    def __repr__(self) -> str:
        return f"<srcgrad.{self.label}>"

    def __get__(self, obj, objtype=None):
        return self if obj is None else types.MethodType(self, obj)


class _Pullback:
    """`vjp`'s pullback: maps a cotangent of the result to gradients; callable many times."""

    def __init__(self, transform: Transform, saved: tuple):
        self._t = transform
        self._saved = saved

    def __call__(self, cotangent):
        return self._t._call("backward", tuple(self._saved) + (cotangent,))


class _Transposed:
    """The pullback of `vjp` of a gradient: a jvp of another gradient (`Transform._transposed`)."""

    def __init__(self, jvp: Transform, values: tuple):
        self._jvp, self._values = jvp, values

    def __call__(self, cotangent):
        return self._jvp(*self._values, cotangent)[1]


class _Columns:
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
            self._columns = [[self._jvp(*self._values, _direction(inputs, j, k, many))[1]
                              for k in range(x.size)] for j, x in enumerate(inputs)]
        grads = [_plain(np.array([_inner(c, cotangent) for c in cols]).reshape(x.shape))
                 for cols, x in zip(self._columns, self._inputs, strict=True)]
        return tuple(grads) if self._jvp._many else grads[0]


def _inner(a: Any, b: Any) -> float:
    """<a, b> for arrays, scalars, or tuples of them."""
    if isinstance(a, tuple):
        return sum(_inner(x, y) for x, y in zip(a, b, strict=True))
    return float(np.vdot(np.asarray(a, dtype=float), np.asarray(b, dtype=float)))


def _transform(kind: str):
    def make(fun=None, *, wrt=0, jit="auto", static=(), unroll=False, checkpoint=None):
        if fun is None:
            return lambda f: Transform(f, kind, wrt, jit, static, unroll, checkpoint)
        return Transform(fun, kind, wrt, jit, static, unroll, checkpoint)
    return make


grad = _transform("grad")
grad.__doc__ = """Gradient of a scalar-valued function with respect to `wrt`.

    `wrt` is a parameter position or name, or a tuple of them (then a tuple of gradients
    is returned). Usable as `@grad`, `@grad(wrt=...)` and `grad(f, wrt=...)`.

    >>> def f(x, y):
    ...     return x**2 + x*y + 3.0
    >>> grad(f, wrt=("x", "y"))(5.0, 3.0)
    (13.0, 5.0)
    """
value_and_grad = _transform("value_and_grad")
value_and_grad.__doc__ = """Like `grad`, but returns `(value, gradients)`."""
vjp = _transform("vjp")
vjp.__doc__ = """`vjp(f)(*args) -> (value, pullback)`; `pullback(cotangent) -> gradients`.

    The pullback keeps what the backward pass needs (a persistent tape), so it may be
    called many times, with any cotangent of the result's shape (the `grad_ys` seed of
    `tf.gradients`).
    """


jvp = _transform("jvp")
jvp.__doc__ = """Forward mode: `jvp(f)(*args, tangents) -> (value, derivative along tangents)`.

    `tangents` has the shape of the `wrt` argument (a tuple of them if `wrt` is a tuple).
    The generated code (`.source`) computes each value's tangent next to it, through the
    function's loops and branches.

    >>> def f(x, y):
    ...     return x**2 + x*y + 3.0
    >>> jvp(f, wrt=("x", "y"))(5.0, 3.0, (1.0, 0.0))
    (43.0, 13.0)
    """
hvp = _transform("hvp")
hvp.__doc__ = """Hessian-vector product `hvp(f)(*args, v) -> H v`, without forming H.

    Forward mode over the generated gradient (`.source` shows it): one gradient's cost
    a few times over, as `jax.jvp(jax.grad(f), ...)`.
    """


def hessian(fun=None, *, wrt=0, jit="auto", unroll=False):
    """The dense Hessian of scalar `f`: shape `x.shape + x.shape` (nested tuples of blocks
    for a tuple `wrt`), one `hvp` per entry of the `wrt` arguments."""
    if fun is None:
        return lambda f: hessian(f, wrt=wrt, jit=jit, unroll=unroll)
    return Dense(fun, "hessian", wrt, jit, unroll)


def jacobian(fun=None, *, wrt=0, jit="auto", unroll=False):
    """The Jacobian of `f`: shape `f(x).shape + x.shape` (a tuple for a tuple `wrt`).

    Built a column at a time with `jvp`, or a row at a time with the pullback of `vjp`,
    whichever takes fewer passes for the arguments given."""
    if fun is None:
        return lambda f: jacobian(f, wrt=wrt, jit=jit, unroll=unroll)
    return Dense(fun, "jacobian", wrt, jit, unroll)


class Dense:
    """`hessian` and `jacobian`: a dense derivative, one forward (or reverse) pass per
    column (row); `.source` shows the generated code the passes run."""

    def __init__(self, fun, kind: str, wrt, jit, unroll):
        functools.update_wrapper(self, fun)
        self.fun, self.kind, self._many = fun, kind, isinstance(wrt, (tuple, list))
        if kind == "hessian":
            self._forward = Transform(fun, "hvp", wrt, jit, (), unroll, None)
            self._reverse = None
        else:
            self._forward = Transform(fun, "jvp", wrt, jit, (), unroll, None)
            self._reverse = Transform(fun, "vjp", wrt, jit, (), unroll, None) \
                if not isinstance(fun, Transform) else None
        self.wrt = self._forward.wrt

    @property
    def source(self) -> str:
        """The generated code of the passes (forward mode; and reverse for a Jacobian)."""
        parts = [self._forward.source]
        if self._reverse is not None:
            parts.append(self._reverse.source)
        return "\n\n".join(parts)

    def __call__(self, *args, **kwargs):
        t = self._forward
        values = t._args(args, kwargs)
        inputs = [np.asarray(values[t._params.index(w)], dtype=float) for w in self.wrt]
        if self.kind == "jacobian" and self._reverse is not None:
            value, pullback = self._reverse(*values)
            if np.size(value) < sum(x.size for x in inputs):
                return self._rows(np.asarray(value), pullback, inputs)
        blocks = []  # blocks[j]: the derivative along each entry of input j
        for j, x in enumerate(inputs):
            columns = []
            for k in range(x.size):
                out = t(*values, _direction(inputs, j, k, self._many))
                columns.append(out[1] if self.kind == "jacobian" else out)
            blocks.append(columns)
        if self.kind == "jacobian":
            out = [_from_columns(cols, x) for cols, x in zip(blocks, inputs, strict=True)]
            return tuple(out) if self._many else out[0]
        # hessian: blocks[j][k] holds, per input i, d grad_i / d x_j[k]
        rows = []
        for i in range(len(inputs)):
            row = [_from_columns([c[i] if self._many else c for c in blocks[j]], inputs[j])
                   for j in range(len(inputs))]
            rows.append(tuple(row) if self._many else row[0])
        return tuple(rows) if self._many else rows[0]

    def _rows(self, value, pullback, inputs):
        rows = [pullback(_unit_like(value, k)) for k in range(value.size)]
        out = []
        for i, x in enumerate(inputs):
            stacked = np.array([np.asarray(r[i] if self._many else r, dtype=float)
                                for r in rows]).reshape(value.shape + x.shape)
            out.append(_plain(stacked))
        return tuple(out) if self._many else out[0]

    def __repr__(self) -> str:
        return f"<srcgrad.{self.kind} of {self.fun.__qualname__} wrt {', '.join(self.wrt)}>"


def _direction(inputs: list[np.ndarray], j: int, k: int, many: bool) -> Any:
    """The tangents of a jvp along entry k of input j (zero for the other inputs)."""
    tangents = [_unit_like(v, k) if i == j else np.zeros_like(v) for i, v in enumerate(inputs)]
    return tuple(tangents) if many else tangents[0]


def _unit_like(x: np.ndarray, k: int) -> Any:
    e = np.zeros(np.shape(x))
    e.flat[k] = 1.0
    return e if e.ndim else 1.0


def _from_columns(columns: list, x: np.ndarray) -> Any:
    """Derivatives along each entry of `x` -> an array of shape out.shape + x.shape."""
    cols = [np.asarray(c, dtype=float) for c in columns]
    shape = cols[0].shape if cols else ()
    return _plain(np.stack(cols, axis=-1).reshape(shape + x.shape) if cols else
                  np.zeros(x.shape))


def _tangent(name: str, arg: Any, t: Any, fun) -> Any:
    if type(arg) is np.ndarray and type(t) is np.ndarray and t.dtype == arg.dtype \
            and t.shape == arg.shape and arg.dtype.char in "dD":
        return t  # the common case, decided without NumPy calls (hvp is called in loops)
    if np.shape(t) != np.shape(arg):
        raise SrcgradError(f"the tangent for {name!r} of {fun.__qualname__} has shape "
                           f"{np.shape(t)}, but {name} has shape {np.shape(arg)}")
    if isinstance(arg, np.ndarray):
        return np.asarray(t, dtype=np.result_type(arg.dtype, np.float64))
    return float(t) if np.ndim(arg) == 0 else t  # a scalar's tangent: a float, as it is


def _tree(f, value):
    return tuple(_tree(f, v) for v in value) if isinstance(value, tuple) else f(value)


def source(fun, **options) -> str:
    """The generated gradient source of `fun` (as `grad(fun, **options).source`)."""
    return grad(fun, **options).source


# ---- jit ----
_JIT_CACHE: dict[str, dict[str, Any]] = {}
_JIT_LOCK = threading.RLock()  # (a nested transform compiles its own code inside)


def _jit_module(gen: Generated, stem: str) -> dict[str, Any]:
    """njit every generated function and every user function they call (cache=True)."""
    import numba

    from . import numba_ext  # noqa: F401  (registers overloads the generated code may need)

    with _JIT_LOCK:
        ns = gen.namespace.globals(lambda obj, jit: _njit(obj) if jit else obj)
        for node in gast.walk(gast.parse(gen.source)):
            if isinstance(node, gast.Call):
                numba_ext.object_mode(gen.namespace.called(node))
        key = codegen.fingerprint(gen.source, ns)
        if key in _JIT_CACHE:
            return _JIT_CACHE[key]
        module = codegen.load(gen.source, ns, stem, "jit")
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
_NESTED: weakref.WeakKeyDictionary[Any, Transform] = weakref.WeakKeyDictionary()


def _njit(fun):
    import numba
    from numba.core.registry import CPUDispatcher

    if isinstance(fun, CPUDispatcher) or not isinstance(fun, types.FunctionType):
        return fun
    if fun in _NESTED:   # a transform's entry point, called by the code of another
        t = _NESTED[fun]
        return t._functions(jit=True)[t.generated.entries[t.role]]
    if fun not in _NJITTED:
        _callable_from_jit(fun, set())
        _NJITTED[fun] = numba.njit(cache=True)(fun)
    return _NJITTED[fun]


def _callable_from_jit(fun, seen: set) -> None:
    """Let numba compile the user functions `fun` calls (a rule's helpers), without
    writing into the user's modules: numba's `register_jitable` overloads each one."""
    from numba.extending import register_jitable

    from .frontend.parse import is_user_function

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


# ---- argument handling ----
def _signature(fun) -> inspect.Signature:
    check_function(fun)
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError) as exc:
        raise SrcgradError(f"cannot differentiate {fun!r}: {exc}") from None


def _param_name(w, params: list[str], fun, option: str = "wrt") -> str:
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
    from .frontend.parse import parse
    from .passes.normalize import assigned_names

    try:
        return assigned_names(parse(fun).tree)
    except SrcgradError:
        return frozenset()


def _check_differentiable(name: str, value: Any, fun) -> None:
    if type(value) is np.ndarray:
        kind = value.dtype.kind
    else:
        kind = np.asarray(value).dtype.kind if not isinstance(value, (list, tuple)) else "f"
    if kind in "biu":
        what = "a boolean" if kind == "b" else "an integer"
        raise WrtError(f"cannot differentiate {fun.__qualname__} with respect to {name!r}: "
                       f"it is {what} ({value!r}); pass a float (e.g. {name}=5.0)")


def _plain(value: Any) -> Any:
    """A float64 scalar as a Python float (as autograd returns for a float input)."""
    if type(value) is np.ndarray and value.ndim:
        return value
    if isinstance(value, (np.floating, np.ndarray)) and np.ndim(value) == 0 \
            and value.dtype == np.float64:
        return float(value)
    return value


def _type_key(args: tuple) -> tuple:
    return tuple((np.ndarray, a.dtype, a.ndim) if type(a) is np.ndarray else
                 (type(a), getattr(a, "dtype", None), np.ndim(a)) for a in args)


def _stem(fun) -> str:
    return getattr(fun, "__name__", "f").replace("<", "").replace(">", "")


def _in_numba_compiler(exc: BaseException) -> bool:
    """Whether `exc` was raised while numba compiled a function (not as it ran)."""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_name == "_compile_for_args":
            return True
        tb = tb.tb_next
    return False


def _compiler_failure(exc: BaseException) -> str:
    """What a bare exception of numba's compiler says: its type and the line of numba
    that raised it (for a 2-D boolean mask, `assert idxty.ndim == 1`)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = ""
    if tb is not None:
        code = tb.tb_frame.f_code
        line = linecache.getline(code.co_filename, tb.tb_lineno).strip()
        where = f" at {os.path.basename(code.co_filename)}:{tb.tb_lineno}" + (
            f" ({line})" if line else "")
    text = f": {exc}" if str(exc) else ""
    return f"{type(exc).__name__}{text} in numba's compiler{where}"


def _generated_location(exc: BaseException, fn: Any, user_file: str) -> dict[str, Any]:
    """``filename``, ``lineno`` of the user's line whose generated code numba could not
    compile: the generated line, from numba's message or from the innermost IR location
    in its compiler's frames, mapped back through the `# line N:` comment above it."""
    generated = getattr(getattr(fn, "py_func", fn), "__code__", None)
    if generated is None:
        return {}
    path = generated.co_filename
    real = os.path.realpath(path)  # numba's messages name it relative to the directory
    lines = [int(n) for f, n in re.findall(r'File "([^"]+)", line (\d+)', str(exc))
             if os.path.realpath(f) == real]
    lines += [int(n) for f, n in re.findall(r"defined at (\S+) \((\d+)\)", str(exc))
              if os.path.realpath(f) == real]
    tb = exc.__traceback__
    while tb is not None:
        for value in (tb.tb_frame.f_locals.get("inst"), tb.tb_frame.f_locals.get("loc")):
            loc = getattr(value, "loc", value)
            if getattr(loc, "filename", None) == path and isinstance(
                    getattr(loc, "line", None), int):
                lines.append(loc.line)
        tb = tb.tb_next
    if not lines:
        return {}
    return _user_location(path, lines[-1], user_file)


def _user_location(path: str, line: int, user_file: str) -> dict[str, Any]:
    """``filename``, ``lineno`` of the user's line that line `line` of the generated file
    `path` comes from: the `# line N:` comment above it, in the function whose docstring
    names the user's file."""
    source = linecache.getlines(path)
    lineno = None
    for k in range(min(line, len(source)) - 1, -1, -1):
        comment = re.match(r"\s*# (?:grad of )?line (\d+):", source[k])
        if comment and lineno is None:
            lineno = int(comment.group(1))
        header = re.match(r'\s*"""\S.* \(([^()]+):\d+\)', source[k])
        if header and lineno is not None:
            return {"filename": _user_file(header.group(1), user_file), "lineno": lineno}
    return {}


def _note_user_line(exc: BaseException, fn: Any, user_file: str) -> None:
    """Add to an error raised in generated code (an index out of bounds in the user's
    code) a note naming the user's line it comes from (Python 3.11+ prints notes)."""
    path = fn.__code__.co_filename
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == path:
            line = tb.tb_lineno
        tb = tb.tb_next
    where = _user_location(path, line, user_file) if line is not None else {}
    if where and hasattr(exc, "add_note"):
        text = linecache.getline(where["filename"], where["lineno"]).strip()
        exc.add_note(f"srcgrad: raised by generated code ({os.path.basename(path)}:{line}) "
                     f"of {os.path.basename(where['filename'])}:{where['lineno']}: {text}")


def _user_file(basename: str, user_file: str) -> str:
    """The path of the user's file a generated docstring names by its base name."""
    if os.path.basename(user_file) == basename:
        return user_file
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None) or ""
        if os.path.basename(path) == basename:
            return path
    return basename


def _first_line(text: str) -> str:
    """What a numba error says, short: srcgrad's own message where an overload of its
    refused the types (`srcgrad: ...`), else numba's first two lines."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)  # numba colours its messages
    own = re.search(r"srcgrad: ([^\n]+)", text)
    if own:
        return own.group(1).strip()[:300]
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return " ".join(lines[:2])[:300] if lines else text
