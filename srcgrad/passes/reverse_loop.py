"""reverse_loop: the zeros the adjoint of a loop or a branch starts from, where the value
they are made from may be unbound.

Requires a normalized loop (`for` over `range(...)`, or `while`) of a function's body.
Guarantees, for `passes.reverse`: which names are bound only inside the loop
(`loop_locals`); the test that the loop ran an iteration (`ran`); whether an iteration
that ran surely left a name bound (`surely_bound`); the names a function may leave
unbound (`maybe_unbound`) and its forward code flagging that they were bound (`flagged`).

The adjoint `dv` of a value the loop carries from one iteration to the next is zero
before the reversed loop, made from `v` as the forward loop left it (`dv = zeros_like(v)`).
A `v` bound only inside the loop is unbound where the loop ran no iteration: so that
zero is made only if the loop ran (nothing else reads `dv`: the reversed loop does not
run either). A loop that ran without binding `v` (every binding under a condition, no
read every iteration) cannot be told apart: `passes.reverse` refuses it.

Where branches join (`if c2: if c: s += np.sum(v)` has no `dv` where `c` is false) or
before a loop, `v` may be unbound because the forward never bound it (`if c: v = ...`
with `c` false); then no adjoint that reads `dv` runs, and the zeros are made only if a
flag the forward sets after each binding of `v` says it was bound.

>>> import gast
>>> loop = gast.parse("for i in range(n):\\n    if c:\\n        v = x\\n    s = v").body[0]
>>> import astor; print(astor.to_source(gast.gast_to_ast(ran(loop, None))).strip())
(n > 0)
>>> surely_bound(loop.body, "v"), surely_bound(loop.body[:1], "v")
(True, False)
>>> fn = gast.parse("if c:\\n    v = x\\ns = v").body
>>> sorted(maybe_unbound(fn[:1], ["x"], {"x", "v"})), sorted(maybe_unbound(fn, [], {"v"}))
(['v'], [])
>>> print(astor.to_source(gast.gast_to_ast(gast.Module(
...     body=flagged(fn[:1], {"v": "v_bound"}), type_ignores=[]))).strip())
v_bound = False
if c:
    v = x
    v_bound = True
"""

from __future__ import annotations

import copy

import gast

from .. import builder as b
from .base import all_statements, int_constant


def loop_locals(loop: gast.stmt, statements: list[gast.stmt], params: list[str]
                ) -> frozenset[str]:
    """The names `statements` (all of a function's) bind only inside `loop`."""
    inside = {id(s) for s in all_statements(loop.body)}
    where: dict[str, bool] = {}
    for s in statements:
        targets = [s.target] if isinstance(s, (gast.For, gast.AugAssign)) else \
            getattr(s, "targets", [])
        for n in (n for t in targets for n in gast.walk(t)):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                where[n.id] = where.get(n.id, True) and id(s) in inside
    return frozenset(name for name, only in where.items() if only and name not in params)


def ran(loop: gast.stmt, trips: str | None) -> gast.AST:
    """The test that `loop` ran an iteration: its trip count `trips` (counted: a `while`,
    a loop with `break`) is positive, or its range is not empty."""
    if trips is not None:
        return b.make(gast.Compare, left=b.name(trips), ops=[gast.Gt()],
                      comparators=[b.const(0)])
    args = loop.iter.args
    start, stop, step = (b.const(0), args[0], b.const(1)) if len(args) == 1 else \
        (args[0], args[1], args[2] if len(args) > 2 else b.const(1))
    if int_constant(step) == 1:
        return b.make(gast.Compare, left=copy.deepcopy(stop), ops=[gast.Gt()],
                      comparators=[copy.deepcopy(start)])
    count = b.call(b.name("len"), b.call(b.name("range"),
                                         *(copy.deepcopy(a) for a in (start, stop, step))))
    return b.make(gast.Compare, left=count, ops=[gast.Gt()], comparators=[b.const(0)])


def surely_bound(body: list[gast.stmt], name: str) -> bool:
    """Whether running `body` to its end surely binds `name`, or reads it (in Python a
    read of an unbound name raises: the function itself fails): a statement before any
    `break` or `continue` does, or both branches of an `if` do."""
    for s in body:
        if isinstance(s, gast.If):
            if any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(s.test)) or \
                    surely_bound(s.body, name) and surely_bound(s.orelse, name):
                return True
        elif isinstance(s, (gast.For, gast.While)):
            head = s.iter if isinstance(s, gast.For) else s.test
            if any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(head)):
                return True
        elif any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(s)):
            return True
        if any(isinstance(t, (gast.Break, gast.Continue))
               for t in all_statements([s], into_loops=False)):
            return False
    return False


def maybe_unbound(body: list[gast.stmt], params: list[str], names) -> frozenset[str]:
    """Of `names`, those running `body` (a function's, to its end) may leave unbound."""
    return frozenset(v for v in names if v not in params and not surely_bound(body, v))


def flagged(body: list[gast.stmt], flags: dict[str, str]) -> list[gast.stmt]:
    """`body` (forward code) with each flag of `flags` (a name's) false first, and true
    after every statement binding its name."""
    return [b.assign(flag, b.const(False)) for _, flag in sorted(flags.items())] + \
        _set_flags(body, flags) if flags else body


def _set_flags(body: list[gast.stmt], flags: dict[str, str]) -> list[gast.stmt]:
    out = []
    for s in body:
        for part in ("body", "orelse"):
            if isinstance(getattr(s, part, None), list):
                setattr(s, part, _set_flags(getattr(s, part), flags))
        out.append(s)
        targets = [s.target] if isinstance(s, (gast.For, gast.AugAssign)) else \
            getattr(s, "targets", [])
        bound = {n.id for t in targets for n in gast.walk(t)
                 if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        if isinstance(s, gast.For) and bound & set(flags):   # (bound in its body)
            s.body = [b.assign(flags[v], b.const(True)) for v in sorted(bound & set(flags))] \
                + s.body
            continue
        out += [b.assign(flags[v], b.const(True)) for v in sorted(bound & set(flags))]
    return out
