"""Time one first call in this fresh process: ``python -m benchmarks.coldstart WORKLOAD KIND``.

KIND ``numba`` times ``numba.njit(primal)(*args)`` (numba compiling the primal, or the
workload's ``plain_primal``); ``srcgrad``
times ``srcgrad.grad(primal, wrt=WRT)(*args)`` (transform + compile, or a load from
srcgrad's on-disk cache); ``jax`` and ``jax-lax`` time the first call of the runner's JAX
rows (trace + compile + run of ``jax.jit(jax.grad(...))``, with ``np`` rebound in ``primal``,
or the workload's ``jax_primal``). Imports, and JAX's backend start-up, happen before the
clock starts. Prints the seconds, or ``error: <first line of the exception>``.
"""

import sys
import time

import numba
import numpy as np

from benchmarks import first_line, workloads


def main(name: str, kind: str) -> None:
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


main(*sys.argv[1:])
