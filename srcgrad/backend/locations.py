"""locations: what a failure of generated code says, and the user's line it comes from.

Generated code carries `# line N:` comments and a docstring naming the user's file; an
error raised in it, or by numba compiling it, is mapped back through them to the user's
`file:line`. numba's own messages are shortened to what a user can act on.
"""

from __future__ import annotations

import linecache
import os
import re
import sys
from typing import Any

from ..errors import SrcgradError


def in_numba_compiler(exc: BaseException) -> bool:
    """Whether `exc` was raised while numba compiled a function (not as it ran): on a
    call (`_compile_for_args`) or asked for types (`compile`, as a background compile
    does)."""
    dispatcher = os.path.join("numba", "core", "dispatcher.py")
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name == "_compile_for_args" or code.co_name == "compile" and \
                code.co_filename.endswith(dispatcher):
            return True
        tb = tb.tb_next
    return False


def compiler_failure(exc: BaseException) -> str:
    """What a bare exception of numba's compiler says: its type and the line of numba
    that raised it (for a 2-D boolean mask, `assert idxty.ndim == 1`)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = ""
    if tb is not None:
        code = tb.tb_frame.f_code
        line = linecache.getline(code.co_filename, tb.tb_lineno).strip()
        where = f" at {os.path.basename(code.co_filename)}:{tb.tb_lineno}" + (
            f" ({line})" if line else "")
    text = f": {exc}" if str(exc) else ""
    return f"{type(exc).__name__}{text} in numba's compiler{where}"


def generated_location(exc: BaseException, fn: Any, user_file: str) -> dict[str, Any]:
    """``filename``, ``lineno`` of the user's line whose generated code numba could not
    compile: the generated line, from numba's message or from the innermost IR location
    in its compiler's frames, mapped back through the `# line N:` comment above it."""
    generated = getattr(getattr(fn, "py_func", fn), "__code__", None)
    if generated is None:
        return {}
    path = generated.co_filename
    real = os.path.realpath(path)  # numba's messages name it relative to the directory
    lines = [int(n) for f, n in re.findall(r'File "([^"]+)", line (\d+)', str(exc))
             if os.path.realpath(f) == real]
    lines += [int(n) for f, n in re.findall(r"(?:defined at|Raised from) (\S+) \((\d+)\)",
                                            str(exc))
              if os.path.realpath(f) == real]
    tb = exc.__traceback__
    while tb is not None:
        for value in (tb.tb_frame.f_locals.get("inst"), tb.tb_frame.f_locals.get("loc")):
            loc = getattr(value, "loc", value)
            if getattr(loc, "filename", None) == path and isinstance(
                    getattr(loc, "line", None), int):
                lines.append(loc.line)
        tb = tb.tb_next
    if not lines:
        return {}
    return user_location(path, lines[-1], user_file)


def user_location(path: str, line: int, user_file: str) -> dict[str, Any]:
    """``filename``, ``lineno`` of the user's line that line `line` of the generated file
    `path` comes from: the `# line N:` comment above it, in the function whose docstring
    names the user's file."""
    source = linecache.getlines(path)
    lineno = None
    for k in range(min(line, len(source)) - 1, -1, -1):
        comment = re.match(r"\s*# (?:grad of )?line (\d+):", source[k])
        if comment and lineno is None:
            lineno = int(comment.group(1))
        header = re.match(r'\s*"""\S.* \(([^()]+):\d+\)', source[k])
        if header and lineno is not None:
            return {"filename": user_file_named(header.group(1), user_file), "lineno": lineno}
    return {}


def note_user_line(exc: BaseException, fn: Any, user_file: str) -> None:
    """Add to an error raised in generated code (an index out of bounds in the user's
    code) a note naming the user's line it comes from; before Python 3.11 (no notes),
    a line of its message, where the message is its one text argument. A `SrcgradError`
    a runtime helper raised (it knows no line) is given the user's line instead."""
    path = fn.__code__.co_filename
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == path:
            line = tb.tb_lineno
        tb = tb.tb_next
    where = user_location(path, line, user_file) if line is not None else {}
    if not where:
        return
    if isinstance(exc, SrcgradError):
        if not exc.filename and not re.match(r"[^\s:]+:\d+: ", exc.message):   # (one of
            # the messages that name their line: `unaliased`'s)
            exc.filename, exc.lineno = where["filename"], where["lineno"]
            exc.args = (exc._render(),)
        return
    text = linecache.getline(where["filename"], where["lineno"]).strip()
    note = (f"srcgrad: raised by generated code ({os.path.basename(path)}:{line}) "
            f"of {os.path.basename(where['filename'])}:{where['lineno']}: {text}")
    if hasattr(exc, "add_note"):
        exc.add_note(note)
    elif not isinstance(exc, KeyError) and (  # (a KeyError's message is its key's repr)
            not exc.args or len(exc.args) == 1 and isinstance(exc.args[0], str)):
        exc.args = ("\n".join([*exc.args, note]),)


def user_file_named(basename: str, user_file: str) -> str:
    """The path of the user's file a generated docstring names by its base name."""
    if os.path.basename(user_file) == basename:
        return user_file
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None) or ""
        if os.path.basename(path) == basename:
            return path
    return basename


def first_line(text: str) -> str:
    """What a numba error says, short: srcgrad's own message where an overload of its
    refused the types (`srcgrad: ...`; the first that is a sentence, as numba tries a
    message given as an argument as a literal and as a str, whose refusal names its
    type alone: "srcgrad: unicode_type"), else numba's first line that says something
    (not its pipeline and resolution headings, `_BOILERPLATE`), with the signature it
    found no implementation for, and the construct that failed: the callee numba was
    typing and the function it is in.

    >>> first_line("Failed in nopython mode pipeline (step: nopython frontend)\\n"
    ...            "- Resolution failure for literal arguments:\\n"
    ...            "reshape() supports contiguous array only\\n"
    ...            "During: resolving callee type: BoundFunction(array.reshape for "
    ...            "array(float64, 1d, A))\\n"
    ...            'File "h.py", line 3:\\ndef h(a):\\n    <source elided>')
    'reshape() supports contiguous array only (array.reshape of array(float64, 1d, A), in h)'
    """
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)  # numba colours its messages
    own = [m.strip() for m in re.findall(r"srcgrad: ([^\n]+)", text)]
    if own:
        return ([m for m in own if " " in m] or own)[0][:300]
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    said = [ln for ln in lines if not _BOILERPLATE.fullmatch(ln)]
    if not said:
        return " ".join(lines[:2])[:300] if lines else text
    reason = said[0]
    if reason.endswith("found for signature:") and len(said) > 1 and \
            said[1].startswith(">>>"):
        reason += " " + said[1][3:].strip()
    where = []
    callee = re.search(r"^During: resolving callee type: (.+)$", text, re.MULTILINE)
    if callee and (name := _callee(callee.group(1).strip())) not in reason:
        where.append(name)
    function = re.search(r'^\s*File "[^"]+", line \d+:\s*\n\s*def (\w+)\(', text,
                         re.MULTILINE)
    if function:
        where.append(f"in {function.group(1)}")
    return (reason + (f" ({', '.join(where)})" if where else ""))[:300]


# numba's headings around what it says: the pipeline that failed, its tries with and
# without literal arguments, its candidates, the places it was typing, its source excerpts
_BOILERPLATE = re.compile(
    r"Failed in \w+ mode pipeline \(step: [^)]*\)"
    r"|- Resolution failure for (?:non-)?literal arguments:"
    r"|There are \d+ candidate implementations?:"
    r"|- Of which \d+ did not match due to:"
    r"|Rejected as the implementation raised a specific error:"
    r"|This error may have been caused by the following argument\(s\):"
    r"|During: .*|File \".*|<source elided>|\^")


def _callee(described: str) -> str:
    """numba's name of a callee, as a user reads it: `array.reshape of array(float64, 1d,
    A)` of `BoundFunction(array.reshape for array(float64, 1d, A))`, `h` of
    `type(CPUDispatcher(<function h at 0x...>))`."""
    bound = re.fullmatch(r"BoundFunction\((\S+) for (.+)\)", described)
    if bound:
        return f"{bound.group(1)} of {bound.group(2)}"
    function = re.search(r"<(?:built-in )?function (\w+)", described)
    return function.group(1) if function else described
