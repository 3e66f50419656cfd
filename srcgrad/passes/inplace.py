"""inplace: copy on entry the arguments the body writes into; check in-place changes of
arrays that other names share.

Requires the user's function body (nested expressions allowed, docstring removed, one
final `return`). Guarantees the same body, where

* ``x = x.copy()`` comes first for each parameter whose array the body writes into
  (`x[i] = ...`, `x[i] += ...`, or through a view: `v = x[1:]; v[0] = ...`; it is
  ``x = snapshot(x)``, which keeps a number, where only what a helper returns of x is
  written into), unless `copy_args` is false (a helper, whose caller sees its writes);
* ``z op= e`` on an array a view is taken of (or on a view) is ``z[:] op= e``: NumPy
  changes it in place, and the views see the change;
* ``v op= e`` on a name that may share its array with another (a row `v = z[1]` of a
  matrix, an argument of a helper, what a helper may return of its arguments) is
  preceded by ``v = unshared(v, message)``, which keeps a number and refuses an array
  when the code runs (``out = acc`` outside loops and branches, with no ``op=`` after it,
  shares nothing any ``op=`` changes: the adjoint's ``dx = dv`` after its loop).

A call to a user function that writes into an array it is passed raises `HelperWrites`.
Exists so that the generated code never changes the caller's arrays, and every in-place
change the later passes meet is one the gradient can follow.
"""

from __future__ import annotations

import collections
import os
from typing import Any

import gast

from .. import builder as b
from ..analysis.aliasing import (
    all_assignments,
    assigned_names,
    keeps_array,
    returned_shared,
    root_name,
    through_views,
    value_bindings,
    writes,
)
from ..frontend.parse import MISSING, Env
from ..runtime import snapshot, unshared


def bound_name(env: Env, name: str, helper: Any) -> str:
    """The name under which the code `inplace` and `views` write calls srcgrad's runtime
    `helper` (bound in the function's closure; `srcgrad_<name>` if the user's code has its
    own `name`)."""
    if env.lookup(name) not in (MISSING, helper):
        name = f"srcgrad_{name}"
    env.closure[name] = helper
    return name


def _settled(body: list[gast.stmt]) -> set[int]:
    """The ids of the values of the `v = x` bindings outside any loop or branch after
    which no name is changed by `op=`: once the two share an array, nothing changes it in
    place (`out = acc` after the loop that accumulates `acc += e`). (Not only v and x:
    a swap after it may give the array to a third name.)"""
    out = set()
    for k, s in enumerate(body):
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and \
                isinstance(s.value, gast.Name) and not any(
                    isinstance(n, gast.AugAssign) for t in body[k + 1:] for n in gast.walk(t)):
            out.add(id(s.value))
    return out


_SYMBOLS = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.Pow: "**",
            gast.MatMult: "@", gast.FloorDiv: "//", gast.Mod: "%"}


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
    settled = _settled(body)
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
    for node in gast.walk(b.function(fn.name, params, body)):
        if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name) and (
                node.target.id in viewed or node.target.id in sure_views):
            # (a view changed in place changes its base: a write through it)
            # `z += e` on an array changes it in place, and its views with it: `z[:] += e`
            name = node.target.id
            node.target = b.located(b.subscript(b.name(name), b.make(
                gast.Slice, lower=None, upper=None, step=None), store=True), node)
            written.add(name)
    maybe_views = {name for name in views if name not in sure_views and name not in viewed
                   and through_views({name}, views) & (set(params) | written) - {name}}
    shared = maybe_views | aliased | returned_shared(body, env, local_names) | (
        set() if copy_args else set(params))

    class Unshared(gast.NodeTransformer):
        """`v op= e` where v may be an array another name shares (a row `v = z[1]` of a
        matrix, or a helper's argument): in place, NumPy changes both, which the
        gradient cannot follow. On a number it is a new value; on an array, an error."""

        def visit_AugAssign(self, node):
            if not (isinstance(node.target, gast.Name) and node.target.id in shared):
                return node
            name = node.target.id
            where = f"{os.path.basename(filename)}:{getattr(node, 'lineno', '?')}"
            message = (f"{where}: '{name} {_SYMBOLS.get(type(node.op), 'op')}= ...' changes "
                       f"in place an array that another name shares (a row of a matrix, "
                       f"or the array a caller passed), which cannot be differentiated: "
                       f"write {name} = {name} {_SYMBOLS.get(type(node.op), 'op')} ... (a new "
                       f"array), or copy it first")
            check = b.located(b.assign(name, b.call(b.name(bound_name(env, "unshared", unshared)),
                                                    b.name(name), b.const(message))), node)
            return [check, node]

    body = [Unshared().visit(s) for s in body]
    body = [t for s in body for t in (s if isinstance(s, list) else [s])]
    reached = through_views(written, views)

    def copy(p: str) -> gast.expr:
        if p in written:   # (written through a subscript: an array)
            return b.call(b.make(gast.Attribute, value=b.name(p), attr="copy", ctx=gast.Load()))
        # reached through what a helper may return of it: a number there stays one
        return b.call(b.name(bound_name(env, "snapshot", snapshot)), b.name(p))

    copies = [b.located(b.assign(p, copy(p)), fn) for p in params if p in reached and copy_args]
    return copies + list(body)


