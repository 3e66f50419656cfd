"""numbers: the names of a gradient that hold numbers (rank 0), from its check that its
result is one.

Requires a generated function: its forward code, then, in a gradient, ``dy = seed(y)``
(the check that the result y is a number: at compile time under numba, before the adjoint
as Python) and the adjoint.

Guarantees that every name returned holds a number whenever it holds a value (a
function without that check, or with `:=`, has none):

* in the forward code, what on every path after it is made is read by an elementwise
  operation (its rank the highest of its operands') whose result is such a name, before
  it is set again, or is the result (broadcasting never lowers a rank);
* in the adjoint, what is made of the seed, number constants, unbroadcasts to such names
  and elementwise operations of these.

Exists so that `passes.optimize` only asks, never computes, what holds numbers: there
`unbroadcast(g, like)` between numbers is g, and powers of numbers fold. Two fixed
points: the forward facts are justified forward in time, the adjoint's back in time, so
the largest sets are sound.
"""

from __future__ import annotations

import gast
import numpy as np

from ..passes.base import Namespace, all_statements

# operators whose result has the rank of their highest-rank operand (NumPy broadcasting):
# a result of rank 0 had operands of rank 0
_ELEMENTWISE_OPS = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.FloorDiv, gast.Mod, gast.Pow)


def numbers(fn: gast.FunctionDef, ns: Namespace) -> frozenset[str]:
    r"""The names of `fn` that hold numbers whenever they hold a value.

    >>> from srcgrad import runtime
    >>> ns = Namespace(); _ = [ns.bind(n, getattr(runtime, n)) for n in ("seed", "unbroadcast")]
    >>> fn = gast.parse("def g(x):\n    s = 0.0\n    for i in range(3):\n"
    ...     "        u = x[i]\n        t = u ** 1\n        s = s + t\n    ds = seed(s)\n"
    ...     "    dt = unbroadcast(ds, t)\n    dx = unbroadcast(dt * x, x)\n"
    ...     "    return dx").body[0]
    >>> sorted(numbers(fn, ns))
    ['ds', 'dt', 's', 't', 'u']
    """
    top = fn.body
    check = seed_position(top, ns)
    if check is None or any(isinstance(n, gast.NamedExpr) for n in gast.walk(fn)):
        return frozenset()
    forward, adjoint = top[:check], top[check:]
    result = top[check].value.args[0].id
    params = {a.id for a in fn.args.args}
    made_again = _defined(adjoint)
    found = _forced_numbers(forward, result, _defined(forward) - made_again, params - made_again,
                            ns)
    found |= _number_cotangents(adjoint, found, made_again - _defined(forward) - params, ns)
    return frozenset(found)


def seed_position(body: list[gast.stmt], ns: Namespace) -> int | None:
    """The position in `body` of ``dy = seed(y)``, the check that the result y is a
    number, if it is there."""
    return next((k for k, s in enumerate(body) if _seeded(s, ns)), None)


def _seeded(stmt: gast.stmt, ns: Namespace) -> bool:
    """Whether `stmt` is `dy = seed(y)`: the check that the result y is a number."""
    from ..runtime import seed
    return isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Call) \
        and ns.resolve(stmt.value.func) is seed and len(stmt.value.args) == 1 \
        and isinstance(stmt.value.args[0], gast.Name)


def _defined(stmts: list[gast.stmt]) -> set[str]:
    return {n.id for s in stmts for n in gast.walk(s)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _number(node: gast.AST) -> bool:
    return isinstance(node, gast.Constant) and type(node.value) in (int, float)


def _elementwise_operands(value: gast.AST, ns: Namespace) -> list[gast.AST] | None:
    """The operands of `value` if it is an elementwise operation (its rank the highest of
    theirs), else None. (A generalized ufunc, np.matmul, is not one.)"""
    if isinstance(value, gast.BinOp) and isinstance(value.op, _ELEMENTWISE_OPS):
        return [value.left, value.right]
    if isinstance(value, gast.UnaryOp) and isinstance(value.op, (gast.USub, gast.UAdd)):
        return [value.operand]
    if isinstance(value, gast.Call) and not value.keywords and \
            isinstance(ns.resolve(value.func), np.ufunc) and \
            ns.resolve(value.func).signature is None and \
            not any(isinstance(a, gast.Starred) for a in value.args):
        return list(value.args)
    if isinstance(value, gast.Name):
        return [value]
    return None


def _forced_numbers(forward: list[gast.stmt], result: str, candidates: set[str],
                    params: set[str], ns: Namespace) -> set[str]:
    """The names of `candidates` (set only in `forward`) and of `params` (set on entry)
    that hold numbers whenever they hold a value, given that `result` holds one after
    `forward`.

    A value is a number if it is a number constant, or if on every path after it is made
    it is read by an elementwise operation whose result is such a name, before the name
    is set again (or it is the result). The justification goes forward in time only, so
    the largest such set (the fixed point from above) is sound."""
    if any(isinstance(n, (gast.Break, gast.Continue, gast.Return)) or
           isinstance(n, (gast.For, gast.While)) and n.orelse for s in forward
           for n in gast.walk(s)):
        return set()
    numbers = candidates | params
    while True:
        ok: dict[str, bool] = {}
        entry = _Forced(numbers, ns, ok).block(forward, {result})
        for name in params:
            ok[name] = ok.get(name, True) and name in entry
        kept = {n for n in numbers if ok.get(n, False)}
        if kept == numbers:
            return numbers
        numbers = kept


class _Forced:
    """Backwards over a block: the names whose value, on every path, is read by an
    elementwise operation into one of `numbers` (or is the result at the end) before
    being set again. Records in `ok`, per name, whether every value set is such (or a
    number constant)."""

    def __init__(self, numbers: set[str], ns: Namespace, ok: dict[str, bool] | None):
        self.numbers, self.ns, self.ok = numbers, ns, ok

    def made(self, name: str, forced: bool) -> None:
        if self.ok is not None:
            self.ok[name] = self.ok.get(name, True) and forced

    def block(self, stmts: list[gast.stmt], after: set[str]) -> set[str]:
        forced = set(after)
        for stmt in reversed(stmts):
            forced = self.stmt(stmt, forced)
        return forced

    def stmt(self, stmt: gast.stmt, after: set[str]) -> set[str]:
        if isinstance(stmt, gast.If):
            return self.block(stmt.body, after) & self.block(stmt.orelse, after)
        if isinstance(stmt, (gast.For, gast.While)):
            return self.loop(stmt, after)
        stored = _defined([stmt])
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], gast.Name):
            name = stmt.targets[0].id
            self.made(name, name in after or _number(stmt.value))
            operands = _elementwise_operands(stmt.value, self.ns)
            reads = {o.id for o in operands or () if isinstance(o, gast.Name)}
            return (after - {name}) | (reads if name in self.numbers and operands else set())
        for name in stored:
            self.made(name, False)
        return after - stored

    def loop(self, stmt: gast.For | gast.While, after: set[str]) -> set[str]:
        """At the head: leave (`after`) or run the body again; the fixed point from above."""
        target = _defined([stmt.target]) if isinstance(stmt, gast.For) else set()
        analysis = _Forced(self.numbers, self.ns, None)
        head = set(after)
        while True:
            new = after & (analysis.block(stmt.body, head) - target)
            if new == head:
                break
            head = new
        body = self.block(stmt.body, head)
        for name in target:
            self.made(name, name in body)
        return head


def _number_cotangents(adjoint: list[gast.stmt], numbers: set[str], candidates: set[str],
                       ns: Namespace) -> set[str]:
    """The names of `candidates` (set only in `adjoint`) every value of which is a number:
    the seed, number constants, an unbroadcast to a number (one of `numbers`, or of
    these), or an elementwise operation of such. The justification goes back in time, so
    the largest set is sound."""
    from ..runtime import seed, unbroadcast
    defs: dict[str, list[gast.AST | None]] = {}
    for s in all_statements(adjoint):
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and \
                isinstance(s.targets[0], gast.Name):
            defs.setdefault(s.targets[0].id, []).append(s.value)
        else:
            compound = isinstance(s, (gast.For, gast.While, gast.If))
            for name in _defined([s.target] if isinstance(s, gast.For) else
                                 [] if compound else [s]):
                defs.setdefault(name, []).append(None)
    cotangents = {n for n in candidates if n in defs}

    def number(v: gast.AST | None) -> bool:
        if v is None:
            return False
        if isinstance(v, gast.Name):
            return v.id in cotangents
        if _number(v):
            return True
        if isinstance(v, gast.Call) and not v.keywords:
            fun = ns.resolve(v.func)
            if fun is seed:
                return True
            if fun is unbroadcast and len(v.args) == 2:
                return isinstance(v.args[1], gast.Name) and \
                    v.args[1].id in numbers | cotangents
        operands = _elementwise_operands(v, ns)
        return operands is not None and all(number(o) for o in operands)
    while True:
        kept = {n for n in cotangents if all(number(v) for v in defs[n])}
        if kept == cotangents:
            return cotangents
        cotangents = kept


def number_expression(node: gast.AST, numbers: set[str]) -> bool:
    """Whether `node` is made of `numbers` and number constants by elementwise operators."""
    if isinstance(node, gast.BinOp) and isinstance(node.op, _ELEMENTWISE_OPS):
        return number_expression(node.left, numbers) and \
            number_expression(node.right, numbers)
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        return number_expression(node.operand, numbers)
    return _number(node) or isinstance(node, gast.Name) and node.id in numbers
