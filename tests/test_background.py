"""jit="auto" compiles straight-line code in the background (`backend.background`): the
Python form answers until the compiled form is ready, then the faster of the two serves.
Nothing here is timed: each test waits for the switch (with a generous limit) and checks
values by hand."""

import ast
import gc
import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from pathlib import Path

import numba
import numpy as np
import pytest
from marks import compiles

import srcgrad
from srcgrad.backend import background
from srcgrad.backend import compile as compile_module

pytestmark = [compiles, pytest.mark.compiled]
PATIENCE = 600   # s: a compile on a busy 2-core machine takes up to a minute


def wait_settled(g, timeout=PATIENCE):
    deadline = time.monotonic() + timeout
    while not g.forms.settled:
        assert time.monotonic() < deadline, "the background compile did not finish"
        time.sleep(0.02)


def calls_until_chosen(g, args, want, timeout=PATIENCE):
    """Call `g` until the forms have chosen for these arguments, checking each result."""
    deadline = time.monotonic() + timeout
    while True:
        np.testing.assert_allclose(g(*args), want, rtol=1e-12)
        states = {t.state for t in g.forms._tiers.values()}
        if states <= {"python", "compiled"}:
            return states
        assert time.monotonic() < deadline, f"no choice yet: {states}"
        time.sleep(0.01)


@pytest.fixture
def held_worker():
    """The worker thread held on a job of this test's until `release()`."""
    gate = threading.Event()
    assert background.submit(gate.wait)
    yield gate.set
    gate.set()


def test_parsing_beside_the_worker_on_the_interpreters_that_share_ast_state():
    assert background.shares_ast_state((3, 11, 0)) and background.shares_ast_state((3, 11, 7))
    assert not any(background.shares_ast_state(v) for v in [(3, 10, 13), (3, 11, 8), (3, 12, 1)])


@pytest.mark.skipif(not background.shares_ast_state(),
                    reason="this CPython keeps the AST constructor's state per call")
def test_threads_parse_beside_the_worker_parsing():
    """The worker builds syntax trees (numba does as it compiles) while other threads parse
    (pytest's assertion rewriting): unguarded, on 3.11.0-3.11.7, a garbage collection
    running Python code mid-parse lets the other thread in, and a parse fails with
    SystemError (about 1 in 4 of these parses, measured)."""
    source = Path(ast.__file__).read_text()
    errors = []

    def parse(times):
        for _ in range(times):
            try:
                ast.parse(source)
            except SystemError as exc:
                errors.append(exc)

    def collecting(phase, info):   # Python code in every collection, as a finalizer is
        sum(range(200))

    done = threading.Event()
    gc.callbacks.append(collecting)
    try:
        assert background.submit(lambda: (parse(30), done.set()))
        parse(30)
        assert done.wait(PATIENCE)
    finally:
        gc.callbacks.remove(collecting)
    assert not errors, errors[0]


def sin_weighted(x):
    return np.sum(np.sin(x) * x)


def test_the_python_form_answers_then_the_forms_are_chosen(held_worker):
    x = np.linspace(-1.0, 2.0, 7)
    want = np.sin(x) + x * np.cos(x)
    g = srcgrad.grad(sin_weighted)
    for _ in range(3):   # the worker is held: these are answered by the Python form
        np.testing.assert_allclose(g(x), want, rtol=1e-12)
    assert g.state == "compiled: not yet" and not g.forms.settled
    held_worker()
    assert calls_until_chosen(g, (x,), want) <= {"python", "compiled"}
    assert g.state == "compiled: yes"


def tanh_layer(w, x):
    return np.sum(np.tanh(x @ w) ** 2)


def test_other_threads_are_answered_while_it_compiles(held_worker):
    rng = np.random.default_rng(1)
    w, x = rng.normal(size=(3, 2)), rng.normal(size=(4, 3))
    h = np.tanh(x @ w)
    want = x.T @ (2.0 * h * (1.0 - h**2))   # by hand
    g = srcgrad.grad(tanh_layer)
    results, errors = [], []

    def caller():
        try:
            for _ in range(5):
                results.append(g(w, x))
        except Exception as exc:   # (reported below, in the test's thread)
            errors.append(exc)
    threads = [threading.Thread(target=caller) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(PATIENCE)
    assert not errors and len(results) == 15
    assert not g.forms.settled   # all of them answered before any compile
    for got in results:
        np.testing.assert_allclose(got, want, rtol=1e-12)
    held_worker()
    wait_settled(g)
    threads = [threading.Thread(target=caller) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(PATIENCE)
    assert not errors and len(results) == 25
    for got in results:
        np.testing.assert_allclose(got, want, rtol=1e-12)


def tanh_bias(w, b, x):
    return np.sum(np.tanh(x @ w + b) ** 2)


def test_the_python_form_gets_its_compiled_loops_in_the_background():
    rng = np.random.default_rng(2)
    w, b, x = rng.normal(size=(3, 160)), rng.normal(size=160), rng.normal(size=(4, 3))
    t = np.tanh(x @ w + b)
    dz = 2.0 * t * (1.0 - t**2)
    want = (x.T @ dz, dz.sum(axis=0))   # by hand
    g = srcgrad.grad(tanh_bias, wrt=(0, 1))
    got = g(w, b, x)
    wait_settled(g)
    (tier,) = g.forms._tiers.values()
    kernels = [tier.loops[k] for k in g.forms.gen.kernels]
    assert kernels and all(k.loops and k._compiled for k in kernels)
    assert not any(g.py_func.__globals__[k].loops for k in g.forms.gen.kernels)
    for _ in range(2 * tier.TIMED):   # both forms take turns
        got += g(w, b, x)
    for k, grad in enumerate(got):
        np.testing.assert_allclose(grad, want[k % 2], rtol=1e-10)


CONFIG = {"scale": 3.0}  # numba cannot type a global dict; Python can


def configured(x):
    return x * CONFIG["scale"]


def test_a_compile_that_fails_in_the_background_warns_once_then_runs_python():
    g = srcgrad.grad(configured)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert g(1.0) == 3.0
        wait_settled(g)
        for _ in range(3):
            assert g(2.0) == 3.0
    fallbacks = [w for w in caught if issubclass(w.category, srcgrad.JitFallbackWarning)]
    assert len(fallbacks) == 1 and "numba cannot compile" in str(fallbacks[0].message)
    assert g.state.startswith("compiled: no")


def cubed(x):
    return np.sum(x**3)


def test_compile_ahead_of_time_and_its_log(caplog):
    x = np.array([1.0, -2.0])
    g = srcgrad.grad(cubed)
    with caplog.at_level(logging.DEBUG, logger="srcgrad"):
        assert g.compile(x) is g
    assert g.state == "compiled: yes" and g.forms.settled
    compiled = [r.getMessage() for r in caplog.records if "compiled the" in r.getMessage()]
    assert len(compiled) == 1 and "cubed" in compiled[0] and "blocking" in compiled[0]
    assert "disk cache hit" in compiled[0] or "disk cache miss" in compiled[0]
    assert calls_until_chosen(g, (x,), 3.0 * x**2)
    f = srcgrad.vjp(cubed)
    assert f.compile(x) is f and f.state == "compiled: yes"   # the forward and pullback
    value, pullback = f(x)
    assert value == -7.0 and np.array_equal(pullback(2.0), 6.0 * x**2)


def test_off_switch_compiles_on_the_second_call(monkeypatch):
    monkeypatch.setenv("SRCGRAD_BACKGROUND", "0")
    x = np.array([0.5, 1.5])
    g = srcgrad.grad(sin_weighted)
    np.testing.assert_allclose(g(x), np.sin(x) + x * np.cos(x), rtol=1e-12)
    assert g.state == "compiled: not yet"
    np.testing.assert_allclose(g(x), np.sin(x) + x * np.cos(x), rtol=1e-12)
    assert g.state == "compiled: yes" and not g.forms._tiers


SCRIPT = """
import numpy as np, srcgrad

def f(x):
    return np.sum(np.exp(x) * x)

x = np.array([0.25, 1.0])
g = srcgrad.grad(f)
print(g(x)[0])
import time; time.sleep(0.5)  # the background compile is under way
"""


def test_exit_while_compiling_is_clean(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(SCRIPT))
    env = {**os.environ, "SRCGRAD_CACHE_DIR": str(tmp_path / "srcgrad"),
           "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=PATIENCE)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert float(proc.stdout) == pytest.approx(np.exp(0.25) * 1.25)   # by hand: e^x (1 + x)


def exp_weighted(x):
    return np.sum(np.exp(x) * x)


def test_a_corrupt_cache_entry_is_compiled_again(monkeypatch, caplog):
    if numba.version_info[:2] < (0, 60):
        pytest.skip("numba < 0.60 (the oldest env) reports its cache differently")
    x = np.array([0.25, 1.0])
    want = np.exp(x) * (1.0 + x)   # by hand
    np.testing.assert_allclose(srcgrad.grad(exp_weighted, jit=True)(x), want, rtol=1e-12)
    entry = srcgrad.grad(exp_weighted, jit=True).compiled_entry()
    files = [p for p in Path(entry.stats.cache_path).glob("exp_weighted_*")
             if p.suffix in (".nbi", ".nbc")]
    assert {p.suffix for p in files} == {".nbi", ".nbc"}
    for path in files:   # indexes cut short, data garbled
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2] if path.suffix == ".nbi" else b"garbled")
    monkeypatch.setattr(compile_module, "_JIT_CACHE", {})   # as in a new process
    with caplog.at_level(logging.WARNING, logger="srcgrad"), warnings.catch_warnings():
        warnings.simplefilter("error", srcgrad.JitFallbackWarning)
        g = srcgrad.grad(exp_weighted)
        np.testing.assert_allclose(g.compile(x)(x), want, rtol=1e-12)
    assert any("could not be read" in r.getMessage() for r in caplog.records)
    monkeypatch.setattr(compile_module, "_JIT_CACHE", {})
    entry = srcgrad.grad(exp_weighted, jit=True).compiled_entry()
    entry.compile((entry.typeof_pyval(x),))
    assert sum(entry.stats.cache_hits.values()) == 1   # the entry written again reads back


def test_cli_compile_fills_the_disk_caches(tmp_path):
    path = tmp_path / "model.py"
    path.write_text("import numpy as np\n\ndef loss(w, x):\n    return np.sum(np.tanh(w * x))\n")
    env = {**os.environ, "SRCGRAD_CACHE_DIR": str(tmp_path / "srcgrad"),
           "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "PYTHONPATH": os.pathsep.join(sys.path)}
    run = subprocess.run([sys.executable, "-m", "srcgrad", "compile", f"{path}:loss",
                          "--args", "np.ones(3), 2.0"], env=env, capture_output=True,
                         text=True, timeout=PATIENCE)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("compiled the gradient of loss in ")
    assert list((tmp_path / "numba").rglob("loss_*.nbc"))
    path.write_text("CONFIG = {'scale': 2.0}\n\ndef loss(x):\n    return x * CONFIG['scale']\n")
    run = subprocess.run([sys.executable, "-m", "srcgrad", "compile", f"{path}:loss",
                          "--args", "1.0"], env=env, capture_output=True, text=True,
                         timeout=PATIENCE)   # (numba types no global dict)
    assert run.returncode == 1 and "JitFallbackWarning" in run.stderr, run.stderr
    assert "numba cannot compile" in run.stderr


def numba_compiling() -> bool:
    """Whether a thread holds numba's compiler lock (it compiles)."""
    lock = numba.core.compiler_lock.global_compiler_lock._lock
    if lock.acquire(blocking=False):
        lock.release()
        return False
    return True


def softplus_sum(x):
    return np.sum(np.log1p(np.exp(x)))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork")
def test_a_fork_while_compiling_in_the_background_gives_a_working_child():
    x = np.array([-1.0, 0.5, 2.0])
    want = 1.0 / (1.0 + np.exp(-x))   # by hand: the logistic function
    g = srcgrad.grad(softplus_sum)
    np.testing.assert_allclose(g(x), want, rtol=1e-12)   # the compile starts behind it
    deadline = time.monotonic() + PATIENCE
    while not (numba_compiling() or g.forms.settled):
        assert time.monotonic() < deadline, "the background compile did not start"
        time.sleep(0.001)
    read, write = os.pipe()
    pid = os.fork()   # (waits until the compile under way is done)
    if pid == 0:   # the child: answers, then compiles in the foreground and answers again
        os.close(read)
        try:
            report = "ok"
            for _ in range(3):
                np.testing.assert_allclose(g(x), want, rtol=1e-12)
            g.compile(x)
            assert g.state == "compiled: yes"
            for _ in range(3):
                np.testing.assert_allclose(g(x), want, rtol=1e-12)
            loop = srcgrad.grad(horner, jit=True)
            assert loop(0.5, 3) == pytest.approx(1.0 + 2 * 0.5 + 3 * 0.25)
        except BaseException as exc:   # (reported to the parent, which fails the test)
            report = f"{type(exc).__name__}: {exc}"
        os.write(write, report.encode())
        os._exit(0)
    os.close(write)
    deadline = time.monotonic() + PATIENCE
    while os.waitpid(pid, os.WNOHANG) == (0, 0):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the child hangs (a lock held by a thread the fork left behind?)")
        time.sleep(0.05)
    with os.fdopen(read) as pipe:
        assert pipe.read() == "ok"
    wait_settled(g)
    np.testing.assert_allclose(g(x), want, rtol=1e-12)


def horner(x, n):
    s = 0.0
    for _ in range(n + 1):
        s = s * x + 1.0
    return s


RACER = """
import json
import srcgrad

def horner(x, n):
    s = 0.0
    for _ in range(n + 1):
        s = s * x + 1.0
    return s

g = srcgrad.grad(horner, jit=True)
value = g(0.5, 3)
entry = g.compiled_entry()
print(json.dumps([value, sum(entry.stats.cache_hits.values())]))
"""


def test_two_processes_compile_the_same_function_into_one_cache_at_once(tmp_path):
    script = tmp_path / "racer.py"
    script.write_text(RACER)
    env = {**os.environ, "SRCGRAD_CACHE_DIR": str(tmp_path / "srcgrad"),
           "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "PYTHONPATH": os.pathsep.join(sys.path)}

    def start():
        return subprocess.Popen([sys.executable, str(script)], env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    racers = [start(), start()]
    outs = [p.communicate(timeout=PATIENCE) for p in racers]
    want = 1.0 + 2 * 0.5 + 3 * 0.25   # by hand: d/dx (1 + x + x^2 + x^3) at 0.5
    for proc, (out, err) in zip(racers, outs, strict=True):
        assert proc.returncode == 0 and "could not be read" not in err, err
        assert json.loads(out)[0] == pytest.approx(want)
    later = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                           text=True, timeout=PATIENCE)
    assert later.returncode == 0 and "could not be read" not in later.stderr, later.stderr
    value, hits = json.loads(later.stdout)
    assert value == pytest.approx(want) and hits == 1   # read back from the disk cache


def test_compile_readies_the_python_forms_compiled_loops_too():
    """`g.compile(*args)` under jit="auto" (what `srcgrad compile` runs) compiles what a
    background job would: the compiled form, and the Python form's kernel loops (kept on
    disk for the next process), so the forms take turns at once."""
    w, x = np.array([[0.5, -0.25], [0.125, 0.75]]), np.array([[0.1, -0.2], [0.3, 0.4]])
    t = np.tanh(x @ w)
    want = x.T @ (2 * t * (1 - t * t))   # by hand
    g = srcgrad.grad(tanh_layer)
    assert g.generated.kernels   # (else there are no loops to compile)
    np.testing.assert_allclose(g.compile(w, x)(w, x), want, rtol=1e-12)
    if background.enabled():
        [tier] = g.forms._tiers.values()
        assert tier.state == "ready" and tier.loops is not None
    for _ in range(8):   # (each form, timed, then the faster)
        np.testing.assert_allclose(g(w, x), want, rtol=1e-12)
    assert g.state == "compiled: yes"


def test_looking_for_compiled_loops_imports_no_scipy_module(tmp_path):
    """The Python form's helpers with compiled loops are found among srcgrad's own: asking
    the table about a foreign callable (a ufunc) would load SciPy's records, importing
    scipy.stats (seconds, holding the GIL, in the background job)."""
    script = textwrap.dedent("""
        import sys
        import numpy as np
        import srcgrad
        from srcgrad.backend.forms import _run_loops
        from test_background import tanh_layer
        g = srcgrad.grad(tanh_layer, jit=False)
        assert _run_loops(dict(g.forms.functions(jit=False)), g.generated)
        print("scipy.stats" in sys.modules)
        """)
    env = {**os.environ, "SRCGRAD_CACHE_DIR": str(tmp_path),
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), *sys.path])}
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=PATIENCE)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["False"]
