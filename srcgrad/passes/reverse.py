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
adjoints that may be nonzero are made explicit zeros (before a loop, those of values
bound only inside it only if it ran; those of values the forward may leave unbound only
if a flag it sets says it bound them: `reverse_loop`). The input was checked by
`check` (this pass assumes every active statement has a rule or a source). What the
adjoint reads back from the forward is decided by `analysis.tape.plan` (recompute, tape,
or save before an overwrite), on the tapes `analysis.placement` names; `record` (the
base of this pass) emits the forward sweep with its pushes, and the pops this pass
places. Exists because this is the algorithm: everything else prepares or packages its
output.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gast
import numpy as np

from .. import builder as b
from ..analysis.activity import activity
from ..analysis.aliasing import is_basic_index
from ..analysis.placement import breaks
from ..analysis.values import (
    full_reduction,
    ints,
    made_once,
    numbers_first,
    reshaped,
    returned_tuples,
    uniform,
)
from ..errors import SrcgradError, UnsupportedSyntax
from ..frontend.parse import Parsed
from ..naming import Namer
from ..rules import fact
from ..rules.inline import instantiate, shared
from ..runtime import (
    add_at,
    add_items,
    broadcast_like,
    checked_grad,
    snapshot,
    unbroadcast,
    written_grad,
    zeros_like,
)
from ..runtime.complex_numbers import real_part
from .annotate import hook
from .base import (
    Namespace,
    Operation,
    by_line,
    changed,
    int_constant,
    int_starts,
    is_write,
    target_of,
)
from .check import flow
from .record import Recording
from .reverse_loop import flagged, loop_locals, maybe_unbound, ran, surely_bound


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
            ns: Namespace, callee: Callee, primal: Callable[[Any, gast.Call], str],
            complex_values: bool = False) -> Reversed:
    """Forward and adjoint statements of normalized `fn` with respect to `wrt`.

    `callee(fun, positions, node)` and `primal(fun)` name the generated vector-Jacobian
    product and primal copy of a user function the code calls. Where values may be
    complex (`complex_values`: the arguments are; or `fn` makes some), each cotangent a
    rule or call makes for one of several operands is `real_part(g, operand)`: a real
    value's cotangent is real wherever it is made (`runtime/complex_numbers.py`).

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
    return _Reverse(parsed, fn, wrt, namer, ns, callee, primal, complex_values).run()


@dataclass
class _Adjoint:
    """The adjoint of one assignment, before it is placed: statements to run first, then
    contributions `d<var> += expr`, and `d<var>[index] += expr` for subscript reads."""

    pre: list[gast.stmt] = field(default_factory=list)
    add: list[tuple[str, gast.AST]] = field(default_factory=list)
    add_at: list[tuple[str, gast.AST, gast.AST]] = field(default_factory=list)
    result_copy: str | None = None   # the statement reads its own target: keep the result here
    self_ref: bool = False           # `x = f(x)`: in the expressions, `x` is the old value


class _Reverse(Recording):
    def __init__(self, parsed, fn, wrt, namer, ns, callee, primal, complex_values=False):
        super().__init__(parsed, fn, namer, ns, primal)
        self.wrt = wrt
        self.complex = complex_values
        self.callee = callee
        self.intermediates = set(wrt) - set(self.params)  # wrt variables, assigned once
        self.adj: dict[str, str] = {}
        self.defined: set[str] = set()
        self.owned: set[str] = set()
        self.back_before: list[gast.stmt] = []
        self.in_place: set[str] = set()   # adjoints written in place somewhere
        self.custom = False                    # user-written gradient code was placed

    # ---- the pass ----
    def run(self) -> Reversed:
        body = self.fn.body
        self.ops = self.classify_statements(self.classify)
        self.complex = self.complex or any(
            isinstance(n, gast.Constant) and isinstance(n.value, complex)
            or isinstance(n, gast.Call) and fact(self.p.env.resolve(n.func, self.locals),
                                                 "complex_result")
            or isinstance(n, (gast.Name, gast.Attribute)) and np.iscomplexobj(
                _plain(self.p.env.resolve(n, self.locals)))   # a global complex array
            for s in self.statements for n in gast.walk(s))
        self.act = act = activity(flow(self), self.wrt, body[-1].value)
        self.unsure = maybe_unbound(body[:-1], self.params, act.active)
        self.flags: dict[str, str] = {}   # of the unsure names: the forward's "bound" flags
        self.tuple_results = returned_tuples(self.statements, self.ops)
        self.int_starts = int_starts(self.statements, flow(self), act.varied)
        self.numbers_first = numbers_first(self.statements, self.int_starts)
        self.reshaped = reshaped(self.statements, self.numbers_first, lambda v: self.ns.called(
            v) or (self.p.env.resolve(v.func, self.locals) if isinstance(v, gast.Call) else None))
        self.ints = ints(self.statements, self.params,
                         lambda func: self.p.env.resolve(func, self.locals))
        self.hooks = {id(s) for s in self.statements if hook(s)}  # inactive: dh is zero
        self.uniform_at = {id(s): u for s in self.statements if target_of(s) and (
            u := uniform(self.fn, self.statements, self.ops, s, self.intermediates)) is not None}
        self.scalar_adjoints = {self.ops[k].args[0].id for k in self.uniform_at}
        self.adjoints = {id(s): self.adjoint_of(s) for s in self.statements
                         if (target_of(s) or is_write(s)) and changed(s) in act.active}
        self.place()
        result = body[-1].value
        seed = None
        if isinstance(result, gast.Name) and result.id in act.active:
            seed = self.adjoint_name(result.id)
            self.defined.add(result.id)
        self.forward_block(body[:-1])   # a dry run: which tapes are pushed where
        self.tapes.freeze()
        adjoint = self.reverse_block(body[:-1])
        grads = []
        for param in self.wrt:
            if param not in self.defined:
                adjoint += [b.comment(f"no gradient flows back to {param}"),
                            b.assign(self.adjoint_name(param), self.zeros(param))]
            grads.append(self.adjoint_name(param))
        code = flagged(self.forward_block(body[:-1]), self.flags)
        forward = [b.assign(name, b.make(gast.List, elts=[], ctx=gast.Load()))
                   for name in self.tapes.lists()] + code
        if isinstance(result, gast.Name) and any(
                changed(s) == result.id for s in self.statements
                if id(s) in self.tape.saved):
            # the adjoint restores the result's earlier values: keep the one to return
            value = self.namer.fresh("value")
            forward.append(b.assign(value, b.name(result.id)))
            result = b.name(value)
        taped = bool(self.tapes.names) or any(isinstance(s, (gast.For, gast.While))
                                              for s in self.statements)
        made = made_once(self.fn, self.statements, result.id) \
            if isinstance(result, gast.Name) else None
        scalar = made is not None and full_reduction(self.ops.get(id(made))) is not None
        return Reversed(forward, adjoint, result, seed, grads, taped, scalar, self.custom)

    # ---- phase 1: each assignment's adjoint, as contributions ----
    def adjoint_of(self, stmt: gast.Assign) -> _Adjoint:
        op = self.ops[id(stmt)]
        target = changed(stmt)
        dy = b.name(self.adjoint_name(target))
        if op.kind == "write":
            a = _Adjoint()
            value = stmt.value
            if isinstance(value, gast.Name) and value.id in self.act.active:
                # a copy: the entries are zeroed next; summed where `v` was broadcast
                index = copy.deepcopy(stmt.targets[0].slice)
                if is_basic_index(index, self.ints):
                    part = b.call(b.name(self.bind("snapshot", snapshot)), b.subscript(dy, index))
                else:   # a repeated entry: the last write's
                    part = b.call(b.name(self.bind("written_grad", written_grad)), dy,
                                  _value(index))
                a.add.append((value.id, b.call(b.name(self.bind("unbroadcast", unbroadcast)),
                                               part, b.name(value.id))))
            return a
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
            pre, exprs = shared([e for _, e in parts], inst.needs, self.namer.temp)
            a.pre += pre
            parts = [(i, e) for (i, _), e in zip(parts, exprs, strict=True)]
        elif len(rule.params) == 1:
            parts = [(0, inst.whole)]
        else:
            tmp = self.namer.temp()
            a.pre.append(b.assign(tmp, inst.whole))
            parts = [(i, b.subscript(b.name(tmp), b.const(i))) for i in active]
        if op.rule.origin is not None:  # a user's rule
            what = f"the gradient rule {op.rule.name} ({op.rule.origin})"
            parts = [(i, self.checked(expr, op.args[i], stmt, what)) for i, expr in parts]
        several = sum(not (isinstance(x, gast.Constant) and not isinstance(x.value, complex))
                      for x in op.args + list(op.kwargs.values())) > 1
        a.add += [(op.args[i].id, self.made_real(expr, op.args[i]) if several else expr)
                  for i, expr in parts]

    def made_real(self, grad: gast.AST, arg: gast.AST) -> gast.AST:
        """`grad`, the cotangent made for operand `arg`, real where `arg` is (in code of
        complex values only: elsewhere every value is real)."""
        if not self.complex:
            return grad
        return b.call(b.name(self.bind("real_part", real_part)), grad, copy.deepcopy(arg))

    def checked(self, grad: gast.AST, arg: gast.AST, stmt: gast.stmt, what: str) -> gast.AST:
        """`grad`, which user code (`what`) gave for `arg`, checked at run time to have
        its shape."""
        where = f"{os.path.basename(self.p.filename)}:{stmt.lineno}: {what}"
        self.custom = True
        return b.call(b.name(self.bind("checked_grad", checked_grad)), grad,
                      copy.deepcopy(arg), b.const(where))

    def user_call(self, stmt, op: Operation, dy, active, a: _Adjoint) -> None:
        if not active:
            return
        positions = tuple(active)
        vjp_name = self.callee(op.fun, positions, stmt)
        call = b.call(b.name(vjp_name), *copy.deepcopy(op.args), dy)
        if len(positions) == 1:
            a.add.append((op.args[positions[0]].id, self.made_real(call, op.args[positions[0]])))
            return
        tmp = self.namer.temp()
        a.pre.append(b.assign(tmp, call))
        a.add += [(op.args[i].id, self.made_real(b.subscript(b.name(tmp), b.const(k)),
                                                 op.args[i]))
                  for k, i in enumerate(positions)]

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

    def reverse_statement(self, stmt: gast.stmt) -> list[gast.stmt]:
        at_read = self.tape.saved_reads.get(id(stmt), [])
        back = [b.assign(r.var, self.pop(self.tapes.of_values(r.var), stmt))
                for r in at_read if r.after]
        self.back_before = [b.assign(r.var, self.pop(self.tapes.of_values(r.var), stmt))
                            for r in at_read if not r.after]
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

    def reverse_assign(self, stmt: gast.Assign) -> list[gast.stmt]:
        name = changed(stmt)
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
                code.append(self.zeros_at_join(var))
                o.add(var)
        owned = after_body[1] & after_else[1]
        self.defined, self.owned = defined, owned
        if not body and not orelse:
            return []
        test, back = copy.deepcopy(stmt.test), []
        for name in self.retests.get(id(stmt), []):  # the test as the forward saw it
            old = self.namer.fresh(f"{name}_at_test")
            back.append(b.assign(old, self.pop(self.tapes.of_test(stmt, name), stmt)))
            test = _renamed(test, name, old)
        if not body:
            test, body, orelse = b.make(gast.UnaryOp, op=gast.Not(), operand=test), orelse, []
        return back + [b.make(gast.If, test=test, body=body, orelse=orelse)]

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
        body += [self.zeros_at_join(v) for v in killed]
        first, local = sorted(defined - start_defined), loop_locals(loop, self.statements,
                                                                    self.params)
        for v in first + killed:   # (their zeros are made from v)
            if v in local and not surely_bound(loop.body, v):
                raise self.error(UnsupportedSyntax, loop, (
                    f"the gradient of this loop needs {v} as an iteration leaves it, but "
                    f"the loop may run without binding {v} (bound only under a condition, "
                    f"and not read in every iteration): bind {v} before the loop"))
        out = [self.zeros_at_join(v) for v in first if v not in local]
        out += [self.zeros_at_join(v, b.assign(self.adjoint_name(v), b.call(
            b.name(self.bind("snapshot", snapshot)), b.name(self.adjoint_name(v)))))
                for v in sorted((owned & start_defined) - start_owned)]
        self.defined, self.owned = defined, owned
        if not body:   # (the index it overwrote may still be needed before it)
            return self.restore_loop_index(loop)
        if isinstance(loop, gast.While) or breaks(loop):
            self.tapes.counter(loop)
        counter = self.tapes.counters.get(id(loop))
        if counter and self.tape.layout.loops[id(loop)]:
            out.append(b.assign(counter, self.pop(self.tapes.of_trips(loop))))
        if any(v in local for v in first):   # (v is unbound if the loop did not run)
            out.append(b.make(gast.If, test=ran(loop, counter), orelse=[], body=[
                b.assign(self.adjoint_name(v), self.zeros(v)) for v in first if v in local]))
        if isinstance(loop, gast.While):
            target, iterable = b.name("_", store=True), b.call(b.name("range"), b.name(counter))
        else:
            target, iterable = copy.deepcopy(loop.target), _reversed_range(loop.iter.args,
                                                                          counter)
        self.ns.bind("range", range)
        self.ns.bind("len", len)
        out.append(b.make(gast.For, target=target, iter=iterable, body=body, orelse=[]))
        return out + self.restore_loop_index(loop)

    # ---- adjoint bookkeeping ----
    def zeros_at_join(self, var: str, made: gast.stmt | None = None) -> gast.stmt:
        """`dv = zeros_like(v)` (or `made`, which reads `dv`) where paths join; for a `v`
        the forward may leave unbound, run only if it bound `v` (if not, no adjoint that
        reads `dv` runs, nor is `dv` made elsewhere)."""
        made = made or b.assign(self.adjoint_name(var), self.zeros(var))
        if var not in self.unsure:
            return made
        if var not in self.flags:
            self.flags[var] = self.namer.fresh(f"{var}_bound")
        return b.make(gast.If, test=b.name(self.flags[var]), body=[made], orelse=[])

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
        if var in self.defined and var in self.listed:
            # a display bound in a loop: its adjoint is a list or tuple of its items'
            # adjoints, which add item by item (`+=` would extend the list, `+` join)
            self.owned.discard(var)
            return [b.assign(dvar, b.call(b.name(self.bind("add_items", add_items)),
                                          b.name(dvar), expr))]
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
            if isinstance(expr, gast.Name) and expr.id == dvar:
                return []   # `L_rows = fill_row(L_rows, ...)` passes dL_rows on as it is
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
        if var in self.tuple_results and int_constant(index) is not None:
            return self.accumulate_item(var, int_constant(index), dy)
        if var in self.tuples or var in self.tuple_results or var in self.listed or \
                var in self.displayed and isinstance(index, gast.Slice):
            # (`p[1]`, `p[::-1]` of a display bound in a loop: its adjoint is a list or a
            # tuple too, whose items may be other adjoints' arrays: not written in place)
            return self.accumulate_entry(var, index, dy)
        out = self.own(var)
        dvar = self.adjoint_name(var)
        if var in self.reshaped:   # made as zeros of the number it started as
            out.append(b.assign(dvar, b.call(b.name(self.bind("broadcast_like",
                                                              broadcast_like)),
                                             b.name(dvar), b.name(var))))
        if is_basic_index(index, self.ints):
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
        entry i is made anew, since its array may be another adjoint's too. A slice's
        adjoint (`p[::-1]`) is a list too, added item by item."""
        dvar = self.adjoint_name(var)
        start = b.name(dvar) if var in self.defined else \
            b.call(b.name(self.bind("zeros_like", zeros_like)), b.name(var))
        self.defined.add(var)
        self.owned.discard(var)
        entry = b.subscript(b.name(dvar), copy.deepcopy(index))
        if isinstance(index, gast.Slice):   # `p[::-1]`: its adjoint's items, one by one
            added = b.call(b.name(self.bind("add_items", add_items)), entry, dy)
        else:
            added = b.binop(entry, gast.Add(), dy)
        return [b.assign(dvar, b.call(b.name("list"), start)),
                b.assign(b.subscript(b.name(dvar), index, store=True), added)]

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


def _value(index: gast.AST) -> gast.AST:
    """A subscript's index as a value to pass: a slice as slice(a, b, c)."""
    if isinstance(index, gast.Tuple):
        index.elts = [_value(e) for e in index.elts]
    if isinstance(index, gast.Slice):
        return b.call(b.name("slice"), *[p or b.const(None)
                                         for p in (index.lower, index.upper, index.step)])
    return index


def _add(a: gast.AST, k: int) -> gast.AST:
    if int_constant(a) is not None:
        return b.const(int_constant(a) + k)
    if k == 0:
        return a
    return b.binop(a, gast.Add() if k > 0 else gast.Sub(), b.const(abs(k)))


def _reversed_range(args: list[gast.AST], trips: str | None) -> gast.AST:
    """`range(...)` that visits the values `range(*args)` visited (`trips` of them, if
    counted) backwards: `range(n)` gives `range(n - 1, -1, -1)`."""
    start, stop, step = (b.const(0), args[0], b.const(1)) if len(args) == 1 else \
        (args[0], args[1], args[2] if len(args) > 2 else b.const(1))
    start, stop, step = (copy.deepcopy(x) for x in (start, stop, step))
    if trips is None and int_constant(step) == 1:
        return b.call(b.name("range"), _add(stop, -1), _add(start, -1), b.const(-1))
    n = b.name(trips) if trips else b.call(b.name("len"), b.call(b.name("range"), start,
                                                                  stop, step))
    if int_constant(step) == 1:
        last = _add(b.binop(n, gast.Sub(), b.const(1)), 0) if int_constant(start) == 0 else \
            b.binop(start, gast.Add(), b.binop(n, gast.Sub(), b.const(1)))
        if int_constant(start) == 0:
            last = b.binop(n, gast.Sub(), b.const(1))
        return b.call(b.name("range"), last, _add(copy.deepcopy(start), -1), b.const(-1))
    last = b.binop(copy.deepcopy(start), gast.Add(),
                   b.binop(b.binop(n, gast.Sub(), b.const(1)), gast.Mult(), copy.deepcopy(step)))
    neg = b.const(-int_constant(step)) if int_constant(step) is not None else \
        b.make(gast.UnaryOp, op=gast.USub(), operand=copy.deepcopy(step))
    return b.call(b.name("range"), last,
                  b.binop(copy.deepcopy(start), gast.Sub(), copy.deepcopy(step)), neg)


def _plain(obj: Any) -> Any:
    """`obj` where it is a number or an array (what np.iscomplexobj may read), else 0."""
    return obj if isinstance(obj, (complex, np.ndarray, np.complexfloating)) else 0
