"""Serendipity bench: wall time and peak memory of the whole certificate, and how they grow with corpus size.

For each data set (FOLDOC, SciFact; WordNet nouns with ``--datasets wordnet``) the script
1. builds (or reuses) a lexical index at ``cache_dir()/indexes/<name>-serendipity`` (with ``--sample F``
   a seeded F share of the records, ``<name>-serendipity-sF``) and runs the same pipeline as
   ``sidelight certify`` on it (chunk vectors cached under ``cache_dir()/serendipity``), reporting the
   certificate and the chunk-encoding time of the first run;
2. growth: for each ``--fractions`` share (default 0.25 0.5 1.0) of the records (seeded subset; their
   chunks and cached vectors), a fresh single-thread child process trains the
   SAE and runs the certificate (candidates, calibration and placebo corpora), reporting seconds and
   peak resident memory (VmHWM).

Usefulness of the certified pairs (held-out links, co-relevance, seated passages) is
`bench/certify_useful.py`.

    .venv/bin/python bench/certify.py --json bench/results/certify.json [--datasets foldoc] [--sample 0.5]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from _common import peak_mb, print_table, run_child, write_json  # noqa: E402


def index_for(name: str, sample: float) -> Path:
    from sidelight.config import cache_dir
    from sidelight.corpus.model import Corpus
    from sidelight.corpus.sources import load_source
    from sidelight.index import Index
    from sidelight.index.store import is_index_folder

    suffix = "" if sample >= 1 else f"-s{sample:g}"
    out = cache_dir() / "indexes" / f"{name}-serendipity{suffix}"
    if not is_index_folder(out):
        c = load_source(name)
        if sample < 1:
            rng = np.random.default_rng(20240611)
            keep = set(np.sort(rng.permutation(len(c))[: int(sample * len(c))]).tolist())
            recs = [r for i, r in enumerate(c.records) if i in keep]
            ids = {r.id for r in recs}
            c = Corpus(c.name, recs, [e for e in c.edges if e.source in ids and e.target in ids], c.title_weight)
        Index.build(c, progress=False).save(out)
    return out


def config(args):
    from sidelight.serendipity.certify import CertConfig
    from sidelight.serendipity.sae import SAEConfig
    from sidelight.serendipity.store import SerendipityConfig

    return SerendipityConfig(sae=SAEConfig(width=args.width, k=args.k, epochs=args.epochs, seed=args.seed),
                             cert=CertConfig(placebo_draws=args.placebo_draws))


def child(args) -> dict:
    """One growth point: SAE + certificate on a seeded share of the records."""
    from sidelight.index import Index
    from sidelight.serendipity.certify import run_certificate, word_tokens
    from sidelight.serendipity.chunks import record_text
    from sidelight.serendipity.sae import top_k_codes, train_sae
    from sidelight.serendipity.store import Serendipity

    cfg = config(args)
    index = Index.load(args.index)
    ser = Serendipity(index, cfg)
    ch = ser.ensure_chunks()
    n = len(index.corpus)
    keep = np.sort(np.random.default_rng(7).permutation(n)[: max(2, int(round(args.fraction * n)))])
    remap = np.full(n, -1, np.int64)
    remap[keep] = np.arange(len(keep))
    mask = remap[np.asarray(ch.record)] >= 0
    cr = remap[np.asarray(ch.record)[mask]]
    x = np.asarray(ch.vectors, np.float32)[mask]
    t0 = time.perf_counter()
    sae = train_sae(x, cfg.sae)
    codes = sae.encode(x)
    t_sae = time.perf_counter() - t0
    from scipy import sparse as sp

    P = sp.csr_matrix((np.ones(len(cr)), (cr, np.arange(len(cr)))), shape=(len(keep), len(cr)))
    vec = np.asarray(P @ x.astype(np.float64), np.float32)
    vec /= np.maximum(np.linalg.norm(vec, axis=1, keepdims=True), 1e-12)
    if index.dense is not None:
        vec = np.asarray(index.dense.vectors, np.float32)[keep]
    adj = index.graph.undirected()[keep][:, keep] if index.graph.n_edges else None
    recs = index.corpus.records
    res = {k: (codes if k >= cfg.sae.k else top_k_codes(codes, k)) for k in cfg.ks()}
    t1 = time.perf_counter()
    cert = run_certificate(cr, len(keep), codes, vec, adj, lambda r: word_tokens(record_text(recs[keep[r]])), res, cfg.cert)
    t_cert = time.perf_counter() - t1
    s = cert.summary
    return {"fraction": args.fraction, "records": int(len(keep)), "chunks": int(len(cr)),
            "sae_seconds": round(t_sae, 2), "fve": round(sae.stats["fve"], 4), "dead": sae.stats["dead"],
            "certificate_seconds": round(t_cert, 2), "certificate_split": s["seconds"],
            "candidates": s["candidates"], "target_passes": s["target_passes"], "placebo_passes": s["placebo_passes"],
            "placebo_mean": s["placebo_mean"], "placebo_target_ratio": s["placebo_target_ratio"],
            "placebo_target_ratio_ci": s["placebo_target_ratio_ci"], "verdict": s["verdict"],
            "peak_mb": round(peak_mb(), 1)}


def queries_for(name: str, limit: int) -> list[str]:
    from sidelight.config import dataset_path

    if name == "foldoc":
        path = Path(__file__).resolve().parent.parent / "benchmarks" / "foldoc-concepts-v1.jsonl"
        qs = [json.loads(line)["query"] for line in path.read_text().splitlines() if line.strip()]
    else:
        path = dataset_path(name) / "queries.jsonl"
        qs = [json.loads(line)["text"] for line in path.read_text().splitlines() if line.strip()]
    return qs[:limit]


def main() -> int:
    from sidelight.serendipity.sae import SAEConfig

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", type=Path)
    p.add_argument("--datasets", nargs="+", default=["foldoc", "scifact"])
    p.add_argument("--sample", type=float, default=1.0, help="share of each corpus indexed (chunk encoding is the cost)")
    p.add_argument("--fractions", nargs="*", type=float, default=[0.25, 0.5, 1.0])
    p.add_argument("--width", type=int, default=SAEConfig().width)
    p.add_argument("-k", type=int, default=32)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--seed", type=int, default=17)
    p.add_argument("--placebo-draws", type=int, default=5)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--index", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--fraction", type=float, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        print(json.dumps(child(args)))
        return 0
    from sidelight.index import Index
    from sidelight.serendipity.store import Serendipity

    out = {"settings": {k: v for k, v in vars(args).items() if k not in ("child", "index", "fraction", "json")},
           "datasets": {}}
    for name in args.datasets:
        path = index_for(name, args.sample)
        t0 = time.perf_counter()
        ser = Serendipity(Index.load(path), config(args)).ensure(progress=True)
        build = round(time.perf_counter() - t0, 1)
        s = ser.certificate.summary
        entry = {"index": str(path), "sample": args.sample, "pipeline_seconds_this_run": build,
                 "chunks": ser.meta["chunks"]["chunks"], "chunk_encode_seconds_first_run": ser.meta["chunks"].get("seconds"),
                 "sae": ser.meta["sae"]["stats"], "certificate": {k: s[k] for k in (
                     "records", "population", "candidates", "target_passes", "placebo_passes", "placebo_mean",
                     "placebo_target_ratio", "placebo_target_ratio_ci", "rule",
                     "verdict", "graph", "seconds", "target_reasons")}}
        growth = []
        for f in args.fractions:
            cargs = ["--index", str(path), "--fraction", str(f), "--width", str(args.width), "-k", str(args.k),
                     "--epochs", str(args.epochs), "--seed", str(args.seed), "--placebo-draws", str(args.placebo_draws)]
            growth.append(run_child(__file__, cargs, timeout=3600))
            print(f"{name} {f:g}: {growth[-1]}", file=sys.stderr)
        entry["growth"] = growth
        out["datasets"][name] = entry
        print(f"\n{name} (sample {args.sample:g}): certificate {s['verdict'].upper()}, {s['candidates']} candidates, "
              f"{s['target_passes']} target passes vs placebo mean {s['placebo_mean']:.1f} "
              f"(ratio {s['placebo_target_ratio']}, 95% interval {s['placebo_target_ratio_ci']})")
        print_table(["share", "records", "chunks", "SAE s", "FVE", "cert s", "total s", "peak MB", "candidates",
                     "passes", "placebo", "verdict"],
                    [[g["fraction"], g["records"], g["chunks"], g["sae_seconds"], g["fve"], g["certificate_seconds"],
                      round(g["sae_seconds"] + g["certificate_seconds"], 1), g["peak_mb"], g["candidates"],
                      g["target_passes"], g["placebo_mean"], g["verdict"]] for g in growth])
    if args.json:
        write_json(args.json, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
