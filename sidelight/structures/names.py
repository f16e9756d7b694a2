"""Record names found in a text: titles and aliases matched with one Aho-Corasick automaton.

Names and texts are compared as lowercase ASCII alphanumeric token runs (the tokenizer's
alphabet), so "Multics" matches "multics" and "GNU C compiler" the tokens "gnu c compiler". Each
query token is also tried in two singular forms ("swamps" -> "swamp", "libraries" -> "library",
"churches" -> "church", "caches" -> "cache"), so a plural mention still finds the name. A name of stop words only ("it", "the who") or of
fewer than two characters is never matched: such names would anchor almost every question. A name
with a trailing parenthetical ("Sliding Panes (Andy's Mode)", "Mercury (planet)") also names its
record without it, as a reader writes it.
Overlapping matches are chosen longest first ("GNU C compiler" wins over "C compiler"), then a match of
the words as written over one found only through a singular form ("lists Style Settings": the name
"Style Settings", not "list style"), then leftmost.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import AbstractSet, Iterable

import ahocorasick

_TOKEN = re.compile(r"[a-z0-9]+")
_TRAILING_PARENTHETICAL = re.compile(r"^(.*\S)\s*\([^()]*\)\s*$")


def name_forms(name: str) -> list[str]:
    """The name, and the name without a trailing parenthetical when it has one."""
    m = _TRAILING_PARENTHETICAL.match(name)
    return [name, m.group(1)] if m else [name]


def name_tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def singular(token: str) -> str:
    """A crude English singular: -ies -> -y, -(ss|x|z|ch|sh)es -> drop es, -s (not -ss, -us, -is)
    -> drop s. Tokens of three letters or fewer, and "-ecies" words (species), stay as they are."""
    if len(token) <= 3 or token.endswith("ecies"):
        return token
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if token.endswith(("sses", "xes", "zes", "ches", "shes")):
        return token[:-2]
    return drop_s(token)


def drop_s(token: str) -> str:
    """The token without a plural -s (not -ss, -us, -is): "caches" -> "cache" where `singular` says "cach"."""
    if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


@dataclass(frozen=True)
class NameMatch:
    """A name found in a text: the token span [start, end), the name as normalised, its records."""

    start: int
    end: int
    name: str
    positions: tuple[int, ...]


class NameMatcher:
    """An automaton over every record's title and aliases (record positions per normalised name)."""

    def __init__(self, names: Iterable[tuple[str, int]], stopwords: frozenset[str] = frozenset()) -> None:
        owners: dict[str, list[int]] = {}
        for full, position in names:
            for name in name_forms(full):
                toks = name_tokens(name)
                key = " ".join(toks)
                if len(key) < 2 or all(t in stopwords for t in toks):
                    continue
                got = owners.setdefault(key, [])
                if position not in got:
                    got.append(position)
        self.owners = owners  # normalised name -> record positions (the page's matcher is built from it)
        self._auto = ahocorasick.Automaton()
        for key, positions in owners.items():
            self._auto.add_word(f" {key} ", (key, tuple(positions)))
        if owners:
            self._auto.make_automaton()
        self.n_names = len(owners)

    def find(self, text: str, skip: AbstractSet[int] = frozenset()) -> list[NameMatch]:
        """Names in `text`, non-overlapping (longest first, then as written, then leftmost), left to right;
        tokens in `skip` are never part of one."""
        toks = name_tokens(text)
        if not self.n_names or not toks:
            return []
        found: dict[tuple[int, int], NameMatch] = {}
        written: set[tuple[int, int]] = set()  # spans matched by the tokens as written (no singular form)
        for form, variant in enumerate((toks, [singular(t) for t in toks], [drop_s(t) for t in toks])):
            line = " " + " ".join(variant) + " "
            starts = {}  # char offset of each token's leading space -> token index
            off = 0
            for i, t in enumerate(variant):
                starts[off] = i
                off += len(t) + 1
            for end_char, (key, positions) in self._auto.iter(line):
                begin = end_char - len(key) - 1  # offset of the match's leading space
                s = starts[begin]
                span = (s, s + key.count(" ") + 1)
                if span not in found and not any(t in skip for t in range(*span)):
                    found[span] = NameMatch(span[0], span[1], key, positions)
                    if form == 0:
                        written.add(span)
        chosen: list[NameMatch] = []
        taken: set[int] = set()
        for m in sorted(found.values(), key=lambda m: (m.start - m.end, (m.start, m.end) not in written, m.start)):
            if not taken.intersection(range(m.start, m.end)):
                chosen.append(m)
                taken.update(range(m.start, m.end))
        return sorted(chosen, key=lambda m: m.start)
