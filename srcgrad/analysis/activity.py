"""activity: which variables carry a derivative (varied from `wrt` and useful to the result).

Requires, per assignment of a normalized body, the name it changes and the operand names
a derivative can flow through (none for `len`,
comparisons, `np.floor`, none into a name that only ever holds an int; the array but not
the index of `x[i]`). Returns plain sets.
A variable is *active* when it is varied (depends differentiably on a `wrt` parameter)
and useful (the result depends differentiably on it); only active variables get an
adjoint, which is what keeps integer and boolean values out of the backward pass.
Exists as its own analysis so `reverse` only asks, never computes, what is active.
"""

from __future__ import annotations

from dataclasses import dataclass

import gast


@dataclass(frozen=True)
class Activity:
    varied: frozenset[str]
    useful: frozenset[str]

    @property
    def active(self) -> frozenset[str]:
        return self.varied & self.useful


def activity(flow: list[tuple[str, list[str]]], wrt: list[str], result: gast.AST) -> Activity:
    """Varied and useful names, given per assignment the name it changes and the names a
    derivative flows from into it (any order: loops make this a fixed point).

    >>> import gast
    >>> flow = [("a", ["x", "y"]), ("n", []), ("z", ["a", "n"])]
    >>> sorted(activity(flow, ["x"], gast.parse("z").body[0].value).active)
    ['a', 'x', 'z']
    """
    varied = reached(flow, set(wrt))
    useful: set[str] = {result.id} if isinstance(result, gast.Name) else set()
    changed = True
    while changed:
        changed = False
        for target, operands in reversed(flow):
            if target in useful and not useful.issuperset(operands):
                useful.update(operands)
                changed = True
    return Activity(frozenset(varied), frozenset(useful))


def reached(flow: list[tuple[str, list[str]]], names: set[str]) -> set[str]:
    """`names` and every name the flow carries them into (a fixed point: loops)."""
    names = set(names)
    changed = True
    while changed:
        changed = False
        for target, operands in flow:
            if target not in names and any(name in names for name in operands):
                names.add(target)
                changed = True
    return names
