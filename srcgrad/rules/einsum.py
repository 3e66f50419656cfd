"""np.einsum: its record, the helpers its rules call and the numba form of np.einsum
(numba has none).

np.einsum is linear in each operand, and an operand's adjoint is the einsum of dy and
the other operands onto the operand's letters (axes): a letter the result or another
operand carries is kept, one of the operand's alone (or one it broadcasts) is summed
over and broadcast back, and where a letter repeats in it the gradient is put on that
diagonal (zeros elsewhere). Its tangent is the einsum with one operand replaced by its
tangent. The rule asks for the gradient of each differentiated operand alone
(`einsum_grad`), so a constant operand costs no contraction. That gradient is linear in
dy and in each operand other than its own, so its tangent along dy's is `einsum_grad` of
it, and along operand j's the gradient with operand j replaced by its tangent, zero for
its own (`einsum_grad_along`). An ellipsis is spelled out in letters first, and the implicit
result made explicit as NumPy makes it. Under numba each contraction is a loop nest,
written for the subscripts (a string literal in the call) and the ranks of the operands
when numba compiles the call.
"""

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from ..errors import MissingRule
from . import describe, rule, tangent
from .diagonals import _given

# ---- np.einsum ----

_OPERANDS = "abcdefgh"   # the operands a rule of np.einsum takes (its defaults but the first)
_LITERAL = ("srcgrad: np.einsum compiles with its subscripts written as a string in the call "
            "(numba must know them when it compiles); pass jit=False otherwise")


def _spelled(subscripts, ndims):
    """The subscripts of each operand and of the result, every axis a letter (an ellipsis
    spelled out, the implicit result made explicit as NumPy makes it).

    >>> _spelled("ij,jk", (2, 2))
    (['ij', 'jk'], 'ik')
    >>> _spelled("...i->...", (3,))
    (['ABi'], 'AB')
    """
    if not isinstance(subscripts, str):
        raise MissingRule("np.einsum with operands and their axes interleaved has no "
                          "gradient rule: write the subscripts as a string")
    text = subscripts.replace(" ", "")
    ins, arrow, out = text.partition("->")
    inputs = ins.split(",")
    if len(inputs) != len(ndims):
        raise ValueError(f"np.einsum: {len(inputs)} subscripts for {len(ndims)} operands")
    free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in text]
    rank = max([n - len(s.replace("...", "")) for s, n in zip(inputs, ndims, strict=True)
                if "..." in s] or [0])
    ellipsis = "".join(free[:rank])
    spelled = [s.replace("...", ellipsis[rank - (n - len(s) + 3):]) if "..." in s else s
               for s, n in zip(inputs, ndims, strict=True)]
    if not arrow:
        letters = "".join(spelled)
        out = ("..." if "..." in ins else "") + "".join(
            sorted(c for c in set(ins) if c.isalpha() and letters.count(c) == 1))
    return spelled, out.replace("...", ellipsis)


def _operands(a, b, c, d, e, f, g, h):
    return [x for x in (a, b, c, d, e, f, g, h) if x is not None]


def _no_einsum_dtype(dtype):
    if dtype is not None:
        raise MissingRule("np.einsum with dtype= has no gradient rule: convert the "
                          "operands with .astype first")


def _operand_grad(dy, inputs, output, operands, k):
    """The gradient of operand k: dy contracted with the other operands onto the letters
    of k that they or the result carry (a letter of k alone, or one that k broadcasts,
    is summed over and broadcast back), put on k's diagonal where a letter repeats."""
    x, own = operands[k], inputs[k]
    size = {}
    for s, op in zip(inputs, operands, strict=True):
        for letter, n in zip(s, np.shape(op), strict=True):
            size[letter] = max(size.get(letter, 1), n)
    mine = dict(zip(own, np.shape(x), strict=True))
    others = inputs[:k] + inputs[k + 1:]
    elsewhere = set(output).union(*others)
    unique = "".join(dict.fromkeys(own))
    kept = "".join(c for c in unique if c in elsewhere and mine[c] == size[c])
    g = np.einsum(",".join([output] + others) + "->" + kept, dy,
                  *(operands[:k] + operands[k + 1:]))
    g = np.reshape(g, [np.shape(g)[kept.index(c)] if c in kept else 1 for c in unique])
    g = np.broadcast_to(g, [mine[c] for c in unique])
    if len(unique) == len(own):
        return np.array(g, dtype=np.result_type(g, 1.0))
    out = np.zeros(np.shape(x), dtype=np.result_type(g, 1.0))
    np.einsum(own + "->" + unique, out)[...] = g  # a view of out's diagonal
    return out


def einsum_grad(k, dy, subscripts, a, b=None, c=None, d=None, e=None, f=None, g=None,
                h=None, dtype=None):
    """The gradient of operand k (from 0) of ``y = np.einsum(subscripts, a, b, ...)``:
    dy contracted with the other operands. The rule asks it of the operands being
    differentiated only.

    >>> einsum_grad(1, 1.0, "i,i->", np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    array([1., 2.])
    """
    _no_einsum_dtype(dtype)
    operands = _operands(a, b, c, d, e, f, g, h)
    inputs, output = _spelled(subscripts, [np.ndim(x) for x in operands])
    return _operand_grad(dy, inputs, output, operands, k)


def einsum_grad_along(k, j, dx, dy, subscripts, a, b=None, c=None, d=None, e=None, f=None,
                      g=None, h=None, dtype=None):
    """The tangent of ``einsum_grad(k, dy, subscripts, a, b, ...)`` along dx, the tangent
    of operand j: the gradient with operand j replaced by dx; zero for j = k (operand k's
    gradient does not read it).

    >>> einsum_grad_along(1, 0, np.ones(2), 1.0, "i,i->", np.zeros(2), np.array([3.0, 4.0]))
    array([1., 1.])
    """
    operands = _operands(a, b, c, d, e, f, g, h)
    if j == k:
        return np.zeros(np.shape(operands[k]), np.result_type(dx, dy, *operands, 1.0))
    return einsum_grad(k, dy, subscripts, *operands[:j], dx, *operands[j + 1:], dtype=dtype)


def einsum_tangents(dx, subscripts, a, b=None, c=None, d=None, e=None, f=None, g=None,
                    h=None):
    """Entry 1 + k: ``np.einsum(subscripts, ...)`` with the operand k replaced by dx, its
    tangent (forward mode reads the entry of the operand dx belongs to; an operand of
    another shape gives None).

    >>> float(einsum_tangents(np.ones(2), "i,i->", np.zeros(2), np.array([3.0, 4.0]))[1])
    7.0
    """
    operands = _operands(a, b, c, d, e, f, g, h)
    return (None,) + tuple(
        np.einsum(subscripts, *operands[:k], dx, *operands[k + 1:])
        if np.shape(dx) == np.shape(operands[k]) else None for k in range(len(operands)))


# numba: a loop nest per contraction, written for the subscripts (a string literal) and
# the ranks of the operands when numba compiles the call


def _nest(inputs, output, like=False, complex_=False):
    """Source of ``contract(x0, x1, ..., [like])``: the sum over every letter of the
    products of the operands' entries, into an array with the result's letters (a
    repeated one fills a diagonal; a size-1 axis broadcasts). `like`: an array giving
    the result's shape (a gradient in an operand's shape), else NumPy's result;
    `complex_`: complex entries, else float64 ones."""
    n = len(inputs)
    args = [f"x{i}" for i in range(n)] + (["like"] if like else [])
    lines = [f"def contract({', '.join(args)}):"]
    letters = "".join(dict.fromkeys("".join(inputs) + output))
    seen = {}
    for i, s in enumerate(inputs):
        for ax, c in enumerate(s):
            seen.setdefault(c, []).append(f"x{i}.shape[{ax}]")
    if like:
        for ax, c in enumerate(output):
            seen.setdefault(c, []).append(f"like.shape[{ax}]")
    for c in letters:
        dims = seen[c]
        lines.append(f"    n_{c} = max({', '.join(dims)}, 1)" if len(dims) > 1 else
                     f"    n_{c} = {dims[0]}")
        lines += [f"    if {dim} != n_{c} and {dim} != 1:\n"
                  f"        raise ValueError('np.einsum: operands could not be broadcast')"
                  for dim in dims]
    sources = [(f"x{i}", s) for i, s in enumerate(inputs)] + (
        [("like", output)] if like else [])
    for name, s in sources:
        lines += [f"    {name}_{ax} = 1 if {name}.shape[{ax}] != 1 else 0"
                  for ax in range(len(s))]

    def entry(name, s):
        return f"{name}[{', '.join(f'{c} * {name}_{ax}' for ax, c in enumerate(s))}]" \
            if s else name

    target = entry("like", output) if like else \
        f"out[{', '.join(output)}]" if output else "out"
    if like or output:
        shape = "like.shape" if like else f"({''.join(f'n_{c}, ' for c in output)})"
        lines.append(f"    out = np.zeros({shape}, np.{'complex128' if complex_ else 'float64'})")
        target = target.replace("like[", "out[")
    else:
        lines.append("    out = 0j" if complex_ else "    out = 0.0")
    indent = "    "
    for c in letters:
        lines.append(f"{indent}for {c} in range(n_{c}):")
        indent += "    "
    product = " * ".join(entry(f"x{i}", s) for i, s in enumerate(inputs))
    lines.append(f"{indent}{target} += {product}")
    lines.append("    return out")
    return "\n".join(lines)


def _compiled(source):
    namespace = {"np": np}
    exec(source, namespace)
    return register_jitable(namespace["contract"])


def _complex(values):
    """Whether a value of these numba types is complex."""
    return any(isinstance(getattr(t, "dtype", t), types.Complex) for t in values)


def _ndims(operands):
    return [x.ndim if isinstance(x, types.Array) else 0 for x in operands]


def _literal(subscripts):
    if not isinstance(subscripts, types.StringLiteral):
        raise TypingError(_LITERAL)
    return subscripts.literal_value


@overload(np.einsum, prefer_literal=True)
def _np_einsum(subscripts, a, b=None, c=None, d=None, e=None, f=None, g=None, h=None,
               optimize=False):
    operands = _given_operands(a, b, c, d, e, f, g, h)
    inputs, output = _spelled(_literal(subscripts), _ndims(operands))
    source = (f"def impl(subscripts, a, b=None, c=None, d=None, e=None, f=None, g=None, "
              f"h=None, optimize=False):\n"
              f"    return contract({', '.join(_OPERANDS[:len(operands)])})")
    namespace = {"contract": _compiled(_nest(inputs, output, complex_=_complex(operands)))}
    exec(source, namespace)
    return namespace["impl"]


def _given_operands(a, b, c, d, e, f, g, h):
    return [x for x in (a, b, c, d, e, f, g, h) if _given(x)]


def _position(k, what):
    if not isinstance(k, types.IntegerLiteral):
        raise TypingError(f"srcgrad: {what} compiles with the operand's position written as "
                          f"an int in the call")
    return k.literal_value


@overload(einsum_grad, prefer_literal=True)
def _einsum_grad_typer(k, dy, subscripts, a, b=None, c=None, d=None, e=None, f=None, g=None,
                       h=None, dtype=None):
    at = _position(k, "einsum_grad")
    if _given(dtype):
        raise TypingError("srcgrad: np.einsum with dtype= has no gradient rule")
    operands = _given_operands(a, b, c, d, e, f, g, h)
    inputs, output = _spelled(_literal(subscripts), _ndims(operands))
    names = _OPERANDS[:len(operands)]
    grad = _compiled(_nest([output] + inputs[:at] + inputs[at + 1:], inputs[at], like=True,
                           complex_=_complex([dy] + operands)))
    source = (f"def impl(k, dy, subscripts, a, b=None, c=None, d=None, e=None, f=None, "
              f"g=None, h=None, dtype=None):\n"
              f"    return grad(dy, {''.join(v + ', ' for v in names[:at] + names[at + 1:])}"
              f"{names[at]})")
    namespace = {"grad": grad}
    exec(source, namespace)
    return namespace["impl"]


@overload(einsum_grad_along, prefer_literal=True)
def _einsum_grad_along_typer(k, j, dx, dy, subscripts, a, b=None, c=None, d=None, e=None,
                             f=None, g=None, h=None, dtype=None):
    at, along = _position(k, "einsum_grad_along"), _position(j, "einsum_grad_along")
    if _given(dtype):
        raise TypingError("srcgrad: np.einsum with dtype= has no gradient rule")
    operands = _given_operands(a, b, c, d, e, f, g, h)
    names = _OPERANDS[:len(operands)]
    head = ("def impl(k, j, dx, dy, subscripts, a, b=None, c=None, d=None, e=None, f=None, "
            "g=None, h=None, dtype=None):\n")
    if along == at:
        kind = "complex128" if _complex([dx, dy] + operands) else "float64"
        source = head + f"    return np.zeros({names[at]}.shape, np.{kind})"
    else:
        swapped = ", ".join("dx" if i == along else v for i, v in enumerate(names))
        source = head + f"    return einsum_grad({at}, dy, subscripts, {swapped})"
    namespace = {"einsum_grad": einsum_grad, "np": np}
    exec(source, namespace)
    return namespace["impl"]


@overload(einsum_tangents, prefer_literal=True)
def _einsum_tangents_typer(dx, subscripts, a, b=None, c=None, d=None, e=None, f=None,
                           g=None, h=None):
    operands = _given_operands(a, b, c, d, e, f, g, h)
    inputs, output = _spelled(_literal(subscripts), _ndims(operands))
    names = _OPERANDS[:len(operands)]
    lines = ["def impl(dx, subscripts, a, b=None, c=None, d=None, e=None, f=None, g=None, "
             "h=None):"]
    entries = []
    for k, x in enumerate(operands):
        if _ndims([dx]) != _ndims([x]):
            entries.append("None")
            continue
        swapped = ", ".join("dx" if j == k else v for j, v in enumerate(names))
        lines += [f"    if dx.shape == {names[k]}.shape:",
                  f"        t{k} = contract({swapped})",
                  "    else:  # dx is another operand's tangent: this entry is not read",
                  f"        t{k} = contract({', '.join(names)})"]
        entries.append(f"t{k}")
    lines.append(f"    return (None, {', '.join(entries)},)")
    namespace = {"contract": _compiled(_nest(inputs, output,
                                             complex_=_complex([dx] + operands)))}
    exec("\n".join(lines), namespace)
    return namespace["impl"]


@rule(np.einsum)
def einsum(dy, y, subscripts, a, b=None, c=None, d=None, e=None, f=None, g=None, h=None,
           optimize=False, dtype=None, order="K", casting="safe"):
    # one gradient per operand, so that only the differentiated operands' are computed;
    # optimize, order and casting change the order of the sums and the memory layout of
    # the result, not its value
    return (None,
            einsum_grad(0, dy, subscripts, a, b, c, d, e, f, g, h, dtype),
            einsum_grad(1, dy, subscripts, a, b, c, d, e, f, g, h, dtype),
            einsum_grad(2, dy, subscripts, a, b, c, d, e, f, g, h, dtype),
            einsum_grad(3, dy, subscripts, a, b, c, d, e, f, g, h, dtype),
            einsum_grad(4, dy, subscripts, a, b, c, d, e, f, g, h, dtype),
            einsum_grad(5, dy, subscripts, a, b, c, d, e, f, g, h, dtype),
            einsum_grad(6, dy, subscripts, a, b, c, d, e, f, g, h, dtype),
            einsum_grad(7, dy, subscripts, a, b, c, d, e, f, g, h, dtype),
            None, None, None, None)


@tangent(np.einsum)
def einsum_tangent(dx, y, subscripts, a, b=None, c=None, d=None, e=None, f=None, g=None,
                   h=None, optimize=False, dtype=None, order="K", casting="safe"):
    return einsum_tangents(dx, subscripts, a, b, c, d, e, f, g, h)


@tangent(einsum_grad)
def einsum_grad_tangent(dx, y, k, dy, subscripts, a, b=None, c=None, d=None, e=None, f=None,
                        g=None, h=None, dtype=None):
    return (None, einsum_grad(k, dx, subscripts, a, b, c, d, e, f, g, h, dtype), None,
            einsum_grad_along(k, 0, dx, dy, subscripts, a, b, c, d, e, f, g, h, dtype),
            einsum_grad_along(k, 1, dx, dy, subscripts, a, b, c, d, e, f, g, h, dtype),
            einsum_grad_along(k, 2, dx, dy, subscripts, a, b, c, d, e, f, g, h, dtype),
            einsum_grad_along(k, 3, dx, dy, subscripts, a, b, c, d, e, f, g, h, dtype),
            einsum_grad_along(k, 4, dx, dy, subscripts, a, b, c, d, e, f, g, h, dtype),
            einsum_grad_along(k, 5, dx, dy, subscripts, a, b, c, d, e, f, g, h, dtype),
            einsum_grad_along(k, 6, dx, dy, subscripts, a, b, c, d, e, f, g, h, dtype),
            einsum_grad_along(k, 7, dx, dy, subscripts, a, b, c, d, e, f, g, h, dtype), None)


describe(einsum_grad, einsum_grad_along, einsum_tangents, pure=True)
