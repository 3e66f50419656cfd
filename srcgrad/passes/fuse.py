"""fuse: chains of elementwise array arithmetic become one generated kernel each.

`d_t2 = dh * (1.0 - h * h)` in NumPy is three passes over memory and two temporaries
(large ones cost page faults on every call); as a kernel it is one loop:

    d_t2 = d_t2_fused(dh, h)
    ...
    @elementwise
    def d_t2_fused(dh, h):
        return dh * (1.0 - h * h)

First a temporary that is read once, by the arithmetic of a later statement of its block,
is folded into that statement (`_t8 = h * h; _t9 = 1.0 - _t8` becomes `_t9 = 1.0 - h * h`)
when nothing between them writes what it reads. Then each maximal elementwise expression
with two operations or more on arrays becomes a kernel: operators (`+ - * / **`, unary
minus, one comparison), `where` and the cheap (`fusable`) ufuncs, over names and
numbers. The transcendental ufuncs (`np.exp`, `np.tanh`) are not fused: NumPy's are SIMD,
numba's scalar loops many times slower. A kernel may end with one (`h = np.tanh(a + b)`:
the loop computes `a + b` and NumPy then applies the ufunc in place, in the loop's result,
or the loop computes it too where it has a vectorizable `in_loop` form: tanh, exp).

A kernel whose value later statements of its block sum to other shapes (`y =
unbroadcast(x, like)`: the gradient of a broadcast bias) returns those sums too, and its
loop adds each entry into them as it computes it, rather than reading the value again:

    d_t1, db1 = d_t2_fused(dh, h, _t1, b1)
    ...
    @elementwise
    def d_t2_fused(dh, h, _t1, b1):
        d_t2 = dh * (1.0 - h * h)
        return unbroadcast(d_t2, _t1), unbroadcast(d_t2, b1)

The value is returned as well where anything else reads it.

Which values are arrays is not known before a call, so the pass fuses only code with
evidence of arrays (a matrix product's operands and result, an array constructor, what is
computed from them): scalar code stays as it was. A kernel is correct for scalars too;
`runtime.elementwise` decides how it runs.

A lowering pass: it runs last, on the way to source, and the differentiable form a
higher-order transform reads (`compiler.Generated.ir`) is the one before it, so no kernel
needs a derivative of its own.
"""

from __future__ import annotations

import copy
import dataclasses

import gast
import numpy as np

from .. import builder as b
from .. import runtime
from ..analysis.aliasing import VIEW_METHODS
from ..rules import fact
from .base import GeneratedFunction, Namespace, all_statements
from .optimize import _is_comment, pure_call

_OPERATORS = (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow)
_ARRAY_ATTRIBUTES = ("shape", "ndim", "T", "dtype")
_COMPARISONS = (gast.Lt, gast.LtE, gast.Gt, gast.GtE, gast.Eq, gast.NotEq)


def fuse(functions: list[gast.FunctionDef], ns: Namespace
         ) -> tuple[list[gast.FunctionDef], list[str]]:
    """`functions` with their elementwise chains as calls of kernels, the kernels appended
    (named in the second list)."""
    taken = {n.id for f in functions for n in gast.walk(f) if isinstance(n, gast.Name)}
    taken |= {f.name for f in functions}
    kernels = _Kernels(ns, taken)
    out = [_Fuse(fn, ns, kernels).run() for fn in functions]
    return out + kernels.functions, [k.name for k in kernels.functions]


class _Kernels:
    """The kernels made so far, one per distinct expression."""

    def __init__(self, ns: Namespace, taken: set[str]):
        self.ns, self.taken = ns, taken
        self.functions: list[gast.FunctionDef] = []
        self.made: dict[str, str] = {}
        self.decorator: str | None = None

    def call(self, expr: gast.AST, label: str, sums: Sums | None = None) -> gast.Call:
        """A call of the kernel computing `expr` from the names it reads; with `sums`,
        the kernel assigns it to `sums.value` and returns it (if kept) and its sums."""
        variables = _locals(expr)
        params = list(dict.fromkeys(n.id for n in _in_order(expr)
                                    if isinstance(n, gast.Name) and n.id in variables))
        body = [b.ret(copy.deepcopy(expr))]
        if sums is not None:
            params += [like for like in dict.fromkeys(sums.likes) if like not in params]
            value = b.name(sums.value)
            returned = [value] * sums.keep + [
                b.call(copy.deepcopy(sums.unbroadcast), b.name(sums.value), b.name(like))
                for like in sums.likes]
            body = [b.assign(sums.value, copy.deepcopy(expr)),
                    b.ret(b.tuple_(returned) if len(returned) > 1 else returned[0])]
        key = gast.dump(_renamed(b.function("k", params, body), params))
        if key not in self.made:
            if self.decorator is None:
                self.decorator = self.ns.bind("elementwise", runtime.elementwise,
                                              avoid=self.taken)
            name = self.ns.bind(f"{label}_fused", GeneratedFunction(), avoid=self.taken)
            self.taken.add(name)
            fn = b.function(name, params, body)
            fn.decorator_list = [b.name(self.decorator)]
            self.functions.append(fn)
            self.made[key] = name
        return b.call(b.name(self.made[key]), *[b.name(p) for p in params])


def _in_order(node: gast.AST):
    """The nodes of `node` as the source reads them, left to right."""
    yield node
    for child in gast.iter_child_nodes(node):
        yield from _in_order(child)


def _locals(expr: gast.AST) -> set[str]:
    """The names of `expr` that are variables (not `np` of `np.abs`, not `abs`)."""
    called = {id(n) for c in gast.walk(expr) if isinstance(c, gast.Call)
              for n in gast.walk(c.func)}
    return {n.id for n in gast.walk(expr) if isinstance(n, gast.Name) and id(n) not in called}


def _renamed(node: gast.AST, params: list[str]) -> gast.AST:
    """`node` with its variables `params` named p0, p1...: the key of a kernel."""
    names = {p: f"p{k}" for k, p in enumerate(params)}

    def rename(n: gast.AST) -> gast.AST:
        if isinstance(n, gast.Name) and n.id in names:
            return gast.Name(id=names[n.id], ctx=n.ctx, annotation=None, type_comment=None)
        return b.map_children(n, rename)
    return rename(copy.deepcopy(node))


@dataclasses.dataclass(frozen=True)
class Sums:
    """What a kernel returns besides (or instead of) its value `value`: its sums to the
    shapes of `likes` (``unbroadcast(value, like)``, the gradients of broadcast operands
    such as a bias), which the kernel's loop adds up as it computes each entry."""

    value: str
    likes: tuple[str, ...]
    results: tuple[str, ...]  # the names the sums are assigned to
    keep: bool                # whether the value itself is returned too (read elsewhere)
    unbroadcast: gast.AST    # how the module names runtime.unbroadcast


class _Fuse:
    def __init__(self, fn: gast.FunctionDef, ns: Namespace, kernels: _Kernels):
        self.fn, self.ns, self.kernels = fn, ns, kernels
        self.arrays = self.evidence()

    def run(self) -> gast.FunctionDef:
        if not self.arrays:
            return self.fn
        fn = copy.deepcopy(self.fn)
        reads: dict[str, int] = {}
        stores: dict[str, int] = {}
        for n in gast.walk(fn):
            if isinstance(n, gast.Name):
                counts = stores if isinstance(n.ctx, (gast.Store, gast.Param)) else reads
                counts[n.id] = counts.get(n.id, 0) + 1
        self.reads, self.stores = reads, stores
        self.aliases = self.alias_groups(fn)
        fn.body = self.block(fn.body)
        return fn

    # ---- which names hold arrays ----
    def evidence(self) -> set[str]:
        """Names whose values are arrays: the operands of matrix products (NumPy allows no
        scalar there), what is computed from arrays, and what a unary elementwise function
        turns into an array (it keeps the shape). A fixed point over the function."""
        statements = list(all_statements(self.fn.body))
        arrays = {n.id for s in statements for node in gast.walk(s)
                  for n in self.matmul_operands(node) if isinstance(n, gast.Name)}
        arrays |= self.shaped()
        assigns = [s for s in statements if isinstance(s, gast.Assign)
                   and isinstance(s.targets[0], gast.Name)]
        while True:
            new = {s.targets[0].id for s in assigns if self.is_array(s.value, arrays)}
            new |= {x.id for s in assigns if s.targets[0].id in arrays
                    for x in [self.unary_operand(s.value)] if x is not None}
            if new <= arrays:
                return arrays
            arrays |= new

    def shaped(self) -> set[str]:
        """Names bound once (a parameter never assigned, or one assignment) whose array
        attributes the function reads (`x.shape`, `x.ndim`, `x.T`, `x.dtype`): an array,
        or a NumPy scalar, for which a kernel is correct too; never a list or a tuple
        (whose `+` and `*` a kernel would change). What a subscript of one gives (`x[t]`,
        `w[:b]`: a row, a slice, an entry) is one too (`is_array`)."""
        stores: dict[str, int] = {}
        attributes = set()
        for n in gast.walk(self.fn):
            if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Param)):
                stores[n.id] = stores.get(n.id, 0) + 1
            elif isinstance(n, gast.Attribute) and n.attr in _ARRAY_ATTRIBUTES \
                    and isinstance(n.value, gast.Name) and isinstance(n.ctx, gast.Load):
                attributes.add(n.value.id)
        return {name for name in attributes if stores.get(name) == 1}

    def matmul_operands(self, node: gast.AST) -> list[gast.AST]:
        if isinstance(node, gast.BinOp) and isinstance(node.op, gast.MatMult):
            return [node.left, node.right]
        if isinstance(node, gast.Call) and self.ns.resolve(node.func) in (
                runtime.matmul_lhs_grad, runtime.matmul_rhs_grad):
            return node.args[1:3]
        return []

    def unary_operand(self, node: gast.AST) -> gast.Name | None:
        """x of `-x` or `np.sign(x)` (a ufunc of one argument)."""
        if isinstance(node, gast.UnaryOp) and isinstance(node.operand, gast.Name):
            return node.operand
        if isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords \
                and isinstance(self.ns.resolve(node.func), np.ufunc) \
                and isinstance(node.args[0], gast.Name):
            return node.args[0]
        return None

    def is_array(self, node: gast.AST, arrays: set[str]) -> bool:
        if isinstance(node, gast.Name):
            return node.id in arrays
        if isinstance(node, gast.BinOp):
            return isinstance(node.op, gast.MatMult) or self.is_array(node.left, arrays) \
                or self.is_array(node.right, arrays)
        if isinstance(node, gast.UnaryOp):
            return self.is_array(node.operand, arrays)
        if isinstance(node, gast.Subscript):
            return self.is_array(node.value, arrays)
        if isinstance(node, gast.Compare):
            return any(self.is_array(n, arrays) for n in [node.left, *node.comparators])
        if isinstance(node, gast.Call):
            fun = self.ns.resolve(node.func)
            if fact(fun, "scalar_result") or (fact(fun, "reduction") and len(node.args) == 1
                                              and not node.keywords):
                return False
            if fact(fun, "array_result"):
                return True
            return any(self.is_array(a, arrays) for a in node.args)
        return False

    # ---- folding ----
    def block(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        stmts = list(stmts)
        i = 0
        while i < len(stmts):
            s = stmts[i]
            if isinstance(s, (gast.If, gast.For, gast.While)):
                s.body = self.block(s.body)
                s.orelse = self.block(s.orelse)
            elif self.fold(stmts, i):
                del stmts[i]
                continue
            i += 1
        out = []
        for i, s in enumerate(stmts):
            if s is not None:  # None: an unbroadcast merged into an earlier kernel
                out.append(self.extract(s, self.sums(stmts, i)))
        return _without_empty_comments(out)

    def sums(self, stmts: list[gast.stmt | None], i: int) -> Sums | None:
        """Where `stmts[i]` becomes a kernel computing `x` and later statements of the
        block are `y = unbroadcast(x, like)`, with nothing between that writes x, like or
        y or reads y (and no like one of the other y): those sums, each statement taken out
        of `stmts` (set to None)."""
        s = stmts[i]
        if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)
                and self.whole(s)):
            return None
        x = s.targets[0].id
        if self.outermost(s, s.value) and not fact(self.ns.resolve(s.value.func), "in_loop"):
            return None  # NumPy applies that ufunc after the loop, too late for the sums
        found, unbroadcast, touched = [], None, set()
        for j in range(i + 1, len(stmts)):
            later = stmts[j]
            if later is None or _is_comment(later):
                continue
            y, like, call = self.unbroadcast_of(later, x)
            if y is not None and y != x and y not in touched \
                    and like not in {y for _, y, _ in found} \
                    and not self.writes_between(stmts[i + 1:j], like):
                found.append((j, y, like))
                unbroadcast = call
                touched |= {y}
                continue
            if self.writes(later, {x}):
                break
            touched |= {n.id for n in gast.walk(later) if isinstance(n, gast.Name)}
        if not found:
            return None
        for j, _, _ in found:
            stmts[j] = None
        keep = self.stores.get(x) != 1 or self.reads.get(x, 0) > len(found)
        return Sums(x, tuple(like for _, _, like in found), tuple(y for _, y, _ in found),
                    keep, unbroadcast)

    def writes_between(self, stmts: list[gast.stmt | None], name: str) -> bool:
        """Whether a statement of `stmts` (None: one taken out) may change `name`."""
        return any(s is not None and self.writes(s, {name}) for s in stmts)

    def unbroadcast_of(self, stmt: gast.stmt, x: str):
        """`(y, like, the called name)` if `stmt` is ``y = unbroadcast(x, like)``."""
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name) \
                and isinstance(stmt.value, gast.Call) and not stmt.value.keywords \
                and self.ns.resolve(stmt.value.func) is runtime.unbroadcast \
                and len(stmt.value.args) == 2 \
                and all(isinstance(a, gast.Name) for a in stmt.value.args) \
                and stmt.value.args[0].id == x and stmt.value.args[1].id != x:
            return stmt.targets[0].id, stmt.value.args[1].id, stmt.value.func
        return None, None, None

    def fold(self, stmts: list[gast.stmt], i: int) -> bool:
        """Fold `stmts[i]`, `t = <elementwise>`, into the one later statement of the block
        that reads t, where that read is an operand of its arithmetic."""
        s = stmts[i]
        if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)):
            return False
        t = s.targets[0].id
        if t not in self.arrays or self.reads.get(t) != 1 or self.stores.get(t) != 1 \
                or not (self.operation(s.value) and self.elementwise(s.value)):
            return False
        reads = _locals(s.value)
        for j in range(i + 1, len(stmts)):
            later = stmts[j]
            read = next((n for n in gast.walk(later) if isinstance(n, gast.Name)
                         and n.id == t and isinstance(n.ctx, gast.Load)), None)
            if read is not None:
                parent = next(n for n in gast.walk(later)
                              if any(c is read for c in gast.iter_child_nodes(n)))
                if isinstance(later, (gast.If, gast.For, gast.While)) or not (
                        self.operation(parent) or self.outermost(later, parent)):
                    return False
                stmts[j] = _with_names(later, {t: s.value})
                return True
            if self.writes(later, reads):
                return False
        return False

    def alias_groups(self, fn: gast.FunctionDef) -> dict[str, set[str]]:
        """For each name that may share memory with another (`_t2 = x[:, 0]`, `v = x.T`,
        `w = np.reshape(x, ...)`, `y = x`), every name it may share memory with: a write
        into one changes what the others read. Conservative (any subscript may be a view)."""
        groups: dict[str, set[str]] = {}
        for s in all_statements(fn.body):
            if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
                root = self.view_root(s.value)
                if root is not None and root != s.targets[0].id:
                    group = groups.get(root, {root}) | groups.get(s.targets[0].id,
                                                                  {s.targets[0].id})
                    for name in group:
                        groups[name] = group
        return groups

    def view_root(self, node: gast.AST) -> str | None:
        """The name `node` may be a view of (through subscripts and views), or None."""
        while not isinstance(node, gast.Name):
            if isinstance(node, (gast.Subscript, gast.Attribute)):
                node = node.value
            elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
                    and node.func.attr in VIEW_METHODS:
                node = node.func.value
            elif isinstance(node, gast.Call) and node.args \
                    and fact(self.ns.resolve(node.func), "view"):
                node = node.args[0]
            else:
                return None
        return node.id

    def writes(self, stmt: gast.stmt, names: set[str]) -> bool:
        """Whether `stmt` may rebind or change in place a value `names` hold (or a view
        of it, or what it is a view of)."""
        names = set().union(names, *(self.aliases.get(n, ()) for n in names))
        for n in gast.walk(stmt):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and n.id in names:
                return True
            if isinstance(n, (gast.Subscript, gast.Attribute)) \
                    and isinstance(n.ctx, gast.Store) and _locals(n) & names:
                return True
            if isinstance(n, gast.Call) and not pure_call(n, self.ns) \
                    and any(_locals(a) & names for a in [*n.args, *n.keywords]):
                return True
        return False

    # ---- kernels ----
    def elementwise(self, node: gast.AST) -> bool:
        """Whether `node` is elementwise arithmetic of names and numbers."""
        if isinstance(node, gast.Name):
            return True
        if isinstance(node, gast.Constant):
            return type(node.value) in (int, float, bool)
        return self.operation(node) and all(
            self.elementwise(c) for c in _operands(node))

    def outermost(self, stmt: gast.stmt, node: gast.AST) -> bool:
        """Whether `node` is `stmt`'s whole value and a call of a ufunc a kernel may apply
        last (`last_in_kernel`): the kernel's loop computes its argument, NumPy then
        applies it in place, in the loop's result."""
        return isinstance(stmt, gast.Assign) and stmt.value is node \
            and isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords \
            and bool(fact(self.ns.resolve(node.func), "last_in_kernel"))

    def operation(self, node: gast.AST) -> bool:
        if isinstance(node, gast.BinOp):
            return isinstance(node.op, _OPERATORS)
        if isinstance(node, gast.UnaryOp):
            return isinstance(node.op, (gast.USub, gast.UAdd))
        if isinstance(node, gast.Compare):
            return len(node.ops) == 1 and isinstance(node.ops[0], _COMPARISONS)
        if isinstance(node, gast.Call):
            fun = self.ns.resolve(node.func)
            return not node.keywords and bool(fact(fun, "fusable")) and (
                len(node.args) == 3 if fun in (np.where, runtime.where) else True)
        return False

    def whole(self, stmt: gast.stmt) -> bool:
        """Whether `extract` makes `stmt`'s whole value one kernel call."""
        if not isinstance(stmt, gast.Assign):
            return False
        if self.outermost(stmt, stmt.value):
            return self.elementwise(stmt.value.args[0]) \
                and self.is_array(stmt.value.args[0], self.arrays) \
                and 1 + self.array_ops(stmt.value.args[0]) >= 2
        return self.elementwise(stmt.value) and self.array_ops(stmt.value) >= 2

    def extract(self, stmt: gast.stmt, sums: Sums | None = None) -> gast.stmt:
        """`stmt` with each maximal elementwise expression of two array operations or
        more replaced by a kernel call; with `sums` (of its whole value), the call also
        returns them, to the names that had them."""
        if not isinstance(stmt, (gast.Assign, gast.AugAssign, gast.Expr, gast.Return)) \
                or getattr(stmt, "value", None) is None or _is_comment(stmt):
            return stmt  # compound statements, and break, continue, pass: no value
        label = stmt.targets[0].id if isinstance(stmt, gast.Assign) and isinstance(
            stmt.targets[0], gast.Name) else "expr"
        if sums is not None:
            stmt.value = self.kernels.call(stmt.value, label, sums)
            names = [sums.value] * sums.keep + list(sums.results)
            stmt.targets = [b.tuple_([b.name(n, store=True) for n in names], store=True)
                            if len(names) > 1 else b.name(names[0], store=True)]
            return stmt
        if self.outermost(stmt, stmt.value) and self.whole(stmt):
            stmt.value = self.kernels.call(stmt.value, label)
            return stmt

        def visit(node: gast.AST) -> gast.AST:
            if self.elementwise(node) and self.array_ops(node) >= 2:
                return self.kernels.call(node, label)
            return b.map_children(node, visit)
        return visit(stmt)

    def array_ops(self, node: gast.AST) -> int:
        """The operations of `node` that have an array among their operands."""
        own = int(self.operation(node) and any(self.is_array(c, self.arrays)
                                               for c in _operands(node)))
        return own + sum(self.array_ops(c) for c in _operands(node))


def _operands(node: gast.AST) -> list[gast.AST]:
    if isinstance(node, gast.BinOp):
        return [node.left, node.right]
    if isinstance(node, gast.UnaryOp):
        return [node.operand]
    if isinstance(node, gast.Compare):
        return [node.left, *node.comparators]
    if isinstance(node, gast.Call):
        return list(node.args)
    return []


def _without_empty_comments(stmts: list[gast.stmt]) -> list[gast.stmt]:
    """Drop a comment whose code went (another comment, or the block's end, follows)."""
    out = []
    for k, s in enumerate(stmts):
        if _is_comment(s) and (k + 1 == len(stmts) or _is_comment(stmts[k + 1])):
            continue
        out.append(s)
    return out


def _with_names(node: gast.AST, values: dict[str, gast.AST]) -> gast.AST:
    """`node` with each name of `values` replaced by (a copy of) its value."""
    if isinstance(node, gast.Name) and node.id in values:
        return copy.deepcopy(values[node.id])
    return b.map_children(node, lambda child: _with_names(child, values))
