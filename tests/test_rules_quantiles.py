"""np.median, np.quantile and np.percentile (srcgrad/rules/quantiles.py), and the
derivative in q of those and of np.nanquantile and np.nanpercentile: against central
differences (grad, jvp and hvp, compiled and as Python), by hand (and JAX's value at a
whole p), and what is refused (other methods). Entries are distinct: where two tie, the
function has no derivative; q is away from a whole p = q (n - 1), where y has a kink in q."""

import numpy as np
import pytest
from fd import assert_grad
from marks import compiles
from sweep import check_hvp, check_jvp, domains, parametrize

import srcgrad

any_, pos, unit, distinct = domains(43)


def median_all(x):
    return np.median(x) * np.sum(x)


def median_rows(x):
    return np.sum(np.sin(np.median(x, axis=1)))


def quantile_of_q(x, q):
    return np.sum(np.quantile(x, q, axis=0) ** 2)


def quantiles_listed(x):
    return np.sum(np.quantile(x, [0.1, 0.5, 0.95]) * np.array([1.0, 2.0, 3.0]))


def percentile_kept(x):
    return np.sum(np.percentile(x, 30.0, axis=-1, keepdims=True) * x)


def percentile_of_q(x, q):
    return np.percentile(x, q) ** 2


def median_axes(x):
    return np.sum(np.median(x, axis=(0, 2)) ** 2)


def quantiles_along(x, q):
    return np.sum(np.cos(np.quantile(x, q, axis=1)))


def percentiles_kept(x, q):
    return np.sum(np.percentile(x, q, axis=0, keepdims=True) ** 2)


def nanquantile_of_q(x, q):
    return np.nanquantile(x, q) ** 2


def nanquantiles_along(x, q):
    return np.sum(np.sin(np.nanquantile(x, q, axis=0)))


def nanpercentile_of_q(x, q):
    return np.nanpercentile(x, q, axis=-1)[1, 2] * 3.0


def quantile_at_own_q(x):
    # q read from x itself: a and q both vary in one call (its hvp meets every helper's
    # tangent: a's gradient along q, q's gradient along a)
    q = 0.2 + 0.5 / (1.0 + np.exp(-x[0]))
    return np.quantile(x, q) ** 2 + np.percentile(x, 100.0 * q) * x[1]


WITH_NAN = np.array([[0.3, np.nan, -1.2, 2.5, 0.9, 1.7],
                     [1.1, -0.4, 0.2, np.nan, np.nan, 3.3],
                     [np.nan, 2.2, -0.7, 0.1, 1.4, -2.6]])


CASES = [
    ("median", (np.median,), median_all, (distinct(7),), [0], True),
    ("median_even_rows", (np.median,), median_rows, (distinct(3, 4),), [0], True),
    ("quantile_q", (np.quantile,), quantile_of_q, (distinct(5, 3), 0.37), [0], True),
    ("quantiles_listed", (np.quantile,), quantiles_listed, (distinct(6),), [0], True),
    ("percentile_keepdims", (np.percentile,), percentile_kept, (distinct(2, 5),), [0], True),
    ("percentile_q", (np.percentile,), percentile_of_q, (distinct(9), 62.0), [0], True),
    ("median_tuple_axis", (np.median,), median_axes, (distinct(2, 3, 4),), [0], False),
    # q differentiated: a number, an array, with an axis, keepdims, and the nan forms
    # (n = 6, 3, 4 entries that are not NaN: p well inside its interval)
    ("quantile_q_and_a", (np.quantile,), quantile_of_q, (distinct(5, 3), 0.37), [0, 1], True),
    ("quantile_q_array_axis", (np.quantile,), quantiles_along,
     (distinct(3, 7), np.array([[0.12, 0.58], [0.9, 0.31]])), [0, 1], True),
    ("percentile_q_and_a", (np.percentile,), percentile_of_q, (distinct(9), 62.0), [0, 1],
     True),
    ("percentile_q_array_kept", (np.percentile,), percentiles_kept,
     (distinct(6, 2), np.array([14.0, 71.0, 93.0])), [0, 1], True),
    ("nanquantile_q", (np.nanquantile,), nanquantile_of_q, (WITH_NAN[0], 0.3), [1], True),
    ("nanquantile_q_array_axis", (np.nanquantile,), nanquantiles_along,
     (WITH_NAN.T.copy(), np.array([0.1, 0.45, 0.8])), [1], True),
    ("nanpercentile_q_axis", (np.nanpercentile,), nanpercentile_of_q,
     (WITH_NAN, np.array([22.0, 56.0])), [1], True),
    ("quantile_at_own_q", (np.quantile, np.percentile), quantile_at_own_q, (distinct(7),),
     [0], True),
]

HVP_CASES = [c for c in CASES if c[0] in ("quantile_q_and_a", "quantile_q_array_axis",
                                          "percentile_q_array_kept", "quantile_at_own_q")]


@parametrize(CASES)
def test_rule(case, jit):
    _, _, fun, args, positions, _ = case
    grads = srcgrad.grad(fun, wrt=tuple(positions), jit=jit)(*args)
    assert_grad(fun, grads, args, positions)


@parametrize(CASES)
def test_jvp_against_differences(case, jit):
    check_jvp(case, jit, 5)


def test_by_hand(jit):
    x = np.array([4.0, 1.0, 3.0, 2.0])   # sorted 1, 2, 3, 4: the median is (2 + 3) / 2
    g = srcgrad.grad(median_of, jit=jit)(x)
    np.testing.assert_allclose(g, [0.0, 0.0, 0.5, 0.5])
    # q = 0.4 of 4 entries reads p = 1.2: 0.8 * 2 + 0.2 * 3
    dx = srcgrad.grad(quantile_sum, jit=jit)(x, 0.4)
    np.testing.assert_allclose(dx, [0.0, 0.0, 0.2, 0.8], atol=1e-12)
    # columns: medians of (4, 3) and (1, 2): each entry gets a half
    m = np.array([[4.0, 1.0], [3.0, 2.0]])
    np.testing.assert_allclose(srcgrad.grad(column_medians, jit=jit)(m), np.full((2, 2), 0.5))


def median_of(x):
    return np.median(x)


def quantile_sum(x, q):
    return np.quantile(x, q)


def column_medians(m):
    return np.sum(np.median(m, axis=0))


def nearest(x):
    return np.quantile(x, 0.3, method="nearest")


def test_other_methods_are_refused():
    with pytest.raises(srcgrad.SrcgradError, match="method='linear'"):
        srcgrad.grad(nearest, jit=False)(np.arange(4.0))


def test_the_q_derivative_by_hand(jit):
    # sorted [1, 1.5, 3, 4, 9]: q = 0.3 reads p = 1.2, between 1.5 and 3: dy/dq = 1.5 * 4
    x = np.array([3.0, 1.0, 4.0, 1.5, 9.0])
    assert srcgrad.grad(quantile_sum, wrt=1, jit=jit)(x, 0.3) == pytest.approx(6.0)
    value, dy = srcgrad.jvp(quantile_sum, wrt=1, jit=jit)(x, 0.3, 0.5)
    assert (value, dy) == (pytest.approx(1.8), pytest.approx(3.0))
    # by name (q= is placed by position), and both arguments: a's as quantile_grad's
    da, dq = srcgrad.grad(quantile_named, wrt=(0, 1), jit=jit)(x, 0.3)
    np.testing.assert_allclose(da, [0.2, 0.0, 0.0, 0.8, 0.0], atol=1e-12)
    assert dq == pytest.approx(6.0)
    # an array q: p = 1.2 and 3.6 (between 4 and 9: 5 * 4 = 20), weighted 1 and 2
    got = srcgrad.grad(quantiles_weighted, wrt=1, jit=jit)(x, np.array([0.3, 0.9]))
    np.testing.assert_allclose(got, [6.0, 40.0])
    # percent: the slope over 100
    assert srcgrad.grad(percentile_sum, wrt=1, jit=jit)(x, 30.0) == pytest.approx(0.06)
    # columns (axis 0), sorted [1, 2, 3] and [5, 7, 9]: q = 0.75 reads p = 1.5, between
    # 2 and 3 (slope 1 * 2) and between 7 and 9 (slope 2 * 2): 2 + 4
    m = np.array([[3.0, 5.0], [1.0, 9.0], [2.0, 7.0]])
    assert srcgrad.grad(column_quantiles, wrt=1, jit=jit)(m, 0.75) == pytest.approx(6.0)
    # NaN left out: [3, 1, 4, 1.5, 9] again, n = 5
    with_nan = np.array([3.0, np.nan, 1.0, 4.0, np.nan, 1.5, 9.0])
    assert srcgrad.grad(nanquantile_sum, wrt=1, jit=jit)(with_nan, 0.3) == pytest.approx(6.0)
    assert srcgrad.grad(nanpercentile_sum, wrt=1, jit=jit)(with_nan, 30.0) == \
        pytest.approx(0.06)
    value, dy = srcgrad.jvp(nanquantile_sum, wrt=1, jit=jit)(with_nan, 0.3, 2.0)
    assert (value, dy) == (pytest.approx(1.8), pytest.approx(12.0))


def test_the_q_derivative_at_a_whole_p_is_jaxs(jit):
    """At p = q (n - 1) whole (q = 0, 0.25, 0.5, 0.75, 1 of 5 entries) y has a kink in q:
    dy/dq is 0 there, as jax.grad(lambda q: jnp.quantile(x, q)) gives (checked by hand
    with jax 0.4: 0.0 at each, 6.0 at q = 0.3), and a's gradient the whole dy on the
    entry sorted to floor(p) (jax: [0, 0, 0, 1, 0] at q = 0.25)."""
    x = np.array([3.0, 1.0, 4.0, 1.5, 9.0])
    for q in (0.0, 0.25, 0.5, 0.75, 1.0):
        da, dq = srcgrad.grad(quantile_sum, wrt=(0, 1), jit=jit)(x, q)
        assert dq == 0.0, q
        assert srcgrad.jvp(quantile_sum, wrt=1, jit=jit)(x, q, 1.0)[1] == 0.0, q
        np.testing.assert_array_equal(da, np.eye(5)[np.argsort(x, kind="stable")[int(q * 4)]])


def quantile_named(x, q):
    return np.quantile(x, q=q)


def quantiles_weighted(x, q):
    return np.sum(np.quantile(x, q) * np.array([1.0, 2.0]))


def percentile_sum(x, q):
    return np.percentile(x, q)


def column_quantiles(m, q):
    return np.sum(np.quantile(m, q, axis=0))


def nanquantile_sum(x, q):
    return np.nanquantile(x, q)


def nanpercentile_sum(x, q):
    return np.nanpercentile(x, q)


def method_named(x, m):
    return np.quantile(x, 0.3, method=m)


def method_by_position(x):
    return np.percentile(x, 30.0, None, None, False, "nearest")


def linear_by_position(x):
    return np.quantile(x, 0.3, None, None, False, "linear")


def test_a_method_given_as_a_variable_or_by_position_is_seen():
    """Regression: the method was read from constant keywords only, so method=m and a
    method given by position were differentiated as 'linear' (a wrong gradient)."""
    x = np.array([3.0, 1.0, 2.0, 5.0, 4.0])
    with pytest.raises(srcgrad.MissingRule, match="give them as constants"):
        srcgrad.grad(method_named, jit=False)(x, "nearest")
    with pytest.raises(srcgrad.MissingRule, match="method='linear'"):
        srcgrad.grad(method_by_position, jit=False)(x)
    # by hand: p = 0.3 * 4 = 1.2 reads 0.8 of sorted[1] (2.0) and 0.2 of sorted[2] (3.0)
    np.testing.assert_allclose(srcgrad.grad(linear_by_position, jit=False)(x),
                               [0.2, 0.0, 0.8, 0.0, 0.0])


@parametrize(HVP_CASES)
def test_hvp_against_differences(case, jit):
    check_hvp(case, jit)
    if len(case[4]) > 1:   # in q too
        check_hvp((*case[:4], case[4][1:], case[5]), jit)


def test_hvp_by_hand(jit):
    # the median's gradient g is constant between ties (1 at the middle entry of 5): the
    # Hessian of median(x) * sum(x) is g 1^T + 1 g^T
    x = distinct(5)
    v = np.random.default_rng(2).standard_normal(5)
    got = srcgrad.hvp(median_all, jit=jit)(x, v)
    g = np.eye(5)[np.argsort(x)[2]]
    np.testing.assert_allclose(got, g * np.sum(v) + np.dot(g, v), rtol=1e-10)


@pytest.mark.compiled
def test_compiled_values_are_numpys():
    """The numba forms of np.median, np.quantile and np.percentile along an axis give
    NumPy's values, bit for bit (a gradient's value is the primal's)."""
    from numba import njit

    import srcgrad.rules.quantiles  # noqa: F401  (the numba forms)
    x = distinct(5, 4)
    forms = [(lambda a: np.median(a, axis=0)), (lambda a: np.median(a, axis=1, keepdims=True)),
             (lambda a: np.quantile(a, 0.3, axis=1)),
             (lambda a: np.percentile(a, np.array([10.0, 75.0]), axis=0))]
    for form in forms:
        np.testing.assert_array_equal(njit(form)(x), form(x))


@compiles
@pytest.mark.compiled
def test_a_tuple_of_axes_compiled_is_a_clear_error():
    with pytest.raises(srcgrad.SrcgradError, match="as None or an int"):
        srcgrad.grad(median_axes, jit=True)(distinct(2, 3, 4))
