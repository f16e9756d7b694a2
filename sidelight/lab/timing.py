"""Query timing for BEIR protocols: three rotated passes per query, setup costs kept apart.

For query i and pass j the methods run in the order rotated by i + j, so no method is always
first (cold caches) or last. Times cover text processing, scoring the whole corpus and
sorting (what `Method.rank` does); they exclude index building and corpus encoding, which
are reported separately as setup, and evaluation against labels.
"""

from __future__ import annotations

import statistics
import time

from ..methods import get_method


def setup_items(setup: dict) -> list[str]:
    """Human-readable setup costs: index build, and corpus encoding as measured or "cached".

    A cached encoding states the first encoding's time with the cache key, so the cost stays
    visible without being reported as if it had been paid again."""
    out = []
    if "index_build_s" in setup:
        out.append(f"index build {setup['index_build_s']:.2f}s")
    enc = setup.get("corpus_encoding")
    if isinstance(enc, dict):
        what = f"{enc.get('n', '?'):,} records" if isinstance(enc.get("n"), int) else "records"
        if enc.get("status") == "cached":
            out.append(f"corpus encoding cached ({what}; first encoded in {enc['first_encode_s']:.1f}s; "
                       f"cache key {enc['key'][:12]})")
        else:
            out.append(f"corpus encoding {enc['encode_s']:.1f}s ({what}; now cached, key {enc['key'][:12]})")
    elif "corpus_encoding_s" in setup:
        out.append(f"corpus encoding {setup['corpus_encoding_s']:.2f}s")
    for k, v in setup.items():
        if k not in ("index_build_s", "corpus_encoding_s", "corpus_encoding") and isinstance(v, (int, float)):
            out.append(f"{k} {v:.2f}s")
    return out


def time_methods(ctx, settings, bench) -> dict:
    spec = ctx.protocol.data.get("timing", {})
    passes = int(spec.get("passes", 3))
    only = spec.get("types")  # e.g. ["sample"]: time only the sampled queries
    qids = [q for q in bench.queries if not only or bench.type[q] in only]
    methods = [(s.label, get_method(s.method, **s.params)) for s in settings]
    depth = ctx.protocol.depth
    times: dict[str, list[float]] = {lab: [] for lab, _ in methods}
    for i, q in enumerate(qids):
        text = bench.queries[q]
        for j in range(passes):
            k = (i + j) % len(methods)
            for lab, m in methods[k:] + methods[:k]:
                t = time.perf_counter()
                m.rank(ctx.index, text, depth)
                times[lab].append(time.perf_counter() - t)
    summary = {lab: {"median_ms": 1000 * statistics.median(v), "mean_ms": 1000 * statistics.fmean(v),
                     "p90_ms": 1000 * sorted(v)[int(0.9 * (len(v) - 1))], "n": len(v)}
               for lab, v in times.items() if v}
    return {"passes": passes, "n_queries": len(qids), "setup_s": ctx.setup, "summary": summary,
            "raw_s": times, "note": "rotated order per query and pass; setup (index build, corpus "
                                    "encoding) excluded from query times"}
