"""Checkpointing: ``python -m benchmarks.checkpoint [--steps N ...] [--repeat N]``.

Tape memory and time of the compiled gradient of a long loop, with checkpoint=None,
checkpoint=True (about sqrt(n) segments) and checkpoint=k, for each trip count. Two
loops: `pendulum` (two numbers of state, an explicit Euler step) and `rnn` (a 16-vector
state, `h = tanh(W @ h + u)`, gradient for W). Each (loop, checkpoint, n) runs in its own
process, pinned to one core: the gradient is compiled and called once at n = 100, then
timed at n (the fastest of `--repeat` calls: on a shared machine the others measure
the neighbours); "tape MB" is how much the process's peak
resident memory grew over those calls (`ru_maxrss`), which is what the tape and the
snapshots took. Every gradient is checked against central differences at n = 100 first.
DESIGN section 3 / issue 23: O(sqrt(n)) saved states, and <= ~3x the time of the gradient
without checkpointing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import numpy as np

SETTINGS = ("None", "True", "100")


def pendulum(theta, omega, g, n):
    dt = 1e-4
    for _ in range(n):
        theta, omega = theta + dt * omega, omega - dt * g * np.sin(theta)
    return theta * theta + omega


def rnn(w, h, u, n):
    for _ in range(n):
        h = np.tanh(w @ h + u)
    return np.sum(h)


def inputs(name: str, n: int) -> tuple:
    if name == "pendulum":
        return (0.3, 0.0, 9.81, n), 2
    rng = np.random.default_rng(0)
    d = 16
    return (0.3 * rng.standard_normal((d, d)) / np.sqrt(d), rng.standard_normal(d),
            0.1 * rng.standard_normal(d), n), 0


def measure(name: str, setting: str, n: int, repeat: int) -> dict:
    """In this process: check, compile, then time and measure the tape at n steps."""
    import resource
    import time

    import srcgrad
    from srcgrad.checks import numerical_grad

    fun = {"pendulum": pendulum, "rnn": rnn}[name]
    args, wrt = inputs(name, 100)
    g = srcgrad.grad(fun, wrt=wrt, jit=True, checkpoint=eval(setting))
    np.testing.assert_allclose(g(*args), numerical_grad(fun, args, wrt), rtol=1e-5, atol=1e-8)
    args, _ = inputs(name, n)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        g(*args)
        times.append(time.perf_counter() - start)
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    return {"ms": 1e3 * min(times), "tape_mb": grown / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.checkpoint",
                                     description=__doc__)
    parser.add_argument("--steps", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--loops", nargs="*", default=["pendulum", "rnn"])
    parser.add_argument("--one", nargs=3, help=argparse.SUPPRESS)  # loop, setting, n
    opts = parser.parse_args()
    if opts.one:
        from benchmarks import limit_threads
        limit_threads(1)
        print(json.dumps(measure(opts.one[0], opts.one[1], int(opts.one[2]), opts.repeat)))
        return
    print("| loop | steps | checkpoint | ms/call | x no checkpoint | tape MB |")
    print("|---|---|---|---|---|---|")
    for name in opts.loops:
        for n in opts.steps:
            base = None
            for setting in SETTINGS:
                out = subprocess.run(
                    [sys.executable, "-m", "benchmarks.checkpoint", "--repeat",
                     str(opts.repeat), "--one", name, setting, str(n)],
                    capture_output=True, text=True, check=False)
                if out.returncode:
                    print(f"| {name} | {n} | {setting} | failed: "
                          f"{out.stderr.strip().splitlines()[-1]} | | |", flush=True)
                    continue
                r = json.loads(out.stdout.strip().splitlines()[-1])
                base = r["ms"] if setting == "None" else base
                ratio = f"{r['ms'] / base:.2f}" if base else ""
                print(f"| {name} | {n} | {setting} | {r['ms']:.1f} | {ratio} | "
                      f"{r['tape_mb']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
