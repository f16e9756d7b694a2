"""The service behind every interface: `sidelight serve` (HTTP), `sidelight mcp` and the CLI.

One `Service` wraps one loaded `Index`. It validates input (clear `ApiError`s with an HTTP status
and a stable code), gives every call a time budget (`sidelight.serve.budget`), loads the dense
query model in the background and labels every answer given without it, and writes one query-log
row per call (`sidelight.serve.querylog`) into the index's `state.sqlite`, next to the traces.

Lanes that colleagues add later plug in by feature detection, never by a hard import:

* the floor: `sidelight.lanes.floor.build_floor(index, query, ..., deadline_s=...)`;
* the serendipity lane: the `sidelight.serendipity` package (connections with a dial, reveal after
  the answer hash, verdicts, certificate status), through `sidelight.serve.serendipity_adapter`.

A missing one answers 501 with code ``not_available`` and says what is missing.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..errors import InputError, SidelightError
from ..graph.state import CAP_FACTOR
from ..lanes.channels import DESCRIPTIONS, LaneResult, dense_lane, lexical_lane, relation_lane
from ..lanes.relation import RELATION_DEFAULTS
from . import budget as B
from .querylog import QueryLog

MAX_QUERY_CHARS = 1_000
MAX_K = 100
MAX_LIMIT = 50
MAX_DIAL = 28
MAX_EDGES = 500
MAX_ID_CHARS = 512
TRACE_ID = re.compile(r"^[0-9a-f]{32}$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")

# Methods that encode the query with the dense model (they wait for it, so they fall back while it loads).
DENSE_METHODS = frozenset({"dense", "dense-prf", "rrf", "hybrid-linear", "best", "learned", "dense+ppr", "floor"})

LANE_DESCRIPTIONS = {
    **DESCRIPTIONS,
    "labels": ("fallback / partial: when the server skipped or cut a stage (dense model still loading, a stage "
               "too slow for the time budget) the answer says so: `fallback` names the path taken (e.g. "
               "'lexical-only': no dense lane, relation seeds from BM25 only), `partial` is true when time ran "
               "out, and `stages` lists each stage as done, skipped or cut with the reason."),
}


class ApiError(Exception):
    """A refused call: HTTP status, a stable code and a message that says what to fix."""

    def __init__(self, status: int, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.details = status, code, message, details

    def to_dict(self) -> dict:
        return {"error": {"status": self.status, "code": self.code, "message": self.message, **self.details}}


def not_available(what: str, needs: str) -> ApiError:
    return ApiError(501, "not_available", f"{what} is not available in this build: it needs {needs}.",
                    feature=what)


# ---- validation ------------------------------------------------------------------------------------

def check_query(query: Any) -> str:
    if not isinstance(query, str):
        raise ApiError(400, "bad_query", "query must be a string")
    if not query.strip():
        raise ApiError(400, "empty_query", "query is empty; send some words to search for")
    if len(query) > MAX_QUERY_CHARS:
        raise ApiError(400, "query_too_long", f"query has {len(query)} characters; at most {MAX_QUERY_CHARS}",
                       max_chars=MAX_QUERY_CHARS)
    return query


def check_int(value: Any, name: str, lo: int, hi: int, default: int | None = None) -> int:
    if value is None or value == "":
        if default is None:
            raise ApiError(400, f"missing_{name}", f"{name} is required (an integer {lo}..{hi})")
        return default
    if isinstance(value, bool):
        raise ApiError(400, f"bad_{name}", f"{name} must be an integer {lo}..{hi}, got {value!r}")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise ApiError(400, f"bad_{name}", f"{name} must be an integer {lo}..{hi}, got {value!r}") from None
    if not isinstance(value, int):
        raise ApiError(400, f"bad_{name}", f"{name} must be an integer {lo}..{hi}, got {value!r}")
    if not lo <= value <= hi:
        raise ApiError(400, f"{name}_out_of_range", f"{name} must be between {lo} and {hi}, got {value}",
                       min=lo, max=hi)
    return value


def check_trace_id(value: Any) -> str:
    if not isinstance(value, str) or not TRACE_ID.match(value):
        raise ApiError(400, "bad_trace_id", f"trace_id must be the 32-hex-digit id a lane returned, got {value!r}")
    return value


def check_node_id(value: Any) -> str:
    if not isinstance(value, str) or not value or len(value) > MAX_ID_CHARS:
        raise ApiError(400, "bad_node_id", f"node_id must be a record id (1..{MAX_ID_CHARS} characters)")
    return value


def _plain(obj: Any) -> Any:
    """A plugin's result as JSON-ready data (to_json / to_dict / dataclass / numpy)."""
    for name in ("to_json", "to_dict"):
        fn = getattr(obj, name, None)
        if callable(fn):
            out = fn()
            return _plain(out) if not isinstance(out, str) else out
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj) if not f.name.startswith("_")}
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _plain(obj.tolist())
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


PLUGIN_ERRORS: dict[str, str] = {}


def _plugin(module: str, *names: str) -> Callable | None:
    """The first attribute of `module` among `names`, or None when the module or attribute is absent."""
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and (exc.name == module or module.startswith(exc.name + ".")):
            return None
        PLUGIN_ERRORS[module] = f"{type(exc).__name__}: {exc}"
        return None
    except Exception as exc:  # a half-built lane must not take the server down: reported by /health
        PLUGIN_ERRORS[module] = f"{type(exc).__name__}: {exc}"
        return None
    for n in names:
        fn = getattr(mod, n, None)
        if callable(fn):
            return fn
    return None


def _call_with(fn: Callable, *args, **kwargs):
    """Call a plugin with only the keyword arguments its signature accepts."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn(*args, **kwargs)
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return fn(*args, **kwargs)
    return fn(*args, **{k: v for k, v in kwargs.items() if k in params})


def _serendipity_features() -> dict:
    from . import serendipity_adapter as SA

    try:
        return SA.features()
    except Exception:
        return {"connections": False, "reveal": False, "verdicts": False}


# ---- the service ------------------------------------------------------------------------------------

class Service:
    """Everything a served call can do with one index. Thread-safe; one per process."""

    def __init__(self, index, *, interface: str = "http", lab_dir: Path | None = None,
                 dense_loader: Callable[[], None] | None = None, default_budget_ms: int = B.DEFAULT_BUDGET_MS,
                 workers: int = 4, querylog: QueryLog | None = None) -> None:
        self.index = index
        self.interface = interface
        self.lab_dir = Path(lab_dir) if lab_dir else None
        self.default_budget_ms = default_budget_ms
        self.log = querylog or QueryLog.for_index(index)
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sidelight-stage")
        self._position = index.corpus.position
        self._stats: dict | None = None
        self._dense_loader = dense_loader
        self._dense_state = "absent" if index.dense is None else "not-started"
        self._dense_error: str | None = None
        self._dense_ms: float | None = None
        self._lock = threading.Lock()
        self.started = time.time()

    # -- dense model readiness -------------------------------------------------------------------------
    def start(self) -> "Service":
        """Start loading the dense query model in the background (no-op without vectors)."""
        with self._lock:
            if self._dense_state != "not-started":
                return self
            self._dense_state = "loading"
        threading.Thread(target=self._load_dense, name="sidelight-dense-load", daemon=True).start()
        return self

    def _load_dense(self) -> None:
        t = time.perf_counter()
        try:
            if self._dense_loader is not None:
                self._dense_loader()
            else:
                self.index.dense.embedder()
                self.index.dense.encode_query("warm up")
        except Exception as exc:  # reported by /health and as a labelled fallback, never raised at callers
            self._dense_error = f"{type(exc).__name__}: {exc}"
            self._dense_state = "failed"
        else:
            self._dense_state = "ready"
        self._dense_ms = (time.perf_counter() - t) * 1000.0

    @property
    def dense_ready(self) -> bool:
        return self._dense_state == "ready"

    def wait_dense(self, timeout: float = 60.0) -> bool:
        end = time.monotonic() + timeout
        while self._dense_state in ("loading",) and time.monotonic() < end:
            time.sleep(0.02)
        return self.dense_ready

    def _dense_skip_reason(self) -> str | None:
        return {"absent": B.NO_VECTORS, "not-started": B.MODEL_LOADING, "loading": B.MODEL_LOADING,
                "failed": B.MODEL_FAILED}.get(self._dense_state)

    # -- logging wrapper -------------------------------------------------------------------------------
    def _logged(self, operation: str, query: str | None, fn: Callable[[], dict]) -> dict:
        t = time.perf_counter()
        try:
            out = fn()
        except ApiError as exc:
            self._append(operation, query, status=exc.status, error=f"{exc.code}: {exc.message}", t=t)
            raise
        except SidelightError as exc:
            err = ApiError(400, "bad_input", str(exc))
            self._append(operation, query, status=400, error=f"bad_input: {exc}", t=t)
            raise err from exc
        except Exception as exc:
            self._append(operation, query, status=500, error=f"{type(exc).__name__}: {exc}", t=t)
            raise
        self._append(operation, query, lanes=out.pop("_log_lanes", []), timings=out.get("timings_ms", {}),
                     fallback=out.get("fallback"), partial=bool(out.get("partial")), status=200, t=t)
        return out

    def _append(self, operation, query, lanes=None, timings=None, fallback=None, partial=False, status=200,
                error=None, t=0.0) -> None:
        try:
            self.log.append(self.interface, operation, query, lanes, timings, fallback, partial, status, error,
                            total_ms=(time.perf_counter() - t) * 1000.0)
        except Exception:  # the log must never take an answer down with it
            pass

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
        dense = {"present": idx.dense is not None, "model_state": self._dense_state,
                 "model_ready": self.dense_ready}
        if idx.dense is not None:
            dense["model"] = idx.dense.identity.get("name", idx.dense.spec)
        if self._dense_error:
            dense["error"] = self._dense_error
        if self._dense_ms is not None:
            dense["load_ms"] = round(self._dense_ms, 1)
        from . import serendipity_adapter as SA

        try:
            cert = SA.certificate_status(self)
        except Exception as exc:  # a half-built lane must not take /health down
            cert = {"status": "error", "reason": f"{type(exc).__name__}: {exc}"}
        features = self.features()
        status = "ok" if self._dense_state in ("ready", "absent") else (
            "degraded" if self._dense_state == "failed" else "starting")
        return {
            "status": status, "ready": True,
            "index": {"loaded": True, "path": str(idx.path) if idx.path else None, "corpus": idx.corpus.name,
                      "records": len(idx.corpus), "edges": len(idx.corpus.edges)},
            "dense": dense, "certificate": cert, "features": features,
            "state": str(idx.state.path), "uptime_s": round(time.time() - self.started, 1),
            "lab_report": self._report_path() is not None,
            **({"plugin_errors": dict(PLUGIN_ERRORS)} if PLUGIN_ERRORS else {}),
        }

    def features(self) -> dict:
        return {
            "floor": _plugin("sidelight.lanes.floor", "build_floor") is not None,
            **_serendipity_features(),
        }

    # -- search by method --------------------------------------------------------------------------------
    def methods(self) -> dict:
        from ..lanes.methods import available_methods

        return available_methods()

    def search(self, query: Any, method: Any = "bm25", k: Any = 10, budget_ms: Any = None) -> dict:
        return self._logged("search", query if isinstance(query, str) else None,
                            lambda: self._search(query, method, k, budget_ms))

    def _search(self, query, method, k, budget_ms) -> dict:
        from ..lanes.methods import get_method

        q = check_query(query)
        k = check_int(k, "k", 1, MAX_K, 10)
        b = self._budget(budget_ms)
        method = method or "bm25"
        methods = self.methods()
        if not isinstance(method, str) or method not in methods:
            raise ApiError(400, "unknown_method", f"unknown method {method!r}", available=sorted(methods))
        needs_dense = method in DENSE_METHODS or "dense" in method
        if needs_dense and self.index.dense is None:
            raise ApiError(422, "method_unavailable", f"method {method!r} needs dense vectors and this index has "
                           "none; rebuild it with `sidelight index SOURCE --dense minilm`, or use a lexical method")
        used = method
        ranking = None
        if needs_dense and not self.dense_ready:
            b.skip(method, self._dense_skip_reason() or B.MODEL_LOADING, fallback=B.LEXICAL_ONLY)
            used = "bm25"
        elif method != "bm25":  # BM25 is the floor of every answer: never cut, always run here
            try:
                ranking = b.run(self.pool, method, lambda: get_method(method).rank(self.index, q, k),
                                fallback=B.BM25)
            except B.StageCut:
                used = "bm25"
        if ranking is None:
            ranking = b.timed("bm25", lambda: get_method("bm25").rank(self.index, q, k))
        hits = [h.__dict__ for h in self.index.hits(ranking)]
        out = {"query": q, "method": method, "method_used": used, "k": k, "hits": hits,
               "note": ("Scores compare only within this method. A method search stores no trace; use "
                        "/api/channels for lanes with trace ids that feedback can credit.")}
        out["_log_lanes"] = [{"channel": used, "hits": len(hits)}]
        return self._finish(out, b)

    # -- lanes ----------------------------------------------------------------------------------------
    def channels(self, query: Any, limit: Any = 10, budget_ms: Any = None, dense: Any = None) -> dict:
        return self._logged("channels", query if isinstance(query, str) else None,
                            lambda: self._channels(query, limit, budget_ms, dense))

    def _channels(self, query, limit, budget_ms, dense) -> dict:
        q = check_query(query)
        limit = check_int(limit, "limit", 1, MAX_LIMIT, 10)
        b = self._budget(budget_ms)
        idx = self.index
        lexical = b.timed("lexical", lambda: lexical_lane(idx, q, limit))
        dense_res: LaneResult | None = None
        cos = None
        missing = []
        want_dense = dense is not False and dense != "false"
        if not want_dense:
            b.skip("dense", "left out by the caller")
        elif idx.dense is None:
            b.skip("dense", B.NO_VECTORS)
        elif not self.dense_ready:
            b.skip("dense", self._dense_skip_reason() or B.MODEL_LOADING, fallback=B.LEXICAL_ONLY)
            missing.append({"channel": "dense", "reason": self._dense_skip_reason()})
        else:
            try:
                # keep a little time for the relation lane, which is cheap
                cos = b.run(self.pool, "dense", lambda: idx.dense.scores(q),
                            reserve_s=min(0.05, b.remaining_s() / 4), fallback=B.LEXICAL_ONLY)
                dense_res = dense_lane(idx, q, limit, cos)
            except B.StageCut:
                missing.append({"channel": "dense", "reason": b.stages[-1]["reason"]})
        relation: LaneResult | None = None
        try:
            relation = b.run(self.pool, "relation",
                             lambda: relation_lane(idx, q, limit, RELATION_DEFAULTS["n_seeds"],
                                                   RELATION_DEFAULTS["hops"], RELATION_DEFAULTS["decay"],
                                                   use_dense=cos is not None, dense_scores=cos))
        except B.StageCut:
            missing.append({"channel": "relation", "reason": b.stages[-1]["reason"]})
        lanes = [lane for lane in (lexical, dense_res, relation) if lane is not None]
        counts: dict[str, int] = {}
        for lane in lanes:
            for i in set(lane.ids):
                counts[i] = counts.get(i, 0) + 1
        out: dict = {"query": q, "lexical": lexical.to_dict()}
        if dense_res is not None:
            out["dense"] = dense_res.to_dict()
        out["relation"] = relation.to_dict() if relation is not None else None
        out["agreement_node_ids"] = sorted(i for i, c in counts.items() if c >= 2)
        out["missing_lanes"] = missing
        out["descriptions"] = {k: v for k, v in LANE_DESCRIPTIONS.items() if k != "dense" or dense_res is not None}
        out["_log_lanes"] = [{"channel": lane.channel, "trace_id": lane.trace_id, "hits": len(lane.hits)}
                             for lane in lanes]
        return self._finish(out, b)

    # -- feedback and traces ----------------------------------------------------------------------------
    def feedback(self, trace_id: Any, node_id: Any) -> dict:
        return self._logged("feedback", trace_id if isinstance(trace_id, str) else None,
                            lambda: self._feedback(trace_id, node_id))

    def _get_trace(self, trace_id: str):
        try:
            return self.index.state.get_trace(trace_id)
        except InputError:
            raise ApiError(404, "unknown_trace", f"unknown trace id {trace_id!r}: feedback must name a trace id "
                           "returned by a lane of a search") from None

    def _feedback(self, trace_id, node_id) -> dict:
        trace_id, node_id = check_trace_id(trace_id), check_node_id(node_id)
        trace = self._get_trace(trace_id)
        if trace.hit(node_id) is None:
            raise ApiError(422, "node_not_in_trace", f"node {node_id!r} is not a hit of trace {trace_id!r} "
                           f"({trace.channel} lane); credit a node through the trace id of the lane that returned it",
                           channel=trace.channel)
        t = time.perf_counter()
        res = self.index.state.record_success(trace_id, node_id)
        ms = (time.perf_counter() - t) * 1000.0
        changes = [{"source": c.source_id, "target": c.target_id, "type": c.type, "base_weight": c.base_weight,
                    "old_weight": c.base_weight + c.delta_before, "new_weight": c.weight_after}
                   for c in res.changed_edges]
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
        overlay = self.index.state.overlay()
        g, pos = self.index.graph, self._position
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
                row.update(exists=True, base_weight=base, delta=delta,
                           weight=float(min(max(base + delta, 0.0), CAP_FACTOR * base)))
            out.append(row)
        return {"edges": out}

    # -- the floor and the serendipity lane (plug-ins) ------------------------------------------------
    def floor(self, query: Any, n: Any = None, budget_ms: Any = None) -> dict:
        return self._logged("floor", query if isinstance(query, str) else None,
                            lambda: self._floor(query, n, budget_ms))

    def _floor(self, query, n, budget_ms) -> dict:
        fn = _plugin("sidelight.lanes.floor", "build_floor")
        if fn is None:
            raise not_available("the floor", "sidelight.lanes.floor.build_floor")
        q = check_query(query)
        n = check_int(n, "n", 1, MAX_K, 28)
        b = self._budget(budget_ms)
        if self.index.dense is None:
            raise ApiError(422, "method_unavailable", "the floor needs dense vectors and this index has none")
        if not self.dense_ready:
            b.skip("floor", self._dense_skip_reason() or B.MODEL_LOADING, fallback=B.LEXICAL_ONLY)
            from ..lanes.methods import get_method

            ranking = b.timed("bm25", lambda: get_method("bm25").rank(self.index, q, n))
            out = {"query": q, "floor": None, "hits": [h.__dict__ for h in self.index.hits(ranking)],
                   "_log_lanes": [{"channel": "bm25", "hits": len(ranking.positions)}]}
            return self._finish(out, b)
        t = time.perf_counter()
        fl = _call_with(fn, self.index, q, n=n, deadline_s=b.remaining_s())
        data = _plain(fl)
        b.done("floor", (time.perf_counter() - t) * 1000.0)
        if getattr(fl, "partial", False):
            b.partial = True
        titles = self.index.corpus.records
        for h in data.get("hits", []) if isinstance(data, dict) else []:
            p = self._position.get(h.get("id"))
            if p is not None:
                h.setdefault("title", titles[p].title)
        out = {"query": q, "floor": data, "_log_lanes": [{"channel": "floor", "hits": len(data.get("hits", []))}]}
        return self._finish(out, b)

    def connections(self, query: Any, dial: Any = 3, budget_ms: Any = None, session_id: Any = None) -> dict:
        return self._logged("connections", query if isinstance(query, str) else None,
                            lambda: self._connections(query, dial, budget_ms, session_id))

    def _connections(self, query, dial, budget_ms, session_id) -> dict:
        from . import serendipity_adapter as SA

        q = check_query(query)
        dial = check_int(dial, "dial", 0, MAX_DIAL, 3)
        session = "default" if session_id in (None, "") else check_node_id(session_id)
        b = self._budget(budget_ms)
        SA.lane(self)  # 501 before any work when the lane or its data is missing
        try:
            res = b.run(self.pool, "connections", lambda: SA.connections(self, q, dial, b.remaining_s(), session))
        except B.StageCut:
            out = {"query": q, "dial": dial, "connections": None,
                   "missing_lanes": [{"channel": "connections", "reason": b.stages[-1]["reason"]}],
                   "_log_lanes": [{"channel": "connections", "trace_id": None}]}
            return self._finish(out, b)
        if res.get("partial"):
            b.partial = True
        out = {"query": q, "dial": dial, "connections": _plain(res),
               "note": ("Seated connections are mixed into the floor unlabeled; the panel is withheld until you "
                        "POST /api/reveal with this trace id and the SHA-256 of your finished answer."),
               "_log_lanes": [{"channel": "connections", "trace_id": res.get("trace_id"),
                               "hits": len(res.get("passages", []))}]}
        return self._finish(out, b)

    def reveal(self, trace_id: Any, answer_sha256: Any) -> dict:
        return self._logged("reveal", trace_id if isinstance(trace_id, str) else None,
                            lambda: self._reveal(trace_id, answer_sha256))

    def _reveal(self, trace_id, answer_sha256) -> dict:
        from . import serendipity_adapter as SA

        trace_id = check_trace_id(trace_id)
        if not isinstance(answer_sha256, str) or not SHA256.match(answer_sha256.strip().lower()):
            raise ApiError(400, "bad_answer_sha256", "answer_sha256 must be the 64-hex-digit SHA-256 of your "
                           "finished answer (hash it before asking for the reveal)")
        res = SA.reveal(self, trace_id, answer_sha256.strip().lower())
        return {"trace_id": trace_id, "reveal": _plain(res),
                "_log_lanes": [{"channel": "reveal", "trace_id": trace_id}]}

    def verdict(self, a_id: Any, b_id: Any, marker: Any, verdict: Any, who: Any, note: Any = None,
                trace_id: Any = None) -> dict:
        return self._logged("verdict", trace_id if isinstance(trace_id, str) else None,
                            lambda: self._verdict(a_id, b_id, marker, verdict, who, note, trace_id))

    def _verdict(self, a_id, b_id, marker, verdict, who, note, trace_id) -> dict:
        from . import serendipity_adapter as SA

        a_id, b_id = check_node_id(a_id), check_node_id(b_id)
        for rid in (a_id, b_id):
            if rid not in self._position:
                raise ApiError(404, "unknown_node", f"no record {rid!r} in this index")
        marker = check_int(marker, "marker", 0, 10_000_000)
        allowed = SA.verdict_values()
        if not isinstance(verdict, str) or verdict.strip().lower() not in allowed:
            raise ApiError(400, "bad_verdict", f"verdict must be one of {', '.join(allowed)}, got {verdict!r}")
        if not isinstance(who, str) or not who.strip() or len(who) > 200:
            raise ApiError(400, "bad_who", "who must name the person giving the verdict (1..200 characters)")
        if note is not None and (not isinstance(note, str) or len(note) > 2000):
            raise ApiError(400, "bad_note", "note must be a string of at most 2000 characters")
        if trace_id is not None:
            trace_id = check_trace_id(trace_id)
        res = SA.record_verdict(self, a_id, b_id, marker, verdict.strip().lower(), who.strip(), note, trace_id)
        return {"verdict": _plain(res), "note": "a human verdict; it is kept apart from the statistical certificate",
                "_log_lanes": [{"channel": "verdict", "trace_id": trace_id}]}

    # -- corpus view, lab report, log -----------------------------------------------------------------
    def stats(self) -> dict:
        if self._stats is None:
            from ..corpus.stats import graph_stats, stats_rows, undirected_pairs

            st = graph_stats(self.index.corpus)
            n = len(self.index.corpus)
            pairs = undirected_pairs(self.index.corpus)
            degree = np.bincount(pairs.ravel(), minlength=n) if n else np.zeros(0, dtype=np.int64)
            bins, lo = [], 0
            edges_ = [0, 1, 2, 3, 5, 9, 17, 33, 65, 129, 257, 513, 1025]
            for i, lo in enumerate(edges_):
                hi = edges_[i + 1] - 1 if i + 1 < len(edges_) else None
                cnt = int(((degree >= lo) & (degree <= hi)).sum()) if hi is not None else int((degree >= lo).sum())
                label = str(lo) if hi == lo else (f"{lo}-{hi}" if hi is not None else f"{lo}+")
                bins.append({"label": label, "lo": lo, "hi": hi, "count": cnt})
            while len(bins) > 1 and bins[-1]["count"] == 0:
                bins.pop()
            types: dict[str, int] = {}
            for e in self.index.corpus.edges:
                types[e.type] = types.get(e.type, 0) + 1
            self._stats = {"corpus": self.index.corpus.name, "stats": dataclasses.asdict(st),
                           "rows": [list(r) for r in stats_rows(st)], "degree_histogram": bins,
                           "edge_types": dict(sorted(types.items(), key=lambda kv: -kv[1]))}
        return self._stats

    def _report_path(self) -> Path | None:
        if self.lab_dir is None or not self.lab_dir.exists():
            return None
        found = [p for p in self.lab_dir.rglob("report.html") if p.is_file()]
        return max(found, key=lambda p: p.stat().st_mtime) if found else None

    def report(self) -> dict:
        p = self._report_path()
        if p is None:
            why = ("no run dir given (start with --lab DIR)" if self.lab_dir is None
                   else f"no report.html under {self.lab_dir} (run `sidelight lab report DIR`)")
            return {"available": False, "reason": why}
        md = p.with_name("report.md")
        return {"available": True, "path": str(p), "modified": time.strftime(
                    "%Y-%m-%dT%H:%M:%SZ", time.gmtime(p.stat().st_mtime)),
                "markdown": md.read_text(encoding="utf-8")[:20_000] if md.exists() else None, "url": "/lab/report"}

    def report_html(self) -> str | None:
        p = self._report_path()
        return p.read_text(encoding="utf-8") if p is not None else None

    def querylog(self, limit: Any = 50) -> dict:
        limit = check_int(limit, "limit", 1, 10_000, 50)
        return {"entries": self.log.entries(limit), "total": self.log.count()}

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
