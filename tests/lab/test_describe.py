"""Word-level lab runs (describe benchmarks), methods over a second vector set, median rank, and the
pick between single lanes and fusions. Hand-built toy dictionaries are the oracle; a fake encoder
stands in for the model."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from sidelight.corpus.model import Record
from sidelight.errors import InputError
from sidelight.lab.analysis import median_rank
from sidelight.lab.benchmark import load_describe_benchmark
from sidelight.lab.pick import pick
from sidelight.lab.protocol import load_protocol
from sidelight.lab.runner import freeze, read_json, read_rankings, run_split
from sidelight.corpus.sources import load_source
from sidelight.index.lookup import word_ranking

from tests.lab.test_densecache import FakeEmbedder, fake_model  # noqa: F401 (autouse fixture)


def test_word_ranking_by_best_sense_reads_on_until_the_target():
    recs = [(Record("r3", "tower", "", aliases=("lighthouse",)), 0.9), (Record("r2", "light", ""), 0.8),
            (Record("r1", "lamp", "", aliases=("Light",)), 0.7), (Record("r0", "beacon", ""), 0.6)]
    assert word_ranking(recs, 3, "LAMP") == (["tower", "lighthouse", "light"], 4)  # 'Light' of r1 is not new
    assert word_ranking(recs, 2, "tower") == (["tower", "lighthouse"], 1)
    assert word_ranking(recs, 10, "pharos") == (["tower", "lighthouse", "light", "lamp", "beacon"], None)


def test_median_rank_counts_unranked_targets_as_infinite():
    assert median_rank({"a": {"target_rank": 1}, "b": {"target_rank": 9}, "c": {"target_rank": 4}}) == 4
    assert median_rank({"a": {"target_rank": None}, "b": {"target_rank": None}, "c": {"target_rank": 2}}) == math.inf
    assert median_rank({"a": {"ids": []}}) is None


def test_pick_prefers_a_single_lane_unless_a_fusion_is_strictly_better():
    spec = {"name": "picked", "singles": ["dense", "bm25"], "fused": ["rrf", "linear"]}
    dev = {"dense": {"m": 0.50}, "bm25": {"m": 0.40}, "rrf": {"m": 0.50}, "linear": {"m": 0.45}}
    p = pick(spec, dev, "m")
    assert (p["chosen"], p["fused_chosen"], p["best_fused"]) == ("dense", False, "rrf")
    assert p["margins"] == pytest.approx({"bm25": 0.10, "rrf": 0.0, "linear": 0.05})
    assert "returns dense's ranking" in p["note"]
    dev["linear"]["m"] = 0.55
    p = pick(spec, dev, "m")
    assert (p["chosen"], p["fused_chosen"], p["best_single"]) == ("linear", True, "dense")
    assert p["margins"]["dense"] == pytest.approx(0.05)


WORDS = [("lighthouse", ["beacon"], "a tower with a bright lamp that warns ships at sea"),
         ("kettle", [], "a metal pot with a spout for boiling water"),
         ("orchard", [], "a field of fruit trees"),
         ("beacon", [], "a fire on a hill lit as a signal"),
         ("ladder", ["steps"], "a frame of rungs for climbing up a wall"),
         ("compass", [], "a tool with a needle that points north"),
         ("anchor", [], "a heavy hook that holds a ship in place"),
         ("harbour", ["port"], "a sheltered place where ships stay near the coast")]


def make_dictionary_lab(root):
    root.mkdir(parents=True, exist_ok=True)
    recs = [{"id": f"s{i}", "title": w, "aliases": a, "text": g} for i, (w, a, g) in enumerate(WORDS)]
    (root / "dict.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    queries = [("lighthouse", "s0", "tall tower lamp that warns ships", "dev"),
               ("kettle", "s1", "pot for boiling water", "dev"),
               ("beacon", "s0", "a bright signal for ships", "dev"),
               ("orchard", "s2", "trees that give fruit", "test"),
               ("ladder", "s4", "rungs for climbing", "test"),
               ("port", "s7", "where ships shelter near the coast", "test"),
               ("compass", "s5", "the needle that points north", "test")]
    lines = [{"qid": f"D{i}", "family": f"D{i}", "split": s, "pos": "noun", "word": w, "sense_id": sid, "query": q}
             for i, (w, sid, q, s) in enumerate(queries)]
    (root / "describe.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    proto = {"name": "toy-describe", "corpus": {"source": "dict.jsonl"},
             "index": {"tokenizer": {"min_length": 1}, "dense": "fake-a", "dense_variants": {"b": "fake-b"}},
             "benchmark": {"kind": "describe", "path": "describe.jsonl"}, "depth": 10,
             "metrics": {"primary": "mrr@10", "secondary": ["hit@1", "hit@10"]},
             "methods": [{"name": "bm25"}, {"name": "dense"}, {"name": "dense-b", "method": "dense", "dense": "b"},
                         {"name": "rrf-b", "method": "rrf", "dense": "b", "grid": {"k_rrf": [1, 60]}}],
             "pick": {"name": "picked", "singles": ["bm25", "dense", "dense-b"], "fused": ["rrf-b"]},
             "statistics": {"seed": 1, "n_resamples": 200, "n_flips": 200},
             "primary_contrast": {"baseline": "dense", "candidate": "dense-b"}}
    (root / "proto.json").write_text(json.dumps(proto))
    return root / "proto.json"


def _fake_word_ranking(spec: str, query: str, records: list[Record], target: str, depth: int):
    """The oracle: cosines of the fake encoder computed here, ties by ascending id, then words."""
    texts = [" ".join([r.title, r.text]) for r in records]  # a JSONL corpus indexes the title once, no aliases
    emb = FakeEmbedder(spec)
    s = emb.encode(texts) @ emb.encode([query], kind="query")[0]
    order = sorted(range(len(records)), key=lambda i: (-s[i], records[i].id))
    return word_ranking([(records[i], float(s[i])) for i in order], depth, target)


def test_describe_lab_ranks_words_over_each_vector_set_and_scores_the_pick(tmp_path):
    proto = make_dictionary_lab(tmp_path / "lab")
    out = tmp_path / "run"
    freeze(proto, out)
    run_split(proto, "dev", out)
    result = run_split(proto, "test", out)
    corpus = load_source(str(tmp_path / "lab" / "dict.jsonl"))
    records = corpus.records
    bench = load_describe_benchmark(tmp_path / "lab" / "describe.jsonl", corpus)
    ranks = read_rankings(out / "test" / "rankings")
    for label, spec in (("dense", "fake-a"), ("dense-b", "fake-b")):
        for q in bench.subset("test").queries:
            words, rank = _fake_word_ranking(spec, bench.queries[q], records, bench.intended_name[q], 10)
            assert ranks[label][q]["ids"] == words and ranks[label][q]["target_rank"] == rank
    sel = read_json(out / "dev" / "selection.json")["pick"]
    assert result["pick"]["chosen"] == sel["chosen"]
    assert ranks["picked"] == ranks[sel["chosen"]]
    assert {(c["baseline"], c["candidate"]) for c in result["contrasts"]} >= {(lab, "picked") for lab in sel["dev"]}
    dev = read_json(out / "dev" / "result.json")["methods"]
    best_single = max(dev[lab]["overall"]["mrr@10"] for lab in ("bm25", "dense", "dense-b"))
    assert dev[sel["chosen"]]["overall"]["mrr@10"] >= best_single
    assert result["methods"]["dense"]["median_rank"] == float(np.median(
        [math.inf if r["target_rank"] is None else r["target_rank"] for r in ranks["dense"].values()]))
    from sidelight.lab.audit import audit  # recomputes every test figure from the rankings and the benchmark file

    checked = audit(out)
    assert checked["agree"], checked["problems"]
    assert checked["queries"] == len(bench.subset("test").queries) and checked["checks"] > 0


def test_describe_benchmark_names_the_bad_line(tmp_path):
    corpus_path = tmp_path / "lab" / "dict.jsonl"
    make_dictionary_lab(tmp_path / "lab")
    corpus = load_source(str(corpus_path))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"qid": "D0", "family": "D0", "split": "dev", "pos": "noun", "word": "kettle",
                               "sense_id": "s0", "query": "a pot"}) + "\n")
    with pytest.raises(InputError, match=r"bad.jsonl:1: word 'kettle' is not a lemma of s0"):
        load_describe_benchmark(bad, corpus)


def test_a_method_over_an_undeclared_vector_set_is_refused(tmp_path):
    proto = make_dictionary_lab(tmp_path / "lab")
    data = json.loads(proto.read_text())
    data["methods"][2]["dense"] = "c"
    proto.write_text(json.dumps(data))
    with pytest.raises(InputError, match="asks for dense vectors 'c'"):
        load_protocol(proto).check_methods()


def test_a_describe_protocol_grids_the_word_frequency_prior(tmp_path):
    proto_path = make_dictionary_lab(tmp_path / "lab")
    counts = {"beacon": 30, "orchard": 2, "compass": 9, "steps": 50}  # tagged uses, as WordNet's cntlist
    corpus_file = tmp_path / "lab" / "dict.jsonl"
    recs = [json.loads(line) for line in corpus_file.read_text().splitlines()]
    for r in recs:
        r["metadata"] = {"word_counts": [counts.get(w, 0) for w in (r["title"], *r["aliases"])]}
    corpus_file.write_text("".join(json.dumps(r) + "\n" for r in recs))
    proto = json.loads(proto_path.read_text())
    proto["methods"] = [{"name": "dense"}, {"name": "dense-prior", "method": "dense", "grid": {"prior": [0.0, 0.5]}}]
    proto["pick"] = {"name": "picked", "singles": ["dense"], "fused": ["dense-prior"]}
    proto["primary_contrast"] = {"baseline": "dense", "candidate": "dense-prior"}
    proto["depth"], proto["metrics"] = 5, {"primary": "mrr@5", "secondary": ["hit@1", "hit@5"]}  # the oracle pools 5 words
    proto_path.write_text(json.dumps(proto))
    out = tmp_path / "run"
    freeze(proto_path, out)
    run_split(proto_path, "dev", out)
    ranks = read_rankings(out / "dev" / "rankings")
    corpus = load_source(str(corpus_file))
    bench = load_describe_benchmark(tmp_path / "lab" / "describe.jsonl", corpus)
    texts = [" ".join([r.title, r.text]) for r in corpus.records]
    emb = FakeEmbedder("fake-a")
    for q in bench.subset("dev").queries:
        s = emb.encode(texts) @ emb.encode([bench.queries[q]], kind="query")[0]
        best: dict[str, float] = {}  # the oracle: each word's best cosine, min-max over the first 5 words,
        # plus 0.5 ln(1 + count) / the largest ln(1 + count) in them, ties by appearance
        for i in sorted(range(len(texts)), key=lambda i: (-s[i], corpus.records[i].id)):
            for w in (corpus.records[i].title, *corpus.records[i].aliases):
                best.setdefault(w, float(s[i]))
        assert ranks["dense-prior[prior=0.0]"][q]["ids"] == list(best)[:5]
        five = list(best)[:5]
        lo, hi = min(best[w] for w in five), max(best[w] for w in five)
        top = max(math.log1p(counts.get(w, 0)) for w in five)
        head = sorted(five, key=lambda w: -((best[w] - lo) / (hi - lo) + 0.5 * math.log1p(counts.get(w, 0)) / top))
        assert ranks["dense-prior[prior=0.5]"][q]["ids"] == head
    proto["methods"][1]["grid"]["prior"] = [-1.0]
    proto_path.write_text(json.dumps(proto))
    with pytest.raises(InputError, match="prior"):
        load_protocol(proto_path).check_methods()
