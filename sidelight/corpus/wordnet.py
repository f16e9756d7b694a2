"""WordNet 3.0 noun synsets from the Debian `wordnet-base` file /usr/share/wordnet/data.noun.

A data line (wndb(5)) is::

    offset lex_filenum ss_type w_cnt word lex_id [word lex_id ...] p_cnt
        [ptr_symbol offset pos source/target ...] | gloss

``w_cnt`` is two hex digits, ``lex_id`` one hex digit, ``p_cnt`` three decimal digits. The
license header lines start with two spaces.
"""

from __future__ import annotations

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


def load_wordnet_nouns(path: str | Path = WORDNET_NOUNS, *, name: str = "wordnet-nouns") -> Corpus:
    """Read data.noun into a Corpus: one record per synset, typed edges between noun synsets.

    id: the 8-digit offset as written; title: first lemma (underscores -> spaces); aliases: the
    other lemmas; text: the gloss; metadata: lexname, lex_filenum. Every pointer to another noun
    synset (pos "n") is an edge typed by POINTER_TYPES (unknown symbols keep the raw symbol);
    lexical pointers count at synset level. Identical (source, target, type) edges and self loops
    (a lexical pointer between two lemmas of the same synset) are dropped.
    """
    path = Path(path)
    if not path.is_file():
        raise MissingDataError(
            f"WordNet file {str(path)!r} not found: install the Debian package wordnet-base "
            f"(apt-get install wordnet-base) or pass path="
        )
    records: list[Record] = []
    pending: list[tuple[str, str, str]] = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, 1):
            if line.startswith("  ") or not line.strip():
                continue
            data, sep, gloss = line.partition(" | ")
            f = data.split()
            try:
                offset, lex_filenum, ss_type = f[0], int(f[1]), f[2]
                w_cnt = int(f[3], 16)
                lemmas = [f[4 + 2 * i].replace("_", " ") for i in range(w_cnt)]
                k = 4 + 2 * w_cnt
                p_cnt = int(f[k])
                k += 1
                for i in range(p_cnt):
                    sym, target, pos = f[k], f[k + 1], f[k + 2]
                    k += 4
                    if pos == "n" and target != offset:
                        pending.append((offset, target, POINTER_TYPES.get(sym, sym)))
            except (IndexError, ValueError) as exc:
                raise InputError(f"{path}:{lineno}: malformed WordNet data line ({exc})") from None
            if ss_type != "n":
                raise InputError(f"{path}:{lineno}: synset type {ss_type!r} in a noun file")
            meta = {
                "lex_filenum": lex_filenum,
                "lexname": LEXNAMES[lex_filenum] if 0 <= lex_filenum < len(LEXNAMES) else None,
            }
            records.append(
                Record(
                    id=offset,
                    title=lemmas[0],
                    text=" ".join(gloss.split()) if sep else "",
                    metadata=meta,
                    aliases=tuple(lemmas[1:]),
                )
            )
    edges = [Edge(source=s, target=t, type=ty) for s, t, ty in dict.fromkeys(pending)]
    return Corpus(name=name, records=records, edges=edges, title_weight=2)
