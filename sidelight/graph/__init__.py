"""Graph structures: the edge store, Carrier's PPR walk and its controls, NGR spreading activation."""

from .controls import RewireReport, degree_scores, empty_graph, rewire, stored_direction
from .ppr import (
    PPRGraph,
    maxnorm,
    ppr_boost,
    ppr_vector,
    seed_distribution,
    select_seeds,
)
from .relation import Activation, RelationHit, activate, edge_shares, spread, trace_hits
from .store import EdgeRef, Graph, OutEdges

__all__ = [
    "Activation", "EdgeRef", "Graph", "OutEdges", "PPRGraph",
    "RelationHit", "RewireReport", "activate", "degree_scores", "edge_shares", "empty_graph",
    "maxnorm", "ppr_boost", "ppr_vector", "rewire", "seed_distribution", "select_seeds", "spread",
    "stored_direction", "trace_hits",
]
