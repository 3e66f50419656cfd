"""Diagonals and triangles: the records of np.diagonal, np.trace, np.diag, np.diagflat,
np.triu and np.tril, the helpers their rules call (each Python form beside its numba form), and the
numba forms NumPy's functions lack there (np.diagonal, np.trace along axes, the `trace`
and `diagonal` methods). It also holds the typing checks the other modules of products
(tensor_products, matrix_chains, einsum) share: `_one_matrix` (numba takes one matrix
here, not a stack of them) and `_given` (whether a call passed a keyword).

Each of these selects entries of its argument, so it is linear and its adjoint puts dy
back where the entries came from (zeros elsewhere): with y = diagonal(a, k), y[i] =
a[i, i + k], so a's adjoint is dy on the diagonal k of an array of a's shape (a is read
for its shape only); the trace, the sum of that diagonal, gives dy to each of its
entries; np.diag goes both ways (a vector's adjoint is the diagonal k of dy, a matrix's
is dy put on its diagonal k; np.diagflat's, of any shape, the diagonal k of dy in v's
shape); a triangle keeps some entries and zeros the others, so its
adjoint is the same triangle of dy.
"""

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, overload_method, register_jitable

from ..errors import MissingRule
from ..numba_ext import normalize_axis
from ..runtime import reshape_as
from . import describe, linear, rule

_ONE_MATRIX = "srcgrad: numba takes one matrix here (a 2-D array), not a stack of them"


def _given(t):
    """Whether a keyword's numba type says the call passed it."""
    return t is not None and not isinstance(t, (types.NoneType, types.Omitted))


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


@rule(np.diagflat)
def diagflat(dy, y, v, k=0):
    return reshape_as(np.diag(dy, k), v)


# ---- triangles ----


@rule(np.triu)
def triu(dy, y, m, k=0):
    return np.triu(dy, k)


@rule(np.tril)
def tril(dy, y, m, k=0):
    return np.tril(dy, k)


linear(np.diagonal, np.trace, np.diag, np.diagflat, np.triu, np.tril)
linear(diagonal_grad, trace_grad, diag_grad)
describe(diagonal_grad, trace_grad, diag_grad, shape_only=1)
describe(diagonal_grad, trace_grad, diag_grad, pure=True)


# ---- np.fill_diagonal: normalize writes `np.fill_diagonal(a, v)` as `a[...] =
# filled_diagonal(a, v)` (the record's `updates`), a write the passes follow; val fills the
# diagonal's entries in turn, repeated as NumPy's flat assignment repeats it, so its
# adjoint adds up the entries of dy each of its items went to ----


@register_jitable
def _filled_positions(shape, wrap):
    """The flat (C order) positions np.fill_diagonal writes in an array of `shape`."""
    size = 1
    for n in shape:
        size *= n
    if len(shape) == 2:
        step = shape[1] + 1
        end = size if wrap else min(size, shape[1] * shape[1])
    else:
        step, block = 1, 1
        for n in shape[:-1]:
            block *= n
            step += block
        end = size
    return np.arange(0, end, step)


def filled_diagonal(a, val, wrap=False):
    """A copy of `a` with its diagonal filled with `val`, as np.fill_diagonal fills it.

    >>> filled_diagonal(np.zeros((3, 2)), [1.0, 2.0], wrap=True)
    array([[1., 0.],
           [0., 2.],
           [0., 0.]])
    """
    out = np.array(a, copy=True)
    np.fill_diagonal(out, val, wrap)
    return out


def filled_diagonal_grad(dy, val, wrap=False):
    """The adjoint of filled_diagonal's `val`: the entries of dy on the filled diagonal,
    each added to the item of val that went there (val repeats along the diagonal).

    >>> filled_diagonal_grad(np.arange(9.0).reshape(3, 3), np.zeros(2))
    array([8., 4.])
    """
    picked = np.ravel(dy)[_filled_positions(np.shape(dy), wrap)]
    if np.ndim(val) == 0:
        return np.sum(picked)
    out = np.zeros(np.size(val))
    np.add.at(out, np.arange(picked.size) % max(out.size, 1), picked)
    return out.reshape(np.shape(val))


@overload(filled_diagonal)
def _filled_diagonal_typer(a, val, wrap=False):
    if not isinstance(a, types.Array) or a.ndim < 2:
        raise TypingError("srcgrad: np.fill_diagonal fills an array of two dimensions or more")

    def impl(a, val, wrap=False):
        out = a.copy()
        flat = out.reshape(-1)
        values = np.asarray(val).ravel()
        positions = _filled_positions(a.shape, wrap)
        for k in range(positions.size):
            flat[positions[k]] = values[k % values.size]
        return out
    return impl


@overload(filled_diagonal_grad)
def _filled_diagonal_grad_typer(dy, val, wrap=False):
    if isinstance(val, types.Number):
        return lambda dy, val, wrap=False: np.sum(np.ravel(dy)[_filled_positions(dy.shape,
                                                                                 wrap)])

    def impl(dy, val, wrap=False):
        picked = np.ravel(dy)[_filled_positions(dy.shape, wrap)]
        out = np.zeros(val.size)
        for k in range(picked.size):
            out[k % val.size] += picked[k]
        return out.reshape(val.shape)
    return impl


@rule(filled_diagonal)
def filled_diagonal_(dy, y, a, val, wrap=False):
    return filled_diagonal(dy, 0.0, wrap), filled_diagonal_grad(dy, val, wrap)


linear(filled_diagonal, positions=(0, 1))
linear(filled_diagonal_grad)
describe(filled_diagonal_grad, shape_only=1, pure=True)
describe(np.fill_diagonal, updates=(None, filled_diagonal))
