"""The service behind every interface: `sidelight serve` (HTTP), `sidelight mcp` and the CLI.

One `Service` wraps one loaded `Index`. Every call is validated (`validate`: clear `ApiError`s
with an HTTP status and a stable code), gets a time budget (`sidelight.lanes.budget`), and writes
one query-log row (`sidelight.lanes.querylog.logged`) into the index's `state.sqlite`, next to the
traces. The lanes run through the one orchestrator (`sidelight.lanes.channels.run_lanes`), a
method search through `sidelight.lanes.method_call.run_method`, as they do for the CLI and the
Python API. The dense query model loads in the background (`dense_model`); a lane or method that
needs it while it loads is skipped and the answer is labelled.

Besides the lanes and methods it serves the floor (`sidelight.methods.floor.build_floor`) and the
serendipity lane (`connections`). When this index lacks their data the answer says what is
missing: 422 ``method_unavailable`` for the floor without dense vectors, 501 ``not_available``
for connections without a certificate. `app` (HTTP) and `mcp_server` (MCP) are thin layers over it.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

from ..errors import InputError, SidelightError, StorageError
from ..feedback.state import effective_weight
from ..lanes.channels import run_lanes
from ..lanes.method_call import run_method
from ..lanes.registry import VECTORS, Lane
from ..index.passages import MAX_SNIPPET_CHARS, SNIPPET_CHARS, PassageSettings, with_passages
from ..index.reading import MAX_PAGE_CHARS, PAGE_CHARS, links, read
from ..index.lookup import PARTS_OF_SPEECH, PRIOR, default_lookup_method, lookup_json
from ..methods import available_methods, get_method, method_spec, method_specs
from ..methods.floor import DEFAULT_N, build_floor
from ..lanes import budget as B
from .connections import VERDICTS, SerendipityLane
from .dense_model import DenseModel
from .labview import corpus_stats, latest_report, report_info, report_page, report_problem
from ..lanes.querylog import QueryLog, logged
from .validate import (
    DEFAULT_DIAL,
    MAX_DIAL,
    MAX_EDGES,
    MAX_K,
    MAX_LIMIT,
    ApiError,
    check_bool,
    check_int,
    check_node_id,
    check_filter,
    check_params_object,
    check_query,
    check_sha256,
    check_trace_id,
    check_verdict,
)

class Service:
    """Everything a served call can do with one index. Thread-safe; one per process."""

    def __init__(self, index, *, interface: str = "http", lab_dir: Path | None = None,
                 dense_loader: Callable[[], None] | None = None, default_budget_ms: int = B.DEFAULT_BUDGET_MS,
                 workers: int = 4, querylog: QueryLog | None = None, max_limit: int = MAX_LIMIT) -> None:
        """`max_limit`: the most hits per lane a caller may ask for (the CLI, a local user, allows more)."""
        self._index = index
        self.max_limit = max_limit
        self._reload_lock = threading.Lock()
        self._dense_loader = dense_loader
        self.interface = interface
        self.lab_dir = Path(lab_dir) if lab_dir else None
        self.default_budget_ms = default_budget_ms
        self.log = querylog or QueryLog.for_index(index)
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sidelight-stage")
        self._stats: dict | None = None
        self.dense = DenseModel(index.dense, dense_loader)
        self.serendipity = SerendipityLane(index)
        self.started = time.time()

    # -- the index, followed across generations ---------------------------------------------------------
    @property
    def index(self):
        """The served index; when a writer (`add`, `delete`, `index -o`) has published a new generation,
        it is opened before the call goes on, so answers and feedback always use the current records."""
        if self._index.changed_on_disk():
            self._reload()
        return self._index

    def _reload(self) -> None:
        with self._reload_lock:
            old = self._index
            if not old.changed_on_disk():
                return  # another thread reloaded first
            from ..index import Index

            new = Index.load(old.path)
            reopen = getattr(getattr(old, "fanout", None), "shards", None)
            fanout = getattr(new, "fanout", None)
            if reopen is not None and hasattr(reopen, "reopen") and fanout is not None:  # Ray shards follow
                fanout.shards = reopen.reopen(new)
            if new.dense is not None and old.dense is not None:
                new.dense.reuse_embedder(old.dense)  # the same query model: keep it loaded
                self.dense.store = new.dense
            else:
                self.dense = DenseModel(new.dense, self._dense_loader)
                self.dense.start()
            self._stats = None
            self.serendipity = SerendipityLane(new)
            self._index = new
            old.state.close()

    # -- dense model readiness -------------------------------------------------------------------------
    def start(self) -> "Service":
        """Start loading the dense query model in the background (no-op without vectors)."""
        self.dense.start()
        return self

    def wait_dense(self, timeout: float = 60.0) -> bool:
        return self.dense.wait(timeout)

    # -- logging wrapper -------------------------------------------------------------------------------
    def _logged(self, operation: str, query: Any, fn: Callable[[], dict]) -> dict:
        """Run `fn` and log it (`querylog.logged`); a refusal comes out as an `ApiError`."""
        try:
            return logged(self.log, self.interface, operation, query, fn)
        except StorageError as exc:  # the state file refused a write: nothing was recorded, say so
            raise ApiError(503, "storage_unavailable", str(exc)) from exc
        except SidelightError as exc:
            raise ApiError(400, "bad_input", str(exc)) from exc

    @staticmethod
    def _quiet(operation: str, query: Any, fn: Callable[[], dict]) -> dict:
        """`_logged` without the log row: the same answer and refusals, nothing written."""
        try:
            out = fn()
        except StorageError as exc:
            raise ApiError(503, "storage_unavailable", str(exc)) from exc
        except SidelightError as exc:
            raise ApiError(400, "bad_input", str(exc)) from exc
        out.pop("_log_lanes", None)
        return out

    def _budget(self, budget_ms: Any) -> B.Budget:
        return B.Budget(check_int(budget_ms, "budget_ms", B.MIN_BUDGET_MS, B.MAX_BUDGET_MS, self.default_budget_ms))

    @staticmethod
    def _finish(out: dict, b: B.Budget) -> dict:
        out.update(b.labels())
        out["timings_ms"] = b.timings()
        return out

    # -- health ------------------------------------------------------------------------------------------
    def health(self) -> dict:
        idx = self.index
        try:
            cert = self.serendipity.certificate_status()
        except Exception as exc:  # unreadable serendipity files must not take /health down
            cert = {"status": "error", "reason": f"{type(exc).__name__}: {exc}"}
        state = self.dense.state
        status = "ok" if state in ("ready", "absent") else "degraded" if state == "failed" else "starting"
        return {
            "status": status, "ready": True,
            "index": {"loaded": True, "path": str(idx.path) if idx.path else None, "corpus": idx.corpus.name,
                      "records": len(idx.corpus), "edges": len(idx.corpus.edges)},
            "dense": self.dense.health(), "certificate": cert,
            "state": str(idx.state.path), "uptime_s": round(time.time() - self.started, 1),
            "lab_report": latest_report(self.lab_dir) is not None,
        }

    def offers_lookup(self) -> bool:
        """A reverse dictionary applies to a dictionary index: records that are senses with a part of speech."""
        records = self.index.corpus.records
        return len(records) > 0 and records[0].metadata.get("pos") in {v for vs in PARTS_OF_SPEECH.values() for v in vs}

    def offers_connections(self) -> bool:
        """The serendipity lane applies when the index has a certificate (passed or failed: a failed one says why)."""
        return self.serendipity.certificate_status()["status"] != "absent"

    # -- search by method --------------------------------------------------------------------------------
    def methods(self) -> dict:
        return available_methods()

    def _known_method(self, method: Any) -> str:
        """A registered method name (default bm25), or 400 listing the names."""
        method = method or "bm25"
        if not isinstance(method, str) or method not in self.methods():
            raise ApiError(400, "unknown_method", f"unknown method {method!r}", available=sorted(self.methods()))
        return method

    def method_specs(self) -> dict:
        """Every method's declaration: description, needs and parameters (name, type, default, allowed)."""
        return {s.name: s.to_dict() for s in method_specs()}

    def search(self, query: Any, method: Any = "bm25", k: Any = 10, budget_ms: Any = None, params: Any = None,
               filter: Any = None, snippet_chars: Any = SNIPPET_CHARS, *, log: bool = True) -> dict:
        """`params`: the method's parameters (checked by its declaration); `snippet_chars`: each hit's
        snippet bound (0: no passages). `log=False` (the read-only HTTP GET form) writes no query-log
        row; a method search stores no trace."""
        return (self._logged if log else self._quiet)(
            "search", query, lambda: self._search(query, method, k, budget_ms, params, filter, snippet_chars))

    def _search(self, query, method, k, budget_ms, params=None, filter=None, snippet_chars=SNIPPET_CHARS) -> dict:
        idx = self.index  # one generation for the whole call
        with idx.watch() as cov:
            out = self._search_in(idx, query, method, k, budget_ms, params, filter, snippet_chars)
        return _covered(out, cov)

    def _search_in(self, idx, query, method, k, budget_ms, params, filter, snippet_chars=SNIPPET_CHARS) -> dict:
        q = check_query(query)
        k = check_int(k, "k", 1, MAX_K, 10)
        snippet_chars = check_int(snippet_chars, "snippet_chars", 0, MAX_SNIPPET_CHARS, SNIPPET_CHARS)
        b = self._budget(budget_ms)
        method = self._known_method(method)
        params = check_params_object(params)
        get_method(method, **params)  # a bad value: 400 naming the parameter
        where = check_filter(filter)
        if "dense" in method_spec(method).needs and idx.dense is None:
            raise ApiError(422, "method_unavailable", f"method {method!r} needs dense vectors and this index has "
                           "none; rebuild it with `sidelight index SOURCE --dense minilm`, or use a lexical method")
        found, used = run_method(idx, q, method, k, where, params, budget=b, pool=self.pool,
                                 waiting=lambda: None if self.dense.ready else self.dense.skip_reason())
        if snippet_chars:
            found = found.with_hits(with_passages(idx, found.hits, q, PassageSettings(snippet_chars=snippet_chars)))
        out = found.to_dict()
        out.update({"method_used": used, "k": k,
                    "note": "Scores compare only within this method. A method search stores no trace: search the "
                            "lanes (channels) for trace ids that feedback can credit."})
        out["_log_lanes"] = [{"channel": used, "hits": len(found)}]
        return self._finish(out, b)

    # -- lanes ----------------------------------------------------------------------------------------
    def lookup(self, description: Any, k: Any = 10, method: Any = None, pos: Any = None, prior: Any = None, *,
               log: bool = True) -> dict:
        """Words for a description (reverse dictionary); stores no trace. `log=False`: the read-only GET form."""
        return (self._logged if log else self._quiet)("lookup", description,
                                                      lambda: self._lookup(description, k, method, pos, prior))

    def _lookup(self, description, k, method, pos, prior) -> dict:
        q = check_query(description)
        k = check_int(k, "k", 1, MAX_K, 10)
        method = self._known_method(method or default_lookup_method(self.index))
        if "dense" in method_spec(method).needs and not self.dense.ready:
            raise ApiError(422, "method_unavailable", f"method {method!r} needs the dense model, which is "
                           f"{self.dense.state}; use a lexical method")
        if pos not in (None, "", *PARTS_OF_SPEECH):
            raise ApiError(400, "bad_pos", f"pos must be one of {', '.join(PARTS_OF_SPEECH)}, got {pos!r}")
        try:
            prior = None if prior in (None, "") else PRIOR.check("lookup", prior)
        except InputError as exc:
            raise ApiError(400, "bad_prior", str(exc)) from None
        out = lookup_json(self.index.lookup(q, k, method, pos or None, prior=prior))
        out["note"] = "A word's score is its best sense's score under the method; senses are listed best first."
        out["_log_lanes"] = [{"channel": "lookup", "hits": len(out["results"])}]
        return out

    def channels(self, query: Any, limit: Any = 10, budget_ms: Any = None, dense: Any = None,
                 relation: Any = None, snippet_chars: Any = SNIPPET_CHARS, lanes: Any = None) -> dict:
        """`relation`: the relation lane's parameters (the `relation` method's, e.g. {"rank": "activation"});
        `snippet_chars`: each hit's snippet bound (0: no passages); `lanes`: any other registered lane by
        name, false to leave an optional one out or an object of its parameters (`requests.channels_request`)."""
        return self._logged("channels", query,
                            lambda: self._channels(query, limit, budget_ms, dense, relation, snippet_chars, lanes))

    def _channels(self, query, limit, budget_ms, dense, relation=None, snippet_chars=SNIPPET_CHARS,
                  lanes=None) -> dict:
        idx = self.index  # one generation for the whole call
        with idx.watch() as cov:
            out = self._channels_in(idx, query, limit, budget_ms, dense, relation, snippet_chars, lanes)
        return _covered(out, cov)

    # -- reading what was found --------------------------------------------------------------------------
    def read(self, ref: Any, page: Any = 1, page_chars: Any = PAGE_CHARS) -> dict:
        """A document or one section (`ID#section`): a page of its text, its outline, its links (no log row)."""
        ref = check_ref(ref)
        page = check_int(page, "page", 1, 1_000_000, 1)
        page_chars = check_int(page_chars, "page_chars", 1, MAX_PAGE_CHARS, PAGE_CHARS)
        return self._quiet("read", ref, lambda: _found(lambda: read(self.index, ref, page, page_chars)))

    def links(self, ref: Any, hops: Any = 1) -> dict:
        """A record's links out and in with their sentences; `hops=2` adds the records two links away."""
        ref = check_ref(ref)
        hops = check_int(hops, "hops", 1, 2, 1)
        return self._quiet("links", ref, lambda: _found(lambda: {"id": ref, **links(self.index, ref, hops)}))

    def _channels_in(self, idx, query, limit, budget_ms, dense, relation, snippet_chars=SNIPPET_CHARS,
                     lanes=None) -> dict:
        q = check_query(query)
        limit = check_int(limit, "limit", 1, self.max_limit, 10)
        snippet_chars = check_int(snippet_chars, "snippet_chars", 0, MAX_SNIPPET_CHARS, SNIPPET_CHARS)
        settings = PassageSettings(snippet_chars=snippet_chars)
        want_dense = check_bool(dense, "dense", True)  # checked before any lane stores a trace
        include: dict[str, bool | None] = {} if want_dense else {"dense": False}
        lane_params = {"relation": check_params_object(relation)} if relation not in (None, "", {}) else {}
        for name, given in dict(lanes or {}).items():  # True: as by default (run when the index can)
            if isinstance(given, bool):
                include[name] = None if given else False
            else:
                lane_params[name] = check_params_object(given)
        b = self._budget(budget_ms)

        def waiting(lane: Lane) -> str | None:  # the dense query model still loading (or failed)
            return self.dense.skip_reason() if VECTORS in lane.needs and not self.dense.ready else None

        def passages(answer):
            return answer.with_hits(with_passages(idx, answer.hits, q, settings)) if snippet_chars else answer

        res = run_lanes(idx, q, limit, include=include, params=lane_params or None, budget=b, pool=self.pool,
                        waiting=waiting, finish=passages)
        out = res.to_dict()
        if idx.state_note:  # a read-only folder: the answer says its traces are not kept
            out["state"] = {"kept": False, "note": idx.state_note}
        out["_log_lanes"] = res.log_lanes()
        return out

    # -- feedback and traces ----------------------------------------------------------------------------
    def feedback(self, trace_id: Any, node_id: Any) -> dict:
        return self._logged("feedback", trace_id, lambda: self._feedback(trace_id, node_id))

    def _get_trace(self, trace_id: str):
        try:
            return self.index.state.get_trace(trace_id)
        except InputError:
            raise ApiError(404, "unknown_trace", f"unknown trace id {trace_id!r}: feedback must name a trace id "
                           "returned by a lane of a search") from None

    def _feedback(self, trace_id, node_id) -> dict:
        trace_id, node_id = check_trace_id(trace_id), check_node_id(node_id)
        idx = self.index
        if idx.state is not None and idx.state_note:  # opening the state sets the note
            raise ApiError(503, "state_read_only", idx.state_note)
        trace = self._get_trace(trace_id)
        if trace.hit(node_id) is None:
            raise ApiError(422, "node_not_in_trace", f"node {node_id!r} is not a hit of trace {trace_id!r} "
                           f"({trace.channel} lane); credit a node through the trace id of the lane that returned it",
                           channel=trace.channel)
        t = time.perf_counter()
        res = self.index.state.record_success(trace_id, node_id)
        ms = (time.perf_counter() - t) * 1000.0
        changes = [c.to_dict() for c in res.changed_edges]
        if res.already_recorded:
            note = "already recorded: nothing changed this time"
        elif res.channel == "relation":
            note = (f"{len(changes)} credited edge(s) of this hit's path strengthened; no other edge changed"
                    if changes else "recorded; the credited edges were already at their cap")
        else:
            note = f"recorded; a {res.channel} success changes no edge"
        return {"trace_id": res.trace_id, "node_id": res.node_id, "channel": res.channel, "rank": res.rank,
                "already_recorded": res.already_recorded, "changed_edges": changes, "note": note,
                "timings_ms": {"record": round(ms, 3)},
                "_log_lanes": [{"channel": res.channel, "trace_id": res.trace_id, "credited": len(changes)}]}

    def trace(self, trace_id: Any) -> dict:
        trace_id = check_trace_id(trace_id)
        tr = self._get_trace(trace_id)
        return {"trace_id": tr.trace_id, "query": tr.query, "channel": tr.channel, "created_at": tr.created_at,
                "params": tr.params, "hits": tr.hits,
                "successes": [n for _, n in self.index.state.successes(trace_id)]}

    def edges(self, keys: Any) -> dict:
        """Current weights (base, learned delta, effective) of edges named by (source, target, type)."""
        if not isinstance(keys, list) or not keys:
            raise ApiError(400, "bad_edges", "edges must be a non-empty list of {source, target, type}")
        if len(keys) > MAX_EDGES:
            raise ApiError(400, "edges_out_of_range", f"at most {MAX_EDGES} edges per call, got {len(keys)}")
        idx = self.index
        overlay = idx.state.overlay()
        g, pos = idx.graph, idx.corpus.position
        out = []
        for i, e in enumerate(keys):
            if not isinstance(e, dict) or not all(isinstance(e.get(f), str) for f in ("source", "target", "type")):
                raise ApiError(400, "bad_edges", f"edge {i} needs string source, target and type")
            s, t, typ = e["source"], e["target"], e["type"]
            row = {"source": s, "target": t, "type": typ}
            u, v = pos.get(s), pos.get(t)
            slots = g.slots_of(u, v, typ) if u is not None and v is not None and g.type_code(typ) >= 0 else []
            if len(slots) == 0:
                row["exists"] = False
            else:
                base = float(g.weights[slots[0]])
                delta = float(overlay.get((s, t, typ), 0.0))
                row.update(exists=True, base_weight=base, delta=delta, weight=float(effective_weight(base, delta)))
            out.append(row)
        return {"edges": out}

    # -- the floor and the serendipity lane ---------------------------------------------------------
    def floor(self, query: Any, n: Any = None, budget_ms: Any = None, *, log: bool = True) -> dict:
        """`log=False` (the read-only HTTP GET form) writes no query-log row; the floor stores no trace."""
        return (self._logged if log else self._quiet)("floor", query, lambda: self._floor(query, n, budget_ms))

    def _floor(self, query, n, budget_ms) -> dict:
        q = check_query(query)
        n = check_int(n, "n", 1, MAX_K, DEFAULT_N)
        b = self._budget(budget_ms)
        idx = self.index  # one generation for the whole call
        if idx.dense is None:
            raise ApiError(422, "method_unavailable", "the floor needs dense vectors and this index has none")
        if not self.dense.ready:
            b.skip("floor", self.dense.skip_reason(), fallback=B.LEXICAL_ONLY)
            ranking = b.timed("bm25", lambda: get_method("bm25").rank(idx, q, n))
            out = {"query": q, "floor": None, "hits": [h.to_dict() for h in idx.hits(ranking)],
                   "_log_lanes": [{"channel": "bm25", "hits": len(ranking.positions)}]}
            return self._finish(out, b)
        fl = b.timed("floor", lambda: build_floor(idx, q, n=n, deadline_s=b.remaining_s()))
        b.partial = b.partial or fl.partial
        data = fl.to_json()
        out = {"query": q, "floor": data, "_log_lanes": [{"channel": "floor", "hits": len(data["hits"])}]}
        return self._finish(out, b)

    def connections(self, query: Any, dial: Any = 3, budget_ms: Any = None, session_id: Any = None) -> dict:
        return self._logged("connections", query, lambda: self._connections(query, dial, budget_ms, session_id))

    def _connections(self, query, dial, budget_ms, session_id) -> dict:
        q = check_query(query)
        dial = check_int(dial, "dial", 0, MAX_DIAL, DEFAULT_DIAL)
        session = "default" if session_id in (None, "") else check_node_id(session_id)
        b = self._budget(budget_ms)
        self.serendipity.load()  # 501 before any work when this index has no serendipity data
        try:
            res = b.run(self.pool, "connections",
                        lambda: self.serendipity.connections(q, dial, session, b.remaining_s()))
        except B.StageCut:
            out = {"query": q, "dial": dial, "connections": None,
                   "missing_lanes": [{"channel": "connections", "reason": b.stages[-1]["reason"]}],
                   "_log_lanes": [{"channel": "connections", "trace_id": None}]}
            return self._finish(out, b)
        b.partial = b.partial or res["partial"]
        out = {"query": q, "dial": dial, "connections": res,
               "note": ("Seated connections are mixed into the floor unlabeled; the panel is withheld until you "
                        "POST /api/reveal with this trace id and the SHA-256 of your finished answer."),
               "_log_lanes": [{"channel": "connections", "trace_id": res["trace_id"],
                               "hits": len(res["passages"])}]}
        return self._finish(out, b)

    def reveal(self, trace_id: Any, answer_sha256: Any) -> dict:
        return self._logged("reveal", trace_id, lambda: self._reveal(trace_id, answer_sha256))

    def _reveal(self, trace_id, answer_sha256) -> dict:
        trace_id, answer_sha256 = check_trace_id(trace_id), check_sha256(answer_sha256)
        return {"trace_id": trace_id, "reveal": self.serendipity.reveal(trace_id, answer_sha256),
                "_log_lanes": [{"channel": "reveal", "trace_id": trace_id}]}

    def verdict(self, a_id: Any, b_id: Any, marker: Any, verdict: Any, who: Any, note: Any = None,
                trace_id: Any = None) -> dict:
        return self._logged("verdict", trace_id,
                            lambda: self._verdict(a_id, b_id, marker, verdict, who, note, trace_id))

    def _verdict(self, a_id, b_id, marker, verdict, who, note, trace_id) -> dict:
        a_id, b_id = check_node_id(a_id), check_node_id(b_id)
        for rid in (a_id, b_id):
            if rid not in self.index.corpus.position:
                raise ApiError(404, "unknown_node", f"no record {rid!r} in this index")
        marker = check_int(marker, "marker", 0, 10_000_000)
        verdict, who, note = check_verdict(verdict, who, note, VERDICTS)
        if trace_id is not None:
            trace_id = check_trace_id(trace_id)
        res = self.serendipity.record_verdict(a_id, b_id, marker, verdict, who, note, trace_id)
        return {"verdict": res, "note": "a human verdict; it is kept apart from the statistical certificate",
                "_log_lanes": [{"channel": "verdict", "trace_id": trace_id}]}

    # -- corpus view, lab report, log -----------------------------------------------------------------
    def stats(self) -> dict:
        if self._stats is None:
            self._stats = corpus_stats(self.index.corpus)
        return self._stats

    def report(self) -> dict:
        return report_info(self.lab_dir)

    def report_html(self) -> str | None:
        """The latest report's page, only when it matches its run's record (else None: the caller says why)."""
        p = latest_report(self.lab_dir)
        return report_page(p) if p is not None and report_problem(p) is None else None

    def querylog(self, limit: Any = 50) -> dict:
        limit = check_int(limit, "limit", 1, 10_000, 50)
        return {"entries": self.log.entries(limit), "total": self.log.count()}

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


def check_ref(ref: Any) -> str:
    if not isinstance(ref, str) or not ref.strip():
        raise ApiError(400, "bad_id", "id must be a non-empty string: a record id, or ID#section")
    return ref


def _found(fn: Callable[[], dict]) -> dict:
    """`fn()`, with an unknown record, section or page as a 404 naming it."""
    try:
        return fn()
    except InputError as exc:
        raise ApiError(404, "not_found", str(exc)) from None


def _covered(out: dict, cov) -> dict:
    """A sharded index's answer says how many shards answered; a shard missing makes it `partial`."""
    if cov is not None:
        out["partial"] = bool(out.get("partial")) or cov.answered < cov.shards
        out["coverage"] = cov.to_dict()["coverage"]
    return out
