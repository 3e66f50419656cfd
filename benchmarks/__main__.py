"""Command line: ``python -m benchmarks [workload ...] [--repeat N] [--threads N]``."""

import argparse
import os


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("workloads", nargs="*", help="workload names (default: all)")
    parser.add_argument("--repeat", type=int, default=30,
                        help="timed rounds per contender; medians are reported (default 30)")
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS/OpenMP/numba threads (default 1); JAX is pinned to one "
                             "thread only when this is 1")
    opts = parser.parse_args()
    # Thread pools are sized when numpy, numba and jax load, so this precedes their import;
    # the cold-start subprocesses inherit it.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ[var] = str(opts.threads)
    if opts.threads == 1:
        os.environ["XLA_FLAGS"] = ("--xla_cpu_multi_thread_eigen=false "
                                   "intra_op_parallelism_threads=1")

    from benchmarks import runner, workloads

    unknown = set(opts.workloads) - set(workloads.names())
    if unknown:
        parser.error(f"unknown workload(s) {', '.join(sorted(unknown))}; "
                     f"known: {', '.join(workloads.names())}")
    runner.run(opts.workloads or workloads.names(), opts.repeat)


main()
