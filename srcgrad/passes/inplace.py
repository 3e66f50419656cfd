"""inplace: copy on entry the arguments the body writes into; check in-place changes of
arrays that other names share.

Requires the user's function body (nested expressions allowed, docstring removed, one
final `return`). Guarantees the same body, where

* ``x = x.copy()`` comes first for each parameter whose array the body writes into
  (`x[i] = ...`, `x[i] += ...`, or through a view: `v = x[1:]; v[0] = ...`; it is
  ``x = snapshot(x)``, which keeps a number, where only what a helper returns of x is
  written into, or ``x op= e`` below may be of a number), unless `copy_args` is false
  (a helper, whose caller sees its writes);
* ``z op= e`` on an array a view is taken of (or on a view) is ``z[:] op= e``: NumPy
  changes it in place, and the views see the change (preceded by
  the check ``in_place_array(z, message)`` where z may be a number, which refuses one: the
  "view" `np.reshape(z, ...)` of a number is a new array, and `op=` binds again);
* ``v op= e`` on a name that may share its array with another (a row `v = z[1]` of a
  matrix, an argument of a helper, what a helper may return of its arguments) is
  preceded by ``v = unshared(v, message)``, which keeps a number and refuses an array
  when the code runs (``out = acc`` outside loops and branches, with no ``op=`` after it,
  shares nothing any ``op=`` changes: the adjoint's ``dx = dv`` after its loop);
* ``v = z[k]`` (or ``for v in z``) where ``v op= e`` follows and another read may see the
  item change (z read whole, the same item read again, a list holding an argument) is
  followed by that check, once, where the item is read: an entry of a vector stays a
  number, and a row of a matrix or an array a list holds is refused.

A call to a user function that writes into an array it is passed raises `HelperWrites`.
Exists so that the generated code never changes the caller's arrays, and every in-place
change the later passes meet is one the gradient can follow.
"""

from __future__ import annotations

import collections
import linecache
import os
from typing import Any

import gast
import numpy as np

from .. import builder as b
from ..analysis.aliasing import (
    all_assignments,
    assigned_names,
    keeps_array,
    never_arrays,
    returned_shared,
    root_name,
    through_views,
    value_bindings,
    writes,
)
from ..frontend.parse import MISSING, Env
from ..runtime import in_place_array, snapshot, unshared
from .base import blocks
from .comprehensions import COMPREHENSIONS


def bound_name(env: Env, name: str, helper: Any) -> str:
    """The name under which the code `inplace` and `views` write calls srcgrad's runtime
    `helper` (bound in the function's closure; `srcgrad_<name>` if the user's code has its
    own `name`)."""
    if env.lookup(name) not in (MISSING, helper):
        name = f"srcgrad_{name}"
    env.closure[name] = helper
    return name


def _settled(body: list[gast.stmt], params: list[str]) -> set[int]:
    """The ids of the values of the `v = x` bindings (and of the names of `v = (a, x)`)
    outside any loop or branch after which no `op=` changes v, x, or a name that may come
    to hold their array (through any binding, read as it may be by name, item or
    unpacking): once the two share an array, nothing changes it in place (`out = acc`
    after the loop that accumulates `acc += e`; `da = d_t3` after `db += e` in a
    gradient's code, which a higher order reads; `t = (a, d)` after `d += a`)."""
    bindings = list(value_bindings(b.function("f", params, body)))
    out = set()
    for k, s in enumerate(body):
        if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)):
            continue
        held = [s.value] if isinstance(s.value, gast.Name) else [
            e for e in s.value.elts if isinstance(e, gast.Name)] if isinstance(
            s.value, (gast.Tuple, gast.List)) else []
        out |= {id(x) for x in held if _unchanged_after(body[k + 1:], bindings,
                                                         {s.targets[0].id, x.id})}
    return out


def _unchanged_after(rest: list[gast.stmt], bindings: list, holders: set[str]) -> bool:
    """Whether no `op=` in `rest` changes a name of `holders` or one that may come to hold
    their array."""
    grown = True
    while grown:   # (every name a holder's value may reach, wherever it is bound)
        more = {t for t, v, _ in bindings
                if any(isinstance(n, gast.Name) and n.id in holders for n in gast.walk(v))}
        grown = bool(more - holders)
        holders = holders | more
    return not any(isinstance(n, gast.AugAssign) and (not isinstance(n.target, gast.Name) or
                                                      n.target.id in holders)
                   for t in rest for n in gast.walk(t))


def _fresh(body: list[gast.stmt], env: Env, local_names: frozenset[str]) -> set[int]:
    """The ids of the `v op= e` statements whose v, in their block, was last bound to a
    copy (`v = snapshot(v)`, `v = x.copy()`, `np.copy(x)`) or to the new array or number an
    operator makes (`dx = dx + e`, `-e`) with nothing since but writes
    into v and statements that do not mention it: whatever names shared v's array before,
    none shares the copy (`da = snapshot(da); da[:-1] += d; da += e` in a gradient's code,
    after `da = d_t7` of a swap, which its forward mode reads; `dx = d_t4; dx = dx + e;
    dx += e2`, which its hvp reads)."""
    def copies(value: gast.AST) -> bool:
        if isinstance(value, (gast.BinOp, gast.UnaryOp)):
            return True
        if not isinstance(value, gast.Call):
            return False
        if isinstance(value.func, gast.Attribute) and value.func.attr == "copy":
            return not value.args
        return env.resolve(value.func, local_names) in (snapshot, np.copy)

    def mentions(node: gast.AST, name: str) -> bool:
        return any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(node))

    out = set()
    for block in blocks(body):
        for k, s in enumerate(block):
            if not (isinstance(s, gast.AugAssign) and isinstance(s.target, gast.Name)):
                continue
            v = s.target.id
            for t in reversed(block[:k]):
                if isinstance(t, gast.Assign) and len(t.targets) == 1 and \
                        isinstance(t.targets[0], gast.Name) and t.targets[0].id == v:
                    if copies(t.value):
                        out.add(id(s))
                    break
                target = getattr(t, "target", None) or (t.targets[0] if isinstance(
                    t, gast.Assign) and len(t.targets) == 1 else None)
                into = isinstance(target, gast.Subscript) and isinstance(
                    target.value, gast.Name) and target.value.id == v and \
                    not mentions(target.slice, v) or \
                    isinstance(t, gast.AugAssign) and isinstance(target, gast.Name) and \
                    target.id == v
                if into and not mentions(t.value, v) or \
                        isinstance(t, (gast.Assign, gast.AugAssign, gast.Expr)) and \
                        not mentions(t, v):
                    continue
                break
    return out


def _item_reads(body: list[gast.stmt], name: str, root, loads: collections.Counter,
                keep: set[str]) -> bool:
    """Whether `name` is bound to an item of an array or list in `body` (`name = z[k]`,
    `for name in z`; `root(z)` is z's name) that another name may see changed: z itself is
    read as a whole, is in `keep` (the caller's arrays, names sharing an array), or another
    read of z may be the same item (`t = z[0]` and `z[0]`, not `z[1]`; any item read in a
    loop may be read again). False if `name` is bound to anything else that may share an
    array (`name = x`, `name = f(x)`): other checks see to those."""
    tree = b.function("f", [], body)
    mine: dict[int, str] = {}   # id of each read that binds name -> the array read
    for node in gast.walk(tree):
        if isinstance(node, gast.For) and isinstance(node.target, gast.Name) and \
                node.target.id == name:
            value = node.iter
        elif isinstance(node, gast.Assign) and any(
                isinstance(n, gast.Name) and n.id == name for t in node.targets
                for n in gast.walk(t)):
            value = node.value
            if not isinstance(node.targets[0], gast.Name):
                return False   # (an item of a tuple target: not followed here)
        else:
            continue
        if (isinstance(value, gast.Subscript) or isinstance(node, gast.For)) and \
                root(value) is not None:
            mine[id(value)] = root(value)
        elif root(value) is not None or isinstance(value, gast.Call):
            return False

    def index(node: gast.AST):   # the constant index an item read reads, or None
        k = getattr(node, "slice", None)
        return k.value if isinstance(k, gast.Constant) else None

    for z in set(mine.values()):
        reads = [n for n in gast.walk(tree) if isinstance(n, gast.Subscript)
                 and isinstance(n.value, gast.Name) and n.value.id == z] + \
                [n.iter for n in gast.walk(tree) if isinstance(n, gast.For)
                 and isinstance(n.iter, gast.Name) and n.iter.id == z]
        ours = {index(n) for n in reads if id(n) in mine}
        if z in keep or loads[z] > len(reads) or None in ours or any(
                index(n) is None or index(n) in ours for n in reads if id(n) not in mine):
            return True
    return False


def _rows_read_by(body: list[gast.stmt], names: set[str]) -> dict:
    """The lists each of `names` may be an item of (`t = z[k]`, `for t in z`, `t = [...][k]`):
    name of the list, or id of the comprehension, -> the first such name."""
    out: dict = {}
    for node in gast.walk(b.function("f", [], body)):
        if isinstance(node, gast.For) and isinstance(node.target, gast.Name) and \
                node.target.id in names:
            t, base = node.target.id, node.iter
        elif isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name) and \
                node.targets[0].id in names and isinstance(node.value, gast.Subscript):
            t, base = node.targets[0].id, node.value.value
        else:
            continue
        key = base.id if isinstance(base, gast.Name) else id(base)
        out.setdefault(key, t)
    return out


_SYMBOLS = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.Pow: "**",
            gast.MatMult: "@", gast.FloorDiv: "//", gast.Mod: "%"}


_CONSTRUCTORS = (np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like,
                 np.empty_like, np.full_like, np.array, np.arange, np.linspace, np.eye)


def _bound_otherwise(node: gast.AST) -> gast.AST:
    """The target of `node` if it binds names other than as `name = value`."""
    if isinstance(node, (gast.For, gast.comprehension, gast.NamedExpr)):
        return node.target
    if isinstance(node, gast.withitem) and node.optional_vars is not None:
        return node.optional_vars
    if isinstance(node, gast.Assign) and not isinstance(node.targets[0], gast.Name):
        return node.targets[0]
    return b.const(None)


def _in_place_message(name: str, node: gast.AugAssign, filename: str) -> str:
    where = f"{os.path.basename(filename)}:{getattr(node, 'lineno', '?')}"
    op = _SYMBOLS.get(type(node.op), 'op')
    return (f"{where}: '{name} {op}= ...' with {name} a number, after a view of it is "
            f"taken (np.reshape, np.asarray, ...): srcgrad differentiates it as NumPy's "
            f"change in place of an array, which the view sees; for a number write "
            f"{name} = {name} {op} ...")


def copy_written_params(fn: gast.FunctionDef, body: list[gast.stmt], env: Env,
                        filename: str, copy_args: bool = True) -> list[gast.stmt]:
    """`x = x.copy()` first, for each parameter the body writes into (`x[i] = ...`,
    `x[i] += ...`, or through a view `v = x[1:]; v[0] = ...`): the generated code never
    changes the caller's arrays, and inside the function the writes behave as NumPy's.
    `z += e` where a view of `z` is taken becomes `z[:] += e` (what NumPy does: the
    views see it); elsewhere it may rebind (a number, or an array nobody else sees).
    Without `copy_args` (a helper: its caller sees the writes) nothing is copied, and
    `reverse` refuses a write into an argument.

    >>> import gast, astor
    >>> fn = gast.parse("def f(x, z):\\n    v = x[1:]\\n    v[0] = 2.0\\n    x += z\\n"
    ...                 "    r = z[1]\\n    r += 1.0\\n    return r").body[0]
    >>> fn.body = copy_written_params(fn, fn.body, Env({}), "f.py")
    >>> print(astor.to_source(gast.gast_to_ast(fn)).strip())
    def f(x, z):
        x = x.copy()
        v = x[1:]
        v[0] = 2.0
        x[:] += z
        r = z[1]
        r = unshared(r,
            "f.py:6: 'r += ...' changes in place an array that another name shares ...
            )
        r += 1.0
        return r
    """
    params = [a.id for a in fn.args.args]
    local_names = assigned_names(b.function(fn.name, params, body))

    def _root(node: gast.AST) -> str | None:
        return root_name(node, env, local_names)

    written, views = writes(params, body, env, filename)
    viewed = set()   # arrays of which a view may be taken (x[1:], x[0], x.T, ...)
    aliased = set()  # the two names of `v = x` (v read): one array, whichever `op=` changes
    loads = collections.Counter(n.id for s in body for n in gast.walk(s)
                                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load))
    changed = {n.target.id for s in body for n in gast.walk(s)
               if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name)}
    bindings = list(value_bindings(b.function(fn.name, params, body)))
    settled = _settled(body, params)
    for target, value, shares in bindings:
        if _root(value) is not None:
            if not isinstance(value, gast.Name):
                viewed.add(_root(value))
            elif shares and value.id != target and id(value) not in settled and (
                    target in loads or target in changed and loads[value.id] > 1):
                # (v read: `x op= e` changes it; or `v op= e` changes x, read elsewhere)
                aliased |= {value.id, target}   # (`a, b = b, a` swaps: no sharing)
    # a list holds the array appended to it: `v op= e` after `L.append(v)` changes its item
    aliased |= {n.args[0].id for s in body for n in gast.walk(s) if isinstance(n, gast.Call)
                and isinstance(n.func, gast.Attribute) and n.func.attr == "append"
                and len(n.args) == 1 and isinstance(n.args[0], gast.Name)}
    while True:   # ... but a swapped name takes along the sharing of the array it gets
        passed = {t for t, v, shares in bindings if not shares and isinstance(v, gast.Name)
                  and v.id in aliased} - aliased
        if not passed:
            break
        aliased |= passed
    sure_views = set()   # names bound to a slice or a view method of an array
    for node in all_assignments(body):
        v = node.value
        if _root(v) is not None and not isinstance(v, gast.Name) and (
                not isinstance(v, gast.Subscript) or keeps_array(v.slice)):
            sure_views.add(node.targets[0].id)
    # names that are arrays wherever they are read: subscripted, written into, or made by
    # NumPy's constructors alone
    made = collections.defaultdict(set)
    for node in all_assignments(body):
        v = node.value
        made[node.targets[0].id].add(isinstance(v, gast.Call) and
                                     env.resolve(v.func, local_names) in _CONSTRUCTORS)
    for node in gast.walk(b.function(fn.name, params, body)):   # (`for z in x`, `a, z = p`)
        for t in gast.walk(_bound_otherwise(node)):
            if isinstance(t, gast.Name):
                made[t.id].add(False)
    arrays = written | sure_views | {n.value.id for s in body for n in gast.walk(s)
                                     if isinstance(n, gast.Subscript)
                                     and isinstance(n.value, gast.Name)} | {
        name for name, kinds in made.items() if kinds == {True} and name not in params}
    maybe_numbers = {}   # `z op= e` made `z[:] op= e` where z may be a number: its message
    for node in gast.walk(b.function(fn.name, params, body)):
        if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name) and (
                node.target.id in viewed or node.target.id in sure_views):
            # (a view changed in place changes its base: a write through it)
            # `z += e` on an array changes it in place, and its views with it: `z[:] += e`
            name = node.target.id
            if name not in arrays:   # (np.reshape(z, ...) of a number z is a new array)
                maybe_numbers[id(node)] = _in_place_message(name, node, filename)
            node.target = b.located(b.subscript(b.name(name), b.make(
                gast.Slice, lower=None, upper=None, step=None), store=True), node)
            written.add(name)
    maybe_views = {name for name in views if name not in sure_views and name not in viewed
                   and through_views({name}, views) & (set(params) | written) - {name}}
    shared = aliased | returned_shared(body, env, local_names) | (
        set() if copy_args else set(params))
    # an item read from any array or list (`t = M[0]`, `t = L[-1]`, `for t in M`) is a view
    # where it is an array: `t op= e` changes M (or the list's item) whether or not M is
    # written elsewhere. It is checked once, where it is read (often a number: `acc = x[0]`)
    items = {t for t in changed - shared - sure_views - viewed
             if _item_reads(body, t, _root, loads, aliased | set(params))}
    shared |= maybe_views - items
    # (`e = d; e += 1` with d a shape's item: a number, shared with nothing)
    numbers = never_arrays(b.function(fn.name, params, body), env, local_names)
    shared -= numbers
    items -= numbers
    first_change = {}
    for node in gast.walk(b.function(fn.name, params, body)):
        if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
            first_change.setdefault(node.target.id, node)

    def checked(name: str, node: gast.AugAssign, value: gast.expr) -> gast.expr:
        where = f"{os.path.basename(filename)}:{getattr(node, 'lineno', '?')}"
        op = _SYMBOLS.get(type(node.op), 'op')
        message = (f"{where}: '{name} {op}= ...' changes in place an array that another name "
                   f"shares (a row of a matrix, an item of a list, or the array a caller "
                   f"passed), which cannot be differentiated: write {name} = {name} {op} ... "
                   f"(a new array), or copy it first")
        line = linecache.getline(filename, getattr(node, "lineno", 0) or 0).strip()
        if line and name not in line:   # (a name the user did not write: `d["a"]`'s d_a)
            message += f"\n    {line}"
        return b.call(b.name(bound_name(env, "unshared", unshared)), value, b.const(message))

    def check(name: str, node: gast.AugAssign, at: gast.AST) -> gast.stmt:
        return b.located(b.assign(name, checked(name, node, b.name(name))), at)

    # a list that is built by appends or a comprehension becomes an array of its items
    # (`lists`), where a 0-d array item is a number that no longer shares the item's
    # array: a row that may be an array is checked as it goes in instead
    rows = _rows_read_by(body, (shared | items) & changed)
    for node in gast.walk(b.function(fn.name, params, body)):
        taken = rows.get(id(node)) or (isinstance(node, gast.Assign) and isinstance(
            node.targets[0], gast.Name) and rows.get(node.targets[0].id))
        if not taken:
            continue
        if isinstance(node, gast.Assign):
            node = node.value
        if isinstance(node, COMPREHENSIONS) and _root(node.elt) is not None:
            node.elt = checked(taken, first_change[taken], node.elt)
    for node in gast.walk(b.function(fn.name, params, body)):
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
                node.func.attr == "append" and isinstance(node.func.value, gast.Name) and \
                (taken := rows.get(node.func.value.id)) and len(node.args) == 1 and \
                _root(node.args[0]) is not None:
            node.args[0] = checked(taken, first_change[taken], node.args[0])

    class Unshared(gast.NodeTransformer):
        """`v op= e` where v may be an array another name shares (a row `v = z[1]` of a
        matrix, or a helper's argument): in place, NumPy changes both, which the
        gradient cannot follow. On a number it is a new value; on an array, an error."""

        def visit_AugAssign(self, node):
            if id(node) in maybe_numbers:
                name = node.target.value.id   # (a check, not a name bound again: z's views)
                return [b.located(b.make(gast.Expr, value=b.call(
                    b.name(bound_name(env, "in_place_array", in_place_array)), b.name(name),
                    b.const(maybe_numbers[id(node)]))), node), node]
            if not (isinstance(node.target, gast.Name) and node.target.id in shared) or \
                    id(node) in fresh:
                return node
            return [check(node.target.id, node, node), node]

        def visit_Assign(self, node):
            t = node.targets[0]
            if isinstance(t, gast.Name) and t.id in items and \
                    isinstance(node.value, gast.Subscript) and _root(node.value) is not None:
                return [node, check(t.id, first_change[t.id], node)]
            return node

        def visit_For(self, node):
            self.generic_visit(node)
            t = node.target
            if isinstance(t, gast.Name) and t.id in items and _root(node.iter) is not None:
                node.body.insert(0, check(t.id, first_change[t.id], node))
            return node

    fresh = _fresh(body, env, local_names)
    body = [Unshared().visit(s) for s in body]
    body = [t for s in body for t in (s if isinstance(s, list) else [s])]
    reached = through_views(written, views)

    converted = {n for n in reached if n not in arrays}   # (`z[:] op= e` of srcgrad's)

    def copy(p: str) -> gast.expr:
        if p in written and p not in converted:   # (written through a subscript: an array)
            return b.call(b.make(gast.Attribute, value=b.name(p), attr="copy", ctx=gast.Load()))
        # reached through what a helper may return of it: a number there stays one
        return b.call(b.name(bound_name(env, "snapshot", snapshot)), b.name(p))

    copies = [b.located(b.assign(p, copy(p)), fn) for p in params if p in reached and copy_args]
    return copies + list(body)


