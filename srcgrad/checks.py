"""checks: compare srcgrad's gradient with central finite differences.

`check_grad` is for users (is my gradient, rule or override right?) and for srcgrad's own
tests. Central differences have O(h^2) truncation error, so with h ~ eps^(1/3) scaled to
the input, agreement to about 1e-6 relative is expected in float64 for smooth functions.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from .errors import SrcgradError
from .passes.pytrees import flatten, is_container, leaf_names, unflatten


class GradientMismatch(SrcgradError, AssertionError):
    """`check_grad` found srcgrad's gradient and finite differences disagree."""


def numerical_grad(fun, args: tuple, position: int, h: float = 1e-6) -> Any:
    """Central-difference gradient of scalar `fun(*args)` with respect to `args[position]`.
    Each call gets copies of the array arguments: a function that writes into one (as
    `x -= ...` does) leaves the next call's inputs as they were."""
    x = np.array(args[position], dtype=float)
    out = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        step = h * max(1.0, abs(x[idx]))
        values = []
        for sign in (1.0, -1.0):
            shifted = x.copy()
            shifted[idx] += sign * step
            moved = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
            moved[position] = shifted if x.ndim else float(shifted)
            values.append(float(fun(*moved)))
        out[idx] = (values[0] - values[1]) / (2 * step)
    return out if x.ndim else float(out)


def check_grad(fun, *args, wrt=0, rtol: float = 1e-5, atol: float = 1e-7, **options) -> None:
    """Raise `GradientMismatch` unless `grad(fun, wrt=wrt)(*args)` matches finite differences.
    A container argument (dict, tuple, ...) is checked leaf by leaf.

    >>> def f(x):
    ...     return x ** 3
    >>> check_grad(f, 2.0)
    """
    from .api import grad

    many = isinstance(wrt, (tuple, list))
    g = grad(fun, wrt=wrt, **options)
    got = g(*args)
    got = got if many else (got,)
    for w, value in zip(g.wrt, got, strict=True):
        # (a bound method's transform counts self, which its caller does not pass)
        position = g._params.index(w) - (1 if inspect.ismethod(fun) else 0)
        if is_container(args[position]):   # each leaf, the others held
            tree, leaves = flatten(args[position], w)
            for k, (path, leaf) in enumerate(zip(leaf_names([w], {w: tree}),
                                                 flatten(value, w)[1], strict=True)):
                _compare(fun, path, leaf, numerical_grad(
                    _of_leaf(fun, args, position, tree, leaves, k), args[:position] +
                    (leaves[k],) + args[position + 1:], position), rtol, atol)
        else:
            _compare(fun, w, value, numerical_grad(fun, args, position), rtol, atol)


def _of_leaf(fun, args: tuple, position: int, tree, leaves: list, k: int):
    """`fun` with leaf k of container argument `position` as that argument instead."""
    def at(*moved):
        new = list(leaves)
        new[k] = moved[position]
        return fun(*moved[:position], unflatten(tree, new), *moved[position + 1:])
    return at


def _compare(fun, w: str, value, expected, rtol: float, atol: float) -> None:
    if np.shape(value) != np.shape(expected) or not np.allclose(
            value, expected, rtol=rtol, atol=atol):
        raise GradientMismatch(f"gradient of {fun.__qualname__} with respect to {w!r} "
                               f"does not match central differences:\n  srcgrad: "
                               f"{value!r}\n  numeric: {expected!r}")
