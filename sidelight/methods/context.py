"""The narrow view of an index that a method ranks with (`SearchContext`).

A method is a function of a context, a query, a depth and its parameters; it may use only what
this protocol declares. An index in one piece and a sharded index both satisfy it (mypy checks
that where `Index.rank` hands itself over), and `sidelight.methods` is type-checked strictly, so a
method reaching for anything else of `Index` (its search dispatch, its writers, its manifest)
fails `make test` instead of tying the method to one backend.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    import numpy as np

    from ..corpus.model import Corpus
    from ..feedback.state import StateStore
    from ..graph.ppr import PPRGraph
    from ..graph.store import Graph
    from ..results import Hit
    from ..structures.dense_query import DenseScorer
    from ..structures.lexical import TermScorer
    from ..structures.ranking import Ranking
    from ..capabilities import Capability

T = TypeVar("T")


class SearchContext(Protocol):
    """What a method may use: the scorers, the graph, the records, the id order and the memo."""

    @property
    def lexical(self) -> TermScorer:
        """The lexical scorer (term statistics; on a sharded index, scores summed by the shards; the
        term matrices, `lexical.store`, only where `Capability.TERM_MATRICES` is offered)."""

    @property
    def dense(self) -> DenseScorer | None:
        """The dense scorer, or None for an index without vectors (the vectors themselves, a
        `DenseStore`, only where `Capability.VECTORS` is offered)."""

    @property
    def graph(self) -> Graph:
        """The link graph over record positions."""

    @property
    def ppr_graph(self) -> PPRGraph:
        """The PPR walk over the graph's undirected projection."""

    @property
    def corpus(self) -> Corpus:
        """The records (and their edges) in position order."""

    @property
    def ids(self) -> np.ndarray:
        """Record id per position."""

    @property
    def id_rank(self) -> np.ndarray:
        """Where each position falls in ascending-id order: the tie-break of every ranking."""

    @property
    def state(self) -> StateStore:
        """Learned relation-weight feedback (the relation method's overlay)."""

    def memo(self, name: str, key: Hashable, build: Callable[[], T]) -> T:
        """Derived data kept with the index's contents (rebuilt when `key` changes)."""

    def hits(self, ranking: Ranking, evidence: Sequence[Mapping[str, Any]] | None = None) -> list[Hit]:
        """A ranking as hits with ids, ranks and titles."""

    def capabilities(self) -> frozenset[Capability]:
        """What this backend offers (see `capabilities.require`)."""

    def why_missing(self, capability: Capability) -> str:
        """Why this backend lacks `capability`, and what to do instead."""
