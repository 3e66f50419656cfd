"""Runs of slice statements (`passes.scalarise`) as one index loop, or as the slice
statements themselves.

    def u_loop(u, alpha):
        ...   # the run as an index loop

    @scalarised(u_loop, 3, (1, -2), (1, 0, 1, 0))
    def u_slices(u, alpha):
        ...   # the run as it was

As Python, `u_slices` is itself: NumPy, one pass per operation (the Python form serves
where nothing compiles). Compiled (`backend.compile.jit_module` asks the function for its
`srcgrad_jit`), a call of it runs `u_loop` where the loop computes what the slices do,
else the slices. The arguments come in four groups (their sizes the last argument):
arrays the run slices, vectors it reads whole, numbers, and likes it reads the shape of
(`unbroadcast(g, like)` is g there). The loop runs where

* at typing time: every array, vector and like is a 1-D float64 array, and every number
  an int or a float (a name the slices read whole that is an array would broadcast);
* at run time: the arrays are as long as one another, n >= `least` entries (no slice of
  the run is clipped or empty); vectors and likes have the slices' length, `length =
  (k, c)`: k * n + c entries; and no two arrays or vectors share memory (the loop writes
  one as it reads another, where NumPy read all before writing).
"""

from __future__ import annotations

import functools

from numba import types
from numba.extending import overload, register_jitable


def scalarised(loop, least: int, length: tuple[int, int], groups: tuple[int, int, int, int]):
    """Mark the slices function it decorates as computed by `loop` where it may be."""
    def mark(slices):
        slices.srcgrad_jit = functools.partial(_choice, loop.__name__, slices, least, length,
                                               groups)
        return slices
    return mark


def _choice(loop_name: str, slices, least: int, length: tuple, groups: tuple,
            compiled: dict):
    """The function compiled code calls for `slices`: numba types a call of it as
    `compiled`'s loop (where `_fits`) or the slices, by the types of its arguments."""
    import numba

    params = ", ".join(f"p{k}" for k in range(sum(groups)))
    bounds = [sum(groups[:g]) for g in range(5)]
    held = [f"({''.join(f'p{k}, ' for k in range(bounds[g], bounds[g + 1]))})"
            for g in range(4)]
    stub: dict = {"slices": slices}
    exec(f"def chosen({params}):\n    return slices({params})\n", stub)
    impls = {"slices": numba.njit(cache=True)(slices), "loop": compiled[loop_name],
             "least": least, "length": length,
             "fits": register_jitable(_fits_for(groups[0], groups[1], groups[3]))}
    exec(f"def run({params}):\n"
         f"    if fits(least, length, {held[0]}, {held[1]}, {held[3]}):\n"
         f"        return loop({params})\n"
         f"    return slices({params})\n\n"
         f"def numpy({params}):\n"
         f"    return slices({params})\n", impls)

    def pick(*args):   # the loop for 1-D float64 arrays and real numbers
        if all(_vector(t) for g in (0, 1, 3) for t in args[bounds[g]:bounds[g + 1]]) \
                and all(isinstance(t, (types.Integer, types.Float))
                        for t in args[bounds[2]:bounds[3]]):
            return impls["run"]
        return impls["numpy"]
    typer: dict = {"pick": pick}
    exec(f"def typer({params}):\n    return pick({params})\n", typer)
    overload(stub["chosen"])(typer["typer"])
    return stub["chosen"]


@functools.cache
def _fits_for(arrays: int, vectors: int, likes: int):
    """`fits(least, length, arrays, vectors, likes)`: whether the loop serves, for tuples
    of these lengths, written item by item (a tuple of arrays of several layouts is not
    iterable, and numba's `literal_unroll` refuses an empty one).

    >>> print(_fits_for(1, 1, 0).__doc__, end="")
    def fits(least, length, arrays, vectors, likes):
        n = arrays[0].shape[0]
        size = length[0] * n + length[1]
        ok = n >= least and size > 0
        ok = ok and arrays[0].shape[0] == n
        ok = ok and vectors[0].shape[0] == size
        lo0, hi0 = _extent(arrays[0])
        lo1, hi1 = _extent(vectors[0])
        ok = ok and not (lo1 < hi0 and lo0 < hi1)
        return ok
    """
    lines = ["def fits(least, length, arrays, vectors, likes):",
             "    n = arrays[0].shape[0]",
             "    size = length[0] * n + length[1]",
             "    ok = n >= least and size > 0"]
    lines += [f"    ok = ok and arrays[{k}].shape[0] == n" for k in range(arrays)]
    lines += [f"    ok = ok and {group}[{k}].shape[0] == size"
              for group, count in (("vectors", vectors), ("likes", likes)) for k in range(count)]
    held = [f"arrays[{k}]" for k in range(arrays)] + [f"vectors[{k}]" for k in range(vectors)]
    lines += [f"    lo{k}, hi{k} = _extent({a})" for k, a in enumerate(held)]
    lines += [f"    ok = ok and not (lo{j} < hi{k} and lo{k} < hi{j})"
              for j in range(len(held)) for k in range(j)]
    text = "\n".join(lines + ["    return ok"]) + "\n"
    space = {"_extent": _extent}
    exec(compile(text, "<srcgrad.runtime.scalarised>", "exec"), space)
    space["fits"].__doc__ = text
    return space["fits"]


def _extent(a):
    return 0, 0


@overload(_extent)
def _extent_typer(a):
    def extent(a):   # the first and one-past-the-last byte of 1-D array a
        first = a.ctypes.data
        last = first + (a.shape[0] - 1) * a.strides[0]
        return min(first, last), max(first, last) + a.itemsize
    return extent


def _vector(t) -> bool:
    return isinstance(t, types.Array) and t.ndim == 1 and t.dtype == types.float64
