"""A query's floor with seated passages mixed in blind, a stored trace, and the reveal.

`connections` builds the floor (`sidelight.methods.floor.build_floor` when the index has dense
vectors, else the stand-in: BM25 top-n), seats certified connections by the dial, mixes the seated
passages into the floor passages unlabeled (seeded shuffle) and stores a trace in
``INDEX/state.sqlite`` (table ``ser_traces``) holding which passages were seated and the panel.

Its answers are `Results` of `Hit`s like every lane's: the floor (`get_floor`), the blind mix (its
`passages`: each hit's evidence holds the passage `text`; every score is 0, so nothing tells a seat
from a floor entry) and the seats (the reveal's `seated`: each hit's evidence holds how it was
seated: position, chunk, marker, label, floor_end, pair, signature; seats are drawn, not scored).

`reveal(trace_id, answer_sha256)` returns that panel only after the caller has submitted the
SHA-256 (64 hex characters) of its answer; the hash is stored with the trace. Before, or with a
malformed hash, it raises `RevealRefused`. A second reveal with a different hash is refused too
(the first recorded answer hash stands, so a later change of the answer is detectable).
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import replace

import numpy as np

from ..errors import InputError
from ..methods.floor import DEFAULT_N, DEFAULT_POOL, build_floor
from ..results import Hit, Results
from .db import SerDB, now
from .seating import DEFAULT_DIAL, MAX_DIAL, CertificateRefused, pair_panel, rng_for, select_seats
from .store import Serendipity

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
# Seats that bear on the question (issue 47): a seat's marker must be active in the question's own SAE code
# or in the floor passage of one of the floor's first BEARING entries. Chosen on SciFact's dev queries by
# `bench/seat_bearing.py`: the largest m whose floor precision@m (share of the first m floor entries that
# the qrels call relevant) is at least one half, so the entries the marker may come from answer the question
# more often than not. Before issue 47 any marker active in 2 of the 28 floor passages qualified
# (``bearing=None``), and seats hung off floor entries that were themselves off the question.
BEARING = 1
# The default seed of the seating draw and the blind mix: an arbitrary fixed value (no specification names
# one); a trace stores the seed it used.
CONNECTIONS_SEED = 42


class RevealRefused(InputError):
    """The panel was asked for before the answer's SHA-256 was submitted."""


STAND_IN = "stand-in: bm25 top-n (index has no dense vectors)"


def get_floor(index, query: str, n: int = DEFAULT_N, pool: int = DEFAULT_POOL,
              deadline_s: float | None = None) -> Results:
    """The floor, or the documented stand-in when `build_floor` cannot run on this index; its `method`
    names which ("floor (SCORER)" or `STAND_IN`), `partial` says whether a deadline cut it."""
    if index.dense is not None:
        fl = build_floor(index, query, pool=pool, n=n, deadline_s=deadline_s)
        return Results(fl.hits, query, f"floor ({fl.scorer})", cut=bool(fl.partial))
    return Results(index.search(query, "bm25", n), query, STAND_IN)


def positions_of(index, floor: Results) -> list[int]:
    """The record positions of the floor's hits, in floor order."""
    return [index.corpus.position[h.id] for h in floor]


def best_chunk(ser: Serendipity, record: int, qvec: np.ndarray | None = None, marker: int | None = None) -> int:
    """The record's chunk closest to the query, or the one where `marker` is strongest."""
    offs = ser.chunk_offsets()
    lo, hi = int(offs[record]), int(offs[record + 1])
    if hi <= lo:
        return -1
    if marker is not None:
        col = np.asarray(ser.require_codes()[lo:hi, marker].todense()).ravel()
        return lo + int(np.argmax(col))
    if qvec is None:
        return lo
    return lo + int(np.argmax(np.asarray(ser.require_chunks().encoded()[lo:hi]) @ qvec))


def connections(ser: Serendipity, query: str, dial: int = DEFAULT_DIAL, session_id: str = "default",
                seed: int = CONNECTIONS_SEED, n: int = DEFAULT_N, pool: int = DEFAULT_POOL, min_floor_support: int = 2,
                db: SerDB | None = None, floor: Results | None = None, bearing: int | None = BEARING) -> dict:
    """Floor + blind-mixed seated passages; returns the mixed list and the trace id (panel withheld).
    The query/floor profile: markers active in the query's code, plus those active in the passages of
    the first `bearing` floor entries (`BEARING`); ``bearing=None``: those active in at least
    `min_floor_support` of all floor passages (the rule before issue 47)."""
    if not query or not query.strip():
        raise InputError("empty query")
    if not (0 <= int(dial) <= MAX_DIAL):
        raise InputError(f"dial must be between 0 and {MAX_DIAL}, got {dial}")
    cert = ser.certificate
    if cert is None:
        raise InputError("no certificate; run `sidelight certify INDEX` first")
    if not cert.passed:
        s = cert.summary
        raise CertificateRefused(
            f"the certificate FAILED its placebo test ({s['target_passes']} target passes vs placebo mean "
            f"{s['placebo_mean']:.1f}; rule: {s['rule']}); seating refuses to use it")
    db = db or SerDB.for_index(ser.index)
    index = ser.index
    records, ids = index.corpus.records, index.corpus.ids
    floor = floor if floor is not None else get_floor(index, query, n, pool)
    positions = positions_of(index, floor)
    qvec = ser.embedder().encode([query], kind="query")[0]
    qm = ser.query_markers(query, qvec)
    support: dict[int, int] = {}
    floor_chunks = {}
    for p in positions:
        c = best_chunk(ser, p, qvec)
        floor_chunks[p] = c
        if c >= 0:
            row = ser.require_codes()[c]
            for f in row.indices[row.data > 0]:
                support[int(f)] = support.get(int(f), 0) + 1
    if bearing is None:
        profile = qm | {f for f, k in support.items() if k >= min_floor_support}
    else:
        profile = set(qm)
        for p in positions[:max(int(bearing), 0)]:
            if floor_chunks[p] >= 0:
                row = ser.require_codes()[floor_chunks[p]]
                profile |= {int(f) for f in row.indices[row.data > 0]}
    seating = select_seats(cert.pairs, set(positions), profile, dial, db.usage(session_id),
                           rng_for(seed, query, "seats"), db.ruled_markers(), db.ruled_pairs(), ids)
    graph_applied = cert.summary.get("graph", "").startswith("applied")
    seated = []
    for rank, seat in enumerate(seating.seats, 1):
        c = best_chunk(ser, seat.seated_pos, marker=seat.marker)
        seated.append(Hit(ids[seat.seated_pos], rank, 0.0, records[seat.seated_pos].title, {
            "position": seat.seated_pos, "chunk": c, "marker": seat.marker, "label": ser.label(seat.marker),
            "floor_end": ids[seat.floor_pos], "pair": seat.pair, "signature": list(seat.signature)}))
    items = [Hit(ids[p], 0, 0.0, records[p].title, {"text": _chunk_text(ser, floor_chunks[p], p)}) for p in positions]
    items += [Hit(s.id, 0, 0.0, s.title, {"text": _chunk_text(ser, s["chunk"], s["position"])}) for s in seated]
    order = rng_for(seed, query, "mix").permutation(len(items))
    trace_id = uuid.uuid4().hex
    mixed = Results([replace(items[i], rank=r) for r, i in enumerate(order, 1)], query, "connections",
                    trace_id=trace_id, params={"dial": int(dial), "seed": int(seed)}, cut=floor.partial)
    panel = seating.header() + "".join(
        "\n\n" + pair_panel(cert.pairs, s["pair"], ids, s["label"], graph_applied) for s in seated)
    db.write("INSERT INTO ser_traces (trace_id, created_at, query, session_id, dial, seed, certificate_id, mixed, "
             "seated, panel) VALUES (?,?,?,?,?,?,?,?,?,?)",
             (trace_id, now(), query, session_id, int(dial), int(seed), ser.meta["certificate"]["id"],
              json.dumps(mixed.ids), json.dumps([s.to_dict() for s in seated]), panel))
    db.add_usage(session_id, [s.marker for s in seating.seats])
    return {"trace_id": trace_id, "query": query, "dial": int(dial), "session": session_id, "seed": int(seed),
            "floor_source": floor.method, "partial": mixed.partial, "passages": mixed.to_dicts(),
            "seating": {"offered": int(dial), "filled": len(seated), "shortfall": seating.shortfall}}


def _chunk_text(ser: Serendipity, c: int, p: int) -> str:
    if c is None or c < 0:
        return ser.index.corpus.records[p].text[:600]
    return ser.require_chunks().text(ser.index.corpus.records, c)


def check_hash(answer_sha256) -> str:
    if answer_sha256 is None or not str(answer_sha256).strip():
        raise RevealRefused("reveal refused: submit the SHA-256 of your answer first (64 hex characters); "
                            "the panel is shown only after the answer is fixed")
    h = str(answer_sha256).strip().lower()
    if not _HEX64.match(h):
        raise RevealRefused(f"reveal refused: {answer_sha256!r} is not a SHA-256 (64 hex characters)")
    return h


def reveal(db: SerDB, trace_id: str, answer_sha256: str | None) -> dict:
    """Which passages were seated, via which marker, and the panel — after the answer hash."""
    rows = db.rows("SELECT query, seated, panel, answer_sha256 FROM ser_traces WHERE trace_id = ?", (trace_id,))
    if not rows:
        raise InputError(f"unknown serendipity trace {trace_id!r}")
    query, seated, panel, stored = rows[0]
    h = check_hash(answer_sha256)
    if stored is None:
        cur = db.write("UPDATE ser_traces SET answer_sha256 = ?, revealed_at = ? WHERE trace_id = ? "
                       "AND answer_sha256 IS NULL", (h, now(), trace_id))
        if cur.rowcount == 0:  # another process recorded one first
            stored = db.rows("SELECT answer_sha256 FROM ser_traces WHERE trace_id = ?", (trace_id,))[0][0]
    if stored is not None and stored != h:
        raise RevealRefused(f"reveal refused: trace {trace_id} already has answer hash {stored[:12]}…; "
                            "the answer changed after it was recorded")
    return {"trace_id": trace_id, "query": query, "answer_sha256": h, "seated": json.loads(seated), "panel": panel}
