"""WordNet 3.0 from the Debian `wordnet-base` files: noun synsets (`wordnet`) or every synset (`wordnet-all`).

A data line (wndb(5)) is::

    offset lex_filenum ss_type w_cnt word lex_id [word lex_id ...] p_cnt
        [ptr_symbol offset pos source/target ...] | gloss

``w_cnt`` is two hex digits, ``lex_id`` one hex digit, ``p_cnt`` three decimal digits. The
license header lines start with two spaces.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import InputError, MissingDataError
from .model import Corpus, Edge, Record

WORDNET_NOUNS = Path("/usr/share/wordnet/data.noun")

# lexicographer files, WordNet 3.0 lexnames(5)
LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute "
    "noun.body noun.cognition noun.communication noun.event noun.feeling noun.food noun.group "
    "noun.location noun.motive noun.object noun.person noun.phenomenon noun.plant "
    "noun.possession noun.process noun.quantity noun.relation noun.shape noun.state "
    "noun.substance noun.time verb.body verb.change verb.cognition verb.communication "
    "verb.competition verb.consumption verb.contact verb.creation verb.emotion verb.motion "
    "verb.perception verb.possession verb.social verb.stative verb.weather adj.ppl"
).split()

# noun pointer symbols, wninput(5)
POINTER_TYPES = {
    "!": "antonym",
    "@": "hypernym",
    "@i": "instance-hypernym",
    "~": "hyponym",
    "~i": "instance-hyponym",
    "#m": "member-holonym",
    "#s": "substance-holonym",
    "#p": "part-holonym",
    "%m": "member-meronym",
    "%s": "substance-meronym",
    "%p": "part-meronym",
    "=": "attribute",
    "+": "derivation",
    ";c": "domain-topic",
    "-c": "member-topic",
    ";r": "domain-region",
    "-r": "member-region",
    ";u": "domain-usage",
    "-u": "member-usage",
}


#: Pointer symbols of the other parts of speech (wninput(5)); the noun symbols above keep their names.
POINTER_TYPES.update({
    "&": "similar-to",
    "<": "participle-of",
    "\\": "pertainym",  # adjective: pertains to a noun; adverb: derived from an adjective
    "^": "also-see",
    "*": "entailment",
    ">": "cause",
    "$": "verb-group",
})

WORDNET_DIR = WORDNET_NOUNS.parent
#: an adjective's syntactic marker in data.adj (wndb(5)): (p) predicate, (a) prenominal, (ip) postnominal
SYNTACTIC_MARKER = re.compile(r"\((?:a|p|ip)\)$")
#: data file -> (id prefix, part of speech by synset type); satellites ("s") live in data.adj.
DATA_FILES = {"noun": ("n", {"n": "noun"}), "verb": ("v", {"v": "verb"}),
              "adj": ("a", {"a": "adjective", "s": "adjective satellite"}), "adv": ("r", {"r": "adverb"})}
#: a pointer's pos letter -> the id prefix of the file its target is in
POINTER_PREFIX = {"n": "n", "v": "v", "a": "a", "s": "a", "r": "r"}


def _synsets(path: Path, ss_types: dict[str, str]):
    """(offset, ss_type, lex_filenum, lemmas, [(symbol, target offset, target pos)], gloss) per data line."""
    if not path.is_file():
        raise MissingDataError(
            f"WordNet file {str(path)!r} not found: install the Debian package wordnet-base "
            f"(apt-get install wordnet-base) or pass path="
        )
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            if line.startswith("  ") or not line.strip():
                continue
            data, sep, gloss = line.partition(" | ")
            f = data.split()
            try:
                offset, lex_filenum, ss_type = f[0], int(f[1]), f[2]
                w_cnt = int(f[3], 16)
                lemmas = [SYNTACTIC_MARKER.sub("", f[4 + 2 * i]).replace("_", " ") for i in range(w_cnt)]
                k = 4 + 2 * w_cnt
                p_cnt = int(f[k])
                pointers = [(f[k + 1 + 4 * i], f[k + 2 + 4 * i], f[k + 3 + 4 * i]) for i in range(p_cnt)]
            except (IndexError, ValueError) as exc:
                raise InputError(f"{path}:{lineno}: malformed WordNet data line ({exc})") from None
            if ss_type not in ss_types:
                raise InputError(f"{path}:{lineno}: synset type {ss_type!r} in {path.name}")
            yield offset, ss_type, lex_filenum, lemmas, pointers, " ".join(gloss.split()) if sep else ""


def read_index(suffix: str, folder: str | Path = WORDNET_DIR) -> dict[str, tuple[list[str], int]]:
    """`index.SUFFIX` (noun, verb, adj, adv) as lemma -> (synset offsets, most frequent sense first; tagsense_cnt).

    An index line (wndb(5)): ``lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt offset...``.
    """
    path = Path(folder) / f"index.{suffix}"
    if not path.is_file():
        raise MissingDataError(f"WordNet file {str(path)!r} not found: install the Debian package wordnet-base")
    out = {}
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("  ") or not line.strip():
            continue
        f = line.split()
        try:
            synset_cnt, p_cnt = int(f[2]), int(f[3])
            rest = f[4 + p_cnt:]
            offsets = rest[2:]
            if len(offsets) != synset_cnt:
                raise ValueError(f"{synset_cnt} synsets declared, {len(offsets)} listed")
            out[f[0]] = (offsets, int(rest[1]))
        except (IndexError, ValueError) as exc:
            raise InputError(f"{path}:{lineno}: malformed WordNet index line ({exc})") from None
    return out


def read_word_counts(folder: str | Path = WORDNET_DIR) -> dict[str, int]:
    """How often each word was tagged in WordNet's sense-tagged corpora (SemCor), summed over its
    senses: ``cntlist.rev`` lines ``lemma%sense_key sense_number tag_cnt`` (cntlist(5WN)), keyed by the
    lower-cased lemma with spaces. Empty when the file is absent (it is optional)."""
    path = Path(folder) / "cntlist.rev"
    counts: dict[str, int] = {}
    if not path.is_file():
        return counts
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        f = line.split()
        try:
            word = f[0].split("%", 1)[0].replace("_", " ").lower()
            counts[word] = counts.get(word, 0) + int(f[2])
        except (IndexError, ValueError):
            raise InputError(f"{path}:{lineno}: malformed cntlist line") from None
    return counts


def _case_distinct(lemmas: list[str]) -> list[str]:
    """The lemmas with case variants of one word kept once, first spelling first (as wnstats(7WN)
    counts word-sense pairs: a synset listing "Aare" and "aare" has one sense of that word)."""
    seen: set[str] = set()
    out = []
    for lemma in lemmas:
        if lemma.lower() not in seen:
            seen.add(lemma.lower())
            out.append(lemma)
    return out


def _lexname(lex_filenum: int) -> str | None:
    return LEXNAMES[lex_filenum] if 0 <= lex_filenum < len(LEXNAMES) else None


def load_wordnet_nouns(path: str | Path = WORDNET_NOUNS, *, name: str = "wordnet-nouns") -> Corpus:
    """Read data.noun into a Corpus: one record per synset, typed edges between noun synsets.

    id: the 8-digit offset as written; title: first lemma (underscores -> spaces); aliases: the
    other lemmas; text: the gloss; metadata: lexname, lex_filenum. Every pointer to another noun
    synset (pos "n") is an edge typed by POINTER_TYPES (unknown symbols keep the raw symbol);
    lexical pointers count at synset level. Identical (source, target, type) edges and self loops
    (a lexical pointer between two lemmas of the same synset) are dropped.
    """
    records: list[Record] = []
    pending: list[tuple[str, str, str]] = []
    for offset, _, lex_filenum, lemmas, pointers, gloss in _synsets(Path(path), {"n": "noun"}):
        pending += [(offset, target, POINTER_TYPES.get(sym, sym)) for sym, target, pos in pointers
                    if pos == "n" and target != offset]
        records.append(Record(id=offset, title=lemmas[0], text=gloss, aliases=tuple(lemmas[1:]),
                              metadata={"lex_filenum": lex_filenum, "lexname": _lexname(lex_filenum)}))
    edges = [Edge(source=s, target=t, type=ty) for s, t, ty in dict.fromkeys(pending)]
    return Corpus(name=name, records=records, edges=edges, title_weight=2)


def load_wordnet_all(folder: str | Path = WORDNET_DIR, *, name: str = "wordnet-all") -> Corpus:
    """Every synset of every part of speech (data.noun, data.verb, data.adj, data.adv) as one Corpus.

    id: ``POS:offset`` with POS n, v, a (adjectives and their satellites) or r; title: first lemma;
    aliases: the other lemmas; text: the gloss; metadata: pos (noun, verb, adjective, adjective
    satellite, adverb), lexname, lex_filenum, word_counts (each word's SemCor tag count, aligned
    with title + aliases: `read_word_counts`, a reverse dictionary's frequency prior). Every
    pointer between synsets is a typed edge, across parts of speech too (derivation, pertainym,
    also-see, similar-to, attribute, ...); lexical pointers count at synset level; duplicates and
    self loops are dropped. Indexed text: the first lemma twice, the other lemmas once (a word is
    found through any of its senses' lemmas), then the gloss.
    """
    folder = Path(folder)
    counts = read_word_counts(folder)
    records: list[Record] = []
    pending: list[tuple[str, str, str]] = []
    for stem, (prefix, ss_types) in DATA_FILES.items():
        for offset, ss_type, lex_filenum, lemmas, pointers, gloss in _synsets(folder / f"data.{stem}", ss_types):
            rid = f"{prefix}:{offset}"
            lemmas = _case_distinct(lemmas)
            for sym, target, pos in pointers:
                tid = f"{POINTER_PREFIX.get(pos, pos)}:{target}"
                if tid != rid:
                    pending.append((rid, tid, POINTER_TYPES.get(sym, sym)))
            records.append(Record(id=rid, title=lemmas[0], text=gloss, aliases=tuple(lemmas[1:]),
                                  metadata={"pos": ss_types[ss_type], "lexname": _lexname(lex_filenum),
                                            "lex_filenum": lex_filenum,
                                            "word_counts": [counts.get(w.lower(), 0) for w in lemmas]}))
    edges = [Edge(source=s, target=t, type=ty) for s, t, ty in dict.fromkeys(pending)]
    return Corpus(name=name, records=records, edges=edges, title_weight=2, alias_weight=1)
