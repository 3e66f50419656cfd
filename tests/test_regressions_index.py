"""Named regressions: fancy indices whose entries repeat (issue 18 #1, issue 26 #3, #4).

NumPy's `dx[idx] += d` adds once per distinct entry; a read `x[idx]` with a repeated
entry needs every occurrence added (`np.add.at`), and a write `y[idx] = v` keeps the
last occurrence only. Gradients against central differences and values by hand, compiled
and as Python (the `jit` fixture).
"""

import numpy as np
import pytest
from fd import assert_grad
from marks import needs_numba_advanced_indexing

import srcgrad


def sum_of_repeats(x):
    return np.sum(x[[0, 0, 1]])


def test_list_index_with_a_repeat(jit):
    # the issue's example: [2, 1, 0], not [1, 1, 0] (compiled: numba_ext takes the list
    # as an array)
    g = srcgrad.grad(sum_of_repeats, jit=jit)(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(g, [2.0, 1.0, 0.0])


def list_indices(m, v):
    rows = [2, 0, 2]
    y = m * 1.0
    y[[0, 0, 1], [3, 3, 0]] = v                       # pairs, the last write counts
    y[rows, :] += np.cos(m[[1, 1, 2], :])           # rows of a list (added once each)
    return np.sum(y[:, [3, 3, 1]] ** 2) + np.sum(m[[[0, 2], [2, 2]]] ** 3) + \
        np.sum(np.take(m, [5, 5, 0]) * v)


def test_list_indices_in_reads_and_writes(jit):
    # lists as indices, alone, nested (rank 2), paired and beside slices, read and
    # written, compiled: against differences, and one entry by hand
    needs_numba_advanced_indexing(jit)
    m, v = np.arange(12.0).reshape(3, 4) / 10, np.array([0.5, -1.0, 2.0])
    g = srcgrad.grad(list_indices, wrt=(0, 1), jit=jit)(m, v)
    assert_grad(list_indices, g, (m, v), (0, 1))
    # y[0, 1] = m[0, 1] + cos(m[1, 1]) is read once by y[:, [3, 3, 1]], m[0] once by
    # m[[[0, 2], [2, 2]]]; m[1, 1] is also y[1, 1], and np.take reads it (flat 5) twice
    m01, m11 = m[0, 1], m[1, 1]
    y01 = m01 + np.cos(m11)
    assert np.isclose(g[0][0, 1], 2 * y01 + 3 * m01 ** 2)
    assert np.isclose(g[0][1, 1], -2 * y01 * np.sin(m11) + 2 * m11 + v[0] + v[1])


def gather(x, idx):
    return np.sum(np.sin(x[idx]) ** 2)


def rows_and_columns(m, idx):
    return np.sum(m[idx, :] ** 2) + np.sum(m[:, idx] ** 3) + np.sum(m[1, idx]) + \
        np.sum(m[idx, 2])


def embedding(e, tokens):
    return np.sum(np.tanh(e[tokens]) ** 2)


def test_gather_with_repeats(jit):
    x, idx = np.array([1.0, 2.0, 3.0]), np.array([0, 0, 2, 0, -3])
    g = srcgrad.grad(gather, jit=jit)(x, idx)
    # x[0] is read four times (-3 is 0), x[2] once: d/dx sin(x)**2 = sin(2 x)
    np.testing.assert_allclose(g, [4 * np.sin(2.0), 0.0, np.sin(6.0)], rtol=1e-12)
    assert_grad(gather, (g,), (x, idx), (0,))


def test_rows_and_columns_with_repeats(jit):
    m, idx = np.arange(12.0).reshape(3, 4) / 10, np.array([1, 1, 2])
    g = srcgrad.grad(rows_and_columns, jit=jit)(m, idx)
    assert_grad(rows_and_columns, (g,), (m, idx), (0,))


def test_index_array_of_rank_two(jit):
    # an embedding lookup with a matrix of tokens, compiled too
    needs_numba_advanced_indexing(jit)
    e, tokens = np.arange(12.0).reshape(4, 3) / 10, np.array([[0, 0], [3, 0]])
    g = srcgrad.grad(embedding, jit=jit)(e, tokens)
    assert_grad(embedding, (g,), (e, tokens), (0,))
    assert not g[1:3].any()


def assign_at(x, v, idx):
    y = x * 1.0
    y[idx] = v * 2.0
    return np.sum(y ** 2)


def add_into_at(x, v, idx):
    y = x * 1.0
    y[idx] += v ** 2
    return np.sum(y ** 3)


def test_writes_with_repeats(jit):
    # NumPy keeps the last of repeated writes, and `y[idx] += v` adds once per entry
    x, v = np.array([1.0, 2.0, 3.0, 0.5]), np.array([0.3, 0.7, 1.1, 0.9])
    idx = np.array([0, 2, 0, -1])
    g = srcgrad.grad(assign_at, wrt=(0, 1), jit=jit)(x, v, idx)
    # y = [2.2, 2, 1.4, 1.8]: only v[1:] counts, x[1] alone stays
    np.testing.assert_allclose(g[0], [0.0, 4.0, 0.0, 0.0])
    np.testing.assert_allclose(g[1], [0.0, 8 * 0.7, 8 * 1.1, 8 * 0.9])
    assert_grad(assign_at, g, (x, v, idx), (0, 1))
    g = srcgrad.grad(add_into_at, wrt=(0, 1), jit=jit)(x, v, idx)
    assert_grad(add_into_at, g, (x, v, idx), (0, 1))


def issue_26_first(x, y, z):
    t1 = (np.abs(y) / (2.0 + np.cos(np.abs(y[[2, 2, 3, 2, 0]]))))
    z = z / (1.0 + np.max(np.sqrt(x ** 2 + 1.0)) ** 2)
    t4 = (np.tanh(y[:, 3:4] ** 3.0) * (((y[1:2] ** 2 + 1.0) ** 0.5) * np.reshape(z, (1, 4))))
    t4 = np.tanh(t4 * np.divide(z, x[::-1] * x[::-1] + 2.0))  # noqa: F841
    t7 = (t1 + t1)
    y = np.tanh(y * (((t7[:, 2:3] + y) ** 2 + 1.0) ** -2))
    t10 = np.where(((z[-3] * t1[0]) > 0.52), np.log1p(t7[-1] ** 2), x[::-1])
    for _ in range(4):
        if ((np.sum(y[y > (-0.22)] ** 2) * (t10[-4] ** 2)) < (-0.8)):
            continue
        t12 = (np.transpose(t7) * (-0.68)).T  # noqa: F841
    return np.sum(y ** 2)


def issue_26_second(x, y, k, z):
    acc1 = 0
    for _ in range(k):
        acc1 += (np.log1p(z ** 2) - (z * (z[2] < y)))
        y = y * np.cos(y)
        z = np.exp(0.5 * np.cos(np.max(x[[2, 2, 2]]))) - z
    x = x + np.log(z[[1, 1, 1, 0]] ** 2 + 1.0)[k + 1]
    return x.sum() - np.sum(z)


def test_issue_26_fuzzer_programs():
    # both read repeated fancy indices (np.abs of y[[2, 2, 3, 2, 0]], np.max of
    # x[[2, 2, 2]]); they are lists, so the Python form (numba has no list index)
    r = np.random.default_rng(263)
    args = (r.normal(size=4), r.normal(size=(5, 4)), r.normal(size=4))
    g = srcgrad.grad(issue_26_first, wrt=(0, 1, 2), jit=False)(*args)
    assert_grad(issue_26_first, g, args, (0, 1, 2), rtol=1e-4)
    args = (r.normal(size=(3, 4)), r.normal(size=4), 1, r.normal(size=(3, 4)))
    g = srcgrad.grad(issue_26_second, wrt=(0, 3), jit=False)(*args)
    assert_grad(issue_26_second, g, args, (0, 3), rtol=1e-4)


def rotate(r, x):
    """Rodrigues' rotation of the rows of x by the rotation vectors in the rows of r."""
    theta = np.sqrt(np.sum(r ** 2, axis=1, keepdims=True))
    k = r / theta
    c, s = np.cos(theta), np.sin(theta)
    return x * c + np.cross(k, x) * s + k * np.sum(k * x, axis=1, keepdims=True) * (1 - c)


def bundle_adjustment(cams, pts, obs_cam, obs_pt, feats):
    c = cams[obs_cam]            # (m, 9): rotation, centre, focal length, 2 distortions
    x = pts[obs_pt]              # (m, 3)
    xc = rotate(c[:, 0:3], x - c[:, 3:6])
    p = xc[:, 0:2] / xc[:, 2:3]
    r2 = np.sum(p ** 2, axis=1, keepdims=True)
    distortion = 1.0 + c[:, 7:8] * r2 + c[:, 8:9] * r2 ** 2
    return np.sum((p * distortion * c[:, 6:7] - feats) ** 2)


def test_bundle_adjustment(jit):
    # issue 26 #4: the NumPy way, cameras and points each observed many times
    r = np.random.default_rng(4)
    cams = np.hstack([0.3 * r.normal(size=(5, 3)), r.normal(size=(5, 3)),
                      r.uniform(1.0, 2.0, size=(5, 1)), 0.01 * r.normal(size=(5, 2))])
    pts = r.normal(size=(20, 3)) + [0.0, 0.0, 8.0]
    obs_cam, obs_pt = r.integers(0, 5, size=60), r.integers(0, 20, size=60)
    feats = r.normal(size=(60, 2))
    args = (cams, pts, obs_cam, obs_pt, feats)
    g = srcgrad.grad(bundle_adjustment, wrt=(0, 1), jit=jit)(*args)
    assert_grad(bundle_adjustment, g, args, (0, 1), rtol=1e-5, atol=1e-6)


def r_of_differentiated(x):
    return np.sum(np.r_[x, 2 * x] ** 2)


def r_of_constants(x, i):
    return x[i] * np.r_[1.0, 2.0][i]


def test_subscript_of_an_object_is_a_missing_rule():
    # issue 18 #3: np.r_[x, 2 * x] (a subscript of an object, not a call) gave a zero
    # gradient; a differentiated value in its index now has no rule to pass
    with pytest.raises(srcgrad.MissingRule, match=r"np\.r_\[\.\.\.\] has no gradient rule: "
                                                  r"build the array with np\.concatenate"):
        srcgrad.grad(r_of_differentiated, jit=False)(np.ones(2))
    with pytest.raises(srcgrad.MissingRule, match=r"np\.r_"):
        srcgrad.jvp(r_of_differentiated, jit=False)(np.ones(2), np.ones(2))
    # on constants only it is a value like any other (numba does not compile np.r_)
    np.testing.assert_array_equal(srcgrad.grad(r_of_constants, jit=False)(np.ones(2), 1),
                                  [0.0, 2.0])


def missing_function(x):
    return np.sum(np.nextafter(np.outer(x, x), x[0]))


def test_missing_rule_says_what_to_do():
    with pytest.raises(srcgrad.MissingRule) as info:
        srcgrad.grad(missing_function, jit=False)(np.ones(2))
    text = str(info.value)
    assert "np.nextafter has no gradient rule: define one with " \
           "@srcgrad.adjoint(np.nextafter)" in text
    assert "test_regressions_index.py:" in text and "np.nextafter(np.outer" in text


def take_along(a):
    return np.sum(np.take(a, np.array([2, 0, 2, -1]), axis=1) * np.arange(12.0).reshape(3, 4)) \
        + np.sum(np.take(a, 1, axis=0) ** 3)


def test_take_along_an_axis(jit):
    # np.take with axis=: a repeated column adds each time; an int row
    needs_numba_advanced_indexing(jit)
    a = np.arange(12.0).reshape(3, 4) / 10
    g = srcgrad.grad(take_along, jit=jit)(a)
    assert_grad(take_along, (g,), (a,), (0,))
    # column 2 is taken twice, with weights 0 + 2 in row 0: d/da[0, 2] = 2
    assert g[0, 2] == 2.0


def weighted_by_position(a, b, c):
    x = a, b, c
    s = 0.0
    for i in range(3):
        s = s + x[i] * (i + 1.0)
    return s


def squares_over_a_tuple(a, b):
    t = (a, b)
    s = 0.0
    for v in t:
        s = s + np.sum(v ** 2)
    return s


def test_a_tuple_read_at_a_loop_index_compiles(jit):
    # the adjoint of x[i] is a list of the items' adjoints, which numba compiled only
    # for np.split's pieces: s = a + 2 b + 3 c, and sum(a^2) + sum(b^2)
    g = srcgrad.grad(weighted_by_position, wrt=(0, 1, 2), jit=jit)(1.0, 2.0, 3.0)
    assert g == pytest.approx((1.0, 2.0, 3.0))
    a, b = np.array([0.5, -1.0]), np.array([2.0, 3.0])
    da, db = srcgrad.grad(squares_over_a_tuple, wrt=(0, 1), jit=jit)(a, b)
    np.testing.assert_allclose(da, 2 * a)
    np.testing.assert_allclose(db, 2 * b)
