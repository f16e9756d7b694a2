"""The whale guards on hand-built toy collections whose verdicts are known by construction, and in the
certificate: ruled-out pairs are kept apart with their reason, target and placebo alike."""

import numpy as np
import scipy.sparse as sp

from sidelight.serendipity import guards as G
from sidelight.serendipity.certify import run_certificate

from tests.serendipity.synth import PLANTED_MARKER, SYNTH_CERT, planted_corpus

FILLER = "the study reports results from data collected over several years in patients"


def toy(texts, active, n_records=None, vectors=None, width=3):
    """Chunk i is record i (unless n_records); `active` maps marker -> {chunk: activation}."""
    n = len(texts)
    rows, cols, vals = [], [], []
    for f, acts in active.items():
        for c, v in acts.items():
            rows.append(c)
            cols.append(f)
            vals.append(v)
    codes = sp.csr_matrix((vals, (rows, cols)), shape=(n, width), dtype=np.float32)
    if vectors is None:
        vectors = np.eye(n, 8, dtype=np.float32) + 0.01
    return G.Guards(G.GuardData(codes, vectors, texts, np.arange(n) if n_records is None else n_records[0],
                                n if n_records is None else n_records[1]))


def test_boilerplate_share_of_records():
    """Of 1000 records: marker 0 is active in 20 (2% and 20 records: the threshold, boilerplate), marker 1
    in 19. Of 100 records, marker 2 in 5 (5%, but fewer than 20 records: a topic of a small collection)."""
    g = toy([FILLER] * 1000, {0: {c: 1.0 for c in range(20)}, 1: {c: 1.0 for c in range(20, 39)}})
    assert g.record_share[0] == 0.02 and g.record_count[1] == 19
    assert g.marker_reason(0) == "boilerplate marker"
    assert g.marker_reason(1) is None
    assert not G.boilerplate_marker(5, 100) and G.boilerplate_marker(21, 1000) and not G.boilerplate_marker(40, 2001)


def test_a_name_and_a_single_word_are_artifacts_a_topic_is_not():
    """In 200 chunks (a word in 5 of them is specific: 2.5% < 5%): marker 0's top chunks all say "Stebbing" (capitalised mid-sentence) with nothing else
    in common: a name. Marker 1's all say "lung" and nothing else shared: one word. Marker 2's share
    "prion" and "scrapie" (each in every top chunk, lower case): a topic, kept."""
    texts = [FILLER + f" token{i}" for i in range(200)]
    other = ["alpha", "beta", "gamma", "delta", "epsilon"]
    texts[0:5] = [f"{w} by Stebbing" for w in other]
    texts[5:10] = [f"the lung and {w}" for w in other]
    texts[10:15] = [f"prion with scrapie and {w}" for w in other]
    act = {m: {5 * m + i: 2.0 - 0.1 * i for i in range(5)} for m in range(3)}
    g = toy(texts, act, n_records=(np.arange(200), 1000))
    assert g.specific[0] == {"stebbing", "alpha"} and "study" not in g.specific[20]
    assert G.name_or_single_word(0, g)
    assert G.name_or_single_word(1, g)
    assert not G.name_or_single_word(2, g)
    assert g.marker_reason(1) == "name or single-word marker"


def test_one_shared_word():
    """Spans sharing only "lung" are joined by one word; spans sharing "prion" and "scrapie" are not."""
    texts = [FILLER + f" token{i}" for i in range(100)]
    texts[:4] = ["memory t-cells in the lung", "screening for lung cancer", "prion and scrapie in sheep",
                 "scrapie prion in mice"]
    g = toy(texts, {})
    assert G.one_shared_word(np.array([0]), np.array([1]), g)
    assert not G.one_shared_word(np.array([2]), np.array([3]), g)


def test_different_senses_compares_the_spans_in_context():
    """Marker 0 is active in 40 chunks of 40 records whose vectors lie near e0 (its usual sense); two of
    them lie on e1 instead (the black-holes chunk). A pair of an e0 chunk and an e1 chunk has cosine ~0,
    below the marker's bottom quarter of its own pairs (~1): different senses. Two e0 chunks: not."""
    rng = np.random.default_rng(0)
    v = np.zeros((100, 8), np.float32)
    v[:, 0] = 1.0
    v[:, 2:] = 0.05 * rng.standard_normal((100, 6))
    v[38:40] = 0
    v[38:40, 1] = 1.0
    texts = [f"word{c} other{c}" for c in range(100)]
    texts[0] = texts[39] = "black matter theory"  # two specific words in common: not "one shared word"
    g = toy(texts, {0: {c: 1.0 for c in range(40)}}, vectors=v, n_records=(np.arange(100), 4000))
    assert 0.9 < g.sense_floor(0) <= 1.0
    assert G.different_senses(0, np.array([0]), np.array([39]), g)
    assert not G.different_senses(0, np.array([0]), np.array([1]), g)
    # activation strength plays no part: equal activations on both sides, still ruled out
    assert g.check(0, np.array([0]), np.array([39])) == "different senses"


def test_no_shared_topic_compares_the_spans_with_the_whole_collection():
    """200 chunks of 200 records on random unit vectors in 16 dimensions: two chunks' cosine is then about
    N(0, 1/16), so the collection's 98% quantile is about 2.05 / 4 = 0.51. Marker 0 fires on all of them
    (of 100,000 records: not boilerplate), so its own pairs spread wide and its bottom quarter is about
    -0.17. Chunks 0 and 1 (cosine 0.1, two specific words in common) pass the four older guards but share
    no topic; chunks 2 and 3 (cosine 0.9) share one and are kept."""
    rng = np.random.default_rng(3)
    v = rng.standard_normal((200, 16)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    e = np.zeros((4, 16), np.float32)
    e[:, 0] = 1.0
    e[1] = [0.1, np.sqrt(1 - 0.01)] + [0.0] * 14
    e[2, :] = 0.0
    e[2, 2] = 1.0
    e[3] = 0.0
    e[3, 2], e[3, 3] = 0.9, np.sqrt(1 - 0.81)
    v[:4] = e
    texts = [f"word{c} other{c}" for c in range(200)]
    texts[0] = texts[1] = "black matter theory"
    texts[2] = texts[3] = "prion scrapie sheep"
    g = toy(texts, {0: {c: 1.0 for c in range(200)}}, vectors=v, n_records=(np.arange(200), 100_000))
    assert 0.4 < g.topic_floor() < 0.62
    assert g.sense_floor(0) < 0.0
    assert abs(float(g.vectors[0] @ g.vectors[1]) - 0.1) < 1e-5
    assert g.check(0, np.array([0]), np.array([1])) == "no shared topic"
    assert G.no_shared_topic(np.array([0]), np.array([1]), g)
    assert g.check(0, np.array([2]), np.array([3])) is None


def test_certificate_keeps_ruled_pairs_apart_with_their_reason():
    """With guards, passing pairs = certified + ruled (disjoint), each ruled one with a guard's name; the
    placebo passes are put through the same guards; without guards the certificate is unchanged."""
    cr, n, codes, vec, words = planted_corpus()
    plain = run_certificate(cr, n, codes, vec, None, lambda r: words[r], None, SYNTH_CERT)
    texts = [f"record{r} chunk{c} shared words alpha beta" for c, r in enumerate(cr)]
    chunk_vec = np.asarray(vec)[cr] + 0.01 * np.random.default_rng(1).standard_normal((len(cr), vec.shape[1]))
    guards = G.Guards(G.GuardData(codes, chunk_vec, texts, cr, n))
    guarded = run_certificate(cr, n, codes, vec, None, lambda r: words[r], None, SYNTH_CERT, guards=guards)
    before = {(int(a), int(b)) for a, b in zip(plain.pairs["a"], plain.pairs["b"])}
    kept = {(int(a), int(b)) for a, b in zip(guarded.pairs["a"], guarded.pairs["b"])}
    ruled = {(int(a), int(b)) for a, b in zip(guarded.ruled["a"], guarded.ruled["b"])}
    assert kept | ruled == before and not kept & ruled
    assert set(guarded.ruled["guard"]) <= set(G.GUARDS)
    s = guarded.summary["guards"]
    assert s["target_passes_before_guards"] == len(before) and sum(s["target"].values()) == len(ruled)
    assert s["placebo_passes_before_guards"] == plain.summary["placebo_passes"]
    assert [b - sum(c.values()) for b, c in zip(s["placebo_passes_before_guards"], s["placebo"])] == \
        guarded.summary["placebo_passes"]
    assert plain.summary["guards"] is None and (plain.placebo["guard"] == "").all()
    # the planted marker lives in two records of 80: 2.5% but not 20 records, so not boilerplate
    assert guards.record_count[PLANTED_MARKER] == 2 and guards.marker_reason(PLANTED_MARKER) is None
