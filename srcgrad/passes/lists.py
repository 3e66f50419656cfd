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

A list appended to in a loop (`buffer_loops`) is an array the loop fills: for a name `L`
bound to `[]` in a block, whose next mention is a `for` or `while` loop without `else`
whose body appends to it (once or more), at its top level, in branches of `if` or in loops there
(a comprehension with several `for` clauses is such a loop nest), with no
other mention of `L` there (a `break`, `continue` or `return` in the loop only skips
appends: `jumps` has made a `return` there a `break`, and the reads after the loop sit
in `if` branches on whether it returned), and read after the loop, at any depth of
`if`s and loops there (`_list_reads`), only as `np.stack(L)` and `np.concatenate(L)`
(with an int literal `axis=`, a global int `axis=AXIS` or none: `stacked` and `joined`,
copies of the rows' array), `np.array(L)`, `np.asarray(L)` (a copy of the array),
`sum(L)` (its sum along the first axis), `np.sum(L)`, `np.mean(L)`, `len(L)`, `L[i]` (so
`for p in L`, `enumerate(L)`, `zip(L, M)` and `reversed(L)`, which `normalize` has made
index loops, and generators over it), or
`t = L[a:b]` with `t` read only in these ways too: `L = []` becomes `L_rows = None`
and a count `L_k = 0`, the append `L_rows = fill_row(L_rows, L_k, v)` and `L_k = L_k + 1`
(`runtime/lists.py`: the first run makes the array of the value's shape and dtype, a
value of another shape or type is a ValueError, as np.stack refuses the one and Python's
list would keep the other as it is), and after the loop `L = filled(L_rows, L_k)` is the
array of its rows. Every list of NumPy arrays of one shape reads as that array; an empty
one reads as `np.array([])` (`sum` gives 0 and `np.stack` raises, as in Python). `L = []`
binds the name anew at each run of the block, so a list built in a loop inside another
one is its own array at each outer iteration, of its own length and shape, and so is its
cotangent (a fresh array of its rows, which each append takes its row of, in reverse). A
list appended to in any other loop is left as it is, and `check` refuses an append that
receives a differentiated value.

The loops around the block may leave an iteration early, before `L = []`, between it
and the loop (`_sink` moves `L = []` into the branch that goes on), or after the loop:
`jumps` has put what follows a `break` or `continue` in the branch that falls through,
so `L_rows`, `L_k`, `L` and the cotangents made from them are values of the iterations
that ran that branch, as any value bound there is. The adjoint replays the branches
taken and reads them only in those iterations (what it needs of them from the tape
`reverse` keeps); the cotangent of the list is made afresh from its reads in the same
iteration, never zeros made before the reversed loop from an `L` that an iteration
that left early did not bind (`reverse` refuses a loop whose adjoint would need such
zeros: `surely_bound` in `passes/reverse_loop.py`).

A name bound in a loop to list displays alone (`p = [a * x[i], b]`), and read only by
index, as the iterable of a loop or by calls that read a list as they read a tuple
(`np.stack`, `np.concatenate`, `np.array`, `sum`, `len`, ...: `tupled_displays`), is
bound to the tuple displays instead: Python cannot tell the two apart there, and numba
stacks, joins and tapes tuples, not lists.

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
import collections
import copy

import gast
import numpy as np

from .. import builder as b
from ..analysis.aliasing import writes
from ..errors import SrcgradError
from ..frontend.parse import MISSING, Env
from ..naming import Namer
from ..runtime.lists import fill_row, filled, joined, stacked
from .inplace import bound_name


def display_appends(body: list[gast.stmt], env: Env, local_names: frozenset[str],
                    namer: Namer) -> list[gast.stmt]:
    """`body` with each list built by top-level appends made a display before its reads,
    and each list built in a counted loop an array (`buffer_loops`)."""
    body = tupled_displays(buffer_loops(body, body, env, local_names, namer), env,
                           local_names)
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


# the calls that read a list argument as they read a tuple (np.block does not: it refuses
# a tuple), and keep neither
_READ_AS_TUPLES = frozenset({
    builtins.len, builtins.sum, builtins.max, builtins.min, np.stack, np.concatenate,
    np.vstack, np.hstack, np.column_stack, np.dstack, np.array, np.asarray, np.sum,
    np.mean, np.prod, np.max, np.min, np.amax, np.amin})


def tupled_displays(body: list[gast.stmt], env: Env, local_names: frozenset[str]
                    ) -> list[gast.stmt]:
    """`body` (changed in place) with each name bound only to non-empty list displays
    (`p = [a, b]`), in a loop (and maybe before it too), and read only by an index (not a slice),
    as an argument of `_READ_AS_TUPLES` or as a loop's iterable, bound to tuple displays
    instead: such reads cannot tell the two apart, and numba compiles a tuple where it
    has no list form (np.concatenate of a list, the tape of a name bound in a loop, the
    adjoint of np.stack of a list). Outside loops, a display is read item by item
    already (`Recording.tuples`, and the displays `normalize` makes of item writes)."""
    def bindings(name: str) -> list[gast.Assign] | None:
        found = []
        for stmt in gast.walk(b.function("f", [], body)):
            if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == name:
                if not isinstance(stmt.value, gast.List) or not stmt.value.elts:
                    return None
                found.append(stmt)
        return found

    stores = collections.Counter(
        n.id for s in body for n in gast.walk(s)
        if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load))
    looped = {n.id for s in body for loop in gast.walk(s) if isinstance(
        loop, (gast.For, gast.While)) for t in loop.body for n in gast.walk(t)
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    read_as: set[int] = set()   # ids of the loads that read a tuple as they read a list
    for node in (n for s in body for n in gast.walk(s)):
        if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) and \
                isinstance(node.ctx, gast.Load) and \
                not any(isinstance(i, gast.Slice) for i in gast.walk(node.slice)):
            read_as.add(id(node.value))
        elif isinstance(node, gast.Call) and _reads_as_tuples(node.func, env, local_names):
            read_as |= {id(a) for a in node.args if isinstance(a, gast.Name)}
        elif isinstance(node, gast.For) and isinstance(node.iter, gast.Name):
            read_as.add(id(node.iter))
    for name in sorted(stores):
        found = bindings(name)
        if not found or len(found) != stores[name] or name not in looped:
            continue
        if any(isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load)
               and id(n) not in read_as for s in body for n in gast.walk(s)):
            continue
        for stmt in found:
            stmt.value = b.located(b.tuple_(stmt.value.elts), stmt.value)
    return body


def _reads_as_tuples(func: gast.AST, env: Env, local_names: frozenset[str]) -> bool:
    obj = env.resolve(func, local_names)
    try:
        return obj is not MISSING and obj in _READ_AS_TUPLES
    except TypeError:   # (unhashable)
        return False


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


# calls that read a list of arrays of one shape as they read the array: as they are, or
# as the call on the array that gives the same value
_AS_ARRAY = {np.stack: "stacked", np.concatenate: "joined", np.array: "np.copy",
             np.asarray: "np.copy", builtins.sum: "np.sum0", np.sum: None, np.mean: None,
             builtins.len: None}


_JOINS = {"stacked": stacked, "joined": joined}   # (an int literal `axis` passed on)


def buffer_loops(block: list[gast.stmt], whole: list[gast.stmt], env: Env,
                 local_names: frozenset[str], namer: Namer) -> list[gast.stmt]:
    """`block` (of function body `whole`) with each list built in a loop an array the loop
    fills (see the module docstring), in its nested blocks too, the loops around them
    leaving their iterations early or not.

    >>> import astor
    >>> body = gast.parse("p = []\\nfor i in range(n):\\n    p.append(x)\\ns = len(p)").body
    >>> out = buffer_loops(body, body, Env({}), frozenset({"p", "i", "n", "x", "s"}),
    ...                    Namer({"p", "i", "n", "x", "s"}))
    >>> print(astor.to_source(gast.gast_to_ast(b.function("f", [], out))).strip())
    def f():
        p_rows = None
        p_k = 0
        for i in range(n):
            p_rows = fill_row(p_rows, p_k, x)
            p_k = p_k + 1
        p = filled(p_rows, p_k)
        s = len(p)
    """
    _sink(block, whole)
    for stmt in block:
        for f in ("body", "orelse"):
            if isinstance(getattr(stmt, f, None), list) and not isinstance(stmt, gast.FunctionDef):
                setattr(stmt, f, buffer_loops(getattr(stmt, f), whole, env, local_names, namer))
    out = list(block)
    for name in _started(block):
        out = _buffered(name, out, whole, env, local_names, namer)
    return out


def _sink(block: list[gast.stmt], whole: list[gast.stmt]) -> None:
    """Move (in `block`, in place) each `L = []` whose next mention of `L` is an `if` that
    names it in one branch only, where nothing else in `whole` names `L`, to the start of
    that branch, at any depth of such `if`s: the same lists, read in the same places.

    Where `jumps` has put the rest of a loop's body in the branch that does not `break`
    or `continue` (`L = []`, then `if c: continue`, then the loop that appends), that
    branch is a block whose next statement mentioning `L` is the loop, as `_buffered`
    needs.

    >>> import astor
    >>> body = gast.parse("p = []\\nif c:\\n    y = 1\\nelse:\\n    p.append(x)").body
    >>> _sink(body, body)
    >>> print(astor.to_source(gast.gast_to_ast(b.function("f", [], body))).strip())
    def f():
        if c:
            y = 1
        else:
            p = []
            p.append(x)
    """
    for name in _started(block):
        start = next(k for k, s in enumerate(block) if _empty_list(s) == name)
        after = [k for k in range(start + 1, len(block)) if _mentions(block[k], name)]
        if not after or not isinstance(block[after[0]], gast.If):
            continue
        branch = block[after[0]]
        named = [getattr(branch, f) for f in ("body", "orelse")
                 if any(_mentions(s, name) for s in getattr(branch, f))]
        if len(named) != 1 or _mentions(branch.test, name) or \
                sum(_mentions(s, name) for s in whole) != 1 + _mentions(branch, name):
            continue
        named[0].insert(0, block.pop(start))
        _sink(named[0], whole)


def _buffered(name: str, block: list[gast.stmt], whole: list[gast.stmt], env: Env,
              local_names: frozenset[str], namer: Namer) -> list[gast.stmt]:
    """`block` with list `name` an array its loop fills, if it is one `buffer_loops` takes;
    else `block` as it is."""
    starts = [k for k, s in enumerate(block) if _empty_list(s) == name]
    if len(starts) != 1:
        return block
    start = starts[0]
    after = [k for k in range(start + 1, len(block)) if _mentions(block[k], name)]
    if not after or not _plain_loop(block[after[0]]):
        return block
    k_loop, loop = after[0], block[after[0]]
    appends = [s for s in _branched(loop.body, loops=True) if _appended(s) == name]
    if not appends or _mentions(loop, name) != len(appends) or \
            not all(isinstance(a.value.args[0], (gast.Name, gast.Constant)) for a in appends):
        return block
    reads = _list_reads(name, [block[k] for k in after[1:]], whole, env, local_names)
    if reads is None or \
            sum(_mentions(s, name) for s in whole) != \
            1 + len(appends) + sum(1 for _, _, read in reads.values() if read == name) or \
            any(_written_after(a.value.args[0], whole, env, local_names) for a in appends):
        return block
    npn = bound_name(env, "np", np)
    rows, count = namer.fresh(f"{name}_rows"), namer.fresh(f"{name}_k")
    for append in appends:
        fill = [b.located(s, append) for s in (
            b.assign(rows, b.call(b.name(bound_name(env, "fill_row", fill_row)), b.name(rows),
                                  b.name(count), copy.deepcopy(append.value.args[0]))),
            b.assign(count, b.binop(b.name(count), gast.Add(), b.const(1))))]
        _replace(loop.body, append, fill)
    for stmt, how, _ in reads.values():
        read = stmt.value.args[0] if isinstance(stmt.value, gast.Call) else None
        if how in _JOINS:
            helper = _JOINS[how]
            axis = [b.const(_int_axis(a, env, local_names)) for a in
                    [*stmt.value.args[1:], *(k.value for k in stmt.value.keywords)]]
            stmt.value = b.call(b.name(bound_name(env, helper.__name__, helper)), read, *axis)
        elif how == "np.copy":
            stmt.value = b.call(b.dotted(f"{npn}.copy"), read)
        elif how == "np.sum0":
            stmt.value = b.call(b.dotted(f"{npn}.sum"), read, axis=b.const(0))
    out: list[gast.stmt] = []
    for k, stmt in enumerate(block):
        if k == start:
            out += [b.located(b.assign(rows, b.const(None)), stmt),
                    b.located(b.assign(count, b.const(0)), stmt)]
            continue
        out.append(stmt)
        if k == k_loop:
            out.append(b.located(b.assign(name, b.call(
                b.name(bound_name(env, "filled", filled)), b.name(rows), b.name(count))),
                loop))
    return out


def _written_after(value: gast.AST, whole: list[gast.stmt], env: Env,
                   local_names: frozenset[str]) -> bool:
    """Whether the array appended, `value`, may be written into somewhere in `whole`
    (through any name that may share its memory): Python's list holds the array, which
    sees the write, where the row holds a copy made at the append."""
    return isinstance(value, gast.Name) and \
        bool(written_sharing({value.id}, whole, whole, env, local_names))


def written_sharing(names: set[str], within: list[gast.stmt], whole: list[gast.stmt],
                    env: Env, local_names: frozenset[str]) -> set[str]:
    """The names that may share memory with one of `names` (through the views function
    body `whole` makes) and that `within` (statements of it) writes into."""
    try:
        _, views = writes(sorted(local_names), whole, env, "")
        written, _ = writes(sorted(local_names), within, env, "")
    except SrcgradError:   # (a helper writing into its argument: refused later)
        return set()
    written |= {n.target.id for s in within for n in gast.walk(s)
                if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name)}
    pairs = [(v, base) for v, bases in views.items() for base in bases]
    shared, grown = set(names), True   # the names joined to them by views, either way
    while grown:
        grown = False
        for pair in pairs:
            if shared & set(pair) and not set(pair) <= shared:   # (`v = v`: a pair of one)
                shared |= set(pair)
                grown = True
    return shared & written


def _branched(stmts: list[gast.stmt], loops: bool = False) -> list[gast.stmt]:
    """`stmts` and those of their `if` branches, at any depth, and with `loops`, those of
    loops in them too (a comprehension's `for` clauses after the first are loops in its
    loop)."""
    out = []
    for s in stmts:
        out.append(s)
        if isinstance(s, gast.If) or loops and isinstance(s, (gast.For, gast.While)):
            out += _branched(s.body, loops) + _branched(s.orelse, loops)
    return out


def _replace(stmts: list[gast.stmt], old: gast.stmt, new: list[gast.stmt]) -> None:
    """`old`, one of `stmts` or of the blocks in them, replaced there by `new`."""
    for k, s in enumerate(stmts):
        if s is old:
            stmts[k:k + 1] = new
            return
        if isinstance(s, (gast.If, gast.For, gast.While)):
            _replace(s.body, old, new)
            _replace(s.orelse, old, new)


def _mentions(node: gast.AST, name: str) -> int:
    return sum(1 for n in gast.walk(node) if isinstance(n, gast.Name) and n.id == name)


def _plain_loop(stmt: gast.stmt) -> bool:
    """Whether `stmt` is a `for` or `while` loop without `else`."""
    return isinstance(stmt, (gast.For, gast.While)) and not stmt.orelse


def _list_reads(name: str, stmts: list[gast.stmt], whole: list[gast.stmt], env: Env,
                local_names: frozenset[str]) -> dict[int, tuple] | None:
    """The reads of list `name` in `stmts` (at any depth of their `if`s and loops), each
    `id(statement): (statement, how, name read)` with `how` what `_read_as` says; a
    slice of it bound to a name, `t = L[1:]`, with the reads of `t` in `whole` too, where
    that is all that names `t` (a slice of the array reads as the list's slice does). None
    where some read is another (or reads it in a test or a loop's header)."""
    reads: dict[int, tuple] = {}
    for stmt in _branched(stmts, loops=True):
        if isinstance(stmt, (gast.If, gast.While, gast.For)):
            header = [stmt.test] if not isinstance(stmt, gast.For) else [stmt.target, stmt.iter]
            if any(_mentions(h, name) for h in header):
                return None
            continue
        if not _mentions(stmt, name) or isinstance(stmt, gast.Assign) and \
                not _mentions(stmt.value, name):   # (its binding: counted by the caller)
            continue
        how = _read_as(stmt, name, env, local_names)
        if how is MISSING:
            return None
        reads[id(stmt)] = (stmt, how, name)
        if how == "slice":
            part = stmt.targets[0].id
            more = _list_reads(part, whole, whole, env, local_names)
            if more is None or sum(_mentions(s, part) for s in whole) != 1 + len(
                    [r for r in more.values() if r[2] == part]):
                return None
            reads.update(more)
    return reads


def _read_as(stmt: gast.stmt, name: str, env: Env, local_names: frozenset[str]) -> object:
    """How statement `stmt` after the loop reads list `name`: as it reads the array (None),
    as a call replaced (a key of `_AS_ARRAY`'s values), or MISSING (another way)."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
            isinstance(stmt.targets[0], gast.Name) and _mentions(stmt, name) == 1):
        return MISSING
    value = stmt.value
    if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) and \
            value.value.id == name:
        if isinstance(value.slice, gast.Slice):
            return "slice"
        if not any(isinstance(i, gast.Slice) for i in gast.walk(value.slice)):
            return None
    if not (isinstance(value, gast.Call) and value.args and
            isinstance(value.args[0], gast.Name) and value.args[0].id == name):
        return MISSING
    fun = env.resolve(value.func, local_names)
    try:
        how = _AS_ARRAY[fun] if fun in _AS_ARRAY else MISSING
    except TypeError:   # (unhashable)
        return MISSING
    axis = value.args[1:] + [k.value for k in value.keywords if k.arg == "axis"]
    if len(value.args) + len(value.keywords) == 1 or how in _JOINS and len(axis) == 1 and \
            len(value.args) + len(value.keywords) == 2 and \
            _int_axis(axis[0], env, local_names) is not None:
        return how
    return MISSING


def _int_axis(node: gast.AST, env: Env, local_names: frozenset[str]) -> int | None:
    """The int an `axis=` is when srcgrad compiles: an int literal (`-1` too), or a global
    or closure name bound to an int (`axis=AXIS`); else None."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        inner = _int_axis(node.operand, env, local_names)
        return None if inner is None else -inner
    if isinstance(node, gast.Constant):
        return node.value if type(node.value) is int else None
    if isinstance(node, gast.Name) and node.id not in local_names:
        value = env.resolve(node, local_names)
        return int(value) if type(value) is int or isinstance(value, np.integer) else None
    return None


def unfollowed_read(name: str, body: list[gast.stmt], env: Env,
                    local_names: frozenset[str]) -> gast.stmt | None:
    """The first statement of `body` (at any depth) that reads list `name`, other than by
    appending to it, in none of the ways `buffer_loops` follows; None if there is none
    (for `check`'s message: what keeps a list appended to in a loop from being an array)."""
    for stmt in gast.walk(b.function("_", [], body)):
        if not isinstance(stmt, gast.stmt) or isinstance(stmt, gast.FunctionDef) or \
                not _mentions(stmt, name) or _appended(stmt) == name or \
                _empty_list(stmt) == name:
            continue
        if isinstance(stmt, (gast.If, gast.While, gast.For)):
            header = [stmt.test] if not isinstance(stmt, gast.For) else [stmt.target, stmt.iter]
            if any(_mentions(h, name) for h in header):
                return stmt
            continue
        if _read_as(stmt, name, env, local_names) is MISSING:
            return stmt
    return None
