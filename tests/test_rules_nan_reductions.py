"""The nan reductions and np.ptp (srcgrad/rules/nan_reductions.py): against central
differences (grad, jvp and hvp, compiled and as Python, with an axis, keepdims and ddof),
by hand (all-NaN slices too), what is refused, and the numba forms along an axis against
NumPy's values."""

import warnings

import numpy as np
import pytest
from sweep import check, check_hvp, check_jvp, domains, parametrize

import srcgrad

any_, pos, unit, distinct = domains(47)


def nansum_all(x):
    return np.nansum(np.where(x > 0.0, x, np.nan) ** 2)


def nansum_rows(m):
    return np.sum(np.nansum(np.where(m > -1.0, m, np.nan), axis=1, keepdims=True) ** 2)


def nanmean_all(x):
    return np.nanmean(np.where(x > 0.0, x, np.nan) ** 2)


def nanmean_columns(m):
    return np.sum(np.sin(np.nanmean(np.where(m > -1.0, m, np.nan), axis=0)))


def ptp_all(x):
    return np.ptp(x) ** 2


def ptp_rows(m):
    return np.sum(np.ptp(m, axis=1, keepdims=True) * m)


def nan_of(x, c=-1.0):
    return np.where(x > c, x, np.nan)


def nanmax_rows(m):
    return np.sum(np.nanmax(nan_of(m, -1.5), axis=1) * np.arange(1.0, 4.0))


def nanmin_all(x):
    return np.nanmin(nan_of(x)) ** 2


def nanprod_columns(m):
    return np.sum(np.nanprod(nan_of(m, -1.5), axis=0, keepdims=True) * m)


def nanprod_all(x):
    return np.nanprod(nan_of(x))


def nanvar_rows(m):
    return np.sum(np.nanvar(nan_of(m, -1.5), axis=1, ddof=1) ** 2)


def nanstd_all(x):
    return np.nanstd(nan_of(x), keepdims=True)[0] * 3.0


def nanmedian_rows(m):
    return np.sum(np.sin(np.nanmedian(nan_of(m, -1.5), axis=1)))


def nanquantiles(x):
    return np.sum(np.nanquantile(nan_of(x), [0.2, 0.5, 0.9]) * np.array([1.0, 2.0, 3.0]))


def nanpercentile_kept(m):
    return np.sum(np.nanpercentile(nan_of(m, -1.5), 30.0, axis=0, keepdims=True) * m)


def nancumsum_rows(m):
    return np.sum(np.nancumsum(nan_of(m, -1.5), axis=1) ** 2)


def nancumprod_columns(m):
    return np.sum(np.nancumprod(nan_of(m, -1.5), axis=0) * m)


def nancumprod_all(x):
    return np.sum(np.nancumprod(nan_of(x)) ** 2)


def nan_mixed(m):
    a = nan_of(m, -3.0)
    return np.sum(np.nanmax(a, axis=1) * np.arange(1.0, 4.0)) + np.nanmin(a) ** 2 + \
        np.sum(np.nanprod(a, axis=0, keepdims=True) * m) + \
        np.sum(np.nanstd(a, axis=0, keepdims=True)) + np.sum(np.nancumsum(a, axis=1) ** 2) + \
        np.sum(np.nanvar(a, axis=1, ddof=1)) + np.sum(np.nancumprod(a, axis=0) * m)


def nan_order_statistics(m):
    a = nan_of(m, -3.0)
    return np.sum(np.sin(np.nanmedian(a, axis=1))) + \
        np.sum(np.nanquantile(a, [0.2, 0.7], axis=0) ** 2) + \
        np.sum(np.nanpercentile(a, 30.0, axis=1, keepdims=True) * m)


CASES = [
    # compiled: one case for several, each run alone as Python below
    ("nan_mixed", (np.nanmax, np.nanmin, np.nanprod, np.nanstd, np.nancumsum, np.nanvar,
                   np.nancumprod), nan_mixed, (distinct(3, 5),), [0], True),
    ("nan_order_statistics", (np.nanmedian, np.nanquantile, np.nanpercentile),
     nan_order_statistics, (distinct(3, 6),), [0], True),
    ("nanmax_axis", (np.nanmax,), nanmax_rows, (distinct(3, 5),), [0], False),
    ("nanmin", (np.nanmin,), nanmin_all, (distinct(7),), [0], False),
    ("nanprod_axis", (np.nanprod, ), nanprod_columns, (any_(4, 3),), [0], False),
    ("nanprod", (np.nanprod,), nanprod_all, (any_(6),), [0], False),
    ("nanvar_axis_ddof", (np.nanvar,), nanvar_rows, (any_(3, 5),), [0], False),
    ("nanstd_keepdims", (np.nanstd,), nanstd_all, (any_(7),), [0], False),
    ("nanmedian_axis", (np.nanmedian,), nanmedian_rows, (distinct(3, 6),), [0], False),
    ("nanquantile", (np.nanquantile,), nanquantiles, (distinct(9),), [0], False),
    ("nanpercentile_keepdims", (np.nanpercentile,), nanpercentile_kept, (distinct(5, 3),),
     [0], False),
    ("nancumsum_axis", (np.nancumsum,), nancumsum_rows, (any_(3, 4),), [0], False),
    ("nancumprod_axis", (np.nancumprod,), nancumprod_columns, (any_(4, 3),), [0], False),
    ("nancumprod", (np.nancumprod,), nancumprod_all, (any_(6),), [0], False),
    ("nansum", (np.nansum,), nansum_all, (any_(7),), [0], True),
    ("nansum_axis", (np.nansum,), nansum_rows, (any_(3, 4),), [0], True),
    ("nanmean", (np.nanmean,), nanmean_all, (any_(7),), [0], True),
    ("nanmean_axis", (np.nanmean,), nanmean_columns, (any_(5, 3),), [0], True),
    ("ptp", (np.ptp,), ptp_all, (distinct(6),), [0], True),
    ("ptp_axis", (np.ptp,), ptp_rows, (distinct(3, 4),), [0], True),
]


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


@parametrize(CASES)
def test_jvp_against_differences(case, jit):
    check_jvp(case, jit, 3)


# (second order compiled once: the grad and jvp runs compile every numba form, and each
# compiled hvp of a case costs a minute of CPU)
@parametrize([c if c[0] == "nansum_axis" else c[:5] + (False,) for c in CASES])
def test_hvp_against_differences_of_the_gradient(case, jit):
    check_hvp(case, jit)


def nanmean_plain(x):
    return np.nanmean(x)


def ptp_plain(x):
    return np.ptp(x)


def test_by_hand(jit):
    x = np.array([1.0, -2.0, 3.0, 0.5])
    # the squares of 1, 3 and 0.5 (the rest are NaN): 2 x where x > 0
    np.testing.assert_allclose(srcgrad.grad(nansum_all, jit=jit)(x), [2.0, 0.0, 6.0, 1.0])
    # NaN entries get no gradient; the other three 1/3 each
    y = np.array([1.0, np.nan, 3.0, 0.5])
    np.testing.assert_allclose(srcgrad.grad(nanmean_plain, jit=jit)(y),
                               [1 / 3, 0.0, 1 / 3, 1 / 3])
    # max 3 at 2, min -2 at 1
    np.testing.assert_allclose(srcgrad.grad(ptp_plain, jit=jit)(x), [0.0, -1.0, 1.0, 0.0])


@pytest.mark.compiled
def test_compiled_values_are_numpys():
    from numba import njit

    import srcgrad.rules.nan_reductions  # noqa: F401  (the numba forms)
    m = any_(4, 3)
    m[1, 2] = np.nan
    m[2, :] = np.nan   # an all-NaN row: NaN where NumPy gives NaN

    def forms(a):   # (one function: one compile)
        return (np.nansum(a, axis=0), np.nansum(a, axis=1, keepdims=True),
                np.nanmean(a, axis=1), np.nanmean(a, axis=0, keepdims=True),
                np.ptp(np.nan_to_num(a), axis=1), np.ptp(a, keepdims=True),
                np.nanmax(a, axis=1), np.nanmin(a, axis=1, keepdims=True),
                np.nanprod(a, axis=1), np.nanvar(a, axis=1, ddof=1), np.nanstd(a, ddof=1),
                np.nanstd(a, axis=1, keepdims=True), np.nanmedian(a, axis=1),
                np.nanquantile(a, 0.3, axis=1, keepdims=True),
                np.nanpercentile(a, np.array([10.0, 80.0]), axis=0),
                np.nancumsum(a, axis=1), np.nancumprod(a, axis=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for got, want in zip(njit(forms)(m), forms(m), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-14)


def nan_rows(m):
    return np.sum(np.nan_to_num(np.nanmax(m, axis=1)) + np.nanprod(m, axis=1) +
                  np.nan_to_num(np.nanvar(m, axis=1)) + np.nan_to_num(np.nanmedian(m, axis=1)))


def nanmax_ties(x):
    return np.nanmin(x) + np.nanquantile(x, 0.25)


def nancumprod_zero(x):
    return np.sum(np.nancumprod(x) + np.nancumsum(x) * 2.0)


def test_by_hand_all_nan_slices(jit):
    m = np.array([[1.0, np.nan, 3.0, 0.5], [np.nan] * 4])
    # row 0: max 3 (at 2); prod 1.5 (others: 1.5, 0.5, 3); var of (1, 3, 0.5):
    # 2 (x - 1.5) / 3; median 1 (at 0). Row 1, all NaN: 0 everywhere
    want = np.zeros((2, 4))
    want[0] = [0.0, 0.0, 1.0, 0.0] + np.array([1.5, 0.0, 0.5, 3.0]) + \
        np.array([-1.0, 0.0, 3.0, -2.0]) / 3.0 + np.array([1.0, 0.0, 0.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_allclose(srcgrad.grad(nan_rows, jit=jit)(m), want, atol=1e-12)


def test_by_hand_ties_and_zeros():
    # tied minima split dy; the 0.25-quantile of (2, 1, 1, 4) reads sorted place 0.75
    # between the tied 1s (1/4 to the first, 3/4 to the second, by the stable order)
    x = np.array([2.0, 1.0, np.nan, 1.0, 4.0])
    np.testing.assert_allclose(srcgrad.grad(nanmax_ties, jit=False)(x),
                               [0.0, 0.5 + 0.25, 0.0, 0.5 + 0.75, 0.0])
    # a zero: the products (2, 0, 0, 0) of (2, 0, 1, 3), the NaN made 1: slopes 1 (z0),
    # 2 + 2 + 2 * 3 (z1), 0 (z3), plus twice the cumulative sum's 4, 3, 1 (0 at the NaN)
    z = np.array([2.0, 0.0, np.nan, 3.0])
    np.testing.assert_allclose(srcgrad.grad(nancumprod_zero, jit=False)(z),
                               [1.0 + 8.0, 10.0 + 6.0, 0.0, 0.0 + 2.0])


def nanquantile_nearest(x):
    return np.nanquantile(x, 0.3, method="nearest")


def nanpercentile_of_q(x, q):
    return np.nanpercentile(x, q)


def test_other_methods_are_refused_and_q_is_differentiated():
    x = distinct(6)
    with pytest.raises(srcgrad.SrcgradError, match="only method='linear'"):
        srcgrad.grad(nanquantile_nearest, jit=False)(x)
    # q differentiated (tests/test_rules_quantiles.py has the sweep): against differences,
    # 5 entries not NaN: p = 0.43 * 4 = 1.72, away from a whole p
    x[1] = np.nan
    h = 1e-6
    want = (nanpercentile_of_q(x, 43.0 + h) - nanpercentile_of_q(x, 43.0 - h)) / (2 * h)
    assert srcgrad.grad(nanpercentile_of_q, wrt=1, jit=False)(x, 43.0) == \
        pytest.approx(want, rel=1e-6)
