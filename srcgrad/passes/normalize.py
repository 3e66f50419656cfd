"""normalize: desugar a function body to one operation per statement (A-normal form).

Requires a tree accepted by `reject_unsupported`. Runs `inplace` (arguments written into
copied on entry, in-place changes of shared arrays checked), `jumps`, the desugaring and
single assignment here (a comprehension reduced by `sum`, `max`, `min`, `any`, `all`
becomes its loop, and one whose list is the value its display, by `comprehensions`; a
list appended to in straight-line code a display where it is read, by `lists`), then
`views` (views taken again after writes, or checked), and guarantees what those
passes do, and a new FunctionDef whose body is a list of:

* ``name = op`` where ``op`` is an atom (a Name, a Constant or a global such as `np.pi`),
  or one operation whose operands are atoms: BinOp, UnaryOp, a single Compare, BoolOp,
  Call, Attribute, Subscript (index built from atoms and slices of atoms), Tuple, List;
* ``name[index] = atom`` (a subscript write; `x[i] += v` reads, adds, writes);
* ``Expr(call)`` for calls kept for their effect (`print`);
* guards: ``assert atom[, atom]`` and ``raise E`` / ``raise E(atoms)`` (primal code,
  with no derivative; a bare `raise` and `raise ... from` are refused);
* ``with grad_of(h) as dh:`` over a normalized block (a hook, see `annotate`: code
  for the backward pass);
* ``if atom:`` with normalized blocks; ``for name in range(atoms):`` (loops over arrays,
  `enumerate`, `zip`, `enumerate(zip(...))` and `reversed` become index loops, and one
  over `itertools.combinations`, `product` or `permutations` nested index loops,
  `combinatoric`); ``while
  op:`` (a test that takes statements runs them before the loop, at the end of the body
  and before each `continue`);
  `break` and `continue` only at the end of a block (see `jumps`);
* one final ``return atom``.

A name assigned only outside loops and branches is assigned once (a reassigned `x`
becomes `x_1` from that point on), so the adjoint reads its values without a tape; a
name assigned inside a loop or branch keeps its name, and the tape (`analysis/tape`)
restores what its overwrites destroy. Augmented assignment, tuple targets (a starred
one of a display, or of a name bound once to one: `first, *rest = [a, b, c]` is
`first, rest = a, [b, c]`; of any other value, `first = x[0]` and `rest` the list of
the items left, `unpacked`), a swap through a temporary read nowhere else (`t = u; u = v;
v = t`, `rotations`), chained comparisons, multiple targets and unary minus on constants
are desugared, and so is a call given options its rule lacks
(`np.sum(x, where=m)`: the operations its record's `expanded` gives,
`np.sum(np.where(m, x, 0))`), `sorted` of a display (`sorted_items`), of another list by a key
(`sorted_list`) and an item
write into a list display nothing else holds (`replace_items`). Each new statement
keeps the line of the statement it came from, which is how the adjoint comments name
the user's line. Exists so that `reverse` needs one rule per operation and one form per
construct.
"""

from __future__ import annotations

import ast
import copy
import inspect
import itertools
import math
from typing import Any

import gast
import numpy as np

from .. import builder as b
from ..analysis.aliasing import assigned_names
from ..analysis.displays import fixed_displays, int_value, known_items, shown
from ..errors import RuleError, UnsupportedSyntax
from ..frontend.parse import MISSING, Env
from ..naming import Namer
from ..rules import NOT_CONSTANT, fact, methods
from ..runtime.common import formatted
from .comprehensions import (
    COMPREHENSIONS,
    Listed,
    appended,
    lower,
    reducer,
    shared_names,
    unrolled,
)
from .inplace import bound_name, copy_written_params
from .jumps import _flag_breaks, _own_breaks, structure_jumps
from .lists import display_appends, written_sharing
from .views import retake_views


def normalize(fn: gast.FunctionDef, env: Env, namer: Namer, filename: str,
              copy_args: bool = True, spelled: dict[str, str] | None = None
              ) -> gast.FunctionDef:
    """A-normal form of `fn`; names assigned only outside loops and branches are assigned once.
    `spelled`: flattened names as the user spells them (`pytrees.spellings`), for messages.

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
    norm = _Normalizer(env, assigned_names(fn), namer, filename, shared_names(fn))
    body = fn.body
    if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
        body = body[1:]  # docstring
    norm.whole = body
    if not body or not isinstance(body[-1], gast.Return):
        body = body + [b.located(b.ret(b.const(None)), body[-1] if body else fn)]
    body = rotations(body, [a.id for a in fn.args.args])
    body = [_Updates(env, assigned_names(fn), norm.error).visit(s) for s in body]
    body = _extended(body)
    body = [Listed(lambda f: env.resolve(f, norm.locals)).visit(s) for s in body]
    body = replace_items(body, [a.id for a in fn.args.args], env, assigned_names(fn),
                         filename)
    body = copy_written_params(fn, body, env, filename, copy_args)
    body = structure_jumps(body, namer)
    norm.locals = assigned_names(b.function(fn.name, [a.id for a in fn.args.args], body))
    norm.displays = fixed_displays(body, [a.id for a in fn.args.args])
    out = display_appends(norm.block(body), env, norm.locals, namer)
    fn.body = retake_views(_single_assignment(out, [a.id for a in fn.args.args], namer),
                           [a.id for a in fn.args.args], env, namer, filename, norm.locals,
                           spelled or {})
    return fn




def rotations(body: list[gast.stmt], params: list[str]) -> list[gast.stmt]:
    """`body` with each swap written through a temporary read nowhere else, `t = u; u =
    v; v = t` (or a rotation, `t = a; a = b; b = c; c = t`), written as the tuple
    assignment it is, `u, v = v, u`: the same values, and the form whose swaps `check`
    knows take nothing from another name."""
    loads: dict[str, int] = {}
    for node in gast.walk(b.function("f", params, body)):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            loads[node.id] = loads.get(node.id, 0) + 1

    def renaming(s: gast.stmt) -> tuple[str, str] | None:
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and \
                isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Name):
            return s.targets[0].id, s.value.id
        return None

    def rotation(stmts: list[gast.stmt]) -> list[str] | None:
        """[a, b, ...], where `stmts` starts with `t = a; a = b; ...; z = t`."""
        first = renaming(stmts[0])
        if not first or first[0] in params or loads.get(first[0]) != 1:
            return None
        t, names = first[0], [first[1]]
        for s in stmts[1:]:
            pair = renaming(s)
            if not pair or pair[0] != names[-1]:
                return None
            if pair[1] == t:
                return names if len(names) > 1 else None
            if pair[1] in names:
                return None
            names.append(pair[1])
        return None

    def block(stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        k = 0
        while k < len(stmts):
            s = stmts[k]
            for field in ("body", "orelse"):
                if isinstance(getattr(s, field, None), list):
                    setattr(s, field, block(getattr(s, field)))
            if names := rotation(stmts[k:]):
                targets = b.tuple_([b.name(n, store=True) for n in names], store=True)
                values = b.tuple_([b.name(n) for n in names[1:] + names[:1]])
                out.append(b.located(b.assign(targets, values), s))
                k += len(names) + 1
                continue
            out.append(s)
            k += 1
        return out
    return block(body)


def item_lists(body: list[gast.stmt], params: list[str], env: Env,
               local: frozenset[str]) -> dict[str, int]:
    """The names `body` binds only to list displays of n items each (not a parameter),
    changes only by item writes at constant indices (`L[0] = v`, `L[-1] += v`), and
    reads only by index or slice, `len`, a loop over it, or as an argument of a builtin
    or NumPy function (which keep no reference to it), all in straight-line code (the
    adjoint of a list display bound in a loop or branch is not one srcgrad writes into):
    name -> n. Such a write is the name bound to a new display (`L = [v, L[1]]`), as
    nothing else can see the list."""
    parents: dict[int, gast.AST] = {}
    for stmt in body:
        for node in gast.walk(stmt):
            for child in gast.iter_child_nodes(node):
                parents[id(child)] = node
    lengths: dict[str, set[int]] = {}
    bad = set(params) | {   # (bound or written in a loop or branch: `Items` adjoints)
        n.id for stmt in body if isinstance(stmt, (gast.For, gast.While, gast.If, gast.With))
        for node in gast.walk(stmt) for n in [node, getattr(node, "value", None)]
        if isinstance(n, gast.Name) and isinstance(node, (gast.Name, gast.Subscript)) and
        not isinstance(node.ctx, gast.Load)}
    for stmt in body:
        for node in gast.walk(stmt):
            if not isinstance(node, gast.Name):
                continue
            up = parents.get(id(node))
            if isinstance(node.ctx, gast.Store):
                if isinstance(up, gast.Assign) and up.targets == [node] and \
                        isinstance(up.value, gast.List) and \
                        not any(isinstance(e, gast.Starred) for e in up.value.elts):
                    lengths.setdefault(node.id, set()).add(len(up.value.elts))
                else:
                    bad.add(node.id)
            elif isinstance(up, gast.Subscript) and up.value is node:
                if not isinstance(up.ctx, gast.Load) and (_item_index(up) is None or isinstance(
                        parents.get(id(up)), gast.AugAssign)):
                    # (`L[k] += v` changes an array item in place, and whoever else holds
                    # it: fuzz seed 9996700, a row of x0; not a new display)
                    bad.add(node.id)
            elif isinstance(up, gast.For) and up.iter is node:
                continue
            elif not (isinstance(up, gast.Call) and node in up.args and (
                    (obj := env.resolve(up.func, local)) in (len, sum, max, min, sorted) or
                    (getattr(obj, "__module__", None) or "").split(".")[0] == "numpy")):
                bad.add(node.id)
    return {n: next(iter(k)) for n, k in lengths.items() if n not in bad and len(k) == 1}


def replace_items(body: list[gast.stmt], params: list[str], env: Env,
                  local: frozenset[str], filename: str) -> list[gast.stmt]:
    """`body` with each item write into a list of `item_lists` (`L[0] = v`, `L[-1] += v`)
    the name bound to a new display, `L = [v, L[1]]` (`L = [L[0], L[1] + v]`), at the
    line of the write. Before `copy_written_params`, which so sees no write."""
    lists = item_lists(body, params, env, local)
    if not lists:
        return body

    class Items(gast.NodeTransformer):
        def visit_Assign(self, node):
            if len(node.targets) == 1:
                return self.replaced(node.targets[0], node.value, node)
            return node

        def visit_AugAssign(self, node):
            return self.replaced(node.target, node.value, node, node.op)

        def replaced(self, target, value, node, op=None):
            if not (isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name)
                    and target.value.id in lists):
                return node
            name, n, k = target.value.id, lists[target.value.id], _item_index(target)
            if not -n <= k < n:
                raise UnsupportedSyntax(f"list assignment index {k} out of range: {name!r} "
                                        f"has {n} items", filename=filename,
                                        lineno=node.lineno, col=node.col_offset)
            read = [b.subscript(b.name(name), b.const(i)) for i in range(n)]
            read[k % n] = value if op is None else b.binop(read[k % n], op, value)
            return b.located(b.assign(name, b.make(gast.List, elts=read, ctx=gast.Load())),
                             node)

    return [Items().visit(s) for s in body]


def _item_index(node: gast.Subscript) -> int | None:
    """The int constant index of `L[k]` (`L[-1]` too), else None."""
    index = node.slice
    if isinstance(index, gast.UnaryOp) and isinstance(index.op, gast.USub) and \
            isinstance(index.operand, gast.Constant) and type(index.operand.value) is int:
        return -index.operand.value
    if isinstance(index, gast.Constant) and type(index.value) is int:
        return index.value
    return None


def _extended(body: list[gast.stmt]) -> list[gast.stmt]:
    """`T += (v,)` where every binding of T is a tuple display: ``T = T + (v,)`` (a tuple
    is a value). `L += [a, b]` and `L.extend([a, b])`, where every binding of L is a list
    display or comprehension: in a loop, the appends they make (`L.append(a)`, `L.append(b)`), which
    grow the list in place as Python does and are followed as any appends are; outside
    loops, where no other name may hold L's list (L is read only by subscripts, loops,
    calls and `+`), ``L = L + [a, b]``, one display joined to another (an arithmetic `+`
    would not join them)."""
    lists, tuples, others, held = set(), set(), set(), set()
    parents = {id(c): n for n in gast.walk(b.function("f", [], body))
               for c in gast.iter_child_nodes(n)}
    for node in gast.walk(b.function("f", [], body)):
        targets = node.targets if isinstance(node, gast.Assign) else \
            [node.target] if isinstance(node, (gast.AnnAssign, gast.For)) else []
        for t in targets:
            for n in gast.walk(t):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                    kind = type(node.value) if isinstance(node, gast.Assign) and t is n \
                        else None
                    (lists if kind in (gast.List, gast.ListComp) else
                     tuples if kind is gast.Tuple else others).add(n.id)
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            up = parents.get(id(node))
            if not (isinstance(up, gast.Subscript) and up.value is node or
                    isinstance(up, gast.Call) and node in up.args or
                    isinstance(up, (gast.For, gast.comprehension)) and up.iter is node or
                    isinstance(up, gast.BinOp) and isinstance(up.op, gast.Add) or
                    isinstance(up, gast.Attribute) and up.attr in ("append", "extend")):
                held.add(node.id)   # (`M = L`, `[L]`, `return L`: another may hold it)
    lists, tuples = lists - others - tuples, tuples - others - lists

    def items(name: gast.AST, value: gast.AST, node: gast.stmt, looped: bool) -> list | None:
        if isinstance(name, gast.Name) and name.id in tuples and \
                isinstance(value, gast.Tuple) and isinstance(node, gast.AugAssign):
            # (a tuple is a value: `T += (v,)` binds T to a new one wherever it stands)
            return [b.located(b.assign(name.id, b.binop(b.name(name.id), gast.Add(), value)),
                              node)]
        if not (isinstance(name, gast.Name) and name.id in lists and
                isinstance(value, (gast.List, gast.Tuple)) and
                not any(isinstance(e, gast.Starred) for e in value.elts)):
            return None
        if not looped and name.id not in held:
            joined = b.binop(b.name(name.id), gast.Add(), b.make(
                gast.List, elts=value.elts, ctx=gast.Load()))
            return [b.located(b.assign(name.id, joined), node)]
        return [b.located(b.make(gast.Expr, value=b.call(b.make(
            gast.Attribute, value=b.name(name.id), attr="append", ctx=gast.Load()), e)), node)
            for e in value.elts]

    def block(stmts: list[gast.stmt], looped: bool) -> list[gast.stmt]:
        out = []
        for s in stmts:
            made = None
            if isinstance(s, gast.AugAssign) and isinstance(s.op, gast.Add):
                made = items(s.target, s.value, s, looped)
            elif isinstance(s, gast.Expr) and isinstance(s.value, gast.Call):
                call = s.value
                if isinstance(call.func, gast.Attribute) and call.func.attr == "extend" and \
                        len(call.args) == 1 and not call.keywords:
                    made = items(call.func.value, call.args[0], s, looped)
            for part in ("body", "orelse"):
                if isinstance(getattr(s, part, None), list):
                    setattr(s, part, block(getattr(s, part), looped or isinstance(
                        s, (gast.For, gast.While))))
            out += made if made is not None else [s]
        return out

    return block(body, False)


class _Updates(gast.NodeTransformer):
    """`f(x, *rest)` called for its effect, where f's record says it changes x as
    ``x op= helper(x, *rest)`` does (`updates`: np.add.at), is that augmented assignment,
    which `inplace` and the later passes follow like any other. x is a name or a subscript
    of one with an index of names and constants (it is read twice). Where the record's op
    is None, f fills x (np.fill_diagonal, keywords too): ``x[...] = helper(x, *rest)``
    (``x[i] = helper(x[i], *rest)`` for a subscript), a write into all of x, which the
    passes follow as any write. Any other call of such an f (into `y.T`, not a statement
    of its own, with `*args`) is refused: its change would go unseen."""

    def __init__(self, env: Env, local_names: frozenset[str], error):
        self.env, self.locals, self.error = env, local_names, error

    def updates(self, call: gast.Call) -> tuple | None:
        func = self.env.resolve(call.func, self.locals)
        return fact(func, "updates") if func is not MISSING else None

    def refuse(self, call: gast.Call) -> UnsupportedSyntax:
        what = ast.unparse(gast.gast_to_ast(copy.deepcopy(call.func)))
        return self.error(call, f"{what}() writes into an array in place, which "
                                f"srcgrad follows in a statement of its own writing into a "
                                f"name or a subscript of one with an index of names and "
                                f"constants (f(y, ...), f(y[i], ...)): bind the array to a "
                                f"name first")

    def visit_Call(self, node: gast.Call) -> gast.Call:
        # (a call that is a statement of its own is visit_Expr's)
        self.generic_visit(node)
        if self.updates(node) is not None:
            raise self.refuse(node)
        return node

    def visit_Expr(self, node: gast.Expr) -> gast.stmt:
        call = node.value
        if not isinstance(call, gast.Call):
            return self.generic_visit(node)
        for part in [*call.args, *(k.value for k in call.keywords)]:
            self.visit(part)
        how = self.updates(call)
        if how is None:
            return node
        op, helper = how
        place = call.args[0] if call.args else None
        if place is None or any(isinstance(a, gast.Starred) for a in call.args) or \
                any(k.arg is None for k in call.keywords) or (op is not None and call.keywords) \
                or not (isinstance(place, gast.Name) or isinstance(place, gast.Subscript) and
                        isinstance(place.value, gast.Name) and not any(
                            isinstance(n, (gast.Call, gast.NamedExpr))
                            for n in gast.walk(place.slice))):
            raise self.refuse(call)
        value = b.call(b.name(bound_name(self.env, helper.__name__, helper)), *call.args,
                       **{k.arg: k.value for k in call.keywords})
        target = copy.deepcopy(place)
        target.ctx = gast.Store()
        if op is None:
            if isinstance(place, gast.Name):
                target = b.subscript(target, b.const(Ellipsis), store=True)
            return b.located(b.assign(target, value), node)
        return b.located(b.make(gast.AugAssign, target=target, op=op(), value=value), node)


class _Normalizer:
    def __init__(self, env: Env, local_names: frozenset[str], namer: Namer, filename: str,
                 shared: set[str]):
        self.env = env
        self.shared = shared   # names a comprehension's variable must not keep
        self.locals = local_names
        self.namer = namer
        self.filename = filename
        self.out: list[gast.stmt] = []
        self.origin: gast.stmt | None = None
        self.conditions: list[list[gast.stmt]] = []  # per enclosing while: its test, as code
        self.displays: dict[str, gast.List | gast.Tuple] = {}   # `fixed_displays`
        self.whole: list[gast.stmt] = []   # the function's body, as the user wrote it

    def error(self, node: gast.AST, message: str) -> UnsupportedSyntax:
        return UnsupportedSyntax(message, filename=self.filename,
                                 lineno=getattr(node, "lineno", None),
                                 col=getattr(node, "col_offset", None))

    def emit(self, stmt: gast.stmt) -> None:
        self.out.append(b.located(stmt, self.origin))

    def block(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        """The normalized statements of one block (a new list; `self.out` is restored)."""
        outer, self.out = self.out, []
        for stmt in stmts:
            self.statement(stmt)
        out, self.out = self.out, outer
        return out

    # ---- statements ----
    def statement(self, stmt: gast.stmt) -> None:
        self.origin = stmt
        if isinstance(stmt, gast.Pass):
            return
        if isinstance(stmt, gast.Expr):
            if isinstance(stmt.value, gast.Constant):
                return
            self.emit(b.make(gast.Expr, value=self.operation(stmt.value)))
        elif isinstance(stmt, gast.Return):
            value = stmt.value if stmt.value is not None else b.const(None)
            self.emit(b.ret(self.atom(value)))
        elif isinstance(stmt, gast.Assign):
            self.assign(stmt.targets, stmt.value)
        elif isinstance(stmt, gast.AnnAssign):
            if stmt.value is not None:
                self.assign([stmt.target], stmt.value)
        elif isinstance(stmt, gast.AugAssign):
            self.aug_assign(stmt)
        elif isinstance(stmt, gast.If):
            self.if_(stmt)
        elif isinstance(stmt, gast.For):
            self.for_(stmt)
        elif isinstance(stmt, gast.While):
            self.while_(stmt)
        elif isinstance(stmt, gast.With):
            self.hook(stmt)
        elif isinstance(stmt, gast.Assert):   # a guard: primal code, no derivative
            msg = self.atom(_template(stmt.msg)) if stmt.msg is not None else None
            self.emit(b.make(gast.Assert, test=self.atom(stmt.test), msg=msg))
        elif isinstance(stmt, gast.Raise):
            if stmt.exc is None or stmt.cause is not None:
                raise self.error(stmt, "only 'raise E(...)' of an exception class (no bare "
                                       "'raise', no 'from') can be kept in a gradient")
            exc = stmt.exc
            if isinstance(exc, gast.Call):
                exc.args = [_template(a) for a in exc.args]
                exc = self.operation(exc)
            self.emit(b.make(gast.Raise, exc=exc, cause=None))
        elif isinstance(stmt, gast.Break):
            self.emit(b.make(gast.Break))
        elif isinstance(stmt, gast.Continue):
            if self.conditions and self.conditions[-1]:
                for s in self.conditions[-1]:  # a while loop tests its condition again
                    self.out.append(copy.deepcopy(s))
            self.emit(b.make(gast.Continue))
        else:
            raise self.error(stmt, f"'{type(stmt).__name__}' statements cannot be "
                                   f"differentiated")

    def aug_assign(self, stmt: gast.AugAssign) -> None:
        target = stmt.target
        if isinstance(target, gast.Name):
            value = b.binop(b.name(target.id), stmt.op, stmt.value)
            self.assign([b.name(target.id, store=True)], value)
        elif isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
            index = self.index(target.slice)
            old = self.atom(b.subscript(b.name(target.value.id), copy.deepcopy(index)))
            new = self.atom(b.binop(old, stmt.op, stmt.value))
            self.emit(b.assign(b.subscript(b.name(target.value.id), index, store=True), new))
        else:
            raise self.error(stmt, "augmented assignment to an attribute or to a subscript "
                                   "of an expression cannot be differentiated")

    def if_(self, stmt: gast.If) -> None:
        test = self.atom(stmt.test)
        body, orelse = self.block(stmt.body), self.block(stmt.orelse)
        self.origin = stmt
        if body or orelse:
            self.emit(b.make(gast.If, test=test, body=body, orelse=orelse))

    def for_(self, stmt: gast.For) -> None:
        if (nest := self.combinatoric(stmt)) is not None:
            for s in nest:
                self.statement(s)
            return
        if any(isinstance(n, gast.Starred) for n in gast.walk(stmt.target)):
            raise self.error(stmt, "a starred loop target cannot be differentiated: unpack "
                                   "the item in the loop's body")
        body = list(stmt.body)
        assigned = {n.id for s in body for n in gast.walk(s)
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        it, target = stmt.iter, stmt.target
        func = self.env.resolve(it.func, self.locals) if isinstance(it, gast.Call) else MISSING
        if func is range and isinstance(target, gast.Name) and not it.keywords:
            index = target.id
            bounds = [self.stable(self.atom(a), assigned) for a in it.args]
        else:
            if func is enumerate and isinstance(target, gast.Tuple) and len(target.elts) == 2 \
                    and isinstance(target.elts[0], gast.Name) and it.args:
                seqs, targets = [it.args[0]], [target.elts[1]]
                start = it.args[1] if len(it.args) > 1 else next(
                    (k.value for k in it.keywords if k.arg == "start"), None)
                if start is None:
                    index = target.elts[0].id
                else:  # enumerate(x, start): the count is the index shifted
                    index = self.namer.fresh("k")
                    body.insert(0, b.located(b.assign(
                        target.elts[0].id, b.binop(b.name(index), gast.Add(),
                                                   self.atom(start))), stmt))
            else:
                seqs, targets, index = [it], [target], self.namer.fresh("k")
            zipped = seqs[0]   # zip(a, b), enumerated or not: one sequence per name
            if isinstance(zipped, gast.Call) and zipped.args and not zipped.keywords and \
                    self.env.resolve(zipped.func, self.locals) is zip:
                seqs = list(zipped.args)
                if not isinstance(targets[0], gast.Tuple) or len(targets[0].elts) != len(seqs):
                    raise self.error(stmt, "unpack 'zip' into one name per sequence")
                targets = list(targets[0].elts)
            # `reversed(s)` is s read from its end: item k is s[len(s) - 1 - k]; item k of
            # `range(a, b, c)` is a + k * c (numba indexes no range object)
            backward = [self.reversed_arg(s) is not None for s in seqs]
            seqs = [self.reversed_arg(s) or s for s in seqs]
            ranges = [self.range_args(s) for s in seqs]
            seqs = [self.stable(self.atom(s), assigned) if r is None else
                    b.call(b.name("range"), *(self.stable(self.atom(a), assigned) for a in r))
                    for s, r in zip(seqs, ranges, strict=True)]
            lengths = [self.atom(b.call(b.name("len"), s)) for s in seqs]
            n = lengths[0] if len(lengths) == 1 else self.atom(b.call(b.name("min"), *lengths))
            bounds = [n]
            items = [b.binop(self.atom(b.binop(m, gast.Sub(), b.const(1))), gast.Sub(),
                             b.name(index)) if back else b.name(index)
                     for m, back in zip(lengths, backward, strict=True)]
            body = [b.located(b.assign(t, b.subscript(copy.deepcopy(s), item) if r is None
                                       else _range_item(s.args, item)), stmt)
                    for t, s, r, item in zip(targets, seqs, ranges, items, strict=True)] + body
        if index in assigned:  # (a loop nested in it over the same name, `i = i + 1`...)
            # the loop counts with a name of its own, and `index` is an ordinary variable
            counter = self.namer.fresh(index)
            body.insert(0, b.located(b.assign(index, b.name(counter)), stmt))
            index = counter
        self.conditions.append([])
        inner = self.block(body)
        self.conditions.pop()
        self.origin = stmt
        self.emit(b.make(gast.For, target=b.name(index, store=True),
                         iter=b.call(b.name("range"), *bounds), body=inner, orelse=[]))

    def combinatoric(self, stmt: gast.For) -> list[gast.stmt] | None:
        """A loop over `itertools.combinations(s, r)` (`combinations_with_replacement`,
        `permutations(s, r)`, `product(a, b, repeat=m)`; `enumerate` of one) as the nested
        index loops it stands for, in its order: `for i in range(n): for j in range(i + 1,
        n): a, b = s[i], s[j]` (`permutations`: each index in range(n), under `if j !=
        i`; `product`: a loop over each sequence); the sequences and their lengths taken
        once, before the loops, as itertools takes them. A `break` leaves every loop (a
        flag, tested after each inner one). None for any other loop."""
        it, target, start = stmt.iter, stmt.target, None
        resolve = lambda f: self.env.resolve(f, self.locals)  # noqa: E731
        func = resolve(it.func) if isinstance(it, gast.Call) else MISSING
        if func is enumerate and isinstance(target, gast.Tuple) and len(target.elts) == 2 \
                and it.args and isinstance(it.args[0], gast.Call) and \
                resolve(it.args[0].func) in _COMBINATORIC:
            start = it.args[1] if len(it.args) > 1 else next(
                (k.value for k in it.keywords if k.arg == "start"), b.const(0))
            (count_target, target), it = target.elts, it.args[0]
            func = resolve(it.func)
        if func is zip and any(isinstance(a, gast.Call) and resolve(a.func) in _COMBINATORIC
                               for a in it.args):
            raise self.error(stmt, "zip(...) of itertools.combinations, product or "
                                   "permutations cannot be differentiated: loop over the "
                                   "itertools call, and index the other sequence")
        if func not in _COMBINATORIC:
            return None
        what = f"itertools.{func.__name__}"
        options = {k.arg: k.value for k in it.keywords}
        if any(isinstance(a, gast.Starred) for a in it.args) or None in options:
            raise self.error(stmt, f"{what}(*...) cannot be differentiated: name each "
                                   f"sequence")
        body = copy.deepcopy(stmt.body)
        assigned = {n.id for s in body for n in gast.walk(s)
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        for seq in it.args:   # (itertools takes the items before the loop; an index, after)
            names = {n.id for n in gast.walk(seq) if isinstance(n, gast.Name)}
            for name in sorted(written_sharing(names, body, self.whole, self.env,
                                               self.locals)):
                raise self.error(stmt, f"this loop writes into {name!r}, which shares the "
                                       f"array whose items {what} takes before it starts: "
                                       f"loop over a copy (np.copy(...))")
        out: list[gast.stmt] = []
        if start is not None:   # enumerate(...): a count of the items
            counter = self.namer.fresh("count")
            out.append(b.assign(counter, self.atom(start)))
            body = [b.assign(count_target, b.name(counter)),
                    b.assign(counter, b.binop(b.name(counter), gast.Add(), b.const(1)))] + body
        if func is itertools.product:
            repeat = int_value(options.pop("repeat", b.const(1)))
            if options or repeat is None or repeat < 0:
                raise self.error(stmt, f"{what}(...) is differentiated with an int literal "
                                       f"repeat= as its only option")
            seqs = [r if (r := self.range_args(a)) is not None else self.stable(
                self.atom(a), assigned) for a in it.args]
            seqs = [b.call(b.name("range"), *(self.stable(self.atom(a), assigned) for a in s))
                    if isinstance(s, list) else s for s in seqs] * repeat
            names = [self.namer.fresh("item") for _ in seqs]
            heads = [(b.name(n, store=True), s, None) for n, s in zip(names, seqs, strict=True)]
        else:
            seq = it.args[0] if it.args else options.pop("iterable", None)
            r = it.args[1] if len(it.args) > 1 else options.pop("r", None)
            if seq is None or options or len(it.args) > 2:
                raise self.error(stmt, f"{what}(...) is differentiated with a sequence and "
                                       f"r as its arguments")
            if r is None and func is itertools.permutations and \
                    (known := self.items(seq)) is not None:
                r = b.const(len(known))
            r = int_value(r) if r is not None else None
            if r is None or r < 0:
                raise self.error(stmt, f"{what}(...) is differentiated with r an int literal "
                                       f"(the number of loops it nests)")
            bounds = self.range_args(seq)
            if bounds is not None:
                bounds = [self.stable(self.atom(a), assigned) for a in bounds]
                seq = b.call(b.name("range"), *bounds)
            else:
                seq = self.stable(self.atom(seq), assigned)
            n = self.atom(b.call(b.name("len"), copy.deepcopy(seq)))
            indices = [self.namer.fresh(c) for c in "ijklm"[:r]] if r <= 5 else \
                [self.namer.fresh("i") for _ in range(r)]
            heads = []
            for k, index in enumerate(indices):
                low = [] if k == 0 or func is itertools.permutations else [b.binop(
                    b.name(indices[k - 1]), gast.Add(), b.const(1))
                    if func is itertools.combinations else b.name(indices[k - 1])]
                other = [b.make(gast.Compare, left=b.name(index), ops=[gast.NotEq()],
                                comparators=[b.name(i)]) for i in indices[:k]] \
                    if func is itertools.permutations else []
                test = None if not other else other[0] if len(other) == 1 else \
                    b.make(gast.BoolOp, op=gast.And(), values=other)
                heads.append((b.name(index, store=True),
                              b.call(b.name("range"), *low, copy.deepcopy(n)), test))
            items = [_range_item(bounds, b.name(i)) if bounds is not None else
                     b.subscript(copy.deepcopy(seq), b.name(i)) for i in indices]
            body = [b.assign(target, b.tuple_(items))] + body
            target = None
        if target is not None:
            body = [b.assign(target, b.tuple_([b.name(h[0].id) for h in heads]))] + body
        broke = None
        if _own_breaks(body):   # (a break leaves them all, as it leaves the user's loop)
            broke = self.namer.fresh("broke")
            _flag_breaks(body, broke)
            out.append(b.assign(broke, b.const(False)))
        for k in range(len(heads) - 1, -1, -1):
            index, iterable, test = heads[k]
            inner = body if test is None else [b.make(gast.If, test=test, body=body)]
            body = [b.make(gast.For, target=index, iter=iterable, body=inner, orelse=[])]
            if broke is not None and k > 0:
                body.append(b.make(gast.If, test=b.name(broke), body=[b.make(gast.Break)]))
        return [b.located(s, stmt) for s in out + body]

    def range_args(self, node: gast.AST) -> list[gast.AST] | None:
        """The arguments of `range(...)` (the builtin), a loop's sequence; else None."""
        if isinstance(node, gast.Call) and 1 <= len(node.args) <= 3 and not node.keywords \
                and self.env.resolve(node.func, self.locals) is range:
            return node.args
        return None

    def reversed_arg(self, node: gast.AST) -> gast.AST | None:
        """`s` of `reversed(s)` (the builtin), a loop's sequence; else None."""
        if isinstance(node, gast.Call) and len(node.args) == 1 and not node.keywords and \
                self.env.resolve(node.func, self.locals) is reversed:
            return node.args[0]
        return None

    def while_(self, stmt: gast.While) -> None:
        outer, self.out = self.out, []
        test = self.operation(stmt.test)
        if self.out:  # the test takes statements: they run before the loop and at its end
            tmp = self.namer.temp()
            self.emit(b.assign(tmp, test))
            test = b.name(tmp)
        condition, self.out = self.out, outer
        for s in condition:
            self.out.append(copy.deepcopy(s))
        self.conditions.append(condition)
        inner = self.block(stmt.body)
        self.conditions.pop()
        if not inner or not isinstance(inner[-1], (gast.Break, gast.Continue)):
            inner += [copy.deepcopy(s) for s in condition]
        self.origin = stmt
        self.emit(b.make(gast.While, test=test, body=inner, orelse=[]))

    def hook(self, stmt: gast.With) -> None:
        """`with grad_of(h) as dh:` (checked by `annotate`), its block normalized."""
        body = self.block(stmt.body)
        self.origin = stmt
        if body:
            item = copy.deepcopy(stmt.items[0])
            self.emit(b.make(gast.With, items=[item], body=body))

    def stable(self, atom: gast.AST, assigned: set[str]) -> gast.AST:
        """`atom`, or a copy of it taken before the loop if the loop body assigns it."""
        if isinstance(atom, gast.Name) and atom.id in assigned:
            tmp = self.namer.temp()
            self.emit(b.assign(tmp, atom))
            return b.name(tmp)
        return atom

    def assign(self, targets: list[gast.AST], value: gast.AST) -> None:
        if len(targets) > 1:
            value = self.atom(value)
        for target in targets:
            self.bind(target, value)

    def bind(self, target: gast.AST, value: gast.AST) -> None:
        if isinstance(target, gast.Name) and (listed := self.sorted_list(value)) is not None:
            value = listed   # (the list the name holds, built in place)
        if isinstance(target, gast.Name) and self.appended_list(value) and not any(
                isinstance(n, gast.Name) and n.id == target.id for n in gast.walk(value)):
            self.comprehension(value, target.id)   # (the list the name holds, built in place)
        elif isinstance(target, gast.Name):
            self.emit(b.assign(target.id, self.operation(value)))
        elif isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name):
            index = self.index(target.slice)
            self.emit(b.assign(b.subscript(b.name(target.value.id), index, store=True),
                               self.atom(value)))
        elif isinstance(target, (gast.Tuple, gast.List)):
            if any(isinstance(t, gast.Starred) for t in target.elts):
                if (unpacked := self.starred(target, value)) is None:
                    return   # (bound there)
                target, value = unpacked
            if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(target.elts):
                # `a, b = b, a`: take every value before binding any target
                parts = [self.copy_if_bound(self.atom(v), target) if not isinstance(
                    v, (gast.Tuple, gast.List)) else b.make(type(v), elts=[
                        self.copy_if_bound(self.atom(e), target) for e in v.elts],
                    ctx=gast.Load()) for v in value.elts]   # (`rest = [_t2, _t3]`)
            else:
                whole = self.atom(value)
                parts = [b.subscript(copy.deepcopy(whole), b.const(i))
                         for i in range(len(target.elts))]
            for sub, part in zip(target.elts, parts, strict=True):
                self.bind(sub, part)
        else:
            raise self.error(target, f"assignment to a {type(target).__name__.lower()} "
                                     f"cannot be differentiated")

    def starred(self, target: gast.Tuple | gast.List, value: gast.AST
                ) -> tuple[gast.Tuple, gast.Tuple] | None:
        """`first, *rest = <n items>` as `first, rest = item0, [item1, ...]`: the items of
        a list or tuple display, or of a name `fixed_displays` knows, whose length is known
        when srcgrad compiles (Python's starred target is a list of the items left). Of
        any other value, its items bound here (`unpacked`), and None."""
        star = next(k for k, t in enumerate(target.elts) if isinstance(t, gast.Starred))
        after = len(target.elts) - star - 1
        names = [t.value if isinstance(t, gast.Starred) else t for t in target.elts]
        if (whole := shown(value, self.displays)) is None:   # an array's items, a list's
            self.unpacked(names, star, value)
            return None
        items = whole.elts
        if len(items) < len(target.elts) - 1:
            raise self.error(target, f"not enough values to unpack: {len(items)} items into "
                                     f"{len(target.elts) - 1} names and a starred one")
        rest = b.make(gast.List, elts=items[star:len(items) - after], ctx=gast.Load())
        return b.tuple_(names, store=True), b.tuple_(items[:star] + [rest] +
                                                     items[len(items) - after:])

    def unpacked(self, names: list[gast.AST], star: int, value: gast.AST) -> None:
        """`first, *rest = x` of a value whose length srcgrad does not know (an array, a
        list): each name bound to its item, `first = x[0]` (`x[-1]` after the starred
        one), the starred one to the list of the items left, `rest = [x[k] for k in
        range(1, len(x))]` (a list, as Python's; `np.array(rest)` an array the loop
        fills), every item taken before any name is bound; fewer items than names
        raises ValueError, as Python does."""
        after = len(names) - star - 1
        if not isinstance(names[star], gast.Name):
            raise self.error(names[star], "a starred target of a value whose length srcgrad "
                                          "does not know is a name")
        seq = self.copy_if_bound(self.atom(value), b.tuple_(names))
        n = self.atom(b.call(b.name("len"), seq))
        few = self.atom(b.make(gast.Compare, left=n, ops=[gast.Lt()],
                               comparators=[b.const(len(names) - 1)]))
        self.emit(b.make(gast.If, test=few, body=[b.make(gast.Raise, exc=b.call(
            b.name("ValueError"), b.const(f"not enough values to unpack (expected at least "
                                          f"{len(names) - 1})")))], orelse=[]))
        first = [self.copy_if_bound(self.atom(b.subscript(seq, b.const(j))), b.tuple_(names))
                 for j in range(star)]
        last = [self.copy_if_bound(self.atom(b.subscript(seq, b.const(j - after))),
                                   b.tuple_(names)) for j in range(after)]
        k = self.namer.fresh("k")
        self.bind(names[star], b.make(gast.ListComp, elt=b.subscript(seq, b.name(k)),
                                      generators=[b.make(
            gast.comprehension, target=b.name(k, store=True), iter=b.call(
                b.name("range"), b.const(star), b.binop(n, gast.Sub(), b.const(after))
                if after else n),
            ifs=[], is_async=0)]))
        for name, part in zip(names[:star] + names[star + 1:], first + last, strict=True):
            self.bind(name, part)

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

    def items(self, node: gast.AST) -> list[gast.expr] | None:
        """The items of an iterable whose length is known now (`displays.known_items`)."""
        return known_items(node, lambda f: self.env.resolve(f, self.locals), self.displays)

    def atom(self, node: gast.AST) -> gast.AST:
        """`node` if it is an atom, else a fresh temporary holding its value."""
        node = self.fold(node)
        if isinstance(node, (gast.Name, gast.Constant)):
            return node
        if isinstance(node, gast.Attribute) and self.is_global(node):
            return node
        if isinstance(node, gast.IfExp):
            return self.if_exp(node)
        if self.appended_list(node):
            return self.comprehension(node)
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
            if (whole := shown(node, self.displays)) is not None:
                return self.operation(whole)   # (a join or a repetition of displays)
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
            if (expanded := self.expanded(node)) is not None:
                return self.operation(expanded)
            if any(isinstance(a, COMPREHENSIONS) for a in node.args) and \
                    reducer(self.env.resolve(node.func, self.locals)) is not None:
                return self.comprehension(node)
            if (pairs := self.pairwise(node)) is not None:
                return self.operation(pairs)
            if (items := self.sorted_items(node)) is not None:
                return items
            if (listed := self.sorted_list(node)) is not None:
                return self.operation(listed)
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
            return self.if_exp(node)
        if isinstance(node, gast.ListComp) and (display := unrolled(node, self.items)) \
                is not None:
            return self.operation(display)
        if self.appended_list(node):
            return self.comprehension(node)
        if isinstance(node, COMPREHENSIONS):
            raise self.error(node, "a generator expression can be differentiated where sum, "
                                   "max, min, any or all reduces it; for its values, write "
                                   "a list comprehension")
        if isinstance(node, gast.NamedExpr):   # `(s := e)`: `s = e`, then s
            self.emit(b.assign(node.target.id, self.atom(node.value)))
            return b.name(node.target.id)
        if isinstance(node, gast.JoinedStr):   # (print(f"...")): as Python formats it
            template, values = _format_template(node)
            if template is None:
                raise self.error(node, "an f-string whose format spec formats values too "
                                       "cannot be kept in a gradient")
            return b.call(b.name(bound_name(self.env, "formatted", formatted)),
                          b.const(template), *(self.atom(v) for v in values))
        raise self.error(node, f"'{type(node).__name__}' expressions cannot be differentiated")

    def pairwise(self, node: gast.Call) -> gast.AST | None:
        """`max(a, b, c)`, `max([a, b, c])` or `max(L)` of a fixed display
        (`fixed_displays`; min alike) as `max(max(a, b), c)` (with `key=`: `keyed`), and
        `math.prod([a, b, c])` as `a * b * c`: the operations Python makes, in its order
        (so ties pick the same item); None for any other call."""
        func = self.env.resolve(node.func, self.locals)
        if func is math.prod:
            start = [k.value for k in node.keywords if k.arg == "start"]
            whole = shown(node.args[0], self.displays) if len(node.args) == 1 else None
            if whole is None or len(node.keywords) != len(start):
                return None
            items = start + whole.elts
            if not items:
                return b.const(1)
            pair = lambda a, c: b.binop(a, gast.Mult(), c)  # noqa: E731
        elif func is max or func is min:
            items = node.args
            key = next((k.value for k in node.keywords if k.arg == "key"), None)
            if len(node.keywords) != (key is not None):
                return None
            if isinstance(key, gast.Constant) and key.value is None:   # Python's default
                return b.make(gast.Call, func=node.func, args=items, keywords=[])
            if len(items) == 1 and (whole := shown(items[0], self.displays)) is not None:
                items = whole.elts   # max([a, b, c]), L = [a, b, c]; max(L), max(L + [d])
            elif key is not None and len(items) == 1:   # max(x, key=f): x's items
                item = self.namer.fresh("item")
                return self.comprehension(b.make(gast.Call, func=node.func, args=[b.make(
                    gast.GeneratorExp, elt=b.name(item), generators=[b.make(
                        gast.comprehension, target=b.name(item, store=True), iter=items[0],
                        ifs=[], is_async=0)])], keywords=node.keywords))
            elif len(items) < 3 and key is None:
                return None
            pair = lambda a, c: b.make(gast.Call, func=copy.deepcopy(node.func),  # noqa: E731
                                       args=[a, c], keywords=[])
        else:
            return None
        if not items or any(isinstance(e, gast.Starred) for e in items):
            return None
        if func in (max, min) and key is not None:
            return self.keyed(items, key, gast.Gt() if func is max else gast.Lt())
        folded = items[0]
        for item in items[1:]:
            folded = pair(folded, item)
        return folded

    def keyed(self, items: list[gast.AST], key: gast.AST, better: gast.cmpop) -> gast.Name:
        """`max(items, key=f)` (`min`: `better` is `<`): the first item whose key no
        later one beats, as Python picks it; the gradient goes to that item (the keys
        only compare)."""
        best = self.atom(items[0])
        score = self.atom(b.make(gast.Call, func=copy.deepcopy(key), args=[best],
                                 keywords=[]))
        for item in items[1:]:
            value = self.atom(item)
            mark = self.atom(b.make(gast.Call, func=copy.deepcopy(key), args=[value],
                                    keywords=[]))
            test = self.atom(b.make(gast.Compare, left=mark, ops=[copy.deepcopy(better)],
                                    comparators=[score]))
            pick, top = self.namer.temp(), self.namer.temp()
            self.emit(b.make(gast.If, test=test,
                             body=[b.assign(pick, value), b.assign(top, mark)],
                             orelse=[b.assign(pick, best), b.assign(top, score)]))
            best, score = b.name(pick), b.name(top)
        return best

    def sorted_items(self, node: gast.Call) -> gast.List | None:
        """`sorted(L)` of a list or tuple display, or of a name `fixed_displays` knows,
        not all constants: the list display of the items of `np.sort(np.array(L))`
        (whose rule gives each position's gradient to the item that lands there, ties in
        their order, as Python's sort is stable); `reverse=True` sorts the negated
        items. With `key=f`, the items `L[order[k]]` (numbers or arrays), the order the
        stable argsort of the keys f(item) gives (of the negated keys with
        `reverse=True`): the keys only decide the order, on the primal values (no
        gradient flows through them, as in JAX), and each position's gradient goes to
        the item that lands there. Guards refuse items (without a key) or keys that are
        not numbers (np.array would make rows of arrays). None for any other call."""
        if self.env.resolve(node.func, self.locals) is not sorted or len(node.args) != 1:
            return None
        arg = node.args[0]
        if (whole := shown(arg, self.displays)) is None:
            return None
        items = whole.elts
        if all(isinstance(e, gast.Constant) for e in items):
            return None
        options = {k.arg: k.value for k in node.keywords}
        key = options.pop("key", None)
        if isinstance(key, gast.Constant) and key.value is None:   # Python's default
            key = None
        reverse = options.pop("reverse", b.const(False))
        if options or not isinstance(reverse, gast.Constant):
            raise self.error(node, "sorted(...) is differentiated with a constant "
                                   "reverse= and a key= as its only options")
        if not items:
            return b.make(gast.List, elts=[], ctx=gast.Load())
        np_ = bound_name(self.env, "np", np)
        if not isinstance(arg, gast.Name):   # each item computed once, for the list and key
            items = [self.atom(item) for item in items]
        listed = arg if isinstance(arg, gast.Name) else \
            self.atom(b.make(gast.List, elts=items, ctx=gast.Load()))
        if key is not None:
            keys = self.atom(b.call(b.dotted(f"{np_}.array"), b.make(gast.List, elts=[
                self.atom(b.make(gast.Call, func=copy.deepcopy(key),
                                 args=[self.atom(copy.deepcopy(item))], keywords=[]))
                for item in items], ctx=gast.Load())))
            self.numbers(keys, "srcgrad differentiates sorted(..., key=f) where f gives "
                               "numbers")
            if reverse.value:   # descending, equal keys in their order (a stable sort)
                keys = self.atom(b.make(gast.UnaryOp, op=gast.USub(), operand=keys))
            order = self.atom(b.make(gast.Call, func=b.dotted(f"{np_}.argsort"), args=[keys],
                                     keywords=[b.make(gast.keyword, arg="kind",
                                                      value=b.const("mergesort"))]))
            return b.make(gast.List, elts=[self.atom(b.subscript(listed, self.atom(
                b.subscript(order, b.const(k))))) for k in range(len(items))], ctx=gast.Load())
        array = self.atom(b.call(b.dotted(f"{np_}.array"), listed))
        self.numbers(array, "srcgrad differentiates sorted() of a list of numbers (of "
                            "arrays, with a key= that gives numbers)")
        if reverse.value:   # descending, equal items in their order (a stable sort)
            array = self.atom(b.make(gast.UnaryOp, op=gast.USub(), operand=array))
        ordered = self.atom(b.call(b.dotted(f"{np_}.sort"), array))
        if reverse.value:
            ordered = self.atom(b.make(gast.UnaryOp, op=gast.USub(), operand=ordered))
        return b.make(gast.List, elts=[self.atom(b.subscript(ordered, b.const(k)))
                                       for k in range(len(items))], ctx=gast.Load())

    def sorted_list(self, node: gast.AST) -> gast.ListComp | None:
        """`sorted(L, key=f)` of a list whose items srcgrad does not know (built by
        appends, an argument): `[L[k] for k in order]`, the order the stable argsort of
        the keys `np.array([f(v) for v in L])` gives (of the negated keys with
        `reverse=True`), L taken once; the keys decide the order only, as in
        `sorted_items`. None for any other node."""
        if not (isinstance(node, gast.Call) and len(node.args) == 1 and
                self.env.resolve(node.func, self.locals) is sorted and
                shown(node.args[0], self.displays) is None):
            return None
        options = {k.arg: k.value for k in node.keywords}
        key, reverse = options.pop("key", None), options.pop("reverse", b.const(False))
        if key is None or isinstance(key, gast.Constant) or options or \
                not isinstance(reverse, gast.Constant):
            return None
        np_ = bound_name(self.env, "np", np)
        seq = self.atom(node.args[0])
        item, k = self.namer.fresh("item"), self.namer.fresh("k")
        keys = self.atom(b.call(b.dotted(f"{np_}.array"), b.make(
            gast.ListComp, elt=b.make(gast.Call, func=copy.deepcopy(key), args=[b.name(item)],
                                      keywords=[]),
            generators=[b.make(gast.comprehension, target=b.name(item, store=True),
                               iter=copy.deepcopy(seq), ifs=[], is_async=0)])))
        self.numbers(keys, "srcgrad differentiates sorted(..., key=f) where f gives numbers")
        if reverse.value:
            keys = self.atom(b.make(gast.UnaryOp, op=gast.USub(), operand=keys))
        order = self.atom(b.make(gast.Call, func=b.dotted(f"{np_}.argsort"), args=[keys],
                                 keywords=[b.make(gast.keyword, arg="kind",
                                                  value=b.const("mergesort"))]))
        return b.make(gast.ListComp, elt=b.subscript(seq, b.name(k)), generators=[b.make(
            gast.comprehension, target=b.name(k, store=True), iter=order, ifs=[],
            is_async=0)])

    def numbers(self, array: gast.Name, message: str) -> None:
        """A guard: `array` (np.array of a list) is 1-D, as it is of numbers alone."""
        rank = self.atom(b.make(gast.Attribute, value=array, attr="ndim", ctx=gast.Load()))
        one = self.atom(b.make(gast.Compare, left=rank, ops=[gast.Eq()],
                               comparators=[b.const(1)]))
        self.emit(b.make(gast.Assert, test=one, msg=b.const(message)))

    def expanded(self, node: gast.Call) -> gast.AST | None:
        """A call given options its rule lacks, written by its record's `expanded`
        (`np.sum(x, where=m)` as `np.sum(np.where(m, x, 0))`, `x.max(initial=c)` as
        `np.maximum(np.max(x), c)`), its options taken once each; None for other calls."""
        if any(k.arg is None for k in node.keywords) \
                or any(isinstance(a, gast.Starred) for a in node.args):
            return None
        func, args = node.func, list(node.args)
        obj = self.env.resolve(func, self.locals)
        if obj is MISSING and isinstance(func, gast.Attribute):   # x.sum(where=m)
            obj, args = methods().get(func.attr), [func.value] + args
        how = fact(obj, "expanded") if obj is not None and obj is not MISSING else None
        if how is None:
            return None
        try:
            bound = inspect.signature(fact(obj, "signature") or obj).bind(
                *args, **{k.arg: k.value for k in node.keywords})
        except (TypeError, ValueError):
            return None
        defaults = bound.signature.parameters
        given = {k: v for k, v in bound.arguments.items()   # (out=None, where=True given)
                 if not (isinstance(v, gast.Constant) and v.value is defaults[k].default
                         and (v.value is None or isinstance(v.value, bool)))}
        if "out" in given:
            return None
        try:
            source = how({k: _literal(v) for k, v in given.items()})
        except RuleError as exc:
            raise RuleError(exc.message, filename=self.filename,
                            lineno=getattr(node, "lineno", None)) from None
        if source is None:
            return None
        options = {k: self.atom(self.as_tuple(v, node.func)) for k, v in given.items()}
        options.update({p.name: b.const(p.default) for p in bound.signature.parameters.values()
                        if p.name not in options and type(p.default) is int})   # ddof
        if isinstance(source, tuple):   # (the source, the helpers it names: name -> object)
            source, helpers = source
            options.update({k: b.name(bound_name(self.env, k, v)) for k, v in helpers.items()})
        options["np"] = b.name(bound_name(self.env, "np", np))
        return _Options(options).visit(gast.parse(source).body[0].value)

    def appended_list(self, node: gast.AST) -> bool:
        """Whether `node` is a list comprehension made by appends in its loops (not the
        list display it stands for: `unrolled`)."""
        return isinstance(node, gast.ListComp) and unrolled(node, self.items) is None

    def comprehension(self, node: gast.Call | gast.ListComp, name: str | None = None
                      ) -> gast.Name:
        """A call reducing a comprehension (`sum(... for ...)`), or a list comprehension
        whose list is the value (in `name`, if given): its loop, normalized here at the
        line of the statement it is in (`comprehensions.lower`, `comprehensions.appended`)."""
        if isinstance(node, gast.ListComp):
            stmts, result = appended(node, self.namer, self.shared, self.error, name)
        else:
            func = self.env.resolve(node.func, self.locals)
            stmts, result = lower(node, func, self.namer, self.shared, self.error, self.items)
        origin = self.origin
        stmts = [b.located(s, origin) for s in stmts]
        self.locals = self.locals | assigned_names(b.function("_", [], stmts))
        for stmt in stmts:
            self.statement(stmt)
        self.origin = origin
        return result

    def if_exp(self, node: gast.IfExp) -> gast.AST:
        """`a if c else b`: an if statement that sets a temporary (only the branch taken
        is evaluated, as in Python)."""
        test, tmp, origin = self.atom(node.test), self.namer.temp(), self.origin
        body, orelse = [self.block([b.located(b.assign(tmp, value), origin)])
                        for value in (node.body, node.orelse)]
        self.origin = origin
        self.emit(b.make(gast.If, test=test, body=body, orelse=orelse))
        return b.name(tmp)

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
        args = [self.atom(self.as_tuple(a, node.func)) for a in node.args]
        keywords = [b.make(gast.keyword, arg=k.arg, value=self.atom(k.value))
                    for k in node.keywords]
        return b.make(gast.Call, func=func, args=args, keywords=keywords)

    def as_tuple(self, arg: gast.AST, func: gast.AST) -> gast.AST:
        """A list display passed to a join (`np.concatenate([a, b])`, `sum([x, y])`), or a
        list comprehension that stands for one passed to a NumPy function (`np.stack([...])`),
        as a tuple display: they read the two alike, and numba joins, stacks and adds up
        tuples of numbers and arrays, not lists of them."""
        obj = self.env.resolve(func, self.locals)
        if isinstance(arg, gast.List) and fact(obj, "sequence"):
            return b.tuple_(arg.elts)
        if (getattr(obj, "__module__", None) or "").split(".")[0] != "numpy":
            return arg
        if isinstance(arg, gast.ListComp) and \
                (display := unrolled(arg, self.items)) is not None:
            return b.tuple_(display.elts)
        return arg

    def index(self, node: gast.AST) -> gast.AST:
        if isinstance(node, gast.Slice):
            return b.make(gast.Slice, **{f: self.atom(getattr(node, f)) if getattr(node, f)
                                         is not None else None
                                         for f in ("lower", "upper", "step")})
        if isinstance(node, gast.Tuple):
            return b.tuple_([self.index(e) for e in node.elts])
        return self.atom(node)


def _literal(node: gast.AST) -> Any:
    """The value of a literal option (`-1` too), else `NOT_CONSTANT`."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) and \
            isinstance(node.operand, gast.Constant) and type(node.operand.value) in (int, float):
        return -node.operand.value
    return node.value if isinstance(node, gast.Constant) else NOT_CONSTANT


_COMBINATORIC = (itertools.combinations, itertools.combinations_with_replacement,
                 itertools.permutations, itertools.product)


class _Options(gast.NodeTransformer):
    """An expression's names of options (`a`, `axis`, `where`, `np`) made the call's
    values (copies); a keyword whose option the call does not give is left out."""

    def __init__(self, options: dict[str, gast.AST]):
        self.options = options

    def visit_Name(self, node: gast.Name) -> gast.AST:
        return copy.deepcopy(self.options[node.id]) if node.id in self.options else node

    def visit_Call(self, node: gast.Call) -> gast.AST:
        node.keywords = [k for k in node.keywords if not isinstance(k.value, gast.Name)
                         or k.value.id in self.options or k.value.id in ("True", "False")]
        return self.generic_visit(node)


def _format_template(node: gast.JoinedStr) -> tuple[str | None, list[gast.AST]]:
    """An f-string as a `str.format` template and the values it formats in order:
    `f"loss {y:.3f}"` is ("loss {:.3f}", [y]); (None, []) where a format spec formats a
    value itself (`f"{y:{width}}"`)."""
    template, values = [], []
    for part in node.values:
        if isinstance(part, gast.Constant):
            template.append(str(part.value).replace("{", "{{").replace("}", "}}"))
            continue
        field = "{" + ("!" + chr(part.conversion) if part.conversion not in (-1, None) else "")
        spec = part.format_spec
        if spec is not None:
            if not all(isinstance(p, gast.Constant) for p in spec.values):
                return None, []
            field += ":" + "".join(str(p.value) for p in spec.values)
        template.append(field + "}")
        values.append(part.value)
    return "".join(template), values


def _template(node: gast.AST) -> gast.AST:
    """An f-string that is an error's message (`assert ok, f"bad {x.shape}"`, `raise
    ValueError(f"...")`) as the constant text of its template, "bad {x.shape}": numba
    formats no values into strings. Any other node as it is."""
    if not isinstance(node, gast.JoinedStr):
        return node
    return b.const(ast.literal_eval(ast.unparse(gast.gast_to_ast(node))[1:]))   # (f'..')


def _range_item(args: list[gast.AST], position: gast.AST) -> gast.AST:
    """Item `position` of `range(*args)`: `start + position * step`."""
    item = position if len(args) < 3 else b.binop(position, gast.Mult(), copy.deepcopy(args[2]))
    return item if len(args) < 2 else b.binop(copy.deepcopy(args[0]), gast.Add(), item)


def _single_assignment(body: list[gast.stmt], params: list[str], namer: Namer) -> list[gast.stmt]:
    """Rename every re-assignment (`x = ...` after `x` exists) to a fresh version `x_1`.

    Only names assigned outside loops and branches are renamed (straight-line code);
    a name assigned inside one keeps its name everywhere, and the tape restores the
    values it overwrites."""
    nested = {n.id for s in body if isinstance(s, (gast.If, gast.For, gast.While))
              for n in gast.walk(s) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    current = {p: p for p in params}
    for stmt in body:
        for node in gast.walk(stmt.value if isinstance(stmt, gast.Assign) else stmt):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                node.id = current.get(node.id, node.id)
        if isinstance(stmt, gast.Assign):
            for node in gast.walk(stmt.targets[0]):  # the base and index of `x[i] = ...`
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
                    node.id = current.get(node.id, node.id)
            if isinstance(stmt.targets[0], gast.Name):
                target = stmt.targets[0].id
                if target not in nested:
                    new = namer.fresh(target) if target in current else target
                    current[target] = new
                    stmt.targets[0].id = new
    return body

