"""codegen: gast module -> readable Python source -> a loaded module.

Requires a gast Module of generated functions whose comment statements came from
`builder.comment`. `to_source` prints it with astor and turns those statements into
`# ...` comments. `load` writes the source to a file named by its content hash under the
srcgrad cache directory (`SRCGRAD_CACHE_DIR`, default `~/.cache/srcgrad`) and executes it
with the given globals. A real file is what lets tracebacks show the generated line and
lets numba's `cache=True` reuse compiled code in the next process; the file is a cache
entry, written once, never a temporary left behind.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import re
import sys
import types
from pathlib import Path
from typing import Any

import astor
import gast
import numpy as np

from .builder import COMMENT_MARK

GENERATED_PACKAGE = "srcgrad_generated"   # where loaded generated modules are registered
_COMMENT = re.compile(r"^(\s*)(\"\"\"|'''|['\"])" + re.escape(COMMENT_MARK) + r"(.*)\2\s*$")


def to_source(module: gast.Module) -> str:
    """Python source of `module`, with comment markers printed as comments."""
    tree = gast.gast_to_ast(module)
    for node in ast.walk(tree):  # astor prints `(-2.0) ** x` as `-2.0 ** x`, i.e. -(2.0 ** x)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            left = node.left
            if isinstance(left, ast.Constant) and isinstance(left.value, (int, float)) \
                    and not isinstance(left.value, bool) and left.value < 0:
                node.left = ast.UnaryOp(op=ast.USub(), operand=ast.Constant(-left.value))
    text = astor.to_source(tree)
    lines = []
    for line in text.splitlines():
        m = _COMMENT.match(line)
        if m:
            body = m.group(3).encode().decode("unicode_escape")
            line = f"{m.group(1)}# {body}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def cache_dir() -> Path:
    root = os.environ.get("SRCGRAD_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "srcgrad")
    return Path(root)


def fingerprint(source: str, namespace: dict[str, Any]) -> str:
    """A digest of the source and of what its globals denote.

    Two functions with the same source but different globals (a closure over `np.sin` and
    one over `np.cos`) must not share compiled code, in this process or from numba's disk
    cache, and an edited helper function must not be served stale: so each global is
    described by value (numbers, arrays by content, functions by their code).
    """
    parts = [source, _versions()]
    parts += [f"{name}={_describe(obj)}" for name, obj in sorted(namespace.items())]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=1)
def _versions() -> str:
    """numba's, NumPy's and srcgrad's versions, srcgrad's as a digest of its own code: the
    helpers' numba overloads are compiled into the generated functions, so numba's disk
    cache of them must not outlive an edit to those helpers."""
    import numba
    import numpy

    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.read_bytes())
    return (f"srcgrad {digest.hexdigest()[:12]} numba {numba.__version__} "
            f"numpy {numpy.__version__}")


def _describe(obj: Any) -> str:
    obj = getattr(obj, "py_func", obj)  # a numba dispatcher: describe its Python function
    if isinstance(obj, types.ModuleType):
        return f"module {obj.__name__}"
    code = getattr(obj, "__code__", None)
    if code is not None:
        return f"{obj.__module__}.{obj.__qualname__}#{_code_digest(code)[:12]}"
    if isinstance(obj, (int, float, complex, str, bool, type(None))):
        return repr(obj)
    if isinstance(obj, np.ndarray):
        return f"array{obj.shape}{obj.dtype}#{hashlib.sha256(obj.tobytes()).hexdigest()[:12]}"
    if type(obj) is tuple:   # (numba compiles a global tuple in as a constant too)
        return "(" + ",".join(map(_describe, obj)) + ")"
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if name is not None:
        return f"{getattr(obj, '__module__', '')}.{name}"
    return f"{type(obj).__qualname__}@{id(obj)}"  # unknown: never shared across processes


def _code_digest(code: types.CodeType) -> str:
    """A digest of a code object that is the same in every process (no addresses, and
    frozensets, whose order follows string hashing, sorted)."""
    def const(c: Any) -> str:
        if isinstance(c, types.CodeType):
            return _code_digest(c)
        if isinstance(c, frozenset):
            return "frozenset(" + ",".join(sorted(map(const, c))) + ")"
        if isinstance(c, tuple):
            return "(" + ",".join(map(const, c)) + ")"
        return repr(c)
    text = code.co_code.hex() + "|" + ",".join(map(const, code.co_consts)) + "|" + \
        ",".join(code.co_names)
    return hashlib.sha256(text.encode()).hexdigest()


def load(source: str, namespace: dict[str, Any], stem: str, role: str) -> types.ModuleType:
    """Execute `source` from its cache file with `namespace` as its globals.

    The module is registered in `sys.modules` (as `srcgrad_generated.<file>_<role>`):
    numba's disk cache finds a compiled function's globals by importing its module.
    """
    from .backend import cache

    digest = fingerprint(source, namespace)
    path = cache_dir() / f"{stem}_{digest}.py"
    if path.exists():
        cache.mark_used(path)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(source)
        os.replace(tmp, path)  # atomic: parallel processes never see half a file
        cache.written(path.parent)
    module = types.ModuleType(f"{GENERATED_PACKAGE}.{path.stem}_{role}")
    module.__file__ = str(path)
    module.__dict__.update(namespace)
    exec(compile(source, str(path), "exec"), module.__dict__)
    sys.modules[module.__name__] = module
    return module
