"""scalarise: a run of slice statements inside a loop becomes one index loop.

A stencil step in NumPy, `u[1:-1] = u[1:-1] + a * (u[2:] - 2 * u[1:-1] + u[:-2])`, is, in
A-normal form, nine statements, each a pass over memory and most an array temporary; its
adjoint as many again. Where the statements of a loop body (next to one another, or with
statements between them that may move before them) read and write slices of 1-D arrays
with constant bounds whose lengths are equal for any length of the arrays, the run becomes
one call, and two generated functions, the run as an index loop with scalar temporaries
and the run as it was:

    # line 16: u[1:-1] = u[1:-1] + alpha * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    _t1, _t8, _t9 = u_slices(u, alpha)
    ...
    def u_loop(u, alpha):
        n = u.shape[0]
        u_im1 = u[0]
        for i in range(1, n - 1):
            u_i = u[i]
            u[i] = u_i + alpha * (u[i + 1] - 2.0 * u_i + u_im1)
            u_im1 = u_i
        return u[1:-1], u[1:-1], u[1:-1]

    @scalarised(u_loop, 3, (1, -2), (1, 0, 1, 0))
    def u_slices(u, alpha):
        _t1 = u[1:-1]
        ...   # the statements as they were

Compiled, a call of `u_slices` runs `u_loop` where the loop computes what the slices do
(`runtime.scalarised`: 1-D float64 arrays of one length, long enough that no slice is
clipped or empty, sharing no memory; numbers that are numbers), else the slices; as
Python, the slices (NumPy).

NumPy computes a statement's whole right-hand side before it writes, and each statement
before the next; the loop computes one entry of every statement per step. Each array's
reads and writes, at their offsets from the loop index, are checked against that order:
a read of an entry that an earlier step of the loop has already written, where NumPy
reads the old value, takes the old value from a scalar the loop carries (`u_im1` above:
the array has one write in the run); a read that NumPy makes after a write and the loop
before it, or two writes in the wrong order, end the run there (a run is split where the
fewest values cross; values read after it are kept in arrays). Additions into an array
(`du[:-2] += ...; du[2:] += ...`) commute, up to the rounding of their order.

Values of the run read after it: an array the loop fills, or, where they are read for
their shape only (`unbroadcast(g, _t9)`), a slice of the right length. Tapes are not
touched: a statement that is not of the run (`record(u_tape, _, u[1:-1])`, the restore
`u[1:-1] = u_tape[_]`) moves before the run where it reads nothing the run's earlier
statements write and writes nothing they read, else it ends the run.

A lowering pass, after `optimize` (the IR higher orders read is the one before it).
"""

from __future__ import annotations

import copy
import dataclasses
import itertools

import gast
import numpy as np

from .. import builder as b
from .. import runtime
from ..rules import fact
from .base import GeneratedFunction, Namespace, all_statements
from .fuse import _Fuse, _operands
from .optimize import _is_comment, pure_call

_ARITHMETIC = (gast.Add, gast.Sub, gast.Mult, gast.Div)


def scalarise(functions: list[gast.FunctionDef], ns: Namespace) -> list[gast.FunctionDef]:
    """`functions` with the runs of slice statements of their loops as `scalarised`
    calls, and the loop and slice functions those call appended.

    >>> import numpy as np, gast
    >>> from srcgrad.passes.base import Namespace
    >>> from srcgrad.codegen import to_source
    >>> ns = Namespace()
    >>> tree = gast.parse('''
    ... def f(u, a):
    ...     for _ in range(3):
    ...         _t1 = u[2:] - u[:-2]
    ...         u[1:-1] = a * _t1
    ... ''')
    >>> print(to_source(gast.Module(body=scalarise(tree.body, ns), type_ignores=[])))
    def f(u, a):
        for _ in range(3):
            u_slices(u, a)
    <BLANKLINE>
    <BLANKLINE>
    def u_loop(u, a):
        n = u.shape[0]
        u_im1 = u[0]
        for i in range(1, n - 1):
            u_i = u[i]
            u[i] = a * (u[i + 1] - u_im1)
            u_im1 = u_i
    <BLANKLINE>
    <BLANKLINE>
    @scalarised(u_loop, 3, (1, -2), (1, 0, 1, 0))
    def u_slices(u, a):
        _t1 = u[2:] - u[:-2]
        u[1:-1] = a * _t1
    <BLANKLINE>
    """
    taken = {n.id for f in functions for n in gast.walk(f) if isinstance(n, gast.Name)}
    taken |= {f.name for f in functions}
    made: list[gast.FunctionDef] = []
    out = [_Scalarise(fn, ns, taken, made).run() for fn in functions]
    return out + made


@dataclasses.dataclass(frozen=True)
class _Slice:
    """`base[start:stop]`, each bound `(k, c)`: k * n + c for arrays of n entries."""

    base: str
    start: tuple[int, int]
    stop: tuple[int, int]

    @property
    def length(self) -> tuple[int, int]:
        return self.stop[0] - self.start[0], self.stop[1] - self.start[1]

    def least(self) -> int:
        """The fewest entries for which neither bound is clipped and the slice is not
        empty."""
        bounds = [c if k == 0 else -c for k, c in (self.start, self.stop)]
        k, c = self.length
        return max(bounds + [1 - c if k else 0])


def _bound(node: gast.AST | None, stop: bool) -> tuple[int, int] | None:
    if node is None:
        return (1, 0) if stop else (0, 0)
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        inner = _bound(node.operand, stop)
        return None if inner is None or inner[0] or inner[1] <= 0 else (1, -inner[1])
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return (0, node.value) if node.value >= 0 else (1, node.value)
    return None


def _slice_of(node: gast.AST) -> _Slice | None:
    """`x[a:b]`, x a name, a and b int constants or absent, as a `_Slice`."""
    if not (isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name)
            and isinstance(node.slice, gast.Slice) and node.slice.step is None):
        return None
    start, stop = _bound(node.slice.lower, False), _bound(node.slice.upper, True)
    if start is None or stop is None:
        return None
    return _Slice(node.value.id, start, stop)


def _whole(node: gast.AST) -> set[str]:
    """The names `node` reads whole, not as the array of a slice `x[a:b]`."""
    if _slice_of(node) is not None:
        return set()
    if isinstance(node, gast.Name):
        return {node.id}
    return set().union(*map(_whole, gast.iter_child_nodes(node)))


@dataclasses.dataclass
class _Access:
    base: str
    offset: int          # start of the slice minus the loop's
    position: tuple[int, int]  # (statement, 0 read / 1 write)
    write: bool
    add: bool = False    # the read or write of an addition into the slice (`+=`, `-=`)


class _Scalarise:
    def __init__(self, fn: gast.FunctionDef, ns: Namespace, taken: set[str],
                 made: list[gast.FunctionDef]):
        self.fn, self.ns, self.taken, self.made = fn, ns, taken, made

    def run(self) -> gast.FunctionDef:
        if not any(isinstance(s, (gast.For, gast.While)) for s in all_statements(self.fn.body)):
            return self.fn
        fn = copy.deepcopy(self.fn)
        fusing = _Fuse.__new__(_Fuse)   # its alias analysis (views), not its kernels
        fusing.ns = self.ns
        self.aliases = fusing.alias_groups(fn)
        self.vectors = self.evidence(fn)
        self.exposed = _exposed(fn)
        self.witness = {id(c.args[1]) for c in gast.walk(fn) if isinstance(c, gast.Call)
                        and self.called(c, runtime.unbroadcast) and len(c.args) == 2}
        self.fn_tree = fn
        fn.body = self.block(fn.body, False)
        return fn

    def called(self, node: gast.AST, fun) -> bool:
        return isinstance(node, gast.Call) and self.ns.resolve(node.func) is fun \
            and not node.keywords

    def evidence(self, fn: gast.FunctionDef) -> set[str]:
        """Names assigned arrays somewhere: from slices, or computed from such names (an
        `unbroadcast` has its second argument's shape). What the runtime checks anyway:
        this only says which names the loop reads whole rather than as numbers."""
        assigns = [s for s in all_statements(fn.body) if isinstance(s, gast.Assign)
                   and isinstance(s.targets[0], gast.Name)]
        arrays: set[str] = set()

        def array(node: gast.AST) -> bool:
            if _slice_of(node) is not None:
                return True
            if isinstance(node, gast.Name):
                return node.id in arrays
            if self.called(node, runtime.unbroadcast) and len(node.args) == 2:
                return array(node.args[1])
            if self.called(node, runtime.snapshot):
                return array(node.args[0])
            if isinstance(node, (gast.BinOp, gast.UnaryOp)):
                return any(array(c) for c in _operands(node))
            return False
        while True:
            new = {s.targets[0].id for s in assigns if array(s.value)}
            if new <= arrays:
                return arrays
            arrays |= new

    # ---- runs ----
    def block(self, stmts: list[gast.stmt], in_loop: bool) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for s in stmts:
            if isinstance(s, (gast.For, gast.While)):
                s.body = self.block(s.body, True)
                s.orelse = self.block(s.orelse, in_loop)
            elif isinstance(s, gast.If):
                s.body = self.block(s.body, in_loop)
                s.orelse = self.block(s.orelse, in_loop)
        if not in_loop:
            return stmts
        k = 0
        while k < len(stmts):
            run, moved, comments, end = self.collect(stmts, k)
            if len(run) < 2:
                out.append(stmts[k])
                k += 1
                continue
            pieces, lowered = self.split(run), []
            for p, piece in enumerate(pieces):
                after = [s for later in pieces[p + 1:] for s in later] + stmts[end:]
                lowered += self.lower(piece, after, comments) if len(piece) > 1 else [piece[0]]
            # nothing lowered: the statements stay in their order, under their lines
            unchanged = all(any(t is s for s in run) for t in lowered)
            out += stmts[k:end] if unchanged else comments + moved + lowered
            k = end
        return out

    def collect(self, stmts: list[gast.stmt], k: int):
        """The run starting at `stmts[k]`: its statements, the statements moved before
        it, its comments, and where it ends."""
        run: list[gast.stmt] = []
        moved: list[gast.stmt] = []
        comments: list[gast.stmt] = []
        j = k
        while j < len(stmts):
            s = stmts[j]
            if _is_comment(s):
                comments.append(s)
            elif self.member(s):
                run.append(s)
            elif run and self.movable(s, run):
                moved.append(s)
            else:
                break
            j += 1
        while j > k and (_is_comment(stmts[j - 1]) or stmts[j - 1] in moved) \
                and not any(stmts[j - 1] is r for r in run):
            j -= 1   # what follows the run's last statement is not of it
            if _is_comment(stmts[j]):
                comments.pop()
            else:
                moved.pop()
        if not run:
            return [], [], [], k
        return run, moved, comments, j

    def member(self, s: gast.stmt) -> bool:
        """Whether `s` is a statement a run may hold (its form; `plan` checks the rest)."""
        if isinstance(s, gast.Assign) and len(s.targets) == 1:
            target = s.targets[0]
            if isinstance(target, gast.Name):
                return self.expression(s.value)
            return _slice_of(target) is not None and self.expression(s.value)
        if isinstance(s, gast.AugAssign):
            if isinstance(s.target, gast.Name):   # `da += unbroadcast(g, a)`: a sum
                return isinstance(s.op, gast.Add) and self.called(s.value, runtime.unbroadcast) \
                    and len(s.value.args) == 2 and isinstance(s.value.args[1], gast.Name) \
                    and self.expression(s.value.args[0])
            return _slice_of(s.target) is not None and isinstance(s.op, (gast.Add, gast.Sub)) \
                and self.expression(s.value)
        return False

    def expression(self, node: gast.AST) -> bool:
        if isinstance(node, gast.Name):
            return True
        if isinstance(node, gast.Constant):
            return type(node.value) in (int, float)
        if isinstance(node, gast.Subscript):
            return _slice_of(node) is not None
        if isinstance(node, gast.BinOp):
            return isinstance(node.op, _ARITHMETIC) and self.expression(node.left) \
                and self.expression(node.right)
        if isinstance(node, gast.UnaryOp):
            return isinstance(node.op, (gast.USub, gast.UAdd)) and self.expression(node.operand)
        if self.called(node, runtime.snapshot) and len(node.args) == 1:
            return self.expression(node.args[0])
        if self.called(node, runtime.unbroadcast) and len(node.args) == 2:
            return isinstance(node.args[1], gast.Name) and self.expression(node.args[0])
        return False

    # ---- what statements read and write (names, with what they may share memory with)
    def spread(self, names: set[str]) -> set[str]:
        return set().union(names, *(self.aliases.get(n, ()) for n in names))

    def effects(self, s: gast.stmt) -> tuple[set[str], set[str], set[str], set[str]]:
        """The names `s` reads, the arrays it reads (with what may share their memory),
        the names it binds, the arrays it writes into."""
        reads, binds, writes = set(), set(), set()
        for n in gast.walk(s):
            if isinstance(n, gast.Name):
                (binds if isinstance(n.ctx, gast.Store) else reads).add(n.id)
            elif isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store):
                writes |= {x.id for x in gast.walk(n.value) if isinstance(x, gast.Name)}
            elif isinstance(n, gast.Call) and not pure_call(n, self.ns):
                at = fact(self.ns.resolve(n.func), "writes")
                args = n.args if at is None or n.keywords else n.args[at:at + 1]
                writes |= {x.id for a in args for x in gast.walk(a) if isinstance(x, gast.Name)}
        return reads, self.spread(reads), binds, self.spread(writes)

    def movable(self, s: gast.stmt, before: list[gast.stmt]) -> bool:
        """Whether `s` may run before the statements `before` (it follows them)."""
        if any(isinstance(n, (gast.Return, gast.Break, gast.Continue, gast.Raise,
                              gast.For, gast.While)) for n in gast.walk(s)) \
                or not isinstance(s, (gast.Assign, gast.AugAssign, gast.Expr, gast.If)):
            return False
        names, reads, binds, writes = self.effects(s)
        for r in before:
            their_names, their_reads, their_binds, their_writes = self.effects(r)
            if binds & (their_names | their_binds) or their_binds & names \
                    or writes & (their_reads | their_writes) or their_writes & reads:
                return False
        return True

    # ---- planning ----
    def split(self, run: list[gast.stmt]) -> list[list[gast.stmt]]:
        """`run` in pieces that `plan` accepts (a piece of one statement stays as it
        is), each split where the fewest values cross."""
        pieces: list[list[gast.stmt]] = []
        current: list[gast.stmt] = []
        for k, s in enumerate(run):
            if self.plan(current + [s]) is not None or not current:
                current.append(s)
                continue
            cuts = [p for p in range(1, len(current) + 1)
                    if self.plan(current[p:] + [s]) is not None or p == len(current)]
            p = min(cuts, key=lambda p: (_crossing(current[:p], current[p:] + run[k:]), -p))
            pieces.append(current[:p])
            current = current[p:] + [s]
        if current:
            pieces.append(current)
        return pieces

    def plan(self, run: list[gast.stmt]) -> _Plan | None:
        """What the loop of `run` needs, or None if it cannot compute what `run` does."""
        if len(run) < 2:
            return _Plan.empty() if run else None
        temps: dict[str, gast.stmt] = {}
        views: dict[str, gast.Subscript] = {}
        sums: dict[str, str] = {}     # accumulator -> the number it is summed to
        read: set[str] = set()
        likes: set[str] = set()
        for s in run:
            if isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Name):
                like = s.value.args[1].id
                if s.target.id in sums or s.target.id in temps:
                    return None
                sums[s.target.id] = like
                read |= self.loads(s.value.args[0], temps, views, likes)
                continue
            read |= self.loads(s.value, temps, views, likes)
            target = s.targets[0] if isinstance(s, gast.Assign) else s.target
            if isinstance(target, gast.Name):
                if target.id in temps or target.id in read or target.id in likes:
                    return None   # assigned twice, or read before (another value)
                temps[target.id] = s
                if _slice_of(s.value) is not None:
                    views[target.id] = s.value
            else:
                read.add(target.value.id)
        slices = [sl for s in run for n in gast.walk(s)
                  for sl in [_slice_of(n)] if sl is not None]
        bases = {sl.base for sl in slices}
        free = read - bases - set(temps)
        numbers = {n for n in free if n not in self.vectors} | set(sums.values())
        vectors = free - numbers
        likes -= vectors   # (a vector's length is checked as a like's)
        if bases & set().union(*(_whole(s.value) for s in run)):
            return None   # `s[:] += s`: a sliced array read whole too (fuzz seed 9997058)
        if set(sums) & (read | bases | likes | set(temps)) or bases & (likes | set(temps)) \
                or numbers & (bases | likes | vectors) or set(sums.values()) & (likes | bases):
            return None
        if not slices or len({(sl.start[0], sl.length) for sl in slices}) != 1:
            return None
        if slices[0].length[0] not in (0, 1) or (
                slices[0].length[0] == 0 and slices[0].length[1] < 1):
            return None
        scalar = {t for t, s in temps.items() if not self.is_array(s.value, temps, vectors)}
        if not all(self.is_array(c.args[0], temps, vectors) for s in run for c in gast.walk(s)
                   if self.called(c, runtime.unbroadcast)):
            return None   # a number unbroadcast: broadcast, or summed
        written = [sl for s in run if not isinstance(s, gast.AugAssign) or not isinstance(
            s.target, gast.Name) for sl in [_slice_of(
                s.targets[0] if isinstance(s, gast.Assign) else s.target)] if sl is not None]
        # the loop's index is that of the slice written most often (the first of them)
        ref = max(written, key=written.count) if written else slices[0]
        accesses = self.accesses(run, views, ref)
        carries = {}
        for base in bases:
            carry = _carry([a for a in accesses if a.base == base])
            if carry is False:
                return None
            if carry is not None:
                carries[base] = carry
        return _Plan(temps, views, sums, bases, vectors, numbers | set(sums), likes, scalar,
                     ref, max(sl.least() for sl in slices), carries)

    def loads(self, node: gast.AST, temps: dict, views: dict, likes: set[str]) -> set[str]:
        """The names `node` reads for their values; the shapes it reads go to `likes`."""
        if self.called(node, runtime.unbroadcast):
            like = node.args[1].id
            if like not in temps:
                likes.add(like)
            return self.loads(node.args[0], temps, views, likes)
        if isinstance(node, gast.Name):
            return {node.id}
        out = set()
        for c in node.args if isinstance(node, gast.Call) else gast.iter_child_nodes(node):
            out |= self.loads(c, temps, views, likes)
        return out

    def is_array(self, node: gast.AST, temps: dict, vectors: set[str]) -> bool:
        if _slice_of(node) is not None:
            return True
        if isinstance(node, gast.Name):
            return node.id in vectors or (node.id in temps and self.is_array(
                temps[node.id].value, temps, vectors))
        if self.called(node, runtime.unbroadcast):
            return self.is_array(node.args[0], temps, vectors)
        return any(self.is_array(c, temps, vectors) for c in _operands(node))

    def accesses(self, run: list[gast.stmt], views: dict, ref: _Slice) -> list[_Access]:
        out = []
        for k, s in enumerate(run):
            value = s.value.args[0] if isinstance(s, gast.AugAssign) and isinstance(
                s.target, gast.Name) else s.value
            for n in gast.walk(value):
                if isinstance(n, gast.Name) and n.id in views:
                    n = views[n.id]
                sl = _slice_of(n)
                if sl is not None:
                    out.append(_Access(sl.base, sl.start[1] - ref.start[1], (k, 0), False))
            target = s.targets[0] if isinstance(s, gast.Assign) else s.target
            sl = _slice_of(target)
            if sl is not None:
                offset, add = sl.start[1] - ref.start[1], isinstance(s, gast.AugAssign)
                if add:
                    out.append(_Access(sl.base, offset, (k, 0), False, True))
                out.append(_Access(sl.base, offset, (k, 1), True, add))
        return out

    # ---- lowering ----
    def lower(self, run: list[gast.stmt], after: list[gast.stmt],
              comments: list[gast.stmt]) -> list[gast.stmt]:
        plan = self.plan(run)
        outside = self.read_after(run, after, plan)
        if plan is None or outside is None or set(plan.temps) == set(plan.views) and all(
                isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) for s in run):
            return run   # (views only: the loop would compute nothing)
        kept, shapes = outside
        label = next((sl.base for s in run for sl in [_slice_of(
            s.targets[0] if isinstance(s, gast.Assign) else s.target)] if sl is not None),
            plan.ref.base)
        bases = sorted(plan.bases, key=_first_use(run))
        vectors = sorted(plan.vectors, key=_first_use(run))
        numbers = sorted(plan.numbers, key=_first_use(run))
        likes = sorted(plan.likes, key=_first_use(run))
        params = bases + vectors + numbers + likes
        results = [t for t in plan.temps if t in kept or t in shapes] + list(plan.sums)
        made = self.loop_function(f"{label}_loop", params, run, plan, kept, shapes, results)
        if not next(s for s in made.body if isinstance(s, gast.For)).body:
            return run   # (what it computes is read for its shape only)
        loop = self.ns.bind(f"{label}_loop", GeneratedFunction(), avoid=self.taken)
        slices = self.ns.bind(f"{label}_slices", GeneratedFunction(), avoid=self.taken)
        self.taken |= {loop, slices}
        made.name = loop
        made.body[:0] = copy.deepcopy(comments)   # the user's lines it computes
        self.made.append(made)
        tail = [b.ret(_pack(results))] if results else []
        groups = b.tuple_([b.const(len(g)) for g in (bases, vectors, numbers, likes)])
        fn = b.function(slices, params, copy.deepcopy(run) + tail)
        fn.decorator_list = [b.call(b.name(self.ns.bind("scalarised", runtime.scalarised)),
                                    b.name(loop), b.const(plan.least),
                                    b.tuple_([b.const(c) for c in plan.ref.length]), groups)]
        self.made.append(fn)
        call = b.call(b.name(slices), *[b.name(p) for p in params])
        if not results:
            return [b.located(b.make(gast.Expr, value=call), run[0])]
        target = b.tuple_([b.name(r, store=True) for r in results], store=True) \
            if len(results) > 1 else b.name(results[0], store=True)
        return [b.located(b.assign(target, call), run[0])]

    def read_after(self, run: list[gast.stmt], after: list[gast.stmt], plan: _Plan | None):
        """The temporaries of `run` read after it (`after`: the rest of its block), or
        where a loop comes back to them (for their values, and for their shapes only), or
        None where one is a number."""
        if plan is None:
            return None
        inside = {id(n) for s in run for n in gast.walk(s)}
        later = {id(n) for s in after for n in gast.walk(s)}
        kept, shapes = set(), set()
        for n in gast.walk(self.fn_tree):
            if isinstance(n, gast.Name) and n.id in plan.temps and id(n) not in inside \
                    and (id(n) in self.exposed or id(n) in later):
                (shapes if id(n) in self.witness else kept).add(n.id)
        shapes -= kept
        if (kept | shapes) & plan.scalar:
            return None
        return kept, shapes

    def loop_function(self, name: str, params: list[str], run: list[gast.stmt],
                      plan: _Plan, kept: set[str], shapes: set[str], results: list[str]
                      ) -> gast.FunctionDef:
        local = set(params) | set(plan.temps)
        fresh = _Fresh(local | self.taken)
        n, i = fresh("n"), fresh("i")
        ref = plan.ref

        def bound(kc: tuple[int, int]) -> gast.AST:
            k, c = kc
            if not k:
                return b.const(c)
            if not c:
                return b.name(n)
            return b.binop(b.name(n), gast.Add() if c > 0 else gast.Sub(), b.const(abs(c)))

        def at(offset: int) -> gast.AST:
            if not offset:
                return b.name(i)
            return b.binop(b.name(i), gast.Add() if offset > 0 else gast.Sub(),
                           b.const(abs(offset)))

        start = bound(ref.start)
        rel = b.binop(b.name(i), gast.Sub(), copy.deepcopy(start)) \
            if not (isinstance(start, gast.Constant) and start.value == 0) else b.name(i)
        old = {base: {o: fresh(f"{base}_{_suffix(o)}")
                      for o in range(c.write - c.depth, c.write + 1)} if c.depth else {}
               for base, c in plan.carries.items()}
        # an addition held back: its value of k steps ago in late[k] (late[0] this step's)
        late = {k: [fresh(f"{_target(run[k])}_late{'' if d == 1 else a}")
                    for a in range(d + 1)] if d > 1 else [fresh(f"{_target(run[k])}_late")] * 2
                for c in plan.carries.values() for k, d in c.delays.items()}
        flush: dict[int, list[gast.stmt]] = {}   # after the write of statement k
        body: list[gast.stmt] = [b.assign(n, b.subscript(b.make(
            gast.Attribute, value=b.name(ref.base), attr="shape", ctx=gast.Load()), b.const(0)))]
        for t in plan.temps:
            if t in kept and t not in plan.views:
                empty = b.make(gast.Attribute, value=b.name(self.ns.bind("np", np)),
                               attr="empty", ctx=gast.Load())
                body.append(b.assign(t, b.call(empty, bound(ref.length))))
        for base, c in plan.carries.items():
            for o in range(c.write - c.depth, c.write):
                body.append(b.assign(old[base][o], b.subscript(
                    b.name(base), bound((ref.start[0], ref.start[1] + o)))))
            for k, d in c.delays.items():
                body += [b.assign(name, b.const(0.0)) for name in dict.fromkeys(late[k][1:])]
                flush.setdefault(c.at, []).append(b.make(
                    gast.AugAssign, target=b.subscript(b.name(base), at(c.write), store=True),
                    op=copy.deepcopy(run[k].op), value=b.name(late[k][d])))
        loop: list[gast.stmt] = [b.assign(old[base][c.write], b.subscript(b.name(base),
                                                                          at(c.write)))
                                 for base, c in plan.carries.items() if c.depth]
        uses = {t: sum(isinstance(n, gast.Name) and n.id == t for s in run
                       for n in gast.walk(s)) for t in plan.temps}
        written = {base: c.at for base, c in plan.carries.items()}
        values: dict[str, gast.AST] = {}

        def scalar(node: gast.AST, k: int) -> gast.AST:
            if isinstance(node, gast.Name):
                if node.id in plan.views:
                    return scalar(plan.views[node.id], k)
                if node.id in values:
                    return values.pop(node.id)
                if node.id in plan.temps and node.id in kept:
                    return b.subscript(b.name(node.id), copy.deepcopy(rel))
                if node.id in plan.vectors:
                    return b.subscript(b.name(node.id), copy.deepcopy(rel))
                return b.name(node.id)
            sl = _slice_of(node)
            if sl is not None:
                offset = sl.start[1] - ref.start[1]
                carry = plan.carries.get(sl.base)
                if carry is not None and carry.depth and k <= written[sl.base] \
                        and offset <= carry.write:
                    return b.name(old[sl.base][offset])
                return b.subscript(b.name(sl.base), at(offset))
            if self.called(node, runtime.snapshot):
                return scalar(node.args[0], k)
            if self.called(node, runtime.unbroadcast):
                return scalar(node.args[0], k)
            node = copy.copy(node)
            return b.map_children(node, lambda c: scalar(c, k) if isinstance(
                c, (gast.expr)) and not isinstance(c, gast.operator) else c)

        for k, s in enumerate(run):
            if isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Name):
                loop.append(b.make(gast.AugAssign, target=b.name(s.target.id, store=True),
                                   op=gast.Add(), value=scalar(s.value.args[0], k)))
                continue
            target = s.targets[0] if isinstance(s, gast.Assign) else s.target
            if isinstance(target, gast.Name):
                t = target.id
                if t in plan.views:
                    continue
                value = scalar(s.value, k)
                if t in kept:
                    loop.append(b.assign(b.subscript(b.name(t), copy.deepcopy(rel),
                                                     store=True), value))
                elif uses[t] == 2 and not self.writes_between(run, k, t):
                    values[t] = value   # read once, nothing written in between: inline
                else:
                    loop.append(b.assign(t, value))
                continue
            sl = _slice_of(target)
            store = b.subscript(b.name(sl.base), at(sl.start[1] - ref.start[1]), store=True)
            carry = plan.carries.get(sl.base)
            if carry is not None and k in carry.delays:
                loop.append(b.assign(late[k][0], scalar(s.value, k)))
            elif isinstance(s, gast.AugAssign):
                loop.append(b.make(gast.AugAssign, target=store, op=copy.deepcopy(s.op),
                                   value=scalar(s.value, k)))
            else:
                loop.append(b.assign(store, scalar(s.value, k)))
            loop += flush.get(k, [])
        for base, c in plan.carries.items():
            names = [old[base][o] for o in range(c.write - c.depth, c.write + 1)] \
                if c.depth else []
            for k, d in c.delays.items():
                names += late[k][::-1] if d > 1 else []
            for older, newer in itertools.pairwise(names):
                loop.append(b.assign(older, b.name(newer)))
        body.append(b.make(gast.For, target=b.name(i, store=True),
                           iter=b.call(b.name("range"), start, bound(ref.stop)),
                           body=loop, orelse=[]))
        for c in plan.carries.values():   # what the last steps held back: entries no step
            for k, d in c.delays.items():  # of the loop writes
                offset = _slice_of(run[k].target).start[1] - ref.start[1]
                for age in range(1, d + 1):
                    body.append(b.make(gast.AugAssign, target=b.subscript(
                        b.name(_target(run[k])), bound((ref.stop[0], ref.stop[1] + offset - age)),
                        store=True), op=copy.deepcopy(run[k].op), value=b.name(late[k][age])))
        returned = [copy.deepcopy(plan.views[t]) if t in plan.views  # (a view: made again)
                    else b.name(t) if t in kept else b.subscript(
            b.name(ref.base), b.make(gast.Slice, lower=_bound_node(ref.start, False),
                                     upper=_bound_node(ref.stop, True), step=None))
            for t in results if t not in plan.sums] + [b.name(s) for s in plan.sums]
        if results:
            body.append(b.ret(_pack(returned)))
        fn = b.function(name, params, body)
        _unread(fn, next(s for s in body if isinstance(s, gast.For)))
        return fn

    def writes_between(self, run: list[gast.stmt], k: int, t: str) -> bool:
        """Whether a statement of `run` after `run[k]`, before the one reading `t`,
        writes into an array."""
        for s in run[k + 1:]:
            if any(isinstance(n, gast.Name) and n.id == t and isinstance(n.ctx, gast.Load)
                   for n in gast.walk(s)):
                return False
            target = s.targets[0] if isinstance(s, gast.Assign) else s.target
            if not isinstance(target, gast.Name):
                return True
        return True


@dataclasses.dataclass
class _Carry:
    """How the loop keeps one array's accesses in NumPy's order: its writes are at offset
    `write`, the first in statement `at`; it keeps the old values of the `depth` entries
    behind the write (reads before the write, of entries earlier steps wrote); and an
    addition after a plain write, into an entry ahead of it (`delays`: statement -> how
    many steps ahead), is held in scalars until the step that writes that entry."""

    write: int
    at: int
    depth: int
    delays: dict


@dataclasses.dataclass
class _Plan:
    """What the loop of a run needs: its temporaries (those that are views of slices
    among them), its sums into numbers, its arguments by group, its temporaries that are
    numbers, the slice its index follows, the fewest entries it serves, and how it keeps
    each array's accesses in order (`_Carry`)."""

    temps: dict
    views: dict
    sums: dict
    bases: set
    vectors: set
    numbers: set
    likes: set
    scalar: set
    ref: _Slice | None
    least: int
    carries: dict

    @classmethod
    def empty(cls) -> _Plan:
        return cls({}, {}, {}, set(), set(), set(), set(), set(), None, 0, {})


def _carry(accesses: list[_Access]) -> _Carry | None | bool:
    """How the loop keeps the order of one array's accesses (in the order NumPy makes
    them): None as it is, a `_Carry`, or False if it cannot.

    Entry e is read or written by an access at offset o in step e - o; an earlier access
    (in NumPy's order) must come first in the loop: at a larger offset, or the same one.
    Additions commute with one another. An addition after the one plain write, into an
    entry ahead of it, waits for the step that writes that entry: it takes the write's
    offset."""
    writes = [a for a in accesses if a.write]
    if not writes or all(a.add for a in accesses):
        return None   # only read, or only added into: additions commute
    plain = [a for a in writes if not a.add]
    delays: dict[int, int] = {}
    if len(plain) == 1:
        w = plain[0]
        after = [a for a in accesses if a.position > w.position]
        before = [a for a in accesses if a.position < w.position]
        if all(a.add for a in after) and not any(a.add for a in before):
            for a in after:
                if a.offset > w.offset:
                    delays[a.position[0]] = a.offset - w.offset
            accesses = [dataclasses.replace(a, offset=w.offset)
                        if a.position[0] in delays else a for a in accesses]
            writes = [a for a in accesses if a.write]
    depth = 0
    for j, first in enumerate(accesses):
        for then in accesses[j + 1:]:
            if not (first.write or then.write) or first.offset >= then.offset \
                    or first.add and then.add:   # additions commute
                continue
            if first.write or len({a.offset for a in writes}) > 1:
                return False
            depth = max(depth, then.offset - first.offset)
    if not depth and not delays:
        return None
    return _Carry(writes[0].offset, writes[0].position[0], depth, delays)


class _Fresh:
    def __init__(self, taken: set[str]):
        self.taken = set(taken)

    def __call__(self, base: str) -> str:
        name, k = base, 0
        while name in self.taken:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        return name


def _unread(fn: gast.FunctionDef, loop: gast.For) -> None:
    """Drop from `loop`'s body the scalar temporaries nothing reads (the forward values
    an adjoint's statements recompute for `unbroadcast`'s shapes, which the loop leaves
    out); they are arithmetic on numbers and entries, with no effect."""
    while True:
        reads = {n.id for n in gast.walk(fn) if isinstance(n, gast.Name)
                 and isinstance(n.ctx, gast.Load)}
        kept = [s for s in loop.body if not (isinstance(s, gast.Assign) and isinstance(
            s.targets[0], gast.Name) and s.targets[0].id not in reads)]
        if len(kept) == len(loop.body):
            return
        loop.body = kept


def _target(s: gast.stmt) -> str:
    """The array a slice statement writes into."""
    target = s.targets[0] if isinstance(s, gast.Assign) else s.target
    return target.value.id


def _suffix(offset: int) -> str:
    return "i" if not offset else f"im{-offset}" if offset < 0 else f"ip{offset}"


def _bound_node(kc: tuple[int, int], stop: bool) -> gast.AST | None:
    k, c = kc
    if kc == (0, 0) and not stop:
        return None
    if k == 0:
        return b.const(c)
    if c == 0:
        return None
    return b.make(gast.UnaryOp, op=gast.USub(), operand=b.const(-c))


def _pack(nodes: list) -> gast.AST:
    nodes = [b.name(n) if isinstance(n, str) else n for n in nodes]
    return nodes[0] if len(nodes) == 1 else b.tuple_(nodes)


def _first_use(run: list[gast.stmt]):
    order: dict[str, int] = {}
    for s in run:
        for n in gast.walk(s):
            if isinstance(n, gast.Name):
                order.setdefault(n.id, len(order))
    return lambda name: order.get(name, len(order))


def _crossing(before: list[gast.stmt], after: list[gast.stmt]) -> int:
    """How many names `before` assigns that `after` reads."""
    assigned = {n.id for s in before for n in gast.walk(s)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    return len(assigned & {n.id for s in after for n in gast.walk(s)
                           if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)})


def _exposed(fn: gast.FunctionDef) -> set[int]:
    """The name loads of `fn` (their ids) that may read a value assigned elsewhere than
    by an earlier simple statement of their block or of an enclosing block within their
    loop: after a loop or a branch, a name it assigns may hold the value assigned in it
    (`acc = ...; for ...: acc = e; acc[0]` reads e's value)."""
    exposed: set[int] = set()

    def loads(node: gast.AST, assigned: set[str]) -> None:
        for n in gast.walk(node):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) \
                    and n.id not in assigned:
                exposed.add(id(n))

    def block(stmts: list[gast.stmt], assigned: set[str]) -> None:
        assigned = set(assigned)
        for s in stmts:
            if isinstance(s, (gast.For, gast.While)):
                loads(s.iter if isinstance(s, gast.For) else s.test, assigned)
                block(s.body, set())
                block(s.orelse, assigned)
            elif isinstance(s, gast.If):
                loads(s.test, assigned)
                block(s.body, assigned)
                block(s.orelse, assigned)
            if isinstance(s, (gast.For, gast.While, gast.If)):
                assigned -= {n.id for n in gast.walk(s) if isinstance(n, gast.Name)
                             and isinstance(n.ctx, gast.Store)}
            else:
                loads(s, assigned)
                assigned |= {n.id for n in gast.walk(s) if isinstance(n, gast.Name)
                             and isinstance(n.ctx, gast.Store)}
    block(fn.body, set())
    return exposed
