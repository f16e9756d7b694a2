"""The names and the relation wording a question holds, as the relation lane reads them.

Names: every record's title and aliases in one automaton (`name_matcher`); a record the question
names is one of its anchors. Wording: relation cues from a versioned data file
(`data/relation-cues-v1.json`: "a kind of" -> hyponym, ...), each with the edge types it asks for on
either side of the name it attaches to (`attach_cue`). The question words and stop words here are
what the lane leaves out of the residual question.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import TYPE_CHECKING, Any

from ..structures.names import NameMatch, NameMatcher
from ..text import stopwords

if TYPE_CHECKING:
    from .context import SearchContext

_DATED = re.compile(r"(\d{4}-\d{2}-\d{2})\s+\S")


def _cues() -> dict[str, Any]:
    cues: dict[str, Any] = json.loads(resources.files(__package__).joinpath("data/relation-cues-v1.json").read_text())
    return cues


CUES = _cues()
QUESTION_WORDS = frozenset(CUES["question_words"])
RESIDUAL_STOP = stopwords("lucene-en-v1") | QUESTION_WORDS
_CUE_PHRASES = sorted(((tuple(c["phrase"].split()), c) for c in CUES["cues"]), key=lambda pc: -len(pc[0]))


def name_matcher(index: "SearchContext") -> NameMatcher:
    """Every record's title and aliases in one automaton (built once per index contents); names of
    stop words and question words only ("it", "what") are left out. A title that starts with an
    ISO date and goes on ("2021-05-08 Templater, Syncthing & ...", a dated note) is also named by
    its date alone, as a reader names it ("the 2021-05-08 roundup")."""
    def build() -> NameMatcher:
        names = [(n, i) for i, r in enumerate(index.corpus.records) for n in (r.title, *r.aliases)]
        names += [(m.group(1), i) for i, r in enumerate(index.corpus.records) if (m := _DATED.match(r.title))]
        return NameMatcher(names, RESIDUAL_STOP)

    return index.memo("relation-names", None, build)


def find_cues(tokens: list[str]) -> list[tuple[dict[str, Any], set[int]]]:
    """Every relation cue in `tokens`, left to right (a longer phrase wins where two start), with
    the tokens each covers."""
    out: list[tuple[dict[str, Any], set[int]]] = []
    taken: set[int] = set()
    for i in range(len(tokens)):
        for phrase, cue in _CUE_PHRASES:
            span = set(range(i, i + len(phrase)))
            if tuple(tokens[i:i + len(phrase)]) == phrase and not span & taken:
                out.append(({"phrase": " ".join(phrase), "start": i, "end": i + len(phrase), **cue}, span))
                taken |= span
                break
    return out


def attach_cue(cue: dict[str, Any], matches: list[NameMatch], tokens: list[str]
               ) -> tuple[NameMatch | None, list[str]]:
    """The name the cue speaks of and the edge types it asks for: a name right after the cue
    ("kind of tree") takes the `before` types, a name right before it ("a beech is a kind of")
    the `after` types. When a question word follows the cue ("a kind of what ...") the asked-for
    record comes after it, so the name before the cue is the anchor."""
    gap = CUES["gap"]
    after_cue = [m for m in matches if 0 <= m.start - cue["end"] <= gap]
    before_cue = [m for m in matches if 0 <= cue["start"] - m.end <= gap]
    asks_next = any(t in QUESTION_WORDS for t in tokens[cue["end"]:cue["end"] + gap])
    if after_cue and not (asks_next and before_cue):
        return min(after_cue, key=lambda m: m.start), cue["before"]
    if before_cue:
        return max(before_cue, key=lambda m: m.end), cue["after"]
    return None, []
