"""Learned fusion: the SciFact pilot's five-feature logistic ranker over BM25 + dense.

Features of record d for query q, computed over *all* records (every record is a candidate):

1. ``bm25_norm``      BM25(q, d) / max over all records of BM25(q, ·)  (0 when no record matches)
2. ``cosine``         cosine of the query and record vectors
3. ``bm25_rank``      60 / (60 + rank of d in the complete positive-only BM25 ranking), 0 if unranked
4. ``dense_rank``     60 / (60 + rank of d in the complete dense ranking)
5. ``bm25_x_cosine``  bm25_norm * cosine

Ranks are 1-based with ties by ascending id. The score is w·x + b (the logistic decision function:
a ranking score, not a calibrated probability). Fitting: scikit-learn LogisticRegression (L2,
class_weight="balanced", lbfgs) on judged positives ∪ the top `depth` of each component for the
fit queries; C from a grid by mean dev nDCG@10 over full-corpus rankings, ties to the smaller C.
The fitter reads qrels of the fit and dev queries only and refuses ids it is told are held out.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError
from ..lab.metrics import evaluate_per_query
from .fusion import RRF_K
from .hybrid import COMPONENT_OPTIONS, component_scores
from .methods import register
from .ranking import Ranking, top_k

if TYPE_CHECKING:
    from ..index import Index

FORMAT = "sidelight-learned-fusion-v1"
FEATURES = ("bm25_norm", "cosine", "bm25_rank", "dense_rank", "bm25_x_cosine")
FEATURE_DEFINITION = {
    "bm25_norm": "BM25 / max BM25 over all records for the query (0 if the max is 0)",
    "cosine": "dot product of unit query and record vectors",
    "bm25_rank": "60/(60+rank) in the complete positive-only BM25 ranking (ties by ascending id); 0 if unranked",
    "dense_rank": "60/(60+rank) in the complete dense ranking over all records (ties by ascending id)",
    "bm25_x_cosine": "bm25_norm * cosine",
    "candidates": "all records",
    "score": "weights . features + intercept",
}
C_GRID = (0.1, 1.0, 10.0)
SPLIT_SEED = 45110
SPLIT_CALL = "random.Random(seed).sample(sorted(train_query_ids), n_fit)"
SHIPPED = "learned-scifact-minilm.json"


# ---- features ----------------------------------------------------------------------------------
def feature_matrix(bm25: np.ndarray, cos: np.ndarray, id_rank: np.ndarray, k_rrf: int = RRF_K) -> np.ndarray:
    """(n records, 5) features from full BM25 and cosine score vectors."""
    n = len(bm25)
    b_rank, d_rank = (top_k(bm25, None, id_rank), top_k(cos, None, id_rank, positive_only=False))
    f = np.zeros((n, len(FEATURES)), dtype=np.float64)
    bmax = float(bm25.max()) if n else 0.0
    if bmax > 0:
        f[:, 0] = np.where(bm25 > 0, bm25 / bmax, 0.0)
    f[:, 1] = cos
    f[b_rank.positions, 2] = k_rrf / (k_rrf + np.arange(1, len(b_rank) + 1, dtype=np.float64))
    f[d_rank.positions, 3] = k_rrf / (k_rrf + np.arange(1, len(d_rank) + 1, dtype=np.float64))
    f[:, 4] = f[:, 0] * f[:, 1]
    return f


def query_features(index: "Index", query: str, components: Mapping | None = None) -> np.ndarray:
    """Features of every record for one query, with the given component options."""
    params = {**COMPONENT_OPTIONS, **(components or {})}
    bm25, cos = component_scores(index, query, params)
    return feature_matrix(bm25, cos, index.id_rank)


# ---- the model ---------------------------------------------------------------------------------
@dataclass
class LearnedModel:
    weights: np.ndarray
    intercept: float
    C: float
    components: dict = field(default_factory=dict)
    meta: dict = field(default_factory=dict)

    def score(self, features: np.ndarray) -> np.ndarray:
        return features @ self.weights + self.intercept

    def rank(self, index: "Index", query: str, k: int | None) -> Ranking:
        return top_k(self.score(query_features(index, query, self.components)), k, index.id_rank,
                     positive_only=False)

    def to_json(self) -> dict:
        return {"format": FORMAT, "features": list(FEATURES), "feature_definition": FEATURE_DEFINITION,
                "weights": [float(w) for w in self.weights], "intercept": float(self.intercept),
                "C": float(self.C), "components": dict(self.components), **self.meta}

    def save(self, path: Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=2, sort_keys=True) + "\n")

    @classmethod
    def from_json(cls, d: dict) -> "LearnedModel":
        if d.get("format") != FORMAT or list(d.get("features", ())) != list(FEATURES):
            raise InputError(f"not a {FORMAT} model with features {list(FEATURES)}")
        core = {"format", "features", "feature_definition", "weights", "intercept", "C", "components"}
        return cls(np.asarray(d["weights"], dtype=np.float64), float(d["intercept"]), float(d["C"]),
                   dict(d.get("components", {})), {k: v for k, v in d.items() if k not in core})

    @classmethod
    def load(cls, path: Path | str | None = None) -> "LearnedModel":
        """A saved model; None is the shipped SciFact + MiniLM model."""
        return _load_cached(None if path is None else str(Path(path).resolve()))


@lru_cache(maxsize=8)
def _load_cached(path: str | None) -> LearnedModel:
    if path is None:
        text = resources.files(__package__).joinpath(f"data/{SHIPPED}").read_text()
    else:
        text = Path(path).read_text()
    return LearnedModel.from_json(json.loads(text))


# ---- splitting and fitting -----------------------------------------------------------------------
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


# ---- the method ----------------------------------------------------------------------------------
@register("learned", "logistic ranker over 5 BM25/dense features (shipped SciFact+MiniLM weights; model=path)",
          model=None)
def _learned(index: "Index", query: str, k: int | None, params: dict) -> Ranking:
    return LearnedModel.load(params.get("model")).rank(index, query, k)
