"""activity: which variables carry a derivative (varied from `wrt` and useful to the result).

Requires a normalized (A-normal, single-assignment) body and a function telling, for an
operation, which of its operand names a derivative can flow through (none for `len`,
comparisons, `np.floor`; the array but not the index of `x[i]`). Returns plain sets.
A variable is *active* when it is varied (depends differentiably on a `wrt` parameter)
and useful (the result depends differentiably on it); only active variables get an
adjoint, which is what keeps integer and boolean values out of the backward pass.
Exists as its own analysis so `reverse` only asks, never computes, what is active.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import gast


@dataclass(frozen=True)
class Activity:
    varied: frozenset[str]
    useful: frozenset[str]

    @property
    def active(self) -> frozenset[str]:
        return self.varied & self.useful


def activity(body: list[gast.stmt], wrt: list[str],
             operands: Callable[[gast.AST], list[str]]) -> Activity:
    """Varied and useful names of a straight-line single-assignment body.

    >>> import gast
    >>> body = gast.parse("a = x * y\\nn = len(a)\\nz = a + n\\nreturn z").body
    >>> def ops(v):
    ...     if isinstance(v, gast.Call): return []
    ...     return [n.id for n in gast.walk(v) if isinstance(n, gast.Name)]
    >>> act = activity(body, ["x"], ops)
    >>> sorted(act.active)
    ['a', 'x', 'z']
    """
    varied = set(wrt)
    for stmt in body:
        if isinstance(stmt, gast.Assign):
            if any(name in varied for name in operands(stmt.value)):
                varied.add(stmt.targets[0].id)
    useful: set[str] = set()
    for stmt in reversed(body):
        if isinstance(stmt, gast.Return) and isinstance(stmt.value, gast.Name):
            useful.add(stmt.value.id)
        elif isinstance(stmt, gast.Assign) and stmt.targets[0].id in useful:
            useful.update(operands(stmt.value))
    return Activity(frozenset(varied), frozenset(useful))
