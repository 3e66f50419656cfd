"""tape: which values the adjoint needs back, and how it gets each one (to-be-recorded).

Requires a normalized body (control flow structured, jumps in tail position) and the
primal names the adjoint code reads, each at a statement (`Read`). Returns a `TapePlan`:

* `local`: the *block-local* values of loop bodies and branches inside loops: assigned
  once in the function, at the top level of their block, and read only after that in
  the same block (or after the outermost loop). The adjoint gets them back per
  iteration just before the statement that last reads them, by *recomputing* the
  defining operation when it is cheap and its operands still hold the same values
  there, else from a tape the forward code pushes after the definition.
* `saved_reads`: names with no value before some overwrite the tape would undo (set
  first inside a loop) are saved where the adjoint reads them instead.
* `saved`: the statements whose overwrite the tape must undo: the forward pushes the
  old value (or the overwritten part of an array) before the statement and the
  adjoint pops it back after reversing it. A site is saved only if the adjoint reads
  the variable at a point that may come before the site (earlier in the code, or
  anywhere in a loop around both), so temporaries and accumulators cost nothing.

Exists so `reverse` asks, never computes, what goes on the tape.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import gast

from ..errors import UnsupportedSyntax


@dataclass(frozen=True)
class Read:
    """The adjoint reads primal `var` where it reverses `stmt`; `after` says it wants the
    value `stmt` assigned (a rule reading its result), not the one before."""

    var: str
    stmt: gast.stmt
    after: bool = False


@dataclass
class Layout:
    """Positions of the statements of a structured body, in pre-order."""

    pos: dict[int, int] = field(default_factory=dict)
    end: dict[int, int] = field(default_factory=dict)
    loops: dict[int, tuple[gast.stmt, ...]] = field(default_factory=dict)  # enclosing loops
    block: dict[int, list[gast.stmt]] = field(default_factory=dict)        # containing block
    blocks: list[tuple[list[gast.stmt], tuple[gast.stmt, ...]]] = field(default_factory=list)
    sites: dict[str, list[gast.stmt]] = field(default_factory=dict)   # where a name changes
    # where a method called for its effect may change a name's value in place
    # (`L.append(v)`, `a.sort()`): no tape undoes these
    mutations: dict[str, list[gast.stmt]] = field(default_factory=dict)
    loads: dict[str, list[int]] = field(default_factory=dict)         # where the primal reads
    branches: dict[int, tuple[tuple[int, str], ...]] = field(default_factory=dict)

    def exclusive(self, a: gast.stmt, b: gast.stmt) -> bool:
        """Whether `a` and `b` sit in different branches of one `if` (one run sees one)."""
        taken = dict(self.branches[id(a)])
        return any(taken.get(k, branch) != branch for k, branch in self.branches[id(b)])

    def precedes(self, read_pos: float, site: gast.stmt, skip: gast.stmt | None = None,
                 read_stmt: gast.stmt | None = None) -> bool:
        """Whether a read at `read_pos` may run before `site` does (earlier in the code,
        or in a loop around both other than `skip`)."""
        q = self.pos[id(site)]
        if read_pos < q and not self.exclusive(read_stmt, site):
            return True
        # a read after the last statement of a loop body is still inside the loop
        at = self.pos[id(read_stmt)] if read_stmt is not None else read_pos
        return any(self.pos[id(lp)] <= at <= self.end[id(lp)]
                   for lp in self.loops[id(site)] + ((site,) if _is_loop(site) else ())
                   if lp is not skip)

    def top(self, block: list[gast.stmt], stmt: gast.stmt) -> int:
        """Index in `block` of the statement that is or contains `stmt`."""
        p = self.pos[id(stmt)]
        for k, s in enumerate(block):
            if self.pos[id(s)] <= p <= self.end[id(s)]:
                return k
        raise ValueError("statement not in block")


def _is_loop(s: gast.stmt) -> bool:
    return isinstance(s, (gast.For, gast.While))


def layout(body: list[gast.stmt]) -> Layout:
    lay = Layout()
    counter = 0

    def visit(block: list[gast.stmt], loops: tuple[gast.stmt, ...], branches=()) -> None:
        nonlocal counter
        lay.blocks.append((block, loops))
        for s in block:
            lay.branches[id(s)] = branches
            lay.pos[id(s)] = counter
            counter += 1
            lay.loops[id(s)] = loops
            lay.block[id(s)] = block
            for name in _loads(s):
                lay.loads.setdefault(name, []).append(lay.pos[id(s)])
            changed = _changes(s)
            if changed:
                lay.sites.setdefault(changed, []).append(s)
            if mutated(s):
                lay.mutations.setdefault(mutated(s), []).append(s)
            if isinstance(s, gast.If):
                visit(s.body, loops, branches + ((id(s), "body"),))
                visit(s.orelse, loops, branches + ((id(s), "orelse"),))
            elif _is_loop(s):
                visit(s.body, loops + (s,), branches)
            lay.end[id(s)] = counter - 1

    visit(body, ())
    return lay


def _changes(s: gast.stmt) -> str | None:
    """The name a statement rebinds or writes into."""
    if isinstance(s, gast.Assign):
        t = s.targets[0]
        return t.id if isinstance(t, gast.Name) else t.value.id
    if isinstance(s, gast.For):
        return s.target.id
    return None


def mutated(s: gast.stmt) -> str | None:
    """The name whose method an expression statement calls (`L.append(v)`)."""
    if isinstance(s, gast.Expr) and isinstance(s.value, gast.Call) \
            and isinstance(s.value.func, gast.Attribute) \
            and isinstance(s.value.func.value, gast.Name):
        return s.value.func.value.id
    return None


def _loads(s: gast.stmt) -> set[str]:
    """Names the forward code of `s` itself reads (not those of nested blocks)."""
    if isinstance(s, gast.Assign):
        parts = [s.value] + ([s.targets[0].slice] if isinstance(s.targets[0], gast.Subscript)
                             else [])
    elif isinstance(s, (gast.If, gast.While)):
        parts = [s.test]
    elif isinstance(s, gast.For):
        parts = [s.iter]
    elif isinstance(s, (gast.Expr, gast.Return)):
        parts = [s.value]
    else:
        parts = []
    return {n.id for p in parts for n in gast.walk(p)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


@dataclass(frozen=True)
class Local:
    """Where a block-local value is made again for the adjoint: in `block`, before the
    adjoint of its statement `at`, by popping its tape (`how` "tape") or by running its
    statement again ("recompute")."""

    block: list[gast.stmt]
    at: int
    how: str


@dataclass
class TapePlan:
    layout: Layout
    saved: set[int]                            # ids of statements whose overwrite is undone
    local: dict[str, Local]                    # block-local values, by name
    at: dict[int, dict[int, list[str]]]        # id(block) -> index -> names, in order
    saved_reads: dict[int, list[Read]]         # id(stmt) -> the reads saved there
    reads: list[Read]                          # the adjoint's, and its recomputations'


def plan(body: list[gast.stmt], params: list[str], reads: list[Read],
         cheap, filename: str, held: frozenset[str] | set[str] = frozenset()) -> TapePlan:
    """Decide saves and block-local materializations; `cheap(value)` tells whether an
    operation may be recomputed in the adjoint. The names `held` are saved where the
    adjoint reads them."""
    lay = layout(body)
    _check_mutations(lay, reads, filename)
    local_defs = _block_locals(lay, params)
    at_reads: set[str] = set(held)
    for _ in range(len(lay.sites) + 1):
        local, at, all_reads = _place_locals(lay, reads, local_defs, cheap, at_reads)
        saved = _saves(lay, all_reads, set(local_defs.values()) | at_reads)
        unassigned = _unassigned(body, params, saved)
        if not unassigned:
            break
        # a name with no value before some overwrite the tape must undo: save it where
        # the adjoint reads it instead (it has a value there)
        at_reads |= unassigned
    saved_reads: dict[int, list[Read]] = {}
    kept = [r for r in all_reads if r.var in at_reads and r.var not in local]
    for r in all_reads:
        if r.var in at_reads and r not in saved_reads.get(id(r.stmt), []) and \
                not any(_same_value(lay, r, later) for later in kept):
            saved_reads.setdefault(id(r.stmt), []).append(r)
    return TapePlan(lay, saved, local, at, saved_reads, all_reads)


def _point(lay: Layout, r: Read) -> float:
    return lay.pos[id(r.stmt)] + (0.5 if r.after else -0.5)


def _same_value(lay: Layout, r: Read, later: Read) -> bool:
    """Whether `later`, a read of the same name further on in the same block, always
    runs after `r` and sees the value `r` sees, which the adjoint keeps from `later`'s
    pop to `r`: nothing between them (nor in `later`'s own block) changes the name, and
    no jump leaves between them. Then one value on the tape serves both (`top` read by
    three statements of one iteration is pushed once)."""
    if later.var != r.var or r.var not in lay.sites:
        return False
    p, q = _point(lay, r), _point(lay, later)
    block = lay.block[id(r.stmt)]
    if not p < q or lay.block[id(later.stmt)] is not block:
        return False
    hi = max(q, lay.end[id(later.stmt)])
    if any(p < lay.pos[id(t)] <= hi for t in lay.sites[r.var] + lay.mutations.get(r.var, [])):
        return False
    k, m = block.index(r.stmt), block.index(later.stmt)
    return not any(isinstance(n, (gast.Break, gast.Continue, gast.Return, gast.With))
                   for s in block[k:m] for n in gast.walk(s))


def _place_locals(lay: Layout, reads: list[Read], local_defs: dict[int, str], cheap,
                  at_reads: set[str]):
    reads = list(reads)
    local: dict[str, Local] = {}
    at: dict[int, dict[int, list[str]]] = {}
    needed_at: dict[str, list[gast.stmt]] = {}  # recomputations that read a block-local:
    # the statements before whose adjoint they run
    # inner blocks first, and within a block the last definition first, so every read
    # a recomputation adds is known before the value it reads is placed
    for block, loops in reversed(lay.blocks):
        if not loops:
            continue
        defs = [(k, s) for k, s in enumerate(block) if id(s) in local_defs]
        for d, stmt in reversed(defs):
            name = stmt.targets[0].id
            uses = [lay.top(block, r.stmt) for r in reads
                    if r.var == name and _inside(lay, block, r.stmt)] + \
                [lay.top(block, at) for at in needed_at.get(name, [])]
            if not uses:
                continue
            k = max(uses)
            recompute = _recomputable(lay, stmt, block, d, k, local_defs, cheap) and \
                not at_reads.intersection(_operands(stmt.value))
            if recompute:
                reads += [Read(n, stmt) for n in _operands(stmt.value)]
                for n in _operands(stmt.value):
                    needed_at.setdefault(n, []).append(block[k])
            local[name] = Local(block, k, "recompute" if recompute else "tape")
            at.setdefault(id(block), {}).setdefault(k, []).insert(0, name)
    return local, at, reads


def _check_mutations(lay: Layout, reads: list[Read], filename: str) -> None:
    """Refuse an adjoint read of a name that a method call may change in place after it
    (the adjoint, run after the whole forward code, would see the later value)."""
    for r in reads:
        for site in lay.mutations.get(r.var, []):
            if lay.precedes(lay.pos[id(r.stmt)] + (0.5 if r.after else -0.5), site,
                            None, r.stmt):
                raise UnsupportedSyntax(
                    f"the gradient reads '{r.var}', which a later call changes in place "
                    f"(line {site.lineno}); read a copy of it instead (list({r.var}) or "
                    f"{r.var}.copy())", filename=filename, lineno=r.stmt.lineno,
                    col=getattr(r.stmt, "col_offset", None))


def _saves(lay: Layout, reads: list[Read], exempt: set[str]) -> set[int]:
    saved: set[int] = set()
    by_var: dict[str, list[Read]] = {}
    for r in reads:
        by_var.setdefault(r.var, []).append(r)
    for name, sites in lay.sites.items():
        if name in exempt or name not in by_var:
            continue
        for site in sites:
            skip = site if isinstance(site, gast.For) else None
            for r in by_var[name]:
                p = lay.pos[id(r.stmt)] + (0.5 if r.after else -0.5)
                if skip is not None and lay.pos[id(site)] < p <= lay.end[id(site)]:
                    continue  # the reversed loop sets its own index
                if _own_index(lay, name, r.stmt, site):
                    continue  # so does another loop over the same name, around the read
                if lay.precedes(p, site, skip, r.stmt):
                    saved.add(id(site))
                    break
    return saved


def _own_index(lay: Layout, name: str, stmt: gast.stmt, site: gast.stmt) -> bool:
    """Whether `stmt` sits in a `for name in ...` loop that does not hold `site`: the
    reversed loop sets `name` before the read, whatever `site` did to it (two loops over
    `i`, one after the other)."""
    q = lay.pos[id(site)]
    return any(isinstance(lp, gast.For) and lp.target.id == name
               and not lay.pos[id(lp)] <= q <= lay.end[id(lp)]
               for lp in lay.loops[id(stmt)])


def _inside(lay: Layout, block: list[gast.stmt], stmt: gast.stmt) -> bool:
    if not block:
        return False
    p = lay.pos[id(stmt)]
    return lay.pos[id(block[0])] <= p <= lay.end[id(block[-1])]


def _block_locals(lay: Layout, params: list[str]) -> dict[int, str]:
    """id(defining statement) -> name, for the block-local values of blocks in loops."""
    out = {}
    for block, loops in lay.blocks:
        if not loops:
            continue
        outer = loops[0]
        for s in block:
            if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)):
                continue
            name = s.targets[0].id
            if name in params or lay.sites.get(name) != [s] or name in lay.mutations:
                continue
            d, last = lay.pos[id(s)], lay.end[id(block[-1])]
            lo, hi = lay.pos[id(outer)], lay.end[id(outer)]
            if all((d < x <= last) if lo <= x <= hi else x > hi
                   for x in lay.loads.get(name, [])):
                out[id(s)] = name
    return out


def _operands(value: gast.AST) -> list[str]:
    return [n.id for n in gast.walk(value) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load)]


def _recomputable(lay: Layout, stmt: gast.Assign, block, d: int, k: int,
                  local_defs: dict[int, str], cheap) -> bool:
    """Whether `stmt` can run again just before the adjoint reverses `block[k]`: a cheap
    operation whose operands are not changed between it and there."""
    if not cheap(stmt.value) or any(n in lay.mutations for n in _operands(stmt.value)):
        return False  # (a value changed in place is made again only as it is at the end)
    lo, hi = lay.pos[id(stmt)], lay.end[id(block[k])]
    locals_ = set(local_defs.values())
    for name in _operands(stmt.value):
        if name in locals_:
            continue
        if any(lo < lay.pos[id(site)] <= hi for site in lay.sites.get(name, [])):
            return False
    return True


def _unassigned(body: list[gast.stmt], params: list[str], saved: set[int]) -> set[str]:
    """Names the tape would save at an overwrite where they may have no value yet."""
    out: set[str] = set()

    def walk(block: list[gast.stmt], defined: set[str]) -> set[str]:
        for s in block:
            if id(s) in saved and isinstance(s, (gast.Assign, gast.For)):
                if _changes(s) not in defined:
                    out.add(_changes(s))
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
                defined = defined | {s.targets[0].id}
            elif isinstance(s, gast.If):
                defined = walk(s.body, defined) & walk(s.orelse, defined)
            elif isinstance(s, gast.For):
                walk(s.body, defined | {s.target.id})
                defined = defined | {s.target.id}
            elif isinstance(s, gast.While):
                walk(s.body, defined)
        return defined

    walk(body, set(params))
    return out
