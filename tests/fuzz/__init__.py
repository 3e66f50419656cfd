"""srcgrad's differential program fuzzer: random smooth NumPy programs (grammar.py), each
gradient checked against central differences and jvp (runner.py). Run it long with
`python -m tests.fuzz --programs 10000 [--jit] [--seed S]`; tests/test_fuzz.py is CI's budget.
"""

from .grammar import Grammar
from .runner import check, make_inputs, run, summary

__all__ = ["Grammar", "check", "make_inputs", "run", "summary"]
