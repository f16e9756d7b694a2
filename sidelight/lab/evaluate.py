"""Run a method over a query set and score it against qrels."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..index import Index
from ..methods import Method
from ..results import Results, Run
from .metrics import evaluate as _evaluate_ids

DEFAULT_METRICS = ("ndcg@10", "mrr@10", "recall@5", "recall@100", "hit@1", "hit@10")


@dataclass
class EvalResult:
    method: str
    params: dict
    n_queries: int
    metrics: dict[str, float]
    run: Run = field(repr=False, default_factory=lambda: Run({}))

    def to_json(self) -> dict:
        return {"method": self.method, "params": self.params, "n_queries": self.n_queries, "metrics": self.metrics}


def run_method(index: Index, method: Method, queries: dict[str, str], depth: int = 1000,
               progress: bool = True, where: Mapping | None = None) -> Run:
    """The method's `Run` over `queries`, `depth` deep (only records `where` admits, see `Index.search`)."""
    return index.search_many(queries, depth, method, progress, where)


def evaluate(run: Run | Mapping[str, Results | Sequence], qrels: Mapping[str, Mapping[str, int]],
             metrics: Sequence[str] = DEFAULT_METRICS) -> dict[str, float]:
    """Mean of each metric (e.g. ``ndcg@10``) over the judged queries of `run`.

    `run`: a `Run` (`Index.search_many`), or query id -> `Results`, ranked ids or (id, score) pairs.
    """
    ids = {}
    for q, hits in run.items():
        hits = list(hits)
        ids[q] = [h.id if hasattr(h, "id") else h[0] if isinstance(h, (tuple, list)) else h for h in hits]
    return _evaluate_ids(qrels, ids, list(metrics))


def evaluate_method(index: Index, method: Method, queries: dict[str, str], qrels: dict[str, dict[str, int]],
                    metrics=DEFAULT_METRICS, depth: int = 1000, progress: bool = True,
                    where: Mapping | None = None) -> EvalResult:
    run = run_method(index, method, queries, depth, progress, where)
    return EvalResult(method.name, dict(method.params), len(queries), evaluate(run, qrels, metrics), run)


def write_trec(run: Run, path: Path, tag: str) -> None:
    """TREC run format: qid Q0 docid rank score tag (see `Results.to_trec`)."""
    Path(path).write_text("".join(line + "\n" for q, r in run.items() for line in r.to_trec(q, tag)))


def write_json(result: EvalResult, path: Path) -> None:
    Path(path).write_text(json.dumps(result.to_json(), indent=2, sort_keys=True) + "\n")
