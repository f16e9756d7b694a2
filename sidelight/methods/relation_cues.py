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
from collections import Counter
from importlib import resources
from typing import TYPE_CHECKING, Any

from ..structures.names import NameMatch, NameMatcher, name_tokens
from ..text import stopwords

if TYPE_CHECKING:
    from .context import SearchContext

#: a title that starts with an ISO date (a dated note, "2021-05-08 Templater ...", or a daily note "2021-05-08")
ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?=\s|$)")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH_ABBREVIATIONS = frozenset(m[:3] for m in _MONTHS)
#: a title's first or last word is a collection's affix when at least this share of its titles of two or more
#: words (and at least `AFFIX_MIN` of them) start or end with it (`without_affixes`)
AFFIX_SHARE, AFFIX_MIN = 0.02, 10


def _cues() -> dict[str, Any]:
    cues: dict[str, Any] = json.loads(resources.files(__package__).joinpath("data/relation-cues-v1.json").read_text())
    return cues


CUES = _cues()
QUESTION_WORDS = frozenset(CUES["question_words"])
RESIDUAL_STOP = stopwords("lucene-en-v1") | QUESTION_WORDS
_CUE_PHRASES = sorted(((tuple(c["phrase"].split()), c) for c in CUES["cues"]), key=lambda pc: -len(pc[0]))


def name_matcher(index: "SearchContext", names: str = "v1") -> NameMatcher:
    """Every record's title and aliases in one automaton (built once per index contents); names of
    stop words and question words only ("it", "what") are left out. A title that starts with an
    ISO date and goes on ("2021-05-08 Templater, Syncthing & ...", a dated note) is also named by
    its date alone, as a reader names it ("the 2021-05-08 roundup"). `names` "v2" adds a title with a
    collection's common first or last word without it (`without_affixes`); "v3" also a dated title (or a
    title that is a date) by its date in words (`spoken_dates`: "the May 8 2021 roundup", "8 May 2021")."""
    def build() -> NameMatcher:
        records = index.corpus.records
        found = [(n, i) for i, r in enumerate(records) for n in (r.title, *r.aliases)]
        found += [(m.group(0), i) for i, r in enumerate(records) if (m := ISO_DATE.match(r.title)) and r.title[m.end():].strip()]
        if names != "v1":
            found += [(n, i) for i, n in without_affixes([r.title for r in records])]
        if names == "v3":
            found += [(n, i) for i, r in enumerate(records) if (m := ISO_DATE.match(r.title)) for n in spoken_dates(m)]
        return NameMatcher(found, RESIDUAL_STOP)

    return index.memo("relation-names", names, build)


def spoken_dates(date: re.Match[str]) -> list[str]:
    """An ISO date (year, month, day groups) as readers write it: "may 8 2021", "8 may 2021", and with
    the month's first three letters ("sep 4 2021"); "May 8, 2021" reads the same, as names drop punctuation."""
    year, month, day = int(date.group(1)), int(date.group(2)), int(date.group(3))
    if not 1 <= month <= 12:
        return []
    out = []
    for name in dict.fromkeys((_MONTHS[month - 1], _MONTHS[month - 1][:3])):
        out += [f"{name} {day} {year}", f"{day} {name} {year}"]
    return out


def month_dates(tokens: list[str]) -> set[int]:
    """Positions of month names that start a date in words ("may 8 2021", "may 2021"): words, not question
    words, though "may" is also a modal verb."""
    return {i for i, t in enumerate(tokens[:-1]) if (t in _MONTHS or t in _MONTH_ABBREVIATIONS) and tokens[i + 1].isdigit()}


def without_affixes(titles: list[str]) -> list[tuple[int, str]]:
    """(position, shorter name) for titles that start or end with one of the collection's common
    affixes: a first (or last) word of at least `AFFIX_SHARE` of the titles of two or more words, and of
    `AFFIX_MIN` of them. A vault names its plugin notes by their ids ("obsidian-icon-folder",
    "obsidian-excalidraw-plugin": 15% of its titles of two words or more start with "obsidian", 3% end
    with "plugin"); a reader names them without ("the Icon Folder plugin", "Excalidraw"). The name without
    the first affix, without the last, and without both, when a word is left."""
    tokens = [name_tokens(t) for t in titles]
    multi = [t for t in tokens if len(t) >= 2]
    floor = max(AFFIX_MIN, AFFIX_SHARE * len(multi))
    firsts = {w for w, n in Counter(t[0] for t in multi).items() if n >= floor}
    lasts = {w for w, n in Counter(t[-1] for t in multi).items() if n >= floor}
    out = []
    for i, t in enumerate(tokens):
        head, tail = int(len(t) >= 2 and t[0] in firsts), int(len(t) >= 2 and t[-1] in lasts)
        forms = {(head, 0), (0, tail), (head, tail)} - {(0, 0)}
        out += [(i, " ".join(t[a:len(t) - b])) for a, b in sorted(forms) if len(t) - a - b >= 1]
    return out


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
