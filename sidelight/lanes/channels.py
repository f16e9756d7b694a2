"""`search_channels`: independent lanes for one query, side by side, never fused (NGR dual-lane contract).

`run_lanes` is the one orchestrator of the lanes registered in `sidelight.lanes.registry`
(lexical, dense when the index has vectors, relation, and any lane registered after them), used
by the Python API (no budget), the CLI, HTTP and MCP alike. With a `Budget` it records every lane
as a stage (done, skipped or cut), labels a skipped stage's fallback and lists the lanes that did
not answer; `QueryLog.logged` writes the call's row. The envelope holds the query, one result per
lane, `agreement_node_ids` (ids present in at least two lanes, ascending; every lane keeps its own
copy, rank and score) and `descriptions` (the registry's, written for an LLM reader). There is no
cross-lane score, no combined list and no winner: scores compare only within a lane.

Every lane stores its own trace (`StateStore.new_trace`: query, channel, hits, credited paths,
params, time) and returns its trace id. Feedback (`record_success`) is attributed by the trace id
alone: a relation trace reinforces exactly the credited path of the named hit; a lexical or dense
trace records the success and changes no edge. Searching never changes a weight.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..feedback.state import FeedbackResult
from ..results import Results
from . import budget as B
from .querylog import QueryLog, logged
from .registry import MISSING, Lane, LaneContext, capabilities, descriptions, get_lane, lanes

if TYPE_CHECKING:
    from ..index import Index

LEFT_OUT = "left out by the caller"


@dataclass(frozen=True)
class ChannelsResult:
    """The envelope of one query's lanes (JSON via `to_dict` / `to_json`); a lane reads as an attribute
    (`r.relation`: its `Results`, None when it did not answer or the index lacks what it needs)."""

    query: str
    answers: Mapping[str, Results | None]  # in lane order; a lane left out is absent, one that failed None
    descriptions: dict[str, Any]
    coverage: tuple[int, int] | None = None  # a sharded index's (shards that answered, shards)
    budget: B.Budget | None = None
    missing: list[dict[str, Any]] = field(default_factory=list)  # lanes that did not answer, with the reason

    def __getattr__(self, name: str) -> Results | None:
        answers = self.__dict__.get("answers")
        if answers is not None and (name in answers or any(lane.name == name for lane in lanes())):
            found: Results | None = answers.get(name)
            return found
        raise AttributeError(name)

    def lanes(self) -> list[Results]:
        return [a for a in self.answers.values() if a is not None]

    @property
    def agreement_node_ids(self) -> list[str]:
        return agreement(self.lanes())

    def log_lanes(self) -> list[dict[str, Any]]:
        """What the query log keeps of the answer: each lane's channel, trace id and number of hits."""
        return [{"channel": a.channel, "trace_id": a.trace_id, "hits": len(a)} for a in self.lanes()]

    def to_dict(self) -> dict[str, Any]:
        """query, each lane (null when it did not answer), agreement_node_ids, descriptions; with a
        budget also missing_lanes and the labels (budget_ms, elapsed_ms, fallback, partial, stages,
        timings_ms); on a sharded index partial and coverage."""
        out: dict[str, Any] = {"query": self.query}
        out.update({name: None if a is None else a.to_lane_dict() for name, a in self.answers.items()})
        out["agreement_node_ids"] = self.agreement_node_ids
        out["descriptions"] = dict(self.descriptions)
        if self.budget is not None:
            out["missing_lanes"] = list(self.missing)
            out.update(self.budget.labels())
            out["timings_ms"] = self.budget.timings()
        if self.coverage is not None:
            out["partial"] = bool(out.get("partial")) or self.coverage[0] < self.coverage[1]
            out["coverage"] = "%d/%d" % self.coverage
        return out

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, allow_nan=False)


def agreement(answers: Sequence[Results | None]) -> list[str]:
    """Ids in at least two lanes, ascending (each lane keeps its own rank and score)."""
    counts: dict[str, int] = {}
    for a in answers:
        for i in set(a.ids if a is not None else ()):
            counts[i] = counts.get(i, 0) + 1
    return sorted(i for i, c in counts.items() if c >= 2)


def run_lanes(index: "Index", query: str, limit: int = 10, *, include: Mapping[str, bool | None] | None = None,
              params: Mapping[str, Mapping[str, Any]] | None = None, budget: B.Budget | None = None,
              pool: ThreadPoolExecutor | None = None, waiting: Callable[[Lane], str | None] | None = None,
              finish: Callable[[Results], Results] | None = None) -> ChannelsResult:
    """Every registered lane for `query`, in registration order, each with `limit` hits and its own trace.

    `include`: lane name -> None (run it when the index has what it needs; the default), False
    (leave it out) or True (required: InputError when the index lacks what it needs). `params`:
    lane name -> that lane's parameters, all checked before any lane stores a trace.
    `budget` (None: no time limit, nothing recorded): the lane marked `floor` runs in this thread,
    never cut; the others run on `pool` within the time left (keeping a little for the lanes after
    them); a lane that `waiting` says is not ready yet (e.g. the dense model still loading) is
    skipped with its `fallback` label. `finish`: applied to every answer (e.g. adding passages).
    """
    if not isinstance(query, str) or not query.strip():
        raise InputError("empty query")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise InputError(f"limit must be an integer >= 1, got {limit!r}")
    registered = lanes()
    names = {lane.name for lane in registered}
    include, params = dict(include or {}), dict(params or {})
    for given in (include, params):
        unknown = sorted(set(given) - names)
        if unknown:
            raise InputError(f"unknown lane {unknown[0]!r}; lanes: {', '.join(lane.name for lane in registered)}")
    checked = {lane.name: lane.check(params.get(lane.name) or {}) for lane in registered}  # before any trace
    own_pool = budget is not None and pool is None
    if own_pool:  # a budget needs a thread whose work it can abandon
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sidelight-lane")
    try:
        return _run(index, query, limit, registered, include, checked, budget, pool, waiting, finish)
    finally:
        if own_pool and pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


def _run(index: "Index", query: str, limit: int, registered: Sequence[Lane], include: Mapping[str, bool | None],
         checked: Mapping[str, dict[str, Any]], budget: B.Budget | None, pool: ThreadPoolExecutor | None,
         waiting: Callable[[Lane], str | None] | None, finish: Callable[[Results], Results] | None
         ) -> ChannelsResult:
    have = capabilities(index)
    shared: dict[str, Any] = {}
    answers: dict[str, Results | None] = {}
    missing: list[dict[str, Any]] = []
    for i, lane in enumerate(registered):
        lacking = sorted(lane.needs - have)
        if include.get(lane.name) is False or lacking:
            if lacking and include.get(lane.name):
                raise InputError(f"the {lane.name} lane needs {', '.join(lacking)}: {MISSING.get(lacking[0], '')}"
                                 .rstrip(": "))
            if budget is not None:
                budget.skip(lane.name, MISSING.get(lacking[0], f"index has no {lacking[0]}") if lacking else LEFT_OUT)
            if not lane.optional:
                answers[lane.name] = None
            continue
        reason = waiting(lane) if waiting is not None else None
        if reason:
            if budget is not None:
                budget.skip(lane.name, reason, fallback=lane.fallback)
            missing.append({"channel": lane.name, "reason": reason})
            if not lane.optional:
                answers[lane.name] = None
            continue
        context = LaneContext(index, checked[lane.name], dict(shared))

        def go(lane: Lane = lane, context: LaneContext = context) -> Results:
            return lane.run(context, query, limit, budget)

        if budget is None:
            answer: Results | None = go()
        elif lane.floor:
            answer = budget.timed(lane.name, go)
        else:
            later = i < len(registered) - 1
            assert pool is not None  # a budgeted call always has one (`run_lanes`)
            try:
                answer = budget.run(pool, lane.name, go, reserve_s=min(0.05, budget.remaining_s() / 4) if later else 0.0,
                                    fallback=lane.fallback)
            except B.StageCut:
                answer = None
                missing.append({"channel": lane.name, "reason": budget.stages[-1]["reason"]})
        if answer is None:
            if not lane.optional:
                answers[lane.name] = None
            continue
        shared.update(context.offers)  # only a lane that answered in time offers anything to later lanes
        answers[lane.name] = finish(answer) if finish is not None else answer
    return ChannelsResult(query, answers, descriptions(list(answers), labels=budget is not None),
                          budget=budget, missing=missing)


def run_lane(index: "Index", name: str, query: str, limit: int = 10, **params: Any) -> Results:
    """One registered lane alone, without a budget (what earlier lanes would offer it, it does without:
    the relation lane run alone seeds from BM25 only)."""
    lane = get_lane(name)
    return lane.run(LaneContext(index, lane.check(params)), query, limit, None)


def search_channels(index: "Index", query: str, limit: int = 10, dense: bool | None = None, *,
                    budget: B.Budget | None = None, log: QueryLog | None = None, interface: str = "python",
                    include: Mapping[str, bool | None] | None = None, **relation: Any) -> ChannelsResult:
    """Every lane for `query`, each with `limit` hits and its own trace; nothing is fused.

    `dense`: None (default) adds the dense lane, and dense relation seeds, when the index has
    vectors; False leaves dense out entirely; True requires vectors. `relation`: the relation
    lane's parameters (`rank="activation"`, `hops=1`, ...; see `sidelight.methods.relation`).
    `include`: other lanes by name -> None / False / True (as `dense`). `budget`: a time budget (the
    Python API has none by default); `log`: a `QueryLog` that gets this call's row as `interface`.
    """
    chosen = {**(include or {}), **({} if dense is None else {"dense": bool(dense)})}

    def call() -> ChannelsResult:
        return run_lanes(index, query, limit, include=chosen, params={"relation": relation} if relation else None,
                         budget=budget)

    if log is None:
        return call()
    box: list[ChannelsResult] = []

    def logged_call() -> dict[str, Any]:
        box.append(call())
        out = box[0].to_dict()
        out["_log_lanes"] = box[0].log_lanes()
        return out

    logged(log, interface, "channels", query, logged_call)
    return box[0]


def record_success(index: "Index", trace_id: str, node_id: str) -> FeedbackResult:
    """Record that `node_id`, returned by trace `trace_id`, was actually used (see `StateStore.record_success`).

    Relation trace: exactly that hit's credited path is strengthened. Lexical/dense trace: recorded,
    no edge changes. Unknown trace, or a node that trace did not return: InputError. Idempotent.
    """
    return index.state.record_success(trace_id, node_id)
