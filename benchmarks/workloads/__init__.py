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
* ``hand_numpy(...)``: the same gradient by hand in plain NumPy;
* optionally ``jax_primal(jnp, lax)``: returns the primal as a JAX user writes it, loops as
  ``lax.fori_loop`` / ``lax.scan`` (same arguments and result as ``primal``; ``jnp`` is
  ``jax.numpy``, ``lax`` is ``jax.lax``). With it, the runner adds the row
  "jax.jit(jax.grad) lax"; the row "jax.jit(jax.grad)" always rebinds ``np`` in ``primal``,
  so there JAX unrolls Python loops while tracing. Loop trip counts must be facts JAX sees
  when tracing (module constants, array shapes), not traced arguments.

For a ``primal`` that carries srcgrad annotations (``with srcgrad.gradient_override(...)``,
a gradient only srcgrad reads, in a block numba cannot compile), optionally also

* ``plain_primal(...)``: the same math without the annotations, plain NumPy; the rows
  "numpy primal" and "numba primal" (and numba's first-call time) use it instead of
  ``primal``, which stays what srcgrad differentiates;
* ``NO_REBIND``: a string, why rebinding ``np`` in ``primal`` would differentiate other math
  (e.g. give ``np.sign`` its zero gradient); the rows that rebind are then not run, with this
  as their note: "jax.jit(jax.grad)" always, "autograd grad" unless the next hook is given.
  The workload's ``jax_primal`` gives JAX the intended gradient (e.g. by
  ``lax.stop_gradient``) in the row "jax.jit(jax.grad) lax";
* ``autograd_primal(anp)``: returns the primal for the row "autograd grad", in place of
  ``primal`` with ``np`` rebound (``anp`` is ``autograd.numpy``; e.g. a custom
  ``autograd.extend.primitive`` for a straight-through estimator).

Scalar arguments are passed as Python floats; a gradient for one is a float (or a 0-d array).

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


def plain_primal(w: ModuleType):
    """The workload's primal as plain NumPy, for the primal rows: ``plain_primal`` if it
    defines one, else ``primal``."""
    return getattr(w, "plain_primal", w.primal)
