"""A hit's best passage: which section of the document answers the query, where it is, a snippet.

Every method and lane ranks whole records; this step reads the few records a reader is shown
and picks, in each, the section that best matches the query:

- lexically, by BM25 over the record's sections, each read as the dense lane reads it (the
  record's title and the section's parent headings, then its text: `corpus.passages.window_texts`;
  chosen on notes-v1 dev, bench/sections.py, over the section's text alone), with the collection's
  idf and each section's length against the record's mean section length, and
- with section windows (`structures.dense.Passages(sections=True)`), by the query's best cosine
  with each section's windows,

mixed as `mix * lexical/max(lexical) + (1 - mix) * (cosine - min)/(max - min)` within the record
(`mix` 1 without vectors). Ties go to the earlier section. The snippet is the section's sentence
with the most query-term weight (idf), followed by the next sentences while it fits, with every
query term marked; a section with no query term gives its first sentences.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ..corpus.model import Record
from ..corpus.passages import Section, sections_of, window_texts
from ..results import Hit, Passage, Results

if TYPE_CHECKING:
    from .index import Index

_WORD = re.compile(r"[A-Za-z0-9]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)|\n\s*\n|\n(?=\s*[-*+#>|]|\s*\d+[.)]\s)")
SNIPPET_CHARS = 240  # the default bound on a snippet's length
MAX_SNIPPET_CHARS = 4000


@dataclass(frozen=True)
class PassageSettings:
    """How passages are picked: `mix` (lexical share when the index has section vectors) and the
    snippet's length bound in characters."""

    mix: float = 0.5
    snippet_chars: int = SNIPPET_CHARS


class QueryTerms:
    """A query's terms as the index's tokenizer makes them, each with its idf."""

    def __init__(self, index: "Index", query: str):
        lex = index.lexical
        self.tokenizer = lex.tokenizer
        terms = list(dict.fromkeys(self.tokenizer(query)))
        ids = [lex.find_term(t) for t in terms]
        known = [(t, i) for t, i in zip(terms, ids) if i is not None]
        idf = lex.idf(np.asarray([i for _, i in known], dtype=np.int64)) if known else np.zeros(0)
        self.idf = {t: max(float(w), 0.0) for (t, _), w in zip(known, idf)}
        self.k1, self.b = lex.params.k1, lex.params.b

    def words(self, text: str) -> list[tuple[int, int, str | None]]:
        """(start, end, term or None) of each word of `text`."""
        spans = [(m.start(), m.end(), m.group().lower()) for m in _WORD.finditer(text)]
        terms = self.tokenizer.terms_of_words([w for _, _, w in spans])
        return [(a, b, t) for (a, b, _), t in zip(spans, terms)]

    def bm25(self, sections: Sequence[list[str | None]]) -> np.ndarray:
        """BM25 of each section (its terms given), lengths against the sections' mean."""
        lengths = np.asarray([sum(t is not None for t in s) for s in sections], dtype=np.float64)
        avg = float(lengths.mean()) if len(lengths) and lengths.mean() > 0 else 1.0
        out = np.zeros(len(sections))
        for i, terms in enumerate(sections):
            counts: dict[str, int] = {}
            for t in terms:
                if t in self.idf:
                    counts[t] = counts.get(t, 0) + 1
            norm = self.k1 * (1 - self.b + self.b * lengths[i] / avg)
            out[i] = sum(self.idf[t] * c * (self.k1 + 1) / (c + norm) for t, c in counts.items())
        return out


def best_section(index: "Index", position: int, record: Record, terms: QueryTerms,
                 query_vector: np.ndarray | None, settings: PassageSettings) -> tuple[Section, np.ndarray]:
    """The record's best section for the query, and every section's mixed score."""
    sections = sections_of(record)
    texts = dict(window_texts(record))  # a section with no words in it scores 0
    words = [[t for _, _, t in terms.words(texts.get(s.index, ""))] for s in sections]
    lexical = terms.bm25(words)
    score = lexical / lexical.max() if lexical.max() > 0 else np.zeros(len(sections))
    dense = section_cosines(index, position, query_vector, len(sections))
    if dense is not None:
        score = settings.mix * score + (1 - settings.mix) * dense
    return sections[int(np.argmax(score))], score  # argmax: the first of equal scores


def section_cosines(index: "Index", position: int, query_vector: np.ndarray | None,
                    n_sections: int) -> np.ndarray | None:
    """Each of a record's `n_sections` sections: its best window's cosine to the query, min-max scaled
    over the record's sections (0 for a section with no window); None without vectors or windows."""
    if query_vector is None or index.dense is None:
        return None
    owned, cos = index.dense.window_cosines(position, query_vector)
    if not len(owned):
        return None
    best = np.full(n_sections, -np.inf)
    np.maximum.at(best, np.minimum(owned, n_sections - 1), cos)
    seen = np.isfinite(best)
    lo, hi = best[seen].min(), best[seen].max()
    return np.where(seen, (best - lo) / (hi - lo) if hi > lo else 1.0, 0.0)


def snippet(text: str, terms: QueryTerms, limit: int = SNIPPET_CHARS) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The best-matching sentences of `text` (at most `limit` characters) and the query terms' spans in it."""
    cuts = [0] + [m.end() for m in _SENTENCE_END.finditer(text)] + [len(text)]
    sentences = [(a, b) for a, b in zip(cuts, cuts[1:]) if text[a:b].strip()]
    if not sentences:
        return "", ()
    weight = [sum({t: terms.idf[t] for _, _, t in terms.words(text[a:b]) if t in terms.idf}.values())
              for a, b in sentences]
    first = int(np.argmax(weight)) if max(weight) > 0 else 0
    start, end = sentences[first]
    for a, b in sentences[first + 1:]:
        if b - start > limit:
            break
        end = b
    piece = " ".join(text[start:end].split())
    if len(piece) > limit:
        piece = _trim(piece, terms, limit)
    marks = tuple((a, b) for a, b, t in terms.words(piece) if t in terms.idf)
    return piece, marks


def _trim(piece: str, terms: QueryTerms, limit: int) -> str:
    """`limit` characters of `piece` around its first query term, cut at spaces, with ellipses."""
    hit = next((a for a, _, t in terms.words(piece) if t in terms.idf), 0)
    lo = max(0, min(hit - limit // 4, len(piece) - limit))
    if lo > 0:
        lo = piece.find(" ", lo) + 1 or lo
    hi = lo + limit - 2
    if hi < len(piece):
        hi = piece.rfind(" ", lo, hi) if piece.rfind(" ", lo, hi) > lo else hi
    return ("…" if lo > 0 else "") + piece[lo:hi].strip() + ("…" if hi < len(piece) else "")


def passage_of(index: "Index", hit: Hit, terms: QueryTerms, query_vector: np.ndarray | None,
               settings: PassageSettings) -> Passage:
    """The best passage of one hit's record."""
    position = index.corpus.position[hit.id]
    record = index.corpus.records[position]
    section, _ = best_section(index, position, record, terms, query_vector, settings)
    text, marks = snippet(record.text[section.start:section.end], terms, settings.snippet_chars)
    path = record.metadata.get("path") if isinstance(record.metadata, dict) else None
    return Passage(section.path, text, marks, path if isinstance(path, str) else None, section.lines,
                   section.pages, section.anchor, section.index)


def with_passages(index: "Index", hits: Sequence[Hit], query: str,
                  settings: PassageSettings = PassageSettings()) -> list[Hit]:
    """`hits`, each with its record's best passage (see the module docstring)."""
    if not hits:
        return list(hits)
    terms = QueryTerms(index, query)
    vector = section_query_vector(index, query)
    return [replace(h, passage=passage_of(index, h, terms, vector, settings)) for h in hits]


def section_query_vector(index: "Index", query: str) -> np.ndarray | None:
    """The query's vector when the index keeps section windows (their cosines join the section pick),
    else None; one rule for every caller of `best_section` (a sharded index's windows are on its shards)."""
    dense = index.dense
    rule = getattr(dense, "passages", None)  # read leniently: a stand-in dense store need not carry it
    if dense is not None and rule is not None and rule.sections and query.strip():
        return dense.encode_query(query)
    return None


def results_with_passages(index: "Index", results: Results, settings: PassageSettings = PassageSettings()) -> Results:
    """`results` with every hit's best passage (the same answer otherwise: query, method, coverage, trace)."""
    return results.with_hits(with_passages(index, results.hits, results.query, settings))
