"""Writes through a boolean mask (`y[mask] = v`, `y[mask] += v`, `y[x > 0] = f(x)`),
whose adjoint reads dy at the mask and zeroes it there (srcgrad/runtime/indexing.py):
against central differences at points away from the mask's edges, and by hand; and
reads through masks. Masks of any rank compile (numba's own indexing takes 1-D ones:
srcgrad/numba_ext.py adds the others).
"""

import numpy as np
import pytest
from fd import assert_grad
from marks import compiles

import srcgrad

CASES = []   # writes are statements, not rules: their cases are the tests below

X1 = np.array([0.7, -1.3, 0.25, 1.9, -0.4, 0.05])
X2 = np.array([[0.7, -1.3, 0.25], [1.9, -0.4, 0.55]])
W1 = np.array([1.0, 2.0, -3.0, 0.5, 4.0, -1.5])
W2 = W1.reshape(2, 3)


def set_number(x, v):
    y = x * 1.0
    y[x > 0.1] = v
    return np.sum(y ** 2 * (W1 if x.ndim == 1 else W2))


def set_values(x):
    y = np.zeros_like(x)
    y[x > 0.0] = x[x > 0.0] ** 3
    return np.sum(y * x * (W1 if x.ndim == 1 else W2))


def add_through(x, v):
    y = x * 2.0
    y[x < 0.0] += v * x[x < 0.0]
    return np.sum(np.sin(y) * (W1 if x.ndim == 1 else W2))


def run(fun, args, positions, jit):
    g = srcgrad.grad(fun, wrt=tuple(positions), jit=jit)(*args)
    assert_grad(fun, g, args, positions)
    return g


@pytest.mark.parametrize("x", [X1, X2], ids=["vector", "matrix"])
def test_mask_writes_as_python(x):
    run(set_number, (x, 0.8), [0, 1], False)
    run(set_values, (x,), [0], False)
    run(add_through, (x, 1.7), [0, 1], False)


def blocks(x, w):
    # a rank-3 array under a rank-2 mask: it picks rows along the last axis, read, and
    # written with w (2,) broadcast over them
    y = x * 1.0
    m = x[:, :, 0] > 0.0
    y[m] = x[m] * w
    return np.sum(np.sin(y) * x)


X3 = np.stack([X2, X2[::-1] * 1.5], axis=-1)


def test_mask_writes_of_a_matrix_compiled():
    run(set_values, (X2,), [0], True)
    run(add_through, (X2, 1.7), [0, 1], True)


def test_mask_of_lower_rank(jit):
    run(blocks, (X3, np.array([0.6, -1.2])), [0, 1], jit)


def test_mask_write_by_hand(jit):
    # y = x except y_i = v where x_i > 0.1 (entries 0, 2, 3): d/dv sum(W y^2) =
    # 2 v (W_0 + W_2 + W_3) and dx_i = 2 W_i x_i off the mask, 0 on it
    gx, gv = srcgrad.grad(set_number, wrt=(0, 1), jit=jit)(X1, 0.8)
    assert gv == pytest.approx(2 * 0.8 * (1.0 - 3.0 + 0.5), rel=1e-14)
    np.testing.assert_allclose(gx, [0.0, 2 * 2.0 * -1.3, 0.0, 0.0, 2 * 4.0 * -0.4,
                                    2 * -1.5 * 0.05], rtol=1e-14)
    # the matrix X2: the mask holds at flat entries 0, 2, 3, 5
    gx, gv = srcgrad.grad(set_number, wrt=(0, 1), jit=jit)(X2, 0.8)
    assert gv == pytest.approx(2 * 0.8 * (1.0 - 3.0 + 0.5 - 1.5), rel=1e-14)
    np.testing.assert_allclose(gx, [[0.0, 2 * 2.0 * -1.3, 0.0], [0.0, 2 * 4.0 * -0.4, 0.0]],
                               rtol=1e-14)


def masked_by(x, m):
    return np.sum(x[m] ** 2)


@compiles
def test_a_mask_of_another_shape_is_numpys_index_error():
    with pytest.raises(IndexError):
        X2[X2.T > 0.0]
    with pytest.raises(IndexError):
        srcgrad.grad(masked_by, jit=True)(X2, X2.T > 0.0)
