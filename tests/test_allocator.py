"""srcgrad.allocator: on import, glibc's malloc serves mid-sized arrays from the heap
(no fresh mapping per array), unless SRCGRAD_MALLOC=default or MALLOC_* are set.

Each case runs in a new process (malloc's policy is the process's) and reads glibc's
own count of bytes in mapped blocks (mallinfo2's hblkhd) around a 4 MB allocation."""

import ctypes
import os
import subprocess
import sys

import pytest

from srcgrad.allocator import _glibc

PROBE = """
import ctypes, numpy as np, srcgrad

class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks",
                "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL(None)
libc.mallinfo2.restype = Info
before = libc.mallinfo2().hblkhd
a = np.ones(512 * 1024)  # 4 MB
mapped = libc.mallinfo2().hblkhd - before >= a.nbytes
print(srcgrad.allocator.TUNED, mapped)
"""


def probe(**env) -> str:
    clean = {k: v for k, v in os.environ.items()
             if k not in ("SRCGRAD_MALLOC", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")}
    out = subprocess.run([sys.executable, "-c", PROBE], env={**clean, **env},
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


needs_glibc = pytest.mark.skipif(
    not _glibc() or not hasattr(ctypes.CDLL(None), "mallinfo2"),
    reason="the thresholds are glibc's (mallinfo2: glibc 2.33 or later)")


@needs_glibc
def test_arrays_come_from_the_heap():
    assert probe() == "True False"


@needs_glibc
def test_opting_out_leaves_glibcs_policy():
    assert probe(SRCGRAD_MALLOC="default") == "False True"


@needs_glibc
def test_the_users_malloc_variables_win():
    assert probe(MALLOC_MMAP_THRESHOLD_="131072") == "False True"
