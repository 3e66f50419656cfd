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
through a temporary file and a rename, so no half-written entry is left). After `fork`
the child has no worker: `generation()` changes, and jobs submitted before the fork are
submitted again by whoever waits on them (`Forms`).
"""

from __future__ import annotations

import atexit
import logging
import os
import queue
import threading
from collections.abc import Callable

log = logging.getLogger("srcgrad")

_lock = threading.Lock()
_jobs: queue.SimpleQueue | None = None
_thread: threading.Thread | None = None
_stopping = False
_generation = 0


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
        try:
            job()
        except BaseException:   # a job reports its own failures; this keeps the worker up
            log.exception("srcgrad: a background compile failed")


@atexit.register
def _stop() -> None:
    global _stopping
    with _lock:
        _stopping = True
        if _jobs is not None:
            _jobs.put(None)


def _forget_worker() -> None:
    global _jobs, _thread, _generation, _lock
    _lock = threading.Lock()   # (it may have been held by another thread at the fork)
    _jobs, _thread = None, None
    _generation += 1


os.register_at_fork(after_in_child=_forget_worker)
