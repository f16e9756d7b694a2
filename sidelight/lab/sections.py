"""Section-level figures: is the right section named by one of a method's top hits?

For a collection question whose target names a section (a heading question, a link to a heading,
a notes-v1 `section` question), `section@k` is 1 when one of the method's top `k` documents is a
target document and the section every interface shows for that hit (`index.passages.best_section`:
the picker of `search`, `mcp` and the web page, mix 0.5 with section vectors, lexical alone without)
is the target section or one inside it (its heading path starts with the target's, compared
lower-case on letters and digits). Averaged per target document (family), then over families, as
every lab figure is; each method is set against the protocol's primary-contrast baseline (BM25 when
it names none) with the protocol's paired family bootstrap.
The section pick depends on the query and the document only, so it is made once per pair and methods
differ only in which target documents reach their top `k`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..index.passages import PassageSettings, QueryTerms, best_section, section_query_vector
from .analysis import contrast
from .metrics import family_mean

if TYPE_CHECKING:
    from ..index import Index
    from .benchmark import Benchmark

K = 3  # a reader looks at the first few hits' passages


def norm(heading: str) -> str:
    return re.sub(r"[^0-9a-z]+", " ", heading.lower()).strip()


def inside(picked: tuple[str, ...], target: tuple[str, ...]) -> bool:
    """The picked heading path is the target section's or one below it."""
    return len(picked) >= len(target) and [norm(h) for h in picked[:len(target)]] == [norm(h) for h in target]


class Picker:
    """The section `search` shows for (query, document), made once per pair."""

    def __init__(self, index: "Index", settings: PassageSettings = PassageSettings()):
        self.index, self.settings = index, settings
        self._picked: dict[tuple[str, str], tuple[str, ...]] = {}

    def heading(self, query: str, doc: str) -> tuple[str, ...]:
        key = (query, doc)
        if key not in self._picked:
            index = self.index
            position = index.corpus.position[doc]
            record = index.corpus.records[position]
            vector = section_query_vector(index, query)
            section, _ = best_section(index, position, record, QueryTerms(index, query), vector, self.settings)
            self._picked[key] = section.heading
        return self._picked[key]


def section_scores(bench: "Benchmark", ranking: dict[str, dict], picker: Picker, k: int = K) -> dict[str, float]:
    """qid -> 1.0 / 0.0 for every question with a target section."""
    out = {}
    for q, targets in bench.sections.items():
        top = (ranking.get(q) or {}).get("ids", [])[:k]
        out[q] = float(any(inside(picker.heading(bench.queries[q], doc), head)
                           for doc in top for d, head in targets if d == doc))
    return out


def section_figures(bench: "Benchmark", rankings: dict[str, dict], labels: list[str], index: "Index",
                    stats: dict, baseline: str = "bm25", k: int = K) -> dict:
    """{k, n, n_families, methods: {label: {section@k, hits, by_type}}, contrasts: [...] against `baseline`};
    empty methods when no question names a section."""
    metric = f"section@{k}"
    qs = list(bench.sections)
    out: dict = {"k": k, "metric": metric, "n": len(qs), "n_families": len({bench.family[q] for q in qs}),
                 "methods": {}, "contrasts": []}
    if not qs:
        return out
    picker = Picker(index)
    fam = {q: bench.family[q] for q in qs}
    scores = {lab: section_scores(bench, rankings[lab], picker, k) for lab in labels}
    for lab in labels:
        s = scores[lab]
        kinds = sorted({bench.type[q] for q in qs})
        out["methods"][lab] = {metric: family_mean(s, fam), "hits": int(sum(s.values())), "by_type": {
            t: {metric: family_mean({q: v for q, v in s.items() if bench.type[q] == t}, fam),
                "n": sum(bench.type[q] == t for q in qs)} for t in kinds}}
    families = sorted(set(fam.values()))
    if baseline in scores and len(families) > 1:
        for lab in labels:
            if lab == baseline:
                continue
            c = contrast(bench, _rows(scores[baseline], metric), _rows(scores[lab], metric), metric, stats, families)
            c.update(baseline=baseline, candidate=lab)
            out["contrasts"].append(c)
    return out


def _rows(scores: dict[str, float], metric: str) -> dict[str, dict[str, float]]:
    return {q: {metric: v} for q, v in scores.items()}

