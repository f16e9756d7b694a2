"""The numba kernels (fused BM25 top-k, accumulation, dense top-k, the build's counting) against the
numpy path and an independent reference: bit-identical scores, identical rankings and ties, the same
refusals, the same vocabulary and counts."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sidelight.errors import NonFiniteScoreError
from sidelight.structures import kernels, lexical
from sidelight.structures.lexical import LexicalIndex
from sidelight.structures.lexical_store import pruning_bounds
from sidelight.structures.ranking import top_k

KS = [1, 10, 100, None]
needs_numba = pytest.mark.skipif(kernels.BACKEND != "numba", reason=kernels.REASON or "numba path off")


@pytest.fixture(params=["numba", "numpy"])
def backend(request, monkeypatch):
    """Run a test on each path; "numpy" forces the fallback even when numba is installed."""
    if request.param == "numba" and not kernels.enabled():
        pytest.skip(kernels.REASON or "numba kernels unavailable")
    monkeypatch.setattr(kernels, "BACKEND", request.param)
    return request.param


def _on(backend_name, fn):
    old = kernels.BACKEND
    kernels.BACKEND = backend_name
    try:
        return fn()
    finally:
        kernels.BACKEND = old


def _reference_scores(lex: LexicalIndex, query: str) -> np.ndarray:
    """Column by column in query order from 0.0: the float additions every path must reproduce."""
    w = lex.bm25
    s = np.zeros(lex.n_docs)
    for t in lex.query_terms(query).tolist():
        lo, hi = w.indptr[t], w.indptr[t + 1]
        s[w.indices[lo:hi]] += w.data[lo:hi]
    return s


def _reference_top(scores: np.ndarray, k, id_rank) -> list[int]:
    idx = [i for i in range(len(scores)) if scores[i] > 0]
    idx.sort(key=lambda i: (-scores[i], id_rank[i], i))
    return idx if k is None else idx[:k]


def _check(lex: LexicalIndex, queries, id_rank) -> None:
    for q in queries:
        ref = _reference_scores(lex, q)
        scores = lex.bm25_scores(q)
        assert scores.dtype == np.float64 and np.array_equal(scores, ref)
        for k in KS:
            got = lex.bm25_top(q, k, id_rank)
            want = _reference_top(ref, k, id_rank)
            assert got.positions.tolist() == want
            assert got.positions.dtype == np.int64 and got.scores.dtype == np.float64
            assert np.array_equal(got.scores, ref[want])
            dense = top_k(scores, k, id_rank)
            assert dense.positions.tolist() == want and np.array_equal(dense.scores, ref[want])


def _tied_corpus(seed: int, n: int, vocab: int):
    """Few distinct words and many duplicated documents: heavy score ties."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(vocab)]
    base = [" ".join(rng.choice(words, size=rng.integers(1, 6))) for _ in range(max(n // 4, 1))]
    texts = [base[i] for i in rng.integers(0, len(base), size=n)]
    queries = [" ".join(rng.choice(words, size=rng.integers(1, 5))) for _ in range(25)]
    return texts, queries, rng.permutation(n)


def test_backend_is_visible():
    assert kernels.BACKEND in ("numba", "numpy")
    try:
        import numba  # noqa: F401
    except ImportError:
        assert kernels.BACKEND == "numpy"


def test_environment_switch_forces_numpy():
    env = {**os.environ, "SIDELIGHT_KERNELS": "numpy"}
    out = subprocess.run([sys.executable, "-c", "from sidelight.structures import kernels as k; "
                          "print(k.BACKEND, k.enabled())"], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["numpy", "False"]


def test_a_one_off_process_takes_the_reference_path_until_it_has_asked_enough():
    code = ("from sidelight.structures import kernels as k; first = [k.use() for _ in range(k.WARM_AFTER)]; "
            "print(any(first), k._K is None, k.use(), k.BACKEND)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    compiled = str(kernels.BACKEND == "numba")
    assert out == ["False", "True", compiled, kernels.BACKEND]


def test_scifact_paths_agree(backend, scifact_index, scifact_test):
    queries = list(scifact_test[0].values())[:40]
    _check(scifact_index.lexical, queries, scifact_index.id_rank)


@needs_numba
def test_scifact_numba_equals_numpy_bit_for_bit(scifact_index, scifact_test):
    lex, id_rank = scifact_index.lexical, scifact_index.id_rank
    for q in list(scifact_test[0].values()):
        for k in KS:
            a = _on("numba", lambda: lex.bm25_top(q, k, id_rank))
            b = _on("numpy", lambda: lex.bm25_top(q, k, id_rank))
            assert a.positions.tolist() == b.positions.tolist() and np.array_equal(a.scores, b.scores)
    for q in list(scifact_test[0].values())[:30]:
        a = _on("numba", lambda: lex.tfidf_scores(q))
        b = _on("numpy", lambda: lex.tfidf_scores(q))
        assert np.array_equal(a, b)


@pytest.mark.parametrize("seed,n,vocab", [(0, 300, 8), (1, 2000, 40), (2, 5000, 3000), (3, 40, 3)])
def test_random_corpora_with_heavy_ties(backend, seed, n, vocab):
    texts, queries, id_rank = _tied_corpus(seed, n, vocab)
    lex = LexicalIndex.build(texts)
    _check(lex, queries, id_rank)


@pytest.mark.parametrize("variant", ["lucene", "atire"])
def test_variants_and_zero_weights(backend, variant):
    # atire gives ln(N/df) = 0 to a term in every document: zero weights and sums that stay 0.0
    texts = ["common a", "common b", "common a b", "common", "common c"] * 40
    lex = LexicalIndex.build(texts, params=lexical.BM25Params(variant=variant))
    _check(lex, ["common", "common a", "a common b", "c", "zzz common"], np.arange(len(texts))[::-1].copy())


def _large_corpus(seed: int, every: str = ""):
    """Zipf words over more than _PRUNE_MIN_DOCS records (both paths prune), optionally one word in all."""
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(2000)]
    p = 1.0 / np.arange(1, len(words) + 1)
    p /= p.sum()
    n = lexical.PRUNE_MIN_DOCS + 500
    lengths = rng.integers(3, 30, size=n)
    draws = iter(rng.choice(len(words), size=int(lengths.sum()), p=p).tolist())
    texts = [" ".join([every] * bool(every) + [words[next(draws)] for _ in range(L)]) for L in lengths]
    texts[7] = texts[8]  # an exact tie
    queries = [" ".join([every] * bool(every) + list(rng.choice(words, size=rng.integers(1, 7), p=p)))
               for _ in range(15)]
    return texts, queries, rng.permutation(n)


def _check_large(lex, queries, id_rank):
    for q in queries:
        ref = _reference_scores(lex, q)
        for k in KS:
            want = _reference_top(ref, k, id_rank)
            for name in ("numpy", "numba") if kernels.enabled() else ("numpy",):
                got = _on(name, lambda: lex.bm25_top(q, k, id_rank))
                assert got.positions.tolist() == want, (name, q, k)
                assert np.array_equal(got.scores, ref[want])


def test_large_corpus_pruned_paths_agree(scifact_index):
    """From _PRUNE_MIN_DOCS records on, top-k prunes (MaxScore; numpy or compiled): still exact."""
    texts, queries, id_rank = _large_corpus(11)
    lex = LexicalIndex.build(texts)
    _check_large(lex, queries, id_rank)
    # alternate with a smaller index in the same thread: scratch buffers are shared and sliced
    small = scifact_index.lexical
    a = small.bm25_top("cell biology of the brain", 10, scifact_index.id_rank)
    b = _on("numpy", lambda: small.bm25_top("cell biology of the brain", 10, scifact_index.id_rank))
    assert a.positions.tolist() == b.positions.tolist() and np.array_equal(a.scores, b.scores)


def test_large_corpus_every_record_a_candidate():
    """A word in every record with a positive weight: all records are candidates, some read twice."""
    texts, _, id_rank = _large_corpus(13, every="all")
    lex = LexicalIndex.build(texts)
    assert lex.store.ub[lex.term_id["all"]] > 0.0
    _check_large(lex, ["all", "all w0", "w0 all", "w1 all w0"], id_rank)


def test_pruned_kernel_keeps_every_record_when_all_may_rank():
    """Hand-made: term B is in all 4 records and read first, A's records come again after all 4
    are kept (the candidate buffer holds exactly n); top-3 by hand: 0 and 3 (2.0), then 1 (1.5)."""
    if not kernels.enabled():
        pytest.skip("numba is not installed")
    indptr = np.array([0, 4, 6])  # term 0 = B in records 0-3, term 1 = A in records 1 and 2
    indices = np.array([0, 1, 2, 3, 1, 2], dtype=np.int32)
    data = np.array([2.0, 0.5, 0.5, 2.0, 1.0, 1.0])
    ub = np.array([2.0, 1.0])
    got = kernels.bm25_top_pruned(indptr, indices, data, np.array([1, 0]), 4, 3, np.arange(4), ub,
                                  np.full(2, -1), np.zeros((0, 4)), 1e-9)
    assert got.positions.tolist() == [0, 3, 1]
    assert got.scores.tolist() == [2.0, 2.0, 1.5]


def test_large_corpus_zero_weights_and_refusal():
    """atire: a word in every record weighs 0.0 (sums stay at 0.0); then a NaN weight is refused."""
    texts, queries, id_rank = _large_corpus(12, every="all")
    lex = LexicalIndex.build(texts, params=lexical.BM25Params(variant="atire"))
    assert lex.store.ub[lex.term_id["all"]] == 0.0
    _check_large(lex, queries + ["all", "all w0", "w0 all"], id_rank)
    t = lex.term_id["w3"]
    lex.bm25.data[lex.bm25.indptr[t] + 5] = np.nan
    lex.store.ub, lex.store.dense_row, lex.store.dense = pruning_bounds(lex.bm25, lex.n_docs)  # bounds follow
    for name in ("numpy", "numba") if kernels.enabled() else ("numpy",):
        with pytest.raises(NonFiniteScoreError):
            _on(name, lambda: top_k(lex.bm25_scores("w3 w1"), 10, id_rank))
    if kernels.enabled():  # the compiled pruned path refuses too (numpy's pruning does not look)
        with pytest.raises(NonFiniteScoreError):
            lex.bm25_top("w3 w1", 10, id_rank)


@pytest.mark.parametrize("k", [0, 1, 10, None])
def test_non_finite_scores_are_refused(backend, k):
    texts = ["alpha beta", "beta gamma", "gamma delta", "alpha"] * 10
    lex = LexicalIndex.build(texts)
    id_rank = np.arange(len(texts))
    t = lex.term_id["beta"]
    lex.bm25.data[lex.bm25.indptr[t] + 3] = np.nan
    with pytest.raises(NonFiniteScoreError, match="1 non-finite"):
        lex.bm25_top("beta alpha", k, id_rank)
    with pytest.raises(NonFiniteScoreError):
        top_k(lex.bm25_scores("alpha beta"), k, id_rank)
    assert len(lex.bm25_top("gamma", k, id_rank)) == (20 if k is None else min(20, k))  # other terms rank
    for bad in (np.inf, -np.inf):
        with pytest.raises(NonFiniteScoreError):
            top_k(np.array([1.0, bad, 0.5]), k, np.arange(3))


def test_scratch_buffers_stay_clean(backend):
    texts, queries, id_rank = _tied_corpus(5, 500, 30)
    lex = LexicalIndex.build(texts)
    for q in queries:
        lex.bm25_top(q, 5, id_rank)
    bufs = getattr(kernels._SCRATCH, "bufs", None)
    if bufs is not None:
        assert not bufs[0].any()  # the accumulator is all zero between queries


@needs_numba
def test_unwritable_cache_falls_back_to_no_cache():
    """When numba finds no writable cache location (cache=True raises), kernels compile per process."""
    code = """
import numba
real = numba.njit
def njit(*args, **kw):
    if kw.get("cache"):
        raise RuntimeError("cannot cache function: no locator available")
    return real(*args, **kw)
numba.njit = njit
import numpy as np
from sidelight.structures import kernels
from sidelight.structures.ranking import top_k
assert kernels.enabled(), kernels.REASON
r = top_k(np.array([0.5, 2.0, 1.0, 2.0]), 2, np.array([3, 2, 1, 0]))
print(kernels.BACKEND, r.positions.tolist())
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["numba", "[3,", "1]"]


# ---- the build's counting kernel ---------------------------------------------------------------------
def _counts(texts, config):
    vocab: dict[str, int] = {}
    m = lexical.count_matrix(texts, lexical.Tokenizer(config), vocab, None)
    return list(vocab), m.indptr.tolist(), m.indices.tolist(), m.data.tolist(), m.indices.dtype, m.data.dtype


@needs_numba
@pytest.mark.parametrize("config", [lexical.TokenizerConfig(),
                                    lexical.TokenizerConfig(min_length=2, stopwords="lucene-en-v1", stem="english")])
def test_compiled_counting_equals_the_reference_on_scifact_and_foldoc(scifact_corpus, config):
    from sidelight.corpus.foldoc import load_foldoc

    assert kernels.enabled()
    for corpus in (scifact_corpus, load_foldoc()):
        texts = [corpus.indexed_text(r) for r in corpus.records]
        reference = _on("numpy", lambda: _counts(texts, config))
        assert _on("numba", lambda: _counts(texts, config)) == reference
        assert _split_in_two(lambda: _counts(texts, config)) == reference  # chunks of 4,096 texts, two each


@needs_numba
@settings(max_examples=80, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("ab zA1\n\t.é\u212aİΣ-"), max_size=30), max_size=12))
def test_compiled_counting_equals_the_reference_on_any_text(texts):
    assert kernels.enabled()
    config = lexical.TokenizerConfig(min_length=2)
    reference = _on("numpy", lambda: _counts(texts, config))
    assert _on("numba", lambda: _counts(texts, config)) == reference
    assert _split_in_two(lambda: _counts(texts, config)) == reference


def _split_in_two(run):
    """`run` on the compiled path with every chunk of two or more texts split between two threads."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(kernels, "BUILD_THREADS", 2)
        mp.setattr(kernels, "SPLIT_MIN", 2)
        return _on("numba", run)


@needs_numba
def test_the_token_table_grows_past_its_first_size():
    texts = [" ".join(f"w{i}x{j}" for j in range(400)) for i in range(300)]  # 120,000 distinct tokens
    texts += [" ".join(f"Long{i}Token{j}" for j in range(100)) for i in range(300)]  # 30,000 past 8 bytes
    texts += ["a", "b", "c", "", "d"]  # one-byte records: a token per byte
    assert kernels.enabled()
    config = lexical.TokenizerConfig()
    reference = _on("numpy", lambda: _counts(texts, config))
    assert _on("numba", lambda: _counts(texts, config)) == reference
    assert _split_in_two(lambda: _counts(texts, config)) == reference  # the second half's own table grows too
