"""The rule sweep's parts, shared by tests/test_rules.py and the rule families that have
test modules of their own (tests/test_rules_<family>.py, each with a `CASES` list).

A case is (id, primals covered, function, arguments, positions to differentiate, and
whether to run it compiled too). `test_rules.test_every_rule_has_a_case` reads the
`CASES` of every family module, so a rule registered without a case fails there.
"""

import glob
import importlib
import os

import numpy as np
import pytest
from fd import assert_grad, slope
from marks import needs_numba_060

import srcgrad


def domains(seed):
    """Argument makers drawing from one generator: `any_(*shape)` in [-2, 2], `pos` in
    [0.5, 2], `unit` in [-0.8, 0.8], and `distinct` (no ties: max, min, sort and clip are
    not differentiable at ties). No shape gives a float."""
    rng = np.random.default_rng(seed)

    def uniform(lo, hi):
        return lambda *shape: rng.uniform(lo, hi, shape) if shape else float(rng.uniform(lo, hi))

    def distinct(*shape):
        n = int(np.prod(shape)) if shape else 1
        v = rng.permutation(n) * 0.37 - 0.3 * n + rng.uniform(0, 0.1)
        return v.reshape(shape) if shape else float(v[0])

    return uniform(-2.0, 2.0), uniform(0.5, 2.0), uniform(-0.8, 0.8), distinct


# ---- function templates: one source each, the operation comes from the closure ----
def unary(op):
    def f(x):
        return np.sum(op(x) * 1.3)
    return f


def binary(op):
    def f(a, b):
        return np.sum(op(a, b) * 1.3)
    return f


def scalar_unary(op):
    def f(x):
        return op(x) * 1.3
    return f


def scalar_binary(op):
    def f(a, b):
        return op(a, b) * 1.3
    return f


def parametrize(cases):
    """The sweep over `cases`: each case as Python, and compiled where it says so. A
    case's two runs differ in their ids only by `numba`/`python` (tests/conftest.py
    shares them out by that)."""
    numbered = [(i, case, jit) for i, case in enumerate(cases)
                for jit in (True, False) if case[5] or not jit]
    return pytest.mark.parametrize(
        "case,jit", [(case, jit) for _, case, jit in numbered],
        ids=[f"{c[0]}-{'numba' if j else 'python'}-{i}" for i, c, j in numbered])


# cases whose compiled run needs numba >= 0.60: what numba 0.59 (the oldest env) lacks
OLDER_NUMBA_LACKS = {"nan_to_num": "np.nan_to_num with keywords",
                     "moveaxis": "np.moveaxis with tuples of axes",
                     "vstack": "np.vstack of vectors among matrices",
                     "row_stack": "np.vstack of vectors among matrices",
                     "unwrap": "np.unwrap",
                     "take": "np.take with axis="}


def check(case, jit):
    """The case's gradient against central differences."""
    if case[0] in OLDER_NUMBA_LACKS:
        needs_numba_060(jit, OLDER_NUMBA_LACKS[case[0]])
    _, _, fun, args, positions, _ = case
    g = srcgrad.grad(fun, wrt=tuple(positions), jit=jit)
    assert_grad(fun, g(*args), args, positions)


def check_jvp(case, jit, seed=5):
    """The case's jvp against central differences, along random tangents of the
    differentiated arguments (0.7 for a number), and its value against the function's."""
    _, _, fun, args, positions, _ = case
    rng = np.random.default_rng(seed)
    tangents = [(rng.standard_normal(np.shape(a)) if np.ndim(a) else 0.7)
                if k in positions else 0.0 * np.asarray(a) for k, a in enumerate(args)]
    value, got = srcgrad.jvp(fun, wrt=tuple(positions), jit=jit)(
        *args, tuple(tangents[k] for k in positions))
    assert value == pytest.approx(fun(*args), rel=1e-12)
    assert got == pytest.approx(slope(fun, args, tangents), rel=1e-6, abs=1e-8)


def check_hvp(case, jit, seed=5):
    """The case's hvp in its first differentiated argument against central differences
    of its gradient (itself checked against differences of the function)."""
    _, _, fun, args, positions, _ = case
    k = positions[0]
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(np.shape(args[k])) if np.ndim(args[k]) else 0.7
    got = srcgrad.hvp(fun, wrt=k, jit=jit)(*args, v)
    grad, h = srcgrad.grad(fun, wrt=k, jit=False), 1e-5
    moved = [[a + s * h * v if i == k else a for i, a in enumerate(args)] for s in (1, -1)]
    want = (grad(*moved[0]) - grad(*moved[1])) / (2 * h)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def family_cases():
    """The cases of every family module (tests/test_rules_*.py)."""
    out = []
    here = os.path.dirname(os.path.abspath(__file__))
    for path in sorted(glob.glob(os.path.join(here, "test_rules_*.py"))):
        out += importlib.import_module(os.path.basename(path)[:-3]).CASES
    return out


def check_refused_first_argument(fun, words, jit, x):
    """`fun(a, x)` differentiated in `a`, an argument its rule gives no gradient (the
    record's `no_gradient`): refused where srcgrad compiles, naming the caller's line, in
    reverse and forward mode; in x it is differentiated (a an int)."""
    with pytest.raises(srcgrad.MissingRule, match=words) as info:
        srcgrad.grad(fun, wrt=0, jit=jit)(2.0, x)
    assert f"{os.path.basename(fun.__code__.co_filename)}:" in str(info.value)
    assert "srcgrad.stop_gradient" in str(info.value)
    with pytest.raises(srcgrad.MissingRule, match=words):
        srcgrad.jvp(fun, wrt=0, jit=jit)(2.0, x, 1.0)
    assert np.all(np.isfinite(srcgrad.grad(fun, wrt=1, jit=False)(2, x)))
