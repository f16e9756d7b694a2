"""The relation lane's ranking: seeds, anchors, relation cues, and two ways to rank what edges reach.

Seeds. NGR's rule (`relation_seeds`): the top `n_seeds` positive BM25 hits, ties by ascending id,
then the top `n_seeds` positive dense cosines not already seeds (when the index has vectors and
`dense_seeds` is on). Query-aware mode adds the question's **anchors**: records whose title or an
alias the question names (`structures.names`, leftmost-longest), the `max_anchors` that match the
question best (cosine when vectors exist, else BM25; then id), whichever words named them.
Every seed starts with activation 1.0, and entry scores never enter the graph part (the anchor and
seed parts below say how well the record an edge starts from fits the question).

Reached. `graph.relation.activate` spreads activation along directed out-edges for `hops` hops
with local competition and `decay` per hop, over the current effective weights (base + learned
overlay). Only records reached through >= 1 edge with positive activation are ever returned.

Ranking (`rank`):

* `activation`: NGR's pure rule, raw activation desc, then id (from NGR's seeds only).
* `query-aware` (default): a sum of parts, each scaled to [0, 1] over the reached records only::

      score = graph + hop_weight*hop + type_weight*type + context_weight*context
              + text_weight*text + dense_weight*dense + anchor_weight*anchor + seed_weight*seed

  graph = activation / max (what feedback moves); hop = decay^(hops-1) of the credited path (1 for
  a direct link); type = 1 when the record is reached along edges of the types the question's
  relation wording names (`data/relation-cues-v1.json`: "a kind of" -> hyponym, ...; the side
  of the name the wording attaches to sets the direction) from any named anchor, else 0 (0 for all when no cue is found or no edge has those
  types); context = share of the residual question's IDF that the credited path's last edge's
  context sentence holds (FOLDOC keeps the sentence around each `{link}`); text = BM25 of the
  record against the residual question (the question minus the cue and the name it attaches to,
  minus stop words) / max; dense = min-max cosine of the record against the whole question (when
  vectors exist); anchor = the best question fit (cosine when vectors exist, else BM25) of a named
  record with an edge straight to this one, / max (0 without such an edge): of a question's many
  named words, the one it is about is the one that fits it, so its links come first; seed = the
  same for the entry seeds. Ties by id. The records the question names are where it starts, never its
  answer: query-aware mode does not return them (entry seeds stay eligible).

Notes (issue 43). On a vault of notes, hub damping, in-links asked by wording and the named part
(`hub_damping`, `direction`, `name_weight`, `agree_weight`, `kind_weight`, `names`) take the collection
profile's values when unset; see `methods.relation_notes` and, for the kind part, `methods.relation_kind`. Names
and relation wording are read by `methods.relation_cues`.

The weights are declared parameters, chosen on dev in the lab (protocols/relation-v1-*.json).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError
from ..graph.relation import Activation, Reach, RelationHit, activate, activate_in, edge_shares, merge
from ..structures.names import NameMatch, name_tokens
from ..structures.ranking import Ranking, top_k
from ..capabilities import Capability
from .params import Param
from .registry import check_params, register
from .relation_cues import QUESTION_WORDS, RESIDUAL_STOP, attach_cue, find_cues, month_dates, name_matcher
from .relation_kind import kind_fit
from .relation_notes import (DIRECTIONS, INWARDS, PROFILES, asking_verbs, hub_damping, inward_anchor, inward_rules,
                             name_fit, profile, reversed_of)

if TYPE_CHECKING:
    import scipy.sparse as sp

    from .context import SearchContext

RANKS = ("query-aware", "activation")
NAMES = ("v1", "v2", "v3")
RELATION_PARAMS = (
    Param("rank", str, "query-aware", "query-aware (graph + cue + text parts) or activation (NGR's raw rule)",
          choices=RANKS),
    Param("n_seeds", int, 5, "entry seeds per entry ranking (BM25, then dense)", low=1),
    Param("hops", int, 2, "hops of spreading activation", low=1, high=4),
    Param("decay", float, 0.5, "activation kept per hop", low=0.01, high=1.0),
    Param("dense_seeds", bool, True, "also seed from the top dense cosines (when the index has vectors)"),
    Param("max_anchors", int, 8, "query-aware: records named by the question used as anchors", low=0),
    Param("hop_weight", float, 1.0, "query-aware: weight of the hop part (1 for one hop, decay per further hop)",
          low=0.0),
    Param("type_weight", float, 1.0, "query-aware: weight of the cue-typed part", low=0.0),
    Param("context_weight", float, 1.0, "query-aware: weight of the link-context part", low=0.0),
    Param("text_weight", float, 1.0, "query-aware: weight of BM25 against the residual question", low=0.0),
    Param("dense_weight", float, 2.0, "query-aware: weight of the record's cosine to the question", low=0.0),
    Param("anchor_weight", float, 0.0, "query-aware: weight of how well the named record linking to it "
          "directly fits the question", low=0.0),
    Param("seed_weight", float, 0.0, "query-aware: the same for the entry seeds linking to it directly", low=0.0),
    Param("hub_damping", float, None, "query-aware: exponent g of the in-degree damping idf(v)^g that scales every "
          "reached record's score (0 = none); unset: the collection profile's value", low=0.0, high=8.0),
    Param("direction", str, None, "query-aware: out (follow links), cue (also follow them backwards from the "
          "named note when the question asks what links to it) or both; unset: the collection profile's value",
          choices=DIRECTIONS),
    Param("name_weight", float, None, "query-aware: weight of the named part (a direct link with the note the "
          "question names, by how specific its name is); unset: the collection profile's value", low=0.0),
    Param("agree_weight", float, None, "query-aware: weight of the agreement part (a record with direct links to or "
          "from more than one note the question names: the names' specificity summed past the most specific); unset: "
          "the collection profile's value", low=0.0),
    Param("kind_weight", float, None, "query-aware: weight of the kind part (a record under a folder whose name is "
          "the kind the question asks for: 'which theme', 'who'; see methods.relation_kind); unset: the collection "
          "profile's value", low=0.0),
    Param("names", str, None, "query-aware: how the question's names are read: v1 (titles, aliases, a dated "
          "title's date), v2 (also a title without its collection's common first or last word, 'obsidian-icon-folder' "
          "-> 'icon folder', and the relation verb a question asks with is never a name) or v3 (v2, and a dated title "
          "by its date in words, 'May 8 2021'); unset: the collection profile's value", choices=NAMES),
    Param("inward", str, "lexicon", "query-aware, direction cue: how a question asking what links to a note is "
          "read: lexicon (stemmed relation verbs with pronoun, passive and agent patterns), subject (the lexicon only "
          "where the asked-for note is the verb's subject: not 'what does NAME recommend') or list-v1 (the phrase "
          "list relation-notes-v1 was scored with)", choices=INWARDS),
)
RELATION_DEFAULTS = {p.name: p.default for p in RELATION_PARAMS}
SEED_RULE = ("top n_seeds positive BM25 hits (ties: ascending id), then the top n_seeds positive dense cosines "
             "not already seeds (when the index has dense vectors); query-aware adds the records the question "
             "names (anchors); entry scores choose seeds only")
PARTS = ("graph", "hop", "type", "context", "text", "dense", "anchor", "seed")


@dataclass(frozen=True)
class Anchor:
    """A seed and why: named in the question (`name`, the matched words) or an entry seed."""

    position: int
    why: str  # "name", "bm25", "dense"
    name: str = ""
    cue: str = ""  # the relation wording attached to this anchor, if any


@dataclass
class RelationRanking:
    """The relation lane's answer before it becomes `Hit`s: hits best first with their parts."""

    hits: list[RelationHit]
    parts: list[dict[str, Any]]
    anchors: list[Anchor]
    cue: dict[str, Any] | None
    residual: str
    weights: np.ndarray | None
    params: dict[str, Any] = field(default_factory=dict)


# ---- seeds ---------------------------------------------------------------------------------------
def relation_seeds(index: "SearchContext", query: str, n_seeds: int = 5, dense_scores: np.ndarray | None = None,
                   use_dense: bool = True) -> list[int]:
    """NGR's seed positions (see the module docstring); `dense_scores` reuses cosines already computed."""
    return [a.position for a in _entry_seeds(index, query, n_seeds, dense_scores, use_dense)]


def _entry_seeds(index: "SearchContext", query: str, n_seeds: int, dense_scores: np.ndarray | None,
                 use_dense: bool, bm25: np.ndarray | None = None) -> list[Anchor]:
    if n_seeds < 1:
        raise InputError(f"relation: n_seeds must be >= 1, got {n_seeds}")
    bm25 = index.lexical.bm25_scores(query) if bm25 is None else bm25
    out = [Anchor(p, "bm25") for p in top_k(bm25, n_seeds, index.id_rank).positions.tolist()]
    if use_dense and dense_scores is None and index.dense is not None:
        dense_scores = index.dense.scores(query)
    if use_dense and dense_scores is not None:
        taken = {a.position for a in out}
        for p in top_k(np.asarray(dense_scores, dtype=np.float64), n_seeds, index.id_rank).positions.tolist():
            if p not in taken:
                out.append(Anchor(p, "dense"))
    return out


def effective_weights(index: "SearchContext") -> tuple[np.ndarray | None, np.ndarray]:
    """(per-slot weights, or None for the base weights; their edge shares) with the current overlay.

    The overlay is read on every call; weights and shares are rebuilt only when it changed.
    """
    rows = index.state.overlay()
    key = tuple(sorted(rows.items()))

    def build() -> tuple[np.ndarray | None, np.ndarray]:
        w = index.state.overlay_for(index.graph, index.ids) if rows else None
        return w, edge_shares(index.graph, index.graph.weights if w is None else w)

    return index.memo("relation-weights", key, build)


# ---- anchors and cues ------------------------------------------------------------------------------
def _anchors(index: "SearchContext", query: str, max_anchors: int, prior: np.ndarray, inward: str = "lexicon",
             names: str = "v1") -> tuple[list[Anchor], dict[str, Any] | None, list[str], str, set[int]]:
    """(name anchors, the cue with its types and anchor, the types, the residual question, the
    positions of the name a question asks in-links of)."""
    tokens = name_tokens(query)
    cues = find_cues(tokens)
    cue_tokens = set().union(*(span for _, span in cues))
    asking = {i for i, t in enumerate(tokens) if t in QUESTION_WORDS}  # "does" is no doe
    if names != "v1":  # the verb a question asks with is no name ("which roundup links ...")
        asking |= asking_verbs(tokens)
    if names == "v3":  # "may" in a date is the month ("the May 8 2021 roundup")
        asking -= month_dates(tokens)
    matches = name_matcher(index, names).find(query, skip=cue_tokens | asking)
    cue: dict[str, Any] | None = None
    cued: NameMatch | None = None
    types: list[str] = []
    # phrase cues before one-word cues, then left to right: the first that speaks of a named record,
    # else the first in that order (its types then have no anchor to start from)
    preferred = sorted(cues, key=lambda cs: (len(cs[1]) == 1, cs[0]["start"]))
    for c, span in preferred:
        cued, types = attach_cue(c, matches, tokens)
        if cued is not None:
            cue, cue_tokens = c, span
            break
    if cue is None and preferred:
        cue, cue_tokens = preferred[0]
    used = set(cue_tokens) | (set(range(cued.start, cued.end)) if cued else set())
    residual = " ".join(t for i, t in enumerate(tokens) if i not in used and t not in RESIDUAL_STOP)
    # the senses that fit the question best, whichever word named them: a cued word's many senses
    # ("place", "case") must not crowd out the one record the question is about
    ranked: list[tuple[float, int, int, NameMatch]] = []  # (-prior, id rank, position, match)
    for m in matches:
        for p in m.positions:
            ranked.append((-float(prior[p]), int(index.id_rank[p]), p, m))
    ranked.sort(key=lambda t: t[:2])
    out: list[Anchor] = []
    seen: set[int] = set()
    for _, _, p, m in ranked:
        if p not in seen and len(out) < max_anchors:
            seen.add(p)
            out.append(Anchor(p, "name", m.name, cue["phrase"] if cue is not None and m is cued else ""))
    cue_out = None if cue is None else {"phrase": cue["phrase"], "anchor": cued.name if cued else None,
                                        "types": types}
    asked = inward_anchor(tokens, matches, inward_rules(inward))
    return out, cue_out, types, residual, ({p for p in asked.positions if p in seen} if asked else set())


# ---- parts ---------------------------------------------------------------------------------------
def _scaled(x: np.ndarray, minmax: bool = False) -> np.ndarray:
    lo = float(x.min()) if minmax and len(x) else 0.0
    hi = float(x.max()) if len(x) else 0.0
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)


def _context_terms(index: "SearchContext") -> sp.csr_matrix:
    """Edges x terms (binary): the lexical terms of each edge's context sentence."""
    def build() -> sp.csr_matrix:
        import scipy.sparse as sp  # slow to import; a plain BM25 search never needs it

        lex, rows, cols = index.lexical, [], []
        for e, edge in enumerate(index.corpus.edges):
            if edge.context:
                for t in set(map(lex.term_id.get, lex.tokenizer(edge.context))) - {None}:
                    rows.append(e)
                    cols.append(t)
        return sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(index.corpus.edges), len(lex.vocab)))

    return index.memo("relation-context", None, build)


def _context_part(index: "SearchContext", residual: str, last_slot: np.ndarray) -> np.ndarray:
    terms = index.lexical.query_terms(residual) if residual else np.zeros(0, dtype=np.int64)
    contexts = _context_terms(index)
    if not len(terms) or not contexts.nnz:
        return np.zeros(len(last_slot))
    idf = index.lexical.idf(terms)
    ctx = contexts[index.graph.edge_ids[last_slot]][:, terms]
    share: np.ndarray = np.asarray(ctx @ idf).ravel() / idf.sum()
    return share


def _typed_share(index: "SearchContext", share: np.ndarray, types: list[str]) -> np.ndarray | None:
    """`share` kept only on edges of `types` (None when the graph has none of them); built once
    per type set and share vector."""
    wanted = tuple(index.graph.type_names.index(t) for t in types if t in index.graph.type_names)
    if not wanted:
        return None
    # the entry holds `share` itself, so no other array can take its id while the entry lives
    return index.memo(f"relation-typed {wanted}", id(share),
                      lambda: (share, np.where(np.isin(index.graph.types, wanted), share, 0.0)))[1]


def _reached(nodes: np.ndarray, order: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Indices into `nodes` (sorted by `order`) of the `targets` that are reached."""
    j = np.searchsorted(nodes, targets, sorter=order)
    hit = order[np.minimum(j, len(nodes) - 1)]
    out: np.ndarray = hit[nodes[hit] == targets]
    return out


def _agreement(index: "SearchContext", nodes: np.ndarray, named: list[int], fit: np.ndarray) -> np.ndarray:
    """Per reached node: the `fit` of the named records it has a direct link with (either direction),
    summed past the best one, / max: a note linked with two notes the question names ("which theme by
    NAME lists NAME") over one linked with either."""
    total, best = np.zeros(len(nodes)), np.zeros(len(nodes))
    if len(named) < 2:
        return total
    order = np.argsort(nodes)
    rev = reversed_of(index)
    for s in named:
        hit = _reached(nodes, order, np.union1d(index.graph.indices[index.graph.indptr[s]:index.graph.indptr[s + 1]],
                                                rev.indices[rev.indptr[s]:rev.indptr[s + 1]]))
        total[hit] += max(float(fit[s]), 0.0)
        best[hit] = np.maximum(best[hit], max(float(fit[s]), 0.0))
    return _scaled(total - best)


def _linked_fit(index: "SearchContext", nodes: np.ndarray, sources: list[int], fit: np.ndarray,
                backward: Sequence[int] = ()) -> np.ndarray:
    """Per reached node: the best positive `fit` of a `sources` record with an edge straight to it
    (or a `backward` record it has an edge straight to), / max."""
    out = np.zeros(len(nodes))
    order = np.argsort(nodes)
    sides = [(index.graph, sources)] + ([(reversed_of(index), backward)] if len(backward) else [])
    for g, starts in sides:
        for s in starts:
            hit = _reached(nodes, order, g.indices[g.indptr[s]:g.indptr[s + 1]])
            out[hit] = np.maximum(out[hit], max(float(fit[s]), 0.0))
    return _scaled(out)


# ---- the ranking -----------------------------------------------------------------------------------
def relation_rank(index: "SearchContext", query: str, limit: int | None = 10, params: dict[str, Any] | None = None,
                  dense_scores: np.ndarray | None = None, dense: bool = True) -> RelationRanking:
    """The relation lane's ranking of `query` (parameters: `RELATION_PARAMS`; see the module docstring).

    `dense_scores` reuses cosines already computed; `dense=False` uses no vectors at all. Every
    parameter is checked against its declaration (an unknown or bad one is an InputError)."""
    p = check_params("relation", params or {})
    if not isinstance(query, str) or not query.strip():
        raise InputError("empty query")
    p["profile"] = profile(index)
    for k, v in PROFILES[p["profile"]].items():
        if p[k] is None:
            p[k] = v
    use_dense = bool(p["dense_seeds"]) and dense
    if not dense:
        dense_scores = None
    elif dense_scores is None and index.dense is not None and (
            use_dense or (p["rank"] == "query-aware" and p["dense_weight"] > 0)):
        dense_scores = index.dense.scores(query)
    p["dense_seeds"] = use_dense = use_dense and dense_scores is not None  # as used, for the lane's report
    weights, share = effective_weights(index)
    bm25 = index.lexical.bm25_scores(query)
    seeds = _entry_seeds(index, query, p["n_seeds"], dense_scores if use_dense else None, use_dense, bm25)
    cue: dict[str, Any] | None = None
    types: list[str] = []
    residual = ""
    inward: set[int] = set()
    if p["rank"] == "query-aware":
        prior = dense_scores if dense_scores is not None else bm25
        named, cue, types, residual, inward = _anchors(index, query, p["max_anchors"], np.asarray(prior),
                                                       p["inward"], p["names"])
        have = {a.position for a in named}
        seeds = named + [a for a in seeds if a.position not in have]
    positions = [a.position for a in seeds]
    out = RelationRanking([], [], seeds, cue, residual, weights, p)
    if not positions:
        return out
    fwd = activate(index.graph, positions, p["hops"], p["decay"], weights, index.id_rank, share)
    act: Activation | Reach = fwd
    named_pos = [a.position for a in seeds if a.why == "name"]
    back = (sorted(inward) if p["direction"] == "cue" else named_pos if p["direction"] == "both" else []) \
        if p["rank"] == "query-aware" else []
    if back:  # the question asks what links to a note it names: its in-links are candidates too
        act = merge(fwd, activate_in(index.graph, reversed_of(index), back, p["hops"], p["decay"], weights,
                                     index.id_rank))
        out.params["backward_from"] = [index.ids[b] for b in back]
    if not len(act):
        return out
    tie = index.id_rank[act.nodes]
    if p["rank"] == "activation":
        order = np.lexsort((tie, -act.activation))[:limit]
        out.hits = [act.hit(j, r) for r, j in enumerate(order.tolist(), start=1)]
        out.parts = [{"graph": float(act.activation[j])} for j in order]
        return out
    parts = {"graph": _scaled(act.activation), "hop": p["decay"] ** (act.hops - 1.0),
             "type": np.zeros(len(act)), "dense": np.zeros(len(act))}
    typed = _typed_share(index, share, types)
    if typed is not None and named_pos:
        t = activate(index.graph, named_pos, p["hops"], p["decay"], weights, index.id_rank, typed)
        parts["type"][np.isin(act.nodes, t.nodes)] = 1.0
    parts["context"] = _context_part(index, residual, act.last_slot)
    parts["text"] = _scaled(index.lexical.bm25_scores(residual)[act.nodes]) if residual else np.zeros(len(act))
    if dense_scores is not None:
        parts["dense"] = _scaled(np.asarray(dense_scores, dtype=np.float64)[act.nodes], minmax=True)
    fit = np.asarray(prior, dtype=np.float64)
    parts["anchor"] = _linked_fit(index, act.nodes, named_pos, fit)
    parts["seed"] = _linked_fit(index, act.nodes, [a.position for a in seeds if a.why != "name"], fit)
    shown: tuple[str, ...] = PARTS
    score = parts["graph"] + sum(p[f"{k}_weight"] * parts[k] for k in PARTS[1:])
    specific = name_fit(index, [(a.position, a.name) for a in seeds if a.why == "name"]) \
        if p["name_weight"] or p["agree_weight"] else np.zeros(0)  # the named notes' specificity, when a part reads it
    if p["name_weight"]:
        parts["name"] = _linked_fit(index, act.nodes, named_pos, specific, back)
        score = score + p["name_weight"] * parts["name"]
        shown = (*PARTS, "name")
    if p["agree_weight"]:
        parts["agree"] = _agreement(index, act.nodes, named_pos, specific)
        score = score + p["agree_weight"] * parts["agree"]
        shown = (*shown, "agree")
    if p["kind_weight"]:
        parts["kind"] = _scaled(kind_fit(index, query, act.nodes), minmax=True)
        score = score + p["kind_weight"] * parts["kind"]
        shown = (*shown, "kind")
    if p["hub_damping"]:
        parts["hub"] = hub_damping(index, p["hub_damping"])[act.nodes]
        score = score * parts["hub"]
        shown = (*shown, "hub")
    order = np.lexsort((tie, -score))
    order = order[~np.isin(act.nodes[order], named_pos)][:limit]  # what the question names is not its answer
    out.hits = [act.hit(j, r, score[j]) for r, j in enumerate(order.tolist(), start=1)]
    out.parts = [{k: round(float(parts[k][j]), 6) for k in shown} for j in order]
    return out


@register("relation", "the relation lane as a ranking: records reached through >= 1 graph edge from the "
          "question's anchors and entry seeds, query-aware (default) or by raw activation", *RELATION_PARAMS,
          needs=(Capability.TERM_STATISTICS, Capability.GRAPH))
def _relation(index: "SearchContext", query: str, k: int | None, params: dict[str, Any]) -> Ranking:
    r = relation_rank(index, query, k, params)
    return Ranking(np.array([h.node for h in r.hits], dtype=np.int64), np.array([h.activation for h in r.hits]))
