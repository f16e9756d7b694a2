"""Hybrid methods over the lexical (BM25) and dense lanes, each a named method of its own.

Every method here ranks the whole corpus. The two components are built the same way for all of
them (see `component_scores`):

* lexical: BM25 over the index's own lexical lane, or over a lexical *variant* of the same corpus
  built in memory on first use (`stopwords`, `stem`, `title_weight`), optionally expanded with RM3
  pseudo-relevance feedback (`rm3`, `fb_docs`, `fb_terms`, `orig_weight`). Positive scores only.
* dense: cosine with every record, optionally after Rocchio feedback on the query vector from the
  top `dense_prf_docs` dense records (`dense_prf_weight`). Every record is ranked.

Methods: `bm25+rm3`, `dense-prf`, `rrf` (weighted reciprocal rank fusion, k=60), `hybrid-linear`
(z-score or min-max normalised linear combination) and `best`, an alias of the pipeline chosen
on the SciFact development queries (see bench/fusion.py); `learned` lives in `learned.py`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError
from ..structures.dense import held_vectors
from ..structures.fusion import RRF_K, rrf_scores
from ..structures.lexical import LexicalIndex, TermScorer, accumulate_scores, term_matrices
from ..structures.ranking import Ranking, top_k
from ..text import STOPLISTS, TokenizerConfig
from .dense import require_dense
from ..capabilities import Capability
from .params import Param
from .registry import check_params, method_spec, register

if TYPE_CHECKING:
    from .context import SearchContext

NONE = "none"  # asks for no stop list / no stemming where null means the index's own

#: Component parameters shared by every hybrid method (null / false / 0: the index's own component).
LEXICAL_PARAMS = (
    Param("stopwords", str, None, "stop list of the fused BM25 (null: the index's own; none: no list)",
          choices=(*STOPLISTS, NONE)),
    Param("stem", str, None, "stemmer of the fused BM25 (null: the index's own; none: no stemming)",
          choices=("english", NONE)),
    Param("title_weight", int, None, "times the title is repeated (null: the corpus's own)", low=1, high=100),
    Param("rm3", bool, False, "expand the query with RM3 pseudo-relevance feedback",
          needs=(Capability.TERM_MATRICES,)),
    Param("fb_docs", int, 10, "RM3 feedback records", low=0),
    Param("fb_terms", int, 10, "RM3 expansion terms", low=0),
    Param("orig_weight", float, 0.5, "RM3 weight of the original query", low=0.0, high=1.0),
)
DENSE_PARAMS = (
    Param("dense_prf_docs", int, 0, "Rocchio feedback records for the query vector (0: none)", low=0,
          needs=(Capability.VECTORS,)),
    Param("dense_prf_weight", float, 0.5, "Rocchio weight of the feedback centroid", low=0.0, high=1.0),
)
COMPONENT_OPTIONS = {p.name: p.default for p in (*LEXICAL_PARAMS, *DENSE_PARAMS)}

def with_defaults(params: tuple[Param, ...], **defaults: Any) -> tuple[Param, ...]:
    """The same declarations with other defaults (a method that presets a shared option)."""
    return tuple(replace(p, default=defaults[p.name]) if p.name in defaults else p for p in params)


#: RM3 drops feedback terms that occur in more than this share of records (as Anserini does).
RM3_MAX_DF_SHARE = 0.1


# ---- lexical component ------------------------------------------------------------------------
def lexical_variant(index: "SearchContext", stopwords: str | None = None, stem: str | None = None,
                    title_weight: int | None = None) -> TermScorer:
    """The index's lexical lane, or a variant of it over the same records (built once, kept in memory).

    The variant keeps the index's BM25 parameters; only tokenization and title repetition change.
    """
    lex = index.lexical
    own = lex.tokenizer_config
    cfg = TokenizerConfig(min_length=own.min_length,
                          stopwords=own.stopwords if stopwords is None else None if stopwords == NONE else stopwords,
                          stem=own.stem if stem is None else None if stem == NONE else stem)
    tw = index.corpus.title_weight if title_weight is None else int(title_weight)
    if tw < 1:
        raise InputError(f"title_weight must be >= 1, got {title_weight}")
    if cfg == lex.tokenizer_config and tw == index.corpus.title_weight:
        return lex
    def build() -> LexicalIndex:
        texts = [index.corpus.indexed_text(r, tw) for r in index.corpus.records]
        return LexicalIndex.build(texts, cfg, lex.params)

    return index.memo(f"lexical-variant {cfg} {tw}", None, build)


def rm3_query(lex: TermScorer, query: str, id_rank: np.ndarray, fb_docs: int = 10, fb_terms: int = 10,
              orig_weight: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """RM3 expansion: (term ids, weights) of the expanded query.

    RM1 over the top `fb_docs` BM25 records: P(w|R) ∝ Σ_d score(d) · tf(w,d)/|d|, terms occurring in
    more than 10% of records dropped, the `fb_terms` heaviest kept (ties by term id) and
    L1-normalised; then interpolated with the original query (each distinct term 1/|q|):
    orig_weight · q + (1 - orig_weight) · RM1.
    """
    if not (0.0 <= orig_weight <= 1.0) or fb_docs < 0 or fb_terms < 0:
        raise InputError(f"rm3 needs 0 <= orig_weight <= 1 and fb_docs, fb_terms >= 0, "
                         f"got {orig_weight}, {fb_docs}, {fb_terms}")
    terms = lex.query_terms(query)
    if len(terms) == 0:
        return terms, np.zeros(0)
    if fb_docs == 0 or fb_terms == 0 or orig_weight == 1.0:  # no feedback: the query as is
        return terms, np.full(len(terms), 1.0 / len(terms))
    m = term_matrices(lex)
    first = top_k(accumulate_scores(m.bm25, terms, lex.n_docs), int(fb_docs), id_rank)
    if len(first) == 0:  # nothing to feed back: the query as is
        return terms, np.full(len(terms), 1.0 / len(terms))
    weights: dict[int, float] = {int(t): orig_weight / len(terms) for t in terms}
    rows = m.tf[first.positions]
    scale = first.scores / np.maximum(m.doc_len[first.positions], 1.0)
    rm = np.asarray(rows.multiply(scale[:, None]).sum(axis=0)).ravel()
    rm[lex.df > RM3_MAX_DF_SHARE * lex.n_docs] = 0.0
    cand = np.flatnonzero(rm > 0)
    cand = cand[np.lexsort((cand, -rm[cand]))][: int(fb_terms)]
    total = rm[cand].sum()
    for t in cand:
        weights[int(t)] = weights.get(int(t), 0.0) + (1.0 - orig_weight) * rm[t] / total
    ids = np.fromiter(weights, dtype=np.int64, count=len(weights))
    return ids, np.asarray([weights[int(t)] for t in ids], dtype=np.float64)


def lexical_scores(index: "SearchContext", query: str, params: dict[str, Any]) -> np.ndarray:
    """BM25 score vector of the configured lexical component (RM3-expanded when `rm3`)."""
    lex = lexical_variant(index, params.get("stopwords"), params.get("stem"), params.get("title_weight"))
    if not params.get("rm3"):
        return lex.bm25_scores(query)
    ids, w = rm3_query(lex, query, index.id_rank, int(params["fb_docs"]), int(params["fb_terms"]),
                       float(params["orig_weight"]))
    return accumulate_scores(term_matrices(lex).bm25, ids, lex.n_docs, w)


# ---- dense component --------------------------------------------------------------------------
def dense_scores(index: "SearchContext", query: str, params: dict[str, Any]) -> np.ndarray:
    """Cosine with every record; with `dense_prf_docs` > 0, Rocchio feedback first:
    q' = normalise((1 - w) q + w · mean of the top dense record vectors), w = `dense_prf_weight`."""
    store = require_dense(index)
    q = np.asarray(store.encode_query(query), dtype=np.float32)
    scores = store.scores_of(q)
    n_fb = int(params.get("dense_prf_docs") or 0)
    if n_fb > 0:
        vectors = held_vectors(store).vectors  # dense_prf_docs > 0 declares Capability.VECTORS
        w = float(params["dense_prf_weight"])
        top = top_k(scores, n_fb, index.id_rank, positive_only=False)
        centroid = np.asarray(vectors[np.sort(top.positions)], dtype=np.float64).mean(axis=0)
        q2 = (1.0 - w) * q.astype(np.float64) + w * centroid
        norm = float(np.linalg.norm(q2))
        scores = np.asarray(vectors, dtype=np.float64) @ (q2 / norm if norm > 0 else q2)
    return scores


def component_scores(index: "SearchContext", query: str, params: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """(BM25 scores, cosine scores) over all records for the configured components."""
    return lexical_scores(index, query, params), dense_scores(index, query, params)


def complete_rankings(index: "SearchContext", bm25: np.ndarray, cos: np.ndarray) -> tuple[Ranking, Ranking]:
    """BM25 ranking of every positive record; dense ranking of every record (ties by ascending id)."""
    return (top_k(bm25, None, index.id_rank),
            top_k(cos, None, index.id_rank, positive_only=False))


# ---- score normalisations -----------------------------------------------------------------------
def normalise(scores: np.ndarray, how: str) -> np.ndarray:
    """`zscore` (mean 0, sd 1 over all records) or `minmax` (to [0, 1]); a constant vector maps to 0."""
    if how == "zscore":
        sd = float(scores.std())
        return (scores - scores.mean()) / sd if sd > 0 else np.zeros_like(scores)
    if how == "minmax":
        lo, hi = float(scores.min()), float(scores.max())
        return (scores - lo) / (hi - lo) if hi > lo else np.zeros_like(scores)
    raise InputError(f"unknown normalisation {how!r}; choose zscore or minmax")


# ---- methods -----------------------------------------------------------------------------------
@register("bm25+rm3", "BM25 with RM3 pseudo-relevance feedback (fb_docs, fb_terms, orig_weight)",
          *with_defaults(LEXICAL_PARAMS, rm3=True), needs=(Capability.TERM_STATISTICS,))
def _bm25_rm3(index: "SearchContext", query: str, k: int | None, params: dict[str, Any]) -> Ranking:
    return top_k(lexical_scores(index, query, params), k, index.id_rank)


@register("dense-prf", "dense cosine after Rocchio feedback from the top dense records",
          *with_defaults(DENSE_PARAMS, dense_prf_docs=3), needs=(Capability.DENSE,))
def _dense_prf(index: "SearchContext", query: str, k: int | None, params: dict[str, Any]) -> Ranking:
    return top_k(dense_scores(index, query, params), k, index.id_rank, positive_only=False)


@register("rrf", "reciprocal rank fusion of complete BM25 and dense rankings, sum w/(k_rrf+rank)",
          Param("k_rrf", int, RRF_K, "the rank offset of reciprocal rank fusion", low=1),
          Param("weights", tuple, (1.0, 1.0), "weights of the BM25 and dense ranks", low=0.0),
          *LEXICAL_PARAMS, *DENSE_PARAMS, needs=(Capability.TERM_STATISTICS, Capability.DENSE))
def _rrf(index: "SearchContext", query: str, k: int | None, params: dict[str, Any]) -> Ranking:
    bm25, dense = complete_rankings(index, *component_scores(index, query, params))
    fused = rrf_scores([bm25, dense], len(index.ids), int(params["k_rrf"]), [float(w) for w in params["weights"]])
    return top_k(fused, k, index.id_rank)


HYBRID_LINEAR_PARAMS = (
    Param("alpha", float, 0.5, "weight of the normalised BM25 scores", low=0.0, high=1.0),
    Param("norm", str, "zscore", "score normalisation before the linear combination", choices=("zscore", "minmax")),
    *LEXICAL_PARAMS, *DENSE_PARAMS,
)


@register("hybrid-linear", "alpha * norm(BM25) + (1 - alpha) * norm(cosine), norm zscore or minmax",
          *HYBRID_LINEAR_PARAMS, needs=(Capability.TERM_STATISTICS, Capability.DENSE))
def _hybrid_linear(index: "SearchContext", query: str, k: int | None, params: dict[str, Any]) -> Ranking:
    bm25, cos = component_scores(index, query, params)
    a = float(params["alpha"])
    fused = a * normalise(bm25, params["norm"]) + (1.0 - a) * normalise(cos, params["norm"])
    return top_k(fused, k, index.id_rank, positive_only=False)


#: The pipeline chosen on the 209 SciFact development queries (bench/fusion.py); test untouched.
#: Dev nDCG@10 0.7160 (min-max linear, alpha 0.5, stemmed + stop-worded BM25, plain MiniLM cosine).
BEST_PARAMS = (
    Param("pipeline", str, "hybrid-linear", "the method `best` stands for", choices=("hybrid-linear",)),
    *with_defaults(HYBRID_LINEAR_PARAMS, alpha=0.5, norm="minmax", stopwords="lucene-en-v1", stem="english"),
)


@register("best", "alias of the hybrid pipeline chosen on SciFact dev queries (params name it)", *BEST_PARAMS,
          needs=(Capability.TERM_STATISTICS, Capability.DENSE))
def _best(index: "SearchContext", query: str, k: int | None, params: dict[str, Any]) -> Ranking:
    params = dict(params)
    name = params.pop("pipeline")
    return method_spec(name).fn(index, query, k, check_params(name, params))

