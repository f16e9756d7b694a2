"""Shared bench helpers: single-thread child processes, their peak memory, timing, tables, JSON."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

# One thread for every library, set before numpy/numba load in the child.
SINGLE_THREAD = {v: "1" for v in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                  "OPENBLAS_NUM_THREADS", "RAYON_NUM_THREADS", "NUMEXPR_NUM_THREADS")}

now = time.perf_counter


def peak_mb() -> float:
    """This process's peak resident memory (VmHWM) in MB."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_child(script: str, args: list[str], timeout: float = 900) -> dict:
    """Run `script --child ARGS` in a fresh single-thread interpreter; its last stdout line is JSON."""
    env = {**os.environ, **SINGLE_THREAD, "PYTHONHASHSEED": "0"}
    proc = subprocess.run([sys.executable, script, "--child", *args], env=env, capture_output=True,
                          text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"child {' '.join(args)} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def print_table(headers: list[str], rows: list[list], out=sys.stdout) -> None:
    """A plain fixed-width table: first column left-aligned, the rest right-aligned."""
    cells = [[str(c) for c in r] for r in [headers, *rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    for n, r in enumerate(cells):
        line = "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
        print(line, file=out)
        if n == 0:
            print("  ".join("-" * w for w in widths), file=out)


def made_by() -> dict:
    """The command and commit that made a result: the script and its arguments as run, the repository's
    HEAD, and whether the tree differed from it (then the figures are not exactly that commit's)."""
    root = Path(__file__).resolve().parent.parent

    def git(*args: str) -> str | None:
        try:
            r = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        return r.stdout.strip() if r.returncode == 0 else None
    script = Path(sys.argv[0]).resolve()
    shown = script.relative_to(root).as_posix() if script.is_relative_to(root) else str(script)
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"command": " ".join([".venv/bin/python", shown, *sys.argv[1:]]), "commit": git("rev-parse", "HEAD"),
            "dirty": None if status is None else bool(status),
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


_STARTED: dict | None = None


def started() -> dict:
    """`made_by()` as it was when this script started (first call: at import), not when it wrote."""
    global _STARTED
    if _STARTED is None:
        _STARTED = made_by()
    return _STARTED


def write_json(path: str | Path, obj) -> None:
    """`obj` as JSON, with `made_by` (command, the commit and tree state the script started from,
    start time) when it is a dict without one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(obj, dict) and "made_by" not in obj:
        obj = {"made_by": started(), **obj}
    path.write_text(json.dumps(obj, indent=2, sort_keys=True) + "\n")


def cached_query_vectors(index, texts: list[str], cache: Path) -> dict:
    """Query text -> MiniLM vector, encoded once (one at a time, as `encode_query`) and cached by
    model identity and query set, so benchmarks never re-encode the same queries."""
    import hashlib

    import numpy as np

    texts = sorted(set(texts))
    key = hashlib.sha256(json.dumps([index.dense.identity, texts], sort_keys=True).encode()).hexdigest()[:16]
    path = Path(cache) / f"qvecs-{key}.npy"
    if path.is_file():
        vecs = np.load(path)
    else:
        t0 = time.time()
        vecs = index.dense.embedder().encode(texts, batch_size=1, kind="query")
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, vecs)
        print(f"encoded {len(texts)} queries in {time.time() - t0:.0f}s -> {path}", file=sys.stderr)
    return dict(zip(texts, vecs))


def use_cached_vectors(index, vectors: dict) -> None:
    """Serve known query texts from `vectors`; anything else is encoded live."""
    live = index.dense.encode_query
    index.dense.encode_query = lambda text: vectors[text] if text in vectors else live(text)


started()  # the commit and tree this script starts from


def wordnet_index():
    """The lexical `wordnet-all` index, cached under .cache/indexes/wordnet-all-lexical and rebuilt when
    WordNet changed (`bench/lookup.py` and `bench/teacher_curve.py` share it)."""
    from sidelight.config import cache_dir
    from sidelight.corpus.sources import load_source
    from sidelight.errors import IndexFormatError
    from sidelight.index import Index

    path = cache_dir() / "indexes" / "wordnet-all-lexical"
    try:
        index = Index.load(path)
        if index.corpus.content_hash() != load_source("wordnet-all").content_hash() or index.corpus.alias_weight != 1:
            raise IndexFormatError("stale")
    except IndexFormatError:
        index = Index.build(load_source("wordnet-all"), progress=False)
        index.save(path, force=True)
    return index
