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
`self.predict(w)` -> `predict(self.W, w)`. A method of an object an attribute of self
holds (`held`: attribute -> its class, found on the object by `owned`), likewise:
`self.child.predict(x)` -> `predict(self.child.W, x)`; the view of self then holds a view
of child, and each call checks that child holds an object of that class still. Methods
are looked up on the class as Python does (overrides and inheritance included). What
cannot be followed is refused at the user's line: a write to an attribute of self
(`self.x = ...`, `self.x[i] = ...`), a method read without a call, self passed on or
rebound inside a method called, `super()`, a call of an instance attribute, a method of
an object held two attributes down (`self.a.b.m(x)`, or `self.b.m(x)` in a method of
`self.a`: `_refuse_deeper_calls`), methods calling each other in a cycle, and a called
method with `*args`, keyword-only parameters or defaults that are not constants.
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
    methods of its object rewritten for the object's class (`own_calls`), and of the
    objects its attributes hold for their classes now (checked at each call, `Method`)."""
    obj = method.__self__
    _refuse_deeper_calls(method.__func__, obj, 0, set())
    held = _held(method.__func__, obj, set())
    return _owned(method.__func__, obj if isinstance(obj, type) else type(obj),
                  isinstance(obj, type), tuple(sorted(held.items(), key=lambda kv: kv[0])))


def called_on_object(method) -> tuple[types.FunctionType, list[tuple[str, Any]]]:
    """Bound `method` of an object, called from the function differentiated (`m.loss(x)`
    of a global `m`): a copy of its function taking the attributes of the object it
    reads in place of self (`_instance_copy`), and those attributes, read now (dotted for
    an object one holds: `child.W`), as the call passes them first."""
    obj, fun = method.__self__, method.__func__
    _refuse_deeper_calls(fun, obj, 0, set())
    held = _held(fun, obj, set())
    copied, attributes = _instance_copy(fun, type(obj), (), tuple(sorted(held.items(),
                                                                         key=lambda kv: kv[0])))
    return copied, [(a, functools.reduce(getattr, a.split("."), obj)) for a in attributes]


def _held(fun: types.FunctionType, obj: Any, seen: set) -> dict[str, type]:
    """The attributes of `obj` whose methods method `fun`, or a method of `obj` it calls,
    calls (`self.child.predict(x)`), with the class of what each holds."""
    if fun in seen:
        return {}
    seen.add(fun)
    tree = parse(fun).tree
    if not tree.args.args:
        return {}
    me, owner = tree.args.args[0].id, obj if isinstance(obj, type) else type(obj)
    out: dict[str, type] = {}
    for node in gast.walk(tree):
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)):
            continue
        base = node.func.value
        if isinstance(base, gast.Name) and base.id == me:   # self.m(...): follow it
            found = inspect.getattr_static(owner, node.func.attr, None)
            if isinstance(found, types.FunctionType) and is_user_function(found):
                out.update(_held(found, obj, seen))
        elif isinstance(base, gast.Attribute) and isinstance(base.value, gast.Name) and \
                base.value.id == me:
            held = getattr(obj, base.attr, None)
            found = inspect.getattr_static(type(held), node.func.attr, None)
            if held is not None and not isinstance(held, type) and \
                    is_user_function(getattr(found, "__func__", found)):
                out[base.attr] = type(held)
    return out


def _refuse_deeper_calls(fun: types.FunctionType, obj: Any, depth: int, seen: set) -> None:
    """Refuse, at its line, a call of a method of an object held two attributes (or
    more) below the object differentiated (`self.a.b.m(x)`, or `self.b.m(x)` in a method
    of `self.a`): only the objects its own attributes hold are followed. `depth` counts
    the attributes from that object to `obj`, whose method `fun` is."""
    if fun in seen:
        return
    seen.add(fun)
    parsed = parse(fun)
    if not parsed.tree.args.args:
        return
    me = parsed.tree.args.args[0].id
    for node in gast.walk(parsed.tree):
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)):
            continue
        path, base = [], node.func.value
        while isinstance(base, gast.Attribute):
            path.insert(0, base.attr)
            base = base.value
        if not (isinstance(base, gast.Name) and base.id == me):
            continue
        held = functools.reduce(lambda o, a: getattr(o, a, None), path, obj)
        found = inspect.getattr_static(held if isinstance(held, type) else type(held),
                                       node.func.attr, None)
        found = getattr(found, "__func__", found)
        if held is None or not isinstance(found, types.FunctionType) or \
                not is_user_function(found):
            continue
        if depth + len(path) >= 2:
            call = ".".join([me, *path, node.func.attr])
            raise UnsupportedSyntax(
                f"{call}(...) in {fun.__qualname__} calls a method of an object held "
                f"{depth + len(path)} attributes below the object differentiated, which "
                f"srcgrad does not follow (it follows the methods of that object and of the "
                f"objects its own attributes hold): pass the values {node.func.attr} reads "
                f"as arguments to a function instead",
                filename=parsed.filename, lineno=node.lineno, col=node.col_offset)
        _refuse_deeper_calls(found, held, depth + len(path), seen)


@functools.cache
def _owned(fun: types.FunctionType, owner: type, is_class: bool, held: tuple
           ) -> types.FunctionType:
    copied = types.FunctionType(fun.__code__, fun.__globals__, fun.__name__,
                                fun.__defaults__, fun.__closure__)
    copied.__kwdefaults__ = fun.__kwdefaults__
    copied.__qualname__, copied.__module__ = fun.__qualname__, fun.__module__
    copied.__doc__, copied.__annotations__ = fun.__doc__, fun.__annotations__
    rewritten = own_calls(parse(fun), owner, is_class, dict(held))
    register_generated(copied, lambda f: dataclasses.replace(
        rewritten, fun=f, tree=copy.deepcopy(rewritten.tree)))
    _ORIGINAL[copied], _HELD[copied] = fun, dict(held)
    return copied


_ORIGINAL: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # copy -> its function
_HELD: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # copy -> {attribute: class}


class Method:
    """The transform of a bound method, called with its object (or a view of the
    attributes it reads: see the module docstring)."""

    def __init__(self, transform, obj: Any):
        functools.update_wrapper(self, transform)
        self.transform, self.obj = transform, obj
        self.held = _HELD.get(transform.fun, {})
        self.attributes = _attributes_read(transform.fun,
                                           transform.fun.__code__.co_varnames[0], self.held)

    def _self(self) -> Any:
        for attr, cls in self.held.items():   # (the code calls cls's methods)
            if type(getattr(self.obj, attr, None)) is not cls:
                raise SrcgradError(f"{self.transform.fun.__qualname__}: {attr} held a "
                                   f"{cls.__name__} when the transform was made, whose "
                                   f"methods its code calls; it now holds a "
                                   f"{type(getattr(self.obj, attr, None)).__name__}: make "
                                   f"the transform again")
        if self.attributes is None:
            return self.obj
        if self.attributes == ():
            return None
        try:
            return _view(self.obj, self.attributes)
        except AttributeError:
            return self.obj   # (the Python form raises it where the method reads it)

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


def _view(obj: Any, attributes: tuple[str, ...]) -> Any:
    """A frozen dataclass of the `attributes` of `obj` (`child.W`: a view of `obj.child`
    with its W)."""
    nested: dict[str, list[str]] = {}
    for a in attributes:
        first, _, rest = a.partition(".")
        nested.setdefault(first, [])
        if rest:
            nested[first].append(rest)
    values = {a: _view(getattr(obj, a), tuple(inner)) if inner else getattr(obj, a)
              for a, inner in nested.items()}
    view = _view_class(obj if isinstance(obj, type) else type(obj), tuple(nested))
    return view(**values)


def _attributes_read(fun, self_name: str, held: dict) -> tuple[str, ...] | None:
    """The attributes of `self_name` that `fun` reads (`child.W` of an attribute in
    `held` read only by its attributes), if it does nothing else with it."""
    tree = parse(fun).tree
    reads, names, attributes = set(), 0, 0
    inner = {id(n.value): n.attr for n in gast.walk(tree) if isinstance(n, gast.Attribute)}
    for node in gast.walk(tree):
        if isinstance(node, gast.Name) and node.id == self_name and \
                not isinstance(node.ctx, gast.Param):
            names += 1
        if isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name) and \
                node.value.id == self_name:
            dotted = node.attr in held and id(node) in inner
            reads.add(f"{node.attr}.{inner[id(node)]}" if dotted else node.attr)
            attributes += 1
    whole = {r for r in reads if "." not in r}
    reads = {r for r in reads if r.partition(".")[0] not in whole or "." not in r}
    return tuple(sorted(reads)) if names == attributes else None


def own_calls(parsed: Parsed, owner: type, is_class: bool, held: dict | None = None
              ) -> Parsed:
    """`parsed`, a method of `owner` (a classmethod if `is_class`), with its calls of
    methods of self rewritten as the module docstring says (and of the objects its
    attributes in `held` hold, of those classes)."""
    out, _ = _Calls(parsed, owner, is_class, (), top=True, held=held or {}).run()
    return out


@functools.cache
def _instance_copy(fun: types.FunctionType, owner: type, chain: tuple, held: tuple = ()
                   ) -> tuple[types.FunctionType, tuple[str, ...]]:
    """A copy of method `fun` of `owner` that takes the attributes of self it reads in
    place of self, and those attributes (`child.W` of one in `held`)."""
    parsed, attributes = _Calls(parse(fun), owner, False, chain, top=False,
                                held=dict(held)).run()
    return materialize(parsed, {**parsed.env.globals, **parsed.env.closure},
                       fun.__qualname__), attributes


class _Calls(gast.NodeTransformer):
    """Rewrites the calls of methods of self in one method (see `own_calls`)."""

    def __init__(self, parsed: Parsed, owner: type, is_class: bool, chain: tuple, top: bool,
                 held: dict):
        self.p, self.owner, self.is_class, self.top = parsed, owner, is_class, top
        self.held = held   # attribute of self -> the class of the object it holds
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
        if isinstance(func, gast.Attribute) and self._of_self(func.value) and \
                func.value.attr in self.held:
            return self.held_call(node, func.value.attr)
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
            fun, attributes = _instance_copy(found, self.owner, self.chain, tuple(sorted(
                self.held.items(), key=lambda kv: kv[0])))
            node.func = self.bind(func.attr, fun, func)
            node.args = [self.visit(self._attribute(a, func)) for a in attributes] + node.args
        else:
            raise self.error(node, f"{self.self}.{func.attr} is not a method of the "
                                   f"{self.what}'s class {self.owner.__name__} srcgrad can "
                                   f"follow (a static, class or instance method)")
        return node

    def held_call(self, node: gast.Call, attr: str) -> gast.Call:
        """`self.child.m(a)`, child holding an object of class `self.held[attr]`: its
        method's function, or a copy of it taking the attributes of child it reads."""
        cls, func = self.held[attr], node.func
        found = inspect.getattr_static(cls, func.attr, MISSING)
        node.args = [self.visit(a) for a in node.args]
        node.keywords = [self.visit(k) for k in node.keywords]
        if isinstance(found, staticmethod):
            node.func = self.bind(func.attr, found.__func__, func)
        elif isinstance(found, classmethod):
            node.func = self.bind(func.attr, getattr(cls, func.attr), func)
        elif isinstance(found, types.FunctionType):
            if found in self.chain:
                raise self.error(node, f"{found.__qualname__} calls itself (directly or "
                                       f"through other methods): recursion cannot be "
                                       f"differentiated", RecursiveFunction)
            fun, attributes = _instance_copy(found, cls, self.chain)
            node.func = self.bind(func.attr, fun, func)
            node.args = [self.visit(self._attribute(f"{attr}.{a}", func))
                         for a in attributes] + node.args
        else:
            raise self.error(node, f"{self.self}.{attr}.{func.attr} is not a method of "
                                   f"{cls.__name__} srcgrad can follow (a static, class or "
                                   f"instance method)")
        return node

    def visit_Attribute(self, node: gast.Attribute) -> gast.AST:
        if not self.top and isinstance(node.ctx, gast.Load) and self._of_self(node.value) \
                and node.value.attr in self.held:
            return self.visit_held(node)
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

    def visit_held(self, node: gast.Attribute) -> gast.AST:
        """`self.child.W` in a method called, child in `held`: a parameter of its own."""
        key = f"{node.value.attr}.{node.attr}"
        if key not in self.attributes:
            self.attributes[key] = self.namer.fresh(
                f"{self.self}_{node.value.attr}_{node.attr}")
        return b.located(b.name(self.attributes[key]), node)

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
        node: gast.expr = b.name(self.self)
        for part in attr.split("."):   # (`child.W`: self.child.W)
            node = b.make(gast.Attribute, value=node, attr=part, ctx=gast.Load())
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
