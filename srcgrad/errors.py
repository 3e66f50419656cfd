"""Errors srcgrad raises on user input.

Every error a user can cause is a `SrcgradError`. When it concerns a place in the
user's source, it names ``file:line``, says what the construct is, and shows the line
with a caret under the column, so the message can be pasted into a bug report as is::

    srcgrad.UnsupportedSyntax: model.py:14: 'try' statements cannot be differentiated
        try:
        ^
"""

from __future__ import annotations

import linecache
import os

# Under numba, `runtime.seed` of an array fails at typing time with this text, which the
# api turns into NonScalarOutput (numba cannot raise our exception with a location).
NONSCALAR_MARKER = "srcgrad:nonscalar-output"


class SrcgradError(Exception):
    """Base class of every error srcgrad raises on user input."""

    def __init__(self, message: str, *, filename: str | None = None,
                 lineno: int | None = None, col: int | None = None):
        self.message = message
        self.filename = filename
        self.lineno = lineno
        self.col = col
        super().__init__(self._render())

    def _render(self) -> str:
        if not self.filename or not self.lineno:
            return self.message
        head = f"{os.path.basename(self.filename)}:{self.lineno}: {self.message}"
        line = linecache.getline(self.filename, self.lineno)
        if not line.strip():
            return head
        stripped = line.rstrip("\n")
        indent = len(stripped) - len(stripped.lstrip())
        caret = max((self.col or indent) - indent, 0)
        return f"{head}\n    {stripped.strip()}\n    {' ' * caret}^"


class UnsupportedSyntax(SrcgradError):
    """A construct srcgrad cannot differentiate (class, try, generator, ...)."""


class NoSourceError(SrcgradError):
    """The function has no Python source to transform (builtin, REPL lambda)."""


class MissingRule(SrcgradError):
    """A call to a function with neither a gradient rule nor source to differentiate."""


class WrtError(SrcgradError):
    """`wrt` names no parameter, or names one that cannot be differentiated."""


class NonScalarOutput(SrcgradError):
    """`grad` of a function whose result is not a scalar (use `vjp`)."""


class RuleError(SrcgradError):
    """A gradient rule with the wrong signature or a wrong-shaped result."""


class RecursiveFunction(SrcgradError):
    """A differentiated function that calls itself."""


class JitFallbackWarning(UserWarning):
    """`jit="auto"` could not compile the generated code with numba and runs it as Python."""
