"""Contractions and matrix structure: the records of np.trace, np.diagonal, np.diag,
np.triu, np.tril, np.kron, np.inner, np.tensordot, np.linalg.multi_dot,
np.linalg.matrix_power and np.einsum, the helpers their rules call (each Python form
beside its numba form), and the numba forms NumPy's functions lack there (np.diagonal,
np.inner, np.tensordot, multi_dot, np.einsum, np.trace along axes, the `trace` and
`diagonal` methods).

Diagonals and triangles select entries, so their adjoints put dy back where the entries
came from (zeros elsewhere). The products are linear in each operand, and an operand's
adjoint is dy contracted with the other operands over the letters (axes) that are not
its own: with y = kron(a, b), y[i p + k, j q + l] = a[i, j] b[k, l], so a's adjoint sums
dy, seen as (m, p, n, q), against b; with y = inner(a, b) = A B^T (A, B: a, b as
matrices of rows), a's adjoint is dY B; with y = M_0 ... M_n-1 (multi_dot), M_i's is
(M_0 ... M_i-1)^T dY (M_i+1 ... M_n-1)^T; an einsum operand's is the einsum of dy and
the others onto its letters (a letter repeated in it fills a diagonal, a letter of its
alone is broadcast). The derivative of a^n in the direction d is the upper-right block
of [[a, d], [0, a]]^n (any power, negative ones too: Higham, Functions of Matrices,
thm. 3.6), and the adjoint is that derivative at a^T in the direction dy.
"""

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, overload_method, register_jitable

from ..errors import MissingRule
from ..numba_ext import normalize_axis
from . import describe, linear, rule, tangent
from .linalg import transposed

_ONE_MATRIX = "srcgrad: numba takes one matrix here (a 2-D array), not a stack of them"


def _given(t):
    """Whether a keyword's numba type says the call passed it."""
    return t is not None and not isinstance(t, (types.NoneType, types.Omitted))


def no_second_order(dx, what):
    """Refuses forward mode through the gradients of `what`, which come as one tuple
    per argument: forward mode would add those tuples (join them), not their entries.

    >>> no_second_order(1.0, "np.einsum")
    Traceback (most recent call last):
    srcgrad.errors.MissingRule: second derivatives through np.einsum ...
    """
    raise MissingRule(f"second derivatives through {what} (hvp, hessian, jvp or grad of a "
                      f"gradient) are not supported yet")


@overload(no_second_order, prefer_literal=True)
def _no_second_order_typer(dx, what):
    raise TypingError(f"srcgrad: second derivatives through {getattr(what, 'literal_value', what)}"
                      f" (hvp, hessian, jvp or grad of a gradient) are not supported yet")


# ---- diagonals: np.diagonal, np.trace, np.diag ----


def _diagonal_length(shape, offset, axis1, axis2):
    """The length of the diagonal `offset` of the axes (axis1, axis2) of `shape`."""
    n1, n2 = shape[axis1], shape[axis2]
    return max(0, min(n1 + min(offset, 0), n2 - max(offset, 0)))


def diagonal_grad(dy, a, offset=0, axis1=0, axis2=1):
    """The gradient of a of ``y = np.diagonal(a, offset, axis1, axis2)``: dy on that
    diagonal, zeros elsewhere (a is read for its shape only).

    >>> diagonal_grad(np.array([1.0, 2.0]), np.zeros((2, 3)), 1)
    array([[0., 1., 0.],
           [0., 0., 2.]])
    """
    g = np.zeros(np.shape(a), dtype=np.result_type(dy, 1.0))
    view = np.moveaxis(g, (axis1, axis2), (-2, -1))
    rows = np.arange(np.shape(dy)[-1]) + max(-offset, 0)
    view[..., rows, rows + offset] = dy
    return g


@register_jitable
def _onto_diagonal(values, shape, offset, axis1, axis2):
    """A matrix of `shape`, zero but for `values` on the diagonal `offset` of the axes
    (axis1, axis2), which are (0, 1) or (1, 0)."""
    ax1, ax2 = normalize_axis(axis1, 2), normalize_axis(axis2, 2)
    if ax1 == ax2:
        raise ValueError("axis1 and axis2 cannot be the same")
    out = np.zeros(shape)
    r0, c0 = max(-offset, 0), max(offset, 0)
    for i in range(len(values)):
        if ax1 == 0:
            out[r0 + i, c0 + i] = values[i]
        else:
            out[c0 + i, r0 + i] = values[i]
    return out


@register_jitable
def _diagonal_of(a, offset, axis1, axis2):
    """The diagonal `offset` of the axes (axis1, axis2) of the matrix a, a new array."""
    ax1, ax2 = normalize_axis(axis1, 2), normalize_axis(axis2, 2)
    if ax1 == ax2:
        raise ValueError("axis1 and axis2 cannot be the same")
    m = a if ax1 == 0 else a.T
    r0, c0 = max(-offset, 0), max(offset, 0)
    n = max(0, min(m.shape[0] - r0, m.shape[1] - c0))
    out = np.empty(n, dtype=a.dtype)
    for i in range(n):
        out[i] = m[r0 + i, c0 + i]
    return out


def _one_matrix(a):
    if not (isinstance(a, types.Array) and a.ndim == 2):
        raise TypingError(_ONE_MATRIX)


@overload(diagonal_grad)
def _diagonal_grad_typer(dy, a, offset=0, axis1=0, axis2=1):
    _one_matrix(a)
    return lambda dy, a, offset=0, axis1=0, axis2=1: _onto_diagonal(
        dy, a.shape, offset, axis1, axis2)


@overload(np.diagonal)
def _np_diagonal(a, offset=0, axis1=0, axis2=1):
    _one_matrix(a)
    return lambda a, offset=0, axis1=0, axis2=1: _diagonal_of(a, offset, axis1, axis2)


@overload_method(types.Array, "diagonal")
def _array_diagonal(a, offset=0, axis1=0, axis2=1):
    _one_matrix(a)
    return lambda a, offset=0, axis1=0, axis2=1: _diagonal_of(a, offset, axis1, axis2)


def _no_dtype(dtype):
    if dtype is not None:
        raise MissingRule("np.trace with dtype= has no gradient rule: convert the array "
                          "with .astype first")


def trace_grad(dy, a, offset=0, axis1=0, axis2=1, dtype=None):
    """The gradient of a of ``y = np.trace(a, offset, axis1, axis2)``: dy on each entry
    of the diagonal summed (a is read for its shape only).

    >>> trace_grad(2.0, np.zeros((2, 2)))
    array([[2., 0.],
           [0., 2.]])
    """
    _no_dtype(dtype)
    shape = np.shape(a)
    n = _diagonal_length(shape, offset, axis1 % len(shape), axis2 % len(shape))
    return diagonal_grad(np.multiply.outer(dy, np.ones(n)), a, offset, axis1, axis2)


@overload(trace_grad)
def _trace_grad_typer(dy, a, offset=0, axis1=0, axis2=1, dtype=None):
    _one_matrix(a)
    if _given(dtype):
        raise TypingError("srcgrad: np.trace with dtype= has no gradient rule")

    def impl(dy, a, offset=0, axis1=0, axis2=1, dtype=None):
        rows, cols = (a.shape[0], a.shape[1]) if normalize_axis(axis1, 2) == 0 else \
            (a.shape[1], a.shape[0])
        n = max(0, min(rows + min(offset, 0), cols - max(offset, 0)))
        return _onto_diagonal(np.full(n, dy), a.shape, offset, axis1, axis2)
    return impl


@overload(np.trace)
def _np_trace(a, offset=0, axis1=0, axis2=1):
    # numba's np.trace takes (a, offset): this form serves the calls with axes
    if not (_given(axis1) or _given(axis2)):
        return None
    _one_matrix(a)
    return lambda a, offset=0, axis1=0, axis2=1: np.sum(_diagonal_of(a, offset, axis1, axis2))


@overload_method(types.Array, "trace")
def _array_trace(a, offset=0, axis1=0, axis2=1):
    _one_matrix(a)
    return lambda a, offset=0, axis1=0, axis2=1: np.sum(_diagonal_of(a, offset, axis1, axis2))


def diag_grad(dy, v, k=0):
    """The gradient of v of ``y = np.diag(v, k)``: the diagonal k of dy for a vector v
    (y is a matrix), dy on the diagonal k for a matrix v (y is a vector).

    >>> diag_grad(np.arange(4.0).reshape(2, 2), np.zeros(2))
    array([0., 3.])
    """
    if np.ndim(v) == 1:
        return np.diag(dy, k)
    return diagonal_grad(dy, v, k)


@overload(diag_grad)
def _diag_grad_typer(dy, v, k=0):
    if isinstance(v, types.Array) and v.ndim == 1:
        return lambda dy, v, k=0: np.diag(dy, k)
    return lambda dy, v, k=0: _onto_diagonal(dy, v.shape, k, 0, 1)


@rule(np.diagonal, methods=("diagonal",))
def diagonal(dy, y, a, offset=0, axis1=0, axis2=1):
    return diagonal_grad(dy, a, offset, axis1, axis2)


@rule(np.trace, methods=("trace",))
def trace(dy, y, a, offset=0, axis1=0, axis2=1, dtype=None):
    return trace_grad(dy, a, offset, axis1, axis2, dtype)


@rule(np.diag)
def diag(dy, y, v, k=0):
    return diag_grad(dy, v, k)


# ---- triangles ----


@rule(np.triu)
def triu(dy, y, m, k=0):
    return np.triu(dy, k)


@rule(np.tril)
def tril(dy, y, m, k=0):
    return np.tril(dy, k)


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


# ---- np.linalg.multi_dot ----


def _chain(arrays):
    """The arrays of a multi_dot as matrices: a vector first is a row, last a column."""
    mats = [np.asarray(x) for x in arrays]
    if any(np.ndim(x) not in (1, 2) for x in mats) or any(np.ndim(x) != 2
                                                           for x in mats[1:-1]):
        raise ValueError("multi_dot: vectors first or last, matrices in between")
    mats[0] = np.reshape(mats[0], (1, -1)) if mats[0].ndim == 1 else mats[0]
    mats[-1] = np.reshape(mats[-1], (-1, 1)) if mats[-1].ndim == 1 else mats[-1]
    return mats


def multi_dot_grads(dy, arrays):
    """The gradients of the arrays of ``y = np.linalg.multi_dot(arrays)``: the one of
    the i-th is (M_0 ... M_i-1)^T dy (M_i+1 ... M_n-1)^T, in its shape.

    >>> multi_dot_grads(1.0, (np.array([1.0, 2.0]), np.eye(2), np.array([3.0, 4.0])))[1]
    array([[3., 4.],
           [6., 8.]])
    """
    mats = _chain(arrays)
    d = np.reshape(dy, (mats[0].shape[0], mats[-1].shape[1]))
    grads, left = [], np.eye(mats[0].shape[0])
    for i, x in enumerate(arrays):
        right = np.eye(mats[i].shape[1])
        for m in mats[i + 1:]:
            right = right @ m
        grads.append(np.reshape(left.T @ d @ right.T, np.shape(x)))
        left = left @ mats[i]
    return tuple(grads)


def multi_dot_tangent(dx, arrays):
    """The tangent of ``y = np.linalg.multi_dot(arrays)``, dx the tangents of the arrays:
    the sum of the products with one array replaced by its tangent.

    >>> multi_dot_tangent((np.ones(2), np.zeros((2, 2))), (np.ones(2), np.eye(2)))
    array([1., 1.])
    """
    return sum(np.linalg.multi_dot(tuple(arrays[:i]) + (t,) + tuple(arrays[i + 1:]))
               for i, t in enumerate(dx))


def _chain_types(arrays):
    if not (isinstance(arrays, types.BaseTuple) and len(arrays) >= 2
            and all(isinstance(t, types.Array) and t.ndim in (1, 2) for t in arrays)
            and all(t.ndim == 2 for t in arrays.types[1:-1])):
        raise TypingError("srcgrad: np.linalg.multi_dot compiles for a tuple of arrays (a "
                          "vector first or last, matrices between) or a list of matrices")
    return [t.ndim for t in arrays]


def _chain_source(ndims, name="arrays"):
    """Source lines binding m0, m1, ...: the arrays `name[i]` as matrices."""
    lines = []
    for i, nd in enumerate(ndims):
        x = f"np.ascontiguousarray({name}[{i}])"
        shape = "(1, -1)" if i == 0 else "(-1, 1)"
        lines.append(f"    m{i} = {x}.reshape({shape})" if nd == 1 else f"    m{i} = {x}")
    return lines


def _shaped(expr, ndims):
    """`expr`, a matrix product of the chain, in multi_dot's shape."""
    first, last = ndims[0] == 1, ndims[-1] == 1
    if first and last:
        return f"({expr})[0, 0]"
    return f"({expr})[0]" if first else f"({expr})[:, 0]" if last else expr


def _exec(lines):
    namespace = {"np": np}
    exec("\n".join(lines), namespace)
    return namespace["impl"]


def _matrices(arrays):
    """Whether `arrays` is a list of matrices (a list display in compiled code): its
    length is known when it runs only, so the chain is looped over."""
    return isinstance(arrays, types.List) and isinstance(arrays.dtype, types.Array) \
        and arrays.dtype.ndim == 2


@register_jitable
def _product(arrays, start, stop, n):
    """arrays[start] @ ... @ arrays[stop - 1]; the identity (n, n) if start == stop."""
    out = np.eye(n)
    for i in range(start, stop):
        out = out @ np.ascontiguousarray(arrays[i])
    return out


@overload(np.linalg.multi_dot)
def _np_multi_dot(arrays):
    if _matrices(arrays):
        return lambda arrays: _product(arrays, 0, len(arrays), arrays[0].shape[0])
    ndims = _chain_types(arrays)
    n = len(ndims)
    product = " @ ".join(f"m{i}" for i in range(n))
    return _exec(["def impl(arrays):"] + _chain_source(ndims)
                 + [f"    return {_shaped(product, ndims)}"])


@overload(multi_dot_grads)
def _multi_dot_grads_typer(dy, arrays):
    if _matrices(arrays):
        def loop(dy, arrays):
            n = len(arrays)
            d = np.ascontiguousarray(dy)
            grads = []
            for i in range(n):
                left = _product(arrays, 0, i, d.shape[0])
                right = _product(arrays, i + 1, n, arrays[i].shape[1])
                grads.append(np.ascontiguousarray(left.T) @ d @ np.ascontiguousarray(right.T))
            return grads
        return loop
    ndims = _chain_types(arrays)
    n = len(ndims)
    lines = ["def impl(dy, arrays):"] + _chain_source(ndims)
    rows, cols = "m0.shape[0]", f"m{n - 1}.shape[1]"
    lines.append(f"    d = np.full(({rows}, {cols}), dy)" if ndims[0] == ndims[-1] == 1 else
                 f"    d = np.ascontiguousarray(dy).reshape(({rows}, {cols}))")
    for i in range(n):
        factors = [f"m{j}" for j in range(i)]
        left = f"({' @ '.join(factors)}).T @ " if factors else ""
        after = [f"m{j}" for j in range(i + 1, n)]
        right = f" @ ({' @ '.join(after)}).T" if after else ""
        lines.append(f"    g{i} = np.ascontiguousarray({left}d{right})"
                     f".reshape(arrays[{i}].shape)")
    lines.append(f"    return ({''.join(f'g{i}, ' for i in range(n))})")
    return _exec(lines)


@overload(multi_dot_tangent)
def _multi_dot_tangent_typer(dx, arrays):
    if _matrices(arrays):
        def loop(dx, arrays):
            n, rows = len(arrays), arrays[0].shape[0]
            out = np.zeros((rows, arrays[n - 1].shape[1]))
            for i in range(n):
                out += _product(arrays, 0, i, rows) @ np.ascontiguousarray(dx[i]) @ \
                    _product(arrays, i + 1, n, arrays[i].shape[1])
            return out
        return loop
    ndims = _chain_types(arrays)
    _chain_types(dx)
    n = len(ndims)
    lines = (["def impl(dx, arrays):"] + _chain_source(ndims)
             + [s.replace("m", "t", 1).replace("arrays", "dx")
                for s in _chain_source(ndims)])
    terms = [" @ ".join(f"t{j}" if j == i else f"m{j}" for j in range(n)) for i in range(n)]
    lines.append(f"    return {_shaped(' + '.join(f'({t})' for t in terms), ndims)}")
    return _exec(lines)


@rule(np.linalg.multi_dot)
def multi_dot(dy, y, arrays):
    return multi_dot_grads(dy, arrays)


@tangent(np.linalg.multi_dot)
def multi_dot_derivative(dx, y, arrays):
    return multi_dot_tangent(dx, arrays)


@tangent(multi_dot_grads)
def multi_dot_grads_tangent(dx, y, dy, arrays):
    return no_second_order(dx, "np.linalg.multi_dot")


# ---- matrix powers ----


def block_upper(a, d):
    """The matrix [[a, d], [0, a]] (per matrix of a stack), whose n-th power holds the
    derivative of a^n in the direction d in its upper-right block.

    >>> block_upper(np.ones((1, 1)), 2.0 * np.ones((1, 1)))
    array([[1., 2.],
           [0., 1.]])
    """
    zero = np.zeros(np.shape(a), dtype=np.result_type(a, d))
    return np.concatenate([np.concatenate([a, d], -1), np.concatenate([zero, a], -1)], -2)


@overload(block_upper)
def _block_upper_typer(a, d):
    _one_matrix(a)

    def impl(a, d):
        m = a.shape[0]
        out = np.zeros((2 * m, 2 * m))
        out[:m, :m] = a
        out[:m, m:] = d
        out[m:, m:] = a
        return out
    return impl


def upper_right(m):
    """The upper-right quarter of (each matrix of) m, a new array.

    >>> upper_right(np.arange(4.0).reshape(2, 2))
    array([[1.]])
    """
    k = np.shape(m)[-1] // 2
    return m[..., :k, k:].copy()


@overload(upper_right)
def _upper_right_typer(m):
    # numba's np.linalg.matrix_power gives an optional array
    _one_matrix(m.type if isinstance(m, types.Optional) else m)
    return lambda m: m[:m.shape[0] // 2, m.shape[1] // 2:].copy()


@rule(np.linalg.matrix_power)
def matrix_power(dy, y, a, n):
    return upper_right(np.linalg.matrix_power(block_upper(transposed(a), dy), n)), None


@tangent(np.linalg.matrix_power)
def matrix_power_tangent(dx, y, a, n):
    return upper_right(np.linalg.matrix_power(block_upper(a, dx), n)), None


linear(np.diagonal, np.trace, np.diag, np.triu, np.tril)
linear(diagonal_grad, trace_grad, diag_grad, upper_right)
linear(block_upper, positions=(0, 1))
describe(diagonal_grad, trace_grad, diag_grad, shape_only=1)
describe(kron_lhs_grad, inner_lhs_grad, tensordot_lhs_grad, shape_only=1)
describe(kron_rhs_grad, inner_rhs_grad, tensordot_rhs_grad, shape_only=2)
describe(diagonal_grad, trace_grad, diag_grad, kron_lhs_grad, kron_rhs_grad, inner_lhs_grad,
         inner_rhs_grad, tensordot_lhs_grad, tensordot_rhs_grad, block_upper, upper_right,
         pure=True)


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


def einsum_grads(dy, subscripts, a, b=None, c=None, d=None, e=None, f=None, g=None,
                 h=None, dtype=None):
    """The gradients of the operands of ``y = np.einsum(subscripts, a, b, ...)``, after
    None for the subscripts: each is dy contracted with the other operands.

    >>> einsum_grads(1.0, "i,i->", np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    (None, array([3., 4.]), array([1., 2.]))
    """
    _no_einsum_dtype(dtype)
    operands = _operands(a, b, c, d, e, f, g, h)
    inputs, output = _spelled(subscripts, [np.ndim(x) for x in operands])
    return (None,) + tuple(_operand_grad(dy, inputs, output, operands, k)
                           for k in range(len(operands)))


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


@overload(einsum_grads, prefer_literal=True)
def _einsum_grads_typer(dy, subscripts, a, b=None, c=None, d=None, e=None, f=None, g=None,
                        h=None, dtype=None):
    if _given(dtype):
        raise TypingError("srcgrad: np.einsum with dtype= has no gradient rule")
    operands = _given_operands(a, b, c, d, e, f, g, h)
    inputs, output = _spelled(_literal(subscripts), _ndims(operands))
    n = len(operands)
    nests = {}
    for k in range(n):
        nests[f"grad{k}"] = _compiled(_nest([output] + inputs[:k] + inputs[k + 1:], inputs[k],
                                             like=True, complex_=_complex([dy] + operands)))
    names = _OPERANDS[:n]
    calls = ", ".join(
        f"grad{k}(dy, {', '.join(names[:k] + names[k + 1:])}{', ' if n > 1 else ''}"
        f"{names[k]})" for k in range(n))
    source = (f"def impl(dy, subscripts, a, b=None, c=None, d=None, e=None, f=None, "
              f"g=None, h=None, dtype=None):\n    return (None, {calls},)")
    namespace = dict(nests)
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
    # optimize, order and casting change the order of the sums and the memory layout of
    # the result, not its value
    return einsum_grads(dy, subscripts, a, b, c, d, e, f, g, h, dtype)


@tangent(np.einsum)
def einsum_tangent(dx, y, subscripts, a, b=None, c=None, d=None, e=None, f=None, g=None,
                   h=None, optimize=False, dtype=None, order="K", casting="safe"):
    return einsum_tangents(dx, subscripts, a, b, c, d, e, f, g, h)


@tangent(einsum_grads)
def einsum_grads_tangent(dx, y, dy, subscripts, a, b=None, c=None, d=None, e=None, f=None,
                         g=None, h=None, dtype=None):
    return no_second_order(dx, "np.einsum")


describe(einsum_grads, einsum_tangents, multi_dot_grads, multi_dot_tangent, pure=True)
