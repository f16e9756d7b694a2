"""The query log: shared store in INDEX/state.sqlite, concurrent writers lose nothing, `sidelight log` prints it."""

from __future__ import annotations

import json
import multiprocessing as mp

from sidelight.cli import main
from sidelight.feedback.state import StateStore
from sidelight.lanes.querylog import QueryLog

N_PROC, N_ROWS = 4, 150


def _writer(path: str, worker: int) -> None:
    log, state = QueryLog(path), StateStore(path)
    for i in range(N_ROWS):
        log.append("http", "channels", f"w{worker} q{i}", [{"channel": "lexical"}], {"lexical": 0.1}, None,
                   i % 7 == 0, 200)
        if i % 10 == 0:  # traces interleave with log rows in the same file
            state.new_trace(f"w{worker} q{i}", "lexical", [{"node_id": "a", "rank": 1, "score": 1.0}])


def test_concurrent_processes_lose_nothing(tmp_path):
    path = tmp_path / "state.sqlite"
    QueryLog(path)  # create schema up front, as a server does
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(path), w)) for w in range(N_PROC)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    log = QueryLog(path)
    rows = log.entries(None)
    assert log.count() == len(rows) == N_PROC * N_ROWS
    assert len({r["id"] for r in rows}) == len(rows)
    assert {r["query"] for r in rows} == {f"w{w} q{i}" for w in range(N_PROC) for i in range(N_ROWS)}
    assert sum(r["partial"] for r in rows) == N_PROC * len(range(0, N_ROWS, 7))
    assert len(StateStore(path).trace_ids()) == N_PROC * len(range(0, N_ROWS, 10))
    assert len({r["pid"] for r in rows}) == N_PROC


def test_threads_in_one_process(tmp_path):
    import threading

    log = QueryLog(tmp_path / "state.sqlite")
    threads = [threading.Thread(target=lambda w=w: [log.append("mcp", "search", f"{w}-{i}") for i in range(100)])
               for w in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert log.count() == 600


def test_log_command(foldoc_copy, capsys):
    from sidelight.index import Index
    from sidelight.serve.engine import Service

    svc = Service(Index.load(foldoc_copy), interface="cli")
    svc.channels("unix shell", 3)
    svc.close()
    assert main(["log", str(foldoc_copy), "-k", "5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["total"] >= 1
    row = out["entries"][0]
    assert row["interface"] == "cli" and row["query"] == "unix shell" and row["operation"] == "channels"
    assert main(["log", str(foldoc_copy), "--limit", "5"]) == 0  # the old spelling still works
    assert "channels" in capsys.readouterr().out
    assert main(["log", str(foldoc_copy / "missing")]) == 2
