"""base: what the passes that read a normalized function (`check`, `reverse`, `forward`) share.

What the value of a normalized statement denotes (`Operation`: a rule, a call to a user
function, a copy, a subscript, a tuple, nothing differentiable), the `Namespace` of the
generated module, and `FunctionPass`, which holds (a copy of) one normalized function with
the names it binds, its globals bound in the namespace and read under the names bound there,
and emits its statements with their globals bound; and small readings of a
statement (`target_of`, `changed`, `is_write`, `int_constant`) or of a user function
(`returned`). Exists so that both modes of differentiation read a statement the same way.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gast
import numpy as np

from .. import builder as b
from ..analysis.activity import reached
from ..errors import SrcgradError
from ..frontend.parse import MISSING, Env, Parsed, is_user_function, nested_entry, parse
from ..naming import Namer
from ..rules import (
    NOT_CONSTANT,
    Overridden,
    Rule,
    attributes,
    fact,
    lookup,
    lookup_tangent,
    methods,
)
from ..rules.operator_rules import OPERATORS
from ..runtime import zeros_like
from .annotate import hook, hook_names


@dataclass
class Operation:
    """What the value of one statement denotes, for the activity analysis and the adjoint."""

    kind: str                    # rule | call | copy | subscript | tuple | none | missing
    args: list[gast.AST] = field(default_factory=list)
    kwargs: dict[str, gast.AST] = field(default_factory=dict)
    rule: Rule | None = None
    fun: Any = None              # the primal (a rule), or the user function (a call)
    what: str = ""

    def operands(self) -> list[str]:
        """Names a derivative can flow through."""
        if self.kind in ("none",) or (self.rule is not None and self.rule.kind != "rule"):
            return []
        atoms = self.args[:1] if self.kind == "subscript" else self.args
        atoms = atoms + list(self.kwargs.values())
        return [a.id for a in atoms if isinstance(a, gast.Name)]


class GeneratedFunction:
    """Placeholder under which a generated function's name is reserved in a Namespace."""


class Namespace:
    """The globals of one generated module: name -> (object, compile with numba?)."""

    def __init__(self):
        self.entries: dict[str, tuple[Any, bool]] = {}

    def bind(self, name: str, obj: Any, jit: bool = False, avoid=frozenset()) -> str:
        """Bind `obj` under `name`, or under `name_1`... if taken by something else."""
        candidate, k = name, 0
        while True:
            held = self.entries.get(candidate)
            if candidate not in avoid and (held is None or held[0] is obj):
                self.entries[candidate] = (obj, jit or (held is not None and held[1]))
                return candidate
            k += 1
            candidate = f"{name}_{k}"

    def called(self, node: gast.AST) -> Any:
        """The object a generated call (`name(...)`, `np.sum(...)`) calls, if bound here."""
        return self.resolve(node.func) if isinstance(node, gast.Call) else None

    def resolve(self, node: gast.AST) -> Any:
        """The object a generated name (`zeros_like`) or module attribute (`np.sum`)
        denotes, if bound here; else None."""
        if isinstance(node, gast.Name):
            return self.entries.get(node.id, (None,))[0]
        if isinstance(node, gast.Attribute):
            owner = self.resolve(node.value)
            if isinstance(owner, types.ModuleType):
                return getattr(owner, node.attr, None)
        return None

    def own_arrays(self) -> None:
        """Bind copies of the arrays bound here, and of tuples holding arrays (globals
        the code reads): numba compiles
        them in as constants when it first runs a function, so the Python form reads what
        that compiles, whatever the user's array holds by then (`backend.taken` tells
        the change)."""
        def owned(obj: Any) -> Any:
            if type(obj) is np.ndarray:
                return obj.copy()
            return tuple(map(owned, obj)) if type(obj) is tuple else obj

        for name, (obj, jit) in self.entries.items():
            if type(obj) in (np.ndarray, tuple):
                self.entries[name] = (owned(obj), jit)

    def globals(self, transform=lambda obj, jit: obj) -> dict[str, Any]:
        """The objects to put in the module, without the generated functions' names."""
        return {name: transform(obj, jit) for name, (obj, jit) in self.entries.items()
                if not isinstance(obj, GeneratedFunction)}



def blocks(body: list[gast.stmt]):
    """`body` and every statement list nested in it (bodies and `else`s)."""
    yield body
    for s in body:
        for part in ("body", "orelse"):
            if isinstance(getattr(s, part, None), list):
                yield from blocks(getattr(s, part))


def all_statements(body: list[gast.stmt], into_loops: bool = True):
    """Every statement of `body`, nested ones after their parent; with `into_loops` false,
    not those of loops nested in it (where a `break` would belong to another loop)."""
    for s in body:
        yield s
        if isinstance(s, gast.If):
            yield from all_statements(s.body, into_loops)
            yield from all_statements(s.orelse, into_loops)
        elif into_loops and isinstance(s, (gast.For, gast.While)):
            yield from all_statements(s.body)


def bindings(statements: list[gast.stmt]) -> tuple[dict[str, list[int]], set[int]]:
    """Where each name is bound (indices into `statements`, parameters at -1), and the
    indices of the statements inside a loop."""
    bound: dict[str, list[int]] = {}
    in_loop: set[int] = set()
    position = {id(s): k for k, s in enumerate(statements)}
    for k, s in enumerate(statements):
        targets = [s.target] if isinstance(s, (gast.For, gast.AugAssign)) else \
            getattr(s, "targets", [])
        for t in targets:
            for n in gast.walk(t):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                    bound.setdefault(n.id, []).append(k)
        if isinstance(s, (gast.For, gast.While)):
            in_loop |= {position[id(t)] for t in all_statements(s.body) if id(t) in position}
    return bound, in_loop


def target_of(stmt: gast.stmt) -> str | None:
    """The name an assignment rebinds (None for `x[i] = v`)."""
    if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
        return stmt.targets[0].id
    return None


def int_starts(statements: list[gast.stmt], flow: list[tuple[str, list[str]]],
               varied: frozenset[str]) -> set[int]:
    """The assignments ``v = <int constant>`` (ids) of a variable that holds floats at
    other times: a varied one (what a derivative flows into is a float), one computed with
    a float constant, or one a derivative flows into from those. Written as a float
    (``out = 1`` as ``out = 1.0``), the variable has one type, the join of its values':
    what a tape made from its first value takes, and what numba needs of a variable in a
    loop (issue 18 #2: an int tape truncated every float recorded on it).
    """
    floats = reached(flow, set(varied) | {
        target_of(s) for s in statements if target_of(s)
        and not isinstance(s.value, (gast.Compare, gast.BoolOp)) and any(
            isinstance(n, gast.Constant) and type(n.value) in (float, complex)
            for n in gast.walk(s.value))})
    return {id(s) for s in statements if target_of(s) in floats
            and isinstance(s.value, gast.Constant) and type(s.value.value) is int}


def is_write(stmt: gast.stmt) -> bool:
    return isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript)


def changed(stmt: gast.stmt) -> str:
    """The name an assignment, a write or a `for` loop changes."""
    if isinstance(stmt, gast.For):
        return stmt.target.id
    return target_of(stmt) or stmt.targets[0].value.id


def int_constant(node: gast.AST) -> int | None:
    """The value of an int literal (not a bool), else None."""
    if isinstance(node, gast.Constant) and isinstance(node.value, int) \
            and not isinstance(node.value, bool):
        return node.value
    return None


def returned(fun: Any) -> list[gast.AST] | None:
    """What the `return`s of the user function `fun` (or of the code of a transform it
    is) give."""
    try:
        tree = parse(nested_entry(fun) or fun).tree
    except SrcgradError:
        return None
    returns, todo = [], list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, gast.Return):
            returns.append(node.value)
        elif not isinstance(node, (gast.FunctionDef, gast.Lambda, gast.ClassDef)):
            todo += list(gast.iter_child_nodes(node))
    return returns


class FunctionPass:
    """One normalized function, the names it binds, and how its statements are read."""

    def __init__(self, parsed: Parsed, fn: gast.FunctionDef, namer: Namer, ns: Namespace,
                 primal: Callable[[Any, gast.Call], str]):
        self.p = parsed
        self.fn = fn = copy.deepcopy(fn)
        self.namer = namer
        self.ns = ns
        self.primal = primal
        self.params = [a.id for a in fn.args.args]
        self.statements = list(all_statements(fn.body))
        self.locals = frozenset(self.params) | frozenset(
            n.id for s in self.statements for n in gast.walk(s)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store))
        self.hook_locals = hook_names(fn) | {
            n.id for s in self.statements if hook(s) for t in s.body for n in gast.walk(t)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        self.bind_values()
        self.tuples: dict[str, list[gast.AST]] = {}
        self.displayed: set[str] = set()   # names bound to a list or tuple display anywhere
        # (and those bound to nothing else, not in `tuples`: displays bound in a loop,
        # whose adjoints are lists or tuples of their items' adjoints)
        self.listed: set[str] = set()
        self._tuple_at: dict[str, int] = {}   # where each of those was bound
        self._reading = -1                    # the statement being classified

    def bind_values(self) -> None:
        """Bind every global the function reads (`B`, a classmethod's `cls_B`, `np` of
        `np.pi`; not a function it calls: see `bind_globals`) in the namespace now, and read it
        under that name in the function itself: its forward, adjoint and tangent code,
        which copy its operands from any statement, then all read the name the module
        binds (one taken by another object, from another function, is renamed)."""
        skip = {id(n.func) for n in gast.walk(self.fn) if isinstance(n, gast.Call)}
        added: dict[str, Any] = {}
        for node in gast.walk(self.fn):
            if not isinstance(node, gast.Name) or not isinstance(node.ctx, gast.Load) or \
                    node.id in self.locals or node.id in self.hook_locals or id(node) in skip:
                continue
            obj = self.p.env.lookup(node.id)
            if obj is MISSING:   # (reported where it is emitted)
                continue
            name = self.ns.bind(node.id, obj, jit=is_user_function(obj), avoid=self.locals)
            if name != node.id:
                added[name] = obj
                node.id = name
        if added:
            env = Env(self.p.env.globals, {**self.p.env.closure, **added})
            self.p = dataclasses.replace(self.p, env=env)
            if self.namer is not None:
                self.namer.taken |= set(added)

    def classify_statements(self, classify: Callable[[gast.AST], Operation],
                            writes: bool = True) -> dict[int, Operation]:
        """The operation of each assignment (and write), by statement id; the items of each
        name bound to a tuple display, or to an item of one that is a tuple itself
        (`p = ((a, b), c); q = p[0]`), in `self.tuples`."""
        ops: dict[int, Operation] = {}
        self._bound, self._in_loop = bindings(self.statements)
        shown: dict[str, int] = {}
        for k, stmt in enumerate(self.statements):
            self._reading = k
            name = target_of(stmt)
            if name:
                op = ops[id(stmt)] = classify(stmt.value)
                once = len(self._bound.get(name, ())) == 1 and name not in self.params \
                    and k not in self._in_loop
                if op.kind == "tuple":
                    self.displayed.add(name)
                    shown[name] = shown.get(name, 0) + 1
                if op.kind == "tuple" and once:
                    # (bound once, outside loops: `p[0]` read outside loops, with its item
                    # not bound again since, is the item's name; else it indexes p)
                    self.tuples[name], self._tuple_at[name] = op.args, k
                elif op.kind == "copy" and isinstance(op.args[0], gast.Name) and \
                        op.args[0].id in self.tuples and once:
                    self.tuples[name] = self.tuples[op.args[0].id]
                    self._tuple_at[name] = self._tuple_at[op.args[0].id]
            elif writes and is_write(stmt):
                ops[id(stmt)] = Operation("write", [stmt.value])
        self.listed = {n for n in self.displayed if n not in self.tuples and n not in
                       self.params and shown[n] == len(self._bound.get(n, ()))}
        return ops

    def _holds(self, name: str, item: gast.AST) -> bool:
        """Whether, at the statement being classified, the tuple `name`'s `item` is still
        what the item's expression denotes: read outside loops, after the tuple, and its
        name (if it is one) not bound again in between."""
        at, now = self._tuple_at[name], self._reading
        if now in self._in_loop or now < at:
            return False
        return not isinstance(item, gast.Name) or not any(
            at < k < now for k in self._bound.get(item.id, ()))

    def error(self, cls, node, message) -> SrcgradError:
        return cls(message, filename=self.p.filename, lineno=getattr(node, "lineno", None),
                   col=getattr(node, "col_offset", None))

    # ---- what a value denotes ----
    def classify(self, value: gast.AST) -> Operation:
        if isinstance(value, gast.Name):
            return Operation("copy", [value]) if value.id in self.locals else Operation("none")
        if isinstance(value, gast.Constant):
            return Operation("none")
        if isinstance(value, (gast.BinOp, gast.UnaryOp)):
            op = OPERATORS[type(value.op)]
            args = [value.left, value.right] if isinstance(value, gast.BinOp) else [value.operand]
            if self.joins_sequences(value) and isinstance(value.op, gast.Add) and all(
                    a.id in self.tuples and all(self._holds(a.id, item) for item in
                                                self.tuples[a.id]) for a in args):
                # a + b of two displays: the display of their items (`c = [u, v] + [w]`)
                return Operation("tuple", self.tuples[args[0].id] + self.tuples[args[1].id])
            if self.joins_sequences(value):
                return Operation("missing", args, what="joining lists or tuples with + or "
                                 "repeating one with * has no gradient rule (the rules of + "
                                 "and * are arithmetic) where srcgrad does not know their "
                                 "items when it compiles (a display, or a name bound once to "
                                 "one, joined to another, or repeated by an int literal, is "
                                 "one display): build the array with np.concatenate")
            return Operation("rule", args, rule=lookup(op), fun=op, what=type(value.op).__name__)
        if isinstance(value, (gast.Compare, gast.BoolOp)):
            return Operation("none")
        if isinstance(value, (gast.Tuple, gast.List)):
            return Operation("tuple", list(value.elts))
        if isinstance(value, gast.Subscript):
            base = value.value
            if not (isinstance(base, gast.Name) and base.id in self.locals):
                # an object's subscript (np.r_[x, y], np.c_[...]): no rule, so a value
                # differentiated in its index cannot pass (never a zero gradient)
                names = [n for n in gast.walk(value.slice) if isinstance(n, gast.Name)]
                return Operation("missing", names, what=f"{dotted(base)}[...] has no gradient "
                                 f"rule: build the array with np.concatenate or np.stack")
            if isinstance(base, gast.Name) and base.id in self.tuples and \
                    isinstance(value.slice, gast.Constant) and \
                    isinstance(value.slice.value, int) and \
                    -len(self.tuples[base.id]) <= value.slice.value < len(self.tuples[base.id]) \
                    and self._holds(base.id, self.tuples[base.id][value.slice.value]):
                return Operation("copy", [self.tuples[base.id][value.slice.value]])
            return Operation("subscript", [base])
        if isinstance(value, gast.Attribute):
            if self.p.env.resolve(value, self.locals) is not MISSING:
                return Operation("none")
            fun = attributes().get(value.attr)
            return self.rule_call(fun, [value.value], {}, f"the attribute .{value.attr}")
        if isinstance(value, gast.Call):
            kwargs = {k.arg: k.value for k in value.keywords}
            func = value.func
            obj = self.p.env.resolve(func, self.locals)
            if obj is MISSING and isinstance(func, gast.Attribute):
                args = value.args
                if func.attr == "reshape" and len(args) > 1:   # x.reshape(3, 2): one shape
                    args = [b.tuple_(args)]
                return self.rule_call(methods().get(func.attr), [func.value] + args,
                                      kwargs, f"the method .{func.attr}()")
            what = dotted(func)
            if obj is MISSING:
                return Operation("missing", value.args, kwargs,
                                 what=f"cannot differentiate a call to the local value "
                                      f"{what!r}")
            r = lookup(obj)
            if r is not None:
                fun = obj
                if isinstance(obj, Overridden):  # in a gradient_override block
                    obj, what = obj.primal, obj.what
                if r.kind == "rule":
                    form = fact(fun, "called_as")   # its signature names the arguments
                    count = operand_count(r) if form is None else len(r.params)
                    args, kwargs = by_position(form or obj, value.args, kwargs, count,
                                                defaults=r.origin is not None or bool(form))
                    args, kwargs, why = self.named(obj, r, args, kwargs,
                                                   count if form is None else None)
                    if why:
                        return Operation("missing", args, kwargs, what=f"{what}: {why}")
                    if form is not None and (kwargs or len(args) != len(r.params)):
                        return Operation("missing", args, kwargs, what=(
                            f"{what}: srcgrad differentiates it as {form.__name__}"
                            f"{inspect.signature(form)}, which this call does not fit "
                            f"(keywords {sorted(kwargs)}, {len(args)} arguments)"))
                    refuse, alias = fact(fun, "refuse"), fact(fun, "alias")
                    constants = options(r, form, args, kwargs)
                    why = refuse(constants) if refuse else None
                    if why:
                        if NOT_CONSTANT in constants.values():
                            why += " (srcgrad reads the call's options when it compiles: " \
                                   "give them as constants)"
                        return Operation("missing", args, kwargs, what=f"{what}: {why}")
                    if alias and (other := alias(constants)) is not None:
                        return Operation("rule", args[:1], {}, lookup(other), fun=other,
                                         what=what)
                return Operation("rule", args if r.kind == "rule" else value.args, kwargs,
                                 r, fun=fun, what=what)
            if (entry := nested_entry(obj)) is not None:   # grad(g) called: its code
                args, kwargs = by_position(entry, value.args, kwargs,
                                           len(inspect.signature(entry).parameters))
                return Operation("call", args, kwargs, fun=obj, what=what)
            if getattr(obj, "srcgrad_transform", False):
                return Operation("missing", value.args, kwargs,
                                 what=f"{what} ({obj!r}) cannot be differentiated inside "
                                      f"another function: only grad and value_and_grad "
                                      f"without static=, of a function that does not "
                                      f"call itself, can")
            if lookup_tangent(obj) is not None:  # a helper of generated code
                return Operation("rule", value.args, kwargs, None, fun=obj, what=what)
            if self.differentiable_source(obj):
                args, kwargs = by_position(obj, value.args, kwargs,
                                            len(inspect.signature(obj).parameters))
                return Operation("call", args, kwargs, fun=obj, what=what)
            return Operation("missing", value.args, kwargs,
                             what=f"{what} has no gradient rule: " + (fact(obj, "instead") or
                                  f"define one with "
                                  f"@srcgrad.adjoint({what}), or wrap what it reads in "
                                  f"srcgrad.stop_gradient if no gradient should flow through it"))
        return Operation("missing", what=f"cannot differentiate {type(value).__name__}")

    def joins_sequences(self, value: gast.AST) -> bool:
        """Whether `value` is `a + b` of two list or tuple displays, or `a * k` of one and
        anything but a float or complex constant (an int, as Python takes it; `n` too):
        Python joins or repeats them, whatever they hold."""
        if not isinstance(value, gast.BinOp):
            return False
        operands = (value.left, value.right)
        shown = [isinstance(a, gast.Name) and (a.id in self.tuples or a.id in self.displayed)
                 for a in operands]   # (a display bound in a loop is a list there too)
        if isinstance(value.op, gast.Add):
            return all(shown)
        return isinstance(value.op, gast.Mult) and any(shown) and not any(
            isinstance(a, gast.Constant) and type(a.value) is not int for a in operands)

    def differentiable_source(self, obj: Any) -> bool:
        """Whether a call to `obj` is differentiated through its source."""
        return is_user_function(obj)

    def rule_call(self, fun, args, kwargs, what) -> Operation:
        """An array method's call or an attribute (`x.sum(0)`, `x.T`): `fun`'s rule, its
        options named as `fun` names them (`x.sum(0, np.int64)` passes dtype=)."""
        r = lookup(fun) if fun is not None else None
        if r is None:
            return Operation("missing", args, kwargs, what=f"{what} has no gradient rule")
        if r.kind == "rule":
            args, kwargs, why = self.named(fun, r, args, kwargs, operand_count(r))
            if why:
                return Operation("missing", args, kwargs, what=f"{what}: {why}")
        return Operation("rule", args, kwargs, r, fun=fun, what=what)

    def named(self, fun: Any, r: Rule, args: list, kwargs: dict, count: int | None
              ) -> tuple[list, dict, str | None]:
        """A built-in rule's call with its options past the first `count` arguments named
        as `fun` names them (`by_name`; None: left as they are), and a `dtype=` its rule
        does not take read: where `fun`'s record says it `casts`, a float64 dtype (or
        None) leaves a float's gradient as it is and is dropped; any other is a cast with
        no gradient srcgrad gives, why is said; so is a call of a function of `*args`
        given more of them than its rule names (np.meshgrid's fourth vector). (args,
        kwargs, why or None)"""
        if (room := positional_room(fun, r)) is not None and len(args) > room:
            return args, kwargs, f"gradient rule {r.name} takes {room} positional " \
                f"argument{'s' if room > 1 else ''}, the call gives {len(args)}"
        if count is not None and r.origin is None and len(args) > count:
            args, kwargs = by_name(fun, args, kwargs, count, list(r.params) + list(r.defaults))
        if "dtype" not in kwargs or "dtype" in r.defaults and not fact(fun, "casts"):
            return args, kwargs, None   # (a rule that names it refuses it, ufunc.reduce's)
        kwargs = dict(kwargs)
        dtype = kwargs.pop("dtype")
        obj = dtype.value if isinstance(dtype, gast.Constant) else \
            self.p.env.resolve(dtype, self.locals)
        if obj is None or fact(fun, "casts") and dtype_name(obj) == "float64":
            return args, kwargs, None
        shown = obj if isinstance(obj, str) else getattr(obj, "__name__", dotted(dtype))
        lacks = "takes no" if "dtype" in r.defaults else "has no parameter 'dtype' for"
        return args, kwargs, f"gradient rule {r.name} {lacks} dtype={shown}" + (
            ": srcgrad differentiates a float64 dtype alone (np.float64, float, 'float64'), "
            "whose gradient is the one without it" if fact(fun, "casts") else "")

    def bind_globals(self, stmt: gast.stmt, shallow: bool = False) -> gast.stmt:
        """Bind every global a forward statement names; rename it on a clash.

        A call to a user function (`g(x)`, `helpers.g(x)`) calls its primal copy in the
        generated module, so numba compiles every function the code reaches without
        srcgrad writing into the user's modules; a call to a primal with a `called_as`
        or `compiled_as` form (`norm.logpdf(x)`, `np.average(x, axis=0)`) calls that form.
        `shallow`: a compound statement's own test or iterator only (its blocks are bound
        already)."""
        if shallow:
            parts = [getattr(stmt, f) for f in ("test", "iter") if hasattr(stmt, f)]
            for part in parts:
                self.bind_globals(b.make(gast.Expr, value=part))
            return stmt
        bound: set[int] = set()  # ids of the names already rebound to a primal copy
        for node in gast.walk(stmt):
            if isinstance(node, gast.Call) and isinstance(node.func, (gast.Name, gast.Attribute)):
                obj = self.p.env.resolve(node.func, self.locals)
                if isinstance(obj, Overridden) and obj.method:  # `x.sum()`, as written
                    node.func = b.make(gast.Attribute, value=node.args[0], attr=obj.method,
                                       ctx=gast.Load())
                    node.args, obj = node.args[1:], obj.primal
                elif isinstance(obj, Overridden):  # the primal, as the user named it
                    node.func, obj = copy.deepcopy(obj.func), obj.primal
                if is_user_function(obj) or nested_entry(obj) is not None:
                    node.func = b.name(self.primal(obj, node))
                    bound.add(id(node.func))
                elif (form := fact(obj, "called_as") or fact(obj, "compiled_as")) is not None:
                    node.func = b.name(self.bind(form.__name__, form))
                    bound.add(id(node.func))
                self.write_dtype(node, obj)
                if obj is MISSING and isinstance(node.func, gast.Attribute) and \
                        (form := fact(methods().get(node.func.attr), "called_as")):
                    # an array method numba lacks (`x.item(k)`): its form, x first
                    node.args = [node.func.value] + node.args
                    node.func = b.name(self.bind(form.__name__, form))
                    bound.add(id(node.func))
                elif obj is MISSING and isinstance(node.func, gast.Attribute) and any(
                        k.arg in (fact(fun := methods().get(node.func.attr), "method_lacks")
                                  or ()) for k in node.keywords):
                    # a keyword numba's array method lacks (`x.take(i, mode="wrap")`):
                    # the NumPy function, x first
                    node.args = [node.func.value] + node.args
                    node.func = b.make(gast.Attribute, value=b.name(self.bind("np", np)),
                                       attr=fun.__name__, ctx=gast.Load())
        for node in gast.walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) \
                    and node.id not in self.locals and node.id not in self.hook_locals \
                    and id(node) not in bound:
                obj = self.p.env.lookup(node.id)
                if obj is MISSING:
                    raise self.error(SrcgradError, stmt, f"name {node.id!r} is not defined")
                node.id = self.ns.bind(node.id, obj, jit=is_user_function(obj),
                                       avoid=self.locals)
        return stmt

    def write_dtype(self, node: gast.Call, obj: Any) -> None:
        """A NumPy function's or an array method's `dtype` given by another name than
        NumPy's type (`np.mean(x, dtype=float)`, `x.astype(bool)`, `x.sum(0, 'f8')`)
        written as that type (np.float64, np.bool_): the one spelling numba's forms take."""
        method = obj is MISSING and isinstance(node.func, gast.Attribute)
        fun = methods().get(node.func.attr) if method else obj
        if not (callable(fun) and ((getattr(fun, "__module__", None) or "").startswith("numpy")
                                   or isinstance(getattr(fun, "__self__", None), np.ufunc))):
            return   # (a ufunc's method names no module)
        try:
            names = list(inspect.signature(fun).parameters)
        except (TypeError, ValueError):   # (np.asarray before NumPy 2): its rule's names
            r = lookup(fun)
            names = list(r.params) + list(r.defaults) if r is not None and r.kind == "rule" \
                else []
        names = names[1 if method else 0:]
        given = [k for k in node.keywords if k.arg == "dtype"]
        at = names.index("dtype") if "dtype" in names else len(node.args)
        value = given[0].value if given else node.args[at] if at < len(node.args) else None
        if value is None:
            return
        obj = value.value if isinstance(value, gast.Constant) else \
            self.p.env.resolve(value, self.locals)
        name = dtype_name(obj)
        if name is None or obj is getattr(np, name):
            return
        written = b.make(gast.Attribute, value=b.name(self.bind("np", np)), attr=name,
                         ctx=gast.Load())
        if given:
            given[0].value = written
        else:
            node.args[at] = written

    def bind(self, name: str, obj: Any) -> str:
        return self.ns.bind(name, obj, avoid=self.locals)

    def zeros(self, var: str) -> gast.AST:
        return b.call(b.name(self.bind("zeros_like", zeros_like)), b.name(var))


def dtype_name(obj: Any) -> str | None:
    """The name of NumPy's type that `obj` gives as a dtype (float, 'f8', np.float64 and
    np.dtype('float64'): 'float64'; bool: 'bool_'), else None."""
    if not (isinstance(obj, (str, np.dtype)) or any(obj is t for t in (float, int, bool, complex))
            or isinstance(obj, type) and issubclass(obj, np.generic)):
        return None
    try:
        t = np.dtype(obj).type
    except TypeError:
        return None
    return next((n for n in (t.__name__, f"{t.__name__}_") if getattr(np, n, None) is t), None)


def positional_room(fun: Any, r: Rule) -> int | None:
    """How many positional arguments rule `r` takes of a call of `fun`, a function of
    `*args` (np.meshgrid(*xi, copy=...): the rule's names before the first of fun's
    keyword-only ones); None for other functions (their signatures name them all)."""
    try:
        params = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):
        return None
    if not any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    keyword_only = {p.name for p in params if p.kind is p.KEYWORD_ONLY}
    names = list(r.params) + list(r.defaults)
    return next((k for k, n in enumerate(names) if n in keyword_only), len(names))


def operand_count(r: Rule) -> int:
    """How many of a call's operands a rule takes by position: its parameters without a
    default, and a built-in rule's keywords it differentiates too (np.interp's left)."""
    if r.origin is None and isinstance(r.template, list):
        return max(len(r.params), len(r.template))
    return len(r.params)


def options(r: Rule, form: Callable | None, args: list, kwargs: dict) -> dict[str, Any]:
    """The options a rule call passes (its keywords, and the positional arguments after
    the ones the rule differentiates, by name) as the values of their constants;
    `NOT_CONSTANT` where an option is an expression, so that a record's `refuse` and
    `alias` never take an option they cannot see for its default."""
    names = list(inspect.signature(form).parameters) if form else \
        list(r.params) + list(r.defaults)
    given = {**{n: a for n, a in zip(names, args, strict=False) if n not in r.params},
             **kwargs}
    return {k: v.value if isinstance(v, gast.Constant) else NOT_CONSTANT
            for k, v in given.items()}


def by_name(fun, args: list, kwargs: dict, count: int, names: list[str]
            ) -> tuple[list, dict]:
    """A call's operands after its first `count` as keyword arguments named by `fun`'s
    own signature (a built-in rule's options are named as NumPy names them, but need not
    come in NumPy's order: np.max(x, 0, None, True) passes keepdims=True, not a third
    option of the rule); one given its default as a constant (out=None) is left out. An
    option NumPy has renamed (np.reshape's newshape, `shape` since NumPy 2.1) takes its
    new name where the rule's parameters, `names`, have it."""
    try:
        every = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):   # (a ufunc's method before NumPy 2): its stand-in's
        if (form := fact(fun, "compiled_as")) is None:
            return args, kwargs
        every = list(inspect.signature(form).parameters.values())
    params = every[:len(args)]
    if len(params) < len(args) or any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                                      for p in params):
        return args, kwargs
    kwargs = dict(kwargs)
    for p, a in zip(params[count:], args[count:], strict=True):
        if not (isinstance(a, gast.Constant) and a.value is p.default):
            name = _RENAMED.get(p.name, p.name)
            kwargs[name if name in names else p.name] = a
    return list(args[:count]), kwargs


# options NumPy has renamed: the old name -> the one rules use
_RENAMED = {"newshape": "shape"}   # np.reshape, NumPy 2.1


def by_position(fun, args: list, kwargs: dict, count: int,
                 defaults: bool = True) -> tuple[list, dict]:
    """A call's first `count` operands in positional order, using `fun`'s own signature:
    keyword arguments that name a positional parameter (`np.clip(x, a_min=...)`) moved
    to their place, and the constant defaults of the ones the call leaves out before
    one it gives (all of them with `defaults`: user functions, whose rules and vjps take
    every argument)."""
    if len(args) >= count:
        return args, kwargs
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return args, kwargs
    if any(p.kind is p.VAR_POSITIONAL for p in params[:len(args)]):
        return args, kwargs   # `*args` took the call's last operands (np.einsum's)
    args, kwargs = list(args), dict(kwargs)
    rest = params[len(args):count]
    for k, p in enumerate(rest):
        later = any(q.name in kwargs for q in rest[k + 1:])   # (np.interp(..., right=r))
        if p.name in kwargs:
            args.append(kwargs.pop(p.name))
        elif (defaults or later) and isinstance(p.default, (int, float, bool, type(None))):
            args.append(b.const(p.default))
        else:
            break
    return args, kwargs


def dotted(node: gast.AST) -> str:
    if isinstance(node, gast.Name):
        return node.id
    if isinstance(node, gast.Attribute):
        return f"{dotted(node.value)}.{node.attr}"
    return type(node).__name__


def by_line(body: list[gast.stmt]):
    """Consecutive statements grouped by the user line they came from."""
    groups: list[tuple[int, list[gast.stmt]]] = []
    for stmt in body:
        line = getattr(stmt, "lineno", None)
        if groups and groups[-1][0] == line:
            groups[-1][1].append(stmt)
        else:
            groups.append((line, [stmt]))
    return groups
