"""`import srcgrad` loads neither numba nor SciPy (DESIGN §6: the import is cheap), and
the rule table loads SciPy's rules once the user's code has imported SciPy. Each check
runs in a fresh interpreter and reads `sys.modules`; nothing here is timed."""

import json
import math
import os
import subprocess
import sys
import textwrap

import numpy as np

HEAVY = ("numba", "llvmlite", "scipy")


def run(tmp_path, code: str) -> dict:
    """What `code`, run as a script by a fresh interpreter, prints as JSON last."""
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(code))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_import_loads_neither_numba_nor_scipy(tmp_path):
    out = run(tmp_path, f"""
        import json, sys
        import srcgrad
        print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {HEAVY!r})))
    """)
    assert out == []


def test_a_python_form_gradient_loads_no_scipy_until_the_code_uses_it(tmp_path):
    out = run(tmp_path, """
        import json, sys
        import numpy as np
        import srcgrad

        def f(x):
            return np.sum(np.tanh(x) * x)

        def loaded():
            return sorted(m for m in sys.modules if m in ("scipy.special", "scipy.stats"))

        x = np.array([0.5, -1.0])
        import numba.np.arraymath   # (what numba loads of SciPy itself is not the question)
        before = loaded()
        g = srcgrad.grad(f, jit=False)(x).tolist()
        after = loaded()
        import scipy.special

        def h(x):
            return np.sum(scipy.special.erf(x))

        e = srcgrad.grad(h, jit=False)(x).tolist()
        print(json.dumps([before, after, g, e]))
    """)
    before, after, g, e = out
    x = np.array([0.5, -1.0])
    assert after == before
    np.testing.assert_allclose(g, np.tanh(x) + x / np.cosh(x) ** 2, rtol=1e-12)
    np.testing.assert_allclose(e, 2 / np.sqrt(np.pi) * np.exp(-x**2), rtol=1e-12)


def test_the_whole_table_holds_scipy_rules(tmp_path):
    out = run(tmp_path, """
        import json
        from srcgrad.rules import OPS as table
        import scipy.special, scipy.stats
        print(json.dumps([scipy.special.erf in table, scipy.stats.norm.logpdf in table]))
    """)
    assert out == [True, True]


def test_a_math_function_whose_record_is_beside_scipys_has_its_rule(tmp_path):
    # math.erf's record lives in the scipy.special module of records: a function that
    # calls it, in a process that never imported SciPy, still has its gradient
    out = run(tmp_path, """
        import json, math
        import srcgrad

        def f(x):
            return math.erf(x) * 2.0

        print(json.dumps(srcgrad.grad(f, jit=False)(0.5)))
    """)
    assert abs(out - 4.0 / math.sqrt(math.pi) * math.exp(-0.25)) < 1e-12


def test_each_record_module_declares_the_scipy_modules_it_imports():
    # the table imports a record module only once the SciPy modules its NEEDS line names
    # are imported: one that imported another would load SciPy for code that never uses it
    import ast
    import pkgutil
    from pathlib import Path

    import srcgrad.rules as rules

    for info in pkgutil.iter_modules(rules.__path__):
        tree = ast.parse((Path(rules.__path__[0]) / f"{info.name}.py").read_text())
        imported = set()
        for node in tree.body:
            if isinstance(node, ast.Import):
                imported |= {a.name for a in node.names if a.name.startswith("scipy.")}
            elif isinstance(node, ast.ImportFrom) and node.module == "scipy":
                imported |= {f"scipy.{a.name}" for a in node.names}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("scipy."):
                imported.add(node.module)
        assert rules._needs(info.name) == imported, info.name
