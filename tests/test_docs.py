"""Every Python snippet in the README and docs/ runs as written."""

import re
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
