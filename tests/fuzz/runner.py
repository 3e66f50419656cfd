"""Runs generated programs and checks srcgrad against central differences.

For one seed: write the program to a file (srcgrad reads source), import it, draw the
inputs, and check `grad` (every float argument) against central differences, `jvp` along a
random direction against <differences, v>, the values against the primal, and that the
caller's arrays are bit-identical after each call. Outcomes: "ok", "refused" (a
SrcgradError: fine), "discarded" (not finite, an intermediate value that overflows or is so large
that float64 cancels what follows, or the differences are ill-conditioned: a kink near the
point), "wrong" and "crashed"
(failures).
"""

from __future__ import annotations

import importlib.util
import itertools
import re
import sys
import tempfile
import traceback
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import srcgrad
from srcgrad.checks import numerical_grad

from .grammar import Grammar

RTOL, ATOL = 1e-4, 1e-6   # against differences at h = 1e-6 (error ~ 1e-9 relative)
# A local past this magnitude, in programs whose inputs are O(1), makes products of order
# its square, whose rounding error (1e-16 relative) can exceed the O(1) values they are
# combined with: a cancellation can make the primal as computed flat where its mathematics
# is not (fuzz seed 9991072: x1 reaches 2e9, and det(2I + 0.2 v v^T) of v = (x1, x1)
# computes as 0.0).
HUGE = 1e8


@dataclass
class Outcome:
    seed: int
    kind: str            # ok | refused | discarded | wrong | crashed
    source: str
    detail: str = ""     # the mismatch, the traceback, or the refusal's construct


def make_inputs(seed: int, specs: list) -> list:
    rng = np.random.default_rng([seed, 1])
    args = []
    for spec in specs:
        if spec == "int":
            args.append(int(rng.integers(1, 4)))
        elif spec == ():
            args.append(float(np.round(rng.normal(), 3)))
        else:
            args.append(rng.normal(size=spec))
    return args


_modules = itertools.count()


def load(source: str, seed: int, directory: Path):
    name = f"srcgrad_fuzz_{seed}_{next(_modules)}"    # a new file: no stale source
    path = directory / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.f


def construct(error: Exception) -> str:
    """The refused construct: the error's class and first line, without locations."""
    text = str(error).splitlines()[0] if str(error) else ""
    numba = re.search(r"No implementation of function Function\(<(?:built-in )?function (\w+)"
                      r"|Unknown attribute '\w+'|Cannot unify[^\n]*", str(error))
    if text.startswith("numba cannot compile") and numba:
        text = "numba cannot compile: " + (numba.group(1) or numba.group(0))
    text = re.sub(r"\S+\.py:\d+:?", "", text)
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'...'", text)
    text = re.sub(r"\d+", "N", text)
    return f"{type(error).__name__}: {text.strip()[:90]}"


def copies(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def unchanged(before, after) -> bool:
    return all(type(a) is type(b) and (np.array_equal(a, b, equal_nan=True)
                                       if isinstance(a, np.ndarray) else a == b)
               for a, b in zip(before, after, strict=True))


def close(got, want) -> bool:
    scale = max(1.0, float(np.max(np.abs(want))) if np.size(want) else 1.0)
    return np.shape(got) == np.shape(want) and bool(
        np.allclose(got, want, rtol=RTOL, atol=ATOL * scale))


def largest_intermediate(f, args) -> float:
    """The largest magnitude any float local of `f`'s frame takes while `f` runs on `args`
    (read at every line event, so it sees the values the primal computes on the way)."""
    code, largest = f.__code__, 0.0

    def measure(value):
        nonlocal largest
        if isinstance(value, (list, tuple)):
            for item in value:
                measure(item)
        elif isinstance(value, (float, np.floating, np.ndarray)) and np.size(value):
            with np.errstate(all="ignore"):
                largest = max(largest, float(np.nanmax(np.abs(value))))

    def trace(frame, event, arg):
        if frame.f_code is not code:
            return None
        if event in ("line", "return"):
            for value in frame.f_locals.values():
                measure(value)
        return trace

    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        f(*copies(args))
    finally:
        sys.settrace(previous)
    return largest


def tangent_overflows(f, wrt, args, v) -> bool:
    """Whether an intermediate's tangent leaves the float range in the Python form of
    jvp(f): then an inf times a derivative of 0 (a saturated tanh) is nan, in any forward
    mode, while the differences (and reverse mode) see 0 (fuzz seed 3401160)."""
    try:
        with np.errstate(all="ignore", over="raise"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            srcgrad.jvp(f, wrt=wrt, jit=False)(*copies(args), v)
    except FloatingPointError:
        return True
    return False


def check(seed: int, jit: bool, directory: Path, source: str | None = None,
          repeats: bool = True) -> Outcome:
    """Check program `seed` (or `source`, a variant of it with the same arguments)."""
    generated, specs = Grammar(seed, repeats).program()
    source = source or generated
    try:
        f = load(source, seed, directory)
    except Exception:   # a generator bug, not srcgrad's
        return Outcome(seed, "discarded", source, traceback.format_exc())
    args = make_inputs(seed, specs)
    floats = [k for k, s in enumerate(specs) if s != "int"]

    def primal(*xs):
        return f(*copies(xs))     # the primal may write into its arguments

    try:
        with np.errstate(all="ignore", over="raise"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = float(primal(*args))   # an overflow on the way (exp(756)) discards it
            largest = largest_intermediate(f, args)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fd = [numerical_grad(primal, args, k, h=1e-6) for k in floats]
            coarse = [numerical_grad(primal, args, k, h=1e-4) for k in floats]
    except Exception:
        return Outcome(seed, "discarded", source, traceback.format_exc())
    if largest > HUGE:
        return Outcome(seed, "discarded", source, f"an intermediate reaches {largest:.3g}")
    if not (np.isfinite(value) and abs(value) < 1e6 and all(np.all(np.isfinite(g)) for g in fd)
            and all(close(a, b) for a, b in zip(fd, coarse, strict=True))):
        return Outcome(seed, "discarded", source, "not finite or ill-conditioned")

    wrt = tuple(f"x{k}" for k in floats)
    inputs = f"inputs: make_inputs({seed}, {specs}) = {args!r}"
    before = copies(args)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", srcgrad.errors.JitFallbackWarning)
            got = srcgrad.grad(f, wrt=wrt, jit=jit)(*args)
            if not unchanged(before, args):
                return Outcome(seed, "wrong", source, f"grad changed the caller's arguments\n"
                               f"{inputs}\nafter: {args!r}")
            for name, g, want in zip(wrt, got, fd, strict=True):
                if not close(g, want):
                    return Outcome(seed, "wrong", source, f"grad wrt {name}\n{inputs}\n"
                                   f"  srcgrad: {g!r}\n  differences: {want!r}")
            rng = np.random.default_rng([seed, 2])
            v = tuple(rng.normal(size=np.shape(args[k])) if specs[k] else float(rng.normal())
                      for k in floats)
            value_jvp, slope = srcgrad.jvp(f, wrt=wrt, jit=jit)(*args, v)
            if not unchanged(before, args):
                return Outcome(seed, "wrong", source, f"jvp changed the caller's arguments\n"
                               f"{inputs}\nafter: {args!r}")
            want = sum(float(np.vdot(g, t)) for g, t in zip(fd, v, strict=True))
            if not np.all(np.isfinite(slope)) and tangent_overflows(f, wrt, args, v):
                return Outcome(seed, "discarded", source, "a tangent overflows")
            if not close(value_jvp, value) or not close(slope, want):
                return Outcome(seed, "wrong", source, f"jvp along v = {v!r}\n{inputs}\n"
                               f"  srcgrad: {(value_jvp, slope)!r}\n"
                               f"  primal and <differences, v>: {(value, want)!r}")
    except srcgrad.SrcgradError as error:
        return Outcome(seed, "refused", source, construct(error))
    except Exception:
        return Outcome(seed, "crashed", source, f"{inputs}\n{traceback.format_exc()}")
    return Outcome(seed, "ok", source)


def run(seeds, jit: bool, report=print, shrinking=False,
        repeats=True) -> dict[str, list[Outcome]]:
    """Check each seed; returns the outcomes by kind (and reports failures, shrunk)."""
    results: dict[str, list[Outcome]] = {k: [] for k in
                                         ("ok", "refused", "discarded", "wrong", "crashed")}
    with tempfile.TemporaryDirectory(prefix="srcgrad-fuzz-") as directory:
        sys.path.insert(0, directory)
        try:
            for seed in seeds:
                outcome = check(seed, jit, Path(directory), repeats=repeats)
                results[outcome.kind].append(outcome)
                if report and outcome.kind in ("wrong", "crashed"):
                    report(describe(outcome))
                    if shrinking:
                        report(describe(shrink(outcome, jit, Path(directory)), "SHRUNK"))
                for name in [m for m in sys.modules if m.startswith("srcgrad_fuzz_")]:
                    del sys.modules[name]
        finally:
            sys.path.remove(directory)
    return results


def failure_class(outcome: Outcome) -> str:
    """What a shrunk program must keep: the kind, and the exception or the failed check."""
    lines = outcome.detail.strip().splitlines()
    if outcome.kind == "crashed":
        return "crashed: " + lines[-1].split(":")[0]
    return f"{outcome.kind}: {' '.join(lines[0].split()[:2]) if lines else ''}"


def shrink(outcome: Outcome, jit: bool, directory: Path) -> Outcome:
    """Delete statements (with their blocks) while the program fails the same way."""
    want = failure_class(outcome)
    lines = outcome.source.splitlines()
    k = 0
    while k < len(lines):
        line = lines[k]
        depth = len(line) - len(line.lstrip())
        end = k + 1
        while end < len(lines) and (not lines[end].strip()
                                    or len(lines[end]) - len(lines[end].lstrip()) > depth):
            end += 1
        if depth == 0 and not line.startswith("def ") or \
                line.lstrip().startswith(("def f(", "def loss(")):
            k += 1
            continue
        candidate = lines[:k] + lines[end:]
        shrunk = check(outcome.seed, jit, directory, "\n".join(candidate) + "\n")
        if failure_class(shrunk) == want:
            lines, outcome = candidate, shrunk
        else:
            k += 1
    return outcome


def describe(outcome: Outcome, title: str | None = None) -> str:
    return (f"==== seed {outcome.seed}: {title or outcome.kind.upper()}\n{outcome.source}\n"
            f"{outcome.detail}\n")


# Constructs the summary counts outcomes of, by a string of their source.
MARKERS = {"a method": "class Model:", "a list built in a loop": ".append(",
           "a double buffer": " = buf", "a dict written into": "{'a': ",
           "functools.reduce": "functools.reduce(", "an itertools loop": " in itertools.",
           "a starred target": ", *rest", "a function value": "else np.tanh"}


def summary(results: dict[str, list[Outcome]]) -> str:
    total = sum(len(v) for v in results.values())
    lines = [f"programs: {total}"] + [f"{kind}: {len(results[kind])}" for kind in results]
    for construct, marker in MARKERS.items():
        counts = {k: sum(marker in o.source for o in v) for k, v in results.items()}
        lines.append(f"  with {construct}: " + ", ".join(f"{k} {c}" for k, c in counts.items()))
    constructs: dict[str, int] = {}
    for outcome in results["refused"]:
        constructs[outcome.detail] = constructs.get(outcome.detail, 0) + 1
    lines += [f"  refused {count}x  {text}" for text, count in
              sorted(constructs.items(), key=lambda item: -item[1])]
    return "\n".join(lines)
