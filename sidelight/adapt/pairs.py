"""Training pairs from the corpus alone (inverse cloze), from training qrels, and mined negatives.

Inverse cloze (Lee et al., 2019): cut one segment (a sentence, or a clause after ";") out of a
record; the segment is the anchor, the rest of the record in the form the index encodes it (title,
aliases, the other segments) is its positive. A one-sentence dictionary record becomes
definition -> its words, the signal reverse dictionaries are trained on. The record's own names
are cut out of the anchor, as a person describing a thing does not say its name.

A hard negative for an anchor is a BM25 neighbour: drawn from ranks 3-10 of the other records
(the first ranks are too often a second correct answer, such as a synonym's record); a random
record when BM25 finds fewer.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

from ..corpus.model import Record
from ..methods import get_method
from ..progress import progress_bar

if TYPE_CHECKING:
    from ..index import Index

_SEGMENT = re.compile(r"(?<=[.!?;])\s+")
MIN_ANCHOR_WORDS = 3
NEGATIVE_RANKS = (3, 10)  # mined negatives come from these BM25 ranks (1-based, inclusive)


@dataclass(frozen=True)
class Pair:
    anchor: str
    positive: str
    record: int                 # position of the positive record
    negative: str | None = None
    source: str = "ict"         # "ict" or "qrels"
    whole: bool = False         # the positive is the whole record (a supervised pair, or a kept anchor)


def segments(text: str) -> list[str]:
    """Sentences and ';' clauses, quotes and surrounding punctuation trimmed."""
    out = []
    for s in _SEGMENT.split(text):
        s = s.strip().strip(";").strip().strip('"').strip()
        if s:
            out.append(s)
    return out


def without_names(text: str, names: list[str]) -> str:
    for name in sorted(names, key=len, reverse=True):
        if name.strip():
            text = re.sub(rf"(?<!\w){re.escape(name)}(?!\w)", " ", text, flags=re.IGNORECASE)
    return " ".join(text.split())


def cloze_pair(index: "Index", position: int, rng: random.Random, keep: float = 0.0) -> Pair | None:
    """One inverse-cloze pair for a record, or None when it has no segment long enough. With
    probability `keep` the positive is the whole record, anchor included (as Lee et al. do, so the
    model keeps matching a record that does contain the query's words)."""
    rec = index.corpus.records[position]
    parts = segments(rec.text)
    names = [rec.title, *rec.aliases]
    choices = [i for i, s in enumerate(parts) if len(without_names(s, names).split()) >= MIN_ANCHOR_WORDS]
    if not choices:
        return None
    cut = rng.choice(choices)
    kept = rng.random() < keep
    return Pair(without_names(parts[cut], names), rest_of(index, position, None if kept else cut), position,
                whole=kept)


def rest_of(index: "Index", position: int, cut: int | None) -> str:
    """A record as the index encodes it, without its segment number `cut` (None: whole)."""
    rec = index.corpus.records[position]
    if cut is None:
        return index.corpus.indexed_text(rec)
    text = " ".join(p for i, p in enumerate(segments(rec.text)) if i != cut)
    return index.corpus.indexed_text(Record(rec.id, rec.title, text, aliases=rec.aliases)).strip()


def corpus_pairs(index: "Index", max_pairs: int, seed: int, keep: float = 0.0) -> list[Pair]:
    """Inverse-cloze pairs for a seeded sample of up to `max_pairs` records (corpus order kept)."""
    rng = random.Random(seed)
    n = len(index.corpus)
    positions = sorted(rng.sample(range(n), min(n, max_pairs)))
    return [p for p in (cloze_pair(index, i, rng, keep) for i in positions) if p is not None]


def qrels_pairs(index: "Index", queries: Mapping[str, str], qrels: Mapping[str, Mapping[str, int]],
                repeats: int) -> list[Pair]:
    """(training query, relevant record's indexed text) for every positive judgement, `repeats` times."""
    pos = index.corpus.position
    out = []
    for qid in sorted(qrels):
        for doc, grade in sorted(qrels[qid].items()):
            if grade > 0 and qid in queries and doc in pos:
                rec = index.corpus.records[pos[doc]]
                out += [Pair(queries[qid], index.corpus.indexed_text(rec), pos[doc], source="qrels", whole=True)] * repeats
    return out


def mine_negatives(index: "Index", pairs: list[Pair], seed: int, progress: bool = True) -> list[Pair]:
    """Each pair with one BM25 neighbour of its anchor (not its own record) as the hard negative,
    in the positive's form: for a cloze pair the neighbour without one of its segments (a positive
    without its anchor sentence against whole negatives would teach "a record holding a sentence
    like the query is wrong"); for a supervised pair the whole neighbour."""
    rng = random.Random(seed)
    lo, hi = NEGATIVE_RANKS
    out = []
    bm25 = get_method("bm25")
    cache: dict[str, list[int]] = {}
    with progress_bar(len(pairs), "mining negatives", progress) as advance:
        for p in pairs:
            if p.anchor not in cache:
                cache[p.anchor] = [int(i) for i in index.rank(bm25, p.anchor, hi + 1).positions]
            pool = [i for i in cache[p.anchor] if i != p.record][lo - 1:hi]
            if not pool:  # BM25 found too little: any other record
                pool = [i for i in (rng.randrange(len(index.corpus)),) if i != p.record] or [(p.record + 1) % len(index.corpus)]
            other = rng.choice(pool)
            cut = None
            if not p.whole:
                n_parts = len(segments(index.corpus.records[other].text))
                cut = rng.randrange(n_parts) if n_parts else None
            out.append(Pair(p.anchor, p.positive, p.record, rest_of(index, other, cut), p.source, p.whole))
            advance(1)
    return out
