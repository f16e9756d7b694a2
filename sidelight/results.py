"""The one result type of ranked output: `Hit`s in `Results` (one query) and a `Run` (many queries).

Every method, lane and lookup answers with the same `Hit` (id, rank, score, title, plus the
typed optional fields some answers have: a relation hit's seed, edge path and score parts, a passage).
A lane's `Results` also carries the trace id it stored and its params (`to_lane_dict`).
`Results.to_dicts()` is what the JSON interfaces print; `Run.to_trec()` writes TREC run lines and
`Run.to_ranx()` hands the run to ranx (`ranx.Run`), so a run made in Python evaluates anywhere.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

TREC_RUN_NAME = "sidelight"
_FIELDS = ("id", "rank", "score", "title", "passage")  # a Hit's own keys
_TYPED = ("seed", "is_seed", "path", "parts")  # a Hit's optional typed keys (a relation hit's); the rest: evidence


def trec_line(query_id: str, doc_id: str, rank: int, score: float, run_name: str = TREC_RUN_NAME) -> str:
    """`qid Q0 docid rank score run`; tab-separated when an id holds white space (FOLDOC's do), so
    strict tab-separated readers keep such ids whole."""
    fields = [str(query_id), "Q0", str(doc_id), str(rank), f"{score:.6f}", run_name]
    return ("\t" if any(c.isspace() for f in fields for c in f) else " ").join(fields)


@dataclass(frozen=True)
class Passage:
    """Where in a hit's document the answer is: its best section, the file location and a snippet.

    `section` is the heading path (`Settings > Appearance > Font size`, '' for the text before the
    first heading); `lines` (or a PDF's `pages`) are 1-based and inclusive in the file at `path`;
    `marks` are (start, end) character spans of query terms in `snippet`."""

    section: str
    snippet: str
    marks: tuple[tuple[int, int], ...] = ()
    path: str | None = None
    lines: tuple[int, int] | None = None
    pages: tuple[int, int] | None = None
    anchor: str = ""
    index: int = 0  # the section's position in its document

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"section": self.section, "snippet": self.snippet, "marks": [list(m) for m in self.marks]}
        if self.path is not None:
            where: dict[str, Any] = {"path": self.path}
            if self.lines is not None:
                where["lines"] = list(self.lines)
            if self.pages is not None:
                where["pages"] = list(self.pages)
            if self.anchor:
                where["anchor"] = self.anchor
            out["location"] = where
        return out


@dataclass(frozen=True)
class Hit:
    """One ranked record (or word, for a lookup). Every answer's hits have this one shape.

    Typed optional fields carry what only some answers have: a relation hit's `seed` (where its
    credited path starts), `is_seed`, `path` (the edges that reached it, each step a mapping of
    edge_id, source, target, type, weight and the edge's context sentence when kept) and `parts`
    (the score's parts); `passage`, where asked for, the record's best section with a snippet and
    its location. `evidence` holds anything else an answer adds (a lookup word's `synsets`)."""

    id: str
    rank: int
    score: float
    title: str
    evidence: Mapping[str, Any] = field(default_factory=dict, hash=False)
    passage: Passage | None = None
    seed: str | None = None
    is_seed: bool | None = None
    path: tuple[Mapping[str, Any], ...] | None = field(default=None, hash=False)
    parts: Mapping[str, float] | None = field(default=None, hash=False)

    def to_dict(self) -> dict[str, Any]:
        """The one JSON shape of a hit (CLI, HTTP and MCP): id, rank, score, title, then the typed
        fields it has (seed, is_seed, path, parts), its evidence keys, then the `passage`."""
        out: dict[str, Any] = {"id": self.id, "rank": self.rank, "score": self.score, "title": self.title}
        for key in _TYPED:
            value = getattr(self, key)
            if value is not None:
                out[key] = [dict(step) for step in value] if key == "path" else (
                    dict(value) if key == "parts" else value)
        out.update(self.evidence)
        if self.passage is not None:
            out["passage"] = self.passage.to_dict()
        return out

    def __getitem__(self, key: str) -> Any:
        """A hit reads like its JSON: `hit["id"]`, `hit["path"]` (KeyError for a key it does not have)."""
        if key in _FIELDS or (key in _TYPED and getattr(self, key) is not None):
            return getattr(self, key)
        return self.evidence[key]

    def __contains__(self, key: object) -> bool:
        if key in _TYPED:
            return getattr(self, key) is not None
        return (key in _FIELDS and (key != "passage" or self.passage is not None)) or key in self.evidence


class Results(Sequence[Hit]):
    """The ranked hits of one query, best first (a sequence of `Hit`; equal when the hits are)."""

    def __init__(self, hits: Sequence[Hit], query: str = "", method: str = "",
                 coverage: tuple[int, int] | None = None, trace_id: str | None = None,
                 params: Mapping[str, Any] | None = None, cut: bool = False) -> None:
        """`method`: the method or lane that answered; a lane's answer also has the `trace_id` it
        stored (feedback credits a hit through it) and the `params` it ran with. `cut`: a deadline
        left part of the work undone (the floor's unscored candidates), so the answer is partial."""
        self.hits = tuple(hits)
        self.query = query
        self.method = method
        self.coverage = coverage  # a sharded index's (shards that answered, shards); None: not sharded
        self.trace_id = trace_id
        self.params = dict(params or {})
        self.cut = cut

    @property
    def channel(self) -> str:
        """The lane that answered (a lane's `Results` is named by its lane)."""
        return self.method

    def with_hits(self, hits: Sequence[Hit]) -> "Results":
        """The same answer with other hits (e.g. the same hits with their passages)."""
        return Results(hits, self.query, self.method, self.coverage, self.trace_id, self.params, self.cut)

    @property
    def partial(self) -> bool:
        """True when some shard failed or missed the time budget (the hits cover only part of the index), or
        a deadline cut the work short (`cut`)."""
        return self.cut or (self.coverage is not None and self.coverage[0] < self.coverage[1])

    def __len__(self) -> int:
        return len(self.hits)

    @overload
    def __getitem__(self, i: int) -> Hit: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[Hit]: ...

    def __getitem__(self, i: int | slice) -> Hit | Sequence[Hit]:
        return self.hits[i]

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Results):
            return self.hits == other.hits
        if isinstance(other, (list, tuple)):
            return list(self.hits) == list(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"Results({self.method!r}, {self.query!r}, {len(self.hits)} hits)"

    @property
    def ids(self) -> list[str]:
        return [h.id for h in self.hits]

    def to_dicts(self) -> list[dict[str, Any]]:
        return [h.to_dict() for h in self.hits]

    def to_dict(self) -> dict[str, Any]:
        """A method's answer as every interface prints it: query, method, hits (`Hit.to_dict`), and on a
        sharded index whether it is partial and its coverage."""
        out: dict[str, Any] = {"query": self.query, "method": self.method, "hits": self.to_dicts()}
        if self.coverage is not None:
            out["partial"], out["coverage"] = self.partial, "%d/%d" % self.coverage
        return out

    def to_lane_dict(self) -> dict[str, Any]:
        """A lane's answer as every interface prints it: trace_id, channel, hits, params."""
        return {"trace_id": self.trace_id, "channel": self.method, "hits": self.to_dicts(), "params": self.params}

    def to_trec(self, query_id: str, run_name: str = TREC_RUN_NAME) -> list[str]:
        """TREC run lines `qid Q0 docid rank score run` (the format trec_eval and ranx read)."""
        return [trec_line(query_id, h.id, h.rank, h.score, run_name) for h in self.hits]


class Run(Mapping[str, Results]):
    """Results of many queries by query id (`Index.search_many`), in the query order given."""

    def __init__(self, results: Mapping[str, Results], method: str = "", name: str = TREC_RUN_NAME) -> None:
        self._results = dict(results)
        self.method = method
        self.name = name

    def __getitem__(self, query_id: str) -> Results:
        return self._results[query_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._results)

    def __len__(self) -> int:
        return len(self._results)

    def to_dict(self) -> dict[str, dict[str, float]]:
        """query id -> {record id: score} (the dict form ranx and pytrec_eval take)."""
        return {q: {h.id: h.score for h in r} for q, r in self._results.items()}

    def to_trec(self) -> str:
        """The whole run as TREC run text, one line per hit."""
        return "".join(line + "\n" for q, r in self._results.items() for line in r.to_trec(q, self.name))

    def to_ranx(self) -> Any:
        """A `ranx.Run` (needs the optional `ranx` package)."""
        try:
            from ranx import Run as RanxRun
        except ImportError as exc:  # an optional dependency: say how to get it
            from .errors import MissingDataError

            raise MissingDataError("Run.to_ranx needs the ranx package: pip install ranx") from exc
        return RanxRun(self.to_dict(), name=self.name)
