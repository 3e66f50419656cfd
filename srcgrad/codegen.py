"""codegen: gast module -> readable Python source -> a loaded module.

Requires a gast Module of generated functions whose comment statements came from
`builder.comment`. `to_source` prints it with astor and turns those statements into
`# ...` comments. `load` writes the source to a file named by its content hash under the
srcgrad cache directory (`SRCGRAD_CACHE_DIR`, default `~/.cache/srcgrad`) and executes it
with the given globals. A real file is what lets tracebacks show the generated line and
lets numba's `cache=True` reuse compiled code in the next process; the file is a cache
entry, written once, never a temporary left behind.
"""

from __future__ import annotations

import hashlib
import os
import re
import types
from pathlib import Path
from typing import Any

import astor
import gast

from .builder import COMMENT_MARK

_COMMENT = re.compile(r"^(\s*)(\"\"\"|'''|['\"])" + re.escape(COMMENT_MARK) + r"(.*)\2\s*$")


def to_source(module: gast.Module) -> str:
    """Python source of `module`, with comment markers printed as comments."""
    text = astor.to_source(gast.gast_to_ast(module))
    lines = []
    for line in text.splitlines():
        m = _COMMENT.match(line)
        if m:
            body = m.group(3).encode().decode("unicode_escape")
            line = f"{m.group(1)}# {body}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def cache_dir() -> Path:
    root = os.environ.get("SRCGRAD_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "srcgrad")
    return Path(root)


def load(source: str, namespace: dict[str, Any], stem: str) -> types.ModuleType:
    """Execute `source` from its cache file with `namespace` as its globals."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    path = cache_dir() / f"{stem}_{digest}.py"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(source)
        os.replace(tmp, path)  # atomic: parallel processes never see half a file
    module = types.ModuleType(f"srcgrad_generated.{path.stem}")
    module.__file__ = str(path)
    module.__dict__.update(namespace)
    exec(compile(source, str(path), "exec"), module.__dict__)
    return module
