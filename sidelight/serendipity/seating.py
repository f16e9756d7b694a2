"""Seating: certified connections offered beside the floor, by a dial of 0..`MAX_DIAL` (28) seats.

Eligible pair: certified (after the whale guards, `guards`), exactly one end on the floor, its marker
in the query/floor profile, and not ruled out by a reader (marker or pair). The profile is built by
`reveal.connections`: markers active in the query's SAE code or in the passages of the first
`reveal.BEARING` floor entries (a floor passage is the floor record's chunk closest to the query), so
a seat bears on the question; before issue 47 it was any marker active in 2 of the 28 floor passages.

Filling (`select_seats`), one seat per marker: while seats remain and markers are left,
  1. keep the markers used least in this session so far (leximin over session usage);
  2. among them keep those whose signature class has the fewest seats in this seating (spread
     across classes);
  3. draw one marker uniformly (seeded), then one of its eligible pairs uniformly; its off-floor
     end is seated (a record already seated is skipped and the next pair of that marker tried).
Too few eligible markers: fewer seats, the shortfall and its reasons reported, never padded.
A failed certificate is refused (`CertificateRefused`).
"""

from __future__ import annotations

import zlib
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError

# The dial's range, from the serendipity seed document (shared/seeds/heart-of-gold-serendipity.txt,
# "Seating"): "The dial offers no seats, one seat, or up to 28 seats." It equals the floor's size
# (sidelight.methods.floor.DEFAULT_N) in that document, but it is a separate setting.
MAX_DIAL = 28
# The dial when none is given: the seed document's worked example "used dial 3".
DEFAULT_DIAL = 3


class CertificateRefused(InputError):
    """Seating was asked to use a certificate whose placebo test failed."""


@dataclass
class Seat:
    pair: int  # row in the certificate's pairs
    marker: int
    floor_pos: int  # the end on the floor
    seated_pos: int  # the off-floor end (the passage offered)
    signature: tuple


@dataclass
class Seating:
    dial: int
    seats: list[Seat]
    floor_entries: int
    touching: int  # certified pairs with an end on the floor
    floor_entries_touched: int
    both_on_floor: int
    outside_profile: int
    ruled_out: int
    eligible_pairs: int
    eligible_markers: int
    notes: list[str] = field(default_factory=list)

    @property
    def shortfall(self) -> int:
        return self.dial - len(self.seats)

    def header(self) -> str:
        lines = [f"seating: {self.dial} seat(s) offered, {len(self.seats)} filled, one per marker; "
                 f"eligible pool {self.eligible_pairs} pair(s) over {self.eligible_markers} marker(s)",
                 f"  pool built from {self.touching} certified pair(s) touching the {self.floor_entries_touched} "
                 f"floor entries: {self.both_on_floor} both ends on the floor,",
                 f"  {self.outside_profile} marker outside the query/floor feature profile, "
                 f"{self.ruled_out} ruled out as not useful"]
        if self.shortfall > 0:
            lines.append(f"  undersubscribed: only {self.eligible_markers} distinct marker(s) were eligible"
                         + (f"; {self.shortfall} seat(s) left empty" if self.dial else ""))
        lines += [f"  {n}" for n in self.notes]
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {"dial": self.dial, "filled": len(self.seats), "shortfall": self.shortfall,
                "reasons": {"certified pairs touching the floor": self.touching,
                            "floor entries touched": self.floor_entries_touched,
                            "both ends on the floor": self.both_on_floor,
                            "marker outside the query/floor profile": self.outside_profile,
                            "ruled out": self.ruled_out,
                            "eligible pairs": self.eligible_pairs, "eligible markers": self.eligible_markers},
                "notes": self.notes}


def rng_for(seed: int, query: str, purpose: str) -> np.random.Generator:
    return np.random.default_rng([int(seed), zlib.crc32(query.encode()), zlib.crc32(purpose.encode())])


def select_seats(pairs: dict, floor: set[int], profile: set[int], dial: int, usage: dict[int, int],
                 rng: np.random.Generator, ruled_markers: AbstractSet[int] = frozenset(),
                 ruled_pairs: AbstractSet[tuple] = frozenset(), ids=None) -> Seating:
    """Pure seating over certificate pair columns (a, b, marker, signature); see the module docstring."""
    if not (0 <= int(dial) <= MAX_DIAL):
        raise InputError(f"dial must be between 0 and {MAX_DIAL}, got {dial}")
    dial = int(dial)
    a, b, mk = (np.asarray(pairs[k], np.int64) for k in ("a", "b", "marker"))
    sig = np.asarray(pairs["signature"]).reshape(len(a), -1) if len(a) else np.zeros((0, 1), np.int8)
    fl = np.fromiter(floor, np.int64) if floor else np.zeros(0, np.int64)
    on_a, on_b = np.isin(a, fl), np.isin(b, fl)
    touching = on_a | on_b
    both = on_a & on_b
    one = touching & ~both
    in_prof = np.isin(mk, np.fromiter(profile, np.int64)) if profile else np.zeros(len(a), bool)
    outside = one & ~in_prof
    ruled = np.zeros(len(a), bool)
    for i in np.flatnonzero(one & in_prof):
        key = tuple(sorted((ids[a[i]], ids[b[i]]))) if ids is not None else tuple(sorted((int(a[i]), int(b[i]))))
        ruled[i] = int(mk[i]) in ruled_markers or key in ruled_pairs
    elig = np.flatnonzero(one & in_prof & ~ruled)
    touched = np.union1d(a[touching & on_a], b[touching & on_b])
    by_marker: dict[int, list[int]] = {}
    for i in elig:
        by_marker.setdefault(int(mk[i]), []).append(int(i))
    out = Seating(dial, [], len(floor), int(touching.sum()), int(len(touched)), int(both.sum()),
                  int(outside.sum()), int((one & in_prof & ruled).sum()), int(len(elig)), len(by_marker))
    seated: set[int] = set()
    class_seats: dict[tuple, int] = {}
    left = dict(sorted(by_marker.items()))
    while len(out.seats) < dial and left:
        ms = np.array(list(left))
        use = np.array([usage.get(int(m), 0) for m in ms])
        ms = ms[use == use.min()]
        cls = {int(m): _class(sig, left[int(m)]) for m in ms}
        cnt = np.array([class_seats.get(cls[int(m)], 0) for m in ms])
        ms = ms[cnt == cnt.min()]
        m = int(ms[rng.integers(len(ms))])
        rows = list(left.pop(m))
        while rows:
            row = rows.pop(int(rng.integers(len(rows))))
            fpos, spos = (int(a[row]), int(b[row])) if on_a[row] else (int(b[row]), int(a[row]))
            if spos in seated:
                continue
            seated.add(spos)
            signature = tuple(int(x) for x in sig[row])
            out.seats.append(Seat(row, m, fpos, spos, signature))
            class_seats[signature] = class_seats.get(signature, 0) + 1
            break
        else:
            out.notes.append(f"marker f{m}: every eligible pair's off-floor record was already seated")
    return out


def _class(sig: np.ndarray, rows: list[int]) -> tuple:
    """A marker's signature class: the most common signature among its eligible pairs (ties: smallest)."""
    counts: dict[tuple, int] = {}
    for i in rows:
        t = tuple(int(x) for x in sig[i])
        counts[t] = counts.get(t, 0) + 1
    return min(counts, key=lambda t: (-counts[t], t))


def pair_panel(pairs: dict, i: int, ids, label: str, graph_applied: bool) -> str:
    """One seated connection in the seed's panel format."""
    a, b = ids[int(pairs["a"][i])], ids[int(pairs["b"][i])]
    sig = ",".join(str(int(x)) for x in np.atleast_1d(pairs["signature"][i]))
    loo = ",".join(str(int(x)) for x in np.atleast_1d(pairs["loo"][i]))
    d = int(pairs["distance"][i])
    dist = "not applied" if not graph_applied else (str(d) if d >= 0 else "beyond cap")
    shared = f"shared neighbours {int(pairs['shared_neighbours'][i])}" if graph_applied else "shared neighbours n/a"
    return (f"{a}  <->  {b}\n"
            f"  via {label} (f{int(pairs['marker'][i])})\n"
            f"  evidence_rel {pairs['evidence_rel'][i]:.2f} | chance x{pairs['chance'][i]:.1f} | "
            f"kinship {pairs['kinship'][i]:.3f} (pctile {pairs['kinship_pctile'][i]:.1f}) | "
            f"act_symmetry {pairs['act_symmetry'][i]:.3f}\n"
            f"  signature ({sig}) (LOO ({loo})) | graph distance {dist} | {shared}")
