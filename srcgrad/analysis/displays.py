"""displays: the lists and tuples whose items srcgrad knows when it compiles.

Reads a function's tree (the user's, before or during normalization) and answers with
plain values; changes no tree:

* `fixed_displays`: the names a body binds once to a list or tuple display, a join of
  such (`M = L + [c]`) or a repetition of one by an int literal (`[a, b] * 2`), and never
  changes: name -> the display a read of it stands for (`[L[0], 2.0, L[2]]`);
* `shown`: the display an expression stands for: a display, such a name, and `+` and
  `* k` of those (Python joins and repeats them, whatever they hold);
* `known_items`: the items of an iterable whose length is known when srcgrad compiles
  (those, a global tuple of constants, `range` of int literals, `enumerate` and `zip` of
  such).

Exists so that the passes that write such a sequence as its items (`normalize`: a join
is the display of both item lists, `starred`, `max(L)`, `sorted(L)`; `comprehensions`: a
comprehension over one is the display of its elements; `pytrees`: a dict comprehension's
keys) ask one place what those items are.
"""

from __future__ import annotations

import builtins
import copy
from collections.abc import Callable
from typing import Any

import gast

from .. import builder as b

MAX_ITEMS = 256   # the most items a display written for a repetition or a comprehension has


def fixed_displays(body: list[gast.stmt], params: list[str]
                   ) -> dict[str, gast.List | gast.Tuple]:
    """The names `body` binds once, to an expression `shown` knows the display of
    (`L = [a, b]`, `M = L + [c]`), and never changes (no augmented assignment,
    subscript write, method call, loop or comprehension target; not a parameter): name
    -> the display a read of it stands for, its constant items as such and each other
    item `name[k]`. Wherever such a name is read, it is that display.

    >>> import astor
    >>> body = gast.parse("L = [a, 2.0]\\nM = L + [c] * 2\\nL2 = [b]\\nL2.append(c)").body
    >>> {n: astor.to_source(gast.gast_to_ast(d)).strip()
    ...  for n, d in fixed_displays(body, []).items()}
    {'L': '[L[0], 2.0]', 'M': '[M[0], 2.0, M[2], M[3]]'}
    """
    stores: dict[str, int] = {}
    values: dict[str, gast.AST] = {}
    changed = set(params)
    for node in (n for s in body for n in gast.walk(s)):
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
            stores[node.id] = stores.get(node.id, 0) + 1
        if isinstance(node, gast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], gast.Name):
            values[node.targets[0].id] = node.value
        base = node.value if isinstance(node, (gast.Subscript, gast.Attribute)) else None
        if isinstance(base, gast.Name) and (isinstance(node, gast.Attribute) or
                                            not isinstance(node.ctx, gast.Load)):
            changed.add(base.id)   # L[0] = v, L.append(v), L.sort() (and reads of L.attr)
    fixed = {n: v for n, v in values.items() if stores[n] == 1 and n not in changed}
    out: dict[str, gast.List | gast.Tuple] = {}
    while found := {n: whole for n, v in fixed.items() if n not in out
                    and (whole := shown(v, out)) is not None}:   # (each round, one link on)
        out.update({n: b.make(type(whole), ctx=gast.Load(), elts=[
            e if isinstance(e, gast.Constant) else b.subscript(b.name(n), b.const(k))
            for k, e in enumerate(whole.elts)]) for n, whole in found.items()})
    return out


def shown(node: gast.AST, displays: dict[str, gast.List | gast.Tuple]
          ) -> gast.List | gast.Tuple | None:
    """The display `node` stands for (new nodes, its items copies): a list or tuple
    display without `*`, a name `displays` (`fixed_displays`) maps to one, `a + b` of two
    of those of one kind, and `a * k` or `k * a` of one and an int literal whose items
    are constants, names or constant indices of names (Python repeats the items
    themselves, not their expressions), at most `MAX_ITEMS` of them; else None.

    >>> import astor
    >>> node = gast.parse("(a, b[0]) + 2 * (c,)").body[0].value
    >>> print(astor.to_source(gast.gast_to_ast(shown(node, {}))).strip())
    (a, b[0], c, c)
    """
    if isinstance(node, (gast.List, gast.Tuple)):
        if any(isinstance(e, gast.Starred) for e in node.elts):
            return None
        return b.make(type(node), elts=copy.deepcopy(node.elts), ctx=gast.Load())
    if isinstance(node, gast.Name) and node.id in displays:
        return copy.deepcopy(displays[node.id])
    if not isinstance(node, gast.BinOp):
        return None
    if isinstance(node.op, gast.Add):
        left, right = shown(node.left, displays), shown(node.right, displays)
        if left is None or right is None or type(left) is not type(right):
            return None   # (a list joined to a tuple: Python raises)
        return b.make(type(left), elts=left.elts + right.elts, ctx=gast.Load())
    if isinstance(node.op, gast.Mult):
        for seq, times in ((node.left, node.right), (node.right, node.left)):
            if isinstance(times, gast.Constant) and type(times.value) is int and \
                    (whole := shown(seq, displays)) is not None and \
                    all(cheap(e) for e in whole.elts) and \
                    len(whole.elts) * times.value <= MAX_ITEMS:
                return b.make(type(whole), ctx=gast.Load(), elts=[
                    copy.deepcopy(e) for _ in range(max(times.value, 0)) for e in whole.elts])
    return None


def known_items(node: gast.AST, resolve: Callable[[gast.AST], Any],
                displays: dict[str, gast.List | gast.Tuple]) -> list[gast.expr] | None:
    """The items of an iterable whose length is known when srcgrad compiles (new nodes):
    what `shown` knows the display of, a global tuple of constants, `range` of int
    literals (or `+`, `-`, `*` of them), `enumerate` (with an int literal start) and `zip`
    of such (`strict=True`: of equal lengths); else None. `resolve(node)`: the object a
    global name or a called function is.

    >>> import astor
    >>> node = gast.parse("enumerate([a] + [b], 1)").body[0].value
    >>> [astor.to_source(gast.gast_to_ast(i)).strip()
    ...  for i in known_items(node, lambda f: enumerate, {})]
    ['(1, a)', '(2, b)']
    """
    if (whole := shown(node, displays)) is not None:
        return whole.elts
    if isinstance(node, gast.Name):
        keys = constants(node, resolve)
        return None if keys is None else [b.const(k) for k in keys]
    if not isinstance(node, gast.Call) or any(isinstance(a, gast.Starred) for a in node.args):
        return None
    func = resolve(node.func)
    keywords = {k.arg: k.value for k in node.keywords}
    if func is builtins.range and not keywords:
        bounds = [int_value(a) for a in node.args]
        if not 1 <= len(bounds) <= 3 or None in bounds or len(bounds) == 3 and bounds[2] == 0:
            return None
        return [b.const(k) for k in range(*bounds)]
    if func is builtins.enumerate and len(node.args) in (1, 2) and \
            set(keywords) <= {"start"} and len(node.args) + len(keywords) <= 2:
        start = node.args[1] if len(node.args) == 2 else keywords.get("start", b.const(0))
        first, seq = int_value(start), known_items(node.args[0], resolve, displays)
        if first is None or seq is None:
            return None
        return [b.tuple_([b.const(first + k), e]) for k, e in enumerate(seq)]
    if func is builtins.zip and node.args and set(keywords) <= {"strict"}:
        seqs = [known_items(a, resolve, displays) for a in node.args]
        strict = keywords.get("strict")
        if None in seqs or strict is not None and not isinstance(strict, gast.Constant) or \
                strict is not None and strict.value and len({len(q) for q in seqs}) > 1:
            return None
        return [b.tuple_(list(t)) for t in zip(*seqs, strict=False)]   # (the shorter decides)
    return None


def constants(node: gast.AST, resolve: Callable[[gast.AST], Any]) -> list[Any] | None:
    """The values of a display of constants, or of a global tuple of strings and ints."""
    if isinstance(node, (gast.Tuple, gast.List)):
        keys = [constant(i) for i in node.elts]
        return None if None in keys else [k[0] for k in keys]
    value = resolve(node) if isinstance(node, gast.Name) else None
    if isinstance(value, tuple) and all(isinstance(k, (str, int)) for k in value):
        return list(value)
    return None


def constant(node: gast.AST) -> tuple[Any] | None:
    """(value,) of a literal key or index (`-1` too), else None."""
    if isinstance(node, gast.Constant):
        return (node.value,)
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) and \
            isinstance(node.operand, gast.Constant) and type(node.operand.value) is int:
        return (-node.operand.value,)
    return None


def int_value(node: gast.AST) -> int | None:
    """The value of an int literal, or of `+`, `-`, `*` of them, else None."""
    if isinstance(node, gast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        v = int_value(node.operand)
        return None if v is None else -v
    if isinstance(node, gast.BinOp) and isinstance(node.op, (gast.Add, gast.Sub, gast.Mult)):
        left, right = int_value(node.left), int_value(node.right)
        if left is None or right is None:
            return None
        return {gast.Add: left + right, gast.Sub: left - right,
                gast.Mult: left * right}[type(node.op)]
    return None


def cheap(node: gast.AST) -> bool:
    """Whether reading `node` twice costs nothing: a constant, a name or a constant
    index of a name."""
    return isinstance(node, (gast.Constant, gast.Name)) or \
        isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) and \
        isinstance(node.slice, gast.Constant)
