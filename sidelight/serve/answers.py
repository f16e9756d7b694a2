"""The JSON answers of the HTTP API as typed models: the response half of the OpenAPI document.

They describe what `Service` returns (they build nothing): keys an answer always has are required,
the rest optional, and an answer may carry more keys than listed. The channels answer is built from
the lane registry, so a lane registered later is documented with its own description.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, create_model

from ..lanes.registry import lanes


class Answer(BaseModel):
    """An answer: the listed keys, possibly more."""

    model_config = ConfigDict(extra="allow")


class ErrorBody(Answer):
    status: int
    code: str = Field(description="stable: a client can switch on it")
    message: str = Field(description="one line: what to fix")


class Error(Answer):
    error: ErrorBody


class Stage(Answer):
    stage: str
    status: Literal["done", "skipped", "cut"]
    ms: Optional[float] = None
    reason: Optional[str] = None


class Labels(Answer):
    """What every budgeted answer carries."""

    budget_ms: float
    elapsed_ms: float
    fallback: Optional[str] = Field(description="path taken when a stage was replaced, e.g. 'lexical-only'")
    partial: bool = Field(description="true when the time budget (or a missing shard) cut or skipped a stage")
    stages: list[Stage]
    timings_ms: dict[str, float] = {}


class Location(Answer):
    path: str
    lines: Optional[list[int]] = None
    pages: Optional[list[int]] = None
    anchor: Optional[str] = None


class Passage(Answer):
    section: Optional[str]
    snippet: str
    marks: list[list[int]]
    location: Optional[Location] = None


class Hit(Answer):
    """One ranked record (`sidelight.results.Hit.to_dict`)."""

    id: str
    rank: int
    score: float
    title: Optional[str]
    seed: Optional[str] = None
    is_seed: Optional[bool] = None
    path: Optional[list[dict[str, Any]]] = Field(None, description="the edges that reached a relation hit")
    parts: Optional[dict[str, float]] = Field(None, description="the parts of a relation hit's score")
    passage: Optional[Passage] = None


class SearchResult(Labels):
    query: str
    method: str
    method_used: str
    k: int
    hits: list[Hit]
    coverage: Optional[str] = None


class Lane(Answer):
    trace_id: Optional[str]
    channel: str
    hits: list[Hit]
    params: dict[str, Any]


class MissingLane(Answer):
    channel: str
    reason: str


@lru_cache(maxsize=8)
def _channels(names: tuple[str, ...]) -> type[BaseModel]:
    fields: dict[str, Any] = {"query": (str, ...)}
    for lane in lanes():
        if lane.optional:  # absent when it did not answer
            fields[lane.name] = (Optional[Lane], Field(None, description=lane.description))
        else:  # null when it did not answer
            fields[lane.name] = (Optional[Lane], Field(description=lane.description))
    fields.update({"agreement_node_ids": (list[str], Field(description="ids found in more than one lane")),
                   "missing_lanes": (list[MissingLane], ...), "descriptions": (dict[str, str], ...)})
    return create_model("ChannelsResult", __base__=Labels, **fields)


def channels_result() -> type[BaseModel]:
    """The channels answer of the registered lanes."""
    return _channels(tuple(lane.name for lane in lanes()))


class Word(Answer):
    word: str
    rank: int
    score: float
    synsets: list[dict[str, Any]]


class LookupResult(Answer):
    query: str
    method: str
    results: list[Word]


class EdgeChange(Answer):
    source: str
    target: str
    type: str
    old_weight: float
    new_weight: float


class FeedbackResult(Answer):
    trace_id: str
    node_id: str
    channel: str
    rank: int
    already_recorded: bool
    changed_edges: list[EdgeChange]
    note: str


class EdgeWeight(Answer):
    source: str
    target: str
    type: str
    exists: bool
    base_weight: Optional[float] = None
    delta: Optional[float] = None
    weight: Optional[float] = None


class EdgeWeights(Answer):
    edges: list[EdgeWeight]


class Trace(Answer):
    trace_id: str
    query: str
    channel: str
    created_at: str = Field(description="ISO 8601 time (UTC)")
    params: dict[str, Any]
    hits: list[dict[str, Any]]
    successes: list[str]


class ParamSpec(Answer):
    name: str
    type: str
    default: Any
    allowed: str
    doc: str


class MethodSpec(Answer):
    name: str
    description: str
    needs: list[str]
    params: list[ParamSpec]


class Methods(Answer):
    methods: dict[str, str] = Field(description="name -> one-line description")
    parameters: dict[str, MethodSpec] = Field(description="name -> the method's declaration")


class PageToken(Answer):
    header: str
    token: str


class Health(Answer):
    status: Literal["ok", "degraded", "starting"]
    ready: bool
    index: dict[str, Any]
    dense: dict[str, Any]
    certificate: dict[str, Any]


class Log(Answer):
    entries: list[dict[str, Any]]
    total: int


class Document(Answer):
    """A record read (`/api/read`) or its links (`/api/links`)."""

    id: str


class Labelled(Answer):
    """The floor, the serendipity lane and its reveal and verdicts: their own keys, labelled when budgeted."""


class Stats(Answer):
    """Corpus graph statistics and degree histogram."""


class Report(Answer):
    """The latest lab report under --lab DIR, or why there is none."""
