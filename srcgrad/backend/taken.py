"""taken: the values a generated module took from the user's globals, and whether they
still hold.

The generated code reads a global (`W`, `settings.LR`, `model.w`, a closure's array) as
it was when the code was made: numba compiles global arrays and numbers in as constants,
and a module loaded from the disk cache holds copies. The user's function reads them as
they are now. So that a gradient is always the gradient of the function as it is now,
`Taken` remembers each such value (an array's contents as a copy; of an array over 1 MB,
4096 entries spread over it, as reading all of it at each call would cost as much as the
gradient) and `changed()`, asked before each call, says whether one was rebound or
written into since: the transform then makes its code again. A global that keeps changing
(a training loop writing a global array), or a large one, is better passed as an argument:
`note_remade` says so once, after `NOTED` remakes.
"""

from __future__ import annotations

import inspect
import logging
import sys
import types
import warnings
from typing import Any

import numpy as np

log = logging.getLogger("srcgrad")
NOTED = 3   # remakes of one transform after which the user is told to pass the global
WHOLE = 1 << 20   # bytes: a global array this large or smaller is compared whole
SAMPLED = 4096    # entries of a larger one compared (and its identity, shape and dtype)


def _data(v: Any) -> bool:
    return isinstance(v, (np.ndarray, np.generic, int, float, complex, tuple, list, dict))


def _same(held: Any, copy: Any, now: Any) -> bool:
    """Whether `now` is what was `held` (whose `_copy` is `copy`) still: the same value,
    and for an array or a container, the same contents (an array's by its bytes: NaN
    equals itself)."""
    if now is held:
        if isinstance(held, np.ndarray):
            return now.shape == copy[0] and now.dtype == copy[1] and \
                _contents(now) == copy[2]
        if isinstance(held, (tuple, list, dict)) and copy is not None:   # (written into)
            keys, items = _items(held)
            return keys == copy[0] and len(items) == len(copy[1]) and all(
                i is h and _same(h, c, i) for i, (h, c) in zip(items, copy[1], strict=True))
        return True
    if isinstance(now, (np.ndarray, tuple, list, dict)) or \
            isinstance(held, (np.ndarray, tuple, list, dict)):
        return False
    try:
        return type(now) is type(held) and bool(now == held)
    except Exception:
        return False


def _contents(a: np.ndarray) -> bytes:
    """An array's bytes; past `WHOLE` bytes, those of `SAMPLED` entries spread over it
    (reading all of a large array at each call would cost as much as the gradient)."""
    if a.nbytes <= WHOLE:
        return a.tobytes()
    return a.take(np.linspace(0, a.size - 1, SAMPLED).astype(np.intp)).tobytes()


def _copy(v: Any, depth: int = 0) -> Any:
    """What `_same` compares a value with: an array's bytes, a container's items."""
    if isinstance(v, np.ndarray):
        return v.shape, v.dtype, _contents(v)
    if isinstance(v, (tuple, list, dict)) and depth < 2:
        keys, items = _items(v)
        return keys, [(i, _copy(i, depth + 1)) for i in items]
    return None


def _items(v: tuple | list | dict) -> tuple[list, list]:
    return (list(v), list(v.values())) if isinstance(v, dict) else ([], list(v))


def _object(v: Any) -> bool:
    """Whether `v` is an object of a class of the user's (`self.child`)."""
    return isinstance(getattr(v, "__dict__", None), dict) and \
        not isinstance(v, (type, types.ModuleType, types.FunctionType)) and \
        _users(sys.modules.get(type(v).__module__))


class Taken:
    """What the code made for `functions` (the user's function and the helpers it calls)
    took from their globals, closure cells and the attributes of the global objects they
    read (`settings.W`), by name."""

    def __init__(self, functions: list[types.FunctionType]):
        self._held: list[tuple[Any, str, Any, Any]] = []   # (owner, name, object, bytes)
        seen: set[tuple[int, str]] = set()
        functions, done = [(f, None) for f in functions], set()
        while functions:   # (and the user's functions they name: the helpers they call)
            fun, cls = functions.pop()
            if id(fun) in done:
                continue
            done.add(id(fun))
            names = _names(fun.__code__)
            if cls is not None:   # a method: what it reads of its class or object
                functions += self._within(cls, seen, names)
            for name, cell in zip(fun.__code__.co_freevars, fun.__closure__ or (), strict=True):
                try:
                    value = cell.cell_contents
                except ValueError:
                    continue
                functions += self._hold(cell, name, value, seen, names)
            for name in names:
                if name in fun.__globals__:
                    functions += self._hold(fun.__globals__, name, fun.__globals__[name], seen,
                                            names)

    def _hold(self, owner: Any, name: str, value: Any, seen: set,
              names: set[str]) -> list[tuple[types.FunctionType, Any]]:
        """Hold `owner`'s `name`; the user's functions it is or holds, to be read too
        (with their class or object, for a method)."""
        if (id(owner), name) in seen:
            return []
        seen.add((id(owner), name))
        self._held.append((owner, name, value, _copy(value)))
        return self._within(value, seen, names)

    def _within(self, value: Any, seen: set,
                names: set[str]) -> list[tuple[types.FunctionType, Any]]:
        """The user's function `value` is; or the data and functions of `value`'s (a user's
        module, class or object) attributes that `names` name, held."""
        value = getattr(value, "fun", value) if getattr(value, "srcgrad_transform", False) \
            else getattr(value, "__func__", value)   # (a method: its function)
        if isinstance(value, types.FunctionType):
            return [(value, None)] if is_user_function(value) else []
        if isinstance(value, type):
            if not _users(sys.modules.get(value.__module__)):
                return []
        elif isinstance(value, types.ModuleType):
            if not _users(value):
                return []
        elif not _object(value):   # (a library's object: a logger, a generator)
            return []
        attributes = getattr(value, "__dict__", None)
        if not isinstance(attributes, (dict, types.MappingProxyType)):
            return []
        owner = value if isinstance(value, type) else attributes
        instance = not isinstance(value, (type, types.ModuleType))
        found = []
        for attr in names:   # `settings.W`, `model.w`, `helpers.g`, `cls.B`, `cls.g`
            held = getattr(attributes.get(attr, None), "__func__", attributes.get(attr))
            if _data(held) or isinstance(held, types.FunctionType) or _object(held):
                found += [(f, value if isinstance(value, type) else None) for f, _ in
                          self._hold(owner, attr, attributes[attr], seen, names)]
            elif instance and attr not in attributes:   # `model.loss`, a property: what it reads
                method = inspect.getattr_static(type(value), attr, None)
                method = getattr(method, "__func__", getattr(method, "fget", method))
                if isinstance(method, types.FunctionType) and is_user_function(method):
                    found.append((method, value))
        return found

    def changed(self) -> list[str]:
        """The names of what changed since the code was made (none: it still holds)."""
        out = []
        for owner, name, held, copy in self._held:
            if isinstance(owner, types.CellType):
                try:
                    now = owner.cell_contents
                except ValueError:
                    now = None
            elif isinstance(owner, type):
                now = vars(owner).get(name, held)
            else:
                now = owner.get(name, held)
            if not _same(held, copy, now):
                out.append(name)
        return out


def note_remade(label: str, names: list[str], count: int) -> None:
    """The `count`-th remake of `label`'s code, for a change of `names`: logged; the
    NOTED-th, a warning."""
    log.info("srcgrad: %s changed since %s was made: making it again", ", ".join(names),
             label)
    if count == NOTED:
        warnings.warn(f"srcgrad: {', '.join(names)} changed between calls of {label} "
                      f"{NOTED} times, and each change makes (and compiles) its code "
                      f"again: pass {'them' if len(names) > 1 else 'it'} as an argument "
                      f"instead", stacklevel=5)


def _names(code: types.CodeType) -> set[str]:
    names, codes = set(), [code]
    while codes:
        c = codes.pop()
        names.update(c.co_names)
        codes += [k for k in c.co_consts if isinstance(k, types.CodeType)]
    return names


def _users(module: types.ModuleType | None) -> bool:
    from .modules import _users as users
    return module is not None and users(module)


def is_user_function(obj: Any) -> bool:
    """A function of the user's own code (not an installed package's)."""
    from ..frontend.parse import installed
    from ..frontend.parse import is_user_function as users
    return users(obj) and not installed(obj.__code__.co_filename)
