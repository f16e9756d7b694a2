"""Query timing for BEIR protocols: three rotated passes per query, setup costs kept apart.

For query i and pass j the methods run in the order rotated by i + j, so no method is always
first (cold caches) or last. Times cover text processing, scoring the whole corpus and
sorting (what `Method.rank` does); they exclude index building and corpus encoding, which
are reported separately as setup, and evaluation against labels.
"""

from __future__ import annotations

import statistics
import time

from ..lanes.methods import get_method


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
