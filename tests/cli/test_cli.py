"""The command line: real commands, their outputs, and non-zero exits on bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from sidelight.cli import main


@pytest.fixture
def jsonl_source(tmp_path):
    p = tmp_path / "notes.jsonl"
    p.write_text("\n".join(json.dumps(o) for o in [
        {"id": "n1", "title": "Graph search", "text": "walks over links between notes"},
        {"id": "n2", "title": "Lexical search", "text": "bm25 matches query words"},
        {"id": "n3", "title": "Dense search", "text": "embeddings compare meaning"},
    ]) + "\n")
    return p


def test_index_search_add_delete(tmp_path, jsonl_source, capsys):
    out = tmp_path / "idx"
    assert main(["index", str(jsonl_source), "-o", str(out), "-q"]) == 0
    assert "indexed 3 records" in capsys.readouterr().out
    assert main(["search", str(out), "bm25 query", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [h["id"] for h in result["hits"]] == ["n2"]
    extra = tmp_path / "extra.jsonl"
    extra.write_text(json.dumps({"id": "n4", "title": "Query logs", "text": "every query is logged"}) + "\n")
    assert main(["add", str(out), str(extra)]) == 0
    assert main(["delete", str(out), "n2"]) == 0
    capsys.readouterr()
    assert main(["search", str(out), "query", "--json"]) == 0
    assert [h["id"] for h in json.loads(capsys.readouterr().out)["hits"]] == ["n4"]


def test_a_one_off_bm25_search_never_imports_scipy(tmp_path, jsonl_source, capsys):
    """scipy costs ~0.2 s to import, which a cold `sidelight search` should not pay for (issue 15)."""
    out = tmp_path / "idx"
    assert main(["index", str(jsonl_source), "-o", str(out), "-q"]) == 0
    code = ("import json, sys\nfrom sidelight.cli import main\n"
            f"assert main(['search', {str(out)!r}, 'bm25 query', '--json']) == 0\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    envelope, loaded = proc.stdout.strip().rsplit("\n", 1)
    assert [h["id"] for h in json.loads(envelope)["hits"]] == ["n2"]
    assert json.loads(loaded) == []


def test_bad_input_exits_non_zero_with_a_message(tmp_path, jsonl_source, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "text": "fine"}\n{oops\n')
    assert main(["index", str(bad), "-o", str(tmp_path / "i"), "-q"]) == 2
    assert "bad.jsonl:2: malformed JSON" in capsys.readouterr().err
    assert main(["search", str(tmp_path / "missing"), "q"]) == 2
    assert "not a sidelight index" in capsys.readouterr().err
    out = tmp_path / "idx"
    main(["index", str(jsonl_source), "-o", str(out), "-q"])
    assert main(["search", str(out), "  "]) == 2
    assert "empty query" in capsys.readouterr().err
    assert main(["search", str(out), "q", "--method", "nope"]) == 2
    assert "unknown method 'nope'" in capsys.readouterr().err
    assert main(["delete", str(out), "zz"]) == 2


def test_eval_writes_the_documented_json(tmp_path, jsonl_source, capsys):
    out = tmp_path / "idx"
    main(["index", str(jsonl_source), "-o", str(out), "-q"])
    (tmp_path / "q.jsonl").write_text('{"_id": "q1", "text": "dense embeddings"}\n{"_id": "q2", "text": "graph links"}\n')
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tn3\t1\nq2\tn2\t1\n")
    js, run = tmp_path / "e.json", tmp_path / "run.trec"
    assert main(["eval", str(out), "--queries", str(tmp_path / "q.jsonl"), "--qrels", str(tmp_path / "qrels.tsv"),
                 "--method", "bm25", "-o", str(js), "--run", str(run), "-q"]) == 0
    result = json.loads(js.read_text())
    assert set(result) == {"method", "params", "n_queries", "metrics"}
    assert result["n_queries"] == 2 and result["method"] == "bm25"
    assert result["metrics"]["hit@1"] == 0.5 and result["metrics"]["mrr@10"] == 0.5
    assert run.read_text().splitlines()[0].split()[:4] == ["q1", "Q0", "n3", "1"]
    (tmp_path / "qrels.tsv").write_text("q1\tghost\t1\n")
    assert main(["eval", str(out), "--queries", str(tmp_path / "q.jsonl"), "--qrels", str(tmp_path / "qrels.tsv"), "-q"]) == 2
    assert "unknown record id 'ghost'" in capsys.readouterr().err


def test_method_params_from_the_command_line_and_the_method_list(tmp_path, jsonl_source, capsys):
    out = tmp_path / "idx"
    main(["index", str(jsonl_source), "-o", str(out), "-q"])
    capsys.readouterr()
    assert main(["search", str(out), "searching", "-p", "stem=english", "--json", "-m", "bm25+rm3",
                 "-p", "fb_docs=2"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert {h["id"] for h in hits} >= {"n1", "n2", "n3"}  # "search" only matches once stemmed
    assert main(["search", str(out), "q", "-p", "novalue"]) == 2
    assert "expected KEY=VALUE" in capsys.readouterr().err
    assert main(["search", str(out), "q", "-p", "bogus=1"]) == 2
    assert "takes no parameter 'bogus'" in capsys.readouterr().err
    assert main(["methods"]) == 0
    listing = capsys.readouterr().out
    assert all(name in listing for name in ("bm25", "tfidf", "rrf-lexical", "dense", "bm25+ppr", "best"))
