"""values: what the names of a normalized function hold, as far as the adjoint cares.

Requires the statements of a normalized function (and, where asked, the operation each
assignment denotes, `passes.base.Operation`). Returns plain sets and dicts keyed by name:
the names that only ever hold an int (`ints`: an index made of them cannot repeat an
entry); those that start as an int and take floats in a loop (`numbers_first`), and with
them those whose shape may change from one iteration to the next (`reshaped`: their
adjoint is made at each iteration's shape); the names holding a tuple a user function or
a rule returned, with its length (`returned_tuples`); and the reductions over every axis
whose cotangent may stay a scalar (`uniform`, `full_reduction`, `made_once`).

Exists so `reverse` and `record` ask these facts, never work them out inline.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gast

from ..passes.base import Operation, all_statements, changed, is_write, returned, target_of
from ..rules import Rule, fact, lookup
from ..runtime import snapshot, unaliased


def ints(statements: list[gast.stmt], params: list[str],
         resolve: Callable[[gast.AST], Any]) -> set[str]:
    r"""Names that only ever hold an int: loop indices and int arithmetic on them,
    constants, `len(...)` and entries of a `.shape`. `resolve(func)` is the object a
    called name denotes.

    >>> from srcgrad.passes.base import all_statements
    >>> fn = gast.parse("def f(x, n):\n    k = n * 2\n    for i in range(k):\n"
    ...                 "        j = i + 1\n    y = x * 2.0\n").body[0]
    >>> sorted(ints(list(all_statements(fn.body)), ["x", "n"], lambda func: None))
    ['i', 'j']
    """
    defs: dict[str, list[gast.AST]] = {}
    for s in statements:
        if isinstance(s, gast.For):
            defs.setdefault(s.target.id, []).append(None)
        elif target_of(s):
            defs.setdefault(target_of(s), []).append(s.value)
        elif isinstance(s, gast.Assign):  # a tuple target: unknown
            for n in gast.walk(s.targets[0]):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                    defs.setdefault(n.id, []).append(s.targets[0])
    shapes = {n for n, vs in defs.items() if all(
        isinstance(v, gast.Attribute) and v.attr == "shape" for v in vs)}
    out = set(defs) - set(params)   # the largest set consistent with the defs

    def integral(v) -> bool:
        if v is None or isinstance(v, gast.Constant) and type(v.value) is int:
            return True
        if isinstance(v, gast.Name):
            return v.id in out
        if isinstance(v, gast.BinOp):
            return not isinstance(v.op, (gast.Div, gast.MatMult, gast.Pow)) and \
                integral(v.left) and integral(v.right)
        if isinstance(v, gast.UnaryOp):
            return integral(v.operand)
        if isinstance(v, gast.Subscript):
            return isinstance(v.value, gast.Name) and v.value.id in shapes
        if isinstance(v, gast.Call):
            return resolve(v.func) in (len, int)
        return False
    dropped = True
    while dropped:
        dropped = False
        for name in list(out):
            if not all(map(integral, defs[name])):
                out.discard(name)
                dropped = True
    return out


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
    computed from them there. `called(value)` is the function a call calls."""
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
