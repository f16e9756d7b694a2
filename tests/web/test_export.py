"""`sidelight export-web` without a browser: what the folder holds, and every refusal."""

from __future__ import annotations

import base64
import hashlib
import json
import lzma
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from sidelight.cli import main
from sidelight.corpus import Corpus, Record
from sidelight.errors import InputError
from sidelight.index import Index
from sidelight.index.sharded import ShardedIndex
from sidelight.text import TokenizerConfig
from sidelight.web import export as web_export
from sidelight.web.export import export_web

WEB = Path(__file__).resolve().parents[2] / "web"


@pytest.fixture
def toy_index(tmp_path, toy_corpus) -> Path:
    path = tmp_path / "idx"
    Index.build(toy_corpus, progress=False).save(path)
    return path


def _payload(site: Path, name: str) -> bytes:
    text = (site / "data" / f"{name}.js").read_text(encoding="utf-8")
    body = re.fullmatch(rf'sidelightData\("{name}",(.*)\);\n', text, re.S).group(1)
    return body.encode("utf-8") if name == "tables" else base64.b64decode(json.loads(body))


def test_manifest_lists_every_file_with_its_sha256_and_the_page_loads_only_its_own(tmp_path, toy_index):
    site = tmp_path / "site"
    report = export_web(toy_index, site)
    manifest = json.loads((site / "manifest.json").read_text())
    on_disk = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()} - {"manifest.json"}
    assert set(manifest["files"]) == on_disk
    for rel, entry in manifest["files"].items():
        data = (site / rel).read_bytes()
        assert entry["bytes"] == len(data) and entry["sha256"] == hashlib.sha256(data).hexdigest()
        if rel.startswith("data/"):
            assert entry["payload_sha256"] == hashlib.sha256(_payload(site, Path(rel).stem)).hexdigest()
    html = (site / "index.html").read_text()
    sources = re.findall(r'<(?:script|link)[^>]+(?:src|href)="([^"]+)"', html)
    assert sorted(sources) == sorted(["app/style.css", "app/worker.js", "app/page.js",
                                      *(f"data/{n}.js" for n in manifest["data"])])
    assert "://" not in "".join(sources)
    assert report.total_bytes == sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
    assert manifest["methods_offered"] == ["bm25", "tfidf", "rrf-lexical", "bm25+ppr", "relation"]
    assert "ort-wasm" not in manifest["data"]  # no vectors: no model, no runtime


def test_postings_are_the_index_term_counts(tmp_path, toy_index):
    site = tmp_path / "site"
    export_web(toy_index, site)
    manifest = json.loads((site / "manifest.json").read_text())
    blob = _payload(site, "index")
    arrays = {name: np.frombuffer(blob, dtype=a["dtype"], count=a["length"], offset=a["offset"])
              for name, a in manifest["arrays"].items()}
    lex = Index.load(toy_index).lexical
    tf = lex.tf.tocsc()
    assert np.array_equal(arrays["post_ptr"], tf.indptr) and np.array_equal(arrays["post_doc"], tf.indices)
    assert np.array_equal(arrays["post_tf"], tf.data)
    assert np.array_equal(arrays["doc_len"], lex.doc_len) and np.array_equal(arrays["bm25_idf"], lex.idf())
    tables = json.loads(_payload(site, "tables"))
    assert tables["vocab"] == lex.vocab and tables["ids"] == list(Index.load(toy_index).ids)


def test_refuses_what_it_must_not_replace(tmp_path, toy_index, capsys):
    site = tmp_path / "site"
    site.mkdir()
    (site / "notes.txt").write_text("mine")
    assert main(["export-web", str(toy_index), "-o", str(site)]) == 2
    assert "not an exported sidelight page" in capsys.readouterr().err
    assert (site / "notes.txt").read_text() == "mine"

    other = tmp_path / "other"
    assert main(["export-web", str(toy_index), "-o", str(other)]) == 0
    capsys.readouterr()
    assert main(["export-web", str(toy_index), "-o", str(other)]) == 2
    assert "pass --force" in capsys.readouterr().err
    (other / "data" / "mine.js").write_text("// added by hand")
    assert main(["export-web", str(toy_index), "-o", str(other), "--force"]) == 2
    err = capsys.readouterr().err
    assert "data/mine.js" in err and err.count("\n") == 1
    (other / "data" / "mine.js").unlink()
    assert main(["export-web", str(toy_index), "-o", str(other), "--force"]) == 0


def test_refuses_a_page_over_the_size_limit_with_the_size_it_would_take(tmp_path, toy_index, capsys):
    assert main(["export-web", str(toy_index), "-o", str(tmp_path / "s"), "--max-mb", "0.0001"]) == 2
    err = capsys.readouterr().err
    assert re.search(r"would take (at least )?[0-9.]+ MB, over the limit of 0.0001 MB", err)
    assert not (tmp_path / "s").exists()


def test_refuses_indexes_the_page_cannot_score(tmp_path, toy_corpus):
    stemmed = tmp_path / "stemmed"
    Index.build(toy_corpus, TokenizerConfig(stem="english"), progress=False).save(stemmed)
    with pytest.raises(InputError, match="no stemmer"):
        export_web(stemmed, tmp_path / "a")
    corpus = Corpus("c", [Record(f"r{i}", f"title {i}", f"text {i} words") for i in range(6)])
    sharded = tmp_path / "sharded"
    ShardedIndex.write_sharded(corpus, sharded, 2, progress=False)
    with pytest.raises(InputError, match="^command 'export-web' needs term matrices: .* sharded index"):
        export_web(sharded, tmp_path / "b")
    with pytest.raises(InputError, match="no report.html"):
        export_web(stemmed, tmp_path / "c", lab=tmp_path)


def test_a_failed_export_leaves_the_earlier_one_whole(tmp_path, toy_index, monkeypatch):
    site = tmp_path / "site"
    export_web(toy_index, site)
    before = {p.relative_to(site): p.read_bytes() for p in site.rglob("*") if p.is_file()}

    def boom(manifest):
        raise OSError("disk full")

    monkeypatch.setattr(web_export, "_page", boom)
    with pytest.raises(OSError):
        export_web(toy_index, site, force=True)
    assert {p.relative_to(site): p.read_bytes() for p in site.rglob("*") if p.is_file()} == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".site.tmp")]


def test_lab_report_goes_with_the_page(tmp_path, toy_index):
    run = tmp_path / "run" / "test"
    run.mkdir(parents=True)
    (run / "report.html").write_text("<html><body>lab report</body></html>")
    site = tmp_path / "site"
    export_web(toy_index, site, lab=tmp_path / "run")
    assert (site / "lab" / "report.html").read_text() == (run / "report.html").read_text()
    assert json.loads((site / "manifest.json").read_text())["lab_report"] == "lab/report.html"
    page = (run / "report.html").read_bytes()
    (run / "report.html.xz").write_bytes(lzma.compress(page))  # stored compressed (`lab compress`)
    (run / "report.html").unlink()
    export_web(toy_index, site, lab=tmp_path / "run", force=True)
    assert (site / "lab" / "report.html").read_bytes() == page


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js")
def test_the_page_scripts_own_unit_tests_pass():
    """The worker's WordPiece tokenizer against `tokenizers` (a fixture written by that library)."""
    r = subprocess.run(["node", "--test", "test/"], cwd=WEB, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]


def test_link_template_needs_a_path_and_is_in_the_manifest(tmp_path, toy_index, capsys):
    assert main(["export-web", str(toy_index), "-o", str(tmp_path / "a"), "--link-template", "https://x/"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--link-template must contain {path}" in err
    assert main(["export-web", str(toy_index), "-o", str(tmp_path / "b"), "--lean",
                 "--link-template", "https://notes.example/{path}#{anchor}"]) == 0
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["link_template"] == "https://notes.example/{path}#{anchor}"
    assert manifest["default_method"] in manifest["methods_offered"]
    tables = json.loads(_payload(tmp_path / "b", "tables"))
    index = Index.load(toy_index)
    assert tables["paths"] == [r.metadata.get("path") or r.id for r in index.corpus.records]


def test_a_vault_with_section_windows_is_refused_naming_lean_which_works(tmp_path, capsys):
    """A folder's vectors are section windows by default; the page scores one vector per record, so
    the refusal names --lean, and the lean page says its relation lane is the dictionary profile."""
    from tests.lab.test_probe_auto import make_vault

    vault, idx = make_vault(tmp_path / "v"), tmp_path / "idx"
    assert main(["index", str(vault), "-o", str(idx), "--dense", "minilm", "-q"]) == 0
    assert Index.load(idx).dense.passages.sections
    capsys.readouterr()
    assert main(["export-web", str(idx), "-o", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "section windows" in err and "--lean" in err
    assert main(["export-web", str(idx), "-o", str(tmp_path / "b"), "--lean"]) == 0
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text(encoding="utf-8"))
    assert "dense" not in manifest["methods_offered"] and "relation" in manifest["methods_offered"]
    assert {k: manifest["params"]["relation"][k] for k in ("hub_damping", "direction", "name_weight")} == {
        "hub_damping": 0.0, "direction": "out", "name_weight": 0.0}
    assert "notes profile" in manifest["relation"]["note"]
