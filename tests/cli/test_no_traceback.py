"""Issue 45 item 7: inputs that used to end in a traceback now end in one line and exit 2."""

from __future__ import annotations

import errno
import json

import numpy as np
import pytest

from sidelight.index import Index, store

from .test_bad_input import refused


def _records(path, rows) -> None:
    path.write_text("".join(json.dumps(o) + "\n" for o in rows))


@pytest.fixture
def source(tmp_path):
    p = tmp_path / "notes.jsonl"
    _records(p, [{"id": "n1", "title": "Graph search", "text": "walks over links between notes"},
                 {"id": "n2", "title": "Lexical search", "text": "bm25 matches query words"}])
    return p


def test_output_through_a_file(tmp_path, source, capsys):
    f = tmp_path / "FILE"
    f.write_text("x")
    refused(capsys, ["index", str(source), "-o", str(f / "x"), "-q"], "is a file, not a folder")
    assert f.read_text() == "x"


def test_lone_surrogate_id_in_index_and_add(tmp_path, index, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "\\ud800", "text": "x"}\n')
    refused(capsys, ["index", str(bad), "-o", str(tmp_path / "j"), "-q"], "bad.jsonl:1", "surrogate")
    before = store.current_generation(index)
    refused(capsys, ["add", str(index), str(bad)], "surrogate")
    bad.write_text('{"id": "ok", "title": "a \\udc00 b", "text": "x"}\n')
    refused(capsys, ["add", str(index), str(bad)], "title", "surrogate")
    assert store.current_generation(index) == before


def test_query_bytes_that_are_not_utf8(index, capsys):
    query = b"caf\xe9".decode("utf-8", "surrogateescape")  # what Python makes of $'caf\xe9' in argv
    refused(capsys, ["channels", str(index), query], "not valid Unicode", "0xe9")
    refused(capsys, ["search", str(index), query], "not valid Unicode", "0xe9")


@pytest.mark.parametrize("argv,says", [(["serve", "IDX", "--port", "70000"], "--port must be <= 65535, got 70000"),
                                       (["serve", "IDX", "--port", "-1"], "--port must be >= 0, got -1"),
                                       (["mcp", "IDX", "--http", "65536"], "--http must be <= 65535")])
def test_port_out_of_range(index, capsys, argv, says):
    argv = [str(index) if a == "IDX" else a for a in argv]
    refused(capsys, argv, says)


def _disk_full(*a, **k):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_full_disk_during_add_and_index(tmp_path, index, source, capsys, monkeypatch):
    before = store.current_generation(index)
    more = tmp_path / "more.jsonl"
    _records(more, [{"id": "n9", "text": "more words"}])
    monkeypatch.setattr(np, "save", _disk_full)
    refused(capsys, ["add", str(index), str(more)], "No space left on device", "disk is full")
    refused(capsys, ["index", str(source), "-o", str(index), "-q"], "disk is full")
    monkeypatch.undo()
    assert store.current_generation(index) == before
    assert len(Index.load(index, verify=True).corpus) == 2
    assert not [p for p in index.iterdir() if p.name.startswith(store.TMP_PREFIX)]


class _FullAtCommit:
    """A connection whose COMMIT fails as SQLite does on a full disk."""

    def __init__(self, con):
        self.con = con

    def execute(self, sql, *a):
        if sql == "COMMIT":
            import sqlite3

            raise sqlite3.OperationalError("database or disk is full")
        return self.con.execute(sql, *a)

    def __getattr__(self, name):
        return getattr(self.con, name)


def test_full_disk_in_the_state_file(index, capsys, monkeypatch):
    import sidelight.feedback.state as F
    import sidelight.lanes.querylog as Q
    from sidelight.store import sqlite as S

    real = S.transaction
    for module in (S, F, Q):
        monkeypatch.setattr(module, "transaction", lambda con: real(_FullAtCommit(con)))
    refused(capsys, ["channels", str(index), "graph search"], "disk is full", "nothing was recorded")
    refused(capsys, ["log", str(index)], "disk is full")
    monkeypatch.undo()
    from sidelight.feedback import StateStore

    with StateStore(index / "state.sqlite") as st:  # nothing half-written
        assert st.trace_ids() == []
