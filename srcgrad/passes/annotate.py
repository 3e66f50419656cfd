"""annotate: read a function's `with` annotations, `gradient_override` and `grad_of`.

Requires a parsed function (`Parsed`). Guarantees a new `Parsed` in which

* no `gradient_override` block is left: each is replaced by its body, where every call
  that matches one of its keys (the innermost block's first) now calls a fresh name the
  env resolves to an `Overridden` primal, which carries the rule and how the user named
  the primal (the forward code still prints `np.sign(w)`);
* every other `with` is a checked hook, `with grad_of(name) as dname:`, whose block
  has no jumps and assigns no variable of the function (it runs in the backward pass;
  see `hook`).

Any other `with`, and every malformed annotation (an unknown rule name, a key that
matches no call in its block, a rule with the wrong signature), is a `SrcgradError` at
the user's line. Exists so the later passes see ordinary calls with a rule, and one
statement form for hooks.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
from typing import Any

import gast

from .. import builder as b
from ..annotations import grad_of, gradient_override
from ..errors import RuleError, UnsupportedSyntax
from ..frontend.parse import MISSING, Env, Parsed
from ..naming import names_in
from ..rules import NAMED, Overridden, Rule, methods, user_rule


def hook(stmt: gast.stmt) -> tuple[str, str] | None:
    """`(h, dh)` for a hook `with grad_of(h) as dh:` left by `annotate`, else None."""
    if not isinstance(stmt, gast.With):
        return None
    item = stmt.items[0]
    return item.context_expr.args[0].id, item.optional_vars.id


def hook_names(tree: gast.AST) -> set[str]:
    """The `as` names of the hooks in `tree` (each stands for an adjoint, renamed by
    `reverse` to that adjoint's own name)."""
    return {n.items[0].optional_vars.id for n in gast.walk(tree) if isinstance(n, gast.With)}


def annotate(parsed: Parsed) -> Parsed:
    """`parsed` with override blocks dissolved and hooks checked.

    >>> import numpy as np, srcgrad, astor
    >>> from srcgrad.frontend.parse import parse
    >>> def f(x):
    ...     with srcgrad.gradient_override({np.sin: "DoctestHalf"}):
    ...         y = np.sin(x)
    ...     return np.sin(y)
    >>> @srcgrad.register_gradient("DoctestHalf", replace=True)
    ... def _half(dy, y, x):
    ...     return 0.5 * dy
    >>> out = annotate(parse(f))
    >>> print(astor.to_source(gast.gast_to_ast(out.tree.body[0])).strip())
    y = _override_1(x)
    >>> out.env.lookup("_override_1").rule.fn is _half
    True
    """
    tree = copy.deepcopy(parsed.tree)
    a = _Annotator(parsed, tree)
    tree.body = a.block(tree.body, [])
    env = Env(parsed.env.globals, {**parsed.env.closure, **a.bound})
    return dataclasses.replace(parsed, tree=tree, env=env)


@dataclasses.dataclass
class _Key:
    spec: Any          # the key: a function, or its name
    rule: Rule
    shown: str         # the key as the user wrote it
    matched: int = 0


class _Annotator:
    def __init__(self, parsed: Parsed, tree: gast.FunctionDef):
        self.p = parsed
        self.taken = names_in(tree) | set(parsed.env.closure) | set(parsed.env.globals)
        self.bound: dict[str, Overridden] = {}
        self.params = {a.id for a in tree.args.args}
        self.lines = _stores(tree.body)   # where each variable is assigned
        self.locals = frozenset(self.params | set(self.lines))

    def error(self, cls, node: gast.AST, message: str):
        return cls(message, filename=self.p.filename, lineno=getattr(node, "lineno", None),
                   col=getattr(node, "col_offset", None))

    def block(self, stmts: list[gast.stmt], keys: list[list[_Key]]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            if isinstance(stmt, gast.With):
                kind = self.kind(stmt)
                if kind is gradient_override:
                    mapping = self.mapping(stmt)
                    out += self.block(stmt.body, keys + [mapping])
                    for key in mapping:
                        if not key.matched:
                            raise self.error(RuleError, stmt,
                                             f"the gradient_override key {key.shown} "
                                             f"matches no call inside the block")
                    continue
                self.check_hook(stmt)
                out.append(stmt)
                continue
            for field in ("body", "orelse"):
                if isinstance(getattr(stmt, field, None), list):
                    setattr(stmt, field, self.block(getattr(stmt, field), keys))
            if keys:
                for part in _expressions(stmt):
                    for node in gast.walk(part):
                        if isinstance(node, gast.Call):
                            self.override(node, keys)
            out.append(stmt)
        return out

    # ---- gradient_override ----
    def kind(self, stmt: gast.With) -> Any:
        item = stmt.items[0]
        call = item.context_expr
        obj = self.p.env.resolve(call.func, self.locals) if isinstance(call, gast.Call) \
            else MISSING
        if len(stmt.items) != 1 or obj not in (gradient_override, grad_of):
            raise self.error(UnsupportedSyntax, stmt,
                             "'with' blocks cannot be differentiated, except the "
                             "annotations srcgrad.gradient_override and srcgrad.grad_of")
        if obj is gradient_override and (item.optional_vars is not None or call.keywords
                                         or len(call.args) != 1):
            raise self.error(UnsupportedSyntax, stmt,
                             "write the annotation as `with gradient_override({f: rule}):`")
        return obj

    def mapping(self, stmt: gast.With) -> list[_Key]:
        node = stmt.items[0].context_expr.args[0]
        if isinstance(node, gast.Dict):
            pairs = [(self.value(k, stmt, "key"), self.value(v, stmt, "value"))
                     for k, v in zip(node.keys, node.values, strict=True)]
            shown = [repr(k.value) if isinstance(k, gast.Constant) else _source(k)
                     for k in node.keys]
        else:
            obj = self.p.env.resolve(node, self.locals)
            if not isinstance(obj, dict):
                raise self.error(RuleError, stmt,
                                 "gradient_override takes a dict {function or name: rule} "
                                 "written in the block's line, or a global dict")
            pairs = list(obj.items())
            shown = [repr(k) if isinstance(k, str) else getattr(k, "__qualname__", repr(k))
                     for k in obj]
        keys = []
        for (spec, value), text in zip(pairs, shown, strict=True):
            if not (isinstance(spec, str) or callable(spec)):
                raise self.error(RuleError, stmt, f"a gradient_override key is a function "
                                                  f"or its name, not {spec!r}")
            keys.append(_Key(spec, self.rule(value, stmt), text))
        return keys

    def value(self, node: gast.AST | None, stmt: gast.With, what: str) -> Any:
        if isinstance(node, gast.Constant):
            return node.value
        if isinstance(node, gast.Lambda) and what == "value":
            return self.lambda_rule(node, stmt)
        obj = self.p.env.resolve(node, self.locals) if node is not None else MISSING
        if obj is MISSING:
            raise self.error(RuleError, stmt,
                             f"the gradient_override {what} {_source(node)} is not a string "
                             f"or a function srcgrad can find when it compiles")
        return obj

    def lambda_rule(self, node: gast.Lambda, stmt: gast.With) -> Rule:
        """A rule written as a lambda in the block's line: a function of the module (and
        closure) of the function, whose body is the rule's template."""
        params = {a.id for a in node.args.args}
        local = sorted({n.id for n in gast.walk(node.body) if isinstance(n, gast.Name)
                        and n.id in self.locals and n.id not in params})
        if local:
            raise self.error(RuleError, stmt,
                             f"a gradient rule written as a lambda reads only its parameters "
                             f"and globals, not the function's variables ({', '.join(local)})")
        expr = ast.fix_missing_locations(gast.gast_to_ast(
            gast.Expression(body=copy.deepcopy(node))))
        fn = eval(compile(expr, self.p.filename, "eval"),
                  {**self.p.env.globals, **self.p.env.closure})
        return user_rule(fn, copy.deepcopy(node.body))

    def rule(self, value: Any, stmt: gast.With) -> Rule:
        if isinstance(value, Rule):
            return value
        if isinstance(value, str):
            if value not in NAMED:
                known = ", ".join(sorted(NAMED)) or "none yet"
                raise self.error(RuleError, stmt,
                                 f"no gradient is registered under the name {value!r} "
                                 f"(registered: {known}); use @srcgrad.register_gradient")
            return NAMED[value]
        if callable(value):
            return user_rule(value)
        raise self.error(RuleError, stmt, f"a gradient_override value is a registered name "
                                          f"or a rule function, not {value!r}")

    def override(self, call: gast.Call, keys: list[list[_Key]]) -> None:
        obj = self.p.env.resolve(call.func, self.locals)
        method = None
        if obj is MISSING and isinstance(call.func, gast.Attribute) \
                and call.func.attr in methods():  # `x.sum()` matches the keys of np.sum
            obj, method = methods()[call.func.attr], call.func.attr
        if obj is MISSING:
            return
        found = None
        for mapping in keys:  # every block the call is in counts the match
            for key in mapping:
                if self.matches(key.spec, obj, call.func):
                    key.matched += 1
                    found = key  # the innermost block's key wins
        if found is None:
            return
        fresh, k = "_override", 1
        while f"{fresh}_{k}" in self.taken:
            k += 1
        name = f"{fresh}_{k}"
        self.taken.add(name)
        self.bound[name] = Overridden(obj, found.rule, copy.deepcopy(call.func),
                                      _source(call.func), method)
        if method is not None:
            call.args = [call.func.value] + call.args
        call.func = b.located(b.name(name), call.func)

    def matches(self, spec: Any, obj: Any, func: gast.AST) -> bool:
        if not isinstance(spec, str):
            return spec is obj
        if spec == _source(func):
            return True
        if "." in spec:
            return self.p.env.resolve(b.dotted(spec)) is obj
        # "round" is the name the call uses (np.round), or the function's own name
        return _source(func).split(".")[-1] == spec or getattr(obj, "__name__", None) == spec

    # ---- grad_of ----
    def check_hook(self, stmt: gast.With) -> None:
        item = stmt.items[0]
        call = item.context_expr
        if call.keywords or len(call.args) != 1 or not isinstance(call.args[0], gast.Name) \
                or call.args[0].id not in self.locals:
            raise self.error(UnsupportedSyntax, stmt,
                             "grad_of takes one variable of the function: "
                             "`with grad_of(h) as dh:`")
        if not isinstance(item.optional_vars, gast.Name):
            raise self.error(UnsupportedSyntax, stmt,
                             "name the gradient in the block: `with grad_of(h) as dh:`")
        var, dname = call.args[0].id, item.optional_vars.id
        if var not in self.params and min(self.lines.get(var, [stmt.lineno])) >= stmt.lineno:
            raise self.error(UnsupportedSyntax, stmt,
                             f"grad_of({var}) comes before {var!r} is assigned: put the "
                             f"block after the assignment it is about")
        if dname in self.locals:
            raise self.error(UnsupportedSyntax, stmt,
                             f"{dname!r} is a variable of the function; name the gradient "
                             f"of {call.args[0].id!r} with a new name")
        for node in gast.walk(b.make(gast.Module, body=stmt.body, type_ignores=[])):
            if isinstance(node, (gast.Return, gast.Break, gast.Continue, gast.With)):
                raise self.error(UnsupportedSyntax, node,
                                 f"'{type(node).__name__.lower()}' inside a grad_of block "
                                 f"(the block runs in the backward pass)")
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store) \
                    and node.id in self.locals:
                raise self.error(UnsupportedSyntax, node,
                                 f"a grad_of block runs in the backward pass and cannot "
                                 f"assign {node.id!r}, a variable of the function")
            if isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store) \
                    and isinstance(node.value, gast.Name) and node.value.id == dname:
                raise self.error(UnsupportedSyntax, node,
                                 f"write `{dname} = ...` in a grad_of block: the gradient "
                                 f"array may be shared, so it is not written in place")


def _stores(stmts: list[gast.stmt]) -> dict[str, list[int]]:
    """The lines where the function assigns each name, outside grad_of blocks."""
    out: dict[str, list[int]] = {}
    for s in stmts:
        if isinstance(s, gast.With) and s.items and s.items[0].optional_vars is not None:
            continue  # a hook (checked later); an override block has no `as`
        parts = [x for f in ("body", "orelse") for x in getattr(s, f, None) or []]
        for name, lines in _stores(parts).items():
            out.setdefault(name, []).extend(lines)
        for part in _expressions(s):
            for n in gast.walk(part):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                    out.setdefault(n.id, []).append(n.lineno)
    return out


def _expressions(stmt: gast.stmt) -> list[gast.AST]:
    """The expressions of a statement itself, not of the blocks nested in it."""
    return [v for f, v in gast.iter_fields(stmt) if f not in ("body", "orelse")
            and isinstance(v, gast.AST)] + \
        [x for f, v in gast.iter_fields(stmt) if f not in ("body", "orelse")
         and isinstance(v, list) for x in v if isinstance(x, gast.AST)]


def _source(node: gast.AST) -> str:
    if isinstance(node, gast.Name):
        return node.id
    if isinstance(node, gast.Attribute):
        return f"{_source(node.value)}.{node.attr}"
    return f"<{type(node).__name__}>"

