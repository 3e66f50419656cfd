"""The generated modules kept on disk (`backend.modules`): a second process reads the module
instead of generating it, and is never served one that what it was made from has outgrown
(an edited helper file, a global with another value); a corrupt entry is made again."""

import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from marks import compiles

import srcgrad
from srcgrad.backend import modules

# a process that differentiates model.loss and says whether it generated the code
SCRIPT = """
import srcgrad.compiler
import model
made = []
generate = srcgrad.compiler.generate
srcgrad.compiler.generate = lambda *a, **k: made.append(1) or generate(*a, **k)
print(srcgrad.grad(model.loss, jit=False)(2.0), "generated" if made else "read")
"""


def process(tmp_path, **env) -> tuple[float, str, str]:
    env = {**os.environ, **env, "SRCGRAD_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONDONTWRITEBYTECODE": "1",   # (an edit within a second keeps its size)
           "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    run = subprocess.run([sys.executable, "-c", SCRIPT], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    value, how = run.stdout.split()
    return float(value), how, run.stderr


def test_a_second_process_reads_the_module_and_never_a_stale_one(tmp_path):
    (tmp_path / "model.py").write_text(textwrap.dedent("""
        import os
        import numpy as np
        from helper import power

        SCALE = float(os.environ.get("SCALE", "1"))

        def loss(x):
            return SCALE * power(x) + np.sin(x)
        """))
    helper = tmp_path / "helper.py"
    helper.write_text("def power(x):\n    return x * x * x\n")
    cube = 3 * 2.0 ** 2 + math.cos(2.0)
    assert process(tmp_path)[:2] == (cube, "generated")
    assert process(tmp_path)[:2] == (cube, "read")
    helper.write_text("def power(x):\n    return x * x * x * x\n")   # edited between runs
    fourth = 4 * 2.0 ** 3 + math.cos(2.0)
    assert process(tmp_path)[:2] == (fourth, "generated")
    assert process(tmp_path, SCALE="2")[:2] == (2 * fourth - math.cos(2.0), "generated")
    assert process(tmp_path)[:2] == (fourth, "generated")
    assert process(tmp_path)[:2] == (fourth, "read")

    [entry] = (tmp_path / "cache").glob("loss_gen_*.pickle")
    entry.write_bytes(entry.read_bytes()[:-50])   # (a truncated entry)
    value, how, err = process(tmp_path)
    assert (value, how) == (fourth, "generated") and "could not be read" in err
    assert process(tmp_path)[:2] == (fourth, "read")


# a process that runs transforms of transforms of model.loss, and says of each whether it
# generated code (`generate` of the first order, `generate_jvp`, `generate_grad_of`)
HIGHER = """
import json, sys
import numpy as np
import srcgrad, srcgrad.compiler
import model
made = []
for name in ("generate", "generate_jvp", "generate_grad_of"):
    def counted(*a, _f=getattr(srcgrad.compiler, name), **k):
        made.append(1)
        return _f(*a, **k)
    setattr(srcgrad.compiler, name, counted)
jit = sys.argv[1] == "compiled"
x, y, v = 2.0, 1.5, np.array([1.0, 0.5])
grad = srcgrad.grad(model.loss, jit=jit)
transforms = {
    "hvp": lambda: srcgrad.hvp(model.loss, jit=jit)(x, y, 1.0),
    "hvp_xy": lambda: srcgrad.hvp(model.loss, wrt=(0, 1), jit=jit)(x, y, (1.0, 0.0))[1],
    "grad_grad": lambda: srcgrad.grad(grad, jit=jit)(x, y),
    "grad_grad_y": lambda: srcgrad.grad(grad, wrt=1, jit=jit)(x, y),
    "jvp_grad": lambda: srcgrad.jvp(grad, jit=jit)(x, y, 1.0)[1],
    "grad3": lambda: srcgrad.grad(srcgrad.grad(grad, jit=jit), jit=jit)(x, y),
    "hessian": lambda: srcgrad.hessian(model.vector, jit=jit)(v)[0, 1],
}
out = {}
for kind in sys.argv[2:]:
    made.clear()
    out[kind] = [float(transforms[kind]()), "generated" if made else "read"]
print(json.dumps(out))
"""


@pytest.mark.parametrize("form", ["python", pytest.param("compiled", marks=[
    compiles, pytest.mark.compiled])])
def test_transforms_of_transforms_are_read_by_a_second_process_and_never_stale(tmp_path,
                                                                              form):
    """hvp, hessian, grad(grad(f)), jvp(grad(f)) and grad(grad(grad(f))) are read from the
    disk cache as first-order transforms are; an edited helper, or other options, miss."""
    from srcgrad.checks import numerical_grad

    (tmp_path / "model.py").write_text(textwrap.dedent("""
        import numpy as np
        from helper import power

        def loss(x, y):
            return power(x) * y + np.sin(x)

        def vector(v):
            return power(v[0]) * v[1] ** 2
        """))
    helper = tmp_path / "helper.py"
    helper.write_text("def power(x):\n    return x * x * x\n")
    env = {**os.environ, "SRCGRAD_CACHE_DIR": str(tmp_path / "cache"),
           "NUMBA_CACHE_DIR": str(tmp_path / "numba"), "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}

    def run(*kinds):
        done = subprocess.run([sys.executable, "-c", HIGHER, form, *kinds], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        return {k: tuple(v) for k, v in json.loads(done.stdout).items()}

    x, y = 2.0, 1.5   # by hand, for power(x) = x**3: d2/dx2 = 6xy - sin x, and so on
    cubed = {"hvp": 6 * x * y - math.sin(x), "hvp_xy": 3 * x * x,
             "grad_grad": 6 * x * y - math.sin(x), "grad_grad_y": 3 * x * x,
             "jvp_grad": 6 * x * y - math.sin(x), "grad3": 6 * y - math.cos(x),
             "hessian": 3 * 1.0 * 2 * 0.5}   # (v = (1, 0.5): d2/dv0 dv1 = 3 v0^2 2 v1)
    first = ["hvp", "hvp_xy", "grad_grad", "jvp_grad", "hessian"]
    assert run(*first) == {k: (cubed[k], "generated") for k in first}
    # read; a transform of one read (its IR from disk) is generated, then read
    assert run(*first, "grad3", "grad_grad_y") == {
        **{k: (cubed[k], "read") for k in first},
        "grad3": (cubed["grad3"], "generated"), "grad_grad_y": (cubed["grad_grad_y"],
                                                                "generated")}
    if form == "compiled":
        return   # (numba's part: compiled from what was read; the rest is as Python)
    assert run("grad3", "grad_grad_y") == {"grad3": (cubed["grad3"], "read"),
                                           "grad_grad_y": (cubed["grad_grad_y"], "read")}
    helper.write_text("def power(x):\n    return x * x * x * x\n")   # edited between runs
    fourth = {"hvp": 12 * x * x * y - math.sin(x), "grad3": 24 * x * y - math.cos(x),
              "jvp_grad": 12 * x * x * y - math.sin(x), "hessian": 4 * 1.0 * 2 * 0.5}
    assert run(*fourth) == {k: (value, "generated") for k, value in fourth.items()}
    assert run(*fourth) == {k: (value, "read") for k, value in fourth.items()}
    # the hand values agree with differences of the first derivatives
    d2 = numerical_grad(lambda x, y: 4 * x ** 3 * y + math.cos(x), (x, y), 0)
    assert d2 == pytest.approx(fourth["hvp"], rel=1e-6)


def scaled(x):
    return OFFSET + np.sum(x * x)


OFFSET = 1.0


class Settings:
    scale = 2.0


def test_an_entry_is_written_whole_and_read_back(tmp_path, monkeypatch):
    monkeypatch.setenv("SRCGRAD_CACHE_DIR", str(tmp_path))
    x = np.arange(3.0)
    g = srcgrad.grad(scaled, jit=False)
    np.testing.assert_allclose(g(x), 2 * x)
    [entry] = tmp_path.glob("scaled_gen_*.pickle")
    assert not list(tmp_path.glob("*.tmp"))
    key, made = g._key(), []
    read = modules.generated(scaled, key, lambda: made.append(1))
    assert not made and read.source == g.source
    entry.write_bytes(b"not a pickle")
    again = modules.generated(scaled, key, lambda: made.append(1) or g.generated)
    assert made == [1] and again is g.generated
    assert modules.generated(scaled, key, lambda: made.append(1)).source == g.source
    assert made == [1]


def test_what_cannot_be_described_alike_elsewhere_is_not_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("SRCGRAD_CACHE_DIR", str(tmp_path))
    offset = 2.0

    def closure(x):
        return offset * np.sum(x * x)
    np.testing.assert_allclose(srcgrad.grad(closure, jit=False)(np.ones(2)), [4.0, 4.0])
    assert modules._describe(object()) == modules._UNSTABLE
    before = modules._describe(Settings)
    monkeypatch.setattr(Settings, "scale", 3.0)   # (a class of the user's: its attributes)
    assert modules._describe(Settings) != before
    assert modules._describe(np.ones(2)) != modules._describe(np.array([1.0, 2.0]))
    assert not list(tmp_path.glob("*.pickle"))


# a process that differentiates a loop (compiled), with how many of the runtime helpers'
# compiled wrappers (`runtime.compiled`) it read from numba's disk cache, and compiled
LOOP = """
import json, sys
import numpy as np
import srcgrad
from srcgrad.runtime import compiled
import loops
g = srcgrad.grad(getattr(loops, sys.argv[1]), jit=True)
value = g(np.array([[0.5, -0.25], [0.125, 0.75]]), np.array([0.1, -0.2]), 3)
stats = [w.stats for w in compiled._WRAPPERS.values()]
print(json.dumps([value.tolist(), sum(sum(s.cache_hits.values()) for s in stats),
                  sum(sum(s.cache_misses.values()) for s in stats)]))
"""

LOOPS = """
import numpy as np

def linear(w, x, n):
    h = x
    for t in range(n):
        h = w @ h
    return np.sum(h)

def shifted(w, x, n):
    h = x
    for t in range(n):
        h = w @ h + 1.0
    return np.sum(h)

def squared(w, x, n):
    h = x
    for t in range(n):
        h = w @ h
    return np.sum(h * h)
"""


@compiles
@pytest.mark.compiled
def test_the_helpers_compile_once_per_machine_and_never_stale(tmp_path):
    """A second process reads the helpers' machine code for another gradient; a changed
    srcgrad (a copy with one helper edited) compiles its own; a garbled entry rebuilds."""
    import shutil

    from srcgrad.checks import numerical_grad

    (tmp_path / "loops.py").write_text(LOOPS)
    caches = {"SRCGRAD_CACHE_DIR": str(tmp_path / "cache"),
              "NUMBA_CACHE_DIR": str(tmp_path / "numba")}

    def run(name, *path):
        env = {**os.environ, **caches, "PYTHONPATH": os.pathsep.join(
            [*map(str, path), str(tmp_path), *sys.path])}
        done = subprocess.run([sys.executable, "-c", LOOP, name], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        value, hits, misses = json.loads(done.stdout)
        return np.array(value), hits, misses, done.stderr

    w, x = np.array([[0.5, -0.25], [0.125, 0.75]]), np.array([0.1, -0.2])
    loops: dict = {}
    exec(LOOPS, loops)
    value, hits, misses, _ = run("linear")
    np.testing.assert_allclose(value, numerical_grad(loops["linear"], (w, x, 3), 0),
                               rtol=1e-7)
    assert hits == 0 and misses > 0
    value, hits, misses, _ = run("shifted")   # the same helpers, on the same types
    np.testing.assert_allclose(value, numerical_grad(loops["shifted"], (w, x, 3), 0),
                               rtol=1e-7)
    assert hits > 0 and misses == 0

    edited = tmp_path / "edited"   # srcgrad with the adjoint of `a @ b` for b doubled
    shutil.copytree(Path(srcgrad.__file__).parent, edited / "srcgrad",
                    ignore=shutil.ignore_patterns("__pycache__"))
    matmul = edited / "srcgrad" / "runtime" / "matmul.py"
    text = matmul.read_text()
    assert text.count("return lambda dy, a, b: a.T @ dy") == 1
    matmul.write_text(text.replace("return lambda dy, a, b: a.T @ dy",
                                   "return lambda dy, a, b: 2.0 * (a.T @ dy)"))
    doubled = run("shifted", edited)[0]
    assert not np.allclose(doubled, value)

    for entry in (tmp_path / "numba").rglob("srcgrad_runtime_*"):
        entry.write_bytes(b"garbled")
    value, hits, misses, err = run("squared")   # (a gradient that needs the helpers)
    np.testing.assert_allclose(value, numerical_grad(loops["squared"], (w, x, 3), 0),
                               rtol=1e-7)
    assert "could not be read" in err and misses > 0


USER_MODULE = """
import numpy as np
from numba import njit

@njit(cache=True)
def shift(a, b):
    a[1:] = b   # (numba checks the shapes: its error is srcgrad's compiled wrapper)
    return a
"""

WITH_SRCGRAD = """
import numpy as np, srcgrad, model, user
print(srcgrad.grad(model.loss, jit=True)(np.ones(3))[0], user.shift(np.zeros(3), np.ones(2))[1])
"""

WITHOUT_SRCGRAD = """
import numpy as np, user
value = user.shift(np.zeros(3), np.ones(2))[1]
print(value, sum(user.shift.stats.cache_hits.values()))
"""


@compiles
@pytest.mark.compiled
def test_a_users_cached_function_compiled_beside_a_gradient_loads_without_srcgrad(tmp_path):
    """A user's own `njit(cache=True)` function with a slice assignment, compiled in a
    process that compiled a gradient (which binds numba's shape error to srcgrad's
    compiled wrapper), loads from numba's cache in a process that never imports srcgrad
    itself. It failed there: `No module named 'srcgrad_generated'`."""
    (tmp_path / "user.py").write_text(USER_MODULE)
    (tmp_path / "model.py").write_text("import numpy as np\n\n\ndef loss(x):\n"
                                       "    return np.sum(x * x)\n")
    env = {**os.environ, "SRCGRAD_CACHE_DIR": str(tmp_path / "cache"),
           "NUMBA_CACHE_DIR": str(tmp_path / "numba"),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}

    def run(script):
        done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    assert run(WITH_SRCGRAD) == ["2.0", "1.0"]   # d/dx sum(x^2) = 2x at 1
    value, hits = run(WITHOUT_SRCGRAD)
    assert value == "1.0" and int(hits) == 1   # read from the cache, not compiled again
