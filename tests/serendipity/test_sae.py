import numpy as np
import pytest

from sidelight.errors import InputError
from sidelight.serendipity.sae import SAEConfig, top_k_codes, train_sae


def planted_dictionary(n=1500, d=32, atoms=96, active=3, seed=0):
    """(data, dictionary): each row a positive mix of `active` of `atoms` unit directions."""
    rng = np.random.default_rng(seed)
    D = rng.standard_normal((atoms, d))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    codes = np.zeros((n, atoms))
    for i in range(n):
        codes[i, rng.choice(atoms, active, replace=False)] = rng.uniform(0.5, 1.5, active)
    return (codes @ D).astype(np.float32), D


CFG = SAEConfig(width=192, k=3, epochs=60, batch_size=64, lr=2e-3, seed=5)


@pytest.fixture(scope="module")
def planted():
    return planted_dictionary()


@pytest.fixture(scope="module")
def data(planted):
    return planted[0]


@pytest.fixture(scope="module")
def sae(data):
    return train_sae(data, CFG)


def test_recovers_the_planted_dictionary(planted, sae):
    """Every planted direction has a decoder row (a marker) pointing along it: the markers are the atoms."""
    _, D = planted
    best = (D @ sae.W_dec.T).max(axis=1)
    assert (best >= 0.95).mean() >= 0.95, np.sort(best)[:5]


def test_deterministic_for_a_seed(data, sae):
    again = train_sae(data, CFG)
    assert np.array_equal(sae.W_dec, again.W_dec) and np.array_equal(sae.W_enc, again.W_enc)
    other = train_sae(data, SAEConfig(**{**CFG.__dict__, "seed": 6, "epochs": 1}))
    assert not np.array_equal(sae.W_dec[:, :4], other.W_dec[:, :4])


def test_fve_and_report(data, sae):
    s = sae.stats
    assert s["fve"] > 0.85, s["fve"]
    assert abs(s["fve"] - sae.fve(data)) < 1e-9
    assert 0 <= s["dead"] < CFG.width and s["train_seconds"] >= 0
    assert np.allclose(np.linalg.norm(sae.W_dec, axis=1), 1.0, atol=1e-4)  # unit decoder rows


def test_codes_are_topk(data, sae):
    codes = sae.encode(data[:50])
    assert codes.shape == (50, CFG.width)
    assert (np.diff(codes.indptr) <= CFG.k).all() and (codes.data > 0).all()
    coarse = top_k_codes(codes, 2)
    assert (np.diff(coarse.indptr) <= 2).all()
    for r in range(5):  # the coarse row keeps the two largest activations
        row = codes[r].toarray().ravel()
        keep = coarse[r].toarray().ravel()
        assert set(np.flatnonzero(keep)) <= set(np.argsort(-row)[:2])


def test_bad_config():
    with pytest.raises(InputError):
        SAEConfig(width=4, k=8)
