"""`sidelight search` and `lookup` from the CLI write a query-log row into INDEX/state.sqlite, as HTTP and MCP do."""

from __future__ import annotations

import json

from sidelight.cli import main
from sidelight.corpus import Corpus, Record
from sidelight.index import Index
from sidelight.lanes.querylog import QueryLog


def test_cli_search_and_lookup_are_logged_like_http(tmp_path, capsys):
    from sidelight.serve.engine import Service

    path = tmp_path / "ix"
    recs = [Record("a", "Alpha engine", "alpha engine turbine"), Record("b", "Beta gear", "gear wheel alpha"),
            Record("c", "Gamma shaft", "shaft rod")]
    Index.build(Corpus("hand", recs, []), progress=False).save(path)
    assert main(["search", str(path), "alpha", "-m", "bm25", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert [h["id"] for h in hits] == ["a", "b"]  # a holds "alpha" twice (title and text), b once
    assert main(["lookup", str(path), "alpha", "-m", "bm25", "--json"]) == 0
    capsys.readouterr()
    assert main(["search", str(path), "   ", "-m", "bm25"]) == 2  # refused: logged as such
    capsys.readouterr()
    svc = Service(Index.load(path))
    svc.search("alpha", "bm25", 10, snippet_chars=0)
    svc.close()
    http, refused, lookup, cli = QueryLog(path / "state.sqlite").entries(4)
    assert (cli["interface"], cli["operation"], cli["query"], cli["status"]) == ("cli", "search", "alpha", 200)
    assert cli["lanes"] == http["lanes"] == [{"channel": "bm25", "hits": 2}]
    assert http["interface"] == "http" and set(cli) == set(http)
    assert (lookup["interface"], lookup["operation"], lookup["lanes"][0]["channel"]) == ("cli", "lookup", "lookup")
    assert refused["interface"] == "cli" and refused["status"] == 400 and refused["error"].startswith("bad_input: ")


def test_cli_search_budget_labels_a_fallback(tmp_path, capsys, monkeypatch):
    import time

    path = tmp_path / "ix"
    recs = [Record("a", "Alpha engine", "alpha engine turbine"), Record("b", "Beta gear", "gear wheel alpha")]
    Index.build(Corpus("hand", recs, []), progress=False).save(path)
    argv = ["search", str(path), "alpha", "--snippet-chars", "0", "--json"]
    assert main([*argv, "-m", "bm25"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert "fallback" not in plain and "method_used" not in plain  # no budget: nothing to label
    assert main([*argv, "-m", "tfidf", "--budget-ms", "5000"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["method"], out["method_used"], out["fallback"], out["partial"]) == ("tfidf", "tfidf", None, False)
    assert [s["stage"] for s in out["stages"]] == ["tfidf"]
    real = Index.rank

    def slow(self, method, *a, **kw):  # every method but BM25 takes 2 s
        if method.name != "bm25":
            time.sleep(2.0)
        return real(self, method, *a, **kw)

    monkeypatch.setattr(Index, "rank", slow)
    assert main([*argv, "-m", "tfidf", "--budget-ms", "100"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["method_used"], out["fallback"], out["partial"]) == ("bm25", "bm25", True)
    assert out["hits"] == plain["hits"]  # BM25's answer, labelled
    assert [(s["stage"], s["status"]) for s in out["stages"]] == [("tfidf", "cut"), ("bm25", "done")]
    row = QueryLog(path / "state.sqlite").entries(1)[0]
    assert (row["fallback"], row["partial"], row["lanes"]) == ("bm25", True, [{"channel": "bm25", "hits": 2}])
    assert main([*argv, "--budget-ms", "0"]) == 2  # out of range: one line, exit 2
