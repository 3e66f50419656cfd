"""comprehensions: a comprehension reduced by the call it is passed to becomes a loop.

Requires a tree accepted by `reject_unsupported` (set and dict comprehensions are refused
there; before it, `pytrees` makes a dict comprehension whose keys are known when srcgrad
compiles the dict display `displayed` gives, and one name per entry). `normalize` calls
`lower` on each call that is passed a list comprehension or a generator expression, and
normalizes the statements it returns as the user's own code,
at the line of the statement the comprehension is in; so the generated source shows a
loop under that line's comment, and reverse and forward mode differentiate the loop.
Guarantees the statements compute the call's value into a fresh name, evaluating what
Python evaluates in its order: each `for` clause a loop nested in the one before, each
`if` clause an `if` in it, the element once per item the filters pass. A comprehension
variable does not leak in Python 3: one whose name is used anywhere else in the function
(or by another comprehension) is renamed.

A list comprehension whose list is the value (`np.stack([...])`, `parts = [...]`) is the
list display it stands for (`unrolled`) when its `for` clauses run over ranges of int
literals (a `static=` argument is one by then) with no `if`; any other is the list its
loops append to (`appended`), which `lists` makes an array the loop fills where it is read
as one (`np.array([v ** 2 for v in x])`); `check` refuses it, naming the line, where not.
`list(...)` of a generator expression (`list(map(f, x))`, which `closures` writes as one)
is the list comprehension it equals (`Listed`), before all this.

Exists so that a comprehension needs no rule: `sum(x[i] ** 2 for i in range(n))` is the
loop a user would write by hand, with the tape and adjoint loops have. `max` keeps the
first of equal items, as Python does, and its gradient goes to that one.

| call | statements (`acc` a fresh name) |
|---|---|
| `sum(c)`, `sum(c, start)` | `acc = start` (0), each item: `acc = acc + elt` |
| `np.sum([...])` | `acc = 0`, each item: `acc = acc + np.sum(elt)` |
| `max(c)`, `min(c)` | each item: `if n == 0 or elt > acc: acc = elt` (`<` for min) |
| `max(c, key=f)` | each item: `if n == 0 or f(elt) > best: acc, best = elt, f(elt)` |
| | after: `if n == 0: raise ValueError(...)` (or `acc = default`) |
| `any(c)`, `all(c)` | `acc = False`, each item: `if elt: acc = True` (`all` negated) |
| `reduce((acc := f(acc, v)) for v in s)` | `acc = init` (or s[0]), each item: `acc = f(acc, v)` |

(the last is `functools.reduce(f, s[, init])`, as `closures` writes it; over items known
when srcgrad compiles, one such statement per item.)
"""

from __future__ import annotations

import builtins
import copy
import functools
from collections.abc import Callable

import gast
import numpy as np

from .. import builder as b
from ..analysis.displays import MAX_ITEMS, cheap
from ..naming import Namer

COMPREHENSIONS = (gast.ListComp, gast.GeneratorExp)

_REDUCERS = {builtins.sum: "sum", builtins.max: "max", builtins.min: "min",
             builtins.any: "any", builtins.all: "all", np.sum: "np.sum",
             functools.reduce: "reduce"}


def shared_names(fn: gast.FunctionDef) -> set[str]:
    """The names a comprehension's variable must not keep: those used outside
    comprehensions, and those more than one comprehension binds (one nested in another
    would overwrite it)."""
    outside = {a.id for a in fn.args.args}
    bound: dict[str, int] = {}

    def visit(node: gast.AST, inside: bool) -> None:
        if isinstance(node, (*COMPREHENSIONS, gast.SetComp, gast.DictComp)):
            for gen in node.generators:
                for n in gast.walk(gen.target):
                    if isinstance(n, gast.Name):
                        bound[n.id] = bound.get(n.id, 0) + 1
            inside = True
        elif isinstance(node, gast.Name) and not inside:
            outside.add(node.id)
        for child in gast.iter_child_nodes(node):
            visit(child, inside)

    for stmt in fn.body:
        visit(stmt, False)
    return outside | {name for name, k in bound.items() if k > 1}


def lower(call: gast.Call, func, namer: Namer, shared: set[str],
          error: Callable[[gast.AST, str], Exception],
          items: Callable[[gast.AST], list[gast.AST] | None] = lambda seq: None
          ) -> tuple[list[gast.stmt], gast.Name]:
    """The statements computing `call`, whose one argument is a comprehension, and the
    name they leave its value in. `func` is the object the call calls; `shared` what
    `shared_names` gives (the new names are added to it); `error(node, message)` the
    exception to raise; `items(seq)` the items of a sequence known now
    (`displays.known_items`), which a reduce runs over as one call per item.

    >>> import astor
    >>> call = gast.parse("sum(x[i] ** 2 for i in range(n) if x[i] > 0)").body[0].value
    >>> out, acc = lower(call, sum, Namer({"x", "n", "i"}), {"x", "n"}, None)
    >>> print(astor.to_source(gast.gast_to_ast(b.function("f", [], out))).strip())
    def f():
        total = 0
        for i in range(n):
            if x[i] > 0:
                total = total + x[i] ** 2
    """
    kind = reducer(func)
    if kind == "reduce":
        return _folded(call, namer, error, items)
    comp = next(a for a in call.args if isinstance(a, COMPREHENSIONS))
    what = "a list comprehension" if isinstance(comp, gast.ListComp) else \
        "a generator expression"
    if kind is None or kind == "np.sum" and not isinstance(comp, gast.ListComp):
        raise error(comp, f"{what} passed to {_dotted(call.func)} cannot be differentiated: "
                          f"only sum, max, min, any, all (and np.sum of a list "
                          f"comprehension) of one are lowered to a loop")
    keywords = {k.arg: k.value for k in call.keywords}
    allowed = {"sum": {"start"}, "max": {"default", "key"},
               "min": {"default", "key"}}.get(kind, set())
    extra = [a for a in call.args if a is not comp]
    if call.args[0] is not comp or set(keywords) - allowed or \
            len(extra) > (1 if kind == "sum" else 0):
        raise error(comp, f"{_dotted(call.func)}(...) of {what} can be differentiated with "
                          f"the comprehension as its only argument"
                          + (" (and start=)" if kind == "sum" else
                             " (and default=, key=)" if kind in ("max", "min") else ""))
    comp = _renamed_targets(copy.deepcopy(comp), namer, shared)
    names = {"sum": "total", "np.sum": "total", "max": "largest", "min": "smallest",
             "any": "found", "all": "every"}
    acc = namer.fresh(names[kind])
    elt = comp.elt
    if kind in ("sum", "np.sum"):
        start = extra[0] if extra else keywords.get("start", b.const(0))
        before = [b.assign(acc, start)]
        item = b.call(b.dotted("np.sum"), elt) if kind == "np.sum" else elt
        inner = [b.assign(acc, b.binop(b.name(acc), gast.Add(), item))]
        after = []
    elif kind in ("max", "min"):
        count, value = namer.fresh("count"), namer.temp()
        key = keywords.get("key")
        if isinstance(key, gast.Constant) and key.value is None:
            key = None
        # with key=f, the item whose key beats the best key so far (`score`)
        score, mark = (acc, value) if key is None else (namer.fresh("score"), namer.temp())
        better = b.make(gast.Compare, left=b.name(mark),
                        ops=[gast.Gt() if kind == "max" else gast.Lt()],
                        comparators=[b.name(score)])
        first = b.make(gast.Compare, left=b.name(count), ops=[gast.Eq()],
                       comparators=[b.const(0)])
        before = [b.assign(count, b.const(0)), b.assign(acc, b.const(0))]
        scored = [] if key is None else [b.assign(mark, b.call(copy.deepcopy(key),
                                                               b.name(value)))]
        kept = [] if key is None else [b.assign(score, b.name(mark))]
        before += [] if key is None else [b.assign(score, b.const(0))]
        inner = [b.assign(value, elt), *scored,
                 b.make(gast.If, test=b.make(gast.BoolOp, op=gast.Or(), values=[first, better]),
                        body=[b.assign(acc, b.name(value)), *kept]),
                 b.assign(count, b.binop(b.name(count), gast.Add(), b.const(1)))]
        empty = [b.assign(acc, keywords["default"])] if "default" in keywords else \
            [b.make(gast.Raise, exc=b.call(b.name("ValueError"),
                                           b.const(f"{kind}() arg is an empty sequence")))]
        after = [b.make(gast.If, test=copy.deepcopy(first), body=empty)]
    else:
        test = elt if kind == "any" else b.make(gast.UnaryOp, op=gast.Not(), operand=elt)
        before = [b.assign(acc, b.const(kind == "all"))]
        inner = [b.make(gast.If, test=test, body=[b.assign(acc, b.const(kind == "any"))])]
        after = []
    return before + _loops(comp, inner, error) + after, b.name(acc)


def _folded(call: gast.Call, namer: Namer, error: Callable[[gast.AST, str], Exception],
            items: Callable[[gast.AST], list[gast.AST] | None]
            ) -> tuple[list[gast.stmt], gast.Name]:
    """`reduce((acc := f(acc, item)) for item in s)[, init])`, the steps of
    `functools.reduce(f, s[, init])` (`closures.reduced`), as Python runs them: `acc =
    init` (or s's first item), then `acc = f(acc, item)` for each item (the rest): one
    statement per item where `items` knows them, else a loop (over a generator expression
    `s`, its own loop, the item its element).

    >>> import astor
    >>> call = gast.parse("reduce((a := f(a, v) for v in x))").body[0].value
    >>> out, acc = _folded(call, Namer({"x", "a", "v", "f"}), None, lambda s: None)
    >>> print(astor.to_source(gast.gast_to_ast(b.function("g", [], out))).strip())
    def g():
        n = len(x)
        if n == 0:
            raise TypeError('reduce() of empty iterable with no initial value')
        a = x[0]
        for k in range(1, n):
            v = x[k]
            a = f(a, v)
    """
    comp, init = copy.deepcopy(call.args[0]), [copy.deepcopy(a) for a in call.args[1:]]
    acc, step = comp.elt.target.id, comp.elt.value
    gen = comp.generators[0]
    item, seq = gen.target.id, gen.iter
    empty = "reduce() of empty iterable with no initial value"
    known = items(seq)
    if known is not None:   # (each item read once: f(acc, item) names it once)
        if not known and not init:
            raise error(call, f"functools.{empty}")
        start, rest = (init[0], known) if init else (known[0], known[1:])
        return [b.assign(acc, start)] + [b.assign(acc, _substituted(copy.deepcopy(step), {
            item: v})) for v in rest], b.name(acc)
    if isinstance(seq, gast.GeneratorExp):   # its loop, whose element is the item
        if not init:
            raise error(call, "functools.reduce of a generator expression is "
                              "differentiated with an initial value (or reduce the list "
                              "comprehension)")
        seq = _renamed_targets(seq, namer, set())
        return [b.assign(acc, init[0])] + _loops(seq, [b.assign(acc, _substituted(
            step, {item: seq.elt}))], error), b.name(acc)
    if init:
        return [b.assign(acc, init[0]), b.make(gast.For, target=gen.target, iter=seq,
                                               body=[b.assign(acc, step)])], b.name(acc)
    if isinstance(seq, gast.Call) and isinstance(seq.func, gast.Name) and \
            seq.func.id in ("range", "zip", "enumerate", "reversed", "map", "filter"):
        raise error(call, f"functools.reduce over {seq.func.id}(...) is differentiated with "
                          f"an initial value")
    out: list[gast.stmt] = []
    if not isinstance(seq, gast.Name):   # (read for its length and each item)
        whole = namer.fresh("items")
        out.append(b.assign(whole, seq))
        seq = b.name(whole)
    k, n = namer.fresh("k"), namer.fresh("n")
    length = b.name(n)
    out += [b.assign(n, b.call(b.name("len"), copy.deepcopy(seq))),
            b.make(gast.If, test=b.make(gast.Compare, left=length, ops=[gast.Eq()],
                                        comparators=[b.const(0)]),
                   body=[b.make(gast.Raise, exc=b.call(b.name("TypeError"), b.const(empty)))]),
            b.assign(acc, b.subscript(copy.deepcopy(seq), b.const(0))),
            b.make(gast.For, target=b.name(k, store=True),
                   iter=b.call(b.name("range"), b.const(1), b.name(n)),
                   body=[b.assign(item, b.subscript(copy.deepcopy(seq), b.name(k))),
                         b.assign(acc, step)])]
    return out, b.name(acc)


def appended(comp: gast.ListComp, namer: Namer, shared: set[str],
             error: Callable[[gast.AST, str], Exception], name: str | None = None
             ) -> tuple[list[gast.stmt], gast.Name]:
    """The statements building the list of a comprehension whose list is the value, by
    appends in its loops, and the name of the list (`name`, or a fresh one; `lists` makes
    it an array its loop fills where the list is read as an array).

    >>> import astor
    >>> comp = gast.parse("[v ** 2 for v in x if v > 0]").body[0].value
    >>> out, items = appended(comp, Namer({"x", "v"}), {"x"}, None)
    >>> print(astor.to_source(gast.gast_to_ast(b.function("f", [], out))).strip())
    def f():
        items = []
        for v in x:
            if v > 0:
                items.append(v ** 2)
    """
    comp = _renamed_targets(copy.deepcopy(comp), namer, shared)
    acc = name or namer.fresh("items")
    append = b.make(gast.Expr, value=b.call(b.make(
        gast.Attribute, value=b.name(acc), attr="append", ctx=gast.Load()), comp.elt))
    return [b.assign(acc, b.make(gast.List, elts=[], ctx=gast.Load()))] + \
        _loops(comp, [append], error), b.name(acc)


def _loops(comp: gast.AST, inner: list[gast.stmt],
           error: Callable[[gast.AST, str], Exception]) -> list[gast.stmt]:
    """`inner` in the loops of `comp`'s `for` clauses, under their `if` clauses."""
    for gen in reversed(comp.generators):
        if gen.is_async:
            raise error(comp, "'async for' in a comprehension cannot be differentiated")
        for test in reversed(gen.ifs):
            inner = [b.make(gast.If, test=test, body=inner)]
        inner = [b.make(gast.For, target=gen.target, iter=gen.iter, body=inner)]
    return inner


class Listed(gast.NodeTransformer):
    """`list(e for v in s)` (and `list(map(f, s))`, a generator expression by now) as the
    list comprehension `[e for v in s]` it equals. `resolve(func)` is the object a call
    calls."""

    def __init__(self, resolve: Callable[[gast.expr], object]):
        self.resolve = resolve

    def visit_Call(self, node: gast.Call) -> gast.expr:
        self.generic_visit(node)
        if len(node.args) == 1 and not node.keywords and \
                isinstance(node.args[0], COMPREHENSIONS) and self.resolve(node.func) is list:
            comp = node.args[0]
            return b.located(b.make(gast.ListComp, elt=comp.elt,
                                    generators=comp.generators), node)
        return node


def reducer(func) -> str | None:
    """The reduction `lower` makes a loop of, if `func` (a called object) is one."""
    return _REDUCERS.get(func) if _hashable(func) else None


def unrolled(comp: gast.ListComp, items: Callable[[gast.AST], list[gast.AST] | None]
             ) -> gast.List | None:
    """The list display a list comprehension stands for when each `for` clause runs over
    what `items(iterable)` gives the items of (`displays.known_items`: a display, a name
    bound once to one, a join of such, `range` of int literals; a `static=` argument is
    one by then, and the variable of an outer clause counts, `range(i + 1)`), each a
    constant, a name or a constant index of a name (which the element may read more than
    once), and none has an `if`: each item the element with the variables' values in
    it; else None. At most `MAX_ITEMS` items.

    >>> import astor
    >>> from ..analysis.displays import known_items
    >>> comp = gast.parse("[x[i] * x[j] for i in range(2) for j in range(i, 2)]").body[0].value
    >>> shown = unrolled(comp, lambda it: known_items(it, lambda f: range, {}))
    >>> print(astor.to_source(gast.gast_to_ast(shown)).strip())
    [x[0] * x[0], x[0] * x[1], x[1] * x[1]]
    """
    elements: list[gast.AST] = []

    def expand(k: int, values: dict[str, gast.AST]) -> bool:
        if k == len(comp.generators):
            elements.append(_substituted(copy.deepcopy(comp.elt), values))
            return len(elements) <= MAX_ITEMS
        gen = comp.generators[k]
        if gen.ifs or gen.is_async or not isinstance(gen.target, gast.Name):
            return False
        found = items(_substituted(copy.deepcopy(gen.iter), values))
        if found is None or not all(cheap(v) for v in found):
            return False
        return all(expand(k + 1, {**values, gen.target.id: v}) for v in found)

    binds = {n.id for g in comp.generators for n in gast.walk(g.target)
             if isinstance(n, gast.Name)}
    nested = [n for n in gast.walk(comp) if isinstance(n, (*COMPREHENSIONS, gast.SetComp,
                                                           gast.DictComp)) and n is not comp]
    if any(n.id in binds for c in nested for g in c.generators for n in gast.walk(g.target)
           if isinstance(n, gast.Name)):
        return None   # (a nested comprehension rebinding a variable: not substituted)
    if not expand(0, {}):
        return None
    return b.make(gast.List, elts=elements, ctx=gast.Load())


def displayed(comp: gast.DictComp, items: Callable[[gast.AST], list[gast.AST] | None]
              ) -> gast.Dict | None:
    """The dict display a dict comprehension stands for when its keys are known when
    srcgrad compiles: each `for` clause runs over what `items(iterable)` gives the items
    of (a display, a range of int literals, `enumerate` or `zip` of such), with no `if`,
    and each key is a constant once the variables are the items. An item that is not a
    constant, a name or a constant index of a name is put in once at most (it is not
    evaluated twice). None for any other (`reject` refuses it). At most `MAX_ITEMS` items.

    >>> import astor
    >>> comp = gast.parse("{k: x[i] * 2 for i, k in enumerate('ab')}").body[0].value
    >>> comp.generators[0].iter.args = [gast.parse("['a', 'b']").body[0].value]
    >>> enum = lambda it: [b.tuple_([b.const(k), e]) for k, e in enumerate(it.args[0].elts)]
    >>> print(astor.to_source(gast.gast_to_ast(displayed(comp, enum))).strip())
    {'a': x[0] * 2, 'b': x[1] * 2}
    """
    keys: list[gast.AST] = []
    values: list[gast.AST] = []

    def bind(target: gast.AST, item: gast.AST, into: dict[str, gast.AST]) -> bool:
        if isinstance(target, gast.Name):
            into[target.id] = item
            return True
        return isinstance(target, (gast.Tuple, gast.List)) and \
            isinstance(item, (gast.Tuple, gast.List)) and \
            len(item.elts) == len(target.elts) and \
            all(bind(t, e, into) for t, e in zip(target.elts, item.elts, strict=True))

    def expand(k: int, bound: dict[str, gast.AST]) -> bool:
        if k == len(comp.generators):
            uses = [n.id for part in (comp.key, comp.value) for n in gast.walk(part)
                    if isinstance(n, gast.Name) and n.id in bound]
            if any(uses.count(name) > 1 and not cheap(bound[name]) for name in bound):
                return False
            key = _substituted(copy.deepcopy(comp.key), bound)
            if not isinstance(key, gast.Constant):
                return False
            keys.append(key)
            values.append(_substituted(copy.deepcopy(comp.value), bound))
            return len(keys) <= MAX_ITEMS
        gen = comp.generators[k]
        found = items(_substituted(copy.deepcopy(gen.iter), bound))
        if gen.ifs or gen.is_async or found is None:
            return False
        for item in found:
            inner = dict(bound)
            if not bind(gen.target, item, inner) or not expand(k + 1, inner):
                return False
        return True

    binds = {n.id for g in comp.generators for n in gast.walk(g.target)
             if isinstance(n, gast.Name)}
    nested = [n for n in gast.walk(comp) if n is not comp and isinstance(
        n, (*COMPREHENSIONS, gast.SetComp, gast.DictComp, gast.Lambda))]
    if nested and any(isinstance(n, gast.Name) and n.id in binds
                      for c in nested for n in gast.walk(c)):
        return None   # (a nested scope that may rebind a variable: not substituted)
    if not expand(0, {}):
        return None
    return b.make(gast.Dict, keys=keys, values=values)


def _substituted(node: gast.AST, values: dict[str, gast.AST]) -> gast.AST:
    """`node` with each read of a name in `values` a copy of the node it maps to (at the
    name's place, where it has none)."""
    if isinstance(node, gast.Name) and node.id in values:
        return b.located(copy.deepcopy(values[node.id]), node)
    return b.map_children(node, lambda child: _substituted(child, values))


def _renamed_targets(comp: gast.AST, namer: Namer, shared: set[str]) -> gast.AST:
    """`comp` with each variable its `for` clauses bind renamed where the name is used
    elsewhere, in that clause's target and everything after it (later clauses, the
    element; a comprehension nested in those that binds the same name is renamed again
    when it is lowered)."""
    for k, gen in enumerate(comp.generators):
        bound = {n.id for n in gast.walk(gen.target) if isinstance(n, gast.Name)}
        new = {name: namer.fresh(name) for name in sorted(bound) if name in shared}
        if not new:
            continue
        shared |= set(new.values())   # a comprehension nested in this one may bind it too
        later = [gen.target, *gen.ifs] + [part for g in comp.generators[k + 1:]
                                          for part in (g.target, g.iter, *g.ifs)] + [comp.elt]
        for part in later:
            for n in gast.walk(part):
                if isinstance(n, gast.Name) and n.id in new:
                    n.id = new[n.id]
    return comp


def _hashable(obj) -> bool:
    try:
        hash(obj)
    except TypeError:
        return False
    return True


def _dotted(node: gast.AST) -> str:
    if isinstance(node, gast.Name):
        return node.id
    if isinstance(node, gast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return "a call"
