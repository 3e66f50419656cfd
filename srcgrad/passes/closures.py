"""closures: lambdas, nested `def`s and `functools.partial` become ordinary user functions.

Requires a parsed function (`Parsed`, after `annotate` and `pytrees`). Guarantees a new
`Parsed` whose tree defines no function (no nested `def`, no lambda), binds no local name
to a function and passes no closure or partial as an argument, or `parsed` itself when
there is nothing to do:

* a nested `def` or lambda (named, `sq = lambda v: v * v`, or inline) is lifted: it
  becomes a function object of its own, whose parameters are the enclosing locals it
  reads (its captures) followed by its own, and each call passes the captures first,
  `sq(x)` -> `sq(a, x)` (the env resolves the callee to the lifted function);
* `p = functools.partial(g, w)` takes `w` where it stands (`p_0 = w`) and `p(x)` calls
  `g(p_0, x)`; a module-level partial object is called the same way;
* a call of a user function that passes a function value (`apply(sq, x)`, `apply(np.sin,
  x)`, a lambda or a partial) calls a copy of that function specialised on it, whose
  parameter for the function is replaced by parameters for what the value adds to its
  calls (`apply(a, x)`);
* a name bound once to a function that is not a closure is that function: `f = np.sin`
  calls np.sin; `f = g if c else h` takes c where it stands (`f_test = c`) and `f(x)` is
  `g(x) if f_test else h(x)` (`choose`); a loop over a display of functions (`for f in
  [np.sin, np.cos]:`, over a name bound to one, or `enumerate` of one) is one copy of its
  body per function;
* a default that is not a constant (`lambda v, a=a: ...`) is taken where the function is
  defined, as Python does, and passed by keyword at every call that leaves it out.
* a call of a classmethod bound to its class (`Model.make(x)`, `cls.make(x)` in another)
  calls a copy without its first parameter, whose reads of the class's attributes that
  are values (`cls.scale`) are globals taken now, as globals are (`bound_class`).

The lifted functions and the specialised copies are registered with `parse`
(`register_generated`), so the rest of the pipeline differentiates them as it does any
helper (`compiler.callee`), in reverse and in forward mode. A capture is passed at the
call, which is when Python reads a closure's free variable too (late binding).

What cannot be followed is refused at the user's line: a closure that writes into
(`buf[i] = ...`) or through (`obj.a = ...`) a captured value, `nonlocal`, a function value
that escapes (returned, stored, compared, passed to a library function: but `map(f, x)`
is the generator expression `(f(v) for v in x)` it stands for, `_mapped`, and
`functools.reduce(f, s)` that of its steps, `reduce((acc := f(acc, v)) for v in s)`,
`reduced`, which `comprehensions` makes a loop), a name bound
to a function value more than once, a closure defined inside a `with` block, and
recursion (a closure that calls itself, or a function value passed around a cycle).
Exists so that the helper machinery, not a second one, differentiates closures.

>>> import numpy as np
>>> from srcgrad.frontend.parse import parse
>>> from srcgrad.codegen import to_source
>>> def f(x, a):
...     sq = lambda v: a * v * v
...     return np.sum(sq(x))
>>> print(to_source(lift_closures(parse(f)).tree).strip())
def f(x, a):
    return np.sum(sq_1(a, x))
"""

from __future__ import annotations

import ast
import copy
import functools
import inspect
import types
import weakref
from dataclasses import dataclass, field
from typing import Any

import gast

from .. import builder as b
from ..errors import RecursiveFunction, UnsupportedSyntax
from ..frontend.parse import (
    MISSING,
    Env,
    Parsed,
    installed,
    is_user_function,
    parse,
    register_generated,
)
from ..naming import Namer, names_in
from ..rules import fact

_SCOPES = (gast.FunctionDef, gast.Lambda)
_MADE: weakref.WeakSet = weakref.WeakSet()   # the functions lifted or specialised here


@dataclass
class _Value:
    """A function value the code names: the function a call of it calls (as `ref` in the
    env) and the arguments it adds to the call's."""

    fun: Any
    ref: str
    params: list[str]                                   # the function's, in order
    leading: list[gast.expr] = field(default_factory=list)       # captures, partial's args
    keywords: dict[str, gast.expr] = field(default_factory=dict)  # a partial's keywords
    defaults: dict[str, gast.expr] = field(default_factory=dict)  # taken at the definition

    def extras(self) -> list[gast.expr]:
        return [*self.leading, *self.keywords.values(), *self.defaults.values()]

    def plain(self) -> bool:
        """Whether it is a global function as it is (`np.sin`): a global like any other."""
        return not self.extras() and self.fun not in _MADE


@dataclass
class _Choice:
    """A name bound to `f if c else g` of function values: `c` taken where it is bound
    (`test`), and the values."""

    test: gast.expr
    then: Any                                           # a _Value or a _Choice
    other: Any

    def extras(self) -> list[gast.expr]:
        return [self.test, *self.then.extras(), *self.other.extras()]

    def plain(self) -> bool:
        return False


@dataclass
class _Functions:
    """A name bound to a list or tuple display of function values, which a loop over it
    runs through one after the other (`block`)."""

    items: list[_Value]

    def extras(self) -> list[gast.expr]:
        return [e for v in self.items for e in v.extras()]

    def plain(self) -> bool:
        return False


@dataclass
class _Session:
    """What one lifting shares with the liftings it starts (closures, specialised copies):
    the copies made so far, and the globals of the functions made, filled in at the end."""

    specs: dict[tuple, types.FunctionType] = field(default_factory=dict)
    scopes: list[tuple[dict, dict]] = field(default_factory=list)   # (globals, env names)

    def finish(self) -> None:
        for glob, names in self.scopes:
            glob.update(names)


def lift_closures(parsed: Parsed) -> Parsed:
    """`parsed` with its closures, partials and function arguments made calls of user
    functions (see the module docstring); `parsed` itself when it has none."""
    if not _lifts(parsed):
        return parsed
    session = _Session()
    out = _Lifter(parsed, {}, (), session, None).run()
    session.finish()
    return out


def _lifts(parsed: Parsed) -> bool:
    """Whether `parsed` defines a function, makes a partial, calls a module-level one, or
    passes a function (a global one: `apply(np.sin, x)`) to a user function."""
    local = _locals(parsed.tree)
    for node in _own(parsed.tree, True):
        if isinstance(node, _SCOPES):
            return True
        seq = node.value if isinstance(node, gast.Assign) else \
            node.iter if isinstance(node, gast.For) else None
        if seq is not None and (_chosen(seq, parsed.env, local) or isinstance(
                seq, (gast.List, gast.Tuple)) and seq.elts and all(
                    _chosen(e, parsed.env, local) for e in seq.elts)):
            return True
        if isinstance(node, gast.Call):
            callee = parsed.env.resolve(node.func, local)
            if callee is functools.partial or isinstance(callee, functools.partial) or \
                    callee is functools.reduce or _classmethod(callee) or \
                    _object_method(callee) or \
                    is_user_function(callee) and any(
                        _function_like(parsed.env.resolve(a, local))
                        for a in [*node.args, *(k.value for k in node.keywords)]):
                return True
    return False


class _Lifter(gast.NodeTransformer):
    """Lifts the closures of one function and rewrites its uses of function values."""

    def __init__(self, parsed: Parsed, values: dict[str, _Value], chain: tuple,
                 session: _Session, namer: Namer | None):
        self.p = parsed
        self.tree = copy.deepcopy(parsed.tree)
        self.values = dict(values)          # names of function values in scope
        self.chain = chain                  # the functions specialised on the way here
        self.session = session
        self.names = dict(parsed.env.closure)
        self.env = Env(parsed.env.globals, self.names)
        self.glob = {**parsed.env.globals, **parsed.env.closure}
        session.scopes.append((self.glob, self.names))
        self.namer = namer or Namer(names_in(self.tree) | set(self.names))
        self.locals = _locals(self.tree)
        self.emits: dict[str, list[gast.stmt]] = {}   # definition -> what it takes
        self.target: str | None = None   # the name the statement being visited assigns
        self.bindings: dict[int, str] = {}   # id of a statement binding a function value

    def error(self, node: gast.AST, message: str, kind=UnsupportedSyntax):
        return kind(message, filename=self.p.filename, lineno=getattr(node, "lineno", None),
                    col=getattr(node, "col_offset", None))

    # ---- the function ----
    def run(self) -> Parsed:
        named = self.definitions()
        for name in self.order(named):
            self.emits[name] = []
            self.values[name] = self.define(named[name], name)
        self.tree.body = self.block(self.tree.body)
        return Parsed(self.p.fun, self.tree, self.p.filename, self.p.lines, self.env)

    def definitions(self) -> dict[str, gast.stmt]:
        """The statements that bind a name to a function value: `def`, `= lambda`,
        `= functools.partial(...)`; each such name bound once."""
        named: dict[str, gast.stmt] = {}
        params = {a.id for a in self.tree.args.args}
        for stmt, inside_with in _statements(self.tree.body):
            name = self.defined(stmt)
            if inside_with and (name is not None or any(isinstance(n, _SCOPES)
                                                        for n in _own(stmt))):
                raise self.error(stmt, "a closure defined inside a 'with' block cannot be "
                                       "differentiated: define it before the block")
            stores = [n for n in _own(self.tree, True) if isinstance(n, gast.Name)
                      and n.id == name and not isinstance(n.ctx, gast.Load)]
            if name is None:
                name = self.bound_function(stmt, set(named), params)
                if name is not None:
                    named[name] = stmt
                    self.bindings[id(stmt)] = name
                continue
            if name in named or name in params or name in self.values or \
                    len(stores) > (0 if isinstance(stmt, gast.FunctionDef) else 1):
                raise self.error(stmt, f"{name!r} is bound to a function here and to "
                                       f"something else elsewhere: give each its own name")
            named[name] = stmt
            self.bindings[id(stmt)] = name
        return named

    def bound_function(self, stmt: gast.stmt, known: set[str], params: set[str]
                       ) -> str | None:
        """The name `stmt` binds, bound nowhere else, to a function value that is not a
        closure: a global function (`f = np.sin`), a name of one known here, a choice
        between them (`f = np.sin if c else np.cos`) or a display of them (`fs = [np.sin,
        np.cos]`); else None."""
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
                isinstance(stmt.targets[0], gast.Name)) or stmt.targets[0].id in params:
            return None
        name, value = stmt.targets[0].id, stmt.value
        stores = [n for n in _own(self.tree, True) if isinstance(n, gast.Name)
                  and n.id == name and not isinstance(n.ctx, gast.Load)]
        known = known | set(self.values)
        items = value.elts if isinstance(value, (gast.List, gast.Tuple)) else [value]
        if len(stores) == 1 and items and all(_chosen(e, self.env, self.locals, known)
                                              for e in items):
            return name
        return None

    def defined(self, stmt: gast.stmt) -> str | None:
        if isinstance(stmt, gast.FunctionDef):
            return stmt.name
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], gast.Name) and (
                    isinstance(stmt.value, gast.Lambda) or self.is_partial(stmt.value)):
            return stmt.targets[0].id
        return None

    def is_partial(self, node: gast.AST) -> bool:
        return isinstance(node, gast.Call) and \
            self.env.resolve(node.func, self.locals) is functools.partial

    def order(self, named: dict[str, gast.stmt]) -> list[str]:
        """The names in an order where each comes after those it reads; a cycle (a
        closure that calls itself, directly or through others) is refused."""
        done: list[str] = []

        def visit(name: str, path: tuple[str, ...]) -> None:
            if name in done:
                return
            if name in path:
                raise self.error(named[name], f"{name} calls itself (directly or through "
                                              f"other closures): recursion cannot be "
                                              f"differentiated", RecursiveFunction)
            for other in _free(named[name]):
                if other in named:
                    visit(other, path + (name,))
            done.append(name)
        for name in named:
            visit(name, ())
        return done

    # ---- definitions ----
    def define(self, stmt: gast.stmt, name: str) -> _Value | _Choice | _Functions:
        if isinstance(stmt, gast.Assign) and not isinstance(stmt.value, gast.Lambda) and \
                not self.is_partial(stmt.value):   # (`bound_function`)
            if isinstance(stmt.value, (gast.List, gast.Tuple)):
                return _Functions([self.chosen_value(e, name) for e in stmt.value.elts])
            return self.chosen_value(stmt.value, name)
        if isinstance(stmt, gast.FunctionDef):
            value = self.lift(stmt, name)
        elif isinstance(stmt.value, gast.Lambda):
            value = self.lift(stmt.value, name)
        else:
            return self.partial(stmt.value, name)
        value.defaults = {k: self.take(v, f"{name}_{k}", name)
                          for k, v in value.defaults.items()}
        return value

    def chosen_value(self, node: gast.expr, name: str) -> _Value | _Choice:
        """The value of `node`, a function value `_chosen` accepts; a choice's test
        taken where `name` is bound."""
        if isinstance(node, gast.IfExp):
            return _Choice(self.take(node.test, f"{name}_test", name),
                           self.chosen_value(node.body, name),
                           self.chosen_value(node.orelse, name))
        if isinstance(node, gast.Name) and isinstance(self.values.get(node.id), _Functions):
            raise self.error(node, f"{node.id!r} is a list of functions: loop over it, or "
                                   f"index it with a constant")
        value = self.value_of(node)
        if value is None:
            raise self.error(node, f"{name!r} is bound to something that is not a function "
                                   f"here")
        return value

    def lift(self, node: gast.FunctionDef | gast.Lambda, name: str) -> _Value:
        """The lifted function of closure `node`, as a value: its captures first; its
        defaults that are not constants in `defaults`, as written."""
        a = node.args
        if a.posonlyargs or a.vararg or a.kwonlyargs or a.kwarg or \
                getattr(node, "decorator_list", None):
            raise self.error(node, f"closure {name!r} takes *args, keyword-only or "
                                   f"positional-only parameters, or is decorated: only "
                                   f"plain parameters can be differentiated")
        for inner in _own(node, True):
            if isinstance(inner, gast.Nonlocal):
                raise self.error(inner, "'nonlocal' cannot be differentiated: return the "
                                        "new value from the closure instead")
        free = _free(node)
        captured: list[str] = []
        for n in free:
            if n in self.values:
                captured += [m.id for e in self.values[n].extras() for m in gast.walk(e)
                             if isinstance(m, gast.Name) and m.id not in self.names]
            elif n in self.locals:
                captured.append(n)
        captured = list(dict.fromkeys(captured))
        self.check_writes(node, name, set(captured))
        params = [p.id for p in a.args]
        count = len(a.args) - len(a.defaults)
        defaults: list[gast.expr] = []
        taken: dict[str, gast.expr] = {}
        for param, default in zip(params[count:], a.defaults, strict=True):
            if constant_default(default):
                defaults.append(copy.deepcopy(default))
            else:   # evaluated where the closure is defined: passed by keyword
                defaults.append(b.const(None))
                taken[param] = default
        body = node.body if isinstance(node, gast.FunctionDef) else \
            [b.located(b.ret(node.body), node.body)]
        fn = b.function(name, captured + params, copy.deepcopy(body))
        fn.args.defaults = defaults
        fn.lineno, fn.col_offset = node.lineno, node.col_offset
        siblings = {n: v for n, v in self.values.items() if n in free}
        inner = _Lifter(Parsed(None, fn, self.p.filename, self.p.lines, self.env), siblings,
                        self.chain, self.session, self.namer)
        fun = materialize(inner.run(), inner.glob, self.qualname(name))
        value = _Value(fun, self.namer.fresh(name), captured + params,
                       [b.name(c) for c in captured], defaults=taken)
        self.names[value.ref] = fun
        return value

    def qualname(self, name: str) -> str:
        owner = getattr(self.p.fun, "__qualname__", None) or self.p.tree.name
        return f"{owner}.<locals>.{name}"

    def check_writes(self, node: gast.AST, name: str, captured: set[str]) -> None:
        """A closure may read what it captures, never write into it: the write would be
        the caller's array, changed where the adjoint cannot see it."""
        for inner in _own(node, True):
            target = inner.target if isinstance(inner, gast.AugAssign) else inner
            if isinstance(target, (gast.Subscript, gast.Attribute)) and \
                    isinstance(target.ctx, gast.Store):
                base = target
                while isinstance(base, (gast.Subscript, gast.Attribute)):
                    base = base.value
                if isinstance(base, gast.Name) and base.id in captured:
                    raise self.error(inner, f"closure {name!r} writes into {base.id!r}, "
                                            f"which it captures: return the new value "
                                            f"from the closure and assign it outside")

    def partial(self, call: gast.Call, name: str | None) -> _Value:
        """The value of `functools.partial(fun, *args, **kw)`; for the partial `name`,
        its arguments taken into new locals where it is defined (a partial binds values,
        not names)."""
        if not call.args or any(k.arg is None for k in call.keywords):
            raise self.error(call, "functools.partial here needs the function first and "
                                   "no '**' arguments")
        base = self.value_of(call.args[0])
        if base is None:
            raise self.error(call, "functools.partial of something that is not a function "
                                   "of yours, a closure or a function with a rule")
        args = [self.take(a, f"{name}_{k}", name) if name else a
                for k, a in enumerate(call.args[1:])]
        kws = {k.arg: self.take(k.value, f"{name}_{k.arg}", name) if name else k.value
               for k in call.keywords}
        return _Value(base.fun, base.ref, base.params, base.leading + args,
                      {**base.keywords, **kws}, dict(base.defaults))

    def take(self, expr: gast.expr, base: str, definition: str) -> gast.expr:
        """`expr` as it is where `definition` stands: a constant, or a new local that
        is assigned it there."""
        if constant_default(expr) or self.env.resolve(expr, self.locals) is not MISSING:
            return copy.deepcopy(expr)   # (globals are read once, at transform time)
        name = self.namer.fresh(base)
        self.emits[definition].append(b.located(b.assign(name, expr), expr))
        return b.name(name)

    # ---- uses ----
    def block(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            name = self.bindings.get(id(stmt))
            if name is not None:
                out += [self.visit_statement(s) for s in self.emits[name]]
                continue
            if isinstance(stmt, gast.For) and (values := self.looped(stmt)) is not None:
                target, count = stmt.target, None
                if isinstance(target, gast.Tuple):   # enumerate(fs): the count, then f
                    count, target = target.elts
                target, saved = target.id, self.values.get(target.id)
                for k, value in enumerate(values):   # (one copy of the body per function)
                    self.values[target] = value
                    counted = [] if count is None else \
                        [b.located(b.assign(count.id, b.const(k)), stmt)]
                    out += self.block(counted + copy.deepcopy(stmt.body))
                self.values.pop(target)
                if saved is not None:
                    self.values[target] = saved
                continue
            for f in ("body", "orelse"):
                if isinstance(getattr(stmt, f, None), list):
                    inner = self.block(getattr(stmt, f))
                    setattr(stmt, f, inner or ([b.make(gast.Pass)] if f == "body" else []))
            out.append(self.visit_statement(stmt))
        return out

    def looped(self, stmt: gast.For) -> list | None:
        """The function values a loop runs through, `for f in [np.sin, np.cos]:` (or over
        a name bound to such a display), which `block` unrolls; None for other loops."""
        it, target = stmt.iter, stmt.target
        if isinstance(it, gast.Call) and self.env.resolve(it.func, self.locals) is enumerate \
                and len(it.args) == 1 and not it.keywords and isinstance(target, gast.Tuple) \
                and len(target.elts) == 2 and isinstance(target.elts[0], gast.Name):
            it, target = it.args[0], target.elts[1]
        if isinstance(it, gast.Name) and isinstance(self.values.get(it.id), _Functions):
            values = self.values[it.id].items
        elif isinstance(it, (gast.List, gast.Tuple)) and it.elts and all(
                _chosen(e, self.env, self.locals, set(self.values)) and
                not isinstance(e, gast.IfExp) for e in it.elts):
            values = [self.chosen_value(e, "f") for e in it.elts]
        else:
            return None
        jumps = [n for s in stmt.body for n in _own(s)
                 if isinstance(n, (gast.Break, gast.Continue, gast.FunctionDef, gast.Lambda))]
        if not isinstance(target, gast.Name) or stmt.orelse or jumps:
            raise self.error(stmt, "a loop over functions is differentiated as one copy of "
                                   "its body per function: one name, no 'break', "
                                   "'continue', 'else' or closures in it")
        return values

    def visit_statement(self, stmt: gast.stmt) -> gast.stmt:
        """`stmt` with its expressions rewritten (not its blocks, nor a `with`'s items:
        annotations)."""
        target = stmt.targets[0] if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 \
            else getattr(stmt, "target", None) if isinstance(stmt, gast.AugAssign) else None
        self.target = target.id if isinstance(target, gast.Name) else None
        for f, value in gast.iter_fields(stmt):
            if f in ("body", "orelse") or isinstance(stmt, gast.With) and f == "items":
                continue
            if isinstance(value, gast.AST):
                setattr(stmt, f, self.visit(value))
            elif isinstance(value, list):
                setattr(stmt, f, [self.visit(v) if isinstance(v, gast.AST) else v
                                  for v in value])
        return stmt

    def visit_Name(self, node: gast.Name) -> gast.Name:
        if node.id in self.values and self.values[node.id].plain():
            return b.located(b.name(self.values[node.id].ref), node)
        if node.id in self.values:
            raise self.error(node, f"the function {node.id!r} can only be called, or passed "
                                   f"to a function of yours: it cannot be returned, stored "
                                   f"or compared")
        return node

    def visit_Lambda(self, node: gast.Lambda) -> gast.AST:
        raise self.error(node, "a lambda can only be called, or passed to a function of "
                               "yours: it cannot be returned or stored")

    def visit_Call(self, node: gast.Call) -> gast.AST:
        if isinstance(node.func, gast.Name) and \
                isinstance(self.values.get(node.func.id), _Choice):
            return self.choose(self.values[node.func.id], node)
        if self.env.resolve(node.func, self.locals) is functools.reduce:
            return self.reduced(node)
        if self.env.resolve(node.func, self.locals) is map and len(node.args) >= 2 and \
                not node.keywords and self.value_of(node.args[0]) is not None and \
                not any(isinstance(a, gast.Starred) for a in node.args):
            return self.visit(_mapped(node, self.namer))
        value = self.value_of(node.func, local_only=True)
        obj = self.env.resolve(node.func, self.locals)
        if value is None and isinstance(obj, functools.partial):
            value = self.value_of(node.func)
        if value is not None:
            node = self.call_value(value, node)
        else:
            node.func = self.visit(node.func)
        callee = self.env.resolve(node.func, self.locals)
        if _classmethod(callee):
            ref = self.namer.fresh(callee.__func__.__name__)
            callee = self.names[ref] = bound_class(callee.__func__, callee.__self__)
            node.func = b.located(b.name(ref), node.func)
        elif _object_method(callee):
            from ..methods import called_on_object
            ref = self.namer.fresh(callee.__func__.__name__)
            callee, attributes = called_on_object(callee)
            self.names[ref] = callee
            owner = node.func.value.id if isinstance(node.func, gast.Attribute) and \
                isinstance(node.func.value, gast.Name) else "self"
            node.func = b.located(b.name(ref), node.func)
            taken = []
            for attr, value in attributes:   # (read now, as globals are)
                ref = self.namer.fresh(f"{owner}_{attr.replace('.', '_')}")
                self.names[ref] = value
                taken.append(b.located(b.name(ref), node))
            node.args = taken + node.args
        mine = is_user_function(callee)
        keyed = any(k.arg == "key" for k in node.keywords) and bool(fact(callee, "item_key"))
        found = {k: self.value_of(a, local_only=not mine) for k, a in enumerate(node.args)}
        found.update({k.arg: self.value_of(k.value, local_only=not mine, name=(
            f"{self.target or _name_of(callee, 'call')}_key" if keyed and k.arg == "key"
            else "lambda_")) for k in node.keywords})
        if not mine:   # (a global function as it is passes as the global it is)
            found = {k: None if v is not None and v.plain() else v for k, v in found.items()}
        bound = {k: v for k, v in found.items() if v is not None}
        if any(isinstance(v, (_Choice, _Functions)) for v in bound.values()):
            raise self.error(node, "a name bound to a choice between functions (or to a list "
                                   "of them) can only be called here, not passed on")
        if keyed and set(bound) == {"key"}:
            return self.keyed(node, bound["key"])
        if bound and not mine:
            raise self.error(node, "a closure, lambda or partial can only be called, or "
                                   "passed to a function of yours, not to a library "
                                   "function")
        node.args = [a if found[k] else self.visit(a) for k, a in enumerate(node.args)]
        for k in node.keywords:
            k.value = k.value if found[k.arg] else self.visit(k.value)
        return self.specialize(callee, node, bound) if bound else node

    def choose(self, choice: _Choice, call: gast.Call) -> gast.IfExp:
        """`f(x)` of `f = g if c else h`: `g(x) if c else h(x)`, c as it was where f was
        bound (only the branch taken runs, as only its function is called)."""
        def branch(value):
            if isinstance(value, _Choice):
                return self.choose(value, copy.deepcopy(call))
            return self.visit(self.call_value(value, copy.deepcopy(call)))
        return b.located(b.make(gast.IfExp, test=copy.deepcopy(choice.test),
                                body=branch(choice.then), orelse=branch(choice.other)), call)

    def reduced(self, call: gast.Call) -> gast.Call:
        """`functools.reduce(f, s[, init])` as `reduce((acc := f(acc, item) for item in
        s)[, init])`, the generator expression of its steps, whose call of f is then a
        call like any (a closure's with its captures); `comprehensions.lower` makes it
        the loop (or, over items known now, the calls) that Python's reduce runs."""
        options = {k.arg: k.value for k in call.keywords}
        args = list(call.args) + ([options.pop("initial")] if "initial" in options and
                                  len(call.args) == 2 else [])
        if options or not 2 <= len(args) <= 3 or \
                any(isinstance(a, gast.Starred) for a in args):
            raise self.error(call, "functools.reduce is differentiated as reduce(f, "
                                   "sequence) or reduce(f, sequence, initial)")
        f = args[0]
        if not (isinstance(f, gast.Lambda) or self.is_partial(f) or isinstance(
                f, gast.Name) and f.id in self.values or _function_like(
                self.env.resolve(f, self.locals))):
            raise self.error(call, "functools.reduce(f, ...) is differentiated where f is a "
                                   "function: a lambda, a nested def, a function of yours "
                                   "or one with a rule (operator.add, np.multiply)")
        acc, item = self.namer.fresh("acc"), self.namer.fresh("item")
        step = b.make(gast.Call, func=f, args=[b.name(acc), b.name(item)], keywords=[])
        if isinstance(f, gast.Lambda):   # (named after what it makes: `total_step`)
            step = self.call_value(self.value_of(f, name=f"{self.target or 'reduce'}_step"),
                                   step)
        steps = b.make(gast.GeneratorExp, elt=b.make(
            gast.NamedExpr, target=b.name(acc, store=True), value=step), generators=[b.make(
                gast.comprehension, target=b.name(item, store=True), iter=args[1], ifs=[],
                is_async=0)])
        ref = self.namer.fresh("reduce")
        self.names[ref] = functools.reduce
        return b.located(b.call(b.name(ref), self.visit(b.located(steps, call)),
                                *(self.visit(a) for a in args[2:])), call)

    def value_of(self, node: gast.AST, local_only: bool = False,
                 name: str = "lambda_") -> _Value | None:
        """The function value `node` denotes (a name of one, a lambda, lifted as `name`; a
        partial; unless `local_only`, a global function or partial object too), or None."""
        if isinstance(node, gast.Name) and node.id in self.values:
            return self.values[node.id]
        if isinstance(node, gast.Lambda):
            value = self.lift(node, name)
            value.defaults = {k: self.visit(v) for k, v in value.defaults.items()}
            return value
        if self.is_partial(node):
            return self.partial(node, None)
        if local_only or not isinstance(node, (gast.Name, gast.Attribute)):
            return None
        obj = self.env.resolve(node, self.locals)
        if isinstance(obj, functools.partial) and _function_like(obj.func):
            base = self.bind_global(obj.func)
            return _Value(base.fun, base.ref, base.params, [self.constant(a) for a in obj.args],
                          {k: self.constant(v) for k, v in obj.keywords.items()})
        return self.bind_global(obj) if _function_like(obj) else None

    def bind_global(self, obj: Any) -> _Value:
        try:
            params = list(inspect.signature(obj).parameters)
        except (TypeError, ValueError):
            params = []
        ref = self.namer.fresh(_name_of(obj, "function"))
        self.names[ref] = obj
        return _Value(obj, ref, params)

    def constant(self, obj: Any) -> gast.expr:
        """A module-level partial's bound argument: a constant, or a global of its own."""
        if obj is None or isinstance(obj, (bool, int, float, str)):
            return b.const(obj)
        ref = self.namer.fresh("bound")
        self.names[ref] = obj
        return b.name(ref)

    def keyed(self, call: gast.Call, key: _Value) -> gast.Call:
        """`sorted(..., key=k)` (any function whose record says `item_key`: max, min too)
        of a lambda or nested def `k`: `key=` its lifted function (a lambda's named after
        the name the call is assigned to, `s_key`, else the function's, `sorted_key`),
        which normalize calls on each item (`sorted_items`, `keyed`); a
        key that reads the enclosing function's values (or has defaults) is refused."""
        if key.extras():
            raise self.error(call, "a key= lambda or nested def that reads values of the "
                                   "function it is in (or has defaults) cannot be "
                                   "differentiated: give it the item alone, or compute "
                                   "the keys and pick the items with np.argsort")
        call.args = [self.visit(a) for a in call.args]
        for k in call.keywords:
            k.value = b.located(b.name(key.ref), k.value) if k.arg == "key" else \
                self.visit(k.value)
        return call

    def call_value(self, value: _Value, call: gast.Call) -> gast.Call:
        """`call` of function value `value`: its function, with the arguments it adds."""
        if any(k.arg is None for k in call.keywords):
            raise self.error(call, "'**' arguments in calls cannot be differentiated")
        keywords = {**value.keywords, **{k.arg: k.value for k in call.keywords}}
        positional = value.params[:len(value.leading) + len(call.args)]
        for param, default in value.defaults.items():
            if param not in keywords and param not in positional:
                keywords[param] = default
        new = b.call(b.name(value.ref), *[copy.deepcopy(e) for e in value.leading],
                     *call.args, **{k: copy.deepcopy(v) for k, v in keywords.items()})
        return b.located(new, call)

    def specialize(self, callee: Any, call: gast.Call, bound: dict) -> gast.Call:
        """`call` of user function `callee` that passes function values (`bound`: by
        position or keyword): a call of `callee` specialised on them, every argument
        given in order."""
        if callee in self.chain:
            raise self.error(call, f"{callee.__name__} passes a function to itself "
                                   f"(directly or through other functions): recursion "
                                   f"cannot be differentiated", RecursiveFunction)
        sig = inspect.signature(callee)
        if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
               for p in sig.parameters.values()):
            raise self.error(call, f"{callee.__name__} takes *args or keyword-only "
                                   f"parameters: a function passed to it cannot be "
                                   f"differentiated")
        try:
            given = sig.bind(*call.args, **{k.arg: k.value for k in call.keywords}).arguments
        except TypeError as exc:
            raise self.error(call, f"this call does not fit {callee.__name__}: {exc}") \
                from None
        names = list(sig.parameters)
        by_name = {names[k] if isinstance(k, int) else k: v for k, v in bound.items()}
        args: list[gast.expr] = []
        for param in sig.parameters.values():
            if param.name in given and param.name not in by_name:
                args.append(given[param.name])
            elif param.name not in by_name and constant_default(b.const(param.default)):
                args.append(b.const(param.default))
            elif param.name not in by_name and _function_like(param.default):
                by_name[param.name] = self.bind_global(param.default)
            elif param.name not in by_name:
                raise self.error(call, f"pass {param.name!r} to {callee.__name__} here: "
                                       f"its default is not a constant")
            if param.name in by_name:
                args += [copy.deepcopy(e) for e in by_name[param.name].extras()]
        spec = self.spec(callee, by_name)
        ref = self.namer.fresh(spec.__name__)
        self.names[ref] = spec
        return b.located(b.call(b.name(ref), *args), call)

    def spec(self, callee: Any, by_name: dict[str, _Value]) -> types.FunctionType:
        """The copy of `callee` whose parameters in `by_name` are those function values:
        in each one's place, a parameter for each argument the value adds."""
        key = (callee, tuple((p, id(v.fun), len(v.leading), tuple(v.keywords),
                              tuple(v.defaults)) for p, v in sorted(by_name.items())))
        if key in self.session.specs:
            return self.session.specs[key]
        parsed = parse(callee)
        tree = parsed.tree
        namer = Namer(names_in(tree) | set(parsed.env.closure))
        values: dict[str, _Value] = {}
        params: list[str] = []
        for p in [a.id for a in tree.args.args]:
            if p not in by_name:
                params.append(p)
                continue
            v = by_name[p]
            fresh = [namer.fresh(e.id if isinstance(e, gast.Name) else f"{p}_arg")
                     for e in v.extras()]
            params += fresh
            names = iter(b.name(n) for n in fresh)
            values[p] = _Value(v.fun, namer.fresh(_name_of(v.fun, p)), v.params,
                               [next(names) for _ in v.leading],
                               {k: next(names) for k in v.keywords},
                               {k: next(names) for k in v.defaults})
        fn = b.function(tree.name, params, tree.body)
        fn.lineno, fn.col_offset = tree.lineno, tree.col_offset
        inner = _Lifter(Parsed(parsed.fun, fn, parsed.filename, parsed.lines, parsed.env),
                        values, self.chain + (callee,), self.session, namer)
        for v in values.values():
            inner.names[v.ref] = v.fun
        spec = self.session.specs[key] = materialize(inner.run(), inner.glob,
                                                      callee.__qualname__)
        return spec


def _mapped(call: gast.Call, namer: Namer) -> gast.GeneratorExp:
    """`map(f, a, b)` as the generator expression it stands for, `(f(v, w) for v, w in
    zip(a, b))`: a closure is called there, and `sum`, `max`... reduce it as a loop."""
    func, *seqs = call.args
    names = [namer.fresh("item") for _ in seqs]
    target = b.name(names[0], store=True) if len(seqs) == 1 else \
        b.tuple_([b.name(n, store=True) for n in names], store=True)
    it = seqs[0] if len(seqs) == 1 else b.call(b.name("zip"), *seqs)
    elt = b.make(gast.Call, func=func, args=[b.name(n) for n in names], keywords=[])
    return b.located(b.make(gast.GeneratorExp, elt=elt, generators=[b.make(
        gast.comprehension, target=target, iter=it, ifs=[], is_async=0)]), call)


def materialize(parsed: Parsed, glob: dict, qualname: str) -> types.FunctionType:
    """A function object for a lifted or specialised tree, registered with `parse`: what
    the pipeline differentiates, and what runs where generated code calls it as it is."""
    tree = parsed.tree
    module = gast.gast_to_ast(b.make(gast.Module, body=[copy.deepcopy(tree)],
                                     type_ignores=[]))
    for node in ast.walk(module):   # (lines only: tracebacks name the user's line)
        if "lineno" in node._attributes:
            node.lineno = getattr(node, "lineno", None) or tree.lineno
            node.end_lineno, node.col_offset, node.end_col_offset = node.lineno, 0, 0
    code = next(c for c in compile(module, parsed.filename, "exec").co_consts
                if isinstance(c, types.CodeType))
    defaults = tuple(ast.literal_eval(gast.gast_to_ast(d)) for d in tree.args.defaults)
    fun = types.FunctionType(code, glob, tree.name, defaults or None)
    fun.__qualname__ = qualname
    _MADE.add(fun)
    register_generated(fun, lambda f: Parsed(f, copy.deepcopy(tree), parsed.filename,
                                             parsed.lines, parsed.env))
    return fun


_BOUND: dict[tuple, tuple[dict[str, Any], types.FunctionType]] = {}


def bound_class(fun: types.FunctionType, cls: type) -> types.FunctionType:
    """Classmethod `fun` of `cls` as a function without its first parameter, which names
    `cls` as a global does (one per class values it read: made again when they change)."""
    made = _BOUND.get((fun, cls))
    if made is not None and all(getattr(cls, a, None) is v for a, v in made[0].items()):
        return made[1]
    parsed = parse(fun)
    tree = copy.deepcopy(parsed.tree)
    if not tree.args.args:
        raise UnsupportedSyntax(f"classmethod {fun.__qualname__} takes no class parameter",
                                filename=parsed.filename, lineno=tree.lineno)
    first = tree.args.args.pop(0).id
    env = Env(parsed.env.globals, {**parsed.env.closure, first: cls})
    values = _ClassValues(first, cls, env.closure, Namer(names_in(tree) | set(env.closure)))
    tree = values.visit(tree)
    bound = materialize(Parsed(fun, tree, parsed.filename, parsed.lines, env),
                        {**env.globals, **env.closure}, fun.__qualname__)
    _BOUND[fun, cls] = (values.read, bound)
    return bound


class _ClassValues(gast.NodeTransformer):
    """Reads `cls.attr` of an attribute of class `cls` that is a value (not a function,
    method or property) as a global bound to that value now: a class's constants, as
    globals are taken (numba compiles them as constants)."""

    def __init__(self, first: str, cls: type, names: dict, namer: Namer):
        self.first, self.cls, self.names, self.namer = first, cls, names, namer
        self.read: dict[str, Any] = {}   # attribute -> the value taken

    def visit_Attribute(self, node: gast.Attribute) -> gast.AST:
        if not (isinstance(node.value, gast.Name) and node.value.id == self.first and
                isinstance(node.ctx, gast.Load)):
            return self.generic_visit(node)
        found = inspect.getattr_static(self.cls, node.attr, None)
        if callable(found) or isinstance(found, (staticmethod, classmethod, property)) or \
                not hasattr(self.cls, node.attr):
            return node
        ref = self.namer.fresh(f"{self.first}_{node.attr}")
        self.names[ref] = self.read[node.attr] = getattr(self.cls, node.attr)
        return b.located(b.name(ref), node)


def _chosen(node: gast.AST, env: Env, local: frozenset[str],
            known: set[str] = frozenset()) -> bool:
    """Whether `node` is a function value a name may be bound to (`bound_function`): a
    global function (`np.sin`, `operator.mul`, a function of yours), a name in `known`,
    or `a if c else b` of those."""
    if isinstance(node, gast.IfExp):
        return _chosen(node.body, env, local, known) and _chosen(node.orelse, env, local, known)
    if isinstance(node, gast.Name) and node.id in known:
        return True
    return isinstance(node, (gast.Name, gast.Attribute)) and \
        _function_like(env.resolve(node, local)) and not isinstance(
            env.resolve(node, local), functools.partial)


def _classmethod(obj: Any) -> bool:
    """Whether `obj` is a user's classmethod bound to its class (`Model.make`)."""
    return inspect.ismethod(obj) and isinstance(obj.__self__, type) and \
        is_user_function(obj.__func__)


def _object_method(obj: Any) -> bool:
    """Whether `obj` is a user's method bound to an object (`model.loss`)."""
    return inspect.ismethod(obj) and not isinstance(obj.__self__, type) and \
        is_user_function(obj.__func__) and not installed(obj.__func__.__code__.co_filename)


def _name_of(fun: Any, default: str) -> str:
    name = getattr(fun, "__name__", "")
    return name if isinstance(name, str) and name.isidentifier() else default


def _function_like(obj: Any) -> bool:
    """A function a function value may be: callable, and not a class or a module."""
    return obj is not MISSING and callable(obj) and not isinstance(obj, type)


def constant_default(node: gast.AST) -> bool:
    """A literal number, string, bool or None (`-1.0` too)."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        node = node.operand
    return isinstance(node, gast.Constant) and (
        node.value is None or type(node.value) in (bool, int, float, str))


def _own(node: gast.AST, into: bool = False):
    """The nodes of `node`'s scope, in source order: not those inside the functions it
    defines, but their defaults (evaluated in this scope). `into`: of function `node`'s
    body."""
    if into and isinstance(node, _SCOPES):
        for child in node.body if isinstance(node.body, list) else [node.body]:
            yield from _own(child)
        return
    yield node
    if isinstance(node, _SCOPES):
        for child in [*node.args.defaults, *getattr(node, "decorator_list", [])]:
            yield from _own(child)
        return
    for child in gast.iter_child_nodes(node):
        yield from _own(child)


def _locals(fn: gast.FunctionDef) -> frozenset[str]:
    """The names local to function `fn`: its parameters and what its own scope binds."""
    names = {a.id for a in fn.args.args}
    for n in _own(fn, True):
        if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
            names.add(n.id)
        elif isinstance(n, gast.FunctionDef):
            names.add(n.name)
    return frozenset(names)


def _free(node: gast.AST) -> list[str]:
    """The names a function or lambda (or the statement that defines one, or a partial)
    reads from the scopes around it, in the order they first occur."""
    if isinstance(node, gast.Assign):
        node = node.value
    if not isinstance(node, _SCOPES):   # a partial, a function value: the names it reads
        return list(dict.fromkeys(n.id for n in _own(node) if isinstance(n, gast.Name)))
    a = node.args
    local = {p.id for p in [*a.posonlyargs, *a.args, *a.kwonlyargs,
                            *([a.vararg] if a.vararg else []), *([a.kwarg] if a.kwarg else [])]}
    reads: list[str] = []
    for n in _own(node, True):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            reads.append(n.id)
        elif isinstance(n, gast.Name):
            local.add(n.id)
        elif isinstance(n, gast.FunctionDef):
            local.add(n.name)
            reads += _free(n)
        elif isinstance(n, gast.Lambda):
            reads += _free(n)
        elif isinstance(n, gast.Global):
            local.update(n.names)
    return [r for r in dict.fromkeys(reads) if r not in local]


def _statements(stmts: list[gast.stmt], inside_with: bool = False):
    """Every statement of a block and of the blocks in it (not inside functions), with
    whether it is inside a `with`."""
    for stmt in stmts:
        yield stmt, inside_with
        if isinstance(stmt, _SCOPES):
            continue
        for f in ("body", "orelse"):
            if isinstance(getattr(stmt, f, None), list):
                yield from _statements(getattr(stmt, f),
                                       inside_with or isinstance(stmt, gast.With))
