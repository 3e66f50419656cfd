"""modules: generated modules kept on disk, so that a second process skips the compiler.

`generated(fun, options, make)` returns the generated module (`compiler.Generated`) that
`make()` builds for the user's function `fun` with the transform's `options` (the kind,
`wrt`, static values, ...; for a transform of a transform, or an hvp, its own then the
inner ones'): from the disk cache when an entry for them is there and still
true, else `make()`'s, which it then stores. An entry is `<stem>_<key>.pickle` in
`codegen.cache_dir()` (so `cache` bounds and clears it with the rest), written to a temporary
file and renamed into place; an entry that cannot be read is removed and made again.

Never stale. The key digests what the generated code is made from and can be known before
making it: srcgrad's own code (its passes and rule table), the versions of Python, NumPy,
gast, astor (and SciPy, if loaded), the options, `fun`'s code and the whole text of its
file, and the gradient rules the user has registered (`register_gradient`, `adjoint`). The
entry then lists what making it read, checked before it is used: the text of every file a
function it parsed came from (a helper in another file), in each of their modules the value
of every global its functions read (numbers and arrays by value, functions by code,
defaults and closure cells), and every global of a module of the user's that those read
(`settings.W`); for a transform of a transform, also what making the inner ones read.
Whatever cannot be described the same way in another process (an object
other than these, a closure, a function numba compiled, a transform called inside) is not
cached: the module is made again in every process, as before; nor under `SRCGRAD_DEBUG`,
which prints the compiler's stages as they run.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import pickle
import sys
import threading
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .. import codegen
from ..frontend.parse import installed
from . import cache

log = logging.getLogger("srcgrad")
FORMAT = 1   # the entries' layout; a change makes every entry a miss
_UNSTABLE = "<unstable>"   # what cannot be described alike in another process
_PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))   # srcgrad's


def generated(fun: Any, options: tuple, make: Callable[[], Any],
              made_from: Callable[[], list] = list) -> Any:
    """The module `make()` generates for `fun` with `options` (a tuple of plain values),
    from the disk cache if an entry there is still true; stored there if it can be.
    `made_from()`, after `make()`: the generated modules that making it read (a transform
    of a transform's code reads the inner one's), whose reads its entry names too."""
    key = _key(fun, options) if not os.environ.get("SRCGRAD_DEBUG") else None
    if key is None:   # (SRCGRAD_DEBUG prints the stages as the compiler runs them)
        return make()
    path = codegen.cache_dir() / f"{_stem(fun)}_{key}.pickle"
    gen = _load(path)
    if gen is not None:
        return gen
    gen = make()
    _store(path, gen, fun, made_from())
    return gen


# ---- the key: what can be known before generating ----
def _key(fun: Any, options: tuple) -> str | None:
    code = getattr(fun, "__code__", None)
    module = sys.modules.get(getattr(fun, "__module__", None) or "")
    if code is None or fun.__closure__ or module is None or _reached(module, fun) is not fun \
            or fun.__globals__ is not vars(module):
        return None   # (a closure, a lambda, a function its module does not hold)
    text = _file_digest(code.co_filename)
    described = [_describe(v) for v in options] + [_describe(d) for d in fun.__defaults__ or ()]
    rules = _user_rules()
    if text is None or rules is None or any(_UNSTABLE in d for d in described):
        return None
    parts = [f"format {FORMAT}", _versions(), fun.__module__, fun.__qualname__,
             codegen._code_digest(code), text, *described, *rules]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:20]


def _stem(fun: Any) -> str:
    return "".join(c for c in fun.__name__ if c.isalnum() or c == "_") + "_gen"


def _reached(module: types.ModuleType, fun: Any) -> Any:
    """What `module` holds under `fun`'s qualified name (the function, for a `@grad`)."""
    target: Any = module
    for part in fun.__qualname__.split("."):
        target = getattr(target, part, None)
    return getattr(target, "fun", target) if getattr(target, "srcgrad_transform", False) \
        else target


_SRCGRAD: str | None = None


def _versions() -> str:
    """srcgrad's code (its passes, rules and runtime) as a digest, and the versions of
    what shapes generated code."""
    global _SRCGRAD
    if _SRCGRAD is None:
        digest = hashlib.sha256()
        for path in sorted(Path(_PACKAGE).rglob("*.py")):
            digest.update(path.read_bytes())
        _SRCGRAD = digest.hexdigest()
    return f"srcgrad {_SRCGRAD} python {sys.version} " + " ".join(
        f"{n} {getattr(sys.modules.get(n), '__version__', None)}"
        for n in ("numpy", "gast", "astor", "scipy"))


def _user_rules() -> list[str] | None:
    """The gradient rules the user registered, described (None: one cannot be)."""
    from ..rules import _OPS, NAMED

    out = []
    for name, rule in sorted(NAMED.items()):
        out.append(f"named {name}: {_describe(rule.fn)}")
    for op in list(_OPS.values()):
        for which in ("rule", "tangent", "uniform"):
            rule = getattr(op, which)
            if getattr(rule, "origin", None) is not None:
                out.append(f"{which} of {_describe(op.primal)}: {_describe(rule.fn)}")
    out.sort()
    return None if any(_UNSTABLE in d for d in out) else out


def _file_digest(filename: str) -> str | None:
    try:
        return hashlib.sha256(Path(filename).read_bytes()).hexdigest()
    except OSError:
        return None   # (no file: `<stdin>`, `<string>`)


def _describe(obj: Any, depth: int = 0) -> str:
    """`obj` as text that is the same in another process exactly when `obj` would be the
    same there; `_UNSTABLE` in it where that cannot be told."""
    if depth > 4:
        return _UNSTABLE
    if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes)):
        return f"{type(obj).__name__} {obj!r}"
    if isinstance(obj, (tuple, list, frozenset)):
        items = sorted(obj, key=repr) if isinstance(obj, frozenset) else obj
        return f"{type(obj).__name__}(" + ", ".join(_describe(v, depth + 1) for v in items) + ")"
    if isinstance(obj, dict):
        return "dict(" + ", ".join(f"{_describe(k, depth + 1)}: {_describe(v, depth + 1)}"
                                   for k, v in obj.items()) + ")"
    if isinstance(obj, np.ndarray):
        if obj.dtype.hasobject:
            return _UNSTABLE
        return f"array {obj.shape} {obj.dtype} " + hashlib.sha256(
            np.ascontiguousarray(obj).tobytes()).hexdigest()
    if isinstance(obj, np.generic):
        return f"{type(obj).__name__} {obj!r}"
    if isinstance(obj, types.ModuleType):
        return f"module {obj.__name__}"
    if isinstance(obj, types.FunctionType):
        cells = [_describe(c.cell_contents, depth + 1) if _filled(c) else "empty"
                 for c in obj.__closure__ or ()]
        return (f"function {obj.__module__}.{obj.__qualname__} "
                f"{codegen._code_digest(obj.__code__)} "
                f"defaults {_describe(obj.__defaults__, depth + 1)} "
                f"kwdefaults {_describe(obj.__kwdefaults__, depth + 1)} cells {cells}")
    if type(obj).__module__.startswith("numba"):
        return _UNSTABLE   # (a compiled function: its code is not read)
    if getattr(obj, "srcgrad_transform", False):
        return _UNSTABLE
    if isinstance(obj, (type, types.BuiltinFunctionType, np.ufunc)):
        module = getattr(obj, "__module__", None) or ""
        name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", "")
        if sys.modules.get(module) is not None and _reached_plain(module, name) is obj:
            if isinstance(obj, type) and _users(sys.modules[module]):   # (its attributes)
                return f"class {module}.{name} " + _describe(
                    {n: getattr(v, "__func__", v) for n, v in vars(obj).items()
                     if not (n.startswith("__") and n.endswith("__"))}, depth + 1)
            return f"{type(obj).__name__} {module}.{name}"
        return f"{type(obj).__name__} {name}" if isinstance(obj, np.ufunc) else _UNSTABLE
    return _UNSTABLE


def _filled(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:
        return False
    return True


def _reached_plain(module: str, qualname: str) -> Any:
    target: Any = sys.modules[module]
    for part in qualname.split("."):
        target = getattr(target, part, None)
    return target


# ---- what generating read, checked before an entry is used ----
def _reads(gen: Any, fun: Any) -> dict[str, Any] | None:
    """The files the functions generating read came from, with their text's digest, and
    the globals of their modules that those modules' functions read, described; None if
    one of them cannot be."""
    from ..frontend.parse import is_user_function

    files = {fun.__code__.co_filename} | {o.filename for o in gen.origins.values()}
    helpers = [obj for obj, _ in gen.namespace.entries.values() if is_user_function(obj)]
    files |= {obj.__code__.co_filename for obj in helpers}
    texts, values = {}, {}
    for filename in sorted(f for f in files if not _in_srcgrad(f)):
        texts[filename] = _file_digest(filename)
        found = _modules_of(filename)
        if texts[filename] is None or not found:
            return None
        for module in found:
            values[module.__name__] = _globals_read(module)
    # a module of the user's that one of those reads (`settings.W`): all its globals
    described = list(values.items())
    while described:
        name, read = described.pop()
        for value in _read_values(sys.modules[name], read):
            if isinstance(value, types.ModuleType) and value.__name__ not in values \
                    and _users(value):
                values[value.__name__] = _globals_read(value, every=True)
                described.append((value.__name__, values[value.__name__]))
    if any(all(obj.__globals__ is not vars(m) for m in _modules_of(obj.__code__.co_filename))
           for obj in helpers):
        return None   # (a function whose globals are not its file's module's)
    if any(_UNSTABLE in d for read in values.values() for d in read.values()):
        return None
    return {"texts": texts, "globals": values}


def _in_srcgrad(filename: str) -> bool:
    """Whether `filename` is srcgrad's own (its code is in the key)."""
    return os.path.realpath(filename).startswith(_PACKAGE + os.sep)


def _modules_of(filename: str) -> list[types.ModuleType]:
    """The modules loaded from `filename` (a script run as `__main__` may be imported by
    its name too)."""
    real = os.path.realpath(filename)
    return [module for module in list(sys.modules.values())
            if isinstance(getattr(module, "__file__", None), str)
            and os.path.realpath(module.__file__) == real]


def _users(module: types.ModuleType) -> bool:
    """Whether `module` is the user's own (not the standard library's, nor an installed
    package's, nor srcgrad's)."""
    path = getattr(module, "__file__", None)
    if not isinstance(path, str):
        return False
    real = os.path.realpath(path)
    return not _in_srcgrad(real) and not installed(real)


def _read_values(module: types.ModuleType, read: dict[str, str]) -> list[Any]:
    return [vars(module)[n] for n in read if n in vars(module)]


def _globals_read(module: types.ModuleType, every: bool = False) -> dict[str, str]:
    """The globals of `module` that its functions (and the functions in them) read; with
    `every`, all its globals but the module's own attributes (`__name__`...)."""
    if every:
        return {"<every>": "", **{n: _describe(v) for n, v in sorted(vars(module).items())
                                  if not (n.startswith("__") and n.endswith("__"))}}
    names: set[str] = set()
    values = list(vars(module).values())
    values += [getattr(m, "__func__", m) for cls in values if isinstance(cls, type)
               and cls.__module__ == module.__name__ for m in list(vars(cls).values())]
    for value in values:
        value = getattr(value, "fun", value) if getattr(value, "srcgrad_transform", False) \
            else value
        code = getattr(value, "__code__", None)
        if code is None or getattr(value, "__module__", None) != module.__name__:
            continue
        codes = [code]
        while codes:
            c = codes.pop()
            names.update(c.co_names)
            codes += [k for k in c.co_consts if isinstance(k, types.CodeType)]
    return {n: _describe(vars(module)[n]) for n in sorted(names) if n in vars(module)}


def _still_true(reads: dict[str, Any]) -> bool:
    for filename, digest in reads["texts"].items():
        if _file_digest(filename) != digest:
            return False
    for name, described in reads["globals"].items():
        module = sys.modules.get(name)
        if module is None or _globals_read(module, "<every>" in described) != described:
            return False
    return True


# ---- entries ----
class _Pickler(pickle.Pickler):
    """Modules by name, functions and classes by reference (as pickle does), and by value
    only plain data, arrays, syntax trees and the compiler's records of them: an object
    copied by value that is no such thing (a helper's state; one compared by identity)
    is refused, and the module is not kept."""

    def persistent_id(self, obj):
        return ("module", obj.__name__) if isinstance(obj, types.ModuleType) else None

    def reducer_override(self, obj):
        if not isinstance(obj, _by_value()) and not isinstance(obj, _BY_REFERENCE):
            raise pickle.PicklingError(f"{type(obj).__qualname__} is not kept by value")
        return NotImplemented


_BY_REFERENCE = (types.FunctionType, type, types.BuiltinFunctionType, np.ufunc)


def _by_value() -> tuple:
    import gast

    from ..compiler import Generated, Origin
    from ..passes.base import GeneratedFunction, Namespace

    return (gast.AST, Generated, Origin, Namespace, GeneratedFunction, np.ndarray, np.generic,
            np.dtype, list, dict, tuple, set, frozenset, str, bytes, int, float, complex,
            bool, type(None), type(Ellipsis))


class _Unpickler(pickle.Unpickler):
    def persistent_load(self, pid):
        kind, name = pid
        if kind != "module":
            raise pickle.UnpicklingError(f"unknown reference {pid!r}")
        import importlib
        return importlib.import_module(name)


def _store(path: Path, gen: Any, fun: Any, made_from: list) -> None:
    each = [_reads(g, fun) for g in (gen, *made_from)]
    if any(r is None for r in each):
        return
    reads = {part: {k: v for r in each for k, v in r[part].items()}
             for part in ("texts", "globals")}
    buffer = io.BytesIO()
    try:
        pickle.dump((FORMAT, reads), buffer, protocol=pickle.HIGHEST_PROTOCOL)
        _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(gen)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError) as exc:
        log.debug("srcgrad: the generated code of %s is not kept on disk (%s)",
                  fun.__qualname__, exc)
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_bytes(buffer.getvalue())
        os.replace(tmp, path)   # atomic: a reader sees the old entry or the new one
    except OSError:
        return   # (a read-only cache: the next process generates it again)
    cache.written(path.parent)


def _load(path: Path) -> Any:
    """The generated module kept in `path`, if it is there, readable and still true."""
    try:
        with open(path, "rb") as file:
            form, reads = pickle.load(file)
            if form != FORMAT or not _still_true(reads):
                return None
            gen = _Unpickler(file).load()
    except FileNotFoundError:
        return None
    except Exception as exc:   # (truncated, corrupt, or naming what no longer exists)
        log.warning("srcgrad: the cache entry %s could not be read (%s: %s); generating "
                    "it again", path, type(exc).__name__, exc)
        try:
            path.unlink()
        except OSError:
            pass
        return None
    cache.mark_used(path)
    return gen
