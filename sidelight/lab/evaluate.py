"""Run a method over a query set and score it against qrels."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..index import Index
from ..methods import Method
from ..progress import progress_bar
from .metrics import evaluate

DEFAULT_METRICS = ("ndcg@10", "mrr@10", "recall@5", "recall@100", "hit@1", "hit@10")


@dataclass
class EvalResult:
    method: str
    params: dict
    n_queries: int
    metrics: dict[str, float]
    run: dict[str, list[tuple[str, float]]] = field(repr=False, default_factory=dict)

    def to_json(self) -> dict:
        d = asdict(self)
        d.pop("run")
        return d


def run_method(index: Index, method: Method, queries: dict[str, str], depth: int = 1000,
               progress: bool = True) -> dict[str, list[tuple[str, float]]]:
    """Query id -> [(record id, score)] best first, `depth` deep."""
    run = {}
    with progress_bar(len(queries), f"{method.name} queries", progress) as advance:
        for qid, text in queries.items():
            r = method.rank(index, text, depth)
            run[qid] = [(index.ids[p], float(s)) for p, s in zip(r.positions, r.scores)]
            advance(1)
    return run


def evaluate_run(run: dict[str, list[tuple[str, float]]], qrels: dict[str, dict[str, int]],
                 metrics=DEFAULT_METRICS) -> dict[str, float]:
    return evaluate(qrels, {q: [d for d, _ in hits] for q, hits in run.items()}, list(metrics))


def evaluate_method(index: Index, method: Method, queries: dict[str, str], qrels: dict[str, dict[str, int]],
                    metrics=DEFAULT_METRICS, depth: int = 1000, progress: bool = True) -> EvalResult:
    run = run_method(index, method, queries, depth, progress)
    return EvalResult(method.name, dict(method.params), len(queries), evaluate_run(run, qrels, metrics), run)


def write_trec(run: dict[str, list[tuple[str, float]]], path: Path, tag: str) -> None:
    """TREC run format: qid Q0 docid rank score tag."""
    with open(path, "w") as f:
        for qid, hits in run.items():
            for rank, (doc, score) in enumerate(hits, 1):
                f.write(f"{qid} Q0 {doc} {rank} {score:.6f} {tag}\n")


def write_json(result: EvalResult, path: Path) -> None:
    Path(path).write_text(json.dumps(result.to_json(), indent=2, sort_keys=True) + "\n")
