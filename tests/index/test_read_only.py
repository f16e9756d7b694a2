"""Issue 45 item 4: a read-only index folder is diagnosed as read-only; reads and searches keep working."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sidelight.cli import main
from sidelight.index import store

CLI = "import sys; from sidelight.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.fixture
def idx(tmp_path, capsys) -> Path:
    src = tmp_path / "t.jsonl"
    src.write_text("".join(json.dumps({"id": f"r{i}", "title": f"t{i}", "text": f"word{i} common"}) + "\n"
                           for i in range(5)))
    out = tmp_path / "idx"
    assert main(["index", str(src), "-o", str(out), "-q"]) == 0
    assert main(["channels", str(out), "common"]) == 0  # a healthy state.sqlite with one call in it
    capsys.readouterr()
    return out


def _rows(idx: Path) -> tuple:
    import sqlite3

    con = sqlite3.connect(f"{(idx / 'state.sqlite').as_uri()}?mode=ro", uri=True)
    try:
        return tuple(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("traces", "query_log"))
    finally:
        con.close()


def _read_only_fs(monkeypatch, folder: Path) -> None:
    """Make `folder` look like a read-only mount to sidelight (statvfs flag) and to the lock (EROFS)."""
    import errno

    from filelock import FileLock

    real = os.statvfs

    class Flags:
        def __init__(self, st):
            self.st = st
            self.f_flag = st.f_flag | os.ST_RDONLY

    monkeypatch.setattr(os, "statvfs", lambda p: Flags(real(p)) if Path(p) == folder else real(p))

    def acquire(self, *a, **k):
        raise OSError(errno.EROFS, "Read-only file system", self.lock_file)

    monkeypatch.setattr(FileLock, "acquire", acquire)


def test_read_only_folder_is_diagnosed_and_searches_go_on(idx, tmp_path, capsys, monkeypatch):
    healthy = _rows(idx)
    _read_only_fs(monkeypatch, idx)
    assert main(["channels", str(idx), "common"]) == 0
    out = capsys.readouterr().out
    assert "read-only file system" in out and "searches work" in out  # labelled, and answered
    assert main(["feedback", str(idx), "0" * 32, "r1"]) == 2
    err = capsys.readouterr().err
    assert "read-only" in err and "delete" not in err and "not a usable" not in err
    more = tmp_path / "m.jsonl"
    more.write_text('{"id": "x", "text": "y"}\n')
    for argv in (["add", str(idx), str(more)], ["delete", str(idx), "r1"],
                 ["index", str(more), "-o", str(idx), "-q"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "read-only file system" in err and "Traceback" not in err and err.count("\n") == 1, err
    assert main(["log", str(idx)]) == 0
    assert _rows(idx) == healthy  # untouched: nothing written, nothing removed


def test_real_read_only_mount(idx):
    """The same on a real read-only bind mount (needs `unshare -m` as root; skipped elsewhere)."""
    if shutil.which("unshare") is None or os.geteuid() != 0 or \
            subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("needs unshare -m (root) for a read-only bind mount")
    py = f"{sys.executable} -c '{CLI}'"
    script = (f"mount --bind {idx} {idx} && mount -o remount,ro,bind {idx} && "
              f"{py} channels {idx} common && {py} feedback {idx} {'0' * 32} r1; echo rc=$?; "
              f"{py} add {idx} {idx}/index.json; echo rc=$?")
    r = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=120,
                       cwd=Path(__file__).resolve().parents[2])
    assert "read-only file system" in r.stdout and "searches work" in r.stdout, r.stdout + r.stderr
    assert r.stdout.count("rc=2") == 2 and "Traceback" not in r.stderr, r.stderr
    assert "not a usable" not in r.stderr and "delete it" not in r.stderr
    assert store.current_generation(idx) == "gen-000001"
