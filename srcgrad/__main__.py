"""The command line.

`python -m srcgrad show path/to/file.py:func [--wrt a,b] [--forward | --hvp]
[--static n=3,...]` prints the generated source of one function's gradient (its jvp with
`--forward`, its Hessian-vector product with `--hvp`; specialised on the values of
`--static` arguments, loops over them unrolled), as a user would paste it into a bug
report. `python -m srcgrad cache info` says where the disk cache is, how many entries it
holds and their size; `cache clear` empties it.
`python -m srcgrad compile path/to/file.py:func --args "np.ones(3), 2.0" [--wrt a,b]`
compiles its gradient for arguments of those types (an expression evaluated in the file's
namespace, with `np`), filling the disk caches, as a service would at start: its compiled
form, and the compiled loops of its Python form (`jit="auto"` may answer with either); it
prints the seconds it took; code numba cannot compile is an error. A srcgrad error prints
its message (with file:line) and exits with status 1.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import inspect
import sys
import time
import warnings
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


def _static(text: str) -> dict[str, object]:
    """`n=3,k=2` as {"n": 3, "k": 2} (values are Python literals)."""
    out = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, eq, value = part.partition("=")
        try:
            out[name.strip()] = ast.literal_eval(value.strip()) if eq else None
        except (ValueError, SyntaxError):
            raise SystemExit(f"srcgrad: --static takes name=value pairs of Python literals, "
                             f"got {part!r}") from None
        if not eq:
            raise SystemExit(f"srcgrad: --static takes name=value pairs, got {part!r}")
    return out


def _cache(action: str) -> int:
    from . import codegen
    from .backend import cache

    root = codegen.cache_dir()
    if action == "clear":
        print(f"removed {cache.clear(root)} entries from {root}")
        return 0
    found = cache.entries(root)
    print(f"location: {root}\nentries:  {len(found)}\n"
          f"size:     {sum(e.size for e in found) / 2 ** 20:.1f} MB "
          f"(bound: {cache.limit_bytes() / 2 ** 20:.0f} MB, SRCGRAD_CACHE_LIMIT_MB)")
    return 0


def main(argv: list[str] | None = None) -> int:
    from . import JitFallbackWarning, SrcgradError, grad, hvp, jvp

    parser = argparse.ArgumentParser(prog="python -m srcgrad",
                                     description="Print or compile srcgrad's gradient code.")
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("show", help="print the generated gradient source of a function")
    build = sub.add_parser("compile", help="compile the gradient of a function now, for "
                                           "arguments of given types (fills the disk caches)")
    build.add_argument("--args", required=True,
                       help="example arguments, a Python expression in the file's namespace "
                            "(with np), e.g. \"np.ones(3), 2.0\"")
    mode = show.add_mutually_exclusive_group()
    mode.add_argument("--forward", "--jvp", action="store_true",
                      help="the jvp (forward mode)")
    mode.add_argument("--hvp", action="store_true", help="the Hessian-vector product")
    show.add_argument("--static", default="",
                      help="name=value,... of static arguments: the source specialised on "
                           "them (loops over them unrolled)")
    store = sub.add_parser("cache", help="the disk cache of generated code")
    store.add_argument("action", choices=["info", "clear"])
    for command in (show, build):
        command.add_argument("target", help="path/to/file.py:function")
        command.add_argument("--wrt", default="0",
                             help="comma-separated parameter names or positions (default: 0)")
    args = parser.parse_args(argv)
    if args.command == "cache":
        return _cache(args.action)
    fun = _load(args.target)
    wrt = tuple(int(w) if w.strip().lstrip("-").isdigit() else w.strip()
                for w in args.wrt.split(","))
    wrt = wrt if len(wrt) > 1 else wrt[0]
    try:
        if args.command == "show":
            transform = jvp if args.forward else hvp if args.hvp else grad
            static = _static(args.static)
            g = transform(fun, wrt=wrt, static=tuple(static))
            if static:
                params = list(inspect.signature(fun).parameters)
                missing = sorted(set(static) - set(params))
                if missing:
                    raise SystemExit(f"srcgrad: --static names no parameter of "
                                     f"{fun.__qualname__}: {', '.join(missing)}")
                g = g.specialized(tuple(static.get(p) for p in params))
            print(g.source, end="")
            return 0
        import numpy as np
        example = eval(args.args, {"np": np, **fun.__globals__})  # noqa: S307
        example = example if isinstance(example, tuple) else (example,)
        start = time.perf_counter()
        with warnings.catch_warnings():   # (jit="auto", as a service calls it: all its forms)
            warnings.simplefilter("error", JitFallbackWarning)
            grad(fun, wrt=wrt).compile(*example)
        print(f"compiled the gradient of {fun.__qualname__} in "
              f"{time.perf_counter() - start:.2f} s")
    except (SrcgradError, JitFallbackWarning) as exc:
        print(f"srcgrad.{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
