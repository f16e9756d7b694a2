import numpy as np
import pytest
import scipy.sparse as sp

from sidelight.serendipity.certify import CertConfig, run_certificate

from tests.serendipity.synth import PLANTED, PLANTED_MARKER, planted_corpus

CFG = CertConfig(placebo_draws=5)


@pytest.fixture(scope="module")
def planted():
    return planted_corpus()


@pytest.fixture(scope="module")
def cert(planted):
    cr, n, codes, vec, words = planted
    return run_certificate(cr, n, codes, vec, None, lambda r: words[r], None, CFG)


def _pairs(cert):
    return {(int(a), int(b)): int(f) for a, b, f in zip(cert.pairs["a"], cert.pairs["b"], cert.pairs["marker"])}


def test_planted_connection_is_certified(cert):
    assert _pairs(cert).get(PLANTED) == PLANTED_MARKER
    s = cert.summary
    assert s["verdict"] == "pass" and s["placebo_mean"] < CFG.placebo_ratio * s["target_passes"]
    assert "0.2" in s["rule"] and s["graph"].startswith("not applied")
    i = list(_pairs(cert)).index(PLANTED)
    assert cert.pairs["count_a"][i] >= 2 and cert.pairs["count_b"][i] >= 2
    assert cert.pairs["chance"][i] >= CFG.min_chance


def test_shuffled_marker_placebo_is_not_certified(planted):
    """Scatter the planted marker's activations over random chunks: the pair must no longer pass."""
    cr, n, codes, vec, words = planted
    codes = codes.tolil(copy=True)
    rng = np.random.default_rng(1)
    rows = codes[:, PLANTED_MARKER].nonzero()[0]
    new_rows = rng.choice(codes.shape[0], len(rows), replace=False)
    for r, s in zip(rows, new_rows):
        v = codes[r, PLANTED_MARKER]
        codes[r, PLANTED_MARKER] = 0
        codes[s, PLANTED_MARKER] = v
    cert = run_certificate(cr, n, sp.csr_matrix(codes), vec, None, lambda r: words[r], None, CFG)
    assert PLANTED not in _pairs(cert)
    assert all(f != PLANTED_MARKER for f in _pairs(cert).values())


def test_kinship_bin_quantile_independent(planted, cert):
    """Recompute candidates, bins and the 0.99 quantiles with plain loops."""
    cr, n, codes, vec, words = planted
    dense = codes.toarray() > 0
    per = {}
    for r in range(n):
        per[r] = dense[cr == r].sum(axis=0)
    p = dense.mean(axis=0)
    from scipy.stats import binom

    best = {}
    for a in range(n):
        for b in range(a + 1, n):
            shared = np.flatnonzero((per[a] >= 2) & (per[b] >= 2))
            if len(shared):
                na, nb = (cr == a).sum(), (cr == b).sum()
                ev = [-(binom.logsf(per[a][f] - 1, na, p[f]) + binom.logsf(per[b][f] - 1, nb, p[f])) / np.log(10)
                      for f in shared]
                best[(a, b)] = max(ev)
    assert len(best) == cert.summary["candidates"]
    keys = list(best)
    kin = np.array([float(vec[a] @ vec[b]) for a, b in keys])
    ev = np.array([best[k] for k in keys])
    edges = np.quantile(kin, np.arange(1, 10) / 10)
    bins = np.array([sum(k >= e for e in edges) for k in kin])
    want = [np.quantile(ev[bins == k], 0.99) for k in range(10)]
    assert np.allclose(want, cert.summary["thresholds"], rtol=1e-6)
    for (a, b) in _pairs(cert):
        k = keys.index((a, b))
        assert best[(a, b)] > want[bins[k]]


def test_graph_and_span_rules(planted):
    cr, n, codes, vec, words = planted
    adj = sp.csr_matrix((np.ones(2), ([PLANTED[0], PLANTED[1]], [PLANTED[1], PLANTED[0]])), shape=(n, n))
    cert = run_certificate(cr, n, codes, vec, adj, lambda r: words[r], None, CFG)
    assert PLANTED not in _pairs(cert) and cert.summary["target_reasons"]["graph distance below minimum"] >= 1
    quoted = [list(w) for w in words]
    quoted[PLANTED[1]][:30] = quoted[PLANTED[0]][:30]  # a shared 30-token quotation
    cert = run_certificate(cr, n, codes, vec, None, lambda r: quoted[r], None, CFG)
    assert PLANTED not in _pairs(cert) and cert.summary["target_reasons"]["shared verbatim span"] >= 1


def test_signature_and_loo(planted):
    cr, n, codes, vec, words = planted
    from sidelight.serendipity.sae import top_k_codes

    res = {6: codes, 3: top_k_codes(codes, 3)}
    cert = run_certificate(cr, n, codes, vec, None, lambda r: words[r], res, CFG)
    i = list(_pairs(cert)).index(PLANTED)
    assert cert.pairs["signature"].shape[1] == 2 and cert.pairs["signature"][i][0] == 1
    assert cert.summary["resolutions"] == [6, 3]
    assert cert.pairs["loo"].shape == cert.pairs["signature"].shape
