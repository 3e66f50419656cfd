"""annotations: what users write in a differentiated function to customise its gradient.

The compiler reads these from the syntax tree (see `passes/annotate`); run as plain
Python they change nothing about the value: `stop_gradient` and `identity` return their
argument, `gradient_override` is a no-op context manager, and `grad_of` runs its block
once on a zero gradient. `register_gradient` and `adjoint` put user rules, with the
public signature `rule(dy, y, *args)`, into the rule tables.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import numpy as np

from .deferred import overload
from .errors import RuleError
from .rules import NAMED, nondifferentiable, rule, set_rule, user_rule


def stop_gradient(x):
    """`x`, through which no gradient flows (`tf.stop_gradient`, `jax.lax.stop_gradient`).

    >>> import srcgrad
    >>> def f(x):
    ...     return x * srcgrad.stop_gradient(x)
    >>> srcgrad.grad(f)(3.0)    # d/dx of x * c at c = 3
    3.0
    """
    return x


def identity(x):
    """`x`, with the gradient `dy`; a hook for `gradient_override` (gradient reversal)."""
    return x


nondifferentiable(stop_gradient)


@rule(identity, elementwise=True)
def _identity_rule(dy, y, x):
    return dy


@overload(stop_gradient)
def _stop_gradient_typer(x):
    return lambda x: x


@overload(identity)
def _identity_typer(x):
    return lambda x: x


class gradient_override:  # noqa: N801  (used as a `with` annotation, like a function)
    """`with gradient_override({np.sign: "QuantizeGrad"}):` gives every matching call
    written inside the block the named rule's gradient (TF's `gradient_override_map`).

    Keys: a function (`np.sign`, `srcgrad.identity`, a user function) or its name
    (`"sign"`, `"np.sign"`); values: a name given to `register_gradient`, or a rule
    function. Nested blocks: the innermost match wins. As plain Python it does nothing.
    """

    def __init__(self, mapping: dict):
        self.mapping = mapping

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class grad_of:  # noqa: N801
    """`with grad_of(h) as dh:` runs its block in the backward pass, where the adjoint of
    `h` is complete for everything after the block; assigning `dh` replaces it (gradient
    clipping, printing a gradient). Tangent's `insert_grad_of`. As plain Python the block
    runs once, on a zero gradient.
    """

    def __init__(self, x):
        self.x = x

    def __enter__(self):
        return np.zeros_like(self.x) if isinstance(self.x, np.ndarray) else 0.0 * self.x

    def __exit__(self, *exc):
        return False


def register_gradient(name: str, *, replace: bool = False) -> Callable[[Callable], Callable]:
    """Register the decorated rule `rule(dy, y, *args)` under `name`, for
    `gradient_override` (TF's `RegisterGradient`). Registering another rule under a
    taken name is an error unless `replace=True` (the same rule defined again, as when
    a module is imported twice, is fine).

    >>> import numpy as np, srcgrad
    >>> @srcgrad.register_gradient("DoctestReverse", replace=True)
    ... def _reverse(dy, y, x):
    ...     return -dy
    >>> def f(x):
    ...     with srcgrad.gradient_override({srcgrad.identity: "DoctestReverse"}):
    ...         y = srcgrad.identity(x)
    ...     return 3.0 * y
    >>> srcgrad.grad(f)(2.0)
    -3.0
    """
    if not isinstance(name, str) or not name:
        raise RuleError(f"register_gradient takes the rule's name (a string), not {name!r}")

    def register(fn: Callable) -> Callable:
        r = user_rule(fn)
        if name in NAMED and not replace and not _same(NAMED[name].fn, fn):
            raise RuleError(f"a gradient named {name!r} is registered already (by "
                            f"{NAMED[name].origin}); pass replace=True to replace it",
                            filename=fn.__code__.co_filename,
                            lineno=fn.__code__.co_firstlineno)
        NAMED[name] = r
        return fn
    return register


def _same(a: Callable, b: Callable) -> bool:
    """The same rule, defined again (a module imported twice, a notebook cell re-run)."""
    if a is b:
        return True
    try:
        return (a.__qualname__ == b.__qualname__
                and inspect.getsource(a) == inspect.getsource(b))
    except (OSError, TypeError, AttributeError):
        return False


def adjoint(fun: Callable) -> Callable[[Callable], Callable]:
    """Decorator: the decorated `rule(dy, y, *args)` is the gradient of every call to the
    user function `fun` in differentiated code (TF's `custom_gradient`, JAX's
    `custom_vjp`); srcgrad no longer differentiates `fun`'s source.

    >>> import numpy as np, srcgrad
    >>> def double(x):
    ...     return 2.0 * x
    >>> @srcgrad.adjoint(double)
    ... def _double_clipped(dy, y, x):
    ...     return np.clip(2.0 * dy, -1.0, 1.0)
    >>> def f(x):
    ...     return 3.0 * double(x)
    >>> srcgrad.grad(f)(1.0)    # 2 * 3, clipped
    1.0
    """
    if not callable(fun):
        raise RuleError(f"adjoint takes the function whose gradient it gives, not {fun!r}")

    def register(fn: Callable) -> Callable:
        r = user_rule(fn)
        _check_arity(fun, fn, r.params)
        set_rule(fun, r)
        return fn
    return register


def _check_arity(fun: Callable, fn: Callable, params: list[str]) -> None:
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        return
    needed = [p for p in sig.parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
              and p.default is p.empty]
    allowed = [p for p in sig.parameters.values()
               if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if not len(needed) <= len(params) <= len(allowed):
        raise RuleError(f"adjoint {fn.__qualname__} takes {len(params)} argument(s) after "
                        f"(dy, y), but {getattr(fun, '__qualname__', fun)}{sig} takes "
                        f"{len(allowed)}: the rule takes (dy, y, *args) with the function's "
                        f"arguments", filename=fn.__code__.co_filename,
                        lineno=fn.__code__.co_firstlineno)

