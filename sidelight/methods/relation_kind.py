"""The relation lane's kind part (issue 43): the kind of record a question asks for, matched against the
folders a record sits in.

A question asks for a record of some kind: "which theme supports ...", "which roundup featured ...",
"which tutorial links to ...", "who gave the talk ...". In a collection read from a folder the folders
often name kinds ("Themes/", "Obsidian Roundup/", "People/", "tutorial/"), and the records the graph
reaches from a named note are of many kinds (its author, a category list, a roundup, a theme).

* Asked-for words (`asked_stems`): after the question's first "which" or "what", up to `MAX_WORDS`
  tokens, stopping at a stop word, a question word or a relation verb (`relation_notes.VERBS`: "which
  board plugin was ..." -> board, plugin; "which roundup links ..." -> roundup);
  "who", "whom" and "whose" ask for a person (`PERSON`). Stemmed (PyStemmer, English).
* Kind words of a record (`folder_kinds`): the stems of its folder names (metadata "path" without the
  file's own name; digits left out), each weighted by how few records sit under it: idf(s) =
  log(N / df(s)), so a folder every record shares (the vault's root) weighs nothing.
* The part: the largest idf of a stem the record's folders share with the asked-for words, min-max
  scaled over the reached records (0 for all when all or none share one: it tells reached records
  apart, never raises them all).
"""

from __future__ import annotations

import math
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

import numpy as np

from ..structures.names import name_tokens
from .relation_cues import RESIDUAL_STOP
from .relation_notes import stem_in, stemmer

if TYPE_CHECKING:
    from .context import SearchContext

MAX_WORDS = 3
#: the asking words a kind follows ("which theme"), and those that ask for a person ("who")
ASKING = frozenset(("which", "what"))
PERSON_ASKING = frozenset(("who", "whom", "whose"))
PERSON = ("people", "person", "author")


def _stems(words: list[str]) -> set[str]:
    return set(stemmer().stemWords([w for w in words if not w.isdigit()]))


def asked_stems(query: str) -> set[str]:
    """The stems of the kind the question asks for (empty when it names none)."""
    tokens = name_tokens(query)
    for i, tok in enumerate(tokens):
        if tok in PERSON_ASKING:
            return _stems(list(PERSON))
        if tok in ASKING:
            words = []
            for t in tokens[i + 1:i + 1 + MAX_WORDS]:
                if t in RESIDUAL_STOP or stem_in(t, "verbs"):
                    break
                words.append(t)
            return _stems(words)
    return set()


def folder_kinds(index: "SearchContext") -> dict[str, tuple[np.ndarray, float]]:
    """Per folder stem: (positions of the records under a folder of that stem, its idf); built once per
    index contents. Records without a path (a dictionary) have none."""
    def build() -> dict[str, tuple[np.ndarray, float]]:
        under: dict[str, list[int]] = {}
        for i, r in enumerate(index.corpus.records):
            path = r.metadata.get("path") if isinstance(r.metadata, dict) else None
            if not isinstance(path, str):
                continue
            for s in _stems([t for part in PurePosixPath(path).parent.parts for t in name_tokens(part)]):
                under.setdefault(s, []).append(i)
        n = len(index.corpus.records)
        return {s: (np.asarray(ps, dtype=np.int64), math.log(n / len(ps))) for s, ps in under.items()}

    return index.memo("relation-folder-kinds", None, build)


def kind_fit(index: "SearchContext", query: str, nodes: np.ndarray) -> np.ndarray:
    """Per reached node: the largest idf of a folder stem it shares with the asked-for kind (0 when the
    question asks no kind); the lane scales it min-max over the reached nodes."""
    asked = asked_stems(query)
    kinds = folder_kinds(index) if asked else {}
    best = np.zeros(index.graph.n_nodes)
    for s in asked & kinds.keys():
        positions, idf = kinds[s]
        best[positions] = np.maximum(best[positions], idf)
    out: np.ndarray = best[nodes]
    return out
