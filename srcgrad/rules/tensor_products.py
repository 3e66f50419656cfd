"""Tensor products: the records of np.kron, np.inner and np.tensordot, the helpers their
rules call (each Python form beside its numba form), and the numba forms NumPy's
functions lack there (np.inner, np.tensordot).

Each product is linear in each operand, and an operand's adjoint is dy contracted with
the other operand over the axes that are not its own: with y = kron(a, b), y[i p + k,
j q + l] = a[i, j] b[k, l], so a's adjoint sums dy, seen as (m, p, n, q), against b; with
y = inner(a, b) = A B^T (A, B: a, b as matrices of rows), a's adjoint is dY B and b's is
dY^T A; y = tensordot(a, b, axes) is a matrix product A B once a and b are transposed
and reshaped to matrices (A: a's free axes by the contracted ones, B: the contracted by
b's free ones), so a's adjoint is dY B^T, reshaped and transposed back to a's axes. An
operand's tangent is the product with it replaced by its tangent; each adjoint is linear
in dy and in the other operand, so its tangent rule is the adjoint again with dy, or
that operand, replaced by a tangent.
"""

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from ..errors import MissingRule
from . import describe, rule, tangent

# ---- bilinear products: np.kron, np.inner ----


def _kron_operands(a, b):
    if np.ndim(a) != np.ndim(b) or np.ndim(a) not in (1, 2):
        raise MissingRule("np.kron has a gradient rule for two vectors or two matrices "
                          f"only, not arrays of {np.ndim(a)} and {np.ndim(b)} dimensions")


def kron_lhs_grad(dy, a, b):
    """The gradient of a of ``y = np.kron(a, b)`` (a is read for its shape only).

    >>> kron_lhs_grad(np.ones(6), np.zeros(2), np.array([1.0, 2.0, 3.0]))
    array([6., 6.])
    """
    _kron_operands(a, b)
    if np.ndim(a) == 1:
        return np.reshape(dy, (len(a), len(b))) @ b
    (m, n), (p, q) = np.shape(a), np.shape(b)
    return np.einsum("ipjq,pq->ij", np.reshape(dy, (m, p, n, q)), b)


def kron_rhs_grad(dy, a, b):
    """The gradient of b of ``y = np.kron(a, b)`` (b is read for its shape only).

    >>> kron_rhs_grad(np.ones(6), np.array([1.0, 2.0]), np.zeros(3))
    array([3., 3., 3.])
    """
    _kron_operands(a, b)
    if np.ndim(a) == 1:
        return a @ np.reshape(dy, (len(a), len(b)))
    (m, n), (p, q) = np.shape(a), np.shape(b)
    return np.einsum("ipjq,ij->pq", np.reshape(dy, (m, p, n, q)), a)


def _kron_typer(a, b):
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)
            and a.ndim == b.ndim and a.ndim in (1, 2)):
        raise TypingError("srcgrad: np.kron has a gradient rule for two vectors or two "
                          "matrices only")


@register_jitable
def _kron_blocks(dy, a, b, lhs):
    """Sum dy, seen as (m, p, n, q) blocks, against b (lhs) or a: the adjoints of kron."""
    m, n, p, q = a.shape[0], a.shape[1], b.shape[0], b.shape[1]
    d = np.ascontiguousarray(dy).reshape((m, p, n, q))
    out = np.zeros((m, n) if lhs else (p, q))
    for i in range(m):
        for k in range(p):
            for j in range(n):
                for s in range(q):
                    if lhs:
                        out[i, j] += d[i, k, j, s] * b[k, s]
                    else:
                        out[k, s] += d[i, k, j, s] * a[i, j]
    return out


@overload(kron_lhs_grad)
def _kron_lhs_grad_typer(dy, a, b):
    _kron_typer(a, b)
    if a.ndim == 1:
        return lambda dy, a, b: np.ascontiguousarray(dy).reshape((a.size, b.size)) @ b
    return lambda dy, a, b: _kron_blocks(dy, a, b, True)


@overload(kron_rhs_grad)
def _kron_rhs_grad_typer(dy, a, b):
    _kron_typer(a, b)
    if a.ndim == 1:
        return lambda dy, a, b: a @ np.ascontiguousarray(dy).reshape((a.size, b.size))
    return lambda dy, a, b: _kron_blocks(dy, a, b, False)


@rule(np.kron)
def kron(dy, y, a, b):
    return kron_lhs_grad(dy, a, b), kron_rhs_grad(dy, a, b)


@tangent(np.kron)
def kron_tangent(dx, y, a, b):
    return np.kron(dx, b), np.kron(a, dx)


@tangent(kron_lhs_grad)
def kron_lhs_grad_tangent(dx, y, dy, a, b):
    return kron_lhs_grad(dx, a, b), None, kron_lhs_grad(dy, a, dx)


@tangent(kron_rhs_grad)
def kron_rhs_grad_tangent(dx, y, dy, a, b):
    return kron_rhs_grad(dx, a, b), kron_rhs_grad(dy, dx, b), None


def _rows(a, b):
    """How many rows a and b have as matrices of their last axis (inner's operands)."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        raise MissingRule("np.inner of a number has no gradient rule: multiply instead")
    n = np.shape(a)[-1]
    return np.size(a) // n if n else 0, np.size(b) // n if n else 0, n


def inner_lhs_grad(dy, a, b):
    """The gradient of a of ``y = np.inner(a, b)`` (a is read for its shape only).

    >>> inner_lhs_grad(np.array([1.0, 2.0]), np.zeros(3), np.ones((2, 3)))
    array([3., 3., 3.])
    """
    ra, rb, n = _rows(a, b)
    return np.reshape(np.reshape(dy, (ra, rb)) @ np.reshape(b, (rb, n)), np.shape(a))


def inner_rhs_grad(dy, a, b):
    """The gradient of b of ``y = np.inner(a, b)`` (b is read for its shape only).

    >>> inner_rhs_grad(2.0, np.array([1.0, 3.0]), np.zeros(2))
    array([2., 6.])
    """
    ra, rb, n = _rows(a, b)
    return np.reshape(np.reshape(dy, (ra, rb)).T @ np.reshape(a, (ra, n)), np.shape(b))


def _inner_typer(a, b):
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)
            and a.ndim >= 1 and b.ndim >= 1):
        raise TypingError("srcgrad: np.inner takes two arrays here")


@register_jitable
def _as_rows(x, n):
    return np.ascontiguousarray(x).reshape((x.size // n if n else 0, n))


@overload(inner_lhs_grad)
def _inner_lhs_grad_typer(dy, a, b):
    _inner_typer(a, b)
    if a.ndim == 1 and b.ndim == 1:
        return lambda dy, a, b: dy * b

    def impl(dy, a, b):
        n = a.shape[-1]
        rb = _as_rows(b, n)
        d = np.ascontiguousarray(dy).reshape((a.size // n if n else 0, rb.shape[0]))
        return (d @ rb).reshape(a.shape)
    return impl


@overload(inner_rhs_grad)
def _inner_rhs_grad_typer(dy, a, b):
    _inner_typer(a, b)
    if a.ndim == 1 and b.ndim == 1:
        return lambda dy, a, b: dy * a

    def impl(dy, a, b):
        n = a.shape[-1]
        ra = _as_rows(a, n)
        d = np.ascontiguousarray(dy).reshape((ra.shape[0], b.size // n if n else 0))
        return (d.T @ ra).reshape(b.shape)
    return impl


@overload(np.inner)
def _np_inner(a, b):
    _inner_typer(a, b)
    if a.ndim == 1 and b.ndim == 1:
        return lambda a, b: np.dot(a, b)

    def impl(a, b):
        n = a.shape[-1]
        if b.shape[-1] != n:
            raise ValueError("shapes not aligned: np.inner's last axes differ")
        return (_as_rows(a, n) @ _as_rows(b, n).T).reshape(a.shape[:-1] + b.shape[:-1])
    return impl


@rule(np.inner)
def inner(dy, y, a, b):
    return inner_lhs_grad(dy, a, b), inner_rhs_grad(dy, a, b)


@tangent(np.inner)
def inner_tangent(dx, y, a, b):
    return np.inner(dx, b), np.inner(a, dx)


@tangent(inner_lhs_grad)
def inner_lhs_grad_tangent(dx, y, dy, a, b):
    return inner_lhs_grad(dx, a, b), None, inner_lhs_grad(dy, a, dx)


@tangent(inner_rhs_grad)
def inner_rhs_grad_tangent(dx, y, dy, a, b):
    return inner_rhs_grad(dx, a, b), inner_rhs_grad(dy, dx, b), None


# ---- np.tensordot ----


def _tensordot_axes(axes, nda, ndb):
    """The contracted axes of a and of b, paired, counted from the front.

    >>> _tensordot_axes(1, 2, 2)
    ([1], [0])
    """
    if isinstance(axes, (int, np.integer)):
        return list(range(nda - axes, nda)), list(range(axes))
    ax_a, ax_b = ([x] if isinstance(x, (int, np.integer)) else list(x) for x in axes)
    return [x % nda for x in ax_a], [x % ndb for x in ax_b]


def tensordot_lhs_grad(dy, a, b, axes=2):
    """The gradient of a of ``y = np.tensordot(a, b, axes)``: dy contracted with b over
    b's free axes, its axes put back in a's order (a is read for its shape only).

    >>> tensordot_lhs_grad(np.ones(2), np.zeros((2, 3)), np.ones(3), 1)
    array([[1., 1., 1.],
           [1., 1., 1.]])
    """
    nda, ndb = np.ndim(a), np.ndim(b)
    ax_a, ax_b = _tensordot_axes(axes, nda, ndb)
    free_a = [i for i in range(nda) if i not in ax_a]
    free_b = [i for i in range(ndb) if i not in ax_b]
    g = np.tensordot(dy, b, axes=(list(range(len(free_a), np.ndim(dy))), free_b))
    # g's axes: a's free axes, then b's contracted ones in b's order
    order = free_a + [ax_a[ax_b.index(j)] for j in sorted(ax_b)]
    return np.transpose(g, np.argsort(order))


def tensordot_rhs_grad(dy, a, b, axes=2):
    """The gradient of b of ``y = np.tensordot(a, b, axes)`` (b is read for its shape
    only).

    >>> tensordot_rhs_grad(np.ones(2), np.ones((2, 3)), np.zeros(3), 1)
    array([2., 2., 2.])
    """
    nda, ndb = np.ndim(a), np.ndim(b)
    ax_a, ax_b = _tensordot_axes(axes, nda, ndb)
    free_a = [i for i in range(nda) if i not in ax_a]
    free_b = [i for i in range(ndb) if i not in ax_b]
    g = np.tensordot(a, dy, axes=(free_a, list(range(len(free_a)))))
    # g's axes: a's contracted axes in a's order (as b's), then b's free ones
    order = [ax_b[ax_a.index(i)] for i in sorted(ax_a)] + free_b
    return np.transpose(g, np.argsort(order))


def _contracted(axes):
    """How many axes np.tensordot contracts, from the numba type of `axes` (None if
    numba does not know it when it compiles)."""
    if axes is None or isinstance(axes, types.Omitted):
        return 2 if axes is None else axes.value
    if isinstance(axes, int):
        return axes
    if isinstance(axes, types.IntegerLiteral):
        return axes.literal_value
    if isinstance(axes, types.BaseTuple) and len(axes) == 2:
        first = axes.types[0]
        if isinstance(first, types.Integer):
            return 1
        if isinstance(first, types.BaseTuple):
            return len(first)
        if isinstance(first, types.List) and first.initial_value is not None:
            return len(first.initial_value)
    return None


def _tensordot_source(mode, nda, ndb, k, pair):
    """Source of the numba form of np.tensordot (`mode` "value") or of its adjoints
    ("lhs", "rhs"): a and b transposed to matrices (free axes, contracted axes), one
    matrix product, and the result shaped (or, for an adjoint, transposed) back."""
    fa, fb = nda - k, ndb - k
    head = {"value": "def impl(a, b, axes=2):",
            "lhs": "def impl(dy, a, b, axes=2):", "rhs": "def impl(dy, a, b, axes=2):"}
    lines = [head[mode]]
    if pair:
        lines += [f"    ax_a = _axes_of(axes[0], {k}, {nda})",
                  f"    ax_b = _axes_of(axes[1], {k}, {ndb})"]
    else:
        lines += [f"    ax_a = np.arange({nda - k}, {nda})", f"    ax_b = np.arange({k})"]
    lines += [f"    pa = _order(ax_a, {nda}, True)", f"    pb = _order(ax_b, {ndb}, False)"]
    perm_a = "(" + "".join(f"pa[{i}], " for i in range(nda)) + ")"
    perm_b = "(" + "".join(f"pb[{i}], " for i in range(ndb)) + ")"
    size = "(" + "".join(f"a.shape[pa[{i}]], " for i in range(nda)) + ")"
    sizeb = "(" + "".join(f"b.shape[pb[{i}]], " for i in range(ndb)) + ")"
    lines += [f"    at = np.ascontiguousarray(np.transpose(a, {perm_a}))",
              f"    bt = np.ascontiguousarray(np.transpose(b, {perm_b}))",
              f"    m = _count(at.shape, 0, {fa})",
              f"    n = _count(bt.shape, {k}, {ndb})",
              f"    kk = _count(at.shape, {fa}, {nda})",
              "    a2 = at.reshape((m, kk))",
              "    b2 = bt.reshape((kk, n))"]
    if mode == "value":
        out = "(" + "".join(f"a.shape[pa[{i}]], " for i in range(fa)) + \
            "".join(f"b.shape[pb[{k + i}]], " for i in range(fb)) + ")"
        lines.append("    return (a2 @ b2)[0, 0]" if fa + fb == 0 else
                     f"    return (a2 @ b2).reshape({out})")
        return "\n".join(lines)
    lines.append("    d2 = np.full((1, 1), dy)" if fa + fb == 0 else
                 "    d2 = np.ascontiguousarray(dy).reshape((m, n))")
    if mode == "lhs":
        lines += [f"    g = np.ascontiguousarray(d2 @ b2.T).reshape({size})",
                  f"    back = _inverse(pa, {nda})",
                  "    return np.transpose(g, (" + "".join(f"back[{i}], " for i in range(nda))
                  + "))"]
    else:
        lines += [f"    g = np.ascontiguousarray(a2.T @ d2).reshape({sizeb})",
                  f"    back = _inverse(pb, {ndb})",
                  "    return np.transpose(g, (" + "".join(f"back[{i}], " for i in range(ndb))
                  + "))"]
    return "\n".join(lines)


@register_jitable
def _order(ax, nd, free_first):
    """The axes of an array of rank nd: the free ones then the contracted `ax`
    (free_first), or the contracted then the free."""
    out = np.empty(nd, np.intp)
    free = np.ones(nd, np.bool_)
    for i in range(len(ax)):
        free[ax[i]] = False
    j = 0 if free_first else len(ax)
    for i in range(nd):
        if free[i]:
            out[j] = i
            j += 1
    j = nd - len(ax) if free_first else 0
    for i in range(len(ax)):
        out[j + i] = ax[i]
    return out


@register_jitable
def _inverse(perm, nd):
    out = np.empty(nd, np.intp)
    for i in range(nd):
        out[perm[i]] = i
    return out


@register_jitable
def _count(shape, start, stop):
    total = 1
    for i in range(start, stop):
        total *= shape[i]
    return total


def _axes_of(value, k, nd):
    """The axes `value` (an int or a sequence of k ints) as an intp array."""
    return np.asarray(value, dtype=np.intp).reshape(k) % nd


@overload(_axes_of)
def _axes_of_typer(value, k, nd):
    if isinstance(value, types.Integer):
        return lambda value, k, nd: np.full(1, value % nd, np.intp)

    def impl(value, k, nd):
        out = np.empty(k, np.intp)
        for i in range(k):
            out[i] = value[i] % nd
        return out
    return impl


def _tensordot_impl(mode, a, b, axes):
    if not (isinstance(a, types.Array) and isinstance(b, types.Array)):
        raise TypingError("srcgrad: np.tensordot takes two arrays here")
    k = _contracted(axes)
    if k is None:
        raise TypingError("srcgrad: np.tensordot compiles with axes an int or a pair of "
                          "tuples written in the call (numba must know how many axes it "
                          "contracts when it compiles)")
    pair = isinstance(axes, types.BaseTuple)
    namespace = {"np": np, "_axes_of": _axes_of, "_order": _order, "_inverse": _inverse,
                 "_count": _count}
    exec(_tensordot_source(mode, a.ndim, b.ndim, k, pair), namespace)
    return namespace["impl"]


@overload(np.tensordot, prefer_literal=True)
def _np_tensordot(a, b, axes=2):
    return _tensordot_impl("value", a, b, axes)


@overload(tensordot_lhs_grad, prefer_literal=True)
def _tensordot_lhs_grad_typer(dy, a, b, axes=2):
    return _tensordot_impl("lhs", a, b, axes)


@overload(tensordot_rhs_grad, prefer_literal=True)
def _tensordot_rhs_grad_typer(dy, a, b, axes=2):
    return _tensordot_impl("rhs", a, b, axes)


@rule(np.tensordot)
def tensordot(dy, y, a, b, axes=2):
    return tensordot_lhs_grad(dy, a, b, axes), tensordot_rhs_grad(dy, a, b, axes)


@tangent(np.tensordot)
def tensordot_tangent(dx, y, a, b, axes=2):
    return np.tensordot(dx, b, axes), np.tensordot(a, dx, axes)


@tangent(tensordot_lhs_grad)
def tensordot_lhs_grad_tangent(dx, y, dy, a, b, axes=2):
    return tensordot_lhs_grad(dx, a, b, axes), None, tensordot_lhs_grad(dy, a, dx, axes)


@tangent(tensordot_rhs_grad)
def tensordot_rhs_grad_tangent(dx, y, dy, a, b, axes=2):
    return tensordot_rhs_grad(dx, a, b, axes), tensordot_rhs_grad(dy, dx, b, axes), None


describe(kron_lhs_grad, inner_lhs_grad, tensordot_lhs_grad, shape_only=1)
describe(kron_rhs_grad, inner_rhs_grad, tensordot_rhs_grad, shape_only=2)
describe(kron_lhs_grad, kron_rhs_grad, inner_lhs_grad, inner_rhs_grad, tensordot_lhs_grad,
         tensordot_rhs_grad, pure=True)
