"""What the lab page shows besides search: corpus graph statistics and the latest lab report."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import numpy as np

from ..lab.packed import forms, read_bytes

# lower bounds of the degree histogram's bins (the last bin is open-ended)
DEGREE_BINS = (0, 1, 2, 3, 5, 9, 17, 33, 65, 129, 257, 513, 1025)


def corpus_stats(corpus) -> dict:
    """Graph statistics (as `sidelight corpus stats` prints them), degree histogram and edge-type counts."""
    from ..corpus.stats import graph_stats, stats_rows, undirected_pairs

    st = graph_stats(corpus)
    n = len(corpus)
    degree = np.bincount(undirected_pairs(corpus).ravel(), minlength=n) if n else np.zeros(0, dtype=np.int64)
    bins = []
    for lo, nxt in zip(DEGREE_BINS, DEGREE_BINS[1:] + (None,)):
        hi = None if nxt is None else nxt - 1
        count = int(((degree >= lo) & (degree <= hi)).sum()) if hi is not None else int((degree >= lo).sum())
        label = str(lo) if hi == lo else (f"{lo}-{hi}" if hi is not None else f"{lo}+")
        bins.append({"label": label, "lo": lo, "hi": hi, "count": count})
    while len(bins) > 1 and bins[-1]["count"] == 0:
        bins.pop()
    types: dict[str, int] = {}
    for e in corpus.edges:
        types[e.type] = types.get(e.type, 0) + 1
    return {"corpus": corpus.name, "stats": dataclasses.asdict(st), "rows": [list(r) for r in stats_rows(st)],
            "degree_histogram": bins, "edge_types": dict(sorted(types.items(), key=lambda kv: -kv[1]))}


def latest_report(lab_dir: Path | None) -> Path | None:
    """The newest report.html under a lab run dir, stored plain or as report.html.xz (None without one);
    read it with `report_page`."""
    if lab_dir is None or not lab_dir.exists():
        return None
    found = {p.with_name("report.html") for pattern in ("report.html", "report.html.xz")
             for p in lab_dir.rglob(pattern) if p.is_file()}
    return max(found, key=_modified) if found else None


def _modified(report: Path) -> float:
    return max(p.stat().st_mtime for p in forms(report))


def report_page(report: Path) -> str:
    """The text of the report page `report` (a run's report.html), whichever form is stored."""
    return read_bytes(report).decode("utf-8")


def report_problem(report: Path) -> str | None:
    """Why the report at `report` is not the one its run recorded (an edited number, a missing record), or None."""
    from ..lab.record import RefusedError, verify_report

    try:
        verify_report(report.parent)
    except RefusedError as exc:
        return f"the report does not match its run's record, so it is not shown: {exc}"
    return None


def report_info(lab_dir: Path | None) -> dict:
    """Where the latest report is and its markdown, or why there is none (or why it is not shown)."""
    p = latest_report(lab_dir)
    if p is None:
        why = ("no run dir given (start with --lab DIR)" if lab_dir is None
               else f"no report.html under {lab_dir} (run `sidelight lab report DIR`)")
        return {"available": False, "reason": why}
    problem = report_problem(p)
    if problem:
        return {"available": False, "reason": problem, "path": str(p)}
    md = p.with_name("report.md")
    return {"available": True, "path": str(p),
            "modified": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(_modified(p))),
            "markdown": md.read_text(encoding="utf-8")[:20_000] if md.exists() else None, "url": "/lab/report"}
