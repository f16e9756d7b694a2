"""Carrier R01's graph-assisted methods and controls as named methods of the registry.

* `bm25+ppr`: Carrier's rule (`ppr_boost`) over BM25 with the walk on the undirected projection,
  defaults alpha=0.5, lam=0.1 (Carrier's development-selected setting), n_seeds=20, iterations=20;
* `dense+ppr`: the same rule over the dense cosines (seeds: the top positive cosines); like the
  `dense` method it ranks every record, negative scores included;
* controls, same rule and defaults, different adjacency: `bm25+ppr:empty` (no edges: reproduces
  the BM25 ranks exactly), `bm25+ppr:stored` (walk follows stored direction), `bm25+ppr:rewire`
  (degree-preserving rewire of the undirected projection, param `seed`), and `degree`
  (query-independent ranking by undirected degree).

Every ranking is positive-only (except `dense+ppr`) with exact ties by ascending record id: the
index's `id_rank` is both the seed tie rank and the ranking tie rank. Adjacencies are built once
per index and graph (the cache is dropped when add/delete rebuilds the graph); rewired graphs are
kept per seed, with their `RewireReport`s available from `rewire_reports(index)`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from ..errors import InputError
from ..graph.controls import (
    RewireReport,
    degree_scores,
    empty_graph,
    rewire,
    stored_direction,
)
from ..graph.ppr import PPRGraph, ppr_boost
from ..graph.store import Graph
from ..structures.ranking import Ranking, top_k
from ..capabilities import Capability
from .params import Param
from .registry import register

if TYPE_CHECKING:
    import scipy.sparse as sp

    from .context import SearchContext

#: Carrier's selected setting and the fixed walk parameters.
PPR_PARAMS = (
    Param("alpha", float, 0.5, "PPR restart probability (Carrier's grid: 0.5, 0.8)", low=0.0, high=1.0),
    Param("lam", float, 0.1, "weight of the PPR part: (1-lam)*text + lam*walk", low=0.0, high=1.0),
    Param("n_seeds", int, 20, "top text-ranked records the walk restarts from", low=1),
    Param("iterations", int, 20, "power iterations of the walk", low=0),
)
PPR_DEFAULTS = {p.name: p.default for p in PPR_PARAMS}
#: Carrier's development grid, in the order it was written.
PPR_GRID = [(alpha, lam) for alpha in (0.5, 0.8) for lam in (0.1, 0.25, 0.5)]
#: Rewire attempts per edge (Carrier: ten times the edge count).
REWIRE_ATTEMPTS_FACTOR = 10


def select_ppr_setting(dev_scores: Mapping[tuple[float, float], float]) -> tuple[float, float]:
    """The (alpha, lam) with the best development score; exact ties prefer lower lam, then higher alpha.

    `dev_scores` maps grid settings to one finite number each (e.g. development MRR@10).
    """
    if not dev_scores:
        raise InputError("select_ppr_setting: no development scores")
    items = []
    for key, value in dev_scores.items():
        try:
            alpha, lam = (float(x) for x in key)
            v = float(value)
        except (TypeError, ValueError):
            raise InputError(f"select_ppr_setting: expected (alpha, lam) -> score, got {key!r} -> {value!r}") from None
        if not math.isfinite(v):
            raise InputError(f"select_ppr_setting: score for {key!r} is not finite ({v})")
        items.append((-v, lam, -alpha, (alpha, lam)))
    return min(items)[3]


# ---- control graphs, kept in the index's memo (dropped on add/delete) -------------------------------------------------------------------------
def _empty(index: "SearchContext") -> PPRGraph:
    return index.memo("ppr-empty", None, lambda: PPRGraph(empty_graph(index.graph.n_nodes)))


def _stored(index: "SearchContext") -> PPRGraph:
    return index.memo("ppr-stored", None, lambda: PPRGraph(stored_direction(index.graph)))


def _degree(index: "SearchContext") -> np.ndarray:
    return index.memo("degree", None, lambda: degree_scores(index.graph.undirected()))


def _rewires(index: "SearchContext") -> dict[int, tuple[PPRGraph, RewireReport, sp.csr_matrix]]:
    """seed -> (PPRGraph, report, adjacency), cached per index contents."""
    cache: dict[int, tuple[PPRGraph, RewireReport, sp.csr_matrix]] = index.memo("rewires", None, dict)
    return cache


def rewired(index: "SearchContext", seed: int) -> tuple[PPRGraph, RewireReport]:
    """The degree-preserving rewire of the index's undirected projection for `seed` (cached)."""
    c = _rewires(index)
    seed = int(seed)
    if seed not in c:
        adjacency, report = rewire(index.graph.undirected(), seed, REWIRE_ATTEMPTS_FACTOR)
        c[seed] = (PPRGraph(adjacency), report, adjacency)
    return c[seed][0], c[seed][1]


def rewired_adjacency(index: "SearchContext", seed: int) -> sp.csr_matrix:
    """The rewired symmetric adjacency itself (for checks such as degree preservation)."""
    rewired(index, seed)
    return _rewires(index)[int(seed)][2]


def rewire_reports(index: "SearchContext") -> dict[int, RewireReport]:
    """Seed -> report of every rewire built so far for this index's current graph."""
    return {s: v[1] for s, v in sorted(_rewires(index).items())}


def rewire_report(graph: Graph, seed: int) -> RewireReport:
    """The report of the rewire `bm25+ppr:rewire` builds for `seed` over `graph` (same budget, same rng)."""
    return rewire(graph.undirected(), int(seed), REWIRE_ATTEMPTS_FACTOR)[1]


# ---- methods ----------------------------------------------------------------------------------
def _boost(index: "SearchContext", text: np.ndarray, walk: PPRGraph, params: dict[str, Any]) -> np.ndarray:
    return ppr_boost(text, walk, float(params["alpha"]), float(params["lam"]), int(params["n_seeds"]),
                     int(params["iterations"]), tie_rank=index.id_rank)


@register("bm25+ppr", "Carrier R01: (1-lam)*maxnorm(BM25) + lam*maxnorm(PPR from the top BM25 seeds), undirected walk",
          *PPR_PARAMS, needs=(Capability.TERM_STATISTICS, Capability.GRAPH))
def _bm25_ppr(index: "SearchContext", query: str, k: int | None, params: dict[str, Any]) -> Ranking:
    return top_k(_boost(index, index.lexical.bm25_scores(query), index.ppr_graph, params), k, index.id_rank)


@register("dense+ppr", "Carrier's PPR boost over dense cosines (seeds: top positive cosines), undirected walk",
          *PPR_PARAMS, needs=(Capability.DENSE, Capability.GRAPH))
def _dense_ppr(index: "SearchContext", query: str, k: int | None, params: dict[str, Any]) -> Ranking:
    from .dense import require_dense

    text = require_dense(index).scores(query)
    return top_k(_boost(index, text, index.ppr_graph, params), k, index.id_rank, positive_only=False)


@register("bm25+ppr:empty", "control: bm25+ppr over an empty edge set (must reproduce BM25 ranks)", *PPR_PARAMS,
          needs=(Capability.TERM_STATISTICS,))
def _bm25_ppr_empty(index: "SearchContext", query: str, k: int | None, params: dict[str, Any]) -> Ranking:
    return top_k(_boost(index, index.lexical.bm25_scores(query), _empty(index), params), k, index.id_rank)


@register("bm25+ppr:stored", "control: bm25+ppr walking the stored edge direction", *PPR_PARAMS,
          needs=(Capability.TERM_STATISTICS, Capability.GRAPH))
def _bm25_ppr_stored(index: "SearchContext", query: str, k: int | None, params: dict[str, Any]) -> Ranking:
    return top_k(_boost(index, index.lexical.bm25_scores(query), _stored(index), params), k, index.id_rank)


@register("bm25+ppr:rewire", "control: bm25+ppr over a degree-preserving rewire of the undirected graph (param seed)",
          Param("seed", int, 1, "seed of the degree-preserving rewire", low=0, high=2**31 - 1), *PPR_PARAMS,
          needs=(Capability.TERM_STATISTICS, Capability.GRAPH))
def _bm25_ppr_rewire(index: "SearchContext", query: str, k: int | None, params: dict[str, Any]) -> Ranking:
    walk, _ = rewired(index, params["seed"])
    return top_k(_boost(index, index.lexical.bm25_scores(query), walk, params), k, index.id_rank)


@register("degree", "control: query-independent ranking by undirected degree (isolated records unranked)",
          needs=(Capability.TERM_STATISTICS, Capability.GRAPH))
def _degree_only(index: "SearchContext", query: str, k: int | None, params: dict[str, Any]) -> Ranking:
    index.lexical.query_terms(query)  # an empty query is refused here as everywhere else
    return top_k(_degree(index), k, index.id_rank)
