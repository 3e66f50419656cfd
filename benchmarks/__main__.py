"""Command line: ``python -m benchmarks [workload ...] [--repeat N] [--threads N] [--only NAMES]``.
"""

import argparse

from benchmarks import limit_threads


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("workloads", nargs="*", help="workload names (default: all)")
    parser.add_argument("--repeat", type=int, default=30,
                        help="timed rounds per contender; medians are reported (default 30)")
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS/OpenMP/numba threads (default 1); with 1 the process is "
                             "pinned to one core, JAX included")
    parser.add_argument("--only", help="comma-separated parts of contender names: run those "
                        "(and the hand numba adjoint, the reference) and no first calls in "
                        "fresh processes, e.g. --only srcgrad")
    opts = parser.parse_args()
    limit_threads(opts.threads)  # precedes the import of numpy, numba and jax
    from benchmarks import runner, workloads

    unknown = set(opts.workloads) - set(workloads.names())
    if unknown:
        parser.error(f"unknown workload(s) {', '.join(sorted(unknown))}; "
                     f"known: {', '.join(workloads.names())}")
    runner.run(opts.workloads or workloads.names(), opts.repeat,
               opts.only.split(",") if opts.only else None)


main()
