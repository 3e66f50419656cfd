"""The generated modules kept on disk (`backend.modules`): a second process reads the module
instead of generating it, and is never served one that what it was made from has outgrown
(an edited helper file, a global with another value); a corrupt entry is made again."""

import math
import os
import subprocess
import sys
import textwrap

import numpy as np

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
    key, made = ("grad", ("x",), False, (), False, (), None, False), []
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
