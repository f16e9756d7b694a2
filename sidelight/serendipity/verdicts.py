"""Human verdicts on seated connections, rulings, and a calibration sample with Wilson precision.

Verdicts are a person's judgement, `USEFUL` or `NOT_USEFUL` (other accepted spellings: `ALIASES`).
They are stored in ``ser_verdicts`` and never mixed with automatic
labels (``ser_auto_labels``, e.g. a model panel), which `record_auto_label` writes separately.
A ruling (``ser_rulings``) takes a marker or a pair out of all future seating.

Calibration: `reserve_calibration` draws a seeded sample of certified pairs (stored per
certificate; drawing again returns the same rows). `precision` counts, per pair, the latest
verdict of each person, and reports useful / judged with a 95% Wilson score interval — over the
calibration sample and over every verdict.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError
from .db import SerDB, now

USEFUL = "useful"
NOT_USEFUL = "not useful"
VERDICTS = (USEFUL, NOT_USEFUL)
# Every accepted input spelling (lower case) -> the verdict stored. "petunia" and "whale" are the serendipity
# seed document's names for the two verdicts (shared/seeds/heart-of-gold-serendipity.txt, "The words the panel
# uses" and the worked example: a petunia is a connection found useful, a whale one rejected); they are
# accepted as input, never stored or printed.
ALIASES = {USEFUL: USEFUL, "petunia": USEFUL, "yes": USEFUL,
           NOT_USEFUL: NOT_USEFUL, "not-useful": NOT_USEFUL, "whale": NOT_USEFUL, "no": NOT_USEFUL}

# The calibration sample: the seed document reserves "a set of 129 pairs [...] for human calibration"
# ("Where it stands"). Its seed is an arbitrary fixed value (set equal to the size); a certificate's sample is
# stored when first drawn, so the seed only matters for a new certificate.
CALIBRATION_SIZE = 129
CALIBRATION_SEED = 129
# The normal quantile of a two-sided 95% interval, Phi^-1(0.975) (= scipy.stats.norm.ppf(0.975)).
Z_95 = 1.959963984540054


def wilson(k: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval for k successes in n trials ((0, 1) when n == 0)."""
    if n <= 0:
        return 0.0, 1.0
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, centre - half), min(1.0, centre + half)


def normalise(verdict: str) -> str:
    v = ALIASES.get(str(verdict).strip().lower())
    if v is None:
        raise InputError(f"verdict must be {USEFUL!r} or {NOT_USEFUL!r}, got {verdict!r}")
    return v


def record_verdict(db: SerDB, a_id: str, b_id: str, marker: int, verdict: str, who: str,
                   note: str | None = None, trace_id: str | None = None, certificate_id: str | None = None) -> dict:
    if not who or not who.strip():
        raise InputError("a verdict needs the person who gave it (--who)")
    v = normalise(verdict)
    a, b = sorted((a_id, b_id))
    db.write("INSERT INTO ser_verdicts (created_at, a_id, b_id, marker, verdict, who, note, trace_id, certificate_id) "
             "VALUES (?,?,?,?,?,?,?,?,?)", (now(), a, b, int(marker), v, who, note, trace_id, certificate_id))
    return {"a": a, "b": b, "marker": int(marker), "verdict": v, "who": who}


def record_auto_label(db: SerDB, a_id: str, b_id: str, marker: int, label: str, source: str,
                      trace_id: str | None = None) -> None:
    a, b = sorted((a_id, b_id))
    db.write("INSERT INTO ser_auto_labels (created_at, a_id, b_id, marker, label, source, trace_id) VALUES (?,?,?,?,?,?,?)",
             (now(), a, b, int(marker), label, source, trace_id))


def rule_out(db: SerDB, who: str, marker: int | None = None, pair: tuple[str, str] | None = None,
             reason: str | None = None) -> dict:
    if (marker is None) == (pair is None):
        raise InputError("rule out either a marker or a pair")
    if marker is not None:
        db.write("INSERT INTO ser_rulings (created_at, kind, marker, who, reason) VALUES (?,?,?,?,?)",
                 (now(), "marker", int(marker), who, reason))
        return {"ruled_out": f"f{int(marker)}"}
    assert pair is not None  # exactly one of marker and pair is given (checked above)
    a, b = sorted(pair)
    db.write("INSERT INTO ser_rulings (created_at, kind, a_id, b_id, who, reason) VALUES (?,?,?,?,?,?)",
             (now(), "pair", a, b, who, reason))
    return {"ruled_out": f"{a} <-> {b}"}


def reserve_calibration(db: SerDB, certificate_id: str, pairs: dict, ids, size: int = CALIBRATION_SIZE,
                        seed: int = CALIBRATION_SEED) -> list[tuple]:
    """A seeded sample of certified pairs reserved for human calibration (idempotent per certificate)."""
    have = db.rows("SELECT a_id, b_id, marker FROM ser_calibration WHERE certificate_id = ? ORDER BY a_id, b_id",
                   (certificate_id,))
    if have:
        return have
    n = len(pairs["a"])
    rng = np.random.default_rng(seed)
    pick = np.sort(rng.choice(n, size=min(size, n), replace=False)) if n else np.zeros(0, np.int64)
    rows = [tuple(sorted((ids[int(pairs["a"][i])], ids[int(pairs["b"][i])]))) + (int(pairs["marker"][i]),) for i in pick]
    db.write_many([("INSERT OR IGNORE INTO ser_calibration VALUES (?,?,?,?,?)", (certificate_id, a, b, m, seed))
                   for a, b, m in rows])
    return sorted(rows)


def precision(db: SerDB, certificate_id: str | None = None) -> dict:
    """Human precision: latest verdict per (pair, person); calibration sample and all verdicts."""
    rows = db.rows("SELECT a_id, b_id, who, verdict FROM ser_verdicts ORDER BY id")
    latest = {}
    for a, b, who, v in rows:
        latest[(a, b, who)] = v
    calib = set()
    reserved = 0
    if certificate_id is not None:
        cal = db.rows("SELECT a_id, b_id FROM ser_calibration WHERE certificate_id = ?", (certificate_id,))
        calib, reserved = {(a, b) for a, b in cal}, len(cal)

    def summarise(items):
        k = sum(1 for v in items if v == USEFUL)
        lo, hi = wilson(k, len(items))
        return {"judged": len(items), "useful": k, "precision": (k / len(items)) if items else None,
                "wilson95": [round(lo, 4), round(hi, 4)]}

    out = {"all": summarise(list(latest.values())),
           "calibration": {**summarise([v for (a, b, _), v in latest.items() if (a, b) in calib]),
                           "reserved": reserved,
                           "pairs_judged": len({(a, b) for (a, b, _) in latest if (a, b) in calib})}}
    out["auto_labels"] = db.rows("SELECT COUNT(*) FROM ser_auto_labels")[0][0]
    return out
