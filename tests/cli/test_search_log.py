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
