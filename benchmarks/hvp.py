"""Hessian-vector products: ``python -m benchmarks.hvp [workload ...] [--repeat N]``.

srcgrad's ``hvp`` (forward mode over the generated gradient) beside JAX's
``jax.jit(jvp(grad(f)))``, on the workloads with a JAX form that compiles in reasonable
time (mlp_loss; pendulum_rk4 through its ``lax.fori_loop`` form). Both are checked
against central differences of the workload's hand-written numba gradient, and against
each other, before they are timed; timings are medians of round-robin samples, one
thread. DESIGN section 6 / issue 5: srcgrad's hvp must be faster than JAX's.
"""

from __future__ import annotations

import argparse
import statistics
import timeit

from benchmarks import limit_threads

WORKLOADS = ("mlp_loss", "pendulum_rk4")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.hvp", description=__doc__)
    parser.add_argument("workloads", nargs="*", default=list(WORKLOADS))
    parser.add_argument("--repeat", type=int, default=20)
    opts = parser.parse_args()
    limit_threads(1)  # precedes the import of numpy, numba and jax
    for name in opts.workloads:
        run(name, opts.repeat)


def run(name: str, repeat: int) -> None:
    import numpy as np

    import srcgrad
    from benchmarks import workloads
    from benchmarks.runner import _rebind

    w = workloads.load(name)
    rng = np.random.default_rng(workloads.SEED)
    args = w.inputs(rng)
    wrt = tuple(w.WRT)
    v = tuple(_like(args[k], rng) for k in wrt)
    print(f"\n== {name} hvp: {w.DESCRIPTION}; direction: random, one per wrt argument")

    sg = srcgrad.hvp(w.primal, wrt=wrt)  # jit="auto", as a user calls it
    rows = {"hand numba gradient": lambda: w.hand_numba(*args),
            "srcgrad hvp": lambda: sg(*args, v)}
    ours = sg(*args, v)
    sg(*args, v)  # jit="auto" settles on compiled or Python code by its second call
    reference = _differences(w.hand_numba, args, wrt, v)
    print(f"   srcgrad hvp vs differences of the hand gradient: relative error (norm) "
          f"{_err(ours, reference):.1e}")
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        f = w.jax_primal(jax.numpy, jax.lax) if hasattr(w, "jax_primal") else \
            _rebind(w.primal, jax.numpy)
        rest = tuple(jax.numpy.asarray(a) for k, a in enumerate(args) if k not in wrt)

        def g(*p):
            full = list(rest)
            for k, value in zip(wrt, p, strict=True):
                full.insert(k, value)
            return jax.grad(f, argnums=wrt)(*full)

        jhvp = jax.jit(lambda p, t: jax.jvp(g, p, t)[1])
        jp = tuple(jax.numpy.asarray(args[k]) for k in wrt)
        jt = tuple(jax.numpy.asarray(t) for t in v)
        theirs = tuple(np.asarray(x) for x in jhvp(jp, jt))
        print(f"   jax hvp vs srcgrad hvp: relative error (norm) {_err(ours, theirs):.1e}")
        rows["jax.jit(jvp(grad))"] = lambda: jax.block_until_ready(jhvp(jp, jt))
    except ImportError:
        print("   jax not installed: no JAX row")
    times = {k: [] for k in rows}
    for fn in rows.values():
        fn()
    for _ in range(repeat):
        for k, fn in rows.items():
            n, total = 0, 0.0
            while total < 0.02:
                total += timeit.timeit(fn, number=1)
                n += 1
            times[k].append(total / n * 1e3)
    med = {k: statistics.median(t) for k, t in times.items()}
    for k, ms in med.items():
        print(f"   {k:<22} {ms:9.3f} ms")
    if "jax.jit(jvp(grad))" in med:
        ratio = med["srcgrad hvp"] / med["jax.jit(jvp(grad))"]
        verdict = "ok" if ratio < 1.0 else "MISSED"
        print(f"   srcgrad hvp / jax hvp: {ratio:.2f}x ({verdict}; target < 1)")
    print(f"   srcgrad hvp / hand gradient: {med['srcgrad hvp'] / med['hand numba gradient']:.2f}x")


def _like(x, rng):
    import numpy as np
    return rng.standard_normal(np.shape(x)) if np.ndim(x) else float(rng.standard_normal())


def _differences(grad, args, wrt, v, eps=1e-5):
    import numpy as np
    plus, minus = list(args), list(args)
    for k, t in zip(wrt, v, strict=True):
        plus[k] = args[k] + eps * t
        minus[k] = args[k] - eps * t
    gp, gm = grad(*plus), grad(*minus)
    return tuple((np.asarray(a) - np.asarray(b)) / (2 * eps) for a, b in zip(gp, gm, strict=True))


def _err(a, b) -> float:
    import numpy as np
    worst = 0.0
    for x, y in zip(a, b, strict=True):
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        worst = max(worst, float(np.linalg.norm(x - y) / (np.linalg.norm(y) + 1e-300)))
    return worst


if __name__ == "__main__":
    main()
