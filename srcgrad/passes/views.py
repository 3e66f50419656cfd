"""views: take views again after each write into their array, or check them where that
cannot be done.

Requires a normalized body in single-assignment form (what `normalize` makes before this
pass). Guarantees the same A-normal form, where after each subscript write ``z[i] = a``

* each view of z taken earlier and read later (`v = z[1:]`, `z.T`, `z.reshape(...)`,
  views of views) is taken again: its statement is repeated; ``v = z[0]``, a row of a
  matrix or a number of a vector, is taken again as ``v = retake(v, z[0])``, which keeps
  a number;
* a view that cannot be taken again (taken in a loop or a branch, with names assigned
  more than once, indexed by a name, or returned by a helper that may return its
  argument) and is read after the write is checked where it is taken:
  ``v = unaliased(_t, z, message)`` keeps a copy or a number and refuses a view of z
  when the code runs.

Exists so that the code, and the adjoint that follows the names, see what NumPy's
aliasing shows: a view reads the values written into its array.
"""

from __future__ import annotations

import ast
import copy
import os

import gast

from .. import builder as b
from ..analysis.aliasing import (
    index_parts,
    is_basic_index,
    keeps_array,
    root_name,
    sharing_helper,
    view_base,
)
from ..frontend.parse import Env
from ..naming import Namer, as_written
from ..runtime import retake
from ..runtime import unaliased as unaliased_helper
from .base import all_statements
from .inplace import bound_name


def _as_written(node: gast.AST, user_names: frozenset[str], spelled: dict[str, str]
                ) -> gast.AST:
    """A copy of `node` with the versions single assignment made (`x_1` of x) and the
    flattened entries (`p_W` of `p['W']`) named as the user wrote them, for messages."""
    node = copy.deepcopy(node)
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and (n.id not in user_names or n.id in spelled):
            n.id = as_written(n.id, user_names, spelled)
    return node


def _in_loops(body: list[gast.stmt]) -> set[int]:
    """The ids of the statements in a loop's body, at any depth."""
    return {id(n) for s in body if isinstance(s, (gast.For, gast.While))
            for t in s.body for n in gast.walk(t)} | {
        i for s in body for field in ("body", "orelse")
        if not isinstance(s, (gast.For, gast.While)) and isinstance(getattr(s, field, None), list)
        for i in _in_loops(getattr(s, field))}


class _Last(tuple):
    """(name, base, statement): a view a loop body takes, as its next iteration finds it
    (never taken again after a write: in the first iteration it was not taken yet)."""


def retake_views(body: list[gast.stmt], params: list[str], env: Env,
                 namer: Namer, filename: str, user_names: frozenset[str],
                 spelled: dict[str, str] | None = None) -> list[gast.stmt]:
    """After each write into an array, take again the views of it made earlier
    (`v = z[1:]`, `z.T`, `z.reshape(...)`, views of views), so that the code (and the
    adjoint, which follows the names) sees what NumPy's aliasing shows: a view reads the
    written values. `v = z[0]` is a view when z is a matrix and a number when z is a
    vector: it is taken again as `v = retake(v, z[0])`, which keeps a number. Views whose
    base or index names are assigned more than once may not alias the same array any
    more: they are not taken again, but checked where they are taken (`unaliased`).

    >>> import gast, astor
    >>> fn = gast.parse("def f(x):\\n    v = x[1:]\\n    w = x[0]\\n    x[1] = 2.0\\n"
    ...                 "    return v + w").body[0]
    >>> names = frozenset({"x", "v", "w"})
    >>> fn.body = retake_views(fn.body, ["x"], Env({}), Namer(names), "f.py", names)
    >>> print(astor.to_source(gast.gast_to_ast(fn)).strip())
    def f(x):
        v = x[1:]
        w = x[0]
        x[1] = 2.0
        v = x[1:]
        _t1 = x[0]
        w = retake(w, _t1)
        return v + w
    """
    spelled = spelled or {}   # (flattened entries as the user spells them, for messages)
    maybe: set[int] = set()   # int-indexed reads: a row (a view) or a number
    written = {n.targets[0].value.id for n in gast.walk(b.function("f", [], body))
               if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Subscript)
               and isinstance(n.targets[0].value, gast.Name)}   # so arrays
    stores: dict[str, int] = {p: 1 for p in params}
    loop_indices = set()
    for node in gast.walk(b.function("f", [], body)):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
        if isinstance(node, gast.For) and isinstance(node.target, gast.Name):
            loop_indices.add(node.target.id)
    once = {n for n, k in stores.items() if k == 1}
    aliases: set[str] = set()   # the views found so far, in program order
    loose: set[int] = set()     # views that may not alias the same array when it is written
    returned: dict[str, list[str]] = {}   # results of helpers that may return an argument
    items: dict[str, list[gast.expr]] = {}   # the items of tuples and lists
    helper_of: dict[str | int, str] = {}   # (their names, and the views of them: the helper)
    named_index: set[int] = set()   # `z[k]`: a view or a copy, as k is an int or an array
    loosely: set[str] = set()   # the names of loose views (that may be views when written)
    parts: set[str] = set()     # the names of views of a part of an array (or of one)
    in_loops = _in_loops(body)

    def view_of(stmt: gast.stmt) -> list[str]:
        """The arrays `stmt` binds a view of (one, or the arguments of a helper that may
        return them)."""
        if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)):
            return []
        v, name = stmt.value, stmt.targets[0].id
        if fun := sharing_helper(v, env, frozenset(stores)):
            # what it returns may be an argument: never taken again, checked if read
            bases = [r for a in [*v.args, *(k.value for k in v.keywords)]
                     if (r := root_name(a, env, frozenset(stores))) is not None]
            returned[name] = bases
            helper_of[name] = helper_of[id(stmt)] = fun.__name__
            loose.add(id(stmt))
            return bases
        if isinstance(v, (gast.Tuple, gast.List)):
            items[name] = v.elts
            return []
        if isinstance(v, gast.Subscript) and isinstance(v.value, gast.Name) \
                and v.value.id in items:   # `p[1]` of `p = (a, x[1:])` is x[1:]
            elts = items[v.value.id]
            k = v.slice.value if isinstance(v.slice, gast.Constant) and \
                isinstance(v.slice.value, int) and -len(elts) <= v.slice.value < len(elts) \
                else None
            loose.add(id(stmt))
            return [e.id for e in (elts if k is None else [elts[k]])
                    if isinstance(e, gast.Name)]
        if isinstance(v, gast.Subscript) and isinstance(v.value, gast.Name):
            if not is_basic_index(v.slice, loop_indices):
                # `z[k]`, k a name: a view if k is an int, a copy if an index array; known
                # when the code runs, so checked there where a write could show
                named = {n.id for n in index_parts(v.slice) if isinstance(n, gast.Name)}
                if not named or not is_basic_index(v.slice, loop_indices | named):
                    return []
                loose.add(id(stmt))
                named_index.add(id(stmt))
            if returned.get(v.value.id):   # an item of what a helper returned, which
                # may be an array passed to it (or a view of one): that array's too
                helper_of[id(stmt)] = helper_of[v.value.id]
                loose.add(id(stmt))
                return [*returned[v.value.id], v.value.id]
            if not keeps_array(v.slice):
                maybe.add(id(stmt))   # `z[0]` may be a number: a copy (a row is not)
            base = v.value.id
            parts.add(name)
        elif isinstance(v, gast.Name) and (v.id in written or v.id in aliases or (
                v.id in loosely and (id(stmt) not in in_loops or v.id in parts))):
            base = v.id   # `y = x`: the same array (x written into, or a view, or a name
            # that may be one: `t7 = _t2` after `_t2 = t8`, `t8 = x0` in a branch; in
            # loops, only one that may be part of another array: `b2, b3 = b3, b2` after
            # `b3 = t1[::-1]` there, while the double buffer's `u = _t1` of `_t1 = v`,
            # whole arrays, is the swap `check` follows)
            if v.id in parts:
                parts.add(name)
        elif isinstance(seen := view_base(v, env, frozenset(stores)), gast.Name):
            base = seen.id
            parts.add(name)
        else:
            return []
        names = {n.id for n in gast.walk(v) if isinstance(n, gast.Name)} & set(stores) - {base}
        if name not in once or base not in once or not names <= once | loop_indices:
            loose.add(id(stmt))
            loosely.add(name)
            return [base]
        aliases.add(name)
        return [base]

    def first_use(stmts: list[gast.stmt], name: str) -> str | None:
        """Whether `stmts` first read `name` ("load") or first assign it ("store")."""
        for stmt in stmts:
            if name in loads([stmt]):
                return "load"
            if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name) \
                    and stmt.targets[0].id == name:
                return "store"
        return None

    def outside(stmt: gast.stmt) -> set[str]:
        """The names read anywhere in the function but in `stmt`."""
        inside = {id(n) for n in gast.walk(stmt)}
        return {n.id for s in body for n in gast.walk(s) if isinstance(n, gast.Name)
                and isinstance(n.ctx, gast.Load) and id(n) not in inside}

    def loads(stmts: list[gast.stmt]) -> set[str]:
        return {n.id for s in stmts for n in gast.walk(s)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}

    def walk(stmts: list[gast.stmt], views: list[tuple[str, str, gast.stmt]],
             later: set[str], direct: set[str],
             taken: list[tuple[str, str, gast.stmt]]) -> list[gast.stmt]:
        """`later`: the names read after this block, or again in an enclosing loop;
        `direct`: the same without this loop's next iterations (which take again the
        views this block takes); `taken` collects the views this block takes."""
        out, outer = [], {v[0] for v in views if not isinstance(v, _Last)}
        for k, stmt in enumerate(stmts):
            if bases := view_of(stmt):   # (taken here again: not the last iteration's)
                views = [v for v in views if v[2] is not stmt or not isinstance(v, _Last)]
            for base in bases:
                views = views + [(stmt.targets[0].id, base, stmt)]
                taken.append(views[-1])
            after = later | loads(stmts[k + 1:])
            inner = direct | loads(stmts[k + 1:])
            nested: list[tuple[str, str, gast.stmt]] = []
            if isinstance(stmt, (gast.For, gast.While)):
                # the views the body takes are there at its start from the second
                # iteration on, before the body takes them again (`x = z[:, 0]` last)
                last = [_Last((s.targets[0].id, base, s)) for s in all_statements(stmt.body)
                        for base in view_of(s)]
                # a name the body binds before it reads it, and that nothing outside
                # the loop reads, is not read later: enclosing loops' next iterations
                # read it as this body binds it again (`_t1 = b[1:]` of `b[1:] += v`)
                kept = {name for name in loads(stmt.body) - outside(stmt)
                        if first_use(stmt.body, name) == "store"}
                stmt.body = walk(stmt.body, views + last, (after | loads([stmt])) - kept,
                                 after - kept, nested)
            elif isinstance(stmt, gast.If):
                stmt.body = walk(stmt.body, views, after, inner, nested)
                stmt.orelse = walk(stmt.orelse, views, after, inner, nested)
            # a view a loop or a branch may have taken cannot be taken again after it
            loose.update(id(view) for _, _, view in nested)
            views = views + nested
            taken += nested
            out.append(stmt)
            if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript) \
                    and isinstance(stmt.targets[0].value, gast.Name):
                changed = {stmt.targets[0].value.id}
                stale: set[str] = set()   # changed views not taken again here
                grew, rounds = True, 0
                while grew:
                    # in the order they were taken; again while that finds more (in a loop,
                    # `_t4 = b` comes before `b = _t2` of the last iteration's rotation)
                    grew, rounds = False, rounds + 1
                    for entry in views:
                        name, base, view = entry
                        if base not in changed or name in changed:
                            continue
                        changed.add(name)
                        grew = True
                        read = after if name in outer else inner
                        if id(view) in loose or isinstance(entry, _Last) or \
                                base in stale or rounds > 1:
                            # a view of a view not taken again would be taken again
                            # from the stale one: the adjoint would skip the write
                            stale.add(name)
                            if name in read and first_use(stmts[k + 1:], name) != "store":
                                checked[id(view)] = (name, base, stmt.targets[0].value.id)
                        elif name in read or any(v[1] == name for v in views):
                            out += [b.located(t, stmt) for t in retaken(view)]
        return out

    def unaliased(stmts: list[gast.stmt]) -> list[gast.stmt]:
        """A view read after a write into its array that cannot be taken again (its
        names are assigned more than once) is checked where it is taken: refused when
        the code runs if it is a view (a row of a matrix), kept if a number."""
        out = []
        for stmt in stmts:
            for field in ("body", "orelse"):
                if isinstance(stmt, (gast.For, gast.While, gast.If)):
                    setattr(stmt, field, unaliased(getattr(stmt, field)))
            if id(stmt) not in checked:
                out.append(stmt)
                continue
            name, base, written_array = checked[id(stmt)]
            where = f"{os.path.basename(filename)}:{getattr(stmt, 'lineno', '?')}"
            shown = _as_written(stmt, user_names, spelled)
            view = ast.unparse(gast.gast_to_ast(shown.value))
            user = shown.targets[0].id
            array = _as_written(b.name(written_array), user_names, spelled).id
            why = ("its index is a name (an int there makes a view, an index array a copy)"
                   if id(stmt) in named_index else "the view is taken in a loop or a branch, "
                   "or its names are assigned more than once")
            temporaries = {n.id for n in gast.walk(shown.value)
                           if isinstance(n, gast.Name)} - user_names - set(spelled.values())
            copied = "where it is taken (.copy())" if temporaries else \
                f"({user} = {view}.copy())"
            message = (f"{where}: {user!r} is a view of {array!r} read after a write into "
                       f"{array!r}, which the gradient cannot follow where {why}: copy it "
                       f"{copied}")
            helper_name = helper_of.get(id(stmt))
            if helper_name and isinstance(shown.value, gast.Subscript) and \
                    getattr(shown.value.value, "id", None) == array:
                message = (f"{where}: {user!r} is a view of {array!r}, which {helper_name} "
                           f"returned and may be an array passed to it, read after a write "
                           f"into {array!r}, which the gradient cannot follow: return a copy "
                           f"from {helper_name}, or copy {array!r} first")
            elif helper_name:
                message = (f"{where}: {user!r}, returned by {helper_name}, is the "
                           f"array {array!r} (or a view of it), read after a write into "
                           f"{array!r}, which the gradient cannot follow: return a copy from "
                           f"{helper_name}, or copy {user!r} first")
            tmp = namer.temp()
            check = b.call(b.name(bound_name(env, "unaliased", unaliased_helper)), b.name(tmp),
                           b.name(base), b.const(message))
            out += [b.located(b.assign(tmp, stmt.value), stmt),
                    b.located(b.assign(name, check), stmt)]
        return out

    def retaken(view: gast.Assign) -> list[gast.stmt]:
        if id(view) not in maybe:
            return [copy.deepcopy(view)]
        name, tmp = view.targets[0].id, namer.temp()
        return [b.assign(tmp, copy.deepcopy(view.value)),
                b.assign(name, b.call(b.name(bound_name(env, "retake", retake)), b.name(name),
                                      b.name(tmp)))]

    checked: dict[int, tuple[str, str, str]] = {}   # view -> (name, its base, array written)
    return unaliased(walk(body, [], set(), set(), []))

