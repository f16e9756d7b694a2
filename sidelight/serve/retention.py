"""How long INDEX/state.sqlite keeps traces and query-log rows, and the thread that applies it in a server.

Every lane call stores a trace and every served call a log row, so without a bound the state file
grows with traffic (2,854 traces and 7 MB after a 20-second load test). The documented retention:

* a trace is deleted when it is older than `max_age_days` (default 7) or not among the newest
  `max_traces` (default 10,000), **except** a trace with a success (feedback rows and the traces
  they credit are kept for good) and a trace younger than `window_s` (default 600 s: a client may
  still credit one of its hits);
* a query-log row is deleted when older than `max_age_days` or not among the newest
  `max_log_rows` (default 100,000).

`sidelight serve` and `sidelight mcp` apply it at start and every `every_s` (default 60 s) in a
background thread; `sidelight state prune INDEX` applies it once and compacts the file (VACUUM).
Between compactions SQLite reuses freed pages, so the file stops growing.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from ..errors import StorageError
from ..feedback.state import StateStore
from ..lanes.querylog import QueryLog


@dataclass(frozen=True)
class Retention:
    max_age_days: float = 7.0
    max_traces: int = 10_000
    window_s: float = 600.0
    max_log_rows: int = 100_000
    every_s: float = 60.0


def _iso(dt: datetime) -> str:
    return dt.isoformat(timespec="microseconds")


def prune_state(state: StateStore, log: QueryLog, retention: Retention, now: datetime | None = None) -> dict:
    """Apply `retention` once; returns {"traces": deleted, "log_rows": deleted}."""
    now = now or datetime.now(timezone.utc)
    older = _iso(now - timedelta(days=retention.max_age_days))
    traces = state.prune_traces(older, retention.max_traces, _iso(now - timedelta(seconds=retention.window_s)))
    rows = log.prune(older, retention.max_log_rows)
    return {"traces": traces, "log_rows": rows}


def release_space(path: Path) -> None:
    """Give pruned pages back cheaply while serving: an incremental vacuum (files created with
    auto_vacuum=INCREMENTAL) and a truncating WAL checkpoint; skipped quietly when writers are busy."""
    con = sqlite3.connect(path, timeout=1, isolation_level=None)
    try:
        con.executescript("PRAGMA incremental_vacuum;")  # executescript steps it to the end (one page per step)
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except sqlite3.OperationalError:
        pass  # busy: the next run tries again
    finally:
        con.close()


def compact(path: Path) -> None:
    """VACUUM the state file (gives freed pages back to the file system); needs a moment of exclusive use."""
    con = sqlite3.connect(path, timeout=30, isolation_level=None)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.execute("VACUUM")
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except sqlite3.OperationalError as exc:
        raise StorageError(f"{path}: could not compact ({exc}); the rows were pruned, the space is reused") from None
    finally:
        con.close()


class RetentionThread:
    """Applies a `Retention` to a served index's state every `every_s` until `stop()` (a daemon thread)."""

    def __init__(self, service, retention: Retention) -> None:
        self.service, self.retention = service, retention
        self.totals = {"traces": 0, "log_rows": 0, "runs": 0, "errors": 0}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="sidelight-retention", daemon=True)

    def start(self) -> "RetentionThread":
        self._thread.start()
        return self

    def run_once(self) -> dict:
        idx = self.service.index
        done = prune_state(idx.state, self.service.log, self.retention)
        if done["traces"] or done["log_rows"]:
            release_space(idx.state.path)
        for k, v in done.items():
            self.totals[k] += v
        self.totals["runs"] += 1
        return done

    def _loop(self) -> None:
        while True:
            try:
                self.run_once()
            except Exception:  # a full or read-only disk must not stop the server; the next run retries
                self.totals["errors"] += 1
            if self._stop.wait(self.retention.every_s):
                return

    def stop(self) -> None:
        self._stop.set()
