"""The one-way pipeline: higher order reads the differentiable IR that first-order
generation keeps (`compiler.Generated.ir`), never generated text, and cites the user's
file and lines; joint products and kernels are lowering passes after it."""

import inspect
import os
import re
import subprocess
import sys
import textwrap
import types

import gast
import numpy as np
import pytest

import srcgrad
from srcgrad.codegen import to_source
from srcgrad.frontend.parse import parse
from srcgrad.passes import forward, fuse
from srcgrad.passes.base import Namespace
from srcgrad.passes.join import join
from srcgrad.rules.operator_rules import matmul_tangent

HERE = os.path.basename(__file__)


def cube_sum(x):
    y = x ** 3
    return np.sum(y * x)


def layer(W, x):
    h = np.tanh(x @ W)
    return np.sum(h @ W.T)


def line_of(fun, text: str) -> int:
    """The line of this file where `fun`'s source has `text`."""
    lines, first = inspect.getsourcelines(fun)
    return first + next(k for k, line in enumerate(lines) if text in line)


def citations(source: str) -> list[int]:
    return [int(n) for n in re.findall(r"# (?:grad of )?line (\d+):", source)]


@pytest.mark.parametrize("make", [
    lambda f: srcgrad.hvp(f, jit=False),
    lambda f: srcgrad.grad(srcgrad.grad(f), jit=False),
    lambda f: srcgrad.hessian(f, jit=False),
], ids=["hvp", "grad_of_grad", "hessian"])
def test_second_order_source_cites_the_users_file_and_lines(make):
    source = make(cube_sum).source
    first = line_of(cube_sum, "def cube_sum")
    assert f"({HERE}:{first})" in source, source
    assert not re.search(r"_[0-9a-f]{16}\.py", source), source   # no cache file
    cited = set(citations(source))
    assert cited and cited <= {first + 1, first + 2}, source
    assert f"# line {first + 1}: y = x ** 3" in source, source


def test_hvp_of_cube_sum_by_hand(jit, rng):
    # d2/dx2 sum(x ** 4) = diag(12 x ** 2): H v = 12 x ** 2 v
    x, v = rng.standard_normal(5), rng.standard_normal(5)
    np.testing.assert_allclose(srcgrad.hvp(cube_sum, jit=jit)(x, v), 12 * x ** 2 * v,
                               rtol=1e-12)
    np.testing.assert_allclose(srcgrad.hessian(cube_sum, jit=jit)(x), np.diag(12 * x ** 2),
                               rtol=1e-12)
    # grad of grad needs a scalar gradient: at a number, d2/dx2 x ** 4 = 12 x ** 2
    assert srcgrad.grad(srcgrad.grad(cube_sum), jit=jit)(1.5) == pytest.approx(27.0,
                                                                              rel=1e-12)


def test_hvp_through_products_against_differences_of_the_gradient(jit, rng):
    # the gradient's code has kernels and matrix products; the hvp is read off its IR
    W, x = rng.standard_normal((3, 3)) * 0.5, rng.standard_normal((4, 3))
    v = rng.standard_normal((3, 3))
    got = srcgrad.hvp(layer, jit=jit)(W, x, v)
    g = srcgrad.grad(layer, jit=False)
    h = 1e-6
    want = (g(W + h * v, x) - g(W - h * v, x)) / (2 * h)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_parse_of_a_generated_entry_is_its_ir():
    g = srcgrad.grad(layer, jit=False)
    assert "@elementwise" in g.source   # the text is lowered...
    parsed = parse(g.py_func)
    assert parsed.filename == __file__   # ...the IR is not, and names the user's lines
    assert parsed.tree.lineno == line_of(layer, "def layer")
    code = to_source(gast.Module(body=[parsed.tree], type_ignores=[]))
    assert "_fused(" not in code and "elementwise" not in code, code
    lines = {n.lineno for n in gast.walk(parsed.tree) if isinstance(n, gast.stmt)}
    assert lines <= set(range(parsed.tree.lineno, parsed.tree.lineno + 3)), lines
    assert parse(g.py_func).tree is not parsed.tree   # a copy each time


def test_generated_code_without_ir_is_refused():
    namespace = {"__name__": "srcgrad_generated.elsewhere"}
    exec("def f(x):\n    return x\n", namespace)
    assert isinstance(namespace["f"], types.FunctionType)
    with pytest.raises(srcgrad.SrcgradError, match="generated code"):
        srcgrad.grad(namespace["f"], jit=False)(1.0)


def test_lowering_passes_have_no_inverse():
    # higher order reads the IR from before the lowering: nothing writes kernels or joint
    # calls back as operations
    assert not hasattr(fuse, "unfused") and not hasattr(forward, "unjoined")


def _function(text: str) -> gast.FunctionDef:
    return gast.parse(textwrap.dedent(text)).body[0]


def test_join_makes_a_product_and_its_tangent_one_call():
    ns = Namespace()
    ns.bind("matmul_tangent", matmul_tangent)
    fn = _function("""
        def f(a, b, ta, tb):
            y = a @ b
            ty = matmul_tangent(a, b, ta, tb)
            z = matmul_tangent(a, b, ta, tb)
            return y, ty, z
        """)
    code = to_source(join(fn, ns))
    assert "y, ty = matmul_jvp(a, b, ta, tb)" in code and \
        "z = matmul_tangent(a, b, ta, tb)" in code, code
    assert "y = a @ b" in to_source(fn)   # its input is unchanged


@pytest.mark.parametrize("text", [
    # the product replaces an operand the tangent reads
    "def f(a, b, ta, tb):\n    a = a @ b\n    ta = matmul_tangent(a, b, ta, tb)\n"
    "    return ta\n",
    # another product's tangent
    "def f(a, b, c, ta, tb):\n    y = a @ c\n    ty = matmul_tangent(a, b, ta, tb)\n"
    "    return ty\n",
])
def test_join_leaves_pairs_that_are_not_one_product(text):
    ns = Namespace()
    ns.bind("matmul_tangent", matmul_tangent)
    fn = gast.parse(text).body[0]
    assert to_source(join(fn, ns)) == to_source(fn)


def test_hvp_keeps_a_product_whose_tangent_is_dead_without_its_tangent():
    # `_t3 = h @ _t2` is read for its shape only (sum_grad), its tangent by nothing
    source = srcgrad.hvp(layer, jit=False).source
    assert "matmul_jvp(" not in source and "= h @ " in source, source


def test_second_order_in_a_new_process_from_the_disk_cache(tmp_path):
    script = tmp_path / "second.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        import srcgrad

        def cube_sum(x):
            y = x ** 3
            return np.sum(y * x)

        x = np.array([1.0, 2.0])
        print(srcgrad.grad(cube_sum, jit=False)(x).tolist(),
              srcgrad.hvp(cube_sum, jit=False)(x, np.ones(2)).tolist())
        assert "second.py:5" in srcgrad.hvp(cube_sum, jit=False).source
        """))
    env = {**os.environ, "SRCGRAD_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([os.path.dirname(os.path.dirname(srcgrad.__file__)),
                                          os.environ.get("PYTHONPATH", "")])}
    runs = [subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                           text=True, timeout=120) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
        assert run.stdout.split() == ["[4.0,", "32.0]", "[12.0,", "48.0]"], run.stdout
    assert any(p.suffix == ".py" for p in (tmp_path / "cache").iterdir())


def past_the_end(x):
    y = x ** 3
    return np.sum(y[np.arange(4)] * x[0])


def test_an_error_in_second_order_code_names_the_users_line(rng):
    # an index out of bounds, raised by the hvp's generated code, is noted with the user's
    # file and line (as a first-order gradient's is)
    with pytest.raises(IndexError) as info:
        srcgrad.hvp(past_the_end, jit=False)(np.ones(3), np.ones(3))
    # (a note from Python 3.11; before, a line of the message)
    notes = " ".join([*getattr(info.value, "__notes__", []), str(info.value)])
    line = line_of(past_the_end, "return")
    assert f"of {HERE}:{line}: return np.sum(y[np.arange(4)] * x[0])" in notes, notes
