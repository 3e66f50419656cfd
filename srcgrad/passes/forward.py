"""forward: emit the tangent (forward-mode, jvp) code of a normalized function.

Requires a normalized body and the `wrt` parameter names. Guarantees `Forwarded`: the
primal statements, each followed by the statement that computes the tangent `tx` of
what it assigns (so the code keeps the function's control flow: a loop stays a loop, no
tape is needed), the result and its tangent. A variable is given a tangent when any of
its assignments depends differentiably on `wrt` (a fixed point over the whole body, so a
loop-carried `s = s + x` whose first value was `0.0` gets `ts = zeros_like(s)` there).

Each operation's tangent comes from `rules.lookup_tangent`: an elementwise adjoint rule
read as a tangent rule, a tangent rule, or the primal itself where it is linear; a call
to a user function calls its generated jvp (`callee`); a matrix product whose factors
both vary has the tangent `ty = matmul_tangent(a, b, ta, tb)` (its `joint` fact), which
`passes.join` later computes with the product in one call. The tangents of a tuple (of an
operation with the `results` or `tuple_result` fact: slogdet's, the gradients of einsum's
operands) add item by item (`add_items`), nested tuples and None entries too. Hooks
(`grad_of`) belong to the backward pass and are dropped. The code this pass reads may
itself be generated code (a gradient, for `hvp` and `grad(grad(f))`): its helpers and
tapes have tangent rules too.
"""

from __future__ import annotations

import copy
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gast
import numpy as np

from .. import builder as b
from ..analysis.activity import activity
from ..analysis.aliasing import view_base
from ..errors import MissingRule
from ..frontend.parse import MISSING, Parsed
from ..naming import Namer
from ..rules import added_by, fact, lookup_tangent
from ..rules.inline import instantiate
from ..runtime import add_items, broadcast_like, snapshot, unbroadcast, zeros_like
from .annotate import hook
from .base import FunctionPass, Namespace, Operation, by_line, is_write, target_of
from .check import check_followed, view_root, views

# `adder(out, *args)` is `out += helper(*args)`, in place


@dataclass
class Forwarded:
    body: list[gast.stmt]        # primal and tangent statements, interleaved
    result: gast.AST
    tangent: gast.AST            # the tangent of the result
    tangents: list[str]          # tangent parameter names of the wrt parameters, in order


JvpCallee = Callable[[Any, tuple[int, ...], gast.AST], str]


def forward(parsed: Parsed, fn: gast.FunctionDef, wrt: list[str], namer: Namer,
            ns: Namespace, callee: JvpCallee, primal: Callable[[Any, gast.Call], str]) -> Forwarded:
    """Primal-and-tangent statements of normalized `fn` with respect to parameters `wrt`.

    `callee(fun, positions, node)` names the generated jvp of a user function the code
    calls, `primal(fun)` its primal copy.

    >>> import gast, astor
    >>> from srcgrad.frontend.parse import parse
    >>> from srcgrad.passes.normalize import normalize
    >>> def f(x, y):
    ...     return x * y + 3.0
    >>> p = parse(f)
    >>> namer = Namer({"x", "y"})
    >>> out = forward(p, normalize(p.tree, p.env, namer, p.filename), ["x"], namer,
    ...               Namespace(), callee=None, primal=None)
    >>> print("\\n".join(astor.to_source(gast.gast_to_ast(s)).strip() for s in out.body
    ...                  if not isinstance(s.value, gast.Constant)))
    _t1 = x * y
    t_t1 = tx * y
    _t2 = _t1 + 3.0
    t_t2 = t_t1
    """
    return _Forward(parsed, fn, wrt, namer, ns, callee, primal).run()


class _Forward(FunctionPass):
    def __init__(self, parsed, fn, wrt, namer, ns, callee, primal):
        super().__init__(parsed, fn, namer, ns, primal)
        self.wrt = wrt
        self.callee = callee
        self.tan: dict[str, str] = {}

    def differentiable_source(self, obj: Any) -> bool:
        # a multi-statement rule that generated code calls is differentiated like user code
        return super().differentiable_source(obj) or (
            isinstance(obj, types.FunctionType)
            and (obj.__module__ or "").startswith("srcgrad.rules"))

    # ---- the pass ----
    def run(self) -> Forwarded:
        self.ops = self.classify_statements(self.operation, writes=False)
        result = self.fn.body[-1].value
        self.varied = activity(self.flow(), self.wrt, result).varied
        written = {s.targets[0].value.id for s in self.statements if is_write(s)}
        shared = views(self)   # a view of an array written into is written into too
        self.written = written | {v for v in shared if view_root(shared, v) in written}
        for s in self.statements:   # (an append or an add into an array, it follows)
            if not (isinstance(s, gast.Expr) and self.effect(s.value)):
                check_followed(self, s, self.ops.get(id(s)), self.varied)
        tangents = [self.tangent_name(p) for p in self.wrt]
        body = [b.assign(self.tangent_name(p), self.zeros(p)) for p in self.params
                if p in self.varied and p not in self.wrt]
        body += self.block(self.fn.body[:-1])
        if isinstance(result, gast.Name) and result.id in self.varied:
            dresult: gast.AST = b.name(self.tangent_name(result.id))
        else:
            dresult = self.zero_tangent(result)
        return Forwarded(body, result, dresult, tangents)

    def zero_tangent(self, atom: gast.AST) -> gast.AST:
        """The tangent of a value nothing varied flows into: a tuple's is a tuple."""
        if isinstance(atom, gast.Name) and atom.id in self.tuples:
            return b.tuple_([self.zero_tangent(a) for a in self.tuples[atom.id]])
        return b.call(b.name(self.bind("zeros_like", zeros_like)), copy.deepcopy(atom))

    def operation(self, value: gast.AST) -> Operation:
        if _method(value, "pop") and value.func.value.id in self.locals:
            return Operation("pop", [value.func.value])  # a list tape of generated code
        return self.classify(value)

    def flow(self) -> list[tuple[str, list[str]]]:
        """(changed name, names a tangent flows from) per statement that changes one."""
        out = []
        for s in self.statements:
            op = self.ops.get(id(s))
            if op is not None:
                out.append((target_of(s), self.operands(op)))
            elif is_write(s):
                out.append((s.targets[0].value.id, _names([s.value])))
            elif isinstance(s, gast.Expr) and (found := self.effect(s.value)):
                out.append((found[0], _names(found[1])))
        return out

    def operands(self, op: Operation) -> list[str]:
        if op.kind == "rule" and (t := lookup_tangent(op.fun)) is not None \
                and t.kind == "linear":
            return _names([a for k, a in enumerate(op.args) if k in t.positions])
        if op.kind == "pop":
            return _names(op.args)
        return op.operands()

    def effect(self, call: gast.AST) -> tuple[str, list[gast.AST]] | None:
        """A call kept for its effect that changes an array or list of this function:
        (its name, the values that flow into it)."""
        if not isinstance(call, gast.Call):
            return None
        if _method(call, "append") and call.func.value.id in self.locals:
            return call.func.value.id, list(call.args)
        obj = self.p.env.resolve(call.func, self.locals)
        if obj is MISSING or not call.args or not isinstance(call.args[0], gast.Name):
            return None
        t = lookup_tangent(obj)
        if t is not None and t.kind == "linear" and 0 in t.positions:
            return call.args[0].id, [a for k, a in enumerate(call.args) if k in t.positions[1:]]
        if added_by(obj) is not None:
            return call.args[0].id, list(call.args[1:])
        return None

    # ---- statements ----
    def block(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for lineno, group in by_line(stmts):
            code = [s for stmt in group for s in self.statement(stmt)]
            if code:
                out += [b.comment(f"line {lineno}: {self.p.line(lineno)}")] + code
        return out

    def statement(self, stmt: gast.stmt) -> list[gast.stmt]:
        if isinstance(stmt, gast.Assign):
            name = target_of(stmt)
            if name is None:
                return self.write(stmt)
            return self.assignment(stmt, name, self.ops[id(stmt)])
        if isinstance(stmt, gast.Expr):
            return self.effect_statement(stmt)
        if isinstance(stmt, gast.If):
            node = b.make(gast.If, test=copy.deepcopy(stmt.test),
                          body=self.block(stmt.body) or [b.make(gast.Pass)],
                          orelse=self.block(stmt.orelse))
            return [self.bind_globals(node, shallow=True)]
        if isinstance(stmt, (gast.For, gast.While)):
            node = copy.copy(stmt)
            for f in ("target", "iter", "test"):
                if hasattr(stmt, f):
                    setattr(node, f, copy.deepcopy(getattr(stmt, f)))
            node.body = self.block(stmt.body) or [b.make(gast.Pass)]
            return [self.bind_globals(node, shallow=True)]
        if isinstance(stmt, (gast.Break, gast.Continue)):
            return [copy.deepcopy(stmt)]
        if hook(stmt):  # a grad_of block runs in the backward pass only
            return []
        return [self.bind_globals(copy.deepcopy(stmt))]

    def assignment(self, stmt: gast.Assign, name: str, op: Operation) -> list[gast.stmt]:
        if name not in self.varied:
            return [self.bind_globals(copy.deepcopy(stmt))]
        dname = self.tangent_name(name)
        if op.kind == "call" and self.active(op.args):
            return [self.user_call(stmt, name, op)]
        product = self.product(stmt, name, op)
        if product is not None:
            return product
        expr = self.tangent(stmt, name, op)
        written = {self.tangent_name(w) for w in self.written}
        if (name in self.written or any(isinstance(n, gast.Name) and n.id in written
                                        for n in gast.walk(expr))) and \
                not self.fresh(expr) and not isinstance(stmt.value, gast.Name) and \
                view_base(stmt.value, self.p.env, frozenset(self.locals)) is None:
            # a new array whose tangent is written into later, or is another tangent that
            # is, must not share its array (`y = x - 0.5`: dy = dx, then `x[0] = ...`
            # or `y[0] = ...`): a copy. (A view or alias keeps its tangent's: writes
            # through it reach both, as in NumPy.)
            expr = b.call(b.name(self.bind("snapshot", snapshot)), expr)
        out = [self.bind_globals(copy.deepcopy(stmt)), b.assign(dname, expr)]
        if any(isinstance(n, gast.Name) and n.id == _PREV for n in gast.walk(expr)):
            # the tangent reads the value `stmt` replaces: keep it
            prev = self.namer.fresh(f"{name}_prev")
            _rename(expr, {_PREV: prev})
            out.insert(0, b.assign(prev, b.name(name)))
        return out

    def fresh(self, expr: gast.AST) -> bool:
        """Whether the tangent `expr` is surely a new value, never the array of another
        tangent: arithmetic, a ufunc, a reduction, a copy."""
        if isinstance(expr, (gast.BinOp, gast.UnaryOp)):
            return True
        if not isinstance(expr, gast.Call):
            return False
        if isinstance(expr.func, gast.Attribute) and expr.func.attr == "copy":
            return True
        fun = self.ns.called(expr)
        return isinstance(fun, np.ufunc) or bool(fact(fun, "reduction"))

    def product(self, stmt: gast.Assign, name: str, op: Operation
                ) -> list[gast.stmt] | None:
        """`name = a @ b` and `dname = matmul_tangent(a, b, da, db)`, for a product (its
        `joint` fact) whose factors all vary: two operations with rules of their own,
        which `passes.join` makes one call (reading each operand once) where both are
        needed; None for other operations."""
        plain = op.kind == "rule" and not op.kwargs and (op.rule is None or op.rule.kind == "rule")
        j = fact(op.fun, "joint") if plain else None
        if j is None or len(op.args) != j.joint.__code__.co_argcount - len(j.positions):
            return None
        at = [op.args[k] for k in j.positions]
        if not all(isinstance(a, gast.Name) and a.id in self.varied for a in at) or any(
                isinstance(a, gast.Name) and a.id == name for a in op.args):
            return None
        call = b.call(b.name(self.bind(j.tangent.__name__, j.tangent)),
                      *copy.deepcopy(op.args), *[b.name(self.tangent_name(a.id)) for a in at])
        return [self.bind_globals(copy.deepcopy(stmt)), b.assign(self.tangent_name(name), call)]

    def write(self, stmt: gast.Assign) -> list[gast.stmt]:
        """`a[i] = v`: and `da[i] = dv` (zero if v has no tangent)."""
        out = [self.bind_globals(copy.deepcopy(stmt))]
        base = stmt.targets[0].value.id
        if base in self.varied:
            index = copy.deepcopy(stmt.targets[0].slice)
            out.append(b.assign(b.subscript(b.name(self.tangent_name(base)), index, store=True),
                                self.tangent_or_zero(stmt.value)))
        return out

    def effect_statement(self, stmt: gast.Expr) -> list[gast.stmt]:
        out = [self.bind_globals(copy.deepcopy(stmt))]
        found = self.effect(stmt.value)
        if found is None or found[0] not in self.varied:
            return out
        into, _ = found
        call = stmt.value
        dinto = b.name(self.tangent_name(into))
        if _method(call, "append"):
            new = b.call(b.make(gast.Attribute, value=dinto, attr="append", ctx=gast.Load()),
                         *[self.tangent_or_zero(a) for a in call.args])
            return out + [b.make(gast.Expr, value=new)]
        obj = self.p.env.resolve(call.func, self.locals)
        if (helper := added_by(obj)) is not None:
            # out += helper(*args): out's tangent gains the helper's tangent
            op = Operation("rule", list(call.args[1:]), {}, None, fun=helper, what=helper.__name__)
            value = b.call(b.name(self.bind(helper.__name__, helper)), *copy.deepcopy(op.args))
            for part in self.parts(stmt, value, op):
                adder = self.ns.called(part) is helper
                out.append(b.make(gast.Expr, value=b.call(
                    b.name(self.bind(obj.__name__, obj)), dinto, *part.args)) if adder else
                    b.make(gast.AugAssign, target=copy.deepcopy(dinto), op=gast.Add(),
                           value=part))
            return out
        t = lookup_tangent(obj)
        return out + [b.make(gast.Expr, value=self.linear(
            call, [call.args[k] for k in t.positions]))]

    def user_call(self, stmt: gast.Assign, name: str, op: Operation) -> gast.stmt:
        """`y = g(a, b)` with `a` varied: `y, dy = g_jvp(a, b, da)`."""
        if op.kwargs:
            raise self.error(MissingRule, stmt, f"keyword arguments in a call to the "
                                                f"differentiated function {op.what} are not "
                                                f"supported yet")
        positions = tuple(k for k, a in enumerate(op.args) if self.active([a]))
        jvp = self.callee(op.fun, positions, stmt)
        call = b.call(b.name(jvp), *copy.deepcopy(op.args),
                      *[b.name(self.tangent_name(op.args[k].id)) for k in positions])
        targets = b.tuple_([b.name(name, store=True),
                            b.name(self.tangent_name(name), store=True)], store=True)
        return b.assign(targets, call)

    # ---- tangents of values ----
    def tangent(self, stmt: gast.Assign, name: str, op: Operation) -> gast.AST:
        """The tangent of `name = stmt.value`; where it reads an operand `name` (the value
        before the assignment), it reads `_PREV`."""
        if op.kind == "copy":
            return self.tangent_or_zero(op.args[0], name)
        if op.kind == "tuple":
            return b.make(type(stmt.value), elts=[self.tangent_or_zero(a) for a in op.args],
                          ctx=gast.Load())
        if op.kind in ("subscript", "pop"):
            if not self.active(op.args):
                return self.zeros(name)
            return self.substitute(stmt.value, {
                id(op.args[0]): b.name(self.tangent_name(op.args[0].id))})
        if op.kind == "call":  # no argument varied
            return self.zeros(name)
        if op.kind == "rule" and (op.rule is None or op.rule.kind == "rule"):
            t = lookup_tangent(op.fun)
            if t is not None and t.kind == "linear":
                # (a position past the call's arguments is a default: `sum(x)`'s start)
                parts = [self.linear(stmt.value, [op.args[k] for k in t.positions
                                                  if k < len(op.args)], name)]
            else:  # the result is `name` after the statement, an operand `name` before it
                # (on copies: a called rule's parts share its operands' nodes and `y`)
                parts = [_rename(copy.deepcopy(p), {name: _PREV, _RESULT: name})
                         for p in self.parts(stmt, b.name(_RESULT), op)]
            if not parts:
                return self.zeros(name)
            if len(parts) > 1 and (fact(op.fun, "results") or fact(op.fun, "tuple_result")):
                # a tuple's tangents add item by item (`+` would join them)
                adder = b.name(self.bind("add_items", add_items))
                total = parts[0]
                for part in parts[1:]:
                    total = b.call(copy.deepcopy(adder), total, part)
                return total
            return _sum(parts)
        if op.kind == "rule" and op.rule.kind == "constructor" and self.active(
                op.args + list(op.kwargs.values()), deep=True):
            raise self.error(MissingRule, stmt,
                             f"{op.what} builds a new array from a value being "
                             f"differentiated, and no derivative flows through it; use "
                             f"np.stack or arithmetic instead")
        if op.kind == "missing" and self.active(op.args + list(op.kwargs.values())):
            raise self.error(MissingRule, stmt, op.what)
        return self.zeros(name)

    def parts(self, stmt: gast.stmt, y: gast.AST, op: Operation) -> list[gast.AST]:
        """J_i dx_i of the operation (result `y`), one per argument that has a tangent;
        for a tangent rule (`linear` maps are `self.linear`)."""
        active = [k for k, a in enumerate(op.args) if self.active([a])]
        if not active:
            return []
        t = lookup_tangent(op.fun)
        if t is None:
            where = f" ({op.rule.origin})" if op.rule is not None and op.rule.origin else ""
            raise self.error(MissingRule, stmt,
                             f"{op.what} has a custom gradient rule{where}, which is an "
                             f"adjoint (reverse mode) only; forward mode (jvp, hvp, "
                             f"hessian, grad of grad) needs the derivative itself, as in "
                             f"JAX's custom_vjp")
        parts = []
        for k in active:
            d = b.name(self.tangent_name(op.args[k].id))
            try:
                inst = instantiate(t.rule, d, y, op.args, op.kwargs, self.bind)
            except Exception as exc:  # a RuleError, with the call's line
                raise self.error(MissingRule, stmt, str(exc)) from None
            for bound, (obj, jit) in inst.needs.items():
                self.ns.bind(bound, obj, jit=jit)
            if inst.per_arg is not None:
                if k >= len(inst.per_arg):
                    raise self.error(MissingRule, stmt,
                                     f"{op.what}: its argument {k + 1} receives a value "
                                     f"being differentiated, and its tangent rule gives "
                                     f"none there")
                part = inst.per_arg[k]
            else:
                part = inst.whole if len(t.rule.params) == 1 else \
                    b.subscript(inst.whole, b.const(k))
            if part is None:
                continue
            if t.kind == "elementwise" and self.ns.called(part) is unbroadcast:
                part = part.args[0]
                others = {a.id for j, a in enumerate(op.args)
                          if j != k and isinstance(a, gast.Name)}
                if len(active) == 1 and not others <= {n.id for n in gast.walk(part)
                                                       if isinstance(n, gast.Name)}:
                    # `a + b`, b inactive and larger: dy is da broadcast to y's shape
                    part = b.call(b.name(self.bind("broadcast_like", broadcast_like)),
                                  part, copy.deepcopy(y))
            parts.append(part)
        return parts

    def linear(self, value: gast.AST, at: list[gast.AST], name: str | None = None) -> gast.AST:
        """`value` (a call linear in its operands `at`) with those operands replaced by
        their tangents; other operands `name` (the statement's target) read as `_PREV`."""
        swap = {id(a): self.tangent_or_zero(a) for a in at}
        for node in gast.walk(value):
            if isinstance(node, gast.Name) and node.id == name and id(node) not in swap:
                swap[id(node)] = b.name(_PREV)
        return self.substitute(value, swap)

    def substitute(self, value: gast.AST, swap: dict[int, gast.AST]) -> gast.AST:
        """A copy of primal expression `value`, its globals bound, with the nodes whose
        ids `swap` holds replaced by (copies of) generated ones."""
        for node in gast.walk(value):
            if id(node) in swap:
                node.srcgrad_swap = id(node)
        try:
            new = copy.deepcopy(value)
        finally:
            for node in gast.walk(value):
                if hasattr(node, "srcgrad_swap"):
                    del node.srcgrad_swap
        new = self.bind_globals(b.make(gast.Expr, value=new)).value

        class Swap(gast.NodeTransformer):
            def visit(self, node):
                key = getattr(node, "srcgrad_swap", None)
                return copy.deepcopy(swap[key]) if key is not None else super().visit(node)

        return Swap().visit(new)

    def tangent_or_zero(self, atom: gast.AST, like: str | None = None) -> gast.AST:
        if isinstance(atom, gast.Name) and atom.id in self.varied:
            return b.name(self.tangent_name(atom.id))
        if isinstance(atom, gast.Constant) and isinstance(atom.value, (int, float)):
            return b.const(0.0)
        return b.call(b.name(self.bind("zeros_like", zeros_like)),
                      b.name(like) if like else self.bind_globals(
                          b.make(gast.Expr, value=copy.deepcopy(atom))).value)

    def active(self, atoms: list[gast.AST], deep: bool = False) -> bool:
        nodes = [n for a in atoms for n in (gast.walk(a) if deep else [a])]
        return any(isinstance(n, gast.Name) and n.id in self.varied for n in nodes)

    def tangent_name(self, var: str) -> str:
        if var not in self.tan:
            self.tan[var] = self.namer.tangent(var)
        return self.tan[var]


def _names(atoms: list[gast.AST]) -> list[str]:
    return [a.id for a in atoms if isinstance(a, gast.Name)]


def _method(value: gast.AST, name: str) -> bool:
    return isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and \
        value.func.attr == name and isinstance(value.func.value, gast.Name)


def _rename(expr: gast.AST, names: dict[str, str]) -> gast.AST:
    for node in gast.walk(expr):
        if isinstance(node, gast.Name) and node.id in names:
            node.id = names[node.id]
    return expr


# stand for a statement's result, and for the value its target held before, while the
# statement's tangent is built
_RESULT, _PREV = "srcgrad_result", "srcgrad_prev"


def _sum(parts: list[gast.AST]) -> gast.AST:
    """`p1 + p2 + ...`, equal parts once with their count (`x * x` has the tangent
    `2 * (dx * x)`, not `dx * x + dx * x`)."""
    counts: dict[str, list] = {}
    for part in parts:
        counts.setdefault(gast.dump(part), [part, 0])[1] += 1
    terms = [p if n == 1 else b.binop(b.const(n), gast.Mult(), p) for p, n in counts.values()]
    total = terms[0]
    for term in terms[1:]:
        total = b.binop(total, gast.Add(), term)
    return total
