"""Describe it, find it: words for a description, ranked by their best record (a reverse dictionary).

A dictionary index (e.g. `wordnet-all`) holds one record per sense with its words as the title
and aliases. `lookup` ranks records with any method, then ranks *words*: a word's score is the
score of its best-ranked record, and each result lists the records (senses) it was found through,
best first, with their glosses. Ties break by the word's first appearance in the record ranking,
which is itself by score, then ascending record id. Words that appear only beyond the first
`depth` records are not considered.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from ..corpus.model import Record

from ..errors import InputError
from ..results import Hit, Results

if TYPE_CHECKING:
    from ..index import Index

#: `pos=` names and the metadata values they admit (WordNet's adjective satellites are adjectives).
PARTS_OF_SPEECH = {"noun": ("noun",), "verb": ("verb",), "adjective": ("adjective", "adjective satellite"),
                   "adverb": ("adverb",)}
MIN_DEPTH = 100  # records ranked before words are gathered: at least this many, and 20 per word asked for


def lookup(index: "Index", description: str, k: int = 10, method: str = "bm25", pos: str | None = None,
           depth: int | None = None, **params) -> Results:
    """The k best words for `description`, each with the senses that carried it (`Hit.evidence["synsets"]`)."""
    if k < 1:
        raise InputError(f"lookup: k must be >= 1, got {k}")
    if pos is not None and pos not in PARTS_OF_SPEECH:
        raise InputError(f"lookup: pos must be one of {', '.join(PARTS_OF_SPEECH)}, got {pos!r}")
    where = {"pos": PARTS_OF_SPEECH[pos]} if pos else None
    records = index.search(description, method, depth or max(MIN_DEPTH, 20 * k), where=where, **params)
    words: dict[str, dict] = {}
    for hit in records:
        rec = index.corpus.records[index.corpus.position[hit.id]]
        for word in words_of(rec):
            entry = words.setdefault(word.lower(), {"word": word, "score": hit.score, "synsets": []})
            if len(entry["synsets"]) == 0 or entry["synsets"][-1]["id"] != hit.id:
                entry["synsets"].append({"id": hit.id, "pos": rec.metadata.get("pos"), "gloss": rec.text})
    best = list(words.values())[:k]  # dict order: first appearance in the record ranking, best first
    hits = [Hit(w["word"], i + 1, w["score"], w["word"], {"synsets": w["synsets"]}) for i, w in enumerate(best)]
    return Results(hits, description, method)


def words_of(record: Record) -> tuple[str, ...]:
    """The words a dictionary record (a sense) stands for: its title, then its aliases."""
    return (record.title, *record.aliases)


def word_ranking(records: Iterable[Record], depth: int, target: str | None = None) -> tuple[list[str], int | None]:
    """(the first `depth` words, lower-cased, in the order their best record comes, the 1-based rank
    of `target` or None): the same aggregation as `lookup`, over records already ranked. Reading
    stops once `depth` words are gathered and the target is found."""
    order: dict[str, None] = {}
    target = target.lower() if target else None
    for rec in records:
        for word in words_of(rec):
            order.setdefault(word.lower(), None)
        if len(order) >= depth and (target is None or target in order):
            break
    words = list(order)
    rank = words.index(target) + 1 if target in order else None
    return words[:depth], rank
