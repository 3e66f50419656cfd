"""methods: `grad(obj.f)` for a bound method (of an object, or a classmethod of a class),
and the calls it makes to the other methods of its object or class.

The transform is of a copy of `f`'s function owned by `type(obj)` (`owned`), which `parse`
reads as `f` with its calls of methods of self rewritten (`own_calls`, below); every call
passes the object (read-only, never differentiated) as it is at that call, so a change to
`obj.W` between calls is seen. Positions and names in `wrt` and `static` count the
parameters after self, as the caller sees the bound method. A classmethod's class is its
object (`cls.W` reads a class attribute, at each call too).

If, after that rewriting, the method only reads attributes of self (`self.W`; a property
runs once per call), the call passes a frozen dataclass view of those attributes, one
class per (class, attributes), which `passes.pytrees` flattens into parameters like any
container argument read only: numba compiles it. If it does not use self at all, it is
passed None. Else the object itself is passed (the Python form runs it; numba cannot
take an arbitrary object). A `Method` pickles as its bound method and options.

`own_calls` requires the parsed function of a method and the class its self is an object
of (or, for a classmethod, is). It guarantees a tree in which no method of self is
called: `self.m(a)` of a staticmethod calls its function, `m(a)`; of a classmethod, the
bound method (`passes.closures` binds its class); of an ordinary method, a copy of it
whose self is replaced by one parameter per attribute it reads, passed first at the call:
`self.predict(w)` -> `predict(self.W, w)`. Methods are looked up on the class as Python
does (overrides and inheritance included). What cannot be followed is refused at the
user's line: a write to an attribute of self (`self.x = ...`, `self.x[i] = ...`), a
method read without a call, self passed on or rebound inside a method called, `super()`,
a call of an instance attribute, a call of a method of an object an attribute holds
(`self.child.predict(x)`: checked on the object, `owned`), methods calling each other in a
cycle, and a called method with `*args`, keyword-only parameters or defaults that are not
constants.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import types
import weakref
from typing import Any

import gast

from . import builder as b
from .errors import RecursiveFunction, SrcgradError, UnsupportedSyntax, WrtError
from .frontend.parse import (
    MISSING,
    Env,
    Parsed,
    is_user_function,
    parse,
    register_generated,
)
from .naming import Namer, names_in
from .passes.closures import constant_default, materialize


def for_method(method, options):
    """`options` of a transform of bound `method`, with `wrt` and `static` counted from
    the function's first parameter (self, or a classmethod's cls)."""
    self_name = method.__func__.__code__.co_varnames[0]

    def shifted(w, option):
        if w == self_name:
            raise WrtError(f"{option}={w!r}: {method.__qualname__} reads {self_name} and "
                           f"does not differentiate it; pass the arrays as parameters")
        return w + 1 if isinstance(w, int) and not isinstance(w, bool) and w >= 0 else w

    wrt = tuple(shifted(w, "wrt") for w in options.wrt) \
        if isinstance(options.wrt, (tuple, list)) else shifted(options.wrt, "wrt")
    return options.but(wrt=wrt, static=tuple(shifted(w, "static") for w in options.static))


def owned(method) -> types.FunctionType:
    """The function of bound `method`, as a copy that `parse` reads with the calls of
    methods of its object rewritten for the object's class (`own_calls`)."""
    obj = method.__self__
    _held_methods(method.__func__, obj, set())
    return _owned(method.__func__, obj if isinstance(obj, type) else type(obj),
                  isinstance(obj, type))


def _held_methods(fun: types.FunctionType, obj: Any, seen: set) -> None:
    """Refuse a call of a method of an object that `obj` holds (`self.child.predict(x)`)
    in method `fun` or the methods of `obj` it calls: `own_calls` follows the methods of
    self only, and the class of what an attribute holds is known only of this object."""
    if fun in seen:
        return
    seen.add(fun)
    parsed = parse(fun)
    if not parsed.tree.args.args:
        return
    me, owner = parsed.tree.args.args[0].id, obj if isinstance(obj, type) else type(obj)
    for node in gast.walk(parsed.tree):
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)):
            continue
        base = node.func.value
        if not (isinstance(base, gast.Attribute) and isinstance(base.value, gast.Name)
                and base.value.id == me):
            if isinstance(base, gast.Name) and base.id == me:   # self.m(...): follow it
                found = inspect.getattr_static(owner, node.func.attr, None)
                if isinstance(found, types.FunctionType) and is_user_function(found):
                    _held_methods(found, obj, seen)
            continue
        held = getattr(obj, base.attr, None)
        found = inspect.getattr_static(type(held), node.func.attr, None)
        found = getattr(found, "__func__", found)
        if held is not None and not isinstance(held, type) and is_user_function(found):
            raise UnsupportedSyntax(
                f"{me}.{base.attr}.{node.func.attr}(...) calls a method of an object "
                f"{me} holds ({type(held).__name__}): srcgrad follows the methods of "
                f"{me} only. Pass the arrays of {me}.{base.attr} it reads to a function "
                f"(or a method of {owner.__name__}) that does what it does",
                filename=parsed.filename, lineno=node.lineno, col=node.col_offset)


@functools.cache
def _owned(fun: types.FunctionType, owner: type, is_class: bool) -> types.FunctionType:
    copied = types.FunctionType(fun.__code__, fun.__globals__, fun.__name__,
                                fun.__defaults__, fun.__closure__)
    copied.__kwdefaults__ = fun.__kwdefaults__
    copied.__qualname__, copied.__module__ = fun.__qualname__, fun.__module__
    copied.__doc__, copied.__annotations__ = fun.__doc__, fun.__annotations__
    rewritten = own_calls(parse(fun), owner, is_class)
    register_generated(copied, lambda f: dataclasses.replace(
        rewritten, fun=f, tree=copy.deepcopy(rewritten.tree)))
    _ORIGINAL[copied] = fun
    return copied


_ORIGINAL: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # copy -> its function


class Method:
    """The transform of a bound method, called with its object (or a view of the
    attributes it reads: see the module docstring)."""

    def __init__(self, transform, obj: Any):
        functools.update_wrapper(self, transform)
        self.transform, self.obj = transform, obj
        self.attributes = _attributes_read(transform.fun,
                                           transform.fun.__code__.co_varnames[0])

    def _self(self) -> Any:
        if self.attributes == ():
            return None
        try:
            values = {a: getattr(self.obj, a) for a in self.attributes or ()}
        except AttributeError:
            return self.obj   # (the Python form raises it where the method reads it)
        if self.attributes is None:
            return self.obj
        view = _view_class(self.obj if isinstance(self.obj, type) else type(self.obj),
                           self.attributes)
        return view(**values)

    def __call__(self, *args, **kwargs):
        return self.transform(self._self(), *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transform, name)

    def __reduce__(self):
        # by the bound method (which pickles as its object and name) and the options
        method = types.MethodType(_ORIGINAL[self.transform.fun], self.obj)
        return _rebuilt, (method, self.transform.kind, self.transform.options)


def _rebuilt(method, kind, options) -> Method:
    from .api import Transform
    return Method(Transform(owned(method), kind, options), method.__self__)


@functools.cache
def _view_class(cls: type, attributes: tuple[str, ...]) -> type:
    return dataclasses.make_dataclass(f"{cls.__name__}_attributes", attributes, frozen=True)


def _attributes_read(fun, self_name: str) -> tuple[str, ...] | None:
    """The attributes of `self_name` that `fun` reads, if it does nothing else with it."""
    tree = parse(fun).tree
    reads, names, attributes = set(), 0, 0
    for node in gast.walk(tree):
        if isinstance(node, gast.Name) and node.id == self_name and \
                not isinstance(node.ctx, gast.Param):
            names += 1
        if isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name) and \
                node.value.id == self_name:
            reads.add(node.attr)
            attributes += 1
    return tuple(sorted(reads)) if names == attributes else None


def own_calls(parsed: Parsed, owner: type, is_class: bool) -> Parsed:
    """`parsed`, a method of `owner` (a classmethod if `is_class`), with its calls of
    methods of self rewritten as the module docstring says."""
    out, _ = _Calls(parsed, owner, is_class, (), top=True).run()
    return out


@functools.cache
def _instance_copy(fun: types.FunctionType, owner: type, chain: tuple
                   ) -> tuple[types.FunctionType, tuple[str, ...]]:
    """A copy of method `fun` of `owner` that takes the attributes of self it reads in
    place of self, and those attributes."""
    parsed, attributes = _Calls(parse(fun), owner, False, chain, top=False).run()
    return materialize(parsed, {**parsed.env.globals, **parsed.env.closure},
                       fun.__qualname__), attributes


class _Calls(gast.NodeTransformer):
    """Rewrites the calls of methods of self in one method (see `own_calls`)."""

    def __init__(self, parsed: Parsed, owner: type, is_class: bool, chain: tuple, top: bool):
        self.p, self.owner, self.is_class, self.top = parsed, owner, is_class, top
        self.chain = chain + (parsed.fun,)
        self.tree = copy.deepcopy(parsed.tree)
        if not self.tree.args.args:
            raise self.error(self.tree, f"{parsed.fun.__qualname__} takes no self")
        self.self = self.tree.args.args[0].id
        self.names = dict(parsed.env.closure)
        self.namer = Namer(names_in(self.tree) | set(self.names))
        self.attributes: dict[str, str] = {}   # attribute of self -> its parameter
        self.what = "class" if is_class else "object"

    def error(self, node: gast.AST, message: str, kind=UnsupportedSyntax) -> SrcgradError:
        return kind(message, filename=self.p.filename, lineno=getattr(node, "lineno", None),
                    col=getattr(node, "col_offset", None))

    def run(self) -> tuple[Parsed, tuple[str, ...]]:
        self.tree.body = [self.visit(s) for s in self.tree.body]
        if not self.top:
            self.parameters()
        env = Env(self.p.env.globals, self.names)
        return dataclasses.replace(self.p, tree=self.tree, env=env), tuple(self.attributes)

    def parameters(self) -> None:
        """A method called: self replaced by the attributes it reads, its defaults kept."""
        a = self.tree.args
        if a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg:
            raise self.error(self.tree, f"{self.p.fun.__qualname__} takes *args, keyword-only "
                                        f"or positional-only parameters: a method called "
                                        f"from the function differentiated takes plain ones")
        if not all(constant_default(d) for d in a.defaults):
            raise self.error(self.tree, f"{self.p.fun.__qualname__} has a default that is "
                                        f"not a constant: pass that argument at the call")
        params = [b.name(p) for p in self.attributes.values()]
        for p in params:
            p.ctx = gast.Param()
        a.args = params + a.args[1:]

    def visit_Call(self, node: gast.Call) -> gast.AST:
        func = node.func
        if isinstance(func, gast.Name) and func.id == "super":
            raise self.error(node, "super() cannot be followed: call the method of the "
                                   "class you mean, or make it a function")
        if not self._of_self(func):
            return self.generic_visit(node)
        found = inspect.getattr_static(self.owner, func.attr, MISSING)
        node.args = [self.visit(a) for a in node.args]
        node.keywords = [self.visit(k) for k in node.keywords]
        if isinstance(found, staticmethod):
            node.func = self.bind(func.attr, found.__func__, func)
        elif isinstance(found, classmethod):
            node.func = self.bind(func.attr, getattr(self.owner, func.attr), func)
        elif isinstance(found, types.FunctionType) and not self.is_class:
            if found in self.chain:
                raise self.error(node, f"{found.__qualname__} calls itself (directly or "
                                       f"through other methods): recursion cannot be "
                                       f"differentiated", RecursiveFunction)
            fun, attributes = _instance_copy(found, self.owner, self.chain)
            node.func = self.bind(func.attr, fun, func)
            node.args = [self.visit(self._attribute(a, func)) for a in attributes] + node.args
        else:
            raise self.error(node, f"{self.self}.{func.attr} is not a method of the "
                                   f"{self.what}'s class {self.owner.__name__} srcgrad can "
                                   f"follow (a static, class or instance method)")
        return node

    def visit_Attribute(self, node: gast.Attribute) -> gast.AST:
        if not self._of_self(node):
            return self.generic_visit(node)
        if not isinstance(node.ctx, gast.Load):
            raise self.error(node, f"{self.self}.{node.attr} is written here: a method "
                                   f"differentiated (and the methods it calls) may only "
                                   f"read {self.self}")
        found = inspect.getattr_static(self.owner, node.attr, MISSING)
        if isinstance(found, (types.FunctionType, staticmethod, classmethod)):
            raise self.error(node, f"the method {self.self}.{node.attr} can only be called "
                                   f"here, not passed or stored")
        if isinstance(found, property) and found.fget is not None and _writes_self(found.fget):
            raise self.error(node, f"the property {node.attr} writes to the object: only "
                                   f"properties that read it can be followed")
        if self.top:
            return node
        if node.attr not in self.attributes:
            self.attributes[node.attr] = self.namer.fresh(f"{self.self}_{node.attr}")
        return b.located(b.name(self.attributes[node.attr]), node)

    def visit_Subscript(self, node: gast.Subscript) -> gast.AST:
        if not isinstance(node.ctx, gast.Load):
            base = node
            while isinstance(base, (gast.Subscript, gast.Attribute)) and \
                    not self._of_self(base):
                base = base.value
            if self._of_self(base):
                raise self.error(node, f"{self.self}.{base.attr} is written into here: a "
                                       f"method differentiated (and the methods it calls) "
                                       f"may only read {self.self}")
        return self.generic_visit(node)

    def visit_Name(self, node: gast.Name) -> gast.AST:
        if node.id == self.self and not self.top:
            raise self.error(node, f"{self.p.fun.__qualname__} uses {self.self} other than "
                                   f"by reading its attributes and calling its methods: "
                                   f"called from a function differentiated, it cannot be "
                                   f"followed")
        if node.id == self.self and not isinstance(node.ctx, gast.Load):
            raise self.error(node, f"{self.self} is rebound here: give the new value a "
                                   f"name of its own")
        return node

    def bind(self, name: str, fun: Any, at: gast.AST) -> gast.Name:
        ref = self.namer.fresh(name)
        self.names[ref] = fun
        return b.located(b.name(ref), at)

    def _attribute(self, attr: str, at: gast.AST) -> gast.Attribute:
        node = b.make(gast.Attribute, value=b.name(self.self), attr=attr, ctx=gast.Load())
        return b.located(node, at)

    def _of_self(self, node: gast.AST) -> bool:
        return isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name) and \
            node.value.id == self.self


def _writes_self(fun: Any) -> bool:
    """Whether function `fun` (a property's getter) assigns to an attribute of its first
    parameter; a getter srcgrad cannot read is taken as one that does."""
    try:
        tree = parse(fun).tree
    except SrcgradError:
        return True
    if not tree.args.args:
        return False
    me = tree.args.args[0].id
    return any(isinstance(n, gast.Attribute) and isinstance(n.value, gast.Name) and
               n.value.id == me and not isinstance(n.ctx, gast.Load) for n in gast.walk(tree))
