"""checkpoint: run the outermost loops of the function differentiated in segments.

Requires the parsed, annotated and checked tree of the function differentiated (after
`reject` and `unroll`, before `normalize`) and the `checkpoint=` option: True (about
sqrt(n) segments of about sqrt(n) iterations) or an int k (segments of k iterations).
Guarantees a tree that computes the same values, in which each outermost `for` loop
(over `range(...)`, a sequence, `enumerate` or `zip`) or `while` loop whose iterations
carry state is a loop over segments: each
segment is one call of a new function (the segment), made from the loop's body, that runs
its iterations and returns the state they carry (every name the loop assigns that has a
value before it), with the `Env` that resolves the segments' names. The segments' trees are
registered with `parse`, so the compiler differentiates a call of one as it does a call of
any user function: the forward sweep calls the segment's primal copy and keeps only what
the call overwrites (the state at the segment's start: a snapshot), and the adjoint calls
the segment's vector-Jacobian product, which runs the segment again with its own tape and
then its adjoint. So the tape holds one segment's iterations and the snapshots (Griewank &
Walther, ch. 12: this is the uniform two-level schedule, not revolve: the gradient costs
one more primal sweep, and memory is O(sqrt(n)) states for checkpoint=True). A loop over
a sequence passes each segment its slice, `xs[first:last]`, so the slice's adjoint is
added to `dxs`, not a whole `dxs` per segment. What the segment changes in place (an
array written into, a name updated with `+=`) it changes in a copy made on entry.

A `while` loop's trip count is not known on entry: with checkpoint=True its segments grow,
the next one as long as 1 + sqrt(iterations run so far), so n iterations make about
2 sqrt(n) segments of at most about sqrt(n) iterations.

Refused, with the user's line: a loop over a call other than `range`, `enumerate` and
`zip` (`reversed(xs)`: name it first), a loop with an `else`, a loop that changes the
sequence it iterates, a `break` or `return` that leaves the loop, a name first assigned in
the loop and read after it, the loop's variable read after it, and an in-place change of
an array that another name outside the loop may share (the segment changes a copy). An
int counter the loop carries comes back an int (`analysis.values.ints` follows it through
the segment's tuple), so it still indexes. Forward mode (`jvp`) keeps
no tape and does not use this pass. Exists because a long loop's tape grows with its trip
count.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import types
from typing import Any

import gast

from .. import builder as b
from ..analysis.aliasing import assigned_names, through_views, writes
from ..errors import SrcgradError
from ..frontend.parse import Env, Parsed, register_generated
from ..naming import Namer, names_in
from ..runtime import snapshot


def checkpoint(parsed: Parsed, tree: gast.FunctionDef, every: bool | int) -> Parsed:
    """`parsed` with `tree` rewritten: each outermost loop run in segments (see the module).

    >>> import gast, astor
    >>> from srcgrad.frontend.parse import parse
    >>> def f(x, a, n):
    ...     for i in range(n):
    ...         x = x * a
    ...     return x
    >>> p = parse(f)
    >>> out = checkpoint(p, p.tree, 10)
    >>> print(astor.to_source(gast.gast_to_ast(out.tree)).strip())
    def f(x, a, n):
        trips = len(range(n))
        for first in range(0, trips, 10):
            last = min(first + 10, trips)
            x = f_segment(x, a, first, last)
        return x
    >>> print(astor.to_source(gast.gast_to_ast(parse(out.env.lookup("f_segment")).tree)).strip())
    def f_segment(x, a, first, last):
        for i in range(first, last):
            x = x * a
        return x
    """
    return _Checkpoint(parsed, tree, every).run()


def check_option(every: Any) -> None:
    """`checkpoint=` is None, a bool or an int k >= 1, or a SrcgradError."""
    if not (every is None or type(every) is bool or type(every) is int and every >= 1):
        raise SrcgradError(f"checkpoint must be None, True or an int k >= 1 (a snapshot "
                           f"every k iterations), not {every!r}")


def _never_called(*args):
    raise SrcgradError("a checkpoint segment runs only as generated code")


class _Checkpoint:
    def __init__(self, parsed: Parsed, tree: gast.FunctionDef, every: bool | int):
        self.p, self.tree, self.every = parsed, copy.deepcopy(tree), every
        self.params = [a.id for a in self.tree.args.args]
        self.locals = assigned_names(self.tree)
        self.namer = Namer(names_in(self.tree) | set(parsed.env.globals)
                           | set(parsed.env.closure))
        self.segments: dict[str, Any] = {}   # names the new code reads: segments, math
        self.math: str | None = None
        for name, fun in (("range", range), ("len", len), ("min", min), ("max", max),
                          ("int", int)):
            if parsed.env.lookup(name) is not fun or name in self.locals:
                raise SrcgradError(f"checkpoint= writes `{name}` in the code it makes, and "
                                   f"{name!r} names something else here",
                                   filename=parsed.filename, lineno=tree.lineno)

    def run(self) -> Parsed:
        self.tree.body = self.block(self.tree.body, [])
        env = Env(self.p.env.globals, {**self.p.env.closure, **self.segments})
        return dataclasses.replace(self.p, tree=self.tree, env=env)

    def block(self, stmts: list[gast.stmt], after: list[gast.stmt]) -> list[gast.stmt]:
        """`stmts` with their outermost loops in segments; `after` runs after them."""
        out: list[gast.stmt] = []
        for k, s in enumerate(stmts):
            rest = stmts[k + 1:] + after
            if isinstance(s, (gast.For, gast.While)):
                out += self.loop(s, _live(rest, set()))
            elif isinstance(s, gast.If):
                s.body, s.orelse = self.block(s.body, rest), self.block(s.orelse, rest)
                out.append(s)
            else:
                out.append(s)
        return out

    def refuse(self, node: gast.AST, message: str) -> SrcgradError:
        return SrcgradError(f"checkpoint=: {message}", filename=self.p.filename,
                            lineno=getattr(node, "lineno", None))

    # ---- one loop ----
    def loop(self, loop: gast.For | gast.While, live_after: set[str]) -> list[gast.stmt]:
        if loop.orelse:
            raise self.refuse(loop.orelse[0], f"the loop at line {loop.lineno} has an "
                                              f"`else`: move it after the loop")
        self.check_jumps(loop, loop.body, inner=False)
        inside = {id(n) for n in gast.walk(loop)}
        end = max(getattr(n, "lineno", 0) or 0 for n in gast.walk(loop))
        before = set(self.params) | {
            n.id for n in gast.walk(self.tree) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Store) and id(n) not in inside
            and (n.lineno or 0) < loop.lineno}
        read_after = {n.id: n for n in gast.walk(self.tree) if isinstance(n, gast.Name)
                      and isinstance(n.ctx, gast.Load) and id(n) not in inside
                      and (n.lineno or 0) > end and n.id in live_after}
        # what an iteration may read before it assigns it (a name only an inner loop's
        # variable is not: it may be unbound before the loop, and is not passed)
        live = _live(loop.body, set(_names(loop.target)) if isinstance(loop, gast.For)
                     else set())
        if isinstance(loop, gast.While):
            live |= set(_names(loop.test, gast.Load))
        loaded = [n for n in _names(_holder(loop.body), gast.Load)
                  if n in live and n in self.locals]
        if isinstance(loop, gast.While):
            loaded = [n for n in _names(loop.test, gast.Load) if n in self.locals] + loaded
        stored = [n.id for n in gast.walk(_holder(loop.body))
                  if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)]
        targets = {n.id for n in gast.walk(loop.target) if isinstance(n, gast.Name)} \
            if isinstance(loop, gast.For) else set()
        for index in sorted(targets & set(read_after)):
            raise self.refuse(read_after[index], f"the loop's variable {index!r} is read "
                                                 f"after the loop (line {loop.lineno})")
        for name in stored:
            if name not in before and name in read_after:
                raise self.refuse(read_after[name], f"{name!r} is first assigned in the "
                                                    f"loop at line {loop.lineno} and read "
                                                    f"after it: give it a value before "
                                                    f"the loop")
        # what the segment changes in place (an array written into, a name changed with
        # `x += ...`), it changes in its own copy: a helper must not write into what it
        # is passed
        updated = {t.target.id for t in gast.walk(_holder(loop.body))
                   if isinstance(t, gast.AugAssign)
                   and isinstance(t.target, gast.Name)}
        written = self.written_arrays(loop, inside, updated)
        copied = sorted((written | updated) & before)
        carried = list(dict.fromkeys(n for n in stored + list(copied) if n in before
                                     and n not in targets and (n in live or n in read_after)))
        if not carried:   # nothing the loop does is seen after it: no tape to bound
            return [loop]
        args = list(dict.fromkeys(n for n in loaded + carried
                                  if n in before and n not in targets))
        if isinstance(loop, gast.For) and self.is_range(loop.iter):
            out = self.counted(loop, args, carried, copied, stored)
        elif isinstance(loop, gast.For):
            out = self.sequence(loop, args, carried, copied, stored, written | updated)
        else:
            out = self.conditional(loop, args, carried, copied)
        return [b.located(s, loop) for s in out]

    def check_jumps(self, loop: gast.AST, stmts: list[gast.stmt], inner: bool) -> None:
        for s in stmts:
            if isinstance(s, gast.Return) or isinstance(s, gast.Break) and not inner:
                what = "return" if isinstance(s, gast.Return) else "break"
                raise self.refuse(s, f"a `{what}` leaves the loop at line {loop.lineno}, "
                                     f"which is run in segments; keep a flag in the loop's "
                                     f"condition instead, or leave checkpoint= off")
            for field in ("body", "orelse"):
                self.check_jumps(loop, getattr(s, field, []) or [],
                                 inner or isinstance(s, (gast.For, gast.While)))

    def written_arrays(self, loop: gast.AST, inside: set[int], updated: set[str]) -> set[str]:
        """The arrays the loop writes into (through views too); each, and each name it
        changes with `+=` (`updated`), refused if a name bound outside the loop may share
        it: the segment changes its own copy."""
        _, views = writes(self.params, self.tree.body, self.p.env, self.p.filename)
        written, _ = writes(self.params, loop.body, self.p.env, self.p.filename)
        reached = through_views(written, views)
        outside = [s for s in gast.walk(self.tree)
                   if isinstance(s, gast.Assign) and id(s) not in inside]
        _, shared = writes(self.params, outside, self.p.env, self.p.filename)
        for w in sorted(reached | updated):
            others = sorted({v for v, roots in shared.items() if w in roots and v != w}
                            | (shared.get(w, set()) - {w}))
            if others:
                raise self.refuse(loop, f"the loop writes into {w!r}, which may share its "
                                        f"array with {', '.join(map(repr, others))}; the "
                                        f"segments change a copy: copy it before the "
                                        f"loop ({w} = {w}.copy())")
        return reached

    def segment(self, loop: gast.AST, params: list[str], body: list[gast.stmt],
                carried: list[str], copied: list[str]) -> str:
        """A function `params -> carried` running `body`, registered with `parse`; a
        parameter it changes in place (`copied`) is `x_in`, copied to `x` first
        (`snapshot`: an array copied, a number kept; `x = 1` may become an array in the
        loop before it is written into)."""
        name = self.namer.fresh(f"{self.tree.name}_segment")
        result = b.name(carried[0]) if len(carried) == 1 else \
            b.tuple_([b.name(n) for n in carried])
        closure = dict(self.p.env.closure)
        renamed, first, copier = [], [], None
        for p in params:
            if p not in copied:
                renamed.append(p)
                continue
            renamed.append(self.namer.fresh(f"{p}_in"))
            if copier is None:
                copier = self.namer.fresh("snapshot")
                closure[copier] = snapshot
            first.append(b.located(b.assign(p, b.call(copier, b.name(renamed[-1]))), loop))
        fn = b.function(name, renamed, first + body + [b.located(b.ret(result), loop)])
        fn.lineno = loop.lineno
        stub = types.FunctionType(_never_called.__code__, self.p.fun.__globals__, name)
        stub.__qualname__ = name
        stub.srcgrad_segment = True   # (compiler: its errors are raised, never run around)
        register_generated(stub, lambda fun: dataclasses.replace(
            self.p, fun=fun, tree=copy.deepcopy(fn), env=Env(self.p.env.globals, closure)))
        self.segments[name] = stub
        return name

    def every_expr(self, done: str) -> gast.AST:
        """The next segment's length: k, or 1 + floor(sqrt(done - 1)) = ceil(sqrt(done))."""
        if self.every is not True:
            return b.const(self.every)
        if self.math is None:
            self.math = "math" if self.p.env.lookup("math") is math and \
                "math" not in self.locals else self.namer.fresh("math")
            self.segments[self.math] = math
        sqrt = b.make(gast.Attribute, value=b.name(self.math), attr="sqrt", ctx=gast.Load())
        return b.binop(b.const(1), gast.Add(), b.call("int", b.call(sqrt, b.call(
            "max", b.binop(b.name(done), gast.Sub(), b.const(1)), b.const(0)))))

    def counted(self, loop: gast.For, args: list[str], carried: list[str],
                copied: list[str], stored: list[str]) -> list[gast.stmt]:
        """trips = len(range(...)); for first in range(0, trips, every): state = seg(...)."""
        out: list[gast.stmt] = []
        bounds = []   # the range's start and step, each evaluated once, as the loop does
        stop = 1 if len(loop.iter.args) > 1 else 0
        for k, a in enumerate(loop.iter.args):
            if k == stop or isinstance(a, gast.Constant) or \
                    isinstance(a, gast.Name) and a.id not in stored:
                bounds.append(a)
                continue
            v = self.namer.fresh(("start", "stop", "step")[k])
            out.append(b.assign(v, a))
            bounds.append(b.name(v))
        trips, first, last = (self.namer.fresh(n) for n in ("trips", "first", "last"))
        out.append(b.assign(trips, b.call("len", b.call("range", *copy.deepcopy(bounds)))))
        start, step = (b.const(0), b.const(1)) if len(bounds) == 1 else \
            (bounds[0], bounds[2] if len(bounds) == 3 else b.const(1))

        def at(count: str) -> gast.AST:   # the value of i at iteration `count`
            v = b.name(count)
            if not _is(step, 1):
                v = b.binop(v, gast.Mult(), copy.deepcopy(step))
            if not _is(start, 0):
                v = b.binop(copy.deepcopy(start), gast.Add(), v)
            return v
        extra = [] if isinstance(step, gast.Constant) or step.id in args else [step.id]
        params = args + [first, last] + extra
        inner = b.make(gast.For, target=copy.deepcopy(loop.target),
                       iter=b.call("range", b.name(first), b.name(last),
                                   *([] if _is(step, 1) else [copy.deepcopy(step)])),
                       body=copy.deepcopy(loop.body), orelse=[])
        inner = b.located(inner, loop)
        name = self.segment(loop, params, [inner], carried, copied)
        return out + self.segments_of(trips, first, last, lambda: b.call(
            name, *[b.name(a) for a in args], at(first), at(last),
            *[b.name(e) for e in extra]), carried)

    def is_range(self, node: gast.AST) -> bool:
        return isinstance(node, gast.Call) and not node.keywords and \
            self.p.env.resolve(node.func, self.locals) is range and 1 <= len(node.args) <= 3

    def sequence(self, loop: gast.For, args: list[str], carried: list[str],
                 copied: list[str], stored: list[str],
                 changed: set[str]) -> list[gast.stmt]:
        """`for x in xs`, `enumerate(xs, start)`, `zip(xs, ys)`: trips = len(xs); the
        segment runs the loop over the slices xs[first:last] it is passed (so its adjoint
        is the slice's, not all of xs)."""
        it, start = loop.iter, None
        fun = self.p.env.resolve(it.func, self.locals) if isinstance(it, gast.Call) else None
        if fun is enumerate and not it.keywords and 1 <= len(it.args) <= 2:
            items, start = it.args[:1], it.args[1] if len(it.args) == 2 else b.const(0)
        elif fun is zip and not it.keywords and it.args:
            items = it.args
        elif not isinstance(it, gast.Call):   # an array, list or tuple
            items = [it]
        else:
            raise self.refuse(loop, "a loop is run in segments if it is over range(...), "
                                    "a sequence, enumerate(...) or zip(...), or a `while` "
                                    "loop; give what this one iterates over a name first")
        out: list[gast.stmt] = []

        def once(node: gast.AST, base: str) -> gast.AST:   # evaluated once, as the loop does
            if isinstance(node, gast.Constant) and base == "start" or \
                    isinstance(node, gast.Name) and node.id not in stored:
                return node
            v = self.namer.fresh(base)
            out.append(b.assign(v, node))
            return b.name(v)
        items = [once(e, "items") for e in items]
        for e in items:
            if e.id in changed:
                raise self.refuse(loop, f"the loop changes {e.id!r}, which it iterates over")
        start = once(start, "start") if start is not None else None
        trips, first, last = (self.namer.fresh(n) for n in ("trips", "first", "last"))
        lengths = [b.call("len", b.name(e.id)) for e in items]
        out.append(b.assign(trips, lengths[0] if len(lengths) == 1 else
                            b.call("min", *lengths)))
        parts = [self.namer.fresh(f"{e.id}_part") for e in items]
        offset = self.namer.fresh("offset") if start is not None else None
        inner_iter: gast.AST = b.name(parts[0])
        if start is not None:
            inner_iter = b.call("enumerate", b.name(parts[0]), b.name(offset))
        elif fun is zip:
            inner_iter = b.call("zip", *[b.name(p) for p in parts])
        inner = b.make(gast.For, target=copy.deepcopy(loop.target), iter=inner_iter,
                       body=copy.deepcopy(loop.body), orelse=[])
        name = self.segment(loop, args + parts + ([offset] if offset else []),
                            [b.located(inner, loop)], carried, copied)
        sliced = [b.subscript(b.name(e.id), b.make(gast.Slice, lower=b.name(first),
                                                   upper=b.name(last), step=None))
                  for e in items]
        at = [] if start is None else [b.name(first)] if _is(start, 0) else \
            [b.binop(copy.deepcopy(start), gast.Add(), b.name(first))]
        return out + self.segments_of(trips, first, last, lambda: b.call(
            name, *[b.name(a) for a in args], *sliced, *at), carried)

    def segments_of(self, trips: str, first: str, last: str, call, carried: list[str]
                    ) -> list[gast.stmt]:
        """every = ...; for first in range(0, trips, every): last = ...; state = call()."""
        out = []
        step_k = b.const(self.every)
        if self.every is True:
            every = self.namer.fresh("every")
            out.append(b.assign(every, self.every_expr(trips)))
            step_k = b.name(every)
        body = [b.assign(last, b.call("min", b.binop(b.name(first), gast.Add(),
                                                     copy.deepcopy(step_k)), b.name(trips))),
                b.assign(_target(carried), call())]
        out.append(b.make(gast.For, target=b.name(first, store=True),
                          iter=b.call("range", b.const(0), b.name(trips), step_k),
                          body=body, orelse=[]))
        return out

    def conditional(self, loop: gast.While, args: list[str], carried: list[str],
                    copied: list[str]) -> list[gast.stmt]:
        """while test: state = seg(state, every), seg running at most `every` iterations
        while the test holds."""
        every, count = self.namer.fresh("every"), self.namer.fresh("count")
        inner = b.make(gast.While, test=b.make(gast.BoolOp, op=gast.And(), values=[
            b.make(gast.Compare, left=b.name(count), ops=[gast.Lt()],
                   comparators=[b.name(every)]), copy.deepcopy(loop.test)]),
            body=[b.assign(count, b.binop(b.name(count), gast.Add(), b.const(1)))]
            + copy.deepcopy(loop.body), orelse=[])
        name = self.segment(loop, args + [every],
                            [b.located(b.assign(count, b.const(0)), loop),
                             b.located(inner, loop)], carried, copied)
        body = [b.assign(_target(carried), b.call(name, *[b.name(a) for a in args],
                                                  b.name(every)))]
        out: list[gast.stmt] = []
        if self.every is True:
            done = self.namer.fresh("done")
            out.append(b.assign(done, b.const(0)))
            body.insert(0, b.assign(every, self.every_expr(done)))
            body.append(b.assign(done, b.binop(b.name(done), gast.Add(), b.name(every))))
        else:
            out.append(b.assign(every, b.const(self.every)))
        out.append(b.make(gast.While, test=copy.deepcopy(loop.test), body=body, orelse=[]))
        return out


def _holder(part: gast.AST | list[gast.stmt]) -> gast.AST:
    """A node to walk: a list of statements as a module body."""
    return b.make(gast.Module, body=part, type_ignores=[]) if isinstance(part, list) else part


def _names(node: gast.AST, ctx: type = gast.AST) -> list[str]:
    """The names in `node` (Load or Store, with `ctx`), in order, once each."""
    return list(dict.fromkeys(n.id for n in gast.walk(node) if isinstance(n, gast.Name)
                              and isinstance(n.ctx, ctx)))


def _live(stmts: list[gast.stmt], assigned: set[str]) -> set[str]:
    """The names `stmts` may read before they assign them, `assigned` being assigned
    already: conservatively, a branch or a loop assigns nothing for what follows it, and
    only a loop's own variable is assigned for its body."""
    out: set[str] = set()
    assigned = set(assigned)
    for s in stmts:
        if isinstance(s, gast.For):
            out |= set(_names(s.iter, gast.Load)) - assigned
            out |= _live(s.body, assigned | set(_names(s.target))) | _live(s.orelse, assigned)
        elif isinstance(s, (gast.If, gast.While)):
            out |= set(_names(s.test, gast.Load)) - assigned
            out |= _live(s.body, assigned) | _live(s.orelse, assigned)
        else:
            out |= set(_names(s, gast.Load)) - assigned
            if isinstance(s, gast.AugAssign):
                out |= set(_names(s.target)) - assigned
            elif isinstance(s, gast.Assign):
                assigned |= {n for t in s.targets for n in _names(t, gast.Store)}
    return out


def _is(node: gast.AST, value: int) -> bool:
    return isinstance(node, gast.Constant) and node.value == value


def _target(names: list[str]) -> gast.AST:
    if len(names) == 1:
        return b.name(names[0], store=True)
    return b.tuple_([b.name(n, store=True) for n in names], store=True)
