"""reverse: emit the forward code and the adjoint code of a normalized function.

Requires a normalized body (one operation per statement, structured control flow) and
the `wrt` parameter names. Guarantees `Reversed`: the forward statements (the primal plus
tape pushes, commented with the user's lines), the adjoint statements (one block per
original line, headed `# grad of line N: <line>`; a loop reversed as a loop over its
iterations backwards, a branch replayed), the result atom, and the names of the
gradients. Every global the code names is bound through the module `Namespace`.

The adjoint of an active variable `x` is `dx`. Its first contribution is written
`dx = ...` (which may alias another adjoint), later ones `dx = dx + ...`, or `dx += ...`
once `dx` is an array this pass made (it tracks which: `owned`). Operations whose result
has no adjoint yet are skipped (symbolic zero), so only what flows to the result is
computed (Griewank & Walther, ch. 3); across loop iterations and branch joins the
adjoints that may be nonzero are made explicit zeros. What the adjoint reads back from
the forward is decided by `analysis.tape.plan` (recompute, tape, or save before an
overwrite); this pass places the pushes and pops. Exists because this is the algorithm:
everything else prepares or packages its output.
"""

from __future__ import annotations

import copy
import functools
import operator
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gast

from .. import builder as b
from ..analysis.activity import Activity, activity
from ..analysis.tape import Read, plan
from ..errors import MissingRule, SrcgradError, UnsupportedSyntax
from ..frontend.parse import Parsed, nested_entry, parse
from ..naming import Namer
from ..rules import Rule, fact, lookup
from ..rules.inline import instantiate
from ..runtime import (
    add_at,
    broadcast_like,
    checked_grad,
    new_tape,
    record,
    snapshot,
    unaliased,
    unbroadcast,
    written_grad,
    zeros_like,
)
from .annotate import hook
from .base import (
    FunctionPass,
    Namespace,
    Operation,
    all_statements,
    by_line,
    int_starts,
    is_write,
    target_of,
)
from .normalize import HelperWrites, fancy_names, view_base


@dataclass
class Reversed:
    forward: list[gast.stmt]
    adjoint: list[gast.stmt]
    result: gast.AST
    seed: str | None             # name of the result's adjoint, None if the result is inactive
    grads: list[str]             # adjoint names of the wrt parameters, in order
    taped: bool = False          # the forward pushes onto a tape the adjoint pops
    scalar: bool = False         # the result is a full reduction: a scalar by construction
    custom: bool = False         # a gradient the user wrote (a rule, a grad_of block) is used


Callee = Callable[[Any, tuple[int, ...], gast.AST], str]


def reverse(parsed: Parsed, fn: gast.FunctionDef, wrt: list[str], namer: Namer,
            ns: Namespace, callee: Callee, primal: Callable[[Any, gast.Call], str]) -> Reversed:
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


@dataclass
class _Adjoint:
    """The adjoint of one assignment, before it is placed: statements to run first, then
    contributions `d<var> += expr`, and `d<var>[index] += expr` for subscript reads."""

    pre: list[gast.stmt] = field(default_factory=list)
    add: list[tuple[str, gast.AST]] = field(default_factory=list)
    add_at: list[tuple[str, gast.AST, gast.AST]] = field(default_factory=list)
    result_copy: str | None = None   # the statement reads its own target: keep the result here
    self_ref: bool = False           # `x = f(x)`: in the expressions, `x` is the old value


def _shaped_by_operand(rule: Rule, position: int) -> bool:
    """Whether the rule's cotangent for the argument at `position` reads that argument or
    the result (`dy * 2 * r`), so a scalar dy comes out with the argument's shape; `-dy`
    (np.negative) or `dy * c` stays a scalar (fuzzer seed 200014)."""
    template = rule.template[position] if isinstance(rule.template, list) else rule.template
    if template is None or position >= len(rule.params):
        return False
    if isinstance(template, gast.Call) and template.args:   # unbroadcast(J dy, x): J dy
        template = template.args[0]
    names = {n.id for n in gast.walk(template) if isinstance(n, gast.Name)}
    return bool(names & {rule.params[position], "y"})


class _Reverse(FunctionPass):
    def __init__(self, parsed, fn, wrt, namer, ns, callee, primal):
        super().__init__(parsed, fn, namer, ns, primal)
        self.wrt = wrt
        self.callee = callee
        self.intermediates = set(wrt) - set(self.params)  # wrt variables, assigned once
        self.adj: dict[str, str] = {}
        self.defined: set[str] = set()
        self.owned: set[str] = set()
        self.tapes: dict[tuple, str] = {}
        self.back_before: list[gast.stmt] = []
        self.in_place: set[str] = set()   # adjoints written in place somewhere
        self.push_counts: dict[str, int] = {}  # tape -> push statements in the forward
        self.pushes: dict[str, int] = {}       # the same, frozen after the dry run
        self.arrays: set[str] = set()          # tapes that are arrays, one entry per iteration
        self.counters: dict[int, str] = {}
        self.custom = False                    # user-written gradient code was placed

    def cheap(self, value: gast.AST) -> bool:
        """Whether the adjoint may run this operation again rather than tape its value."""
        if isinstance(value, gast.BinOp):
            return not isinstance(value.op, gast.MatMult)
        if isinstance(value, gast.Call):
            return bool(fact(self.p.env.resolve(value.func, self.locals), "cheap"))
        if isinstance(value, gast.Attribute):
            return value.attr in ("T", "shape", "ndim", "size")
        return isinstance(value, (gast.UnaryOp, gast.Compare, gast.BoolOp, gast.Subscript,
                                  gast.Name, gast.Constant, gast.Tuple))

    # ---- the pass ----
    def run(self) -> Reversed:
        body = self.fn.body
        self.ops = self.classify_statements(self.classify)
        self.act = act = activity(self.flow(), self.wrt, body[-1].value)
        self.tuple_results = self.returned_tuples()
        self.int_starts = int_starts(self.statements, self.flow(), act.varied)
        self.check_constructors(act)
        for s in self.statements:
            self.check_followed(s, self.ops.get(id(s)), act.varied, act.useful)
        self.check_writes()
        self.hooks = {id(s) for s in self.statements if hook(s)}  # inactive: dh is zero
        self.uniform_at = {id(s): u for s in self.statements if target_of(s)
                           and (u := self.uniform(s, self.ops[id(s)])) is not None}
        self.scalar_adjoints = {self.ops[k].args[0].id for k in self.uniform_at}
        self.adjoints = {id(s): self.adjoint_of(s) for s in self.statements
                         if (target_of(s) or is_write(s)) and self.changed(s) in act.active}
        self.written = {self.changed(s) for s in self.statements if is_write(s)}
        self.tape = plan(body, self.params, self.reads(), self.cheap, self.p.filename)
        self.read_names = {r.var for r in self.tape.reads}
        self.retests = self.tests_changed_inside()
        result = body[-1].value
        seed = None
        if isinstance(result, gast.Name) and result.id in act.active:
            seed = self.adjoint_name(result.id)
            self.defined.add(result.id)
        self.forward_block(body[:-1])   # a dry run: which tapes are pushed where
        self.pushes = dict(self.push_counts)
        adjoint = self.reverse_block(body[:-1])
        grads = []
        for param in self.wrt:
            if param not in self.defined:
                adjoint += [b.comment(f"no gradient flows back to {param}"),
                            b.assign(self.adjoint_name(param), self.zeros(param))]
            grads.append(self.adjoint_name(param))
        code = self.forward_block(body[:-1])
        forward = [b.assign(name, b.make(gast.List, elts=[], ctx=gast.Load()))
                   for name in self.tapes.values() if name not in self.arrays] + code
        if isinstance(result, gast.Name) and any(
                self.changed(s) == result.id for s in self.statements
                if id(s) in self.tape.saved):
            # the adjoint restores the result's earlier values: keep the one to return
            value = self.namer.fresh("value")
            forward.append(b.assign(value, b.name(result.id)))
            result = b.name(value)
        taped = bool(self.tapes) or any(isinstance(s, (gast.For, gast.While))
                                        for s in self.statements)
        made = self.made_once(result.id) if isinstance(result, gast.Name) else None
        scalar = made is not None and self.full_reduction(self.ops.get(id(made))) is not None
        return Reversed(forward, adjoint, result, seed, grads, taped, scalar, self.custom)

    def changed(self, stmt: gast.stmt) -> str:
        if isinstance(stmt, gast.For):
            return stmt.target.id
        return target_of(stmt) or stmt.targets[0].value.id

    def flow(self) -> list[tuple[str, list[str]]]:
        """(changed name, names a derivative flows from) per assignment."""
        out = []
        for s in self.statements:
            op = self.ops.get(id(s))
            if op is not None:
                out.append((self.changed(s), op.operands()))
        return out

    def check_constructors(self, act: Activity) -> None:
        for stmt in self.statements:
            op = self.ops.get(id(stmt))
            if op is None or op.rule is None or op.rule.kind != "constructor":
                continue
            names = [n.id for a in op.args + list(op.kwargs.values())
                     for n in gast.walk(a) if isinstance(n, gast.Name)]
            if target_of(stmt) in act.useful and any(n in act.varied for n in names):
                raise self.error(MissingRule, stmt,
                                 f"{op.what} builds a new array from a value being "
                                 f"differentiated, and no gradient flows through it; use "
                                 f"np.stack or arithmetic instead")

    def check_writes(self) -> None:
        """Writes go into arrays, not through a view (the tape tracks arrays by name).
        An argument of the function differentiated that it writes into was copied on entry
        (normalize); a helper's argument was not, and is refused here."""
        views: dict[str, str] = {}
        fancy = fancy_names(self.fn.body)
        items: dict[str, list[gast.expr]] = {}   # the items of tuples: `p = (x0, y)`
        for s in self.statements:
            name, v = target_of(s), getattr(s, "value", None)
            if name is None:
                continue
            if isinstance(v, (gast.Tuple, gast.List)):
                items[name] = v.elts
                v = next((e for e in v.elts if isinstance(e, gast.Name)
                          and e.id in self.locals), None)   # (an index not known: the first)
            elif isinstance(v, gast.Subscript) and isinstance(v.value, gast.Name) \
                    and v.value.id in items and (k := _int(v.slice)) is not None \
                    and -len(items[v.value.id]) <= k < len(items[v.value.id]):
                v = items[v.value.id][k]    # `p[0]` is x0
            if isinstance(v, gast.Name) and v.id in self.locals:
                views[name] = v.id
            elif isinstance(v, gast.Subscript) and isinstance(v.value, gast.Name):
                parts = v.slice.elts if isinstance(v.slice, gast.Tuple) else [v.slice]
                if not any(isinstance(i, gast.Name) and i.id in fancy for i in parts):
                    views[name] = v.value.id   # a fancy index makes a copy
            elif isinstance(base := view_base(v, self.p.env, self.locals), gast.Name):
                views[name] = base.id
        self.views = views
        for s in self.statements:
            if not is_write(s):
                continue
            name = s.targets[0].value.id
            root, seen = name, set()
            while root in views and root not in seen:
                seen.add(root)
                root = views[root]
            if root in self.params:   # only in a helper: see normalize's copy_args
                raise self.error(HelperWrites, s,
                                 f"writing into {name}[...] in a helper would change the "
                                 f"array its caller passed as {root!r}, which cannot be "
                                 f"differentiated; copy it first ({root} = {root}.copy()) "
                                 f"and return it")
            if name in views:
                base = self.view_root(name)
                user = base.rsplit("_", 1)[0]   # `x_1 = x.copy()`: the argument's copy
                base = user if user in self.params and base[len(user) + 1:].isdigit() else base
                raise self.error(UnsupportedSyntax, s,
                                 f"{name!r} is a view of {base!r}; write into {base!r} "
                                 f"itself, or copy the view first")

    # ---- phase 1: each assignment's adjoint, as contributions ----
    def adjoint_of(self, stmt: gast.Assign) -> _Adjoint:
        op = self.ops[id(stmt)]
        target = self.changed(stmt)
        dy = b.name(self.adjoint_name(target))
        if op.kind == "write":
            a = _Adjoint()
            value = stmt.value
            if isinstance(value, gast.Name) and value.id in self.act.active:
                # a copy: the entries are zeroed next; summed where `v` was broadcast
                index = copy.deepcopy(stmt.targets[0].slice)
                part = b.call(b.name(self.bind("snapshot", snapshot)), b.subscript(dy, index)) \
                    if self.basic(index) else b.call(   # a repeated entry: the last write's
                        b.name(self.bind("written_grad", written_grad)), dy, _value(index))
                a.add.append((value.id, b.call(b.name(self.bind("unbroadcast", unbroadcast)),
                                               part, b.name(value.id))))
            return a
        if op.kind == "rule" and op.fun is operator.mul and self.repeats_a_list(op):
            raise self.error(MissingRule, stmt, "repeating a list a function returned (`* n`) "
                                                "has no gradient rule (the rule of * is "
                                                "arithmetic): build the array with np.tile or "
                                                "np.concatenate")
        if op.kind == "missing" or op.kind == "rule" and op.rule is None:
            raise self.error(MissingRule, stmt, op.what if op.kind == "missing" else
                             f"cannot differentiate {op.what}")
        a = _Adjoint()
        active = [i for i, x in enumerate(op.args)
                  if isinstance(x, gast.Name) and x.id in self.act.active]
        result: gast.AST = b.name(target)
        if target in [x.id for x in op.args + list(op.kwargs.values())
                      if isinstance(x, gast.Name)]:
            a.self_ref = True
            a.result_copy = self.namer.fresh(f"{target}_out")
            result = b.name(a.result_copy)
        if target in self.numbers_first and (op.kind == "call" or op.kind == "rule" and op.rule
                                        is not None and not op.rule.elementwise):
            # its adjoint may still be the zeros of the number it started as: a rule that
            # is not elementwise needs it at this iteration's shape (fuzzer seed 2002711)
            dy = b.call(b.name(self.bind("broadcast_like", broadcast_like)), dy,
                        copy.deepcopy(result))
        if op.kind == "copy":
            if active:
                a.add.append((op.args[0].id, dy))
        elif op.kind == "tuple":
            a.add += [(op.args[i].id, b.subscript(dy, b.const(i))) for i in active]
        elif op.kind == "subscript":
            if active:
                a.add_at.append((op.args[0].id, copy.deepcopy(stmt.value.slice), dy))
        elif op.kind == "call":
            self.user_call(stmt, op, dy, active, a)
        elif op.kind == "rule" and op.rule.kind == "rule" and active:
            self.apply_rule(stmt, op, dy, result, active, a)
        if a.result_copy and not any(
                isinstance(n, gast.Name) and n.id == a.result_copy
                for node in [e for _, e in a.add] + a.pre for n in gast.walk(node)):
            a.result_copy = None
        return a

    def repeats_a_list(self, op: Operation) -> bool:
        """Whether `a * n` (n an int) may repeat a list or tuple a user function returned
        (normalize's `joins_sequences` refuses displays): Python repeats it, and `*`'s
        rule would be silently wrong."""
        if not any(isinstance(a, gast.Constant) and type(a.value) is int for a in op.args):
            return False
        made = {target_of(s): self.ops.get(id(s)) for s in self.statements if target_of(s)}
        return any(isinstance(a, gast.Name) and (m := made.get(a.id)) is not None
                   and m.kind == "call" and _returns_sequence(m.fun) for a in op.args)

    def apply_rule(self, stmt, op: Operation, dy, result, active, a: _Adjoint) -> None:
        rule, args = op.rule, op.args
        if id(stmt) in self.uniform_at:
            rule, stand_in = self.uniform_at[id(stmt)]
            args = [stand_in]
        try:
            inst = instantiate(rule, dy, result, args, op.kwargs, self.bind,
                               scalar_dy=target_of(stmt) in self.scalar_adjoints)
        except SrcgradError as exc:
            raise self.error(type(exc), stmt, exc.message) from None
        for name, (obj, jit) in inst.needs.items():
            self.ns.bind(name, obj, jit=jit)
        if inst.per_arg is not None:
            parts = [(i, inst.per_arg[i]) for i in active
                     if i < len(inst.per_arg) and inst.per_arg[i] is not None]
        elif len(rule.params) == 1:
            parts = [(0, inst.whole)]
        else:
            tmp = self.namer.temp()
            a.pre.append(b.assign(tmp, inst.whole))
            parts = [(i, b.subscript(b.name(tmp), b.const(i))) for i in active]
        if op.rule.origin is not None:  # a user's rule
            what = f"the gradient rule {op.rule.name} ({op.rule.origin})"
            parts = [(i, self.checked(expr, op.args[i], stmt, what)) for i, expr in parts]
        a.add += [(op.args[i].id, expr) for i, expr in parts]

    def full_reduction(self, op: Operation | None) -> Rule | None:
        """The uniform rule of `op` if it reduces one operand over every axis
        (`np.mean(x)`, no axis): its value is a scalar whatever x's shape."""
        if op is None or op.kind != "rule" or len(op.args) != 1 or op.kwargs:
            return None
        return fact(op.fun, "uniform")

    def made_once(self, var: str) -> gast.stmt | None:
        """The one statement that sets `var`, if it is at the top level of the function."""
        made = [s for s in self.statements
                if (target_of(s) or is_write(s)) and self.changed(s) == var]
        return made[0] if len(made) == 1 and any(made[0] is s for s in self.fn.body) \
            else None

    def uniform(self, stmt: gast.Assign, op: Operation) -> tuple[Rule, gast.AST] | None:
        """The uniform rule of a reduction over every axis, `y = np.mean(x)`, where x is
        made by a built-in elementwise rule from one variable v and constants (`r ** 2`)
        and read nowhere else (both at the top level, x not a wrt): x's cotangent stays a
        scalar there, which x's rule broadcasts. With the rule comes v, which has x's shape
        and stands in for x (a uniform rule reads x for its shape only): x itself is then
        needed by nothing but the value."""
        u = self.full_reduction(op)
        x = op.args[0] if u is not None else None
        if not isinstance(x, gast.Name) or op.rule is not lookup(op.fun) \
                or x.id in self.intermediates or not any(stmt is s for s in self.fn.body):
            return None
        made = self.made_once(x.id)
        reads = [n for n in gast.walk(self.fn) if isinstance(n, gast.Name)
                 and n.id == x.id and not isinstance(n.ctx, gast.Store)]
        producer = self.ops.get(id(made)) if made is not None else None
        if producer is None or len(reads) != 1 or producer.kind != "rule" \
                or producer.rule is None or not producer.rule.elementwise \
                or producer.rule is not lookup(producer.fun) or producer.kwargs:
            return None
        operands = [(i, a) for i, a in enumerate(producer.args)
                    if not isinstance(a, gast.Constant)]
        if len(operands) != 1 or not _shaped_by_operand(producer.rule, operands[0][0]):
            return None
        return u, operands[0][1]

    def checked(self, grad: gast.AST, arg: gast.AST, stmt: gast.stmt, what: str) -> gast.AST:
        """`grad`, which user code (`what`) gave for `arg`, checked at run time to have
        its shape."""
        where = f"{os.path.basename(self.p.filename)}:{stmt.lineno}: {what}"
        self.custom = True
        return b.call(b.name(self.bind("checked_grad", checked_grad)), grad,
                      copy.deepcopy(arg), b.const(where))

    def user_call(self, stmt, op: Operation, dy, active, a: _Adjoint) -> None:
        if op.kwargs:
            raise self.error(MissingRule, stmt, f"keyword arguments in a call to the "
                                                f"differentiated function {op.what} are not "
                                                f"supported yet")
        if not active:
            return
        positions = tuple(active)
        vjp_name = self.callee(op.fun, positions, stmt)
        call = b.call(b.name(vjp_name), *copy.deepcopy(op.args), dy)
        if len(positions) == 1:
            a.add.append((op.args[positions[0]].id, call))
            return
        tmp = self.namer.temp()
        a.pre.append(b.assign(tmp, call))
        a.add += [(op.args[i].id, b.subscript(b.name(tmp), b.const(k)))
                  for k, i in enumerate(positions)]

    @functools.cached_property
    def numbers_first(self) -> set[str]:
        """Names that start as an int, hold floats, and are assigned in a loop (`acc = 0`,
        then `acc = acc + x[:, None] * x`)."""
        numbers = {target_of(s) for s in self.statements if id(s) in self.int_starts}
        return {target_of(s) for loop in self.statements
                if isinstance(loop, (gast.For, gast.While))
                for s in all_statements(loop.body) if target_of(s) in numbers}

    @functools.cached_property
    def reshaped(self) -> set[str]:
        """`numbers_first`, whose shape may differ from one iteration to the next, so
        reading them for their shape needs that iteration's value. (One
        started as a float is taken to be a number throughout: taping every float
        accumulator costs scalar loops a quarter of their time.) So do the entries a mask
        selects in a loop, the parts taken of an array the loop rebinds, and what is
        computed from them there."""
        looped = [s for loop in self.statements if isinstance(loop, (gast.For, gast.While))
                  for s in all_statements(loop.body) if target_of(s)]
        # and what a boolean mask or np.nonzero selects in a loop, and what is computed
        # from it there: its length is the data's (x[x > 0] may be empty one time)
        masks = {target_of(s) for s in looped if isinstance(s.value, gast.Compare)
                 or fact(self.ns.called(s.value), "selects")}
        rebound = {target_of(s) for s in looped}
        # ... and the parts of an array the loop rebinds (x = x[1:] * x[:-1] shrinks it)
        varying = {target_of(s) for s in looped if isinstance(s.value, gast.Subscript)
                   and ({n.id for n in gast.walk(s.value.slice)
                         if isinstance(n, gast.Name)} & masks
                        or isinstance(s.value.value, gast.Name)
                        and s.value.value.id in rebound)}
        while True:
            more = {target_of(s) for s in looped if target_of(s) not in varying
                    and any(isinstance(n, gast.Name) and n.id in varying
                            for n in gast.walk(s.value))}
            if not more:
                return self.numbers_first | varying
            varying |= more

    def reads(self) -> list[Read]:
        """Every primal value the adjoint code reads, at the statement it reverses."""
        out = []
        adjoint_names = set(self.adj.values())
        reshaped = self.reshaped

        def names(node):
            shape_only = set()
            for call in gast.walk(node):  # `unbroadcast(g, x)` reads x for its shape only
                k = fact(self.ns.called(call), "shape_only")
                if k is not None and len(call.args) > k and isinstance(call.args[k], gast.Name) \
                        and call.args[k].id not in reshaped:
                    shape_only.add(id(call.args[k]))
            return {n.id for n in gast.walk(node) if isinstance(n, gast.Name)
                    and n.id in self.locals and n.id not in adjoint_names
                    and n.id not in self.hook_locals and id(n) not in shape_only}

        for s in self.statements:
            a = self.adjoints.get(id(s))
            if a is not None:
                exprs = a.pre + [e for _, e in a.add] + [e for _, i, e in a.add_at] + \
                    [i for _, i, e in a.add_at]
                target = target_of(s)
                for n in set().union(*map(names, exprs)) if exprs else set():
                    after = n == target and not a.self_ref
                    out.append(Read(n, s, after=after))
                if a.result_copy:
                    out.append(Read(target, s, after=True))
                # `dacc[:, 0] += dy` may first make dacc as zeros shaped like acc here
                # (`x = x[idx]`: shaped like the old x)
                out += [Read(v, s) for v, _, _ in a.add_at if v in reshaped or v == target]
                if is_write(s):
                    out += [Read(n, s) for n in names(s.targets[0].slice)]
                    if self.changed(s) in reshaped:   # for its shape (broadcast_like)
                        out.append(Read(self.changed(s), s, after=True))
            if id(s) in self.hooks:
                out += [Read(n, s) for t in s.body for n in names(t)]
        # a branch or loop is replayed only if something inside it has an adjoint or may
        # overwrite a value the adjoint reads; then its test, or the start and step of its
        # range (and the stop, unless it counts its iterations), are read too
        replayed: set[int] = set()
        while True:
            read = {r.var for r in out}
            more = [s for s in self.statements if isinstance(s, (gast.If, gast.For))
                    and id(s) not in replayed and any(
                        id(t) in self.adjoints or id(t) in self.hooks
                        or (target_of(t) or "") in read
                        or (isinstance(t, gast.For) and t.target.id in read)
                        or (is_write(t) and self.changed(t) in read)
                        for t in all_statements(s.body + s.orelse))]
            if not more:
                return out
            for s in more:
                replayed.add(id(s))
                if isinstance(s, gast.If):
                    out += [Read(n, s) for n in names(s.test)]
                else:
                    args = s.iter.args if not _breaks(s) else \
                        [a for k, a in enumerate(s.iter.args) if k != min(1, len(s.iter.args) - 1)]
                    out += [Read(n, s) for a in args for n in names(a)]

    # ---- forward ----
    def forward_block(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for lineno, group in by_line(stmts):
            code = [s for stmt in group for s in self.forward_statement(stmt)]
            if code:
                out += [b.comment(f"line {lineno}: {self.p.line(lineno)}")] + code
        return out

    def forward_statement(self, stmt: gast.stmt) -> list[gast.stmt]:
        at_read = self.tape.saved_reads.get(id(stmt), [])
        before = [p for v, after in at_read if not after
                  for p in self.push(self.tapes_of(v), self.kept(v), stmt)]
        after = [p for v, after in at_read if after
                 for p in self.push(self.tapes_of(v), self.kept(v), stmt)]
        return before + self.forward_code(stmt) + after

    def kept(self, name: str) -> gast.AST:
        """`name`, to save on a tape: a copy if it is an array written into later (the
        tape would hold the array, and see the write)."""
        if name in self.written:
            return b.call(b.name(self.bind("snapshot", snapshot)), b.name(name))
        return b.name(name)

    def tapes_of(self, name: str) -> str:
        key = ("name", name)
        if key not in self.tapes:
            self.tapes[key] = self.namer.fresh(f"{name}_tape")
        return self.tapes[key]

    def forward_code(self, stmt: gast.stmt) -> list[gast.stmt]:
        saved = id(stmt) in self.tape.saved
        if isinstance(stmt, gast.Assign):
            out = []
            if saved:
                name = self.changed(stmt)
                value = b.name(name) if target_of(stmt) else b.call(
                    b.name(self.bind("snapshot", snapshot)),
                    b.subscript(b.name(name), copy.deepcopy(stmt.targets[0].slice)))
                out += self.push(self.tape_name(stmt), value, stmt)
            out.append(self.detached(stmt))
            name = target_of(stmt)
            if name in self.tape.local and self.tape.local[name].how == "tape":
                out += self.push(self.tape_name(stmt), b.name(name), stmt)
            return out
        if isinstance(stmt, gast.If):
            body, orelse = self.forward_block(stmt.body), self.forward_block(stmt.orelse)
            if not body and not orelse:  # e.g. a branch that holds only a hook
                return []
            node = b.make(gast.If, test=copy.deepcopy(stmt.test),
                          body=body or [b.make(gast.Pass)], orelse=orelse)
            saves = [p for name in self.retests.get(id(stmt), [])
                     for p in self.push(self.test_tape(stmt, name), b.name(name), stmt)]
            return saves + [self.bind_globals(node, shallow=True)]
        if isinstance(stmt, (gast.For, gast.While)):
            out, body = [], self.forward_block(stmt.body)
            counter = self.counters.get(id(stmt))
            if saved:
                out += self.push(self.tape_name(stmt), b.name(stmt.target.id), stmt)
            if counter:
                out.append(b.assign(counter, b.const(0)))
                body.insert(0, b.assign(counter, b.binop(b.name(counter), gast.Add(),
                                                         b.const(1))))
            node = copy.copy(stmt)
            if isinstance(stmt, gast.For):
                node.target, node.iter = copy.deepcopy(stmt.target), copy.deepcopy(stmt.iter)
            else:
                node.test = copy.deepcopy(stmt.test)
            node.body = body
            out.append(self.bind_globals(node, shallow=True))
            if counter and self.tape.layout.loops[id(stmt)]:
                out += self.push(self.counter_tape(stmt), b.name(counter))
            return out
        if isinstance(stmt, (gast.Break, gast.Continue)):
            return [copy.deepcopy(stmt)]
        if isinstance(stmt, (gast.Return, gast.With)):  # a hook runs in the adjoint only
            return []
        return [self.bind_globals(copy.deepcopy(stmt))]

    def detached(self, stmt_in: gast.Assign) -> gast.Assign:
        """A copy of `stmt`, globals bound; a slice of an array that is written into (or
        the array under another name) is taken as a copy when the adjoint keeps it (a view
        would change under the write; normalize takes it again after the write);
        an int that starts a float variable written as a float (`int_starts`)."""
        stmt = self.bind_globals(copy.deepcopy(stmt_in))
        if id(stmt_in) in self.int_starts:
            stmt.value = b.const(float(stmt.value.value))
        value = stmt.value
        local = self.tape.local.get(target_of(stmt))
        kept = local.how == "tape" if local else target_of(stmt) in self.read_names
        if kept and target_of(stmt) in self.views and \
                self.view_root(target_of(stmt)) in self.written:
            stmt.value = b.call(b.name(self.bind("snapshot", snapshot)), value)
        return stmt

    def view_root(self, name: str) -> str:
        """The array `name` is a view of (through views of views: x[0][::-1]), or itself."""
        seen = set()
        while name in self.views and name not in seen:
            seen.add(name)
            name = self.views[name]
        return name

    def tape_name(self, stmt: gast.stmt) -> str:
        """One stack per saved name (its sites pop in reverse push order), and one per
        subscript-write site (what it saves may be a scalar or a slice)."""
        name = self.changed(stmt)
        key = ("write", id(stmt)) if is_write(stmt) else ("name", name)
        if key not in self.tapes:
            self.tapes[key] = self.namer.fresh(f"{name}_tape")
        return self.tapes[key]

    def counter_tape(self, loop: gast.stmt) -> str:
        key = ("trips", id(loop))
        if key not in self.tapes:
            self.tapes[key] = self.namer.fresh(f"{self.counters[id(loop)]}_tape")
        return self.tapes[key]

    def push(self, tape: str, value: gast.AST,
             site: gast.stmt | None = None) -> list[gast.stmt]:
        """`tape.append(value)`; or, when the only push is once per iteration of an
        outermost counted loop, a store into an array made on the first iteration."""
        self.push_counts[tape] = self.push_counts.get(tape, 0) + 1
        loop = self.per_iteration(tape, site)
        if loop is None:
            return [b.make(gast.Expr, value=b.call(b.make(
                gast.Attribute, value=b.name(tape), attr="append", ctx=gast.Load()), value))]
        self.arrays.add(tape)
        if self.ns.called(value) is snapshot:
            value = value.args[0]  # the array tape copies what it stores
        k = _iteration(loop)
        trips = loop.iter.args[0] if len(loop.iter.args) == 1 else \
            b.call(b.name("len"), copy.deepcopy(loop.iter))
        make = b.assign(tape, b.call(b.name(self.bind("new_tape", new_tape)),
                                     copy.deepcopy(value), copy.deepcopy(trips)))
        first = b.make(gast.If, test=b.make(gast.Compare, left=copy.deepcopy(k),
                                            ops=[gast.Eq()], comparators=[b.const(0)]),
                       body=[make], orelse=[])
        store = b.call(b.name(self.bind("record", record)), b.name(tape), k, value)
        return [first, b.make(gast.Expr, value=store)]

    def pop(self, tape: str, site: gast.stmt | None = None) -> gast.AST:
        """The value pushed at `site`, back: `tape.pop()`, or `tape[i]` when the only push
        is once per iteration of an outermost loop over `i` (an indexed read is cheaper
        than a pop, and the tape is dropped with the function's frame anyway)."""
        loop = self.per_iteration(tape, site)
        if loop is None:
            return b.call(b.make(gast.Attribute, value=b.name(tape), attr="pop",
                                 ctx=gast.Load()))
        return b.subscript(b.name(tape), _iteration(loop))

    def per_iteration(self, tape: str, site: gast.stmt | None) -> gast.stmt | None:
        lay = self.tape.layout
        if site is None or self.pushes.get(tape, 0) != 1 or id(site) not in lay.loops:
            return None
        loops = lay.loops[id(site)]
        if len(loops) != 1 or not isinstance(loops[0], gast.For) or \
                lay.block[id(site)] is not loops[0].body or \
                _breaks(loops[0]):
            return None
        return loops[0]

    # ---- adjoint ----
    def reverse_block(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        at = self.tape.at.get(id(stmts), {})
        index = {id(s): k for k, s in enumerate(stmts)}
        for lineno, group in reversed(by_line(stmts)):
            start = len(out)
            for stmt in reversed(group):
                for name in at.get(index[id(stmt)], []):
                    out.append(self.materialize(name))
                out += self.reverse_statement(stmt)
            if len(out) > start:
                out.insert(start, b.comment(f"grad of line {lineno}: {self.p.line(lineno)}"))
        return out

    def materialize(self, name: str) -> gast.stmt:
        """A block-local value, again: recomputed, or popped from its tape."""
        stmt = next(s for s in self.statements if target_of(s) == name)
        if self.tape.local[name].how == "recompute":
            return self.detached(stmt)
        return b.assign(name, self.pop(self.tape_name(stmt), stmt))

    def reverse_statement(self, stmt: gast.stmt) -> list[gast.stmt]:
        at_read = self.tape.saved_reads.get(id(stmt), [])
        back = [b.assign(v, self.pop(self.tapes_of(v), stmt)) for v, after in at_read if after]
        self.back_before = [b.assign(v, self.pop(self.tapes_of(v), stmt))
                            for v, after in at_read if not after]
        if isinstance(stmt, gast.Assign):
            return back + self.reverse_assign(stmt) + self.take_back()
        return back + self.take_back() + self.reverse_compound(stmt)

    def take_back(self) -> list[gast.stmt]:
        """The values saved where the adjoint reads them, back (once per statement)."""
        out, self.back_before = self.back_before, []
        return out

    def reverse_compound(self, stmt: gast.stmt) -> list[gast.stmt]:
        if isinstance(stmt, gast.If):
            return self.reverse_if(stmt)
        if isinstance(stmt, (gast.For, gast.While)):
            return self.reverse_loop(stmt)
        if id(stmt) in self.hooks:
            return self.reverse_hook(stmt)
        return []

    def reverse_hook(self, stmt: gast.With) -> list[gast.stmt]:
        """The block of `with grad_of(h) as dh:`, with `dh` the adjoint of `h` as it is
        here: complete for everything after the block (zero if h is inactive: no
        gradient flows through it). The block may rebind it."""
        var, dname = hook(stmt)
        out = [] if var in self.defined else [b.assign(self.adjoint_name(var),
                                                       self.zeros(var))]
        dvar = self.adjoint_name(var)
        assigns = any(isinstance(n, gast.Name) and n.id == dname and
                      isinstance(n.ctx, gast.Store) for s in stmt.body for n in gast.walk(s))
        for s in copy.deepcopy(stmt.body):
            s = self.bind_globals(s)
            for n in gast.walk(s):
                if isinstance(n, gast.Name) and n.id == dname:
                    n.id = dvar
            out.append(s)
        if assigns and var in self.act.active:  # (else nothing reads the zero it gives)
            out.append(b.assign(dvar, self.checked(b.name(dvar), b.name(var), stmt,
                                                   f"the grad_of({var}) block")))
        self.defined.add(var)
        self.owned.discard(var)  # `dh` may now name an array the block shares
        return out

    def restore(self, stmt: gast.stmt) -> list[gast.stmt]:
        if id(stmt) not in self.tape.saved:
            return []
        if target_of(stmt):
            return [b.assign(target_of(stmt), self.pop(self.tape_name(stmt), stmt))]
        target = copy.deepcopy(stmt.targets[0])
        return [b.assign(target, self.pop(self.tape_name(stmt), stmt))]

    def reverse_assign(self, stmt: gast.Assign) -> list[gast.stmt]:
        name = self.changed(stmt)
        a = self.adjoints.get(id(stmt))
        out: list[gast.stmt] = []
        if a is None or name not in self.defined:
            return self.take_back() + self.restore(stmt)
        if is_write(stmt):
            out += self.take_back()
            if name in self.reshaped:   # made as zeros of the number it started as
                dname = self.adjoint_name(name)
                out.append(b.assign(dname, b.call(b.name(self.bind("broadcast_like",
                                                                   broadcast_like)),
                                                  b.name(dname), b.name(name))))
            later = []
            for var, expr in a.add:
                if var == name:   # `y[:] = y`: y's own part, added after its entries are zeroed
                    tmp = self.namer.temp()
                    out.append(b.assign(tmp, expr))
                    later.append(b.name(tmp))
                else:
                    out += self.accumulate(var, expr)
            out += self.own(name)
            out.append(b.assign(b.subscript(b.name(self.adjoint_name(name)),
                                            copy.deepcopy(stmt.targets[0].slice), store=True),
                                b.const(0.0)))
            for part in later:
                out += self.accumulate(name, part)
            return out + self.restore(stmt)
        restored = False
        if a.result_copy is not None:
            out.append(b.assign(a.result_copy, b.name(name)))
        out += self.take_back()
        add_at = list(a.add_at)
        if any(var == name for var, _ in a.add) or any(v == name for v, _, _ in add_at):
            out += self.restore(stmt)   # `x = f(x)`, `x = x[idx]`: the old x, back first
            restored = True
        out += copy.deepcopy(a.pre)
        for k, (var, index, expr) in enumerate(add_at):
            if var == name:   # `x = x[idx]`: dy is the new x's adjoint, made anew next
                tmp = self.namer.temp()
                out.append(b.assign(tmp, copy.deepcopy(expr)))
                add_at[k] = (var, index, b.name(tmp))
        if name not in self.intermediates:  # whose adjoint here is the gradient
            self.defined.discard(name)
            self.owned.discard(name)
        own = [e for var, e in a.add if var == name]
        for var, expr in a.add:
            if var != name:
                out += self.accumulate(var, copy.deepcopy(expr))
        for var, index, expr in add_at:
            out += self.accumulate_at(var, copy.deepcopy(index), copy.deepcopy(expr))
        if own:
            total = own[0]
            for e in own[1:]:
                total = b.binop(total, gast.Add(), e)
            out += self.accumulate(name, copy.deepcopy(total))
        if not restored:
            out += self.restore(stmt)
        return out

    def reverse_if(self, stmt: gast.If) -> list[gast.stmt]:
        before = (set(self.defined), set(self.owned))
        body = self.reverse_block(stmt.body)
        after_body = (self.defined, self.owned)
        self.defined, self.owned = set(before[0]), set(before[1])
        orelse = self.reverse_block(stmt.orelse)
        after_else = (self.defined, self.owned)
        defined = after_body[0] | after_else[0]
        owned = after_body[1] & after_else[1]
        for code, (d, o) in ((body, after_body), (orelse, after_else)):
            for var in sorted(defined - d):
                code.append(b.assign(self.adjoint_name(var), self.zeros(var)))
                o.add(var)
        owned = after_body[1] & after_else[1]
        self.defined, self.owned = defined, owned
        if not body and not orelse:
            return []
        test, back = copy.deepcopy(stmt.test), []
        for name in self.retests.get(id(stmt), []):  # the test as the forward saw it
            old = self.namer.fresh(f"{name}_at_test")
            back.append(b.assign(old, self.pop(self.test_tape(stmt, name), stmt)))
            test = _renamed(test, name, old)
        if not body:
            test, body, orelse = b.make(gast.UnaryOp, op=gast.Not(), operand=test), orelse, []
        return back + [b.make(gast.If, test=test, body=body, orelse=orelse)]

    def tests_changed_inside(self) -> dict[int, list[str]]:
        """For each `if` whose test reads a name its own branches change, those names:
        where the adjoint replays the branch, the name holds the value the branch left,
        so the forward saves the one the test read (`if returned:` ... `returned = True`
        in its else branch, as jumps makes of a return in a loop)."""
        lay, out = self.tape.layout, {}
        for s in self.statements:
            if not isinstance(s, gast.If):
                continue
            lo, hi = lay.pos[id(s)], lay.end[id(s)]
            names = sorted({n.id for n in gast.walk(s.test) if isinstance(n, gast.Name)
                            and any(lo < lay.pos[id(t)] <= hi
                                    for t in lay.sites.get(n.id, []))})
            if names:
                out[id(s)] = names
        return out

    def test_tape(self, stmt: gast.If, name: str) -> str:
        key = ("test", id(stmt), name)
        if key not in self.tapes:
            self.tapes[key] = self.namer.fresh(f"{name}_test_tape")
        return self.tapes[key]

    def reverse_loop(self, loop: gast.stmt) -> list[gast.stmt]:
        """Iterations in reverse order. The adjoints live across iterations: those the
        body adds to are zero before the loop if they were not defined yet; those it
        kills are zero again at the end of each iteration."""
        start_defined, start_owned = set(self.defined), set(self.owned)
        defined, owned = set(start_defined), set(start_owned)
        for _ in range(2 * len(self.locals) + 4):  # a fixed point
            self.defined, self.owned = set(defined), set(owned)
            body = self.reverse_block(loop.body)
            end_owned = self.owned | (defined - self.defined)  # killed: zeros again, owned
            new = self.defined - defined
            # an adjoint the body writes or adds into stays the body's own array: owned
            # from the start (zeros or a copy before the loop) it is never copied inside
            wanted = end_owned & defined & (self.in_place | set(self.adj)) - owned
            if new or wanted:
                defined |= new
                owned |= new | wanted
            elif owned <= end_owned:
                break
            else:
                owned &= end_owned
        killed = sorted(defined - self.defined)
        body += [b.assign(self.adjoint_name(v), self.zeros(v)) for v in killed]
        out = [b.assign(self.adjoint_name(v), self.zeros(v))
               for v in sorted(defined - start_defined)]
        out += [b.assign(self.adjoint_name(v), b.call(b.name(self.bind("snapshot", snapshot)),
                                                      b.name(self.adjoint_name(v))))
                for v in sorted((owned & start_defined) - start_owned)]
        self.defined, self.owned = defined, owned
        if not body:   # (the index it overwrote may still be needed before it)
            return self.restore_loop_index(loop)
        if id(loop) not in self.counters and (isinstance(loop, gast.While) or _breaks(loop)):
            self.counters[id(loop)] = self.namer.fresh(
                f"n_{loop.target.id}" if isinstance(loop, gast.For) else "n_iter")
        counter = self.counters.get(id(loop))
        if counter and self.tape.layout.loops[id(loop)]:
            out.append(b.assign(counter, self.pop(self.counter_tape(loop))))
        if isinstance(loop, gast.While):
            target, iterable = b.name("_", store=True), b.call(b.name("range"), b.name(counter))
        else:
            target, iterable = copy.deepcopy(loop.target), _reversed_range(loop.iter.args,
                                                                          counter)
        self.ns.bind("range", range)
        self.ns.bind("len", len)
        out.append(b.make(gast.For, target=target, iter=iterable, body=body, orelse=[]))
        return out + self.restore_loop_index(loop)

    def restore_loop_index(self, loop: gast.stmt) -> list[gast.stmt]:
        if id(loop) not in self.tape.saved:
            return []
        return [b.assign(loop.target.id, self.pop(self.tape_name(loop)))]

    # ---- adjoint bookkeeping ----
    def adjoint_name(self, var: str) -> str:
        if var not in self.adj:
            self.adj[var] = self.namer.adjoint(var)
        return self.adj[var]

    def accumulate(self, var: str, expr: gast.AST) -> list[gast.stmt]:
        dvar = self.adjoint_name(var)
        if var in self.defined and self.arity(var) is not None:
            # a tuple's adjoint is a tuple of its items' adjoints: they add item by item
            # (`+` would join the two tuples)
            tmp = self.namer.temp()
            self.owned.discard(var)
            return [b.assign(tmp, expr),
                    b.assign(dvar, self.items_added(var, b.name(dvar), b.name(tmp)))]
        if var in self.defined and var in self.owned:  # no other name holds this array
            adder = self.adder(expr)
            if adder is not None:
                return [b.make(gast.Expr, value=b.call(b.name(adder), b.name(dvar),
                                                        *expr.args))]
            return [b.make(gast.AugAssign, target=b.name(dvar, store=True), op=gast.Add(),
                           value=expr)]
        fresh = var in self.defined  # `dx + e` is a new array, so one this pass owns
        if fresh:
            expr = b.binop(b.name(dvar), gast.Add(), expr)
        self.defined.add(var)
        if fresh:
            self.owned.add(var)
        else:
            self.owned.discard(var)
        return [b.assign(dvar, expr)]

    def arity(self, var: str) -> int | None:
        """The number of items of the tuple `var` holds, if it holds one."""
        if var in self.tuples:
            return len(self.tuples[var])
        return self.tuple_results.get(var)

    def items_added(self, var: str, left: gast.AST, right: gast.AST) -> gast.AST:
        """`(left[0] + right[0], ...)` for the tuple `var` holds, nested tuples item by
        item too."""
        items = self.tuples.get(var)
        out = []
        for j in range(self.arity(var)):
            mine, more = b.subscript(copy.deepcopy(left), b.const(j)), \
                b.subscript(copy.deepcopy(right), b.const(j))
            item = items[j] if items else None
            if isinstance(item, gast.Name) and self.arity(item.id) is not None:
                out.append(self.items_added(item.id, mine, more))
            else:
                out.append(b.binop(mine, gast.Add(), more))
        return b.tuple_(out)

    def adder(self, expr: gast.AST) -> str | None:
        """The name of the helper that adds `expr` (a helper call) into an array in place."""
        fn = fact(self.ns.called(expr), "add_into")
        return self.bind(fn.__name__, fn) if fn else None

    def own(self, var: str) -> list[gast.stmt]:
        """Make `d<var>` an array this pass allocated, so it may be written in place."""
        self.in_place.add(var)
        if var in self.owned:
            return []
        dvar = self.adjoint_name(var)
        self.owned.add(var)
        if var in self.defined:
            return [b.assign(dvar, b.call(b.name(self.bind("snapshot", snapshot)),
                                          b.name(dvar)))]
        self.defined.add(var)
        return [b.assign(dvar, self.zeros(var))]

    def accumulate_at(self, var: str, index: gast.AST, dy: gast.AST) -> list[gast.stmt]:
        """`dvar[index] += dy` into an adjoint array this pass allocated; for the tuple a
        user function returned (`a, b = h(x)`), its adjoint made again with entry k added."""
        if var in self.tuple_results and _int(index) is not None:
            return self.accumulate_item(var, _int(index), dy)
        if var in self.tuples or var in self.tuple_results:
            return self.accumulate_entry(var, index, dy)
        out = self.own(var)
        dvar = self.adjoint_name(var)
        if var in self.reshaped:   # made as zeros of the number it started as
            out.append(b.assign(dvar, b.call(b.name(self.bind("broadcast_like",
                                                              broadcast_like)),
                                             b.name(dvar), b.name(var))))
        if self.basic(index):
            out.append(b.make(gast.AugAssign, target=b.subscript(b.name(dvar), index,
                                                                 store=True),
                              op=gast.Add(), value=dy))
        else:  # an index array may repeat an entry: each occurrence adds
            out.append(b.assign(dvar, b.call(b.name(self.bind("add_at", add_at)),
                                             b.name(dvar), _value(index), dy)))
        return out

    def accumulate_entry(self, var: str, index: gast.AST, dy: gast.AST) -> list[gast.stmt]:
        """``dvar = list(dvar); dvar[i] = dvar[i] + dy``: the adjoint of a tuple read at an
        index known at run time (`p[i]` in a loop), as a list of its items' adjoints;
        entry i is made anew, since its array may be another adjoint's too."""
        dvar = self.adjoint_name(var)
        start = b.name(dvar) if var in self.defined else \
            b.call(b.name(self.bind("zeros_like", zeros_like)), b.name(var))
        self.defined.add(var)
        self.owned.discard(var)
        return [b.assign(dvar, b.call(b.name("list"), start)),
                b.assign(b.subscript(b.name(dvar), index, store=True),
                         b.binop(b.subscript(b.name(dvar), copy.deepcopy(index)), gast.Add(),
                                 dy))]

    def basic(self, index: gast.AST) -> bool:
        """Whether `index` is made of ints and slices only (no entry can repeat)."""
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        for part in parts:
            if isinstance(part, gast.Slice):
                continue
            if isinstance(part, gast.Constant) and (part.value is None or part.value is ...
                                                    or type(part.value) is int):
                continue
            if isinstance(part, gast.Name) and part.id in self.ints:
                continue
            return False
        return True

    @functools.cached_property
    def ints(self) -> set[str]:
        """Names that only ever hold an int: loop indices and int arithmetic on them,
        constants, `len(...)` and entries of a `.shape`."""
        defs: dict[str, list[gast.AST]] = {}
        for s in self.statements:
            if isinstance(s, gast.For):
                defs.setdefault(s.target.id, []).append(None)
            elif target_of(s):
                defs.setdefault(target_of(s), []).append(s.value)
            elif isinstance(s, gast.Assign):  # a tuple target: unknown
                for n in gast.walk(s.targets[0]):
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                        defs.setdefault(n.id, []).append(s.targets[0])
        shapes = {n for n, vs in defs.items() if all(
            isinstance(v, gast.Attribute) and v.attr == "shape" for v in vs)}
        ints = set(defs) - set(self.params)   # the largest set consistent with the defs

        def integral(v) -> bool:
            if v is None or isinstance(v, gast.Constant) and type(v.value) is int:
                return True
            if isinstance(v, gast.Name):
                return v.id in ints
            if isinstance(v, gast.BinOp):
                return not isinstance(v.op, (gast.Div, gast.MatMult, gast.Pow)) and \
                    integral(v.left) and integral(v.right)
            if isinstance(v, gast.UnaryOp):
                return integral(v.operand)
            if isinstance(v, gast.Subscript):
                return isinstance(v.value, gast.Name) and v.value.id in shapes
            if isinstance(v, gast.Call):
                return self.p.env.resolve(v.func, self.locals) in (len, int)
            return False
        changed = True
        while changed:
            changed = False
            for name in list(ints):
                if not all(map(integral, defs[name])):
                    ints.discard(name)
                    changed = True
        return ints

    def returned_tuples(self) -> dict[str, int]:
        """Names holding the tuple a user function (or a rule with the `results` fact)
        returned, with its length: its result, and that result as a check of it passes it
        on (`unaliased(t, x, ...)`)."""
        out: dict[str, int] = {}
        for s in self.statements:
            op, target = self.ops.get(id(s)), target_of(s)
            if not target or op is None:
                continue
            if op.kind == "call" and (n := _tuple_arity(op.fun)) is not None:
                out[target] = n
            elif op.kind == "rule" and (n := fact(op.fun, "results")) is not None:
                out[target] = n
            elif op.kind == "rule" and op.fun in (unaliased, snapshot) and op.args and \
                    isinstance(op.args[0], gast.Name) and op.args[0].id in out:
                out[target] = out[op.args[0].id]
        return out

    def accumulate_item(self, var: str, k: int, dy: gast.AST) -> list[gast.stmt]:
        """``dvar = (dvar[0], dvar[1] + dy)``: a tuple's adjoint, a tuple of the adjoints of
        its entries (those not reached yet zero, shaped like the entry)."""
        dvar = self.adjoint_name(var)
        if var in self.defined:
            items = [b.subscript(b.name(dvar), b.const(j))
                     for j in range(self.tuple_results[var])]
            items[k] = b.binop(items[k], gast.Add(), dy)
        else:
            items = [b.call(b.name(self.bind("zeros_like", zeros_like)),
                            b.subscript(b.name(var), b.const(j)))
                     for j in range(self.tuple_results[var])]
            items[k] = dy
            self.defined.add(var)
        self.owned.discard(var)
        return [b.assign(dvar, b.tuple_(items))]


def _renamed(node: gast.AST, name: str, new: str) -> gast.AST:
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and n.id == name:
            n.id = new
    return node


def _returned(fun: Any) -> list[gast.AST] | None:
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


def _tuple_arity(fun: Any) -> int | None:
    """n when every `return` of the user function `fun` gives a tuple of n values."""
    sizes = {len(r.elts) if isinstance(r, gast.Tuple) else None for r in _returned(fun) or [None]}
    return sizes.pop() if len(sizes) == 1 else None


def _returns_sequence(fun: Any) -> bool:
    """Whether a `return` of the user function `fun` gives a list or tuple display, or
    a name the function binds to one."""
    returns = _returned(fun) or []
    displays = {t.id for node in gast.walk(parse(nested_entry(fun) or fun).tree)
                if isinstance(node, gast.Assign) and isinstance(node.value, (gast.List, gast.Tuple))
                for t in node.targets if isinstance(t, gast.Name)} if returns else set()
    return any(isinstance(r, (gast.List, gast.Tuple)) or isinstance(r, gast.Name)
               and r.id in displays for r in returns)


def _breaks(loop: gast.stmt) -> bool:
    """Whether the loop may end early (then its adjoint counts the iterations it ran)."""
    return any(isinstance(s, gast.Break) for s in all_statements(loop.body, into_loops=False))


def _iteration(loop: gast.For) -> gast.AST:
    """The number of the current iteration of `for i in range(...)`, from `i`."""
    args = loop.iter.args
    start = args[0] if len(args) > 1 else b.const(0)
    step = args[2] if len(args) > 2 else b.const(1)
    i = b.name(loop.target.id)
    if _int(start) != 0:
        i = b.binop(i, gast.Sub(), copy.deepcopy(start))
    if _int(step) != 1:
        i = b.binop(i, gast.FloorDiv(), copy.deepcopy(step))
    return i


def _value(index: gast.AST) -> gast.AST:
    """A subscript's index as a value to pass: a slice as slice(a, b, c)."""
    if isinstance(index, gast.Tuple):
        index.elts = [_value(e) for e in index.elts]
    if isinstance(index, gast.Slice):
        return b.call(b.name("slice"), *[p or b.const(None)
                                         for p in (index.lower, index.upper, index.step)])
    return index


def _int(node: gast.AST) -> int | None:
    if isinstance(node, gast.Constant) and isinstance(node.value, int) \
            and not isinstance(node.value, bool):
        return node.value
    return None


def _add(a: gast.AST, k: int) -> gast.AST:
    if _int(a) is not None:
        return b.const(_int(a) + k)
    if k == 0:
        return a
    return b.binop(a, gast.Add() if k > 0 else gast.Sub(), b.const(abs(k)))


def _reversed_range(args: list[gast.AST], trips: str | None) -> gast.AST:
    """`range(...)` that visits the values `range(*args)` visited (`trips` of them, if
    counted) backwards: `range(n)` gives `range(n - 1, -1, -1)`."""
    start, stop, step = (b.const(0), args[0], b.const(1)) if len(args) == 1 else \
        (args[0], args[1], args[2] if len(args) > 2 else b.const(1))
    start, stop, step = (copy.deepcopy(x) for x in (start, stop, step))
    if trips is None and _int(step) == 1:
        return b.call(b.name("range"), _add(stop, -1), _add(start, -1), b.const(-1))
    n = b.name(trips) if trips else b.call(b.name("len"), b.call(b.name("range"), start,
                                                                  stop, step))
    if _int(step) == 1:
        last = _add(b.binop(n, gast.Sub(), b.const(1)), 0) if _int(start) == 0 else \
            b.binop(start, gast.Add(), b.binop(n, gast.Sub(), b.const(1)))
        if _int(start) == 0:
            last = b.binop(n, gast.Sub(), b.const(1))
        return b.call(b.name("range"), last, _add(copy.deepcopy(start), -1), b.const(-1))
    last = b.binop(copy.deepcopy(start), gast.Add(),
                   b.binop(b.binop(n, gast.Sub(), b.const(1)), gast.Mult(), copy.deepcopy(step)))
    neg = b.const(-_int(step)) if _int(step) is not None else \
        b.make(gast.UnaryOp, op=gast.USub(), operand=copy.deepcopy(step))
    return b.call(b.name("range"), last,
                  b.binop(copy.deepcopy(start), gast.Sub(), copy.deepcopy(step)), neg)
