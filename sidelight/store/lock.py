"""One writer at a time per folder: an exclusive `filelock` lock with a bounded wait.

Every writer to an index folder (`index -o`, `add`, `delete`, `certify`) or a lab run folder
holds `writer_lock(folder)` for the whole read-modify-write. The lock is an OS-level lock on
`FOLDER/.lock` (released by the kernel when the process dies, so a crashed writer never leaves it
held); beside it, `FOLDER/.lock.holder` names the process that holds it so a writer that waits too
long can say whom it waited for.
"""

from __future__ import annotations

import errno
import json
import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from filelock import FileLock, Timeout

from ..errors import SidelightError

LOCK_NAME = ".lock"
HOLDER_NAME = ".lock.holder"
DEFAULT_TIMEOUT_S = 60.0
TIMEOUT_ENV = "SIDELIGHT_LOCK_TIMEOUT"  # seconds a writer waits for another before it gives up


class LockedError(SidelightError):
    """Another writer held the folder's lock for longer than the wait allows."""


def lock_timeout() -> float:
    """The writer wait in seconds: `SIDELIGHT_LOCK_TIMEOUT`, else `DEFAULT_TIMEOUT_S`."""
    raw = os.environ.get(TIMEOUT_ENV)
    if raw is None:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        raise SidelightError(f"{TIMEOUT_ENV}={raw!r} is not a number of seconds") from None
    if not value >= 0:
        raise SidelightError(f"{TIMEOUT_ENV}={raw!r} must be zero or more seconds")
    return value


def holder(folder: Path) -> str:
    """Who holds (or last held) the lock of `folder`, as one readable phrase."""
    try:
        h = json.loads((Path(folder) / HOLDER_NAME).read_text())
        return f"pid {h['pid']} ({h['command']}) since {h['since']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "another process"


@contextmanager
def writer_lock(folder: Path, timeout: float | None = None, create: bool = False) -> Iterator[None]:
    """Hold the exclusive writer lock of `folder` for the block (`create`: make the folder first)."""
    folder = Path(folder)
    timeout = lock_timeout() if timeout is None else timeout
    if create:
        folder.mkdir(parents=True, exist_ok=True)
    elif not folder.is_dir():
        raise SidelightError(f"{folder}: no such folder")
    try:
        # One instance per path (is_singleton), so a writer that already holds the lock can take it
        # again (e.g. `Index.edit` around `Index.save`); other threads and processes wait.
        lock = FileLock(str(folder / LOCK_NAME), is_singleton=True)
        lock.acquire(timeout=timeout)
    except Timeout:
        raise LockedError(f"{folder} is locked by another writer, {holder(folder)}; waited {timeout:g} s "
                          f"(set {TIMEOUT_ENV} to wait longer)") from None
    except OSError as exc:  # a read-only file system (EROFS) or no permission (EACCES): say which
        why = ("it is on a read-only file system" if exc.errno == errno.EROFS else
               "this user may not write it (permission)" if isinstance(exc, PermissionError) else exc.strerror)
        raise SidelightError(f"{folder}: cannot write here, {why}; reading and searching work, writing "
                             f"(index -o, add, delete, certify) needs a writable folder") from None
    try:
        _write_holder(folder)
        yield
    finally:
        lock.release()


def _write_holder(folder: Path) -> None:
    info = {"pid": os.getpid(), "command": " ".join(["sidelight", *sys.argv[1:]])[:200],
            "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    try:
        tmp = folder / f"{HOLDER_NAME}.{os.getpid()}"
        tmp.write_text(json.dumps(info))
        os.replace(tmp, folder / HOLDER_NAME)
    except OSError:  # the holder note is a courtesy; the lock itself is what serializes
        pass
