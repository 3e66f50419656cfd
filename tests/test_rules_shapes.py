"""Shapes, joins and reorderings (srcgrad/rules/shapes.py, and np.transpose, np.squeeze,
np.expand_dims with axes): the rule sweep's cases, values by hand, and forward mode
(each of these maps is linear: its jvp is the map of the tangent) against differences.
"""

import numpy as np
import pytest
from fd import assert_grad
from marks import compiles
from sweep import check, domains, parametrize

import srcgrad

any_, pos, unit, distinct = domains(20)


# ---- joins ----
def hstack_op(a, b, v):
    # matrices join along axis 1, vectors along axis 0
    return np.sum(np.sin(np.hstack((a, b * 2.0))) * 1.3) + np.sum(np.hstack((v, b[0])) ** 3)


def vstack_op(a, v):
    # a vector is a row
    return np.sum(np.sin(np.vstack((v, a))) * np.arange(9.0).reshape(3, 3))


def row_stack_op(a, v):
    return np.sum(np.row_stack((a, v)) ** 3)


def dstack_op(a, b):
    return np.sum(np.sin(np.dstack((a, b * 2.0))) * np.arange(12.0).reshape(2, 3, 2))


def column_stack_op(v, a):
    # a vector is a column
    return np.sum(np.sin(np.column_stack((v, a))) * np.arange(9.0).reshape(3, 3))


def append_op(a, v):
    # flattened without an axis
    return np.sum(np.append(a, v) ** 3) + np.sum(np.sin(np.append(a, a * 2.0, axis=1)))


def list_display_op(a, v):
    # joins of list displays, which compiled code passes as tuples
    return np.sum(np.concatenate([a, a * 2.0]) ** 3) + np.sum(np.sin(np.stack([a, a], axis=1))) + \
        np.sum(np.hstack([v, a[0]]) ** 3) + np.sum(np.vstack([a, v]) ** 3) + \
        np.sum(np.dstack([a, a]) ** 3) + np.sum(np.column_stack([v, a[1]]) ** 3)


# ---- rank and broadcasting ----
def atleast_op(x, v):
    return np.sum(np.atleast_1d(x) ** 3) + np.sum(np.sin(np.atleast_2d(v)) * v) + \
        np.sum(np.atleast_3d(v) ** 3)


def broadcast_to_op(v):
    return np.sum(np.sin(np.broadcast_to(v, (2, 3))) * np.arange(6.0).reshape(2, 3))


def squeeze_op(a):
    # an int, a negative int and a tuple of axes
    return np.sum(np.squeeze(a, axis=0) ** 3) + np.sum(np.sin(np.squeeze(a, -3))) + \
        np.sum(np.squeeze(a[:, :1], axis=(0, 1)) ** 2)


def expand_dims_op(v):
    return np.sum(np.expand_dims(v, -1) ** 3) + \
        np.sum(np.sin(np.expand_dims(v, (0, 2))) * np.arange(3.0).reshape(1, 3, 1))


# ---- permutations ----
def flip_op(a):
    w = np.arange(6.0).reshape(2, 3)
    return np.sum(np.flip(a) * w) + np.sum(np.flip(a, axis=1) ** 3) + \
        np.sum(np.sin(np.flip(a, (0, -1))) * w)


def flipud_op(a):
    return np.sum(np.flipud(a) * np.arange(6.0).reshape(2, 3)) + np.sum(np.flipud(a) ** 3)


def fliplr_op(a):
    return np.sum(np.fliplr(a) * np.arange(6.0).reshape(2, 3)) + np.sum(np.fliplr(a) ** 3)


def roll_op(a):
    w = np.arange(6.0).reshape(2, 3)
    return np.sum(np.roll(a, 2) * w) + np.sum(np.roll(a, -1, axis=1) * w) + \
        np.sum(np.roll(a, (1, 2), axis=(0, 1)) ** 3)


def rot90_op(a, c):
    return np.sum(np.rot90(a) * np.arange(6.0).reshape(3, 2)) + np.sum(np.rot90(a, 3) ** 3) \
        + np.sum(np.sin(np.rot90(c, 1, (0, 2))) * np.arange(24.0).reshape(4, 3, 2))


def moveaxis_op(c):
    return np.sum(np.sin(np.moveaxis(c, 0, -1)) * np.arange(24.0).reshape(3, 4, 2)) + \
        np.sum(np.moveaxis(c, (0, 1), (2, 0)) ** 3)


def swapaxes_op(c):
    return np.sum(np.sin(np.swapaxes(c, 0, 2)) * np.arange(24.0).reshape(4, 3, 2)) + \
        np.sum(c.swapaxes(1, -1) ** 3)


def rollaxis_op(c):
    return np.sum(np.sin(np.rollaxis(c, 2)) * np.arange(24.0).reshape(4, 2, 3)) + \
        np.sum(np.rollaxis(c, 0, 3) ** 3)


def transpose_op(c):
    # axes as a tuple, one by one to the method, as a tuple to the method, negative
    w = np.arange(24.0).reshape(3, 2, 4)
    return np.sum(np.sin(np.transpose(c, (1, 0, 2))) * w) + \
        np.sum(c.transpose(1, 0, 2) ** 3) + np.sum(np.sin(c.transpose((2, 0, 1)))) + \
        np.sum(np.transpose(c, (-1, 1, 0)) ** 3)


def transpose_list_op(c):
    return np.sum(np.sin(np.transpose(c, [2, 0, 1])) * np.arange(24.0).reshape(4, 2, 3))


# ---- copies ----
def repeat_op(a, v):
    # flattened, along an axis, counts one each
    return np.sum(np.sin(np.repeat(a, 2)) * np.arange(12.0)) + \
        np.sum(np.repeat(a, 3, axis=1) ** 3) + \
        np.sum(np.repeat(v, np.array([2, 0, 1])) ** 3) + \
        np.sum(np.sin(np.repeat(a, np.array([1, 3]), axis=0)))


def tile_op(a, v):
    return np.sum(np.sin(np.tile(v, 2)) * np.arange(6.0)) + np.sum(np.tile(a, (2, 1, 2)) ** 3)


# ---- splits: a list of pieces ----
def split_op(a):
    # sections, unpacked; indices along an axis, some pieces unused
    top, bottom = np.split(a, 2)
    parts = np.split(a, [1, 2], axis=1)
    return np.sum(np.sin(top) * 1.3) + np.sum(bottom ** 3) + np.sum(parts[2] ** 3)


def array_split_op(a):
    # unequal pieces (2, 1, 1 columns); as Python, also looped over
    first, second, third = np.array_split(a, 3, axis=1)
    return np.sum(np.sin(first) * 1.3) + np.sum(second ** 3) + np.sum(third * first[:, :1])


def array_split_loop(a):
    s = 0.0
    for piece in np.array_split(a, 3, axis=1):
        s = s + np.sum(np.sin(piece) * piece)
    return s


def hsplit_op(a, v):
    left, right = np.hsplit(a, [1])
    return np.sum(np.sin(left) * 1.3) + np.sum(right ** 3) + np.sum(np.hsplit(v, 3)[1] ** 3)


def vsplit_op(a):
    top, bottom = np.vsplit(a, 2)
    return np.sum(np.sin(top) * 1.3) + np.sum(bottom ** 3)


def dsplit_op(c):
    front, back = np.dsplit(c, [3])
    return np.sum(np.sin(front) * 1.3) + np.sum(back ** 3)


# ---- reshape and ravel ----
def reshape_op(a):
    # the method takes the shape's lengths one by one
    return np.sum(np.sin(a.reshape(2, 3, 2)[:, :, 0]) * 1.3) + \
        np.sum(np.reshape(a, (3, 4)) ** 3) + np.sum(np.ravel(a)[::5] ** 3)


def fortran_op(a):
    # Fortran order, as a keyword, positional, and a method's argument
    w = np.arange(12.0)
    return np.sum(np.reshape(a, (3, 4), "F") * w.reshape(3, 4)) + \
        np.sum(np.sin(a.reshape((2, 6), order="F")) * w.reshape(2, 6)) + \
        np.sum(np.ravel(a, order="F") ** 3 * w) + np.sum(a.ravel("F") * w)


def fortran_function_op(a):
    # the functions in an order as a constant (compiled: rules/shapes.py's forms), and
    # C order given, an int shape and a -1
    w = np.arange(12.0)
    return np.sum(np.reshape(a, (3, -1), "F") * w.reshape(3, 4)) + \
        np.sum(np.sin(np.reshape(a, 12, order="F")) * w) + \
        np.sum(np.ravel(a, order="F") ** 3 * w) + np.sum(np.ravel(a, "C") * w) + \
        np.sum(np.reshape(a, (2, 6), order="C") ** 2 * w.reshape(2, 6))


# ---- padding ----
def pad_op(a):
    # a width for all, per side, per axis and side; constants, edges, reflections
    return np.sum(np.sin(np.pad(a, 1)) * 1.3) + \
        np.sum(np.pad(a, ((1, 2), (0, 1)), constant_values=2.0) ** 3) + \
        np.sum(np.pad(a, (2, 1), mode="edge") ** 3) + \
        np.sum(np.sin(np.pad(a, ((3, 1), (2, 5)), mode="reflect")) * 1.7) + \
        np.sum(np.cos(np.pad(a, ((4, 1), (2, 7)), mode="symmetric")) * 0.3) + \
        np.sum(np.pad(a, ((2, 1), (1, 3)), mode="wrap") ** 3)


CASES = [
    ("hstack", (np.hstack,), hstack_op, (any_(2, 3), any_(2, 3), any_(3)), [0, 1, 2], True),
    ("vstack", (np.vstack,), vstack_op, (any_(2, 3), any_(3)), [0, 1], True),
    ("dstack", (np.dstack,), dstack_op, (any_(2, 3), any_(2, 3)), [0, 1], True),
    ("column_stack", (np.column_stack,), column_stack_op, (any_(3), any_(3, 2)), [0, 1], True),
    ("append", (np.append,), append_op, (any_(2, 3), any_(3)), [0, 1], True),
    ("list-displays", (np.concatenate, np.stack, np.hstack, np.vstack, np.dstack,
                       np.column_stack), list_display_op, (any_(2, 3), any_(3)), [0, 1], True),
    ("atleast", (np.atleast_1d, np.atleast_2d, np.atleast_3d), atleast_op,
     (any_(), any_(3)), [0, 1], True),
    ("broadcast_to", (np.broadcast_to,), broadcast_to_op, (any_(3),), [0], True),
    ("squeeze-axes", (np.squeeze,), squeeze_op, (any_(1, 2, 3),), [0], True),
    ("expand_dims-axes", (np.expand_dims,), expand_dims_op, (any_(3),), [0], True),
    ("reshape", (np.reshape, np.ravel), reshape_op, (any_(2, 6),), [0], True),
    # compiled, the methods take no order (numba types them itself)
    ("reshape-F", (np.reshape, np.ravel), fortran_op, (any_(4, 3),), [0], False),
    ("reshape-F-functions", (np.reshape, np.ravel), fortran_function_op, (any_(4, 3),), [0],
     True),
    ("flip", (np.flip,), flip_op, (any_(2, 3),), [0], True),
    ("flipud", (np.flipud,), flipud_op, (any_(2, 3),), [0], True),
    ("fliplr", (np.fliplr,), fliplr_op, (any_(2, 3),), [0], True),
    ("roll", (np.roll,), roll_op, (any_(2, 3),), [0], True),
    ("rot90", (np.rot90,), rot90_op, (any_(2, 3), any_(2, 3, 4)), [0, 1], True),
    ("moveaxis", (np.moveaxis,), moveaxis_op, (any_(2, 3, 4),), [0], True),
    ("swapaxes", (np.swapaxes,), swapaxes_op, (any_(2, 3, 4),), [0], True),
    ("rollaxis", (np.rollaxis,), rollaxis_op, (any_(2, 3, 4),), [0], True),
    ("transpose-axes", (np.transpose,), transpose_op, (any_(2, 3, 4),), [0], True),
    ("transpose-list", (np.transpose,), transpose_list_op, (any_(2, 3, 4),), [0], True),
    ("repeat", (np.repeat,), repeat_op, (any_(2, 3), any_(3)), [0, 1], True),
    ("tile", (np.tile,), tile_op, (any_(2, 3), any_(3)), [0, 1], True),
    ("split", (np.split,), split_op, (any_(4, 3),), [0], True),
    ("array_split", (np.array_split,), array_split_op, (any_(2, 4),), [0], True),
    ("hsplit", (np.hsplit,), hsplit_op, (any_(2, 3), any_(3)), [0, 1], True),
    ("vsplit", (np.vsplit,), vsplit_op, (any_(4, 3),), [0], True),
    ("dsplit", (np.dsplit,), dsplit_op, (any_(2, 2, 4),), [0], True),
    ("pad", (np.pad,), pad_op, (any_(2, 3),), [0], True),
    # compiled, the tape keeps one shape per value saved in a loop: not these pieces'
    ("array_split-loop", (np.array_split,), array_split_loop, (any_(2, 4),), [0], False),
]
if hasattr(np, "row_stack"):   # (vstack's deprecated alias; newer NumPy drops it)
    CASES.append(("row_stack", (np.row_stack,), row_stack_op, (any_(2, 3), any_(3)), [0, 1],
                  True))


@parametrize(CASES)
@pytest.mark.filterwarnings("ignore::DeprecationWarning")   # np.row_stack
def test_rule(case, jit):
    check(case, jit)


# ---- values by hand ----
def weighted(y, w):
    return np.sum(y * w)


def rolled(x, w):
    return np.sum(np.roll(x, 1) * w)


def padded_edges(x, w):
    return np.sum(np.pad(x, (2, 1), mode="edge") * w)


def reflected(x, w):
    return np.sum(np.pad(x, 2, mode="reflect") * w)


def mirrored(x, w):
    return np.sum(np.pad(x, 2, mode="symmetric") * w)


def wrapped(x, w):
    return np.sum(np.pad(x, 2, mode="wrap") * w)


def repeated(x, w):
    return np.sum(np.repeat(x, [2, 0, 1]) * w)


def repeated_rows(x, w):
    return np.sum(np.repeat(x, 2, axis=0) * w)


def tiled(x, w):
    return np.sum(np.tile(x, 2) * w)


def test_by_hand(jit):
    w = np.array([1.0, 10.0, 100.0, 1000.0])
    x = np.array([1.0, 2.0, 3.0])
    # y = (x2, x0, x1): entry i of x is y[i + 1], weighted w[i + 1]
    g = srcgrad.grad(rolled, jit=jit)(x, w[:3])
    np.testing.assert_allclose(g, [10.0, 100.0, 1.0])
    # y = (x0, x0, x0, x1, x2, x2): the edges collect their copies' weights
    w6 = np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0])
    np.testing.assert_allclose(srcgrad.grad(padded_edges, jit=jit)(x, w6), [7.0, 8.0, 48.0])
    # y = (x2, x1, x0, x1, x2, x1, x0): reflect about the ends (the ends not repeated)
    w7 = 2.0 ** np.arange(7.0)
    np.testing.assert_allclose(srcgrad.grad(reflected, jit=jit)(x, w7),
                               [4.0 + 64.0, 2.0 + 8.0 + 32.0, 1.0 + 16.0])
    # y = (x1, x0, x0, x1, x2, x2, x1): mirror about the ends (the ends repeated)
    np.testing.assert_allclose(srcgrad.grad(mirrored, jit=jit)(x, w7),
                               [2.0 + 4.0, 1.0 + 8.0 + 64.0, 16.0 + 32.0])
    # y = (x1, x2, x0, x1, x2, x0, x1): a period of 3
    np.testing.assert_allclose(srcgrad.grad(wrapped, jit=jit)(x, w7),
                               [4.0 + 32.0, 1.0 + 8.0 + 64.0, 2.0 + 16.0])
    # y = (x0, x0, x2): x1 is repeated no time
    np.testing.assert_allclose(srcgrad.grad(repeated, jit=jit)(x, w[:3]), [11.0, 0.0, 100.0])
    # rows (r0, r0, r1, r1)
    m = np.arange(4.0).reshape(2, 2)
    g = srcgrad.grad(repeated_rows, jit=jit)(m, np.arange(8.0).reshape(4, 2))
    np.testing.assert_allclose(g, [[0.0 + 2.0, 1.0 + 3.0], [4.0 + 6.0, 5.0 + 7.0]])
    # y = (x0, x1, x2, x0, x1, x2)
    np.testing.assert_allclose(srcgrad.grad(tiled, jit=jit)(x, w6), [9.0, 18.0, 36.0])


# ---- forward mode: each map is linear (affine, np.pad with constants) ----
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.filterwarnings("ignore::DeprecationWarning")   # np.row_stack
def test_jvp_against_differences(case):
    # as Python: the compiled tangents of these maps are the primals' numba forms
    _, _, fun, args, positions, _ = case
    rng = np.random.default_rng(4)
    tangents = tuple(rng.standard_normal(np.shape(args[k])) for k in positions)
    h = 1e-6

    def at(step):
        moved = list(args)
        for k, t in zip(positions, tangents, strict=True):
            moved[k] = args[k] + step * t
        return fun(*moved)
    jvp = srcgrad.jvp(fun, wrt=tuple(positions), jit=False)
    slope = jvp(*args, tangents)[1]
    assert slope == pytest.approx((at(h) - at(-h)) / (2 * h), rel=1e-6)


@pytest.mark.compiled
def test_jvp_compiled():
    # one compiled tangent of each kind of numba form: a join, a split, a copy, padding
    rng = np.random.default_rng(5)
    a, da = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    h = 1e-6
    for fun in (append_op, repeat_op, pad_op):
        v, dv = rng.standard_normal(3), rng.standard_normal(3)
        args = (a, v) if fun is not pad_op else (a,)
        ts = (da, dv) if fun is not pad_op else da
        wrt = (0, 1) if fun is not pad_op else 0
        slope = srcgrad.jvp(fun, wrt=wrt, jit=True)(*args, ts)[1]
        hi = fun(a + h * da, v + h * dv) if fun is not pad_op else fun(a + h * da)
        lo = fun(a - h * da, v - h * dv) if fun is not pad_op else fun(a - h * da)
        assert slope == pytest.approx((hi - lo) / (2 * h), rel=1e-6), fun.__name__


# ---- what is refused ----


def wrapped_wide(x):
    return np.sum(np.pad(x, (1, 5), mode="wrap") * np.arange(9.0))


def test_a_wide_wrap_differentiates_as_numpy_pads_it(jit):
    # NumPy < 2 pads otherwise than periodically where a pad is wider than its axis
    x = np.arange(3.0)
    if np.array_equal(np.pad(np.arange(2), (1, 5), "wrap"), [1, 0] * 4):
        assert_grad(wrapped_wide, srcgrad.grad(wrapped_wide, wrt=(0,), jit=jit)(x), (x,), [0])
    else:
        with pytest.raises(srcgrad.SrcgradError, match="wider than its axis"):
            srcgrad.grad(wrapped_wide, jit=jit)(x)


def padded_with(x, c):
    return np.sum(np.pad(x, 1, constant_values=c) ** 2)


def reshaped_in_any_order(a):
    return np.sum(np.reshape(a, (3, 2), "A") ** 2)


def test_an_order_from_the_memory_layout_is_refused():
    with pytest.raises(srcgrad.MissingRule, match="order 'C' or 'F'"):
        srcgrad.grad(reshaped_in_any_order, jit=False)(np.ones((2, 3)))


def test_fortran_order_by_hand(jit):
    # [[a, b], [c, d]] in Fortran order is [a, c, b, d]: weights 1, 2, 3, 4 land there
    def f(x):
        return np.sum(np.ravel(x, "F") * np.arange(1.0, 5.0)) + \
            np.sum(np.reshape(x, (1, 4), order="F") * np.arange(1.0, 5.0))
    g = srcgrad.grad(f, jit=jit)(np.zeros((2, 2)))
    np.testing.assert_array_equal(g, [[2.0, 6.0], [4.0, 8.0]])


@compiles
def test_an_order_from_the_memory_layout_compiled_is_a_clear_error():
    with pytest.raises(srcgrad.SrcgradError, match="order 'C' or 'F'"):
        srcgrad.grad(reshaped_in_any_order, jit=True)(np.ones((2, 3)))


def test_a_differentiated_keyword_argument_is_refused():
    # rules differentiate positional arguments: d/dc of np.pad(x, 1, constant_values=c)
    # would be dropped, so it is refused
    with pytest.raises(srcgrad.MissingRule, match="constant_values= receives"):
        srcgrad.grad(padded_with, wrt=(0, 1), jit=False)(np.ones(3), 2.0)
