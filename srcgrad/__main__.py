"""The command line.

`python -m srcgrad show path/to/file.py:func [--wrt a,b]` prints the generated gradient
source of one function, as a user would paste it into a bug report.
`python -m srcgrad compile path/to/file.py:func --args "np.ones(3), 2.0" [--wrt a,b]`
compiles its gradient for arguments of those types (an expression evaluated in the file's
namespace, with `np`), filling the disk caches, as a service would at start; it prints
the seconds it took. A srcgrad error prints its message (with file:line) and exits with
status 1.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
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
    from . import SrcgradError, grad, source

    parser = argparse.ArgumentParser(prog="python -m srcgrad",
                                     description="Print or compile srcgrad's gradient code.")
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print the generated gradient source of a function")
    build = sub.add_parser("compile", help="compile the gradient of a function now, for "
                                           "arguments of given types (fills the disk caches)")
    build.add_argument("--args", required=True,
                       help="example arguments, a Python expression in the file's namespace "
                            "(with np), e.g. \"np.ones(3), 2.0\"")
    for command in (show, build):
        command.add_argument("target", help="path/to/file.py:function")
        command.add_argument("--wrt", default="0",
                             help="comma-separated parameter names or positions (default: 0)")
    args = parser.parse_args(argv)
    fun = _load(args.target)
    wrt = tuple(int(w) if w.strip().lstrip("-").isdigit() else w.strip()
                for w in args.wrt.split(","))
    wrt = wrt if len(wrt) > 1 else wrt[0]
    try:
        if args.command == "show":
            print(source(fun, wrt=wrt), end="")
            return 0
        import numpy as np
        example = eval(args.args, {"np": np, **fun.__globals__})  # noqa: S307
        example = example if isinstance(example, tuple) else (example,)
        start = time.perf_counter()
        grad(fun, wrt=wrt, jit=True).compile(*example)
        print(f"compiled the gradient of {fun.__qualname__} in "
              f"{time.perf_counter() - start:.2f} s")
    except SrcgradError as exc:
        print(f"srcgrad.{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
