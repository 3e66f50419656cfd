"""lists: a list built by `append` in straight-line code is the tuple display it stands for.

Requires a normalized block (one operation per statement; `normalize` calls it on the
function's body before single assignment). Guarantees, for each name `L` that the body
binds to `[]` outside loops and branches, appends to with `L.append(v)` (one positional
argument) only outside loops and branches, and reads only as `L[i]` (an index, not a
slice), `len(L)` or an argument of a NumPy function: each append is gone, its value
kept in a temporary (`_t3 = v`), and before each statement that reads `L` it is bound
to the display of the values appended so far (`L = (_t3, _t5)`), which those reads
treat as they treat the list. Any other list is
left as it is (an append that receives a differentiated value is then refused by
`check`). A loop over a `static=` trip count, or any counted loop with `unroll=True`, is
unrolled before, so its appends are straight-line code here.

Exists so that `parts = []; parts.append(...); np.stack(parts)` needs no rule for a
list that changes in place: a tuple display has one, and numba compiles it. The reads
allowed make no second name for the list, so no name sees it change after it is read;
a tuple, which NumPy reads as it reads a list, is what numba stacks.

>>> import astor
>>> from srcgrad.frontend.parse import Env
>>> from srcgrad.naming import Namer
>>> body = gast.parse("p = []\\np.append(x)\\ny = x * 2.0\\np.append(y)\\nn = len(p)").body
>>> out = display_appends(body, Env({}), frozenset({"p", "x", "y", "n"}),
...                       Namer({"p", "x", "y", "n"}))
>>> print(astor.to_source(gast.gast_to_ast(b.function("f", [], out))).strip())
def f():
    p = []
    _t1 = x
    y = x * 2.0
    _t2 = y
    p = _t1, _t2
    n = len(p)
"""

from __future__ import annotations

import builtins
import copy

import gast

from .. import builder as b
from ..frontend.parse import MISSING, Env
from ..naming import Namer


def display_appends(body: list[gast.stmt], env: Env, local_names: frozenset[str],
                    namer: Namer) -> list[gast.stmt]:
    """`body` with each list built by top-level appends made a display before its reads."""
    lists = [name for name in _started(body) if _only_displayed(name, body, env, local_names)]
    if not lists:
        return body
    items: dict[str, list[gast.AST]] = {}
    pending: set[str] = set()
    out: list[gast.stmt] = []
    for stmt in body:
        name = _appended(stmt)
        if name in lists:
            value = stmt.value.args[0]
            if isinstance(value, gast.Name):
                tmp = namer.temp()
                out.append(b.located(b.assign(tmp, value), stmt))
                value = b.name(tmp)
            items[name].append(value)
            pending.add(name)
            continue
        for name in sorted(pending):
            if name in _read(stmt):
                display = b.tuple_([copy.deepcopy(v) for v in items[name]])
                out.append(b.located(b.assign(name, display), stmt))
                pending.discard(name)
        if _empty_list(stmt) in lists:
            items[_empty_list(stmt)] = []
            pending.discard(_empty_list(stmt))
        out.append(stmt)
    return out


def _empty_list(stmt: gast.stmt) -> str | None:
    """`L` of `L = []`."""
    if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name) and \
            isinstance(stmt.value, gast.List) and not stmt.value.elts:
        return stmt.targets[0].id
    return None


def _appended(stmt: gast.stmt) -> str | None:
    """`L` of `L.append(v)`, a statement."""
    if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call):
        call = stmt.value
        if isinstance(call.func, gast.Attribute) and call.func.attr == "append" and \
                isinstance(call.func.value, gast.Name) and len(call.args) == 1 and \
                not call.keywords:
            return call.func.value.id
    return None


def _started(body: list[gast.stmt]) -> list[str]:
    return sorted({name for s in body if (name := _empty_list(s)) is not None})


def _read(stmt: gast.stmt) -> set[str]:
    return {n.id for n in gast.walk(stmt) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load)}


def _only_displayed(name: str, body: list[gast.stmt], env: Env,
                    local_names: frozenset[str]) -> bool:
    """Whether `name` is bound only by top-level `name = []`, before anything else names
    it, changed only by top-level appends, and read only where a display reads as the
    list does."""
    started = False   # (a name read before its `name = []`, a parameter, is left alone)
    for stmt in body:
        if _empty_list(stmt) == name:
            started = True
            continue
        if not started and any(isinstance(n, gast.Name) and n.id == name
                               for n in gast.walk(stmt)):
            return False
        if _appended(stmt) == name:
            continue
        allowed: set[int] = set()   # ids of the loads of `name` that read it as a list
        for node in gast.walk(stmt):
            if isinstance(node, gast.Name) and node.id == name and \
                    isinstance(node.ctx, gast.Store):
                return False
            if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) and \
                    node.value.id == name and not isinstance(node.ctx, gast.Store) and \
                    not any(isinstance(i, gast.Slice) for i in gast.walk(node.slice)):
                allowed.add(id(node.value))
            if isinstance(node, gast.Call) and _reads_a_sequence(node.func, env, local_names):
                allowed |= {id(a) for a in node.args if isinstance(a, gast.Name)}
        if any(isinstance(n, gast.Name) and n.id == name and id(n) not in allowed
               for n in gast.walk(stmt)):
            return False
    return True


def _reads_a_sequence(func: gast.AST, env: Env, local_names: frozenset[str]) -> bool:
    """Whether a call of `func` reads a list argument as it reads a tuple, keeping neither:
    `len`, a NumPy function (`sum(L)` and `max(L)` have no rule for a display: the list is
    left to `check`, which names the append)."""
    obj = env.resolve(func, local_names)
    if obj is MISSING:
        return False
    try:
        if obj is builtins.len:
            return True
    except TypeError:   # (unhashable)
        return False
    return (getattr(obj, "__module__", None) or "").split(".")[0] == "numpy" and callable(obj)
