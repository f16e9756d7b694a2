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
The fitter (`sidelight.lab.fit_learned`, training code kept out of the query path) reads qrels of
the fit and dev queries only and refuses ids it is told are held out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError
from ..structures.fusion import RRF_K
from ..structures.ranking import Ranking, top_k
from .hybrid import COMPONENT_OPTIONS, component_scores
from ..capabilities import Capability
from .params import Param
from .registry import register

if TYPE_CHECKING:
    from .context import SearchContext

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


def query_features(index: "SearchContext", query: str, components: Mapping[str, Any] | None = None) -> np.ndarray:
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
    components: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    def score(self, features: np.ndarray) -> np.ndarray:
        scores: np.ndarray = features @ self.weights + self.intercept
        return scores

    def rank(self, index: "SearchContext", query: str, k: int | None) -> Ranking:
        return top_k(self.score(query_features(index, query, self.components)), k, index.id_rank,
                     positive_only=False)

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "features": list(FEATURES), "feature_definition": FEATURE_DEFINITION,
                "weights": [float(w) for w in self.weights], "intercept": float(self.intercept),
                "C": float(self.C), "components": dict(self.components), **self.meta}

    def save(self, path: Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=2, sort_keys=True) + "\n")

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "LearnedModel":
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
# ---- the method ----------------------------------------------------------------------------------
@register("learned", "logistic ranker over 5 BM25/dense features (shipped SciFact+MiniLM weights; model=path)",
          Param("model", str, None, "path of a fitted model JSON (null: the shipped SciFact + MiniLM weights)"),
          needs=(Capability.TERM_STATISTICS, Capability.DENSE))
def _learned(index: "SearchContext", query: str, k: int | None, params: dict[str, Any]) -> Ranking:
    return LearnedModel.load(params.get("model")).rank(index, query, k)
