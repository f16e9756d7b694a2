"""Candidate whale guards measured on the judged SciFact pairs (DEV data, issue 47).

The two judged blind packets (`results/readings/scifact-before`, `scifact-after`: 120 pairs, 30 per
source, each read as useful / arguable / whale) are the labels. For every judged pair the script
rebuilds what a guard would see on the demo's index (`.cache/indexes/scifact-minilm`, its
certificate already built by `sidelight certify`): the marker, each side's chunks (a placebo
record's chunks are rebuilt from its seeded placebo corpus, as `certify.run_certificate` does) and
the activating spans. It then asks each candidate rule which pairs it would rule out, and prints,
per rule, the whales removed and the useful / arguable pairs kept, over all judged pairs and over
the certified ones (30, of which 1 useful, 1 arguable).

Candidates (see `sidelight/serendipity/guards.py` for the one adopted):

* ``today``: the four guards already in force (their first reason, or none);
* ``coherence``: the marker's top chunks' mean pairwise cosine is below the corpus's random-pair
  mean plus a margin (the marker is not about one thing);
* ``agreement``: either side's strongest span is less alike than Q to the centroid of the marker's
  top chunks (the pair excites the marker without expressing its meaning);
* ``two markers``: the two strongest spans share fewer than 2 markers besides the pair's;
* ``span kinship``: the two strongest spans' cosine is below the Q-th quantile of the marker's own
  pairs of active chunks from different records (today's "different senses" is Q = 0.25);
* ``span cosine``: the same cosine below a fixed value, or (adopted, "no shared topic") below the
  collection's Q-th quantile of chunk pairs from different records, after the four older guards.

    SIDELIGHT_CACHE=.cache .venv/bin/python bench/whale_guards_dev.py --json bench/results/whale-guards-dev.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import print_table, write_json  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
PACKETS = ("scifact-before", "scifact-after")
TOPIC_QS = (0.95, 0.98, 0.99)


def judged_pairs(readings: Path) -> list[dict]:
    out = []
    for name in PACKETS:
        key = {r["item"]: r for r in json.loads((readings / name / "key.json").read_text())}
        for line in (readings / name / "judgements.jsonl").read_text().splitlines():
            if line.strip():
                j = json.loads(line)
                out.append({**key[j["item"]], "packet": name, "judgement": j["judgement"]})
    return out


def placebo_owned(ser, draw: int) -> list[np.ndarray]:
    """Placebo corpus `draw` of the certificate's placebo test: each placebo record's real chunks."""
    from sidelight.serendipity.certify import _chunk_lists
    from sidelight.serendipity.placebo import placebo_chunks
    from sidelight.serendipity.rules import kinship_neighbours
    from sidelight.serendipity.sae import one_blas_thread

    cfg = ser.certificate.config
    rec = np.asarray(ser.chunks.record, np.int64)
    n = len(ser.index.corpus)
    vec, _ = ser.record_vectors()
    pop = np.flatnonzero(np.bincount(rec, minlength=n) >= cfg["min_chunks"])
    with one_blas_thread():
        nb = kinship_neighbours(np.asarray(vec, np.float32), pop, max(cfg["neighbours"], cfg["neighbour_rule"]))
    owner, pick = placebo_chunks(rec, n, nb[:, :cfg["neighbours"]], np.random.default_rng([cfg["seed"], 1, draw]))
    return [pick[c] for c in _chunk_lists(owner, n)]


def features(ser, g, pairs: list[dict]) -> list[dict]:
    from sidelight.serendipity.certify import _chunk_lists
    from sidelight.serendipity.guards import GUARD_SEED, GUARDS


    n = len(ser.index.corpus)
    real = _chunk_lists(np.asarray(ser.chunks.record, np.int64), n)
    row = {rid: i for i, rid in enumerate(ser.index.corpus.ids)}
    owned: dict[int, list[np.ndarray]] = {}
    V = g.vectors
    rng = np.random.default_rng(0)
    i, j = rng.integers(0, len(V), 4000), rng.integers(0, len(V), 4000)
    base = float(np.mean(np.einsum("ij,ij->i", V[i], V[j])))
    rec = np.asarray(g.d.chunk_record)
    rs = np.random.default_rng([GUARD_SEED, 0])
    i, j = rs.integers(0, len(rec), 200_000), rs.integers(0, len(rec), 200_000)
    k = rec[i] != rec[j]
    pairs_cos = np.einsum("ij,ij->i", V[i[k]], V[j[k]])
    topic = {str(q): float(np.quantile(pairs_cos, q)) for q in TOPIC_QS}
    out = []
    for p in pairs:
        a, b, f = row[p["a"]], row[p["b"]], int(p["marker"])
        if p["source"] == "placebo":
            d = int(p["draw"])
            if d not in owned:
                owned[d] = placebo_owned(ser, d)
            ca, cb = owned[d][a], owned[d][b]
        else:
            ca, cb = real[a], real[b]
        sa, sb = g.spans(f, ca), g.spans(f, cb)
        top = g.top_chunks(f)
        T = V[top]
        cen = T.mean(0)
        cen /= max(np.linalg.norm(cen), 1e-12)
        pw = T @ T.T
        coh = float((pw.sum() - np.trace(pw)) / max(len(top) * (len(top) - 1), 1))
        why = g.check(f, ca, cb) or ""
        feat = {"coherence": coh - base, "guard_today": "" if why == GUARDS[-1] else why, "guard_now": why,
                "topic_floors": topic}
        if len(sa) and len(sb):
            x, y = int(sa[0]), int(sb[0])
            cos = float(V[x] @ V[y])
            own = g.sense_sample(f)
            both = set(g.codes[x].indices) & set(g.codes[y].indices)
            s, e = g.csc.indptr[f], g.csc.indptr[f + 1]
            act = V[g.csc.indices[s:e]] @ cen
            ag = min(float(V[x] @ cen), float(V[y] @ cen))
            feat.update(span_cos=cos, span_pctile=float(np.mean(own < cos)) if len(own) else 0.0,
                        agree=ag, agree_pctile=float(np.mean(act < ag)),
                        shared_markers=len(both - {f}), top_chunks=len(top))
        out.append({**p, **feat})
    return out


def rate(rows: list[dict], rule) -> dict:
    """Counts of judged pairs a rule rules out (True) or keeps, per judgement."""
    c = {"whale_removed": 0, "whale": 0, "useful_kept": 0, "useful": 0, "arguable_kept": 0, "arguable": 0, "kept": 0}
    for r in rows:
        out = rule(r)
        c[r["judgement"]] += 1
        if r["judgement"] == "whale" and out:
            c["whale_removed"] += 1
        if not out:
            c["kept"] += 1
            if r["judgement"] != "whale":
                c[f"{r['judgement']}_kept"] += 1
    c["kept_whale_rate"] = (c["kept"] - c["useful_kept"] - c["arguable_kept"]) / c["kept"] if c["kept"] else None
    return c


def rules() -> dict:
    today = lambda r: bool(r["guard_today"])  # noqa: E731
    has = lambda r: "span_cos" in r  # noqa: E731
    out = {"four guards (before)": today, "five guards (adopted)": lambda r: bool(r["guard_now"])}
    for q in TOPIC_QS:
        out[f"four + span cosine < collection q{q}"] = \
            lambda r, q=q: today(r) or not has(r) or r["span_cos"] < r["topic_floors"][str(q)]
    for m in (0.05, 0.1, 0.15, 0.2):
        out[f"coherence < base+{m}"] = lambda r, m=m: r["coherence"] < m
    for q in (0.3, 0.4, 0.5, 0.6):
        out[f"agreement < {q}"] = lambda r, q=q: not has(r) or r["agree"] < q
    for q in (0.1, 0.25, 0.5):
        out[f"agreement < q{q} of its chunks"] = lambda r, q=q: not has(r) or r["agree_pctile"] < q
    for k in (1, 2, 3, 5):
        out[f"shared markers < {k}"] = lambda r, k=k: not has(r) or r["shared_markers"] < k
    for q in (0.25, 0.5, 0.75, 0.9):
        out[f"span kinship < q{q}"] = lambda r, q=q: not has(r) or r["span_pctile"] < q
    for c in (0.3, 0.4, 0.5):
        out[f"span cosine < {c}"] = lambda r, c=c: not has(r) or r["span_cos"] < c
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--index", type=Path, default=REPO / ".cache" / "indexes" / "scifact-minilm")
    ap.add_argument("--readings", type=Path, default=REPO / "results" / "readings")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--dump", type=Path, help="also write each judged pair's features (JSONL)")
    a = ap.parse_args()

    from sidelight.index import Index
    from sidelight.serendipity.store import Serendipity

    ser = Serendipity(Index.load(a.index)).load()
    g = ser.guards()
    rows = features(ser, g, judged_pairs(a.readings))
    if a.dump:
        a.dump.write_text("".join(json.dumps(r) + "\n" for r in rows))
    table, result = [], {}
    for name, rule in rules().items():
        res = {"all": rate(rows, rule), "certified": rate([r for r in rows if r["source"] == "certified"], rule)}
        result[name] = res
        al, ce = res["all"], res["certified"]
        table.append([name, f"{al['whale_removed']}/{al['whale']}", f"{al['useful_kept']}/{al['useful']}",
                      f"{al['arguable_kept']}/{al['arguable']}", f"{ce['whale_removed']}/{ce['whale']}",
                      f"{ce['useful_kept']}/{ce['useful']}", f"{ce['arguable_kept']}/{ce['arguable']}",
                      f"{ce['kept']}"])
    print_table(["rule (rules out when)", "all: whales removed", "useful kept", "arguable kept",
                 "certified: whales removed", "useful kept", "arguable kept", "kept"], table)
    if a.json:
        write_json(a.json, {"index": str(a.index), "packets": list(PACKETS), "pairs": len(rows), "rules": result})


if __name__ == "__main__":
    main()
