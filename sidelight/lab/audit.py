"""An independent results auditor: recompute metrics and intervals from stored ranks.

This module deliberately does NOT import `sidelight.lab.metrics`, `sidelight.lab.stats` or
any lab module that does (protocol, benchmark, analysis, runner): it reads the run folder's
JSON and the benchmark file with its own small code, recomputes every per-method metric,
the per-type tables and each contrast's bootstrap interval and sign-flip p-value, and
reports agreement with the stored result.json (plain or `.xz`), the test split's and the dev split's it was selected on
(dev rankings `dev_depth` deep: a dev metric reading deeper than they go is a problem, never recomputed
from the shorter lists; a test checks the import rule). Rankings are read
plain or compressed (`packed`, which imports no lab code either). Before it
recomputes anything it checks the run's record (`sidelight.lab.record`, which imports no lab
code either) and refuses a run whose files do not match it.

The resampling draws follow the documented protocol of the lab statistics (bootstrap:
``default_rng(seed).integers(0, n, (R, n))``, percentile interval; sign flips:
``default_rng(seed)`` in blocks of 2048 rows of ``integers(0, 2, dtype=int8) * 2 - 1``, two-sided,
+1), so agreement is exact rather than within Monte Carlo error.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from .packed import ranking_files, read_bytes
from .record import verify_run, verify_report

_TOL = 1e-9


def _load(path: Path):
    """A run's JSON file, plain or stored compressed (result.json.xz: `packed`)."""
    return json.loads(read_bytes(path).decode("utf-8"))


def _rankings(folder: Path) -> dict[str, dict[str, dict]]:
    out: dict[str, dict[str, dict]] = {}
    for p in ranking_files(folder):  # plain or compressed (`packed`, which imports no lab code)
        for line in read_bytes(p).decode("utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                out.setdefault(row["label"], {})[row["qid"]] = row
    return out


def _benchmark(freeze: dict, split: str = "test") -> tuple[dict, dict, dict]:
    """(qrels, family, type) of one split ("test" or "dev"), read straight from the frozen benchmark files."""
    proto = freeze["protocol_data"]
    base = Path(freeze["protocol_path"]).parent
    b = proto["benchmark"]
    qrels, family, qtype = {}, {}, {}
    if b["kind"] in ("concept", "collection", "describe"):
        # concept: one intended record, typed; collection (notes-v1 shape): every target document
        # relevant, the kind is the type; describe: the intended word, lower-cased, typed by its part
        # of speech. `select` keeps the rows whose fields equal its values.
        path = Path(b["path"]) if Path(b["path"]).is_absolute() else base / b["path"]
        select = b.get("select") or {}
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            o = json.loads(line)
            if o["split"] != split or not all(o.get(k) == v for k, v in select.items()):
                continue
            if b["kind"] == "concept":
                qrels[o["qid"]], qtype[o["qid"]] = {o["intended_id"]: 1.0}, o["type"]
            elif b["kind"] == "describe":
                qrels[o["qid"]], qtype[o["qid"]] = {o["word"].lower(): 1.0}, o["pos"]
            else:
                qrels[o["qid"]], qtype[o["qid"]] = {t["doc"]: 1.0 for t in o["targets"]}, o["kind"]
            family[o["qid"]] = o["family"]
        return qrels, family, qtype
    folder = base / b["folder"]
    if not folder.is_dir():
        import os

        folder = Path(os.environ.get("SIDELIGHT_DATA", Path(__file__).resolve().parents[2].parent / "shared" / "data")) / b["folder"]
    if split == "dev":  # the dev queries: those of `dev.split` that the seeded fitting sample leaves out
        import random

        dev = b.get("dev")
        if not dev:
            return {}, {}, {}
        every = _qrels(folder / "qrels" / f"{dev['split']}.tsv")
        fit = set(random.Random(int(dev["seed"])).sample(sorted(every), int(dev["n_fit"])))
        qrels = {q: r for q, r in every.items() if q not in fit and any(g > 0 for g in r.values())}
        return qrels, {q: q for q in qrels}, {q: "dev" for q in qrels}
    qrels = _qrels(folder / "qrels" / f"{b.get('split', 'test')}.tsv")
    qrels = {q: r for q, r in qrels.items() if any(g > 0 for g in r.values())}
    family = {q: q for q in qrels}
    qtype = {q: "all" for q in qrels}
    s = b.get("sample")
    if s and s.get("rule", "sorted-int") == "sorted-int":
        import random

        chosen = set(random.Random(int(s["seed"])).sample(sorted(qrels, key=int), int(s["n"])))
        qtype = {q: ("sample" if q in chosen else "rest") for q in qrels}
    return qrels, family, qtype


def _qrels(path: Path) -> dict[str, dict[str, float]]:
    """query -> doc -> grade of a BEIR qrels file (an optional `query-id` header; 3 or 4 columns)."""
    qrels: dict[str, dict[str, float]] = {}
    for n, line in enumerate(path.read_text().splitlines()):
        parts = line.split()
        if not parts or (n == 0 and parts[0] == "query-id"):
            continue
        q, d, g = (parts[0], parts[2], parts[3]) if len(parts) == 4 else parts
        qrels.setdefault(q, {})[d] = float(g)
    return qrels


def reads_to(metric: str, depth: int) -> int:
    """The ranks a metric reads: its cutoff, or the whole stored ranking (`depth`) for untruncated `rr`."""
    _, _, cut = metric.partition("@")
    return int(cut) if cut else depth


def score(metric: str, ids: list[str], rels: dict[str, float], target_rank: int | None) -> float:
    """One query, one metric, from first principles."""
    name, _, cut = metric.partition("@")
    k = int(cut) if cut else None
    ranks = [i + 1 for i, d in enumerate(ids) if rels.get(d, 0) > 0]
    first = ranks[0] if ranks else None
    if name == "rr":
        r = target_rank if target_rank is not None else first
        return 1.0 / r if r else 0.0
    if k is None:
        raise ValueError(f"audit: metric {metric!r} needs a cutoff")
    top = [r for r in ranks if r <= k]
    if name == "mrr":
        return 1.0 / top[0] if top else 0.0
    if name == "hit":
        return 1.0 if top else 0.0
    if name == "dcg1":
        return 1.0 / math.log2(top[0] + 1) if top else 0.0
    n_rel = sum(1 for g in rels.values() if g > 0)
    if name == "recall":
        return len(top) / n_rel
    if name == "precision":
        return len(top) / k
    if name == "ndcg":
        dcg = sum(rels[ids[r - 1]] / math.log2(r + 1) for r in top)
        ideal = sorted((g for g in rels.values() if g > 0), reverse=True)[:k]
        return dcg / sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    raise ValueError(f"audit: unknown metric {metric!r}")


def _family_means(values: dict[str, float], family: dict[str, str]) -> dict[str, float]:
    groups: dict[str, list[float]] = {}
    for q, v in values.items():
        groups.setdefault(family[q], []).append(v)
    return {f: sum(v) / len(v) for f, v in groups.items()}


def _boot(d: np.ndarray, n: int, seed: int, conf: float) -> tuple[float, float]:
    idx = np.random.default_rng(seed).integers(0, d.size, (n, d.size))
    means = d[idx].mean(axis=1)
    if not d.any():
        return 0.0, 0.0
    lo, hi = np.percentile(means, [50 * (1 - conf), 100 - 50 * (1 - conf)])
    return float(lo), float(hi)


def _flip(d: np.ndarray, n: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    obs = abs(d.mean())
    slack = 1e-12 * max(1.0, float(np.abs(d).max()))
    hits, left = 0, n
    while left:
        rows = min(2048, left)
        s = rng.integers(0, 2, (rows, d.size), dtype=np.int8) * 2 - 1
        hits += int((np.abs(s @ d / d.size) >= obs - slack).sum())
        left -= rows
    return (hits + 1) / (n + 1)


def _check_ranking(label: str, q: str, row: dict) -> list[str]:
    bad = []
    ids, sc = row["ids"], row["scores"]
    if len(set(ids)) != len(ids):
        bad.append(f"{label} {q}: duplicate ids in ranking")
    if any(b > a for a, b in zip(sc, sc[1:])):
        bad.append(f"{label} {q}: scores not in descending order")
    tr = row.get("target_rank")
    if tr is not None and tr <= len(ids) and tr < 1:
        bad.append(f"{label} {q}: bad target rank {tr}")
    return bad


def audit(run_dir: Path) -> dict:
    """Recompute the test result, and the dev result it was selected on, from stored ranks; returns
    {"agree": bool, "checks": n, "problems": [...], ...} (the counts are the test split's).

    Dev rankings are stored `dev_depth` deep (default `depth`): a dev metric that reads deeper than that
    is a problem (it was left out by the runner, never computed from shorter rankings), and so is a
    ranking longer than its declared depth. Raises `RefusedError` when the run does not match its record
    (a missing, edited or extra file)."""
    run_dir = Path(run_dir)
    verify_run(run_dir, "test")  # refuses, naming the file, a run altered after it was written
    verify_report(run_dir)  # the report's numbers: report.md, report.html and figures against their record
    freeze = _load(run_dir / "freeze.json")
    proto = freeze["protocol_data"]
    depth = int(proto.get("depth", 100))
    out = _audit_split(run_dir, freeze, "test", depth, depth)
    dev = _load(run_dir / "dev" / "result.json")
    if "methods" in dev:  # a run without dev queries or grids stores only a note
        d = _audit_split(run_dir, freeze, "dev", depth, int(proto.get("dev_depth") or depth))
        out["checks"] += d["checks"]
        out["problems"] += ["dev: " + x for x in d["problems"]]
        out["dev_checks"] = d["checks"]
    out["agree"] = not out["problems"]
    return out


def _audit_split(run_dir: Path, freeze: dict, split: str, depth: int, stored_depth: int) -> dict:
    """Recompute one split's result.json from its rankings (`stored_depth` deep) and that split's qrels."""
    stored = _load(run_dir / split / "result.json")
    ranks = _rankings(run_dir / split / "rankings")
    qrels, family, qtype = _benchmark(freeze, split)
    # the protocol's STATS_SEED, written out: the auditor imports no lab protocol, metric or stats code
    stats = {"seed": 127300, "n_resamples": 10_000, "n_flips": 10_000, "confidence": 0.95,
             **freeze["protocol_data"].get("statistics", {})}
    problems: list[str] = []
    checks = 0
    per: dict[str, dict[str, dict[str, float]]] = {}
    deep = sorted({m for info in stored["methods"].values() for m in [*stored["metrics"], *info["overall"]]
                   if reads_to(m, depth) > stored_depth})
    for m in deep:
        problems.append(f"metric {m} reads the top {reads_to(m, depth)}, deeper than the stored "
                        f"rankings ({stored_depth})")
    metrics = [m for m in stored["metrics"] if m not in deep]
    for label, info in stored["methods"].items():
        rows = ranks.get(label, {})
        per[label] = {}
        for q, rels in qrels.items():
            row = rows.get(q, {"ids": [], "scores": []})
            problems += _check_ranking(label, q, row)
            if len(row["ids"]) > stored_depth:
                problems.append(f"{label} {q}: {len(row['ids'])} ranked ids, more than the depth {stored_depth}")
            target = next(iter(rels)) if len(rels) == 1 else None
            tr = row.get("target_rank")
            if target is not None and target in row["ids"] and tr is not None and row["ids"].index(target) + 1 != tr:
                problems.append(f"{label} {q}: target rank {tr} disagrees with its list position")
            per[label][q] = {m: score(m, row["ids"], rels, tr) for m in metrics}
        for m in metrics:
            means = _family_means({q: v[m] for q, v in per[label].items()}, family)
            mine = sum(means.values()) / len(means)
            checks += 1
            if abs(mine - info["overall"][m]) > _TOL:
                problems.append(f"{label} {m}: stored {info['overall'][m]!r}, audit {mine!r}")
            for t, tinfo in info.get("by_type", {}).items():
                qs = {q: v[m] for q, v in per[label].items() if qtype.get(q) == t}
                if not qs:
                    continue
                f = _family_means(qs, family)
                checks += 1
                if abs(sum(f.values()) / len(f) - tinfo[m]) > _TOL:
                    problems.append(f"{label} {t} {m}: stored {tinfo[m]!r}, audit {sum(f.values()) / len(f)!r}")
    groups = {g: v["labels"] for g, v in stored.get("groups", {}).items()}
    family_names = sorted(set(family.values()))
    metric = stored["primary_metric"]

    def vec(label: str) -> np.ndarray:
        fm = _family_means({q: v[metric] for q, v in per[label].items()}, family)
        return np.array([fm[f] for f in family_names])
    for c in stored.get("contrasts", []) if metric not in deep else []:  # (a deep primary is reported above)
        a = vec(c["baseline"])
        name = c["candidate"]
        if name in per:
            b = vec(name)
        else:  # "<group> (mean of n)"
            g = name.split(" (mean of")[0]
            b = np.mean([vec(lab) for lab in groups[g]], axis=0)
        d = b - a
        lo, hi = _boot(d, stats["n_resamples"], stats["seed"], stats["confidence"])
        p = _flip(d, stats["n_flips"], stats["seed"])
        for key, mine in (("difference", float(d.mean())), ("ci_low", lo), ("ci_high", hi), ("p_sign_flip", p)):
            checks += 1
            if abs(mine - c[key]) > _TOL:
                problems.append(f"contrast {name} vs {c['baseline']} {key}: stored {c[key]!r}, audit {mine!r}")
    return {"agree": not problems, "checks": checks, "problems": problems,
            "methods": len(stored["methods"]), "queries": len(qrels), "families": len(family_names)}
