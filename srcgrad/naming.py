"""naming: the one namer of generated code.

Generated names come from the user's: `dx` is the adjoint (cotangent) of `x`, as `dy`
is in a rule's signature; `tx` is its tangent in forward-mode code (`jvp`; in an `hvp`,
`tdx` is the tangent of the adjoint `dx`); `x_1` is a second version of `x`, `_t1` a
temporary; a numeric suffix appears only where a name is
already taken (by the user's locals, the globals the code reads, or an earlier fresh
name). One `Namer` serves one generated module, so names never clash across functions
that share a namespace.
"""

from __future__ import annotations

from collections.abc import Mapping

import gast


def as_written(name: str, user_names: set[str] | frozenset[str],
               spelled: Mapping[str, str] | None = None) -> str:
    """The user's name that `name` is a version of (`x_1`, `x_2` of x, which single
    assignment makes), for messages, as the user spelled it where `spelled` has it (a
    flattened entry: `p_W` of `p["W"]`, `pytrees.spellings`); else `name`."""
    spelled = spelled or {}
    user, _, k = name.rpartition("_")
    if name not in spelled and k.isdigit() and (user in user_names or user in spelled):
        name = user
    return spelled.get(name, name)


class Namer:
    """Hands out names that clash with nothing already taken."""

    def __init__(self, taken: set[str] | frozenset[str] = frozenset()):
        self.taken: set[str] = set(taken)
        self._temps = 0

    def fresh(self, base: str) -> str:
        """`base` itself if free, else `base_1`, `base_2`, ... (`base` + digits for `_t`)."""
        if base not in self.taken:
            self.taken.add(base)
            return base
        k = 1
        while f"{base}_{k}" in self.taken:
            k += 1
        self.taken.add(f"{base}_{k}")
        return f"{base}_{k}"

    def temp(self) -> str:
        while True:
            self._temps += 1
            candidate = f"_t{self._temps}"
            if candidate not in self.taken:
                self.taken.add(candidate)
                return candidate

    def adjoint(self, var: str) -> str:
        """The name of `var`'s adjoint (cotangent): `dx`."""
        return self.fresh("d" + var)

    def tangent(self, var: str) -> str:
        """The name of `var`'s tangent in forward-mode code: `tx`."""
        return self.fresh("t" + var)


def names_in(tree: gast.AST) -> set[str]:
    """Every identifier a tree binds or reads (parameters included)."""
    return {n.id for n in gast.walk(tree) if isinstance(n, gast.Name)}
