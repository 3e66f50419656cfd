"""Every Python snippet in the README and docs/ runs as written."""

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SNIPPETS = [(page.name, i, block)
            for page in PAGES
            for i, block in enumerate(re.findall(r"```python\n(.*?)```", page.read_text(),
                                                 re.S))]


@pytest.mark.parametrize("page,index,code", SNIPPETS,
                         ids=[f"{p}-{i}" for p, i, _ in SNIPPETS])
def test_snippet_runs(page, index, code, tmp_path, monkeypatch):
    # snippets define functions, whose source srcgrad reads: run them from a file
    path = tmp_path / f"snippet_{index}.py"
    path.write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    namespace = {"__name__": f"snippet_{index}", "__file__": str(path)}
    exec(compile(code, str(path), "exec"), namespace)


@pytest.mark.skipif(int(__import__("numpy").__version__.split(".")[0]) < 2,
                    reason="NumPy 1 names some functions by their aliases (np.amax for np.max)")
@pytest.mark.skipif(sys.version_info < (3, 11) or not hasattr(__import__("numpy"), "row_stack"),
                    reason="the page lists math.cbrt and math.exp2, which Python 3.11 added, "
                           "and np.row_stack, which NumPy 2.5 removed")
def test_supported_functions_page_is_current():
    # the page is made from the operation records: a rule added without it fails here
    from srcgrad.rules.supported import markdown
    page = (ROOT / "docs" / "supported.md").read_text()
    assert page == markdown(), "run: python -m srcgrad.rules.supported > docs/supported.md"


def test_api_reference_lists_every_public_name():
    # docs/api.md is generated from docstrings, name by name: a new public name needs a line
    import srcgrad
    listed = re.findall(r"^::: srcgrad\.(\w+)$", (ROOT / "docs" / "api.md").read_text(), re.M)
    assert sorted(listed) == sorted(srcgrad.__all__)
