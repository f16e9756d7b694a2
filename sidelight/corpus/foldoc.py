"""FOLDOC (Free On-line Dictionary of Computing) from the Debian `dict-foldoc` dictd files.

The dictd index has one line per headword: ``headword<TAB>offset<TAB>length`` with offset and
length written as big-endian base-64 numbers (alphabet ``A-Za-z0-9+/``) into the uncompressed
text of ``foldoc.dict.dz`` (a dictzip file, which plain gzip reads). Several index lines can
point to the same entry (aliases) and the same headword can name several entries.

An entry is one or more headline lines (names; a long name may wrap over two lines), a blank
line, then an indented body. ``{foo}`` in the body is a cross-reference to the entry named
``foo``; ``{label (target)}`` shows ``label`` and links to ``target``; a target that is a URL
(``http://...``, ``news:...``, ``(rfc:2616)``, ``/contents.html``) is not an edge.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

from ..errors import InputError, MissingDataError
from .model import Corpus, Edge, Record

FOLDOC_INDEX = Path("/usr/share/dictd/foldoc.index")
FOLDOC_DICT = Path("/usr/share/dictd/foldoc.dict.dz")

_B64 = {c: i for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")}

# innermost {...}: nested or unbalanced braces in code samples are left to the final strip
_BRACE = re.compile(r"\{([^{}]*)\}")
# "{label (target)}": the parenthesised tail is the link target
_LABELLED = re.compile(r"^(?:(.*?\S)\s+)?\(([^()]+)\)$", re.S)
# URL-like targets: scheme:rest without spaces (http://, news:, rfc:, mailto:), or site paths
_URLISH = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.\-]*:\S+|/\S*|\S+\.html?)$")
# sense tags at the start of the body or of a numbered sense: "<operating system, security>"
_DOMAIN = re.compile(r"(?:^|\n)[ \t]*(?:\d+\.[ \t]*)?<([^<>\n]+)>")
# a sentence ends at . ! or ? followed by space and a capital, digit, quote or bracket
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_DATE = re.compile(r"\s*\((\d{4}-\d{2}-\d{2})\)\s*$")


def b64_number(s: str) -> int:
    """Decode a dictd index number (big-endian base 64, alphabet A-Za-z0-9+/)."""
    n = 0
    for ch in s:
        try:
            n = n * 64 + _B64[ch]
        except KeyError:
            raise InputError(f"bad dictd base-64 number {s!r}") from None
    return n


def _norm(s: str) -> str:
    return " ".join(s.split())


def _missing(what: Path) -> MissingDataError:
    return MissingDataError(
        f"FOLDOC file {str(what)!r} not found: install the Debian package dict-foldoc "
        f"(apt-get install dict-foldoc) or pass index_path=/dict_path="
    )


def _split_ref(content: str) -> tuple[str, str | None]:
    """Brace content -> (text shown, link target or None for a URL)."""
    content = _norm(content)
    m = _LABELLED.match(content)
    if m:
        label, target = (m.group(1) or "").strip(), m.group(2).strip()
        if _URLISH.match(target) or "://" in target:
            return (label or target), None
        if label:
            return label, target
        return target, target
    if "://" in content or _URLISH.match(content) and ":" in content:
        return content, None
    return content, content


def _context(sentences: list[str], shown: str) -> str:
    """The first sentence showing a link's text as whole words (at most 300 characters), or ''."""
    if not shown.strip():
        return ""
    shows = re.compile(r"(?<!\w)" + re.escape(shown) + r"(?!\w)", re.I)
    for s in sentences:
        if shows.search(s):
            return s if len(s) <= 300 else s[:297] + "..."
    return ""


def _headlines(head: str, headwords: set[str]) -> list[str]:
    """Headline lines, rejoining a name that wraps when the joined form is an index headword."""
    lines = [_norm(x) for x in head.split("\n")]
    lines = [x for x in lines if x]
    out: list[str] = []
    i = 0
    while i < len(lines):
        take = i
        for j in range(len(lines) - 1, i, -1):
            if " ".join(lines[i : j + 1]).lower() in headwords:
                take = j
                break
        out.append(" ".join(lines[i : take + 1]))
        i = take + 1
    return out


def load_foldoc(
    index_path: str | Path = FOLDOC_INDEX,
    dict_path: str | Path = FOLDOC_DICT,
    *,
    name: str = "foldoc",
) -> Corpus:
    """Read the dictd FOLDOC files into a Corpus: one record per distinct entry, "link" edges.

    Record id: the index headword naming the entry (the one equal to its first headline
    lowercased, else its first index line); a headword that is the id of several entries gets
    " (2)", " (3)" ... in index order. Title: first headline. Aliases: the other headlines and
    index headwords (case-insensitively distinct from the title). Text: the body with braces
    removed ({label (target)} shows label), whitespace normalised, trailing "(yyyy-mm-dd)"
    moved to metadata["date"]. Edges: each brace reference that resolves case-insensitively to
    an index headword or headline (first entry when ambiguous), no self loops, no duplicates;
    each keeps as `context` the first sentence of the text that shows it.
    """
    index_path, dict_path = Path(index_path), Path(dict_path)
    for p in (index_path, dict_path):
        if not p.is_file():
            raise _missing(p)
    try:
        raw = gzip.open(dict_path).read()
    except OSError as exc:
        raise InputError(f"{dict_path}: not a gzip/dictzip file ({exc})") from exc

    # entries keyed by (offset, length), in order of first index appearance
    entry_heads: dict[tuple[int, int], list[str]] = {}
    index_order: list[tuple[str, tuple[int, int]]] = []
    with open(index_path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            if not line:
                continue
            parts = line.split("\t")
            if len(parts) != 3:
                raise InputError(f"{index_path}:{lineno}: expected headword<TAB>offset<TAB>length")
            head, off, ln = parts
            if head.startswith("00-database-") or head.startswith("00database"):
                continue
            key = (b64_number(off), b64_number(ln))
            if key[0] + key[1] > len(raw):
                raise InputError(f"{index_path}:{lineno}: entry {head!r} points past the end of {dict_path}")
            entry_heads.setdefault(key, []).append(head)
            index_order.append((head, key))
    first_pos: dict[tuple[int, int], int] = {}
    for pos, (_, key) in enumerate(index_order):
        first_pos.setdefault(key, pos)

    # parse entries
    parsed: dict[tuple[int, int], tuple[list[str], str]] = {}
    for key, heads in entry_heads.items():
        entry = raw[key[0] : key[0] + key[1]].decode("utf-8", errors="replace")
        head, sep, body = entry.strip("\n").partition("\n\n")
        if not sep:  # no blank line: a one-paragraph entry, first line is its name
            head, _, body = entry.strip("\n").partition("\n")
        hl = _headlines(head, {_norm(h).lower() for h in heads}) or [heads[0]]
        parsed[key] = (hl, body)

    # ids: naming headword, numbered when the same string names several entries
    naming: dict[tuple[int, int], tuple[int, str]] = {}
    for key, heads in entry_heads.items():
        want = _norm(parsed[key][0][0]).lower()
        chosen = next((h for h in heads if _norm(h).lower() == want), heads[0])
        pos = next(p for p in range(first_pos[key], len(index_order)) if index_order[p] == (chosen, key))
        naming[key] = (pos, chosen)
    ids: dict[tuple[int, int], str] = {}
    used: set[str] = set()
    count: dict[str, int] = {}
    for key in sorted(entry_heads, key=lambda k: naming[k][0]):
        base = naming[key][1]
        n = count.get(base, 0) + 1
        rid = base if n == 1 else f"{base} ({n})"
        while rid in used:  # a literal headword "x (2)" already taken
            n += 1
            rid = f"{base} ({n})"
        count[base] = n
        used.add(rid)
        ids[key] = rid

    # name -> entry for reference resolution: index headwords first, then headlines
    resolve: dict[str, tuple[int, int]] = {}
    for head, key in index_order:
        resolve.setdefault(_norm(head).lower(), key)
    order = sorted(entry_heads, key=lambda k: first_pos[k])
    for key in order:
        for h in parsed[key][0]:
            resolve.setdefault(h.lower(), key)

    records: list[Record] = []
    edges: list[Edge] = []
    for key in order:
        rid = ids[key]
        hl, body = parsed[key]
        title = hl[0]
        aliases: list[str] = []
        seen = {title.lower()}
        for a in hl[1:] + [_norm(h) for h in entry_heads[key] if h != rid]:
            if a and a.lower() not in seen:
                seen.add(a.lower())
                aliases.append(a)

        targets: list[str] = []
        shown_as: dict[str, str] = {}
        dangling: list[str] = []

        def _sub(m: re.Match) -> str:
            shown, target = _split_ref(m.group(1))
            if target is not None:
                hit = resolve.get(target.lower())
                if hit is None:
                    dangling.append(target)
                elif ids[hit] != rid and ids[hit] not in targets:
                    targets.append(ids[hit])
                    shown_as[ids[hit]] = _norm(shown)
            return shown

        text = body
        prev = None
        while prev != text:  # innermost braces first, so nested refs are all seen
            prev = text
            text = _BRACE.sub(_sub, text)
        metadata: dict = {}
        domains: list[str] = []
        for m in _DOMAIN.finditer(body):
            for tag in m.group(1).split(","):
                tag = _norm(tag)
                if tag and tag not in domains:
                    domains.append(tag)
        if domains:
            metadata["domains"] = domains
        text = _norm(text.replace("{", " ").replace("}", " "))
        dm = _DATE.search(text)
        if dm:
            metadata["date"] = dm.group(1)
            text = text[: dm.start()].rstrip()
        if dangling:
            metadata["dangling_refs"] = dangling
        records.append(Record(id=rid, title=title, text=text, metadata=metadata, aliases=tuple(aliases)))
        sentences = _SENTENCE.split(text)
        edges.extend(Edge(source=rid, target=t, type="link", context=_context(sentences, shown_as[t])) for t in targets)
    return Corpus(name=name, records=records, edges=edges, title_weight=2)
