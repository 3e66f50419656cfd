"""unroll: specialise a function on its static arguments and unroll counted loops.

Requires the user's function tree as `reject_unsupported` accepted it (nested expressions,
augmented assignment, `if/elif/else`, `for`/`while`, `break`/`continue`, `return`
anywhere). Runs before `normalize`. Guarantees a new FunctionDef, the input untouched, in
which

* every load of a static parameter (a name in `constants`) is a literal; a function that
  assigns to a static parameter is refused (`UnsupportedSyntax`, naming the line). A value
  that cannot be written as a literal (an array) leaves the parameter as it is;
* every expression whose operands are all constants is folded: arithmetic, comparisons,
  `and`/`or`/`not`, `a if c else b`, indexing a constant tuple, and `len`, `min`, `max`,
  `abs`, `int`, `float`, `bool` of constants (when the function does not rebind those
  names). Python's own operators compute the value, so it is the one the code would
  compute. Nothing partly constant is folded (`0 * x` stays: it is NaN for x = inf and an
  array for an array x); a fold that would raise, or give an integer numba cannot hold
  (outside int64), an inf or a NaN, or a string/tuple longer than 1000, is left to run;
* an `if` whose test folds to a constant is replaced by the branch taken, a `while` whose
  test folds to a false constant by its `else` block;
* a `for t in range(...)` with constant arguments is unrolled when `unroll_loops` is set
  or when its arguments name a static parameter (or the index of a loop being unrolled):
  the body is copied once per value of `t`, with `t` a literal, and each copy is folded
  again, so `for j in range(t)` inside it unrolls too and branches on `t` fold away. A
  copy ending in an unconditional `break` (or `continue`) is cut there. A loop is left a
  loop (its bounds folded) when a copy still jumps (`break`/`continue` under a data-
  dependent `if`, or any `return`), when `t` is assigned in the body, when it has an
  `else:` clause, or when unrolling would take the function past
  `MAX_UNROLLED_STATEMENTS` statements: the code is correct either way, only its shape
  differs. When `t` is read outside the loop, `t = <last value>` follows the copies;
* every copied statement keeps the line and column of the user's statement it copies, and
  a folded literal those of the expression it replaces, so adjoint comments and errors
  still name the user's line. A block left empty gets a `pass`. Nothing else changes: with
  no constants and `unroll_loops` false the result equals the input.

Exists because the adjoint of an unrolled loop is straight-line code: no tape, no replay of
branches, each iteration's values held in plain local names. And a static argument (a layer
count, a flag) resolves its branches at compile time, so the adjoint does not record
branches that can only go one way.
"""

from __future__ import annotations

import copy
import math
import operator
from collections.abc import Callable
from typing import Any

import gast
import numpy as np

from .. import builder as b
from ..errors import UnsupportedSyntax

# The largest function unrolling may produce, counted in statements (nested ones included).
# A loop whose copies would take the whole function past it stays a loop.
MAX_UNROLLED_STATEMENTS = 5000

_MAX_SEQUENCE = 1000  # a folded string or tuple no longer than this
_INT64 = (-(2 ** 63), 2 ** 63 - 1)
_SCALARS = (bool, int, float, complex, str, type(None))
_NOT_CONSTANT = object()

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
    gast.Div: operator.truediv, gast.FloorDiv: operator.floordiv, gast.Mod: operator.mod,
    gast.Pow: operator.pow, gast.LShift: operator.lshift, gast.RShift: operator.rshift,
    gast.BitOr: operator.or_, gast.BitXor: operator.xor, gast.BitAnd: operator.and_,
}
_UNARYOPS: dict[type, Callable[[Any], Any]] = {
    gast.USub: operator.neg, gast.UAdd: operator.pos, gast.Not: operator.not_,
    gast.Invert: operator.invert,
}
_COMPARISONS: dict[type, Callable[[Any, Any], Any]] = {
    gast.Eq: operator.eq, gast.NotEq: operator.ne, gast.Lt: operator.lt,
    gast.LtE: operator.le, gast.Gt: operator.gt, gast.GtE: operator.ge,
    gast.In: lambda a, c: a in c, gast.NotIn: lambda a, c: a not in c,
    gast.Is: operator.is_, gast.IsNot: operator.is_not,
}
_PURE_BUILTINS: dict[str, Callable[..., Any]] = {
    "len": len, "min": min, "max": max, "abs": abs, "int": int, "float": float, "bool": bool,
}
_FOLD_ERRORS = (ArithmeticError, TypeError, ValueError, IndexError)


def unroll(fn: gast.FunctionDef, constants: dict[str, object], unroll_loops: bool,
           filename: str) -> gast.FunctionDef:
    """`fn` specialised on `constants` (static parameter -> value), counted loops unrolled.

    >>> import gast, astor
    >>> fn = gast.parse('''
    ... def f(x, n):
    ...     for i in range(n):
    ...         if i == 0:
    ...             x = x * 2.0
    ...         else:
    ...             x += i / n
    ...     return x''').body[0]
    >>> out = unroll(fn, {"n": 4}, unroll_loops=False, filename="f.py")
    >>> print(astor.to_source(gast.gast_to_ast(out)).strip())
    def f(x, n):
        x = x * 2.0
        x += 0.25
        x += 0.5
        x += 0.75
        return x
    """
    if not constants and not unroll_loops:
        return copy.deepcopy(fn)
    _refuse_static_writes(fn, constants, filename)
    values = {}
    for key, value in constants.items():
        value = _plain(value)
        if _literal(value) is not None:
            values[key] = value
    out = copy.deepcopy(fn)
    unroller = _Unroller(fn, unroll_loops)
    out.body = _nonempty(unroller.block(out.body, values), out)
    return out


def _refuse_static_writes(fn: gast.FunctionDef, constants: dict[str, object],
                          filename: str) -> None:
    for node in gast.walk(fn):
        if not isinstance(getattr(node, "ctx", None), gast.Store):
            continue
        root = node
        while isinstance(root, (gast.Subscript, gast.Attribute)):
            root = root.value
        if isinstance(root, gast.Name) and root.id in constants:
            raise UnsupportedSyntax(f"static parameter '{root.id}' is assigned on line "
                                    f"{node.lineno}", filename=filename, lineno=node.lineno,
                                    col=node.col_offset)


class _Unroller:
    def __init__(self, fn: gast.FunctionDef, unroll_loops: bool):
        self.original = fn  # read, never written: who reads a loop index after its loop
        self.unroll_loops = unroll_loops
        # names the function binds: a local `range` or `len` is not the builtin
        self.local = {a.id for a in fn.args.args} | {
            n.id for n in gast.walk(fn) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Store)}
        self.size = _size(fn.body)  # an upper bound on the size of the result so far
        self.read_outside: dict[str, bool] = {}

    def fold(self, node: gast.AST, consts: dict[str, Any]) -> gast.AST:
        return _Fold(consts, self.local).visit(node)

    # ---- statements ----
    def block(self, stmts: list[gast.stmt], consts: dict[str, Any]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            out.extend(self.statement(stmt, consts))
        return out

    def statement(self, stmt: gast.stmt, consts: dict[str, Any]) -> list[gast.stmt]:
        if isinstance(stmt, gast.If):
            stmt.test = self.fold(stmt.test, consts)
            test = _value(stmt.test)
            if test is not _NOT_CONSTANT:
                return self.block(stmt.body if test else stmt.orelse, consts)
            stmt.body = _nonempty(self.block(stmt.body, consts), stmt)
            stmt.orelse = self.block(stmt.orelse, consts)
            return [stmt]
        if isinstance(stmt, gast.While):
            stmt.test = self.fold(stmt.test, consts)
            test = _value(stmt.test)
            if test is not _NOT_CONSTANT and not test:
                return self.block(stmt.orelse, consts)
            stmt.body = _nonempty(self.block(stmt.body, consts), stmt)
            stmt.orelse = self.block(stmt.orelse, consts)
            return [stmt]
        if isinstance(stmt, gast.For):
            return self.loop(stmt, consts)
        if isinstance(stmt, gast.With):
            for item in stmt.items:
                item.context_expr = self.fold(item.context_expr, consts)
            stmt.body = _nonempty(self.block(stmt.body, consts), stmt)
            return [stmt]
        if isinstance(stmt, gast.AnnAssign):  # the annotation is not an expression to fold
            stmt.target = self.fold(stmt.target, consts)
            if stmt.value is not None:
                stmt.value = self.fold(stmt.value, consts)
            return [stmt]
        return [self.fold(stmt, consts)]

    def loop(self, loop: gast.For, consts: dict[str, Any]) -> list[gast.stmt]:
        names_static = any(isinstance(n, gast.Name) and n.id in consts
                           for n in gast.walk(loop.iter))
        loop.iter = self.fold(loop.iter, consts)
        bounds = self.range_bounds(loop.iter)
        if (bounds is not None and (self.unroll_loops or names_static) and not loop.orelse
                and isinstance(loop.target, gast.Name)
                and loop.target.id not in _stored(loop.body)):
            saved = self.size
            copies = self.copies(loop, consts, bounds)
            if copies is not None:
                return copies
            self.size = saved
        loop.body = _nonempty(self.block(loop.body, consts), loop)
        loop.orelse = self.block(loop.orelse, consts)
        return [loop]

    def range_bounds(self, node: gast.AST) -> range | None:
        """The range `node` builds, if it is `range(...)` of constant integers."""
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
                and node.func.id == "range" and "range" not in self.local
                and not node.keywords and 1 <= len(node.args) <= 3):
            return None
        args = [_value(a) for a in node.args]
        if not all(isinstance(a, int) for a in args):
            return None
        try:
            return range(*args)
        except ValueError:  # a zero step: left for the code to raise
            return None

    def copies(self, loop: gast.For, consts: dict[str, Any],
               values: range) -> list[gast.stmt] | None:
        """The unrolled statements of `loop`, or None when it must stay a loop."""
        limit = MAX_UNROLLED_STATEMENTS
        own = _size([loop])
        outside = self.size - own
        if outside + len(values) > limit:  # every copy counts at least one
            return None
        index = loop.target.id
        out: list[gast.stmt] = []
        cost = 0
        ran = False
        last = None
        for value in values:
            self.size = outside + cost + own  # this copy is at most the loop it comes from
            body = self.block(copy.deepcopy(loop.body), {**consts, index: value})
            jump = next((i for i, s in enumerate(body)
                         if isinstance(s, (gast.Break, gast.Continue))), None)
            head = body if jump is None else body[:jump]
            if _jumps(head):
                return None
            out.extend(head)
            cost += max(1, _size(head))
            ran, last = True, value
            if outside + cost > limit:
                return None
            if jump is not None and isinstance(body[jump], gast.Break):
                break
        if ran and self.read_after(index):
            out.append(b.located(b.assign(index, b.const(last)), loop))
            cost += 1
        self.size = outside + cost
        return out

    def read_after(self, index: str) -> bool:
        """Whether `index` is read anywhere but in the body of a loop that assigns it.

        Such a read may see the value a loop over `index` left behind (reads in a loop's
        body always see that loop's own value)."""
        if index not in self.read_outside:
            self.read_outside[index] = any(_reads(s, index) for s in self.original.body)
        return self.read_outside[index]


# ---- expressions ----
class _Fold(gast.NodeTransformer):
    """Static names to literals, then every fully constant operation to its value."""

    def __init__(self, consts: dict[str, Any], local: set[str]):
        self.consts = consts
        self.local = local

    def visit_Name(self, node: gast.Name) -> gast.AST:
        if isinstance(node.ctx, gast.Load) and node.id in self.consts:
            return b.located(_literal(self.consts[node.id]), node)
        return node

    def visit_BinOp(self, node: gast.BinOp) -> gast.AST:
        self.generic_visit(node)
        op = type(node.op)
        left, right = _value(node.left), _value(node.right)
        if (op not in _BINOPS or left is _NOT_CONSTANT or right is _NOT_CONSTANT
                or _too_large(op, left, right)):
            return node
        return _folded(node, lambda: _BINOPS[op](left, right))

    def visit_UnaryOp(self, node: gast.UnaryOp) -> gast.AST:
        self.generic_visit(node)
        operand = _value(node.operand)
        if operand is _NOT_CONSTANT:
            return node
        return _folded(node, lambda: _UNARYOPS[type(node.op)](operand))

    def visit_Compare(self, node: gast.Compare) -> gast.AST:
        self.generic_visit(node)
        operands = [_value(o) for o in [node.left, *node.comparators]]
        if any(o is _NOT_CONSTANT for o in operands):
            return node
        for op, left, right in zip(node.ops, operands, operands[1:], strict=False):
            # identity is only meaningful for singletons: `3 is 3` depends on the interpreter
            if isinstance(op, (gast.Is, gast.IsNot)) and not (_singleton(left)
                                                               or _singleton(right)):
                return node

        def chain() -> bool:
            return all(_COMPARISONS[type(op)](left, right)
                       for op, left, right in zip(node.ops, operands, operands[1:],
                                                  strict=False))
        return _folded(node, chain)

    def visit_BoolOp(self, node: gast.BoolOp) -> gast.AST:
        """Folded when constants decide it: `False and g(x)` never evaluates `g(x)`."""
        self.generic_visit(node)
        decides = bool if isinstance(node.op, gast.Or) else operator.not_
        result = _NOT_CONSTANT
        for operand in node.values:
            result = _value(operand)
            if result is _NOT_CONSTANT:
                return node
            if decides(result):
                break
        return _folded(node, lambda: result)

    def visit_IfExp(self, node: gast.IfExp) -> gast.AST:
        self.generic_visit(node)
        test = _value(node.test)
        if test is _NOT_CONSTANT:
            return node
        return node.body if test else node.orelse

    def visit_Subscript(self, node: gast.Subscript) -> gast.AST:
        self.generic_visit(node)
        if not isinstance(node.ctx, gast.Load):
            return node
        seq = _value(node.value)
        if isinstance(node.slice, gast.Slice):
            parts = [None if p is None else _value(p)
                     for p in (node.slice.lower, node.slice.upper, node.slice.step)]
            index: Any = _NOT_CONSTANT if _NOT_CONSTANT in parts else slice(*parts)
        else:
            index = _value(node.slice)
        if not isinstance(seq, (tuple, str)) or index is _NOT_CONSTANT:
            return node
        return _folded(node, lambda: seq[index])

    def visit_Call(self, node: gast.Call) -> gast.AST:
        self.generic_visit(node)
        func = node.func
        if not (isinstance(func, gast.Name) and func.id in _PURE_BUILTINS
                and func.id not in self.local and not node.keywords):
            return node
        args = [_value(a) for a in node.args]
        if _NOT_CONSTANT in args:
            return node
        return _folded(node, lambda: _PURE_BUILTINS[func.id](*args))


def _folded(node: gast.AST, compute: Callable[[], Any]) -> gast.AST:
    """The literal `compute()` gives, located at `node`; `node` if it cannot be one."""
    try:
        value = compute()
    except _FOLD_ERRORS:
        return node
    if not _acceptable(value):
        return node
    return b.located(_literal(value), node)


def _value(node: gast.AST) -> Any:
    """The value of a literal (a constant, or a tuple of them), else `_NOT_CONSTANT`."""
    if isinstance(node, gast.Constant) and isinstance(node.value, _SCALARS):
        return node.value
    if (isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub)
            and isinstance(node.operand, gast.Constant) and _is_number(node.operand.value)):
        return -node.operand.value  # `-3`, as the user and `_literal` write it
    if isinstance(node, gast.Tuple) and isinstance(node.ctx, gast.Load):
        elts = tuple(_value(e) for e in node.elts)
        return _NOT_CONSTANT if _NOT_CONSTANT in elts else elts
    return _NOT_CONSTANT


def _literal(value: Any) -> gast.AST | None:
    """`value` as a syntax tree, or None if it has no literal form (an array)."""
    if isinstance(value, tuple):
        elts = [_literal(v) for v in value]
        return None if None in elts else b.tuple_(elts)
    if _is_number(value) and _negative(value):
        # `-3` as a minus sign on 3, as Python parses it: astor prints a negative constant
        # without parentheses, so `(-3) ** x` would read back as `-(3 ** x)`
        return b.make(gast.UnaryOp, op=gast.USub(), operand=b.const(-value))
    if isinstance(value, _SCALARS):
        return b.const(value)
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, complex)) and not isinstance(value, bool)


def _negative(value: Any) -> bool:
    if isinstance(value, complex):
        return value.real == 0 and value.imag < 0
    return math.copysign(1.0, value) < 0 if isinstance(value, float) else value < 0


def _plain(value: Any) -> Any:
    """NumPy scalars (a static `n` taken from an array's shape) as Python ones."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return value


def _acceptable(value: Any) -> bool:
    if isinstance(value, bool) or value is None:
        return True
    if isinstance(value, int):
        return _INT64[0] <= value <= _INT64[1]
    if isinstance(value, (str, tuple)):
        return len(value) <= _MAX_SEQUENCE and (
            isinstance(value, str) or all(_acceptable(v) for v in value))
    # inf and nan have no literal: `float("inf")` reads better as written
    if isinstance(value, complex):
        return math.isfinite(value.real) and math.isfinite(value.imag)
    return isinstance(value, float) and math.isfinite(value)


def _too_large(op: type, left: Any, right: Any) -> bool:
    """Operations whose Python value could exhaust memory before `_acceptable` sees it."""
    if op is gast.Pow and isinstance(left, int) and isinstance(right, int):
        return abs(left) > 1 and right > 64
    if op is gast.LShift and isinstance(right, int):
        return right > 64
    if op is gast.Mult:
        for seq, times in ((left, right), (right, left)):
            if isinstance(seq, (str, tuple)) and isinstance(times, int):
                return len(seq) * times > _MAX_SEQUENCE
    return False


def _singleton(value: Any) -> bool:
    return value is None or isinstance(value, bool)


# ---- statements ----
def _size(stmts: list[gast.stmt]) -> int:
    return sum(isinstance(n, gast.stmt) for s in stmts for n in gast.walk(s))


def _nonempty(stmts: list[gast.stmt], origin: gast.AST) -> list[gast.stmt]:
    return stmts or [b.located(b.make(gast.Pass), origin)]


def _stored(stmts: list[gast.stmt]) -> set[str]:
    return {n.id for s in stmts for n in gast.walk(s)
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def _jumps(stmts: list[gast.stmt], in_inner_loop: bool = False) -> bool:
    """Whether `stmts`, a loop body, may leave an iteration early (any `return`, or a
    `break`/`continue` not inside a nested loop's body)."""
    for stmt in stmts:
        if isinstance(stmt, gast.Return):
            return True
        if isinstance(stmt, (gast.Break, gast.Continue)) and not in_inner_loop:
            return True
        if isinstance(stmt, (gast.For, gast.While)):
            if _jumps(stmt.body, True) or _jumps(stmt.orelse, in_inner_loop):
                return True
        elif isinstance(stmt, (gast.If, gast.With)):
            if _jumps(stmt.body, in_inner_loop) or _jumps(getattr(stmt, "orelse", []),
                                                          in_inner_loop):
                return True
    return False


def _reads(node: gast.AST, index: str) -> bool:
    """Whether `node` loads `index` outside the body of every loop `for index in ...`."""
    if isinstance(node, gast.For) and isinstance(node.target, gast.Name) \
            and node.target.id == index:
        return any(_reads(n, index) for n in [node.iter, *node.orelse])
    if isinstance(node, gast.Name) and node.id == index and isinstance(node.ctx, gast.Load):
        return True
    return any(_reads(child, index) for child in gast.iter_child_nodes(node))
