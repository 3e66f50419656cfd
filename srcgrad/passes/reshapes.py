"""reshapes: generated code reshapes through `reshaped`, which numba compiles for any layout.

Requires generated functions (after `optimize` and the other lowerings). Guarantees the
same functions with each reshape in C order, the user's and those inlined rules wrote
(`a.reshape(2, 3)`, `a.reshape(shape)`, `np.reshape(a, shape)`, `order="C"` or none), as
`reshaped(a, shape)`; a reshape in another order, or with other keywords, is left as it
is (`rules.shapes` gives numba `np.reshape` in order 'F').

Exists because numba reshapes contiguous arrays only: `x[:, 0].reshape(2, 1)` (a strided
slice, numba's 'A' layout) is refused at compile time, and `x.T.reshape(6)` ('F') raises
when it runs, where NumPy copies. `runtime.reshaped` keeps the view for contiguous arrays
and reshapes a contiguous copy otherwise. A copy reads what the view would in generated
code only (writes through a view are refused by `check`, views are taken again after
writes by `views`), so the change is made here, to srcgrad's code, and never to numba's
typing of `ndarray.reshape`, which the user's own numba code shares.

A lowering pass: it runs on the way to source, and the differentiable form a higher-order
transform reads (`compiler.Generated.ir`) is the one before it.
"""

from __future__ import annotations

import copy
import types

import gast
import numpy as np

from .. import builder as b
from ..runtime import reshaped
from .base import Namespace


def reshapes(fn: gast.FunctionDef, ns: Namespace) -> gast.FunctionDef:
    """`fn` with its C-order reshapes as calls of `reshaped`.

    >>> from srcgrad.codegen import to_source
    >>> ns = Namespace()
    >>> _ = ns.bind("np", np)
    >>> fn = gast.parse("def f(x, s):\\n    a = x[:, 0].reshape(2, 1)\\n"
    ...                 "    b = np.reshape(x.T, s)\\n    c = x.reshape(s, order='F')\\n"
    ...                 "    return a, b, c").body[0]
    >>> print(to_source(reshapes(fn, ns)).strip())
    def f(x, s):
        a = reshaped(x[:, 0], (2, 1))
        b = reshaped(x.T, s)
        c = x.reshape(s, order='F')
        return a, b, c
    """
    taken = frozenset(n.id for n in gast.walk(fn) if isinstance(n, gast.Name))
    return _Reshapes(ns, taken).visit(copy.deepcopy(fn))


class _Reshapes(gast.NodeTransformer):
    def __init__(self, ns: Namespace, taken: frozenset[str]):
        self.ns, self.taken, self.helper = ns, taken, None

    def visit_Call(self, node: gast.Call) -> gast.AST:
        self.generic_visit(node)
        operands = _reshape_operands(node, self.ns)
        if operands is None:
            return node
        if self.helper is None:
            self.helper = self.ns.bind("reshaped", reshaped, avoid=self.taken)
        return b.located(b.call(b.name(self.helper), *operands), node)


def _reshape_operands(node: gast.Call, ns: Namespace) -> tuple[gast.AST, gast.AST] | None:
    """(array, shape) of a C-order reshape `node`, else None."""
    func = node.func
    if not isinstance(func, gast.Attribute) or func.attr != "reshape" or \
            any(isinstance(a, gast.Starred) for a in node.args) or \
            not all(k.arg == "order" and isinstance(k.value, gast.Constant)
                    and k.value.value == "C" for k in node.keywords):
        return None
    owner = ns.resolve(func.value)
    if isinstance(owner, types.ModuleType):   # np.reshape(a, shape)
        if ns.resolve(func) is not np.reshape or len(node.args) != 2:
            return None
        return node.args[0], node.args[1]
    if not node.args or owner is not None:    # a method of an array: a.reshape(...)
        return None
    shape = node.args[0] if len(node.args) == 1 else b.tuple_(list(node.args))
    return func.value, shape
