"""rules: the table of gradient rules, and how a rule becomes generated code.

A rule is a plain Python function with the public signature ``rule(dy, y, *args)``:
`dy` is the cotangent of the result `y`, and it returns the gradient of the one
argument, or a tuple with one entry per positional argument (`None` where there is no
gradient). Keyword parameters with defaults receive the call's keyword arguments
(``axis``, ``keepdims``). Rules are registered against the primal objects they serve
(``@rule(np.sin, math.sin)``); `nondifferentiable(...)` marks zero-gradient functions
and `constructor(...)` marks producers that may not receive a differentiated value.
Users add rules of their own: `user_rule` checks one and names where it was defined
(its results are shape-checked at run time), `NAMED` holds those registered under a
name for `gradient_override`, and `RULES` also holds `@adjoint` rules of user functions.

A rule whose body is a single ``return`` is inlined: its expression is copied into the
generated adjoint with the parameters replaced by the call's operands, so the source
reads like a hand-written gradient. A longer rule is called as a (numba-compiled) helper.
The rule modules below are imported for their registrations.
"""

from __future__ import annotations

import copy
import inspect
import os
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gast

from .. import builder as b
from ..errors import RuleError
from ..frontend.parse import is_user_function
from ..runtime import FASTER, unbroadcast

MISSING_DEFAULT = inspect.Parameter.empty


@dataclass
class Rule:
    """A gradient rule for one or more primal functions."""

    fn: Callable | None
    kind: str = "rule"          # "rule" | "nondifferentiable" | "constructor"
    params: list[str] = field(default_factory=list)       # positional, after (dy, y)
    defaults: dict[str, Any] = field(default_factory=dict)  # keyword parameters
    template: list[gast.AST | None] | gast.AST | None = None  # inlinable return value
    origin: str | None = None   # "file.py:12" for a user's rule: its results are checked
    elementwise: bool = False   # per-argument templates are `unbroadcast(J_i dy, x_i)`

    @property
    def name(self) -> str:
        return getattr(self.fn, "__name__", self.kind)

    def globals_of(self) -> dict[str, Any]:
        return self.fn.__globals__


RULES: dict[Any, Rule] = {}
NAMED: dict[str, Rule] = {}   # register_gradient("Name") rules, for gradient_override


def _key(primal: Any) -> Any:
    # numpy ufuncs and builtins hash fine; functions wrapped by numpy's dispatch
    # (np.sum is a _ArrayFunctionDispatcher) as well.
    return primal


def make_rule(fn: Callable, body: gast.AST | None = None) -> Rule:
    """Check `fn`'s signature and prepare its template (raises RuleError if malformed).
    `body`: the expression `fn` returns, for a lambda (inspect cannot cut one out of its
    line); else it is read from fn's source."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise RuleError(f"gradient rule {fn!r} has no inspectable signature: {exc}") from None
    ps = list(sig.parameters.values())
    if len(ps) < 3 or any(p.kind not in (p.POSITIONAL_OR_KEYWORD, p.POSITIONAL_ONLY)
                          for p in ps[:3]):
        raise RuleError(f"gradient rule {fn.__qualname__}{sig} must take (dy, y, *args): "
                        f"the cotangent, the result, then the primal's arguments")
    positional = [p.name for p in ps[2:] if p.default is MISSING_DEFAULT
                  and p.kind in (p.POSITIONAL_OR_KEYWORD, p.POSITIONAL_ONLY)]
    defaults = {p.name: p.default for p in ps[2:] if p.default is not MISSING_DEFAULT}
    returned, single = ([body], body) if body is not None else _returned(fn)
    for value in returned:
        _check_count(fn, value, len(positional))
    return Rule(fn, "rule", positional, defaults, _template(single, len(positional)))


def user_rule(fn: Callable, body: gast.AST | None = None) -> Rule:
    """`make_rule` for a rule a user wrote: the error names the rule's file:line, and the
    generated code checks the shapes of the gradients it returns."""
    code = getattr(fn, "__code__", None)
    where = dict(filename=code.co_filename, lineno=code.co_firstlineno) if code else {}
    if not callable(fn):
        raise RuleError(f"a gradient rule must be a function, not {fn!r}", **where)
    try:
        r = make_rule(fn, body)
    except RuleError as exc:
        raise RuleError(exc.message, **where) from None
    if code is not None:
        r.origin = f"{os.path.basename(code.co_filename)}:{code.co_firstlineno}"
    return r


def _returned(fn: Callable) -> tuple[list[gast.AST], gast.AST | None]:
    """What the returns in `fn`'s source give, and the expression of its body if that
    is one return (docstrings aside) or fn is a lambda alone on its line: the template.
    ([], None) without source."""
    try:
        tree = gast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return [], None
    defs = [n for n in tree.body if isinstance(n, gast.FunctionDef)]
    lambdas = [n for n in gast.walk(tree) if isinstance(n, gast.Lambda)]
    if not defs:
        return ([lambdas[0].body], lambdas[0].body) if len(lambdas) == 1 else ([], None)
    values = [n.value for n in gast.walk(defs[0])
              if isinstance(n, gast.Return) and n.value is not None]
    body = [s for s in defs[0].body
            if not (isinstance(s, gast.Expr) and isinstance(s.value, gast.Constant))]
    single = body[0].value if len(body) == 1 and isinstance(body[0], gast.Return) else None
    return values, single


def _check_count(fn: Callable, value: gast.AST | None, nargs: int) -> None:
    """A `return (a, b)` in a rule must give one gradient per positional argument."""
    if isinstance(value, gast.Tuple):
        n = len(value.elts)
    elif isinstance(value, (gast.BinOp, gast.UnaryOp, gast.Compare, gast.Constant)):
        n = 1  # arithmetic gives one gradient (a call might give a tuple: not known)
    else:
        return
    if n != nargs:
        raise RuleError(f"gradient rule {fn.__qualname__} returns {n} gradient(s) "
                        f"but takes {nargs} argument(s) after (dy, y): return one "
                        f"gradient per argument (None for no gradient)")


def rule(*primals: Any, elementwise: bool = False) -> Callable[[Callable], Callable]:
    """Register the decorated function as the gradient rule of every primal given.

    `elementwise`: the primal acts entry by entry (after broadcasting), so its Jacobian
    is diagonal and the rule, with `dy` read as an argument's tangent and without the
    `unbroadcast`, is also its tangent (forward-mode) rule.
    """
    def register(fn: Callable) -> Callable:
        r = make_rule(fn)
        r.elementwise = elementwise
        for p in primals:
            RULES[_key(p)] = r
        return fn
    return register


UNIFORM: dict[Any, Rule] = {}


def uniform(*primals: Any) -> Callable[[Callable], Callable]:
    """Register the decorated function as the *uniform* rule of reductions over every
    axis (`np.sum(x)`, `np.mean(x)`): the cotangent of x, which is the same for every
    entry, as a scalar. The adjoint uses it where x feeds an elementwise rule only, which
    broadcasts it (no array of x's shape is filled)."""
    def register(fn: Callable) -> Callable:
        r = make_rule(fn)
        for p in primals:
            UNIFORM[_key(p)] = r
        return fn
    return register


@dataclass
class Tangent:
    """How forward mode differentiates a primal: `rule`, a tangent rule
    ``tangent(dx, y, *args)`` giving per argument J_i dx (dx: that argument's tangent);
    `linear`, the primal itself applied to the tangents of the arguments at `positions`
    (it is jointly linear in them); `elementwise`, the adjoint rule read as a tangent
    rule; or `nondifferentiable` / `constructor` as for the adjoint."""

    kind: str
    rule: Rule | None = None
    positions: tuple[int, ...] = ()


TANGENTS: dict[Any, Tangent] = {}


def tangent(*primals: Any) -> Callable[[Callable], Callable]:
    """Register the decorated function as the tangent rule of every primal given."""
    def register(fn: Callable) -> Callable:
        r = make_rule(fn)
        for p in primals:
            TANGENTS[_key(p)] = Tangent("rule", r)
        return fn
    return register


def linear(*primals: Any, positions: tuple[int, ...] = (0,)) -> None:
    """Mark primals that are (jointly) linear in the arguments at `positions`: their
    tangent is the primal applied to those arguments' tangents (`np.sum(dx, axis=0)`)."""
    for p in primals:
        TANGENTS[_key(p)] = Tangent("linear", positions=positions)


def lookup_tangent(primal: Any) -> Tangent | None:
    """The forward-mode rule of `primal`; None if it has none (a custom adjoint rule:
    an adjoint is not a tangent, as in JAX's `custom_vjp`)."""
    if isinstance(primal, Overridden):
        return None
    try:
        t = TANGENTS.get(_key(primal))
        r = RULES.get(_key(primal))
    except TypeError:
        return None
    if t is not None:
        return t
    if r is not None and r.origin is None and (r.elementwise or r.kind != "rule"):
        return Tangent("elementwise", r) if r.kind == "rule" else Tangent(r.kind)
    return None


def nondifferentiable(*primals: Any) -> None:
    """Mark primals whose gradient is zero (as in JAX): floor, argmax, comparisons, len."""
    for p in primals:
        RULES[_key(p)] = Rule(None, "nondifferentiable")


def constructor(*primals: Any) -> None:
    """Mark array producers (np.zeros, np.array): no gradient may flow through them."""
    for p in primals:
        RULES[_key(p)] = Rule(None, "constructor")


@dataclass(eq=False)
class Overridden:
    """A primal as called inside a `gradient_override` block: `rule` replaces its own.
    `func` is how the user's code names the primal (`np.sign`), for the forward code;
    `method`, the method name where the user called it as one (`x.sum()`: the call now
    passes x first, and the forward code calls the method again)."""

    primal: Any
    rule: Rule
    func: gast.AST
    what: str
    method: str | None = None


def lookup(primal: Any) -> Rule | None:
    if isinstance(primal, Overridden):
        return primal.rule
    try:
        return RULES.get(_key(primal))
    except TypeError:  # unhashable object
        return None


def _template(value: gast.AST | None, nargs: int) -> list[gast.AST | None] | gast.AST | None:
    """A single-`return` rule's return expression, per argument where it is a tuple."""
    if value is None:
        return None
    if nargs == 1:
        return [value]
    if isinstance(value, gast.Tuple) and len(value.elts) == nargs:
        return [None if isinstance(e, gast.Constant) and e.value is None else e
                for e in value.elts]
    return value  # one expression giving the tuple of gradients


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
    subst: dict[str, gast.AST] = {p_dy: dy, p_y: y}
    for pname, arg in zip(names, args, strict=False):  # the rest take their defaults
        subst[pname] = arg
    for pname, default in r.defaults.items():
        if pname not in subst:
            subst[pname] = kwargs.get(pname, b.const(default))
    for pname in kwargs:
        if pname not in r.defaults:
            raise RuleError(f"gradient rule {r.name} has no parameter {pname!r} for the "
                            f"call's keyword argument")
    missing = [p for p in r.params if p not in subst]
    if missing:
        raise RuleError(f"call passes no value for {', '.join(missing)} of rule {r.name}")
    needs: dict[str, tuple[Any, bool]] = {}
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
        if position is not None and not scalar_dy:
            others = [a for i, a in enumerate(args) if i != position]
            expr = _drop_unbroadcast(expr, others, needs)
        return fold(expr)

    if isinstance(r.template, list):
        return Instance([fill(e, i) for i, e in enumerate(r.template)], None, needs)
    return Instance(None, fill(r.template, None), needs)


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
    (`np.where(cond, dy, 0.0)`) call srcgrad's form instead (`runtime.FASTER`)."""
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
        form = next((f for fun, f in FASTER.items() if fun is obj), None)
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
    """`unbroadcast(g, a)` is `g` when every other operand is a numeric constant, since
    a scalar constant never broadcasts `a` to a larger shape."""
    if (isinstance(expr, gast.Call) and isinstance(expr.func, gast.Name)
            and needs.get(expr.func.id, (None,))[0] is unbroadcast and len(expr.args) == 2
            and all(isinstance(o, gast.Constant) for o in others)):
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


from . import builtin_rules, numpy_rules, operator_rules, runtime_rules  # noqa: E402,F401,I001
