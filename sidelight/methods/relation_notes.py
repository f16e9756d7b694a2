"""The relation lane on a vault of notes (issue 43): hub damping, in-links asked by wording, the
named part, and the collection profiles that set them.

A few notes of a vault ("Settings", a category list) are linked from most others, and a question
may ask what links TO a note. Three parameters of the lane serve this:

* `hub_damping` g: the score of every reached record is multiplied by idf(v)^g, idf(v) =
  log((N+1)/(in-degree+1)) / log(N+1), so a note most notes link to gains little by being reached;
* `direction`: `cue` also spreads backwards (`graph.relation.activate_in`) from the named note when
  in-link wording follows a question word and precedes its name ("which roundup said the LYT Kit
  ..."), so its in-links become candidates (`inward_anchor`); `both` always does so from every
  named note;
* `name_weight`: the named part, 1 for a record with a direct link from (or, backwards, to) the
  named note whose name is most specific (`name_fit`: summed lexical idf of its terms), less for others.

Unset, they take the collection **profile**'s values (`PROFILES`): "notes" when records were read
from files, chosen on notes-v1 dev (bench/relation_notes.py); "dictionary" otherwise (FOLDOC,
WordNet), where they are neutral and the lane is the one relation-v1/v2 chose.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

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
#: notes-v1 dev (bench/relation_notes.py)
PROFILES = {"dictionary": {"hub_damping": 0.0, "direction": "out", "name_weight": 0.0},
            "notes": {"hub_damping": 0.5, "direction": "cue", "name_weight": 2.0}}
#: wording that, after a question word and right before a note's name, asks for what links TO it
#: ("which theme links to the Core Plugins note"); the name may follow within `_INWARD_GAP` tokens
_INWARD = sorted((tuple(w.split()) for w in (
    "links to", "link to", "linked to", "linking to", "points to", "point to", "pointing to", "refers to",
    "refer to", "referring to", "mentions", "mention", "mentioned", "cites", "cite", "cited", "credits", "credit",
    "credited", "lists", "list", "listed", "called", "calls", "said", "says", "embeds", "embed")), key=len, reverse=True)
_INWARD_GAP = 3



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


def inward_anchor(tokens: list[str], matches: list[NameMatch]) -> NameMatch | None:
    """The name a question asks in-links of: right after in-link wording (`_INWARD`) that follows a
    question word ("which roundup said the LYT Kit ..." -> LYT Kit), else None."""
    for i in range(len(tokens)):
        if not any(t in QUESTION_WORDS for t in tokens[:i]):
            continue
        for phrase in _INWARD:
            if tuple(tokens[i:i + len(phrase)]) == phrase:
                end = i + len(phrase)
                after = [m for m in matches if 0 <= m.start - end <= _INWARD_GAP]
                if after:
                    return min(after, key=lambda m: m.start)
                break
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
