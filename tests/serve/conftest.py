"""Serve fixtures: the full FOLDOC index built once per session in tmp, and a hand-made index with a fake dense store."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from sidelight.corpus import Corpus, Edge, Record
from sidelight.index import Index


@pytest.fixture(scope="session")
def foldoc_dir(tmp_path_factory):
    """A saved FOLDOC index (≈12k records, 42k edges); every test that writes state gets its own copy."""
    from sidelight.corpus.foldoc import load_foldoc

    path = tmp_path_factory.mktemp("serve") / "foldoc"
    Index.build(load_foldoc(), progress=False).save(path)
    return path


@pytest.fixture(scope="session")
def foldoc_index(foldoc_dir):
    return Index.load(foldoc_dir)


class FakeDense:
    """Stands in for `DenseStore`: deterministic vectors, an optional delay per query."""

    def __init__(self, n: int, dim: int = 8, delay_s: float = 0.0):
        rng = np.random.default_rng(0)
        v = rng.normal(size=(n, dim))
        self.vectors = v / np.linalg.norm(v, axis=1, keepdims=True)
        self.identity = {"name": "fake-dense", "dim": dim}
        self.spec = "fake"
        self.delay_s = delay_s

    def encode_query(self, query: str) -> np.ndarray:
        q = np.random.default_rng(abs(hash(query)) % 2**32).normal(size=self.vectors.shape[1])
        return q / np.linalg.norm(q)

    def scores(self, query: str) -> np.ndarray:
        import time

        time.sleep(self.delay_s)
        return self.vectors @ self.encode_query(query)

    def top(self, query: str, k, id_rank):
        from sidelight.structures.ranking import top_k

        return top_k(self.scores(query), k, id_rank, positive_only=False)


def hand_index(delay_s: float = 0.0) -> Index:
    recs = [Record("a", "Alpha engine", "alpha engine turbine"), Record("b", "Beta gear", "gear wheel alpha"),
            Record("c", "Gamma shaft", "shaft rod"), Record("d", "Delta bolt", "bolt screw"),
            Record("e", "Epsilon nut", "nut fastener"), Record("f", "Zeta sink", "sink drain")]
    edges = [Edge("a", "b"), Edge("a", "c", "part", 3.0), Edge("c", "d"), Edge("d", "a"), Edge("e", "a"),
             Edge("b", "f")]
    index = Index.build(Corpus("hand", recs, edges), progress=False)
    index.dense = FakeDense(len(recs), delay_s=delay_s)
    return index


@pytest.fixture
def gated_loader():
    """A dense loader that blocks until the test releases it (the model 'loads' on demand)."""
    gate = threading.Event()

    def load():
        if not gate.wait(30):
            raise TimeoutError("dense loader never released")

    load.gate = gate
    return load


@pytest.fixture(scope="module")
def foldoc_copy(foldoc_dir, tmp_path_factory):
    """A private copy of the FOLDOC index folder for one test module (its own state.sqlite)."""
    import shutil

    dst = tmp_path_factory.mktemp("foldoc-copy") / "foldoc"
    shutil.copytree(foldoc_dir, dst)
    return dst


def api_client(app, **kwargs):
    """A TestClient that sends the app's page token on every request (as the served page does on its POSTs)."""
    from starlette.testclient import TestClient

    from sidelight.serve.app import PAGE_TOKEN_HEADER

    headers = {PAGE_TOKEN_HEADER: app.state.page_token, **kwargs.pop("headers", {})}
    return TestClient(app, headers=headers, **kwargs)
