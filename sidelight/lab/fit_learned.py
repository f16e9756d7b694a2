"""Fitting the learned fusion (`sidelight.methods.learned`): the split, training pairs, C on dev.

Training code lives in the lab, not in the query path: the method only loads and applies weights.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError
from ..methods.hybrid import COMPONENT_OPTIONS
from ..methods.learned import (
    C_GRID,
    SPLIT_CALL,
    SPLIT_SEED,
    LearnedModel,
    query_features,
)
from ..structures.ranking import top_k
from .metrics import evaluate_per_query

if TYPE_CHECKING:
    from ..index import Index


def split_train(query_ids: Iterable[str], seed: int = SPLIT_SEED, n_fit: int = 600) -> tuple[list[str], list[str]]:
    """(fit ids, dev ids), both sorted: `random.Random(seed).sample(sorted(ids), n_fit)` are the fit ids."""
    ids = sorted(set(query_ids))
    if not 0 < n_fit < len(ids):
        raise InputError(f"cannot split {len(ids)} queries into {n_fit} fit and the rest dev")
    fit = set(random.Random(seed).sample(ids, n_fit))
    return sorted(fit), [q for q in ids if q not in fit]


def select_c(dev_scores: Mapping[float, float], tol: float = 1e-12) -> float:
    """The C with the highest dev score; a tie (within `tol`) goes to the smaller C."""
    best = None
    for c in sorted(dev_scores):
        if best is None or dev_scores[c] > dev_scores[best] + tol:
            best = c
    if best is None:
        raise InputError("select_c: no scores")
    return best


def training_pairs(features: Mapping[str, np.ndarray], qrels: Mapping[str, Mapping[str, int]],
                   position: Mapping[str, int], depth: int = 20) -> tuple[np.ndarray, np.ndarray, int]:
    """X, y and the number of pairs: judged positives ∪ top `depth` by BM25 ∪ top `depth` by dense.

    Unjudged candidates are negatives. Queries are taken in sorted order for determinism.
    """
    xs, ys = [], []
    for qid in sorted(features):
        f = features[qid]
        pos = {position[d] for d, g in qrels.get(qid, {}).items() if g > 0 and d in position}
        # top by BM25 rank feature (0 = unranked never selected) and by dense rank feature
        chosen = set(pos)
        for col in (2, 3):
            ranked = np.flatnonzero(f[:, col] > 0)
            chosen.update(ranked[np.argsort(-f[ranked, col], kind="stable")][:depth].tolist())
        rows = np.asarray(sorted(chosen), dtype=np.int64)
        xs.append(f[rows])
        ys.append(np.asarray([1 if r in pos else 0 for r in rows.tolist()], dtype=np.int64))
    if not xs:
        raise InputError("no training queries")
    return np.vstack(xs), np.concatenate(ys), len(xs)


def dev_ndcg(weights: np.ndarray, intercept: float, features: Mapping[str, np.ndarray],
             qrels: Mapping[str, Mapping[str, int]], ids: np.ndarray, id_rank: np.ndarray, k: int = 10) -> float:
    """Mean nDCG@k over the dev queries, each ranking all records by the model score."""
    run = {}
    for qid, f in features.items():
        r = top_k(f @ weights + intercept, k, id_rank, positive_only=False)
        run[qid] = [ids[p] for p in r.positions]
    per = evaluate_per_query({q: qrels[q] for q in features if q in qrels}, run, [f"ndcg@{k}"])
    return math.fsum(v[f"ndcg@{k}"] for v in per.values()) / len(per) if per else 0.0


def fit_learned(index: "Index", queries: Mapping[str, str], qrels: Mapping[str, Mapping[str, int]],
                fit_ids: Iterable[str], dev_ids: Iterable[str], c_grid: Iterable[float] = C_GRID,
                depth: int = 20, components: Mapping | None = None, held_out: Iterable[str] = (),
                feature_fn: Callable[["Index", str, Mapping | None], np.ndarray] | None = None,
                max_iter: int = 1000) -> LearnedModel:
    """Fit on `fit_ids`, choose C on `dev_ids`; only those queries' texts and qrels are read.

    Refuses overlapping fit/dev ids and any id listed in `held_out` (e.g. the test queries).
    """
    from sklearn.linear_model import LogisticRegression

    fit_ids, dev_ids = sorted(set(fit_ids)), sorted(set(dev_ids))
    if set(fit_ids) & set(dev_ids):
        raise InputError("fit and dev query ids overlap")
    leaked = (set(fit_ids) | set(dev_ids)) & set(held_out)
    if leaked:
        raise InputError(f"held-out query id(s) in fit/dev, e.g. {sorted(leaked)[0]!r}; refusing to fit")
    missing = [q for q in fit_ids + dev_ids if q not in queries]
    if missing:
        raise InputError(f"no text for query {missing[0]!r}")
    seen = set(fit_ids) | set(dev_ids)
    qrels = {q: dict(qrels[q]) for q in qrels if q in seen}  # everything else is never looked at
    feature_fn = feature_fn or query_features
    comps = {**COMPONENT_OPTIONS, **(components or {})}
    feats_fit = {q: feature_fn(index, queries[q], comps) for q in fit_ids}
    feats_dev = {q: feature_fn(index, queries[q], comps) for q in dev_ids}
    X, y, _ = training_pairs(feats_fit, qrels, index.corpus.position, depth)
    dev = {}
    models = {}
    for c in sorted(float(c) for c in c_grid):
        # the default penalty is L2 (scikit-learn 1.8 deprecates passing penalty="l2")
        lr = LogisticRegression(C=c, class_weight="balanced", solver="lbfgs", max_iter=max_iter)
        lr.fit(X, y)
        models[c] = (lr.coef_[0].astype(np.float64), float(lr.intercept_[0]))
        dev[c] = dev_ndcg(*models[c], feats_dev, qrels, index.ids, index.id_rank)
    c = select_c(dev)
    import sklearn

    meta = {"fit": {"queries": len(fit_ids), "pairs": int(len(y)), "positives": int(y.sum()), "depth": depth,
                    "solver": "lbfgs", "penalty": "l2", "class_weight": "balanced", "max_iter": max_iter,
                    "sklearn": sklearn.__version__},
            "dev": {"queries": len(dev_ids), "metric": "ndcg@10",
                    "by_C": {repr(k): v for k, v in dev.items()}, "selected_C": c, "tie_rule": "smaller C"},
            "split": {"seed": SPLIT_SEED, "call": SPLIT_CALL}}
    return LearnedModel(models[c][0], models[c][1], c, {k: comps[k] for k in sorted(comps)}, meta)
