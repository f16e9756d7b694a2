"""Clean shutdown of `sidelight mcp` (stdio, --http) and `sidelight serve` (issue 43 item 7).

    python bench/shutdown.py [--runs 50] [--index IDX] [--json bench/results/shutdown.json]

Each run starts the server on an index with dense vectors (a tiny vault indexed with
`--dense minilm`, built under .cache/bench-shutdown if `--index` is not given), asks one search
with the dense lane (so the ONNX session exists and has run), then stops it: SIGTERM, or for
stdio MCP also stdin closed. Counted on stderr: native aborts (`terminate called`), Python
tracebacks, and exits that are neither 0 nor the signal's.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import print_table, write_json  # noqa: E402

REPO = HERE.parent
CLI = [sys.executable, "-c", "import sys; from sidelight.cli import main; sys.argv[0] = 'sidelight'; sys.exit(main())"]
BAD = ("terminate called", "Traceback", "Aborted", "core dumped")


def vault_index(root: Path) -> Path:
    """A two-note vault indexed with MiniLM vectors (built once)."""
    idx = root / "idx"
    if not (idx / "manifest.json").exists() and not idx.exists():
        (root / "vault").mkdir(parents=True, exist_ok=True)
        (root / "vault" / "Apples.md").write_text("# Apples\n\nApples grow on trees. See [[Pears]].\n", encoding="utf-8")
        (root / "vault" / "Pears.md").write_text("# Pears\n\nPears ripen off the tree.\n", encoding="utf-8")
        subprocess.run([*CLI, "index", str(root / "vault"), "-o", str(idx), "--dense", "minilm", "-q"], check=True)
    return idx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rpc(proc, msg: dict) -> dict | None:
    proc.stdin.write((json.dumps(msg) + "\n").encode())
    proc.stdin.flush()
    if "id" not in msg:
        return None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the server closed stdout")
        reply = json.loads(line)
        if reply.get("id") == msg["id"]:
            return reply


def mcp_stdio(index: Path, stop: str, search: bool = True) -> tuple[int, str]:
    """One `sidelight mcp` over stdio: initialize, a dense search (unless not `search`: the model is
    then still loading), then SIGTERM or stdin closed."""
    p = subprocess.Popen([*CLI, "mcp", str(index)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, cwd=REPO)
    _rpc(p, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}})
    _rpc(p, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    if search:
        time.sleep(0.3)  # the model loads in the background; the search may run with or without it
        _rpc(p, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "search_channels", "arguments": {"query": "apple trees", "limit": 2}}})
    if stop == "stdin":
        p.stdin.close()
    else:
        p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60) if stop != "stdin" else (p.stdout.read(), p.stderr.read())
    p.wait(timeout=60)
    return p.returncode, err.decode("utf-8", "replace")


def http_server(index: Path, command: str) -> tuple[int, str]:
    """One `sidelight serve` (or `mcp --http`): wait for it, one search (serve), then SIGTERM."""
    port = free_port()
    args = ["serve", str(index), "--port", str(port)] if command == "serve" else ["mcp", str(index), "--http", str(port)]
    p = subprocess.Popen([*CLI, *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, cwd=REPO)
    end = time.monotonic() + 60
    while time.monotonic() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            time.sleep(0.1)
    if command == "serve":
        req = urllib.request.Request(f"http://127.0.0.1:{port}/api/channels", method="POST",
                                     data=json.dumps({"query": "apple trees", "limit": 2}).encode(),
                                     headers={"content-type": "application/json"})
        try:
            urllib.request.urlopen(req, timeout=30).read()
        except Exception:  # noqa: BLE001 - the stop is what is measured
            pass
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    return p.returncode, err.decode("utf-8", "replace")


def bad(rc: int, err: str) -> list[str]:
    """What went wrong in one stop: abort / traceback on stderr, or an unexpected exit status."""
    out = [b for b in BAD if b in err]
    if rc not in (0, -signal.SIGTERM, 128 + signal.SIGTERM):
        out.append(f"exit {rc}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--index", type=Path, default=None)
    ap.add_argument("--cases", default="", help="comma-separated substrings of the case names to run (default all)")
    ap.add_argument("--json", type=Path, default=HERE / "results" / "shutdown.json")
    args = ap.parse_args()
    index = args.index or vault_index(REPO / ".cache" / "bench-shutdown")
    cases = {"mcp stdio SIGTERM": lambda i: mcp_stdio(index, "term", search=bool(i % 2)),  # odd runs: after a search
             "mcp stdio stdin closed": lambda i: mcp_stdio(index, "stdin", search=bool(i % 2)),  # even: model loading
             "mcp --http SIGTERM": lambda i: http_server(index, "mcp"),
             "serve SIGTERM": lambda i: http_server(index, "serve")}
    if args.cases:
        cases = {k: v for k, v in cases.items() if any(c in k for c in args.cases.split(","))}
    results, rows = {}, []
    for name, run in cases.items():
        t, failures, codes = time.perf_counter(), [], {}
        for i in range(args.runs):
            rc, err = run(i)
            codes[rc] = codes.get(rc, 0) + 1
            if bad(rc, err):
                failures.append({"run": i, "exit": rc, "why": bad(rc, err), "stderr_tail": err[-600:]})
        results[name] = {"runs": args.runs, "failures": len(failures), "exit_codes": {str(k): v for k, v in codes.items()},
                         "aborts": sum("terminate called" in f["why"] for f in failures),
                         "tracebacks": sum("Traceback" in f["why"] for f in failures),
                         "examples": failures[:3], "seconds": round(time.perf_counter() - t, 1)}
        r = results[name]
        rows.append([name, r["runs"], r["aborts"], r["tracebacks"], r["failures"],
                     ", ".join(f"{k}:{v}" for k, v in r["exit_codes"].items()), r["seconds"]])
        print(f"{name}: {r['failures']} failures", file=sys.stderr)
    print_table(["case", "runs", "aborts", "tracebacks", "failures", "exit codes", "s"], rows)
    write_json(args.json, {"index": str(index), "cases": results, "pid": os.getpid()})
    return 1 if any(r["failures"] for r in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
