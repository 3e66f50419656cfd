"""Benchmark workloads: one module per workload, found by name.

A workload module defines

* ``DESCRIPTION``: one line for the table header;
* ``primal(...)``: the function to differentiate, plain NumPy through the global ``np``
  (the runner rebinds ``np`` to ``jax.numpy`` / ``autograd.numpy`` for those contenders),
  returning a scalar;
* ``WRT``: a tuple of argument positions to differentiate with respect to;
* ``inputs(rng)``: the arguments, float64, from a ``numpy.random.Generator``;
* ``hand_numba(...)``: the gradient written by hand, ``numba.njit``-compiled, returning a
  tuple with one array per ``WRT`` entry (the reference every contender is checked against);
* ``hand_numpy(...)``: the same gradient by hand in plain NumPy.

Adding a workload is adding one such module here.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

SEED = 0

# srcgrad's numba overloads of reductions with axis=/keepdims, so that such primals compile;
# when absent or broken (srcgrad is in development), those primals "do not compile".
try:
    import srcgrad.numba_ext  # noqa: F401
except Exception:
    pass


def names() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(__path__))


def load(name: str) -> ModuleType:
    return importlib.import_module(f"{__name__}.{name}")
