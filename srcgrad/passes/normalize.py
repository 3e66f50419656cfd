"""normalize: desugar a function body to one operation per statement (A-normal form).

Requires a tree accepted by `reject_unsupported`. Guarantees a new FunctionDef whose body
is a list of:

* ``name = op`` where ``op`` is an atom (a Name, a Constant or a global such as `np.pi`),
  or one operation whose operands are atoms: BinOp, UnaryOp, a single Compare, BoolOp,
  Call, Attribute, Subscript (index built from atoms and slices of atoms), Tuple, List;
* ``name[index] = atom`` (a subscript write; `x[i] += v` reads, adds, writes);
* ``Expr(call)`` for calls kept for their effect (`print`);
* ``with grad_of(h) as dh:`` over a normalized block (a hook, see `annotate`: code
  for the backward pass);
* ``if atom:`` with normalized blocks; ``for name in range(atoms):`` (loops over arrays,
  `enumerate` and `zip` become index loops); ``while op:`` (a test that takes statements
  runs them before the loop, at the end of the body and before each `continue`);
  `break` and `continue` only at the end of a block (see `jumps`);
* one final ``return atom``.

A name assigned only outside loops and branches is assigned once (a reassigned `x`
becomes `x_1` from that point on), so the adjoint reads its values without a tape; a
name assigned inside a loop or branch keeps its name, and the tape (`analysis/tape`)
restores what its overwrites destroy. Augmented assignment, tuple targets, chained
comparisons, multiple targets and unary minus on constants are desugared. Each new
statement keeps the line of the statement it came from, which is how the adjoint
comments name the user's line. Exists so that `reverse` needs one rule per operation
and one form per construct.
"""

from __future__ import annotations

import ast
import collections
import copy
import inspect
import os
import weakref
from dataclasses import dataclass
from typing import Any

import gast

from .. import builder as b
from ..errors import SrcgradError, UnsupportedSyntax
from ..frontend.parse import MISSING, Env, is_user_function, parse
from ..naming import Namer
from ..rules import fact
from ..runtime import retake, unshared
from ..runtime import unaliased as unaliased_helper
from .annotate import annotate
from .base import all_statements
from .jumps import structure_jumps
from .reject import reject_unsupported


def assigned_names(fn: gast.FunctionDef) -> frozenset[str]:
    """Parameters and every name the body stores to."""
    names = {a.id for a in fn.args.args}
    for node in gast.walk(fn):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            names.add(node.id)
    return frozenset(names)


def normalize(fn: gast.FunctionDef, env: Env, namer: Namer, filename: str,
              copy_args: bool = True) -> gast.FunctionDef:
    """A-normal form of `fn`; names assigned only outside loops and branches are assigned once.

    >>> import gast, astor
    >>> fn = gast.parse("def f(x, y):\\n    x = x * y + 3.0\\n    return -x").body[0]
    >>> out = normalize(fn, Env({}), Namer({"x", "y"}), "f.py")
    >>> print(astor.to_source(gast.gast_to_ast(out)).strip())
    def f(x, y):
        _t1 = x * y
        x_1 = _t1 + 3.0
        _t2 = -x_1
        return _t2
    """
    fn = copy.deepcopy(fn)
    norm = _Normalizer(env, assigned_names(fn), namer, filename)
    body = fn.body
    if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
        body = body[1:]  # docstring
    if not body or not isinstance(body[-1], gast.Return):
        body = body + [b.located(b.ret(b.const(None)), body[-1] if body else fn)]
    body = _copy_written_params(fn, body, env, filename, copy_args)
    body = structure_jumps(body, namer)
    norm.locals = assigned_names(b.function(fn.name, [a.id for a in fn.args.args], body))
    out = norm.block(body)
    fn.body = _retake_views(_single_assignment(out, [a.id for a in fn.args.args], namer),
                            [a.id for a in fn.args.args], env, namer, filename, norm.locals)
    return fn


# array methods and attributes whose result may be a view (functions: their `view` fact)
VIEW_METHODS = frozenset({"reshape", "ravel", "transpose", "T", "swapaxes", "squeeze", "view",
                          "flat", "real", "imag", "diagonal"})


def view_base(node: gast.AST, env: Env, local_names: frozenset[str]) -> gast.AST | None:
    """The expression `node` may be a view of, one step: `x` of `x[1:]`, `x.T`,
    `x.reshape(2, 2)`, `np.reshape(x, (2, 2))`; None if it makes a new array."""
    if isinstance(node, gast.Subscript):
        return node.value
    if isinstance(node, gast.Attribute) and node.attr in VIEW_METHODS and \
            env.resolve(node.value, local_names) is MISSING:
        return node.value
    if isinstance(node, gast.Call):
        func = node.func
        if isinstance(func, gast.Attribute) and func.attr in VIEW_METHODS and \
                env.resolve(func.value, local_names) is MISSING:
            return func.value
        if node.args and fact(env.resolve(func, local_names), "view"):
            return node.args[0]
    return None


def root_name(node: gast.AST, env: Env, local_names: frozenset[str]) -> str | None:
    """The name an expression reads through subscripts and views (`x` of `x.T[1:]`,
    `x.reshape(2, 2)[0]`, `np.squeeze(x)`), or None."""
    while node is not None and not isinstance(node, gast.Name):
        node = _view_step(node, env, local_names)
    return node.id if node is not None else None


def _view_step(node: gast.AST, env: Env, local_names: frozenset[str]) -> gast.AST | None:
    """`view_base`, but None for a fancy index (which makes a copy)."""
    if isinstance(node, gast.Subscript):
        parts = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        if any(isinstance(i, (gast.List, gast.ListComp, gast.Compare)) for i in parts):
            return None
    return view_base(node, env, local_names)


def _sharing_helper(node: gast.AST, env: Env, local_names: frozenset[str]) -> Any:
    """The user function `node` calls if it may return an array it is passed, else None."""
    if isinstance(node, gast.Call) and \
            is_user_function(fun := env.resolve(node.func, local_names)) and \
            helper(fun).shares:
        return fun
    return None


def _bound(env: Env, name: str, helper: Any) -> str:
    """The name under which code normalize writes calls srcgrad's `helper` (bound in the
    function's closure; `srcgrad_<name>` if the user's code has its own `name`)."""
    if env.lookup(name) not in (MISSING, helper):
        name = f"srcgrad_{name}"
    env.closure[name] = helper
    return name


_SYMBOLS = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/", gast.Pow: "**",
            gast.MatMult: "@", gast.FloorDiv: "//", gast.Mod: "%"}


def _copy_written_params(fn: gast.FunctionDef, body: list[gast.stmt], env: Env,
                         filename: str, copy_args: bool = True) -> list[gast.stmt]:
    """`x = x.copy()` first, for each parameter the body writes into (`x[i] = ...`,
    `x[i] += ...`, or through a view `v = x[1:]; v[0] = ...`): the generated code never
    changes the caller's arrays, and inside the function the writes behave as NumPy's.
    `z += e` where a view of `z` is taken becomes `z[:] += e` (what NumPy does: the
    views see it); elsewhere it may rebind (a number, or an array nobody else sees).
    Without `copy_args` (a helper: its caller sees the writes) nothing is copied, and
    `reverse` refuses a write into an argument."""
    params = [a.id for a in fn.args.args]
    local_names = assigned_names(b.function(fn.name, params, body))

    def _root(node: gast.AST) -> str | None:
        return root_name(node, env, local_names)

    written, views = _writes(params, body, env, filename)
    viewed = set()   # arrays of which a view may be taken (x[1:], x[0], x.T, ...)
    aliased = set()  # the two names of `v = x` (v read): one array, whichever `op=` changes
    loads = collections.Counter(n.id for s in body for n in gast.walk(s)
                                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load))
    changed = {n.target.id for s in body for n in gast.walk(s)
               if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name)}
    bindings = list(_bindings(b.function(fn.name, params, body)))
    for target, value, shares in bindings:
        if _root(value) is not None:
            if not isinstance(value, gast.Name):
                viewed.add(_root(value))
            elif shares and value.id != target and (
                    target in loads or target in changed and loads[value.id] > 1):
                # (v read: `x op= e` changes it; or `v op= e` changes x, read elsewhere)
                aliased |= {value.id, target}   # (`a, b = b, a` swaps: no sharing)
    while True:   # ... but a swapped name takes along the sharing of the array it gets
        passed = {t for t, v, shares in bindings if not shares and isinstance(v, gast.Name)
                  and v.id in aliased} - aliased
        if not passed:
            break
        aliased |= passed
    sure_views = set()   # names bound to a slice or a view method of an array
    for node in gast.walk(b.function(fn.name, params, body)):
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name) and \
                _root(node.value) is not None and not isinstance(node.value, gast.Name):
            v = node.value
            parts = v.slice.elts if isinstance(v, gast.Subscript) and isinstance(
                v.slice, gast.Tuple) else [getattr(v, "slice", None)]
            if not isinstance(v, gast.Subscript) or any(
                    isinstance(i, gast.Slice) or isinstance(i, gast.Constant) and
                    i.value in (None, Ellipsis) for i in parts):
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
                   and _through_views({name}, views) & (set(params) | written) - {name}}
    shared = maybe_views | aliased | _returned_shared(body, env, local_names) | (
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
            check = b.located(b.assign(name, b.call(b.name(_bound(env, "unshared", unshared)),
                                                    b.name(name), b.const(message))), node)
            return [check, node]

    body = [Unshared().visit(s) for s in body]
    body = [t for s in body for t in (s if isinstance(s, list) else [s])]
    reached = _through_views(written, views)
    copies = [b.located(b.assign(p, b.call(b.make(gast.Attribute, value=b.name(p), attr="copy",
                                                  ctx=gast.Load()))), fn)
              for p in params if p in reached and copy_args]
    return copies + list(body)


def _bindings(tree: gast.AST):
    """(name, value, whether it shares) for each name an assignment in `tree` binds to a
    value it shows: `v = e`, and each item of `a, b = e1, e2`; an item shares unless it
    reads a name the same assignment binds (`a, b = b, a` swaps, making no new sharing).
    A name bound to a tuple or list display shares each of its items (`p = (y, x)`:
    `p[1]` is x's array)."""
    for node in gast.walk(tree):
        if not isinstance(node, gast.Assign):
            continue
        target, value = node.targets[0], node.value
        if isinstance(target, gast.Name):
            for item in _items(value):
                yield target.id, item, True
        elif isinstance(target, gast.Tuple) and isinstance(value, gast.Tuple) and \
                len(target.elts) == len(value.elts):
            bound = {t.id for t in target.elts if isinstance(t, gast.Name)}
            for t, v in zip(target.elts, value.elts, strict=True):
                if isinstance(t, gast.Name):
                    for item in _items(v):
                        yield t.id, item, not (isinstance(item, gast.Name) and item.id in bound)


def _items(value: gast.AST):
    """`value`, or the items of a tuple or list display, at any depth."""
    if isinstance(value, (gast.Tuple, gast.List)):
        for e in value.elts:
            yield from _items(e)
    else:
        yield value


class HelperWrites(UnsupportedSyntax):
    """A call to a user function that writes into an array it is passed."""


def _writes(params: list[str], body: list[gast.stmt], env: Env,
            filename: str) -> tuple[set[str], dict[str, set[str]]]:
    """The arrays `body` writes into (`x[i] = ...`), and the names bound to views
    (`v = x[1:]`: v -> {x}). A call to a user helper that writes into an array it is
    passed is refused: the gradient cannot follow a write made in another function."""
    local_names = assigned_names(b.function("f", params, body))
    views: dict[str, set[str]] = {}
    written: set[str] = set()
    for node in gast.walk(b.function("f", params, body)):
        if isinstance(node, (gast.Assign, gast.AugAssign)):
            targets = node.targets if isinstance(node, gast.Assign) else [node.target]
            for t in targets:
                # (what `x[idx] = v` writes into is x, whatever the index: the value)
                if isinstance(t, gast.Subscript) and \
                        (root := root_name(t.value, env, local_names)) is not None:
                    written.add(root)
                elif isinstance(node, gast.Assign):
                    pairs = [(t, node.value)]
                    if isinstance(t, gast.Tuple) and isinstance(node.value, gast.Tuple) and \
                            len(t.elts) == len(node.value.elts):
                        pairs = list(zip(t.elts, node.value.elts, strict=True))
                    for name, value in pairs:   # (`a, b = x, y[1:]` binds two views)
                        if not isinstance(name, gast.Name):
                            continue
                        # a tuple or list holds its items: `p = (x, y); v = p[1]` is y;
                        # a helper may return what it is passed (`h(x[1:])`)
                        for item in _items(value):
                            for root in _roots(item, env, local_names):
                                views.setdefault(name.id, set()).add(root)
        elif isinstance(node, gast.Call) and \
                is_user_function(fun := env.resolve(node.func, local_names)):
            changed = helper(fun).written
            names = list(inspect.signature(fun).parameters)
            bound = [(k.arg, k.value) for k in node.keywords] + \
                list(zip(names, node.args, strict=False))
            for name, arg in bound:
                if name in changed and root_name(arg, env, local_names) is not None:
                    raise HelperWrites(
                        f"{fun.__name__} writes into its argument {name!r}, the array "
                        f"passed here as {root_name(arg, env, local_names)!r}, which the "
                        f"gradient cannot follow: in {fun.__name__}, write into a copy "
                        f"({name} = {name}.copy()) and return it",
                        filename=filename, lineno=getattr(node, "lineno", None))
    return written, views


def _roots(value: gast.AST, env: Env, local_names: frozenset[str]) -> set[str]:
    """The arrays `value` may be (or view), through subscripts and views: its root name,
    or those of the arguments of a user function that may return one it is passed
    (`h(x[1:])[::-1]`)."""
    node = value
    while node is not None and not isinstance(node, gast.Name):
        if _sharing_helper(node, env, local_names):
            return {r for a in [*node.args, *(k.value for k in node.keywords)]
                    for r in _roots(a, env, local_names)}
        node = _view_step(node, env, local_names)
    return {node.id} if node is not None else set()


def _through_views(written: set[str], views: dict[str, set[str]]) -> set[str]:
    """The arrays a write into one of `written` changes: those and what they view."""
    reached, todo = set(), list(written)
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo += views.get(name, ())
    return reached


def _returned_shared(body: list[gast.stmt], env: Env, local_names: frozenset[str]) -> set[str]:
    """The names bound to what a user function returns when it may return an array it
    was passed, a view of one, or one array twice (`h, c = cell(x)`: h may be x), and
    the arrays passed to it (x, which `x += e` would change with h); also where the call
    is an item of a tuple or list display (`p = (y, h(x))`)."""
    out = set()
    for node in gast.walk(b.function("f", [], body)):
        if not isinstance(node, gast.Assign):
            continue
        for call in _items(node.value):
            if _sharing_helper(call, env, local_names):
                out |= {n.id for t in node.targets for n in gast.walk(t)
                        if isinstance(n, gast.Name)}
                out |= {r for a in call.args
                        if (r := root_name(a, env, local_names)) is not None}
    return out


@dataclass(frozen=True)
class HelperFacts:
    """What a caller must know of a user function it calls: the parameters whose arrays
    it writes into, and whether its results may share memory with other names."""

    written: frozenset[str] = frozenset()
    shares: bool = True   # (unknown: no source, or a recursive call)


def _helper_facts(fun: Any) -> HelperFacts:
    try:
        parsed = annotate(parse(fun))
        tree = reject_unsupported(parsed.tree, parsed.filename)
        tree = normalize(tree, parsed.env, Namer(assigned_names(tree)), parsed.filename,
                         copy_args=False)
    except HelperWrites:
        raise   # it passes its argument to a helper that writes into it
    except SrcgradError:
        return HelperFacts()   # called as it is, as the compiler does
    params = [a.id for a in tree.args.args]
    written, views = _writes(params, tree.body, parsed.env, parsed.filename)
    return HelperFacts(frozenset(params) & _through_views(written, views),
                       _returns_shared(tree, params, views, parsed.env))


def _returns_shared(tree: gast.FunctionDef, params: list[str], views: dict[str, set[str]],
                    env: Env) -> bool:
    """Whether the normalized function may return an array it was passed (or a view of
    one), or one array twice (`return b, b`). After `a = a * 2`, `a` is a new array."""
    returned = tree.body[-1].value   # normalized: one final `return atom`
    if not isinstance(returned, gast.Name):
        return False
    local_names = assigned_names(tree)
    for node in gast.walk(tree):
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name) and \
                node.targets[0].id == returned.id:
            value = node.value
            elts = value.elts if isinstance(value, gast.Tuple) else [value]
            roots = [r for e in elts if (r := root_name(e, env, local_names)) is not None]
            if len(roots) != len(set(roots)) or any(
                    _through_views({r}, views) & set(params) for r in roots):
                return True
    return returned.id in params


_HELPERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def helper(fun: Any) -> HelperFacts:
    """The facts about user function `fun` its callers need, made once per function."""
    if fun not in _HELPERS:
        _HELPERS[fun] = HelperFacts()   # what a recursive call sees
        try:
            _HELPERS[fun] = _helper_facts(fun)
        except HelperWrites:
            del _HELPERS[fun]
            raise
    return _HELPERS[fun]


_FANCY_CALLS = ("array", "asarray", "arange", "nonzero", "argsort", "flatnonzero", "argwhere")


def fancy_names(body: list[gast.stmt]) -> set[str]:
    """Names bound to an index that makes a copy (a list, a comparison mask, an integer
    array made by a NumPy call): `x[idx]` with one of these is not a view of `x`."""
    out = set()
    for s in all_assignments(body):
        v = s.value
        if isinstance(v, (gast.List, gast.ListComp, gast.Compare)) or \
                isinstance(v, gast.Call) and isinstance(v.func, gast.Attribute) and \
                v.func.attr in _FANCY_CALLS:
            out.add(s.targets[0].id)
    return out


def all_assignments(body: list[gast.stmt]):
    for node in gast.walk(b.function("f", [], body)):
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
            yield node


def is_basic_index(index: gast.AST, basic: set[str]) -> bool:
    """Whether `x[index]` is a view of `x` (NumPy's basic indexing): slices, int
    constants, `None`, `...` and names in `basic` (loop indices)."""
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    for part in parts:
        if isinstance(part, gast.Slice):
            continue
        if isinstance(part, gast.Constant) and (part.value is None or part.value is Ellipsis
                                                or type(part.value) is int):
            continue
        if isinstance(part, gast.Name) and part.id in basic:
            continue
        return False
    return True


def _as_written(node: gast.AST, user_names: frozenset[str]) -> gast.AST:
    """A copy of `node` with the versions single assignment made (`x_1` of x) named as
    the user wrote them, for messages."""
    node = copy.deepcopy(node)
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and n.id not in user_names:
            n.id = next((u for u in [n.id.rsplit("_", 1)[0]] if u in user_names), n.id)
    return node


class _Last(tuple):
    """(name, base, statement): a view a loop body takes, as its next iteration finds it
    (never taken again after a write: in the first iteration it was not taken yet)."""


def _retake_views(body: list[gast.stmt], params: list[str], env: Env,
                  namer: Namer, filename: str, user_names: frozenset[str]
                  ) -> list[gast.stmt]:
    """After each write into an array, take again the views of it made earlier
    (`v = z[1:]`, `z.T`, `z.reshape(...)`, views of views), so that the code (and the
    adjoint, which follows the names) sees what NumPy's aliasing shows: a view reads the
    written values. `v = z[0]` is a view when z is a matrix and a number when z is a
    vector: it is taken again as `v = retake(v, z[0])`, which keeps a number. Views whose
    base or index names are assigned more than once are left alone: they may not alias
    the same array any more."""
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

    def view_of(stmt: gast.stmt) -> list[str]:
        """The arrays `stmt` binds a view of (one, or the arguments of a helper that may
        return them)."""
        if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)):
            return []
        v, name = stmt.value, stmt.targets[0].id
        if fun := _sharing_helper(v, env, frozenset(stores)):
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
            parts = v.slice.elts if isinstance(v.slice, gast.Tuple) else [v.slice]
            if not is_basic_index(v.slice, loop_indices):
                # `z[k]`, k a name: a view if k is an int, a copy if an index array; known
                # when the code runs, so checked there where a write could show
                named = {n.id for n in parts if isinstance(n, gast.Name)}
                if not named or not is_basic_index(v.slice, loop_indices | named):
                    return []
                loose.add(id(stmt))
                named_index.add(id(stmt))
            if returned.get(v.value.id):   # an item of what a helper returned, which
                # may be an array passed to it (or a view of one): that array's too
                helper_of[id(stmt)] = helper_of[v.value.id]
                loose.add(id(stmt))
                return [*returned[v.value.id], v.value.id]
            if not any(isinstance(i, gast.Slice) or isinstance(i, gast.Constant) and
                       i.value in (None, Ellipsis) for i in parts):
                maybe.add(id(stmt))   # `z[0]` may be a number: a copy (a row is not)
            base = v.value.id
        elif isinstance(v, gast.Name) and (v.id in written or v.id in aliases):
            base = v.id   # `y = x`: the same array (x written into, or a view)
        elif isinstance(seen := view_base(v, env, frozenset(stores)), gast.Name):
            base = seen.id
        else:
            return []
        names = {n.id for n in gast.walk(v) if isinstance(n, gast.Name)} & set(stores) - {base}
        if name not in once or base not in once or not names <= once | loop_indices:
            loose.add(id(stmt))
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
                stmt.body = walk(stmt.body, views + last, after | loads([stmt]), after,
                                 nested)
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
                for entry in views:   # in the order they were taken
                    name, base, view = entry
                    if base in changed and name not in changed:
                        changed.add(name)
                        read = after if name in outer else inner
                        if id(view) in loose or isinstance(entry, _Last):
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
            shown = _as_written(stmt, user_names)
            view = ast.unparse(gast.gast_to_ast(shown.value))
            user, array = shown.targets[0].id, _as_written(b.name(written_array), user_names).id
            why = ("its index is a name (an int there makes a view, an index array a copy)"
                   if id(stmt) in named_index else "the view is taken in a loop or a branch, "
                   "or its names are assigned more than once")
            temporaries = {n.id for n in gast.walk(shown.value)
                           if isinstance(n, gast.Name)} - user_names
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
            check = b.call(b.name(_bound(env, "unaliased", unaliased_helper)), b.name(tmp),
                           b.name(base), b.const(message))
            out += [b.located(b.assign(tmp, stmt.value), stmt),
                    b.located(b.assign(name, check), stmt)]
        return out

    def retaken(view: gast.Assign) -> list[gast.stmt]:
        if id(view) not in maybe:
            return [copy.deepcopy(view)]
        name, tmp = view.targets[0].id, namer.temp()
        return [b.assign(tmp, copy.deepcopy(view.value)),
                b.assign(name, b.call(b.name(_bound(env, "retake", retake)), b.name(name),
                                      b.name(tmp)))]

    checked: dict[int, tuple[str, str, str]] = {}   # view -> (name, its base, array written)
    return unaliased(walk(body, [], set(), set(), []))


class _Normalizer:
    def __init__(self, env: Env, local_names: frozenset[str], namer: Namer, filename: str):
        self.env = env
        self.locals = local_names
        self.namer = namer
        self.filename = filename
        self.out: list[gast.stmt] = []
        self.origin: gast.stmt | None = None
        self.conditions: list[list[gast.stmt]] = []  # per enclosing while: its test, as code

    def error(self, node: gast.AST, message: str) -> UnsupportedSyntax:
        return UnsupportedSyntax(message, filename=self.filename,
                                 lineno=getattr(node, "lineno", None),
                                 col=getattr(node, "col_offset", None))

    def emit(self, stmt: gast.stmt) -> None:
        self.out.append(b.located(stmt, self.origin))

    def block(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        """The normalized statements of one block (a new list; `self.out` is restored)."""
        outer, self.out = self.out, []
        for stmt in stmts:
            self.statement(stmt)
        out, self.out = self.out, outer
        return out

    # ---- statements ----
    def statement(self, stmt: gast.stmt) -> None:
        self.origin = stmt
        if isinstance(stmt, gast.Pass):
            return
        if isinstance(stmt, gast.Expr):
            if isinstance(stmt.value, gast.Constant):
                return
            self.emit(b.make(gast.Expr, value=self.operation(stmt.value)))
        elif isinstance(stmt, gast.Return):
            value = stmt.value if stmt.value is not None else b.const(None)
            self.emit(b.ret(self.atom(value)))
        elif isinstance(stmt, gast.Assign):
            self.assign(stmt.targets, stmt.value)
        elif isinstance(stmt, gast.AnnAssign):
            if stmt.value is not None:
                self.assign([stmt.target], stmt.value)
        elif isinstance(stmt, gast.AugAssign):
            self.aug_assign(stmt)
        elif isinstance(stmt, gast.If):
            self.if_(stmt)
        elif isinstance(stmt, gast.For):
            self.for_(stmt)
        elif isinstance(stmt, gast.While):
            self.while_(stmt)
        elif isinstance(stmt, gast.With):
            self.hook(stmt)
        elif isinstance(stmt, gast.Break):
            self.emit(b.make(gast.Break))
        elif isinstance(stmt, gast.Continue):
            if self.conditions and self.conditions[-1]:
                for s in self.conditions[-1]:  # a while loop tests its condition again
                    self.out.append(copy.deepcopy(s))
            self.emit(b.make(gast.Continue))
        else:
            raise self.error(stmt, f"'{type(stmt).__name__}' statements cannot be "
                                   f"differentiated")

    def aug_assign(self, stmt: gast.AugAssign) -> None:
        target = stmt.target
        if isinstance(target, gast.Name):
            value = b.binop(b.name(target.id), stmt.op, stmt.value)
            self.assign([b.name(target.id, store=True)], value)
        elif isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
            index = self.index(target.slice)
            old = self.atom(b.subscript(b.name(target.value.id), copy.deepcopy(index)))
            new = self.atom(b.binop(old, stmt.op, stmt.value))
            self.emit(b.assign(b.subscript(b.name(target.value.id), index, store=True), new))
        else:
            raise self.error(stmt, "augmented assignment to an attribute or to a subscript "
                                   "of an expression cannot be differentiated")

    def if_(self, stmt: gast.If) -> None:
        test = self.atom(stmt.test)
        body, orelse = self.block(stmt.body), self.block(stmt.orelse)
        self.origin = stmt
        if body or orelse:
            self.emit(b.make(gast.If, test=test, body=body, orelse=orelse))

    def for_(self, stmt: gast.For) -> None:
        if stmt.orelse:
            raise self.error(stmt, "'for ... else' cannot be differentiated")
        body = list(stmt.body)
        assigned = {n.id for s in body for n in gast.walk(s)
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        it, target = stmt.iter, stmt.target
        func = self.env.resolve(it.func, self.locals) if isinstance(it, gast.Call) else MISSING
        if func is range and isinstance(target, gast.Name) and not it.keywords:
            index = target.id
            bounds = [self.stable(self.atom(a), assigned) for a in it.args]
        else:
            if func is enumerate and isinstance(target, gast.Tuple) and len(target.elts) == 2 \
                    and isinstance(target.elts[0], gast.Name) and it.args:
                seqs, targets = [self.atom(it.args[0])], [target.elts[1]]
                start = it.args[1] if len(it.args) > 1 else next(
                    (k.value for k in it.keywords if k.arg == "start"), None)
                if start is None:
                    index = target.elts[0].id
                else:  # enumerate(x, start): the count is the index shifted
                    index = self.namer.fresh("k")
                    body.insert(0, b.located(b.assign(
                        target.elts[0].id, b.binop(b.name(index), gast.Add(),
                                                   self.atom(start))), stmt))
            elif func is zip and it.args and not it.keywords:
                seqs = [self.atom(a) for a in it.args]
                if not isinstance(target, gast.Tuple) or len(target.elts) != len(seqs):
                    raise self.error(stmt, "unpack 'zip' into one name per sequence")
                targets, index = list(target.elts), self.namer.fresh("k")
            else:
                seqs, targets, index = [self.atom(it)], [target], self.namer.fresh("k")
            seqs = [self.stable(s, assigned) for s in seqs]
            lengths = [self.atom(b.call(b.name("len"), s)) for s in seqs]
            n = lengths[0] if len(lengths) == 1 else self.atom(b.call(b.name("min"), *lengths))
            bounds = [n]
            body = [b.located(b.assign(t, b.subscript(copy.deepcopy(s), b.name(index))), stmt)
                    for t, s in zip(targets, seqs, strict=True)] + body
        if index in assigned:  # (a loop nested in it over the same name, `i = i + 1`...)
            # the loop counts with a name of its own, and `index` is an ordinary variable
            counter = self.namer.fresh(index)
            body.insert(0, b.located(b.assign(index, b.name(counter)), stmt))
            index = counter
        self.conditions.append([])
        inner = self.block(body)
        self.conditions.pop()
        self.origin = stmt
        self.emit(b.make(gast.For, target=b.name(index, store=True),
                         iter=b.call(b.name("range"), *bounds), body=inner, orelse=[]))

    def while_(self, stmt: gast.While) -> None:
        if stmt.orelse:
            raise self.error(stmt, "'while ... else' cannot be differentiated")
        outer, self.out = self.out, []
        test = self.operation(stmt.test)
        if self.out:  # the test takes statements: they run before the loop and at its end
            tmp = self.namer.temp()
            self.emit(b.assign(tmp, test))
            test = b.name(tmp)
        condition, self.out = self.out, outer
        for s in condition:
            self.out.append(copy.deepcopy(s))
        self.conditions.append(condition)
        inner = self.block(stmt.body)
        self.conditions.pop()
        if not inner or not isinstance(inner[-1], (gast.Break, gast.Continue)):
            inner += [copy.deepcopy(s) for s in condition]
        self.origin = stmt
        self.emit(b.make(gast.While, test=test, body=inner, orelse=[]))

    def hook(self, stmt: gast.With) -> None:
        """`with grad_of(h) as dh:` (checked by `annotate`), its block normalized."""
        body = self.block(stmt.body)
        self.origin = stmt
        if body:
            item = copy.deepcopy(stmt.items[0])
            self.emit(b.make(gast.With, items=[item], body=body))

    def stable(self, atom: gast.AST, assigned: set[str]) -> gast.AST:
        """`atom`, or a copy of it taken before the loop if the loop body assigns it."""
        if isinstance(atom, gast.Name) and atom.id in assigned:
            tmp = self.namer.temp()
            self.emit(b.assign(tmp, atom))
            return b.name(tmp)
        return atom

    def assign(self, targets: list[gast.AST], value: gast.AST) -> None:
        if len(targets) > 1:
            value = self.atom(value)
        for target in targets:
            self.bind(target, value)

    def bind(self, target: gast.AST, value: gast.AST) -> None:
        if isinstance(target, gast.Name):
            self.emit(b.assign(target.id, self.operation(value)))
        elif isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
            index = self.index(target.slice)
            self.emit(b.assign(b.subscript(b.name(target.value.id), index, store=True),
                               self.atom(value)))
        elif isinstance(target, (gast.Tuple, gast.List)):
            if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(target.elts):
                # `a, b = b, a`: take every value before binding any target
                parts = [self.copy_if_bound(self.atom(v), target) for v in value.elts]
            else:
                whole = self.atom(value)
                parts = [b.subscript(copy.deepcopy(whole), b.const(i))
                         for i in range(len(target.elts))]
            for sub, part in zip(target.elts, parts, strict=True):
                self.bind(sub, part)
        else:
            raise self.error(target, f"assignment to a {type(target).__name__.lower()} "
                                     f"cannot be differentiated")

    def copy_if_bound(self, atom: gast.AST, target: gast.AST) -> gast.AST:
        bound = {n.id for n in gast.walk(target) if isinstance(n, gast.Name)}
        if isinstance(atom, gast.Name) and atom.id in bound:
            tmp = self.namer.temp()
            self.emit(b.assign(tmp, atom))
            return b.name(tmp)
        return atom

    # ---- expressions ----
    def is_global(self, node: gast.AST) -> bool:
        return self.env.resolve(node, self.locals) is not MISSING

    def atom(self, node: gast.AST) -> gast.AST:
        """`node` if it is an atom, else a fresh temporary holding its value."""
        node = self.fold(node)
        if isinstance(node, (gast.Name, gast.Constant)):
            return node
        if isinstance(node, gast.Attribute) and self.is_global(node):
            return node
        if isinstance(node, gast.IfExp):
            return self.if_exp(node)
        value = self.operation(node)
        tmp = self.namer.temp()
        self.emit(b.assign(tmp, value))
        return b.name(tmp)

    def fold(self, node: gast.AST) -> gast.AST:
        """Constant literals written with a sign (`-3.0`) are constants."""
        if (isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd))
                and isinstance(node.operand, gast.Constant)
                and isinstance(node.operand.value, (int, float, complex))
                and not isinstance(node.operand.value, bool)):
            value = node.operand.value
            return b.const(-value if isinstance(node.op, gast.USub) else value)
        return node

    def operation(self, node: gast.AST) -> gast.AST:
        """`node` with every operand an atom (one operation, no nesting)."""
        node = self.fold(node)
        if isinstance(node, (gast.Name, gast.Constant)):
            return node
        if isinstance(node, gast.BinOp):
            return b.binop(self.atom(node.left), node.op, self.atom(node.right))
        if isinstance(node, gast.UnaryOp):
            if isinstance(node.op, gast.UAdd):
                return self.atom(node.operand)
            return b.make(gast.UnaryOp, op=node.op, operand=self.atom(node.operand))
        if isinstance(node, gast.Compare):
            return self.compare(node)
        if isinstance(node, gast.BoolOp):
            return b.make(gast.BoolOp, op=node.op, values=[self.atom(v) for v in node.values])
        if isinstance(node, gast.Call):
            return self.call(node)
        if isinstance(node, gast.Attribute):
            if self.is_global(node):
                return node
            return b.make(gast.Attribute, value=self.atom(node.value), attr=node.attr,
                          ctx=gast.Load())
        if isinstance(node, gast.Subscript):
            return b.subscript(self.atom(node.value), self.index(node.slice))
        if isinstance(node, (gast.Tuple, gast.List)):
            return b.make(type(node), elts=[self.atom(e) for e in node.elts], ctx=gast.Load())
        if isinstance(node, gast.IfExp):
            return self.if_exp(node)
        raise self.error(node, f"'{type(node).__name__}' expressions cannot be differentiated")

    def if_exp(self, node: gast.IfExp) -> gast.AST:
        """`a if c else b`: an if statement that sets a temporary (only the branch taken
        is evaluated, as in Python)."""
        test, tmp, origin = self.atom(node.test), self.namer.temp(), self.origin
        body, orelse = [self.block([b.located(b.assign(tmp, value), origin)])
                        for value in (node.body, node.orelse)]
        self.origin = origin
        self.emit(b.make(gast.If, test=test, body=body, orelse=orelse))
        return b.name(tmp)

    def compare(self, node: gast.Compare) -> gast.AST:
        operands = [self.atom(node.left)] + [self.atom(c) for c in node.comparators]
        parts = [b.make(gast.Compare, left=operands[i], ops=[op], comparators=[operands[i + 1]])
                 for i, op in enumerate(node.ops)]
        if len(parts) == 1:
            return parts[0]
        return b.make(gast.BoolOp, op=gast.And(), values=[self.atom(p) for p in parts])

    def call(self, node: gast.Call) -> gast.Call:
        func = node.func
        if isinstance(func, gast.Attribute) and not self.is_global(func):
            func = b.make(gast.Attribute, value=self.atom(func.value), attr=func.attr,
                          ctx=gast.Load())
        elif not isinstance(func, (gast.Name, gast.Attribute)):
            func = self.atom(func)
        args = [self.atom(a) for a in node.args]
        keywords = [b.make(gast.keyword, arg=k.arg, value=self.atom(k.value))
                    for k in node.keywords]
        return b.make(gast.Call, func=func, args=args, keywords=keywords)

    def index(self, node: gast.AST) -> gast.AST:
        if isinstance(node, gast.Slice):
            return b.make(gast.Slice, **{f: self.atom(getattr(node, f)) if getattr(node, f)
                                         is not None else None
                                         for f in ("lower", "upper", "step")})
        if isinstance(node, gast.Tuple):
            return b.tuple_([self.index(e) for e in node.elts])
        return self.atom(node)


def _single_assignment(body: list[gast.stmt], params: list[str], namer: Namer) -> list[gast.stmt]:
    """Rename every re-assignment (`x = ...` after `x` exists) to a fresh version `x_1`.

    Only names assigned outside loops and branches are renamed (straight-line code);
    a name assigned inside one keeps its name everywhere, and the tape restores the
    values it overwrites."""
    nested = {n.id for s in body if isinstance(s, (gast.If, gast.For, gast.While))
              for n in gast.walk(s) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    current = {p: p for p in params}
    for stmt in body:
        for node in gast.walk(stmt.value if isinstance(stmt, gast.Assign) else stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                node.id = current.get(node.id, node.id)
        if isinstance(stmt, gast.Assign):
            for node in gast.walk(stmt.targets[0]):  # the base and index of `x[i] = ...`
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                    node.id = current.get(node.id, node.id)
            if isinstance(stmt.targets[0], gast.Name):
                target = stmt.targets[0].id
                if target not in nested:
                    new = namer.fresh(target) if target in current else target
                    current[target] = new
                    stmt.targets[0].id = new
    return body
