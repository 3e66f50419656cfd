"""Chains of matrix products: the records of np.linalg.multi_dot and
np.linalg.matrix_power, the helpers their rules call (each Python form beside its numba
form), and the numba form of multi_dot (numba has none), for a tuple of arrays or a list
of matrices.

With y = M_0 ... M_n-1 (multi_dot; a vector first is a row, a vector last a column),
M_i's adjoint is (M_0 ... M_i-1)^T dY (M_i+1 ... M_n-1)^T, and the tangent is the sum of
the products with one matrix replaced by its tangent. The adjoints are linear in dY and
in each matrix but their own: their tangent is the adjoints of dY's tangent, plus for
each i the adjoints with M_i replaced by its tangent, M_i's own left out
(`multi_dot_grads_along`). The derivative of a^n in the
direction d is the upper-right block of [[a, d], [0, a]]^n (any power, negative ones
too: Higham, Functions of Matrices, thm. 3.6), and the adjoint is that derivative at a^T
in the direction dy.
"""

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from . import describe, linear, rule, tangent
from .diagonals import _one_matrix
from .linalg import transposed

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


def multi_dot_grads_along(dy, arrays, dx):
    """The tangent of ``multi_dot_grads(dy, arrays)`` along dx, the tangents of the arrays:
    for each i the gradients with array i replaced by its tangent, i's own left out.

    >>> multi_dot_grads_along(1.0, (np.ones(2), np.ones(2)), (np.ones(2), np.zeros(2)))
    (array([0., 0.]), array([1., 1.]))
    """
    out = [np.zeros(np.shape(x), dtype=np.result_type(x, dy, 1.0)) for x in arrays]
    for i, t in enumerate(dx):
        swapped = tuple(arrays[:i]) + (t,) + tuple(arrays[i + 1:])
        for j, g in enumerate(multi_dot_grads(dy, swapped)):
            if j != i:
                out[j] = out[j] + g
    return type(arrays)(out) if isinstance(arrays, list) else tuple(out)


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


@overload(multi_dot_grads_along)
def _multi_dot_grads_along_typer(dy, arrays, dx):
    if _matrices(arrays):
        def loop(dy, arrays, dx):
            n = len(arrays)
            out = [np.zeros(arrays[j].shape) for j in range(n)]
            for i in range(n):
                swapped = [np.ascontiguousarray(dx[j]) if j == i else
                           np.ascontiguousarray(arrays[j]) for j in range(n)]
                grads = multi_dot_grads(dy, swapped)
                for j in range(n):
                    if j != i:
                        out[j] = out[j] + grads[j]
            return out
        return loop
    n = len(_chain_types(arrays))
    _chain_types(dx)
    lines = ["def impl(dy, arrays, dx):"]
    for i in range(n):
        swapped = "".join(f"dx[{j}], " if j == i else f"arrays[{j}], " for j in range(n))
        lines.append(f"    g{i} = multi_dot_grads(dy, ({swapped}))")
    entries = "".join(" + ".join(f"g{i}[{j}]" for i in range(n) if i != j) + ", "
                      for j in range(n))
    lines.append(f"    return ({entries})")
    namespace = {"np": np, "multi_dot_grads": multi_dot_grads}
    exec("\n".join(lines), namespace)
    return namespace["impl"]


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
    return multi_dot_grads(dx, arrays), multi_dot_grads_along(dy, arrays, dx)


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


linear(upper_right)
linear(block_upper, positions=(0, 1))
describe(multi_dot_grads, multi_dot_grads_along, tuple_result=True)
describe(block_upper, upper_right, multi_dot_grads, multi_dot_grads_along, multi_dot_tangent,
         pure=True)
