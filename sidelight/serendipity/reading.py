"""A blind reading of certified pairs (`sidelight lab read-pairs` / `lab score-pairs`, issue 47).

Does passing the certificate make a pair worth a reader's time? A packet mixes four sources, a
quarter each, drawn with an explicit seed:

* ``certified``: pairs of the certificate (with ``before_guards``: also the pairs the whale guards
  ruled out, so the packet reads the certificate as it was before them);
* ``placebo``: placebo passes (pairs of placebo records that passed the same test; their passages
  are the real chunks the placebo records were built from);
* ``top-kinship``: a random record and its nearest record by kinship (what plain similarity offers);
* ``random-candidate``: a random pair of records sharing a marker in two or more chunks each
  (a candidate of the test, passed or not).

Every item holds the marker's label and, for each side, the record's title and its chunk where the
marker is strongest. The items are shuffled (same seed); ``packet.jsonl`` holds no source, record
id or statistic, ``key.json`` holds them. ``freeze.json`` records the SHA-256 of both files before
anyone reads: scoring checks them, so a packet or key edited after the freeze is refused, and a
folder that already holds a packet is never written again.

Scoring takes the reader's judgements (JSONL, one ``{"item": k, "judgement": "useful" | "arguable" |
"whale"}`` per item, every item exactly once), stores them in the packet folder (the first reading
stands: a second, different one is refused), reveals the key and reports per source the useful and
whale rates with 95% Wilson intervals (`verdicts.wilson`).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from .verdicts import wilson

SOURCES = ("certified", "placebo", "top-kinship", "random-candidate")
JUDGEMENTS = ("useful", "arguable", "whale")
READ_SEED = 47  # the default seed of a packet's draws and shuffle; an arbitrary fixed value
PACKET, KEY, FREEZE, READING, SCORE = "packet.jsonl", "key.json", "freeze.json", "judgements.jsonl", "score.json"


def _atomic(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _strongest(ser, record: int, f: int) -> int:
    lo, hi = int(ser._offsets[record]), int(ser._offsets[record + 1])
    col = np.asarray(ser.codes[lo:hi, f].todense()).ravel()
    return lo + int(np.argmax(col)) if hi > lo else -1


def _draw_pairs(ser, n: int, rng: np.random.Generator, before_guards: bool,
                take_available: bool = False) -> dict[str, list[dict]]:
    """n pairs per source as dicts (a, b, marker, chunk_a, chunk_b, and source-specific fields); a source
    holding fewer is an error, or with `take_available` gives all it has."""
    from .certify import profile

    cert = ser.certificate
    out: dict[str, list[dict]] = {}
    p = cert.pairs
    rows = [{"a": int(p["a"][i]), "b": int(p["b"][i]), "marker": int(p["marker"][i]), "guard": ""}
            for i in range(len(p["a"]))]
    if before_guards and cert.ruled is not None:
        r = cert.ruled
        rows += [{"a": int(r["a"][i]), "b": int(r["b"][i]), "marker": int(r["marker"][i]), "guard": str(r["guard"][i])}
                 for i in range(len(r["a"]))]
    out["certified"] = [rows[i] for i in np.sort(rng.permutation(len(rows))[:n])]
    pl = cert.placebo or {}
    if "marker" not in pl:
        raise InputError("the certificate on disk predates placebo markers; run `sidelight certify INDEX --rebuild`")
    guard = pl.get("guard", np.full(len(pl["a"]), ""))
    keep = np.flatnonzero((guard == "") if not before_guards else np.ones(len(pl["a"]), bool))
    pick = keep[np.sort(rng.permutation(len(keep))[:n])]
    out["placebo"] = [{"a": int(pl["a"][i]), "b": int(pl["b"][i]), "marker": int(pl["marker"][i]),
                       "chunk_a": int(pl["chunk_a"][i]), "chunk_b": int(pl["chunk_b"][i]), "draw": int(pl["draw"][i]),
                       "guard": str(guard[i])} for i in pick]
    n_rec = len(ser.index.corpus)
    prof = profile(np.asarray(ser.chunks.record, np.int64), n_rec, ser.codes)
    count, ev = prof.count.tocsr(), prof.evidence.tocsr()
    vec, _ = ser.record_vectors()
    population = np.flatnonzero(prof.n >= cert.config.get("min_chunks", 2))

    def best_shared(a: int, b: int, min_chunks: int) -> int:
        fa = {int(f): float(e) for f, c, e in zip(count[a].indices, count[a].data, ev[a].data) if c >= min_chunks}
        fb = {int(f): float(e) for f, c, e in zip(count[b].indices, count[b].data, ev[b].data) if c >= min_chunks}
        both = sorted(set(fa) & set(fb), key=lambda f: (-(fa[f] + fb[f]), f))
        return both[0] if both else -1

    kin: list[dict[str, Any]] = []
    tries = 0
    while len(kin) < n and tries < 100 * n:
        tries += 1
        a = int(population[rng.integers(len(population))])
        sims = vec[population] @ vec[a]
        sims[population == a] = -np.inf
        b = int(population[int(np.argmax(sims))])
        f = best_shared(a, b, 1)
        if f >= 0 and all({a, b} != {k["a"], k["b"]} for k in kin):
            kin.append({"a": a, "b": b, "marker": f, "kinship": float(vec[a] @ vec[b])})
    out["top-kinship"] = kin
    cand: list[dict[str, Any]] = []
    tries = 0
    while len(cand) < n and tries < 2000 * n:
        tries += 1
        a, b = (int(x) for x in population[rng.integers(len(population), size=2)])
        if a == b:
            continue
        f = best_shared(a, b, cert.config.get("min_chunks", 2))
        if f >= 0:
            cand.append({"a": a, "b": b, "marker": f, "kinship": float(vec[a] @ vec[b])})
    out["random-candidate"] = cand
    for src, items in out.items():
        for it in items:
            if "chunk_a" not in it:
                it["chunk_a"], it["chunk_b"] = _strongest(ser, it["a"], it["marker"]), _strongest(ser, it["b"], it["marker"])
        if len(items) < n and not take_available:
            raise InputError(f"only {len(items)} {src} pair(s) to draw from; asked for {n} "
                             "(--take-available reads what there is)")
    return out


def write_packet(ser, out: Path, n: int = 60, seed: int = READ_SEED, before_guards: bool = False,
                 take_available: bool = False) -> dict:
    """Draw, shuffle and freeze a packet of `n` pairs (n/4 per source) into the new folder `out`; with
    `take_available` a source with fewer than n/4 (a small certificate, few placebo passes) gives all it
    has, and ``freeze.json`` records the packet's size and the count per source."""
    out = Path(out)
    if n < 4 or n % 4:
        raise InputError(f"--pairs must be a positive multiple of 4 (a quarter per source), got {n}")
    if (out / FREEZE).exists() or (out / PACKET).exists():
        raise InputError(f"{out} already holds a frozen packet; a packet is written once (choose another folder)")
    if ser.certificate is None or not ser.certificate.passed:
        raise InputError("the certificate is missing or FAILED its placebo test; nothing to read")
    ser._offsets = ser.chunks.offsets(len(ser.index.corpus))
    rng = np.random.default_rng([int(seed), 47])
    drawn = _draw_pairs(ser, n // 4, rng, before_guards, take_available)
    flat = [(src, it) for src in SOURCES for it in drawn[src]]
    order = rng.permutation(len(flat))
    recs, ids = ser.index.corpus.records, ser.index.corpus.ids
    lines, key = [], []
    for k, j in enumerate(order):
        src, it = flat[int(j)]
        side = [{"title": recs[it[r]].title, "passage": ser.chunks.text(recs, it[c]) if it[c] >= 0 else ""}
                for r, c in (("a", "chunk_a"), ("b", "chunk_b"))]
        lines.append(json.dumps({"item": k + 1, "marker_label": ser.label(it["marker"]), "a": side[0], "b": side[1]},
                                ensure_ascii=False))
        key.append({"item": k + 1, "source": src, "a": ids[it["a"]], "b": ids[it["b"]], "marker": it["marker"],
                    **{x: it[x] for x in ("guard", "draw", "kinship") if x in it}})
    out.mkdir(parents=True, exist_ok=True)
    _atomic(out / PACKET, "\n".join(lines) + "\n")
    _atomic(out / KEY, json.dumps(key, indent=1) + "\n")
    freeze = {"index": str(ser.index.path), "certificate": ser.meta["certificate"]["id"], "pairs": len(flat),
              "asked": n, "per_source": {src: len(drawn[src]) for src in SOURCES}, "seed": int(seed),
              "before_guards": bool(before_guards), "sources": list(SOURCES),
              "packet_sha256": _sha(out / PACKET), "key_sha256": _sha(out / KEY)}
    _atomic(out / FREEZE, json.dumps(freeze, indent=1) + "\n")
    return freeze


def read_judgements(path: Path, n: int) -> dict[int, str]:
    """item -> judgement; every item 1..n exactly once, judgements among `JUDGEMENTS`."""
    got: dict[int, str] = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"{path}: cannot read judgements ({exc.strerror})") from None
    for ln, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            item, j = int(row["item"]), str(row["judgement"]).strip().lower()
        except (ValueError, KeyError, TypeError):
            raise InputError(f"{path}:{ln}: want {{\"item\": N, \"judgement\": \"useful|arguable|whale\"}}") from None
        if j not in JUDGEMENTS:
            raise InputError(f"{path}:{ln}: judgement must be one of {', '.join(JUDGEMENTS)}, got {j!r}")
        if item in got:
            raise InputError(f"{path}:{ln}: item {item} judged twice")
        got[item] = j
    missing = sorted(set(range(1, n + 1)) - set(got))
    extra = sorted(set(got) - set(range(1, n + 1)))
    if missing or extra:
        raise InputError(f"{path}: judgements must cover items 1..{n} exactly"
                         + (f"; missing {missing[:5]}" if missing else "") + (f"; unknown {extra[:5]}" if extra else ""))
    return got


def score_packet(folder: Path, judgements: Path) -> dict:
    """Check the freeze, store the first reading, reveal the key and report rates per source."""
    folder = Path(folder)
    try:
        freeze = json.loads((folder / FREEZE).read_text())
    except (OSError, json.JSONDecodeError):
        raise InputError(f"{folder}: no frozen packet ({FREEZE} missing or unreadable)") from None
    for name, want in ((PACKET, freeze["packet_sha256"]), (KEY, freeze["key_sha256"])):
        if not (folder / name).exists() or _sha(folder / name) != want:
            raise InputError(f"{folder / name} does not match the SHA-256 frozen in {FREEZE}; the packet was edited")
    got = read_judgements(judgements, int(freeze["pairs"]))
    text = Path(judgements).read_text(encoding="utf-8")
    stored = folder / READING
    if stored.exists() and stored.read_text(encoding="utf-8") != text:
        raise InputError(f"{stored} already holds a first reading; it is never overwritten")
    if not stored.exists():
        _atomic(stored, text)
    key = json.loads((folder / KEY).read_text())
    by: dict[str, dict[str, int]] = {s: {j: 0 for j in JUDGEMENTS} for s in SOURCES}
    guards: dict[str, dict[str, int]] = {}
    for row in key:
        j = got[int(row["item"])]
        by[row["source"]][j] += 1
        if row.get("guard"):
            guards.setdefault(f"{row['source']}: {row['guard']}", {x: 0 for x in JUDGEMENTS})[j] += 1
    rows: dict[str, dict[str, Any]] = {}
    for s, c in by.items():
        n = sum(c.values())
        rows[s] = {"n": n, **c, "useful_rate": c["useful"] / n if n else None, "useful_wilson95": list(wilson(c["useful"], n)),
                   "whale_rate": c["whale"] / n if n else None, "whale_wilson95": list(wilson(c["whale"], n))}
    cert, kin = rows["certified"], rows["top-kinship"]
    goal = {"certified useful >= 40%": cert["useful_rate"] >= 0.4,
            "certified useful >= 2x top-kinship": cert["useful_rate"] >= 2 * kin["useful_rate"],
            "certified whales <= 25%": cert["whale_rate"] <= 0.25}
    score = {"packet": str(folder), "freeze": freeze, "judgements_sha256": _sha(stored), "by_source": rows,
             "guarded_in_packet": guards, "goal": goal}
    if not (folder / SCORE).exists():
        _atomic(folder / SCORE, json.dumps(score, indent=1) + "\n")
    return score
