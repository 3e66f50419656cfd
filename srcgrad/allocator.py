"""glibc malloc's thresholds, set once on import, so generated code's arrays reuse memory.

Generated gradient code allocates mid-sized temporaries on every call (a 256 x 256
float64 array is 512 KB). glibc serves a request above its mmap threshold with a fresh
mapping, adjusts that threshold as blocks are freed, and gives the top of the heap back
to the system whenever more than twice the threshold lies free there. Which of these
happens depends on what the rest of the process freed last: after other code frees a
large block, each call can page-fault all of its arrays anew, every time. Measured here:
`hvp` of the benchmark MLP, timed in turns with a numba gradient, 2.8 ms a call against
1.6 ms alone; with the thresholds fixed, 1.6 ms either way.

So srcgrad fixes them on import: blocks up to 32 MB (glibc's largest mmap threshold)
come from the heap, and the heap is trimmed once 128 MB lie free at its top. This is
what the environment variables MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_ do;
where either is set, or SRCGRAD_MALLOC=default, or the C library is not glibc, nothing
is changed.
"""

from __future__ import annotations

import ctypes
import os

MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 128 << 20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt's parameters (malloc.h)


def _glibc() -> bool:
    try:
        return os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")
    except (AttributeError, ValueError, OSError):
        return False


def tune() -> bool:
    """Fix glibc's mmap and trim thresholds (see the module docstring); whether it did."""
    if os.environ.get("SRCGRAD_MALLOC", "").strip().lower() == "default" or not _glibc() \
            or "MALLOC_MMAP_THRESHOLD_" in os.environ \
            or "MALLOC_TRIM_THRESHOLD_" in os.environ:
        return False
    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
    if mallopt is None:
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) \
        and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))


TUNED = tune()
