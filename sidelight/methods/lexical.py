"""Lexical methods: BM25 (the lexical lane), TF-IDF cosine and their reciprocal rank fusion."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..structures.fusion import RRF_K, rrf_scores
from ..structures.ranking import Ranking, top_k
from .params import Param
from ..capabilities import Capability
from .registry import register

if TYPE_CHECKING:
    from .context import SearchContext


@register("bm25", "BM25 over names and text (the lexical lane)", needs=(Capability.TERM_STATISTICS,))
def _bm25(index: "SearchContext", query: str, k: int | None, params: dict[str, Any]) -> Ranking:
    return index.lexical.bm25_top(query, k, index.id_rank)


@register("tfidf", "TF-IDF cosine, (1+ln tf)(ln((N+1)/(df+1))+1) (Carrier)", needs=(Capability.TERM_STATISTICS,))
def _tfidf(index: "SearchContext", query: str, k: int | None, params: dict[str, Any]) -> Ranking:
    return top_k(index.lexical.tfidf_scores(query), k, index.id_rank)


@register("rrf-lexical", "reciprocal rank fusion of BM25 and TF-IDF positive ranks, 1/(k_rrf+rank)",
          Param("k_rrf", int, RRF_K, "the rank offset of reciprocal rank fusion (Cormack et al.: 60)", low=1),
          needs=(Capability.TERM_STATISTICS,))
def _rrf_lexical(index: "SearchContext", query: str, k: int | None, params: dict[str, Any]) -> Ranking:
    parts = [top_k(index.lexical.bm25_scores(query), None, index.id_rank),
             top_k(index.lexical.tfidf_scores(query), None, index.id_rank)]
    return top_k(rrf_scores(parts, len(index.ids), params["k_rrf"]), k, index.id_rank)
