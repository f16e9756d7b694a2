"""What a backend can do, declared: capabilities, and the one check that refuses a method a backend
cannot run.

A method declares what it needs (`register(..., needs=...)`, and parameters whose set values need
more, `Param(..., needs=...)`); an index in one piece, a sharded index and one served on Ray
advertise what they offer (`capabilities()`, and `why_missing(capability)` for what they lack).
`require` compares the two before any work is done and refuses with one line that names the
method, what is missing and why. Every ranking goes through `Method.rank`, which calls it, so the
CLI (exit 2), HTTP (400), MCP (a tool error) and the lab refuse alike.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Protocol

from .errors import InputError


class Capability(StrEnum):
    """One thing a backend may offer. The values are the words `sidelight methods` prints."""

    TERM_STATISTICS = "term statistics"  # BM25 / TF-IDF scores from the collection's term statistics
    TERM_MATRICES = "term matrices"  # the term-count and weight matrices here (RM3, the floor's stage one)
    DENSE = "dense"  # cosines of a query vector with every record
    VECTORS = "vectors"  # the record vectors here (feedback, rescoring, the floor)
    ANN = "ann"  # an approximate-nearest-neighbour graph over the vectors
    GRAPH = "graph"  # the link graph between records
    PASSAGES = "passages"  # section windows of the records


class Backend(Protocol):
    """What `require` asks of an index: what it offers, and why it lacks the rest."""

    def capabilities(self) -> frozenset[Capability]: ...

    def why_missing(self, capability: Capability) -> str: ...


class UnsupportedError(InputError):
    """A method asked of a backend that lacks something it needs (exit 2, HTTP 400, MCP tool error)."""


def require(name: str, needs: Iterable[Capability], backend: Backend, kind: str = "method") -> None:
    """Refuse `name` (a method, or with `kind` a command such as export-web) unless `backend` offers
    every capability in `needs` (one line: what was asked, the first missing capability and the
    backend's reason)."""
    offered = backend.capabilities()
    for need in needs:
        if need not in offered:
            raise UnsupportedError(f"{kind} {name!r} needs {need.value}: {backend.why_missing(need)}")


#: what exists only beside dense vectors: a method needing any of these is skipped by a lab protocol
#: that builds none (and refused by an index without them)
VECTOR_NEEDS = frozenset({Capability.DENSE, Capability.VECTORS, Capability.ANN, Capability.PASSAGES})
