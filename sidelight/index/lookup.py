"""Describe it, find it: words for a description, ranked by their best record (a reverse dictionary).

A dictionary index (e.g. `wordnet-all`) holds one record per sense with its words as the title
and aliases. `lookup` ranks records with any method, then ranks *words*: a word's score is the
score of its best-ranked record, and each result lists the records (senses) it was found through,
best first, with their glosses. Ties break by the word's first appearance in the record ranking,
which is itself by score, then ascending record id. A frequency prior re-orders the first 100
words (`rank_words`), as the lab measures it, on a scale that is the same for every method: the
words' scores are min-max normalised over those words, and the prior adds W times the word's
ln(1 + count) over the largest in them, so W = 0.1 lifts the commonest word by a tenth of the
score range whatever the method. A dictionary index (records with `word_counts`) has it on by
default at its method's `DEFAULT_PRIORS` weight; an index with vectors ranks records with `DEFAULT_METHOD`.
With `views` (`sidelight.index.views`) dense ranks senses by their gloss plus their names and
their hypernyms' names, weighted; a word is still scored by its best sense.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, TYPE_CHECKING, Iterable

import numpy as np

from ..corpus.model import Record
from ..errors import InputError
from ..methods.params import Param
from ..results import Hit, Results
from ..structures.dense import cosines
from ..structures.ranking import top_k
from .views import Views, view_matrix

if TYPE_CHECKING:
    from ..index import Index

#: `pos=` names and the metadata values they admit (WordNet's adjective satellites are adjectives).
PARTS_OF_SPEECH = {"noun": ("noun",), "verb": ("verb",), "adjective": ("adjective", "adjective satellite"),
                   "adverb": ("adverb",)}
PRIOR = Param("prior", float, 0.0, "weight of the word's normalised ln(1 + corpus frequency), added to its "
              "min-max normalised score", low=0.0)
#: the default prior weight by the method ranking the senses: each method's best MRR@10 on all of
#: describe-v1 as development data (`bench/lookup.py --choose`; README "Look up a word") over the
#: default model, MiniLM adapted with the GCIDE teacher (bench/results/lookup-choice-gcide.json):
#: dense 0.263 at 0.3 (0.246 at 0), rrf 0.173 at 0.5, hybrid-linear (alpha 0.1) 0.234 at 0.1; BM25 is
#: best without it (0.052 at 0). Over frozen MiniLM dense's best weight is 0.5 (0.240; 0.239 at 0.3;
#: bench/results/lookup-choice.json). Dense, the best method with either model, is `DEFAULT_METHOD`.
DEFAULT_PRIORS = {"bm25": 0.0, "dense": 0.3, "rrf": 0.5, "hybrid-linear": 0.1}
DEFAULT_PRIOR = DEFAULT_PRIORS["dense"]
DEFAULT_METHOD = "dense"  # on an index with vectors; BM25 without
#: the view weights of a dense lookup on a dictionary index (`default_views`; bench/lookup_views.py)
DEFAULT_VIEWS = Views()
MIN_DEPTH = 100  # records ranked before words are gathered (at least this many, and 20 per word
# asked for), and the words a prior re-orders (at least this many, and every word asked for)


def default_lookup_method(index: "Index") -> str:
    """`DEFAULT_METHOD` on an index with vectors, else BM25."""
    return DEFAULT_METHOD if index.dense is not None else "bm25"


def default_prior(index: "Index", method: str) -> float:
    """On a dictionary index (its first record has `word_counts`, as every `wordnet-all` record
    does) the method's `DEFAULT_PRIORS` weight (`DEFAULT_PRIOR` for a method not there), else 0."""
    recs = index.corpus.records
    return DEFAULT_PRIORS.get(method, DEFAULT_PRIOR) if recs and "word_counts" in recs[0].metadata else 0.0


def default_views(index: "Index", method: str) -> Views:
    """`DEFAULT_VIEWS` for `dense` on a dictionary index (records with `word_counts`) with one vector per
    record, else no views."""
    recs, dense = index.corpus.records, index.dense
    dictionary = bool(recs) and "word_counts" in recs[0].metadata
    ok = method == "dense" and dense is not None and dense.passages is None and hasattr(dense, "vectors")
    return DEFAULT_VIEWS if dictionary and ok else Views()


def lookup(index: "Index", description: str, k: int = 10, method: str | None = None, pos: str | None = None,
           depth: int | None = None, prior: float | None = None, views: "Views | dict[str, Any] | str | None" = None,
           **params: Any) -> Results:
    """The k best words for `description`, each with the senses that carried it (`Hit.evidence["synsets"]`).

    `method` None: `default_lookup_method`; `prior` None: `default_prior`, 0: off (see `rank_words`);
    `views` None or all weights 0: senses ranked by `method` alone, else by `dense` with views
    (`sidelight.index.views`; only with method dense)."""
    method, asked = method or default_lookup_method(index), prior is not None
    chosen = Views.parse(views) if views is not None else default_views(index, method)
    prior = prior if asked else default_prior(index, method)
    if k < 1:
        raise InputError(f"lookup: k must be >= 1, got {k}")
    if pos is not None and pos not in PARTS_OF_SPEECH:
        raise InputError(f"lookup: pos must be one of {', '.join(PARTS_OF_SPEECH)}, got {pos!r}")
    prior = PRIOR.check("lookup", prior)
    where = {"pos": PARTS_OF_SPEECH[pos]} if pos else None
    depth = depth or max(MIN_DEPTH, 20 * k)
    if chosen.on and not (views is None and params):  # a default that method parameters would refuse is off
        positions, scores = view_ranking(index, description, method, depth, where, params, chosen)
    else:
        hits = index.search(description, method, depth, where=where, **params)
        positions = [index.corpus.position[h.id] for h in hits]
        scores = [h.score for h in hits]
    records = [index.corpus.records[p] for p in positions]
    if asked and prior and records and not any("word_counts" in r.metadata for r in records):
        raise InputError("lookup: prior needs word frequencies (record metadata 'word_counts'), which this index "
                         "lacks; rebuild it (e.g. `sidelight index wordnet-all`) or leave prior at 0")
    words = rank_words(zip(records, scores), max(MIN_DEPTH, k), prior)[:k]
    out = [Hit(w.word, i + 1, w.score, w.word,
               {"synsets": [{"id": r.id, "pos": r.metadata.get("pos"), "gloss": r.text} for r in w.senses]})
           for i, w in enumerate(words)]
    return Results(out, description, method)


def view_ranking(index: "Index", description: str, method: str, depth: int, where: dict[str, Any] | None,
                 params: dict[str, Any], views: Views) -> tuple[list[int], list[float]]:
    """(positions, scores) of the `depth` best senses by gloss + weighted views (ties by ascending id)."""
    if index.dense is None:
        raise InputError("lookup: views need the index's vectors; build it with --dense (e.g. `sidelight dense IDX`)")
    if method != "dense" or params:
        raise InputError(f"lookup: views rank senses with method dense and no method parameters, not {method!r}"
                         + (f" with {', '.join(sorted(params))}" if params else ""))
    if index.dense.passages is not None:
        raise InputError("lookup: views need one vector per record; this index keeps windows (passages)")
    s = cosines(view_matrix(index, views), index.dense.encode_query(description))
    keep = np.flatnonzero(index.metadata_mask(where)) if where else np.arange(len(s))
    r = top_k(s[keep], depth, np.asarray(index.id_rank)[keep], positive_only=False)
    return [int(keep[p]) for p in r.positions], [float(x) for x in r.scores]


def lookup_json(words: Results) -> dict[str, Any]:
    """A lookup's answer as the CLI, HTTP and MCP print it: query, method and the words with their senses."""
    return {"query": words.query, "method": words.method,
            "results": [{"word": w.id, "rank": w.rank, "score": w.score, "synsets": w["synsets"]} for w in words]}


@dataclass
class Word:
    """A word of a ranked dictionary: its best record's score (plus the prior), its frequency, its records."""

    word: str
    score: float
    count: int
    senses: list[Record] = field(default_factory=list)


def words_of(record: Record) -> tuple[str, ...]:
    """The words a dictionary record (a sense) stands for: its title, then its aliases."""
    return (record.title, *record.aliases)


def rank_words(ranked: Iterable[tuple[Record, float]], pool: int, prior: float = 0.0,
               until: str | None = None) -> list[Word]:
    """Words of (record, score) pairs ranked best first, in the order their best record comes.

    Every pair is read, unless `until` (a lower-cased word) is given: then reading stops once it is
    gathered along with at least `pool` words. With `prior` > 0 the first `pool` words are
    re-scored (s - min) / (max - min) + prior * ln(1 + count) / max ln(1 + count), min and max over
    those words (a part is 0 when its max is 0 or all scores are equal), count being the word's
    corpus frequency (record metadata `word_counts`, aligned with `words_of`; 0 when absent), and
    re-ordered, ties by first appearance; the words after them keep their order and score. (A reverse dictionary's user mostly wants the common word
    for a thing, not a rare synonym.)"""
    words: dict[str, Word] = {}
    for rec, score in ranked:
        counts = rec.metadata.get("word_counts") or ()
        for i, name in enumerate(words_of(rec)):
            entry = words.get(name.lower())
            if entry is None:
                entry = words[name.lower()] = Word(name, float(score), int(counts[i]) if i < len(counts) else 0)
            if not entry.senses or entry.senses[-1].id != rec.id:
                entry.senses.append(rec)
        if until is not None and len(words) >= pool and until in words:
            break
    out = list(words.values())
    if prior and out:
        head = out[:pool]
        low, high = min(w.score for w in head), max(w.score for w in head)
        top = max(math.log1p(w.count) for w in head)
        for w in head:
            w.score = ((w.score - low) / (high - low) if high > low else 0.0) + \
                (prior * math.log1p(w.count) / top if top > 0 else 0.0)
        out[:pool] = sorted(out[:pool], key=lambda w: -w.score)  # stable: ties keep first appearance
    return out


def split_word_params(params: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    """(the word-level `prior`, the rest: the record ranking method's parameters) of a lookup setting."""
    rest = dict(params)
    return rest.pop("prior", 0.0), rest


def word_ranking(ranked: Iterable[tuple[Record, float]], depth: int, target: str,
                 prior: float = 0.0) -> tuple[list[str], int | None]:
    """(the first `depth` words, lower-cased; the 1-based rank of `target` or None): `lookup`'s
    ranking of words over (record, score) pairs already ranked, read on until the target is found."""
    words = [w.word.lower() for w in rank_words(ranked, depth, prior, until=target.lower())]
    rank = words.index(target.lower()) + 1 if target.lower() in words else None
    return words[:depth], rank
