"""shapes: which values of a generated function have the same shape, and are complex together.

Requires a generated function (forward code and adjoint, any order of statements).
Returns, for each call of a helper that reads an argument only for its shape and kind
(`unbroadcast(g, like)`, `sum_grad(dy, like, ...)`, `mean_grad`, `reshape_as`), the facts
in force where it is made: a plain dict keyed by the call's id, of `Fact`s keyed by name.

A fact describes a value symbolically, in terms of the values names hold where it is made:

* `shape`: a set of parts whose NumPy broadcast is the value's shape. A part is
  ``("atom", n)``, the shape of what name n holds, or ``("reduced", parts, axis,
  keepdims)``, the shape of a reduction. The empty set is the shape of a number;
  ``bc(R, T) = T`` when R is a reduction of T with `keepdims` (its axes are 1), so that
  part goes. Elementwise operators and ufuncs broadcast (the union of their operands'
  parts); `unbroadcast`, `sum_grad`, `mean_grad`, `reshape_as` give their `like`'s shape.
* `may`, `must`: names (and ``"<complex>"``, a complex constant), atoms of kind: the
  value is complex only if one of `may` holds a complex value, and is if one of `must`
  does. Both are the union of the operands' for elementwise operators, ufuncs that map
  real to real and complex to complex, reductions and `@`; the name made, otherwise.
  `unbroadcast(g, like)` is complex only where like is, and is where both are: a
  cotangent is as complex as its primal.
* `floating`: the value is certainly of a float or complex type (the seed, a float
  constant, and what an operator makes of one).
* `numpyish`: the value is certainly a NumPy array or scalar (a ufunc's, a reduction's,
  `@`'s), never a list or tuple.

Facts are flow sensitive: assigning n, or a statement that might change what n holds in
place (a method call on it, a store into it, passing it to a call with effects; and what
shares it), drops every fact that mentions n, but for an item write into an array that a
NumPy constructor made (`L = np.zeros((d, d)); L[i, j] = v`: its shape and dtype stay);
a loop or branch drops, on entry and after it, the facts of every name it assigns. An
operator makes a union only when one operand is a NumPy value or a float: a list `+` a
list, or `*` an int, is not a broadcast.

Exists so `passes.optimize` can drop `unbroadcast(g, like)` where g has like's shape
and kind, and replace a `like` computed only for its shape by a value that has it and is
kept anyway ("an adjoint has its primal's shape"), or by a stand-in made from its parts,
so the forward work goes.
"""

from __future__ import annotations

from dataclasses import dataclass

import gast
import numpy as np

from ..passes.base import Namespace

COMPLEX = "<complex>"
_ELEMENTWISE = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.FloorDiv, gast.Mod, gast.Pow)
_PURE_METHODS = frozenset(["copy"])


@dataclass(frozen=True)
class Fact:
    """A value's shape parts and kind atoms (None: its own, known once it is named),
    whether it is certainly float (or complex) and certainly a NumPy value."""
    shape: frozenset | None
    may: frozenset | None
    must: frozenset | None
    floating: bool
    numpyish: bool


def default(name: str) -> Fact:
    """What is known of any value name holds: its own shape, complex as itself."""
    return Fact(frozenset([("atom", name)]), frozenset([name]), frozenset([name]), False, False)


def shape_helpers() -> dict:
    """The helpers whose second argument (`like`) is read for its shape (and kind)."""
    from ..runtime import mean_grad, reshape_as, sum_grad, unbroadcast
    return {unbroadcast: "unbroadcast", sum_grad: "sum_grad", mean_grad: "mean_grad",
            reshape_as: "reshape_as"}


@dataclass(frozen=True)
class Shapes:
    """The facts in force at each call of a shape helper (by the call's id), and the
    names no fact may mention (`shared`)."""
    at: dict
    shared: frozenset
    ns: Namespace

    def of(self, call: gast.Call, node: gast.AST) -> Fact | None:
        """What is known, where `call` is made, of the value of `node`."""
        env = self.at.get(id(call))
        return None if env is None else fact_of(node, env, self.ns, self.shared)

    def named(self, call: gast.Call, name: str) -> Fact | None:
        """What is known of the value `name` holds where `call` is made (None: nothing)."""
        env = self.at.get(id(call))
        return None if env is None or name in self.shared else env.get(name, default(name))


def shape_facts(fn: gast.FunctionDef, ns: Namespace) -> Shapes:
    r"""The facts in force at each call of a `shape_helpers` helper in `fn`.

    >>> from srcgrad import runtime
    >>> ns = Namespace(); _ = [ns.bind(n, getattr(runtime, n)) for n in ("unbroadcast",)]
    >>> ns.bind("np", np)
    'np'
    >>> fn = gast.parse("def g(x, w):\n    a = x @ w\n    m = np.max(a, axis=1, keepdims=True)\n"
    ...     "    u = np.exp(a - m)\n    da = unbroadcast(u * 2.0, m)").body[0]
    >>> shapes = shape_facts(fn, ns)
    >>> [call] = [n for n in gast.walk(fn)
    ...           if isinstance(n, gast.Call) and getattr(n.func, "id", "") == "unbroadcast"]
    >>> shapes.named(call, "u").shape == shapes.named(call, "a").shape == frozenset([("atom", "a")])
    True
    """
    shared = _shared(fn, ns)
    out: dict[int, dict[str, Fact]] = {}
    _Walk(ns, shared, _made_arrays(fn, ns), out).block(fn.body, {})
    return Shapes(out, shared, ns)


def fact_of(node: gast.AST, env: dict[str, Fact], ns: Namespace, shared: frozenset = frozenset()
            ) -> Fact | None:
    """What `env` says of the value of expression `node`, or None if nothing is known."""
    if isinstance(node, gast.Name):
        return None if node.id in shared else env.get(node.id, default(node.id))
    if isinstance(node, gast.Constant):
        v = node.value
        if isinstance(v, bool) or type(v) is int:
            return Fact(frozenset(), frozenset(), frozenset(), False, False)
        if type(v) is float:
            return Fact(frozenset(), frozenset(), frozenset(), True, False)
        if type(v) is complex:
            return Fact(frozenset(), frozenset([COMPLEX]), frozenset([COMPLEX]), True, False)
        return None
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        return fact_of(node.operand, env, ns, shared)
    if isinstance(node, gast.BinOp) and isinstance(node.op, _ELEMENTWISE):
        left, right = fact_of(node.left, env, ns, shared), fact_of(node.right, env, ns, shared)
        if left is None or right is None:
            return None
        exact = not isinstance(node.op, gast.Pow) or \
            isinstance(node.right, gast.Constant) and type(node.right.value) is int
        return _elementwise([left, right], exact)
    if isinstance(node, gast.BinOp) and isinstance(node.op, gast.MatMult):
        left, right = fact_of(node.left, env, ns, shared), fact_of(node.right, env, ns, shared)
        if left is None or right is None:
            return None
        return Fact(None, _union(left.may, right.may), _union(left.must, right.must),
                    left.floating or right.floating, True)
    if isinstance(node, gast.Call) and not any(isinstance(a, gast.Starred) for a in node.args):
        return _call_fact(node, env, ns, shared)
    return None


def _call_fact(node: gast.Call, env: dict[str, Fact], ns: Namespace, shared: frozenset
               ) -> Fact | None:
    from ..runtime import seed
    if isinstance(node.func, gast.Attribute) and node.func.attr == "copy" and \
            not node.args and not node.keywords:
        return fact_of(node.func.value, env, ns, shared)   # x.copy()
    fun = ns.resolve(node.func)
    if fun is None:
        return None
    args = [fact_of(a, env, ns, shared) for a in node.args]
    if fun is seed:
        return Fact(frozenset(), frozenset(), frozenset(), True, False)
    if fun is np.copy and len(args) == 1 and not node.keywords and args[0] is not None:
        return Fact(args[0].shape, args[0].may, args[0].must, args[0].floating, True)
    helper = shape_helpers().get(fun)
    if helper is not None and len(args) >= 2 and args[1] is not None:
        g, like = args[0], args[1]
        if g is None or like.shape is None:
            return None
        if helper == "unbroadcast":
            if like.may is None or g.must is None:
                return None
            return Fact(like.shape, like.may, g.must & like.must, g.floating, False)
        return Fact(like.shape, g.may, g.must, g.floating, False)
    if isinstance(fun, np.ufunc) and not node.keywords and fun.signature is None and \
            fun.nout == 1 and len(args) == fun.nin and all(a is not None for a in args) and \
            "d" * fun.nin + "->d" in fun.types and "D" * fun.nin + "->D" in fun.types:
        return _elementwise(args, True, numpyish=True)
    if fun in (np.sum, np.mean, np.max, np.min, np.amax, np.amin, np.prod) and \
            len(args) in (1, 2) and args[0] is not None and args[0].shape is not None:
        return _reduction(node, args[0])
    if fun in {getattr(np, n) for n in _CONSTRUCTORS}:
        # a new array of its own shape; float where no dtype is given (`np.zeros(shape)`)
        floating = fun in (np.zeros, np.ones, np.empty, np.eye, np.identity) and \
            len(node.args) == 1 and not node.keywords
        return Fact(None, None, None, floating, True)
    return None


def _reduction(node: gast.Call, x: Fact) -> Fact | None:
    """The fact of ``np.sum(x, axis, keepdims=...)`` and its like, whose axis and keepdims
    are constants (else None)."""
    given = dict(zip(("axis", "keepdims"), node.args[1:], strict=False))
    for k in node.keywords:
        if k.arg not in ("axis", "keepdims") or k.arg in given:
            return None
        given[k.arg] = k.value
    axis, keepdims = _constant(given.get("axis")), _constant(given.get("keepdims"))
    if axis is _UNKNOWN or keepdims is _UNKNOWN or not isinstance(keepdims, (bool, type(None))):
        return None
    if axis is None and not keepdims:
        shape = frozenset()
    else:
        shape = _canonical(frozenset([("reduced", x.shape, axis, bool(keepdims))]))
    return Fact(shape, x.may, x.must, x.floating, True)


_UNKNOWN = object()


def _constant(node: gast.AST | None):
    """The value of a constant int, bool, None or tuple of ints; else _UNKNOWN."""
    if node is None:
        return None
    if isinstance(node, gast.Constant) and (node.value is None or type(node.value) in (int, bool)):
        return node.value
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) and \
            isinstance(node.operand, gast.Constant) and type(node.operand.value) is int:
        return -node.operand.value
    if isinstance(node, gast.Tuple):
        items = tuple(_constant(e) for e in node.elts)
        return items if all(type(i) is int for i in items) else _UNKNOWN
    return _UNKNOWN


def _elementwise(facts: list[Fact], exact: bool, numpyish: bool = False) -> Fact | None:
    """The fact of a broadcasting operation of values with `facts`; None where an operand
    may be a list or tuple (`+` joins them, `*` by an int repeats them)."""
    if any(f.shape is None for f in facts) or not numpyish and \
            not any(f.numpyish or f.floating for f in facts) and any(f.shape for f in facts):
        return None
    shape = _canonical(frozenset().union(*(f.shape for f in facts)))
    exact = exact and all(f.may is not None and f.must is not None for f in facts)
    may = frozenset().union(*(f.may for f in facts)) if exact else None
    must = frozenset().union(*(f.must for f in facts)) if exact else None
    return Fact(shape, may, must, any(f.floating for f in facts),
                numpyish or any(f.numpyish for f in facts))


def _union(a: frozenset | None, b: frozenset | None) -> frozenset | None:
    return None if a is None or b is None else a | b


def _canonical(parts: frozenset) -> frozenset:
    """`parts` without the keepdims reductions of a subset of the others (bc(R(T), T) = T),
    and without the reductions to a number."""
    changed = True
    while changed:
        changed = False
        for p in parts:
            if p[0] == "reduced" and p[3] and p[1] <= parts - {p}:
                parts, changed = parts - {p}, True
                break
    return parts


def mentions(fact: Fact, name: str) -> bool:
    """Whether `fact` refers to what `name` holds."""
    return name in (fact.may or ()) or name in (fact.must or ()) or \
        fact.shape is not None and _mentions(fact.shape, name)


def _mentions(parts: frozenset, name: str) -> bool:
    return any(p == ("atom", name) or p[0] == "reduced" and _mentions(p[1], name)
               for p in parts)


class _Walk:
    """Forward over the statements, the facts in force (`env`: name -> Fact)."""

    def __init__(self, ns: Namespace, shared: frozenset, arrays: set[str], out: dict):
        self.ns, self.shared, self.arrays, self.out = ns, shared, arrays, out

    def block(self, stmts: list[gast.stmt], env: dict[str, Fact]) -> None:
        for stmt in stmts:
            self.stmt(stmt, env)

    def stmt(self, stmt: gast.stmt, env: dict[str, Fact]) -> None:
        for node in gast.walk(stmt):
            if isinstance(node, gast.Call) and self.ns.resolve(node.func) in shape_helpers() \
                    and not isinstance(stmt, (gast.If, gast.For, gast.While)):
                self.out[id(node)] = dict(env)
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            _forget(env, _assigned([stmt]))
            for part in (stmt.body, stmt.orelse):
                self.block(part, dict(env))
            _forget(env, _assigned([stmt]))
            return
        fact = None
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], gast.Name):
            fact = fact_of(stmt.value, env, self.ns, self.shared)
        changed = set() if _item_write(stmt, self.arrays, self.ns) else \
            _assigned([stmt]) | _changed_in_place(stmt, self.ns)
        _forget(env, changed)
        if fact is not None:
            name = stmt.targets[0].id
            if name not in self.shared and not mentions(fact, name):
                own = default(name)
                env[name] = Fact(own.shape if fact.shape is None else fact.shape,
                                 own.may if fact.may is None else fact.may,
                                 own.must if fact.must is None else fact.must,
                                 fact.floating, fact.numpyish)


def _forget(env: dict[str, Fact], names: set[str]) -> None:
    for n in list(env):
        if n in names or any(mentions(env[n], m) for m in names):
            del env[n]


def _assigned(stmts: list[gast.stmt]) -> set[str]:
    return {n.id for s in stmts for n in gast.walk(s)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)} | {
        n.target.id for s in stmts for n in gast.walk(s)
        if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name)}


def _changed_in_place(stmt: gast.stmt, ns: Namespace) -> set[str]:
    """Names whose value `stmt` may change without assigning them: receivers of method
    calls, what is stored into, and the arguments of calls with effects (the first of
    srcgrad's runtime helpers)."""
    from ..passes.optimize import pure_call
    names: set[str] = set()
    for node in gast.walk(stmt):
        if isinstance(node, gast.Call):
            if isinstance(node.func, gast.Attribute) and node.func.attr not in _PURE_METHODS:
                names |= _base_names(node.func.value)
            if not pure_call(node, ns):
                # srcgrad's helpers write into their first argument only (a tape, an adjoint)
                written = node.args[:1] if _runtime(ns.resolve(node.func)) else \
                    list(node.args) + [k.value for k in node.keywords]
                for a in written:
                    names |= _base_names(a)
        elif isinstance(node, (gast.Subscript, gast.Attribute)) and \
                isinstance(node.ctx, gast.Store):
            names |= _base_names(node.value)
    return names


def _runtime(fun) -> bool:
    return (getattr(fun, "__module__", None) or "").startswith("srcgrad.runtime")


def _base_names(node: gast.AST) -> set[str]:
    while isinstance(node, (gast.Subscript, gast.Attribute, gast.Starred)):
        node = node.value
    return {node.id} if isinstance(node, gast.Name) else set()


# NumPy calls that make a new array of the shape and dtype they are given
_CONSTRUCTORS = ("zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like",
                 "full_like", "eye", "identity")


def _made_arrays(fn: gast.FunctionDef, ns: Namespace) -> set[str]:
    """Names every binding of which in `fn` assigns a NumPy array constructor's result
    (`ls = np.zeros((k, d, d))`): arrays, whatever is stored into them."""
    constructors = {getattr(np, n) for n in _CONSTRUCTORS}
    made: dict[str, bool] = {}
    by_constructor: set[int] = set()   # the target Name nodes of such assignments
    for node in gast.walk(fn):
        if isinstance(node, gast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], gast.Name) and isinstance(node.value, gast.Call) \
                and ns.resolve(node.value.func) in constructors:
            by_constructor.add(id(node.targets[0]))
    for node in gast.walk(fn):
        if isinstance(node, gast.Name) and not isinstance(node.ctx, gast.Load):
            made[node.id] = made.get(node.id, True) and id(node) in by_constructor
    return {name for name, only in made.items() if only}


def _item_write(stmt: gast.stmt, arrays: set[str], ns: Namespace) -> bool:
    """Whether `stmt` only writes items of `arrays` (`ls[:, j] += v`), arrays NumPy
    made, whose shape and dtype stay: it changes no fact."""
    if not isinstance(stmt, (gast.Assign, gast.AugAssign)) or _changed_in_place(stmt.value, ns):
        return False
    targets = stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target]
    return all(isinstance(t, gast.Subscript) and isinstance(t.value, gast.Name) and
               t.value.id in arrays and not _changed_in_place(t.slice, ns) for t in targets)


def _shared(fn: gast.FunctionDef, ns: Namespace) -> frozenset:
    """Names whose value may change in place (a list appended to, an array stored
    into...), and those that may share a value with one of them (`a = b`, a display
    holding it; `a = b[i]` where b is a list): no fact mentions them, since none is told
    when they change. (An array's shape never changes in place; a list's does: item
    writes into an array a NumPy constructor made, `ls[:, j] = v`, change no fact.)"""
    changed: set[str] = set()
    lists: set[str] = set()
    links: list[tuple[set[str], set[str], bool]] = []   # targets, sources, by subscript
    arrays = _made_arrays(fn, ns)
    for stmt in gast.walk(fn):
        if not isinstance(stmt, gast.stmt) or \
                isinstance(stmt, (gast.If, gast.For, gast.While, gast.FunctionDef)):
            continue
        if _item_write(stmt, arrays, ns):
            continue
        changed |= _changed_in_place(stmt, ns)
        lists |= {n for node in gast.walk(stmt) if isinstance(node, gast.Call) and
                  isinstance(node.func, gast.Attribute) and node.func.attr not in _PURE_METHODS
                  for n in _base_names(node.func.value)}
        if isinstance(stmt, gast.Assign):
            value, targets = stmt.value, _assigned([stmt])
            if isinstance(value, (gast.List, gast.Tuple, gast.ListComp, gast.Dict)) or \
                    isinstance(value, gast.Call) and ns.resolve(value.func) in (list, dict):
                lists |= targets
            if isinstance(value, (gast.List, gast.Tuple)):
                links.append((targets, {n.id for n in gast.walk(value)
                                        if isinstance(n, gast.Name)}, False))
            elif isinstance(value, gast.Name):
                links.append((targets, {value.id}, False))
            elif isinstance(value, (gast.Subscript, gast.Attribute)):
                links.append((targets, _base_names(value), True))
    changed |= lists
    while True:
        grown = set(changed)
        for targets, sources, by_subscript in links:
            if by_subscript and not sources & lists:
                continue
            if targets & grown or sources & grown:
                grown |= targets | sources
        if grown == changed:
            return frozenset(changed)
        changed = grown
