"""SQLite files written by several processes and threads at once (INDEX/state.sqlite).

Every connection runs in autocommit mode (transactions are explicit), with the WAL journal,
``busy_timeout`` (a writer waits for another instead of failing) and ``synchronous = NORMAL``.
Every write is one ``BEGIN IMMEDIATE`` transaction (`transaction`), so concurrent writers lose
nothing. `LocalConnection` keeps one connection per process and thread, opened lazily; a forked
child opens its own.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ..errors import IndexFormatError, StorageError

BUSY_TIMEOUT_MS = 30_000
JOURNAL_LIMIT_BYTES = 4 << 20  # the WAL file is truncated to this after a checkpoint


@contextmanager
def transaction(con: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, or ``ROLLBACK`` when the block raises."""
    try:
        con.execute("BEGIN IMMEDIATE")
        try:
            yield con
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")
    except sqlite3.OperationalError as exc:  # full disk, read-only file, locked past the busy timeout
        if con.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                con.execute("ROLLBACK")
        raise StorageError(f"{_db_name(con)}: the write was refused and nothing was recorded ({exc}){_hint(exc)}") from None


class ReadOnlyStateError(StorageError):
    """The state file's folder (or the file) cannot be written by this process: reads still work."""


def read_only_reason(path: Path) -> str | None:
    """Why this process cannot write the SQLite file `path` and its journal beside it, or None.

    SQLite needs to write the folder too (the WAL and shared-memory files live beside the file)."""
    folder = path.parent
    try:
        ro_fs = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return None  # no such folder yet: it is created on first use
    what = ("is on a read-only file system" if ro_fs else
            "is not writable by this user (permission)" if not os.access(folder, os.W_OK) else
            None)
    if what is None and path.exists() and not os.access(path, os.W_OK):
        what = "is not writable by this user (permission on the file)"
    if what is None:
        return None
    return (f"the index folder {what}: searches work, but traces, feedback and the query log cannot be "
            f"written here (the file is left as it is)")


def _db_name(con: sqlite3.Connection) -> str:
    """The file behind a connection, for messages."""
    with contextlib.suppress(sqlite3.Error, IndexError, TypeError):
        return con.execute("PRAGMA database_list").fetchone()[2] or "state.sqlite"
    return "state.sqlite"


def _hint(exc: sqlite3.Error) -> str:
    text = str(exc).lower()
    if "full" in text:
        return "; the disk is full: free some space"
    if "readonly" in text or "read-only" in text:
        return "; the folder or file is read-only (searches still work; feedback and traces need write access)"
    return ""


class LocalConnection:
    """The connection to `path` of the calling process and thread.

    `schema`: statements separated by ``;`` (e.g. ``CREATE TABLE IF NOT EXISTS``), run in one
    transaction whenever a connection is opened.
    """

    def __init__(self, path: str | os.PathLike, schema: str, foreign_keys: bool = False) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.schema = schema
        self.foreign_keys = foreign_keys
        self._local = threading.local()

    def get(self) -> sqlite3.Connection:
        loc = self._local
        if getattr(loc, "pid", None) != os.getpid() or getattr(loc, "con", None) is None:
            loc.con = self._open()
            loc.pid = os.getpid()
        return loc.con

    def _open(self) -> sqlite3.Connection:
        """A configured connection. A folder or file this process may not write is a `ReadOnlyStateError`
        saying so; a file that is not an SQLite database is an IndexFormatError naming it (a healthy
        file is never called unusable)."""
        readonly = read_only_reason(self.path)
        if readonly:
            raise ReadOnlyStateError(f"{self.path}: {readonly}")
        try:
            con = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        except sqlite3.Error as exc:
            raise IndexFormatError(f"{self.path}: cannot open this SQLite file ({exc})") from None
        try:
            return self._configure(con)
        except sqlite3.DatabaseError as exc:
            con.close()
            if isinstance(exc, sqlite3.OperationalError) and "unable to open" not in str(exc):
                raise  # e.g. "database is locked" after the busy timeout: not a format problem
            problem = check_file(self.path)
            if problem is None:  # the file is healthy: say what failed, never advise removing it
                raise StorageError(f"{self.path}: cannot open it for writing ({exc}); the file itself passes "
                                   f"SQLite's integrity check, keep it") from None
            raise IndexFormatError(f"{self.path}: {problem}") from None

    def _configure(self, con: sqlite3.Connection) -> sqlite3.Connection:
        con.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        con.execute("PRAGMA auto_vacuum = INCREMENTAL")  # a new file can give pruned pages back (retention)
        con.execute("PRAGMA journal_mode = WAL")
        con.execute(f"PRAGMA journal_size_limit = {JOURNAL_LIMIT_BYTES}")  # the WAL shrinks back after a checkpoint
        con.execute("PRAGMA synchronous = NORMAL")
        if self.foreign_keys:
            con.execute("PRAGMA foreign_keys = ON")
        with transaction(con):
            for stmt in filter(str.strip, self.schema.split(";")):
                con.execute(stmt)
        return con

    def close(self) -> None:
        """Close this thread's connection (a connection inherited across fork is left alone)."""
        con = getattr(self._local, "con", None)
        if con is not None and getattr(self._local, "pid", None) == os.getpid():
            con.close()
        self._local.con = None


def check_file(path: str | os.PathLike) -> str | None:
    """Why the SQLite file at `path` is not usable (read-only: it is opened without writing), or None
    when it is missing (it is created on first use) or passes SQLite's own `quick_check`."""
    path = Path(path)
    if not path.exists():
        return None
    try:
        con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            rows = con.execute("PRAGMA quick_check").fetchall()
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        return (f"not a usable SQLite database ({exc}): traces, feedback and the query log live there; "
                f"move it aside (keep it: it may be recoverable) to start an empty one")
    if rows != [("ok",)]:
        return f"failing SQLite's integrity check ({'; '.join(str(r[0]) for r in rows[:3])})"
    return None


def copy_read_only(src: Path, dst: Path) -> None:
    """Copy the SQLite file `src` (when it exists and can be read) into a new file `dst`, opening `src`
    read-only (`immutable` when its folder cannot hold a journal): learned weights keep applying."""
    src = Path(src)
    if not src.exists():
        return
    for query in ("mode=ro", "immutable=1"):
        try:
            con = sqlite3.connect(f"{src.resolve().as_uri()}?{query}", uri=True)
            try:
                with sqlite3.connect(dst) as out:
                    con.backup(out)
                out.close()
                return
            finally:
                con.close()
        except sqlite3.Error:
            Path(dst).unlink(missing_ok=True)
