"""cache: the on-disk cache of generated modules, and what numba compiled from them.

An entry is one generated module, `<stem>_<digest>.py` in `codegen.cache_dir()`, with the
files numba's disk cache keeps for it in `__pycache__/<stem>_<digest>.*` beside it (where
numba puts them unless NUMBA_CACHE_DIR moves them elsewhere), or one generated module kept
for the compiler's next run, `<stem>_gen_<key>.pickle` (`modules`). Loading an entry marks it
used (its module file's mtime). The cache has a size bound, `SRCGRAD_CACHE_LIMIT_MB`
(default 2048): the first time a process writes an entry, a background thread removes the
least recently used entries until the rest fits. `python -m srcgrad cache info|clear`
reports and empties it.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from pathlib import Path

DEFAULT_LIMIT_MB = 2048


@dataclasses.dataclass
class Entry:
    """One generated module and numba's files for it."""

    module: Path
    used: float               # the module file's mtime: when it was last written or loaded
    files: list[Path]         # the module first, then numba's files
    size: int


def entries(root: Path) -> list[Entry]:
    """The cache's entries, least recently used first."""
    if not root.is_dir():
        return []
    compiled: dict[str, list[os.DirEntry]] = {}
    pycache = root / "__pycache__"
    if pycache.is_dir():
        with os.scandir(pycache) as it:
            for f in it:
                compiled.setdefault(f.name.split(".", 1)[0], []).append(f)
    out = []
    with os.scandir(root) as it:
        for f in it:
            if not f.name.endswith((".py", ".pickle")):
                continue
            try:
                stat = f.stat()
            except FileNotFoundError:
                continue   # (another process removed it meanwhile)
            extra = compiled.get(f.name.rsplit(".", 1)[0], [])
            out.append(Entry(Path(f.path), stat.st_mtime,
                             [Path(f.path)] + [Path(e.path) for e in extra],
                             stat.st_size + sum(_size(e) for e in extra)))
    out.sort(key=lambda e: e.used)
    return out


def _size(entry: os.DirEntry) -> int:
    try:
        return entry.stat().st_size
    except FileNotFoundError:
        return 0


def limit_bytes() -> int:
    """The size bound (`SRCGRAD_CACHE_LIMIT_MB`, in MB)."""
    try:
        mb = float(os.environ.get("SRCGRAD_CACHE_LIMIT_MB", DEFAULT_LIMIT_MB))
    except ValueError:
        mb = DEFAULT_LIMIT_MB
    return int(mb * 2 ** 20)


def remove(entry: Entry) -> None:
    for path in entry.files:
        try:
            path.unlink()
        except FileNotFoundError:
            pass   # (another process removed it first)


def trim(root: Path, limit: int) -> int:
    """Remove the least recently used entries until the rest take at most `limit` bytes;
    the number removed. A process that has an entry loaded keeps running it: what it
    compiled is in memory, and a later process compiles it again."""
    found = entries(root)
    total = sum(e.size for e in found)
    removed = 0
    for entry in found:
        if total <= limit:
            break
        remove(entry)
        total -= entry.size
        removed += 1
    return removed


def clear(root: Path) -> int:
    """Remove every entry; the number removed."""
    found = entries(root)
    for entry in found:
        remove(entry)
    return len(found)


def mark_used(path: Path) -> None:
    try:
        os.utime(path)
    except OSError:
        pass   # (a read-only cache still serves)


_trimmed = threading.Event()


def written(root: Path) -> None:
    """Called after a new entry is written: the first time in a process, trim the cache
    to its bound on a daemon thread (a scan of a large cache takes a while)."""
    if _trimmed.is_set():
        return
    _trimmed.set()
    threading.Thread(target=_trim_quietly, args=(root, limit_bytes()), daemon=True,
                     name="srcgrad-cache-trim").start()


def _trim_quietly(root: Path, limit: int) -> None:
    try:
        trim(root, limit)
    except OSError:
        pass   # (a cache another process changes meanwhile, or a read-only one: next time)
