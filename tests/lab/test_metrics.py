"""Tests for sidelight.lab.metrics: hand-computed cases, pytrec_eval and ranx as oracles."""

from __future__ import annotations

import math
import random

import pytest

from sidelight.errors import InputError
from sidelight.lab.metrics import (
    evaluate,
    evaluate_per_query,
    family_mean,
    parse_metric,
    rank_of,
)

# One query, graded, with ties among the grades (c and e are both 1).
# Ranked list: b(0) c(1) x(unjudged) a(3) d(2); e(1) is never retrieved.
HAND_QRELS = {"q": {"a": 3, "b": 0, "c": 1, "d": 2, "e": 1}}
HAND_RUN = {"q": ["b", "c", "x", "a", "d"]}
L2_3, L2_5, L2_6 = math.log2(3), math.log2(5), math.log2(6)


def _one(metric: str, qrels=HAND_QRELS, run=HAND_RUN) -> float:
    return evaluate(qrels, run, [metric])[metric]


def test_ndcg_hand():
    # ndcg@3: DCG = c at rank 2 -> 1/log2(3) = 0.6309
    #         IDCG = grades [3, 2, 1] -> 3 + 2/log2(3) + 1/log2(4) = 4.7619; ratio 0.1325
    assert _one("ndcg@3") == pytest.approx((1 / L2_3) / (3 + 2 / L2_3 + 1 / 2), abs=1e-12)
    # ndcg@5: DCG = 1/log2(3) + 3/log2(5) + 2/log2(6) = 0.6309 + 1.2920 + 0.7737 = 2.6967
    #         IDCG = grades [3, 2, 1, 1] -> 3 + 2/log2(3) + 1/2 + 1/log2(5) = 5.1925; ratio 0.5193
    expected = (1 / L2_3 + 3 / L2_5 + 2 / L2_6) / (3 + 2 / L2_3 + 0.5 + 1 / L2_5)
    assert _one("ndcg@5") == pytest.approx(expected, abs=1e-12)
    assert expected == pytest.approx(0.51933, abs=1e-4)


def test_mrr_and_rr_hand():
    # First relevant doc is c at rank 2: mrr@1 = 0, mrr@2 = 1/2, rr = 1/2.
    assert _one("mrr@1") == 0.0
    assert _one("mrr@2") == 0.5
    assert _one("rr") == 0.5
    # rr is untruncated: the only relevant doc at rank 12 gives 1/12, mrr@10 gives 0.
    run = {"q": [f"n{i}" for i in range(11)] + ["t"]}
    assert _one("rr", {"q": {"t": 1}}, run) == pytest.approx(1 / 12)
    assert _one("mrr@10", {"q": {"t": 1}}, run) == 0.0


def test_recall_hand():
    # 4 relevant docs (a, c, d, e); top 4 holds c and a -> 2/4; top 5 adds d -> 3/4.
    assert _one("recall@4") == 0.5
    assert _one("recall@5") == 0.75
    assert _one("recall@100") == 0.75


def test_precision_hand():
    # Top 5 holds c, a, d -> 3/5; P@10 keeps denominator 10 for a 5-doc list -> 3/10.
    assert _one("precision@5") == pytest.approx(0.6)
    assert _one("precision@10") == pytest.approx(0.3)
    assert _one("precision@1") == 0.0


def test_hit_hand():
    # b (grade 0) is at rank 1, c (grade 1) at rank 2: hit@1 = 0, hit@2 = 1.
    assert _one("hit@1") == 0.0
    assert _one("hit@2") == 1.0


def test_dcg1_hand():
    # Single target t at rank 3: 1/log2(3 + 1) = 1/2; outside the cutoff 2 -> 0.
    qrels, run = {"q": {"t": 1}}, {"q": ["x", "y", "t"]}
    assert _one("dcg1@10", qrels, run) == 0.5
    assert _one("dcg1@2", qrels, run) == 0.0
    # At rank 1: 1/log2(2) = 1.
    assert _one("dcg1@10", qrels, {"q": ["t"]}) == 1.0


def test_rank_of():
    assert rank_of(["x", "y", "t"], "t") == 3
    assert rank_of(["t"], "t") == 1
    assert rank_of(["x"], "t") is None
    assert rank_of([], "t") is None


def test_family_mean_hand():
    # Family F = {q1: 1, q2: 0} -> 0.5; G = {q3: 1} -> 1; mean of families = 0.75
    # (the plain query mean would be 2/3).
    per_query = {"q1": 1.0, "q2": 0.0, "q3": 1.0}
    assert family_mean(per_query, {"q1": "F", "q2": "F", "q3": "G", "q9": "H"}) == 0.75


def test_macro_average_coverage():
    qrels = {
        "q1": {"a": 1},
        "q2": {"b": 2},  # missing from the run: scores 0 but counts
        "q3": {"c": 0},  # no relevant doc: excluded from the average
    }
    run = {"q1": ["a"], "q3": ["c"], "extra": ["z"]}  # "extra" is ignored
    per_query = evaluate_per_query(qrels, run, ["hit@1", "rr"])
    assert per_query == {"q1": {"hit@1": 1.0, "rr": 1.0}, "q2": {"hit@1": 0.0, "rr": 0.0}}
    assert evaluate(qrels, run, ["hit@1", "rr"]) == {"hit@1": 0.5, "rr": 0.5}


def test_parse_metric():
    assert parse_metric("ndcg@10").k == 10
    assert parse_metric("rr").k is None
    assert parse_metric("dcg1@10").family == "dcg1"


@pytest.mark.parametrize(
    "name, fragment",
    [
        ("ndcg", "needs a cutoff"),
        ("ndcg@", "bad cutoff"),
        ("ndcg@0", "bad cutoff"),
        ("ndcg@-1", "bad cutoff"),
        ("ndcg@ten", "bad cutoff"),
        ("ndcg@1.5", "bad cutoff"),
        ("map@10", "unknown metric"),
        ("rr@10", "unknown metric"),
        ("NDCG@10", "unknown metric"),
        ("", "unknown metric"),
    ],
)
def test_bad_metric_names(name, fragment):
    with pytest.raises(InputError, match=fragment):
        evaluate(HAND_QRELS, HAND_RUN, [name])


@pytest.mark.parametrize(
    "grade, fragment",
    [(float("nan"), "finite"), (float("inf"), "finite"), (-1, "negative"), ("2", "number"), (None, "number")],
)
def test_bad_grades(grade, fragment):
    with pytest.raises(InputError, match=fragment):
        evaluate({"q": {"a": 1, "b": grade}}, {"q": ["a"]}, ["ndcg@10"])


def test_other_input_errors():
    with pytest.raises(InputError, match="twice"):
        evaluate({"q": {"a": 1}}, {"q": ["a", "b", "a"]}, ["recall@10"])
    with pytest.raises(InputError, match="string"):
        evaluate({"q": {"a": 1}}, {"q": "abc"}, ["recall@10"])
    with pytest.raises(InputError, match="list of names"):
        evaluate({"q": {"a": 1}}, {"q": ["a"]}, "ndcg@10")
    with pytest.raises(InputError, match="no query"):
        evaluate({"q": {"a": 0}}, {"q": ["a"]}, ["ndcg@10"])
    with pytest.raises(InputError, match="no family"):
        family_mean({"q1": 1.0}, {})
    with pytest.raises(InputError, match="non-finite"):
        family_mean({"q1": float("nan")}, {"q1": "F"})
    with pytest.raises(InputError, match="no per-query"):
        family_mean({}, {})


# ---------------------------------------------------------------- oracles

OURS_TO_TREC = {"ndcg@10": "ndcg_cut_10", "rr": "recip_rank", "recall@100": "recall_100", "precision@5": "P_5"}
OURS_TO_RANX = {"ndcg@10": "ndcg@10", "mrr@10": "mrr@10", "recall@100": "recall@100", "hit@1": "hit_rate@1"}


def _toy_cases() -> tuple[dict, dict]:
    """Small graded cases with grade ties, unjudged docs, short and missing lists."""
    qrels = {
        "t1": {"a": 3, "b": 0, "c": 1, "d": 2, "e": 1},
        "t2": {"a": 2, "b": 2, "c": 2},  # all tied grades
        "t3": {"z": 1},  # relevant doc never retrieved
        "t4": {"a": 1, "b": 1},  # missing from the run
        "t5": {f"d{i}": (i % 3) for i in range(40)},  # many relevant, some beyond 10 and 100
        "t6": {"only": 1},  # relevant at rank 1
    }
    run = {
        "t1": ["b", "c", "x", "a", "d"],
        "t2": ["c", "q", "a", "b"],
        "t3": ["a", "b"],
        "t5": [f"n{i}" for i in range(7)] + [f"d{i}" for i in range(39, -1, -1)] + [f"m{i}" for i in range(80)],
        "t6": ["only", "x"],
        "not_in_qrels": ["a", "b"],
    }
    return qrels, run


def _synthetic() -> tuple[dict, dict]:
    """200 seeded queries with graded qrels over 500 docs; some queries missing, some extra."""
    rng = random.Random(1234)
    docs = [f"doc{i}" for i in range(500)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, list[str]] = {}
    for q in range(200):
        qid = f"s{q}"
        judged = rng.sample(docs, rng.randint(1, 60))
        qrels[qid] = {d: rng.choices([0, 1, 2, 3], weights=[5, 3, 2, 1])[0] for d in judged}
        if q % 20 != 0:  # every 20th query is missing from the run
            run[qid] = rng.sample(docs, rng.randint(0, 150))
    for q in range(10):
        run[f"extra{q}"] = rng.sample(docs, 20)
    return qrels, run


def _scored(run: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    """Strictly decreasing scores so the oracles keep our list order (no tie breaking)."""
    return {qid: {doc: float(len(docs) - i) for i, doc in enumerate(docs)} for qid, docs in run.items()}


def _combined() -> tuple[dict, dict]:
    q1, r1 = _toy_cases()
    q2, r2 = _synthetic()
    return {**q1, **q2}, {**r1, **r2}


@pytest.fixture(scope="module")
def cases():
    qrels, run = _combined()
    ours = evaluate_per_query(qrels, run, sorted(set(OURS_TO_TREC) | set(OURS_TO_RANX)))
    assert len(ours) > 150  # most synthetic queries have a relevant doc
    return qrels, run, ours


def test_scored_is_strictly_decreasing():
    scored = _scored({"q": ["a", "b", "c"]})
    assert scored == {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}


def test_against_pytrec_eval(cases):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run, ours = cases
    measures = {"ndcg_cut.10", "recip_rank", "recall.100", "P.5"}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(_scored(run))
    for qid, scores in ours.items():
        for metric, trec_name in OURS_TO_TREC.items():
            expected = theirs.get(qid, {}).get(trec_name, 0.0)  # absent from run -> 0
            assert scores[metric] == pytest.approx(expected, abs=1e-9), (qid, metric)


@pytest.mark.filterwarnings("ignore::Warning")
def test_against_ranx(cases):
    ranx = pytest.importorskip("ranx")
    qrels, run, ours = cases
    # Align the run to the qrels ourselves: ranx's make_comparable JIT-compiles for ~9 s.
    # A query missing from the run gets one unjudged placeholder doc, which scores 0 on
    # every metric compared here, like an empty list.
    aligned = {qid: run.get(qid) or ["__placeholder__"] for qid in qrels}
    ranx_run = ranx.Run(_scored(aligned))
    ranx.evaluate(ranx.Qrels(qrels), ranx_run, list(OURS_TO_RANX.values()))
    for qid, scores in ours.items():
        for metric, ranx_name in OURS_TO_RANX.items():
            expected = float(ranx_run.scores[ranx_name][qid])
            assert scores[metric] == pytest.approx(expected, abs=1e-9), (qid, metric)
    # The macro average over the same queries agrees too.
    means = evaluate(qrels, run, list(OURS_TO_RANX))
    for metric, ranx_name in OURS_TO_RANX.items():
        theirs = [float(ranx_run.scores[ranx_name][q]) for q in ours]
        assert means[metric] == pytest.approx(sum(theirs) / len(theirs), abs=1e-9)
