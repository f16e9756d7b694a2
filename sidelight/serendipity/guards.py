"""Whale guards: named rules that rule a certified pair out when its marker cannot mean one thing in both.

The serendipity seed (shared/seeds/heart-of-gold-serendipity.txt, "What happened when I asked it a
question") shows three pairs that passed the statistical test; two were whales: a marker whose top
tokens are about Black feminist philosophy that also fires on black holes (one word, two senses),
and a marker keyed to the name "Susan Stebbing" (a name-based artifact). It also shows that
activation strength (act_symmetry 0.908) cannot tell the senses apart. A reading of SciFact's
certified pairs (issue 47) found the same failure as genre words ("risk", "guidelines") and single
shared words ("lung").

Each guard is a function of mechanical quantities only (no hand list of words). They are tried in
the order of `GUARDS`; the first that fires is recorded as the pair's reason.

Quantities. A chunk's *specific tokens*: its word tokens (lower-cased, >= 3 characters, not stop
words; as `markers.chunk_terms`) found in less than `SPECIFIC_DF` (5%) of all chunks. A marker's
*top chunks*: its `TOP_CHUNKS` (16) most strongly activating chunks (the ones its label is read
from). A pair's *activating spans* on one side: the chunks of that record where the marker is
active (the SAE reads whole chunk windows, so a chunk is the finest span it has); the *strongest
span* is the one with the highest activation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np

if TYPE_CHECKING:
    import scipy.sparse as sp

from ..text import stopwords

SPECIFIC_DF = 0.05  # a token in 1 chunk of 20 or more is a genre word of the collection, not a topic
TOP_CHUNKS = 16  # as `markers.label_markers`: the chunks a marker's label is read from
BOILERPLATE_SHARE = 0.02  # a marker active in one record of fifty or more marks a genre, not a topic ...
BOILERPLATE_MIN = 20  # ... if that is at least 20 records (in a small collection 2% is a pair of records)
ONE_WORD_SHARE = 0.75  # one specific token in three quarters of the top chunks ...
OTHER_WORD_SHARE = 0.4  # ... and no other specific token in two fifths: the marker reads one word
SENSE_QUANTILE = 0.25  # spans less alike than the marker's bottom quarter of its own pairs: two senses
SENSE_SAMPLE = 400  # pairs of the marker's active chunks drawn (seeded) for that quarter
GUARD_SEED = 47  # the draw of those pairs; an arbitrary fixed value
TOPIC_QUANTILE = 0.98  # spans less alike than 98% of the collection's chunk pairs do not share a topic
TOPIC_SAMPLE = 200_000  # chunk pairs from different records drawn (seeded) for that quantile

GUARDS = ("boilerplate marker", "name or single-word marker", "one shared word", "different senses",
          "no shared topic")

_TOK = re.compile(r"[A-Za-z][A-Za-z0-9\-]{2,}")


@dataclass
class GuardData:
    """What the guards read: chunk codes, chunk vectors (unit), chunk texts, chunk -> record."""

    codes: sp.csr_matrix
    vectors: np.ndarray
    texts: Sequence[str]
    chunk_record: np.ndarray
    n_records: int


class Guards:
    """The guards over one collection; marker-level verdicts are cached."""

    def __init__(self, data: GuardData):
        import scipy.sparse as sp

        self.d = data
        self.codes = sp.csr_matrix(data.codes)
        self.csc = self.codes.tocsc()
        v = np.asarray(data.vectors, np.float32)
        self.vectors = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
        stop = stopwords("nltk-en-v1")
        self._raw = [_TOK.findall(t) for t in data.texts]
        toks = [{w.lower() for w in ws} - stop for ws in self._raw]
        df: dict[str, int] = {}
        for s in toks:
            for w in s:
                df[w] = df.get(w, 0) + 1
        n = max(len(toks), 1)
        self.specific = [frozenset(w for w in s if df[w] < SPECIFIC_DF * n) for s in toks]
        rec = np.asarray(data.chunk_record, np.int64)
        self.record_count = np.zeros(self.codes.shape[1], np.int64)
        for f in range(self.codes.shape[1]):
            rows = self.csc.indices[self.csc.indptr[f]:self.csc.indptr[f + 1]]
            self.record_count[f] = len(np.unique(rec[rows]))
        self.record_share = self.record_count / max(data.n_records, 1)
        self._marker: dict[int, str | None] = {}
        self._sense: dict[int, np.ndarray] = {}
        self._topic: float | None = None

    # ---- the marker ------------------------------------------------------------------------
    def top_chunks(self, f: int) -> np.ndarray:
        s, e = self.csc.indptr[f], self.csc.indptr[f + 1]
        rows, vals = self.csc.indices[s:e], self.csc.data[s:e]
        return rows[np.lexsort((rows, -vals))][:TOP_CHUNKS]

    def marker_reason(self, f: int) -> str | None:
        if f not in self._marker:
            self._marker[f] = (GUARDS[0] if boilerplate_marker(int(self.record_count[f]), self.d.n_records) else
                               GUARDS[1] if name_or_single_word(f, self) else None)
        return self._marker[f]

    def sense_sample(self, f: int) -> np.ndarray:
        """Cosines of `SENSE_SAMPLE` seeded pairs of the marker's active chunks from different records."""
        if f not in self._sense:
            s, e = self.csc.indptr[f], self.csc.indptr[f + 1]
            rows = self.csc.indices[s:e]
            rec = np.asarray(self.d.chunk_record)[rows]
            rng = np.random.default_rng([GUARD_SEED, f])
            i = rng.integers(0, len(rows), SENSE_SAMPLE)
            j = rng.integers(0, len(rows), SENSE_SAMPLE)
            keep = rec[i] != rec[j]
            self._sense[f] = np.einsum("ij,ij->i", self.vectors[rows[i[keep]]], self.vectors[rows[j[keep]]])
        return self._sense[f]

    def sense_floor(self, f: int, quantile: float = SENSE_QUANTILE) -> float:
        """The marker's `quantile` cosine between two of its active chunks from different records."""
        cos = self.sense_sample(f)
        return float(np.quantile(cos, quantile)) if len(cos) else -1.0

    def topic_floor(self) -> float:
        """The collection's `TOPIC_QUANTILE` cosine between two chunks of different records (seeded sample)."""
        if self._topic is None:
            rec = np.asarray(self.d.chunk_record)
            rng = np.random.default_rng([GUARD_SEED, 0])
            i = rng.integers(0, len(rec), TOPIC_SAMPLE)
            j = rng.integers(0, len(rec), TOPIC_SAMPLE)
            keep = rec[i] != rec[j]
            cos = np.einsum("ij,ij->i", self.vectors[i[keep]], self.vectors[j[keep]])
            self._topic = float(np.quantile(cos, TOPIC_QUANTILE)) if len(cos) else -1.0
        return self._topic

    # ---- a pair ----------------------------------------------------------------------------
    def check(self, f: int, chunks_a: np.ndarray, chunks_b: np.ndarray) -> str | None:
        """The first guard that rules marker f out between two records given as their chunk ids."""
        r = self.marker_reason(int(f))
        if r is not None:
            return r
        span_a, span_b = self.spans(f, chunks_a), self.spans(f, chunks_b)
        if len(span_a) == 0 or len(span_b) == 0:
            return None
        if one_shared_word(span_a, span_b, self):
            return GUARDS[2]
        if different_senses(f, span_a, span_b, self):
            return GUARDS[3]
        if no_shared_topic(span_a, span_b, self):
            return GUARDS[4]
        return None

    def spans(self, f: int, chunks: np.ndarray) -> np.ndarray:
        """The chunks among `chunks` where f is active, strongest first (ties by chunk id)."""
        chunks = np.asarray(chunks, np.int64)
        col = np.asarray(self.codes[chunks][:, [int(f)]].todense()).ravel()
        on = col > 0
        c, v = chunks[on], col[on]
        return c[np.lexsort((c, -v))]


def boilerplate_marker(records_active: int, n_records: int) -> bool:
    """Boilerplate (the seed's publisher / study-design / "guidelines" markers): the marker is active
    in at least `BOILERPLATE_SHARE` of all records and in at least `BOILERPLATE_MIN` records, so it
    marks the collection's genre, and two records sharing it share what many records share."""
    return records_active >= max(BOILERPLATE_SHARE * n_records, BOILERPLATE_MIN)


def name_or_single_word(f: int, g: Guards) -> bool:
    """Name-based artifact (the seed's "Susan Stebbing" marker): in the marker's top chunks one
    specific token is present in at least `ONE_WORD_SHARE` of them and no other specific token in
    `OTHER_WORD_SHARE` (the marker reads one surface word); or every specific token present in
    `OTHER_WORD_SHARE` of them is written capitalised in the middle of sentences in at least 80%
    of its occurrences there (the marker reads a name)."""
    top = g.top_chunks(f)
    if len(top) < 2:
        return False
    counts: dict[str, int] = {}
    for c in top:
        for w in g.specific[c]:
            counts[w] = counts.get(w, 0) + 1
    share = {w: k / len(top) for w, k in counts.items()}
    common = sorted(w for w, s in share.items() if s >= OTHER_WORD_SHARE)
    if not common:
        return False
    if len(common) == 1 and share[common[0]] >= ONE_WORD_SHARE:
        return True
    return all(_capitalised(w, [g._raw[c] for c in top]) for w in common)


def _capitalised(word: str, chunks: list[list[str]]) -> bool:
    """Is `word` written Capitalised (not at a sentence start, not ALL CAPS) in >= 80% of its uses?"""
    cap = total = 0
    for toks in chunks:
        for k, t in enumerate(toks):
            if t.lower() == word and k > 0:
                total += 1
                cap += t[0].isupper() and not t.isupper()
    return total > 0 and cap >= 0.8 * total


def one_shared_word(span_a: np.ndarray, span_b: np.ndarray, g: Guards) -> bool:
    """Joined by one word (issue 47's reading: "lung" joins T-cell memory and lung-cancer screening):
    the activating spans of the two sides, read as text, have fewer than two specific tokens in
    common; what the marker saw in both is at most one word."""
    ta = frozenset().union(*(g.specific[c] for c in span_a))
    tb = frozenset().union(*(g.specific[c] for c in span_b))
    return len(ta & tb) < 2


def different_senses(f: int, span_a: np.ndarray, span_b: np.ndarray, g: Guards) -> bool:
    """Different senses (the seed's black-holes case): the two strongest activating spans compared in
    context, as whole chunk embeddings, are less alike than the marker's bottom quarter of pairs of
    its own active chunks from different records (`SENSE_QUANTILE`). Activation strength is not
    used: the seed's whale had act_symmetry 0.908."""
    cos = float(g.vectors[span_a[0]] @ g.vectors[span_b[0]])
    return cos < g.sense_floor(f)


def no_shared_topic(span_a: np.ndarray, span_b: np.ndarray, g: Guards) -> bool:
    """No shared topic (the seed's black-holes case seen from the passages: Black feminist philosophy
    beside spacetime singularities; issue 47's readings: two abstracts on unrelated subjects whose
    chunks both excite a marker, 93% of the certified pairs read after the four guards above): the two
    strongest activating spans, as whole chunk embeddings, are less alike than `TOPIC_QUANTILE` (98%)
    of pairs of chunks from different records in the whole collection, so the passages a reader is
    shown are not on one topic. `different senses` compares with the marker's own pairs, whose spread
    is wide exactly when the marker fires on unrelated subjects; this floor is the collection's.
    Measured on the 120 judged SciFact pairs (`bench/whale_guards_dev.py`, dev data): of the 54 the
    four guards keep, it rules out 19 of 27 whales and none of the 27 useful or arguable pairs."""
    return float(g.vectors[span_a[0]] @ g.vectors[span_b[0]]) < g.topic_floor()


def apply_guards(guards: Guards, a: np.ndarray, b: np.ndarray, f: np.ndarray, chunks_of) -> list[str]:
    """The reason per pair ("" when no guard fires); `chunks_of(record)` gives a record's chunk ids."""
    return [guards.check(int(f[i]), chunks_of(int(a[i])), chunks_of(int(b[i]))) or "" for i in range(len(a))]


def counts(reasons: Sequence[str]) -> dict[str, int]:
    return {g: int(sum(r == g for r in reasons)) for g in GUARDS}
