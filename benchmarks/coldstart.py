"""Cold starts: what a user waits for before the gradient answers, in fresh processes.

``python -m benchmarks.coldstart [--threads N] [WORKLOAD ...]`` (N BLAS threads, 1 by
default, as ``python -m benchmarks``) prints, per workload (all by default),
for srcgrad (``jit="auto"``: Python form at once, numba compiling in the background) in a
fresh process on empty cache directories, then in a second process on what the first left
on disk, and for ``jax.jit(jax.grad)`` when JAX is installed (the workload's ``jax_primal``
if it has one, else ``primal`` with ``np`` rebound): the import time, the time to the first
result, the slowest of the first 20 calls and their total. The calls follow each other as
in a training loop. After its 20 calls, srcgrad's first process waits (off the clock) for
its background compile, so that the second finds it on disk; the table gives that wait.

``python -m benchmarks.coldstart WORKLOAD KIND`` times one first call in this fresh process
(the runner's first-call rows): KIND ``numba`` times ``numba.njit(primal)(*args)`` (numba
compiling the primal, or the workload's ``plain_primal``); ``srcgrad`` times
``srcgrad.grad(primal, wrt=WRT)(*args)`` (transform, plus the compile for code with loops,
or a load from srcgrad's on-disk cache); ``jax`` and ``jax-lax`` time the first call of the
runner's JAX rows (trace + compile + run of ``jax.jit(jax.grad(...))``). Imports, and JAX's
backend start-up, happen before the clock starts. Prints the seconds, or
``error: <first line of the exception>``.

``python -m benchmarks.coldstart --second N [WORKLOAD ...]`` times the second process alone:
per workload, one process fills a fresh cache directory (its 20 calls, then the background
compile), then N fresh processes each time ``import srcgrad`` and, after it, the first call
(numba's import, where the call needs it, included); prints the medians and the extremes.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CALLS = 20
TIMEOUT = 600          # s, one process
JAX_TIMEOUT = 120      # s: JAX's unrolled loops may not finish tracing in any reasonable time
ROOT = Path(__file__).resolve().parent.parent


def first_call(name: str, kind: str) -> None:
    import numba
    import numpy as np

    from benchmarks import first_line, workloads

    w = workloads.load(name)
    args = w.inputs(np.random.default_rng(workloads.SEED))
    try:
        if kind == "srcgrad":
            import srcgrad
        elif kind.startswith("jax"):
            import jax

            from benchmarks.runner import jax_grad
            jax.block_until_ready(jax.numpy.zeros(1))  # the backend starts off the clock
        start = time.perf_counter()
        if kind.startswith("jax"):
            g, jargs = jax_grad(w, args, use_lax=kind == "jax-lax")
            jax.block_until_ready(g(*jargs))
        else:
            fn = (numba.njit(workloads.plain_primal(w)) if kind == "numba"
                  else srcgrad.grad(w.primal, wrt=w.WRT))
            fn(*args)
        print(time.perf_counter() - start)
    except Exception as e:
        print("error:", first_line(e))


def series(name: str, kind: str) -> None:
    """Print, as JSON, the import time and the times of the first CALLS calls."""
    start = time.perf_counter()
    if kind == "srcgrad":
        import srcgrad
    else:
        import jax
    imported = time.perf_counter() - start
    import numpy as np

    from benchmarks import workloads

    w = workloads.load(name)
    args = w.inputs(np.random.default_rng(workloads.SEED))
    if kind == "srcgrad":
        g = srcgrad.grad(w.primal, wrt=w.WRT)
        call = lambda: g(*args)  # noqa: E731
    else:
        from benchmarks.runner import jax_grad

        jax.block_until_ready(jax.numpy.zeros(1))
        imported = time.perf_counter() - start   # (JAX's backend starts on first use)
        lax = hasattr(w, "jax_primal")
        g, jargs = jax_grad(w, args, use_lax=lax)
        call = lambda: jax.block_until_ready(g(*jargs))  # noqa: E731
        kind = "jax lax" if lax else "jax"
    times = []
    for _ in range(CALLS):
        t = time.perf_counter()
        call()
        times.append(time.perf_counter() - t)
    out = {"import": imported, "times": times, "kind": kind}
    if kind == "srcgrad":
        t = time.perf_counter()
        while not g.forms.settled:
            time.sleep(0.05)
        out["settled"] = time.perf_counter() - t
        out["state"] = g.state
    print(json.dumps(out))


def after_import(name: str) -> None:
    """Print, as JSON, the time of `import srcgrad` and then of the first call."""
    start = time.perf_counter()
    import srcgrad
    imported = time.perf_counter() - start   # (NumPy's import included)
    import numpy as np

    from benchmarks import workloads

    w = workloads.load(name)
    args = w.inputs(np.random.default_rng(workloads.SEED))
    start = time.perf_counter()
    srcgrad.grad(w.primal, wrt=w.WRT)(*args)
    print(json.dumps({"import": imported, "first": time.perf_counter() - start}))


def second(names: list[str], runs: int) -> None:
    from benchmarks import workloads

    print(f"second process on a warm cache, {runs} runs; seconds: median (min-max)")
    print(f"{'workload':<14} {'import srcgrad':>22} {'first call after it':>24}")
    for name in names or workloads.names():
        with tempfile.TemporaryDirectory(prefix="srcgrad-coldstart-") as cache:
            env = {**os.environ, "SRCGRAD_CACHE_DIR": cache, "NUMBA_CACHE_DIR": cache,
                   "XDG_CACHE_HOME": cache, "OMP_NUM_THREADS": "1",
                   "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
            _run(name, "srcgrad", env, TIMEOUT)
            got = [_run(name, "after-import", env, TIMEOUT) for _ in range(runs)]
        if any(isinstance(g, str) for g in got):
            print(f"{name:<14} {next(g for g in got if isinstance(g, str))}")
            continue
        cells = []
        for column in ("import", "first"):
            t = sorted(g[column] for g in got)
            cells.append(f"{statistics.median(t):.3f} ({t[0]:.3f}-{t[-1]:.3f})")
        print(f"{name:<14} {cells[0]:>22} {cells[1]:>24}")
        sys.stdout.flush()


def _run(name: str, kind: str, env: dict, timeout: float) -> dict | str:
    command = ["--after-import", name] if kind == "after-import" else ["--series", name, kind]
    try:
        proc = subprocess.run([sys.executable, "-m", "benchmarks.coldstart", *command],
                              cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"did not finish in {timeout} s"
    lines = (proc.stdout.strip() or proc.stderr.strip() or "no output").splitlines()
    try:
        return json.loads(lines[-1])
    except ValueError:
        return lines[-1][:80]


def table(names: list[str], threads: str) -> None:
    import importlib.util

    from benchmarks import workloads

    names = names or workloads.names()
    # BLAS pools sized as `python -m benchmarks` sizes them (not pinned to one core: the
    # background compile has the other); an oversubscribed OpenBLAS pool makes a 0.6 ms
    # NumPy gradient take 100+ ms on a busy machine
    base = {**os.environ, **{v: threads for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                                    "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")}}
    if threads == "1":
        base["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false"
    has_jax = importlib.util.find_spec("jax") is not None
    print(f"first {CALLS} calls in fresh processes; seconds")
    print(f"{'workload':<14} {'contender':<22} {'import':>7} {'first':>8} {'slowest':>8} "
          f"{'total':>8}   note")
    for name in names:
        with tempfile.TemporaryDirectory(prefix="srcgrad-coldstart-") as cache:
            env = {**base, "SRCGRAD_CACHE_DIR": cache, "NUMBA_CACHE_DIR": cache,
                   "XDG_CACHE_HOME": cache}
            rows = [("srcgrad", _run(name, "srcgrad", env, TIMEOUT)),
                    ("srcgrad, 2nd process", _run(name, "srcgrad", env, TIMEOUT))]
        if has_jax:
            got = _run(name, "jax", base, JAX_TIMEOUT)
            lax = isinstance(got, dict) and got["kind"] == "jax lax"
            rows.append(("jax.jit(jax.grad)" + (" lax" if lax else ""), got))
        for label, got in rows:
            if isinstance(got, str):
                print(f"{name:<14} {label:<22} {got}")
                continue
            t = got["times"]
            note = ""
            if "settled" in got:
                note = f"then background compile done after {got['settled']:.1f} s " \
                       f"({got['state']})"
            print(f"{name:<14} {label:<22} {got['import']:>7.2f} {t[0]:>8.3f} "
                  f"{max(t):>8.3f} {sum(t):>8.3f}   {note}")
        sys.stdout.flush()


if __name__ == "__main__":
    argv = sys.argv[1:]
    threads = "1"
    if argv[:1] == ["--threads"]:
        threads, argv = argv[1], argv[2:]
    if argv[:1] == ["--series"]:
        series(*argv[1:])
    elif argv[:1] == ["--after-import"]:
        after_import(argv[1])
    elif argv[:1] == ["--second"]:
        second(argv[2:], int(argv[1]))
    elif len(argv) == 2 and argv[1] in ("numba", "srcgrad", "jax", "jax-lax"):
        first_call(*argv)
    else:
        table(argv, threads)
