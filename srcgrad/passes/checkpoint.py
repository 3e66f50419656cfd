"""checkpoint: run the outermost loops of the function differentiated in segments.

Requires the parsed, annotated and checked tree of the function differentiated (after
`reject` and `unroll`, before `normalize`) and the `checkpoint=` option: True (about
sqrt(n) segments of about sqrt(n) iterations) or an int k (segments of k iterations).
Guarantees a tree that computes the same values, in which each outermost `for i in
range(...)` or `while` loop whose iterations carry state is a loop over segments: each
segment is one call of a new function (the segment), made from the loop's body, that runs
its iterations and returns the state they carry (every name the loop assigns that has a
value before it), with the `Env` that resolves the segments' names. The segments' trees are
registered with `parse`, so the compiler differentiates a call of one as it does a call of
any user function: the forward sweep calls the segment's primal copy and keeps only what
the call overwrites (the state at the segment's start: a snapshot), and the adjoint calls
the segment's vector-Jacobian product, which runs the segment again with its own tape and
then its adjoint. So the tape holds one segment's iterations and the snapshots (Griewank &
Walther, ch. 12: this is the uniform two-level schedule, not revolve: the gradient costs
one more primal sweep, and memory is O(sqrt(n)) states for checkpoint=True).

A `while` loop's trip count is not known on entry: with checkpoint=True its segments grow,
the next one as long as 1 + sqrt(iterations run so far), so n iterations make about
2 sqrt(n) segments of at most about sqrt(n) iterations.

Refused, with the user's line: a loop over anything but `range(...)`, a `break` or `return`
that leaves the loop, a name first assigned in the loop and read after it, the loop's
variable read after it, and a write into an array that another name outside the loop may
share (the segment writes into a copy). Forward mode (`jvp`) keeps no tape and does not use
this pass. Exists because a long loop's tape grows with its trip count.
"""

from __future__ import annotations

import copy
import dataclasses
import types

import gast

from .. import builder as b
from ..analysis.aliasing import assigned_names, through_views, writes
from ..errors import SrcgradError
from ..frontend.parse import Env, Parsed, register_generated
from ..naming import Namer, names_in


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


def _never_called(*args):
    raise SrcgradError("a checkpoint segment runs only as generated code")


class _Checkpoint:
    def __init__(self, parsed: Parsed, tree: gast.FunctionDef, every: bool | int):
        self.p, self.tree, self.every = parsed, copy.deepcopy(tree), every
        self.params = [a.id for a in self.tree.args.args]
        self.locals = assigned_names(self.tree)
        self.namer = Namer(names_in(self.tree) | set(parsed.env.globals)
                           | set(parsed.env.closure))
        self.segments: dict[str, types.FunctionType] = {}
        for name, fun in (("range", range), ("len", len), ("min", min), ("max", max),
                          ("int", int)):
            if parsed.env.lookup(name) is not fun or name in self.locals:
                raise SrcgradError(f"checkpoint= writes `{name}` in the code it makes, and "
                                   f"{name!r} names something else here",
                                   filename=parsed.filename, lineno=tree.lineno)

    def run(self) -> Parsed:
        self.tree.body = self.block(self.tree.body)
        env = Env(self.p.env.globals, {**self.p.env.closure, **self.segments})
        return dataclasses.replace(self.p, tree=self.tree, env=env)

    def block(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for s in stmts:
            if isinstance(s, (gast.For, gast.While)):
                out += self.loop(s)
            elif isinstance(s, gast.If):
                s.body, s.orelse = self.block(s.body), self.block(s.orelse)
                out.append(s)
            else:
                out.append(s)
        return out

    def refuse(self, node: gast.AST, message: str) -> SrcgradError:
        return SrcgradError(f"checkpoint=: {message}", filename=self.p.filename,
                            lineno=getattr(node, "lineno", None))

    # ---- one loop ----
    def loop(self, loop: gast.For | gast.While) -> list[gast.stmt]:
        if isinstance(loop, gast.For) and not (
                isinstance(loop.target, gast.Name) and isinstance(loop.iter, gast.Call)
                and self.p.env.resolve(loop.iter.func, self.locals) is range
                and 1 <= len(loop.iter.args) <= 3 and not loop.iter.keywords):
            raise self.refuse(loop, "a loop is run in segments if it is `for i in "
                                    "range(...)` or a `while` loop; write this one over "
                                    "range(len(...))")
        self.check_jumps(loop, loop.body, inner=False)
        inside = {id(n) for n in gast.walk(loop)}
        end = max(getattr(n, "lineno", 0) or 0 for n in gast.walk(loop))
        before = set(self.params) | {
            n.id for n in gast.walk(self.tree) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Store) and id(n) not in inside
            and (n.lineno or 0) < loop.lineno}
        read_after = {n.id: n for n in gast.walk(self.tree) if isinstance(n, gast.Name)
                      and isinstance(n.ctx, gast.Load) and id(n) not in inside
                      and (n.lineno or 0) > end}
        own = [loop.body] if isinstance(loop, gast.For) else [loop.body, loop.test]
        loaded = [n.id for part in own for n in gast.walk(_holder(part))
                  if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
                  and n.id in self.locals]
        stored = [n.id for n in gast.walk(_holder(loop.body))
                  if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)]
        index = loop.target.id if isinstance(loop, gast.For) else None
        if index in read_after:
            raise self.refuse(read_after[index], f"the loop's variable {index!r} is read "
                                                 f"after the loop (line {loop.lineno})")
        for name in stored:
            if name not in before and name in read_after:
                raise self.refuse(read_after[name], f"{name!r} is first assigned in the "
                                                    f"loop at line {loop.lineno} and read "
                                                    f"after it: give it a value before "
                                                    f"the loop")
        copied = self.written_arrays(loop, inside) & before
        carried = list(dict.fromkeys(n for n in stored + sorted(copied)
                                     if n in before and n != index))
        if not carried:   # nothing the loop does is seen after it: no tape to bound
            return [loop]
        args = list(dict.fromkeys(n for n in loaded + carried if n in before and n != index))
        if isinstance(loop, gast.For):
            out = self.counted(loop, args, carried, copied, stored)
        else:
            out = self.conditional(loop, args, carried, copied)
        out += loop.orelse   # (no break leaves the loop: its `else` always runs)
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

    def written_arrays(self, loop: gast.AST, inside: set[int]) -> set[str]:
        """The arrays the loop writes into (through views too), each refused if a name
        bound outside the loop may share it: the segment writes into its own copy."""
        _, views = writes(self.params, self.tree.body, self.p.env, self.p.filename)
        written, _ = writes(self.params, loop.body, self.p.env, self.p.filename)
        reached = through_views(written, views)
        outside = [s for s in gast.walk(self.tree)
                   if isinstance(s, gast.Assign) and id(s) not in inside]
        _, shared = writes(self.params, outside, self.p.env, self.p.filename)
        for w in sorted(reached):
            others = sorted({v for v, roots in shared.items() if w in roots and v != w}
                            | (shared.get(w, set()) - {w}))
            if others:
                raise self.refuse(loop, f"the loop writes into {w!r}, which may share its "
                                        f"array with {', '.join(map(repr, others))}; the "
                                        f"segments write into a copy: copy it before the "
                                        f"loop ({w} = {w}.copy())")
        return reached

    def segment(self, loop: gast.AST, params: list[str], body: list[gast.stmt],
                carried: list[str], copied: set[str]) -> str:
        """A function `params -> carried` running `body`, registered with `parse`."""
        name = self.namer.fresh(f"{self.tree.name}_segment")
        result = b.name(carried[0]) if len(carried) == 1 else \
            b.tuple_([b.name(n) for n in carried])
        first = [b.assign(w, b.call(b.make(gast.Attribute, value=b.name(w), attr="copy",
                                           ctx=gast.Load())))
                 for w in params if w in copied]
        fn = b.function(name, params, [b.located(s, loop) for s in first] + body
                        + [b.located(b.ret(result), loop)])
        fn.lineno = loop.lineno
        stub = types.FunctionType(_never_called.__code__, self.p.fun.__globals__, name)
        stub.__qualname__ = name
        register_generated(stub, lambda fun: dataclasses.replace(
            self.p, fun=fun, tree=copy.deepcopy(fn), env=Env(self.p.env.globals,
                                                             self.p.env.closure)))
        self.segments[name] = stub
        return name

    def every_expr(self, done: str) -> gast.AST:
        """The next segment's length: k, or 1 + floor(sqrt(done - 1)) = ceil(sqrt(done))."""
        if self.every is not True:
            return b.const(self.every)
        return b.binop(b.const(1), gast.Add(), b.call("int", b.binop(
            b.call("max", b.binop(b.name(done), gast.Sub(), b.const(1)), b.const(0)),
            gast.Pow(), b.const(0.5))))

    def counted(self, loop: gast.For, args: list[str], carried: list[str],
                copied: set[str], stored: list[str]) -> list[gast.stmt]:
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
        every = self.namer.fresh("every") if self.every is True else None
        out.append(b.assign(trips, b.call("range", *copy.deepcopy(bounds))))
        out[-1].value = b.call("len", out[-1].value)
        if every:
            out.append(b.assign(every, self.every_expr(trips)))
        step_k = b.name(every) if every else b.const(self.every)
        start, step = (b.const(0), b.const(1)) if len(bounds) == 1 else \
            (bounds[0], bounds[2] if len(bounds) == 3 else b.const(1))

        def at(count: str) -> gast.AST:   # the value of i at iteration `count`
            v = b.name(count)
            if not (isinstance(step, gast.Constant) and step.value == 1):
                v = b.binop(v, gast.Mult(), copy.deepcopy(step))
            if not (isinstance(start, gast.Constant) and start.value == 0):
                v = b.binop(copy.deepcopy(start), gast.Add(), v)
            return v
        extra = [] if isinstance(step, gast.Constant) or step.id in args else [step.id]
        params = args + [first, last] + extra
        inner = b.make(gast.For, target=copy.deepcopy(loop.target),
                       iter=b.call("range", b.name(first), b.name(last), *(
                           [] if isinstance(step, gast.Constant) and step.value == 1
                           else [copy.deepcopy(step)])),
                       body=copy.deepcopy(loop.body), orelse=[])
        inner = b.located(inner, loop)
        name = self.segment(loop, params, [inner], carried, copied)
        call = b.call(name, *[b.name(a) for a in args], at(first), at(last),
                      *[b.name(e) for e in extra])
        body = [b.assign(last, b.call("min", b.binop(b.name(first), gast.Add(),
                                                     copy.deepcopy(step_k)), b.name(trips))),
                b.assign(_target(carried), call)]
        out.append(b.make(gast.For, target=b.name(first, store=True),
                          iter=b.call("range", b.const(0), b.name(trips), step_k),
                          body=body, orelse=[]))
        return out

    def conditional(self, loop: gast.While, args: list[str], carried: list[str],
                    copied: set[str]) -> list[gast.stmt]:
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


def _target(names: list[str]) -> gast.AST:
    if len(names) == 1:
        return b.name(names[0], store=True)
    return b.tuple_([b.name(n, store=True) for n in names], store=True)
