"""Serendipity tables in ``INDEX/state.sqlite`` (prefix ``ser_``): WAL, busy timeout, BEGIN IMMEDIATE writes.

The file is the index's mutable state (it survives index rewrites); `StateStore` owns its own
tables there and these never touch them.
"""

from __future__ import annotations

import os
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

from ..store.sqlite import LocalConnection, transaction

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ser_certificates (
    certificate_id TEXT PRIMARY KEY, created_at TEXT NOT NULL, verdict TEXT NOT NULL, summary TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ser_usage (
    session_id TEXT NOT NULL, marker INTEGER NOT NULL, uses INTEGER NOT NULL, PRIMARY KEY (session_id, marker));
CREATE TABLE IF NOT EXISTS ser_traces (
    trace_id TEXT PRIMARY KEY, created_at TEXT NOT NULL, query TEXT NOT NULL, session_id TEXT NOT NULL,
    dial INTEGER NOT NULL, seed INTEGER NOT NULL, certificate_id TEXT NOT NULL, mixed TEXT NOT NULL,
    seated TEXT NOT NULL, panel TEXT NOT NULL, answer_sha256 TEXT, revealed_at TEXT);
CREATE TABLE IF NOT EXISTS ser_verdicts (
    id INTEGER PRIMARY KEY AUTOINCREMENT, created_at TEXT NOT NULL, a_id TEXT NOT NULL, b_id TEXT NOT NULL,
    marker INTEGER NOT NULL, verdict TEXT NOT NULL, who TEXT NOT NULL, note TEXT, trace_id TEXT,
    certificate_id TEXT);
CREATE TABLE IF NOT EXISTS ser_auto_labels (
    id INTEGER PRIMARY KEY AUTOINCREMENT, created_at TEXT NOT NULL, a_id TEXT NOT NULL, b_id TEXT NOT NULL,
    marker INTEGER NOT NULL, label TEXT NOT NULL, source TEXT NOT NULL, trace_id TEXT);
CREATE TABLE IF NOT EXISTS ser_rulings (
    id INTEGER PRIMARY KEY AUTOINCREMENT, created_at TEXT NOT NULL, kind TEXT NOT NULL,
    marker INTEGER, a_id TEXT, b_id TEXT, who TEXT NOT NULL, reason TEXT);
CREATE TABLE IF NOT EXISTS ser_calibration (
    certificate_id TEXT NOT NULL, a_id TEXT NOT NULL, b_id TEXT NOT NULL, marker INTEGER NOT NULL,
    seed INTEGER NOT NULL, PRIMARY KEY (certificate_id, a_id, b_id));
"""


def now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class SerDB:
    """The serendipity tables, through the project's shared SQLite connection helper."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self._local = LocalConnection(self.path, _SCHEMA)

    @classmethod
    def for_index(cls, index) -> "SerDB":
        return cls(index.state.path)

    def con(self) -> sqlite3.Connection:
        return self._local.get()

    def write(self, sql: str, args=()) -> sqlite3.Cursor:
        with transaction(self.con()) as c:
            return c.execute(sql, args)

    def write_many(self, statements: list[tuple[str, tuple]]) -> None:
        with transaction(self.con()) as c:
            for sql, args in statements:
                c.execute(sql, args)

    def rows(self, sql: str, args=()) -> list[tuple]:
        return self.con().execute(sql, args).fetchall()

    def close(self) -> None:
        self._local.close()

    # ---- session usage -------------------------------------------------------------------------
    def usage(self, session_id: str) -> dict[int, int]:
        return {int(m): int(u) for m, u in self.rows("SELECT marker, uses FROM ser_usage WHERE session_id = ?",
                                                     (session_id,))}

    def add_usage(self, session_id: str, markers: list[int]) -> None:
        if markers:
            self.write_many([("INSERT INTO ser_usage VALUES (?, ?, 1) ON CONFLICT(session_id, marker) "
                              "DO UPDATE SET uses = uses + 1", (session_id, int(m))) for m in markers])

    # ---- rulings ---------------------------------------------------------------------------------
    def ruled_markers(self) -> set[int]:
        return {int(r[0]) for r in self.rows("SELECT marker FROM ser_rulings WHERE kind = 'marker'")}

    def ruled_pairs(self) -> set[tuple[str, str]]:
        return {tuple(sorted((a, b))) for a, b in self.rows("SELECT a_id, b_id FROM ser_rulings WHERE kind = 'pair'")}
