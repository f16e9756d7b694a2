"""The method an index searches with when none is named, and where that choice came from.

An index may carry its own choice (`manifest["default"]`: method, params and source, written
with the index). Otherwise an index with vectors uses the fused method chosen on the development
questions of notes-v1 (`bench/collection.py`: a Markdown vault and an HTML manual, documents with
sections), and an index without vectors BM25.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .index import Index


@dataclass(frozen=True)
class Default:
    """A method with fixed parameters, and why it is the default."""

    method: str
    params: dict[str, Any] = field(default_factory=dict)
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "params": dict(self.params), "source": self.source}


#: chosen on notes-v1 dev, both collections (bench/collection.py; bench/results/collection-*-dev.json): the
#: best question-weighted MRR@10 of BM25, dense, rrf, best and hybrid-linear over alpha 0.3-0.7 x minmax/zscore
#: with section windows (0.645 over 93 questions; alpha 0.5 zscore 0.641, bm25 0.542, rrf 0.591)
WITH_VECTORS = Default("hybrid-linear", {"alpha": 0.3, "norm": "zscore"},
                       "an index with vectors: the fusion chosen on notes-v1 dev questions (bench/collection.py)")
WITHOUT_VECTORS = Default("bm25", {}, "an index without vectors: BM25")


def default_method(index: "Index") -> Default:
    """The index's own choice when it stores one, else by whether it has vectors."""
    stored = index.manifest.get("default") if isinstance(index.manifest, dict) else None
    if isinstance(stored, dict) and isinstance(stored.get("method"), str):
        return Default(stored["method"], dict(stored.get("params") or {}), str(stored.get("source", "stored with the index")))
    return WITH_VECTORS if index.dense is not None else WITHOUT_VECTORS
