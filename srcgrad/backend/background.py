"""background: one daemon thread that compiles while the caller goes on.

`jit="auto"` answers calls of straight-line code with the Python form while this thread
compiles the generated module (`Forms`), one job at a time, in submission order (numba
compiles under one lock of its own anyway). `SRCGRAD_BACKGROUND=0` turns it off: then
"auto" compiles in the foreground, as it did before (`enabled`).

A thread, not a worker process: measured on a 2-core machine, a Python-form call of a
2-layer MLP gradient (0.65 ms) keeps its median while numba compiles its module in this
thread (8 s), with a few calls in a thousand held 50-150 ms where the compiler holds the
GIL; the compile itself takes as long as in the foreground. A worker process would leave
the caller's GIL alone but must rebuild the generated module's namespace (the user's
closures, helpers defined in `__main__`), which does not survive pickling in general.

Exit: the thread is a daemon, and an `atexit` hook stops it from starting another job; a
compile under way when the interpreter exits is abandoned (numba writes its disk cache
through a temporary file and a rename, so no half-written entry is left).

Fork: `os.fork` waits until the job under way (and any numba compile in another thread)
is done, so that the child inherits no lock a vanished thread holds (srcgrad's, numba's
compiler lock, LLVM's own), nor a half-compiled function; a fork during a long compile
waits for it. The child has no worker: `generation()` changes, and jobs submitted before
the fork and not run are submitted again by whoever waits on them (`Forms`).

Parsing beside the worker: the worker builds syntax trees (numba lowers each array
expression through `ast.parse`; srcgrad's kernels and `jit_module` parse too), and CPython
3.11 before 3.11.8 keeps the AST constructor's recursion depth in state all threads share
(CPython gh-106905). A thread building a tree keeps the GIL unless an allocation starts a
garbage collection that runs Python code (a finalizer, a gc callback); if another thread
then parses, the first parse fails, `SystemError: AST constructor recursion depth
mismatch` (seen in pytest's assertion rewriting beside a background compile). On those
releases, starting the worker makes `ast.parse` hold collection off while it builds its
tree (`_guard_parsing`), so no parse of any thread is interrupted. A caller of
`compile(..., ast.PyCF_ONLY_AST)` that bypasses `ast.parse` (IPython's cell parser) is not
covered there.
"""

from __future__ import annotations

import ast
import atexit
import contextlib
import functools
import gc
import logging
import os
import queue
import sys
import threading
from collections.abc import Callable

log = logging.getLogger("srcgrad")

_lock = threading.Lock()
_jobs: queue.SimpleQueue | None = None
_thread: threading.Thread | None = None
_stopping = False
_generation = 0
_busy = threading.RLock()   # held by the worker while it runs a job (which may fork)


def enabled() -> bool:
    """Whether `jit="auto"` compiles in the background (`SRCGRAD_BACKGROUND`, default on)."""
    return os.environ.get("SRCGRAD_BACKGROUND", "").strip().lower() not in ("0", "false", "no")


def generation() -> int:
    """Changes in a child process after `fork`, whose worker (and its queue) is gone."""
    return _generation


def submit(job: Callable[[], None]) -> bool:
    """Run `job` on the worker thread, after the jobs submitted before it; False if the
    interpreter is exiting (the job is not run)."""
    global _jobs, _thread
    with _lock:
        if _stopping:
            return False
        if _thread is None:
            _guard_parsing()
            _jobs = queue.SimpleQueue()
            _thread = threading.Thread(target=_work, args=(_jobs,), name="srcgrad-compile",
                                       daemon=True)
            _thread.start()
        _jobs.put(job)
    return True


def _work(jobs: queue.SimpleQueue) -> None:
    while True:
        job = jobs.get()
        if job is None or _stopping:
            return
        with _busy:
            try:
                job()
            except BaseException:   # a job reports its own failures; this keeps the worker up
                log.exception("srcgrad: a background compile failed")


def shares_ast_state(version: tuple = sys.version_info[:3]) -> bool:
    """Whether this CPython's `ast.parse` fails when another thread parses meanwhile
    (3.11.0 to 3.11.7: CPython gh-106905)."""
    return sys.implementation.name == "cpython" and (3, 11) <= version < (3, 11, 8)


def _guard_parsing() -> None:
    """Where `shares_ast_state`, make `ast.parse` build its tree with garbage collection
    held off: without collections it runs no Python code, so no other thread runs until
    the tree is built. (Once per process; the module attribute, which every caller
    reads at each call.)"""
    if not shares_ast_state() or getattr(ast.parse, "srcgrad_guarded", False):
        return
    parse = ast.parse

    @functools.wraps(parse)
    def guarded(*args, **kwargs):
        with _collection_held_off():
            return parse(*args, **kwargs)
    guarded.srcgrad_guarded = True
    ast.parse = guarded


_holding = threading.RLock()   # (re-entrant: a finalizer may parse in a collection)
_holders = 0
_collecting = True   # whether collection was on when the first holder held it off


@contextlib.contextmanager
def _collection_held_off():
    global _holders, _collecting
    with _holding:
        if _holders == 0:
            _collecting = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _holding:
            _holders -= 1
            if _holders == 0 and _collecting:
                gc.enable()


@atexit.register
def _stop() -> None:
    global _stopping
    with _lock:
        _stopping = True
        if _jobs is not None:
            _jobs.put(None)


def _numba_lock():
    """numba's compiler lock, if numba is imported (its compiles hold it throughout)."""
    module = sys.modules.get("numba.core.compiler_lock")
    return module.global_compiler_lock if module is not None else None


def _before_fork() -> None:
    _busy.acquire()
    lock = _numba_lock()
    if lock is not None:
        lock.acquire()


def _after_fork_in_parent() -> None:
    lock = _numba_lock()
    if lock is not None:
        lock.release()
    _busy.release()


def _after_fork_in_child() -> None:
    global _jobs, _thread, _generation, _lock, _busy, _holding, _holders
    lock = _numba_lock()
    if lock is not None:
        lock.release()
    _lock, _busy = threading.Lock(), threading.RLock()   # (fresh: no other thread is left)
    _holding = threading.RLock()
    if _holders:   # (a thread that is gone held collection off, to parse)
        _holders = 0
        if _collecting:
            gc.enable()
    _jobs, _thread = None, None
    _generation += 1


os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                    after_in_child=_after_fork_in_child)
