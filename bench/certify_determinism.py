"""Is SciFact's certificate the same on every run? Two fresh certify runs of the demo's index, compared.

The index is `make demo`'s (SciFact, BM25 + MiniLM, `.cache/indexes/scifact-minilm`; built here when
missing, as the demo builds it). Each run is a fresh child process with its own hash seed and an
empty chunk-vector cache, and certifies from scratch (`sidelight certify INDEX --rebuild`: chunks
encoded again, the SAE trained again, the certificate run again). The script prints, and writes
with `--json`, each run's digests (chunk vectors, SAE weights, codes, marker labels, certified
pairs) and figures, the demo's certificate line, and whether the runs agree.

    .venv/bin/python bench/certify_determinism.py --json bench/results/certify-determinism.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import print_table, write_json  # noqa: E402

DIGESTS = ("chunk_vectors", "sae", "codes", "labels", "pairs")


def demo_index() -> Path:
    from sidelight.config import dataset_path
    from sidelight.corpus.beir import load_beir_corpus
    from sidelight.demo import cached_index

    return Path(cached_index(load_beir_corpus(dataset_path("scifact")), "minilm", dense="minilm").path)


def demo_line(s: dict) -> str:
    """The certificate line `make demo` prints (sidelight/demo.py)."""
    ratio, ci = s["placebo_target_ratio"], s["placebo_target_ratio_ci"]
    return (f"certificate {s['verdict'].upper()}: {s['target_passes']} certified pairs of {s['candidates']:,} "
            f"candidates; placebo mean {s['placebo_mean']:.1f}"
            + (f" = {ratio:.3f} x target (95% interval {ci[0]:.3f}-{ci[1]:.3f})" if ratio is not None else ""))


def child(path: str) -> None:
    import numpy as np

    from sidelight.index import Index
    from sidelight.serendipity.store import Serendipity
    from sidelight.store.lock import writer_lock

    index = Index.load(path)
    with writer_lock(index.path):
        ser = Serendipity(index).ensure(rebuild=True)
    sha = lambda b: hashlib.sha256(b).hexdigest()  # noqa: E731
    c, pairs, s = ser.codes, ser.certificate.pairs, ser.certificate.summary
    out = {"chunk_vectors": sha(np.ascontiguousarray(ser.chunks.vectors, np.float32).tobytes()),
           "sae": ser.sae.sha256(),
           "codes": sha(c.indptr.astype(np.int64).tobytes() + c.indices.astype(np.int64).tobytes() + c.data.tobytes()),
           "labels": sha(json.dumps(ser.labels, sort_keys=True).encode()),
           "pairs": sha(b"".join(np.ascontiguousarray(pairs[k]).tobytes() for k in sorted(pairs))),
           "summary": {k: s[k] for k in ("verdict", "target_passes", "candidates", "placebo_passes", "placebo_mean",
                                         "placebo_target_ratio", "placebo_target_ratio_ci", "chunks", "markers")},
           "sae_stats": {k: ser.meta["sae"]["stats"].get(k) for k in ("fve", "dead", "train_seconds")},
           "blas": ser.meta["sae"].get("blas"), "first_pair": None}
    if len(pairs["a"]):
        i = int(np.argmax(pairs["evidence_rel"]))
        out["first_pair"] = [str(index.ids[int(pairs["a"][i])]), str(index.ids[int(pairs["b"][i])]),
                             ser.label(int(pairs["marker"][i]))]
    out["demo_line"] = demo_line(s)
    print(json.dumps(out))


def run(path: Path, n: int) -> list[dict]:
    runs = []
    for r in range(n):
        with tempfile.TemporaryDirectory(prefix="certify-det-") as cache:
            env = {**os.environ, "PYTHONHASHSEED": str(101 + r), "SIDELIGHT_CACHE": cache}
            proc = subprocess.run([sys.executable, __file__, "--child", str(path)], env=env, capture_output=True,
                                  text=True, timeout=7200)
        if proc.returncode != 0:
            raise RuntimeError(f"run {r + 1} failed:\n{proc.stderr[-3000:]}")
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        print(f"run {r + 1}: {runs[-1]['demo_line']}", flush=True)
    return runs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--index", help="index folder (default: make demo's SciFact index, built when missing)")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--json", help="write the result here")
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return 0
    path = Path(args.index) if args.index else demo_index()
    runs = run(path, args.runs)
    same = {k: len({r[k] for r in runs}) == 1 for k in DIGESTS}
    same["summary"] = len({json.dumps(r["summary"], sort_keys=True) for r in runs}) == 1
    print_table(["digest"] + [f"run {i + 1}" for i in range(len(runs))] + ["equal"],
                [[k] + [r[k][:16] for r in runs] + [same[k]] for k in DIGESTS]
                + [["verdict, passes, candidates"] + [f"{r['summary']['verdict']} {r['summary']['target_passes']} "
                                                     f"{r['summary']['candidates']:,}" for r in runs] + [same["summary"]]])
    result = {"index": str(path), "runs": runs, "equal": same, "identical": all(same.values())}
    print("identical on every run" if result["identical"] else "RUNS DIFFER")
    if args.json:
        write_json(args.json, result)
    return 0 if result["identical"] else 1


if __name__ == "__main__":
    sys.exit(main())
