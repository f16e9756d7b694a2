"""Nothing lost: where `index -o` may write, one writer at a time, crashes mid-swap, a server across an `add`.

The crash and concurrency cases run the real CLI in subprocesses: a SIGKILL at a chosen point of
the write (patched in the child only) and several writers at once, then the folder is opened and
every acknowledged write is counted.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from sidelight.cli import main
from sidelight.corpus import Corpus, Edge, Record
from sidelight.index import Index, store
from sidelight.serve.engine import Service
from sidelight.store.lock import writer_lock

CLI = "import sys; from sidelight.cli import main; sys.exit(main(sys.argv[1:]))"


def run_cli(*args: str, env: dict | None = None, patch: str = "") -> subprocess.CompletedProcess:
    """`sidelight ARGS` in a child process; `patch` is Python run in the child before the command."""
    code = textwrap.dedent(patch) + "\n" + CLI
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def hub_corpus(n: int = 40) -> Corpus:
    """A hub linked to n spokes: every query for a spoke has relation hits to credit."""
    records = [Record("hub", "hub", "the central hub record")]
    records += [Record(f"s{i:03d}", f"spoke {i}", f"spoke number w{i} of the hub") for i in range(n)]
    edges = [Edge("hub", f"s{i:03d}") for i in range(n)] + [Edge(f"s{i:03d}", "hub") for i in range(n)]
    return Corpus("hub", records, edges)


@pytest.fixture
def one_jsonl(tmp_path) -> Path:
    return write_jsonl(tmp_path / "one.jsonl", [{"id": "a", "title": "alpha", "text": "alpha text"}])


# ---- 1. `index -o` never removes what it did not create ------------------------------------------
def test_index_into_a_foreign_folder_is_refused_and_keeps_its_files(tmp_path, one_jsonl, capsys):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "important.txt").write_text("x")
    assert main(["index", str(one_jsonl), "-o", str(victim), "-q"]) == 2
    err = capsys.readouterr().err
    assert "not a sidelight index" in err and "important.txt" in err and "--force" in err
    assert sorted(p.name for p in victim.iterdir()) == ["important.txt"]
    assert (victim / "important.txt").read_text() == "x"


def test_index_onto_a_file_is_refused_even_with_force(tmp_path, one_jsonl, capsys):
    target = tmp_path / "notes.txt"
    target.write_text("keep me")
    for extra in ([], ["--force"]):
        assert main(["index", str(one_jsonl), "-o", str(target), "-q", *extra]) == 2
        assert "is a file" in capsys.readouterr().err
    assert target.read_text() == "keep me"


def test_index_dot_is_refused_in_a_working_folder(tmp_path, one_jsonl, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # holds one.jsonl
    assert main(["index", str(one_jsonl), "-o", ".", "-q"]) == 2
    assert "not a sidelight index" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one.jsonl"]


def test_force_writes_beside_foreign_files_and_removes_none(tmp_path, one_jsonl):
    folder = tmp_path / "mixed"
    folder.mkdir()
    (folder / "important.txt").write_text("x")
    assert main(["index", str(one_jsonl), "-o", str(folder), "-q", "--force"]) == 0
    assert main(["index", str(one_jsonl), "-o", str(folder), "-q"]) == 0  # now an index: rebuilt in place
    assert (folder / "important.txt").read_text() == "x"
    assert Index.load(folder).corpus.ids == ["a"]


def test_empty_folder_and_existing_index_are_written(tmp_path, one_jsonl):
    (tmp_path / "empty").mkdir()
    assert main(["index", str(one_jsonl), "-o", str(tmp_path / "empty"), "-q"]) == 0
    assert main(["index", str(one_jsonl), "-o", str(tmp_path / "empty"), "-q"]) == 0
    gens = sorted(p.name for p in (tmp_path / "empty").iterdir() if p.name.startswith(store.GEN_PREFIX))
    assert gens == ["gen-000001", "gen-000002"]  # the current one and the previous one
    assert store.current_generation(tmp_path / "empty") == "gen-000002"


def test_a_version_2_index_is_rebuilt_in_place_keeping_its_state_and_foreign_files(tmp_path, one_jsonl):
    old = tmp_path / "old"
    (old / "lexical").mkdir(parents=True)
    (old / "records.jsonl").write_text("{}\n")
    (old / "lexical" / "vocab.json").write_text("{}")
    (old / "state.sqlite").write_bytes(b"")
    (old / "notes.txt").write_text("mine")
    (old / "manifest.json").write_text(json.dumps({"format": "sidelight-index", "version": 2, "files": {
        "records.jsonl": "0", "lexical/vocab.json": "0"}}))
    assert main(["index", str(one_jsonl), "-o", str(old), "-q"]) == 0
    assert sorted(p.name for p in old.iterdir() if not p.name.startswith(".")) == [
        "gen-000001", "index.json", "notes.txt", "state.sqlite"]


# ---- 4. one writer at a time ------------------------------------------------------------------------
def test_two_concurrent_adds_both_land(tmp_path):
    idx = Index.build(hub_corpus(5), progress=False).save(tmp_path / "idx")
    files = [write_jsonl(tmp_path / f"add{j}.jsonl", [{"id": f"new{j}-{i}", "title": f"n{j}", "text": f"added {j} {i}"}
                                                      for i in range(300)]) for j in range(2)]
    procs = [subprocess.Popen([sys.executable, "-c", CLI, "add", str(idx), str(f)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for f in files]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    assert [rc for rc, _ in results] == [0, 0], results
    ids = set(Index.load(idx).corpus.ids)
    assert all(f"new{j}-{i}" in ids for j in range(2) for i in range(300))
    assert len(ids) == 6 + 600


def test_a_writer_that_waits_too_long_names_the_holder(tmp_path, one_jsonl):
    idx = Index.build(hub_corpus(3), progress=False).save(tmp_path / "idx")
    with writer_lock(idx):
        r = run_cli("add", str(idx), str(one_jsonl), env={"SIDELIGHT_LOCK_TIMEOUT": "0.3"})
        assert r.returncode == 2, r.stderr
        assert "locked by another writer" in r.stderr and f"pid {os.getpid()}" in r.stderr
        assert "Traceback" not in r.stderr
    assert "a" not in Index.load(idx).corpus.ids  # the refused add changed nothing


# ---- 5. a crash at any point leaves the old or the new generation ------------------------------------
KILL_AT = {
    "while writing": "store.write_manifest",   # the new generation is half written
    "between the renames": "store.publish",    # renamed into place, not yet published
}


@pytest.mark.parametrize("point", sorted(KILL_AT))
def test_sigkill_during_add_leaves_the_old_index_and_the_next_writer_recovers(tmp_path, point):
    idx = Index.build(hub_corpus(3), progress=False).save(tmp_path / "idx")
    before = Index.load(idx).corpus.ids
    extra = write_jsonl(tmp_path / "x.jsonl", [{"id": "x", "title": "x", "text": "xylophone"}])
    patch = f"""
        import os, signal
        from sidelight.index import store
        def die(*a, **k):
            os.kill(os.getpid(), signal.SIGKILL)
        {KILL_AT[point]} = die
    """
    r = run_cli("add", str(idx), str(extra), patch=patch)
    assert r.returncode == -signal.SIGKILL
    assert Index.load(idx).corpus.ids == before  # the old generation is still current and whole
    leftovers = [p.name for p in idx.iterdir() if p.name.startswith((store.TMP_PREFIX, store.GEN_PREFIX))]
    assert len(leftovers) == 2  # the old generation and the dead writer's folder
    r = run_cli("add", str(idx), str(extra))
    assert r.returncode == 0, r.stderr
    expected = "left by an interrupted write" if point == "while writing" else "never published"
    assert expected in r.stderr
    assert Index.load(idx).corpus.ids == before + ["x"]
    assert not [p for p in idx.iterdir() if p.name.startswith(store.TMP_PREFIX)]


def test_an_interrupted_first_build_is_named_and_cleaned(tmp_path, one_jsonl):
    out = tmp_path / "new"
    patch = """
        import os, signal
        from sidelight.index import store
        store.publish = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)
    """
    assert run_cli("index", str(one_jsonl), "-o", str(out), "-q", patch=patch).returncode == -signal.SIGKILL
    r = run_cli("search", str(out), "alpha")
    assert r.returncode == 2 and "interrupted" in r.stderr
    assert run_cli("index", str(one_jsonl), "-o", str(out), "-q").returncode == 0
    assert Index.load(out).corpus.ids == ["a"]


def test_a_derived_folder_lost_between_its_renames_is_rolled_back(tmp_path):
    dest = tmp_path / "serendipity"
    old = tmp_path / ".serendipity.old-999"
    old.mkdir()
    (old / "meta.json").write_text("{}")  # the state a writer killed between its two renames leaves
    with pytest.raises(RuntimeError):
        with store.atomic_folder(dest):
            raise RuntimeError("this write fails")
    assert (dest / "meta.json").read_text() == "{}" and not old.exists()


# ---- 2 and 3. a running service across an `add` --------------------------------------------------------
def test_service_follows_an_add_and_keeps_every_acknowledged_feedback(tmp_path):
    idx = Index.build(hub_corpus(40), progress=False).save(tmp_path / "idx")
    service = Service(Index.load(idx))
    extra = write_jsonl(tmp_path / "more.jsonl", [{"id": f"m{i:04d}", "title": f"more {i}", "text": f"zebra{i} more"}
                                                  for i in range(2000)])
    acknowledged: list[tuple[str, str]] = []
    errors: list[BaseException] = []
    done = threading.Event()

    def feeder() -> None:
        i = 0
        while not done.is_set() or i < 10:
            try:
                out = service.channels(f"spoke w{i % 40}", limit=3)
                hit = out["relation"]["hits"][0]["id"]
                service.feedback(out["relation"]["trace_id"], hit)
                acknowledged.append((out["relation"]["trace_id"], hit))
            except BaseException as exc:  # noqa: BLE001 - collected and asserted below
                errors.append(exc)
                return
            i += 1

    t = threading.Thread(target=feeder)
    t.start()
    r = run_cli("add", str(idx), str(extra))
    done.set()
    t.join(timeout=120)
    assert r.returncode == 0, r.stderr
    assert not errors, errors
    assert service.search("zebra1999", k=1)["hits"][0]["id"] == "m1999"  # the new generation is served
    assert Path(service.index.state.path) == idx / "state.sqlite"
    with sqlite3.connect(idx / "state.sqlite") as con:
        stored = set(con.execute("SELECT trace_id, node_id FROM successes").fetchall())
    assert len(acknowledged) >= 10 and set(acknowledged) <= stored


def test_an_unreadable_pointer_rolls_forward_to_the_newest_whole_generation(tmp_path, one_jsonl):
    idx = Index.build(hub_corpus(3), progress=False).save(tmp_path / "idx")
    Index.build(hub_corpus(4), progress=False).save(idx)  # gen-000002 current, gen-000001 kept
    (idx / store.POINTER).write_text("{garbage")
    with pytest.raises(Exception, match="corrupt index pointer"):
        Index.load(idx)
    with writer_lock(idx):
        said = store.recover(idx)
    assert said == ["index.json was unreadable; pointed it at gen-000002, the newest whole generation"]
    assert len(Index.load(idx).corpus) == 5 and (idx / "gen-000001").is_dir()
