"""Issue 45, "Nothing lost, round three": index writes that verify before they publish, follow the
umask, refuse what cannot work, and never end in a traceback."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sidelight.cli import main
from sidelight.corpus import Corpus, Record
from sidelight.index import Index, store

CLI = "import sys; from sidelight.cli import main; sys.exit(main(sys.argv[1:]))"


def run_cli(*args: str, patch: str = "") -> subprocess.CompletedProcess:
    """`sidelight ARGS` in a child process; `patch` is Python run in the child first."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(patch) + "\n" + CLI, *args],
                          capture_output=True, text=True, timeout=300)


def write_jsonl(path: Path, n: int = 5, start: int = 0) -> Path:
    path.write_text("".join(json.dumps({"id": f"r{i}", "title": f"t{i}", "text": f"word{i} common"}) + "\n"
                            for i in range(start, start + n)))
    return path


def small() -> Corpus:
    return Corpus("s", [Record(f"r{i}", f"t{i}", f"word{i} common") for i in range(5)])


# ---- item 10: generation folders follow the umask --------------------------------------------------
@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_generation_modes_follow_the_umask(tmp_path, umask):
    old = os.umask(umask)
    try:
        Index.write(small(), tmp_path / "idx", progress=False)
    finally:
        os.umask(old)
    root = tmp_path / "idx"
    gen = store.data_folder(root)
    assert stat.S_IMODE(gen.stat().st_mode) == 0o777 & ~umask
    assert stat.S_IMODE((root / store.POINTER).stat().st_mode) == 0o666 & ~umask
    for p in gen.rglob("*"):  # every file a reader needs, at what open()/mkdir() would have made
        assert stat.S_IMODE(p.stat().st_mode) == (0o777 if p.is_dir() else 0o666) & ~umask, p


# ---- item 1: a write opens what it built before it publishes; shard counts against the file limit ----
LOW_FILES = "import resource; resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))\n"


def test_a_generation_that_cannot_be_opened_is_never_published(tmp_path):
    src = write_jsonl(tmp_path / "t.jsonl", 300)
    idx = tmp_path / "X"
    assert main(["index", str(src), "-o", str(idx), "-q"]) == 0
    before = store.current_generation(idx)
    # the up-front refusal switched off, so the build runs into the limit when it opens its shards
    patch = LOW_FILES + "import sidelight.index.limits as L; L.FILES_PER_SHARD = 0; L.FILES_BASE = 0"
    r = run_cli("index", str(src), "-o", str(idx), "--shards", "16", "-q", patch=patch)
    assert r.returncode == 2, r.stderr
    assert "Too many open files" in r.stderr and "Traceback" not in r.stderr
    assert store.current_generation(idx) == before  # the pointer never moved
    assert len(Index.load(idx, verify=True).corpus) == 300
    # and the next write does not prune the generation that is still current
    assert main(["add", str(idx), str(write_jsonl(tmp_path / "more.jsonl", 2, start=300))]) == 0
    assert len(Index.load(idx).corpus) == 302


def test_a_failing_check_removes_the_generation_and_keeps_the_pointer(tmp_path, monkeypatch):
    idx = tmp_path / "X"
    Index.write(small(), idx, progress=False)
    before = sorted(p.name for p in idx.iterdir())

    def refuse(*a, **k):
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(Index, "open_generation", classmethod(lambda cls, *a, **k: refuse()))
    with pytest.raises(OSError):
        Index.build(small(), progress=False).save(idx)
    monkeypatch.undo()
    assert sorted(p.name for p in idx.iterdir()) == before
    assert len(Index.load(idx).corpus) == 5


def test_more_shards_than_the_file_limit_opens_is_refused_up_front(tmp_path):
    src = write_jsonl(tmp_path / "t.jsonl", 50)
    idx = tmp_path / "X"
    r = run_cli("index", str(src), "-o", str(idx), "--shards", "64", "-q", patch=LOW_FILES)
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    from sidelight.index.limits import FILES_BASE, FILES_PER_SHARD
    need, fits = FILES_BASE + 64 * FILES_PER_SHARD, (256 - FILES_BASE) // FILES_PER_SHARD
    assert f"needs {need} open files" in r.stderr and f"ulimit -n {need}" in r.stderr
    assert f"at most {fits} shards" in r.stderr
    assert not idx.exists()  # refused before anything was built
    ok = run_cli("index", str(src), "-o", str(idx), "--shards", str(fits), "-q", patch=LOW_FILES)
    assert ok.returncode == 0, ok.stderr


# ---- item 8: small lies -----------------------------------------------------------------------------
@pytest.fixture
def built(tmp_path) -> Path:
    idx = tmp_path / "idx"
    assert main(["index", str(write_jsonl(tmp_path / "t.jsonl", 5)), "-o", str(idx), "-q"]) == 0
    return idx


def test_delete_counts_what_it_deleted(built, capsys):
    capsys.readouterr()
    assert main(["delete", str(built), "r1", "r1", "r1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("deleted 1 record (2 repeated id(s) ignored); 4 in"), out
    assert len(Index.load(built).corpus) == 4 and "r1" not in Index.load(built).corpus.position


def test_adding_an_empty_file_writes_no_generation(built, tmp_path, capsys):
    before = sorted(p.name for p in built.iterdir())
    pointer = (built / store.POINTER).stat()
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["add", str(built), str(empty)]) == 0
    assert "added 0 records" in capsys.readouterr().out
    assert sorted(p.name for p in built.iterdir()) == before
    assert (built / store.POINTER).stat().st_mtime_ns == pointer.st_mtime_ns


def test_check_names_garbage_state_and_leftovers(built, capsys):
    (built / f"{store.TMP_PREFIX}abc").mkdir()
    (built / "gen-000009").mkdir()  # never published: newer than the current gen-000001
    capsys.readouterr()
    assert main(["check", str(built)]) == 0
    out = capsys.readouterr().out
    assert f"{store.TMP_PREFIX}abc" in out and "gen-000009 (written but never published)" in out
    (built / "state.sqlite").write_bytes(b"this is not sqlite" * 100)
    assert main(["check", str(built)]) == 2
    err = capsys.readouterr().err
    assert "state.sqlite: not a usable SQLite database" in err and "delete" not in err


def test_a_torn_pointer_says_how_to_recover_and_add_recovers(built, tmp_path, capsys):
    (built / store.POINTER).write_text('{"format": "sideli')  # torn mid-write
    assert main(["search", str(built), "common"]) == 2
    assert "the next write" in capsys.readouterr().err
    assert main(["add", str(built), str(write_jsonl(tmp_path / "m.jsonl", 1, start=9))]) == 0
    assert "pointed it at gen-000001" in capsys.readouterr().err
    assert len(Index.load(built).corpus) == 6
