"""GCIDE (the GNU Collaborative International Dictionary of English) from the Debian `dict-gcide` dictd files.

The dictd index and dictzip text are read as for FOLDOC (`foldoc.b64_number`). An entry starts with
``Headword \\Pro*nun"ci*a`tion\\ (pron), pos. [etymology]`` (the head, which may wrap over lines
until its brackets close and it no longer ends in ``pl.``, ``,``, ``;`` or ``&``), then either one
definition or numbered senses (``   2. ...``). Each definition is followed by quotations and by a
line of its own naming where it came from: ``[1913 Webster]``, ``[PJC]``, and for text copied from
WordNet ``[WordNet 1.5]``, ``[WordNet 1.5 +PJC]``, ``[1913 Webster + WordNet 1.5]``, ``[WordNet sense 2]``...
A sense is *WordNet-sourced* when any source line in its span names WordNet.

One record per sense: id ``headword#n`` (n counts that lower-cased headword's senses in file
order), title the headword, aliases its other spellings (``Simoom \\...\\, Simoon \\...\\``), text the definition (braces and pronunciation codes stripped, up to the
first source line, ``Syn:`` or blank line), metadata ``pos`` (noun, verb, adjective, adverb, or the
raw abbreviation), ``sense`` (its number, 1 when unnumbered), ``sources`` and ``wordnet`` (bool).
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

from ..errors import MissingDataError
from .foldoc import b64_number
from .model import Corpus, Record

GCIDE_INDEX = Path("/usr/share/dictd/gcide.index")
GCIDE_DICT = Path("/usr/share/dictd/gcide.dict.dz")

_WORDS = re.compile(r"(?:^|,\s*)([^\\,\n]+?)\s*\\[^\\\n]*\\")  # "Simoom \Si*moom"\, Simoon \Si*moon"\"
_POS = re.compile(r"^\s*(?:\([^()\n]*\)\s*)?,?\s*([a-z][a-z. &]*\.)")
_SOURCE = re.compile(r"^\s*\[([^\[\]\n]+)\]\s*$")
_NUMBER = re.compile(r"^\s{2,6}(\d+)\.\s+(.*)$")
_MARKUP = re.compile(r"\[[a-z^`=~\"'.,]{1,8}\]")  # pronunciation codes: [imac], [e^], [=e]
POS = {"n": "noun", "v": "verb", "a": "adjective", "adj": "adjective", "adv": "adverb"}


def _missing(what: Path) -> MissingDataError:
    return MissingDataError(f"GCIDE file {str(what)!r} not found: install the Debian package dict-gcide "
                            f"(apt-get install dict-gcide) or pass index_path=/dict_path=")


def part_of_speech(abbrev: str | None) -> str:
    """noun, verb, adjective or adverb for a GCIDE abbreviation (``n.``, ``v. t.``, ``a.``, ``adv.``), else it, raw."""
    if not abbrev:
        return ""
    first = abbrev.split(".")[0].strip()
    return POS.get(first, abbrev.strip())


def clean(text: str) -> str:
    """Definition text without braces, pronunciation codes, ``-- {derived}`` and ``--Author.`` tails, extra spaces."""
    text = re.sub(r"\s--\s*\{.*$", "", " ".join(text.split()))
    text = re.sub(r"\s--[A-Z][^-]*$", "", text)  # a trailing citation: "... dam. --Blount."
    text = _MARKUP.sub("", text).replace("{", "").replace("}", "")
    return re.sub(r"^\d\s+(?=[a-z])", "", " ".join(text.split()).strip())  # WordNet's "1 pale gray"


def _head_end(lines: list[str]) -> int:
    """Index of the first line after the head (brackets closed, not ending in pl. , ; &)."""
    depth = 0
    for i, line in enumerate(lines):
        depth += line.count("[") - line.count("]")
        tail = line.rstrip()
        if depth <= 0 and not re.search(r"(?:pl\.|[,;&])$", tail):
            return i + 1
    return len(lines)


def parse_entry(text: str) -> tuple[list[str], str, list[tuple[int, str, list[str]]]]:
    """([headword, other spellings], part of speech, [(sense number, definition, source lines)]) of one entry."""
    lines = text.rstrip("\n").split("\n")
    words = [w.strip() for w in _WORDS.findall(lines[0])] or [lines[0].split("\\")[0].strip()]
    after = lines[0].rsplit("\\", 1)[1] if lines[0].count("\\") >= 2 else ""
    m = _POS.match(after)
    pos = part_of_speech(m.group(1) if m else None)
    body = lines[_head_end(lines):]
    spans: list[tuple[int, list[str]]] = []
    for line in body:
        n = _NUMBER.match(line)
        if n:
            spans.append((int(n.group(1)), [n.group(2)]))
        elif spans:
            spans[-1][1].append(line)
        else:
            spans.append((1, [line]))
    senses = []
    for number, span in spans:
        sources = [s.group(1).strip() for s in map(_SOURCE.match, span) if s]
        definition = []
        for line in span:
            if not line.strip() or _SOURCE.match(line) or line.strip().startswith("Syn:"):
                break
            definition.append(line)
        d = clean(" ".join(definition))
        if d:
            senses.append((number, d, sources))
    return words, pos, senses


def load_gcide(index_path: str | Path = GCIDE_INDEX, dict_path: str | Path = GCIDE_DICT) -> Corpus:
    """Every sense of every GCIDE entry, one record each (see the module docstring)."""
    index_path, dict_path = Path(index_path), Path(dict_path)
    for p in (index_path, dict_path):
        if not p.is_file():
            raise _missing(p)
    data = gzip.open(dict_path).read()
    spans = set()
    for line in index_path.read_text(encoding="utf-8", errors="replace").splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and not parts[0].startswith("00-database"):
            spans.add((b64_number(parts[1]), b64_number(parts[2])))
    records: list[Record] = []
    seen: dict[str, int] = {}
    for offset, length in sorted(spans):
        words, pos, senses = parse_entry(data[offset:offset + length].decode("utf-8", errors="replace"))
        for number, definition, sources in senses:
            key = words[0].lower()
            seen[key] = seen.get(key, 0) + 1
            records.append(Record(f"{key}#{seen[key]}", words[0], definition,
                                  {"pos": pos, "sense": number, "sources": sources,
                                   "wordnet": any("WordNet" in s for s in sources)}, tuple(words[1:])))
    return Corpus("gcide", records)
