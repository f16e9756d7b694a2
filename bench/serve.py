"""Bounded load test of `sidelight serve` on loopback: throughput, latency percentiles, errors, partial share.

    .venv/bin/python bench/serve.py [--index DIR] [--json OUT] [--clients 20] [--requests 2000]

Starts `sidelight serve INDEX --port P` (127.0.0.1, an ephemeral port) as a child process (the
FOLDOC index is built in a temporary folder when --index is not given), waits for /health, then:

1. mixed phase: `--clients` threads share `--requests` requests over the lanes — channels (50%),
   search bm25 (20%), search tfidf (10%), feedback on a relation hit of an earlier answer (10%),
   health (10%) — with the default time budget;
2. short-budget phase: `--short-requests` channels requests with budget_ms=`--short-budget`,
   counting the responses labelled partial (the relation stage skipped or cut);
3. concurrent-add phase: `sidelight add INDEX` (`--add-records` new records, a new index generation
   that the running server follows) while a client keeps crediting relation hits; afterwards every
   acknowledged feedback (200) must be a row of INDEX/state.sqlite `successes`. It changes the index,
   so it runs by default only on the temporary FOLDOC index (`--add-records N` to run it on `--index`).

Every loop is bounded in count and by `--max-seconds`; traffic goes to 127.0.0.1 only. An error
is any non-2xx response or a failed request (goal: 0). The server keeps its own query log. Every
POST carries the server's page token (`X-Sidelight-Token`, read once from GET /api/token), as the
lab page does.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import print_table, write_json  # noqa: E402

QUERIES = ["garbage collection", "object-oriented programming language", "virtual memory paging",
           "compiler optimisation", "ethernet network protocol", "regular expression", "unix shell",
           "lisp machine", "relational database query", "operating system kernel", "functional programming",
           "hypertext markup", "byte code interpreter", "packet switching", "file transfer protocol"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(sorted_ms: list[float], q: float) -> float:
    if not sorted_ms:
        return float("nan")
    i = min(len(sorted_ms) - 1, max(0, round(q / 100 * (len(sorted_ms) - 1))))
    return sorted_ms[i]


def sidelight_command() -> list[str]:
    exe = Path(sys.executable).with_name("sidelight")
    return [str(exe)] if exe.exists() else [sys.executable, "-c", "import sys; from sidelight.cli import main; sys.exit(main())"]


def start_server(index: Path, port: int, extra: list[str] = ()) -> subprocess.Popen:
    cmd = sidelight_command()
    proc = subprocess.Popen([*cmd, "serve", str(index), "--host", "127.0.0.1", "--port", str(port), *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {proc.stderr.read()[-2000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.terminate()
    raise RuntimeError("server did not become ready in 60 s")


def page_token_headers(base: str) -> dict:
    """The header every POST needs: the server's page token (GET /api/token)."""
    t = httpx.get(f"{base}/api/token", timeout=10).json()
    return {t["header"]: t["token"]}


def run_phase(base: str, n_requests: int, clients: int, pick, max_seconds: float, headers: dict) -> dict:
    """`clients` threads pull from one counter until `n_requests` were sent or time is up."""
    lock = threading.Lock()
    state = {"next": 0}
    lat: list[float] = []
    errors: list[str] = []
    kinds: dict[str, int] = {}
    partial = {"n": 0, "of": 0}
    relation_hits: list[tuple[str, str]] = []
    stop_at = time.monotonic() + max_seconds

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        with httpx.Client(base_url=base, timeout=30, headers=headers) as client:
            while True:
                with lock:
                    if state["next"] >= n_requests or time.monotonic() > stop_at:
                        return
                    state["next"] += 1
                kind, method, path, body = pick(rng, relation_hits)
                t = time.perf_counter()
                try:
                    r = client.request(method, path, json=body)
                    ms = (time.perf_counter() - t) * 1000
                    ok = 200 <= r.status_code < 300
                    data = r.json() if ok else None
                except httpx.HTTPError as exc:
                    ms, ok, data = (time.perf_counter() - t) * 1000, False, None
                    r = exc
                with lock:
                    lat.append(ms)
                    kinds[kind] = kinds.get(kind, 0) + 1
                    if not ok:
                        errors.append(f"{kind}: {getattr(r, 'status_code', r)}")
                    if data is not None and kind.startswith("channels"):
                        partial["of"] += 1
                        partial["n"] += bool(data.get("partial"))
                        rel = data.get("relation")
                        if rel and rel["hits"] and len(relation_hits) < 5000:
                            relation_hits.append((rel["trace_id"], rng.choice(rel["hits"])["id"]))

    t0 = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    wall = time.perf_counter() - t0
    lat.sort()
    return {"requests": len(lat), "clients": clients, "seconds": round(wall, 3),
            "throughput_rps": round(len(lat) / wall, 1) if wall else None,
            "p50_ms": round(percentile(lat, 50), 2), "p95_ms": round(percentile(lat, 95), 2),
            "p99_ms": round(percentile(lat, 99), 2), "max_ms": round(lat[-1], 2) if lat else None,
            "errors": len(errors), "error_samples": errors[:5], "by_kind": kinds,
            "partial_share": round(partial["n"] / partial["of"], 4) if partial["of"] else None,
            "partial_of": partial["of"]}


def mixed_pick(rng: random.Random, relation_hits: list):
    x = rng.random()
    q = rng.choice(QUERIES)
    if x < 0.5:
        return "channels", "POST", "/api/channels", {"query": q, "limit": 10}
    if x < 0.7:
        return "search:bm25", "POST", "/api/search", {"query": q, "method": "bm25", "k": 10}
    if x < 0.8:
        return "search:tfidf", "POST", "/api/search", {"query": q, "method": "tfidf", "k": 10}
    if x < 0.9 and relation_hits:
        trace, node = rng.choice(relation_hits[-50:])  # a recent answer: inside the server's feedback window
        return "feedback", "POST", "/api/feedback", {"trace_id": trace, "node_id": node}
    return "health", "GET", "/health", None


def short_pick(budget_ms: int):
    def pick(rng: random.Random, relation_hits: list):
        return "channels:short", "POST", "/api/channels", {"query": rng.choice(QUERIES), "budget_ms": budget_ms}

    return pick


def add_phase(base: str, index: Path, headers: dict, n_records: int, min_feedback: int, max_seconds: float) -> dict:
    """Feedback posted while `sidelight add` writes a new generation; then: is every acknowledged one stored?"""
    tag = f"bench-add-{os.getpid()}-{int(time.time())}"
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", prefix="sidelight-bench-add-", delete=False) as f:
        for i in range(n_records):
            f.write(json.dumps({"id": f"{tag}-{i}", "title": f"Bench record {i}",
                                "text": f"garbage collection benchmark record {i} {QUERIES[i % len(QUERIES)]}"}) + "\n")
        records = Path(f.name)
    acked: set[tuple[str, str]] = set()
    errors: list[str] = []
    sent = during = 0
    try:
        with httpx.Client(base_url=base, timeout=30, headers=headers) as c:
            before = c.get("/health").json()["index"]["records"]
            adder = subprocess.Popen([*sidelight_command(), "add", str(index), str(records)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            stop_at, i = time.monotonic() + max_seconds, 0
            while time.monotonic() < stop_at and (adder.poll() is None or sent < min_feedback):
                running = adder.poll() is None
                i += 1
                r = c.post("/api/channels", json={"query": QUERIES[i % len(QUERIES)], "limit": 10})
                rel = r.json().get("relation") if r.status_code == 200 else None
                if r.status_code != 200:
                    errors.append(f"channels: {r.status_code}")
                if not rel or not rel["hits"]:
                    continue
                pair = (rel["trace_id"], rel["hits"][i % len(rel["hits"])]["id"])
                fb = c.post("/api/feedback", json={"trace_id": pair[0], "node_id": pair[1]})
                sent += 1
                during += running
                if fb.status_code == 200:
                    acked.add(pair)
                else:
                    errors.append(f"feedback: {fb.status_code} {fb.text[:200]}")
            try:
                add_rc = adder.wait(max(1.0, stop_at - time.monotonic()))
            except subprocess.TimeoutExpired:
                adder.kill()
                add_rc = adder.wait()
            add_err = adder.stderr.read()[-500:] if add_rc else ""
            after = c.get("/health").json()["index"]["records"]  # the server follows the new generation
    finally:
        records.unlink(missing_ok=True)
    with sqlite3.connect(index / "state.sqlite") as con:
        present = sum(con.execute("SELECT COUNT(*) FROM successes WHERE trace_id = ? AND node_id = ?", p).fetchone()[0]
                      for p in sorted(acked))
    return {"records_added": n_records, "add_exit_code": add_rc, "add_error": add_err, "records_before": before,
            "records_after": after, "feedback_sent": sent, "feedback_sent_during_add": during,
            "acknowledged": len(acked), "present": present, "errors": len(errors) + (add_rc != 0),
            "error_samples": errors[:5]}


def state_size(index: Path) -> dict:
    """What INDEX/state.sqlite holds after the load: bytes on disk (with its WAL) and rows per table."""
    files = [index / n for n in ("state.sqlite", "state.sqlite-wal")]
    with sqlite3.connect(f"{(index / 'state.sqlite').as_uri()}?mode=ro", uri=True) as con:
        rows = {t: con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("traces", "successes", "query_log")}
    sizes = [p.stat().st_size if p.exists() else 0 for p in files]
    return {"bytes": sum(sizes), "db_bytes": sizes[0], "wal_bytes": sizes[1], **rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--index", type=Path, help="an index folder (default: FOLDOC built in a temporary folder)")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--short-requests", type=int, default=500)
    ap.add_argument("--short-budget", type=int, default=5, help="budget_ms of the short-budget phase")
    ap.add_argument("--max-seconds", type=float, default=300, help="hard cap per phase")
    ap.add_argument("--add-records", type=int, default=None,
                    help="records `sidelight add` writes in the concurrent-add phase (default 200 on the temporary "
                         "FOLDOC index, 0 = skipped on --index)")
    ap.add_argument("--retain-traces", type=int, default=None,
                    help="passed to `sidelight serve --retain-traces` (default: the server's own retention)")
    ap.add_argument("--retain-window-s", type=float, default=None, help="passed to `sidelight serve`")
    ap.add_argument("--retain-every-s", type=float, default=None, help="passed to `sidelight serve`")
    args = ap.parse_args(argv)
    if not (1 <= args.clients <= 64 and 1 <= args.requests <= 20_000 and 0 <= args.short_requests <= 20_000):
        ap.error("clients 1..64, requests 1..20000, short-requests 0..20000")
    n_add = args.add_records if args.add_records is not None else (0 if args.index else 200)
    if not 0 <= n_add <= 100_000:
        ap.error("add-records 0..100000")

    tmp = None
    index = args.index
    if index is None:
        from sidelight.corpus.foldoc import load_foldoc
        from sidelight.index import Index

        tmp = tempfile.TemporaryDirectory(prefix="sidelight-bench-serve-")
        index = Path(tmp.name) / "foldoc"
        Index.build(load_foldoc(), progress=False).save(index)
    port = free_port()
    retain = [x for flag in ("traces", "window_s", "every_s") if getattr(args, f"retain_{flag}") is not None
              for x in (f"--retain-{flag.replace('_', '-')}", str(getattr(args, f"retain_{flag}")))]
    proc = start_server(index, port, retain)
    base = f"http://127.0.0.1:{port}"
    try:
        headers = page_token_headers(base)
        with httpx.Client(base_url=base, timeout=30, headers=headers) as c:  # warm up: first relation call builds caches
            for q in QUERIES[:3]:
                c.post("/api/channels", json={"query": q})
            health = c.get("/health").json()
        mixed = run_phase(base, args.requests, args.clients, mixed_pick, args.max_seconds, headers)
        short = run_phase(base, args.short_requests, args.clients, short_pick(args.short_budget), args.max_seconds,
                          headers) if args.short_requests else None
        added = add_phase(base, index, headers, n_add, min(50, args.requests), args.max_seconds) if n_add else None
        if retain:  # one more retention pass of the server's, then measure
            time.sleep(float(args.retain_every_s or 0) + 0.5)
        state = state_size(index)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        if tmp is not None:
            tmp.cleanup()

    result = {"bench": "serve", "index": health["index"], "dense": health["dense"], "cpus": os.cpu_count(),
              "server": "sidelight serve (uvicorn, 1 process) on 127.0.0.1", "mixed": mixed,
              "short_budget": None if short is None else {**short, "budget_ms": args.short_budget},
              "concurrent_add": added, "state": state, "retention": retain or "server defaults"}
    rows = [["mixed (default budget)", mixed["requests"], mixed["throughput_rps"], mixed["p50_ms"], mixed["p95_ms"],
             mixed["p99_ms"], mixed["errors"], mixed["partial_share"]]]
    if short:
        rows.append([f"channels, budget {args.short_budget} ms", short["requests"], short["throughput_rps"],
                     short["p50_ms"], short["p95_ms"], short["p99_ms"], short["errors"], short["partial_share"]])
    print_table(["phase", "requests", "req/s", "p50 ms", "p95 ms", "p99 ms", "errors", "partial share"], rows)
    print(f"mixed by kind: {json.dumps(mixed['by_kind'])}")
    if added:
        print(f"acknowledged feedback present after concurrent add: {added['present']}/{added['acknowledged']} "
              f"({added['feedback_sent_during_add']} of {added['feedback_sent']} sent while `sidelight add` ran; "
              f"records {added['records_before']} -> {added['records_after']}; add exit {added['add_exit_code']}; "
              f"errors {added['errors']})")
        for e in added["error_samples"] + ([added["add_error"]] if added["add_error"] else []):
            print(f"  {e}")
    print(f"state.sqlite after the load ({' '.join(retain) or 'default retention'}): {state['bytes'] / 1e6:.2f} MB "
          f"(file {state['db_bytes'] / 1e6:.2f} MB + WAL {state['wal_bytes'] / 1e6:.2f} MB), "
          f"{state['traces']} traces, {state['successes']} feedback rows, {state['query_log']} query-log rows")
    if args.json:
        write_json(args.json, result)
    add_ok = added is None or (added["errors"] == 0 and added["present"] == added["acknowledged"])
    return 0 if mixed["errors"] == 0 and (short is None or short["errors"] == 0) and add_ok else 1


if __name__ == "__main__":
    sys.exit(main())
