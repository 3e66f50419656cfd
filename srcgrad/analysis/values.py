"""values: what the names of a normalized function hold, as far as the adjoint cares.

Requires the statements of a normalized function (and, where asked, the operation each
assignment denotes, `passes.base.Operation`). Returns plain sets and dicts keyed by name:
the names that only ever hold an int (`ints`: no derivative flows into them, and an
index made of them cannot repeat an entry); those that start as an int and take floats
in a loop (`numbers_first`), and with them those whose shape may change from one
iteration to the next (`reshaped`: their adjoint is made at each iteration's shape); the
names holding a tuple a user function or a rule returned, with its length
(`returned_tuples`); and the reductions over every axis whose cotangent may stay a scalar
(`uniform`, `full_reduction`, `made_once`).

Exists so `reverse` and `record` ask these facts, never work them out inline.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gast

from .. import builder as b
from ..errors import SrcgradError
from ..frontend.parse import is_user_function, nested_entry, parse
from ..passes.base import (
    Operation,
    all_statements,
    changed,
    int_constant,
    is_write,
    returned,
    target_of,
)
from ..rules import Rule, fact, lookup
from ..runtime import filled, snapshot, unaliased
from .tape import mutated


def ints(statements: list[gast.stmt], params: list[str],
         resolve: Callable[[gast.AST], Any]) -> set[str]:
    r"""Names that only ever hold an int: loop indices and int arithmetic on them,
    constants, `len(...)`, entries of a `.shape`, and the items of the tuple a user
    function returns that are ints when the arguments it is passed are (`s, k = step(s,
    k, x)`, step returning `(k + 1) % 3` for k, as a checkpoint segment returns a counter).
    `resolve(func)` is the object a called name denotes.

    >>> from srcgrad.passes.base import all_statements
    >>> fn = gast.parse("def f(x, n):\n    k = n * 2\n    for i in range(k):\n"
    ...                 "        j = i + 1\n    y = x * 2.0\n").body[0]
    >>> sorted(ints(list(all_statements(fn.body)), ["x", "n"], lambda func: None))
    ['i', 'j']
    """
    defs: dict[str, list[gast.AST | None]] = {}
    for s in statements:
        if isinstance(s, gast.For):
            defs.setdefault(s.target.id, []).append(None)
        elif target_of(s):
            defs.setdefault(target_of(s), []).append(s.value)
        elif isinstance(s, gast.Assign):  # a tuple target: unknown
            for n in gast.walk(s.targets[0]):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                    defs.setdefault(n.id, []).append(s.targets[0])
    return _Ints(defs, set(defs) - set(params), resolve, {}).out


class _Ints:
    """The largest subset `out` of `candidates` whose every definition (`None`: a loop
    index or an int argument) is int-valued given the others; `items` memoizes
    `_int_items` (None: a tuple's item is never known to be an int)."""

    def __init__(self, defs: dict[str, list[gast.AST | None]], candidates: set[str],
                 resolve: Callable[[gast.AST], Any], items: dict | None):
        self.defs, self.resolve, self.items = defs, resolve, items
        self.shapes = {n for n, vs in defs.items() if all(
            isinstance(v, gast.Attribute) and v.attr == "shape" for v in vs)}
        self.out = set(candidates)
        dropped = True
        while dropped:
            dropped = False
            for name in list(self.out):
                if not all(map(self.integral, defs[name])):
                    self.out.discard(name)
                    dropped = True

    def integral(self, v: gast.AST | None) -> bool:
        if v is None or isinstance(v, gast.Constant) and type(v.value) is int:
            return True
        if isinstance(v, gast.Name):
            return v.id in self.out
        if isinstance(v, gast.BinOp):
            return not isinstance(v.op, (gast.Div, gast.MatMult, gast.Pow)) and \
                self.integral(v.left) and self.integral(v.right)
        if isinstance(v, gast.UnaryOp):
            return self.integral(v.operand)
        if isinstance(v, gast.Subscript):
            return isinstance(v.value, gast.Name) and (
                v.value.id in self.shapes or self.items is not None and self.item(v))
        if isinstance(v, gast.Call):
            return self.resolve(v.func) in (len, int)
        return False

    def item(self, v: gast.Subscript) -> bool:
        """`t[j]`, t bound once to what a user function returns given these arguments."""
        made, j = self.defs.get(v.value.id, []), int_constant(v.slice)
        if len(made) != 1 or j is None or not isinstance(made[0], gast.Call) or \
                made[0].keywords or not is_user_function(fun := self.resolve(made[0].func)):
            return False
        given = frozenset(k for k, a in enumerate(made[0].args) if self.integral(a))
        if (fun, given) not in self.items:
            self.items[(fun, given)] = _int_items(fun, given)
        return j in self.items[(fun, given)]


# what binds names other than by assignment, `+=` and `for`: a function using one is
# not read for ints
_OPAQUE = tuple(getattr(gast, n) for n in (
    "FunctionDef", "Lambda", "ClassDef", "Global", "Nonlocal", "Import", "ImportFrom", "Try",
    "TryStar", "Match") if hasattr(gast, n))


def _int_items(fun: Any, given: frozenset[int]) -> frozenset[int]:
    """The positions of the items of the tuple every `return` of user function `fun`
    gives that are ints when its arguments at positions `given` are; its source as
    written (a loop over `range` gives ints; `+=` is arithmetic; any other binding, a
    tuple's item or a nested function's makes no int)."""
    try:
        parsed = parse(nested_entry(fun) or fun)
    except SrcgradError:
        return frozenset()
    tree, args = parsed.tree, parsed.tree.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or any(
            isinstance(n, _OPAQUE) for n in gast.walk(tree) if n is not tree):
        return frozenset()
    local_names = frozenset(n.id for n in gast.walk(tree) if isinstance(n, gast.Name)
                            and not isinstance(n.ctx, gast.Load))

    def resolve(func: gast.AST) -> Any:
        return parsed.env.resolve(func, local_names)
    params = [a.id for a in args.args]
    defs: dict[str, list[gast.AST | None]] = {params[k]: [None] for k in given
                                              if k < len(params)}
    seen = set()   # the Name nodes of the bindings read here
    for node in gast.walk(tree):
        if isinstance(node, gast.Assign):
            for t in node.targets:
                if isinstance(t, gast.Name):
                    defs.setdefault(t.id, []).append(node.value)
                    seen.add(id(t))
        elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
            defs.setdefault(node.target.id, []).append(
                b.binop(b.name(node.target.id), node.op, node.value))
            seen.add(id(node.target))
        elif isinstance(node, gast.For) and isinstance(node.target, gast.Name) and \
                isinstance(node.iter, gast.Call) and resolve(node.iter.func) is range:
            defs.setdefault(node.target.id, []).append(None)
            seen.add(id(node.target))
    for node in gast.walk(tree):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store) and \
                id(node) not in seen:
            defs.setdefault(node.id, []).append(node)   # unknown: not an int
    known = _Ints(defs, set(defs) - {p for k, p in enumerate(params) if k not in given},
                  resolve, None)
    results = [n.value for n in gast.walk(tree) if isinstance(n, gast.Return)]
    if not results or not all(isinstance(r, gast.Tuple) for r in results) or \
            len({len(r.elts) for r in results}) != 1:
        return frozenset()
    return frozenset(j for j in range(len(results[0].elts))
                     if all(known.integral(r.elts[j]) for r in results))


def numbers_first(statements: list[gast.stmt], int_starts: set[int]) -> set[str]:
    """Names that start as an int, hold floats, and are assigned in a loop (`acc = 0`,
    then `acc = acc + x[:, None] * x`); `int_starts` are the ids of the int assignments
    (`passes.base.int_starts`)."""
    numbers = {target_of(s) for s in statements if id(s) in int_starts}
    return {target_of(s) for loop in statements
            if isinstance(loop, (gast.For, gast.While))
            for s in all_statements(loop.body) if target_of(s) in numbers}


def reshaped(statements: list[gast.stmt], numbers: set[str],
             called: Callable[[gast.AST], Any]) -> set[str]:
    """`numbers` (`numbers_first`), whose shape may differ from one iteration to the next,
    so reading them for their shape needs that iteration's value. (One
    started as a float is taken to be a number throughout: taping every float
    accumulator costs scalar loops a quarter of their time.) So do the entries a mask
    selects in a loop, the parts taken of an array the loop rebinds, and what is
    computed from them there, and the lists loops fill (`passes/lists.py`). `called(value)`
    is the function a call calls."""
    looped = [s for loop in statements if isinstance(loop, (gast.For, gast.While))
              for s in all_statements(loop.body) if target_of(s)]
    # and what a boolean mask or np.nonzero selects in a loop, and what is computed
    # from it there: its length is the data's (x[x > 0] may be empty one time)
    masks = {target_of(s) for s in looped if isinstance(s.value, gast.Compare)
             or fact(called(s.value), "selects")}
    rebound = {target_of(s) for s in looped}
    # ... and the parts of an array the loop rebinds (x = x[1:] * x[:-1] shrinks it)
    varying = {target_of(s) for s in looped if isinstance(s.value, gast.Subscript)
               and ({n.id for n in gast.walk(s.value.slice)
                     if isinstance(n, gast.Name)} & masks
                    or isinstance(s.value.value, gast.Name)
                    and s.value.value.id in rebound)}
    # ... and a list a loop filled (passes/lists.py): its length is its loop's
    varying |= {target_of(s) for s in looped if called(s.value) is filled}
    # ... and what takes its shape from a value the loop changes: a slice whose bounds
    # it changes (x[:j]), a call that is not entry by entry (np.ones(j),
    # np.concatenate((c, v))), anything read from a list a method changes in place
    # (list(L) after L.append), and a name a loop binds to a slice or such a call that is
    # bound elsewhere too (c = x[:1] before the loop, c = x[:3] in it)
    changing = {target_of(s) for s in looped if any(     # (not a constant, `_t1 = 2, 3`)
        isinstance(n, gast.Name) for n in gast.walk(s.value))} | {
        loop.target.id for loop in statements if isinstance(loop, gast.For)}
    changed_in_place = {mutated(s) for s in statements if mutated(s)}
    sites: dict[str, int] = {}
    for s in statements:
        if target_of(s):
            sites[target_of(s)] = sites.get(target_of(s), 0) + 1

    def shaping(value: gast.AST) -> bool:
        """Whether `value`'s shape may come from something other than its operands'."""
        if isinstance(value, gast.Subscript):
            return any(isinstance(n, gast.Slice) for n in gast.walk(value.slice))
        if isinstance(value, gast.Call):
            r = lookup(called(value))
            return not (r is not None and r.elementwise or fact(called(value), "reduction"))
        return False

    for s in looped:
        names = {n.id for n in gast.walk(s.value) if isinstance(n, gast.Name)}
        if names & changed_in_place or shaping(s.value) and (
                names & changing or sites[target_of(s)] > 1):
            varying.add(target_of(s))
    # ... and a name a loop binds at two places (`t = x[0]` in one branch, `t = x` in the
    # other): each iteration's may be either
    in_loops = [target_of(t) for t in {id(t): t for t in looped}.values()]
    varying |= {n for n in in_loops if in_loops.count(n) > 1}
    while True:
        more = {target_of(s) for s in looped if target_of(s) not in varying
                and any(isinstance(n, gast.Name) and n.id in varying
                        for n in gast.walk(s.value))}
        if not more:
            return numbers | varying
        varying |= more


def returned_tuples(statements: list[gast.stmt], ops: dict[int, Operation]) -> dict[str, int]:
    """Names holding the tuple a user function (or a rule with the `results` fact)
    returned, with its length: its result, and that result as a check of it passes it
    on (`unaliased(t, x, ...)`)."""
    out: dict[str, int] = {}
    for s in statements:
        op, target = ops.get(id(s)), target_of(s)
        if not target or op is None:
            continue
        if op.kind == "call" and (n := _tuple_arity(op.fun)) is not None:
            out[target] = n
        elif op.kind == "rule" and (n := fact(op.fun, "results")) is not None:
            out[target] = n
        elif op.kind == "rule" and op.fun in (unaliased, snapshot) and op.args and \
                isinstance(op.args[0], gast.Name) and op.args[0].id in out:
            out[target] = out[op.args[0].id]
    return out


def _tuple_arity(fun: Any) -> int | None:
    """n when every `return` of the user function `fun` gives a tuple of n values."""
    sizes = {len(r.elts) if isinstance(r, gast.Tuple) else None for r in returned(fun) or [None]}
    return sizes.pop() if len(sizes) == 1 else None


def full_reduction(op: Operation | None) -> Rule | None:
    """The uniform rule of `op` if it reduces one operand over every axis
    (`np.mean(x)`, no axis): its value is a scalar whatever x's shape."""
    if op is None or op.kind != "rule" or len(op.args) != 1 or op.kwargs:
        return None
    return fact(op.fun, "uniform")


def made_once(fn: gast.FunctionDef, statements: list[gast.stmt],
              var: str) -> gast.stmt | None:
    """The one statement that sets `var`, if it is at the top level of the function."""
    made = [s for s in statements if (target_of(s) or is_write(s)) and changed(s) == var]
    return made[0] if len(made) == 1 and any(made[0] is s for s in fn.body) else None


def uniform(fn: gast.FunctionDef, statements: list[gast.stmt], ops: dict[int, Operation],
            stmt: gast.Assign, fixed: set[str]) -> tuple[Rule, gast.AST] | None:
    """The uniform rule of a reduction over every axis, `y = np.mean(x)`, where x is
    made by a built-in elementwise rule from one variable v and constants (`r ** 2`)
    and read nowhere else (both at the top level, x not in `fixed`: a wrt): x's
    cotangent stays a scalar there, which x's rule broadcasts. With the rule comes v,
    which has x's shape and stands in for x (a uniform rule reads x for its shape
    only): x itself is then needed by nothing but the value."""
    op = ops[id(stmt)]
    u = full_reduction(op)
    x = op.args[0] if u is not None else None
    if not isinstance(x, gast.Name) or op.rule is not lookup(op.fun) \
            or x.id in fixed or not any(stmt is s for s in fn.body):
        return None
    made = made_once(fn, statements, x.id)
    reads = [n for n in gast.walk(fn) if isinstance(n, gast.Name)
             and n.id == x.id and not isinstance(n.ctx, gast.Store)]
    producer = ops.get(id(made)) if made is not None else None
    if producer is None or len(reads) != 1 or producer.kind != "rule" \
            or producer.rule is None or not producer.rule.elementwise \
            or producer.rule is not lookup(producer.fun) or producer.kwargs:
        return None
    operands = [(i, a) for i, a in enumerate(producer.args)
                if not isinstance(a, gast.Constant)]
    if len(operands) != 1 or not _shaped_by_operand(producer.rule, operands[0][0]):
        return None
    return u, operands[0][1]


def _shaped_by_operand(rule: Rule, position: int) -> bool:
    """Whether the rule's cotangent for the argument at `position` reads that argument or
    the result (`dy * 2 * r`), so a scalar dy comes out with the argument's shape; `-dy`
    (np.negative) or `dy * c` stays a scalar (fuzzer seed 200014)."""
    template = rule.template[position] if isinstance(rule.template, list) else rule.template
    if template is None or position >= len(rule.params):
        return False
    if isinstance(template, gast.Call) and template.args:   # unbroadcast(J dy, x): J dy
        template = template.args[0]
    names = {n.id for n in gast.walk(template) if isinstance(n, gast.Name)}
    return bool(names & {rule.params[position], "y"})
