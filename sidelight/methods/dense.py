"""Dense methods: `dense` (exact cosine over all records) and `dense-ann` (HNSW candidates, exact rescoring)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError
from ..structures.dense import DenseStore, held_vectors
from ..structures.dense_query import DenseScorer
from ..structures.ranking import Ranking, check_finite, select_top
from ..capabilities import Capability
from .params import Param
from .registry import register

if TYPE_CHECKING:
    from .context import SearchContext


def require_dense(index: "SearchContext") -> DenseScorer:
    """The index's dense scorer (cosines of a query vector)."""
    if index.dense is None:
        raise InputError("this index has no dense vectors; rebuild it with `sidelight index SOURCE --dense minilm`")
    return index.dense


def require_vectors(index: "SearchContext") -> DenseStore:
    """The record vectors held here (a method that reads them declares `Capability.VECTORS`)."""
    return held_vectors(require_dense(index))


@register("dense", "cosine of embedding vectors (the dense lane), exact dot product over all records",
          needs=(Capability.DENSE,))
def _dense(index: "SearchContext", query: str, k: int | None, params: dict[str, Any]) -> Ranking:
    return require_dense(index).top(query, k, index.id_rank)


@register("dense-ann", "dense via the saved HNSW graph (usearch): max(k, candidates) approximate neighbours "
          "rescored exactly; scores are exact cosines, ties by id (needs `index --ann`)",
          Param("candidates", int, 100, "approximate neighbours fetched before exact rescoring", low=1),
          Param("expansion_search", int, None, "HNSW expansion at query time (null: the index's own)", low=1),
          needs=(Capability.DENSE, Capability.VECTORS, Capability.ANN))
def _dense_ann(index: "SearchContext", query: str, k: int | None, params: dict[str, Any]) -> Ranking:
    dense = require_vectors(index)
    graph = dense.ann()  # clear error naming --ann when the index has none
    q = dense.encode_query(query)
    count = max(k or 0, int(params["candidates"]))  # k=None: the whole candidate pool, ranked
    cand = graph.search(q, count, params["expansion_search"])
    # exact cosines of the pool, accumulated in float64 row by row (einsum, no BLAS blocking), so a
    # score depends only on the two vectors, not on where the row sits: equal vectors tie exactly
    # and the id breaks the tie; differs from `dense` (float32 BLAS) by float32 rounding at most
    vals = np.einsum("ij,j->i", np.asarray(dense.vectors[cand], dtype=np.float64), np.asarray(q, dtype=np.float64))
    check_finite(vals, "ranking")
    return select_top(cand, vals, k, index.id_rank)
