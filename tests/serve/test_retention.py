"""Issue 45 item 11: a documented retention for traces and the query log; feedback rows are kept."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from sidelight.cli import main
from sidelight.feedback import StateStore
from sidelight.lanes.querylog import QueryLog
from sidelight.serve.retention import Retention, RetentionThread, prune_state

NOW = datetime(2026, 1, 10, tzinfo=timezone.utc)


def _trace(store: StateStore, age: timedelta, query: str) -> str:
    tid = store.new_trace(query, "lexical", [{"node_id": "a", "rank": 1, "score": 1.0}])
    with store._write() as con:
        con.execute("UPDATE traces SET created_at = ? WHERE trace_id = ?",
                    ((NOW - age).isoformat(timespec="microseconds"), tid))
    return tid


def test_prune_keeps_feedback_young_and_newest(tmp_path):
    path = tmp_path / "state.sqlite"
    store, log = StateStore(path), QueryLog(path)
    # ages in days: 0..9 (q0 newest); q8 has feedback; q0 is inside the feedback window
    ids = {f"q{i}": _trace(store, timedelta(days=i, minutes=1 if i else 0), f"q{i}") for i in range(10)}
    store.record_success(ids["q8"], "a")
    for i in range(6):
        log.append("http", "search", f"l{i}")
    r = Retention(max_age_days=7, max_traces=3, window_s=30, max_log_rows=4)
    done = prune_state(store, log, r, now=NOW)
    kept = {store.get_trace(t).query for t in store.trace_ids()}
    # hand-computed: newest three are q0, q1, q2; q8 (feedback) stays although 8 days old; the rest go
    assert kept == {"q0", "q1", "q2", "q8"} and done["traces"] == 6
    assert store.successes() == [(ids["q8"], "a")]
    assert log.count() == 4 and done["log_rows"] == 2 and [e["query"] for e in log.entries(None)] == \
        ["l5", "l4", "l3", "l2"]
    # the window protects a young trace even past the count
    done = prune_state(store, log, Retention(max_traces=0, window_s=3600), now=NOW)
    assert {store.get_trace(t).query for t in store.trace_ids()} == {"q0", "q8"}


def test_state_prune_command(tmp_path, capsys):
    src = tmp_path / "t.jsonl"
    src.write_text("".join(json.dumps({"id": f"r{i}", "text": f"word{i} common"}) + "\n" for i in range(5)))
    idx = tmp_path / "idx"
    assert main(["index", str(src), "-o", str(idx), "-q"]) == 0
    for _ in range(30):
        assert main(["channels", str(idx), "common words"]) == 0
    capsys.readouterr()
    assert main(["state", "prune", str(idx), "--max-traces", "4", "--window-s", "0", "--max-log-rows", "5"]) == 0
    out = capsys.readouterr().out
    with StateStore(idx / "state.sqlite") as store:
        assert len(store.trace_ids()) == 4
    assert "kept 4 trace(s), 5 log row(s)" in out
    assert main(["state", "prune", str(idx), "--max-traces", "-1"]) == 2


def test_the_server_applies_it(tmp_path):
    from sidelight.serve.engine import Service

    from .conftest import hand_index

    idx = hand_index()
    idx.dense = None  # the fake vectors are not saved
    idx.save(tmp_path / "idx")
    svc = Service(idx)
    for _ in range(12):
        svc.channels("alpha engine")
    thread = RetentionThread(svc, Retention(max_traces=5, window_s=0, max_log_rows=3, every_s=3600))
    thread.run_once()
    assert len(svc.index.state.trace_ids()) == 5 and svc.log.count() == 3
    thread.start()
    thread.stop()


def test_pruned_pages_go_back_to_the_file_system(tmp_path):
    """A state file made by this sidelight (auto_vacuum incremental) shrinks after a server's retention run."""
    import sqlite3

    from sidelight.serve.retention import release_space

    path = tmp_path / "state.sqlite"
    store, log = StateStore(path), QueryLog(path)
    hits = [{"node_id": f"n{i}", "rank": i + 1, "score": 1.0} for i in range(50)]
    for i in range(400):
        store.new_trace("q" * 200, "lexical", hits)

    def pages():
        with sqlite3.connect(path) as con:
            return con.execute("PRAGMA page_count").fetchone()[0]

    release_space(path)
    full = pages()
    prune_state(store, log, Retention(max_traces=10, window_s=0))
    release_space(path)
    assert pages() < full / 5
    assert (tmp_path / "state.sqlite-wal").stat().st_size == 0  # truncated by the checkpoint
