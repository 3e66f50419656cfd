"""optimize: what numbers make simpler, dead code, and comments that repeat.

Requires a generated function (forward code, then, in a gradient, `dy = seed(y)` and the
adjoint). Guarantees a function that computes the same values, and the same gradients
wherever the original's are finite, with fewer statements.

A gradient checks that its result is a number (`seed`): every value that reached it
through elementwise operations was a number too, and so is every cotangent made of
them (`analysis.numbers`). Where both are numbers, `unbroadcast(g, like)` is g, so the
adjoint no longer reads forward values for their shapes, and the forward work only the value
needs is dead to numba (`grad` of a scalar loop runs its adjoint only); powers of
numbers fold (`n ** 1`; in the adjoint `e * n ** 0` and the `e * 0 * n ** -1` of the
derivative of `n ** 0`, zero at n = 0 too).

An assignment of a name to itself (`a = a`) is dropped; an assignment to names of a value
without effects is dead where none of those names is
read afterwards (on any path: liveness, backwards, to a fixed point over loops). Forward
mode over a gradient is where that pays: `hvp` needs the tangent of the gradient, not the
gradient itself, so the products that compute the gradient go (and a product whose
tangent is needed is left to `passes.join` only where its value is too).

What has no effect is decided conservatively: operators, subscripts and tuples, NumPy
(np.linalg too) and math functions (not `np.random`, nothing given `out=`), a few
builtins, and srcgrad's helpers that only return a value. Method calls (`tape.pop()`),
calls of generated or user functions, writes into arrays and every other statement stay,
with what they read. A comment whose code went goes with it, and so does a comment inside
a branch or loop that repeats the one in force (`y = a if c else b` is one line, though
an `if`).
"""

from __future__ import annotations

import collections
import copy
import math

import gast
import numpy as np

from .. import builder as b
from ..analysis.numbers import number_expression, numbers, seed_position
from ..analysis.shapes import shape_facts, shape_helpers
from ..rules import fact
from .base import Namespace

_PURE_BUILTINS = frozenset([abs, bool, float, int, len, max, min, range, round, tuple])


def optimize(fn: gast.FunctionDef, ns: Namespace) -> gast.FunctionDef:
    """`fn` without dead code and without repeated comments."""
    fn = dead_code(shaped(fold_numbers(fn, ns), ns), ns)
    fn.body = _unrepeated(fn.body, None)
    return fn


def unvalued(fn: gast.FunctionDef, ns: Namespace) -> gast.FunctionDef:
    r"""`fn` (a copy where changed) with the forward statements that only the check of its
    result reads (`dy = seed(y)`: a gradient does not return its value) under
    `if checking():`, which Python runs (the check needs the value) and numba types (its
    check is made then) but does not run. A lowering: the IR keeps the plain code.

    >>> from srcgrad import runtime
    >>> ns = Namespace(); _ = [ns.bind(n, getattr(runtime, n)) for n in ("seed",)]
    >>> _ = ns.bind("range", range)
    >>> fn = gast.parse("def g(x):\n    s = 0.0\n    n = x.shape[0]\n    for i in range(n):\n"
    ...     "        s = s + x[i] ** 2\n    ds = seed(s)\n    dx = 2.0 * ds * x\n"
    ...     "    return dx").body[0]
    >>> print(gast.unparse(unvalued(fn, ns)).strip())
    def g(x):
        if checking():
            s = 0.0
            n = x.shape[0]
            for i in range(n):
                s = s + x[i] ** 2
        ds = seed(s)
        dx = 2.0 * ds * x
        return dx
    """
    from ..runtime import checking, same_shape
    check = seed_position(fn.body, ns)
    if check is None:
        return fn
    body = list(fn.body)
    body[check] = b.assign(body[check].targets[0], b.const(1.0))   # as if it read nothing
    sweep, live, value_only = _Sweep(ns, prune=True), set(), set()
    for k in reversed(range(len(body))):
        stmt = body[k]
        if k < check and isinstance(stmt, gast.Expr) and ns.called(stmt.value) is same_shape \
                and stmt.value.args[0].id not in live:
            value_only.add(k)   # the check of a value only the result's check reads
            continue
        if not _is_comment(stmt) and sweep.keep(stmt, live, set()) is None and k < check:
            value_only.add(k)
    if not value_only:
        return fn
    test = b.call(ns.bind("checking", checking))
    out: list[gast.stmt] = []
    run: list[gast.stmt] = []   # value-only statements, and the comments among them
    for k, stmt in enumerate(fn.body):
        if k in value_only or _is_comment(stmt) and k + 1 in value_only:
            run.append(stmt)
            continue
        if run:
            out.append(b.make(gast.If, test=test, body=run, orelse=[]))
            run = []
        out.append(stmt)
    fn = copy.copy(fn)
    fn.body = out
    return fn


def _unrepeated(stmts: list[gast.stmt], current: str | None) -> list[gast.stmt]:
    """`stmts` without the comments equal to the one in force (`current`, then the last
    one seen), in nested blocks too (their compound statements copied)."""
    out = []
    for stmt in stmts:
        if _is_comment(stmt):
            if stmt.value.value == current:
                continue
            current = stmt.value.value
        elif isinstance(stmt, (gast.If, gast.For, gast.While)):
            stmt = copy.copy(stmt)
            stmt.body = _unrepeated(stmt.body, current)
            stmt.orelse = _unrepeated(stmt.orelse, current)
        out.append(stmt)
    return out


def dead_code(fn: gast.FunctionDef, ns: Namespace) -> gast.FunctionDef:
    """`fn` without the assignments whose values are never read and have no effect."""
    fn = copy.copy(fn)
    fn.body = _Sweep(ns, prune=True).block(fn.body, set(), set()) or [b.make(gast.Pass)]
    return fn


class _Sweep:
    """Liveness, backwards over a block; with `prune`, nested blocks lose their dead code
    too (a loop's body is pruned once, after its fixed point)."""

    def __init__(self, ns: Namespace, prune: bool):
        self.ns, self.prune = ns, prune

    def block(self, stmts: list[gast.stmt], live: set[str], loop: set[str]
              ) -> list[gast.stmt]:
        """`stmts` without dead code, given the names `live` after them and, inside a
        loop, `loop`: those live where a break or continue jumps. Updates `live` to the
        names live before them."""
        kept: list[gast.stmt] = []
        went = stayed = False  # of the code between this statement and the next comment
        for stmt in reversed(stmts):
            if _is_comment(stmt):
                if stayed or not went:  # else the comment's code all went
                    kept.append(stmt)
                went = stayed = False
            else:
                new = self.keep(stmt, live, loop)
                if new is not None:
                    kept.append(new)
                went, stayed = went or new is None, stayed or new is not None
        return kept[::-1]

    def keep(self, stmt: gast.stmt, live: set[str], loop: set[str]) -> gast.stmt | None:
        """`stmt`, pruned inside (a copy: generated functions share statements), or None
        if it is dead; updates `live` across it."""
        if isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Name) and \
                all(isinstance(t, gast.Name) and t.id == stmt.value.id for t in stmt.targets):
            return None   # `a = a` (a list's adjoint made in a branch): binds nothing new
        if isinstance(stmt, gast.Assign) and self.pure(stmt.value):
            stored = _stored(stmt.targets)
            if stored is not None:
                if not stored & live:
                    return None
                live -= stored
                live |= _reads(stmt.value)
                return stmt
        if isinstance(stmt, gast.Return):
            live.clear()
            live |= _reads(stmt.value) if stmt.value is not None else set()
        elif isinstance(stmt, (gast.Break, gast.Continue)):
            live |= loop
        elif isinstance(stmt, gast.If):
            other = set(live)
            body = self.block(stmt.body, live, loop)
            orelse = self.block(stmt.orelse, other, loop)
            if self.prune and not _code(body) and not _code(orelse) and self.pure(stmt.test):
                live |= other
                return None   # nothing left in either branch
            live |= other | _reads(stmt.test)
            if self.prune:
                stmt = copy.copy(stmt)
                stmt.body, stmt.orelse = body or [b.make(gast.Pass)], orelse
        elif isinstance(stmt, (gast.For, gast.While)):
            after = set(live)
            stmt = self.loop(stmt, live)
            if self.prune and self.empty(stmt) and not (_stored([stmt.target]) or {""}) & after:
                live.clear()
                live |= after
                return None   # a for loop left with nothing to do, whose index nobody reads
        else:
            live |= _reads(stmt)
        return stmt

    def loop(self, stmt: gast.For | gast.While, live: set[str]) -> gast.For | gast.While:
        """Prune a loop's body with the names live at its head, a fixed point: after the
        loop, or read by the next trip before being set."""
        if isinstance(stmt, gast.For):
            head_reads, set_each_trip = _reads(stmt.iter), _stored([stmt.target]) or set()
        else:
            head_reads, set_each_trip = _reads(stmt.test), set()
        after = set(live) | _reads_all(stmt.orelse)
        head = after | head_reads
        analysis = _Sweep(self.ns, prune=False)
        while True:
            inside = set(head)
            analysis.block(stmt.body, inside, head)
            new = after | head_reads | (inside - set_each_trip)
            if new == head:
                break
            head = new
        live |= head
        if self.prune:
            stmt = copy.copy(stmt)
            stmt.body = self.block(stmt.body, set(head), head) or [b.make(gast.Pass)]
        return stmt

    def empty(self, stmt: gast.For | gast.While) -> bool:
        """Whether `stmt` is a `for` loop over a pure iterable with an empty body."""
        return isinstance(stmt, gast.For) and not stmt.orelse and self.pure(stmt.iter) \
            and not _code(stmt.body)

    def pure(self, node: gast.AST) -> bool:
        """Whether evaluating `node` has no effect but its value."""
        for n in gast.walk(node):
            if isinstance(n, (gast.Lambda, gast.NamedExpr, gast.Await, gast.Yield,
                              gast.YieldFrom)):
                return False
            if isinstance(n, gast.Call) and not pure_call(n, self.ns):
                return False
        return True


def pure_call(call: gast.Call, ns: Namespace) -> bool:
    """Whether the generated call `call` only returns a value (changes no argument)."""
    if any(k.arg == "out" for k in call.keywords):
        return False
    fun = ns.resolve(call.func)
    if fun is None:
        return False
    if isinstance(fun, np.ufunc) or fact(fun, "pure") or fun in _PURE_BUILTINS:
        return True
    module = getattr(fun, "__module__", None) or ""
    if getattr(math, getattr(fun, "__name__", ""), None) is fun:
        return True
    name = getattr(fun, "__name__", "")
    return module.startswith("numpy") and not module.startswith("numpy.random") \
        and any(getattr(space, name, None) is fun for space in (np, np.linalg)) \
        and fun not in _NUMPY_WRITERS


_NUMPY_WRITERS = frozenset(getattr(np, n) for n in (
    "copyto", "put", "place", "putmask", "fill_diagonal", "put_along_axis")
    if hasattr(np, n))


def _code(stmts: list[gast.stmt]) -> bool:
    """Whether `stmts` do anything (more than comments and `pass`)."""
    return not all(_is_comment(s) or isinstance(s, gast.Pass) for s in stmts)


def _is_comment(stmt: gast.stmt) -> bool:
    return (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Constant)
            and isinstance(stmt.value.value, str)
            and stmt.value.value.startswith(b.COMMENT_MARK))


def _stored(targets: list[gast.AST]) -> set[str] | None:
    """The names `targets` bind, if they are names and tuples of names only."""
    names: set[str] = set()
    for t in targets:
        if isinstance(t, gast.Name):
            names.add(t.id)
        elif isinstance(t, (gast.Tuple, gast.List)):
            inner = _stored(t.elts)
            if inner is None:
                return None
            names |= inner
        else:
            return None
    return names


def _reads(node: gast.AST) -> set[str]:
    """The names `node` reads (`x += e` reads x)."""
    return {n.id for n in gast.walk(node)
            if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Store)} | {
        n.target.id for n in gast.walk(node)
        if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name)}


def _reads_all(stmts: list[gast.stmt]) -> set[str]:
    return set().union(*(_reads(s) for s in stmts)) if stmts else set()


# ---- what shapes make simpler ----

def shaped(fn: gast.FunctionDef, ns: Namespace) -> gast.FunctionDef:
    r"""`fn` (a copy) where shapes agree (`analysis.shapes`): `unbroadcast(g, like)` written
    g where g has like's shape and is a float that is complex only where like is; and
    where a helper reads its `like` only for its shape and kind (`unbroadcast`,
    `sum_grad`, `mean_grad`, `reshape_as`), a like that has the shape of a value named
    earlier, and is complex exactly where it is, replaced by that value. Where none has
    it, a like of `sum_grad`, `mean_grad`, `reshape_as` (which read no kind) whose value
    nothing else needs (a gradient's check of its result aside) is replaced by a stand-in
    with no data of its shape (`like_broadcast`, `like_reduced` of the values its shape
    is made of). A like made only for its shape is then dead code.

    >>> from srcgrad import runtime
    >>> ns = Namespace(); _ = [ns.bind(n, getattr(runtime, n)) for n in ("unbroadcast", "seed")]
    >>> ns.bind("np", np)
    'np'
    >>> fn = gast.parse("def g(x, w, y):\n    a = x @ w\n    m = np.max(a, axis=1, keepdims=True)\n"
    ...     "    t = a - m\n    s = np.sum(y * t)\n    ds = seed(s)\n"
    ...     "    dt = unbroadcast(ds * y, t)\n    da = unbroadcast(dt, a)\n"
    ...     "    dm = unbroadcast(-dt, m)\n    return da, dm").body[0]
    >>> print(gast.unparse(shaped(fn, ns)).strip())
    def g(x, w, y):
        a = x @ w
        m = np.max(a, axis=1, keepdims=True)
        t = a - m
        s = np.sum(y * t)
        ds = seed(s)
        dt = unbroadcast(ds * y, a)
        da = dt
        dm = unbroadcast(-dt, m)
        return (da, dm)
    """
    fn = copy.deepcopy(fn)
    shapes = shape_facts(fn, ns)
    helpers = shape_helpers()
    same: set[int] = set()   # the unbroadcasts that are their g, by id
    standins: dict = {}   # the likes no named value has the shape of: call id -> stand-in
    for call in [n for n in gast.walk(fn) if isinstance(n, gast.Call) and id(n) in shapes.at]:
        helper = helpers.get(ns.resolve(call.func))
        if len(call.args) < 2 or call.keywords and helper == "unbroadcast":
            continue
        g, like = shapes.of(call, call.args[0]), shapes.of(call, call.args[1])
        if like is None or like.shape is None:
            continue
        if helper == "unbroadcast" and g is not None and g.shape == like.shape and \
                like.shape and g.floating and _as_complex(g, like):
            same.add(id(call))
            continue
        if isinstance(call.args[1], gast.Name):
            # the value made first (kept anyway, more likely than one made after it)
            env = shapes.at[id(call)]
            first = next((n for n, fact in env.items()
                          if fact.shape == like.shape and (fact.numpyish or fact.floating)
                          and _as_complex(fact, like) and _as_complex(like, fact)), None)
            if first is not None and first != call.args[1].id:
                call.args[1] = b.name(first)
            if helper in _SHAPE_ONLY and (like.numpyish or like.floating):
                standin = _stand_in(like.shape, ns)
                if standin is not None:
                    standins[id(call)] = (call, standin)
    return _Unwrap(same).visit(_unneeded(fn, standins, ns))


# the helpers that read their like's shape only, not its kind: the stand-in is real
_SHAPE_ONLY = frozenset(["sum_grad", "mean_grad", "reshape_as"])


def _stand_in(parts: frozenset, ns: Namespace) -> gast.expr | None:
    """A call that makes a value with no data of the shape whose `parts` broadcast
    (`analysis.shapes`): `like_broadcast` of the atoms, `like_reduced` of a reduction's;
    the number 0.0 for no parts. None for one atom (a value of its own shape, not stood
    in for), where a part's axis is not a constant int or tuple, and past the budget."""
    made = _made(parts, ns)
    if made is None or isinstance(made, gast.Name) or \
            sum(isinstance(n, gast.Call) for n in gast.walk(made)) > _STAND_IN_CALLS:
        return None
    return made


# a stand-in of more calls reads worse than the value it saves (gmm's prior, a
# broadcast of four vectors, is one subtraction)
_STAND_IN_CALLS = 2


def _made(parts: frozenset, ns: Namespace) -> gast.expr | None:
    """`_stand_in`'s expression, a name for one atom."""
    from ..runtime import like_broadcast, like_reduced
    made = []
    for part in sorted(parts, key=repr):
        if part[0] == "atom":
            made.append(b.name(part[1]))
            continue
        _, inner, axis, keepdims = part
        x = _made(inner, ns)
        if x is None or not inner or not (axis is None or isinstance(axis, (int, tuple))):
            return None
        axis_node = b.const(None) if axis is None else b.const(axis) if isinstance(axis, int) \
            else b.make(gast.Tuple, elts=[b.const(a) for a in axis], ctx=gast.Load())
        args = [x, axis_node] + ([b.const(True)] if keepdims else [])
        made.append(b.call(ns.bind("like_reduced", like_reduced), *args))
    if not made:
        return b.const(0.0)
    out = made[0]
    for m in made[1:]:
        out = b.call(ns.bind("like_broadcast", like_broadcast), out, m)
    return out


def _unneeded(fn: gast.FunctionDef, standins: dict, ns: Namespace) -> gast.FunctionDef:
    """`fn` with each like of `standins` (call id -> (call, stand-in)) replaced by its
    stand-in where that makes a statement that assigns the like's value unneeded (fewer
    of them are left once dead code goes, the check of a gradient's result aside:
    `unvalued`; a value the forward code needs may still be made again in a loop's adjoint
    only for its shape); to a fixed point, since a like kept makes those its value reads
    needed again."""
    before = _assigned_after_sweep(fn, ns)
    chosen = dict(standins)
    while chosen:
        likes = {k: call.args[1] for k, (call, _) in chosen.items()}
        for call, standin in chosen.values():
            call.args[1] = standin
        kept = _assigned_after_sweep(fn, ns)
        for k, (call, _) in chosen.items():
            call.args[1] = likes[k]
        dropped = {k for k in chosen if kept[likes[k].id] >= before[likes[k].id]}
        if not dropped:
            break
        chosen = {k: v for k, v in chosen.items() if k not in dropped}
    for call, standin in chosen.values():
        call.args[1] = standin
    return fn


def _assigned_after_sweep(fn: gast.FunctionDef, ns: Namespace) -> collections.Counter:
    """How many statements of `fn` assign each name once dead code goes, a gradient's
    check of its result reading nothing."""
    body = list(fn.body)
    check = seed_position(body, ns)
    if check is not None:
        body[check] = b.assign(body[check].targets[0], b.const(1.0))
    kept = _Sweep(ns, prune=True).block(body, set(), set()) or []
    return collections.Counter(
        n for s in kept for node in gast.walk(s) if isinstance(node, gast.stmt) and
        not isinstance(node, (gast.If, gast.For, gast.While))
        for n in _stored_names(node))


def _stored_names(stmt: gast.stmt) -> set[str]:
    """The names statement `stmt` (not a compound one) assigns."""
    return {n.id for n in gast.walk(stmt)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)} | (
        {stmt.target.id} if isinstance(stmt, gast.AugAssign) and
        isinstance(stmt.target, gast.Name) else set())


def _as_complex(a, b) -> bool:
    """Whether the value with fact `a` is complex only where the one with fact `b` is."""
    return a.may is not None and b.must is not None and a.may <= b.must


class _Unwrap(gast.NodeTransformer):
    """The calls whose ids `same` holds (unbroadcasts found to be their g) written g."""

    def __init__(self, same: set[int]):
        self.same = same

    def visit_Call(self, node: gast.Call) -> gast.AST:
        self.generic_visit(node)
        return node.args[0] if id(node) in self.same else node


# ---- what numbers make simpler ----

def fold_numbers(fn: gast.FunctionDef, ns: Namespace) -> gast.FunctionDef:
    r"""`fn` with what holding numbers (rank 0) shows (`analysis.numbers`):
    `unbroadcast(g, like)` written `g` where both do, and exact powers of numbers folded
    (`n ** 1` is n, `e * n ** 0` is e).

    The forward values the adjoint read only for their shapes are then not read: nothing
    keeps the forward code that only the value needs (as Python it still runs, for the
    check; numba's optimiser deletes it where it has no effect). A function without the
    check that its result is a number (a vjp's backward pass: any cotangent) is returned
    as it is.

    >>> from srcgrad import runtime
    >>> ns = Namespace(); _ = [ns.bind(n, getattr(runtime, n)) for n in ("seed", "unbroadcast")]
    >>> fn = gast.parse("def g(x):\n    s = 0.0\n    for i in range(3):\n"
    ...     "        u = x[i]\n        t = u ** 1\n        s = s + t\n    ds = seed(s)\n"
    ...     "    dt = unbroadcast(ds, t)\n    dx = unbroadcast(dt * x, x)\n"
    ...     "    return dx").body[0]
    >>> print(gast.unparse(fold_numbers(fn, ns)).strip())
    def g(x):
        s = 0.0
        for i in range(3):
            u = x[i]
            t = u
            s = s + t
        ds = seed(s)
        dt = ds
        dx = unbroadcast(dt * x, x)
        return dx
    """
    found = numbers(fn, ns)
    if not found:
        return fn
    check = seed_position(fn.body, ns)
    fn = copy.copy(fn)
    fn.body = _rewritten(fn.body[:check], found, ns, False) + \
        _rewritten(fn.body[check:], found, ns, True)
    return fn


def _rewritten(stmts: list[gast.stmt], numbers: set[str], ns: Namespace, adjoint: bool
               ) -> list[gast.stmt]:
    """`stmts` (copies where changed, nested blocks too) with powers of `numbers` folded
    and, in the `adjoint`, `x = unbroadcast(g, like)` written `x = g` where g and like
    are numbers (g made of `numbers`)."""
    from ..runtime import unbroadcast
    out = []
    for stmt in stmts:
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            stmt = copy.copy(stmt)
            stmt.body = _rewritten(stmt.body, numbers, ns, adjoint)
            stmt.orelse = _rewritten(stmt.orelse, numbers, ns, adjoint)
        elif isinstance(stmt, (gast.Assign, gast.AugAssign)):
            value = stmt.value
            call = isinstance(value, gast.Call) and ns.resolve(value.func) is unbroadcast \
                and len(value.args) == 2 and not value.keywords and value.args
            if adjoint and call and isinstance(call[1], gast.Name) and \
                    call[1].id in numbers and number_expression(call[0], numbers):
                value = call[0]
            else:
                value = _folded(value, numbers, adjoint, bound=isinstance(stmt, gast.Assign))
            if value is not stmt.value:
                stmt = copy.copy(stmt)
                stmt.value = value
        out.append(stmt)
    return out


def _folded(node: gast.AST, numbers: set[str], adjoint: bool, bound: bool) -> gast.AST:
    """`node` (a copy where changed) with `n ** 1` written n and, in the `adjoint`,
    `e * n ** 0` written e, for n one of `numbers` (n ** 0 is 1 for every number, NaN and
    inf too, and e * 1 is e; in the forward code, an int e times a float 1.0 is a float,
    and the value keeps its type). `bound`: `node` is the value a name is bound to, which
    then must not become another array's name (an alias where the product made a new
    array)."""
    if isinstance(node, gast.UnaryOp):
        operand = _folded(node.operand, numbers, adjoint, False)
        return node if operand is node.operand else \
            b.make(gast.UnaryOp, op=node.op, operand=operand)
    if not isinstance(node, gast.BinOp):
        return node
    left = _folded(node.left, numbers, adjoint, False)
    right = _folded(node.right, numbers, adjoint, False)
    if isinstance(node.op, gast.Pow) and _named(left, numbers) and _is_int(right, 1):
        return left
    if adjoint and isinstance(node.op, gast.Mult) and _power_of_number(right, numbers, -1) \
            and isinstance(left, gast.BinOp) and isinstance(left.op, gast.Mult) and \
            _is_int(left.right, 0):
        return left   # e * 0 * n ** -1, the derivative of n ** 0: zero where n is too
    if adjoint and isinstance(node.op, gast.Mult):
        for e, power in ((left, right), (right, left)):
            if _power_of_number(power, numbers, 0) and \
                    (not bound or _named(e, numbers) or isinstance(e, (gast.BinOp, gast.UnaryOp))):
                return e
    if left is node.left and right is node.right:
        return node
    return b.make(gast.BinOp, left=left, op=node.op, right=right)


def _power_of_number(node: gast.AST, numbers: set[str], exponent: int) -> bool:
    return isinstance(node, gast.BinOp) and isinstance(node.op, gast.Pow) and \
        _named(node.left, numbers) and _is_int(node.right, exponent)


def _is_int(node: gast.AST, value: int) -> bool:
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        return _is_int(node.operand, -value)
    return isinstance(node, gast.Constant) and type(node.value) is int and node.value == value


def _named(node: gast.AST, names: set[str]) -> bool:
    """Whether `node` is one of `names`, or its negation."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        node = node.operand
    return isinstance(node, gast.Name) and node.id in names
