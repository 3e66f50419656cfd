"""docs/supported.md, made from the operation records (`rules.OPS`).

    python -m srcgrad.rules.supported > docs/supported.md

A test checks that the page is current, so a rule added without it fails the suite.
"""

from __future__ import annotations

import ast
import builtins
import math
import operator
from collections.abc import Callable
from typing import Any

import gast
import numpy as np

from . import OPS, Op, Rule, lookup_tangent
from .operator_rules import OPERATORS

_SYMBOLS: dict[Any, str] = {}   # operator.add -> "a + b"
for _node, _fun in OPERATORS.items():
    _a, _b = gast.Name("a", gast.Load(), None, None), gast.Name("b", gast.Load(), None, None)
    if issubclass(_node, gast.operator):
        _expr = gast.BinOp(_a, _node(), _b)
    elif issubclass(_node, gast.unaryop):
        _expr = gast.UnaryOp(_node(), _a)
    elif issubclass(_node, gast.cmpop):
        _expr = gast.Compare(_a, [_node()], [_b])
    else:
        continue
    _SYMBOLS.setdefault(_fun, ast.unparse(gast.gast_to_ast(_expr)))
_SECTIONS = ("NumPy", "SciPy", "math", "Python", "srcgrad")


def _name(fun: Any) -> tuple[str, str] | None:
    """(section, how code names `fun`), None for srcgrad's internal helpers."""
    name = getattr(fun, "__name__", None)
    if name is None:
        return None
    if getattr(operator, name, None) is fun and fun in _SYMBOLS:
        return "Python", f"`{_SYMBOLS[fun]}`"
    import scipy.linalg
    import scipy.special
    for section, module, prefix in [("NumPy", np, "np."), ("NumPy", np.linalg, "np.linalg."),
                                    ("NumPy", np.fft, "np.fft."),
                                    ("SciPy", scipy.special, "scipy.special."),
                                    ("SciPy", scipy.linalg, "scipy.linalg."),
                                    ("math", math, "math."), ("Python", builtins, "")]:
        if getattr(module, name, None) is fun:
            return section, f"`{prefix}{name}`"
    owner = getattr(fun, "__self__", None)
    if isinstance(owner, np.ufunc) and getattr(np, owner.__name__, None) is owner:
        return "NumPy", f"`np.{owner.__name__}.{name}`"   # a ufunc's method: np.add.reduce
    import scipy.stats  # a distribution's method: scipy.stats.norm.pdf
    for distribution in dir(scipy.stats) if owner is not None else ():
        if getattr(scipy.stats, distribution) is owner:
            return "SciPy", f"`scipy.stats.{distribution}.{name}`"
    import srcgrad
    if getattr(srcgrad, name, None) is fun:
        return "srcgrad", f"`srcgrad.{name}`"
    return None


def _expression(r: Rule, no_gradient: dict[str, str] | None = None) -> str:
    """A rule as a reader sees it: its return expression where it is inlined (an argument
    without a gradient that is refused, named so)."""
    if r.template is None:
        return f"`{r.fn.__name__}(...)` (a compiled helper)"
    parts = r.template if isinstance(r.template, list) else [r.template]
    refused = no_gradient or {}
    shown = [f"`{ast.unparse(gast.gast_to_ast(p))}`" if p is not None else
             f"refused ({name}: {refused[name]})" if (name := dict(enumerate(r.params)).get(k))
             in refused else "`None`" for k, p in enumerate(parts)]
    return "; ".join(shown).replace("|", "\\|")


def _forward(fun: Any) -> str:
    t = lookup_tangent(fun)
    if t is None:
        return "none"
    return {"rule": "tangent rule", "linear": "linear", "elementwise": "the adjoint's, read "
            "as a tangent"}.get(t.kind, t.kind)


def _rows(records: list[Op], keep: Callable[[Op], bool]) -> dict[str, list[list[str]]]:
    """Per section, one row per rule (the functions sharing it together)."""
    groups: dict[tuple[str, int], list[tuple[str, Op]]] = {}
    for r in records:
        named = _name(r.primal) or (   # an array method with no function of its own
            ("NumPy", ", ".join(f"`x.{m}()`" for m in r.methods)) if r.methods else None)
        if named is None or not keep(r):
            continue
        groups.setdefault((named[0], id(r.rule)), []).append((named[1], r))
    out: dict[str, list[list[str]]] = {s: [] for s in _SECTIONS}
    for (section, _), members in groups.items():
        members.sort(key=lambda m: m[0])
        names = ", ".join(n for n, _ in members)
        first = members[0][1]
        uses = sorted({f"`x.{m}()`" for _, r in members for m in r.methods} |
                      {f"`x.{a}`" for _, r in members for a in r.attributes})
        out[section].append([names, _expression(first.rule, first.no_gradient),
                              _forward(first.primal),
                             ", ".join(uses)])
    for rows in out.values():
        rows.sort()
    return out


def _names(records: list[Op], kind: str) -> str:
    found = sorted(n[1] for r in records if r.rule is not None and r.rule.kind == kind
                   and (n := _name(r.primal)) is not None)
    return ", ".join(found)


_SCIPY_WRITTEN_AS = ("scipy_linalg_gaps", "scipy_linalg_gaps2", "signal_gaps",
                     "scipy_signal_gaps2", "scipy_stats_gaps2", "special_gaps")


def _written_in(*modules: str) -> str:
    """The functions without a rule of their own that the record modules `modules` (of
    `srcgrad/rules`) write as other functions (their records' `expanded`)."""
    return ", ".join(sorted(n[1] for r in OPS.values() if r.rule is None
                            and r.expanded is not None
                            and r.expanded.__module__.endswith(tuple("." + m for m in modules))
                            and (n := _name(r.primal)) is not None))


def markdown() -> str:
    """The page: every differentiable function with its rules, then the rest."""
    records = [r for r in OPS.values() if r.rule is not None and r.rule.origin is None]
    rows = _rows(records, lambda r: r.rule.kind == "rule")
    lines = [
        "# Supported functions",
        "",
        "Made from srcgrad's operation records (`srcgrad/rules`) by "
        "`python -m srcgrad.rules.supported > docs/supported.md`; a test checks that it is "
        "current. Each row is one gradient rule and the functions that share it. *Adjoint* "
        "is the gradient of each argument given the cotangent `dy` of the result `y`, as "
        "the generated code computes it (inlined there, or a call of a compiled helper); "
        "*forward mode* is how `jvp`, `hvp` and higher orders differentiate it. All of them "
        "compile under numba. A function missing here has no rule: calling it on a "
        "differentiated value raises `MissingRule` (define one with `@srcgrad.adjoint`).",
    ]
    for section in _SECTIONS:
        if not rows[section]:
            continue
        lines += ["", f"## {section}", "", "| function | adjoint | forward mode | on arrays |",
                  "|---|---|---|---|"]
        lines += ["| " + " | ".join(row) + " |" for row in rows[section]]
    lines += ["", "## Zero gradient", "",
              "These give no gradient to their arguments (as in JAX): " +
              _names(records, "nondifferentiable") + ".",
              "", "## Called for their effect", "",
              "These change their first argument in place; srcgrad writes each call as the "
              "change it makes, `x op= helper(x, ...)` (np.add.at: `x += scattered(x, "
              "index, v)`) or `x[...] = helper(x, ...)` (np.fill_diagonal, np.copyto), and "
              "differentiates that: " + ", ".join(sorted(
                  n[1] for r in OPS.values() if r.updates is not None
                  and (n := _name(r.primal)) is not None)) + ".",
              "", "## Array constructors", "",
              "No gradient flows through these; a differentiated value passed to one raises "
              "`MissingRule` (build the array with `np.stack` or arithmetic): " +
              _names(records, "constructor") + ".",
              "", "## Options", "",
              "A float64 `dtype=` (`np.float64`, `float`, `'float64'`, `'f8'`) is "
              "differentiated as if not given, any other refused, in " + ", ".join(sorted(
                  n[1] for r in records if r.casts and (n := _name(r.primal)) is not None)) +
              ". Given options their rules lack, these are differentiated as the "
              "operations they stand for: `initial=` and `where=` of reductions (the "
              "reduction of the array with the reduction's identity where `where` is "
              "False, combined with `initial`; `srcgrad/rules/reduction_options.py`, the "
              "ufuncs' in `srcgrad/rules/ufunc_methods.py`, where np.logaddexp's where= is "
              "refused), np.interp's `period=`, np.average's `returned=True` (the average "
              "and the sum of the weights): " + ", ".join(sorted(
                  n[1] for r in records if r.expanded is not None
                  and (n := _name(r.primal)) is not None)) + ".",
              "", "## Other spellings", "",
              "NumPy 2's array-API functions are written as the NumPy functions they "
              "compute, whose rules differentiate them (`srcgrad/rules/array_api.py`, which "
              "says what each is written as and what is refused): " +
              _written_in("array_api") + ".",
              "", "These are written likewise as other functions with rules "
              "(`srcgrad/rules/numpy_gaps.py` and `numpy_gaps2.py`, which say what each is "
              "written as and what is refused): " + _written_in("numpy_gaps", "numpy_gaps2")
              + ".",
              "", "SciPy's are written likewise (`srcgrad/rules/scipy_linalg_gaps.py`, "
              "`scipy_linalg_gaps2.py`, `signal_gaps.py`, `scipy_signal_gaps2.py`, "
              "`scipy_stats_gaps2.py`, `special_gaps.py`): " + _written_in(
                  *_SCIPY_WRITTEN_AS) + ".", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(), end="")
