"""parse: a Python function -> its gast syntax tree and the objects its names refer to.

Requires a function defined in a file (or anywhere `inspect.getsource` can read it).
Guarantees a `gast.FunctionDef` without decorators whose line numbers are the lines of
the user's file, plus an `Env` that resolves every global, closure and builtin name
(and dotted module attributes such as `np.linalg.norm`) to the Python object it denotes
at transform time. Exists so that every later stage works on a tree, never on text.

A function srcgrad generated (differentiated again: `hvp`, `grad(grad(f))`) is not read
from its text: its module registered it (`register_generated`) with the differentiable
tree it was printed from, and `parse` returns a copy of that tree, whose lines are the
user's lines it came from.

An import at the top level of the function's body (`from scipy.special import
logsumexp`, `import scipy.special as sp`) binds its names as Python would when the
function runs, and is gone from the tree: the names resolve as closure values do. One in
a branch or a loop, or of a name the function also assigns, stays (`reject` refuses it).

`positional` gives the function differentiated ordinary parameters for its `*args` and
keyword-only ones (the api binds each call through the signature).
"""

from __future__ import annotations

import builtins
import copy
import importlib
import inspect
import os
import sysconfig
import textwrap
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gast
import numpy as np

from ..codegen import GENERATED_PACKAGE
from ..errors import NoSourceError, SrcgradError

MISSING = object()


@dataclass
class Env:
    """Name resolution for one function: closure cells, then module globals, then builtins."""

    globals: dict[str, Any]
    closure: dict[str, Any] = field(default_factory=dict)

    def lookup(self, name: str) -> Any:
        if name in self.closure:
            return self.closure[name]
        if name in self.globals:
            return self.globals[name]
        return getattr(builtins, name, MISSING)

    def resolve(self, node: gast.AST, local_names: frozenset[str] = frozenset()) -> Any:
        """The object a Name/Attribute chain denotes, or MISSING (locals resolve to MISSING)."""
        if isinstance(node, gast.Name):
            if node.id in local_names:
                return MISSING
            return self.lookup(node.id)
        if isinstance(node, gast.Attribute):
            base = self.resolve(node.value, local_names)
            # (a ufunc's methods, np.add.at: NumPy before 2 gives ufuncs no __dict__)
            if base is MISSING or not isinstance(base, (types.ModuleType, type, np.ufunc)) \
                    and not hasattr(base, "__dict__"):
                return MISSING
            return getattr(base, node.attr, MISSING)
        return MISSING


_LIBRARIES = ("numpy", "math", "builtins", "srcgrad", "numba", "scipy")


def nested_entry(obj: Any) -> Any:
    """The generated entry point of a srcgrad transform (`grad`, `value_and_grad`) that
    code being differentiated calls: what runs in its place, and what is differentiated
    through (nested differentiation); None for anything else."""
    entry = getattr(obj, "nested_entry", None)
    return entry() if callable(entry) and getattr(obj, "srcgrad_transform", False) else None


_INSTALLED = tuple({os.path.realpath(p) + os.sep for key in ("stdlib", "purelib", "platlib")
                    if (p := sysconfig.get_paths().get(key))})


def installed(filename: str) -> bool:
    """Whether `filename` is the standard library's or an installed package's (not the
    user's own code)."""
    return os.path.realpath(filename).startswith(_INSTALLED)


def is_user_function(obj: Any) -> bool:
    """A Python function of the user's (not of a library srcgrad has rules for)."""
    module = getattr(obj, "__module__", "") or ""
    return isinstance(obj, types.FunctionType) and module.split(".")[0] not in _LIBRARIES


@dataclass
class Parsed:
    """A function's tree, where it came from, and how its names resolve."""

    fun: Any
    tree: gast.FunctionDef
    filename: str
    lines: dict[int, str]
    env: Env

    def line(self, lineno: int | None) -> str:
        return self.lines.get(lineno or -1, "").strip()


def check_function(fun: Any) -> types.FunctionType:
    """`fun` unwrapped, if it is a Python function; else a NoSourceError that says why."""
    fun = inspect.unwrap(fun)
    if inspect.ismethod(fun) and isinstance(fun.__func__, types.FunctionType):
        kind, name = type(fun.__self__).__name__, fun.__func__.__name__
        raise NoSourceError(f"{fun.__qualname__} is a bound method: differentiate the function "
                            f"with the object as its first argument, e.g. "
                            f"srcgrad.grad({kind}.{name}, wrt=1)(obj, ...)")
    if not isinstance(fun, types.FunctionType):
        raise NoSourceError(f"{fun!r} is not a Python function, so it has no source to transform")
    return fun


# a generated function -> its differentiable tree, as a new `Parsed` on each call
_GENERATED: weakref.WeakKeyDictionary[types.FunctionType, Callable[[Any], Parsed]] = \
    weakref.WeakKeyDictionary()


def register_generated(fun: types.FunctionType, tree: Callable[[Any], Parsed]) -> None:
    """Let `parse(fun)` (a generated function) return `tree(fun)`, not read its text."""
    _GENERATED[fun] = tree


def parse(fun: Any) -> Parsed:
    """Parse `fun`'s source into a gast FunctionDef with file line numbers.

    >>> parse(_demo).tree.name, parse(_demo).env.lookup("len") is len
    ('_demo', True)
    """
    fun = check_function(fun)
    if fun in _GENERATED:
        return _GENERATED[fun](fun)
    if (fun.__module__ or "").startswith(GENERATED_PACKAGE + "."):
        # its text is lowered (kernels, joint calls): only its stored tree is differentiable
        raise NoSourceError(f"{fun.__qualname__} is generated code that srcgrad keeps no "
                            f"differentiable form of: differentiate the transform itself")
    if fun.__code__.co_filename in ("<string>", "<stdin>"):
        # exec/eval'd code: linecache may hold some other text under this name
        raise NoSourceError(f"cannot read the source of {fun.__qualname__!r}: it was made by "
                            f"exec or eval, or typed at the REPL")
    try:
        src_lines, first = inspect.getsourcelines(fun)
        filename = inspect.getsourcefile(fun) or fun.__code__.co_filename
    except (OSError, TypeError) as exc:
        raise NoSourceError(
            f"cannot read the source of {fun.__qualname__!r} (defined at the REPL or in "
            f"generated code?): {exc}") from None
    source = textwrap.dedent("".join(src_lines))
    if fun.__name__ == "<lambda>":
        tree = _lambda_tree(source, fun, filename, first)
    else:
        module = gast.parse(source)
        tree = module.body[0]
        if not isinstance(tree, gast.FunctionDef):
            raise NoSourceError(f"source of {fun.__qualname__!r} is not a plain function "
                                f"definition", filename=filename, lineno=first)
    tree.decorator_list = []
    _shift_lines(tree, first - 1)
    lines = {first + i: text for i, text in enumerate(src_lines)}
    closure = {}
    if fun.__closure__:
        for var, cell in zip(fun.__code__.co_freevars, fun.__closure__, strict=True):
            try:
                closure[var] = cell.cell_contents
            except ValueError:
                continue
    closure.update(_hoist_imports(tree, fun, filename))
    return Parsed(fun, tree, filename, lines, Env(fun.__globals__, closure))


def _hoist_imports(tree: gast.FunctionDef, fun: Any, filename: str) -> dict[str, Any]:
    """The names the imports at the top level of `tree`'s body bind, those statements
    taken out of it (see the module's docstring)."""
    assigned = {n.id for n in gast.walk(tree)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
    bound: dict[str, Any] = {}
    kept = []
    for stmt in tree.body:
        if not isinstance(stmt, (gast.Import, gast.ImportFrom)) or \
                any(a.name == "*" for a in stmt.names) or \
                {(a.asname or a.name).split(".")[0] for a in stmt.names} & assigned:
            kept.append(stmt)
            continue
        try:
            bound.update(_imported(stmt, fun))
        except ImportError as exc:
            raise SrcgradError(f"the function's import failed when srcgrad read it: {exc}",
                               filename=filename, lineno=stmt.lineno) from None
    tree.body = kept
    return bound


def _imported(stmt: gast.Import | gast.ImportFrom, fun: Any) -> dict[str, Any]:
    """What an import statement binds, as Python binds it in `fun`."""
    if isinstance(stmt, gast.Import):
        bound = {}
        for a in stmt.names:
            module = importlib.import_module(a.name)   # `import a.b` binds a, a.b loaded
            bound[a.asname or a.name.split(".")[0]] = module if a.asname else \
                importlib.import_module(a.name.split(".")[0])
        return bound
    package = fun.__globals__.get("__package__")
    module = importlib.import_module("." * stmt.level + (stmt.module or ""), package)
    return {a.asname or a.name: getattr(module, a.name) if hasattr(module, a.name) else
            importlib.import_module(f"{module.__name__}.{a.name}") for a in stmt.names}


def positional(tree: gast.FunctionDef) -> gast.FunctionDef:
    """`tree` (the function differentiated, not a helper it calls) with its positional-only,
    `*args` and keyword-only parameters made ordinary ones, in signature order, and no
    defaults: the api binds a call through the signature and passes every argument, the
    `*args` as one tuple (flattened as a container, its arity part of the key).
    A `**kwargs` stays, for `reject_unsupported` to refuse."""
    a = tree.args
    if not (a.vararg or a.kwonlyargs or a.posonlyargs):
        return tree
    tree = copy.copy(tree)
    tree.args = gast.arguments(args=a.posonlyargs + a.args + ([a.vararg] if a.vararg else [])
                               + a.kwonlyargs, posonlyargs=[], vararg=None, kwonlyargs=[],
                               kw_defaults=[], kwarg=a.kwarg, defaults=[])
    return tree


def _lambda_tree(source: str, fun: Any, filename: str, first: int) -> gast.FunctionDef:
    from .. import builder

    try:
        module = gast.parse(source)
    except SyntaxError:  # a lambda in the middle of a multi-line expression
        module = gast.Module(body=[], type_ignores=[])
    lambdas = [n for n in gast.walk(module) if isinstance(n, gast.Lambda)]
    if len(lambdas) != 1:
        raise NoSourceError("cannot tell which lambda on this line to differentiate; "
                            "define it with `def`", filename=filename, lineno=first)
    lam = lambdas[0]
    fn = builder.function("lambda_", [], [builder.located(builder.ret(lam.body), lam)])
    fn.args = lam.args
    fn.lineno, fn.col_offset = lam.lineno, lam.col_offset
    return fn


def _shift_lines(tree: gast.AST, offset: int) -> None:
    for node in gast.walk(tree):
        if getattr(node, "lineno", None) is not None:
            node.lineno += offset
        if getattr(node, "end_lineno", None) is not None:
            node.end_lineno += offset


def _demo(x):
    return x
