"""The relation lane on a vault of notes (issue 43): hub damping, in-links asked by wording, the
named, agreement and kind parts, how names are read, and the collection profiles that set them.

A few notes of a vault ("Settings", a category list) are linked from most others, and a question
may ask what links TO a note. Six parameters of the lane serve this:

* `hub_damping` g: the score of every reached record is multiplied by idf(v)^g, idf(v) =
  log((N+1)/(in-degree+1)) / log(N+1), so a note most notes link to gains little by being reached;
* `direction`: `cue` also spreads backwards (`graph.relation.activate_in`) from the named note when
  the question asks for a note that links to it: a relation verb of a small lexicon
  (`data/relation-verbs-v1.json`, matched by stem) after a question word and before its name
  ("which roundup introduced the LYT Kit ..."), or a pronoun, passive or agent pattern of it, so
  its in-links become candidates (`inward_anchor`; `inward=subject` reads the verbs only where the
  asked-for note is the verb's subject, not "what does NAME recommend"); `both` always does so from
  every named note;
* `name_weight`: the named part, 1 for a record with a direct link from (or, backwards, to) the
  named note whose name is most specific (`name_fit`: summed lexical idf of its terms), less for others;
* `agree_weight`: the agreement part, for a record linked (either way) with more than one named note
  ("which theme by NAME lists NAME"): the names' specificity summed past the most specific;
* `kind_weight`: the kind part (`methods.relation_kind`), for a record under a folder named for the kind
  the question asks ("which theme", "who");
* `names`: "v2" also names a note by its title without the collection's common first or last word (a
  vault's "obsidian-icon-folder" is "the Icon Folder plugin") and never reads the verb a question asks
  with as a name (`asking_verbs`: "which roundup links ..." where a note is called "Links"); "v3" also
  names a dated note by its date in words ("the May 8, 2021 roundup").

Unset, these take the collection **profile**'s values (`PROFILES`): "notes" when records were read
from files, chosen on notes-v1 dev (bench/relation_notes.py; its damping on the relation dev questions
of two collections, bench/relation_dev_grid.py); "dictionary" otherwise (FOLDOC,
WordNet), where they are neutral and the lane is the one relation-v1/v2 chose.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError
from ..structures.names import NameMatch
from .relation_cues import QUESTION_WORDS

if TYPE_CHECKING:
    from ..graph.store import Graph
    from .context import SearchContext

DIRECTIONS = ("out", "cue", "both")
#: values of the unset `hub_damping`, `direction`, `name_weight` per collection profile (`profile`):
#: "dictionary" leaves the lane as relation-v1/v2 chose it (FOLDOC, WordNet); "notes" was chosen on
#: notes-v1 dev (bench/relation_notes.py), its damping then lowered from 0.5 to 0.15 on the relation dev
#: questions of the vault and the Python docs together (bench/relation_dev_grid.py: 0.1-0.25 beat 0.5 and
#: 0 on both collections; documentation pages are linked far more unevenly than notes), and the agreement
#: part added there (0.5: vault dev +0.02, 4 questions up and 2 down; the docs' questions rarely name two pages),
#: then the kind part (`methods.relation_kind`; 2, the best dev mean of 0.5, 1, 2, 4 with relation-notes-v4 and
#: relation-docs-v2 dev added: vault 0.5644 -> 0.6089, 23 questions up and 5 down; docs 0.7399 -> 0.7651, 5 up, 1 down),
#: and names "v2" (`methods.relation_cues.without_affixes`, `asking_verbs`: vault 0.6089 -> 0.6464, 10 up and 8
#: down; docs unchanged), then "v3" (`spoken_dates`, `month_dates`: vault 0.6464 -> 0.6910, 11 up, none down)
PROFILES = {"dictionary": {"hub_damping": 0.0, "direction": "out", "name_weight": 0.0, "agree_weight": 0.0,
                           "kind_weight": 0.0, "names": "v1"},
            "notes": {"hub_damping": 0.15, "direction": "cue", "name_weight": 2.0, "agree_weight": 0.5,
                      "kind_weight": 2.0, "names": "v3"}}
#: the relation verbs (`data/relation-verbs-v1.json`), matched by stem
VERBS: dict[str, Any] = json.loads(resources.files(__package__).joinpath("data/relation-verbs-v1.json").read_text())
#: which in-link patterns `inward_anchor` reads (chosen on relation-notes-v1 dev, bench/relation_notes_cues.py):
#: "verbs" (question word ... verb NAME), "pronoun" (NAME? which ... verb it), "passive" (NAME is verb-ed in
#: which ...), "agent" (which ... designed by NAME); "list-v1" is the hand list before them (`_LIST_V1`);
#: "subject" narrows "verbs" and "pronoun" to questions whose asked-for note is the verb's subject (`_subject_asks`)
RULES = ("verbs", "pronoun", "passive", "agent", "list-v1", "subject")
INWARD_RULES: tuple[str, ...] = ("verbs", "pronoun", "passive", "agent")
#: the lane's `inward` parameter: "lexicon" reads `INWARD_RULES`, "subject" the same with the "subject" rule
#: (not the default: on relation-notes-v1 + v2 dev it turns 1 of 30 out-link questions backwards instead of 5,
#: MRR@10 all 0.536 -> 0.535, bench/relation_notes_cues.py --grid), "list-v1" the hand list alone
INWARDS = ("lexicon", "subject", "list-v1")
#: the hand list relation-notes-v1 was scored with (rule "list-v1"), kept to measure the lexicon against
_LIST_V1 = sorted((tuple(w.split()) for w in (
    "links to", "link to", "linked to", "linking to", "points to", "point to", "pointing to", "refers to",
    "refer to", "referring to", "mentions", "mention", "mentioned", "cites", "cite", "cited", "credits", "credit",
    "credited", "lists", "list", "listed", "called", "calls", "said", "says", "embeds", "embed")), key=len, reverse=True)
_GAP = int(VERBS["gap"])
#: closed-class words of a clause with a subject of its own: nominative pronouns, do-support and modal
#: auxiliaries ("what does NAME recommend", "which plugin lets you use ...", "... how maintainers should mark NAME")
_CLAUSE = frozenset(("i", "you", "he", "she", "we", "they", "do", "does", "did", "can", "could", "will", "would",
                     "shall", "should", "may", "might", "must"))


def profile(index: "SearchContext") -> str:
    """"notes" when the records were read from files (a folder of notes: metadata "path"), else
    "dictionary"; it sets the unset parameters (`PROFILES`)."""
    recs = index.corpus.records
    return "notes" if recs and isinstance(recs[0].metadata, dict) and recs[0].metadata.get("path") else "dictionary"


def hub_damping(index: "SearchContext", g: float) -> np.ndarray:
    """Per record: idf(v)^g, idf(v) = log((N+1)/(in-degree(v)+1)) / log(N+1) in (0, 1] (self loops not
    counted): a note that most notes link to gets little credit for being reached."""
    def build() -> np.ndarray:
        graph, n = index.graph, index.graph.n_nodes
        real = graph.sources != graph.indices
        indeg = np.bincount(graph.indices[real], minlength=n)
        return np.asarray(np.log((n + 1) / (indeg + 1.0)) / np.log(n + 1.0), dtype=np.float64)

    idf = index.memo("relation-indegree-idf", None, build)
    return np.asarray(idf ** g if g else np.ones(len(idf)), dtype=np.float64)


def reversed_of(index: "SearchContext") -> "Graph":
    """The index's graph with every edge reversed (built once per index contents)."""
    from ..graph.relation import reversed_graph
    return index.memo("relation-reversed", None, lambda: reversed_graph(index.graph))


def inward_rules(inward: str) -> tuple[str, ...]:
    """The patterns `inward_anchor` reads for the lane's `inward` parameter (`INWARDS`)."""
    return ("list-v1",) if inward == "list-v1" else (*INWARD_RULES, "subject") if inward == "subject" \
        else INWARD_RULES


@lru_cache(maxsize=1)
def stemmer() -> Any:
    """PyStemmer's English (Snowball) stemmer, made once."""
    import Stemmer  # PyStemmer

    return Stemmer.Stemmer("english")


@lru_cache(maxsize=None)
def _stems(key: str) -> frozenset[str]:
    return frozenset(stemmer().stemWords(VERBS[key]))


def stem_in(token: str, key: str) -> bool:
    """Whether `token`'s stem is one of the relation verbs' list `key` ("verbs", "agent")."""
    return str(stemmer().stemWord(token)) in _stems(key)


def asking_verbs(tokens: list[str]) -> set[int]:
    """Positions of the relation verbs a question asks with ("which roundup links ...", "what links to
    ..."): a relation verb at most `gap` tokens after a question word, with no other question word and no
    clause word (a pronoun, a do or modal auxiliary: "what does the links plugin do") between. They are
    verbs, never names, though a vault may hold a note called "Links"."""
    wh = frozenset(VERBS["question_words"])
    out = set()
    for q, tok in enumerate(tokens):
        if tok not in wh:
            continue
        for i in range(q + 1, min(q + 2 + _GAP, len(tokens))):
            if tokens[i] in wh or tokens[i] in _CLAUSE:
                break
            if stem_in(tokens[i], "verbs"):
                out.add(i)
                break
    return out


def _subject_asks(tokens: list[str], matches: list[NameMatch], i: int, name_start: int | None) -> bool:
    """Whether the question's grammar makes the asked-for note the subject of the verb at `i` (rule
    "subject"): a question word (what, which, who, ...) opens the clause before the verb and does not
    follow a name ("people who support him": a relative clause of the name); no other
    subject stands between them (a pronoun, a do or modal auxiliary: "what does NAME recommend",
    "which plugin lets you use ..."; a name right before the verb, not in a prepositional phrase:
    "which NAME lists", where "which theme by NAME lists" still asks); and the named object (at
    `name_start`, when after the verb) is not in a clause of its own ("suggests how maintainers
    should mark NAME"). "NAME lists which ..." has no question word before the verb."""
    wh = frozenset(VERBS["question_words"])
    q = max((j for j in range(i) if tokens[j] in wh), default=None)
    if q is None or any(t in _CLAUSE for t in tokens[q + 1:i]) or any(m.end == q for m in matches):
        return False  # no question word; another subject; or "NAME who ...", a relative clause of the name
    preps = frozenset(VERBS["prepositions"])
    if any(m.end == i and tokens[m.start - 1:m.start] != [] and tokens[m.start - 1] not in preps for m in matches):
        return False
    return name_start is None or not any(t in _CLAUSE or t in wh for t in tokens[i + 1:name_start])


def inward_anchor(tokens: list[str], matches: list[NameMatch],
                  rules: Sequence[str] | None = None) -> NameMatch | None:
    """The name a question asks in-links of, else None (`rules`: default `INWARD_RULES`):

    * verbs: a relation verb after a question word, the name within `gap` tokens after it
      ("which roundup introduced the Icon Folder plugin" -> Icon Folder);
    * pronoun: the same verb with a pronoun after it; the name is the last one before the
      question word that precedes the verb ("who made the Obsidian You theme? which note lists it");
    * passive: the name, an auxiliary, a relation verb and a preposition, then a question word
      ("Hider is listed in which theme");
    * agent: a verb of making after a question word, then "by" and the name ("which theme was
      designed by Anto" -> Anto: the theme credits its author);
    * list-v1: relation-notes-v1's hand list of phrases after a question word;
    * subject: "verbs" and "pronoun" fire only when the asked-for note is the verb's subject
      (`_subject_asks`), not a named note ("what does NAME recommend for ...", "NAME lists which ...").
    The leftmost firing verb decides."""
    rules = INWARD_RULES if rules is None else tuple(rules)
    wh = frozenset(VERBS["question_words"])
    for i, tok in enumerate(tokens):
        asked = [j for j in range(i) if tokens[j] in QUESTION_WORDS]
        if "list-v1" in rules and asked:
            phrase = next((ph for ph in _LIST_V1 if tuple(tokens[i:i + len(ph)]) == ph), None)
            if phrase is not None:
                after = [m for m in matches if 0 <= m.start - (i + len(phrase)) <= _GAP]
                if after:
                    return min(after, key=lambda m: m.start)
        if any(m.start <= i < m.end for m in matches):
            continue  # a word of a name ("List Callouts") is no verb
        if "agent" in rules and asked and stem_in(tok, "agent") and tokens[i + 1:i + 2] == ["by"]:
            after = [m for m in matches if 0 <= m.start - (i + 2) <= _GAP]
            if after:
                return min(after, key=lambda m: m.start)
        if not stem_in(tok, "verbs"):
            continue
        if "passive" in rules and i >= 1 and tokens[i - 1] in VERBS["auxiliaries"] \
                and tokens[i + 1:i + 2] and tokens[i + 1] in VERBS["prepositions"] \
                and any(t in wh for t in tokens[i + 2:i + 2 + _GAP]):
            before = [m for m in matches if 0 <= (i - 1) - m.end <= _GAP]
            if before:
                return max(before, key=lambda m: m.end)
        if not asked:
            continue
        gate = "subject" in rules
        if "verbs" in rules:
            after = [m for m in matches if 0 <= m.start - (i + 1) <= _GAP]
            first = min(after, key=lambda m: m.start) if after else None
            if first is not None and (not gate or _subject_asks(tokens, matches, i, first.start)):
                return first
        if "pronoun" in rules and any(t in VERBS["pronouns"] for t in tokens[i + 1:i + 1 + _GAP]) \
                and (not gate or _subject_asks(tokens, matches, i, None)):
            q = max(j for j in range(i) if tokens[j] in wh) if any(tokens[j] in wh for j in range(i)) else None
            before = [m for m in matches if q is not None and m.end <= q]
            if before:
                return max(before, key=lambda m: m.end)
    return None


def name_fit(index: "SearchContext", named: Iterable[tuple[int, str]]) -> np.ndarray:
    """Per record: how specific the name that made it an anchor is (the lexical idf summed over the
    name's terms; 0 for records no name picked), from (position, name) pairs of the named anchors:
    the question's rarest name is the note it is about."""
    out = np.zeros(index.graph.n_nodes)
    for position, name in named:
        if not name.strip():
            continue
        try:
            terms = index.lexical.query_terms(name)
        except InputError:  # a name of no indexed term
            continue
        out[position] = max(out[position], float(index.lexical.idf(terms).sum()) if len(terms) else 0.0)
    return out
