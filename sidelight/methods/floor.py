"""The floor: a candidate pool from the dense lane (plus rare query terms), reranked under a deadline.

Stage one (always complete)
---------------------------
* The query is embedded twice, as a query (``kind="query"``) and as a document (``kind="doc"``).
  When the model's query and document prefixes are equal (MiniLM has none) both are the same
  text, so it is encoded once and ``skipped`` says so.
* Cosine pool: the ``pool`` records with the highest *stage-one score*, max(cos(q_query, d),
  cos(q_doc, d)). This is the union of both embeddings' top lists, cut to ``pool`` records.
* Lexical channel (`RareTerms`): a query term is *rare* when it occurs in at most
  ``max_df_fraction`` of the records (at least one record); the ``max_terms`` rarest of them
  (lowest df, ties by term) are used. Records containing any of them that the cosine pool missed
  are added, best first by BM25 over the rare terms alone (ties by ascending id), at most
  ``max_added`` records. Their stage-one score is still their cosine score.

Stage two (may stop early)
--------------------------
A pluggable scorer (`SecondStage`: ``name``, ``score(query, positions) -> scores``, optional
``prepare(query, stage)`` and ``batch_size``) scores the pool in batches, in stage-one order
(best first). With a deadline (``deadline_s``, counted from the start of `build_floor`, so stage
one spends from the same budget) a batch only starts when the time left covers the slowest
per-candidate rate seen so far times the batch size; the first batch starts whenever any time
is left. When candidates are left unscored the floor is ``partial``.

Final order: scored candidates by second-stage score (descending), then the unscored ones in
stage-one order (descending stage-one score); every tie by ascending record id. The floor is the
first ``n`` of that order. ``Floor.scores`` are the second-stage scores of the scored candidates.

The scorers (`DenseScorer`, `FusionScorer`, `CrossEncoderScorer`, `make_scorer`) and the default,
`DEFAULT_SCORER`, are in `floor_scorers.py`; they are importable from here too.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError, NonFiniteScoreError
from ..structures.lexical import accumulate_scores, term_matrices
from ..results import Results
from ..structures.ranking import Ranking, check_finite
from .dense import require_vectors
from .query_vectors import embed_twice
from .floor_scorers import (
    DEFAULT_SCORER,
    SCORERS,
    CrossEncoderScorer,
    DenseScorer,
    FusionScorer,
    SecondStage,
    make_scorer,
)
from ..capabilities import Capability
from .params import Param
from .registry import register

if TYPE_CHECKING:
    from .context import SearchContext

# The floor's size, as the serendipity seed document specifies it (shared/seeds/heart-of-gold-serendipity.txt,
# "The floor"): "A cosine search returns a pool of 376 chunks [...] and the top 28 form the floor."
DEFAULT_POOL = 376  # candidates from the cosine search, before the lexical channel adds rare-term records
DEFAULT_N = 28  # passages kept after reranking: the floor


@dataclass(frozen=True)
class RareTerms:
    """The lexical channel: which query terms count as rare and how many records they may add."""

    max_df_fraction: float = 0.01
    max_terms: int = 3
    max_added: int = 32

    def __post_init__(self) -> None:
        if not (0.0 < self.max_df_fraction <= 1.0) or self.max_terms < 0 or self.max_added < 0:
            raise InputError(f"rare terms need 0 < max_df_fraction <= 1 and max_terms, max_added >= 0, got {self}")


@dataclass(frozen=True)
class StageOne:
    """What stage one computed; handed to a scorer's ``prepare`` so it need not recompute it."""

    query: str
    query_vec: np.ndarray  # the query embedded as a query
    doc_vec: np.ndarray | None  # embedded as a document; None when it is the same text (equal prefixes)
    cos_query: np.ndarray  # cosine of every record with query_vec
    stage_one: np.ndarray  # max of the two cosines, every record
    candidates: np.ndarray  # pool positions in stage-one order
    lexical: np.ndarray  # positions the rare-term channel added


@dataclass
class Floor:
    query: str
    hits: Results  # the floor: the first n of `order` as `Hit`s (method 'floor'; cut when partial); evidence:
    # scored, stage_one, source (see build_floor)
    partial: bool
    n_candidates: int
    n_scored: int
    scores: np.ndarray  # second-stage scores of the scored candidates, in scoring order
    scored_positions: np.ndarray  # their record positions, same order
    scorer: str
    elapsed_ms: float
    stage_one_ms: float
    stage_two_ms: float
    deadline_ms: float | None
    skipped: dict[str, Any]  # what was not done, and why
    rare_terms: list[str]
    n_cosine: int
    n_lexical: int
    order: np.ndarray = field(repr=False)  # every candidate position, final order
    order_scores: np.ndarray = field(repr=False)  # monotone ranking scores for `order` (see ranking())

    def ranking(self, k: int | None = None) -> Ranking:
        """The whole reranked pool (not only the floor) as a Ranking, best first.

        Scored candidates keep their second-stage score; the j-th unscored one (0-based) gets
        min(scored) - 1 - j (0 - 1 - j when nothing was scored) so scores stay decreasing.
        """
        k = len(self.order) if k is None else min(int(k), len(self.order))
        return Ranking(self.order[:k].astype(np.int64), self.order_scores[:k].astype(np.float64))

    def to_json(self) -> dict[str, Any]:
        return {"query": self.query, "partial": self.partial, "n_candidates": self.n_candidates,
                "n_scored": self.n_scored, "scorer": self.scorer, "elapsed_ms": self.elapsed_ms,
                "stage_one_ms": self.stage_one_ms, "stage_two_ms": self.stage_two_ms,
                "deadline_ms": self.deadline_ms, "skipped": self.skipped, "rare_terms": self.rare_terms,
                "n_cosine": self.n_cosine, "n_lexical": self.n_lexical,
                "scores": [float(s) for s in self.scores],
                # `Hit.to_dict`, except that an unscored hit (the deadline left it) shows no score
                "hits": [{**h.to_dict(), "score": h.score if h["scored"] else None} for h in self.hits]}


# ---- stage one ------------------------------------------------------------------------------------
def rare_query_terms(index: "SearchContext", query: str, rare: RareTerms) -> np.ndarray:
    """Term ids of the query's rare terms (see `RareTerms`), rarest first, ties by term."""
    lex = index.lexical
    terms = lex.query_terms(query)
    if rare.max_terms == 0 or len(terms) == 0:
        return np.zeros(0, dtype=np.int64)
    df = lex.df[terms]
    limit = max(rare.max_df_fraction * lex.n_docs, 1.0)
    keep = terms[(df > 0) & (df <= limit)]
    keep = sorted(keep.tolist(), key=lambda t: (lex.df[t], lex.vocab[t]))[: rare.max_terms]
    return np.asarray(keep, dtype=np.int64)


def _stage_one(index: "SearchContext", query: str, pool: int, rare: RareTerms | None) -> tuple[StageOne, list[str], dict[str, Any]]:
    store = require_vectors(index)
    q, d, note = embed_twice(store, query)
    vectors = store.vectors
    cos_q = (vectors @ q).astype(np.float64)
    s1 = cos_q if d is None else np.maximum(cos_q, (vectors @ d).astype(np.float64))
    check_finite(s1, "floor stage one")
    n = len(s1)
    idr = index.id_rank
    if pool < n:
        kth = np.partition(s1, n - pool)[n - pool]
        cand = np.flatnonzero(s1 >= kth)
    else:
        cand = np.arange(n)
    cand = cand[np.lexsort((idr[cand], -s1[cand]))][:pool]
    skipped: dict[str, Any] = {}
    if note:
        skipped["doc_embedding"] = note
    added = np.zeros(0, dtype=np.int64)
    words: list[str] = []
    if rare is None or rare.max_terms == 0 or rare.max_added == 0:
        skipped["lexical_channel"] = "disabled"
    else:
        terms = rare_query_terms(index, query, rare)
        words = [index.lexical.vocab[t] for t in terms]
        if len(terms) == 0:
            skipped["lexical_channel"] = "no rare query terms"
        else:
            bm = accumulate_scores(term_matrices(index.lexical).bm25, terms, n)
            inpool = np.zeros(n, dtype=bool)
            inpool[cand] = True
            extra = np.flatnonzero((bm > 0) & ~inpool)
            extra = extra[np.lexsort((idr[extra], -bm[extra]))]
            if len(extra) > rare.max_added:
                skipped["lexical_capped"] = int(len(extra) - rare.max_added)
            added = extra[: rare.max_added].astype(np.int64)
    allc = np.concatenate([cand, added]).astype(np.int64)
    allc = allc[np.lexsort((idr[allc], -s1[allc]))]  # scoring order: stage-one order
    return StageOne(query, q, d, cos_q, s1, allc, added), words, skipped


# ---- build ------------------------------------------------------------------------------------------
def build_floor(index: "SearchContext", query: str, pool: int = DEFAULT_POOL, n: int = DEFAULT_N,
                deadline_s: float | None = None, scorer: SecondStage | str | None = None,
                rare_terms: RareTerms | None = RareTerms(), batch_size: int | None = None) -> Floor:
    """The floor for `query`; see the module docstring. `scorer` is a `SecondStage` or a name in
    `SCORERS` (None: `DEFAULT_SCORER`); `rare_terms=None` turns the lexical channel off."""
    t0 = time.perf_counter()
    if int(pool) < 1 or int(n) < 1:
        raise InputError(f"floor needs pool >= 1 and n >= 1, got pool={pool}, n={n}")
    if deadline_s is not None and not deadline_s >= 0:
        raise InputError(f"deadline must be >= 0 seconds, got {deadline_s}")
    sc = make_scorer(index, scorer) if scorer is None or isinstance(scorer, str) else scorer
    stage, words, skipped = _stage_one(index, query, int(pool), rare_terms)
    t1 = time.perf_counter()
    deadline_at = None if deadline_s is None else t0 + float(deadline_s)

    cand = stage.candidates
    bs = int(batch_size or getattr(sc, "batch_size", 32) or 32)
    if bs < 1:
        raise InputError(f"batch_size must be >= 1, got {bs}")
    scored_parts: list[np.ndarray] = []
    score_parts: list[np.ndarray] = []
    done = 0
    if deadline_at is None or time.perf_counter() < deadline_at:
        prep = getattr(sc, "prepare", None)
        if prep is not None:
            prep(query, stage)
        rate = 0.0  # slowest seconds per candidate seen so far
        while done < len(cand):
            batch = cand[done:done + bs]
            if deadline_at is not None:
                left = deadline_at - time.perf_counter()
                if left <= 0 or (done > 0 and rate * len(batch) > left):
                    break
            tb = time.perf_counter()
            s = np.asarray(sc.score(query, batch), dtype=np.float64)
            rate = max(rate, (time.perf_counter() - tb) / len(batch))
            if s.shape != (len(batch),):
                raise InputError(f"scorer {sc.name} returned shape {s.shape} for a batch of {len(batch)}")
            if not np.all(np.isfinite(s)):
                raise NonFiniteScoreError(f"scorer {sc.name}: non-finite second-stage score; refusing to rank")
            scored_parts.append(batch)
            score_parts.append(s)
            done += len(batch)
    t2 = time.perf_counter()

    scored = np.concatenate(scored_parts) if scored_parts else np.zeros(0, dtype=np.int64)
    scores = np.concatenate(score_parts) if score_parts else np.zeros(0, dtype=np.float64)
    idr = index.id_rank
    by_score = np.lexsort((idr[scored], -scores))
    rest = cand[done:]  # already in stage-one order
    order = np.concatenate([scored[by_score], rest]).astype(np.int64)
    floor_of_scored = float(scores.min()) if len(scores) else 0.0
    order_scores = np.concatenate([scores[by_score], floor_of_scored - 1.0 - np.arange(len(rest), dtype=np.float64)])
    partial = len(rest) > 0
    if partial:
        skipped["unscored"] = int(len(rest))
        skipped["reason"] = "deadline"
    lexical = set(stage.lexical.tolist())
    top = order[: int(n)]
    # score: the ranking score (second stage; below every scored one when the deadline left it unscored)
    evidence = [{"scored": i < done, "stage_one": float(stage.stage_one[p]),  # max cosine of the two query embeddings
                 "source": "lexical" if p in lexical else "cosine"}  # lexical: added by the rare-term channel
                for i, p in enumerate(top.tolist())]
    hits = Results(index.hits(Ranking(top, order_scores[: int(n)]), evidence), query, "floor", cut=partial)
    t3 = time.perf_counter()
    return Floor(query=query, hits=hits, partial=partial, n_candidates=int(len(cand)), n_scored=int(done),
                 scores=scores, scored_positions=scored, scorer=sc.name, elapsed_ms=(t3 - t0) * 1e3,
                 stage_one_ms=(t1 - t0) * 1e3, stage_two_ms=(t2 - t1) * 1e3,
                 deadline_ms=None if deadline_s is None else float(deadline_s) * 1e3, skipped=skipped,
                 rare_terms=words, n_cosine=int(len(cand) - len(stage.lexical)), n_lexical=int(len(stage.lexical)),
                 order=order, order_scores=order_scores)


# ---- the `floor` method ------------------------------------------------------------------------------
def _cached_scorer(index: "SearchContext", params: dict[str, Any]) -> SecondStage:
    key = (params.get("scorer"), params.get("model"), params.get("cross_encoder"))
    return index.memo(f"floor-scorer {key}", None, lambda: make_scorer(index, *key))


@register("floor", "dense pool (query embedded as query and as document) + rare-term records, reranked by a "
                   "second stage (scorer=fusion|rrf|dense|cross-encoder); ranks the pool only",
          Param("pool", int, DEFAULT_POOL, "dense candidates of stage one", low=1),
          Param("n", int, DEFAULT_N, "records the floor guarantees (the first n of the reranked pool)", low=1),
          Param("scorer", str, DEFAULT_SCORER, "second-stage scorer", choices=SCORERS),
          Param("deadline_ms", float, None, "time for the whole floor; null: no deadline", low=0.0),
          Param("model", str, None, "learned-fusion model JSON for scorer=fusion (null: shipped weights)"),
          Param("cross_encoder", str, None, "cross-encoder model spec for scorer=cross-encoder"),
          Param("rare_max_df", float, RareTerms.max_df_fraction, "a rare term occurs in at most this share of "
                "records", low=1e-9, high=1.0),
          Param("rare_terms", int, RareTerms.max_terms, "rare query terms used at most", low=0),
          Param("rare_added", int, RareTerms.max_added, "records the rare terms may add to the pool", low=0),
          needs=(Capability.TERM_STATISTICS, Capability.TERM_MATRICES, Capability.DENSE, Capability.VECTORS))
def _floor(index: "SearchContext", query: str, k: int | None, params: dict[str, Any]) -> Ranking:
    """The reranked pool, cut at k (the floor proper is its first `n`; records outside the pool are
    not ranked, so recall beyond the pool is 0)."""
    return floor_from_params(index, query, params).ranking(k)


def floor_from_params(index: "SearchContext", query: str, params: dict[str, Any]) -> Floor:
    """`build_floor` with the `floor` method's parameters (e.g. ``get_method("floor", ...).params``)."""
    rare = RareTerms(float(params["rare_max_df"]), int(params["rare_terms"]), int(params["rare_added"]))
    dl = params.get("deadline_ms")
    return build_floor(index, query, int(params["pool"]), int(params["n"]),
                       None if dl is None else float(dl) / 1e3, _cached_scorer(index, params), rare)


__all__ = ["Floor", "RareTerms", "SecondStage", "StageOne", "DenseScorer", "FusionScorer",
           "CrossEncoderScorer", "build_floor", "floor_from_params", "make_scorer", "embed_twice", "rare_query_terms",
           "DEFAULT_SCORER", "DEFAULT_POOL", "DEFAULT_N"]
