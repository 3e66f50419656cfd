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

A list appended to in a counted loop (`buffer_loops`) is an array the loop fills: for a
name `L` bound to `[]` in a block, whose next mention is a `for` over `range(...)` (any
bounds, known at run time) whose body appends to it once at its top level, with no
`break`, `continue` or `return` in the loop and no other mention of `L` there, the block
not inside a loop that has one (an iteration that leaves before `L = []` may leave the
array unbound where the adjoint reads it), and read after the loop only as `np.stack(L)`,
`np.array(L)`, `np.asarray(L)` (a copy of the array), `sum(L)` (its sum along the first
axis), `np.sum(L)`, `np.mean(L)`, `len(L)` or `L[i]`: the trip count is taken before the
loop, the append's first run makes the array (`np.empty` of (trips,) + the value's shape
and dtype) and each run writes its row, `L[k] = v`. Every list of NumPy arrays of one
shape reads as that array; an empty one raises a ValueError (where `sum` would give 0),
as does a value the row would broadcast or cast (another shape or type than the first:
Python's list keeps it as it is). The adjoint is that of subscript writes: the cotangents
of the rows, read back in reverse. A list appended to in any other loop is left as it
is, and `check` refuses an append that receives a differentiated value.

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
import numpy as np

from .. import builder as b
from ..frontend.parse import MISSING, Env
from ..naming import Namer
from .inplace import bound_name


def display_appends(body: list[gast.stmt], env: Env, local_names: frozenset[str],
                    namer: Namer) -> list[gast.stmt]:
    """`body` with each list built by top-level appends made a display before its reads,
    and each list built in a counted loop an array (`buffer_loops`)."""
    body = buffer_loops(body, body, env, local_names, namer)
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


# calls that read a list of arrays of one shape as they read the array: as they are, or
# as the call on the array that gives the same value
_AS_ARRAY = {np.stack: "np.copy", np.array: "np.copy", np.asarray: "np.copy",
             builtins.sum: "np.sum0", np.sum: None, np.mean: None, builtins.len: None}


def buffer_loops(block: list[gast.stmt], whole: list[gast.stmt], env: Env,
                 local_names: frozenset[str], namer: Namer,
                 in_jumping_loop: bool = False) -> list[gast.stmt]:
    """`block` (of function body `whole`) with each list built in a counted loop an array
    the loop fills (see the module docstring), in its nested blocks too; not in the body of
    a loop that may leave an iteration early (`in_jumping_loop`), where the array may be
    left unbound and the adjoint would read it.

    >>> import astor
    >>> body = gast.parse("p = []\\nfor i in range(n):\\n    p.append(x)\\ns = len(p)").body
    >>> out = buffer_loops(body, body, Env({}), frozenset({"p", "i", "n", "x", "s"}),
    ...                    Namer({"p", "i", "n", "x", "s"}))
    >>> print(astor.to_source(gast.gast_to_ast(b.function("f", [], out))).strip())
    def f():
        _t1 = range(n)
        p_len = len(_t1)
        _t2 = p_len == 0
        if _t2:
            raise ValueError("the list 'p' built in a loop at line 2 is empty")
        p_k = 0
        for i in range(n):
            _t3 = np.shape(x)
            _t4 = p_k == 0
            if _t4:
                _t5 = p_len,
                _t6 = _t5 + _t3
                _t7 = np.zeros_like(x)
                _t8 = _t7.dtype
                p = np.empty(_t6, _t8)
            p[p_k] = x
            _t9 = np.shape(p)
            _t10 = _t9[1:]
            _t11 = p[p_k]
            _t12 = _t11 == x
            _t13 = _t11 != _t11
            _t14 = _t12 | _t13
            _t15 = np.all(_t14)
            _t16 = _t10 == _t3
            _t16 = _t16 & _t15
            _t17 = not _t16
            if _t17:
                raise ValueError(
                    "the values appended to 'p' at line 3 differ in shape or type")
            p_k = p_k + 1
        s = len(p)
    """
    for stmt in block:
        jumping = in_jumping_loop or \
            isinstance(stmt, (gast.For, gast.While)) and _jumps(stmt.body)
        for f in ("body", "orelse"):
            if isinstance(getattr(stmt, f, None), list) and not isinstance(stmt, gast.FunctionDef):
                setattr(stmt, f, buffer_loops(getattr(stmt, f), whole, env, local_names, namer,
                                              jumping))
    if in_jumping_loop:
        return block
    out = list(block)
    for name in _started(block):
        out = _buffered(name, out, whole, env, local_names, namer)
    return out


def _buffered(name: str, block: list[gast.stmt], whole: list[gast.stmt], env: Env,
              local_names: frozenset[str], namer: Namer) -> list[gast.stmt]:
    """`block` with list `name` an array its loop fills, if it is one `buffer_loops` takes;
    else `block` as it is."""
    starts = [k for k, s in enumerate(block) if _empty_list(s) == name]
    if len(starts) != 1:
        return block
    start = starts[0]
    after = [k for k in range(start + 1, len(block)) if _mentions(block[k], name)]
    if not after or not _counted(block[after[0]], env, local_names):
        return block
    k_loop, loop = after[0], block[after[0]]
    appends = [s for s in loop.body if _appended(s) == name]
    if len(appends) != 1 or _mentions(loop, name) != 1 or _jumps(loop.body) or \
            not isinstance(appends[0].value.args[0], (gast.Name, gast.Constant)):
        return block
    reads = {k: _read_as(block[k], name, env, local_names) for k in after[1:]}
    if any(r is MISSING for r in reads.values()) or \
            sum(_mentions(s, name) for s in whole) != 2 + len(reads):
        return block
    npn = bound_name(env, "np", np)

    def np_call(fun: str, *args: gast.AST, **kw: gast.AST) -> gast.Call:
        return b.call(b.dotted(f"{npn}.{fun}"), *args, **kw)

    def at(stmt: gast.stmt, origin: gast.AST) -> gast.stmt:
        return b.located(stmt, origin)

    trip_range, trips = namer.temp(), namer.fresh(f"{name}_len")
    empty, count = namer.temp(), namer.fresh(f"{name}_k")
    message = f"the list {name!r} built in a loop at line {loop.lineno} is empty"
    head = [at(b.assign(trip_range, copy.deepcopy(loop.iter)), loop),
            at(b.assign(trips, b.call(b.name(bound_name(env, "len", builtins.len)),
                                      b.name(trip_range))), loop),
            at(b.assign(empty, _compare(b.name(trips), gast.Eq(), b.const(0))), loop),
            at(_raise_if(empty, message, env), loop),
            at(b.assign(count, b.const(0)), loop)]
    append = appends[0]
    value = append.value.args[0]
    shape, first, rows, full, zero, dtype = (namer.temp() for _ in range(6))
    whole_shape, row_shape, back, same, nan, fits, kept, good, bad = \
        (namer.temp() for _ in range(9))
    make = [b.assign(rows, b.tuple_([b.name(trips)])),
            b.assign(full, b.binop(b.name(rows), gast.Add(), b.name(shape))),
            b.assign(zero, np_call("zeros_like", copy.deepcopy(value))),
            b.assign(dtype, b.make(gast.Attribute, value=b.name(zero), attr="dtype",
                                   ctx=gast.Load())),
            b.assign(name, np_call("empty", b.name(full), b.name(dtype)))]
    # a value of another shape (broadcast) or type (cast) than the first is an error, as
    # np.stack makes it (or a value Python's list would keep and the array not)
    message = f"the values appended to {name!r} at line {append.lineno} differ in shape " \
              f"or type"
    fill = [b.assign(shape, np_call("shape", copy.deepcopy(value))),
            b.assign(first, _compare(b.name(count), gast.Eq(), b.const(0))),
            b.make(gast.If, test=b.name(first), body=[at(s, append) for s in make],
                   orelse=[]),
            b.assign(b.subscript(b.name(name), b.name(count), store=True),
                     copy.deepcopy(value)),
            b.assign(whole_shape, np_call("shape", b.name(name))),
            b.assign(row_shape, b.subscript(b.name(whole_shape), b.make(
                gast.Slice, lower=b.const(1), upper=None, step=None))),
            b.assign(back, b.subscript(b.name(name), b.name(count))),
            b.assign(same, _compare(b.name(back), gast.Eq(), copy.deepcopy(value))),
            b.assign(nan, _compare(b.name(back), gast.NotEq(), b.name(back))),
            b.assign(fits, b.binop(b.name(same), gast.BitOr(), b.name(nan))),
            b.assign(kept, np_call("all", b.name(fits))),
            b.assign(good, _compare(b.name(row_shape), gast.Eq(), b.name(shape))),
            b.assign(good, b.binop(b.name(good), gast.BitAnd(), b.name(kept))),
            b.assign(bad, b.make(gast.UnaryOp, op=gast.Not(), operand=b.name(good))),
            _raise_if(bad, message, env),
            b.assign(count, b.binop(b.name(count), gast.Add(), b.const(1)))]
    loop.body = [t for s in loop.body
                 for t in ([at(f, append) for f in fill] if s is append else [s])]
    out: list[gast.stmt] = []
    for k, stmt in enumerate(block):
        if k == start:
            continue
        if k == k_loop:
            out += head
        if k in reads and reads[k] is not None:
            stmt.value = np_call("sum", b.name(name), axis=b.const(0)) \
                if reads[k] == "np.sum0" else np_call("copy", b.name(name))
        out.append(stmt)
    return out


def _compare(left: gast.AST, op: gast.AST, right: gast.AST) -> gast.Compare:
    return b.make(gast.Compare, left=left, ops=[op], comparators=[right])


def _raise_if(test: str, message: str, env: Env) -> gast.If:
    error = b.call(b.name(bound_name(env, "ValueError", ValueError)), b.const(message))
    return b.make(gast.If, test=b.name(test), body=[b.make(gast.Raise, exc=error)], orelse=[])


def _mentions(node: gast.AST, name: str) -> int:
    return sum(1 for n in gast.walk(node) if isinstance(n, gast.Name) and n.id == name)


def _counted(stmt: gast.stmt, env: Env, local_names: frozenset[str]) -> bool:
    """Whether `stmt` is a `for` over `range(...)` without `else`."""
    return isinstance(stmt, gast.For) and not stmt.orelse and \
        isinstance(stmt.iter, gast.Call) and not stmt.iter.keywords and \
        env.resolve(stmt.iter.func, local_names) is builtins.range


def _jumps(stmts: list[gast.stmt]) -> bool:
    """Whether `stmts` may leave their loop's iteration early: a `return`, or a `break` or
    `continue` not inside a loop of their own."""
    for stmt in stmts:
        if isinstance(stmt, (gast.Break, gast.Continue, gast.Return)):
            return True
        if isinstance(stmt, (gast.For, gast.While)):
            if any(isinstance(n, gast.Return) for n in gast.walk(stmt)):
                return True
            continue
        for f in ("body", "orelse"):
            if isinstance(getattr(stmt, f, None), list) and _jumps(getattr(stmt, f)):
                return True
    return False


def _read_as(stmt: gast.stmt, name: str, env: Env, local_names: frozenset[str]) -> object:
    """How statement `stmt` after the loop reads list `name`: as it reads the array (None),
    as a call replaced (a key of `_AS_ARRAY`'s values), or MISSING (another way)."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and
            isinstance(stmt.targets[0], gast.Name) and _mentions(stmt, name) == 1):
        return MISSING
    value = stmt.value
    if isinstance(value, gast.Subscript) and isinstance(value.value, gast.Name) and \
            value.value.id == name and \
            not any(isinstance(i, gast.Slice) for i in gast.walk(value.slice)):
        return None
    if not (isinstance(value, gast.Call) and not value.keywords and len(value.args) == 1 and
            isinstance(value.args[0], gast.Name) and value.args[0].id == name):
        return MISSING
    fun = env.resolve(value.func, local_names)
    try:
        return _AS_ARRAY[fun] if fun in _AS_ARRAY else MISSING
    except TypeError:   # (unhashable)
        return MISSING
