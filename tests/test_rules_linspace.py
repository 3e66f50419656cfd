"""np.linspace of differentiated ends (srcgrad/rules/spacing.py): against central
differences (grad and jvp, compiled and as Python; with and without the endpoint, array
ends, a single point), by hand, and what is refused (retstep, dtype, another axis)."""

import numpy as np
import pytest
from sweep import check, check_hvp, check_jvp, parametrize

import srcgrad


def ends(a, b):
    return np.sum(np.sin(np.linspace(a, b, 7)) * np.arange(7.0))


def open_end(a, b):
    return np.sum(np.linspace(a, b, 5, endpoint=False) ** 2)


def array_ends(a, b):
    return np.sum(np.linspace(a, b, 4) ** 3)


def one_point(a, b):
    return np.sum(np.linspace(a, b, 1) * 3.0)


def time_grid(T):
    t = np.linspace(0.0, T, 11)
    return np.sum(np.exp(-t) * t)


CASES = [
    ("linspace", (np.linspace,), ends, (0.3, 2.0), [0, 1], True),
    ("linspace_open", (np.linspace,), open_end, (0.3, 2.0), [0, 1], True),
    ("linspace_arrays", (np.linspace,), array_ends,
     (np.array([0.1, -1.0]), np.array([2.0, 0.5])), [0, 1], True),
    ("linspace_one", (np.linspace,), one_point, (0.3, 2.0), [0, 1], True),
]


@parametrize(CASES)
def test_rule(case, jit):
    check(case, jit)


@parametrize(CASES)
def test_jvp_against_differences(case, jit):
    check_jvp(case, jit, 9)


@parametrize(CASES)
def test_hvp_against_differences_of_the_gradient(case, jit):
    check_hvp(case, jit)


def test_by_hand(jit):
    # t_i = i T / 10: d/dT sum(exp(-t) t) = sum (i / 10) exp(-t_i) (1 - t_i)
    T = 2.0
    t = np.arange(11) * T / 10
    want = np.sum(np.arange(11) / 10 * np.exp(-t) * (1 - t))
    assert srcgrad.grad(time_grid, jit=jit)(T) == pytest.approx(want, rel=1e-12)
    # a single point is start: 3 to start, none to stop
    assert srcgrad.grad(one_point, wrt=(0, 1), jit=jit)(0.3, 2.0) == (pytest.approx(3.0),
                                                                      pytest.approx(0.0))


def with_step(a, b):
    return np.linspace(a, b, 4, retstep=True)[1]


def as_float32(a, b):
    return np.sum(np.linspace(a, b, 4, dtype=np.float32))


def along_axis_one(a, b):
    return np.sum(np.linspace(a, b, 3, axis=1) ** 2)


@pytest.mark.parametrize("fun,args,message", [
    (with_step, (0.3, 2.0), "retstep=True"),
    (as_float32, (0.3, 2.0), "dtype= is not differentiated"),
    (along_axis_one, (np.zeros(2), np.ones(2)), "only axis=0"),
], ids=["retstep", "dtype", "axis"])
def test_refused(fun, args, message):
    with pytest.raises(srcgrad.MissingRule, match=message):
        srcgrad.grad(fun, jit=False)(*args)
