"""np.linalg.eig and np.linalg.eigvals of a real matrix (not symmetric): their records,
the helpers their rules call (each Python form beside its numba form).

Result kinds. NumPy <= 2.4 gives real w and V where every eigenvalue is real and complex
ones otherwise; NumPy 2.5 (and numba 0.68 under it) gives complex ones always. The values
are the same either way, so every helper here takes real or complex w and V and reads
what it is given: a real V has real cotangents (their imaginary parts, if any, are
dropped), a complex one complex ones (JAX's convention: the cotangent of z is
dL/dx - i dL/dy), and the gradient of the real matrix is the real part of the complex
adjoint (JAX's convention for a real input: only real directions da exist).

With A V = V diag(w) and P = V^-1 da V: dw = diag(P) and dV = V (F o P), F_ij =
1 / (w_j - w_i) off the diagonal (`factorizations.gap_product`), then the two constraints
NumPy's V obeys (LAPACK's geev: each column of unit norm, its entry of largest modulus
real): each column less its change of norm, dv_j - Re(v_j^H dv_j) v_j, then less its
change of phase, dv_j - i Im(dv_kj / v_kj) v_j, k that entry (`eig_slopes`). So dV is
the derivative of the V NumPy returns, and a loss of V is differentiated as NumPy
computes it, whether or not it depends on the eigenvectors' phase (JAX and PyTorch
leave the phase to a gauge of their own, right only for losses that do not depend on
it: PyTorch refuses the others at run time, JAX gives a gauge-dependent value). A real
eigenvector (a real eigenvalue of a real matrix) is unchanged by the phase step. The
adjoint, the transpose of those maps (`eig_grad`): with G = dV + E, E_kj = -i
Im((V^T dV)_jj) / v_kj at each column's entry k of largest modulus (zero where the loss
does not depend on the phase), and M = V^T G - V^T conj(V) diag(Re diag(V^T G)),
da = Re(V^-T (diag(dw) + F o M) V^T). eigvals' is Re(V^-T diag(dw) V^T) (`eigvals_grad`,
with V computed again and matched to w's order), which no normalisation of V changes.

Second order (hvp, hessian, grad of grad: forward mode over the adjoints) follows
each adjoint's formula along the tangents of w, V (as above) and the cotangents
(`eig_grad_slope`, `eigvals_grad_slope`); forward mode over the tangents (jvp of jvp)
and third derivatives are refused as they run (`eig_higher_order`).

Where eigenvalues repeat, an entry of F o M with a zero gap is 0 where M is 0 and nan
otherwise (JAX gives inf or nan): the values' gradient stays finite where V is
invertible, the vectors' is nan; a defective matrix (V singular) gives nan or inf. Where
two entries of a column tie for the largest modulus, NumPy's V jumps (the derivative
taken is that of the entry argmax picks first). Complex matrices are refused
(`real_only`).

numba's np.linalg.eig and eigvals of a real matrix give results of NumPy's kind (numba
0.68 under NumPy 2.5: complex; else real); real ones raise a ValueError ("must not cause
a domain change") for a matrix with complex eigenvalues, where `jit="auto"` runs the
Python form (`backend/forms.py`). The numba forms take one matrix (a stack runs as
Python).
"""

import numpy as np
from numba import types
from numba.core.errors import TypingError
from numba.extending import overload, register_jitable

from ..errors import MissingRule
from . import describe, real_only, rule, tangent
from .factorizations import diag_of, diagonals, gap_product, gap_times, gaps
from .linalg import _ONE_MATRIX, transposed


def _is_complex(t):
    return isinstance(t, types.Array) and isinstance(t.dtype, types.Complex)


def _one_matrix(*ts):
    """numba forms take one matrix, not a stack; a complex matrix a is refused before
    (`real_only`)."""
    for t in ts:
        if isinstance(t, types.Array) and t.ndim > 2:
            raise TypingError(_ONE_MATRIX)


def largest(v):
    """For each column of `v` (of each matrix of a stack), the row of its entry of
    largest modulus (the first of ties, as LAPACK's), as a row (axis -2 kept).

    >>> largest(np.array([[1.0, -3.0], [2.0, 1.0]]))
    array([[1, 0]])
    """
    return np.expand_dims(np.argmax(np.abs(v), axis=-2), -2)


@register_jitable
def _complex(x):
    """x as a complex array (a copy)."""
    out = np.empty(x.shape, np.complex128)
    out[...] = x
    return out


# ---- the adjoints ----


def eig_grad(dw, dv, w, v, a):
    """The adjoint of the real matrix a of ``w, v = np.linalg.eig(a)`` from the
    cotangents dw and dv of w and v (see the module's docstring), for real or complex
    w and v; a is read for its kind only (the rule's `real_only` check reads it).

    >>> eig_grad(np.array([1.0, 0.0]), np.zeros((2, 2)), np.array([1.0, 3.0]),
    ...          np.array([[1.0, 1.0], [0.0, 2.0]]) / [1.0, np.sqrt(5.0)], np.eye(2))
    array([[ 1. ,  0. ],
           [-0.5,  0. ]])
    """
    c = np.sum(v * dv, axis=-2, keepdims=True)   # (V^T dV)_jj
    if np.iscomplexobj(v):   # the phase: E
        k = largest(v)
        e = np.zeros(np.shape(v), complex)
        np.put_along_axis(e, k, -1j * np.imag(c) / np.take_along_axis(v, k, -2), -2)
        dv = dv + e
    else:   # the cotangents of real values are real
        dw, dv, c = np.real(dw), np.real(dv), np.real(c)
    vt = transposed(v)
    m = vt @ dv - (vt @ np.conj(v)) * np.real(c)
    return np.real(np.linalg.solve(vt, (diag_of(dw) + gap_product(w, m)) @ vt))


@register_jitable
def _eig_grad_real(dw, dv, w, v):
    vt = np.ascontiguousarray(v.T)
    m = vt @ np.ascontiguousarray(dv)
    m = m - (vt @ v) * np.diag(m).reshape(1, -1)
    return np.linalg.solve(vt, (np.diag(dw) + gap_times(w, m)) @ vt)


@register_jitable
def _eig_grad_complex(dw, dv, w, v):
    n = v.shape[0]
    g = _complex(dv)
    c = np.zeros(n)   # Re (V^T dV)_jj
    for j in range(n):
        cj, big, k = 0j, -1.0, 0
        for i in range(n):
            cj += v[i, j] * g[i, j]
            if abs(v[i, j]) > big:
                big, k = abs(v[i, j]), i
        g[k, j] -= 1j * cj.imag / v[k, j]
        c[j] = cj.real
    vt = np.ascontiguousarray(v.T)
    m = vt @ g - (vt @ np.conj(v)) * c.reshape(1, -1)
    got = np.linalg.solve(vt, (np.diag(_complex(dw)) + gap_times(w, m)) @ vt)
    return np.real(got).copy()


@overload(eig_grad)
def _eig_grad_typer(dw, dv, w, v, a):
    _one_matrix(w, v, a)
    if _is_complex(w) or _is_complex(v):
        return lambda dw, dv, w, v, a: _eig_grad_complex(dw, dv, _complex(w), _complex(v))
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

    >>> np.real(matched_vectors(np.array([3.0, 1.0]), np.array([[1.0, 0.0], [0.0, 3.0]])))
    array([[0., 1.],
           [1., 0.]])
    """
    if np.ndim(a) > 2:
        return np.stack([matched_vectors(wk, ak) for wk, ak in zip(w, a, strict=True)])
    found, v = np.linalg.eig(a)
    return v[:, _nearest_order(w, found)]


@overload(matched_vectors)
def _matched_vectors_typer(w, a):
    _one_matrix(w, a)

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
    if not np.iscomplexobj(v):
        dw = np.real(dw)
    vt = transposed(v)
    return np.real(np.linalg.solve(vt, diag_of(dw) @ vt))


@overload(eigvals_grad)
def _eigvals_grad_typer(dw, w, a):
    _one_matrix(w, a)
    if _is_complex(w):   # (numba's eig and eigvals give results of one kind)
        def impl(dw, w, a):
            vt = np.ascontiguousarray(matched_vectors(w, a).T)
            return np.real(np.linalg.solve(vt, np.diag(_complex(dw)) @ vt)).copy()
        return impl

    def real(dw, w, a):
        vt = np.ascontiguousarray(matched_vectors(w, a).T)
        return np.linalg.solve(vt, np.diag(np.real(dw)) @ vt)
    return real


@rule(np.linalg.eigvals)
def eigvals(dy, y, a):
    return eigvals_grad(dy, y, a)


# ---- forward mode ----


def eig_slopes(da, w, v, a):
    """The tangents (dw, dV) of ``w, v = np.linalg.eig(a)`` along da (see the module's
    docstring: V's columns keep their unit norm, and the phase of their entry of
    largest modulus); a is read for its kind only (the tangent rule's `real_only` check
    reads it).

    >>> eig_slopes(np.array([[0.0, 1.0], [0.0, 1.0]]), np.array([1.0, 3.0]), np.eye(2),
    ...            np.eye(2))
    (array([0., 1.]), array([[0. , 0.5],
           [0. , 0. ]]))
    """
    p = np.linalg.solve(v, da @ v)
    dv = v @ gap_product(w, p)
    dv = dv - v * np.real(np.sum(np.conj(v) * dv, axis=-2, keepdims=True))
    if np.iscomplexobj(v):
        k = largest(v)
        dv = dv - 1j * v * np.imag(np.take_along_axis(dv, k, -2) / np.take_along_axis(v, k, -2))
    return diagonals(p), dv


@register_jitable
def _eig_slopes_real(da, w, v):
    p = np.linalg.solve(v, np.ascontiguousarray(da) @ v)
    dv = v @ gap_times(w, p)
    dv = dv - v * np.sum(v * dv, axis=0).reshape(1, -1)
    return np.diag(p).copy(), dv


@register_jitable
def _eig_slopes_complex(da, w, v):
    n = v.shape[0]
    p = np.linalg.solve(v, _complex(da) @ v)
    dv = v @ gap_times(w, p)
    for j in range(n):
        grow, big, k = 0.0, -1.0, 0
        for i in range(n):
            grow += (np.conj(v[i, j]) * dv[i, j]).real
            if abs(v[i, j]) > big:
                big, k = abs(v[i, j]), i
        for i in range(n):
            dv[i, j] -= grow * v[i, j]
        turn = (dv[k, j] / v[k, j]).imag
        for i in range(n):
            dv[i, j] -= 1j * turn * v[i, j]
    return np.diag(p).copy(), dv


@overload(eig_slopes)
def _eig_slopes_typer(da, w, v, a):
    _one_matrix(w, v, a)
    if _is_complex(w) or _is_complex(v):
        return lambda da, w, v, a: _eig_slopes_complex(da, _complex(w), _complex(v))
    return lambda da, w, v, a: _eig_slopes_real(da, w, v)


@tangent(np.linalg.eig)
def eig_tangent(dx, y, a):
    return eig_slopes(dx, y[0], y[1], a)


@tangent(np.linalg.eigvals)
def eigvals_tangent(dx, y, a):
    return eig_slopes(dx, y, matched_vectors(y, a), a)[0]


# ---- second order (hvp, hessian): the adjoints' tangents ----


def eig_grad_slope(tw, tv, dw, dv, w, v, a):
    """The tangent of ``eig_grad(dw, dv, w, v, a)`` along the tangents tw of w and tv
    of v, the cotangents dw, dv held (the module's docstring gives da = Re(V^-T G V^T)
    and G; each column's entry of largest modulus held too): with dG = F o dM -
    F o (F o M o (tw_j - tw_i)),
    Re(V^-T (dG V^T + G tv^T - tv^T V^-T G V^T)).

    >>> eig_grad_slope(np.array([0.0, 1.0]), np.zeros((2, 2)), np.zeros(2),
    ...                np.array([[0.0, 1.0], [0.0, 0.0]]), np.array([1.0, 3.0]), np.eye(2),
    ...                np.eye(2))
    array([[ 0.  , -0.25],
           [ 0.  ,  0.  ]])
    """
    c = np.sum(v * dv, axis=-2, keepdims=True)   # (V^T dV)_jj
    tc = np.sum(tv * dv, axis=-2, keepdims=True)
    if np.iscomplexobj(v):
        k = largest(v)
        vk, tvk = np.take_along_axis(v, k, -2), np.take_along_axis(tv, k, -2)
        e, te = np.zeros(np.shape(v), complex), np.zeros(np.shape(v), complex)
        np.put_along_axis(e, k, -1j * np.imag(c) / vk, -2)
        np.put_along_axis(te, k, -1j * (np.imag(tc) / vk - np.imag(c) * tvk / vk ** 2), -2)
        dv = dv + e
    else:
        dw, dv, c, tc = np.real(dw), np.real(dv), np.real(c), np.real(tc)
        te = np.zeros(np.shape(v))
    vt, tvt = transposed(v), transposed(tv)
    m = vt @ dv - (vt @ np.conj(v)) * np.real(c)
    tm = tvt @ dv + vt @ te - (tvt @ np.conj(v) + vt @ np.conj(tv)) * np.real(c) \
        - (vt @ np.conj(v)) * np.real(tc)
    fm = gap_product(w, m)
    g = diag_of(dw) + fm
    tg = gap_product(w, tm) - gap_product(w, fm * gaps(tw))
    whole = np.linalg.solve(vt, g @ vt)
    return np.real(np.linalg.solve(vt, tg @ vt + g @ tvt - tvt @ whole))


@register_jitable
def _eig_grad_slope_complex(tw, tv, dw, dv, w, v):
    n = v.shape[0]
    g1 = _complex(dv)
    te = np.zeros((n, n), np.complex128)
    c, tc = np.zeros(n), np.zeros(n)   # Re (V^T dV)_jj, Re (tV^T dV)_jj
    for j in range(n):
        cj, tcj, big, k = 0j, 0j, -1.0, 0
        for i in range(n):
            cj += v[i, j] * g1[i, j]
            tcj += tv[i, j] * g1[i, j]
            if abs(v[i, j]) > big:
                big, k = abs(v[i, j]), i
        g1[k, j] -= 1j * cj.imag / v[k, j]
        te[k, j] = -1j * (tcj.imag / v[k, j] - cj.imag * tv[k, j] / v[k, j] ** 2)
        c[j], tc[j] = cj.real, tcj.real
    vt, tvt = np.ascontiguousarray(v.T), np.ascontiguousarray(tv.T)
    vv = vt @ np.conj(v)
    m = vt @ g1 - vv * c.reshape(1, -1)
    tm = tvt @ g1 + vt @ te - (tvt @ np.conj(v) + vt @ np.conj(tv)) * c.reshape(1, -1) \
        - vv * tc.reshape(1, -1)
    fm = gap_times(w, m)
    g = np.diag(_complex(dw)) + fm
    tg = gap_times(w, tm) - gap_times(w, fm * (tw.reshape(1, -1) - tw.reshape(-1, 1)))
    whole = np.linalg.solve(vt, g @ vt)
    return np.real(np.linalg.solve(vt, tg @ vt + g @ tvt - tvt @ whole)).copy()


@overload(eig_grad_slope)
def _eig_grad_slope_typer(tw, tv, dw, dv, w, v, a):
    _one_matrix(w, v, a)
    if _is_complex(w) or _is_complex(v):
        return lambda tw, tv, dw, dv, w, v, a: _eig_grad_slope_complex(
            _complex(tw), _complex(tv), dw, dv, _complex(w), _complex(v))
    # real w and v (whose E and dE are zero): their cotangents' real parts
    return lambda tw, tv, dw, dv, w, v, a: _eig_grad_slope_complex(
        _complex(tw), _complex(tv), np.real(dw), np.real(dv), _complex(w), _complex(v))


def eigvals_grad_slope(ta, dw, w, a):
    """The tangent of ``eigvals_grad(dw, w, a)`` along the tangent ta of a, dw held:
    d(V diag(dw) V^-1) = V (Q diag(dw) - diag(dw) Q) V^-1 with dV = V Q, Q = F o P,
    P = V^-1 ta V, so Re(V^-T K^T V^T), K_ij = P_ij (dw_j - dw_i) / (w_j - w_i) (w
    moves the order only: its tangent gives none).

    >>> eigvals_grad_slope(np.array([[0.0, 1.0], [0.0, 0.0]]), np.array([0.0, 1.0]),
    ...                    np.array([1.0, 3.0]), np.diag([1.0, 3.0]))
    array([[0. , 0. ],
           [0.5, 0. ]])
    """
    v = matched_vectors(w, a)
    if not np.iscomplexobj(v):
        dw = np.real(dw)
    vt = transposed(v)
    k = gap_product(w, np.linalg.solve(v, ta @ v) * gaps(dw))
    return np.real(np.linalg.solve(vt, transposed(k) @ vt))


@register_jitable
def _eigvals_grad_slope_complex(ta, dw, w, v):
    p = np.linalg.solve(v, _complex(ta) @ v)
    k = gap_times(w, p * (dw.reshape(1, -1) - dw.reshape(-1, 1)))
    vt = np.ascontiguousarray(v.T)
    return np.real(np.linalg.solve(vt, np.ascontiguousarray(k.T) @ vt)).copy()


@overload(eigvals_grad_slope)
def _eigvals_grad_slope_typer(ta, dw, w, a):
    _one_matrix(w, a)
    if _is_complex(w):
        return lambda ta, dw, w, a: _eigvals_grad_slope_complex(
            ta, _complex(dw), w, _complex(matched_vectors(w, a)))
    return lambda ta, dw, w, a: _eigvals_grad_slope_complex(
        ta, _complex(np.real(dw)), _complex(w), _complex(matched_vectors(w, a)))


@tangent(eig_grad)
def eig_grad_tangent(dx, y, dw, dv, w, v, a):
    return (eig_grad(dx, 0.0 * dv, w, v, a), eig_grad(0.0 * dw, dx, w, v, a),
            eig_grad_slope(dx, 0.0 * v, dw, dv, w, v, a),
            eig_grad_slope(0.0 * w, dx, dw, dv, w, v, a), None)


@tangent(eigvals_grad)
def eigvals_grad_tangent(dx, y, dw, w, a):
    return eigvals_grad(dx, w, a), None, eigvals_grad_slope(dx, dw, w, a)


# ---- higher orders: refused when they run ----

_HIGHER = ("srcgrad: np.linalg.eig and eigvals are differentiated to second order (grad, "
           "jvp, hvp, hessian, grad of grad); forward mode over their jvp (jvp of jvp) "
           "or a third derivative has no rule")


def eig_higher_order(like):
    """Raises MissingRule: what forward mode over the helpers of eig's tangents and
    second derivatives calls (their derivatives are not written; without a tangent
    rule, forward mode would read a helper's source as a user's function).

    >>> eig_higher_order(1.0)
    Traceback (most recent call last):
    ...
    srcgrad.errors.MissingRule: srcgrad: np.linalg.eig and eigvals are differentiated ...
    """
    raise MissingRule(_HIGHER)


@overload(eig_higher_order)
def _eig_higher_order_typer(like):
    def impl(like):
        raise MissingRule(_HIGHER)
        return like
    return impl


@tangent(eig_slopes)
def eig_slopes_tangent(dx, y, da, w, v, a):
    return eig_higher_order(y), eig_higher_order(y), eig_higher_order(y), None


@tangent(matched_vectors)
def matched_vectors_tangent(dx, y, w, a):
    return eig_higher_order(y), eig_higher_order(y)


@tangent(eig_grad_slope)
def eig_grad_slope_tangent(dx, y, tw, tv, dw, dv, w, v, a):
    return (eig_higher_order(y), eig_higher_order(y), eig_higher_order(y),
            eig_higher_order(y), eig_higher_order(y), eig_higher_order(y), None)


@tangent(eigvals_grad_slope)
def eigvals_grad_slope_tangent(dx, y, ta, dw, w, a):
    return eig_higher_order(y), eig_higher_order(y), eig_higher_order(y), eig_higher_order(y)


real_only(np.linalg.eig, np.linalg.eigvals)
describe(eig_grad, eigvals_grad, eig_slopes, matched_vectors, eig_grad_slope,
         eigvals_grad_slope, eig_higher_order, pure=True)
describe(np.linalg.eig, np.linalg.eigvals, complex_result=True)
