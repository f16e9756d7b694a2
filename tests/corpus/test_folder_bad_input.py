"""Bad input in a folder of documents: each case is skipped or warned about with its reason, counted
in the report, and never a traceback; only a folder without any readable document is an error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sidelight.corpus import folder as folder_mod
from sidelight.corpus.folder import load_folder, read_document, walk
from sidelight.errors import InputError, MissingDataError


def _write(root: Path, rel: str, data: bytes | str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    path.write_bytes(data)
    return path


def test_invalid_utf8_is_read_with_replacement_and_reported(tmp_path):
    _write(tmp_path, "latin.md", "# Caf\xe9\n\nna\xefve text\n".encode("latin-1"))
    fc = load_folder(tmp_path)
    record = fc.records[0]
    assert record.title == "latin" and record.text == "Caf\ufffd\n\nna\ufffdve text"
    assert fc.report.warnings == [("latin.md", "invalid UTF-8 (line 1, byte 0xe9); read with replacement characters")]


def test_a_50_mb_text_file_is_skipped_for_its_size(tmp_path):
    _write(tmp_path, "ok.txt", "fine\n")
    with open(tmp_path / "huge.txt", "wb") as f:  # sparse: quick to make
        f.truncate(50 * 1024 * 1024)
    fc = load_folder(tmp_path)
    assert fc.ids == ["ok.txt"]
    assert fc.report.skipped == [("huge.txt", "larger than the size cap (52.4 MB > 10.5 MB)")]
    assert load_folder(tmp_path, max_bytes=60 * 1024 * 1024).report.skipped == [
        ("huge.txt", "binary content (NUL bytes) in a text file")]


def test_binary_file_named_md_is_skipped(tmp_path):
    _write(tmp_path, "ok.md", "fine\n")
    _write(tmp_path, "image.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    fc = load_folder(tmp_path)
    assert fc.ids == ["ok.md"]
    assert fc.report.skipped == [("image.md", "binary content (NUL bytes) in a text file")]


@pytest.mark.parametrize("front, reason", [
    ("title: [unclosed\n", "front matter is not valid YAML (front matter line 1): expected ',' or ']', "
                           "but got '<stream end>'; properties ignored"),
    ("key: value\n  bad: indent\n", "front matter is not valid YAML (front matter line 2): mapping values "
                                    "are not allowed here; properties ignored"),
    ("- a list\n", "front matter is a YAML list, not a mapping; properties ignored"),
    ("x: !!python/object:os.system ls\n", "front matter is not valid YAML (front matter line 1): could not "
                                          "determine a constructor for the tag "
                                          "'tag:yaml.org,2002:python/object:os.system'; properties ignored"),
])
def test_broken_front_matter_keeps_the_note(tmp_path, front, reason):
    _write(tmp_path, "note.md", f"---\n{front}---\nThe body [[other]].\n")
    _write(tmp_path, "other.md", "x\n")
    fc = load_folder(tmp_path)
    note = fc.records[0]
    assert (note.id, note.title, note.text, note.metadata["properties"]) == ("note.md", "note", "The body other.", {})
    assert fc.report.warnings == [("note.md", reason)]
    assert len(fc.edges) == 1


def test_link_cycle_is_two_edges(tmp_path):
    _write(tmp_path, "A.md", "to [[B]]\n")
    _write(tmp_path, "B.md", "to [[A]]\n")
    fc = load_folder(tmp_path)
    assert [(e.source, e.target) for e in fc.edges] == [("A.md", "B.md"), ("B.md", "A.md")]


def test_symlink_loop_is_followed_once(tmp_path):
    root = tmp_path / "root"
    _write(root, "sub/note.md", "in sub\n")
    _write(tmp_path, "outside/ext.md", "outside\n")
    os.symlink("..", root / "sub" / "loop")
    os.symlink("sub", root / "again")  # a second way into sub: read at its own path
    os.symlink("sub/note.md", root / "alias.md")
    os.symlink("nowhere.md", root / "dangling.md")
    os.symlink(tmp_path / "outside", root / "ext")  # outside the tree: followed once
    os.symlink(tmp_path / "outside", root / "ext2")
    os.symlink(root, tmp_path / "outside" / "back")  # and a loop through it
    found = walk(root)
    assert found.files == ["ext/ext.md", "sub/note.md"]
    assert sorted(found.skipped) == [
        ("again", "symbolic link to a folder read at its own path (sub)"),
        ("alias.md", "same file as sub/note.md"),
        ("dangling.md", "broken symbolic link"),
        ("ext/back", "symbolic link to a folder read at its own path (.)"),
        ("ext2", "symbolic link to a folder already read (ext)"),
        ("sub/loop", "symbolic link to a folder read at its own path (.)"),
    ]
    assert load_folder(root).ids == ["ext/ext.md", "sub/note.md"]


def test_unreadable_file_is_skipped(tmp_path, monkeypatch):
    _write(tmp_path, "ok.md", "fine\n")
    locked = _write(tmp_path, "locked.md", "secret\n")
    if os.geteuid() != 0:
        locked.chmod(0)
    else:  # root reads anything: simulate the refusal
        real = Path.read_bytes

        def read_bytes(self):
            if self.name == "locked.md":
                raise PermissionError(13, "Permission denied")
            return real(self)

        monkeypatch.setattr(Path, "read_bytes", read_bytes)
    try:
        fc = load_folder(tmp_path)
    finally:
        locked.chmod(0o644)
    assert fc.ids == ["ok.md"]
    assert fc.report.skipped == [("locked.md", "cannot read it (Permission denied)")]


def test_empty_folder_is_a_clear_error(tmp_path):
    with pytest.raises(InputError, match=r"^no documents \(\.md, \.html, \.htm, \.txt, \.pdf\) under .*$"):
        load_folder(tmp_path)
    _write(tmp_path, ".obsidian/app.md", "hidden\n")
    _write(tmp_path, "picture.png", b"png")
    with pytest.raises(InputError, match="no documents"):
        load_folder(tmp_path)
    _write(tmp_path, "bin.md", b"\x00\x01")
    with pytest.raises(InputError, match=r"1 skipped: binary content"):
        load_folder(tmp_path)
    with pytest.raises(MissingDataError, match="no such folder"):
        load_folder(tmp_path / "absent")


def test_pdf_without_pypdf_is_skipped_with_the_hint(tmp_path, monkeypatch):
    import sidelight.corpus.pdf as pdf

    _write(tmp_path, "ok.md", "fine\n")
    _write(tmp_path, "paper.pdf", b"%PDF-1.4\n")
    monkeypatch.setattr(pdf, "pdf_available", lambda: False)
    fc = load_folder(tmp_path)
    assert fc.report.skipped == [("paper.pdf", "install sidelight[pdf]")]


def test_broken_pdf_and_odd_markup_are_no_traceback(tmp_path):
    pytest.importorskip("pypdf")
    _write(tmp_path, "ok.md", "fine\n")
    _write(tmp_path, "paper.pdf", b"%PDF-1.4\nnot really a pdf")
    _write(tmp_path, "deep.md", "> " * 500 + "quote [[ok]]\n" + "[" * 5000 + "\n%%unclosed\n\n[[\n]]\n")
    _write(tmp_path, "deep.html", "<div>" * 3000 + "text" + "</div>" * 3000)
    _write(tmp_path, "empty.html", "")
    _write(tmp_path, "empty.md", "")
    fc = load_folder(tmp_path)
    assert "deep.md" in fc.ids and "empty.md" in fc.ids and "empty.html" in fc.ids
    assert [s[0] for s in fc.report.skipped] == ["paper.pdf"]
    assert fc.report.skipped[0][1].startswith("cannot read the PDF")


def test_read_document_on_other_kinds(tmp_path):
    assert read_document(tmp_path, "x.png") == (None, ["not a document (.md, .html, .htm, .txt, .pdf)"])
    assert read_document(tmp_path, "missing.md")[1][0].startswith("cannot read it")


def test_size_cap_in_walk_counts_ignored(tmp_path):
    _write(tmp_path, "a.md", "x\n")
    _write(tmp_path, "b.csv", "x\n")
    _write(tmp_path, "c.jpg", "x\n")
    found = walk(tmp_path, max_bytes=1)
    assert (found.files, found.ignored, found.skipped) == ([], 2, [("a.md", "larger than the size cap (0.0 MB > 0.0 MB)")])
    assert folder_mod.MAX_BYTES == 10 * 1024 * 1024
