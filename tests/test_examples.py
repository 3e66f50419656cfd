"""Every script in examples/ runs to the end (each asserts its own claims), and so does
every notebook there."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent.parent / "examples"
EXAMPLES = sorted(HERE.glob("*.py"))
NOTEBOOKS = sorted(HERE.glob("*.ipynb"))
# scripts that need an extra (`pip install srcgrad[distributed]`), by the module they import
NEEDS = {"distributed_gradient.py": "distributed"}


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(script):
    if script.name in NEEDS and importlib.util.find_spec(NEEDS[script.name]) is None:
        pytest.skip(f"needs {NEEDS[script.name]} (the `distributed` extra)")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=600, cwd=script.parent.parent)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(notebook):
    # in a real kernel, as Jupyter runs it (the `notebook` extra: nbclient and ipykernel)
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.read(notebook, as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(notebook.parent)}}).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    html = [o.data["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert any("grad of line" in text for text in html)     # g.source, highlighted
