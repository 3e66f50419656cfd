"""The command line: `python -m srcgrad show path/to/file.py:func [--wrt a,b]`.

Prints the generated gradient source of one function, as a user would paste it into a
bug report; a srcgrad error prints its message (with file:line) and exits with status 1.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path


def _load(target: str):
    path, _, func = target.rpartition(":")
    if not path or not func:
        raise SystemExit(f"srcgrad: expected path/to/file.py:function, got {target!r}")
    file = Path(path)
    if not file.is_file():
        raise SystemExit(f"srcgrad: no such file: {path}")
    spec = importlib.util.spec_from_file_location(file.stem, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(file.stem, module)
    sys.path.insert(0, str(file.parent.resolve()))
    spec.loader.exec_module(module)
    if not hasattr(module, func):
        raise SystemExit(f"srcgrad: {path} defines no {func!r}")
    return getattr(module, func)


def main(argv: list[str] | None = None) -> int:
    from . import SrcgradError, source

    parser = argparse.ArgumentParser(prog="python -m srcgrad",
                                     description="Print srcgrad's generated gradient code.")
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print the generated gradient source of a function")
    show.add_argument("target", help="path/to/file.py:function")
    show.add_argument("--wrt", default="0",
                      help="comma-separated parameter names or positions (default: 0)")
    args = parser.parse_args(argv)
    fun = _load(args.target)
    wrt = tuple(int(w) if w.strip().lstrip("-").isdigit() else w.strip()
                for w in args.wrt.split(","))
    try:
        print(source(fun, wrt=wrt if len(wrt) > 1 else wrt[0]), end="")
    except SrcgradError as exc:
        print(f"srcgrad.{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
