"""Graph store, Carrier's PPR boost and its controls, the NGR relation lane, traces and feedback."""

from .controls import RewireReport, degree_scores, empty_graph, rewire, stored_direction
from .ppr import PPRGraph, maxnorm, ppr_boost, ppr_vector, seed_distribution, select_seeds
from .relation import RelationHit, edge_shares, spread, trace_hits
from .state import CAP_FACTOR, ETA, EdgeChange, FeedbackResult, StateStore, Trace
from .store import EdgeRef, Graph, OutEdges

__all__ = [
    "CAP_FACTOR", "ETA", "EdgeChange", "EdgeRef", "FeedbackResult", "Graph", "OutEdges", "PPRGraph",
    "RelationHit", "RewireReport", "StateStore", "Trace", "degree_scores", "edge_shares", "empty_graph",
    "maxnorm", "ppr_boost", "ppr_vector", "rewire", "seed_distribution", "select_seeds", "spread",
    "stored_direction", "trace_hits",
]
