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
