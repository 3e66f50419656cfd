"""Benchmarks of srcgrad against hand-written adjoints, JAX and autograd (DESIGN section 6).

Run ``python -m benchmarks [workload ...] [--repeat N] [--threads N]`` from the repository
root; see ``benchmarks/README.md``.
"""

import re


def first_line(e: BaseException) -> str:
    """One line of an exception's message, for a table cell: the first one, except for numba,
    whose first line is a generic header: there, the signature that failed to type."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(e))  # numba colours its messages
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if type(e).__module__.startswith("numba"):
        lines = [line for line in lines if line.startswith(">>>")] or lines[1:] or lines
    return f"{type(e).__name__}: {lines[0]}" if lines else type(e).__name__
