"""check: refuse, before any code is emitted, what would be differentiated silently wrong.

Requires a normalized function (one operation per statement, structured control flow)
and the `wrt` names. Guarantees, when `check` returns, for reverse mode: no constructor
whose result the result needs builds an array from a varied value; no keyword (or
argument past those a rule gives gradients for) of such a rule receives a varied value;
no call kept for its effect receives one (`check_followed`, which forward mode calls on
its own classification too); every write goes into an array, not through a view of one,
and a helper writes into none of its arguments; and every statement with an adjoint has
a rule or a source, calls a user function with positional arguments only, and does not
repeat a list a user function returned. Else it raises the `SrcgradError` (`MissingRule`,
`UnsupportedSyntax`, `HelperWrites`) naming the user's `file:line`. Nothing is changed.
`views` (which name is a view of which array) is shared with `reverse`.

Exists so `reverse` and `forward` emit code for input already known to be
differentiable, and the refusals are in one place.

>>> from srcgrad.frontend.parse import parse
>>> from srcgrad.naming import Namer
>>> from srcgrad.passes.normalize import normalize
>>> def f(x):
...     parts = []
...     for i in range(2):   # (read inside its loop: not a list passes/lists.py takes)
...         parts.append(x)
...         if len(parts) > 5:
...             break
...     return x
>>> p = parse(f)
>>> check(p, normalize(p.tree, p.env, Namer({"x", "parts"}), p.filename), ["x"])
Traceback (most recent call last):
...
srcgrad.errors.MissingRule: ...: parts.append(...) is called for its effect, ...
"""

from __future__ import annotations

import inspect
import linecache
import logging
import operator
import re
import warnings

import gast

from ..analysis.activity import Activity, activity
from ..analysis.aliasing import (
    HelperWrites,
    fancy_names,
    helper,
    sequence_names,
    sharing_call,
    view_base,
)
from ..analysis.values import ints
from ..errors import MissingRule, UnsupportedSyntax
from ..frontend.parse import MISSING, Parsed, is_user_function, nested_entry, parse
from ..naming import as_written
from ..rules import fact, lookup
from ..runtime import snapshot
from .base import (
    FunctionPass,
    Namespace,
    Operation,
    bindings,
    blocks,
    changed,
    dotted,
    int_constant,
    is_write,
    returned,
    target_of,
)
from .lists import unfollowed_read


def check(parsed: Parsed, fn: gast.FunctionDef, wrt: list[str],
          spelled: dict[str, str] | None = None) -> None:
    """Raise the first reason reverse mode cannot differentiate normalized `fn`; its
    messages name flattened entries as `spelled` spells them (`pytrees.spellings`)."""
    _Check(parsed, fn, None, Namespace(), None).run(wrt, spelled or {})


class _Check(FunctionPass):
    def run(self, wrt: list[str], spelled: dict[str, str]) -> None:
        self.spelled = spelled
        self.ops = self.classify_statements(self.classify)
        act = activity(flow(self), wrt, self.fn.body[-1].value)
        self.check_constructors(act)
        for s in self.statements:
            check_followed(self, s, self.ops.get(id(s)), act.varied, act.useful)
        check_writes(self)
        for s in self.statements:
            if (target_of(s) or is_write(s)) and changed(s) in act.active:
                self.check_adjoint(s, self.ops[id(s)])

    def check_constructors(self, act: Activity) -> None:
        for stmt in self.statements:
            op = self.ops.get(id(stmt))
            if op is None or op.rule is None or op.rule.kind != "constructor":
                continue
            names = [n.id for a in op.args + list(op.kwargs.values())
                     for n in gast.walk(a) if isinstance(n, gast.Name)]
            if target_of(stmt) in act.useful and any(n in act.varied for n in names):
                raise self.error(MissingRule, stmt,
                                 f"{op.what} builds a new array from a value being "
                                 f"differentiated, and no gradient flows through it; use "
                                 f"np.stack or arithmetic instead")

    def check_adjoint(self, stmt: gast.Assign, op: Operation) -> None:
        """What the adjoint of `stmt` (it has one) cannot be made of."""
        if op.kind == "write":
            return
        if op.kind == "rule" and op.fun is operator.mul and self.repeats_a_list(op):
            raise self.error(MissingRule, stmt, "repeating a list a function returned (`* n`) "
                                                "has no gradient rule (the rule of * is "
                                                "arithmetic): build the array with np.tile or "
                                                "np.concatenate")
        if op.kind == "missing" or op.kind == "rule" and op.rule is None:
            raise self.error(MissingRule, stmt, op.what if op.kind == "missing" else
                             f"cannot differentiate {op.what}")
        if op.kind == "call" and op.kwargs:
            raise self.error(MissingRule, stmt, f"keyword arguments in a call to the "
                                                f"differentiated function {op.what} are not "
                                                f"supported yet")

    def repeats_a_list(self, op: Operation) -> bool:
        """Whether `a * n` (n an int) may repeat a list or tuple a user function returned
        (normalize's `joins_sequences` refuses displays): Python repeats it, and `*`'s
        rule would be silently wrong."""
        if not any(isinstance(a, gast.Constant) and type(a.value) is int for a in op.args):
            return False
        made = {target_of(s): self.ops.get(id(s)) for s in self.statements if target_of(s)}
        return any(isinstance(a, gast.Name) and (m := made.get(a.id)) is not None
                   and m.kind == "call" and _returns_sequence(m.fun) for a in op.args)


def flow(fp: FunctionPass) -> list[tuple[str, list[str]]]:
    """(changed name, names a derivative flows from) per assignment of `fp.ops`; none
    into a name that only ever holds an int (`values.ints`: a counter a user function or
    a checkpoint segment returns in a tuple with floats stays an int, never active)."""
    whole = ints(fp.statements, fp.params, lambda func: fp.p.env.resolve(func, fp.locals))
    out = []
    for s in fp.statements:
        op = fp.ops.get(id(s))
        if op is not None:
            out.append((changed(s), [] if changed(s) in whole else op.operands()))
    return out


def check_followed(fp: FunctionPass, stmt: gast.stmt, op: Operation | None,
                   varied: set[str], useful: set[str] | None = None) -> None:
    """Refuse what would drop a derivative without a word: a keyword argument of a
    rule that receives a value being differentiated (rules differentiate positional
    arguments), and a call kept for its effect (`parts.append(v)`, `x.sort()`,
    `np.copyto(z, v)`) that receives one, whose change this pass cannot follow. A
    pure function (its result unused), a `side_call` (`print`, `warnings.warn`,
    logging), and a user function (checked for
    writes into its arguments by normalize) are fine. `useful`: the names the result
    needs (a keyword of a rule whose result it does not need is harmless)."""
    if op is not None and op.kind == "rule" and op.rule is not None \
            and op.rule.kind == "rule" and (useful is None or target_of(stmt) in useful):
        r = op.rule   # the positions it gives gradients for (a whole tuple: each)
        given = len(r.template) if isinstance(r.template, list) else \
            1 if len(r.params) == 1 else len(op.args)
        extra = {f"argument {k + 1}": a for k, a in enumerate(op.args) if k >= given}
        undefined = fact(op.fun, "no_gradient") or {}
        for name, value in zip(r.params, op.args, strict=False):
            if name in undefined and isinstance(value, gast.Name) and value.id in varied:
                raise fp.error(MissingRule, stmt,
                               f"{op.what}: its argument {name} is {undefined[name]}, and "
                               f"receives a value being differentiated; pass a constant, "
                               f"or wrap it in srcgrad.stop_gradient")
        for key, value in [*((f"keyword argument {k}=", v) for k, v in op.kwargs.items()),
                           *extra.items()]:
            if isinstance(value, gast.Name) and value.id in varied:
                raise fp.error(MissingRule, stmt,
                               f"{op.what}: its {key} receives a value being "
                               f"differentiated, and it has no gradient there; pass "
                               f"a constant, or wrap it in srcgrad.stop_gradient")
    if not (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)):
        return
    call = stmt.value
    if not {n.id for n in gast.walk(call) if isinstance(n, gast.Name)} & varied:
        return
    obj = fp.p.env.resolve(call.func, fp.locals)
    if side_call(obj):
        return
    method = obj is MISSING and isinstance(call.func, gast.Attribute)
    r = lookup(obj) if obj is not MISSING else None
    if not method and (r is not None and r.kind != "constructor" or is_user_function(obj)
                       or nested_entry(obj) is not None):
        return
    hint = (" (a list appended to in a loop is differentiated where it is not read in the "
            "loop and, after it, read only as np.stack(L), np.concatenate(L) (each with an "
            "int literal or global int axis= or none), np.array(L), sum(L), np.sum(L), "
            "np.mean(L), len(L) or L[i], with no other name for it"
            f"{_unfollowed(fp, call.func.value)})"
            if method and call.func.attr == "append" else "")
    if method and call.func.attr == "append" and isinstance(call.func.value, gast.Name) \
            and not re.search(rf"\b{call.func.value.id}\b", linecache.getline(
                fp.p.filename, getattr(stmt, "lineno", 0) or 0)):
        # a list the line does not name: a comprehension's (`comprehensions.appended`)
        raise fp.error(MissingRule, stmt,
                       "a list comprehension over values known only when the function "
                       "runs is differentiated where its list is read as np.stack([...]), "
                       "np.concatenate([...]), np.array([...]), sum([...]), np.sum([...]) "
                       "or np.mean([...]), or bound to a name read so, by len(L) or by "
                       "L[i]; here it is read otherwise")
    raise fp.error(MissingRule, stmt,
                   f"{dotted(call.func)}(...) is called for its effect, with a value "
                   f"being differentiated: srcgrad cannot follow what it changes{hint}; "
                   f"build values with a list display and np.stack or np.array, and "
                   f"use functions that return their result")


def _unfollowed(fp, target: gast.AST) -> str:
    """Where list `target` (appended to) is read in a way `lists` does not follow, for the
    refusal of the append: `; L is read otherwise at line N: <line>`, or nothing."""
    if not isinstance(target, gast.Name):
        return ""
    stmt = unfollowed_read(target.id, fp.fn.body, fp.p.env, fp.locals)
    line = getattr(stmt, "lineno", None)
    if line is None:
        return ""
    text = linecache.getline(fp.p.filename, line).strip()
    return f"; {target.id} is read otherwise at line {line}" + (f": {text}" if text else "")


_LOG_LEVELS = {"debug", "info", "warning", "error", "critical", "exception", "log"}


def side_call(obj) -> bool:
    """Whether `obj` is a call that only reports (`print`, `warnings.warn`, a `logging`
    level function or a logger's level method): it reads its arguments and changes no
    value the function computes, so it stays in the forward code with no derivative."""
    if obj is print or obj is warnings.warn:
        return True
    name = getattr(obj, "__name__", None)
    if name not in _LOG_LEVELS:
        return False
    owner = getattr(obj, "__self__", None)
    return getattr(logging, name, None) is obj or \
        isinstance(owner, (logging.Logger, logging.LoggerAdapter))


def views(fp: FunctionPass) -> dict[str, str]:
    """For each name bound to a view of another (`v = x[1:]`, `v = x.T`, `v = x`, an
    item of a tuple display that is one: `p = (x0, y); v = p[0]`), that other name. A
    binding that passes an array on without sharing it (`_renames`, `_swaps`) is none."""
    return _names(fp)[0]


def swapped(fp: FunctionPass) -> list[set[str]]:
    """The names each swap `views` trusts exchanges (`u, v = v, u`): an array written
    under one of them is, across iterations, the array of each."""
    return _names(fp)[1]


def handed(fp: FunctionPass) -> dict[str, set[str]]:
    """The names that hold one array in turn, through the bindings that hand it over
    (`_renames`: renames and views of a value read once; calls that may return an
    argument read only there, `_helper_results`; the swaps `views` trusts): for each, the
    others. A write under one of them changes what the others held (`t2, t3 = t3, t2;
    t2[0] = v` writes into the array `t3` was bound to)."""
    _, swaps, renames = _sharing(fp)
    edges = [(target_of(s), renames[id(s)]) for s in fp.statements if id(s) in renames]
    edges += _helper_results(fp)[1]
    edges += [(target_of(s), s.value.id) for swap in swaps for s in swap[2]]
    group: dict[str, set[str]] = {}
    for a, c in edges:
        merged = group.get(a, {a}) | group.get(c, {c})
        for n in merged:
            group[n] = merged
    return {n: g - {n} for n, g in group.items()}


def _names(fp: FunctionPass) -> tuple[dict[str, str], list[set[str]]]:
    out, swaps, _ = _sharing(fp)
    return out, [swap[3] for swap in swaps]


def _sharing(fp: FunctionPass) -> tuple[dict[str, str], list[tuple], dict[int, str]]:
    """`views`, the swaps it trusts (as `_swaps` gives them) and `_renames`."""
    loads: dict[str, int] = {}
    for n in gast.walk(fp.fn):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            loads[n.id] = loads.get(n.id, 0) + 1
    renames, swaps = _renames(fp, loads), _swaps(fp, loads)
    swapping = {id(s): s.value.id for swap in swaps for s in swap[2]}
    out = _views(fp, renames | swapping)
    unsafe = [swap for swap in swaps if not _swap_kept(fp, swap, out)]
    if unsafe:
        out = _views(fp, renames | {id(s): s.value.id for swap in swaps
                                    if swap not in unsafe for s in swap[2]})
    return out, [swap for swap in swaps if swap not in unsafe], renames


def _views(fp: FunctionPass, passed_on: dict[int, str]) -> dict[str, str]:
    """`views`, where the bindings whose ids `passed_on` maps to a name hand that name's
    array over: the name bound views what the other name viewed, if anything."""
    out: dict[str, str] = {}
    fancy = fancy_names(fp.fn.body)
    items: dict[str, list[gast.expr]] = {}   # the items of tuples: `p = (x0, y)`
    for s in fp.statements:
        name, v = target_of(s), getattr(s, "value", None)
        if name is None or isinstance(v, gast.Name) and v.id == name:
            continue   # (`x = x`: shares nothing)
        if id(s) in passed_on:   # the name takes the array over: what it views, if any
            if (given := passed_on[id(s)]) in out and out[given] != name:
                out[name] = out[given]
            continue
        if isinstance(v, (gast.Tuple, gast.List)):
            items[name] = v.elts
            v = next((e for e in v.elts if isinstance(e, gast.Name)
                      and e.id in fp.locals), None)   # (an index not known: the first)
        elif isinstance(v, gast.Subscript) and isinstance(v.value, gast.Name) \
                and v.value.id in items and (k := int_constant(v.slice)) is not None \
                and -len(items[v.value.id]) <= k < len(items[v.value.id]):
            v = items[v.value.id][k]    # `p[0]` is x0
        if isinstance(v, gast.Name) and v.id in fp.locals:
            out[name] = v.id
        elif isinstance(v, gast.Subscript) and isinstance(v.value, gast.Name):
            if not _fancy(v, fancy):
                out[name] = v.value.id   # a fancy index makes a copy
        elif isinstance(base := view_base(v, fp.p.env, fp.locals), gast.Name):
            out[name] = base.id
    return out


def _alias(s: gast.stmt, fp: FunctionPass, loads: dict[str, int]) -> str | None:
    """b, where `s` is `a = b` and b a local, not an argument, read only there."""
    if target_of(s) and isinstance(s.value, gast.Name) and s.value.id in fp.locals \
            and s.value.id not in fp.params and loads.get(s.value.id) == 1:
        return s.value.id
    return None


def _renames(fp: FunctionPass, loads: dict[str, int]) -> dict[int, str]:
    """id -> b of the bindings `a = b`, or `a = <a view of b>` (`b[1:]`, `np.flip(b)`,
    `b.T`, not an item of a tuple or a list), outside loops where b is a local array
    bound once, outside loops, and read only there (`x_2 = x_1` for `x = x`; `t_1 = _t3`,
    `_t3 = t` for a tuple assignment; `t = np.flip(_t2)` for `t = np.flip(f(x))`): a
    takes b's array (or a part of it) over, and b is never seen again (a write under a
    changes what b held: `handed`)."""
    bound, in_loop = bindings(fp.statements)
    fancy = fancy_names(fp.fn.body)
    sequences = sequence_names(fp.fn)   # (an item of one may be another name's array)
    out = {}
    for k, s in enumerate(fp.statements):
        b_ = _alias(s, fp, loads) or _viewed(s, fp, loads, fancy)
        if b_ and b_ not in sequences and k not in in_loop and \
                len(bound.get(b_, ())) == 1 and bound[b_][0] < k and \
                bound[b_][0] not in in_loop:
            out[id(s)] = b_
    return out


def _fancy(v: gast.Subscript, fancy: set[str]) -> bool:
    """Whether subscript `v` has an index `fancy_names` names (it makes a copy)."""
    parts = v.slice.elts if isinstance(v.slice, gast.Tuple) else [v.slice]
    return any(isinstance(i, gast.Name) and i.id in fancy for i in parts)


def _viewed(s: gast.stmt, fp: FunctionPass, loads: dict[str, int], fancy: set[str]
            ) -> str | None:
    """b, where `s` is `a = <a view of b>` (as `_views` takes one), b a local, not an
    argument, read only there."""
    v = getattr(s, "value", None)
    if target_of(s) is None:
        return None
    if isinstance(v, gast.Subscript):
        if _fancy(v, fancy):
            return None
        base = v.value
    elif isinstance(v, gast.Call) and sharing_call(v, fp.p.env.resolve(v.func, fp.locals)):
        return None   # (a view of any argument: `_helper_results`)
    else:
        base = view_base(v, fp.p.env, fp.locals)
    if isinstance(base, gast.Name) and base.id in fp.locals and \
            base.id not in fp.params and loads.get(base.id) == 1:
        return base.id
    return None


def _swaps(fp: FunctionPass, loads: dict[str, int]) -> list[tuple]:
    """The swaps through temporaries read once, `_t1 = v; _t2 = u; u = _t1; v = _t2` for
    `u, v = v, u` (and rotations; normalize writes the user's `t = u; u = v; v = t` so),
    in loops too: (block, index of its first statement, its statements, the names it
    swaps). The names exchange their arrays, each held by one of them."""
    out = []
    for block in blocks(fp.fn.body):
        for i in range(len(block)):
            takes = []   # `_t1 = v; _t2 = u` ...
            while i + len(takes) < len(block) and _take(block[i + len(takes)], fp, loads):
                takes.append(block[i + len(takes)])
            gives = block[i + len(takes):i + 2 * len(takes)]   # ... `u = _t1; v = _t2`
            names = {target_of(g) for g in gives}
            if len(takes) > 1 and len(gives) == len(takes) and \
                    {_alias(g, fp, loads) for g in gives} == {target_of(t) for t in takes} \
                    and names == {t.value.id for t in takes}:
                out.append((block, i, takes + gives, names))
    return out


def _swap_kept(fp: FunctionPass, swap: tuple, views: dict[str, str]) -> bool:
    """Whether the arrays a swap exchanges are seen by no other name across it: no name
    it swaps is a view, and each view of one is bound once and read only in its block
    from its binding on, and either bound in the swap's block in a loop and read only up
    to the swap (the loop body that ends with it: each iteration's view is taped, `_t =
    u[1:-1]`; outside loops the adjoint reads the view after the swap), or bound after
    the swap, in the block that holds it or the loop it is in
    (or in a branch or loop after those). Else a write under one name after the swap
    could change what the view sees: the user's reads, or the adjoint's of a view taken
    before the swap's loop (`np.sum(u[1:] ** 2)`), which it reads after the loop ran."""
    block_, at, statements, names = swap
    if names & set(views):
        return False
    for view in (k for k in views if _chain(views, k) & names):
        spots = [s for s in fp.statements if target_of(s) == view]
        if len(spots) != 1:
            return False
        here, there = _path(fp.fn.body, spots[0]), _path(fp.fn.body, statements[0])
        common = next((k for k, (a, b) in enumerate(zip(here, there, strict=False))
                       if a[0] is not b[0] or a[1] != b[1]), None)
        if common is None:
            return False
        (block, p), (_, q) = here[-1], there[common]
        if here[common][0] is not there[common][0]:
            return False    # (in two branches of one `if`)
        if block is block_ and p < at and any(
                isinstance(blk[k], (gast.For, gast.While)) for blk, k in there[:-1]):
            segment = block[p:at]
        elif here[common][1] > q:
            segment = block[p:]
        else:
            return False
        inside = {id(n) for s in segment for n in gast.walk(s)}
        if any(isinstance(n, gast.Name) and n.id == view and isinstance(n.ctx, gast.Load)
               and id(n) not in inside for n in gast.walk(fp.fn)):
            return False
    return True


def _path(body: list[gast.stmt], stmt: gast.stmt) -> list[tuple]:
    """The (block, index) pairs from `body` down to `stmt`, each block's statement that
    holds it: [(body, 3), (body[3].body, 0)] for the first statement of a loop at 3."""
    for k, s in enumerate(body):
        if s is stmt:
            return [(body, k)]
        for field in ("body", "orelse"):
            if isinstance(getattr(s, field, None), list) and \
                    (inner := _path(getattr(s, field), stmt)):
                return [(body, k)] + inner
    return []


def _chain(views: dict[str, str], name: str) -> set[str]:
    """The names `name` is a view of, through views of views."""
    out = set()
    while name in views and views[name] not in out:
        name = views[name]
        out.add(name)
    return out


def _take(s: gast.stmt, fp: FunctionPass, loads: dict[str, int]) -> bool:
    """Whether `s` is `_t = v`: v a local taken into a temporary read once."""
    name = target_of(s)
    return bool(name) and name.startswith("_") and loads.get(name) == 1 and \
        isinstance(s.value, gast.Name) and s.value.id in fp.locals


def view_root(views: dict[str, str], name: str) -> str:
    """The array `name` is a view of (through views of views: x[0][::-1]), or itself."""
    seen = set()
    while name in views and name not in seen:
        seen.add(name)
        name = views[name]
    return name


def check_writes(fp: _Check) -> None:
    """Writes go into arrays, not through a view (the tape tracks arrays by name).
    An argument of the function differentiated that it writes into was copied on entry
    (normalize); a helper's argument was not, and is refused here."""
    shared, shares = views(fp), handed(fp)
    passed = _helper_results(fp)[0]
    # the arguments copied on entry under their own name (`x = x.copy()`, where x is
    # bound again in a loop or a branch, so not numbered): writes go into the copy
    copied = {target_of(s) for s in fp.fn.body[:len(fp.params)] if target_of(s) in fp.params
              and isinstance(s.value, gast.Call) and len(s.value.args) <= 1 and any(
                  isinstance(n, gast.Name) and n.id == target_of(s) for n in gast.walk(s.value))
              and (fp.p.env.resolve(s.value.func, fp.locals) is snapshot or isinstance(
                  s.value.func, gast.Attribute) and s.value.func.attr == "copy")}
    for s in fp.statements:
        if not is_write(s):
            continue
        name = s.targets[0].value.id
        # (an argument handed on, `t = g(a)` where g may return a, is written into too)
        root = next((r for n in sorted({name} | shares.get(name, set()))
                     if (r := view_root(shared, n)) in fp.params and r not in copied),
                    view_root(shared, name))
        if root in fp.params and root not in copied:   # a helper's: see inplace's copy_args
            raise fp.error(HelperWrites, s,
                           f"writing into {name}[...] in a helper would change the "
                           f"array its caller passed as {root!r}, which cannot be "
                           f"differentiated; copy it first ({root} = {root}.copy()) "
                           f"and return it")
        # (a name handed such a result holds the array too: `a, c = h(y), 1.0`)
        if given := next((n for n in sorted({name} | shares.get(name, set()))
                          if n in passed), None):
            arg, fun, stmt = passed[given]
            raise fp.error(UnsupportedSyntax, s,
                           f"{name!r} may be the array {arg!r} that {fun} was passed "
                           f"(it may return it, or a view of it), and {arg!r} is read "
                           f"again: writing into {name!r} would change it unseen; copy "
                           f"the result first ({name} = {fun}(...).copy())")
        if any(target_of(t) == name and isinstance(t.value, gast.List)
               for t in fp.statements):
            raise fp.error(UnsupportedSyntax, s,
                           f"{name!r} is a list: an item write ({name}[k] = v) is "
                           f"differentiated in straight-line code, at a constant index, "
                           f"where the list is read only by index, len, a loop over it "
                           f"or a builtin or NumPy function; here, write into an "
                           f"array of its items instead (a = np.array({name}))")
        if name in shared:
            name, base = _user_name(fp, name), _user_name(fp, root)
            if name == base or base.startswith("_"):
                # (bound from a value normalize named, or round names: `a, b = b, a`)
                raise fp.error(UnsupportedSyntax, s,
                               f"{name!r} is bound from another name (`{name} = other`, "
                               f"a tuple assignment or a swap), which srcgrad takes to "
                               f"share its array: a write into it cannot be followed; "
                               f"copy it first ({name} = {name}.copy())")
            raise fp.error(UnsupportedSyntax, s,
                           f"{name!r} is a view of {base!r}; write into {base!r} "
                           f"itself, or copy the view first")


def _user_name(fp: _Check, name: str) -> str:
    """The user's name `name` stands for where normalize numbered it (`x_1 = x.copy()`,
    `x_2 = x_1`: an argument's copy and a name bound to it again; `t_1`: a user's `t`
    bound again by a tuple assignment), or flattened it (`p_W`: `p['W']`), else `name`."""
    return as_written(name, {n for n in fp.locals if not n.startswith("_")},
                      getattr(fp, "spelled", None))


def _helper_results(fp: FunctionPass
                    ) -> tuple[dict[str, tuple[str, str, gast.stmt]], list[tuple[str, str]]]:
    """The names bound to what a call returns that may be an array passed to it (or a view
    of one): a user function's (its facts say which parameters it may return) or NumPy's
    that may give views of any argument (`sharing_call`). Where that array is read
    elsewhere too: name -> (argument, function, call), and a write into it is refused;
    where it is read only in the call: (name, argument), the name holds its array
    (`handed`)."""
    loads: dict[str, int] = {}
    for st in fp.statements:
        for n in gast.walk(st):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                loads[n.id] = loads.get(n.id, 0) + 1
    out, edges = {}, []
    shared = views(fp)
    for st in fp.statements:
        name, call = target_of(st), getattr(st, "value", None)
        if name is None or not isinstance(call, gast.Call):
            continue
        fun = fp.p.env.resolve(call.func, fp.locals)
        if is_user_function(fun):
            facts = helper(fun)
            if not facts.shares:
                continue
            params = list(inspect.signature(fun).parameters)
            bound = list(zip(params, call.args, strict=False)) + \
                [(k.arg, k.value) for k in call.keywords]
            args = [arg for param, arg in bound
                    if facts.returns is None or param in facts.returns]
        elif sharing_call(call, fun):
            args = list(call.args)
        else:
            continue
        for arg in args:
            if not (isinstance(arg, gast.Name) and arg.id in fp.locals):
                continue
            if loads.get(arg.id, 0) > sum(isinstance(n, gast.Name) and n.id == arg.id
                                          for n in gast.walk(call)) or arg.id in shared:
                # (read elsewhere, or a view of an array that is: `def g(a=y)`, `g()`)
                out[name] = (_user_name(fp, view_root(shared, arg.id)),
                             getattr(fun, "__name__", "the helper"), st)
            else:
                edges.append((name, arg.id))
    return out, edges


def _returns_sequence(fun) -> bool:
    """Whether a `return` of the user function `fun` gives a list or tuple display, or
    a name the function binds to one."""
    returns = returned(fun) or []
    displays = {t.id for node in gast.walk(parse(nested_entry(fun) or fun).tree)
                if isinstance(node, gast.Assign)
                and isinstance(node.value, (gast.List, gast.Tuple))
                for t in node.targets if isinstance(t, gast.Name)} if returns else set()
    return any(isinstance(r, (gast.List, gast.Tuple)) or isinstance(r, gast.Name)
               and r.id in displays for r in returns)
