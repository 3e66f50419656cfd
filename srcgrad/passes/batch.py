"""batch: the outer products a loop's adjoint adds into one array, one per iteration, become
one matrix product after the loop.

The adjoint of `h = np.tanh(W @ x[t] + ...)` in a loop adds an outer product into dW on
every iteration, a rank-one update of the whole matrix each time:

    for t in range(n - 1, -1, -1):
        ...
        add_matmul_lhs_grad(dW, d_t6, W, _t5)

Summed over the iterations, those are one product, sum_t d_t x_t^T = D^T X, which BLAS
computes many times faster than the n updates. So the loop keeps the two vectors of each
iteration as a row of two tapes, and one product after it adds them all:

    for t in range(n - 1, -1, -1):
        ...
        if t == n - 1:
            dW_rows = product_rows(dW, d_t6, W, _t5, n, True)
        keep_product(dW, dW_rows, t, d_t6, W, _t5, True)
    if n > 0:
        add_kept(dW, dW_rows)

Which products are outer products of vectors is known only from the types, so the helpers
decide (`runtime.tapes`): where the product is of other shapes, `keep_product` adds it at
once and `add_kept` adds nothing.

Requires a generated function whose in-place adds of a product's adjoint
(`add_matmul_lhs_grad(out, ...)`, `add_matmul_rhs_grad(out, ...)`) write into an array no
other name holds (passes.reverse writes an adjoint in place only where it owns it).

Guarantees the same function, with each such add that is a statement of a loop's body
itself (not of a branch: it runs once per iteration) kept as above, where

* the loop is `for t in range(n)` or `for t in range(m, -1, -1)` (the forms the adjoint
  of a loop takes) with no `break`, `continue` or `return` in it, and neither t nor what
  the range reads is set in its body: iteration t fills row t, and every row is filled
  once;
* `out` is read nowhere else in the loop, nor is any name that may hold its array (a
  name bound, anywhere in the function, to a value made from it): until the loop ends,
  no one can see that the additions have not happened yet. Additions commute, so the
  sum is the same (up to rounding).

The same loops' adds into both `X[i]` and `X[i + 1]` (the adjoint of a loop reading
`x[i]` and `x[i + 1]`) write two elements per iteration, a dependence from one iteration
to the next through memory that keeps LLVM from vectorising the loop. Iteration i is the
last to add into X[i + 1] (i goes down), so the adds into X[i] are kept in a local and
added, with the next iteration's X[i + 1], once:

    if n > 0:
        dx_carry = zeros_like(dx[n - 1])
    for i in range(n - 1, -1, -1):
        ...
        dx_here = d_t12
        ...
        dx[i + 1] += d_t5 + dx_carry
        dx_carry = dx_here
    if n > 0:
        dx[0] += dx_carry

where nothing else in the loop reads or writes the array (as for the products above),
the array is one the function makes (`zeros_like`), and the values added into X[i] are
new ones (an operator's) read nowhere else, so carrying one to the next iteration is not
seeing it changed there.

A lowering pass: it runs after `optimize`, on the way to source, and the differentiable
form a higher-order transform reads (`compiler.Generated.ir`) is the one before it.
"""

from __future__ import annotations

import copy

import gast
import numpy as np

from .. import builder as b
from ..naming import Namer, names_in
from ..runtime.broadcasting import zeros_like
from ..runtime.matmul import add_matmul_lhs_grad, add_matmul_rhs_grad
from ..runtime.tapes import add_kept, keep_product, product_rows
from .base import Namespace, all_statements

_SIDES = {add_matmul_lhs_grad: True, add_matmul_rhs_grad: False}  # the adder: lhs?


def batch(fn: gast.FunctionDef, ns: Namespace) -> gast.FunctionDef:
    """`fn` with the outer products its loops add into one array kept for one product
    after each loop.

    >>> from srcgrad.codegen import to_source
    >>> ns = Namespace(); _ = ns.bind("range", range)
    >>> _ = ns.bind("add_matmul_lhs_grad", add_matmul_lhs_grad)
    >>> fn = gast.parse("def f(W, xs, d, n):\\n    dW = 0 * W\\n"
    ...                 "    for t in range(n - 1, -1, -1):\\n        x = xs[t]\\n"
    ...                 "        add_matmul_lhs_grad(dW, d, W, x)\\n    return dW").body[0]
    >>> print(to_source(batch(fn, ns)).strip())
    def f(W, xs, d, n):
        dW = 0 * W
        for t in range(n - 1, -1, -1):
            x = xs[t]
            if t == n - 1:
                dW_rows = product_rows(dW, d, W, x, n, True)
            keep_product(dW, dW_rows, t, d, W, x, True)
        if n > 0:
            add_kept(dW, dW_rows)
        return dW
    """
    fn = copy.copy(fn)
    namer = Namer(names_in(fn) | set(ns.entries))
    fn.body = _Batch(fn, ns, namer).block(fn.body)
    return fn


class _Batch:
    def __init__(self, fn: gast.FunctionDef, ns: Namespace, namer: Namer):
        self.fn, self.ns, self.namer = fn, ns, namer

    def block(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            if isinstance(stmt, (gast.If, gast.For, gast.While)):
                stmt = copy.copy(stmt)
                stmt.body, stmt.orelse = self.block(stmt.body), self.block(stmt.orelse)
            if isinstance(stmt, gast.For):
                out.extend(s for part in self.carried(stmt)
                           for s in (self.loop(part) if isinstance(part, gast.For) else [part]))
            else:
                out.append(stmt)
        return out

    def carried(self, loop: gast.For) -> list[gast.stmt]:
        """`loop`, or, where its body adds into both `X[i]` and `X[i + 1]` of a reversed
        loop over i, the loop writing `X[i + 1]` only (and once), the additions into
        `X[i]` carried in a local to the next iteration (whose `X[i + 1]` it is), and the
        last one added after the loop."""
        trips = self.trips(loop)
        it = loop.iter
        if trips is None or len(it.args) != 3:
            return [loop]
        first, count = trips
        i = loop.target.id
        here: dict[str, list[int]] = {}
        ahead: dict[str, list[int]] = {}
        for k, stmt in enumerate(loop.body):
            offset = self.offset(loop.body, k, i)
            if offset is not None:
                (here if offset == 0 else ahead).setdefault(stmt.target.value.id, []) \
                    .append(k)
        out = next((x for x in here if x in ahead and
                    self.carriable(loop, here[x], ahead[x])), None)
        if out is None:
            return [loop]
        local, carry = self.namer.fresh(f"{out}_here"), self.namer.fresh(f"{out}_carry")
        body = list(loop.body)
        for n, k in enumerate(here[out]):
            value = body[k].value if n == 0 else b.binop(b.name(local), gast.Add(),
                                                         body[k].value)
            body[k] = b.assign(local, value)
        add = copy.copy(body[ahead[out][0]])
        add.value = b.binop(add.value, gast.Add(), b.name(carry))
        body[ahead[out][0]] = add
        loop = copy.copy(loop)
        loop.body = body + [b.assign(carry, b.name(local))]
        ran = b.make(gast.Compare, left=copy.deepcopy(count), ops=[gast.Gt()],
                     comparators=[b.const(0)])
        start = b.assign(carry, b.call(self.bind(zeros_like), b.make(
            gast.Subscript, value=b.name(out), slice=copy.deepcopy(first), ctx=gast.Load())))
        last = b.make(gast.AugAssign, op=gast.Add(), value=b.name(carry), target=b.make(
            gast.Subscript, value=b.name(out), slice=b.const(0), ctx=gast.Store()))
        return [b.make(gast.If, test=ran, body=[start], orelse=[]), loop,
                b.make(gast.If, test=copy.deepcopy(ran), body=[last], orelse=[])]

    def offset(self, body: list[gast.stmt], k: int, i: str) -> int | None:
        """0 if `body[k]` is `X[i] += e`, 1 if it is `X[i + 1] += e` (the index written
        there or bound, once in `body`, to a name before it); else None."""
        stmt = body[k]
        if not (isinstance(stmt, gast.AugAssign) and isinstance(stmt.op, gast.Add) and
                isinstance(stmt.target, gast.Subscript) and
                isinstance(stmt.target.value, gast.Name)):
            return None
        index = stmt.target.slice
        if isinstance(index, gast.Name) and index.id == i:
            return 0
        if isinstance(index, gast.Name):
            binds = [j for j, s in enumerate(body) if index.id in _stored(s)]
            if len(binds) != 1 or binds[0] > k or not isinstance(body[binds[0]], gast.Assign):
                return None
            index = body[binds[0]].value
        plus_one = isinstance(index, gast.BinOp) and isinstance(index.op, gast.Add) and \
            isinstance(index.left, gast.Name) and index.left.id == i and _int(index.right) == 1
        return 1 if plus_one else None

    def carriable(self, loop: gast.For, here: list[int], ahead: list[int]) -> bool:
        """Whether the additions `here` and `ahead` (positions in `loop`'s body) are the
        only statements of the loop that read or write their array (one the function makes
        zeros of, in every assignment to its name), under its name or another, and each
        value added `here` is a name bound once in the body, before, to a new value (an
        operator's), that nothing else in the function reads: the carried value is one no
        later statement changes in place."""
        adds = [loop.body[k] for k in here + ahead]
        out = adds[0].target.value.id
        made = [s for s in all_statements(self.fn.body) if out in _stored(s)
                and not isinstance(s, (gast.If, gast.For, gast.While))]
        if out in names_in(self.fn.args) or not all(
                isinstance(s, gast.Assign) and len(s.targets) == 1 and
                isinstance(s.targets[0], gast.Name) and
                self.ns.called(s.value) in (zeros_like, np.zeros, np.zeros_like)
                for s in made):
            return False
        held = self.holders(out, {id(s) for s in adds})
        if any(names_in(s.value) & held for s in adds):
            return False
        if any(names_in(s) & held for s in loop.body if not any(s is a for a in adds)):
            return False
        for k in here:
            value = loop.body[k].value
            if not isinstance(value, gast.Name):
                return False
            binds = [s for s in loop.body if value.id in _stored(s)]
            if len(binds) != 1 or not isinstance(binds[0], gast.Assign) or \
                    not isinstance(binds[0].value, (gast.BinOp, gast.UnaryOp)) or \
                    loop.body.index(binds[0]) > k:
                return False
            readers = [s for s in all_statements(self.fn.body)
                       if value.id in _read(s) and s is not binds[0]]
            if readers != [loop.body[k]]:
                return False
        return True

    def loop(self, loop: gast.For) -> list[gast.stmt]:
        """`loop` with its outer products kept, and the product that adds them after it."""
        trips = self.trips(loop)
        if trips is None:
            return [loop]
        first, count = trips
        adds: dict[str, list[gast.Expr]] = {}
        for stmt in loop.body:
            side = self.side(stmt)
            if side is not None:
                adds.setdefault(stmt.value.args[0].id, []).append(stmt)
        adds = {out: stmts for out, stmts in adds.items() if self.deferrable(loop, stmts)}
        if not adds:
            return [loop]
        kept = {id(s) for stmts in adds.values() for s in stmts}
        body, flush = [], []
        for stmt in loop.body:
            if id(stmt) not in kept:
                body.append(stmt)
                continue
            out_, dy, a, bb = stmt.value.args
            rows = self.namer.fresh(f"{out_.id}_rows")
            side = b.const(self.side(stmt))
            args = [copy.deepcopy(x) for x in (dy, a, bb)]
            make = b.call(self.bind(product_rows), b.name(out_.id), *args,
                          copy.deepcopy(count), side)
            body.append(b.make(gast.If, test=_equal(b.name(loop.target.id), first),
                               body=[b.assign(rows, make)], orelse=[]))
            body.append(b.make(gast.Expr, value=b.call(
                self.bind(keep_product), b.name(out_.id), b.name(rows),
                b.name(loop.target.id), *copy.deepcopy(args), side)))
            flush.append(b.make(gast.Expr, value=b.call(self.bind(add_kept),
                                                        b.name(out_.id), b.name(rows))))
        loop = copy.copy(loop)
        loop.body = body
        test = b.make(gast.Compare, left=copy.deepcopy(count), ops=[gast.Gt()],
                      comparators=[b.const(0)])
        return [loop, b.make(gast.If, test=test, body=flush, orelse=[])]

    def bind(self, fun) -> gast.Name:
        return b.name(self.ns.bind(fun.__name__, fun))

    def trips(self, loop: gast.For) -> tuple[gast.AST, gast.AST] | None:
        """The first value of `loop`'s index and its number of iterations, if it visits
        0, ..., trips - 1 (in some order) with nothing in its body to leave it early or to
        change the index or the range; else None."""
        it = loop.iter
        if loop.orelse or not isinstance(loop.target, gast.Name) or \
                not isinstance(it, gast.Call) or self.ns.resolve(it.func) is not range or \
                it.keywords or any(isinstance(a, gast.Starred) for a in it.args):
            return None
        if len(it.args) == 1:
            first, count = b.const(0), it.args[0]
        elif len(it.args) == 3 and _int(it.args[1]) == -1 and _int(it.args[2]) == -1:
            first = it.args[0]
            count = first.left if isinstance(first, gast.BinOp) and \
                isinstance(first.op, gast.Sub) and _int(first.right) == 1 else \
                b.binop(copy.deepcopy(first), gast.Add(), b.const(1))
        else:
            return None
        stored = {n.id for s in loop.body for n in gast.walk(s)
                  if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        if any(isinstance(n, (gast.Break, gast.Continue, gast.Return))
               for s in loop.body for n in gast.walk(s)) or \
                (names_in(it) & stored) or loop.target.id in stored:
            return None
        return first, count

    def side(self, stmt: gast.stmt) -> bool | None:
        """Whether `stmt` is ``add_matmul_lhs_grad(out, dy, a, b)`` (True) or its rhs
        form (False) on names; else None."""
        if not (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)):
            return None
        call = stmt.value
        side = _SIDES.get(self.ns.resolve(call.func))
        if side is None or call.keywords or len(call.args) != 4 or \
                not all(isinstance(a, gast.Name) for a in call.args):
            return None
        return side

    def deferrable(self, loop: gast.For, adds: list[gast.Expr]) -> bool:
        """Whether nothing in `loop` but `adds` reads or writes the array they add into,
        under its name or another."""
        out = adds[0].value.args[0].id
        held = self.holders(out, {id(s) for s in adds})
        if any(a.id in held for s in adds for a in s.value.args[1:]):
            return False
        others = [s for s in loop.body if not any(s is a for a in adds)]
        return not any(names_in(s) & held for s in others)

    def holders(self, out: str, skip: set[int]) -> set[str]:
        """`out` and the names that may hold its array, or a value that refers to it: a
        fixed point over the function's statements (but those in `skip`), each name a
        statement binds (or passes to a call) joining where the statement reads one."""
        held = {out}
        while True:
            more = set(held)
            for s in all_statements(self.fn.body):
                if id(s) in skip or isinstance(s, gast.Return):
                    continue
                if isinstance(s, (gast.If, gast.While)):
                    if names_in(s.test) & held:   # (a test binds a name with `:=` only)
                        more |= names_in(s.test)
                elif isinstance(s, gast.For):
                    if names_in(s.iter) & held:
                        more |= names_in(s.target)
                elif isinstance(s, gast.Expr) and isinstance(s.value, gast.Call) and \
                        self.ns.resolve(s.value.func) in _SIDES:
                    continue   # adds into its first argument, binds nothing
                elif names_in(s) & held:
                    more |= names_in(s) if isinstance(s, gast.Expr) else \
                        set().union(*(names_in(t) for t in _targets(s)))
            if more == held:
                return held
            held = more


def _read(stmt: gast.stmt) -> set[str]:
    """The names `stmt` reads, itself (a compound statement: in its test or iterable)."""
    if isinstance(stmt, (gast.If, gast.While)):
        return names_in(stmt.test)
    if isinstance(stmt, gast.For):
        return names_in(stmt.iter)
    return {n.id for n in gast.walk(stmt) if isinstance(n, gast.Name) and
            not isinstance(n.ctx, gast.Store)}


def _stored(stmt: gast.stmt) -> set[str]:
    return {n.id for n in gast.walk(stmt) if isinstance(n, gast.Name) and
            isinstance(n.ctx, gast.Store)}


def _targets(stmt: gast.stmt) -> list[gast.AST]:
    if isinstance(stmt, gast.Assign):
        return stmt.targets
    if isinstance(stmt, (gast.AugAssign, gast.AnnAssign)):
        return [stmt.target]
    return [stmt]


def _equal(left: gast.AST, right: gast.AST) -> gast.Compare:
    return b.make(gast.Compare, left=left, ops=[gast.Eq()], comparators=[copy.deepcopy(right)])


def _int(node: gast.AST) -> int | None:
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        inner = _int(node.operand)
        return None if inner is None else -inner
    return node.value if isinstance(node, gast.Constant) and type(node.value) is int else None
