"""How a rule becomes generated code: `instantiate` copies a rule into a call site.

A rule whose body is a single ``return`` is inlined: its expression is copied into the
generated adjoint with the parameters replaced by the call's operands, so the source
reads like a hand-written gradient. A longer rule is called as a (numba-compiled) helper.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gast

from .. import builder as b
from ..errors import RuleError
from ..frontend.parse import is_user_function
from ..runtime import unbroadcast
from ..runtime.complex_numbers import real_values
from . import MISSING_DEFAULT, Rule, fact


@dataclass
class Instance:
    """A rule applied at one call site: per-argument gradient expressions, or one call
    returning the tuple of gradients, plus the global objects the expressions name."""

    per_arg: list[gast.AST | None] | None
    whole: gast.AST | None
    needs: dict[str, tuple[Any, bool]]  # name -> (object, compile it with numba?)


def instantiate(r: Rule, dy: gast.AST, y: gast.AST, args: list[gast.AST],
                kwargs: dict[str, gast.AST], rename: Callable[[str, Any], str],
                scalar_dy: bool = False) -> Instance:
    """Copy `r` into the call site: parameters become the call's operands.

    `rename(name, obj)` returns the name under which the generated module binds `obj`
    (the rule's own global name unless that clashes). `scalar_dy`: dy is a scalar that
    stands for an array of y's shape (see `uniform`), so every `unbroadcast` stays.
    """
    if len(args) > len(r.params) + len(r.defaults):
        raise RuleError(f"gradient rule {r.name} takes {len(r.params)} argument(s), the "
                        f"call passes {len(args)}")
    names = list(r.params) + list(r.defaults)
    sig = inspect.signature(r.fn)
    p_dy, p_y = list(sig.parameters)[:2]
    needs: dict[str, tuple[Any, bool]] = {}
    subst: dict[str, gast.AST] = {p_dy: dy, p_y: y}
    for pname, arg in zip(names, args, strict=False):  # the rest take their defaults
        subst[pname] = arg
    if r.real_only:
        checker = rename("real_values", real_values)
        needs[checker] = (real_values, False)
        for pname in r.params[:len(args)] + ([p_y] if _reads_only_y(r) else []):
            subst[pname] = b.call(b.name(checker), subst[pname], b.const(r.name))
    for pname, default in r.defaults.items():
        if pname not in subst:
            subst[pname] = kwargs.get(pname, b.const(default))
    for pname in kwargs:
        if pname not in r.defaults:
            raise RuleError(f"gradient rule {r.name} has no parameter {pname!r} for the "
                            f"call's argument {pname}=: srcgrad differentiates the call "
                            f"without it")
    missing = [p for p in r.params if p not in subst]
    if missing:
        raise RuleError(f"this call passes {len(args)} argument(s), and the gradient rule "
                        f"{r.name} takes {len(r.params)} ({', '.join(r.params)}): no rule "
                        f"differentiates this form of the call (for max or min of one list, "
                        f"write np.max(np.array(L)))")
    if r.template is None:
        fname = rename(r.fn.__name__, r.fn)
        needs[fname] = (r.fn, True)
        call = b.call(b.name(fname), *[subst[p] for p in [p_dy, p_y] + names])
        return Instance(None, call, needs)
    glob = r.globals_of()

    def fill(expr: gast.AST | None, position: int | None) -> gast.AST | None:
        if expr is None:
            return None
        expr = _Substitute(subst, glob, rename, needs).visit(copy.deepcopy(expr))
        expr = _drop_defaults(_faster(expr, needs, rename), needs)
        if position is not None and not scalar_dy and r.elementwise:
            # (only there is y as large as its operands: np.broadcast_to(x, 3)'s constant
            # is a shape; the keyword operands count too)
            others = [a for i, a in enumerate(args) if i != position] + list(kwargs.values())
            expr = _drop_unbroadcast(expr, others, needs)
        return fold(expr)

    if isinstance(r.template, list):
        return Instance([fill(e, i) for i, e in enumerate(r.template)], None, needs)
    return Instance(None, fill(r.template, None), needs)


def shared(parts: list[gast.AST], needs: dict[str, tuple[Any, bool]],
           temp: Callable[[], str]) -> tuple[list[gast.stmt], list[gast.AST]]:
    """The gradient expressions `parts` of one rule at one call site, where each call of
    a function marked `once` (a solve, an inverse) that they make more than once with the
    same operands is made once, into a temporary: the assignments of those temporaries,
    and the expressions reading them. (Rules are pure, so computing a call first changes
    nothing but the cost: `scipy.linalg.cho_solve`'s rule solves with dy once for both
    arguments' gradients, not three times.)"""
    counts: dict[str, int] = {}
    for e in parts:
        for n in gast.walk(e):
            if isinstance(n, gast.Call) and fact(_callee(n.func, needs), "once"):
                key = gast.dump(n)
                counts[key] = counts.get(key, 0) + 1
    repeated = {k for k, c in counts.items() if c > 1}
    pre: list[gast.stmt] = []
    names: dict[str, str] = {}

    class Once(gast.NodeTransformer):
        def visit_Call(self, node: gast.Call) -> gast.AST:
            key = gast.dump(node)
            if key not in repeated:
                return self.generic_visit(node)
            if key not in names:
                names[key] = temp()
                pre.append(b.assign(names[key], self.generic_visit(node)))
            return b.name(names[key])

    return pre, [Once().visit(e) for e in parts]


def _callee(func: gast.AST, needs: dict[str, tuple[Any, bool]]) -> Any:
    """The object a call's function names in inlined code (`scipy.linalg.cho_solve`)."""
    if isinstance(func, gast.Name):
        return needs.get(func.id, (None,))[0]
    if isinstance(func, gast.Attribute):
        return getattr(_callee(func.value, needs), func.attr, None)
    return None


def _reads_only_y(r: Rule) -> bool:
    """Whether `r`'s template reads none of the primal's arguments (eigh's reads its
    result): then the result is what `real_values` checks."""
    parts = r.template if isinstance(r.template, list) else [r.template]
    read = {n.id for e in parts if e is not None for n in gast.walk(e)
            if isinstance(n, gast.Name)}
    return r.template is not None and not read & set(r.params)


class _Substitute(gast.NodeTransformer):
    def __init__(self, subst, glob, rename, needs):
        self.subst, self.glob, self.rename, self.needs = subst, glob, rename, needs

    def visit_Name(self, node: gast.Name) -> gast.AST:
        if node.id in self.subst:
            return copy.deepcopy(self.subst[node.id])
        obj = self.glob.get(node.id)
        if obj is None:
            import builtins
            obj = getattr(builtins, node.id)
        new = self.rename(node.id, obj)
        self.needs[new] = (obj, is_user_function(obj))  # a user's helper: compiled too
        return b.name(new)


def _faster(expr: gast.AST, needs: dict[str, tuple[Any, bool]],
            rename: Callable[[str, Any], str]) -> gast.AST:
    """The calls of NumPy functions whose numba form is slow on what rules give them
    (`np.where(cond, dy, 0.0)`) call srcgrad's form instead (their records' `faster`)."""
    for node in gast.walk(expr):
        if not isinstance(node, gast.Call):
            continue
        func = node.func
        if isinstance(func, gast.Name):
            obj = needs.get(func.id, (None,))[0]
        elif isinstance(func, gast.Attribute) and isinstance(func.value, gast.Name):
            obj = getattr(needs.get(func.value.id, (None,))[0], func.attr, None)
        else:
            continue
        form = fact(obj, "faster")
        if form is not None:
            name = rename(form.__name__, form)
            needs[name] = (form, False)
            node.func = b.name(name)
    return expr


def _drop_defaults(expr: gast.AST, needs: dict[str, tuple[Any, bool]]) -> gast.AST:
    """`sum_grad(dy, x, None, False)` is `sum_grad(dy, x)`: trailing arguments equal to the
    helper's own defaults say nothing to a reader."""
    for node in gast.walk(expr):
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
                and node.func.id in needs):
            continue
        try:
            params = list(inspect.signature(needs[node.func.id][0]).parameters.values())
        except (TypeError, ValueError):
            continue
        while node.args and len(node.args) <= len(params):
            last, param = node.args[-1], params[len(node.args) - 1]
            if not (isinstance(last, gast.Constant) and param.default is not MISSING_DEFAULT
                    and type(last.value) is type(param.default)
                    and last.value == param.default):
                break
            node.args.pop()
    return expr


def _drop_unbroadcast(expr: gast.AST, others: list[gast.AST],
                      needs: dict[str, tuple[Any, bool]]) -> gast.AST:
    """`unbroadcast(g, a)` of an elementwise rule is `g` when every other operand is a
    numeric constant, since a scalar constant never broadcasts `a` to a larger shape. It
    stays where one is complex: the unbroadcast keeps the real part of a real `a`'s
    cotangent."""
    if (isinstance(expr, gast.Call) and isinstance(expr.func, gast.Name)
            and needs.get(expr.func.id, (None,))[0] is unbroadcast and len(expr.args) == 2
            and all(isinstance(o, gast.Constant) and isinstance(o.value, (int, float))
                    for o in others)):
        return expr.args[0]
    return expr


_FOLD = {gast.Add: lambda a, c: a + c, gast.Sub: lambda a, c: a - c,
         gast.Mult: lambda a, c: a * c}


def fold(expr: gast.AST) -> gast.AST:
    """Fold constant arithmetic (`2 - 1`) and exact identities (`x ** 1`, `x * 1`)."""
    for node in gast.walk(expr):
        b.map_children(node, lambda v: _fold_binop(v) if isinstance(v, gast.BinOp) else v)
    return _fold_binop(expr) if isinstance(expr, gast.BinOp) else expr


def _is_int(node: gast.AST, value: int) -> bool:
    return (isinstance(node, gast.Constant) and type(node.value) is int
            and node.value == value)


def _fold_binop(node: gast.BinOp) -> gast.AST:
    node.left = _fold_binop(node.left) if isinstance(node.left, gast.BinOp) else node.left
    node.right = _fold_binop(node.right) if isinstance(node.right, gast.BinOp) else node.right
    left, right = node.left, node.right
    if (type(node.op) in _FOLD and isinstance(left, gast.Constant)
            and isinstance(right, gast.Constant)
            and type(left.value) in (int, float) and type(right.value) in (int, float)):
        return b.const(_FOLD[type(node.op)](left.value, right.value))
    if isinstance(node.op, (gast.Pow, gast.Mult)) and _is_int(right, 1):
        return left
    if isinstance(node.op, gast.Mult) and _is_int(left, 1):
        return right
    return node
