"""The pick's graph gate on hand-made dev scores: a graph method is picked only when it beats the best
non-graph candidate AND its rewired-graph controls with a paired interval above the margin.

Oracle, by hand: a paired bootstrap resample mean of differences that are all positive is at least
the smallest of them, so its lower bound is above 0; all-zero differences give the interval [0, 0]."""

from __future__ import annotations

import numpy as np
import pytest

from sidelight.errors import InputError
from sidelight.lab.pick import check_pick, pick
from sidelight.lab.schema import validate_protocol

SPEC = {"name": "auto", "singles": ["bm25", "tfidf", "bm25+ppr"], "fused": [],
        "graph": {"controls": {"bm25+ppr": "bm25+ppr:rewire"}, "margin": 0.0}}
STATS = {"seed": 7, "n_resamples": 2000, "n_flips": 2000, "confidence": 0.95}
BM25 = np.array([0.5, 0.4, 0.6, 0.5, 0.3, 0.7, 0.5, 0.4, 0.6, 0.5])  # ten target documents (families)


def run(graph: np.ndarray, rewired: np.ndarray, spec: dict = SPEC) -> dict:
    vec = {"bm25": BM25, "tfidf": BM25 - 0.2, "bm25+ppr": graph, "bm25+ppr:rewire": rewired}
    overall = {lab: {"mrr@10": float(v.mean())} for lab, v in vec.items() if lab != "bm25+ppr:rewire"}
    return pick(spec, overall, "mrr@10", vec, STATS)


def test_a_graph_that_helps_where_its_rewired_control_does_not_is_picked():
    lift = np.array([0.1, 0.2, 0.1, 0.3, 0.1, 0.2, 0.1, 0.1, 0.2, 0.1])  # every family gains from the links
    p = run(BM25 + lift, BM25.copy())
    assert p["chosen"] == "bm25+ppr"
    ev = p["graph"]["bm25+ppr"]
    assert ev["passes"] and ev["best_plain"] == "bm25"
    assert ev["lead"] == pytest.approx(lift.mean())
    assert ev["rewired"]["difference"] == pytest.approx(lift.mean())
    assert ev["rewired"]["ci_low"] >= 0.1 - 1e-12  # no resample mean is below the smallest gain
    assert "graph may be picked" in p["note"]


def test_a_graph_equal_to_its_rewired_control_is_not_picked_however_it_leads_bm25():
    graph = BM25 + 0.01  # leads BM25 on dev by +0.01 ...
    p = run(graph, graph.copy())  # ... and a random graph of the same degrees does exactly as well
    assert p["chosen"] == "bm25"  # today's rule (the best dev figure) would take bm25+ppr
    ev = p["graph"]["bm25+ppr"]
    assert not ev["passes"] and ev["lead"] == pytest.approx(0.01)
    assert (ev["rewired"]["difference"], ev["rewired"]["ci_low"], ev["rewired"]["ci_high"]) == (0.0, 0.0, 0.0)
    assert "graph not picked: bm25+ppr beats its rewired controls by +0.0000 [+0.0000, +0.0000] on dev" in p["note"]


def test_a_noisy_lead_over_the_rewired_graph_is_not_enough():
    d = np.array([0.5, -0.5, 0.5, -0.5, 0.5, -0.5, 0.5, -0.5, 0.5, -0.3])  # mean +0.02, half the families lose
    p = run(BM25 + 0.2 + d / 10, BM25 + 0.2 - d / 10)  # graph − rewired = d / 5
    ev = p["graph"]["bm25+ppr"]
    assert ev["lead"] > 0 and ev["rewired"]["difference"] > 0 and ev["rewired"]["ci_low"] < 0
    assert p["chosen"] == "bm25" and not ev["passes"]


def test_a_graph_that_beats_its_control_but_not_bm25_is_not_picked():
    p = run(BM25 - 0.05, BM25 - 0.2)
    ev = p["graph"]["bm25+ppr"]
    assert ev["rewired"]["ci_low"] > 0 and ev["lead"] == pytest.approx(-0.05)
    assert p["chosen"] == "bm25" and "graph not picked: bm25+ppr leads bm25 by -0.0500" in p["note"]


def test_the_margin_is_a_declared_parameter():
    lift = np.full(10, 0.05)
    assert run(BM25 + lift, BM25.copy())["chosen"] == "bm25+ppr"
    stricter = {**SPEC, "graph": {**SPEC["graph"], "margin": 0.06}}
    assert run(BM25 + lift, BM25.copy(), stricter)["chosen"] == "bm25"


def test_the_gate_is_checked_before_anything_runs():
    labels = {"bm25", "tfidf", "bm25+ppr", "bm25+ppr:rewire"}
    check_pick(SPEC, labels, "p.json")
    with pytest.raises(InputError, match="reads no graph"):
        check_pick({**SPEC, "singles": ["bm25+ppr"]}, labels, "p.json")
    with pytest.raises(InputError, match="'nope'"):
        check_pick({**SPEC, "graph": {"controls": {"bm25+ppr": "nope"}}}, labels, "p.json")
    proto = {"name": "x", "corpus": {"source": "c"}, "benchmark": {"kind": "collection", "path": "b.jsonl"},
             "metrics": {"primary": "mrr@10"},
             "methods": [{"name": "bm25"}], "pick": {**SPEC, "graph": {**SPEC["graph"], "margin": -0.1}}}
    with pytest.raises(InputError, match="margin"):
        validate_protocol(proto, "p.json")
    for bad, why in (({"margin": -0.1}, "greater than or equal to 0"), ({"controls": {}}, "at least 1 item"),
                     ({"extra": 1}, "Extra inputs are not permitted")):  # one gate, the schema's, read alike here
        with pytest.raises(InputError, match=f"^pick.graph: .*{why}"):
            check_pick({**SPEC, "graph": {**SPEC["graph"], **bad}}, labels, "p.json")
    with pytest.raises(InputError, match="graph gate or an incumbent needs"):
        pick(SPEC, {lab: {"mrr@10": 0.5} for lab in SPEC["singles"]}, "mrr@10")


def test_a_tie_with_bm25_goes_to_the_method_without_the_graph():
    p = run(BM25.copy(), BM25 - 0.2)  # the links beat their rewirings, but only draw with BM25
    assert p["chosen"] == "bm25" and p["graph"]["bm25+ppr"]["lead"] == 0.0
    assert "graph not picked: bm25+ppr leads bm25 by +0.0000" in p["note"]
