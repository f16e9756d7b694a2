"""`sidelight channels`, `sidelight feedback`, and graph methods through `search` / `eval`."""

from __future__ import annotations

import json

import pytest

from sidelight.cli import main
from sidelight.cli.graph_cmd import render_path
from sidelight.corpus import Corpus, Edge, Record
from sidelight.index import Index


@pytest.fixture
def idx(tmp_path):
    recs = [Record("a", "Alpha engine", "alpha engine turbine"), Record("b", "Beta gear", "gear wheel"),
            Record("c", "Gamma shaft", "shaft rod"), Record("d", "Delta bolt", "bolt screw")]
    edges = [Edge("a", "b"), Edge("a", "c", "part", 3.0), Edge("c", "d")]
    return Index.build(Corpus("hand", recs, edges), progress=False).save(tmp_path / "idx")


def test_channels_json_then_feedback(idx, capsys):
    assert main(["channels", str(idx), "alpha", "-k", "5", "--json", "-r", "rank=activation"]) == 0
    env = json.loads(capsys.readouterr().out)
    assert env["relation"]["params"]["rank"] == "activation"
    # the envelope HTTP and MCP return (one builder): the lanes, agreement, descriptions and the budget labels
    assert {"query", "lexical", "relation", "agreement_node_ids", "descriptions", "missing_lanes", "stages"} <= set(env)
    assert "dense" not in env and not env["missing_lanes"]
    assert [h["id"] for h in env["lexical"]["hits"]] == ["a"]
    assert [h["id"] for h in env["relation"]["hits"]] == ["c", "d", "b"]
    d = env["relation"]["hits"][1]
    assert [(e["source"], e["target"], e["type"]) for e in d["path"]] == [("a", "c", "part"), ("c", "d", "link")]

    rel, lex = env["relation"]["trace_id"], env["lexical"]["trace_id"]
    assert main(["feedback", str(idx), rel, "d"]) == 0
    out = capsys.readouterr().out
    assert "2 edge(s) strengthened" in out
    assert "a -[part]-> c: 3 -> 3.3" in out and "c -[link]-> d: 1 -> 1.1" in out
    assert main(["feedback", str(idx), rel, "d"]) == 0
    assert "already recorded" in capsys.readouterr().out
    assert main(["feedback", str(idx), lex, "a", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["channel"] == "lexical" and res["changed_edges"] == []
    # misuse: a relation-only node through the lexical trace, an unknown trace
    assert main(["feedback", str(idx), lex, "c"]) == 2
    assert "not a hit of trace" in capsys.readouterr().err
    assert main(["feedback", str(idx), "f" * 32, "a"]) == 2
    assert "unknown trace" in capsys.readouterr().err
    # the next search sees the strengthened weights, and the index still verifies
    assert main(["channels", str(idx), "alpha", "--json"]) == 0
    env2 = json.loads(capsys.readouterr().out)
    assert env2["relation"]["hits"][0]["path"][0]["weight"] == pytest.approx(3.3)
    assert env2["relation"]["params"]["weights"] == "base+overlay"
    Index.load(idx, verify=True)


def test_channels_relation_parameters_are_checked(idx, capsys):
    assert main(["channels", str(idx), "alpha", "-r", "rank=loudest"]) == 2
    err = capsys.readouterr().err
    assert "'rank'" in err and "query-aware" in err and "Traceback" not in err
    assert main(["channels", str(idx), "alpha", "-r", "hops"]) == 2
    assert "KEY=VALUE" in capsys.readouterr().err


def test_channels_table_renders_paths(idx, capsys):
    assert main(["channels", str(idx), "alpha"]) == 0
    out = capsys.readouterr().out
    assert "lexical lane" in out and "relation lane" in out and "trace" in out
    assert "-[part 3]->" in out and "-[link 1]->" in out
    assert render_path([{"source": "a", "target": "c", "type": "part", "weight": 3.0},
                        {"source": "c", "target": "d", "type": "link", "weight": 1.1}]) == "a -[part 3]-> c -[link 1.1]-> d"


def test_graph_methods_through_search_and_eval(idx, tmp_path, capsys):
    for m in ("bm25+ppr", "bm25+ppr:empty", "bm25+ppr:stored", "bm25+ppr:rewire", "degree"):
        assert main(["search", str(idx), "alpha", "-m", m, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["hits"], m
    q = tmp_path / "q.jsonl"
    q.write_text(json.dumps({"_id": "q1", "text": "alpha"}) + "\n")
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\tc\t1\n")
    out = tmp_path / "res.json"
    assert main(["eval", str(idx), "--queries", str(q), "--qrels", str(qrels), "--method", "bm25+ppr",
                 "--metrics", "mrr@10,hit@10", "-o", str(out), "-q"]) == 0
    res = json.loads(out.read_text())
    assert res["method"] == "bm25+ppr" and res["metrics"]["hit@10"] == 1.0  # c is reached only via the graph
    assert main(["eval", str(idx), "--queries", str(q), "--qrels", str(qrels), "--method", "bm25",
                 "--metrics", "hit@10", "-o", str(out), "-q"]) == 0
    assert json.loads(out.read_text())["metrics"]["hit@10"] == 0.0


def test_cli_channels_and_feedback_write_the_shared_query_log(tmp_path, capsys):
    import json as _json

    from sidelight.cli import main as _main

    src = tmp_path / "notes.jsonl"
    src.write_text("\n".join(_json.dumps(o) for o in [
        {"id": "a", "title": "alpha", "text": "alpha links to beta"},
        {"id": "b", "title": "beta", "text": "second note"}]) + "\n")
    (tmp_path / "notes.edges.tsv").write_text("a\tb\n")
    out = tmp_path / "idx"
    assert _main(["index", str(src), "-o", str(out), "-q"]) == 0
    capsys.readouterr()
    assert _main(["channels", str(out), "alpha", "--json"]) == 0
    env = _json.loads(capsys.readouterr().out)
    rel = env["relation"]
    assert [h["id"] for h in rel["hits"]] == ["b"]
    assert _main(["feedback", str(out), rel["trace_id"], "b"]) == 0
    capsys.readouterr()
    assert _main(["log", str(out), "--json"]) == 0
    rows = _json.loads(capsys.readouterr().out)
    rows = rows["entries"] if isinstance(rows, dict) else rows
    assert [(r["interface"], r["operation"]) for r in rows] == [("cli", "feedback"), ("cli", "channels")]
    assert rows[1]["lanes"][1]["trace_id"] == rel["trace_id"]
