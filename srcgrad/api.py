"""api: the transforms users call (`grad`, `value_and_grad`, `vjp`, `jvp`, `hvp`,
and `dense.py`'s `hessian`, `jacobian`) and their options. The checks of a call's arguments
and tangents, the form of its results and `vjp`'s pullbacks are `calls`'.

A transform returns a `Transform`: callable like the derivative it denotes, with
`functools.wraps` metadata, `.source` (the generated module), `.py_func` (the generated
entry point as plain Python) and `.fun` (the original). It is a `Kind` and an `Options`;
code is generated on first use (first call or `.source`), so a function may refer to
helpers defined after it. How the generated code runs (Python or compiled, the choice
between them, the fallback, compiling in the background or now: `.compile(*args)`) is
`backend`'s; `SRCGRAD_DISABLE_JIT=1` forces `jit=False`.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import inspect
import os
import sys
import threading
import types
from typing import TYPE_CHECKING, Any

import numpy as np

from .calls import (
    LEAF_TYPES,
    Columns,
    Pullback,
    Regrouped,
    Transposed,
    check_differentiable,
    checked_tangent,
    map_nested,
    param_name,
    plain,
    signature_of,
)
from .errors import NonScalarOutput, SrcgradError, WrtError
from .frontend.portable import portable
from .methods import Method, for_method, owned
from .passes.pytrees import flat_tangents, is_container, leaf_names, readable, regroup, split

if TYPE_CHECKING:   # (the compiler and the backend are imported on first use: import is cheap)
    from .backend import Forms
    from .backend.taken import Taken
    from .compiler import Generated


def _jit_disabled() -> bool:
    return os.environ.get("SRCGRAD_DISABLE_JIT", "").strip() not in ("", "0")


class Kind(enum.Enum):
    """What a transform computes."""

    GRAD = "grad"
    VALUE_AND_GRAD = "value_and_grad"
    VJP = "vjp"
    JVP = "jvp"
    HVP = "hvp"

    @property
    def forward(self) -> bool:
        """Whether it takes tangents (forward mode)."""
        return self in (Kind.JVP, Kind.HVP)

    @property
    def gradient(self) -> bool:
        """Whether it gives the gradient of a scalar result."""
        return self in (Kind.GRAD, Kind.VALUE_AND_GRAD)


@dataclasses.dataclass(frozen=True)
class Options:
    """A transform's options, as the user gave them (`wrt` a position, a name, or a tuple
    of them), checked; `constants`: values of static arguments it is specialised for;
    `trees`: (parameter, structure) of container arguments, flattened (`passes.pytrees`);
    `complex_values`: generated for complex arguments (`passes.reverse`)."""

    wrt: Any = 0
    jit: bool | str = "auto"
    static: tuple = ()
    unroll: bool = False
    checkpoint: Any = None
    constants: tuple = ()
    trees: tuple = ()
    complex_values: bool = False

    def __post_init__(self):
        if self.jit not in ("auto", True, False):
            raise SrcgradError(f"jit must be 'auto', True or False, not {self.jit!r}")
        if self.checkpoint is not None:
            from .passes.checkpoint import check_option
            check_option(self.checkpoint)
        static = self.static if isinstance(self.static, (tuple, list)) else (self.static,)
        object.__setattr__(self, "static", tuple(static))
        object.__setattr__(self, "unroll", bool(self.unroll))
        if _jit_disabled():
            object.__setattr__(self, "jit", False)

    def but(self, **changes) -> Options:
        """These options with some changed (no static arguments or containers, unless
        given)."""
        return dataclasses.replace(self, **{"static": (), "constants": (), "trees": (),
                                            **changes})


class Transform:
    """A differentiated function: `kind` of `fun` with `options`; see `grad`."""

    srcgrad_transform = True

    def __init__(self, fun, kind: Kind, options: Options):
        functools.update_wrapper(self, fun)
        self.fun, self.kind, self.options = fun, kind, options
        self.inner = fun if isinstance(fun, Transform) else None
        if self.inner is not None and kind.gradient and self.inner.kind is not Kind.GRAD:
            raise SrcgradError(f"grad needs a scalar result; {self.inner.name} returns a "
                               f"tuple or an array (use jacobian)")
        if self.inner is not None and options.static:
            raise SrcgradError(f"{kind.value} of a transform (here {self.inner.name}) takes no "
                               f"static=")
        if self.inner is not None and kind is Kind.VJP and self.inner.kind is not Kind.GRAD:
            raise SrcgradError(f"vjp of a transform differentiates a gradient (grad); "
                               f"{self.inner.name} is not one: use jvp or jacobian")
        self.constants = dict(options.constants)
        self._signature = signature_of(fun)
        self._params = leaf_names(list(self._signature.parameters), dict(options.trees))
        # (*args, keyword-only: bound through the signature, `*args` as one tuple; the
        # transforms specialised or of flattened containers take every argument, in order)
        self._ordinary = all(p.kind is p.POSITIONAL_OR_KEYWORD
                             for p in self._signature.parameters.values())
        self._many = isinstance(options.wrt, (tuple, list))
        wrt = options.wrt if self._many else [options.wrt]
        self.wrt = [param_name(w, self._params, fun) for w in wrt]
        for name in self.wrt:
            if kind.forward and name not in self._params:
                raise WrtError(f"wrt={name!r}: forward mode differentiates with respect to "
                               f"parameters only ({', '.join(self._params)})")
        self.static = [param_name(w, self._params, fun, "static") for w in options.static]
        self._valued: Transform | None = None   # value_and_grad, for complex arguments
        for name in self.static:
            if name in self.wrt:
                raise WrtError(f"{name!r} cannot be both static and differentiated")
        # whether the function calls itself (None: not read yet, see `_recursive`)
        self._recursion = False if self.static or self.constants or self.inner else None
        self._specialized: dict[tuple, Transform] = {}
        self._leaves_read: dict[tuple, bool] = {}   # (parameter, structure): flattened?
        self._generated: Generated | None = None
        self._taken: Taken | None = None   # the globals that code took (`backend.taken`)
        self._remade = 0
        self._hvp_of: Transform | None = None   # (an hvp: the gradient it differentiates)
        self._forms: Forms | None = None
        self._lock = threading.Lock()
        self._transposing = bool(self.inner) and kind is Kind.VJP
        self._forward = kind.forward
        # where each wrt argument is among the arguments (None: a tangent's, not one); and
        # of the calls `_plain` may let through: their wrt arguments' positions
        self._at = [self._params.index(n) if n in self._params else None for n in self.wrt]
        self._plain_at = None if kind.forward or self._transposing or self.static \
            or not self._ordinary or None in self._at or \
            self.inner is not None and self.inner.kind.forward else tuple(self._at)

    @property
    def jit(self) -> bool | str:
        return self.options.jit

    @property
    def unroll(self) -> bool:
        return self.options.unroll

    @functools.cached_property
    def _transposed(self) -> Transform:
        """The pullback of vjp(grad(g, wrt=a), wrt=b): u -> (d grad_a g / db)^T u. Where
        grad_a is g's true gradient, the Hessian is symmetric and that is the derivative
        of grad_b g along u in a: one jvp. Where the user's rules made grad_a (`custom`),
        it is not: then the jvp of grad_a along each entry of b gives J's columns."""
        inner = self.inner
        if inner.custom:
            return Transform(inner, Kind.JVP, self.options.but())
        grad_b = Transform(inner.fun, Kind.GRAD, self.options.but())
        return Transform(grad_b, Kind.JVP, self.options.but(wrt=inner.options.wrt))

    @property
    def custom(self) -> bool:
        """Whether a gradient the user wrote (a rule, a grad_of block) is part of this."""
        return self.generated.custom or self.inner is not None and self.inner.custom

    @property
    def _recursive(self) -> bool:
        """Whether the function calls itself: it is then specialised on its int arguments
        (`compiler._specialize`)."""
        if self._recursion is None:
            from .compiler import calls_itself
            self._recursion = calls_itself(self.fun)
        return self._recursion

    # ---- generated code ----
    @property
    def generated(self) -> Generated:
        if self._generated is not None:   # (set once: no lock on every call)
            return self._generated
        with self._lock:
            if self._generated is None:
                from .backend.taken import Taken
                gen = self._generate()
                gen.namespace.own_arrays()
                self._taken = Taken(self._user_functions(gen))
                self._generated = gen
        return self._generated

    def _user_functions(self, gen: Generated) -> list[types.FunctionType]:
        """The user's functions whose globals `gen` read: the differentiated one and
        the helpers it calls."""
        from .frontend.parse import is_user_function
        user = self
        while user.inner is not None:
            user = user.inner
        fun = getattr(inspect.unwrap(user.fun), "__func__", inspect.unwrap(user.fun))
        helpers = [obj for obj, _ in gen.namespace.entries.values() if is_user_function(obj)]
        return [f for f in [fun, *helpers] if isinstance(f, types.FunctionType)]

    def _renew(self, names: list[str]) -> None:
        """Make the code again: `names`, globals it read, changed since it was made."""
        with self._lock:
            for t in (self, *self._made_from()):
                t._generated, t._forms, t._taken = None, None, None
            self._remade += 1
        from .backend.taken import note_remade
        note_remade(f"the {self.label}", names, self._remade)

    def _generate(self) -> Generated:
        from .backend.modules import generated  # (kept on disk for the next process)
        if self._transposing:  # the pullback's code; the value is the inner's
            return self._transposed.generated
        user = self
        while user.inner is not None:
            user = user.inner
        return generated(user.fun, self._key(), self._make,
                         lambda: [t.generated for t in self._made_from()])

    def _make(self) -> Generated:
        from .compiler import generate, generate_grad_of, generate_jvp
        if self.kind is Kind.HVP:  # forward over reverse: the jvp of the gradient's code
            inner, = self._made_from()
            return generate_jvp(inner.entry_function(), self.wrt, self._many,
                                only=inner.projection)
        if self.kind is Kind.JVP:
            fun = self.inner.entry_function() if self.inner else self.fun
            return generate_jvp(fun, self.wrt, self._many, self.constants, self.unroll,
                                trees=dict(self.options.trees))
        if self.inner is not None:
            return generate_grad_of(self.inner.entry_function(), self.inner.projection,
                                    self.inner.label, self.wrt, self._many)
        kinds = ("vjp",) if self.kind is Kind.VJP else ("grad",)
        return generate(self.fun, self.wrt, kinds, self._many, self.constants, self.unroll,
                        value=self.kind is not Kind.GRAD, trees=dict(self.options.trees),
                        checkpoint=self.options.checkpoint,
                        complex_values=self.options.complex_values)

    def _key(self) -> tuple:
        """What this transform's code is made from besides the user's function (the disk
        cache's key, `backend.modules`): its kind and options, then its inner ones'."""
        o = self.options
        own = (self.kind.value, tuple(self.wrt), self._many, o.static, o.constants, o.unroll,
               o.trees, o.checkpoint, o.complex_values)
        return own + ("of",) + self.inner._key() if self.inner is not None else own

    def _made_from(self) -> list[Transform]:
        """The transforms whose generated code this one's is made from: an hvp's, the
        gradient it is the jvp of; a transform of a transform's, that one and its own."""
        if self.kind is Kind.HVP:
            if self._hvp_of is None:
                self._hvp_of = Transform(self.fun, Kind.GRAD, self.options.but(
                    constants=self.options.constants, trees=self.options.trees))
            return [self._hvp_of]
        return [] if self.inner is None else [self.inner, *self.inner._made_from()]

    @property
    def role(self) -> str:
        """The generated entry point that computes this transform."""
        return {Kind.VJP: "backward", Kind.JVP: "jvp", Kind.HVP: "jvp"}.get(self.kind, "grad")

    @property
    def projection(self) -> tuple[int, ...]:
        """Where in what the entry point returns this transform's result is (a `grad`
        of a transform returns the value too, to check that it is a scalar)."""
        return (1,) if self.kind is Kind.GRAD and self.inner is not None else ()

    def nested_entry(self):
        """The generated entry point that a function being differentiated calls in this
        transform's place (returning what the transform returns), or None where there is
        none: only `grad` and `value_and_grad` of a function, without `static` (or the
        int arguments a function that calls itself is specialised on)."""
        if not self.kind.gradient or self.inner is not None or \
                self.static or self._recursive:
            return None
        from .backend import NESTED
        entry = self.entry_function()
        NESTED[entry] = self   # compiled, it is this transform's compiled entry
        return entry

    def entry_function(self):
        """The generated entry point as plain Python (what a transform of this one reads)."""
        return self._functions(jit=False)[self.generated.entries[self.role]]

    @property
    def source(self) -> Source:
        """The generated forward and adjoint code, as one module."""
        return Source(self.generated.source)

    @property
    def py_func(self):
        """The generated entry point as plain (not compiled) Python."""
        return self.entry_function()

    @property
    def forms(self) -> Forms:
        """The generated code's Python and compiled forms, and the choice between them."""
        if self._forms is not None:
            return self._forms
        from .backend import Forms
        gen = self.generated
        with self._lock:
            if self._forms is None:
                self._forms = Forms(gen, self.options.jit, self.fun, self._nonscalar)
        return self._forms

    def _functions(self, jit: bool) -> dict[str, Any]:
        return self.forms.functions(jit)

    def compiled_entry(self):
        """The compiled entry point (what compiled code that calls this transform runs)."""
        return self._functions(jit=True)[self.generated.entries[self.role]]

    def _call(self, role: str, args: tuple) -> Any:
        taken = self._taken   # (a pullback runs the code its forward pass ran)
        if taken is not None and role != "backward" and (names := taken.changed()):
            self._renew(names)
        return (self._forms or self.forms).call(role, args)

    def compile(self, *args, **kwargs) -> Transform:
        """Compile now, blocking, for arguments like these (as a call takes them): the
        transform runs once on them compiled (a vjp's pullback too, on ones); returns it.
        Under jit="auto" calls like these then time the forms at once; jit=False: no-op."""
        from .backend import eager
        with eager():
            out = self(*args, **kwargs)
            if self.kind is Kind.VJP and isinstance(out[0], (np.ndarray, float)):
                out[1](np.ones_like(out[0]) if isinstance(out[0], np.ndarray) else 1.0)
        return self

    def _nonscalar(self, reason: str = "") -> NonScalarOutput:
        from .runtime import COMPLEX_RESULT
        if COMPLEX_RESULT in reason:
            filename, lineno = self.generated.result_line
            return NonScalarOutput(f"grad needs a real result, but {self.fun.__qualname__} "
                                   f"returns a complex number, and srcgrad does not "
                                   f"differentiate complex values",
                                   filename=filename, lineno=lineno)
        if self.inner is not None:
            return NonScalarOutput(f"grad needs a scalar result, but {self.inner.name} returns "
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
        if self.inner is not None and self.inner.kind.forward:
            if not args or not kwargs and len(args) != len(self._params) + 1:
                raise TypeError(f"{self.name} takes {self.fun.__qualname__}'s arguments "
                                f"({', '.join(self._params)}), then the tangents of "
                                f"{self.inner.name}, then its own")
            values = self.inner._args(args[:-1], kwargs)
            for name in self.wrt:
                check_differentiable(name, values[self._params.index(name)], self.fun)
            return values + self.inner._tangents(values, args[-1])
        if not kwargs and len(args) == len(self._params) and self._ordinary:
            for name in self.wrt:
                if name in self._params:
                    check_differentiable(name, args[self._params.index(name)], self.fun)
            return args
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{self.fun.__qualname__}: {exc}") from None
        bound.apply_defaults()
        values = tuple(bound.arguments[p] for p in self._params)
        for name in self.wrt:
            if name in self._params:
                check_differentiable(name, bound.arguments[name], self.fun)
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
            t = Transform(self.fun, self.kind, self.options.but(constants=key))
            t._recursion = False   # (with no int argument, it is itself, not specialised)
            t._ordinary = True
            self._specialized[key] = t
        return self._specialized[key]

    def __call__(self, *args, **kwargs):
        if self._forward:
            if not args:
                raise TypeError(f"{self.name} takes the arguments, then the tangents")
            return self._along(args[:-1], kwargs, args[-1])
        plain_call = not kwargs and self._plain(args)
        values = args if plain_call else self._args(args, kwargs)
        if not plain_call:
            if self.static or self._recursive:
                return self.specialized(values)(*values)
            if (structured := self._structured(values)) is not None:
                flat, leaves, trees = structured
                out, group = flat(*leaves), functools.partial(self._regroup, trees)
                if self.kind is Kind.VJP:
                    return out[0], Regrouped(out[1], group)
                return (out[0], group(out[1])) if self.kind is Kind.VALUE_AND_GRAD \
                    else group(out)
            if self._transposing:
                pullback = Columns if self.inner.custom else Transposed
                return self.inner(*values), pullback(self._transposed, values)
            if self._complex_arguments(values):
                kind = Kind.VALUE_AND_GRAD if self.kind is Kind.GRAD else self.kind
                out = self._valued_complex(kind)(*values)
                return out[1] if self.kind is Kind.GRAD else out
        if self.kind is Kind.VJP:
            value, saved = self._call("forward", values)
            return value, Pullback(self, saved)
        if self.kind is Kind.GRAD and self.inner is None:  # the generated code checks
            grads = self._call("grad", values)
        else:
            value, grads = self._call("grad", values)
            if type(value) is not float and type(value) is not np.float64:
                if np.ndim(value) != 0:
                    raise self._nonscalar()
                if np.iscomplexobj(value):   # (a full reduction's value is not checked)
                    from .runtime import COMPLEX_RESULT
                    raise self._nonscalar(COMPLEX_RESULT)
        grads = tuple(map(self._shaped, grads, self._at, (values,) * len(grads))) \
            if self._many else self._shaped(grads, self._at[0], values)
        return (plain(value), grads) if self.kind is Kind.VALUE_AND_GRAD else grads

    def _plain(self, args: tuple) -> bool:
        """Whether `args` need none of the checks and forms of a call (`_args`,
        `specialized`, `_structured`, `_complex_arguments`): one per parameter of an
        ordinary signature, none a container nor complex, each wrt one a float or an
        array of floats, for a transform known not to be specialised (the common call,
        made fast: the first call always takes the long way, which reads `_recursive`)."""
        if self._plain_at is None or self._recursion is not False or \
                len(args) != len(self._params):
            return False
        for v in args:
            if type(v) is np.ndarray:
                if v.dtype.kind == "c":
                    return False
            elif type(v) not in LEAF_TYPES:
                return False
        for i in self._plain_at:
            v = args[i]
            if type(v) is not float and (type(v) is not np.ndarray or v.dtype.kind != "f"):
                return False
        return True

    def _complex_arguments(self, values: tuple) -> bool:
        """Whether some argument is complex, where the code generated for real ones runs
        (grad's is run by value_and_grad, whose value is checked: grad does not compute
        the sum or mean it returns, which complex arguments may make complex)."""
        return self.inner is None and not self.options.complex_values and any(
            type(v) is complex or type(v) is np.ndarray and v.dtype.kind == "c"
            for v in values)

    def _valued_complex(self, kind: Kind) -> Transform:
        """The transform `kind` of the function generated for complex arguments."""
        if self._valued is None:
            self._valued = Transform(self.fun, kind, dataclasses.replace(
                self.options, complex_values=True))
        return self._valued

    def _structured(self, values: tuple) -> tuple[Transform, tuple, dict] | None:
        """For container arguments (`passes.pytrees.split`): the transform generated for
        their structure (its parameters their leaves), the arguments flattened, the
        structures."""
        if all(type(v) in LEAF_TYPES for v in values):   # (the common call, made fast)
            return None
        if self.inner is not None:   # (values: the arguments, then tangents)
            if any(is_container(values[self._params.index(w)]) for w in self.wrt
                   if w in self._params):
                raise SrcgradError(f"{self.name}: a transform of a transform takes arrays, "
                                   f"not containers")
            return None
        trees, leaves = split(self._params, self.wrt, values, self.fun.__qualname__,
                              self._readable)
        if not trees:
            return None
        key = ("trees", *trees.items())
        if key not in self._specialized:
            options = self.options.but(wrt=tuple(leaf_names(self.wrt, trees)),
                                       constants=self.options.constants,
                                       trees=tuple(trees.items()))
            self._specialized[key] = t = Transform(self.fun, self.kind, options)
            t._recursion, t._ordinary = False, True
        return self._specialized[key], leaves, trees

    def _readable(self, param: str, tree) -> bool:
        """Whether an argument not differentiated of this structure can be flattened."""
        if param in self.static or param in self.constants:
            return False
        if (param, tree) not in self._leaves_read:
            from .frontend.parse import parse, positional
            self._leaves_read[param, tree] = readable(positional(parse(self.fun).tree),
                                                      param, tree)
        return self._leaves_read[param, tree]

    def _regroup(self, trees: dict, flat: tuple) -> Any:
        grads = regroup(self.wrt, trees, flat)
        return tuple(grads) if self._many else grads[0]

    def _shaped(self, g: Any, at: int | None, values: tuple) -> Any:
        """A gradient at the shape of its argument (`values[at]`; None: a tangent's). A
        parameter the function rebinds in a loop to a larger shape (`x = x * np.ones(3)`
        with a number x) has an adjoint at the shape the loop gave it, whose broadcast
        entries each carry a part of x's."""
        x = values[at] if at is not None else g
        if type(g) is np.ndarray and type(x) is np.ndarray and g.shape == x.shape \
                and g.ndim and g.dtype.kind == "f":
            return g   # (the common case, made fast)
        if np.shape(g) != np.shape(x) and np.ndim(g) >= np.ndim(x):
            from .runtime import unbroadcast
            g = unbroadcast(g, np.asarray(x))
        return plain(g)

    def _along(self, args: tuple, kwargs: dict, tangents: Any) -> Any:
        """jvp: `(value, derivative along tangents)`; hvp: the Hessian times them."""
        values = self._args(args, kwargs)
        if self.static or self._recursive:
            return self.specialized(values)._along(values, {}, tangents)
        if (structured := self._structured(values)) is not None:
            flat, leaves, trees = structured
            given = self._tangents(values, tangents, checked=False)
            out = flat._along(leaves, {}, flat_tangents(self.wrt, trees, given, self.name))
            return self._regroup(trees, out) if self.kind is Kind.HVP else out
        checked = self._tangents(values, tangents)
        if self.kind is Kind.HVP:  # the entry returns the product only
            return map_nested(plain, self._call(self.role, values + checked))
        value, dvalue = self._call(self.role, values + checked)
        for k in self.inner.projection if self.inner else ():
            value, dvalue = value[k], dvalue[k]
        return map_nested(plain, value), map_nested(plain, dvalue)

    def _tangents(self, values: tuple, tangents: Any, checked: bool = True) -> tuple:
        """The tangents of a jvp or hvp call, one per wrt argument, checked against
        `values` (the arguments) if `checked`."""
        given = tangents if self._many else (tangents,)
        if not isinstance(given, (tuple, list)) or len(given) != len(self.wrt):
            raise SrcgradError(f"{self.name} takes one tangent per wrt argument "
                               f"({', '.join(self.wrt)}), as a tuple if wrt is a tuple")
        if not checked:
            return tuple(given)
        return tuple(checked_tangent(name, values[self._params.index(name)], t, self.fun)
                     for name, t in zip(self.wrt, given, strict=True))

    @property
    def label(self) -> str:
        """What this transform computes, in words: "grad of f wrt x"."""
        of = self.inner.label if self.inner else self.fun.__qualname__
        return f"{self.kind.value} of {of} wrt {', '.join(self.wrt)}"

    @property
    def name(self) -> str:
        """The transform in messages: "<srcgrad.grad of f wrt x>"."""
        return f"<srcgrad.{self.label}>"

    def __repr__(self) -> str:
        return f"<srcgrad.{self.label}, {self.state}>"

    @property
    def state(self) -> str:
        """How calls run now: "compiled: yes", "compiled: not yet", "compiled: no (why)",
        or "Python" (jit=False)."""
        forms = self._forms
        if self.options.jit is False:
            return "Python"
        if forms is not None and forms.fallback is not None:
            return f"compiled: no ({forms.fallback})"
        return "compiled: yes" if forms is not None and forms.compiled else "compiled: not yet"

    def __reduce__(self):
        # by reference to the user's function and the options: the receiving process
        # generates the code again (or loads it from the disk cache) on first use
        if _module_attribute(self) is self:   # @grad on a module-level function
            return self.__qualname__
        return Transform, (portable(self.fun), self.kind, self.options)

    def __dask_tokenize__(self):
        return ("srcgrad", self.kind.value, repr(self.options), _token(self.fun))

    def __get__(self, obj, objtype=None):
        return self if obj is None else types.MethodType(self, obj)




def _transform(kind: Kind):
    def make(fun=None, *, wrt=0, jit="auto", static=(), unroll=False, checkpoint=None):
        options = Options(wrt, jit, static, unroll, checkpoint)
        if fun is None:
            return lambda f: _of(f, kind, options)
        return _of(fun, kind, options)
    make.__name__ = make.__qualname__ = kind.value   # help(), pickle and the API docs
    return make


def _of(fun, kind: Kind, options: Options) -> Transform | Method:
    if inspect.ismethod(fun) and isinstance(fun.__func__, types.FunctionType):
        return Method(Transform(owned(fun), kind, for_method(fun, options)), fun.__self__)
    return Transform(fun, kind, options)




grad = _transform(Kind.GRAD)
grad.__doc__ = """Gradient of a scalar-valued function with respect to `wrt`.

    `wrt` is a parameter position or name, or a tuple of them (then a tuple of gradients
    is returned). Usable as `@grad`, `@grad(wrt=...)` and `grad(f, wrt=...)`.

    >>> def f(x, y):
    ...     return x**2 + x*y + 3.0
    >>> grad(f, wrt=("x", "y"))(5.0, 3.0)
    (13.0, 5.0)
    """
value_and_grad = _transform(Kind.VALUE_AND_GRAD)
value_and_grad.__doc__ = """Like `grad`, but returns `(value, gradients)`."""
vjp = _transform(Kind.VJP)
vjp.__doc__ = """`vjp(f)(*args) -> (value, pullback)`; `pullback(cotangent) -> gradients`.

    The pullback keeps what the backward pass needs (a persistent tape), so it may be
    called many times, with any cotangent of the result's shape (the `grad_ys` seed of
    `tf.gradients`).
    """


jvp = _transform(Kind.JVP)
jvp.__doc__ = """Forward mode: `jvp(f)(*args, tangents) -> (value, derivative along tangents)`.

    `tangents` has the shape of the `wrt` argument (a tuple of them if `wrt` is a tuple).
    The generated code (`.source`) computes each value's tangent next to it, through the
    function's loops and branches.

    >>> def f(x, y):
    ...     return x**2 + x*y + 3.0
    >>> jvp(f, wrt=("x", "y"))(5.0, 3.0, (1.0, 0.0))
    (43.0, 13.0)
    """
hvp = _transform(Kind.HVP)
hvp.__doc__ = """Hessian-vector product `hvp(f)(*args, v) -> H v`, without forming H.

    Forward mode over the generated gradient (`.source` shows it): one gradient's cost
    a few times over, as `jax.jvp(jax.grad(f), ...)`.
    """


class Source(str):
    """Generated source: a `str` that Jupyter and IPython show as highlighted Python."""

    def _repr_markdown_(self) -> str:
        return f"```python\n{self}\n```"

    def _repr_html_(self) -> str | None:
        try:
            from pygments import highlight
            from pygments.formatters import HtmlFormatter
            from pygments.lexers import PythonLexer
        except ImportError:   # optional: without pygments, the markdown form shows
            return None
        return highlight(str(self), PythonLexer(), HtmlFormatter(noclasses=True))


def _module_attribute(obj) -> Any:
    """What `obj`'s module calls `obj`'s qualified name (a decorated function's module
    holds the transform under the function's name)."""
    target = sys.modules.get(getattr(obj, "__module__", None) or "")
    for part in getattr(obj, "__qualname__", "<").split("."):
        target = getattr(target, part, None)
    return target


def _token(fun) -> tuple:
    """A deterministic token of a transform's function (Dask hashes tasks by it): a
    transform's own, or the function's module, name and bytecode."""
    if hasattr(fun, "__dask_tokenize__"):
        return fun.__dask_tokenize__()
    code = getattr(fun, "__code__", None)
    body = _digest(code, hashlib.sha1()).hexdigest() if code is not None else repr(fun)
    return (getattr(fun, "__module__", None), getattr(fun, "__qualname__", None), body)


def _digest(code: types.CodeType, h):
    """`h` updated with what `code` does (bytecode, names, constants, nested functions'),
    none of it an address."""
    h.update(code.co_code)
    h.update(repr(code.co_names).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _digest(const, h)
        else:
            h.update(repr(const).encode())
    return h


def source(fun, **options) -> str:
    """The generated gradient source of `fun` (as `grad(fun, **options).source`)."""
    return grad(fun, **options).source
