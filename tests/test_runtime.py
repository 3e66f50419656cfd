"""runtime: each helper, compiled by numba and as plain Python, against NumPy.

Adjoints are checked by the dot-product test <VJP(v), u> = <v, J u> with random u, v,
where J is the NumPy primal (broadcast, sum, mean, matmul); the max/min adjoint by
central differences away from ties and by hand on ties. Compiled wrappers are made once
at import and specialise per argument type, so cases that share types share a compile.
"""

import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

from srcgrad.errors import NONSCALAR_MARKER, NonScalarOutput
from srcgrad.runtime import (
    add_matmul_lhs_grad,
    add_matmul_rhs_grad,
    extremum_grad,
    matmul_jvp,
    matmul_lhs_grad,
    matmul_lhs_grad_jvp,
    matmul_lhs_grad_tangent,
    matmul_rhs_grad,
    matmul_rhs_grad_jvp,
    matmul_rhs_grad_tangent,
    matmul_sum,
    matmul_tangent,
    mean_grad,
    new_tape,
    products,
    record,
    reshape_as,
    reshaped,
    seed,
    snapshot,
    sum_grad,
    unbroadcast,
    where,
    zeros_like,
)

# (shape of x, axis) for every axis valid for the shape.
REDUCTIONS = [((), None), ((3,), None), ((3,), 0), ((3,), -1),
              ((2, 3), None), ((2, 3), 0), ((2, 3), -1), ((2, 3), 1),
              ((2, 1, 4), None), ((2, 1, 4), 0), ((2, 1, 4), -1), ((2, 1, 4), 1),
              ((2, 3, 4), 1), ((2, 3, 4), 2)]


def data(shape, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape)
    return float(x) if shape == () else x


def run(jit, fun, *args):
    """`fun(*args)` compiled by numba (`fun` was made by njit) or as plain Python."""
    return fun(*args) if jit else fun.py_func(*args)


def dot(a, b):
    return float(np.sum(np.asarray(a) * np.asarray(b)))


# ---- unbroadcast ----

unbroadcast_nb = njit(lambda g, like: unbroadcast(g, like))

# (shape of g, shape of like): extra leading axes, size-1 axes, both, neither.
UNBROADCAST = [((2, 3), ()), ((), ()), ((3,), (3,)), ((2, 3), (3,)),
               ((2, 3), (1, 3)), ((2, 3), (2, 1)), ((2, 3), (2, 3)), ((2, 3, 4), (2, 1, 4)),
               ((5, 2, 3, 4), (2, 1, 4)), ((4, 2, 3), (3,)), ((4, 2, 3), (1, 1, 3)),
               ((2, 3, 4), (2, 3, 1)), ((2, 3, 4), (2, 1, 1))]


@pytest.mark.parametrize(("g_shape", "like_shape"), UNBROADCAST)
def test_unbroadcast_is_the_adjoint_of_broadcasting(jit, g_shape, like_shape):
    g, like, u = data(g_shape, 1), data(like_shape, 2), data(like_shape, 3)
    got = run(jit, unbroadcast_nb, g, like)
    assert np.shape(got) == like_shape
    assert np.asarray(got).dtype == np.float64
    np.testing.assert_allclose(dot(got, u), dot(g, np.broadcast_to(u, np.shape(g))))


@pytest.mark.parametrize("like_shape", [(2,), (1, 2)])
def test_unbroadcast_sums_the_rows_of_a_bias_gradient(jit, like_shape):
    g = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    expected = np.array([9.0, 12.0]).reshape(like_shape)  # by hand: 1 + 3 + 5, 2 + 4 + 6
    got = run(jit, unbroadcast_nb, g, np.zeros(like_shape))
    np.testing.assert_array_equal(got, expected)
    got += 1.0  # the caller's own array (the ones it is summed with are kept)
    np.testing.assert_array_equal(run(jit, unbroadcast_nb, g, np.zeros(like_shape)), expected)
    # a transposed view, and an infinity, as np.sum has them
    t = np.array([[1.0, 3.0, 5.0], [2.0, np.inf, 6.0]]).T
    np.testing.assert_array_equal(run(jit, unbroadcast_nb, t, np.zeros(like_shape)),
                                  np.array([9.0, np.inf]).reshape(like_shape))


@pytest.mark.parametrize("like_shape", [(3, 1), (3, 1, 1)])
def test_unbroadcast_sums_the_columns_of_a_row_reduction(jit, like_shape):
    # the gradient of a keepdims reduction's result, broadcast along the trailing axes
    shape = like_shape[:-1] + (2,)
    g = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]).reshape(shape)
    expected = np.array([3.0, 7.0, 11.0]).reshape(like_shape)  # by hand: 1 + 2, 3 + 4, 5 + 6
    np.testing.assert_array_equal(run(jit, unbroadcast_nb, g, np.zeros(like_shape)), expected)
    # a transposed view, and an infinity, as np.sum has them
    t = np.array([[1.0, 3.0, 5.0], [2.0, np.inf, 6.0]]).T.reshape(shape)
    np.testing.assert_array_equal(run(jit, unbroadcast_nb, t, np.zeros(like_shape)),
                                  np.array([3.0, np.inf, 11.0]).reshape(like_shape))


def test_unbroadcast_of_a_scalar_fills_the_shape(jit):
    got = run(jit, unbroadcast_nb, 2.5, data((2, 3)))
    np.testing.assert_array_equal(got, np.full((2, 3), 2.5))


def test_unbroadcast_returns_a_matching_gradient_itself(jit):
    g = data((2, 3))
    assert np.shares_memory(run(jit, unbroadcast_nb, g, data((2, 3))), g)


def test_unbroadcast_keeps_float32(jit):
    got = run(jit, unbroadcast_nb, data((2, 3)).astype(np.float32), data((1, 3)))
    assert got.dtype == np.float32


def test_unbroadcast_rejects_incompatible_shapes(jit):
    with pytest.raises(ValueError, match="unbroadcast"):
        run(jit, unbroadcast_nb, data((2, 3)), data((2, 4)))


# ---- zeros_like ----

zeros_like_nb = njit(lambda x: zeros_like(x))


@pytest.mark.parametrize("x", [2.0, 3, np.array(2.0), np.arange(3), data((2, 3)),
                               data((2, 1, 4)).astype(np.float32)],
                         ids=["float", "int", "0-d", "int array", "(2,3)", "float32 (2,1,4)"])
def test_zeros_like(jit, x):
    got = run(jit, zeros_like_nb, x)
    if np.ndim(x) == 0:
        assert got == 0.0 and isinstance(got, float)
    else:
        want_dtype = x.dtype if x.dtype.kind == "f" else np.float64
        assert got.shape == x.shape and got.dtype == want_dtype and not got.any()


# ---- reductions: sum_grad, mean_grad, extremum_grad ----

def reduction_grads(dy, y, x, axis, keepdims):
    return (sum_grad(dy, x, axis, keepdims), mean_grad(dy, x, axis, keepdims),
            extremum_grad(dy, y, x, axis, keepdims))


reduction_grads_nb = njit(reduction_grads)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize(("shape", "axis"), REDUCTIONS)
def test_reduction_adjoints(jit, shape, axis, keepdims):
    if jit and keepdims and len(shape) < 3:
        pytest.skip("keepdims only changes the rank of dy; compiled for rank-3 x only")
    x, u = data(shape, 1), data(shape, 2)
    y = np.max(x, axis=axis, keepdims=keepdims)
    dy = data(np.shape(y), 3)
    d_sum, d_mean, d_max = run(jit, reduction_grads_nb, dy, y, x, axis, keepdims)
    for got in (d_sum, d_mean, d_max):
        assert np.shape(got) == shape
    np.testing.assert_allclose(dot(d_sum, u), dot(dy, np.sum(u, axis, keepdims=keepdims)))
    np.testing.assert_allclose(dot(d_mean, u), dot(dy, np.mean(u, axis, keepdims=keepdims)))
    # x is random, so max is unique in every slice and differentiable: central differences.
    f = lambda x: dot(dy, np.max(x, axis=axis, keepdims=keepdims))  # noqa: E731
    h, e = 1e-6, np.zeros(shape)
    numeric = np.zeros(shape)
    for i in np.ndindex(shape):
        e[i] = h
        numeric[i] = (f(x + e) - f(x - e)) / (2 * h)
        e[i] = 0.0
    np.testing.assert_allclose(d_max, numeric, rtol=1e-6, atol=1e-8)


def test_extremum_grad_splits_ties(jit):
    x = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    _, _, got = run(jit, reduction_grads_nb, np.array([1.0, 4.0]), np.max(x, axis=1), x,
                    1, False)
    np.testing.assert_allclose(got, [[0.0, 0.5, 0.5], [4 / 3, 4 / 3, 4 / 3]])
    _, _, got = run(jit, reduction_grads_nb, np.array([1.0, 4.0, 2.0]), np.min(x, axis=0), x,
                    0, False)
    np.testing.assert_allclose(got, [[1.0, 0.0, 0.0], [0.0, 4.0, 2.0]])
    _, _, got = run(jit, reduction_grads_nb, 1.0, 3.0, x, None, False)
    np.testing.assert_allclose(got, [[0.0, 0.5, 0.5], [0.0, 0.0, 0.0]])


def test_extremum_grad_of_a_nan_slice_is_nan(jit):
    x = np.array([[1.0, np.nan, 2.0], [1.0, 2.0, 3.0]])
    dy = np.array([1.0, 1.0])
    _, _, got = run(jit, reduction_grads_nb, dy, np.max(x, axis=1), x, 1, False)
    np.testing.assert_array_equal(got, [[np.nan] * 3, [0.0, 0.0, 1.0]])


def test_sum_grad_over_a_tuple_of_axes(jit):
    sum_grad_nb = njit(lambda dy, x: sum_grad(dy, x, (0, -1)))
    x, u, dy = data((2, 3, 4), 1), data((2, 3, 4), 2), data(3, 3)
    got = run(jit, sum_grad_nb, dy, x)
    np.testing.assert_allclose(dot(got, u), dot(dy, np.sum(u, axis=(0, -1))))


# ---- seed ----

seed_nb = njit(lambda y: seed(y))


@pytest.mark.parametrize("y", [2.5, np.float64(2.5), np.array(2.5)])
def test_seed_of_a_scalar_is_one(jit, y):
    assert run(jit, seed_nb, y) == 1.0


def test_seed_keeps_a_float32_scalar():
    assert seed(np.float32(2.5)).dtype == np.float32


@pytest.mark.parametrize("shape", [(1,), (3,), (2, 3)])
def test_seed_of_an_array_fails(shape):
    with pytest.raises(NonScalarOutput) as info:
        seed(np.ones(shape))
    assert str(info.value) == "grad needs a scalar result; this function returns an array (use vjp)"
    with pytest.raises(TypingError, match=NONSCALAR_MARKER):
        seed_nb(np.ones(shape))


# ---- matmul and reshape adjoints ----

def matmul_grads(dy, a, b):
    return matmul_lhs_grad(dy, a, b), matmul_rhs_grad(dy, a, b)


matmul_grads_nb = njit(matmul_grads)


@pytest.mark.parametrize(("a_shape", "b_shape"), [((2, 3), (3, 4)), ((3,), (3, 4)),
                                                  ((2, 3), (3,)), ((3,), (3,))])
def test_matmul_adjoints(jit, a_shape, b_shape):
    a, b, ua, ub = data(a_shape, 1), data(b_shape, 2), data(a_shape, 3), data(b_shape, 4)
    dy = data(np.shape(a @ b), 5)
    da, db = run(jit, matmul_grads_nb, dy, a, b)
    np.testing.assert_allclose(dot(da, ua), dot(dy, ua @ b))
    np.testing.assert_allclose(dot(db, ub), dot(dy, a @ ub))


# ---- products with their tangents (forward mode's joint calls) ----

matmul_sum_nb = njit(lambda a1, b1, a2, b2: matmul_sum(a1, b1, a2, b2))
matmul_jvp_nb = njit(lambda a, b, da, db: matmul_jvp(a, b, da, db))
matmul_tangent_nb = njit(lambda a, b, da, db: matmul_tangent(a, b, da, db))
lhs_jvp_nb = njit(lambda dy, a, b, ddy, db: matmul_lhs_grad_jvp(dy, a, b, ddy, db))
lhs_tangent_nb = njit(lambda dy, a, b, ddy, db: matmul_lhs_grad_tangent(dy, a, b, ddy, db))
rhs_jvp_nb = njit(lambda dy, a, b, ddy, da: matmul_rhs_grad_jvp(dy, a, b, ddy, da))
rhs_tangent_nb = njit(lambda dy, a, b, ddy, da: matmul_rhs_grad_tangent(dy, a, b, ddy, da))
_concat = np.concatenate


def test_matmul_sum_by_hand(jit):
    got = run(jit, matmul_sum_nb, np.eye(2), np.ones((2, 2)), np.ones((2, 1)),
              np.array([[1.0, 2.0]]))
    np.testing.assert_array_equal(got, [[2.0, 3.0], [2.0, 3.0]])


def test_matmul_jvp_by_hand(jit):
    a, b = np.array([[1.0, 2.0]]), np.array([[3.0], [4.0]])
    y, dy = run(jit, matmul_jvp_nb, a, b, np.array([[1.0, 0.0]]), np.array([[0.0], [1.0]]))
    np.testing.assert_array_equal(y, [[11.0]])   # 1*3 + 2*4
    np.testing.assert_array_equal(dy, [[5.0]])   # da @ b + a @ db = 3 + 2


# (m, k, n) of a (m, k) @ (k, n), and how many arrays matmul_jvp and matmul_tangent each
# concatenate: thin right factors (a read once: b with db), thin left ones (b read once:
# a with da), a thin inner dimension (the tangent one product of its operands side by
# side: da with a, b with db), none thin
PATHS = [((64, 48, 2), 1, 0), ((2, 48, 40), 1, 0), ((64, 3, 48), 2, 2), ((4, 6, 3), 0, 0)]


@pytest.mark.parametrize(("mkn", "jvp_joins", "tangent_joins"), PATHS)
def test_matmul_jvp_against_numpy(jit, monkeypatch, mkn, jvp_joins, tangent_joins):
    m, k, n = mkn
    a, b, da, db = data((m, k), 1), data((k, n), 2), data((m, k), 3), data((k, n), 4)
    y_want = np.einsum("ik,kj->ij", a, b)
    dy_want = np.einsum("ik,kj->ij", da, b) + np.einsum("ik,kj->ij", a, db)
    joined = []
    monkeypatch.setattr(np, "concatenate", lambda *x, **kw: joined.append(1) or _concat(*x, **kw))
    y, dy = run(jit, matmul_jvp_nb, a, b, da, db)
    after_jvp = len(joined)
    tangent = run(jit, matmul_tangent_nb, a, b, da, db)
    if not jit:  # the paths are the Python form's
        assert (after_jvp, len(joined) - after_jvp) == (jvp_joins, tangent_joins)
    for got, want in ((y, y_want), (dy, dy_want), (tangent, dy_want)):
        assert got.shape == want.shape and got.flags.c_contiguous
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


# the compiled loop for a thin right factor (products.jvp_thin_right): odd rows and
# columns (the last ones computed twice), one column, THIN columns; and operands it does
# not take (an F-ordered left factor, a right factor too wide), which go to BLAS
LOOP_CASES = [((64, 48), (48, 2), "C", True), ((65, 40), (40, 3), "C", True),
              ((40, 40), (40, 1), "C", True), ((128, 128), (128, 32), "C", True),
              ((64, 48), (48, 2), "F", False), ((64, 48), (48, 40), "C", False)]


@pytest.mark.parametrize(("a_shape", "b_shape", "order", "looped"), LOOP_CASES)
def test_matmul_jvp_thin_loop_against_numpy(monkeypatch, a_shape, b_shape, order, looped):
    a, b = np.asarray(data(a_shape, 1), order=order), data(b_shape, 2)
    da, db = np.asarray(data(a_shape, 3), order=order), data(b_shape, 4)
    a[1, 2], da[3, 0] = np.nan, np.inf  # NaN and inf reach the results as through BLAS
    calls = []
    rows = products._jvp_rows
    monkeypatch.setattr(products, "_jvp_rows", lambda *x: calls.append(1) or rows(*x))
    y, dy = matmul_jvp(a, b, da, db, loops=True)
    assert len(calls) == looped
    y_want = np.einsum("ik,kj->ij", a, b)
    dy_want = np.einsum("ik,kj->ij", da, b) + np.einsum("ik,kj->ij", a, db)
    for got, want in ((y, y_want), (dy, dy_want)):
        assert got.flags.c_contiguous and got.dtype is np.dtype(np.float64)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
    assert np.isnan(y[1]).all() and np.isinf(dy[3]).any()  # the cases are not vacuous
    calls.clear()
    matmul_jvp(a, b, da, db)  # without loops=True: never the loop
    assert not calls


# the compiled loop for a right factor's adjoint's tangent (products.grad_tangent_thin),
# a.T @ p + da.T @ q: rows past a multiple of 4 and an odd last column, one column, THIN
# columns; and operands it does not take (F-ordered, too wide), which go to BLAS
GRAD_LOOP_CASES = [((64, 48), 2, "C", True), ((67, 40), 3, "C", True),
                   ((41, 40), 1, "C", True), ((128, 128), 32, "C", True),
                   ((64, 48), 2, "F", False), ((64, 48), 40, "C", False)]


@pytest.mark.parametrize(("a_shape", "m", "order", "looped"), GRAD_LOOP_CASES)
def test_matmul_rhs_grad_tangent_thin_loop_against_numpy(monkeypatch, a_shape, m, order,
                                                          looped):
    a, da = np.asarray(data(a_shape, 1), order=order), np.asarray(data(a_shape, 3), order=order)
    dy, ddy = data((a_shape[0], m), 2), data((a_shape[0], m), 4)
    a[1, 2], da[a_shape[0] - 1, 0] = np.nan, np.inf  # the last row is in the remainder loop
    calls = []
    cols = products._grad_cols
    monkeypatch.setattr(products, "_grad_cols", lambda *x: calls.append(1) or cols(*x))
    got = matmul_rhs_grad_tangent(dy, a, None, ddy, da, loops=True)
    assert len(calls) == looped
    want = np.einsum("ij,ic->jc", a, ddy) + np.einsum("ij,ic->jc", da, dy)
    assert got.flags.c_contiguous and got.dtype == np.float64 and got.shape == want.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
    assert np.isnan(got[2]).all() and np.isinf(got[0]).any()  # the cases are not vacuous
    calls.clear()
    matmul_rhs_grad_tangent(dy, a, None, ddy, da)  # without loops=True: never the loop
    assert not calls


# 2-D operands (thin ones take the shared paths) and 1-D ones (the helpers' other forms)
@pytest.mark.parametrize(("a_shape", "b_shape"), [((64, 48), (48, 2)), ((2, 48), (48, 40)),
                                                  ((4, 3), (3,)), ((3,), (3, 4)),
                                                  ((2, 3), (3, 4))])
def test_matmul_grads_with_tangents_against_numpy(jit, a_shape, b_shape):
    a, b, da, db = data(a_shape, 1), data(b_shape, 2), data(a_shape, 3), data(b_shape, 4)
    dy, ddy = data(np.shape(a @ b), 5), data(np.shape(a @ b), 6)
    lhs = matmul_lhs_grad(dy, a, b), matmul_lhs_grad(ddy, a, b) + matmul_lhs_grad(dy, a, db)
    rhs = matmul_rhs_grad(dy, a, b), matmul_rhs_grad(ddy, a, b) + matmul_rhs_grad(dy, da, b)
    got_lhs = run(jit, lhs_jvp_nb, dy, a, b, ddy, db)
    got_rhs = run(jit, rhs_jvp_nb, dy, a, b, ddy, da)
    for got, want in zip(got_lhs + got_rhs, lhs + rhs, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(run(jit, lhs_tangent_nb, dy, a, b, ddy, db), lhs[1],
                               rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(run(jit, rhs_tangent_nb, dy, a, b, ddy, da), rhs[1],
                               rtol=1e-13, atol=1e-13)


reshape_as_nb = njit(lambda dy, x: reshape_as(dy, x))


@pytest.mark.parametrize(("dy", "x"), [(data(6), data((2, 3))), (data((1, 1)), 2.0)])
def test_reshape_as(jit, dy, x):
    got = run(jit, reshape_as_nb, dy, x)
    assert np.shape(got) == np.shape(x)
    np.testing.assert_array_equal(np.ravel(got), np.ravel(dy))


# ---- in-place accumulation and snapshots ----

def _add_lhs(out, dy, a, b):
    add_matmul_lhs_grad(out, dy, a, b)
    return out


def _add_rhs(out, dy, a, b):
    add_matmul_rhs_grad(out, dy, a, b)
    return out


add_lhs_nb, add_rhs_nb = njit(_add_lhs), njit(_add_rhs)
snapshot_nb = njit(lambda x: snapshot(x))


@pytest.mark.parametrize(("a_shape", "b_shape"), [((4, 3), (3,)), ((3,), (3, 4)),
                                                  ((2, 3), (3, 4))])
def test_adding_matmul_grads_in_place(jit, a_shape, b_shape):
    a, b = data(a_shape, 1), data(b_shape, 2)
    dy = data(np.shape(a @ b), 3)
    start_a, start_b = data(a_shape, 4), data(b_shape, 5)
    got_a = run(jit, add_lhs_nb, start_a.copy(), dy, a, b)
    got_b = run(jit, add_rhs_nb, start_b.copy(), dy, a, b)
    np.testing.assert_allclose(got_a, start_a + matmul_lhs_grad(dy, a, b))
    np.testing.assert_allclose(got_b, start_b + matmul_rhs_grad(dy, a, b))


def test_snapshot_copies_arrays_and_keeps_scalars(jit):
    x = np.arange(4.0)
    view = run(jit, snapshot_nb, x[1:])
    x[1] = 9.0
    np.testing.assert_array_equal(view, [1.0, 2.0, 3.0])
    assert run(jit, snapshot_nb, 2.5) == 2.5


new_tape_nb = njit(lambda sample, trips: new_tape(sample, trips))


@pytest.mark.parametrize("sample", [1.5, 3, True, np.zeros((2, 3)), np.zeros(4, np.int32)])
def test_new_tape_holds_one_sample_per_iteration(jit, sample):
    tape = run(jit, new_tape_nb, sample, 5)
    assert len(tape) == 5
    if jit:  # compiled: an array, one entry shaped like the sample (one type in numba)
        assert tape.shape == (5,) + np.shape(sample)
        assert tape.dtype == np.asarray(sample).dtype
    assert len(run(jit, new_tape_nb, sample, -2)) == 0  # range(-2) runs no iteration


def _record(tape, k, value):
    record(tape, k, value)
    return tape


record_nb = njit(_record)


@pytest.mark.parametrize("value", [2.5, np.arange(3.0), np.arange(6.0).reshape(2, 3).T])
def test_record_stores_one_entry(jit, value):
    tape = run(jit, new_tape_nb, value, 4)
    if jit:
        tape[:] = 0
    tape = run(jit, record_nb, tape, 2, value)
    np.testing.assert_array_equal(tape[2], value)
    if jit:
        np.testing.assert_array_equal(tape[1], np.zeros_like(value))


def test_python_tape_keeps_each_entry_as_recorded():
    """A variable that starts as the int 1 and becomes a float, then an array: each entry
    comes back with its own type and shape (an int array tape truncated the floats), and
    a later write into a recorded array does not reach the tape."""
    tape = new_tape(1, 3)
    later = np.array([0.25, 0.5])
    for k, value in enumerate([1, 0.1, later]):
        record(tape, k, value)
    later[0] = 9.0
    assert tape[0] == 1 and type(tape[0]) is int
    assert tape[1] == 0.1
    np.testing.assert_array_equal(tape[2], [0.25, 0.5])


# ---- where: np.where, with a loop for the forms gradient rules give it ----

where_nb = njit(lambda cond, x, y: where(cond, x, y))
numba_where = njit(lambda cond, x, y: np.where(cond, x, y))
COND = data((3, 4)) > 0.0


@pytest.mark.parametrize(("cond", "x", "y"), [
    (COND, data((3, 4)), 0.0),                   # a rule's np.where(cond, dy, 0.0)
    (COND, 0.0, data((3, 4))),
    (COND, data((3, 4)), data((3, 4), 1)),
    (COND, data((3, 4)).astype(np.float32), 0.0),
    (COND, 2, 1.5),
    (data((3, 4)), data((3, 4), 1), -1.0),       # a float condition: nonzero is true
    (COND, data((1, 4)), 0.0),                   # broadcast: NumPy's form
    (COND, data((4, 3)).T, 0.0),                 # not C-contiguous: NumPy's form
    (COND[:, 0], data(3), 0.0),
    (COND, np.where(COND, data((3, 4)), [np.inf, -np.inf, np.nan, 1.0]), 0.0),  # not finite
    (COND, np.where(COND, np.inf, data((3, 4))), 0),
])
def test_where_is_np_where(jit, cond, x, y):
    got = run(jit, where_nb, cond, x, y)
    np.testing.assert_array_equal(got, np.where(cond, x, y))
    assert np.array_equal(np.signbit(got), np.signbit(np.where(cond, x, y)))  # no -0.0
    if jit:  # the type numba's own np.where gives, so the two forms unify
        assert got.dtype == numba_where(cond, x, y).dtype


# ---- reshaped: what generated code calls for a reshape, any layout ----


@njit
def _reshaped_views(a, b):
    """a's reshapes as generated code makes them, and b's (C-contiguous) written through."""
    strided = reshaped(a[:, ::2], (4,))       # 'A'
    transposed = reshaped(a.T, (8,))          # 'F', of no view in C order
    whole = reshaped(b, (4, 2))               # 'C': a view
    whole[0, 0] = 7.0
    return strided, transposed, whole


@pytest.mark.parametrize("jit", [True, False], ids=["numba", "python"])
def test_reshaped_is_reshape_in_c_order_and_a_view_where_contiguous(jit):
    a = np.arange(8.0).reshape(2, 4)
    b = np.zeros((2, 4))
    strided, transposed, whole = run(jit, _reshaped_views, a, b)
    want = np.arange(8.0).reshape(2, 4)
    np.testing.assert_array_equal(strided, want[:, ::2].reshape(4))
    np.testing.assert_array_equal(transposed, want.T.reshape(8))
    assert whole.shape == (4, 2) and b[0, 0] == 7.0   # no copy on the contiguous path
