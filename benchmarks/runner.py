"""Run every contender of each workload, check its result, time it, print the tables.

Each contender is checked against the reference of its kind before it is timed: a primal
against the NumPy primal, a gradient against the hand-written numba adjoint
(``np.allclose``, rtol 1e-6). A contender that fails gets its error in its row and the run
goes on. Timings are medians of samples taken round-robin over the contenders, so that
the noise of a shared machine hits them all alike.

JAX's naive row traces the workload's Python loop, unrolled: for long loops its first call
may not finish in any reasonable time. So the first call of each JAX row is first timed in
a fresh process, with a time limit (``JAX_FIRST_CALL_TIMEOUT``); a row whose first call did
not finish there, or failed, is not built in this process, and its note says why.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import timeit
import types
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numba
import numpy as np
from numba.core.errors import NumbaError

from benchmarks import first_line, workloads

RTOL = 1e-6
BATCH_SECONDS = 0.02  # one timed sample: as many calls of a contender as fill this
WARMUP_CALLS = 3      # untimed calls of each contender before its batch size is chosen
COLDSTART_TIMEOUT = 600
JAX_FIRST_CALL_TIMEOUT = 60  # s; DESIGN section 6 quotes JAX's unrolled loops against 60 s
ROOT = Path(__file__).resolve().parent.parent

# DESIGN section 6: srcgrad <= 1.15x the hand numba adjoint, < JAX, <= 3x the faster
# primal; first call no slower than numba compiling the primal; a second process well
# under 0.5 s.
MAX_VS_HAND, MAX_VS_JAX, MAX_VS_PRIMAL, MAX_VS_COMPILE, MAX_RELOAD = 1.15, 1.0, 3.0, 1.0, 0.5

BASES = ("numba primal", "numpy primal", "hand numba adjoint")
JAX_ROWS = ("jax.jit(jax.grad)", "jax.jit(jax.grad) lax")
NAME_WIDTH = 22


class NotInstalled(Exception):
    pass


class NotRun(Exception):
    """A contender deliberately not built; the message is its row's note."""


@dataclass
class Row:
    name: str
    call: Callable[[], object] | None = None  # one call on the workload's arguments
    note: str = ""
    ms: float | None = None


def run(names: list[str], repeat: int, only: list[str] | None = None) -> None:
    """`only`: run just the contenders whose names contain one of these (and the hand numba
    adjoint, the reference), and of the first calls in fresh processes only the naive JAX
    row's, if it is run (it decides whether that row is built)."""
    print(_versions())
    summary = []
    for name in names:
        w = workloads.load(name)
        args = w.inputs(np.random.default_rng(workloads.SEED))
        print(f"\n== {name}: {w.DESCRIPTION}")
        # first: it decides whether the naive JAX row is built
        cold = _coldstarts(name, w, None if only is None else _fresh_kinds(only))
        contenders = [c for c in _contenders(w, cold) if _chosen(c[0], only)]
        rows = _check(name, contenders, args)
        _measure(rows, repeat)
        _print_table(rows)
        if "cold" in cold:
            _print_coldstarts(cold)
        summary.append((name, {r.name: r for r in rows}, cold))
    _print_summary(summary)


def _chosen(contender: str, only: list[str] | None) -> bool:
    return only is None or contender == BASES[2] or any(part in contender for part in only)


def _fresh_kinds(only: list[str]) -> tuple[str, ...]:
    """The first calls in fresh processes that `--only` needs: the naive JAX row's, where
    that row is chosen (its unrolled loops may fill the memory: pendulum_rk4)."""
    return ("jax",) if _chosen(JAX_ROWS[0], only) else ()


# ---- contenders ----

def _contenders(w, cold: dict) -> list[tuple[str, str, Callable[[tuple], Callable[[], object]]]]:
    """(name, kind, build) per contender; build(args) returns the call to check and time.
    The first contender of a kind that works is the reference for the others. ``cold`` holds
    the first-call times measured in fresh processes (see _coldstarts)."""
    contenders = [
        ("numpy primal", "primal", lambda args: partial(workloads.plain_primal(w), *args)),
        ("numba primal", "primal",
         lambda args: partial(numba.njit(workloads.plain_primal(w)), *args)),
        ("hand numba adjoint", "grad", lambda args: partial(w.hand_numba, *args)),
        ("hand numpy adjoint", "grad", lambda args: partial(w.hand_numpy, *args)),
        ("srcgrad grad", "grad", lambda args: _srcgrad(w, args)),
        (JAX_ROWS[0], "grad", lambda args: _jax(w, args, False, cold.get("jax"))),
        ("autograd grad", "grad", lambda args: _autograd(w, args)),
    ]
    if hasattr(w, "jax_primal"):
        contenders.insert(-1, (JAX_ROWS[1], "grad", lambda args: _jax(w, args, True, None)))
    return contenders


def _srcgrad(w, args):
    import srcgrad
    # compiled before timing (else the warm-up may time the Python form while the compile
    # runs in the background); jit="auto" then keeps whichever form is faster
    return partial(srcgrad.grad(w.primal, wrt=w.WRT).compile(*args), *args)


def _jax(w, args, use_lax: bool, first_call: float | str | None):
    """The JAX row's call; unless ``first_call`` (its time in a fresh process) is None, the
    row is only built when that first call finished in time."""
    jax = _require("jax")
    if not use_lax:
        _check_rebind(w)
    if isinstance(first_call, str):
        raise NotRun(first_call.removeprefix("error: ") if first_call.startswith("error: ")
                     else f"first call (trace + compile), fresh process: {first_call}; not timed")
    g, jargs = jax_grad(w, args, use_lax)
    return lambda: jax.block_until_ready(g(*jargs))


def jax_grad(w, args, use_lax: bool):
    """``jax.jit(jax.grad(f, argnums=WRT))`` and the arguments on the device (once, as a JAX
    user would), not yet called. ``f`` is ``primal`` with ``np`` rebound to ``jax.numpy``
    (its Python loops unroll), or with ``use_lax``, the workload's ``jax_primal(jnp, lax)``."""
    jax = _require("jax")
    jax.config.update("jax_enable_x64", True)
    f = w.jax_primal(jax.numpy, jax.lax) if use_lax else _rebind(w.primal, jax.numpy)
    return jax.jit(jax.grad(f, argnums=w.WRT)), [jax.numpy.asarray(a) for a in args]


def _autograd(w, args):
    """``autograd.grad`` of ``primal`` with ``np`` rebound to ``autograd.numpy``, or of the
    workload's ``autograd_primal(autograd.numpy)``."""
    autograd = _require("autograd")
    anp = _require("autograd.numpy")
    if hasattr(w, "autograd_primal"):
        f = w.autograd_primal(anp)
    else:
        _check_rebind(w)
        f = _rebind(w.primal, anp)
    return partial(autograd.grad(f, w.WRT), *args)


def _check_rebind(w) -> None:
    """A workload whose ``primal`` means a gradient that rebinding ``np`` loses (srcgrad
    annotations) says why in ``NO_REBIND``: the rows that would rebind are not run."""
    if getattr(w, "NO_REBIND", None):
        raise NotRun(f"not run: {w.NO_REBIND}")


def _require(module: str) -> types.ModuleType:
    if importlib.util.find_spec(module.partition(".")[0]) is None:
        raise NotInstalled
    return importlib.import_module(module)


def _rebind(f: types.FunctionType, np_module: types.ModuleType) -> types.FunctionType:
    """`f` with the global `np` it calls replaced by `np_module` (jax.numpy, autograd.numpy)."""
    return types.FunctionType(f.__code__, {**f.__globals__, "np": np_module}, f.__name__,
                              f.__defaults__, f.__closure__)


# ---- checking and timing ----

def _check(workload: str, contenders, args: tuple) -> list[Row]:
    """A row per contender: its call if it ran, else the error; a mismatch is shouted. Each
    contender gets its own copy of the arguments, so one that writes into them spoils no other."""
    rows, refs = [], {}
    for name, kind, build in contenders:
        row = Row(name)
        try:
            call = build(tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args))
            out = call()  # also the compile, for the jitted contenders
            out = tuple(np.asarray(a) for a in (out if isinstance(out, (tuple, list)) else (out,)))
            row.note = _mismatch(out, refs.setdefault(kind, out))
        except NotInstalled:
            row.note = "not installed"
        except NotRun as e:
            row.note = str(e)
        except Exception as e:
            row.note = ("does not compile: " if isinstance(e, NumbaError) else "") + first_line(e)
        else:
            row.call = call
            if row.note:
                print(f"!!! MISMATCH !!! {workload} / {name}: {row.note}")
        rows.append(row)
    return rows


def _mismatch(out: tuple, ref: tuple) -> str:
    if len(out) != len(ref):
        return f"MISMATCH: {len(out)} results, expected {len(ref)}"
    for i, (a, b) in enumerate(zip(out, ref, strict=True)):
        if a.shape != b.shape:
            return f"MISMATCH: result {i} has shape {a.shape}, expected {b.shape}"
        if not np.allclose(a, b, rtol=RTOL):
            return f"MISMATCH: result {i}, max abs error {np.max(np.abs(a - b)):.3g}"
    return ""


def _measure(rows: list[Row], repeat: int) -> None:
    """Set each working row's median ms per call, sampling the rows round-robin."""
    timed = [r for r in rows if r.call]
    timers = [timeit.Timer(r.call) for r in timed]
    numbers = []
    for t in timers:
        # warm-up first: a tiered contender (srcgrad's jit="auto" on straight-line code)
        # compiles on its second call, which autorange would time as the time per call
        # (seconds), leaving that row one call per sample, each after the other rows
        # have run
        t.timeit(WARMUP_CALLS)
        n, seconds = t.autorange()  # the time per call
        numbers.append(max(1, round(BATCH_SECONDS * n / seconds)))
    samples = [[] for _ in timed]
    for _ in range(repeat):
        for t, n, s in zip(timers, numbers, samples, strict=True):
            s.append(t.timeit(n) / n)
    for r, s in zip(timed, samples, strict=True):
        r.ms = 1e3 * statistics.median(s)


def _coldstarts(workload: str, w, only: tuple[str, ...] | None = None) -> dict[str, float | str]:
    """Seconds of the first call, each in a fresh process: numba compiling the (plain) primal,
    srcgrad twice on one empty cache directory (cold, then reusing what the first wrote), and
    each JAX row that is run (trace + compile + run; within JAX_FIRST_CALL_TIMEOUT); with
    `only`, just the first calls it names."""
    kinds = [("numba", "numba", COLDSTART_TIMEOUT), ("cold", "srcgrad", COLDSTART_TIMEOUT),
             ("warm", "srcgrad", COLDSTART_TIMEOUT)]
    if not getattr(w, "NO_REBIND", None):  # else the naive JAX row is not run (_check_rebind)
        kinds.append(("jax", "jax", JAX_FIRST_CALL_TIMEOUT))
    if hasattr(w, "jax_primal"):
        kinds.append(("jax lax", "jax-lax", JAX_FIRST_CALL_TIMEOUT))
    kinds = [k for k in kinds if only is None or k[0] in only]
    if not kinds:
        return {}
    with tempfile.TemporaryDirectory(prefix="srcgrad-bench-") as cache:
        env = {**os.environ, "SRCGRAD_CACHE_DIR": cache, "NUMBA_CACHE_DIR": cache,
               "XDG_CACHE_HOME": cache}
        return {key: _coldstart(workload, kind, env, timeout) for key, kind, timeout in kinds}


def _coldstart(workload: str, kind: str, env: dict, timeout: float) -> float | str:
    try:
        proc = subprocess.run([sys.executable, "-m", "benchmarks.coldstart", workload, kind],
                              cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"did not finish in {timeout} s"
    last = (proc.stdout.strip() or proc.stderr.strip() or "no output").splitlines()[-1]
    try:
        return float(last)
    except ValueError:
        return last


# ---- printing ----

def _versions() -> str:
    def version(dist):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"

    threads = os.environ.get("OMP_NUM_THREADS", "default")
    cpu = platform.processor() or platform.machine()
    return (f"python {platform.python_version()}, numpy {np.__version__}, "
            f"numba {numba.__version__}, jax {version('jax')} (jaxlib {version('jaxlib')}, CPU), "
            f"autograd {version('autograd')}, srcgrad {version('srcgrad')}; "
            f"{threads} thread(s), {cpu}, {os.cpu_count()} CPUs\n"
            f"times are medians of per-call means over round-robin samples of "
            f"~{1e3 * BATCH_SECONDS:.0f} ms; ratios are this row's time / the column's")


def _print_table(rows: list[Row]) -> None:
    base = {**dict.fromkeys(BASES), **{r.name: r.ms for r in rows}}
    print(f"{'contender':<{NAME_WIDTH}} {'ms/call':>9} {'/numba primal':>14} "
          f"{'/numpy primal':>14} {'/hand numba':>12}")
    for r in rows:
        if r.ms is None:
            print(f"{r.name:<{NAME_WIDTH}} {'-':>9}   {r.note}")
            continue
        ratios = [f"{r.ms / base[b]:.2f}x" if base[b] else "-" for b in BASES]
        print(f"{r.name:<{NAME_WIDTH}} {r.ms:>9.3f} {ratios[0]:>14} {ratios[1]:>14} {ratios[2]:>12}"
              + (f"   {r.note}" if r.note else ""))


def _seconds(value: float | str) -> str:
    return f"{value:.2f} s" if isinstance(value, float) else value


def _print_coldstarts(cold: dict) -> None:
    print(f"first call, fresh process:  srcgrad transform + compile  {_seconds(cold['cold'])}\n"
          f"                            numba compiling the primal   {_seconds(cold['numba'])}")
    for key, row in zip(("jax", "jax lax"), JAX_ROWS, strict=True):
        if key in cold:
            print(f"{'':<28}{row:<29}{_seconds(cold[key])}")
    print(f"second fresh process:       srcgrad from its disk cache  {_seconds(cold['warm'])}")


def _verdict(value: float | None, limit: float, strict: bool = False, unit: str = "x") -> str:
    if value is None:
        return "-"
    met = value < limit if strict else value <= limit
    return f"{value:.2f}{unit} {'ok' if met else 'MISSED'}"


def _print_summary(summary) -> None:
    print(f"\n== summary (DESIGN section 6 targets: srcgrad <= {MAX_VS_HAND}x hand numba adjoint, "
          f"< the faster JAX row, <= {MAX_VS_PRIMAL:.0f}x faster primal, "
          f"first call <= numba compile, second process < {MAX_RELOAD} s)")
    print(f"{'workload':<16} {'srcgrad/hand':>14} {'srcgrad/JAX':>14} {'srcgrad/primal':>15} "
          f"{'1st call/compile':>17} {'2nd process':>14}")
    for name, rows, cold in summary:
        sg = rows.get("srcgrad grad", Row("srcgrad grad", note="not run"))
        if sg.ms is None or sg.note:
            print(f"{name:<16} srcgrad: {sg.note}")
            continue
        primals = [rows[p].ms for p in ("numba primal", "numpy primal")
                   if p in rows and rows[p].ms]
        hand = rows["hand numba adjoint"].ms
        # against the faster JAX row that ran and agreed with the reference
        jax = [rows[k].ms for k in JAX_ROWS if k in rows and rows[k].ms and not rows[k].note]
        ratio = {"hand": sg.ms / hand if hand else None,
                 "jax": sg.ms / min(jax) if jax else None}
        compile_ratio = (cold["cold"] / cold["numba"]
                         if all(isinstance(cold.get(k), float) for k in ("cold", "numba"))
                         else None)
        reload = cold["warm"] if isinstance(cold.get("warm"), float) else None
        print(f"{name:<16} {_verdict(ratio['hand'], MAX_VS_HAND):>14} "
              f"{_verdict(ratio['jax'], MAX_VS_JAX, strict=True):>14} "
              f"{_verdict(sg.ms / min(primals) if primals else None, MAX_VS_PRIMAL):>15} "
              f"{_verdict(compile_ratio, MAX_VS_COMPILE):>17} "
              f"{_verdict(reload, MAX_RELOAD, strict=True, unit=' s'):>14}")
