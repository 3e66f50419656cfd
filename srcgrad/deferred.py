"""deferred: numba forms of srcgrad's functions, registered when numba is first needed.

Importing numba takes 0.2-0.6 s, and the Python form of a gradient never needs it, so
`import srcgrad` does not import it. A module that gives one of its functions a numba form
at import registers it with `overload` from here, which keeps it; `load`, called when the
helpers of generated code are imported (`runtime`, whose numba forms import numba), makes
every kept registration with numba's own `overload`, in order. A registration after
`load` is made at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

_KEPT: list[tuple[Any, dict[str, Any], Callable]] = []
_LOCK = threading.Lock()
_loaded = False


def overload(primal: Any, **options: Any) -> Callable[[Callable], Callable]:
    """`numba.extending.overload(primal, **options)`, made when numba is loaded."""
    def register(typer: Callable) -> Callable:
        with _LOCK:
            if not _loaded:
                _KEPT.append((primal, options, typer))
                return typer
        from numba.extending import overload as numba_overload
        numba_overload(primal, **options)(typer)
        return typer
    return register


def load() -> None:
    """Import numba and make the registrations kept so far (once per process)."""
    global _loaded
    if _loaded:
        return
    from numba.extending import overload as numba_overload
    with _LOCK:
        if not _loaded:
            for primal, options, typer in _KEPT:
                numba_overload(primal, **options)(typer)
            _KEPT.clear()
            _loaded = True
