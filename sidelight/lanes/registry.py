"""The lane protocol and registry: every lane of `search_channels` declared once, in one place.

A lane is one independent way of finding records for a query (BM25 alone, cosine alone, graph
edges alone, ...). It declares its `name`, a `description` written for an LLM reader (the one text
that the envelope's `descriptions`, the OpenAPI document, the MCP tool description and the page
show), the `needs` it has of an index (capabilities, short strings: see `capabilities`) and
`run(context, query, limit, budget)`, which stores the lane's trace and returns its `Results`.
`sidelight.lanes.channels.run_lanes` runs the registered lanes in registration order, the one
orchestrator behind the Python API, the CLI, HTTP and MCP.

Adding a lane: one module in `sidelight/lanes/` defining a `Lane` and calling `register(...)` at import
(every module of the package is imported before the first lane runs; a test may use `registered(...)`
for the length of a `with` block); see docs/architecture.md "How to add a lane".
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..errors import InputError
from ..results import Results
from .budget import Budget

if TYPE_CHECKING:
    from ..index import Index

#: what an index offers a lane: BM25 term statistics, record vectors, the edge graph
TERMS, VECTORS, GRAPH = "terms", "vectors", "graph"
#: why a lane that needs a capability did not run on an index without it (stable strings)
MISSING = {VECTORS: "index has no dense vectors", GRAPH: "index has no graph", TERMS: "index has no term statistics"}


def capabilities(index: "Index") -> frozenset[str]:
    """The capabilities `index` offers lanes (term statistics and the graph always; vectors when it has them)."""
    return frozenset({TERMS, GRAPH} | ({VECTORS} if getattr(index, "dense", None) is not None else set()))


@dataclass
class LaneContext:
    """What a lane run sees: the index, its own checked parameters, what earlier lanes offered
    (`shared`, e.g. the dense lane's cosines as "dense_scores") and where to offer its own (`offer`).

    What a lane offers reaches later lanes only when it finished in time (a cut lane's offers are dropped)."""

    index: "Index"
    params: Mapping[str, Any] = field(default_factory=dict)
    shared: Mapping[str, Any] = field(default_factory=dict)
    offers: dict[str, Any] = field(default_factory=dict)

    def offer(self, key: str, value: Any) -> None:
        self.offers[key] = value


@runtime_checkable
class Lane(Protocol):
    """One lane. `floor`: never cut by a budget (run in the caller's thread; the lexical lane);
    `optional`: left out of the envelope when it did not answer (else its key is null);
    `fallback`: the label an answer carries when this lane was skipped (e.g. "lexical-only")."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def needs(self) -> frozenset[str]: ...

    @property
    def floor(self) -> bool: ...

    @property
    def optional(self) -> bool: ...

    @property
    def fallback(self) -> str | None: ...

    def check(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """The lane's parameters, checked before any lane stores a trace (InputError naming a bad one)."""
        ...

    def run(self, context: LaneContext, query: str, limit: int, budget: Budget | None) -> Results:
        """The lane's hits for `query` (at most `limit`, best first) with its stored trace id and params."""
        ...


@dataclass(frozen=True)
class BaseLane:
    """Defaults for a `Lane`: takes no parameters, cut by a budget, null when it did not answer."""

    name: str
    description: str
    needs: frozenset[str] = frozenset()
    floor: bool = False
    optional: bool = False
    fallback: str | None = None

    def check(self, params: Mapping[str, Any]) -> dict[str, Any]:
        if params:
            raise InputError(f"the {self.name} lane takes no parameters, got {', '.join(sorted(params))}")
        return {}

    def run(self, context: LaneContext, query: str, limit: int, budget: Budget | None) -> Results:
        raise NotImplementedError


_LANES: dict[str, Lane] = {}
_LOADED = False


def _load() -> None:
    """Import the built-in lanes (registered first, in their order), then every other module of this
    package, so a lane module dropped into `sidelight/lanes/` registers itself: one file, one `register`."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    importlib.import_module(f"{__package__}.builtin")
    for module in sorted(m.name for m in pkgutil.iter_modules(importlib.import_module(__package__).__path__)):
        importlib.import_module(f"{__package__}.{module}")

#: envelope keys that are not lanes, described for the same reader
NOTES = {
    "agreement_node_ids": ("Ids that appear in more than one lane. Agreement is not a combined score: each lane "
                           "keeps its own rank and score, and no lane is preferred."),
    "feedback": ("Inspect the lanes yourself and decide which records are useful; being retrieved does not mean "
                 "a record was selected, validated or used. When you actually use a record, report back the "
                 "trace_id of the lane you took it from together with its node id (record_success / "
                 "`sidelight feedback INDEX TRACE NODE`). Only a relation-lane success strengthens that hit's "
                 "edge path; a lexical or dense success is recorded without changing any edge. A node can only "
                 "be credited through a trace that returned it. Searching alone never changes any weight."),
}
LABELS = ("fallback / partial: when a stage was skipped or cut (dense model still loading, a stage too slow "
          "for the time budget) the answer says so: `fallback` names the path taken (e.g. 'lexical-only': no "
          "dense lane, relation seeds from BM25 only), `partial` is true when time ran out, and `stages` lists "
          "each stage as done, skipped or cut with the reason.")


def register(lane: Lane) -> Lane:
    """Add `lane` after the lanes already registered (a name registered twice is refused)."""
    _load()  # the built-in lanes come first
    if not isinstance(lane, Lane):
        raise TypeError(f"{lane!r} is not a Lane (name, description, needs, floor, optional, fallback, check, run)")
    if lane.name in _LANES or lane.name in NOTES or lane.name in ("query", "descriptions", "labels"):
        raise ValueError(f"a lane named {lane.name!r} is already registered or names an envelope key")
    _LANES[lane.name] = lane
    return lane


def unregister(name: str) -> None:
    _LANES.pop(name, None)


@contextmanager
def registered(lane: Lane) -> Iterator[Lane]:
    """`lane` registered for the length of the block (tests, experiments)."""
    register(lane)
    try:
        yield lane
    finally:
        unregister(lane.name)


def lanes() -> list[Lane]:
    """The registered lanes, in registration order (the built-in ones first: lexical, dense, relation)."""
    _load()
    return list(_LANES.values())


def get_lane(name: str) -> Lane:
    for lane in lanes():
        if lane.name == name:
            return lane
    raise InputError(f"unknown lane {name!r}; lanes: {', '.join(lane.name for lane in lanes())}")


def descriptions(names: list[str] | None = None, labels: bool = False) -> dict[str, str]:
    """Lane descriptions (of `names`, or of every lane) then the notes; `labels`: with the budget labels' note."""
    out = {lane.name: lane.description for lane in lanes() if names is None or lane.name in names}
    out.update(NOTES)
    if labels:
        out["labels"] = LABELS
    return out
