"""The public API: decorator forms, wrt forms, vjp, .source/.py_func/.fun, jit modes, CLI."""

import inspect
import os
import subprocess
import sys
import warnings

import functions as F
import numpy as np
import pytest
from fd import assert_grad

import srcgrad


def test_decorator_forms(jit):
    @srcgrad.grad
    def a(x):
        return x * x

    @srcgrad.grad(wrt="x", jit=jit)
    def b(x):
        return x * x

    c = srcgrad.grad(F.poly, wrt=1, jit=jit)
    assert a(3.0) == 6.0 and b(3.0) == 6.0 and c(5.0, 3.0) == 5.0


def test_wrt_forms(jit):
    assert srcgrad.grad(F.poly, wrt=0, jit=jit)(5.0, 3.0) == 13.0
    assert srcgrad.grad(F.poly, wrt="y", jit=jit)(5.0, 3.0) == 5.0
    assert srcgrad.grad(F.poly, wrt=("y",), jit=jit)(5.0, 3.0) == (5.0,)
    assert srcgrad.grad(F.poly, wrt=("y", 0), jit=jit)(5.0, 3.0) == (5.0, 13.0)
    assert srcgrad.grad(F.poly, wrt=-1, jit=jit)(5.0, 3.0) == 5.0


def test_keyword_call(jit):
    g = srcgrad.grad(F.poly, wrt=(0, 1), jit=jit)
    assert g(y=3.0, x=5.0) == (13.0, 5.0)


def test_wrapper_metadata():
    g = srcgrad.grad(F.poly)
    assert g.__name__ == "poly" and g.__doc__ == F.poly.__doc__ and g.fun is F.poly
    assert g.__wrapped__ is F.poly


def test_source_reads_like_a_hand_written_adjoint():
    src = srcgrad.grad(F.reassign, wrt=("x", "y")).source
    line = inspect.getsourcelines(F.reassign)[1] + 1
    assert "def reassign_grad(x, y):" in src
    assert f"# line {line}: x = x * y" in src and f"# grad of line {line}: x = x * y" in src
    assert "dx" in src and "dy" in src and "x_1" in src
    assert "d_t" not in src.split("# adjoint")[0]  # no adjoint before the backward pass
    assert srcgrad.source(F.reassign, wrt=("x", "y")) == src
    compile(src, "<generated>", "exec")


def test_py_func_is_plain_python():
    g = srcgrad.grad(F.poly, wrt=(0, 1))
    assert g.py_func(5.0, 3.0) == (13.0, 5.0)  # grad's code returns the gradients only
    assert not hasattr(g.py_func, "signatures")
    value, grads = srcgrad.value_and_grad(F.poly, wrt=(0, 1)).py_func(5.0, 3.0)
    assert value == 43.0 and grads == (13.0, 5.0)


def test_vjp_pullback_many_times_with_seeds(jit):
    def f(x, W):
        return np.tanh(x @ W)
    x, W = np.arange(3.0) / 3, np.ones((3, 2)) * 0.3
    value, pullback = srcgrad.vjp(f, wrt=(0, 1), jit=jit)(x, W)
    np.testing.assert_allclose(value, np.tanh(x @ W))
    for seed in (np.array([1.0, 0.0]), np.array([0.0, 1.0]), np.array([2.0, -3.0])):
        dx, dW = pullback(seed)

        def scalarised(x, W, seed=seed):
            return np.sum(f(x, W) * seed)
        assert_grad(scalarised, (dx, dW), (x, W), [0, 1])


def test_check_grad():
    args = [np.full(s, 0.1) for s in [(2, 3), 3, (3, 2), 2, (4, 2), (4, 2)]]
    srcgrad.check_grad(F.mlp_loss, *args, wrt=(0, 1, 2, 3))

    def staircase(x):  # zero gradient by rule; finite differences see the steps
        return np.round(x * 1e7)
    with pytest.raises(srcgrad.checks.GradientMismatch, match="central differences"):
        srcgrad.check_grad(staircase, 0.3)


def shifts_its_arguments(x, y):
    y -= np.sum(x)   # changes the caller's y
    return np.sum(y ** 2) + np.sum(x ** 3)


def test_check_grad_of_a_function_that_writes_into_its_arguments():
    # every difference sees the arguments as given: without copies, each call shifted y
    x, y = np.array([0.3, -0.2]), np.array([1.0, 2.0, 0.5])
    srcgrad.check_grad(shifts_its_arguments, x, y, wrt=(0, 1), jit=False)
    np.testing.assert_array_equal(y, [1.0, 2.0, 0.5])
    # by hand: s = sum(x), d/dy = 2 (y - s), d/dx_i = -2 sum(y - s) + 3 x_i^2
    dx, dy = srcgrad.grad(shifts_its_arguments, wrt=(0, 1), jit=False)(x, y)
    np.testing.assert_allclose(dy, 2.0 * (y - 0.1))
    np.testing.assert_allclose(dx, -2.0 * np.sum(y - 0.1) + 3.0 * x ** 2)


CONFIG = {"scale": 2.0}  # numba cannot type a global dict; Python can


def configured(x):
    return x * CONFIG["scale"]


def _numba_on():
    import os
    return os.environ.get("SRCGRAD_DISABLE_JIT", "") in ("", "0")


@pytest.mark.skipif(not _numba_on(), reason="SRCGRAD_DISABLE_JIT is set")
def test_jit_true_raises_where_numba_cannot_compile():
    with pytest.raises(srcgrad.SrcgradError, match="numba cannot compile"):
        srcgrad.grad(configured, jit=True)(1.0)


@pytest.mark.skipif(not _numba_on(), reason="SRCGRAD_DISABLE_JIT is set")
def test_auto_falls_back_with_one_warning(monkeypatch):
    monkeypatch.setenv("SRCGRAD_BACKGROUND", "0")   # the second call compiles (in the
    g = srcgrad.grad(configured)                    # background: test_background.py)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert g(1.0) == 2.0 and g(3.0) == 2.0
    fallbacks = [w for w in caught if issubclass(w.category, srcgrad.JitFallbackWarning)]
    assert len(fallbacks) == 1 and "numba cannot compile" in str(fallbacks[0].message)


def test_disable_jit_env(monkeypatch):
    monkeypatch.setenv("SRCGRAD_DISABLE_JIT", "1")
    g = srcgrad.grad(F.poly, jit=True)
    assert g.jit is False and g(5.0, 3.0) == 13.0


def test_cli_show(tmp_path):
    path = tmp_path / "model.py"
    path.write_text("import numpy as np\n\ndef loss(w, x):\n    return np.sum(np.tanh(w * x))\n")
    out = subprocess.run([sys.executable, "-m", "srcgrad", "show", f"{path}:loss", "--wrt",
                          "w,x"], capture_output=True, text=True, check=True).stdout
    assert "def loss_grad(w, x):" in out and "# grad of line 4:" in out
    bad = tmp_path / "bad.py"
    bad.write_text("def f(x):\n    try:\n        return x\n    except Exception:\n"
                   "        return x\n")
    run = subprocess.run([sys.executable, "-m", "srcgrad", "show", f"{bad}:f"],
                         capture_output=True, text=True)
    assert run.returncode == 1
    assert "bad.py:2: 'try' statements cannot be differentiated" in run.stderr


def test_cli_show_forward_hvp_and_static(tmp_path):
    path = tmp_path / "model.py"
    path.write_text("import numpy as np\n\ndef loss(w, n):\n    s = 0.0\n"
                    "    for i in range(n):\n        s = s + np.sum(w ** (i + 1))\n"
                    "    return s\n")

    def show(*options):
        return subprocess.run([sys.executable, "-m", "srcgrad", "show", f"{path}:loss",
                               *options], capture_output=True, text=True, check=True).stdout
    forward = show("--forward")
    assert "def loss_jvp(w, n, tw):" in forward and show("--jvp") == forward
    assert "def loss_grad_jvp(" in show("--hvp")
    unrolled = show("--static", "n=2")
    assert "for i in range" not in unrolled and "w ** 2" in unrolled


def test_cli_cache_info_and_clear(tmp_path):
    env = {**os.environ, "SRCGRAD_CACHE_DIR": str(tmp_path / "cache")}
    path = tmp_path / "model.py"
    path.write_text("def f(x):\n    return x * x\n")
    run = [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(tmp_path)!r}); "
           "import srcgrad, model; srcgrad.grad(model.f, jit=False)(3.0)"]
    subprocess.run(run, env=env, check=True)
    info = subprocess.run([sys.executable, "-m", "srcgrad", "cache", "info"], env=env,
                          capture_output=True, text=True, check=True).stdout
    # (two: the generated module's source, and the compiler's output kept for the next run)
    assert str(tmp_path / "cache") in info and "entries:  2" in info
    out = subprocess.run([sys.executable, "-m", "srcgrad", "cache", "clear"], env=env,
                         capture_output=True, text=True, check=True).stdout
    assert out.startswith("removed 2 entries")
    assert not list((tmp_path / "cache").glob("*.py*"))


def test_cache_trim_removes_the_least_recently_used(tmp_path):
    from srcgrad.backend import cache
    (tmp_path / "__pycache__").mkdir()
    for k, name in enumerate(["old", "mid", "new"]):
        (tmp_path / f"{name}_0123.py").write_text("x" * 1000)
        (tmp_path / "__pycache__" / f"{name}_0123.f-1.py311.nbi").write_text("y" * 1000)
        os.utime(tmp_path / f"{name}_0123.py", (1000.0 + k, 1000.0 + k))
    cache.mark_used(tmp_path / "old_0123.py")   # loaded now: the most recently used
    assert [e.size for e in cache.entries(tmp_path)] == [2000] * 3
    assert cache.trim(tmp_path, 4500) == 1
    left = sorted(p.name for p in tmp_path.rglob("*") if p.is_file())
    assert left == ["new_0123.f-1.py311.nbi", "new_0123.py", "old_0123.f-1.py311.nbi",
                    "old_0123.py"]



CACHED = """
import sys
import numpy as np
import srcgrad

def f_min(x):
    return np.sum(np.min(x, axis=1, keepdims=True) ** 2)

def f_var(x):
    return np.sum(np.var(x, axis=1, keepdims=True) ** 2)

x = np.array([[0.3, -1.2, 2.0, 0.7], [1.5, 0.1, -0.4, 0.9], [-2.0, 0.6, 1.1, 0.2]])
for name in sys.argv[1:]:
    print(repr(srcgrad.grad(globals()[name], jit=True)(x).tolist()))
"""


@pytest.mark.compiled
def test_code_cached_by_two_processes_stays_apart(tmp_path):
    # two processes compile one gradient each into one disk cache; a third loads both
    # (numba had named the two np.min / np.var reductions alike, and linked one for both)
    (tmp_path / "cached.py").write_text(CACHED)
    env = {**os.environ, "SRCGRAD_CACHE_DIR": str(tmp_path / "cache")}

    def run(*names):
        out = subprocess.run([sys.executable, str(tmp_path / "cached.py"), *names], env=env,
                             capture_output=True, text=True, check=True).stdout
        return [np.array(eval(line)) for line in out.splitlines()]

    run("f_min")
    run("f_var")
    x = np.array([[0.3, -1.2, 2.0, 0.7], [1.5, 0.1, -0.4, 0.9], [-2.0, 0.6, 1.1, 0.2]])
    lowest = x.min(axis=1, keepdims=True)
    d_min = np.where(x == lowest, 2 * lowest, 0.0)  # by hand: 2 min at the minimum
    n, var = x.shape[1], x.var(axis=1, keepdims=True)
    d_var = 2 * var * 2 * (x - x.mean(axis=1, keepdims=True)) / n  # 2 v dv/dx
    for names in (("f_min", "f_var"), ("f_var", "f_min")):
        got = dict(zip(names, run(*names), strict=True))
        np.testing.assert_allclose(got["f_min"], d_min, rtol=1e-12)
        np.testing.assert_allclose(got["f_var"], d_var, rtol=1e-12)


def _scaled_square(x, k=2.0, m=1.0):
    return x * x * k + m


def _calls_with_keywords(x):
    return _scaled_square(x, m=3.0) + _scaled_square(x, k=5.0) + _scaled_square(x)


def test_calls_to_user_functions_with_keywords_and_defaults(jit):
    dx = srcgrad.grad(_calls_with_keywords, jit=jit)(1.5)
    assert dx == 2 * 1.5 * (2.0 + 5.0 + 2.0)           # by hand: d/dx k x^2 = 2 k x
    assert_grad(_calls_with_keywords, (dx,), (1.5,), [0])


def _squared_modulus(x, n):
    return np.real(np.sum(x * np.conj(x))) * n


def _loop_squares(x, n):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] * x[i] * n
    return s


@pytest.mark.parametrize("fun, jit", [
    (_squared_modulus, False),
    pytest.param(_loop_squares, True, marks=pytest.mark.skipif(
        not _numba_on(), reason="SRCGRAD_DISABLE_JIT is set")),
])
def test_later_calls_keep_every_check_of_the_first(fun, jit):
    """The common call (`Transform._plain`) skips the checks only where none could fire:
    after a first call of floats, an integer or boolean wrt argument is still refused,
    keywords and containers still take the long way, and complex arguments still get
    JAX's convention (the cotangent of z is df/dx - i df/dy)."""
    from srcgrad.errors import WrtError

    g = srcgrad.grad(fun, jit=jit)
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(g(x, 2), 4 * x)   # d/dx 2 |x|^2, by hand
    np.testing.assert_allclose(g(x, 2), 4 * x)   # (the common call)
    np.testing.assert_allclose(g(x, n=3), 6 * x)
    np.testing.assert_allclose(srcgrad.value_and_grad(fun, jit=jit)(x, 2.0)[1], 4 * x)
    for wrong in (np.array([1, 2]), np.array([True, False])):
        with pytest.raises(WrtError, match="'x'"):
            g(wrong, 2)
    with pytest.raises(srcgrad.SrcgradError):
        g({"a": x}, 2)
    if fun is _squared_modulus:
        np.testing.assert_allclose(g(np.array([1 + 1j, 2.0]), 2), [4 - 4j, 8])
