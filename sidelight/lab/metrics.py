"""Ranking metrics for the evaluation lab, following trec_eval conventions.

Inputs are plain dicts so the lab needs no scores, only orderings:

* ``qrels``: query id -> doc id -> graded relevance (> 0 is relevant).
* ``run``: query id -> ranked doc ids, best first, already cut by the caller.

Metric names are lowercase strings: ``ndcg@10``, ``mrr@10``, ``recall@100``,
``hit@1``, ``precision@5``, ``dcg1@10`` and the untruncated ``rr``. The
definitions match pytrec_eval (``ndcg_cut``, ``recip_rank``, ``recall``, ``P``)
and ranx, and the tests check that to 1e-9.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sidelight.errors import InputError

Qrels = Mapping[str, Mapping[str, float]]
Run = Mapping[str, Sequence[str]]

_WITH_CUTOFF = ("ndcg", "mrr", "recall", "hit", "precision", "dcg1")
_WITHOUT_CUTOFF = ("rr",)


@dataclass(frozen=True)
class MetricSpec:
    """A parsed metric name: ``family`` plus cutoff ``k`` (None = whole list)."""

    name: str
    family: str
    k: int | None


def parse_metric(name: str) -> MetricSpec:
    """Parse a name like ``ndcg@10`` or ``rr``; raise InputError if malformed."""
    known = ", ".join([f"{f}@k" for f in _WITH_CUTOFF] + list(_WITHOUT_CUTOFF))
    if not isinstance(name, str):
        raise InputError(f"metric name must be a string, got {name!r}")
    family, sep, cut = name.partition("@")
    if not sep:
        if family in _WITHOUT_CUTOFF:
            return MetricSpec(name, family, None)
        if family in _WITH_CUTOFF:
            raise InputError(f"metric {name!r} needs a cutoff, e.g. {family}@10")
        raise InputError(f"unknown metric {name!r}; known metrics: {known}")
    if family not in _WITH_CUTOFF:
        raise InputError(f"unknown metric {name!r}; known metrics: {known}")
    if not (cut.isascii() and cut.isdigit()) or int(cut) < 1:
        raise InputError(f"metric {name!r} has a bad cutoff {cut!r}: need a positive integer")
    return MetricSpec(name, family, int(cut))


def reads_to(name: str, depth: int) -> int:
    """The ranks metric `name` reads: its cutoff, or the whole stored ranking (`depth`) for untruncated `rr`."""
    k = parse_metric(name).k
    return depth if k is None else k


def within_depth(names: Sequence[str], depth: int, stored: int) -> tuple[list[str], list[str]]:
    """(metrics computable from rankings `stored` deep, metrics left out because they read deeper);
    `depth` is the protocol's full depth, what an untruncated `rr` reads. A metric is never computed
    from a ranking cut shorter than its cutoff: it would silently read as lower than it is."""
    kept = [m for m in names if reads_to(m, depth) <= stored]
    return kept, [m for m in names if m not in kept]


def rank_of(run_list: Sequence[str], target_id: str) -> int | None:
    """1-based rank of ``target_id`` in ``run_list``, or None if absent."""
    for i, doc in enumerate(run_list):
        if doc == target_id:
            return i + 1
    return None


def _first_relevant_rank(ranking: Sequence[str], rels: Mapping[str, float], k: int | None) -> int | None:
    """1-based rank of the first relevant doc within the top k (None = whole list)."""
    top = ranking if k is None else ranking[:k]
    for i, doc in enumerate(top):
        if rels.get(doc, 0) > 0:
            return i + 1
    return None


def ndcg(ranking: Sequence[str], rels: Mapping[str, float], k: int) -> float:
    """nDCG@k with linear gain = grade and discount log2(rank + 1) (trec_eval ndcg_cut)."""
    dcg = sum(rels.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranking[:k]) if rels.get(doc, 0) > 0)
    ideal_grades = sorted((g for g in rels.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal_grades))
    return dcg / idcg if idcg > 0 else 0.0


def reciprocal_rank(ranking: Sequence[str], rels: Mapping[str, float], k: int | None = None) -> float:
    """1 / rank of the first relevant doc within k (MRR@k per query; k=None is trec_eval recip_rank)."""
    r = _first_relevant_rank(ranking, rels, k)
    return 0.0 if r is None else 1.0 / r


def recall(ranking: Sequence[str], rels: Mapping[str, float], k: int) -> float:
    """Relevant docs in the top k / all relevant docs in the qrels."""
    n_rel = sum(1 for g in rels.values() if g > 0)
    if n_rel == 0:
        return 0.0
    return sum(1 for doc in ranking[:k] if rels.get(doc, 0) > 0) / n_rel


def precision(ranking: Sequence[str], rels: Mapping[str, float], k: int) -> float:
    """Relevant docs in the top k / k (the denominator stays k for short lists, as trec_eval P_k)."""
    return sum(1 for doc in ranking[:k] if rels.get(doc, 0) > 0) / k


def hit(ranking: Sequence[str], rels: Mapping[str, float], k: int) -> float:
    """1.0 if any relevant doc is in the top k, else 0.0 (ranx hit_rate@k)."""
    return 0.0 if _first_relevant_rank(ranking, rels, k) is None else 1.0


def dcg1(ranking: Sequence[str], rels: Mapping[str, float], k: int) -> float:
    """Single-target discounted rank: 1/log2(r + 1) for the first relevant rank r <= k, else 0.

    With one target per query (the Carrier study) this is binary nDCG@k.
    """
    r = _first_relevant_rank(ranking, rels, k)
    return 0.0 if r is None else 1.0 / math.log2(r + 1)


def _score(spec: MetricSpec, ranking: Sequence[str], rels: Mapping[str, float]) -> float:
    """Score one query with a parsed metric."""
    if spec.family == "rr":
        return reciprocal_rank(ranking, rels, None)
    k = spec.k
    assert k is not None
    if spec.family == "ndcg":
        return ndcg(ranking, rels, k)
    if spec.family == "mrr":
        return reciprocal_rank(ranking, rels, k)
    if spec.family == "recall":
        return recall(ranking, rels, k)
    if spec.family == "precision":
        return precision(ranking, rels, k)
    if spec.family == "hit":
        return hit(ranking, rels, k)
    return dcg1(ranking, rels, k)


def _check_qrels(qrels: Qrels) -> None:
    """Reject grades that are not finite, non-negative numbers."""
    for qid, rels in qrels.items():
        for doc, grade in rels.items():
            if isinstance(grade, bool) or not isinstance(grade, numbers.Real):
                raise InputError(f"qrels[{qid!r}][{doc!r}] = {grade!r}: relevance must be a number")
            if not math.isfinite(grade):
                raise InputError(f"qrels[{qid!r}][{doc!r}] = {grade!r}: relevance must be finite")
            if grade < 0:
                raise InputError(f"qrels[{qid!r}][{doc!r}] = {grade!r}: relevance must not be negative")


def _check_ranking(qid: str, ranking: Sequence[str]) -> None:
    """Reject a ranking that is a bare string or repeats a doc (recall could exceed 1)."""
    if isinstance(ranking, str):
        raise InputError(f"run[{qid!r}] is a string; expected a list of doc ids")
    seen: set[str] = set()
    for doc in ranking:
        if doc in seen:
            raise InputError(f"run[{qid!r}] lists doc {doc!r} twice")
        seen.add(doc)


def evaluate_per_query(qrels: Qrels, run: Run, metrics: Sequence[str]) -> dict[str, dict[str, float]]:
    """Per-query scores: query id -> metric name -> value.

    Only qrels queries with at least one relevant doc are scored; a query the
    run misses scores 0, and run queries absent from the qrels are ignored.
    """
    if isinstance(metrics, str):
        raise InputError(f"metrics must be a list of names, got the string {metrics!r}")
    specs = [parse_metric(m) for m in metrics]
    _check_qrels(qrels)
    out: dict[str, dict[str, float]] = {}
    for qid, rels in qrels.items():
        if not any(g > 0 for g in rels.values()):
            continue
        ranking = run.get(qid, [])
        _check_ranking(qid, ranking)
        out[qid] = {s.name: _score(s, ranking, rels) for s in specs}
    return out


def evaluate(qrels: Qrels, run: Run, metrics: Sequence[str]) -> dict[str, float]:
    """Macro average of each metric over the qrels queries with a relevant doc.

    Raises InputError when no query has a relevant doc (a mean of nothing).
    """
    per_query = evaluate_per_query(qrels, run, metrics)
    if not per_query:
        raise InputError("no query in the qrels has a relevant document; nothing to average")
    n = len(per_query)
    return {m: math.fsum(scores[m] for scores in per_query.values()) / n for m in metrics}


def family_mean(per_query: Mapping[str, float], family_of: Mapping[str, str]) -> float:
    """Mean of family means: average each concept family's queries, then the families.

    Carrier weights families equally so a family with many paraphrases does not
    dominate. Every query must have a family and a finite score.
    """
    if not per_query:
        raise InputError("family_mean got no per-query scores")
    groups: dict[str, list[float]] = {}
    for qid, value in per_query.items():
        if qid not in family_of:
            raise InputError(f"query {qid!r} has no family in family_of")
        if not math.isfinite(value):
            raise InputError(f"query {qid!r} has a non-finite score {value!r}")
        groups.setdefault(family_of[qid], []).append(float(value))
    return math.fsum(math.fsum(v) / len(v) for v in groups.values()) / len(groups)
