"""Traces, feedback and the learned edge-weight overlay, in one SQLite file (INDEX/state.sqlite).

Attribution follows NGR trace provenance, never a channel the caller claims afterwards:

* every lane call stores its own trace (uuid4 hex id) with the query, channel, params and hits;
  lexical/dense hits carry no graph path, relation hits carry their credited edge path (stored edges
  ending at the hit, or starting at it for a hit reached backwards: a note that links to the seed);
* `record_success(trace_id, node_id)` looks the node up in THAT trace's hits (a node from the other
  lane's trace is refused) and, only for a relation trace, reinforces exactly the edges of that
  hit's credited path;
* searching (storing a trace) never touches the overlay; a repeated (trace, node) success is
  recorded once and reinforces once.

Reinforcement rule (bounded, documented): for each distinct edge (source id, target id, type) of
the credited path, with base weight b (from the trace) and current delta d,

    w = b + d,  w_max = CAP_FACTOR * b,  d <- d + ETA * (w_max - w)       (ETA = 0.1, CAP_FACTOR = 2)

so the effective weight approaches 2x its base geometrically and never exceeds it; an edge with
base 0 never changes. The overlay is keyed by record ids and type (not positions), so it
survives index rebuilds; `overlay_for` clips effective weights to [0, CAP_FACTOR * base].

Concurrency (`sidelight.store.sqlite`): WAL journal, `busy_timeout`, and every write in a `BEGIN
IMMEDIATE` transaction, so several processes can write at once without losing anything. One
connection per process and thread (opened lazily; a forked child opens its own).
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Iterable, Mapping, Sequence

import numpy as np

from ..errors import InputError, NonFiniteScoreError
from ..graph.store import Graph
from ..store.sqlite import LocalConnection, transaction

ETA = 0.1
CAP_FACTOR = 2.0
REINFORCING_CHANNELS = frozenset({"relation"})

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS traces (
    trace_id   TEXT PRIMARY KEY,
    query      TEXT NOT NULL,
    channel    TEXT NOT NULL,
    created_at TEXT NOT NULL,
    params     TEXT NOT NULL,
    hits       TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS successes (
    trace_id   TEXT NOT NULL REFERENCES traces(trace_id),
    node_id    TEXT NOT NULL,
    created_at TEXT NOT NULL,
    changes    TEXT NOT NULL,
    UNIQUE (trace_id, node_id)
);
CREATE TABLE IF NOT EXISTS edge_overlay (
    source_id  TEXT NOT NULL,
    target_id  TEXT NOT NULL,
    type       TEXT NOT NULL,
    delta      REAL NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (source_id, target_id, type)
);
INSERT OR IGNORE INTO meta VALUES ('schema', 'sidelight-state/1')
"""


@dataclass(frozen=True)
class Trace:
    trace_id: str
    query: str
    channel: str
    created_at: str
    params: dict
    hits: list[dict]

    def hit(self, node_id: str) -> dict | None:
        for h in self.hits:
            if h["node_id"] == node_id:
                return h
        return None


@dataclass(frozen=True)
class EdgeChange:
    source_id: str
    target_id: str
    type: str
    base_weight: float
    delta_before: float
    delta_after: float

    @property
    def weight_after(self) -> float:
        return self.base_weight + self.delta_after

    def to_dict(self) -> dict:
        """The change as every interface reports it."""
        return {"source": self.source_id, "target": self.target_id, "type": self.type, "base_weight": self.base_weight,
                "old_weight": self.base_weight + self.delta_before, "new_weight": self.weight_after}


def effective_weight(base, delta):
    """base + learned delta, clipped to [0, CAP_FACTOR * base] (numbers or numpy arrays)."""
    return np.clip(base + delta, 0.0, CAP_FACTOR * base)


@dataclass(frozen=True)
class FeedbackResult:
    """What a success did. `already_recorded`: a repeat, nothing changed this time."""

    trace_id: str
    node_id: str
    channel: str
    rank: int
    already_recorded: bool
    changed_edges: list[EdgeChange] = field(default_factory=list)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def _finite(x, what: str) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise InputError(f"state: {what} must be a number, got {x!r}") from None
    if not math.isfinite(v):
        raise NonFiniteScoreError(f"state: {what} is not finite ({v})")
    return v


def _normalise_hits(channel: str, hits: Iterable[Mapping]) -> list[dict]:
    out, seen = [], set()
    for i, h in enumerate(hits):
        try:
            node_id, rank, score = str(h["node_id"]), int(h["rank"]), h["score"]
        except (KeyError, TypeError, ValueError):
            raise InputError(f"state: hit {i} needs node_id, rank and score, got {h!r}") from None
        if node_id in seen:
            raise InputError(f"state: node {node_id!r} appears twice in one trace")
        seen.add(node_id)
        rec = {"node_id": node_id, "rank": rank, "score": _finite(score, f"hit {node_id!r} score")}
        path = h.get("path")
        if channel in REINFORCING_CHANNELS:
            if not path:
                raise InputError(f"state: relation hit {node_id!r} has no credited edge path (zero-hop hits are not allowed)")
            edges = []
            for e in path:
                try:
                    edge = {"source": str(e["source"]), "target": str(e["target"]), "type": str(e["type"]),
                            "base_weight": _finite(e.get("base_weight", e.get("weight")), "edge base weight"),
                            "weight": _finite(e.get("weight", e.get("base_weight")), "edge weight")}
                except (KeyError, TypeError):
                    raise InputError(f"state: relation hit {node_id!r}: path edge needs source, target, type, weight") from None
                if _finite(edge["base_weight"], "edge base weight") < 0:
                    raise InputError(f"state: relation hit {node_id!r}: negative base weight")
                edges.append(edge)
            for a, b in zip(edges, edges[1:]):
                if a["target"] != b["source"]:
                    raise InputError(f"state: relation hit {node_id!r}: path is not contiguous")
            if node_id not in (edges[-1]["target"], edges[0]["source"]):  # reached along edges, or back against them
                raise InputError(f"state: relation hit {node_id!r}: path neither ends nor starts at it "
                                 f"({edges[0]['source']!r} ... {edges[-1]['target']!r})")
            rec["path"] = edges
        elif path:
            raise InputError(f"state: a {channel} trace stores no graph path (hit {node_id!r} has one)")
        out.append(rec)
    return out


class StateStore:
    """SQLite-backed traces / successes / edge overlay at `path` (created on first use)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self._db = LocalConnection(path, _SCHEMA, foreign_keys=True)
        self.path = self._db.path
        self._con()  # creates the file and schema now, so errors surface at construction

    # -- connections ----------------------------------------------------------------------------

    def _con(self) -> sqlite3.Connection:
        return self._db.get()

    def _write(self):
        """A `BEGIN IMMEDIATE` transaction on this thread's connection (context manager)."""
        return transaction(self._db.get())

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "StateStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- traces ---------------------------------------------------------------------------------

    def new_trace(self, query: str, channel: str, hits: Iterable[Mapping], params: Mapping | None = None) -> str:
        """Store one lane's answer and return its fresh trace id (uuid4 hex).

        `hits`: mappings with node_id (record id), rank, score; relation hits also `path`, a list
        of {source, target, type, weight, base_weight} record-id edge keys ending at node_id
        (see `relation.trace_hits`). Non-relation traces must not carry paths.
        """
        if not isinstance(query, str):
            raise InputError("state: query must be a string")
        if not isinstance(channel, str) or not channel:
            raise InputError("state: channel must be a non-empty string")
        rows = _normalise_hits(channel, hits)
        try:
            params_json = json.dumps(dict(params or {}), sort_keys=True, allow_nan=False, ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            raise InputError(f"state: params are not finite JSON ({exc})") from None
        trace_id = uuid.uuid4().hex
        with self._write() as con:
            con.execute("INSERT INTO traces VALUES (?, ?, ?, ?, ?, ?)",
                        (trace_id, query, channel, _now(), params_json,
                         json.dumps(rows, allow_nan=False, ensure_ascii=False)))
        return trace_id

    def get_trace(self, trace_id: str) -> Trace:
        row = self._con().execute(
            "SELECT trace_id, query, channel, created_at, params, hits FROM traces WHERE trace_id = ?",
            (str(trace_id),)).fetchone()
        if row is None:
            raise InputError(f"unknown trace id {trace_id!r}: feedback must name a trace returned by a search")
        return Trace(row[0], row[1], row[2], row[3], json.loads(row[4]), json.loads(row[5]))

    def trace_ids(self) -> list[str]:
        return [r[0] for r in self._con().execute("SELECT trace_id FROM traces ORDER BY created_at, trace_id")]

    def successes(self, trace_id: str | None = None) -> list[tuple[str, str]]:
        sql = "SELECT trace_id, node_id FROM successes"
        args: tuple = ()
        if trace_id is not None:
            sql, args = sql + " WHERE trace_id = ?", (trace_id,)
        return [tuple(r) for r in self._con().execute(sql + " ORDER BY rowid", args)]

    # -- feedback -------------------------------------------------------------------------------

    def record_success(self, trace_id: str, node_id: str) -> FeedbackResult:
        """Record that `node_id` from trace `trace_id` was actually used.

        Relation trace: reinforce exactly the credited path of that hit (rule in the module doc).
        Any other channel: record only. Unknown trace, or a node that trace did not return:
        InputError. A repeat of the same (trace, node) changes nothing.
        """
        node_id = str(node_id)
        with self._write() as con:
            row = con.execute("SELECT channel, hits FROM traces WHERE trace_id = ?", (str(trace_id),)).fetchone()
            if row is None:
                raise InputError(f"unknown trace id {trace_id!r}: feedback must name a trace returned by a search")
            channel, hits = row[0], json.loads(row[1])
            hit = next((h for h in hits if h["node_id"] == node_id), None)
            if hit is None:
                raise InputError(f"node {node_id!r} is not a hit of trace {trace_id!r} (channel {channel}); "
                                 f"feedback must use the trace id of the lane that returned it")
            done = con.execute("SELECT changes FROM successes WHERE trace_id = ? AND node_id = ?",
                               (trace_id, node_id)).fetchone()
            if done is not None:
                return FeedbackResult(trace_id, node_id, channel, int(hit["rank"]), True, [])
            changes: list[EdgeChange] = []
            if channel in REINFORCING_CHANNELS:
                seen = set()
                for e in hit["path"]:
                    key = (e["source"], e["target"], e["type"])
                    if key in seen:
                        continue
                    seen.add(key)
                    cur = con.execute("SELECT delta FROM edge_overlay WHERE source_id=? AND target_id=? AND type=?",
                                      key).fetchone()
                    d0 = float(cur[0]) if cur else 0.0
                    base = float(e["base_weight"])
                    # (CAP_FACTOR * base) - (base + d0), written so no term exceeds the cap itself
                    d1 = d0 + ETA * ((CAP_FACTOR - 1.0) * base - d0)
                    if not (math.isfinite(d1) and math.isfinite(base + d1) and math.isfinite(CAP_FACTOR * base)):
                        # raising here rolls the whole success back
                        raise InputError(f"state: edge {key} weight {base:g} cannot be reinforced "
                                         f"(the result is not finite); nothing was recorded")
                    if d1 == d0:
                        continue
                    con.execute("INSERT INTO edge_overlay VALUES (?, ?, ?, ?, ?) "
                                "ON CONFLICT (source_id, target_id, type) DO UPDATE SET delta = excluded.delta, "
                                "updated_at = excluded.updated_at", (*key, d1, _now()))
                    changes.append(EdgeChange(*key, base, d0, d1))
            con.execute("INSERT INTO successes VALUES (?, ?, ?, ?)",
                        (trace_id, node_id, _now(), json.dumps([c.__dict__ for c in changes])))
        return FeedbackResult(trace_id, node_id, channel, int(hit["rank"]), False, changes)

    # -- retention ------------------------------------------------------------------------------

    def prune_traces(self, older_than: str, keep_newest: int, protect_after: str) -> int:
        """Delete traces created before `older_than`, or beyond the newest `keep_newest`; never a trace
        with a success (feedback rows and what they credit are kept) nor one created after
        `protect_after` (a client may still credit it). Times are ISO UTC strings like `_now()`'s.
        Returns how many traces were deleted (one transaction)."""
        with self._write() as con:
            cur = con.execute(
                "DELETE FROM traces WHERE created_at < ? "
                "AND trace_id NOT IN (SELECT trace_id FROM successes) "
                "AND (created_at < ? OR trace_id NOT IN "
                "     (SELECT trace_id FROM traces ORDER BY created_at DESC, trace_id DESC LIMIT ?))",
                (protect_after, older_than, int(keep_newest)))
            return int(cur.rowcount)

    # -- overlay --------------------------------------------------------------------------------

    def overlay(self) -> dict[tuple[str, str, str], float]:
        """All learned deltas keyed by (source id, target id, type)."""
        return {(r[0], r[1], r[2]): float(r[3])
                for r in self._con().execute("SELECT source_id, target_id, type, delta FROM edge_overlay")}

    def overlay_for(self, graph: Graph, ids: Sequence[str] | np.ndarray) -> np.ndarray:
        """Effective weight per CSR slot: base + learned delta, clipped to [0, CAP_FACTOR * base].

        `ids[position]` is the record id of node `position`. Overlay rows naming ids or types the
        graph does not have (e.g. after a rebuild) are ignored. Every parallel edge with the same
        (source, target, type) key gets the same delta.
        """
        if len(ids) != graph.n_nodes:
            raise InputError(f"state: {len(ids)} ids for a graph of {graph.n_nodes} nodes")
        w = np.array(graph.weights, dtype=np.float64)
        rows = self.overlay()
        if not rows:
            return w
        pos = {rid: i for i, rid in enumerate(ids)}
        for (s, t, typ), delta in rows.items():
            u, v = pos.get(s), pos.get(t)
            if u is None or v is None or graph.type_code(typ) < 0:
                continue
            slots = graph.slots_of(u, v, typ)
            base = graph.weights[slots]
            w[slots] = effective_weight(base, delta)
        return w
