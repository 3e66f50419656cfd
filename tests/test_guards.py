"""Guards and side statements (issue 21): `assert`, `raise` under an `if`, `print`,
`warnings.warn` and logging calls run in the forward code once per primal execution,
read values, contribute no derivative, and have no copy in the adjoint."""

import inspect
import logging
import warnings

import numpy as np
import pytest
from marks import compiles

import srcgrad

LOG = logging.getLogger("srcgrad.tests.guards")
X = np.array([1.0, -2.0, 3.0])


def asserted(x):
    s = np.sum(x * x)
    assert s < 100.0, "sum too large"
    return s


def raised(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
        if s > 100.0:
            raise ValueError("partial sum too large")
    return s


def formatted(x):
    assert x.ndim == 1, f"need a vector, got shape {x.shape}"
    s = np.sum(x * x)
    if s > 100.0:
        raise ValueError(f"sum {s:.1f} too large")
    return s


def printed(x):
    s = np.sum(x * x)
    print("loss", s)
    return s


def warned(x):
    s = np.sum(x * x)
    if s > 100.0:
        warnings.warn("sum is large", stacklevel=2)
    return s


def logged(x):
    s = np.sum(x * x)
    logging.warning("module loss %s", s)
    LOG.warning("logger loss %s", s)
    return s


def guarded_loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] * x[i]
        assert s < 100.0, "loop sum too large"
        print("step", i)
    return s


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("fun", [asserted, raised, printed, guarded_loop, formatted])
def test_gradient_by_hand_and_no_adjoint_copy(fun, jit, capsys):
    g = srcgrad.grad(fun, jit=jit)
    np.testing.assert_allclose(g(X), 2.0 * X)   # sum(x*x) -> 2x
    code = "\n".join(line for line in g.source.splitlines()
                     if not line.strip().startswith("#"))   # not the line comments
    forward, adjoint = code.split("ds = ", 1)
    for word in ("assert ", "raise ", "print("):   # the adjoint starts at its seed
        assert forward.count(word) == inspect.getsource(fun).count(word), (word, g.source)
        assert word not in adjoint, g.source
    printed_lines = capsys.readouterr().out.splitlines()
    if fun is printed:
        assert printed_lines == ["loss 14.0"]
    if fun is guarded_loop:
        assert printed_lines == ["step 0", "step 1", "step 2"]   # once per iteration


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("fun,error,message", [
    (asserted, AssertionError, "sum too large"),
    (raised, ValueError, "partial sum too large"),
    (guarded_loop, AssertionError, "loop sum too large"),
    # an f-string message is its template's text (numba formats no values into strings)
    (formatted, ValueError, r"sum \{s:\.1f\} too large"),
])
def test_guard_fires_with_the_users_message(fun, error, message, jit):
    big = np.array([1.0, 20.0, 3.0])
    with pytest.raises(error, match=message):
        srcgrad.grad(fun, jit=jit)(big)
    with pytest.raises(error, match=message):
        srcgrad.value_and_grad(fun, jit=jit)(big)
    with pytest.raises(error, match=message):
        srcgrad.jvp(fun, jit=jit)(big, np.ones(3))
    if fun is formatted:
        with pytest.raises(AssertionError, match=r"need a vector, got shape \{x.shape\}"):
            srcgrad.grad(fun, jit=jit)(np.ones((2, 2)))


@pytest.mark.parametrize("jit", [False, True])
def test_jvp_keeps_guards(jit, capsys):
    value, tangent = srcgrad.jvp(guarded_loop, jit=jit)(X, np.ones(3))
    assert value == 14.0 and tangent == pytest.approx(np.sum(2.0 * X))
    assert capsys.readouterr().out.splitlines() == ["step 0", "step 1", "step 2"]
    value, tangent = srcgrad.jvp(raised, jit=jit)(X, X)
    assert value == 14.0 and tangent == pytest.approx(np.sum(2.0 * X * X))


def test_hvp_and_vjp_of_a_guarded_function(capsys):
    np.testing.assert_allclose(srcgrad.hvp(asserted)(X, np.ones(3)), 2.0 * np.ones(3))
    value, pullback = srcgrad.vjp(guarded_loop, jit=False)(X)
    assert value == 14.0
    assert capsys.readouterr().out.splitlines() == ["step 0", "step 1", "step 2"]
    np.testing.assert_allclose(pullback(3.0), 6.0 * X)
    np.testing.assert_allclose(pullback(1.0), 2.0 * X)
    assert capsys.readouterr().out == ""   # the pullback replays the loop, not its prints


@compiles
def test_auto_prints_once_per_call_when_it_switches_to_compiled(capsys):
    # jit="auto" runs straight-line code as Python, then compiled; it does not time the
    # two forms against each other on code that reports (each try would print)
    g = srcgrad.grad(printed)
    for _ in range(3):
        np.testing.assert_allclose(g(X), 2.0 * X)
    assert capsys.readouterr().out.splitlines() == ["loss 14.0"] * 3


def test_warning_kept_once_as_python():
    g = srcgrad.grad(warned, jit=False)
    with pytest.warns(UserWarning, match="sum is large") as record:
        np.testing.assert_allclose(g(10.0 * X), 20.0 * X)
    assert len([w for w in record if "sum is large" in str(w.message)]) == 1
    code = [line for line in g.source.splitlines() if not line.strip().startswith("#")]
    assert sum("warnings.warn(" in line for line in code) == 1
    forward, adjoint = g.source.split("# adjoint", 1)
    assert forward.count("warnings.warn(") == 2 and "warnings.warn(" not in adjoint
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(g(X), 2.0 * X)   # below the guard: no warning


def test_logging_kept_as_python(caplog):
    g = srcgrad.grad(logged, jit=False)
    with caplog.at_level(logging.WARNING):
        np.testing.assert_allclose(g(X), 2.0 * X)
    assert [r.getMessage() for r in caplog.records] == ["module loss 14.0", "logger loss 14.0"]
    assert "warning(" not in g.source.split("# adjoint", 1)[1]
    with caplog.at_level(logging.WARNING):
        value, tangent = srcgrad.jvp(logged, jit=False)(X, np.ones(3))
    assert tangent == pytest.approx(np.sum(2.0 * X))


@compiles
@pytest.mark.parametrize("fun", [warned, logged])
def test_numba_refuses_warnings_and_logging_clearly(fun):
    with pytest.raises(srcgrad.SrcgradError, match="numba cannot compile") as info:
        srcgrad.grad(fun, jit=True)(X)
    assert "test_guards.py:" in str(info.value)


@compiles
def test_auto_falls_back_with_one_warning():
    def warned_in_loop(x):
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i] * x[i]
        if s > 100.0:
            warnings.warn("sum is large", stacklevel=2)
        return s
    g = srcgrad.grad(warned_in_loop)   # a loop: jit="auto" tries numba first
    with pytest.warns(srcgrad.JitFallbackWarning, match="numba cannot compile") as record:
        np.testing.assert_allclose(g(X), 2.0 * X)
    assert len([w for w in record if w.category is srcgrad.JitFallbackWarning]) == 1


def test_side_call_with_a_differentiated_value_elsewhere_still_refused():
    def appended(x):
        parts = []
        for _ in range(2):   # (read inside its loop: not a list passes/lists.py takes)
            parts.append(x)
            if len(parts) > 5:
                break
        return x
    with pytest.raises(srcgrad.MissingRule, match="called for its effect"):
        srcgrad.grad(appended, jit=False)(1.0)


def _printed_each_step(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(x * (i + 1.0))
        print(f"step {i}: {s:.2f}")
    return s ** 2


def test_an_f_string_printed_in_a_loop(capsys):
    # formatted as Python formats it (the Python form)
    g = srcgrad.grad(_printed_each_step, jit=False)(X, 2)
    np.testing.assert_allclose(g, 2 * 3 * np.sum(X) * 3.0)   # s = 3 sum(x): 18 sum(x)
    assert capsys.readouterr().out.splitlines() == \
        [f"step 0: {np.sum(X):.2f}", f"step 1: {3 * np.sum(X):.2f}"]


@compiles
def test_numba_refuses_an_f_string_printed_at_its_line():
    with pytest.raises(srcgrad.SrcgradError, match=r"test_guards.py:\d+: numba cannot "
                                                   r"compile .* an f-string formats values"):
        srcgrad.grad(_printed_each_step, jit=True)(X, 2)
