"""A freeze pins what ranks: the corpus hash covers metadata, and the data files and Debian packages
the corpus was read from are recorded and checked before every run."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from sidelight.cli import main
from sidelight.corpus.model import Corpus, Record
from sidelight.lab import provenance
from sidelight.lab.runner import RefusedError, freeze, run_split

from tests.lab.test_runner import make_lab


def test_the_content_hash_changes_with_metadata_and_keeps_corpora_without_it():
    plain = Corpus("c", [Record("a", "A", "text")])
    tagged = Corpus("c", [Record("a", "A", "text", {"pos": "noun", "word_counts": [3]})])
    other = Corpus("c", [Record("a", "A", "text", {"word_counts": [4], "pos": "noun"})])
    reordered = Corpus("c", [Record("a", "A", "text", {"word_counts": [3], "pos": "noun"})])
    # hand-built oracle: the line json.dumps gives, with the sorted metadata as a fifth item when present
    line = json.dumps(["a", "A", "text", [], {"pos": "noun", "word_counts": [3]}]).encode() + b"\n"
    assert tagged.content_hash() == hashlib.sha256(line + b"--edges--\n").hexdigest()
    assert plain.content_hash() == hashlib.sha256(json.dumps(["a", "A", "text", []]).encode()
                                                  + b"\n--edges--\n").hexdigest()
    assert len({plain.content_hash(), tagged.content_hash(), other.content_hash()}) == 3
    assert reordered.content_hash() == tagged.content_hash()  # a JSON object: key order is not content


def test_a_freeze_on_a_corpus_whose_metadata_changed_is_refused(tmp_path, capsys):
    proto = make_lab(tmp_path / "lab")
    out = tmp_path / "run"
    rec = freeze(proto, out)
    corpus_file = tmp_path / "lab" / "corpus.jsonl"
    assert rec["corpus_sources"]["files"][str(corpus_file)]["sha256"] == hashlib.sha256(
        corpus_file.read_bytes()).hexdigest()
    rows = [json.loads(x) for x in corpus_file.read_text().splitlines()]
    rows[3]["metadata"] = {"pos": "noun"}  # ids, titles and texts unchanged: only metadata moves
    corpus_file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(RefusedError, match=r"corpus_hash changed \(the corpus's records, their metadata or its edges"):
        run_split(proto, "dev", out)
    assert main(["lab", "run", str(proto), "--split", "dev", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "refusing to run, frozen inputs changed" in err and f"corpus file {corpus_file}" in err
    assert not (out / "dev").exists()


def test_a_run_is_refused_when_a_debian_package_version_differs(tmp_path, monkeypatch):
    proto = make_lab(tmp_path / "lab")
    out = tmp_path / "run"
    monkeypatch.setattr(provenance, "debian_package", lambda path: {"name": "dict-foldoc", "version": "20230119-1"})
    assert freeze(proto, out)["corpus_sources"]["packages"] == {"dict-foldoc": "20230119-1"}
    run_split(proto, "dev", out)  # same versions: runs
    monkeypatch.setattr(provenance, "debian_package", lambda path: {"name": "dict-foldoc", "version": "20240101-1"})
    with pytest.raises(RefusedError, match="Debian package dict-foldoc: frozen 20230119-1, now 20240101-1"):
        run_split(proto, "test", out)
    assert not (out / "test").exists()


def _status_version(package: str) -> str | None:
    """The installed version from dpkg's status file, parsed here: the oracle for `dpkg-query`."""
    status = Path("/var/lib/dpkg/status")
    for block in status.read_text(encoding="utf-8", errors="replace").split("\n\n"):
        if re.search(rf"^Package: {re.escape(package)}$", block, re.M) and "Status: install ok installed" in block:
            return re.search(r"^Version: (.+)$", block, re.M).group(1)
    return None


@pytest.mark.skipif(not Path("/var/lib/dpkg/status").is_file() or _status_version("dict-foldoc") is None,
                    reason="needs Debian's dict-foldoc")
def test_foldoc_sources_name_the_installed_package_and_both_files():
    info = provenance.provenance(provenance.source_files("foldoc"))
    assert info["packages"] == {"dict-foldoc": _status_version("dict-foldoc")}
    for f in ("/usr/share/dictd/foldoc.index", "/usr/share/dictd/foldoc.dict.dz"):
        assert info["files"][f]["sha256"] == hashlib.sha256(Path(f).read_bytes()).hexdigest()
