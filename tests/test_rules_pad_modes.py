"""np.pad in the modes that compute their padding (srcgrad/rules/copies.py): odd
reflections, the statistics 'mean', 'maximum' and 'minimum' (with stat_length), and
'linear_ramp' (with end_values), 'median'. Their gradients and tangents against central differences,
compiled and as Python, in one and two dimensions (the compiled jvp's value is np.pad's
numba form, checked against np.pad); values by hand; and what stays refused.
"""

import numpy as np
import pytest
from fd import assert_grad
from sweep import check, check_hvp, check_jvp, domains, parametrize

import srcgrad

any_, pos, unit, distinct = domains(31)


# ---- the sweep: every mode in one function, in two dimensions and in one (one compile) ----
def pad_modes_op(a, v):
    # later axes' statistics and ramps read the earlier axes padded (as np.pad pads)
    return np.sum(np.sin(np.pad(a, ((3, 1), (2, 5)), mode="reflect", reflect_type="odd"))) + \
        np.sum(np.cos(np.pad(a, ((4, 1), (2, 7)), mode="symmetric", reflect_type="odd"))) + \
        np.sum(np.sin(np.pad(a, ((1, 2), (2, 1)), mode="mean", stat_length=((1, 2), (2, 3))))) + \
        np.sum(np.sin(np.pad(a, 2, mode="maximum")) * 1.2) + \
        np.sum(np.sin(np.pad(a, (1, 2), mode="minimum", stat_length=2)) * 1.3) + \
        np.sum(np.sin(np.pad(a, ((2, 1), (1, 3)), mode="linear_ramp",
                             end_values=((1.0, 2.0), (0.5, -1.0)))) * 1.4) + \
        np.sum(np.pad(a[:1], 2, mode="reflect", reflect_type="odd") ** 3) + \
        np.sum(np.sin(np.pad(a, ((2, 1), (1, 2)), mode="median",
                             stat_length=((2, 3), (4, 2)))) * 0.9) + \
        np.sum(np.sin(np.pad(v, (2, 3), mode="reflect", reflect_type="odd"))) + \
        np.sum(np.sin(np.pad(v, 4, mode="symmetric", reflect_type="odd")) * 0.7) + \
        np.sum(np.sin(np.pad(v, (3, 1), mode="mean")) * 1.1) + \
        np.sum(np.sin(np.pad(v, (2, 1), mode="maximum", stat_length=(2, 3))) * 1.2) + \
        np.sum(np.sin(np.pad(v, 1, mode="minimum")) * 1.3) + \
        np.sum(np.sin(np.pad(v, (3, 2), mode="linear_ramp", end_values=(0.5, -2.0))) * 1.4) + \
        np.sum(np.sin(np.pad(v, 2, mode="median")) * 0.8) + \
        np.sum(np.sin(np.pad(v, (1, 2), mode="median", stat_length=(2, 4))) * 0.6)


CASES = [
    # distinct values: a maximum or minimum is not differentiable at a tie
    ("pad-modes", (np.pad,), pad_modes_op, (distinct(3, 4), distinct(5)), [0, 1], True),
]


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


@parametrize(CASES)
def test_jvp(case, jit):
    check_jvp(case, jit)


def test_hvp():
    # the gradient is linear in dy and, away from ties, constant in the selection
    check_hvp(CASES[0], False)
    _, primals, fun, (a, v), _, jit = CASES[0]
    check_hvp(("pad-modes-1d", primals, fun, (a, v), [1], jit), False)


# ---- values by hand ----
def odd_reflected(x, w):
    return np.sum(np.pad(x, 2, mode="reflect", reflect_type="odd") * w)


def odd_mirrored(x, w):
    return np.sum(np.pad(x, 2, mode="symmetric", reflect_type="odd") * w)


def mean_padded(x):
    return np.sum(np.pad(x, 1, mode="mean"))


def mean_of_two(x, w):
    return np.sum(np.pad(x, (1, 2), mode="mean", stat_length=2) * w)


def mean_of_rounded(x, w):
    return np.sum(np.pad(x, (1, 2), mode="mean", stat_length=1.6) * w)


def maximum_padded(x, w):
    return np.sum(np.pad(x, 1, mode="maximum") * w)


def minimum_of_two(x, w):
    return np.sum(np.pad(x, 1, mode="minimum", stat_length=2) * w)


def median_padded(x, w):
    return np.sum(np.pad(x, 1, mode="median") * w)


def median_of_two(x, w):
    return np.sum(np.pad(x, 1, mode="median", stat_length=2) * w)


def ramped(x, w):
    return np.sum(np.pad(x, (2, 3), mode="linear_ramp", end_values=(5.0, -1.0)) * w)


def test_by_hand():
    x = np.array([1.0, 2.0, 3.0])
    w = 2.0 ** np.arange(8.0)
    # y = (2 x0 - x2, 2 x0 - x1, x0, x1, x2, 2 x2 - x1, 2 x2 - x0) = (-1, 0, 1, 2, 3, 4, 5)
    assert np.pad(x, 2, "reflect", reflect_type="odd").tolist() == [-1, 0, 1, 2, 3, 4, 5]
    g = srcgrad.grad(odd_reflected, jit=False)(x, w[:7])
    np.testing.assert_allclose(g, [2 + 4 + 4 - 64, -2 + 8 - 32, -1 + 16 + 64 + 128])
    # y = (2 x0 - x1, x0, x0, x1, x2, x2, 2 x2 - x1)
    g = srcgrad.grad(odd_mirrored, jit=False)(x, w[:7])
    np.testing.assert_allclose(g, [2 + 2 + 4, -1 + 8 - 64, 16 + 32 + 128])
    # y = (m, x0, x1, x2, m), m the mean of x: each entry gets 1 + 2/3
    np.testing.assert_allclose(srcgrad.grad(mean_padded, jit=False)(x), [5 / 3] * 3)
    # y = ((x0 + x1) / 2, x0, x1, x2, (x1 + x2) / 2, (x1 + x2) / 2)
    g = srcgrad.grad(mean_of_two, jit=False)(x, w[:6])
    np.testing.assert_allclose(g, [0.5 + 2, 0.5 + 4 + 8 + 16, 8 + 8 + 16])
    # y = (3, 1, 3, 3, 3): the maximum is tied between x1 and x2, which split its weights
    t = np.array([1.0, 3.0, 3.0])
    g = srcgrad.grad(maximum_padded, jit=False)(t, w[:5])
    np.testing.assert_allclose(g, [2, 4 + 17 / 2, 8 + 17 / 2])
    # y = (min(x0, x1), x0, x1, x2, min(x1, x2)) = (1, 1, 3, 2, 2)
    g = srcgrad.grad(minimum_of_two, jit=False)(np.array([1.0, 3.0, 2.0]), w[:5])
    np.testing.assert_allclose(g, [1 + 2, 4, 8 + 16])
    # a stat_length of 1.6 is 2, as NumPy rounds it
    g = srcgrad.grad(mean_of_rounded, jit=False)(x, w[:6])
    np.testing.assert_allclose(g, [0.5 + 2, 0.5 + 4 + 8 + 16, 8 + 8 + 16])
    # y = (x2, x0, x1, x2, x2) = (2, 3, 1, 2, 2): the median is x2
    g = srcgrad.grad(median_padded, jit=False)(np.array([3.0, 1.0, 2.0]), w[:5])
    np.testing.assert_allclose(g, [2, 4, 8 + 1 + 16])
    # y = ((x0 + x1) / 2, x0, x1, x2, (x1 + x2) / 2): two middle entries share
    g = srcgrad.grad(median_of_two, jit=False)(np.array([3.0, 1.0, 2.0]), w[:5])
    np.testing.assert_allclose(g, [0.5 + 2, 0.5 + 4 + 8, 8 + 8])
    # y = (5, 5 + (x0 - 5) / 2, x0, x1, x2, -1 + 2 (x2 + 1) / 3, -1 + (x2 + 1) / 3, -1)
    assert np.pad(x, (2, 3), "linear_ramp", end_values=(5.0, -1.0)).tolist() == \
        pytest.approx([5, 3, 1, 2, 3, 5 / 3, 1 / 3, -1])
    g = srcgrad.grad(ramped, jit=False)(x, w)
    np.testing.assert_allclose(g, [2 / 2 + 4, 8, 16 + 32 * 2 / 3 + 64 / 3])


def test_tangent_by_hand():
    # the tangent of the maximum's padding is the tangent of the entry that attains it
    # (the mean of the tied ones' tangents)
    f = srcgrad.jvp(maximum_padded, jit=False)
    _, t = f(np.array([1.0, 3.0, 3.0]), np.ones(5), np.array([1.0, 10.0, 30.0]))
    assert t == pytest.approx(20 + 1 + 10 + 30 + 20)


def maximum_in_a_loop(x):
    # x changes after each padding: the adjoint reads each x the padding read
    s = 0.0
    for i in range(3):
        s = s + np.sum(np.pad(x, (1, 2), mode="maximum", stat_length=2) * np.arange(6.0))
        x = x[::-1] * 1.5 + 0.25 * i
    return s


def test_the_statistics_read_the_values_padded():
    x = np.array([0.3, -1.2, 2.0, 0.9])[:3]
    g = srcgrad.grad(maximum_in_a_loop, wrt=(0,), jit=False)(x)
    assert_grad(maximum_in_a_loop, g, (x,), [0])


# ---- what is refused ----
def empty_padded(x):
    return np.sum(np.pad(x, 1, mode="empty") ** 2)


def odder_reflection(x):
    return np.sum(np.pad(x, 1, mode="reflect", reflect_type="other") ** 2)


def ramp_to(x, e):
    return np.sum(np.pad(x, 2, mode="linear_ramp", end_values=e) ** 2)


def test_what_is_refused():
    x = np.arange(3.0)
    for fun in (empty_padded, odder_reflection):
        with pytest.raises(srcgrad.SrcgradError, match="np.pad has a gradient rule"):
            srcgrad.grad(fun, jit=False)(x)
    # end values receive no gradient: a differentiated one is refused, not dropped
    with pytest.raises(srcgrad.MissingRule, match="end_values= receives"):
        srcgrad.grad(ramp_to, wrt=(0, 1), jit=False)(x, 2.0)
    assert srcgrad.grad(ramp_to, jit=False)(x, 2.0).shape == (3,)
