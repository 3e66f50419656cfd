"""reverse: emit the forward code and the adjoint code of a normalized function.

Requires a normalized body (one operation per statement, each name assigned once) and
the `wrt` parameter names. Guarantees `Reversed`: the forward statements (the primal,
commented with the user's lines), the adjoint statements (one block per original line,
headed `# grad of line N: <line>`), the result atom, and the names of the gradients.
Every global the code names is bound through the module `Namespace`.

The adjoint of an active variable `x` is `dx`. Its first contribution is written
`dx = ...`, later ones `dx = dx + ...` (never in place, since a first contribution may
alias another adjoint); subscript reads accumulate in place into an adjoint this pass
allocated itself. Operations whose result has no adjoint yet are skipped (symbolic
zero), so only what flows to the result is computed (Griewank & Walther, ch. 3).
Exists because this is the algorithm: everything else prepares or packages its output.
"""

from __future__ import annotations

import copy
import inspect
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gast

from .. import builder as b
from ..analysis.activity import Activity, activity
from ..errors import MissingRule, SrcgradError
from ..frontend.parse import MISSING, Parsed
from ..naming import Namer
from ..rules import Rule, instantiate, lookup
from ..rules.numpy_rules import ATTRIBUTES, METHODS
from ..rules.operator_rules import OPERATORS
from ..runtime import zeros_like


@dataclass
class Operation:
    """What the value of one statement denotes, for the activity analysis and the adjoint."""

    kind: str                    # rule | call | copy | subscript | tuple | none | missing
    args: list[gast.AST] = field(default_factory=list)
    kwargs: dict[str, gast.AST] = field(default_factory=dict)
    rule: Rule | None = None
    fun: Any = None
    what: str = ""

    def operands(self) -> list[str]:
        """Names a derivative can flow through."""
        if self.kind in ("none",) or (self.rule is not None and self.rule.kind != "rule"):
            return []
        atoms = self.args[:1] if self.kind == "subscript" else self.args
        atoms = atoms + list(self.kwargs.values())
        return [a.id for a in atoms if isinstance(a, gast.Name)]


@dataclass
class Reversed:
    forward: list[gast.stmt]
    adjoint: list[gast.stmt]
    result: gast.AST
    seed: str | None             # name of the result's adjoint, None if the result is inactive
    grads: list[str]             # adjoint names of the wrt parameters, in order


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

    def globals(self, transform=lambda obj, jit: obj) -> dict[str, Any]:
        """The objects to put in the module, without the generated functions' names."""
        return {name: transform(obj, jit) for name, (obj, jit) in self.entries.items()
                if not isinstance(obj, GeneratedFunction)}


Callee = Callable[[Any, tuple[int, ...], gast.AST], str]


def reverse(parsed: Parsed, fn: gast.FunctionDef, wrt: list[str], namer: Namer,
            ns: Namespace, callee: Callee, primal: Callable[[Any], str]) -> Reversed:
    """Forward and adjoint statements of normalized `fn` with respect to `wrt`.

    `callee(fun, positions, node)` and `primal(fun)` name the generated vector-Jacobian
    product and primal copy of a user function the code calls.

    >>> import gast, astor
    >>> from srcgrad.frontend.parse import parse
    >>> from srcgrad.passes.normalize import normalize
    >>> def f(x, y):
    ...     return x * y + 3.0
    >>> p = parse(f)
    >>> namer = Namer({"x", "y"})
    >>> r = reverse(p, normalize(p.tree, p.env, namer, p.filename), ["x"], namer,
    ...             Namespace(), callee=None, primal=None)
    >>> print("\\n".join(astor.to_source(gast.gast_to_ast(s)).strip() for s in r.adjoint
    ...                  if not isinstance(s, gast.Expr)))
    d_t1 = d_t2
    dx = unbroadcast(d_t1 * y, x)
    """
    return _Reverse(parsed, fn, wrt, namer, ns, callee, primal).run()


class _Reverse:
    def __init__(self, parsed, fn, wrt, namer, ns, callee, primal):
        self.p = parsed
        self.fn = fn
        self.wrt = wrt
        self.namer = namer
        self.ns = ns
        self.callee = callee
        self.primal = primal
        self.locals = frozenset(a.id for a in fn.args.args) | frozenset(
            s.targets[0].id for s in fn.body if isinstance(s, gast.Assign))
        self.adj: dict[str, str] = {}
        self.defined: set[str] = set()
        self.owned: set[str] = set()
        self.tuples: dict[str, list[gast.AST]] = {}
        self.out: list[gast.stmt] = []

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
            return Operation("rule", args, rule=lookup(op), what=type(value.op).__name__)
        if isinstance(value, (gast.Compare, gast.BoolOp)):
            return Operation("none")
        if isinstance(value, (gast.Tuple, gast.List)):
            return Operation("tuple", list(value.elts))
        if isinstance(value, gast.Subscript):
            base = value.value
            if isinstance(base, gast.Name) and base.id in self.tuples and \
                    isinstance(value.slice, gast.Constant):
                return Operation("copy", [self.tuples[base.id][value.slice.value]])
            return Operation("subscript", [base])
        if isinstance(value, gast.Attribute):
            if self.p.env.resolve(value, self.locals) is not MISSING:
                return Operation("none")
            fun = ATTRIBUTES.get(value.attr)
            return self.rule_call(fun, [value.value], {}, f"the attribute .{value.attr}")
        if isinstance(value, gast.Call):
            kwargs = {k.arg: k.value for k in value.keywords}
            func = value.func
            obj = self.p.env.resolve(func, self.locals)
            if obj is MISSING and isinstance(func, gast.Attribute):
                return self.rule_call(METHODS.get(func.attr), [func.value] + value.args,
                                      kwargs, f"the method .{func.attr}()")
            what = _dotted(func)
            if obj is MISSING:
                return Operation("missing", value.args, kwargs,
                                 what=f"{what!r}: a call to a local value")
            r = lookup(obj)
            if r is not None:
                args, kwargs = _by_position(obj, r, value.args, kwargs)
                return Operation("rule", args, kwargs, r, what=what)
            if isinstance(obj, types.FunctionType) and not _is_library(obj):
                return Operation("call", value.args, kwargs, fun=obj, what=what)
            return Operation("missing", value.args, kwargs,
                             what=f"{what!r} has no gradient rule and no Python source")
        return Operation("missing", what=type(value).__name__)

    def rule_call(self, fun, args, kwargs, what) -> Operation:
        r = lookup(fun) if fun is not None else None
        if r is None:
            return Operation("missing", args, kwargs, what=f"{what} has no gradient rule")
        return Operation("rule", args, kwargs, r, what=what)

    # ---- the pass ----
    def run(self) -> Reversed:
        body = self.fn.body
        ops = {}
        for stmt in body:
            if isinstance(stmt, gast.Assign):
                op = self.classify(stmt.value)
                ops[id(stmt)] = op
                if op.kind == "tuple":
                    self.tuples[stmt.targets[0].id] = op.args
        act = activity(body, self.wrt, lambda v: self.classify(v).operands())
        self.act = act
        forward = self.forward(body)
        result = body[-1].value
        seed = None
        if isinstance(result, gast.Name) and result.id in act.active:
            seed = self.adjoint_name(result.id)
            self.defined.add(result.id)
        self.check_constructors(body, ops, act)
        for lineno, group in reversed(_by_line(body[:-1])):
            start = len(self.out)
            for stmt in reversed(group):
                self.statement(stmt, ops.get(id(stmt)))
            if len(self.out) > start:
                self.out.insert(start, b.comment(f"grad of line {lineno}: "
                                                 f"{self.p.line(lineno)}"))
        grads = []
        for param in self.wrt:
            if param not in self.defined:
                zname = self.ns.bind("zeros_like", zeros_like, avoid=self.locals)
                self.out.append(b.assign(self.adjoint_name(param),
                                         b.call(b.name(zname), b.name(param))))
            grads.append(self.adjoint_name(param))
        return Reversed(forward, self.out, result, seed, grads)

    def forward(self, body: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for lineno, group in _by_line(body[:-1]):
            out.append(b.comment(f"line {lineno}: {self.p.line(lineno)}"))
            for stmt in group:
                if not isinstance(stmt, gast.Return):
                    out.append(self.bind_globals(copy.deepcopy(stmt)))
        return out

    def bind_globals(self, stmt: gast.stmt) -> gast.stmt:
        """Bind every global a forward statement names; rename it on a clash.

        A call to a user function (`g(x)`, `helpers.g(x)`) calls its primal copy in the
        generated module, so numba compiles every function the code reaches without
        srcgrad writing into the user's modules."""
        bound: set[int] = set()  # ids of the names already rebound to a primal copy
        for node in gast.walk(stmt):
            if isinstance(node, gast.Call) and isinstance(node.func, (gast.Name, gast.Attribute)):
                obj = self.p.env.resolve(node.func, self.locals)
                if _is_user_function(obj):
                    node.func = b.name(self.primal(obj))
                    bound.add(id(node.func))
        for node in gast.walk(stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) \
                    and node.id not in self.locals and id(node) not in bound:
                obj = self.p.env.lookup(node.id)
                if obj is MISSING:
                    raise self.error(SrcgradError, stmt, f"name {node.id!r} is not defined")
                node.id = self.ns.bind(node.id, obj, jit=_is_user_function(obj),
                                       avoid=self.locals)
        return stmt

    def check_constructors(self, body, ops, act: Activity) -> None:
        for stmt in body:
            op = ops.get(id(stmt))
            if op is None or op.rule is None or op.rule.kind != "constructor":
                continue
            names = [n.id for a in op.args + list(op.kwargs.values())
                     for n in gast.walk(a) if isinstance(n, gast.Name)]
            if stmt.targets[0].id in act.useful and any(n in act.varied for n in names):
                raise self.error(MissingRule, stmt,
                                 f"{op.what} builds a new array from a value being "
                                 f"differentiated, and no gradient flows through it; use "
                                 f"np.stack or arithmetic instead")

    # ---- adjoint of one statement ----
    def statement(self, stmt: gast.stmt, op: Operation | None) -> None:
        if not isinstance(stmt, gast.Assign):
            return
        target = stmt.targets[0].id
        if target not in self.act.active or target not in self.defined:
            return
        dy = b.name(self.adjoint_name(target))
        active_args = [i for i, a in enumerate(op.args)
                       if isinstance(a, gast.Name) and a.id in self.act.active]
        if op.kind == "missing":
            raise self.error(MissingRule, stmt, f"cannot differentiate {op.what}")
        if op.kind == "copy":
            self.accumulate(op.args[0].id, dy)
        elif op.kind == "tuple":
            for i in active_args:
                self.accumulate(op.args[i].id, b.subscript(dy, b.const(i)))
        elif op.kind == "subscript":
            if active_args:
                self.accumulate_at(op.args[0].id, copy.deepcopy(stmt.value.slice), dy)
        elif op.kind == "call":
            self.user_call(stmt, op, dy, active_args)
        elif op.kind == "rule" and op.rule.kind == "rule" and active_args:
            self.apply_rule(stmt, op, dy, active_args)

    def apply_rule(self, stmt, op: Operation, dy, active_args) -> None:
        def rename(name, obj):
            return self.ns.bind(name, obj, avoid=self.locals)
        try:
            inst = instantiate(op.rule, dy, b.name(stmt.targets[0].id), op.args, op.kwargs,
                               rename)
        except SrcgradError as exc:
            raise self.error(type(exc), stmt, exc.message) from None
        for name, (obj, jit) in inst.needs.items():
            self.ns.bind(name, obj, jit=jit)
        if inst.per_arg is not None:
            for i in active_args:
                if i < len(inst.per_arg) and inst.per_arg[i] is not None:
                    self.accumulate(op.args[i].id, inst.per_arg[i])
            return
        if len(op.rule.params) == 1:
            self.accumulate(op.args[0].id, inst.whole)
            return
        tmp = self.namer.temp()
        self.emit(b.assign(tmp, inst.whole))
        for i in active_args:
            self.accumulate(op.args[i].id, b.subscript(b.name(tmp), b.const(i)))

    def user_call(self, stmt, op: Operation, dy, active_args) -> None:
        if op.kwargs:
            raise self.error(MissingRule, stmt, f"keyword arguments in a call to the "
                                                f"differentiated function {op.what} are not "
                                                f"supported yet")
        positions = tuple(active_args)
        vjp_name = self.callee(op.fun, positions, stmt)
        call = b.call(b.name(vjp_name), *copy.deepcopy(op.args), dy)
        if len(positions) == 1:
            self.accumulate(op.args[positions[0]].id, call)
            return
        tmp = self.namer.temp()
        self.emit(b.assign(tmp, call))
        for k, i in enumerate(positions):
            self.accumulate(op.args[i].id, b.subscript(b.name(tmp), b.const(k)))

    # ---- adjoint bookkeeping ----
    def adjoint_name(self, var: str) -> str:
        if var not in self.adj:
            self.adj[var] = self.namer.adjoint(var)
        return self.adj[var]

    def emit(self, stmt: gast.stmt) -> None:
        self.out.append(stmt)

    def accumulate(self, var: str, expr: gast.AST) -> None:
        dvar = self.adjoint_name(var)
        if var in self.defined:
            expr = b.binop(b.name(dvar), gast.Add(), expr)
        self.defined.add(var)
        self.owned.discard(var)
        self.emit(b.assign(dvar, expr))

    def accumulate_at(self, var: str, index: gast.AST, dy: gast.AST) -> None:
        """`dvar[index] += dy` into an adjoint array this pass allocated."""
        dvar = self.adjoint_name(var)
        if var not in self.owned:
            zname = self.ns.bind("zeros_like", zeros_like, avoid=self.locals)
            init = b.call(b.name(zname), b.name(var))
            if var in self.defined:
                init = b.binop(init, gast.Add(), b.name(dvar))
            self.emit(b.assign(dvar, init))
            self.defined.add(var)
            self.owned.add(var)
        self.emit(b.make(gast.AugAssign, target=b.subscript(b.name(dvar), index, store=True),
                         op=gast.Add(), value=dy))


def _by_position(fun, r: Rule, args: list, kwargs: dict) -> tuple[list, dict]:
    """Keyword arguments that name a positional parameter of the rule (`np.clip(x,
    a_min=...)`) passed by position, using the primal's own signature."""
    if r.kind != "rule" or not kwargs or len(args) >= len(r.params):
        return args, kwargs
    try:
        names = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        return args, kwargs
    args, kwargs = list(args), dict(kwargs)
    for name in names[len(args):len(r.params)]:
        if name not in kwargs:
            break
        args.append(kwargs.pop(name))
    return args, kwargs


def _by_line(body: list[gast.stmt]):
    """Consecutive statements grouped by the user line they came from."""
    groups: list[tuple[int, list[gast.stmt]]] = []
    for stmt in body:
        line = getattr(stmt, "lineno", None)
        if groups and groups[-1][0] == line:
            groups[-1][1].append(stmt)
        else:
            groups.append((line, [stmt]))
    return groups


def _dotted(node: gast.AST) -> str:
    if isinstance(node, gast.Name):
        return node.id
    if isinstance(node, gast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return type(node).__name__


_LIBRARIES = ("numpy", "math", "builtins", "srcgrad", "numba", "scipy")


def _is_library(fun: Any) -> bool:
    module = getattr(fun, "__module__", "") or ""
    return module.split(".")[0] in _LIBRARIES


def _is_user_function(obj: Any) -> bool:
    return isinstance(obj, types.FunctionType) and not _is_library(obj)
