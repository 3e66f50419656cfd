"""pytrees: containers of arrays as `wrt` arguments (a tuple, list, dict, NamedTuple or
dataclass, nested), flattened at the boundary.

The api flattens such an argument into its leaves (`flatten`), calls code generated for
that structure (`Tree`, part of the specialisation key) with the leaves, and rebuilds the
gradient (or tangent) with the argument's structure (`unflatten`).

`flatten_params` is the pass. Requires the user's function tree as `annotate` left it, and
the structure of some of its parameters. Runs before `reject_unsupported` and
`normalize`. Guarantees a new FunctionDef, the input untouched, in which

* each such parameter is replaced, at its place, by one parameter per leaf, named after
  the path (`params_W`, `abc_0`, `p_layer_1`); a name that would clash with another of
  the function's names, or two paths that give one name, is refused;
* every read of a leaf by constant keys, indices and fields (`params["W"]`, `abc[0]`,
  `abc[-1]`, `p.W`, nested) is a load of that leaf's parameter; `len(c)` of a container
  is its length; `a, b = c` (a tuple, list or NamedTuple, nested targets too) assigns the
  leaves (`a, *rest = c`: `a, *rest = c_0, c_1, ...`, which `normalize` unpacks);
  `for v in c` over one is unrolled, one copy of the body per entry, with `v = <entry>`
  first (over a dict, its keys: `for k in d`, `d.keys()`, `d.values()`, `d.items()`,
  a key read in the copy as its constant, so that `d[k]` is an entry); `d.values()`
  (`keys`, `items`) elsewhere is the list display of its entries;
* a copy of a dict of leaves (`dict(p)`, `dict(p, k=v)`, `p.copy()`, `{**p, "k": v}`)
  is the literal of its entries (`{"W": p_W, "k": v}`), which `flatten_dicts` makes a
  local dict: writes, `update` and `setdefault` then bind the copy's own entries;
* (a parameter that is not differentiated is flattened only where `readable` says
  that nothing below is refused; else it stays the container it is.)
* any other use of the container (passed whole, bound to another name, a computed key,
  written into, a method or unknown field, a loop over it with
  `break`, `continue` or `else`) is refused with `UnsupportedSyntax` naming the line and
  the construct: its derivative would otherwise be lost silently;
* every statement made keeps the line of the one it comes from.

`flatten_dicts` does the same for a dict literal of constant keys assigned once to a
local name (`p = {"W": a}`): one name per entry, assigned where the literal was; a call
of `dict`, or a dict comprehension, whose keys are known when srcgrad compiles is such a
literal first (`displayed_dicts`). Such a dict is the function's own, so a write into it
at a constant key (`p["W"] = v`, `p["W"] += v`, `p.update({"W": v})`, in loops and
branches too) binds its entry's name again (`p_W = v`: `+=` stays `+=`, in place where
the entry's array is, as in Python); a key added so (`p["c"] = v`) is one more entry
where `_grown` can tell the dict's keys when srcgrad compiles, and refused elsewhere.
`p.setdefault("k", v)` is the entry where srcgrad knows that the key is there, and the
write `p["k"] = v` first where it knows that it is not (`_defaults_written`); refused
where it may be either (in a loop or a branch, before the key is added).
A write into an argument's container would change the caller's, and is refused.
"""

from __future__ import annotations

import builtins
import collections
import copy
import dataclasses
import re
from typing import Any, NamedTuple

import gast
import numpy as np

from .. import builder as b
from ..analysis.displays import constant, constants, fixed_displays, known_items
from ..errors import SrcgradError, UnsupportedSyntax
from ..frontend.parse import Env
from ..naming import names_in
from .comprehensions import displayed


class Tree(NamedTuple):
    """A container's structure: `kind` ("leaf", "tuple", "list", "dict", "namedtuple",
    "dataclass"), its keys (dict keys, field names, or positions), its class (for a
    NamedTuple or dataclass) and its children's structures. Hashable."""

    kind: str
    keys: tuple = ()
    cls: Any = None
    children: tuple = ()

    @property
    def leaf(self) -> bool:
        return self.kind == "leaf"

    @property
    def sequence(self) -> bool:
        return self.kind in ("tuple", "list", "namedtuple")


LEAF = Tree("leaf")


def is_container(value: Any) -> bool:
    return isinstance(value, (tuple, list, dict)) or (
        dataclasses.is_dataclass(value) and not isinstance(value, type))


def flatten(value: Any, where: str) -> tuple[Tree, list[Any]]:
    """`value`'s structure and its leaves (arrays and numbers), depth first in key order."""
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        kind, keys, items, cls = "namedtuple", type(value)._fields, list(value), type(value)
    elif isinstance(value, (tuple, list)):
        kind, cls = type(value).__name__, None
        if type(value) not in (tuple, list):
            raise SrcgradError(f"{where}: a {type(value).__name__} (a subclass of "
                               f"{kind}) cannot be differentiated as a container")
        keys, items = tuple(range(len(value))), list(value)
    elif isinstance(value, dict):
        kind, cls, keys, items = "dict", None, tuple(value), list(value.values())
        for key in keys:
            if not isinstance(key, (str, int)) or isinstance(key, bool):
                raise SrcgradError(f"{where}: a dict key {key!r}; a differentiated dict "
                                   f"needs str or int keys")
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = [f for f in dataclasses.fields(value)]
        if any(not f.init for f in fields):
            raise SrcgradError(f"{where}: dataclass {type(value).__name__} has fields that "
                               f"its constructor does not take; the gradient cannot be "
                               f"built as one")
        kind, cls = "dataclass", type(value)
        keys, items = tuple(f.name for f in fields), [getattr(value, f.name) for f in fields]
    else:
        if isinstance(value, np.ndarray) and value.dtype == object:
            raise SrcgradError(f"{where}: an array of objects cannot be differentiated")
        return LEAF, [value]
    children, leaves = [], []
    for key, item in zip(keys, items, strict=True):
        child, sub = flatten(item, f"{where}[{key!r}]")
        children.append(child)
        leaves += sub
    if not leaves:
        raise SrcgradError(f"{where}: an empty container has nothing to differentiate")
    return Tree(kind, keys, cls, tuple(children)), leaves


def unflatten(tree: Tree, leaves: list[Any]) -> Any:
    """The container of structure `tree` holding `leaves` (consumed from the front)."""
    if tree.leaf:
        return leaves.pop(0)
    items = [unflatten(child, leaves) for child in tree.children]
    if tree.kind == "dict":
        return dict(zip(tree.keys, items, strict=True))
    if tree.kind == "list":
        return items
    if tree.kind == "tuple":
        return tuple(items)
    if tree.kind == "namedtuple":
        return tree.cls(*items)
    return tree.cls(**dict(zip(tree.keys, items, strict=True)))


def count(tree: Tree) -> int:
    return 1 if tree.leaf else sum(count(c) for c in tree.children)


def _paths(tree: Tree, prefix: str) -> list[str]:
    return [name for name, _ in _leaves(tree, prefix, prefix)]


def _leaves(tree: Tree, prefix: str, spelling: str) -> list[tuple[str, str]]:
    """(name, the user's spelling) of each leaf of `tree`: `p_W`, `p['W']`."""
    if tree.leaf:
        return [(prefix, spelling)]
    return [leaf for key, child in zip(tree.keys, tree.children, strict=True)
            for leaf in _leaves(child, f"{prefix}_{_word(key)}", spelling + (
                f".{key}" if tree.kind in ("namedtuple", "dataclass") else f"[{key!r}]"))]


def spellings(trees: dict[str, Tree]) -> dict[str, str]:
    """Each flat name of the containers `trees` structures as the user spells its entry
    (`p_W`: `p['W']`; `s_n` of a dataclass: `s.n`), for messages (`naming.as_written`).

    >>> spellings({"p": Tree("dict", ("W", 0), None, (LEAF, LEAF))})
    {'p_W': "p['W']", 'p_0': 'p[0]'}
    """
    return dict(leaf for p, tree in trees.items() for leaf in _leaves(tree, p, p))


def _word(key: Any) -> str:
    word = re.sub(r"\W", "_", str(key))
    return word if word else "_"


def leaf_names(params: list[str], trees: dict[str, Tree]) -> list[str]:
    """The flat parameters: each structured parameter's leaves, named by path, in place."""
    return [n for p in params for n in (_paths(trees[p], p) if p in trees else [p])]


def flatten_params(fn: gast.FunctionDef, trees: dict[str, Tree],
                   filename: str, env: Env | None = None) -> gast.FunctionDef:
    """`fn` with its parameters of structure `trees` flattened (see the module docstring;
    `env`, the function's names, tells the builtin `dict`)."""
    fn = copy.deepcopy(fn)
    local = frozenset(n.id for n in gast.walk(fn) if isinstance(n, gast.Name) and
                      isinstance(n.ctx, (gast.Store, gast.Param, gast.Del)))
    params = [a.id for a in fn.args.args]
    flat = leaf_names(params, trees)
    taken = names_in(fn) - set(trees)
    leaves = [n for p in trees for n in _paths(trees[p], p)]
    clash = next((n for n in leaves if n in taken or flat.count(n) > 1), None)
    if clash is not None:
        raise UnsupportedSyntax(f"flattening {', '.join(trees)} gives a parameter "
                                f"{clash!r} that clashes with another name of "
                                f"{fn.name}; rename it", filename=filename, lineno=fn.lineno)
    names = {p: _paths(trees[p], p) for p in trees}
    ndefaults = len(fn.args.defaults)
    if any(params.index(p) >= len(params) - ndefaults for p in trees):
        fn.args.defaults = []   # the api passes every argument
    fn.args.args = [b.make(gast.Name, id=n, ctx=gast.Param()) for n in flat]
    fn.body = _Flatten(trees, names, filename, env=env, local=local).block(fn.body)
    return fn


def flatten_dicts(fn: gast.FunctionDef, filename: str, env: Env | None = None
                  ) -> tuple[gast.FunctionDef, dict[str, str]]:
    """`fn` with each local dict literal of constant keys (`p = {"W": a, "b": b}`, nested
    dict literals too) assigned once to a name, as one name per entry (`p_W = a`,
    `p_b = b`, in the literal's order) and its reads flattened as a parameter's are (see
    the module docstring: `p["W"]` is `p_W`; using it whole is refused). Any other dict
    literal stays, and `reject` refuses it. With the function's names `env`, a call of
    the builtin `dict` that `displayed_dicts` makes a literal is one first. Also the
    entries' names as the user spells them (`spellings`)."""
    if env is not None:
        fn = displayed_dicts(fn, env)
    stores = collections.Counter(
        n.id for n in gast.walk(fn) if isinstance(n, gast.Name) and
        isinstance(n.ctx, (gast.Store, gast.Param, gast.Del)))
    literals = {s.targets[0].id: s for s in gast.walk(fn)
                if isinstance(s, gast.Assign) and len(s.targets) == 1 and
                isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Dict) and
                stores[s.targets[0].id] == 1 and _literal_tree(s.value) is not None}
    if not literals:
        return fn, {}
    fn = _updates_written(copy.deepcopy(fn), frozenset(literals))
    fn = _defaults_written(fn, {name: _literal_tree(s.value).keys
                                for name, s in literals.items()}, filename)
    assigns = {s.targets[0].id: s for s in gast.walk(fn) if isinstance(s, gast.Assign)
               and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
               and s.targets[0].id in literals}
    trees = {name: _grown(fn, name, s, _literal_tree(s.value), filename)
             for name, s in assigns.items()}
    names = {p: _paths(trees[p], p) for p in trees}
    taken = names_in(fn) - set(trees)
    leaves = [n for p in trees for n in names[p]]
    clash = next((n for n in leaves if n in taken or leaves.count(n) > 1), None)
    if clash is not None:
        raise UnsupportedSyntax(f"the entries of {', '.join(trees)} become names, and "
                                f"{clash!r} clashes with another name of {fn.name}; "
                                f"rename it", filename=filename, lineno=fn.lineno)

    class Split(gast.NodeTransformer):
        def visit_Assign(self, node):
            if node not in assigns.values():
                return self.generic_visit(node)
            name = node.targets[0].id
            values = _literal_values(node.value)   # (the keys added later come last)
            return [b.located(b.assign(leaf, value), node)
                    for leaf, value in zip(names[name][:len(values)], values, strict=True)]

    fn.body = _Flatten(trees, names, filename, frozenset(trees)).block(Split().visit(fn).body)
    return fn, spellings(trees)


def _updates_written(fn: gast.FunctionDef, dicts: frozenset[str]) -> gast.FunctionDef:
    """`fn` (changed in place) with each statement `d.update({"k": v, ...})` or
    `d.update(k=v, ...)` of a dict `d` of `dicts`, of constant keys, as the writes it
    makes, `d["k"], ... = v, ...` (the values all evaluated first, as `update` does)."""
    class Update(gast.NodeTransformer):
        def visit_Expr(self, node):
            call = node.value
            if not (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
                    and call.func.attr == "update" and isinstance(call.func.value, gast.Name)
                    and call.func.value.id in dicts):
                return node
            if len(call.args) == 1 and not call.keywords and isinstance(call.args[0], gast.Dict):
                pairs = list(zip(call.args[0].keys, call.args[0].values, strict=True))
            elif not call.args and all(k.arg is not None for k in call.keywords):
                pairs = [(b.const(k.arg), k.value) for k in call.keywords]
            else:
                return node   # (refused by _Flatten: its method 'update')
            if not pairs or any(k is None or constant(k) is None for k, _ in pairs):
                return node
            targets = [b.make(gast.Subscript, value=b.name(call.func.value.id), slice=k,
                              ctx=gast.Store()) for k, _ in pairs]
            return b.located(b.make(gast.Assign, targets=[b.make(
                gast.Tuple, elts=targets, ctx=gast.Store())], value=b.tuple_(
                    [v for _, v in pairs]), type_comment=None), node)

    return Update().visit(fn)


def _defaults_written(fn: gast.FunctionDef, dicts: dict[str, tuple], filename: str
                      ) -> gast.FunctionDef:
    """`fn` (changed in place) with each call `d.setdefault(k, v)` of a dict `d` of `dicts`
    (its literal's keys), at a constant key, as what it does where srcgrad knows when it
    compiles whether `d` holds `k`: the entry `d[k]` if it does (the key in the literal,
    or added by an earlier statement of the function's body), and if it does not (a
    call in a statement of the function's body, before any statement that adds the key),
    the write `d[k] = v` before its statement, the call then `d[k]`. As in Python, the
    value is that entry, the same object; `v`, evaluated first, is evaluated where the
    key is there too if it calls anything (as a statement before the call's), but where
    the call's own evaluation is conditional (a branch of `x if c else y`, `and`, `or`,
    a comprehension, a lambda, a test or a loop's iterable), where it cannot change the
    result. Refused, naming its line: a call where the key may or may not be there (in
    a loop or a branch, before the key is added), and one that adds the key where its
    evaluation is conditional."""
    def refuse(node: gast.AST, what: str) -> UnsupportedSyntax:
        return UnsupportedSyntax(f"{node.func.value.id}.setdefault(...) {what}",
                                 filename=filename, lineno=getattr(node, "lineno", None))

    def setdefault(node: gast.AST) -> bool:
        return isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
            node.func.attr == "setdefault" and isinstance(node.func.value, gast.Name) and \
            node.func.value.id in dicts

    def calls(node: gast.AST, lazy: bool, found: list) -> None:
        """The setdefault calls in `node`, in the order Python evaluates them, each with
        whether its evaluation is conditional."""
        if isinstance(node, (gast.Lambda, gast.ListComp, gast.SetComp, gast.DictComp,
                             gast.GeneratorExp)):
            lazy = True
        for field, value in gast.iter_fields(node):
            late = lazy or isinstance(node, gast.IfExp) and field != "test"
            for k, child in enumerate(value if isinstance(value, list) else [value]):
                if isinstance(child, gast.AST):
                    calls(child, late or isinstance(node, gast.BoolOp) and k > 0, found)
        if setdefault(node):
            found.append((node, lazy))

    # the statement of fn.body at which each key is first added by a write
    added: dict[tuple[str, Any], int] = {}
    for i, stmt in enumerate(fn.body):
        if isinstance(stmt, gast.Assign):
            for t in stmt.targets:
                for e in t.elts if isinstance(t, (gast.Tuple, gast.List)) else [t]:
                    if isinstance(e, gast.Subscript) and isinstance(e.value, gast.Name) and \
                            e.value.id in dicts and constant(e.slice) is not None:
                        added.setdefault((e.value.id, constant(e.slice)[0]), i)

    def rewrite(stmts: list[gast.stmt], top: int | None) -> list[gast.stmt]:
        out = []
        for i, stmt in enumerate(stmts):
            at = i if top is None else top
            found: list = []
            simple = isinstance(stmt, (gast.Assign, gast.AugAssign, gast.Expr, gast.Return))
            for field, value in gast.iter_fields(stmt):
                for child in value if isinstance(value, list) else [value]:
                    if isinstance(child, gast.expr):   # (a test, an iterable: lazy)
                        calls(child, not (simple and field == "value"), found)
            before, entries = [], {}
            for call, lazy in found:
                before += written(call, lazy, at, top is None, stmt)
                entries[id(call)] = b.located(b.make(
                    gast.Subscript, value=b.name(call.func.value.id), slice=call.args[0],
                    ctx=gast.Load()), call)
            if entries:   # (a call in the value of another: in the write made of that)
                before = [_Replace(entries).visit(s) for s in before]
                stmt = _Replace(entries).visit(stmt)
            for field in ("body", "orelse"):   # (not a nested def's: it runs later)
                if isinstance(getattr(stmt, field, None), list) and not isinstance(
                        stmt, gast.FunctionDef):
                    setattr(stmt, field, rewrite(getattr(stmt, field), at))
            out += before + [stmt]
        return out

    def written(call: gast.Call, lazy: bool, at: int, top: bool, stmt: gast.stmt
                ) -> list[gast.stmt]:
        """What `call` does before its statement: the write of its entry or its value's
        evaluation."""
        name = call.func.value.id
        if len(call.args) not in (1, 2) or call.keywords or constant(call.args[0]) is None:
            raise refuse(call, "of a dict of arrays is followed at a constant key alone, as "
                               "`d.setdefault('k', v)`")
        key = constant(call.args[0])[0]
        value = call.args[1] if len(call.args) == 2 else b.const(None)
        if key in dicts[name] or added.get((name, key), len(fn.body)) < at:
            if not lazy and any(isinstance(n, gast.Call) for n in gast.walk(value)):
                return [b.located(b.make(gast.Expr, value=value), stmt)]
            return []
        if lazy:
            raise refuse(call, f"at {key!r} is evaluated here only in some cases: srcgrad "
                               f"follows it where it is evaluated whatever happens: make it "
                               f"a statement of its own (`v = d.setdefault(k, v)`), not in "
                               f"a branch of `x if c else y`, `and`, `or`, a comprehension, "
                               f"a lambda, a test or an iterable")
        if not top:
            raise refuse(call, f"at {key!r}, in a loop or a branch, where {name!r} may or "
                               f"may not hold {key!r} already: srcgrad follows setdefault "
                               f"where it knows when it compiles whether the key is there "
                               f"(give {name!r} the key in its literal, or call setdefault "
                               f"in a statement of the function's body)")
        added[(name, key)] = -1   # (there from here on)
        store = b.make(gast.Subscript, value=b.name(name), slice=copy.deepcopy(call.args[0]),
                       ctx=gast.Store())
        return [b.located(b.assign(store, value), stmt)]

    fn.body = rewrite(fn.body, None)
    return fn


class _Replace(gast.NodeTransformer):
    """Each node whose id is a key of `entries` replaced by its value."""

    def __init__(self, entries: dict[int, gast.AST]):
        self.entries = entries

    def visit(self, node):
        if id(node) in self.entries:
            return self.entries[id(node)]
        return super().visit(node)


def _grown(fn: gast.FunctionDef, name: str, literal: gast.Assign, tree: Tree,
           filename: str) -> Tree:
    """`tree`, the structure of the dict literal `name = {...}`, with the keys that
    assignments at constant keys add to it (`name["new"] = v`), last, in the order they
    are added. A dict whose keys change can be flattened only where they are known when
    srcgrad compiles: the literal a statement of the function's body, each key added
    first by an assignment that is one too (not in a loop or a branch, not `+=`), no
    read of the key before, and no use of the dict whole (`len`, `for`, its views) before
    the last key is added. Anything else is refused, naming its line."""
    def refuse(node: gast.AST, what: str) -> UnsupportedSyntax:
        return UnsupportedSyntax(
            f"{name!r} is a dict of arrays, which srcgrad differentiates entry by entry "
            f"and so needs its keys when it compiles: {what}",
            filename=filename, lineno=getattr(node, "lineno", None))

    top = {}   # node id -> the index of the statement of fn.body it is in
    for k, stmt in enumerate(fn.body):
        for n in gast.walk(stmt):
            top[id(n)] = (k, stmt)
    entries = []   # (subscript, key) of name at constant keys
    keyed = set()
    for n in gast.walk(fn):
        if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name) and \
                n.value.id == name and constant(n.slice) is not None:
            entries.append((n, constant(n.slice)[0]))
            keyed.add(id(n.value))
    first: dict[Any, int] = {}
    for n, key in entries:
        if key in tree.keys or not isinstance(n.ctx, gast.Store):
            continue
        where, stmt = top.get(id(n), (None, None))
        direct = isinstance(stmt, gast.Assign) and any(
            t is n or isinstance(t, (gast.Tuple, gast.List)) and any(e is n for e in t.elts)
            for t in stmt.targets)
        if id(literal) not in top or not direct or where < top[id(literal)][0]:
            raise refuse(n, f"the key {key!r} is added in a loop, a branch or an "
                            f"augmented assignment; give it a value in the literal, or "
                            f"add it in a statement of the function's body")
        first[key] = min(first.get(key, where), where)
    if not first:
        return tree
    for n, key in entries:
        if key in first and top.get(id(n), (-1,))[0] < first[key] + \
                (not isinstance(n.ctx, gast.Store)):
            raise refuse(n, f"its entry {key!r} is read before it is added (line "
                            f"{fn.body[first[key]].lineno}); add it first")
    last = max(first.values())
    for n in gast.walk(fn):
        if isinstance(n, gast.Name) and n.id == name and id(n) not in keyed and \
                isinstance(n.ctx, gast.Load) and top.get(id(n), (-1,))[0] <= last:
            raise refuse(n, f"it is used whole (`len`, `for`, its views) before its "
                            f"last key is added (line {fn.body[last].lineno}); add the "
                            f"keys first")
    added = sorted(first, key=lambda k: first[k])
    return Tree("dict", tree.keys + tuple(added), None,
                tree.children + (LEAF,) * len(added))


def displayed_dicts(fn: gast.FunctionDef, env: Env) -> gast.FunctionDef:
    """`fn` with each call of the builtin `dict` that has a literal's constant keys the
    literal: `dict(a=x, b=y)`, `dict(zip(K, V))` and `dict([(k, v), ...])` with `K` a
    tuple or list display of constants (or a global name bound to a tuple of them) and
    `V` a display of as many values (more or fewer: `zip` stops at the shorter, and so
    does the literal). Any other `dict(...)` stays as it is (a differentiated value
    passed to it is refused by `check`: `dict` has no rule). So does each dict
    comprehension over what `displays.known_items` knows the items of, with constant keys
    (`comprehensions.displayed`): `{k: x[i] for i, k in enumerate(["a", "b"])}`. The
    input is untouched.

    >>> import astor
    >>> fn = gast.parse("def f(x):\\n    d = dict(zip(('a', 'b'), (x, 2 * x)))").body[0]
    >>> print(astor.to_source(gast.gast_to_ast(displayed_dicts(fn, Env({})))).strip())
    def f(x):
        d = {'a': x, 'b': 2 * x}
    """
    local = frozenset(n.id for n in gast.walk(fn) if isinstance(n, gast.Name) and
                      isinstance(n.ctx, (gast.Store, gast.Param, gast.Del)))
    if not any(isinstance(n, gast.Call) and env.resolve(n.func, local) is builtins.dict
               or isinstance(n, gast.DictComp) for n in gast.walk(fn)) or \
            any(isinstance(n, gast.keyword) and n.arg is None for n in gast.walk(fn)):
        return fn   # (`f(**kw)` is refused as such, whatever made kw)
    fixed = fixed_displays(fn.body, [a.id for a in fn.args.args])

    def resolve(node: gast.AST) -> Any:
        return env.resolve(node, local)

    class Display(gast.NodeTransformer):
        def visit_DictComp(self, node):
            self.generic_visit(node)
            shown = displayed(node, lambda it: known_items(it, resolve, fixed))
            return node if shown is None else b.located(shown, node)

        def visit_Call(self, node):
            self.generic_visit(node)
            if env.resolve(node.func, local) is not builtins.dict:
                return node
            pairs = _dict_pairs(node, env, local)
            if pairs is None:
                return node
            return b.located(b.make(gast.Dict, keys=[b.const(k) for k, _ in pairs],
                                    values=[v for _, v in pairs]), node)

    return Display().visit(copy.deepcopy(fn))


def _dict_pairs(call: gast.Call, env: Env, local: frozenset[str]
                ) -> list[tuple[Any, gast.expr]] | None:
    """The (key, value) pairs of the dict a call of `dict` makes, where its keys are
    constants the source shows; else None."""
    if not call.args and call.keywords and all(k.arg is not None for k in call.keywords):
        return [(k.arg, k.value) for k in call.keywords]
    if len(call.args) != 1 or call.keywords:
        return None
    arg = call.args[0]
    if isinstance(arg, gast.Call) and env.resolve(arg.func, local) is builtins.zip and \
            len(arg.args) == 2 and all(k.arg == "strict" for k in arg.keywords):
        keys = constants(arg.args[0], lambda node: env.resolve(node, local))
        values = _items(arg.args[1])
        if keys is None or values is None or arg.keywords and len(keys) != len(values):
            return None
        return list(zip(keys, values, strict=False))   # (as zip: the shorter decides)
    items = _items(arg)
    if items is None or not all(isinstance(i, (gast.Tuple, gast.List)) and len(i.elts) == 2
                                and constant(i.elts[0]) is not None for i in items):
        return None
    return [(constant(i.elts[0])[0], i.elts[1]) for i in items]


def _items(node: gast.AST) -> list[gast.expr] | None:
    """The items of a tuple or list display without `*`, else None."""
    if isinstance(node, (gast.Tuple, gast.List)) and \
            not any(isinstance(e, gast.Starred) for e in node.elts):
        return list(node.elts)
    return None


def _literal_tree(node: gast.Dict) -> Tree | None:
    """The structure of a dict literal of distinct constant keys (nested ones too)."""
    keys = [constant(k) if k is not None else None for k in node.keys]
    if any(k is None or not isinstance(k[0], (str, int)) or isinstance(k[0], bool)
           for k in keys) or len({k[0] for k in keys}) != len(keys) or not keys:
        return None
    children = [_literal_tree(v) if isinstance(v, gast.Dict) else LEAF for v in node.values]
    if any(c is None for c in children):
        return None
    return Tree("dict", tuple(k[0] for k in keys), None, tuple(children))


def _literal_values(node: gast.Dict) -> list[gast.expr]:
    return [leaf for v in node.values
            for leaf in (_literal_values(v) if isinstance(v, gast.Dict) else [v])]


class _Flatten(gast.NodeTransformer):
    def __init__(self, trees: dict[str, Tree], names: dict[str, list[str]], filename: str,
                 writable: frozenset[str] = frozenset(), env: Env | None = None,
                 local: frozenset[str] = frozenset()):
        # (`writable`: the local dicts, whose entries at constant keys are names to bind;
        # an argument's are the caller's. `env` and `local` tell the builtin `dict`.)
        self.trees, self.names, self.filename = trees, names, filename
        self.writable, self.env, self.local = writable, env, local
        self.line: int | None = None

    def refuse(self, node: gast.AST, what: str) -> UnsupportedSyntax:
        root = next(n.id for n in gast.walk(node)
                    if isinstance(n, gast.Name) and n.id in self.trees)
        kind = self.trees[root].kind
        return UnsupportedSyntax(
            f"{root!r} is a {kind} of arrays, differentiated entry by entry: srcgrad reads "
            f"its entries by constant keys, indices or fields, `len` of it, unpacking, "
            f"`for` over a tuple, a list or a dict (keys, values, items), and writes into "
            f"a local dict at constant keys (`d['k'] = v`, `d['k'] += v`, `d.update(k=v)`, "
            f"`d.setdefault('k', v)`); "
            f"not {what}",
            filename=self.filename, lineno=getattr(node, "lineno", None) or self.line)

    def block(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        out = []
        for stmt in stmts:
            new = self.visit(stmt)
            out += new if isinstance(new, list) else [new]
        return out

    def visit(self, node):
        if isinstance(node, gast.stmt):
            self.line = getattr(node, "lineno", None) or self.line
        return super().visit(node)

    # which leaf or container an expression reads: (structure, path) or None
    def resolve(self, node: gast.AST) -> tuple[Tree, list[Any], str] | None:
        if isinstance(node, gast.Name):
            return (self.trees[node.id], [], node.id) if node.id in self.trees else None
        if not isinstance(node, (gast.Subscript, gast.Attribute)):
            return None
        inner = self.resolve(node.value)
        if inner is None or inner[0].leaf:
            return None
        tree, path, root = inner
        if isinstance(node.ctx, gast.Del):
            raise self.refuse(node, "deleting its entries (`del`): its keys are known when "
                                    "srcgrad compiles")
        if not isinstance(node.ctx, gast.Load) and root not in self.writable:
            raise self.refuse(node, f"writing into it: it is the caller's {tree.kind}, which "
                                    f"that would change; write into a local one (`d = "
                                    f"{{'W': {root}['W'], ...}}`) or bind its entries to names")
        if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store) and \
                tree.kind != "dict":
            raise self.refuse(node, "writing into it but into a dict")
        if isinstance(node, gast.Attribute):
            if tree.kind not in ("namedtuple", "dataclass") or node.attr not in tree.keys:
                raise self.refuse(node, f"its attribute {node.attr!r}")
            k = tree.keys.index(node.attr)
        else:
            key = constant(node.slice)
            if key is None:
                raise self.refuse(node, "a key or index computed at run time (or a slice)")
            k = _position(tree, key[0])
            if k is None and isinstance(node.ctx, gast.Store):
                raise self.refuse(node, f"adding the key {key[0]!r} to a dict inside it "
                                        f"(keys are added to the dict a name holds alone)")
            if k is None:
                raise self.refuse(node, f"the key {key[0]!r}: it has no such entry")
        return tree.children[k], path + [k], root

    def load(self, tree: Tree, path: list[int], root: str, node: gast.AST) -> gast.AST:
        """The leaf at `path` as a name (a container: refused, where it is not unpacked)."""
        if not tree.leaf:
            raise self.refuse(node, "using it whole (passing it to a function, returning "
                                    "it, binding it to another name); pass its entries "
                                    "instead")
        whole = self.trees[root]
        index = sum(count(c) for c in _before(whole, path))
        return b.located(b.name(self.names[root][index]), node)

    def visit_Name(self, node):
        if node.id in self.trees:
            if not isinstance(node.ctx, gast.Load):
                raise self.refuse(node, "assigning to its name")
            raise self.refuse(node, "using it whole (passing it to a function, returning "
                                    "it, binding it to another name); pass its entries "
                                    "instead")
        return node

    def _entry(self, node):
        found = self.resolve(node)
        if found is None:
            return self.generic_visit(node)
        if isinstance(node.ctx, gast.Store):   # `d["a"] = v`: the entry's name bound again
            if not found[0].leaf:
                raise self.refuse(node, "replacing an entry that is itself a container")
            return b.located(b.make(gast.Name, id=self.load(*found, node).id,
                                    ctx=gast.Store()), node)
        return self.load(*found, node)

    visit_Subscript = visit_Attribute = _entry

    def copied(self, node: gast.AST) -> gast.Dict | None:
        """A copy of an argument's dict of arrays (`dict(p)`, `dict(p, k=v)`, `p.copy()`)
        as the literal of its entries (`{'W': p_W, 'k': v}`), which `flatten_dicts`
        makes a local dict; else None. Only a dict of leaves: a copy shares a nested dict,
        which the literal would not."""
        if isinstance(node.func, gast.Attribute) and node.func.attr == "copy" and \
                not node.args and not node.keywords:
            source, extra = node.func.value, []
        elif self.is_dict(node.func) and len(node.args) == 1 and \
                all(k.arg is not None for k in node.keywords):
            source, extra = node.args[0], [(b.const(k.arg), k.value) for k in node.keywords]
        else:
            return None
        return self.literal([(None, source)] + extra, node)

    def literal(self, pairs: list[tuple[gast.AST | None, gast.AST]], node: gast.AST
                ) -> gast.Dict | None:
        """The dict literal of `pairs` (a None key: `**d`) with each `**d` of an argument's
        dict of leaves as its entries, where there is one; else None."""
        items: dict[Any, tuple[gast.AST, gast.AST]] = {}
        expanded = False
        for key, value in pairs:
            if key is None:
                found = self.resolve(value)
                if found is None or found[0].kind != "dict" or found[2] in self.writable \
                        or not all(c.leaf for c in found[0].children):
                    return None
                tree, path, root = found
                expanded = True
                for k, (name, child) in enumerate(zip(tree.keys, tree.children, strict=True)):
                    items[name] = (b.const(name), self.load(child, path + [k], root, value))
            else:
                known = constant(key)
                if known is None:
                    return None
                items[known[0]] = (key, self.visit(value))
        if not expanded:
            return None
        return b.located(b.make(gast.Dict, keys=[k for k, _ in items.values()],
                                values=[v for _, v in items.values()]), node)

    def is_dict(self, func: gast.AST) -> bool:
        if self.env is not None:
            return self.env.resolve(func, self.local) is builtins.dict
        return isinstance(func, gast.Name) and func.id == "dict" and "dict" not in self.local

    def visit_Dict(self, node):
        if any(k is None for k in node.keys):   # `{**p, 'k': v}`
            shown = self.literal(list(zip(node.keys, node.values, strict=True)), node)
            if shown is not None:
                return shown
        return self.generic_visit(node)

    def visit_Call(self, node):
        shown = self.copied(node)
        if shown is not None:
            return shown
        if isinstance(node.func, gast.Name) and node.func.id == "len" and \
                len(node.args) == 1 and not node.keywords:
            found = self.resolve(node.args[0])
            if found is not None and not found[0].leaf:
                return b.located(b.const(len(found[0].children)), node)
        viewed = self.dict_view(node) if isinstance(node.func, gast.Attribute) else None
        if viewed is not None:   # `sum(d.values())`: the list of its entries
            found, view = viewed
            return b.located(b.make(gast.List, elts=self.entries(found, view, None, node),
                                    ctx=gast.Load()), node)
        return self.generic_visit(node)

    def unpacked(self, target: gast.AST, found, node: gast.AST) -> gast.AST:
        """The value that `target = <container>` assigns, leaves as names."""
        tree, path, root = found
        if tree.leaf:
            return self.load(tree, path, root, node)
        if not isinstance(target, (gast.Tuple, gast.List)) or not tree.sequence:
            return self.load(tree, path, root, node)   # refused: a whole container
        targets = list(target.elts)
        star = next((k for k, t in enumerate(targets) if isinstance(t, gast.Starred)), None)
        if star is not None and len(targets) - 1 <= len(tree.children):
            # `first, *rest = c`: the starred name takes the entries left, a list of leaves
            # (`normalize` splits the display)
            rest = len(tree.children) - len(targets) + 1
            targets[star:star + 1] = [None] * rest
        if len(targets) != len(tree.children):
            raise self.refuse(node, f"unpacking its {len(tree.children)} entries into "
                                    f"{len(target.elts)} targets")
        return b.located(b.tuple_([self.unpacked(t, (c, path + [k], root), node)
                                   for k, (t, c) in enumerate(zip(targets, tree.children,
                                                                  strict=True))]), node)

    def visit_Assign(self, node):
        if isinstance(node.value, gast.Dict) and any(
                isinstance(n, (gast.Subscript, gast.Attribute)) and
                self.resolve(n.value) is not None
                for t in node.targets for n in gast.walk(t)):
            raise self.refuse(node, "writing a dict into one of its entries")
        found = self.resolve(node.value)
        if found is not None and not found[0].leaf and len(node.targets) == 1:
            node.value = self.unpacked(node.targets[0], found, node.value)
            node.targets = [self.visit(t) for t in node.targets]
            return node
        return self.generic_visit(node)

    def dict_view(self, node: gast.AST) -> tuple[tuple[Tree, list[Any], str], str] | None:
        """A dict and which of its views `node` is (`d.keys()`, `d.values()`,
        `d.items()`, or `d` itself: "keys"), else None."""
        view = "keys"
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
                node.func.attr in ("keys", "values", "items") and not node.args and \
                not node.keywords:
            node, view = node.func.value, node.func.attr
        found = self.resolve(node)
        if found is None or found[0].kind != "dict":
            return None
        return found, view

    def entries(self, found, view: str, target: gast.AST | None, node: gast.AST
                ) -> list[gast.AST]:
        """The items of a view of a dict: its keys as constants, its values as leaves
        (unpacked into `target`), or (key, value) pairs."""
        tree, path, root = found
        out = []
        for k, (key, child) in enumerate(zip(tree.keys, tree.children, strict=True)):
            if view == "keys":
                out.append(b.const(key))
                continue
            sub = target.elts[1] if view == "items" and isinstance(
                target, (gast.Tuple, gast.List)) and len(target.elts) == 2 else target
            value = self.unpacked(sub, (child, path + [k], root), node)
            out.append(value if view == "values" else b.tuple_([b.const(key), value]))
        return out

    def visit_For(self, node):
        viewed = self.dict_view(node.iter)
        found = self.resolve(node.iter) if viewed is None else viewed[0]
        if found is None or found[0].leaf:
            return self.generic_visit(node)
        tree, path, root = found
        if not tree.sequence and viewed is None:
            raise self.refuse(node.iter, f"iterating a {tree.kind}")
        jumps = any(isinstance(n, (gast.Break, gast.Continue)) for s in node.body
                    for n in gast.walk(s))
        if node.orelse or jumps:
            raise self.refuse(node, "a `for` over it with `break`, `continue` or `else`")
        if viewed is not None:   # a dict's keys are constants: the copies read them so
            values = self.entries(found, viewed[1], node.target, node.iter)
        else:
            values = [self.unpacked(node.target, (child, path + [k], root), node.iter)
                      for k, child in enumerate(tree.children)]
        out = []
        for value in values:
            head = b.located(b.assign(copy.deepcopy(node.target), value), node)
            out += self.block([head] + _with_keys(node.target, value, node.body))
        return out


def _with_keys(target: gast.AST, value: gast.AST, body: list[gast.stmt]) -> list[gast.stmt]:
    """A copy of `body`, a loop's over a dict, with each read of a name `target` binds to
    a key (a constant of `value`) that key, so that `d[k]` reads an entry; where the body
    assigns the name, the copy as it is."""
    keys: dict[str, gast.AST] = {}

    def bind(t: gast.AST, v: gast.AST) -> None:
        if isinstance(t, gast.Name) and isinstance(v, gast.Constant):
            keys[t.id] = v
        elif isinstance(t, (gast.Tuple, gast.List)) and isinstance(v, gast.Tuple) and \
                len(t.elts) == len(v.elts):
            for sub, part in zip(t.elts, v.elts, strict=True):
                bind(sub, part)

    bind(target, value)
    body = copy.deepcopy(body)
    stored = {n.id for s in body for n in gast.walk(s) if isinstance(n, gast.Name) and
              not isinstance(n.ctx, gast.Load)}
    keys = {k: v for k, v in keys.items() if k not in stored}

    class Keys(gast.NodeTransformer):
        def visit_Name(self, node):
            if node.id in keys and isinstance(node.ctx, gast.Load):
                return b.located(copy.deepcopy(keys[node.id]), node)
            return node

    return [Keys().visit(s) for s in body]


def _position(tree: Tree, key: Any) -> int | None:
    if tree.kind == "dict":
        return tree.keys.index(key) if key in tree.keys else None
    if tree.kind == "dataclass" or isinstance(key, bool) or not isinstance(key, int):
        return None
    n = len(tree.children)
    return key % n if -n <= key < n else None


def _before(tree: Tree, path: list[int]) -> list[Tree]:
    """The subtrees that come before the one at `path`, depth first."""
    out = []
    for k in path:
        out += tree.children[:k]
        tree = tree.children[k]
    return out


def split(params: list[str], wrt: list[str], values: tuple, where: str,
          readable=lambda param, tree: False) -> tuple[dict[str, Tree], tuple]:
    """The structures of the `wrt` arguments that are containers (and of the others whose
    leaves are all floats, or numbers for a dataclass, where `readable(param, tree)`: the
    function only reads their
    entries), and the arguments with those flattened (as `leaf_names(params, trees)`)."""
    trees, flat = {}, []
    for p, v in zip(params, values, strict=True):
        if p in wrt and is_container(v):
            trees[p], leaves = flatten(v, f"{where}: argument {p!r}")
            flat += leaves
            continue
        if p not in wrt and is_container(v):
            try:
                tree, leaves = flatten(v, p)
            except SrcgradError:
                tree, leaves = None, []
            numbers = _floats if tree is None or tree.kind != "dataclass" else _numbers
            if tree is not None and all(numbers(x) for x in leaves) and readable(p, tree):
                trees[p] = tree
                flat += leaves
                continue
        flat.append(v)
    return trees, tuple(flat)


def _floats(x: Any) -> bool:
    return isinstance(x, (float, np.floating)) or \
        isinstance(x, np.ndarray) and x.dtype.kind in "fc"


def _numbers(x: Any) -> bool:
    """A leaf of a dataclass read (a method's view of self: `self.n` an int), which numba
    cannot take whole: numbers and arrays of numbers."""
    return isinstance(x, (int, float, np.number, np.bool_)) or \
        isinstance(x, np.ndarray) and x.dtype.kind in "biufc"


def readable(fn: gast.FunctionDef, param: str, tree: Tree) -> bool:
    """Whether `flatten_params` takes `fn` with parameter `param` of structure `tree`."""
    try:
        flatten_params(fn, {param: tree}, "")
    except UnsupportedSyntax:
        return False
    return True


def regroup(wrt: list[str], trees: dict[str, Tree], flat: list[Any]) -> list[Any]:
    """One entry per `wrt` name, from `flat` (one per leaf): a container's rebuilt."""
    flat = list(flat)
    return [unflatten(trees[w], flat) if w in trees else flat.pop(0) for w in wrt]


def flat_tangents(wrt: list[str], trees: dict[str, Tree], given: tuple,
                  where: str) -> tuple:
    """Tangents (one per `wrt` name) as one per leaf; each container's of its structure."""
    out = []
    for w, t in zip(wrt, given, strict=True):
        if w not in trees:
            out.append(t)
            continue
        tree, leaves = flatten(t, f"{where}: the tangent for {w!r}") if is_container(t) \
            else (LEAF, [t])
        if tree != trees[w]:
            raise SrcgradError(f"{where}: the tangent for {w!r} must have its structure "
                               f"({_shape(trees[w])}), not {_shape(tree)}")
        out += leaves
    return tuple(out)


def _shape(tree: Tree) -> str:
    if tree.leaf:
        return "an array"
    name = tree.cls.__name__ if tree.cls is not None else tree.kind
    return f"a {name} of {', '.join(map(repr, tree.keys))}"
