"""normalize: desugar a function body to one operation per statement (A-normal form).

Requires a tree accepted by `reject_unsupported`. Guarantees a new FunctionDef whose body
is a list of:

* ``name = op`` where ``op`` is an atom (a Name, a Constant or a global such as `np.pi`),
  or one operation whose operands are atoms: BinOp, UnaryOp, a single Compare, BoolOp,
  Call, Attribute, Subscript (index built from atoms and slices of atoms), Tuple, List;
* ``Expr(call)`` for calls kept for their effect (`print`);
* one final ``return atom``.

Every name is assigned once (a reassigned `x` becomes `x_1` from that point on), so the
adjoint can read any intermediate value without a tape. Augmented assignment, tuple
targets, chained comparisons, multiple targets and unary minus on constants are
desugared. Each new statement keeps the line of the statement it came from, which is
how the adjoint comments name the user's line. Exists so that `reverse` needs one rule
per operation and never sees nesting.
"""

from __future__ import annotations

import copy

import gast

from .. import builder as b
from ..errors import UnsupportedSyntax
from ..frontend.parse import MISSING, Env
from ..naming import Namer

_LATER = {
    gast.If: "'if' statements",
    gast.For: "'for' loops",
    gast.While: "'while' loops",
    gast.Break: "'break'",
    gast.Continue: "'continue'",
    gast.With: "'with' blocks",
}


def assigned_names(fn: gast.FunctionDef) -> frozenset[str]:
    """Parameters and every name the body stores to."""
    names = {a.id for a in fn.args.args}
    for node in gast.walk(fn):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            names.add(node.id)
    return frozenset(names)


def normalize(fn: gast.FunctionDef, env: Env, namer: Namer, filename: str) -> gast.FunctionDef:
    """A-normal form of `fn`, with each name assigned once.

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
    for i, stmt in enumerate(body):
        norm.statement(stmt, last=i == len(body) - 1)
    if not norm.out or not isinstance(norm.out[-1], gast.Return):
        norm.out.append(b.located(b.ret(b.const(None)), body[-1] if body else fn))
    fn.body = _single_assignment(norm.out, [a.id for a in fn.args.args], namer)
    return fn


class _Normalizer:
    def __init__(self, env: Env, local_names: frozenset[str], namer: Namer, filename: str):
        self.env = env
        self.locals = local_names
        self.namer = namer
        self.filename = filename
        self.out: list[gast.stmt] = []
        self.origin: gast.stmt | None = None

    def error(self, node: gast.AST, message: str) -> UnsupportedSyntax:
        return UnsupportedSyntax(message, filename=self.filename,
                                 lineno=getattr(node, "lineno", None),
                                 col=getattr(node, "col_offset", None))

    def emit(self, stmt: gast.stmt) -> None:
        self.out.append(b.located(stmt, self.origin))

    # ---- statements ----
    def statement(self, stmt: gast.stmt, last: bool) -> None:
        self.origin = stmt
        if type(stmt) in _LATER:
            raise self.error(stmt, f"{_LATER[type(stmt)]} are not supported yet")
        if isinstance(stmt, gast.Pass):
            return
        if isinstance(stmt, gast.Expr):
            if isinstance(stmt.value, gast.Constant):
                return
            self.emit(b.make(gast.Expr, value=self.operation(stmt.value)))
        elif isinstance(stmt, gast.Return):
            if not last:
                raise self.error(stmt, "an early 'return' is not supported yet")
            value = stmt.value if stmt.value is not None else b.const(None)
            self.emit(b.ret(self.atom(value)))
        elif isinstance(stmt, gast.Assign):
            self.assign(stmt.targets, stmt.value)
        elif isinstance(stmt, gast.AnnAssign):
            if stmt.value is not None:
                self.assign([stmt.target], stmt.value)
        elif isinstance(stmt, gast.AugAssign):
            if not isinstance(stmt.target, gast.Name):
                raise self.error(stmt, "augmented assignment to a subscript or attribute "
                                       "is not supported yet")
            value = b.binop(b.name(stmt.target.id), stmt.op, stmt.value)
            self.assign([b.name(stmt.target.id, store=True)], value)
        else:
            raise self.error(stmt, f"'{type(stmt).__name__}' statements cannot be "
                                   f"differentiated")

    def assign(self, targets: list[gast.AST], value: gast.AST) -> None:
        if len(targets) > 1:
            value = self.atom(value)
        for target in targets:
            self.bind(target, value)

    def bind(self, target: gast.AST, value: gast.AST) -> None:
        if isinstance(target, gast.Name):
            self.emit(b.assign(target.id, self.operation(value)))
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
            raise self.error(target, f"assignment to a {type(target).__name__.lower()} is "
                                     f"not supported yet")

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
            raise self.error(node, "conditional expressions (a if c else b) are not "
                                   "supported yet; use np.where")
        raise self.error(node, f"'{type(node).__name__}' expressions cannot be differentiated")

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
    """Rename every re-assignment (`x = ...` after `x` exists) to a fresh version `x_1`."""
    current = {p: p for p in params}
    for stmt in body:
        for node in gast.walk(stmt.value if isinstance(stmt, gast.Assign) else stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                node.id = current.get(node.id, node.id)
        if isinstance(stmt, gast.Assign):
            target = stmt.targets[0].id
            new = namer.fresh(target) if target in current else target
            current[target] = new
            stmt.targets[0].id = new
    return body
