"""Teacher pairs: another dictionary's definitions -> the WordNet senses of the word they define.

For each GCIDE sense (`corpus.gcide`) of a noun, verb, adjective or adverb that was NOT copied from
WordNet (WordNet-sourced senses would teach WordNet's glosses back to themselves), whose headword
is a word of a sense of the index (a `wordnet-all` record) of the same part of speech:

* the anchor is the definition with the headword cut out (as a person describing it would);
* the positive is, with probability `NAMES_SHARE`, the "names" view (the word itself), else the
  matching sense whose gloss shares the most tokens with the definition (ties: the earlier record,
  WordNet's more frequent sense) in the form the index encodes it;
* the hard negative is drawn from BM25 ranks 1-8 of the index's records that do NOT hold the
  headword (a record holding it would be a correct answer), in the positive's view.

An anchor that shares a run of `LEAK_RUN` tokens with any benchmark description (`leaks`) is dropped:
no describe-v1/v2 wording reaches training.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from ..corpus.model import Corpus
from ..methods import get_method
from .pairs import Pair, without_names

if TYPE_CHECKING:
    from ..index import Index

NAMES_SHARE = 0.25
LEAK_RUN = 4
NEGATIVE_POOL = 8
MIN_ANCHOR_WORDS = 3
SAME_POS = {"noun": ("noun",), "verb": ("verb",), "adjective": ("adjective", "adjective satellite"),
            "adverb": ("adverb",)}
ALL_POS = {p for ps in SAME_POS.values() for p in ps}
_TOKEN = re.compile(r"[a-z0-9]+")


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def runs(text: str, n: int = LEAK_RUN) -> set[tuple[str, ...]]:
    t = tokens(text)
    return {tuple(t[i:i + n]) for i in range(len(t) - n + 1)}


def leaks(anchor: str, description_runs: set[tuple[str, ...]]) -> bool:
    """True when `anchor` shares a run of `LEAK_RUN` tokens with a benchmark description."""
    return not runs(anchor).isdisjoint(description_runs)


BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def benchmark_descriptions(folder: Path = BENCHMARKS) -> list[str]:
    """Every description of every describe-v* benchmark in `folder` (none when it is absent)."""
    import json

    return [json.loads(line)["query"] for f in sorted(folder.glob("describe-v*.jsonl"))
            for line in f.read_text(encoding="utf-8").splitlines() if line.strip()]


def senses_by_word(index: "Index") -> dict[tuple[str, str | None], list[int]]:
    """(lower-cased word, part of speech or None) -> positions of the index records holding it, in index order."""
    out: dict[tuple[str, str | None], list[int]] = {}
    for i, rec in enumerate(index.corpus.records):
        pos = rec.metadata.get("pos")
        for w in (rec.title, *rec.aliases):
            key = (w.lower().replace("_", " "), pos)
            if i not in out.setdefault(key, []):
                out[key].append(i)
    return out


def usable_senses(index: "Index", teacher: Corpus, descriptions: Iterable[str] = ()) -> tuple[list[tuple], int]:
    """([(anchor, headword, positions of its same-pos senses, positions of any sense holding it)], how
    many were dropped as leaks): the teacher senses that make pairs, in teacher order."""
    by_word = senses_by_word(index)
    banned = set().union(*(runs(d) for d in descriptions)) if descriptions else set()
    usable, leaked = [], 0
    for rec in teacher.records:
        if rec.metadata.get("wordnet") or rec.metadata.get("pos") not in SAME_POS:
            continue
        word = rec.title.lower()
        found = [p for pos in SAME_POS[rec.metadata["pos"]] for p in by_word.get((word, pos), [])]
        holding = {p for pos in ALL_POS for p in by_word.get((word, pos), [])}
        anchor = without_names(rec.text, [rec.title, *rec.aliases])
        if found and len(anchor.split()) >= MIN_ANCHOR_WORDS:
            if leaks(anchor, banned):
                leaked += 1
            else:
                usable.append((anchor, rec.title, sorted(found), holding))
    return usable, leaked


def teacher_pairs(index: "Index", teacher: Corpus, max_pairs: int, seed: int,
                  descriptions: Iterable[str] = ()) -> list[Pair]:
    """Pairs as the module docstring says, for a seeded sample of up to `max_pairs` teacher senses."""
    rng = random.Random(seed)
    usable, _ = usable_senses(index, teacher, descriptions)
    chosen = sorted(rng.sample(range(len(usable)), min(max_pairs, len(usable))))
    bm25, out = get_method("bm25"), []
    for i in chosen:
        anchor, _, found, holding = usable[i]
        have = set(tokens(anchor))
        best = max(found, key=lambda p: (len(have & set(tokens(index.corpus.records[p].text))), -p))
        names = rng.random() < NAMES_SHARE
        others = [int(p) for p in index.rank(bm25, anchor, NEGATIVE_POOL + len(holding)).positions
                  if int(p) not in holding][:NEGATIVE_POOL]
        neg = rng.choice(others) if others else None
        view = (lambda p: index.corpus.records[p].title) if names else \
            (lambda p: index.corpus.indexed_text(index.corpus.records[p]))
        out.append(Pair(anchor, view(best), best, view(neg) if neg is not None else None,
                        "teacher-names" if names else "teacher", whole=True))
    return out
