"""jumps: put every `break`, `continue` and `return` at the end of a block.

Requires the user's function body (nested expressions allowed). Guarantees a body where

* a jump is always the last statement of its block: the statements that follow an `if`
  one of whose branches may jump are moved into the branches that fall through;
* a `return` inside a loop has become `result = value; returned = True; break`, and each
  loop that may return this way is followed by `if returned:` plus the jump that
  carries the return outward;
* the function ends with its only `return`;
* no loop has an `else`: `for ...: ... else: E` becomes `broke = False; for ...: ...
  (each of its own `break`s sets `broke = True` first); if not broke: E`, or plain `E`
  after the loop when the loop has no `break` of its own.

Why: once jumps are in tail position, which statements ran in an iteration is told by
the branches taken alone, so the adjoint replays a loop body by replaying its branches
and never needs to know where a jump happened.
"""

from __future__ import annotations

import copy

import gast

from .. import builder as b
from ..naming import Namer

_JUMPS = (gast.Break, gast.Continue, gast.Return)


def structure_jumps(body: list[gast.stmt], namer: Namer) -> list[gast.stmt]:
    """`body` with jumps in tail position and one final `return`.

    >>> import gast, astor
    >>> fn = gast.parse('''
    ... def f(x, n):
    ...     for i in range(n):
    ...         if x > 3.0:
    ...             return x
    ...         x = x * 2.0
    ...     return -x''').body[0]
    >>> fn.body = structure_jumps(fn.body, Namer({"x", "n", "i"}))
    >>> print(astor.to_source(gast.gast_to_ast(fn)).strip())
    def f(x, n):
        returned = False
        for i in range(n):
            if x > 3.0:
                result = x
                returned = True
                break
            else:
                x = x * 2.0
        if not returned:
            result = -x
        return result
    """
    body = _lower_else(copy.deepcopy(body), namer)
    returns = [n for s in body for n in gast.walk(s) if isinstance(n, gast.Return)]
    if len(returns) == 1 and body and body[-1] is returns[0]:
        return _tails(copy.deepcopy(body))
    result, flag = namer.fresh("result"), namer.fresh("returned")
    lowered = _lower_returns(copy.deepcopy(body), result, flag, in_loop=False)
    if any(_mentions(s, flag) for s in lowered):
        lowered.insert(0, b.located(b.assign(flag, b.const(False)), body[0]))
    out = _tails(lowered)
    falls_through = not _always_jumps(out)
    out = _drop_returns(out)
    last = body[-1] if body else None
    if falls_through:
        out.append(b.located(b.assign(result, b.const(None)), last))
    out.append(b.located(b.ret(b.name(result)), last))
    return out


def _lower_else(stmts: list[gast.stmt], namer: Namer) -> list[gast.stmt]:
    """Loops' `else` blocks as code after the loop (inner loops first: a `break` in an
    inner loop's `else` belongs to the outer loop, and is found there once lowered)."""
    out: list[gast.stmt] = []
    for s in stmts:
        if isinstance(s, gast.If):
            s.body, s.orelse = _lower_else(s.body, namer), _lower_else(s.orelse, namer)
        elif isinstance(s, (gast.For, gast.While)):
            s.body = _lower_else(s.body, namer)
            orelse, s.orelse = _lower_else(s.orelse, namer), []
            if orelse and _own_breaks(s.body):
                flag = namer.fresh("broke")
                _flag_breaks(s.body, flag)
                out.append(b.located(b.assign(flag, b.const(False)), s))
                out.append(s)
                out.append(b.located(b.make(gast.If, test=b.make(
                    gast.UnaryOp, op=gast.Not(), operand=b.name(flag)), body=orelse,
                    orelse=[]), s))
                continue
            out.append(s)
            out.extend(orelse)  # no `break` of its own: the `else` always runs
            continue
        out.append(s)
    return out


def _own_breaks(stmts: list[gast.stmt]) -> bool:
    """Whether a `break` of the loop whose body this is (not of a loop inside it) occurs."""
    return any(isinstance(s, gast.Break) or isinstance(s, gast.If) and (
        _own_breaks(s.body) or _own_breaks(s.orelse)) for s in stmts)


def _flag_breaks(stmts: list[gast.stmt], flag: str) -> None:
    for k in range(len(stmts) - 1, -1, -1):
        s = stmts[k]
        if isinstance(s, gast.Break):
            stmts.insert(k, b.located(b.assign(flag, b.const(True)), s))
        elif isinstance(s, gast.If):
            _flag_breaks(s.body, flag)
            _flag_breaks(s.orelse, flag)


def _lower_returns(stmts: list[gast.stmt], result: str, flag: str,
                   in_loop: bool) -> list[gast.stmt]:
    out: list[gast.stmt] = []
    for s in stmts:
        if isinstance(s, gast.Return):
            value = s.value if s.value is not None else b.const(None)
            out.append(b.located(b.assign(result, value), s))
            if in_loop:
                out.append(b.located(b.assign(flag, b.const(True)), s))
                out.append(b.located(b.make(gast.Break), s))
            else:
                out.append(b.located(b.ret(b.name(result)), s))
            continue
        if isinstance(s, gast.If):
            s.body = _lower_returns(s.body, result, flag, in_loop)
            s.orelse = _lower_returns(s.orelse, result, flag, in_loop)
        elif isinstance(s, (gast.For, gast.While)):
            endless = _endless(s)
            s.body = _lower_returns(s.body, result, flag, in_loop=True)
            if _mentions(s, flag):  # a return inside: carry it outward
                out.append(s)
                jump = b.located(b.make(gast.Break) if in_loop else b.ret(b.name(result)), s)
                # `while True` left only by its returns: the flag is set, so jump at once
                # (then no path falls off the function's end, and its result is never
                # None: numba types it as the returned value, not as an optional)
                out.append(jump if endless else b.located(b.make(
                    gast.If, test=b.name(flag), body=[jump], orelse=[]), s))
                continue
        out.append(s)
    return out


def _endless(loop: gast.stmt) -> bool:
    """`while True:` with no `break` of its own: only a return leaves it."""
    if not (isinstance(loop, gast.While) and isinstance(loop.test, gast.Constant)
            and loop.test.value is True):
        return False
    todo = list(loop.body)
    while todo:
        s = todo.pop()
        if isinstance(s, gast.Break):
            return False
        if isinstance(s, gast.If):
            todo += s.body + s.orelse
    return True


def _mentions(node: gast.AST, name: str) -> bool:
    return any(isinstance(n, gast.Name) and n.id == name for n in gast.walk(node))


def _may_jump(stmts: list[gast.stmt]) -> bool:
    """Whether a jump out of this block (not out of a loop inside it) can happen."""
    for s in stmts:
        if isinstance(s, _JUMPS):
            return True
        if isinstance(s, gast.If) and (_may_jump(s.body) or _may_jump(s.orelse)):
            return True
    return False


def _always_jumps(stmts: list[gast.stmt]) -> bool:
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, _JUMPS):
        return True
    return isinstance(last, gast.If) and _always_jumps(last.body) and _always_jumps(last.orelse)


def _tails(stmts: list[gast.stmt]) -> list[gast.stmt]:
    """Move what follows an `if` that may jump into its branches that fall through."""
    out: list[gast.stmt] = []
    for k, s in enumerate(stmts):
        if isinstance(s, _JUMPS):
            out.append(s)
            return out  # what follows a jump never runs
        if isinstance(s, (gast.For, gast.While)):
            s.body = _tails(s.body)
        elif isinstance(s, gast.If):
            rest = stmts[k + 1:]
            if rest and (_may_jump(s.body) or _may_jump(s.orelse)):
                for branch in ("body", "orelse"):
                    block = getattr(s, branch)
                    if not _always_jumps(block):
                        block = block + copy.deepcopy(rest)
                    setattr(s, branch, _tails(block))
                out.append(s)
                return out
            s.body, s.orelse = _tails(s.body), _tails(s.orelse)
        out.append(s)
    return out


def _drop_returns(stmts: list[gast.stmt]) -> list[gast.stmt]:
    """Returns are in tail position and `result` is set: the final `return` serves all."""
    out = []
    for s in stmts:
        if isinstance(s, gast.Return):
            continue
        if isinstance(s, gast.If):
            s.body, s.orelse = _drop_returns(s.body), _drop_returns(s.orelse)
            if not s.body and not s.orelse:
                continue
            if not s.body:
                s.test = b.make(gast.UnaryOp, op=gast.Not(), operand=s.test)
                s.body, s.orelse = s.orelse, []
        elif isinstance(s, (gast.For, gast.While)):
            s.body = _drop_returns(s.body)
        out.append(s)
    return out
