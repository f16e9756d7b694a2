"""Scoring stored rankings: per-query metrics, family means, per-type tables and paired contrasts.

Carrier R01 §5: a query's primary score is 1/r within ten; queries are averaged per family,
then families are averaged. Contrasts resample families (paired bootstrap) and flip family
signs (sign-flip test), both seeded; the primary contrast is the one the protocol names and
every other contrast against the baseline is marked exploratory.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

import numpy as np

from .benchmark import Benchmark
from .metrics import evaluate_per_query, family_mean
from .stats import paired_bootstrap, sign_flip_test

Rankings = dict[str, dict]  # qid -> {"ids": [...], "scores": [...], "target_rank": int | None}


def per_query_scores(bench: Benchmark, rankings: Rankings, metrics: list[str]) -> dict[str, dict[str, float]]:
    """qid -> metric -> value. Untruncated `rr` uses the stored full target rank when the target
    lies below the stored depth (concept benchmarks)."""
    run = {q: rankings[q]["ids"] if q in rankings else [] for q in bench.queries}
    out = evaluate_per_query(bench.qrels, run, metrics)
    if "rr" in metrics:
        for q, row in out.items():
            r = rankings.get(q, {}).get("target_rank")
            if r is not None:
                row["rr"] = 1.0 / r
    return out


def family_vector(bench: Benchmark, scores: dict[str, dict[str, float]], metric: str,
                  families: list[str]) -> np.ndarray:
    """Per-family mean of one metric, in the given family order."""
    groups: dict[str, list[float]] = {}
    for q, row in scores.items():
        groups.setdefault(bench.family[q], []).append(row[metric])
    return np.array([math.fsum(groups[f]) / len(groups[f]) for f in families])


def summarise(bench: Benchmark, scores: dict[str, dict[str, float]], metrics: list[str]) -> dict:
    """Family-weighted means overall and per query type."""
    fam = bench.family
    overall = {m: family_mean({q: s[m] for q, s in scores.items()}, fam) for m in metrics}
    by_type = {}
    for t in sorted(set(bench.type[q] for q in scores)):
        qs = [q for q in scores if bench.type[q] == t]
        by_type[t] = {m: family_mean({q: scores[q][m] for q in qs}, fam) for m in metrics}
        by_type[t]["n_queries"] = len(qs)
    return {"overall": overall, "by_type": by_type, "n_queries": len(scores),
            "n_families": len({fam[q] for q in scores})}


def contrast(bench: Benchmark, base: dict | np.ndarray, cand: dict | np.ndarray, metric: str, stats: dict,
             families: list[str]) -> dict:
    """Paired family bootstrap and sign-flip test for cand - base on `metric` (per-query scores, or
    per-family vectors already reduced)."""
    a = family_vector(bench, base, metric, families) if isinstance(base, dict) else base
    b = family_vector(bench, cand, metric, families) if isinstance(cand, dict) else cand
    return contrast_vectors(a, b, metric, stats)


def contrast_vectors(a: np.ndarray, b: np.ndarray, metric: str, stats: dict) -> dict:
    """`contrast` of two per-family vectors (b - a), already reduced and aligned family for family."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    boot = paired_bootstrap(a, b, stats["n_resamples"], stats["seed"], stats["confidence"])
    flip = sign_flip_test(a, b, stats["n_flips"], stats["seed"])
    d = b - a
    return {"metric": metric, "baseline_mean": float(a.mean()), "candidate_mean": float(b.mean()),
            "difference": boot.mean_difference, "ci_low": boot.low, "ci_high": boot.high,
            "confidence": stats["confidence"], "n_resamples": boot.n_resamples, "p_sign_flip": flip.p_value,
            "n_flips": flip.n_flips, "seed": stats["seed"], "n_families": int(a.size),
            "families_up": int((d > 0).sum()), "families_down": int((d < 0).sum()),
            "families_same": int((d == 0).sum())}


def group_mean_vector(bench: Benchmark, per_label: dict[str, dict], labels: list[str], metric: str,
                      families: list[str]) -> np.ndarray:
    """Per-family mean over several settings (e.g. five rewired graphs)."""
    return np.mean([family_vector(bench, per_label[lab], metric, families) for lab in labels], axis=0)


def lexical_overlap(bench: Benchmark, corpus, tokenizer) -> dict:
    """Share of a query's distinct non-stop tokens present in the intended record's title + text."""
    pos = corpus.position
    shares = {}
    for q, text in bench.queries.items():
        target = bench.single_target(q)
        if target is None or target not in pos:
            continue
        qt = set(tokenizer(text))
        if not qt:
            continue
        rec = corpus.records[pos[target]]
        dt = set(tokenizer(rec.title + " " + rec.text))
        shares[q] = len(qt & dt) / len(qt)
    if not shares:
        return {"median": None, "per_query": {}, "by_type": {}}
    by_type = {}
    for t in sorted(set(bench.type[q] for q in shares)):
        by_type[t] = statistics.median(v for q, v in shares.items() if bench.type[q] == t)
    return {"median": statistics.median(shares.values()), "mean": statistics.fmean(shares.values()),
            "by_type": by_type, "per_query": shares}


def median_rank(rankings: Rankings) -> float | None:
    """Median untruncated rank of the target over queries (a target never ranked counts as infinite);
    None when the rankings hold no target ranks (BEIR)."""
    ranks = [row.get("target_rank") for row in rankings.values()]
    if not ranks or all("target_rank" not in row for row in rankings.values()):
        return None
    return float(statistics.median(math.inf if r is None else r for r in ranks))


def analyse(bench: Benchmark, rankings: dict[str, Rankings], settings: list, protocol, corpus=None,
            tokenizer=None, contrasts: Sequence[tuple[str, str]] = (), metrics: list[str] | None = None) -> dict:
    """Everything result.json holds: per-label summaries and per-query scores, contrasts, overlap.
    `contrasts` adds (baseline, candidate) pairs beyond the protocol's (the pick against its candidates);
    `metrics`: the ones to score (default all the protocol's; dev leaves out those deeper than dev_depth)."""
    metrics = protocol.metric_names if metrics is None else metrics
    primary = protocol.primary
    per_label = {s.label: per_query_scores(bench, rankings[s.label], metrics) for s in settings}
    out: dict = {"metrics": metrics, "primary_metric": primary, "methods": {}, "groups": {}, "contrasts": []}
    for s in settings:
        spec: dict = next((m for m in protocol.methods if m["name"] == s.group), {})
        out["methods"][s.label] = {"method": s.method, "params": s.params, "group": s.group,
                                   "exploratory": bool(spec.get("exploratory")),
                                   "params_from": spec.get("params_from"),
                                   **summarise(bench, per_label[s.label], metrics),
                                   "median_rank": median_rank(rankings[s.label]),
                                   "per_query": per_label[s.label]}
    groups: dict[str, list[str]] = {}
    for s in settings:
        groups.setdefault(s.group, []).append(s.label)
    families = bench.families()
    for g, labels in groups.items():
        if len(labels) > 1:
            out["groups"][g] = {"labels": labels, "overall": {
                m: float(group_mean_vector(bench, per_label, labels, m, families).mean()) for m in metrics}}
    pc = protocol.data.get("primary_contrast")
    base = (pc or {}).get("baseline", "bm25")
    if base in per_label and len(families) > 1:
        for s in settings:
            if s.label == base:
                continue
            c = contrast(bench, per_label[base], per_label[s.label], primary, protocol.stats, families)
            c.update(baseline=base, candidate=s.label,
                     role="primary" if pc and s.label == pc["candidate"] else "exploratory")
            out["contrasts"].append(c)
        for g, labels in groups.items():
            if len(labels) > 1:
                a = family_vector(bench, per_label[base], primary, families)
                b = group_mean_vector(bench, per_label, labels, primary, families)
                c = contrast(bench, a, b, primary, protocol.stats, families)
                c.update(baseline=base, candidate=f"{g} (mean of {len(labels)})", role="exploratory")
                out["contrasts"].append(c)
        done = {(c["baseline"], c["candidate"]) for c in out["contrasts"]}
        for b, cand in [*protocol.extra_contrasts(), *contrasts]:
            if b in per_label and cand in per_label and (b, cand) not in done:
                c = contrast(bench, per_label[b], per_label[cand], primary, protocol.stats, families)
                c.update(baseline=b, candidate=cand, role="exploratory")
                out["contrasts"].append(c)
                done.add((b, cand))
    out["contrasts"].sort(key=lambda c: c["role"] != "primary")  # stable: primary first, then protocol order
    if corpus is not None and tokenizer is not None and protocol.kind == "concept":
        out["lexical_overlap"] = lexical_overlap(bench, corpus, tokenizer)
    return out
