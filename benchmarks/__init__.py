"""Benchmarks of srcgrad against hand-written adjoints, JAX and autograd (DESIGN section 6).

Run ``python -m benchmarks [workload ...] [--repeat N] [--threads N]`` from the repository
root; see ``benchmarks/README.md``.
"""

import os
import re


def limit_threads(threads: int) -> None:
    """Size every thread pool to `threads` before NumPy, numba or JAX load; with 1, also
    pin the process to one core. JAX's CPU client keeps a pool of its own whatever
    `XLA_FLAGS` says (measured: 1.6-1.8 CPUs busy during `jax.jit(jax.grad)` of bnn_ste with
    the flags below set), so without the pin its rows would run on two cores, the others
    on one. The cold-start subprocesses inherit both."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                "NUMBA_NUM_THREADS"):
        os.environ[var] = str(threads)
    if threads == 1:
        os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false"
        if hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def first_line(e: BaseException) -> str:
    """One line of an exception's message, for a table cell: the first one, except for numba,
    whose first line is a generic header: there, the signature that failed to type."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(e))  # numba colours its messages
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if type(e).__module__.startswith("numba"):
        lines = [line for line in lines if line.startswith(">>>")] or lines[1:] or lines
    return f"{type(e).__name__}: {lines[0]}" if lines else type(e).__name__
