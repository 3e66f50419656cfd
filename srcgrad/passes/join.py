"""join: a product and its tangent, computed one after the other, become one joint call.

Requires a generated function in which forward mode wrote a product whose factors all
vary (a `rules.Joint`) as two operations, each with rules of its own:

    y = a @ b
    ty = matmul_tangent(a, b, ta, tb)

Guarantees the same function with each such pair that is still whole (`optimize` may have
removed either statement as dead) as one call, which reads each operand once:

    y, ty = matmul_jvp(a, b, ta, tb)

A lowering pass: it runs after `optimize`, on the way to source, and the differentiable
form a higher-order transform reads (`compiler.Generated.ir`) is the one before it.
"""

from __future__ import annotations

import copy
import operator

import gast

from .. import builder as b
from ..rules import Joint, fact, joint_of
from .base import Namespace


def join(fn: gast.FunctionDef, ns: Namespace) -> gast.FunctionDef:
    """`fn` with each product followed by its tangent as one joint call.

    >>> import numpy as np
    >>> from srcgrad.codegen import to_source
    >>> from srcgrad.rules.operator_rules import matmul_tangent
    >>> ns = Namespace()
    >>> _ = ns.bind("matmul_tangent", matmul_tangent)
    >>> fn = gast.parse("def f(a, b, ta, tb):\\n    y = a @ b\\n"
    ...                 "    ty = matmul_tangent(a, b, ta, tb)\\n    return ty").body[0]
    >>> print(to_source(join(fn, ns)).strip())
    def f(a, b, ta, tb):
        y, ty = matmul_jvp(a, b, ta, tb)
        return ty
    """
    fn = copy.copy(fn)
    fn.body = _block(fn.body, ns)
    return fn


def _block(stmts: list[gast.stmt], ns: Namespace) -> list[gast.stmt]:
    out: list[gast.stmt] = []
    for stmt in stmts:
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            stmt = copy.copy(stmt)
            stmt.body, stmt.orelse = _block(stmt.body, ns), _block(stmt.orelse, ns)
        j = _joint(out[-1], stmt, ns) if out else None
        if j is None:
            out.append(stmt)
            continue
        y, tangent = out.pop().targets[0], stmt.value
        call = b.call(b.name(ns.bind(j.joint.__name__, j.joint)), *copy.deepcopy(tangent.args))
        out.append(b.assign(b.tuple_([b.name(y.id, store=True),
                                      b.name(stmt.targets[0].id, store=True)], store=True),
                            call))
    return out


def _joint(first: gast.stmt, second: gast.stmt, ns: Namespace) -> Joint | None:
    """The `Joint` of `first`, ``y = primal(*args)``, and `second`, ``ty = tangent(*args,
    *tangents)``, if they are a product and its tangent that one call can compute; else
    None."""
    if not (_assigns_name(first) and _assigns_name(second)
            and isinstance(second.value, gast.Call) and not second.value.keywords):
        return None
    j = joint_of(ns.called(second.value))
    if j is None:
        return None
    value = first.value
    if isinstance(value, gast.BinOp) and isinstance(value.op, gast.MatMult):
        primal, operands = operator.matmul, [value.left, value.right]
    elif isinstance(value, gast.Call) and not value.keywords:
        primal, operands = ns.called(value), value.args
    else:
        return None
    args = second.value.args
    given = args[:len(args) - len(j.positions)]
    y = first.targets[0].id
    if fact(primal, "joint") is not j or len(operands) != len(given) or any(
            gast.dump(p) != gast.dump(g) for p, g in zip(operands, given, strict=True)):
        return None
    # the tangent call reads the operands before `y = ...` changes one of them
    if any(isinstance(n, gast.Name) and n.id == y for n in gast.walk(second.value)):
        return None
    return j


def _assigns_name(stmt: gast.stmt) -> bool:
    return isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
        isinstance(stmt.targets[0], gast.Name)
