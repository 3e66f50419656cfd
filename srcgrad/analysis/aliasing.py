"""aliasing: which names may share an array's memory, read from a function's tree.

Requires a function body (the user's, or normalized) and its `Env`; changes no tree and
answers with plain values:

* `assigned_names`: a function's local names (parameters and every name it stores to),
  which the other questions take to tell a local from a global;
* `view_base`, `root_name`: the array an expression may be a view of (`x` of `x.T[1:]`,
  `np.array(x, copy=False)`), `sharing_call`: a NumPy call whose results may view any of
  its arguments;
  `is_basic_index` and `fancy_names`: whether an index makes a view or a copy, and
  `keeps_array`: whether its result is an array whatever the rank (`x[1:]`, not `x[0]`);
* `writes`: the arrays a body writes into, and the names bound to views (`v -> {x}`);
  `through_views`: the arrays a write into some of them changes;
* `value_bindings`, `returned_shared`, `sharing_helper`: names bound to an array another
  name holds (`v = x`, `p = (y, x)`, what a helper may return of its arguments);
* `helper(fun)`: what a caller must know of a user function it calls (`HelperFacts`: the
  parameters it writes into, whether its result may be an array it was passed), made once
  per function from its normalized form. A helper that writes into an array it is passed
  raises `HelperWrites`: the gradient cannot follow a write made in another function.

Exists so that the passes that keep NumPy's aliasing visible (`inplace`, `views`) and the
passes that emit code (`reverse`, `forward`, `fuse`) ask one place what may be a view.
"""

from __future__ import annotations

import inspect
import weakref
from dataclasses import dataclass
from typing import Any

import gast
import numpy as np

from .. import builder as b
from ..errors import SrcgradError, UnsupportedSyntax
from ..frontend.parse import MISSING, Env, is_user_function, parse
from ..naming import Namer
from ..passes.annotate import annotate
from ..passes.reject import reject_unsupported
from ..rules import fact


def assigned_names(fn: gast.FunctionDef) -> frozenset[str]:
    """Parameters and every name the body stores to."""
    names = {a.id for a in fn.args.args}
    for node in gast.walk(fn):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            names.add(node.id)
    return frozenset(names)


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
        method = isinstance(func, gast.Attribute) and \
            env.resolve(func.value, local_names) is MISSING
        if method and (func.attr in VIEW_METHODS or _uncopied(node)):
            return func.value   # (`y.astype(float, copy=False)` may be y)
        if node.args and (fact(env.resolve(func, local_names), "view") or _uncopied(node)):
            return node.args[0]   # (`np.array(y, copy=False)` may be y)
    return None


def _uncopied(call: gast.Call) -> bool:
    """Whether `call` is given `copy=` other than True: it may return its argument."""
    return any(k.arg == "copy" and not (isinstance(k.value, gast.Constant) and
                                        k.value.value is True) for k in call.keywords)


def sharing_call(call: gast.Call, func: Any) -> bool:
    """Whether NumPy's `func`, called so, may give views of any of its arguments (not
    only the first: `view_base`): `np.broadcast_arrays`, `np.atleast_1d(a, b)`,
    `np.meshgrid(x, y, copy=False)`."""
    if func is np.broadcast_arrays:
        return True
    if func in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
        return len(call.args) > 1
    return func is np.meshgrid and _uncopied(call)


def root_name(node: gast.AST, env: Env, local_names: frozenset[str]) -> str | None:
    """The name an expression reads through subscripts and views (`x` of `x.T[1:]`,
    `x.reshape(2, 2)[0]`, `np.squeeze(x)`), or None."""
    while node is not None and not isinstance(node, gast.Name):
        node = _view_step(node, env, local_names)
    return node.id if node is not None else None


def _view_step(node: gast.AST, env: Env, local_names: frozenset[str]) -> gast.AST | None:
    """`view_base`, but None for a fancy index (which makes a copy)."""
    if isinstance(node, gast.Subscript):
        if any(isinstance(i, (gast.List, gast.ListComp, gast.Compare))
               for i in index_parts(node.slice)):
            return None
    return view_base(node, env, local_names)


def sharing_helper(node: gast.AST, env: Env, local_names: frozenset[str]) -> Any:
    """The user function `node` calls if it may return an array it is passed, else None."""
    if isinstance(node, gast.Call) and \
            is_user_function(fun := env.resolve(node.func, local_names)) and \
            helper(fun).shares:
        return fun
    return None



def value_bindings(tree: gast.AST):
    """(name, value, whether it shares) for each name an assignment or a loop in `tree`
    binds to a value it may hold: `v = e`; each item of `a, b = e1, e2`; every item of
    what an unpacking whose items cannot be paired takes apart (`a, *q = p`: a and q
    may hold any item of p), and the items of what a loop walks that no item read sees
    (`for k, v in enumerate(L)`: v is an item of L). An item shares unless it reads a
    name the same assignment binds (`a, b = b, a` swaps, making no new sharing). A name
    bound to a display, a join or a copy of one shares each of its items
    (`p = (y, x)`, `q = p + [z]`, `r = list(q)`: `p[1]`, `q[1]` and `r[1]` are x's array).
    """
    seqs = sequence_names(tree)
    for node in gast.walk(tree):
        if isinstance(node, gast.For) and root_name(node.iter, Env({}), frozenset()) is None:
            target, value, paired = node.target, _walked(node.iter), False
        elif isinstance(node, gast.Assign):
            target, value, paired = node.targets[0], node.value, True
        else:
            continue
        if isinstance(target, gast.Name):
            for item in _items(value, seqs):
                yield target.id, item, True
            continue
        names = [n for n in gast.walk(target) if isinstance(n, gast.Name)
                 and isinstance(n.ctx, gast.Store)]   # (not the x of `x[i] = v`)
        bound = {n.id for n in names}
        if paired and isinstance(target, (gast.Tuple, gast.List)) and \
                isinstance(value, (gast.Tuple, gast.List)) and \
                len(target.elts) == len(value.elts) and \
                not any(isinstance(e, gast.Starred) for e in [*target.elts, *value.elts]):
            pairs = zip(target.elts, value.elts, strict=True)
        else:   # (`a, *q = p`, `k, v = pair`: each name may hold any item)
            pairs = [(n, value) for n in names]
        for t, v in pairs:
            if isinstance(t, gast.Name):
                for item in _items(v, seqs):
                    yield t.id, item, not (isinstance(item, gast.Name) and item.id in bound)


# calls whose result is never an array, whatever they are passed
_NUMBER_CALLS = (len, int, float, bool, range)


def never_arrays(tree: gast.FunctionDef, env: Env, local_names: frozenset[str]) -> set[str]:
    """The names of `tree`'s body that never hold an array, as far as its syntax tells:
    every binding (`=`, `op=`, a loop's) is a number constant, a name of these, a shape or
    its items (`n, d = x.shape`, `x.shape[0]`, `x.ndim`), `len`, `int`, `float`, `range`
    or a `math` function, or arithmetic of these. `e = d; e += 1` then changes no array
    another name shares. Names bound otherwise (parameters, `with ... as`, a
    comprehension's) are not among them.

    >>> fn = gast.parse("def f(x):\\n    n, d = x.shape\\n    e = d\\n    t = x\\n"
    ...                 "    for i in range(n):\\n        e += i * 2\\n        t += e\\n"
    ...                 "    return t").body[0]
    >>> sorted(never_arrays(fn, Env({}), frozenset()))
    ['d', 'e', 'i', 'n']
    """
    values: dict[str, list[gast.AST]] = {}
    bound = set()

    def bind(target: gast.AST, value: gast.AST) -> None:
        if isinstance(target, gast.Name):
            values.setdefault(target.id, []).append(value)
            bound.add(id(target))
        elif isinstance(target, (gast.Tuple, gast.List)):
            pairs = isinstance(value, (gast.Tuple, gast.List)) and \
                len(value.elts) == len(target.elts) and not any(
                    isinstance(e, gast.Starred) for e in [*target.elts, *value.elts])
            for k, t in enumerate(target.elts):   # (an item of `x.shape` is a number)
                bind(t.value if isinstance(t, gast.Starred) else t,
                     value.elts[k] if pairs else value)

    for node in gast.walk(tree):
        if isinstance(node, (gast.AugAssign, gast.AnnAssign)):
            bind(node.target, node.value)
        elif isinstance(node, gast.Assign):
            for t in node.targets:
                bind(t, node.value)
        elif isinstance(node, gast.For):
            bind(node.target, node.iter if isinstance(node.iter, gast.Call) and isinstance(
                node.iter.func, gast.Name) and node.iter.func.id == "range" else node)
    params = {a.id for a in tree.args.args}
    # a name bound anywhere but by an assignment or a loop (a comprehension, `with ... as`)
    other = {n.id for n in gast.walk(tree) if isinstance(n, gast.Name) and
             isinstance(n.ctx, gast.Store) and id(n) not in bound}
    known = set(values) - params - other

    def plain(v: gast.AST) -> bool:
        if isinstance(v, gast.Constant):
            return isinstance(v.value, (int, float)) or v.value is None
        if isinstance(v, gast.Name):
            return v.id in known
        if isinstance(v, gast.BinOp):
            return not isinstance(v.op, gast.MatMult) and plain(v.left) and plain(v.right)
        if isinstance(v, gast.UnaryOp):
            return plain(v.operand)
        if isinstance(v, gast.Attribute):   # (x.shape, a tuple of numbers)
            return v.attr in ("shape", "ndim") and isinstance(v.value, gast.Name)
        if isinstance(v, gast.Subscript):
            return plain(v.value)
        if isinstance(v, gast.Call):
            fun = env.resolve(v.func, local_names)
            return any(fun is f for f in _NUMBER_CALLS) or \
                getattr(fun, "__module__", None) == "math"
        return False

    changed = True
    while changed:
        gone = {name for name in known if not all(plain(v) for v in values[name])}
        changed = bool(gone)
        known -= gone
    return known


def _walked(node: gast.AST) -> gast.AST:
    """What a loop over `node` takes its items from: the arguments of `zip` and
    `enumerate` (as one display), else `node`."""
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
            node.func.id in ("zip", "enumerate", "reversed", "sorted", "list", "tuple"):
        return b.make(gast.Tuple, elts=list(node.args), ctx=gast.Load())
    return node


def _viewed(node: gast.AST) -> gast.AST | None:
    """What `node` is an item or a view of, one step, as far as its syntax tells:
    `e` of `e[k]`, `e.T`, `e.reshape(...)`."""
    if isinstance(node, gast.Subscript):
        return node.value
    if isinstance(node, gast.Attribute) and node.attr in VIEW_METHODS:
        return node.value
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
            node.func.attr in VIEW_METHODS:
        return node.func.value
    return None


# calls whose result may be (or hold) what they are passed, and methods whose result may
# be an item of the sequence they are called on, or that sequence's items
_PASSING = frozenset({"list", "tuple", "sorted", "reversed", "max", "min", "iter", "next",
                      "dict", "set"})
_TAKING = frozenset({"pop", "get", "setdefault", "copy", "values", "items"})


def sequence_names(tree: gast.AST) -> frozenset[str]:
    """The names `tree` binds (anywhere) to a list, tuple, set or dict: a display or
    comprehension, a join or repetition of one (`p + [x]`, `[x] * 2`), a copy (`list(p)`,
    `p.copy()`, `p[1:]`), a starred target (`a, *q = ...`)."""
    names: set[str] = {n.value.id for n in gast.walk(tree) if isinstance(n, gast.Starred)
                       and isinstance(n.value, gast.Name) and isinstance(n.ctx, gast.Store)}
    while True:
        more = {n.targets[0].id for n in gast.walk(tree) if isinstance(n, gast.Assign)
                and isinstance(n.targets[0], gast.Name) and _is_sequence(n.value, names)}
        if more <= names:
            return frozenset(names)
        names |= more


def _is_sequence(node: gast.AST, seqs: set[str] | frozenset[str]) -> bool:
    """Whether `node` is a list, tuple, set or dict that may hold other names' values."""
    if isinstance(node, (gast.List, gast.Tuple, gast.Set, gast.Dict, gast.ListComp,
                         gast.SetComp, gast.DictComp)):
        return True
    if isinstance(node, gast.Name):
        return node.id in seqs
    if isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Add, gast.Mult)):
        return _is_sequence(node.left, seqs) or _is_sequence(node.right, seqs)
    if isinstance(node, gast.Subscript):
        return isinstance(node.slice, gast.Slice) and _is_sequence(node.value, seqs)
    if isinstance(node, gast.Call):
        func = node.func
        if isinstance(func, gast.Name):
            return func.id in ("list", "tuple", "sorted", "dict", "set")
        return isinstance(func, gast.Attribute) and func.attr == "copy" and \
            _is_sequence(func.value, seqs)
    return False


def _items(value: gast.AST, seqs: frozenset[str] = frozenset()):
    """`value`, or the values it may hold or be, at any depth: the items of a display
    (a dict's values; a comprehension's item, or what it walks), of a join or repetition
    of sequences (`p + [x]`, `[x] * 2`: p and x), of a copy (`list(p)`, `sorted(p)`,
    `p.copy()`), the item a call takes out (`p.pop()`, `d.get(k)`, `max(p, key=f)`), either
    branch of `a if c else b`, either operand of `a or b`, and the array of
    `x.astype(t, copy=False)`. `seqs`: the names that may hold a sequence."""
    if isinstance(value, (gast.Tuple, gast.List, gast.Set)):
        for e in value.elts:
            yield from _items(e.value if isinstance(e, gast.Starred) else e, seqs)
    elif isinstance(value, gast.Dict):
        for e in value.values:
            yield from _items(e, seqs)
    elif isinstance(value, (gast.ListComp, gast.SetComp, gast.GeneratorExp)):
        taken = {n.id for g in value.generators for n in gast.walk(g.target)
                 if isinstance(n, gast.Name)}
        if isinstance(value.elt, gast.Name) and value.elt.id in taken:
            for g in value.generators:
                yield from _items(_walked(g.iter), seqs)
        else:
            yield from _items(value.elt, seqs)
    elif isinstance(value, gast.BinOp) and isinstance(value.op, (gast.Add, gast.Mult)) and \
            _is_sequence(value, seqs):
        for side in (value.left, value.right):
            if _is_sequence(side, seqs):
                yield from _items(side, seqs)
    elif isinstance(value, gast.IfExp):
        yield from _items(value.body, seqs)
        yield from _items(value.orelse, seqs)
    elif isinstance(value, gast.BoolOp):
        for v in value.values:
            yield from _items(v, seqs)
    elif isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and \
            value.func.id in _PASSING and value.args:
        for a in value.args:
            yield from _items(_walked(a), seqs)
    elif (base := _viewed(value)) is not None and \
            (inner := list(_items(base, seqs))) != [base]:
        yield from inner   # (an item or a view of what a display, a branch or a call holds)
    elif isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) and (
            value.func.attr in _TAKING and _is_sequence(value.func.value, seqs) or
            value.func.attr == "astype" and any(
                k.arg == "copy" and isinstance(k.value, gast.Constant) and not k.value.value
                for k in value.keywords)):
        yield from _items(value.func.value, seqs)
    else:
        yield value


class HelperWrites(UnsupportedSyntax):
    """A call to a user function that writes into an array it is passed."""


def writes(params: list[str], body: list[gast.stmt], env: Env,
           filename: str) -> tuple[set[str], dict[str, set[str]]]:
    """The arrays `body` writes into (`x[i] = ...`), and the names bound to views
    (`v = x[1:]`: v -> {x}). A call to a user helper that writes into an array it is
    passed is refused: the gradient cannot follow a write made in another function.

    >>> fn = gast.parse("def f(x, y):\\n    v = x.T[1:]\\n    v[0] = y\\n    return x").body[0]
    >>> written, views = writes(["x", "y"], fn.body, Env({}), "f.py")
    >>> written, views, sorted(through_views(written, views))
    ({'v'}, {'v': {'x'}}, ['v', 'x'])
    """
    local_names = assigned_names(b.function("f", params, body))
    views: dict[str, set[str]] = {}
    written: set[str] = set()
    # what a name is bound to may be a view (`a, b = x, y[1:]`), or hold one: a tuple or
    # list holds its items (`p = (x, y); v = p[1]` is y); a helper may return what it is
    # passed (`h(x[1:])`)
    whole = b.function("f", params, body)
    seqs = sequence_names(whole)
    for name, item, _ in value_bindings(whole):
        for root in _roots(item, env, local_names):
            views.setdefault(name, set()).add(root)
    for node in gast.walk(whole):
        if isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name) and \
                _is_sequence(node.target, seqs):
            # `L += [x]` puts x in L
            for item in _items(node.value, seqs):
                for root in _roots(item, env, local_names):
                    views.setdefault(node.target.id, set()).add(root)
        if isinstance(node, (gast.Assign, gast.AugAssign)):
            targets = node.targets if isinstance(node, gast.Assign) else [node.target]
            for t in targets:
                # (what `x[idx] = v` writes into is x, whatever the index: the value)
                if isinstance(t, gast.Subscript) and \
                        (root := root_name(t.value, env, local_names)) is not None:
                    written.add(root)
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
                isinstance(node.func.value, gast.Name) and node.args and \
                node.func.attr in ("append", "insert", "extend"):
            # a list holds what is put in it: `L.append(x); v = L[0]` is x
            for item in _items(node.args[-1], seqs):
                for root in _roots(item, env, local_names):
                    views.setdefault(node.func.value.id, set()).add(root)
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
        if sharing_helper(node, env, local_names):
            return {r for a in [*node.args, *(k.value for k in node.keywords)]
                    for r in _roots(a, env, local_names)}
        node = _view_step(node, env, local_names)
    return {node.id} if node is not None else set()


def through_views(written: set[str], views: dict[str, set[str]]) -> set[str]:
    """The arrays a write into one of `written` changes: those and what they view."""
    reached, todo = set(), list(written)
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo += views.get(name, ())
    return reached


def returned_shared(body: list[gast.stmt], env: Env, local_names: frozenset[str]) -> set[str]:
    """The names bound to what a user function returns when it may return an array it
    was passed, a view of one, or one array twice (`h, c = cell(x)`: h may be x), and
    the arrays passed to it (x, which `x += e` would change with h); also where the call
    is an item of a tuple or list display (`p = (y, h(x))`)."""
    out = set()
    for node in gast.walk(b.function("f", [], body)):
        if not isinstance(node, gast.Assign):
            continue
        for call in _items(node.value):
            if sharing_helper(call, env, local_names):
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
    # the parameters whose arrays (or views of them) it may return; None: any of them
    returns: frozenset[str] | None = None


def _helper_facts(fun: Any) -> HelperFacts:
    # (imported here: normalize asks this analysis about the helpers it calls)
    from ..passes.closures import lift_closures
    from ..passes.normalize import normalize

    try:
        parsed = lift_closures(annotate(parse(fun)))
        tree = reject_unsupported(parsed.tree, parsed.filename)
        tree = normalize(tree, parsed.env, Namer(assigned_names(tree)), parsed.filename,
                         copy_args=False)
    except HelperWrites:
        raise   # it passes its argument to a helper that writes into it
    except SrcgradError:
        return HelperFacts()   # called as it is, as the compiler does
    params = [a.id for a in tree.args.args]
    written, views = writes(params, tree.body, parsed.env, parsed.filename)
    return HelperFacts(frozenset(params) & through_views(written, views),
                       _returns_shared(tree, params, views, parsed.env),
                       _returned_params(tree, params, views, parsed.env))


def _returns_shared(tree: gast.FunctionDef, params: list[str], views: dict[str, set[str]],
                    env: Env) -> bool:
    """Whether the normalized function may return an array it was passed (or a view of
    one), or one array twice (`return b, b`). After `a = a * 2`, `a` is a new array."""
    returned = tree.body[-1].value   # normalized: one final `return atom`
    if not isinstance(returned, gast.Name):
        return False
    local_names = assigned_names(tree)
    seqs = sequence_names(tree)
    for node in all_assignments(tree.body):
        if node.targets[0].id == returned.id:
            elts = list(_items(node.value, seqs))
            roots = [r for e in elts if (r := root_name(e, env, local_names)) is not None]
            if len(roots) != len(set(roots)) or any(
                    through_views({r}, views) & set(params) for r in roots) or any(
                    _passes_through(e, env, local_names) for e in elts):
                return True
    return returned.id in params


def _passes_through(node: gast.AST, env: Env, local_names: frozenset[str]) -> bool:
    """Whether `node` calls a function that may return an array it is passed: a user
    helper that may (`return tail(a)`), or a function held by a name (`return fn(a)`,
    which is whatever the caller passes)."""
    if not isinstance(node, gast.Call):
        return False
    if isinstance(node.func, gast.Name) and node.func.id in local_names:
        return True
    return sharing_helper(node, env, local_names) is not None


def _returned_params(tree: gast.FunctionDef, params: list[str], views: dict[str, set[str]],
                     env: Env) -> frozenset[str]:
    """The parameters whose arrays (or views of them) the normalized function may return."""
    returned = tree.body[-1].value   # normalized: one final `return atom`
    names = [e.id for e in (returned.elts if isinstance(returned, gast.Tuple) else [returned])
             if isinstance(e, gast.Name)]
    local_names = assigned_names(tree)
    seqs = sequence_names(tree)
    roots = set(names)
    for node in all_assignments(tree.body):
        if node.targets[0].id in names:
            for e in _items(node.value, seqs):
                if (r := root_name(e, env, local_names)) is not None:
                    roots.add(r)
                if _passes_through(e, env, local_names):
                    roots |= {r for a in [*e.args, *(k.value for k in e.keywords)]
                              if (r := root_name(a, env, local_names)) is not None}
    return frozenset(through_views(roots, views) & set(params))


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
    """The assignments to a name in `body`, at any depth."""
    for node in gast.walk(b.function("f", [], body)):
        if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
            yield node


def index_parts(index: gast.AST) -> list[gast.AST]:
    """The parts of a subscript's index: `i` and `j` of `x[i, j]`, `i` of `x[i]`."""
    return index.elts if isinstance(index, gast.Tuple) else [index]


def keeps_array(index: gast.AST) -> bool:
    """Whether `x[index]` is an array whatever x's rank: a part of it is a slice, None or
    `...` (`x[0]` is a number of a vector, a row of a matrix)."""
    return any(isinstance(i, gast.Slice) or isinstance(i, gast.Constant) and
               i.value in (None, Ellipsis) for i in index_parts(index))


def is_basic_index(index: gast.AST, basic: set[str]) -> bool:
    """Whether `x[index]` is a view of `x` (NumPy's basic indexing): slices, int
    constants, `None`, `...` and names in `basic` (loop indices)."""
    for part in index_parts(index):
        if isinstance(part, gast.Slice):
            continue
        if isinstance(part, gast.Constant) and (part.value is None or part.value is Ellipsis
                                                or type(part.value) is int):
            continue
        if isinstance(part, gast.Name) and part.id in basic:
            continue
        return False
    return True

