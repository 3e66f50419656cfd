"""reject: refuse, with the user's line, what srcgrad cannot differentiate.

Requires a parsed function tree. Guarantees nothing is changed: it raises
`UnsupportedSyntax` at the first construct outside the supported language and returns
its input otherwise. Exists so that later passes can assume a known node set and a
user sees `model.py:14: 'try' statements cannot be differentiated`, never a crash in a
pass. `assert` and `raise` are accepted: guards, kept in the forward code (normalize).
"""

from __future__ import annotations

import gast

from ..errors import UnsupportedSyntax

_FORBIDDEN = {
    gast.ClassDef: "class definitions",
    gast.Try: "'try' statements",
    gast.Global: "'global' statements",
    gast.Nonlocal: "'nonlocal' statements",
    gast.Yield: "'yield' (generators)",
    gast.YieldFrom: "'yield from' (generators)",
    gast.Await: "'await'",
    gast.AsyncFunctionDef: "async functions",
    gast.AsyncFor: "'async for'",
    gast.AsyncWith: "'async with'",
    gast.FunctionDef: "nested function definitions",
    gast.Lambda: "lambdas inside a differentiated function",
    gast.SetComp: "set comprehensions",
    gast.DictComp: "dict comprehensions (but one assigned once to a name whose keys are "
                   "known when srcgrad compiles: over a display, a global tuple, a range, "
                   "enumerate or zip of them, with no `if`)",
    gast.Delete: "'del' statements",
    gast.Import: "imports inside a differentiated function",
    gast.ImportFrom: "imports inside a differentiated function",
    gast.Starred: "starred arguments (*args)",
    gast.Match: "'match' statements",
    gast.Dict: "dict literals (but one of constant keys assigned once to a name)",
    gast.Set: "set literals",
}
for _extra in ("TryStar",):
    if hasattr(gast, _extra):
        _FORBIDDEN[getattr(gast, _extra)] = "'try' statements"


# calls that change an array in place: the tape cannot restore what they overwrite, and
# on an argument they would change the caller's array
_IN_PLACE_METHODS = {"sort": "np.sort(x)", "fill": "np.full_like(x, value)",
                     "put": "np.put(x, ind, v)", "partition": "np.partition(x, k)",
                     "resize": "np.resize(x, shape)", "itemset": "a subscript write"}
_IN_PLACE_FUNCTIONS = {"shuffle"}   # (np.put, np.place, np.put_along_axis: rules/puts.py)


def _in_place(call: gast.Call) -> str | None:
    """The refusal of a call that writes into an array in place, or None."""
    if any(k.arg == "out" for k in call.keywords):
        return ("'out=' writes into an array in place, which cannot be differentiated; "
                "assign the result instead (y = np.multiply(x, 2.0))")
    func = call.func
    if not isinstance(func, gast.Attribute):
        return None
    if isinstance(func.value, gast.Name) and func.value.id in ("np", "numpy", "random") or \
            isinstance(func.value, gast.Attribute) and func.value.attr == "random":
        if func.attr in _IN_PLACE_FUNCTIONS:
            return (f"{func.attr}() writes into an array in place, which cannot be "
                    f"differentiated; build the new array and assign it, or use a "
                    f"subscript write")
        return None
    if func.attr in _IN_PLACE_METHODS:
        return (f"'.{func.attr}()' changes an array in place, which cannot be "
                f"differentiated; use {_IN_PLACE_METHODS[func.attr]} instead")
    return None


def _deferred(node: gast.AST) -> list[gast.AST]:
    """The parts of `node` Python may evaluate other than once, in order, or not at all:
    where `normalize` (which evaluates each operand once, first) cannot bind a name."""
    if isinstance(node, gast.BoolOp):
        return node.values[1:]
    if isinstance(node, gast.IfExp):
        return [node.body, node.orelse]
    if isinstance(node, (gast.ListComp, gast.SetComp, gast.DictComp, gast.GeneratorExp,
                         gast.Lambda)):
        return [node]
    return []


def _steps(node: gast.AST) -> gast.AST | None:
    """The `acc := f(acc, item)` of `reduce((acc := f(acc, item)) for item in s)`, the
    form `closures` writes `functools.reduce(f, s)` in (a call of a name it binds to
    functools.reduce), which `comprehensions.lower` makes a loop: evaluated once per item,
    in order; else None."""
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and \
            node.func.id.split("_")[0] == "reduce" and node.args and \
            isinstance(node.args[0], gast.GeneratorExp) and \
            isinstance(node.args[0].elt, gast.NamedExpr):
        return node.args[0].elt
    return None


def reject_unsupported(fn: gast.FunctionDef, filename: str) -> gast.FunctionDef:
    """Raise `UnsupportedSyntax` at the first construct srcgrad cannot differentiate."""
    if fn.args.kwarg:
        raise UnsupportedSyntax(f"**{fn.args.kwarg.id} cannot be differentiated: pass the "
                                f"arrays as parameters, or as one dict parameter",
                                filename=filename, lineno=fn.lineno)
    if fn.args.vararg or fn.args.kwonlyargs or fn.args.posonlyargs:
        # (the function differentiated has them made ordinary: `parse.positional`)
        raise UnsupportedSyntax(f"{fn.name} takes *args, keyword-only or positional-only "
                                f"parameters: only the function differentiated may, not "
                                f"one it calls", filename=filename, lineno=fn.lineno)
    for stmt in fn.body:
        deferred = {id(n) for up in gast.walk(stmt) for part in _deferred(up)
                    for n in gast.walk(part)}
        deferred -= {id(step) for up in gast.walk(stmt) if (step := _steps(up)) is not None}
        for node in gast.walk(stmt):
            what = _FORBIDDEN.get(type(node))
            if isinstance(node, gast.NamedExpr) and id(node) in deferred:
                what = ("an assignment expression (:=) that Python may not evaluate (in an "
                        "'and'/'or' operand after the first, a branch of an 'x if c else "
                        "y', a comprehension or a lambda)")
            if isinstance(node, gast.Starred) and isinstance(node.ctx, gast.Store):
                what = None   # `first, *rest = ...`: `normalize` unpacks it
            if isinstance(node, gast.keyword) and node.arg is None:
                what = "'**' arguments in calls"
            if isinstance(node, gast.Call):
                what = _in_place(node)
            if what:
                raise UnsupportedSyntax(what if isinstance(node, gast.Call) else
                                        f"{what} cannot be differentiated",
                                        filename=filename,
                                        lineno=getattr(node, "lineno", stmt.lineno),
                                        col=getattr(node, "col_offset", None))
    return fn
