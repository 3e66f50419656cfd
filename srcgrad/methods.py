"""methods: `grad(obj.f)` for a bound method. The transform is of `type(obj).f`; every call
passes the object (read-only, never differentiated) as it is at that call, so a change to
`obj.W` between calls is seen. Positions and names in `wrt` and `static` count the
parameters after self, as the caller sees the bound method. A classmethod is refused.

If the method only reads attributes of self (`self.W`: no method of self called, self not
passed on, assigned or written into), the call passes a frozen dataclass view of those
attributes, one class per (class, attributes), which `passes.pytrees` flattens into
parameters like any container argument read only: numba compiles it. Else the object
itself is passed (the Python form runs it; numba cannot take an arbitrary object).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import gast

from .errors import SrcgradError, WrtError
from .frontend.parse import parse


def for_method(method, options):
    """`options` of a transform of bound `method`, with `wrt` and `static` counted from
    the function's first parameter (self)."""
    if isinstance(method.__self__, type):
        raise SrcgradError(f"{method.__qualname__} is a classmethod: srcgrad differentiates "
                           f"functions, static methods and methods of an object; make it a "
                           f"staticmethod or a function")
    self_name = method.__func__.__code__.co_varnames[0]

    def shifted(w, option):
        if w == self_name:
            raise WrtError(f"{option}={w!r}: {method.__qualname__} reads {self_name} and "
                           f"does not differentiate it; pass the arrays as parameters")
        return w + 1 if isinstance(w, int) and not isinstance(w, bool) and w >= 0 else w

    wrt = tuple(shifted(w, "wrt") for w in options.wrt) \
        if isinstance(options.wrt, (tuple, list)) else shifted(options.wrt, "wrt")
    return options.but(wrt=wrt, static=tuple(shifted(w, "static") for w in options.static))


class Method:
    """The transform of a bound method, called with its object (or a view of the
    attributes it reads: see the module docstring)."""

    def __init__(self, transform, obj: Any):
        functools.update_wrapper(self, transform)
        self.transform, self.obj = transform, obj
        self.attributes = _attributes_read(transform.fun,
                                           transform.fun.__code__.co_varnames[0])

    def _self(self) -> Any:
        values = vars(self.obj) if hasattr(self.obj, "__dict__") else {}
        if self.attributes is None or any(a not in values for a in self.attributes):
            return self.obj
        view = _view_class(type(self.obj), self.attributes)
        return view(**{a: values[a] for a in self.attributes})

    def __call__(self, *args, **kwargs):
        return self.transform(self._self(), *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transform, name)


@functools.cache
def _view_class(cls: type, attributes: tuple[str, ...]) -> type:
    return dataclasses.make_dataclass(f"{cls.__name__}_attributes", attributes, frozen=True)


def _attributes_read(fun, self_name: str) -> tuple[str, ...] | None:
    """The attributes of `self_name` that `fun` reads, if it does nothing else with it."""
    tree = parse(fun).tree
    called = {id(n.func) for n in gast.walk(tree) if isinstance(n, gast.Call)}
    reads, names, attributes = set(), 0, 0
    for node in gast.walk(tree):
        if isinstance(node, gast.Name) and node.id == self_name and \
                not isinstance(node.ctx, gast.Param):
            names += 1
        if isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name) and \
                node.value.id == self_name:
            if id(node) in called or not isinstance(node.ctx, gast.Load):
                return None
            reads.add(node.attr)
            attributes += 1
    return tuple(sorted(reads)) if reads and names == attributes else None
