"""np.median, np.quantile and np.percentile (srcgrad/rules/quantiles.py): against central
differences (grad, jvp and hvp, compiled and as Python), by hand, and what is refused (a q
being differentiated, other methods). Entries are distinct: where two tie, the function
has no derivative."""

import numpy as np
import pytest
from fd import assert_grad
from marks import compiles
from sweep import check_jvp, domains, parametrize

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


CASES = [
    ("median", (np.median,), median_all, (distinct(7),), [0], True),
    ("median_even_rows", (np.median,), median_rows, (distinct(3, 4),), [0], True),
    ("quantile_q", (np.quantile,), quantile_of_q, (distinct(5, 3), 0.37), [0], True),
    ("quantiles_listed", (np.quantile,), quantiles_listed, (distinct(6),), [0], True),
    ("percentile_keepdims", (np.percentile,), percentile_kept, (distinct(2, 5),), [0], True),
    ("percentile_q", (np.percentile,), percentile_of_q, (distinct(9), 62.0), [0], True),
    ("median_tuple_axis", (np.median,), median_axes, (distinct(2, 3, 4),), [0], False),
]


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


def test_other_methods_and_a_differentiated_q_are_refused():
    with pytest.raises(srcgrad.SrcgradError, match="method='linear'"):
        srcgrad.grad(nearest, jit=False)(np.arange(4.0))
    with pytest.raises(srcgrad.MissingRule, match="q= receives a value being differentiated"):
        srcgrad.grad(quantile_sum, wrt=1, jit=False)(np.arange(4.0), 0.4)


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
