"""The query log: one row per served call (HTTP, MCP or CLI), in the index's own `state.sqlite`.

Decision: the log lives in the same SQLite file as the traces (`INDEX/state.sqlite`, see
`sidelight.feedback.state`), in its own table `query_log` that this module creates and owns. One
file means a log row and the traces it names travel together (copying or backing up the index
folder keeps both), and every interface that opens the index (`sidelight serve`, `sidelight mcp`,
the CLI) writes to the same place. Connections come from `sidelight.store.sqlite`, as for
`StateStore` (WAL journal, `busy_timeout`, every write one `BEGIN IMMEDIATE` transaction, one
connection per process and thread), so several workers and processes append without losing a row.

`logged` is the one way a call writes its row, whichever interface made it.

A row: time, interface (http / mcp / cli), operation (search, channels, feedback, floor, ...),
the query (or the trace id for feedback), the lanes returned with their trace ids, per-stage
timings in ms, the fallback label and partial flag when a stage was skipped or cut, the status
(HTTP-style code) and the error message of a refused call.
"""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable

from ..errors import SidelightError, StorageError
from ..store.sqlite import LocalConnection, transaction

if TYPE_CHECKING:
    from ..index import Index

_SCHEMA = """
CREATE TABLE IF NOT EXISTS query_log (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at  TEXT NOT NULL,
    interface   TEXT NOT NULL,
    operation   TEXT NOT NULL,
    query       TEXT,
    lanes       TEXT NOT NULL,
    timings     TEXT NOT NULL,
    fallback    TEXT,
    partial     INTEGER NOT NULL DEFAULT 0,
    status      INTEGER NOT NULL,
    error       TEXT,
    pid         INTEGER NOT NULL,
    total_ms    REAL
);
CREATE INDEX IF NOT EXISTS query_log_time ON query_log (created_at)
"""

COLUMNS = ("id", "created_at", "interface", "operation", "query", "lanes", "timings", "fallback", "partial",
           "status", "error", "pid", "total_ms")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


class QueryLog:
    """Append-only log of served calls in the SQLite file `path` (normally `INDEX/state.sqlite`)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._db = LocalConnection(path, _SCHEMA)
        self.path = self._db.path
        self._db.get()  # creates the table now, so errors surface at construction

    @classmethod
    def for_index(cls, index: "Index") -> "QueryLog":
        """The log of an index: the same file as its `StateStore` (a temporary one for an unsaved index)."""
        return cls(index.state.path)

    def close(self) -> None:
        self._db.close()

    def append(self, interface: str, operation: str, query: str | None = None, lanes: list[Any] | dict[str, Any] | None = None,
               timings: dict[str, Any] | None = None, fallback: str | None = None, partial: bool = False,
               status: int = 200, error: str | None = None, total_ms: float | None = None) -> int:
        """Write one row in its own transaction; returns its id."""
        with transaction(self._db.get()) as con:
            cur = con.execute(
                "INSERT INTO query_log (created_at, interface, operation, query, lanes, timings, fallback, partial, "
                "status, error, pid, total_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (_now(), interface, operation, query, json.dumps(lanes or [], ensure_ascii=False),
                 json.dumps(timings or {}, ensure_ascii=False), fallback, int(bool(partial)), int(status), error,
                 os.getpid(), None if total_ms is None else float(total_ms)))
        return int(cur.lastrowid or 0)  # an INSERT always sets it

    def entries(self, limit: int | None = 50, interface: str | None = None) -> list[dict[str, Any]]:
        """The newest `limit` rows (None: all), newest first."""
        sql = f"SELECT {', '.join(COLUMNS)} FROM query_log"
        args: list[Any] = []
        if interface:
            sql += " WHERE interface = ?"
            args.append(interface)
        sql += " ORDER BY id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            args.append(int(limit))
        out = []
        for row in self._db.get().execute(sql, args):
            d = dict(zip(COLUMNS, row))
            d["lanes"] = json.loads(d["lanes"])
            d["timings"] = json.loads(d["timings"])
            d["partial"] = bool(d["partial"])
            out.append(d)
        return out

    def prune(self, older_than: str, keep_newest: int) -> int:
        """Delete rows logged before `older_than` (ISO UTC) or beyond the newest `keep_newest`; returns how many."""
        with transaction(self._db.get()) as con:
            cur = con.execute("DELETE FROM query_log WHERE created_at < ? OR id NOT IN "
                              "(SELECT id FROM query_log ORDER BY id DESC LIMIT ?)", (older_than, int(keep_newest)))
            return int(cur.rowcount)

    def count(self) -> int:
        return int(self._db.get().execute("SELECT COUNT(*) FROM query_log").fetchone()[0])


def logged(log: "QueryLog | None", interface: str, operation: str, query: Any, fn: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """`fn()`, with one row in `log` (none when `log` is None) for its answer or its refusal.

    The answer's `_log_lanes` (popped: the lanes returned with their trace ids), `timings_ms`,
    `fallback` and `partial` go into the row. A refusal is logged with its status: an error with
    `status` and `code` (the server's `ApiError`) as given, a `StorageError` as 503, any other
    `SidelightError` (bad input) as 400, anything else as 500; then it is raised unchanged. `query`
    (the query or a trace id) is logged when it is a string. A failing log never fails the call."""
    query = query if isinstance(query, str) else None
    t = time.perf_counter()

    def append(**row: Any) -> None:
        if log is None:
            return
        try:
            log.append(interface, operation, query, total_ms=(time.perf_counter() - t) * 1000.0, **row)
        except Exception:  # the log must never take an answer down with it
            pass

    try:
        out = fn()
    except Exception as exc:
        status, code = getattr(exc, "status", None), getattr(exc, "code", None)
        if isinstance(status, int) and isinstance(code, str):
            append(status=status, error=f"{code}: {getattr(exc, 'message', exc)}")
        elif isinstance(exc, StorageError):
            append(status=503, error=f"storage_unavailable: {exc}")
        elif isinstance(exc, SidelightError):
            append(status=400, error=f"bad_input: {exc}")
        else:
            append(status=500, error=f"{type(exc).__name__}: {exc}")
        raise
    append(lanes=out.pop("_log_lanes", []), timings=out.get("timings_ms", {}), fallback=out.get("fallback"),
           partial=bool(out.get("partial")), status=200)
    return out
