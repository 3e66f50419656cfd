"""np.linalg.eig and np.linalg.eigvals of a real matrix (not symmetric): their records,
the helpers their rules call (each Python form beside its numba form).

With a V = V diag(w) (NumPy's w, V: complex where the eigenvalues are, each eigenvector of
unit norm) and P = V^-1 da V: dw = diag(P) and dV = V (F o P), F_ij = 1 / (w_j - w_i) off
the diagonal (`factorizations.gap_product`), less each column's change of norm: dv_j -
Re(v_j^H dv_j) v_j (`eig_slopes`). The phase of a complex eigenvector (NumPy makes its
largest entry real) is a gauge this derivative does not follow, so a loss of V is
differentiated where it does not depend on that phase (|V|, V's columns up to a complex
factor), as in JAX and PyTorch. Under JAX's convention (the cotangent of z is dL/dx -
i dL/dy), the adjoint of a real matrix is then
Re(V^-T (diag(dw) + F o (V^T dV - V^T conj(V) diag(Re diag(V^T dV)))) V^T) (`eig_grad`;
eigvals' with dV = 0, `eigvals_grad`, with V computed again and matched to w's order). Where
eigenvalues repeat, an entry of F o m with a zero gap is 0 where m is 0 and nan otherwise
(JAX gives inf or nan): the values' gradient stays finite where V is invertible, the
vectors' is nan; a defective matrix (V singular) gives nan or inf.

numba's np.linalg.eig and eigvals of a real matrix give real results only (their types are
fixed when numba compiles; NumPy's are complex where the eigenvalues are), and raise a
ValueError ("must not cause a domain change") when the eigenvalues are complex: the
compiled form differentiates matrices with real eigenvalues, the Python form all. Complex
matrices are refused (`real_only`).
"""

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from ..errors import MissingRule
from . import describe, real_only, rule, tangent
from .factorizations import diag_of, diagonals, gap_product, results
from .linalg import _ONE_MATRIX, transposed


def _real_matrix(*ts):
    """numba forms take real matrices (numba's eig gives real results only)."""
    for t in ts:
        if isinstance(t, types.Array) and isinstance(t.dtype, types.Complex):
            raise TypingError("srcgrad: numba's np.linalg.eig gives real eigenvalues only")
        if isinstance(t, types.Array) and t.ndim > 2:
            raise TypingError(_ONE_MATRIX)


def eig_grad(dw, dv, w, v, a):
    """The adjoint of the real matrix a of ``w, v = np.linalg.eig(a)`` from the
    cotangents dw and dv of w and v (see the module's docstring); a is read for its kind
    only (the rule's `real_only` check reads it).

    >>> eig_grad(np.array([1.0, 0.0]), np.zeros((2, 2)), np.array([1.0, 3.0]),
    ...          np.array([[1.0, 1.0], [0.0, 2.0]]) / [1.0, np.sqrt(5.0)], np.eye(2))
    array([[ 1. ,  0. ],
           [-0.5,  0. ]])
    """
    vt = transposed(v)
    m = vt @ dv
    m = m - (vt @ np.conj(v)) * np.expand_dims(np.real(diagonals(m)), -2)
    return np.real(np.linalg.solve(vt, (diag_of(dw) + gap_product(w, m)) @ vt))


@register_jitable
def _eig_grad_real(dw, dv, w, v):
    vt = np.ascontiguousarray(v.T)
    m = vt @ np.ascontiguousarray(dv)
    m = m - (vt @ v) * np.diag(m).reshape(1, -1)
    return np.linalg.solve(vt, (np.diag(dw) + gap_product(w, m)) @ vt)


@overload(eig_grad)
def _eig_grad_typer(dw, dv, w, v, a):
    _real_matrix(w, v, a)
    # V and w are real here, so the adjoint is real-linear in (dw, dv): it takes their
    # real parts
    return lambda dw, dv, w, v, a: _eig_grad_real(np.real(dw), np.real(dv), w, v)


@register_jitable
def _nearest_order(w, found):
    """For each of w's eigenvalues in turn, the index of the nearest of `found` not taken
    yet: `found`'s order matched to w's (eig and eigvals may order them apart)."""
    n = w.shape[0]
    taken = np.zeros(n, np.bool_)
    order = np.empty(n, np.intp)
    for i in range(n):
        best, at = np.inf, 0
        for j in range(n):
            d = abs(found[j] - w[i])
            if not taken[j] and d < best:
                best, at = d, j
        taken[at] = True
        order[i] = at
    return order


def matched_vectors(w, a):
    """The eigenvectors of the matrix `a` (np.linalg.eig's), in the order of its
    eigenvalues `w` (np.linalg.eigvals').

    >>> matched_vectors(np.array([3.0, 1.0]), np.array([[1.0, 0.0], [0.0, 3.0]]))
    array([[0., 1.],
           [1., 0.]])
    """
    if np.ndim(a) > 2:
        return np.stack([matched_vectors(wk, ak) for wk, ak in zip(w, a, strict=True)])
    found, v = np.linalg.eig(a)
    return v[:, _nearest_order(w, found)]


@overload(matched_vectors)
def _matched_vectors_typer(w, a):
    _real_matrix(w, a)

    def impl(w, a):
        found, v = np.linalg.eig(a)
        return np.ascontiguousarray(v[:, _nearest_order(w, found)])
    return impl


@rule(np.linalg.eig, results=2)
def eig(dy, y, a):
    return eig_grad(dy[0], dy[1], y[0], y[1], a)


def eigvals_grad(dw, w, a):
    """The adjoint of the real matrix a of ``w = np.linalg.eigvals(a)`` from the
    cotangent dw of w: Re(V^-T diag(dw) V^T) (for a real eigenvalue, the outer product of
    its left and right eigenvectors, u v^T / u^T v).

    >>> eigvals_grad(np.array([1.0, 0.0]), np.array([1.0, 3.0]),
    ...              np.array([[1.0, 2.0], [0.0, 3.0]]))
    array([[ 1.,  0.],
           [-1.,  0.]])
    """
    v = matched_vectors(w, a)
    return eig_grad(dw, np.zeros_like(v), w, v, a)


@overload(eigvals_grad)
def _eigvals_grad_typer(dw, w, a):
    _real_matrix(w, a)

    def impl(dw, w, a):
        v = matched_vectors(w, a)
        return _eig_grad_real(np.real(dw), np.zeros_like(v), w, v)
    return impl


@rule(np.linalg.eigvals)
def eigvals(dy, y, a):
    return eigvals_grad(dy, y, a)


def eig_slopes(da, w, v, a):
    """The tangents (dw, dV) of ``w, v = np.linalg.eig(a)`` along da (see the module's
    docstring: V's columns keep their unit norm); a is read for its kind only (the
    tangent rule's `real_only` check reads it).

    >>> eig_slopes(np.array([[0.0, 1.0], [0.0, 1.0]]), np.array([1.0, 3.0]), np.eye(2),
    ...            np.eye(2))
    (array([0., 1.]), array([[0. , 0.5],
           [0. , 0. ]]))
    """
    p = np.linalg.solve(v, da @ v)
    dv = v @ gap_product(w, p)
    dv = dv - v * np.expand_dims(np.real(diagonals(transposed(np.conj(v)) @ dv)), -2)
    return diagonals(p), dv


@overload(eig_slopes)
def _eig_slopes_typer(da, w, v, a):
    _real_matrix(w, v, a)

    def impl(da, w, v, a):
        p = np.linalg.solve(v, np.ascontiguousarray(da) @ v)
        dv = v @ gap_product(w, p)
        dv = dv - v * np.diag(np.ascontiguousarray(v.T) @ dv).reshape(1, -1)
        return np.diag(p).copy(), dv
    return impl


@tangent(np.linalg.eig)
def eig_tangent(dx, y, a):
    return results(eig_slopes(dx, y[0], y[1], a)[0], eig_slopes(dx, y[0], y[1], a)[1])


@tangent(np.linalg.eigvals)
def eigvals_tangent(dx, y, a):
    return eig_slopes(dx, y, matched_vectors(y, a), a)[0]


# ---- second order: refused when it runs ----

_SECOND_ORDER = ("srcgrad: forward mode over the gradient of np.linalg.eig or eigvals "
                 "(hvp, hessian, grad of grad) has no rule")


def eig_second_order(like):
    """Raises MissingRule: what forward mode over eig's adjoint calls (the derivative
    of the adjoint is not written).

    >>> eig_second_order(1.0)
    Traceback (most recent call last):
    ...
    srcgrad.errors.MissingRule: srcgrad: forward mode over the gradient of ...
    """
    raise MissingRule(_SECOND_ORDER)


@overload(eig_second_order)
def _eig_second_order_typer(like):
    def impl(like):
        raise MissingRule(_SECOND_ORDER)
        return like
    return impl


@tangent(eig_grad)
def eig_grad_tangent(dx, y, dw, dv, w, v, a):
    return (eig_second_order(y), eig_second_order(y), eig_second_order(y),
            eig_second_order(y), None)


@tangent(eigvals_grad)
def eigvals_grad_tangent(dx, y, dw, w, a):
    return eig_second_order(y), eig_second_order(y), eig_second_order(y)


real_only(np.linalg.eig, np.linalg.eigvals)
describe(eig_grad, eigvals_grad, eig_slopes, matched_vectors, pure=True)
describe(eig_second_order, pure=True)
describe(np.linalg.eig, np.linalg.eigvals, complex_result=True)
describe(eig_slopes, once=True)
