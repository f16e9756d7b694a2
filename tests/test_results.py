"""The one result type: `Index.search_many` equals `search` hit for hit; a `Run` exports to TREC and ranx."""

from __future__ import annotations

import pytest
from ranx import Qrels
from ranx import Run as RanxRun
from ranx import evaluate as ranx_evaluate

import sidelight
from sidelight.corpus import Corpus, Record
from sidelight.index import Index
from sidelight.results import Hit, Results, Run, trec_line


@pytest.mark.parametrize("method,threads", [("bm25", 1), ("tfidf", 1), ("bm25", 3), ("bm25+ppr", 2)])
def test_search_many_equals_one_search_per_query(scifact_index, scifact_test, method, threads):
    queries, _ = scifact_test
    if method == "bm25+ppr":
        queries = dict(list(queries.items())[:40])
    run = scifact_index.search_many(queries, 10, method, threads=threads)
    assert list(run) == list(queries) and len(run) == len(queries)
    for qid, text in queries.items():
        assert run[qid] == scifact_index.search(text, method, 10)


def test_search_many_refuses_no_threads(scifact_index):
    with pytest.raises(sidelight.errors.InputError, match="threads must be >= 1"):
        scifact_index.search_many(["x"], threads=0)


def test_run_evaluates_like_ranx_and_round_trips_through_trec(scifact_index, scifact_test, tmp_path):
    queries, qrels = scifact_test
    run = scifact_index.search_many(queries, 100, "bm25")
    ours = sidelight.evaluate(run, qrels, ["ndcg@10", "recall@100"])
    theirs = ranx_evaluate(Qrels(qrels), run.to_ranx(), ["ndcg@10", "recall@100"])
    assert ours == pytest.approx(theirs, abs=1e-9)
    (tmp_path / "run.trec").write_text(run.to_trec())
    back = RanxRun.from_file(str(tmp_path / "run.trec"), kind="trec")
    assert ranx_evaluate(Qrels(qrels), back, "ndcg@10") == pytest.approx(ours["ndcg@10"], abs=1e-6)


def test_results_is_a_sequence_of_hits_with_json_and_trec_forms():
    index = Index.build(Corpus("t", [Record("lisp machine", "Lisp machine", "a lisp computer"),
                                     Record("b", "Basic", "basic computer")]), progress=False)
    res = index.search("lisp computer", k=5)
    assert isinstance(res, Results) and res.ids == ["lisp machine", "b"] and res[0]["title"] == "Lisp machine"
    assert res.to_dicts()[0] == {"id": "lisp machine", "rank": 1, "score": res[0].score, "title": "Lisp machine"}
    line = res.to_trec("q 1")[0]  # ids with spaces: tab-separated so they stay whole
    assert line.split("\t") == ["q 1", "Q0", "lisp machine", "1", f"{res[0].score:.6f}", "sidelight"]
    assert trec_line("q1", "b", 2, 0.5) == "q1 Q0 b 2 0.500000 sidelight"
    step = {"edge_id": 7, "source": "y", "target": "x", "type": "link", "weight": 1.0}
    hit = Hit("x", 1, 2.0, "X", {"synsets": []}, seed="y", path=(step,), parts={"graph": 0.5})
    assert hit["path"] == (step,) and "path" in hit and "is_seed" not in hit and hit["synsets"] == []
    assert list(hit.to_dict()) == ["id", "rank", "score", "title", "seed", "path", "parts", "synsets"]
    assert hit.to_dict()["path"] == [step] and "seed" not in Hit("x", 1, 2.0, "X")
    assert sidelight.evaluate({"q": ["lisp machine"]}, {"q": {"lisp machine": 1}}, ["mrr@10"]) == {"mrr@10": 1.0}
    assert sidelight.evaluate(Run({"q": res}), {"q": {"b": 1}}, ["mrr@10"]) == {"mrr@10": 0.5}
