"""Time one first call in this fresh process: ``python -m benchmarks.coldstart WORKLOAD KIND``.

KIND ``numba`` times ``numba.njit(primal)(*args)`` (numba compiling the primal); ``srcgrad``
times ``srcgrad.grad(primal, wrt=WRT)(*args)`` (transform + compile, or a load from
srcgrad's on-disk cache). Imports happen before the clock starts. Prints the seconds, or
``error: <first line of the exception>``.
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
        start = time.perf_counter()
        fn = numba.njit(w.primal) if kind == "numba" else srcgrad.grad(w.primal, wrt=w.WRT)
        fn(*args)
        print(time.perf_counter() - start)
    except Exception as e:
        print("error:", first_line(e))


main(*sys.argv[1:])
