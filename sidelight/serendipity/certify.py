"""The certificate: which record pairs are connected through a marker, beyond their kinship.

Inputs are plain arrays (so tests can plant connections without an SAE): the record of each chunk,
sparse chunk codes (chunks x markers), unit record vectors (kinship), the undirected link graph
(or None) and the records' word tokens (for the verbatim-span rule).

Per (record r, marker f): ``c`` = chunks of r where f is active, ``n_r`` = chunks of r,
``p_f`` = share of all chunks where f is active. Chance: ``c ~ Binomial(n_r, p_f)``.

A *candidate* is a record pair (a, b) sharing a marker active in more than one chunk on each side
(the multi-chunk rule is applied when candidates are generated; pairs sharing a marker in only one
chunk on some side are counted as ``single_chunk_incidences``). A pair's marker is the shared
marker of highest evidence. It passes when all hold:

* chance ratio ``(c_a/n_a)(c_b/n_b) / p_f^2 >= min_chance`` (default `MIN_CHANCE`, 28): observed co-occurrence
  of the marker in a random chunk of a and one of b, over its chance expectation;
* evidence ``-log10 P(C_a >= c_a) - log10 P(C_b >= c_b)`` (binomial tails, scipy) exceeds the
  threshold of the pair's kinship bin; kinship = cosine of the record vectors, bins =
  ``kinship_bins`` equal-count bins of the candidates' kinship (edges at its quantiles; the outer bins
  are open-ended). The thresholds are calibrated on ``calibration_draws`` placebo corpora (see
  `placebo`): in each bin, the lowest target evidence t from which up
  ``(placebo candidates above t, summed over draws, + 1) / (draws x target candidates above t)``
  stays at most ``fdr`` (default 0.05), counting pairs that meet the chance rule; +inf when no t
  does (target-decoy estimation with the +1 finite-sample correction; see `calibration`). The seed document's "high
  quantile within the pair's kinship bin" passed about 1% of the candidates of every bin by
  construction, however weak the markers;
* no verbatim span of ``>= max_shared_span`` (`MAX_SHARED_SPAN`, 28) word tokens in common;
* graph distance ``>= min_distance`` (`MIN_DISTANCE`, 3) on the undirected link graph (BFS capped at
  ``max_hops``); "not applied" when the index has no edges.

Recorded per certified pair: marker, evidence, ``evidence_rel`` = evidence minus the bin's
threshold, chance ratio, kinship and its percentile among candidates, act_symmetry = min/max of
the mean activation of the marker over its active chunks on each side, signature = for each
resolution (top-k' codes of the same SAE, k' in ``resolutions``) 1 when the pair still passes the
chance, evidence (same bin threshold) and multi-chunk rules at that resolution, LOO = the same with
the marker's strongest chunk on one side left out (both sides tried, AND-ed; the multi-chunk rule
is not re-applied since leaving one out lowers the count by construction), graph distance and
shared neighbours.

On a corpus without links the distance rule is not applied; its substitute: the two records must not
be among each other's ``neighbour_rule`` nearest records by kinship. Then at most ``max_per_record``
passing pairs per record are kept (best ``evidence_rel`` first), so one hub cannot take the pool.

Placebo (see `placebo`): ``placebo_draws`` fresh placebo corpora, each record rebuilt from chunks of
its ``neighbours`` nearest records by kinship, put through the whole test with the calibrated
thresholds. Rule: the certificate FAILS when the mean placebo passes are >= ``placebo_ratio``
(default 0.1) x target passes, or when nothing passes. The ratio is reported with a 95% interval:
the exact Poisson interval of the summed placebo passes, over draws x target passes.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

if TYPE_CHECKING:  # scipy costs ~0.2 s to import: imported where used, so opening an index and BM25 skip it
    import scipy.sparse as sp

    from .guards import Guards

from ..errors import InputError
from ..progress import progress_bar
from .calibration import evidence_by_bin, fdr_thresholds, poisson_ratio_ci
from .evidence import Profile, lookup_cells, pair_stats, profile, tail_evidence  # noqa: F401 (certify's vocabulary)
from .rules import (SpanChecker, cap_per_record, graph_distances, kinship_neighbours, near_by_kinship,  # noqa: F401
                    shared_neighbours, word_tokens)

# The certificate's thresholds, from the serendipity seed document (shared/seeds/heart-of-gold-serendipity.txt,
# "The certificate"):
MIN_CHANCE = 28.0  # "The co-occurrence must be at least 28 times the chance expectation."
MAX_SHARED_SPAN = 28  # "they must not share a quotation of 28 tokens or more" (word tokens)
MIN_DISTANCE = 3  # "at least three steps apart in the encyclopedia's related-entries graph"
# The placebo draws' seed. The seed document fixes none; this is an arbitrary fixed value, kept because
# the certificate (its placebo passes, and so whether it passes) depends on it.
PLACEBO_SEED = 28
# What the placebo is, recorded in every summary: a certificate on disk built against another null
# (the random pairs of earlier versions) is refused by `Serendipity.load`.
NULL = "placebo corpora from kinship neighbours' chunks"


@dataclass(frozen=True)
class CertConfig:
    min_chance: float = MIN_CHANCE
    fdr: float = 0.05  # calibration: placebo passes / target passes per kinship bin, at most
    calibration_draws: int = 8
    kinship_bins: int = 10
    min_chunks: int = 2  # "more than one chunk on each side"
    max_shared_span: int = MAX_SHARED_SPAN
    min_distance: int = MIN_DISTANCE
    max_hops: int = 6
    placebo_draws: int = 5
    placebo_ratio: float = 0.1
    neighbours: int = 10  # placebo corpora rebuild each record from its 10 nearest records' chunks
    neighbour_rule: int = 10  # without a link graph: not among each other's 10 nearest records
    max_per_record: int = 20
    seed: int = PLACEBO_SEED
    max_pairs_per_marker: int = 200_000  # markers shared by more pairs are too generic to test
    guards: bool = True  # `Serendipity` puts passing pairs through the whale guards (see `guards`)

    def __post_init__(self) -> None:
        if (not (0 < self.fdr < 1) or min(self.calibration_draws, self.placebo_draws, self.kinship_bins,
                                          self.min_chunks, self.max_per_record) < 1):
            raise InputError(f"bad certificate settings: {self}")


@dataclass
class Candidates:
    a: np.ndarray
    b: np.ndarray
    marker: np.ndarray
    evidence: np.ndarray
    chance: np.ndarray
    kinship: np.ndarray
    incidences: int  # (pair, marker) incidences with the multi-chunk rule met
    single_chunk_incidences: int  # pairs sharing a marker where some side has it in one chunk only
    skipped_markers: int


def candidates(prof: Profile, vectors: np.ndarray, config: CertConfig, progress: bool = False) -> Candidates:
    """Every record pair sharing a marker active in >= min_chunks chunks on each side, best marker each."""
    cnt = prof.count.tocsc()
    ev = prof.evidence.tocsc()
    m = cnt.shape[1]
    keys, evs, fs = [], [], []
    incid = single = skipped = 0
    n_rec = cnt.shape[0]
    with progress_bar(m, "candidate pairs", progress) as advance:
        for f in range(m):
            s, e = cnt.indptr[f], cnt.indptr[f + 1]
            rows, c, evd = cnt.indices[s:e], cnt.data[s:e], ev.data[s:e]
            any_n = len(rows)
            ok = c >= config.min_chunks
            rows, evd = rows[ok], evd[ok]
            k = len(rows)
            single += any_n * (any_n - 1) // 2 - k * (k - 1) // 2
            advance(1)
            if k < 2:
                continue
            if k * (k - 1) // 2 > config.max_pairs_per_marker:
                skipped += 1
                continue
            i, j = np.triu_indices(k, 1)
            incid += len(i)
            keys.append(rows[i].astype(np.int64) * n_rec + rows[j])
            evs.append(evd[i] + evd[j])
            fs.append(np.full(len(i), f, np.int32))
    if keys:
        key, evid, mk = np.concatenate(keys), np.concatenate(evs), np.concatenate(fs)
        order = np.lexsort((mk, -evid, key))  # best evidence first per pair, ties by lower marker
        key, evid, mk = key[order], evid[order], mk[order]
        first = np.ones(len(key), bool)
        first[1:] = key[1:] != key[:-1]
        key, evid, mk = key[first], evid[first], mk[first]
    else:
        key, evid, mk = np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int32)
    a, b = key // n_rec, key % n_rec
    _, _, _, chance = pair_stats(prof, a, b, mk, config.min_chunks)
    kin = rowdot(vectors, a, b)
    return Candidates(a, b, mk, evid, chance, kin, incid, single, skipped)


def rowdot(vectors: np.ndarray, a: np.ndarray, b: np.ndarray, block: int = 65536) -> np.ndarray:
    """Cosine of record pairs (unit vectors), in blocks so memory stays flat."""
    out = np.zeros(len(a), np.float64)
    for s in range(0, len(a), block):
        out[s:s + block] = np.einsum("ij,ij->i", vectors[a[s:s + block]], vectors[b[s:s + block]])
    return out


def kinship_edges(kinship: np.ndarray, bins: int) -> np.ndarray:
    """Inner bin edges: the 1/bins, 2/bins, ... quantiles of candidate kinship."""
    if len(kinship) == 0 or bins <= 1:
        return np.zeros(0)
    return np.quantile(kinship, np.arange(1, bins) / bins)


def bin_of(kinship: np.ndarray, edges: np.ndarray) -> np.ndarray:
    return np.searchsorted(edges, kinship, side="right")


# ---- the remaining rules -----------------------------------------------------------------------
@dataclass
class TestResult:
    """The rules applied to a list of pairs with their best markers."""

    passes: np.ndarray  # bool
    reasons: dict  # rule -> pairs failing it (first failing rule, in order)
    distance: np.ndarray
    bins: np.ndarray


def apply_rules(a, b, evidence, chance, kinship, edges, thresholds, adj, spans: SpanChecker,
                neighbours: np.ndarray, config: CertConfig) -> TestResult:
    bins = bin_of(kinship, edges)
    has = np.isfinite(evidence) & (chance > 0)
    r_chance = has & (chance >= config.min_chance)
    r_ev = r_chance & (evidence > thresholds[bins])
    idx = np.flatnonzero(r_ev)
    span_ok = np.array([not spans.shares(int(a[i]), int(b[i])) for i in idx], dtype=bool)
    ok = np.zeros(len(a), bool)
    ok[idx[span_ok]] = True
    dist = np.full(len(a), -1, np.int64)
    sel = np.flatnonzero(ok)
    if adj is not None:
        dist[sel] = graph_distances(adj, a[sel], b[sel], config.max_hops)
        near = np.zeros(len(a), bool)
        near[sel] = (dist[sel] >= 0) & (dist[sel] < config.min_distance)
    else:
        near = np.zeros(len(a), bool)
        near[sel] = near_by_kinship(neighbours, a[sel], b[sel], config.neighbour_rule)
    ok &= ~near
    sel = np.flatnonzero(ok)
    capped = np.zeros(len(a), bool)
    capped[sel] = ~cap_per_record(a[sel], b[sel], evidence[sel] - thresholds[bins[sel]], config.max_per_record)
    ok &= ~capped
    reasons = {"no shared multi-chunk marker": int((~has).sum()),
               "chance ratio below minimum": int((has & ~r_chance).sum()),
               "evidence below kinship-bin threshold": int((r_chance & ~r_ev).sum()),
               "shared verbatim span": int((~span_ok).sum()),
               ("graph distance below minimum" if adj is not None else "kinship neighbours"): int(near.sum()),
               "per-record cap": int(capped.sum())}
    return TestResult(ok, reasons, dist, bins)


@dataclass
class Certificate:
    config: dict
    summary: dict
    pairs: dict  # column name -> array (certified pairs only)
    edges: np.ndarray | None = field(repr=False, default=None)
    thresholds: np.ndarray | None = field(repr=False, default=None)
    placebo: dict | None = field(repr=False, default=None)  # a, b, draw, kinship_bin, evidence_rel, marker of placebo passes
    ruled: dict | None = field(repr=False, default=None)  # passing pairs the whale guards ruled out (a, b, marker, ..., guard)

    @property
    def passed(self) -> bool:
        return self.summary["verdict"] == "pass"

    def __len__(self) -> int:
        return len(self.pairs["a"])


def run_certificate(chunk_record: np.ndarray, n_records: int, codes: sp.csr_matrix, vectors: np.ndarray,
                    adj: sp.csr_matrix | None, tokens: Callable[[int], Sequence[str]],
                    resolutions: dict[int, sp.csr_matrix] | None = None, config: CertConfig = CertConfig(),
                    progress: bool = False, guards: Guards | None = None) -> Certificate:
    """Candidates, rules, signatures and the placebo test; see the module docstring. With `guards`,
    passing pairs (target and placebo alike) are then put through the whale guards (`guards`) and the
    verdict is taken on what survives; the pairs they rule out are kept in ``Certificate.ruled``."""
    from .placebo import placebo_chunks
    from .signature import signatures

    t0 = time.perf_counter()
    chunk_record = np.asarray(chunk_record, np.int64)
    vectors = np.asarray(vectors, np.float32)
    if adj is not None and adj.nnz == 0:
        adj = None
    prof = profile(chunk_record, n_records, codes)
    cand = candidates(prof, vectors, config, progress)
    edges = kinship_edges(cand.kinship, config.kinship_bins)
    n_bins = len(edges) + 1
    cbins = bin_of(cand.kinship, edges)
    n_chunks = np.bincount(chunk_record, minlength=n_records)
    population = np.flatnonzero(n_chunks >= config.min_chunks)
    neighbours = kinship_neighbours(vectors, population, max(config.neighbours, config.neighbour_rule))

    import scipy.sparse as sp
    codes = sp.csr_matrix(codes)
    real_chunks = _chunk_lists(chunk_record, n_records)

    def placebo_corpus(stream: int, draw: int) -> tuple[Candidates, np.ndarray]:
        rng = np.random.default_rng([config.seed, stream, draw])
        owner, pick = placebo_chunks(chunk_record, n_records, neighbours[:, :config.neighbours], rng)
        return candidates(profile(owner, n_records, codes[pick]), vectors, config), pick

    def placebo(stream: int, draw: int) -> Candidates:
        return placebo_corpus(stream, draw)[0]

    def testable(c: Candidates) -> np.ndarray:
        return np.where(np.isfinite(c.evidence) & (c.chance >= config.min_chance), c.evidence, -np.inf)

    calibration = []
    with progress_bar(config.calibration_draws, "calibration placebo corpora", progress) as advance:
        for d in range(config.calibration_draws):
            pc = placebo(0, d)
            calibration.append((testable(pc), bin_of(pc.kinship, edges)))
            advance(1)
    thresholds = fdr_thresholds(testable(cand), cbins, calibration, n_bins, config.fdr)
    by_bin = evidence_by_bin(testable(cand), cbins, calibration, n_bins)
    spans = SpanChecker(tokens, config.max_shared_span)
    res = apply_rules(cand.a, cand.b, cand.evidence, cand.chance, cand.kinship, edges, thresholds, adj, spans,
                      neighbours, config)
    t_target = time.perf_counter() - t0

    sel = np.flatnonzero(res.passes)
    a, b, f = cand.a[sel], cand.b[sel], cand.marker[sel]
    thr = thresholds[res.bins[sel]]
    kin_sorted = np.sort(cand.kinship)
    pairs = {
        "a": a, "b": b, "marker": f, "evidence": cand.evidence[sel], "threshold": thr,
        "evidence_rel": cand.evidence[sel] - thr, "chance": cand.chance[sel], "kinship": cand.kinship[sel],
        "kinship_pctile": 100.0 * np.searchsorted(kin_sorted, cand.kinship[sel], side="right") / max(len(kin_sorted), 1),
        "kinship_bin": res.bins[sel],
        "act_symmetry": _symmetry(prof, a, b, f),
        "count_a": lookup_cells(prof.count, a, f).astype(np.int64), "count_b": lookup_cells(prof.count, b, f).astype(np.int64),
        "distance": res.distance[sel],
        "shared_neighbours": shared_neighbours(adj, a, b),
    }
    sig, loo, ks = signatures(chunk_record, n_records, codes, resolutions, a, b, f, thr, config)
    pairs["signature"], pairs["loo"] = sig, loo
    ruled = None
    before_guards = int(len(sel))
    target_guards: dict = {}
    if guards is not None:  # the pairs the guards rule out keep every column, plus the guard's name
        from .guards import apply_guards, counts
        why = np.array(apply_guards(guards, a, b, f, lambda r: real_chunks[r]), dtype=str)
        target_guards = counts(list(why))
        ruled = {k: v[why != ""] for k, v in pairs.items()}
        ruled["guard"] = why[why != ""]
        pairs = {k: v[why == ""] for k, v in pairs.items()}
        sel = sel[why == ""]

    # placebo: fresh placebo corpora through the whole test
    t1 = time.perf_counter()
    target = int(len(sel))
    placebo_runs: list[dict[str, Any]] = []
    placebo_hits: list[tuple[np.ndarray, ...]] = []
    with progress_bar(config.placebo_draws, "placebo corpora", progress) as advance:
        for d in range(config.placebo_draws):
            pc, pick = placebo_corpus(1, d)
            pr = apply_rules(pc.a, pc.b, pc.evidence, pc.chance, pc.kinship, edges, thresholds, adj, spans,
                             neighbours, config)
            run = {"pairs": int(len(pc.a)), "passes": int(pr.passes.sum()), "reasons": pr.reasons}
            i = np.flatnonzero(pr.passes)
            owned = [pick[c] for c in real_chunks]  # placebo record r's chunks are copies of these real ones
            why = np.full(len(i), "", dtype=object)
            if guards is not None:
                from .guards import apply_guards, counts
                why = np.array(apply_guards(guards, pc.a[i], pc.b[i], pc.marker[i], lambda r: owned[r]), dtype=object)
                run["passes_before_guards"], run["guards"] = run["passes"], counts(list(why))
                run["passes"] = int((why == "").sum())
            placebo_runs.append(run)
            ca = np.array([_strongest(codes, owned[int(r)], int(m)) for r, m in zip(pc.a[i], pc.marker[i])], np.int64)
            cb = np.array([_strongest(codes, owned[int(r)], int(m)) for r, m in zip(pc.b[i], pc.marker[i])], np.int64)
            placebo_hits.append((pc.a[i], pc.b[i], np.full(len(i), d), pr.bins[i], pc.evidence[i] - thresholds[pr.bins[i]],
                                 pc.marker[i], ca, cb, np.array([str(x) for x in why], dtype=str)))
            advance(1)
    t_placebo = time.perf_counter() - t1
    passes = [p["passes"] for p in placebo_runs]
    mean_placebo = float(np.mean(passes)) if passes else 0.0
    ratio_ci = poisson_ratio_ci(int(sum(passes)), len(passes) * target)
    rule = (f"FAIL if mean placebo passes >= {config.placebo_ratio:g} x target passes, or no target passes; "
            f"placebo = {config.placebo_draws} seeded placebo corpora (each record rebuilt from chunks of its "
            f"{config.neighbours} nearest records by kinship) through the same test; thresholds calibrated "
            f"on {config.calibration_draws} other placebo corpora at placebo/target <= {config.fdr:g} per kinship bin")
    failed = target == 0 or mean_placebo >= config.placebo_ratio * target
    placebo_passes = {k: np.concatenate([h[j] for h in placebo_hits]) if placebo_hits else np.zeros(0)
                      for j, k in enumerate(("a", "b", "draw", "kinship_bin", "evidence_rel", "marker", "chunk_a",
                                             "chunk_b", "guard"))}
    note = ""
    if len(population) < 0.25 * n_records:
        note = (f"only {len(population)} of {n_records} records have {config.min_chunks} or more chunks, which the "
                f"multi-chunk rule needs on both sides; records this short want a smaller chunk window (--budget)")
    summary = {
        "records": int(n_records), "chunks": int(len(chunk_record)), "markers": int(codes.shape[1]),
        "population": int(len(population)),
        "candidates": int(len(cand.a)), "candidate_incidences": int(cand.incidences),
        "single_chunk_incidences": int(cand.single_chunk_incidences),
        "skipped_generic_markers": int(cand.skipped_markers),
        "target_passes": target, "target_reasons": res.reasons,
        "placebo_passes": passes, "placebo_mean": mean_placebo,
        "placebo_pairs": [p["pairs"] for p in placebo_runs], "placebo_reasons": [p["reasons"] for p in placebo_runs],
        "placebo_target_ratio": mean_placebo / target if target else None, "placebo_target_ratio_ci": ratio_ci,
        "rule": rule, "placebo_ratio": float(config.placebo_ratio), "null": NULL,
        "verdict": "fail" if failed else "pass", "note": note,
        "graph": "applied" if adj is not None else
                 f"not applied (no link graph); instead not among each other's {config.neighbour_rule} nearest by kinship",
        "kinship_edges": [float(x) for x in edges], "thresholds": [float(x) for x in thresholds],
        "evidence_by_bin": by_bin, "target_passes_by_bin": np.bincount(res.bins[sel], minlength=n_bins).tolist(),
        "placebo_passes_by_bin": (np.bincount(placebo_passes["kinship_bin"][placebo_passes["guard"] == ""].astype(np.int64),
                                              minlength=n_bins)
                                  / max(config.placebo_draws, 1)).tolist(),
        "guards": ({"target": target_guards, "target_passes_before_guards": before_guards,
                    "placebo": [p.get("guards") for p in placebo_runs],
                    "placebo_passes_before_guards": [p.get("passes_before_guards") for p in placebo_runs]}
                   if guards is not None else None),
        "resolutions": ks, "seconds": {"target": round(t_target, 2), "placebo": round(t_placebo, 2),
                                       "total": round(time.perf_counter() - t0, 2)},
    }
    return Certificate(asdict(config), summary, pairs, edges, thresholds, placebo_passes, ruled)


def _chunk_lists(chunk_record: np.ndarray, n_records: int) -> list[np.ndarray]:
    """Each record's chunk ids, ascending."""
    order = np.argsort(chunk_record, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(chunk_record, minlength=n_records))])
    return [order[bounds[r]:bounds[r + 1]] for r in range(n_records)]


def _strongest(codes: sp.csr_matrix, chunks: np.ndarray, f: int) -> int:
    """The chunk among `chunks` where marker f is strongest (ties: the lower chunk id); -1 if inactive."""
    col = np.asarray(codes[np.asarray(chunks, np.int64)][:, [f]].todense()).ravel() if len(chunks) else np.zeros(0)
    if not len(col) or col.max() <= 0:
        return -1
    return int(np.asarray(chunks)[np.lexsort((chunks, -col))][0])


def _symmetry(prof: Profile, a, b, f) -> np.ndarray:
    ma = lookup_cells(prof.total, a, f) / np.maximum(lookup_cells(prof.count, a, f), 1)
    mb = lookup_cells(prof.total, b, f) / np.maximum(lookup_cells(prof.count, b, f), 1)
    return np.minimum(ma, mb) / np.maximum(np.maximum(ma, mb), 1e-12)


