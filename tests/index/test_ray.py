"""Sharded indexes on Ray: a cluster of a head and two worker nodes in this machine.

The oracle is the unsharded index (and, for the Ray build, the same build in this process):
the Ray fan-out must give the same ids, ranks and scores (1e-9) on every SciFact test query for
bm25, dense, rrf and bm25+ppr with 1, 3 and 4 shards, the same relation lane on FOLDOC, and
report a shard whose actor died as missing coverage until Ray has restarted it.

The document vectors are seeded random unit vectors under MiniLM's identity (queries are encoded
by the real model): exactness depends on the arithmetic, not on where the vectors came from, and
encoding SciFact here would take minutes.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # the test cluster talks over loopback only
ray = pytest.importorskip("ray", reason="the Ray extra is not installed: pip install 'sidelight[ray]'")

from ray.cluster_utils import Cluster  # noqa: E402

from sidelight.corpus import Corpus  # noqa: E402
from sidelight.index import Index, store  # noqa: E402
from sidelight.index.ray_shards import ray_builders, ray_encode, serve_on_ray  # noqa: E402
from sidelight.index.sharded import ShardedIndex  # noqa: E402
from sidelight.structures.dense import DenseStore  # noqa: E402

from tests.index.test_sharded import assert_same, foldoc_pair, foldoc_test_queries  # noqa: E402,F401  (fixture)


@pytest.fixture(scope="module")
def cluster():
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    for _ in range(2):
        c.add_node(num_cpus=1)
    ray.init(address=c.address, log_to_driver=False)
    yield c
    ray.shutdown()
    c.shutdown()


@pytest.fixture(scope="module")
def scifact_dense(scifact_index, scifact_test):
    """The unsharded index with vectors, and the 300 test queries encoded once by MiniLM."""
    from sidelight.models.embedder import Embedder

    emb = Embedder.from_spec("minilm", threads=2)
    v = np.random.default_rng(7).standard_normal((len(scifact_index.corpus), emb.identity["dim"])).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    texts = list(scifact_test[0].values())
    encoded = dict(zip(texts, emb.encode(texts, kind="query")))
    vectors = DenseStore(v, emb.identity, "minilm", 0, 2, emb)
    one = Index(scifact_index.corpus, scifact_index.lexical, dense=vectors)
    one.dense.encode_query = encoded.__getitem__
    return one, vectors, encoded


@pytest.mark.parametrize("n_shards", [1, 3, 4])
def test_scifact_on_ray_equals_one_index(n_shards, cluster, scifact_dense, scifact_test, tmp_path):
    one, vectors, encoded = scifact_dense
    queries = scifact_test[0]
    sharded = ShardedIndex.write_sharded(one.corpus, tmp_path / "idx", n_shards, dense=vectors, progress=False)
    sharded.dense.encode_query = encoded.__getitem__  # the same query vectors as the unsharded index
    shards = serve_on_ray(sharded, budget=600.0)  # generous: a loaded machine must not cut a shard
    try:
        nodes = {ray.get(a.__ray_call__.remote(lambda self: ray.get_runtime_context().get_node_id()))
                 for a in shards.actors}
        assert len(nodes) == min(n_shards, 3)  # spread over the nodes
        for method in ("bm25", "dense", "rrf", "bm25+ppr"):
            a, b = one.search_many(queries, 10, method), sharded.search_many(queries, 10, method)
            assert len(b) == 300
            for q in queries:
                assert_same(a[q], b[q])
                assert b[q].coverage == (n_shards, n_shards)
    finally:
        shards.close()


def test_foldoc_relation_lane_on_ray(cluster, foldoc_pair):
    one, sharded = foldoc_pair
    shards = serve_on_ray(sharded, budget=600.0)  # generous: a loaded machine must not cut a shard
    try:
        for q in foldoc_test_queries():
            a, b = one.search_channels(q, 10), sharded.search_channels(q, 10)
            assert [(h.id, h["path"]) for h in a.relation.hits] == [(h.id, h["path"]) for h in b.relation.hits], q
            assert b.coverage == (3, 3)
    finally:
        shards.close()


def test_a_dead_shard_is_missing_coverage_until_ray_restarts_it(cluster, scifact_index, tmp_path):
    sharded = ShardedIndex.write_sharded(scifact_index.corpus, tmp_path / "idx", 3, progress=False)
    shards = serve_on_ray(sharded, budget=5.0)
    try:
        q = "vitamin D deficiency and bone density"
        full = scifact_index.search(q, "bm25", k=20)
        every = scifact_index.search(q, "bm25", k=None).ids
        shards.actors[1].__ray_call__.remote(lambda self: os._exit(1))  # dies before the query reaches it
        part = sharded.search(q, "bm25", k=20)
        assert part.coverage == (2, 3) and part.partial
        lost = set(np.flatnonzero(sharded.assignment == 1).tolist())
        pos = scifact_index.corpus.position
        assert part.ids == [i for i in every if pos[i] not in lost][:20]  # the other shards' hits, in order
        deadline = time.monotonic() + 60
        while (again := sharded.search(q, "bm25", k=20)).partial and time.monotonic() < deadline:
            time.sleep(0.2)
        assert again.coverage == (3, 3)
        assert_same(full, again)
        shards.budget = 1e-6  # no shard can answer in a microsecond: reported, never hidden
        late = sharded.search(q, "bm25", k=20)
        assert late.partial and late.coverage[0] < 3
    finally:
        shards.close()


def test_build_on_ray_equals_the_build_in_process(cluster, scifact_corpus, tmp_path):
    corpus = Corpus("sf", list(scifact_corpus.records)[:600])
    local = ShardedIndex.write_sharded(corpus, tmp_path / "local", 3, progress=False)
    remote = ShardedIndex.write_sharded(corpus, tmp_path / "ray", 3, progress=False, builders=ray_builders)  # 3 tasks, 3 CPUs
    for s in range(3):
        a = store.read_manifest(store.data_folder(tmp_path / "local" / "shards" / str(s)))["files"]
        b = store.read_manifest(store.data_folder(tmp_path / "ray" / "shards" / str(s)))["files"]
        assert {k: v for k, v in a.items() if k.startswith("lexical/")} == \
               {k: v for k, v in b.items() if k.startswith("lexical/")}
    for q in ("cancer", "protein folding", corpus.records[3].title):
        assert_same(local.search(q, "bm25"), remote.search(q, "bm25"))
    texts = [corpus.indexed_text(r) for r in corpus.records[:48]]
    on_ray = ray_encode(texts, "minilm", workers=2, batch_size=16)
    here = DenseStore.build(texts, "minilm", 16, 1, progress=False)
    cos = np.sum(on_ray.vectors * here.vectors, axis=1)
    assert on_ray.identity == here.identity and cos.min() > 0.99999
