"""`python -m tests.fuzz --programs N [--jit] [--seed S]`: program k has seed S + k; each
wrong or crashed program is printed with its source, seed, inputs and the mismatch."""

import argparse
import sys

from .runner import run, summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    parser.add_argument("--programs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0, help="seed of the first program")
    parser.add_argument("--jit", action="store_true", help="check the compiled form")
    parser.add_argument("--shrink", action="store_true",
                        help="also print each failure shrunk to fewer statements")
    parser.add_argument("--no-repeats", action="store_true",
                        help="fancy indices without repeated entries")
    parser.add_argument("--show", action="store_true", help="print each program's source")
    options = parser.parse_args(argv)
    seeds = range(options.seed, options.seed + options.programs)
    if options.show:
        from .grammar import Grammar
        for seed in seeds:
            print(f"# seed {seed}\n{Grammar(seed, not options.no_repeats).program()[0]}")
        return 0
    results = run(seeds, jit=options.jit, report=lambda text: print(text, flush=True),
                  shrinking=options.shrink, repeats=not options.no_repeats)
    print(summary(results))
    return 1 if results["wrong"] or results["crashed"] else 0


if __name__ == "__main__":
    sys.exit(main())
