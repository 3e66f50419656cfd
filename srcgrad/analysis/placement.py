"""placement: the tapes of one reverse pass, each named, and the form each takes.

Requires the `Layout` of a normalized body (`analysis.tape`) and the `Namer` of the
generated module. Guarantees `Tapes`, the plan of the stacks the forward code pushes and
the adjoint pops, one `Tape` record each: the values of a name (saved before an
overwrite, after a block-local definition, or where the adjoint reads them), what one
subscript write overwrote, the trip count of a loop that may end early, and the value a
branch's test read where the branch changes it; each with one generated name, given
where it is first pushed or popped. A dry run of the forward code counts each tape's
pushes (`count`, then `freeze`); a tape pushed once per iteration of an outermost counted
loop is then an array indexed by the iteration (`per_iteration`), the others are lists.
`retested` says which names an `if` saves for its replay.

Exists so `reverse` asks which stack a value goes on and how, and never keys its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import gast

from ..naming import Namer
from ..passes.base import all_statements
from .tape import Layout


@dataclass(frozen=True)
class Tape:
    """One stack: `kind` "values" (the values of `var`), "overwritten" (what the write
    `site` overwrote in `var`), "trips" (the iterations the loop `site` ran, counted in
    `var`) or "test" (the value `var` had where the `if` at `site` tested it)."""

    kind: str
    var: str
    site: int | None = None    # id of the write, loop or `if` it belongs to


@dataclass
class Tapes:
    layout: Layout
    namer: Namer
    names: dict[Tape, str] = field(default_factory=dict)   # in the order first asked for
    counted: dict[str, int] = field(default_factory=dict)  # name -> pushes in the forward
    pushes: dict[str, int] = field(default_factory=dict)   # the same, frozen after a dry run
    arrays: set[str] = field(default_factory=set)          # arrays, one entry per iteration
    counters: dict[int, str] = field(default_factory=dict)  # id(loop) -> its trip counter

    def name(self, tape: Tape) -> str:
        if tape not in self.names:
            base = f"{tape.var}_test_tape" if tape.kind == "test" else f"{tape.var}_tape"
            self.names[tape] = self.namer.fresh(base)
        return self.names[tape]

    def of_values(self, var: str) -> str:
        return self.name(Tape("values", var))

    def of_site(self, stmt: gast.stmt) -> str:
        """The stack of what `stmt` (an assignment, a write, a `for`) changes: the values
        of the name it binds (one stack per name, its sites pop in reverse push order),
        or what one subscript write overwrote (one per site: a scalar or a slice)."""
        if isinstance(stmt, gast.For):
            return self.of_values(stmt.target.id)
        target = stmt.targets[0]
        if isinstance(target, gast.Name):
            return self.of_values(target.id)
        return self.name(Tape("overwritten", target.value.id, id(stmt)))

    def of_trips(self, loop: gast.stmt) -> str:
        return self.name(Tape("trips", self.counters[id(loop)], id(loop)))

    def of_test(self, stmt: gast.If, var: str) -> str:
        return self.name(Tape("test", var, id(stmt)))

    def counter(self, loop: gast.stmt) -> str:
        """The name counting the iterations of `loop` (a `while`, or a `for` that may
        break), made the first time it is asked for."""
        if id(loop) not in self.counters:
            self.counters[id(loop)] = self.namer.fresh(
                f"n_{loop.target.id}" if isinstance(loop, gast.For) else "n_iter")
        return self.counters[id(loop)]

    def count(self, tape: str) -> None:
        self.counted[tape] = self.counted.get(tape, 0) + 1

    def freeze(self) -> None:
        """The pushes counted so far (by a dry run) decide `per_iteration`."""
        self.pushes = dict(self.counted)

    def lists(self) -> list[str]:
        """The tapes that are lists (made empty on entry), in the order first asked for."""
        return [name for name in self.names.values() if name not in self.arrays]

    def per_iteration(self, tape: str, site: gast.stmt | None) -> gast.For | None:
        """The loop whose iteration indexes `tape`, if its only push (at `site`) runs once
        per iteration of an outermost counted loop that cannot end early."""
        lay = self.layout
        if site is None or self.pushes.get(tape, 0) != 1 or id(site) not in lay.loops:
            return None
        loops = lay.loops[id(site)]
        if len(loops) != 1 or not isinstance(loops[0], gast.For) or \
                lay.block[id(site)] is not loops[0].body or \
                breaks(loops[0]):
            return None
        return loops[0]


def breaks(loop: gast.stmt) -> bool:
    """Whether the loop may end early (then its adjoint counts the iterations it ran)."""
    return any(isinstance(s, gast.Break) for s in all_statements(loop.body, into_loops=False))


def retested(lay: Layout, statements: list[gast.stmt]) -> dict[int, list[str]]:
    """For each `if` whose test reads a name its own branches change, those names:
    where the adjoint replays the branch, the name holds the value the branch left,
    so the forward saves the one the test read (`if returned:` ... `returned = True`
    in its else branch, as jumps makes of a return in a loop)."""
    out = {}
    for s in statements:
        if not isinstance(s, gast.If):
            continue
        lo, hi = lay.pos[id(s)], lay.end[id(s)]
        names = sorted({n.id for n in gast.walk(s.test) if isinstance(n, gast.Name)
                        and any(lo < lay.pos[id(t)] <= hi
                                for t in lay.sites.get(n.id, []))})
        if names:
            out[id(s)] = names
    return out
