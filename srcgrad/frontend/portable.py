"""portable: a function a transform pickles, with its source text when it travels by value.

A transform pickles by reference to the user's function, and the receiving process reads
that function's source again (`parse`). cloudpickle (Dask, joblib's loky) sends a function
defined in `__main__`, in a notebook or inside another function by value instead: since
cloudpickle 3.1 the code it rebuilds is named `<dynamic-code>`, so `inspect.getsource` fails
in the worker, and before 3.1 it keeps the file's name, so a worker would read that file as
it is on its disk, edited since or absent. `portable(fun)` is what a transform pickles in
place of such a function: it carries the text of the function's file, and of the files of
the functions of its module that it calls, and unpickles into the function whose copies
sent by value read the text sent (held in `linecache`, where `inspect` looks, under the
file's name, or that name with a digest where this process holds other text under it).
Parsing them then gives what the sending process would, citing the same files and lines.

Requires a function whose source `inspect` can read in the sending process (otherwise it
is pickled as it is, and the receiving process raises the same `NoSourceError`).
Guarantees that unpickling returns the function itself (pickled as its pickler does), and
that the text of a function of the receiving process's own is never replaced.
"""

from __future__ import annotations

import hashlib
import inspect
import linecache
import sys
import types
from typing import Any


def portable(fun: Any) -> Any:
    """`fun`, or, for a function a pickler may send by value, an object that pickles as
    `fun` plus the text of its file and of the files of the functions of its module that
    it calls.

    >>> portable(len) is len
    True
    """
    if not isinstance(fun, types.FunctionType) or _by_reference(fun):
        return fun
    files: dict[str, list[str]] = {}
    where: dict[str | None, str] = {}
    for name, f in _by_value(fun):
        filename = inspect.getsourcefile(f)
        lines = linecache.getlines(filename) if filename else []
        if lines:
            files[filename] = lines
            where[name] = filename
    return _WithSource(fun, files, where) if None in where else fun


def _by_reference(fun: types.FunctionType) -> bool:
    """Whether every pickler finds `fun` by its module and name (not `__main__`)."""
    return fun.__module__ != "__main__" and _found(fun)


def _found(fun: types.FunctionType) -> bool:
    """Whether `fun` is what its module calls its qualified name (so an unpickled function
    is this process's own, not a copy sent by value)."""
    target: Any = sys.modules.get(fun.__module__ or "")
    for part in fun.__qualname__.split("."):
        target = getattr(target, part, None)
    return target is fun


def _by_value(fun: types.FunctionType) -> list[tuple[str | None, types.FunctionType]]:
    """`fun` (named None) and the functions of its globals that it calls, directly or
    through one another, that picklers send by value (as cloudpickle sends them)."""
    found: list[tuple[str | None, types.FunctionType]] = [(None, fun)]
    seen = {id(fun)}
    for _, f in found:
        for name in _names(f.__code__):
            g = fun.__globals__.get(name)
            if (isinstance(g, types.FunctionType) and id(g) not in seen
                    and g.__globals__ is fun.__globals__ and not _by_reference(g)):
                seen.add(id(g))
                found.append((name, g))
    return found


def _names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


class _WithSource:
    def __init__(self, fun: types.FunctionType, files: dict[str, list[str]],
                 where: dict[str | None, str]):
        self.fun, self.files, self.where = fun, files, where

    def __reduce__(self):
        return _restore, (self.fun, self.files, self.where)


def _restore(fun: types.FunctionType, files: dict[str, list[str]],
             where: dict[str | None, str]) -> types.FunctionType:
    """`fun` as unpickled, each function of it that came by value (a copy, not this
    process's own) named after the file whose text, as sent, linecache now holds for it.
    The text sent is the one its code was compiled from: a file by that name here may have
    been edited since (cloudpickle before 3.1 keeps the name, so that file would be read)."""
    held: dict[str, str] = {}
    for name, filename in where.items():
        f = fun if name is None else fun.__globals__.get(name)
        if isinstance(f, types.FunctionType) and not _found(f):
            if filename not in held:
                held[filename] = _hold(filename, files[filename])
            f.__code__ = f.__code__.replace(co_filename=held[filename])
    return fun


def _hold(filename: str, lines: list[str]) -> str:
    """The name under which linecache holds `lines`: `filename`, unless this process already
    reads other text under it (the file, edited since, or another version sent before),
    which is left alone for the functions that came from it: then `filename` with a digest
    of `lines`. The entry has no modification time, so `linecache.checkcache` keeps it."""
    present = linecache.getlines(filename)
    if present == lines:
        return filename
    key = filename
    if present:
        key = f"{filename} (as pickled, {hashlib.sha1(''.join(lines).encode()).hexdigest()[:8]})"
    linecache.cache[key] = (sum(map(len, lines)), None, list(lines), key)
    return key
