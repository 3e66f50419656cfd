"""Compiled loops for matrix products with a thin factor and their tangents, as forward
mode makes them: ``y, dy = a @ b, da @ b + a @ db`` with thin `b`, and the tangent of a
right factor's adjoint, ``a.T @ p + da.T @ q`` with thin `p` and `q`.

A product whose right factor has a few columns (an MLP's output layer: 256x256 by
256x10) leaves BLAS far from its peak: it copies ("packs") the large factor for a few
columns of work, and the tangent is a second such product. One loop that reads `a` and
`da` once, in blocks of 2 rows by 2 columns, does both. Measured on an AVX2 core, 256x256
by 256x10: 118 us, against 168 us through BLAS (``a @ [b db]`` and ``da @ b``); and
``a.T @ p + da.T @ q`` in blocks of 4 rows by 2 columns: 91 us, against 135 us.

`runtime.matmul_jvp` and `runtime.matmul_rhs_grad_tangent` use them only in the Python
form of a transform that compiles (``loops=True``), never under ``jit=False``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

THIN = 32  # at most this many columns make a factor thin
_F64 = np.dtype(np.float64)


def float64_matrices(*xs) -> bool:
    """Whether all of `xs` are 2-D float64 arrays (tested without NumPy calls: this runs
    on every product of generated code). Dtypes are compared by value: numba's arrays
    carry a float64 dtype object of their own."""
    return all(type(x) is np.ndarray and x.ndim == 2 and x.dtype == _F64 for x in xs)


def thin_right(a, b, da, db) -> bool:
    """Whether `jvp_thin_right` serves ``a @ b`` with tangents `da`, `db`: float64
    matrices, `a` and `da` C-contiguous and alike, `b` and `db` alike and thin."""
    if not float64_matrices(a, b, da, db):
        return False
    (m, k), (kb, n) = a.shape, b.shape
    return kb == k and n <= THIN and 4 * n <= min(m, k) and da.shape == a.shape \
        and db.shape == b.shape and a.flags.c_contiguous and da.flags.c_contiguous


def thin_grad(a, p, da, q) -> bool:
    """Whether `grad_tangent_thin` serves ``a.T @ p + da.T @ q``: float64 matrices, `a`
    and `da` C-contiguous and alike, `p` and `q` alike, with as many rows, and thin."""
    if not float64_matrices(a, p, da, q):
        return False
    (n, k), (rows, m) = a.shape, p.shape
    return rows == n and m <= THIN and 4 * m <= min(n, k) and da.shape == a.shape \
        and q.shape == p.shape and a.flags.c_contiguous and da.flags.c_contiguous


def jvp_thin_right(a, b, da, db):
    """``(a @ b, da @ b + a @ db)`` for thin `b`, `db` (see `thin_right`)."""
    # NumPy allocates the results: numba's arrays carry a float64 dtype object of their
    # own, equal to NumPy's but not it, which fast paths that test identity miss
    y, dy = np.empty((a.shape[0], b.shape[1])), np.empty((a.shape[0], b.shape[1]))
    _jvp_rows(a, np.ascontiguousarray(b.T), da, np.ascontiguousarray(db.T), y, dy)
    return y, dy


# reassoc: the sums along k are split across SIMD lanes, as BLAS does
@njit(fastmath={"reassoc", "contract"}, error_model="numpy", boundscheck=False, cache=True)
def _jvp_rows(a, bt, da, dbt, y, dy):
    """y = a @ bt.T and dy = da @ bt.T + a @ dbt.T, in blocks of 2 rows by 2 columns:
    each step along k loads 8 numbers for 12 multiply-adds."""
    m, k = a.shape
    n = bt.shape[0]
    for i in range(0, m, 2):
        i1 = min(i + 1, m - 1)  # an odd last row is computed twice, written alike
        for j in range(0, n, 2):
            j1 = min(j + 1, n - 1)
            y00 = y01 = y10 = y11 = 0.0
            d00 = d01 = d10 = d11 = 0.0
            for p in range(k):
                x0 = a[i, p]
                x1 = a[i1, p]
                dx0 = da[i, p]
                dx1 = da[i1, p]
                b0 = bt[j, p]
                b1 = bt[j1, p]
                db0 = dbt[j, p]
                db1 = dbt[j1, p]
                y00 += x0 * b0
                y01 += x0 * b1
                y10 += x1 * b0
                y11 += x1 * b1
                d00 += dx0 * b0 + x0 * db0
                d01 += dx0 * b1 + x0 * db1
                d10 += dx1 * b0 + x1 * db0
                d11 += dx1 * b1 + x1 * db1
            y[i, j], y[i, j1], y[i1, j], y[i1, j1] = y00, y01, y10, y11
            dy[i, j], dy[i, j1], dy[i1, j], dy[i1, j1] = d00, d01, d10, d11


def grad_tangent_thin(a, p, da, q):
    """``a.T @ p + da.T @ q`` for thin `p`, `q` (see `thin_grad`)."""
    out = np.empty((p.shape[1], a.shape[1]))  # transposed: the loop writes along rows
    _grad_cols(a, p, da, q, out)
    return np.ascontiguousarray(out.T)  # C-ordered, as BLAS's result is


@njit(fastmath={"reassoc", "contract"}, error_model="numpy", boundscheck=False, cache=True)
def _grad_cols(a, p, da, q, out):
    """out[c] = sum over i of a[i] p[i, c] + da[i] q[i, c], for 4 rows i and 2 columns
    c at a time: each step along a row loads 8 numbers for 16 multiply-adds, and the two
    rows of `out` stay in the first-level cache."""
    n, k = a.shape
    m = p.shape[1]
    out[:] = 0.0
    n4 = n - n % 4
    for i in range(0, n4, 4):
        for c in range(0, m, 2):
            c1 = min(c + 1, m - 1)  # an odd last column is computed twice, written alike
            p0, p1, p2, p3 = p[i, c], p[i + 1, c], p[i + 2, c], p[i + 3, c]
            q0, q1, q2, q3 = q[i, c], q[i + 1, c], q[i + 2, c], q[i + 3, c]
            r0, r1, r2, r3 = p[i, c1], p[i + 1, c1], p[i + 2, c1], p[i + 3, c1]
            s0, s1, s2, s3 = q[i, c1], q[i + 1, c1], q[i + 2, c1], q[i + 3, c1]
            for j in range(k):
                x0, x1, x2, x3 = a[i, j], a[i + 1, j], a[i + 2, j], a[i + 3, j]
                y0, y1, y2, y3 = da[i, j], da[i + 1, j], da[i + 2, j], da[i + 3, j]
                u = out[c, j] + (p0 * x0 + q0 * y0 + p1 * x1 + q1 * y1
                                 + p2 * x2 + q2 * y2 + p3 * x3 + q3 * y3)
                w = out[c1, j] + (r0 * x0 + s0 * y0 + r1 * x1 + s1 * y1
                                  + r2 * x2 + s2 * y2 + r3 * x3 + s3 * y3)
                out[c1, j] = w
                out[c, j] = u
    for i in range(n4, n):
        for c in range(m):
            for j in range(k):
                out[c, j] += p[i, c] * a[i, j] + q[i, c] * da[i, j]
