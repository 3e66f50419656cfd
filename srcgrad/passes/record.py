"""record: the forward code of a reverse pass, and the pops that give the adjoint its values.

Requires a normalized function that passed `check`, with, set by the pass that records
(`reverse`): the operation of each statement (`ops`), the int constants that start a
float variable (`int_starts`), the names whose shape may change across iterations
(`reshaped`, `analysis.values`), the `grad_of` blocks (`hooks`), and each active
statement's adjoint before it is placed (`adjoints`, with `adj` the adjoint names).
`place()` then asks `analysis.tape.plan` what to save, given every primal value the
adjoint reads (`reads`) and which operations it may run again (`cheap`), and names the
tapes (`analysis.placement.Tapes`). Guarantees `forward_block`: the primal statements,
commented with the user's lines, globals bound, with the pushes the plan places (before
an overwrite it undoes, after a block-local value it keeps, where the adjoint reads a
value with none before); and the statements that take each pushed value back where the
adjoint needs it (`pop`, `restore`, `materialize`, `restore_loop_index`), each tape
popped in the reverse order of its pushes (or indexed by the iteration, for an array
tape). A view of an array written into later is taped as a copy.

Exists so `reverse` keeps the adjoint algorithm, and the forward sweep and the tape
it fills are read in one place.
"""

from __future__ import annotations

import copy
import os

import gast
import numpy as np

from .. import builder as b
from ..analysis.placement import Tapes, breaks, retested
from ..analysis.tape import Read, mutated, plan
from ..rules import fact
from ..runtime import new_tape, record, same_shape, snapshot
from .base import (
    FunctionPass,
    all_statements,
    bindings,
    by_line,
    changed,
    int_constant,
    is_write,
    target_of,
)
from .check import handed, swapped, view_root, views


class Recording(FunctionPass):
    """A function pass that records its forward sweep on tapes (see the module)."""

    def place(self) -> None:
        """Plan the tapes, once every adjoint is known (`adjoints`)."""
        self.views = views(self)
        self.written = {changed(s) for s in self.statements if is_write(s)}
        # the names a swap exchanges, where one is written into: its array is theirs, and
        # a tape keeps a copy of what they hold when they are bound again too
        self.exchanged: set[str] = set()
        for _ in range(len(self.written) + 1):
            for names in swapped(self):
                if names & (self.written | self.exchanged):
                    self.exchanged |= names
        self.written |= self.exchanged
        # a name outside loops whose array another name, handed it, writes into (`t =
        # np.exp(x); u = t; u[0] = 1.0`): the tape keeps a copy of its value where the
        # adjoint reads it (a write under another name is not undone for it)
        shares = handed(self)
        self.written |= {n for w in self.written for n in shares.get(w, ())}
        changes = {changed(s) for s in self.statements if is_write(s)} | {
            mutated(s) for s in self.statements if mutated(s)}
        bound, in_loop = bindings(self.statements)
        looped = {n for n, at in bound.items() if in_loop.intersection(at)}
        reads = self.reads()
        held = {r.var for r in reads if r.var not in looped
                and shares.get(r.var, set()) & changes}
        self.tape = plan(self.fn.body, self.params, reads, self.cheap, self.p.filename, held)
        self.read_names = {r.var for r in self.tape.reads}
        self.retests = retested(self.tape.layout, self.statements)
        self.tapes = Tapes(self.tape.layout, self.namer)
        self.shape_checks = self.carried_shapes()

    def carried_shapes(self) -> dict[int, list[tuple[str, str]]]:
        """id(loop) -> (name, shape name) of the values a loop carries (bound before it
        in its block, bound once in it) that the adjoint reads for their shapes only
        (where the value they start with is differentiated), or from which the loop
        computes, before it binds them again, values it reads so: it sees those at their
        shapes at the end. A shape that grows by broadcasting (`c = c * x`) makes them
        another at the first iteration, so `same_shape` checks after the loop that such
        a value has the shape it had before. (Names bound in two places in a loop, or to
        a slice or a call that makes their shape, are `reshaped`: read at each
        iteration's shape.)"""
        out: dict[int, list[tuple[str, str]]] = {}
        # (the result itself needs none: a number at the end, grown from nothing else)
        last = self.fn.body[-1] if self.fn.body else None
        result = last.value.id if isinstance(last, gast.Return) and isinstance(
            last.value, gast.Name) else None
        blocks = [self.fn.body] + [blk for s in self.statements for blk in (
            [s.body, s.orelse] if isinstance(s, gast.If) else [])]
        for block in blocks:
            for k, loop in enumerate(block):
                if not isinstance(loop, (gast.For, gast.While)):
                    continue
                inner = [s for s in all_statements(loop.body) if target_of(s)]
                starts = {target_of(s): s.value for s in block[:k] if target_of(s)}
                for name in sorted(set(starts) & {target_of(s) for s in inner}
                                   - self.reshaped - {result}):
                    site = next(s for s in inner if target_of(s) == name)
                    derived = {name}   # what the iteration computes from the value it got
                    for s in inner[:inner.index(site)]:
                        if any(isinstance(n, gast.Name) and n.id in derived
                               for n in gast.walk(s.value)):
                            derived.add(target_of(s))
                    # (the value itself only if it starts varied: `s = 0.0` then
                    # `s = s + x[i] * w` drops the adjoint of its start)
                    if not any(isinstance(n, gast.Name) and n.id in self.act.varied
                               for n in gast.walk(starts[name])):
                        derived.discard(name)
                    if derived & self.shape_reads:
                        out.setdefault(id(loop), []).append(
                            (name, self.namer.fresh(f"{name}_shape")))
        return out

    def cheap(self, value: gast.AST) -> bool:
        """Whether the adjoint may run this operation again rather than tape its value."""
        if isinstance(value, gast.BinOp):
            return not isinstance(value.op, gast.MatMult)
        if isinstance(value, gast.Call):
            return bool(fact(self.p.env.resolve(value.func, self.locals), "cheap"))
        if isinstance(value, gast.Attribute):
            return value.attr in ("T", "shape", "ndim", "size")
        return isinstance(value, (gast.UnaryOp, gast.Compare, gast.BoolOp, gast.Subscript,
                                  gast.Name, gast.Constant, gast.Tuple, gast.List))

    def reads(self) -> list[Read]:
        """Every primal value the adjoint code reads, at the statement it reverses."""
        out = []
        adjoint_names = set(self.adj.values())
        reshaped = self.reshaped
        self.shape_reads: set[str] = set()

        def names(node):
            shape_only = set()
            for call in gast.walk(node):  # `unbroadcast(g, x)` reads x for its shape only
                k = fact(self.ns.called(call), "shape_only")
                if k is not None and len(call.args) > k and isinstance(call.args[k], gast.Name) \
                        and call.args[k].id not in reshaped:
                    shape_only.add(id(call.args[k]))
                    self.shape_reads.add(call.args[k].id)
            # in the order they are read (not a set's: generated code must not depend on
            # the process's string hashes, or the disk cache misses)
            return list(dict.fromkeys(
                n.id for n in gast.walk(node) if isinstance(n, gast.Name)
                and n.id in self.locals and n.id not in adjoint_names
                and n.id not in self.hook_locals and id(n) not in shape_only))

        # the names bound (surely: not in a branch) before the outermost loop around a
        # statement, by its id
        entering: dict[int, set[str]] = {}
        bound = set(self.params)
        for top in self.fn.body:
            if isinstance(top, (gast.For, gast.While)):
                entering.update((id(t), set(bound)) for t in all_statements(top.body))
            elif target_of(top):
                bound.add(target_of(top))
        for s in self.statements:
            a = self.adjoints.get(id(s))
            if a is not None:
                exprs = a.pre + [e for _, e in a.add] + [e for _, i, e in a.add_at] + \
                    [i for _, i, e in a.add_at]
                target = target_of(s)
                for n in dict.fromkeys(n for e in exprs for n in names(e)):
                    after = n == target and not a.self_ref
                    out.append(Read(n, s, after=after))
                if a.result_copy:
                    out.append(Read(target, s, after=True))
                # `dacc[:, 0] += dy` may first make dacc as zeros shaped like acc here
                # (`x = x[idx]`: shaped like the old x)
                out += [Read(v, s) for v, _, _ in a.add_at if v in reshaped or v == target]
                if target in reshaped and target in entering.get(id(s), ()) and \
                        not a.self_ref:
                    # its adjoint is zeros again at the end of each iteration, shaped like
                    # the value it had before this iteration bound it (`t = x` before
                    # the loop, `t = x[1:]` in it)
                    out.append(Read(target, s))
                if is_write(s):
                    out += [Read(n, s) for n in names(s.targets[0].slice)]
                    if changed(s) in reshaped:   # for its shape (broadcast_like)
                        out.append(Read(changed(s), s, after=True))
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
                        or (is_write(t) and changed(t) in read)
                        for t in all_statements(s.body + s.orelse))]
            if not more:
                return out
            for s in more:
                replayed.add(id(s))
                if isinstance(s, gast.If):
                    out += [Read(n, s) for n in names(s.test)]
                else:
                    args = s.iter.args if not breaks(s) else \
                        [a for k, a in enumerate(s.iter.args) if k != min(1, len(s.iter.args) - 1)]
                    out += [Read(n, s) for a in args for n in names(a)]

    # ---- the forward sweep ----
    def forward_block(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for lineno, group in by_line(stmts):
            code = [s for stmt in group for s in self.forward_statement(stmt)]
            if code:
                out += [b.comment(f"line {lineno}: {self.p.line(lineno)}")] + code
        return out

    def forward_statement(self, stmt: gast.stmt) -> list[gast.stmt]:
        at_read = self.tape.saved_reads.get(id(stmt), [])
        before = [p for r in at_read if not r.after
                  for p in self.push(self.tapes.of_values(r.var), self.kept(r.var), stmt)]
        after = [p for r in at_read if r.after
                 for p in self.push(self.tapes.of_values(r.var), self.kept(r.var), stmt)]
        return before + self.forward_code(stmt) + after

    def kept(self, name: str, bound: bool = False) -> gast.AST:
        """`name`, to save on a tape: a copy if it is an array written into later (the
        tape would hold the array, and see the write); where the tape saves it as it is
        bound (or bound again), if a swap hands its array to a name written into."""
        if name in (self.exchanged if bound else self.written):
            return b.call(b.name(self.bind("snapshot", snapshot)), b.name(name))
        return b.name(name)

    def forward_code(self, stmt: gast.stmt) -> list[gast.stmt]:
        saved = id(stmt) in self.tape.saved
        if isinstance(stmt, gast.Assign):
            out = []
            if saved:
                name = changed(stmt)
                value = self.kept(name, bound=True) if target_of(stmt) else b.call(
                    b.name(self.bind("snapshot", snapshot)),
                    b.subscript(b.name(name), copy.deepcopy(stmt.targets[0].slice)))
                out += self.push(self.tapes.of_site(stmt), value, stmt)
            out.append(self.detached(stmt))
            name = target_of(stmt)
            if name in self.tape.local and self.tape.local[name].how == "tape":
                out += self.push(self.tapes.of_site(stmt), self.kept(name, bound=True), stmt)
            return out
        if isinstance(stmt, gast.If):
            body, orelse = self.forward_block(stmt.body), self.forward_block(stmt.orelse)
            if not body and not orelse:  # e.g. a branch that holds only a hook
                return []
            node = b.make(gast.If, test=copy.deepcopy(stmt.test),
                          body=body or [b.make(gast.Pass)], orelse=orelse)
            saves = [p for name in self.retests.get(id(stmt), [])
                     for p in self.push(self.tapes.of_test(stmt, name), b.name(name), stmt)]
            return saves + [self.bind_globals(node, shallow=True)]
        if isinstance(stmt, (gast.For, gast.While)):
            out, body = [], self.forward_block(stmt.body)
            counter = self.tapes.counters.get(id(stmt))
            if saved:
                out += self.push(self.tapes.of_site(stmt), b.name(stmt.target.id), stmt)
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
            checks = self.shape_checks.get(id(stmt), [])
            out += [b.assign(shape, b.call(b.make(gast.Attribute, value=b.name(
                self.bind("np", np)), attr="shape", ctx=gast.Load()), b.name(name)))
                for name, shape in checks]
            out.append(self.bind_globals(node, shallow=True))
            out += [b.make(gast.Expr, value=b.call(
                b.name(self.bind("same_shape", same_shape)), b.name(name), b.name(shape),
                b.const(f"{os.path.basename(self.p.filename)}:{getattr(stmt, 'lineno', '?')}: "
                        f"'{name}' changes shape in this loop: give it its final shape "
                        f"before it")))
                    for name, shape in checks]
            if counter and self.tape.layout.loops[id(stmt)]:
                out += self.push(self.tapes.of_trips(stmt), b.name(counter))
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
                view_root(self.views, target_of(stmt)) in self.written:
            stmt.value = b.call(b.name(self.bind("snapshot", snapshot)), value)
        return stmt

    def push(self, tape: str, value: gast.AST,
             site: gast.stmt | None = None) -> list[gast.stmt]:
        """`tape.append(value)`; or, when the only push is once per iteration of an
        outermost counted loop, a store into an array made on the first iteration."""
        self.tapes.count(tape)
        loop = self.tapes.per_iteration(tape, site)
        if loop is None:
            return [b.make(gast.Expr, value=b.call(b.make(
                gast.Attribute, value=b.name(tape), attr="append", ctx=gast.Load()), value))]
        self.tapes.arrays.add(tape)
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
        loop = self.tapes.per_iteration(tape, site)
        if loop is None:
            return b.call(b.make(gast.Attribute, value=b.name(tape), attr="pop",
                                 ctx=gast.Load()))
        return b.subscript(b.name(tape), _iteration(loop))

    # ---- values back, for the adjoint ----
    def materialize(self, name: str) -> gast.stmt:
        """A block-local value, again: recomputed, or popped from its tape."""
        stmt = next(s for s in self.statements if target_of(s) == name)
        if self.tape.local[name].how == "recompute":
            return self.detached(stmt)
        return b.assign(name, self.pop(self.tapes.of_site(stmt), stmt))

    def restore(self, stmt: gast.stmt) -> list[gast.stmt]:
        if id(stmt) not in self.tape.saved:
            return []
        if target_of(stmt):
            return [b.assign(target_of(stmt), self.pop(self.tapes.of_site(stmt), stmt))]
        target = copy.deepcopy(stmt.targets[0])
        return [b.assign(target, self.pop(self.tapes.of_site(stmt), stmt))]

    def restore_loop_index(self, loop: gast.stmt) -> list[gast.stmt]:
        if id(loop) not in self.tape.saved:
            return []
        return [b.assign(loop.target.id, self.pop(self.tapes.of_site(loop)))]


def _iteration(loop: gast.For) -> gast.AST:
    """The number of the current iteration of `for i in range(...)`, from `i`."""
    args = loop.iter.args
    start = args[0] if len(args) > 1 else b.const(0)
    step = args[2] if len(args) > 2 else b.const(1)
    i = b.name(loop.target.id)
    if int_constant(start) != 0:
        i = b.binop(i, gast.Sub(), copy.deepcopy(start))
    if int_constant(step) != 1:
        i = b.binop(i, gast.FloorDiv(), copy.deepcopy(step))
    return i


