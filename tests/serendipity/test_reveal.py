"""End to end on a tiny index with a fake (hashing) embedder: stages, connections, reveal, verdicts."""

import hashlib
import json
import zlib

import numpy as np
import pytest

from sidelight.corpus import Corpus, Record
from sidelight.errors import InputError
from sidelight.index import Index
from sidelight.serendipity import verdicts as V
from sidelight.serendipity.certify import CertConfig, run_certificate
from sidelight.serendipity.db import SerDB
from sidelight.serendipity.markers import label_markers
from sidelight.serendipity.reveal import RevealRefused, connections, reveal
from sidelight.serendipity.sae import SAE, SAEConfig
from sidelight.serendipity.seating import MAX_DIAL, CertificateRefused
from sidelight.serendipity.store import Serendipity, SerendipityConfig

from tests.serendipity.synth import (N_TOPICS, PER_TOPIC, PLANTED_MARKER, PLANTED_PAIRS, SYNTH_CERT, WIDTH,
                                     planted_corpus)

DIM = 16


class FakeEmbedder:
    tokenizer = None
    dim = DIM
    identity = {"name": "fake-hash", "dim": DIM}

    def encode(self, texts, batch_size=32, kind="doc", progress=False):
        out = np.zeros((len(texts), DIM), np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().replace(".", " ").split():
                out[i, zlib.crc32(w.encode()) % DIM] += 1.0
        out += 1e-3
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def _records():
    return [Record(f"r{r:02d}", f"Record {r}", " ".join(
        f"Sentence {j} of record {r} about topic{r // PER_TOPIC} item{j}." for j in range(4)))
        for r in range(N_TOPICS * PER_TOPIC)]


@pytest.fixture
def index(tmp_path, monkeypatch):
    monkeypatch.setenv("SIDELIGHT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(Serendipity, "embedder", lambda self: FakeEmbedder())
    idx = Index.build(Corpus("tiny", _records()), progress=False)
    idx.save(tmp_path / "idx")
    return Index.load(tmp_path / "idx")


def plant(monkeypatch, planted=PLANTED_PAIRS) -> None:
    """Make SAE training yield the synthetic codes (with `planted` pairs) and the kinship vectors the
    synthetic ones, so `sidelight certify` runs the real certificate on a corpus whose answer is known."""
    from sidelight.serendipity import store

    cr, n, codes, vec, words = planted_corpus(planted=planted)
    W = np.random.default_rng(0).standard_normal((WIDTH, DIM)).astype(np.float32)

    class Planted(SAE):
        def encode(self, x, k=None, batch=2048):
            assert len(x) == len(cr)
            return codes

    def train(x, config, progress=False):
        stats = {"width": WIDTH, "k": 6, "fve": 1.0, "dead": 0, "train_seconds": 0.0}
        return Planted(W.T.copy(), np.zeros(WIDTH, np.float32), W, np.zeros(DIM, np.float32), 6, stats)

    monkeypatch.setattr(store, "train_sae", train)
    monkeypatch.setattr(Serendipity, "record_vectors", lambda self: (vec, "planted"))


def _planted_ser(index):
    """Chunks from the real pipeline (4 per record), codes and certificate from the planted synth."""
    ser = Serendipity(index, SerendipityConfig(budget=12))
    ch = ser.ensure_chunks()
    assert len(ch) == 4 * len(index.corpus) and ch.counter == "proxy"
    cr, n, codes, vec, words = planted_corpus()
    assert np.array_equal(cr, ch.record)
    rng = np.random.default_rng(0)
    W = rng.standard_normal((WIDTH, DIM)).astype(np.float32)
    ser.sae = SAE(W.T.copy(), np.zeros(WIDTH, np.float32), W, np.zeros(DIM, np.float32), 6)
    ser.codes = codes
    ser.labels = label_markers(codes, ch.texts(index.corpus.records), cr, n)
    ser.certificate = run_certificate(cr, n, codes, vec, None, lambda r: words[r], None, SYNTH_CERT)
    ser.meta["certificate"] = {"id": "planted"}
    return ser


def test_stages_build_and_reload(index):
    cfg = SerendipityConfig(budget=12, sae=SAEConfig(width=32, k=4, epochs=2, batch_size=64),
                            cert=CertConfig(placebo_draws=1))
    ser = Serendipity(index, cfg).ensure()
    root = index.path / "serendipity"
    assert {p.name for p in root.iterdir()} == {"chunks", "sae", "certificate"}
    assert (root / "sae" / "codes.npz").exists() and (root / "sae" / "sae.npz").exists()
    assert ser.certificate.summary["verdict"] in ("pass", "fail")
    again = Serendipity(index, cfg).load()
    assert again.codes.shape == ser.codes.shape and len(again.labels) == 32
    meta = json.loads((root / "certificate" / "meta.json").read_text())
    del meta["summary"]["null"]  # as written before the placebo corpora: refused, not used
    (root / "certificate" / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(InputError, match="predates its placebo corpora"):
        Serendipity(index, cfg).load()
    assert Index.load(index.path).corpus.ids == index.corpus.ids  # manifest hashes still verify


def test_connections_reveal_and_verdicts(index):
    ser = _planted_ser(index)
    db = SerDB.for_index(index)
    q = "topic0 item1 record 3"
    res = connections(ser, q, dial=12, session_id="s1", seed=5, db=db, min_floor_support=1, bearing=None)
    ids = [p["id"] for p in res["passages"]]
    assert len(ids) == len(set(ids)) and "seated" not in str(res["passages"])
    with pytest.raises(RevealRefused):
        reveal(db, res["trace_id"], None)
    with pytest.raises(RevealRefused):
        reveal(db, res["trace_id"], "abc")
    h = hashlib.sha256(b"my answer").hexdigest()
    shown = reveal(db, res["trace_id"], h)
    assert shown["panel"].startswith(f"seating: 12 seat(s) offered, {res['seating']['filled']} filled")
    assert {s["id"] for s in shown["seated"]} <= set(ids)
    print(shown["panel"])
    assert any(s["marker"] == PLANTED_MARKER and s["id"] == "r57" for s in shown["seated"])
    # one hit shape (issue 42): the blind mix and the seats are `Hit.to_dict`s; the mix ranks 1..n with one
    # score for all (so a seat cannot be told apart), a seat's evidence says how it was seated
    keys = ["id", "rank", "score", "title"]
    assert all(list(p)[:4] == keys and set(p) == {*keys, "text"} for p in res["passages"])
    assert [p["rank"] for p in res["passages"]] == list(range(1, len(ids) + 1))
    assert {p["score"] for p in res["passages"]} == {0.0}
    titles = {r.id: r.title for r in index.corpus.records}
    for rank, seat in enumerate(shown["seated"], 1):
        assert list(seat)[:4] == keys and (seat["rank"], seat["title"]) == (rank, titles[seat["id"]])
        assert {"position", "chunk", "marker", "label", "floor_end", "pair", "signature"} <= set(seat)
        assert index.corpus.ids[seat["position"]] == seat["id"] and seat["floor_end"] not in {seat["id"]}
    assert f"(f{PLANTED_MARKER})" in shown["panel"] and "r03  <->  r57" in shown["panel"]
    assert reveal(db, res["trace_id"], h)["answer_sha256"] == h
    with pytest.raises(RevealRefused):
        reveal(db, res["trace_id"], hashlib.sha256(b"edited").hexdigest())

    V.record_verdict(db, "r03", "r57", PLANTED_MARKER, "petunia", "author")
    V.record_verdict(db, "r00", "r04", 8, "whale", "author")
    cal = V.reserve_calibration(db, "planted", ser.certificate.pairs, index.corpus.ids, size=3, seed=1)
    assert cal == V.reserve_calibration(db, "planted", ser.certificate.pairs, index.corpus.ids, size=3, seed=2)
    p = V.precision(db, "planted")
    assert p["all"]["judged"] == 2 and p["all"]["useful"] == 1
    lo, hi = V.wilson(1, 2)
    assert p["all"]["wilson95"] == [round(lo, 4), round(hi, 4)] and 0 < lo < 0.5 < hi < 1
    assert abs(V.wilson(8, 10)[0] - 0.4902) < 1e-3 and abs(V.wilson(8, 10)[1] - 0.9433) < 1e-3
    V.rule_out(db, "author", marker=PLANTED_MARKER)
    res2 = connections(ser, q, dial=MAX_DIAL, session_id="s1", seed=5, db=db, min_floor_support=1, bearing=None)
    seated = reveal(db, res2["trace_id"], h)["seated"]
    assert all(s["marker"] != PLANTED_MARKER for s in seated)


def test_failed_certificate_refused(index):
    ser = _planted_ser(index)
    ser.certificate.summary["verdict"] = "fail"
    with pytest.raises(CertificateRefused, match="FAILED its placebo test"):
        connections(ser, "topic0", dial=2, db=SerDB.for_index(index))


def test_verdict_spellings_petunia_and_whale_from_the_seed_document():
    """"petunia" / "whale" (heart-of-gold-serendipity.txt) are accepted input; only useful / not useful is stored."""
    assert V.normalise(" Petunia ") == V.normalise("yes") == V.USEFUL == "useful"
    assert V.normalise("WHALE") == V.normalise("not-useful") == V.NOT_USEFUL == "not useful"
    assert set(V.ALIASES.values()) == set(V.VERDICTS)
    with pytest.raises(InputError, match="'useful' or 'not useful'"):
        V.normalise("maybe")


def test_seats_bear_on_the_question(index):
    """With bearing=m a seat's marker is active in the query's code or in the passage (chunk nearest the
    query) of one of the first m floor entries; m=0 leaves the query's own markers; more m, more eligible."""
    from sidelight.serendipity.reveal import best_chunk, get_floor, positions_of

    ser = _planted_ser(index)
    q = "topic0 item1 record 3"
    floor = get_floor(index, q)
    positions = positions_of(index, floor)
    qvec = ser.embedder().encode([q], kind="query")[0]
    qm = ser.query_markers(q, qvec)
    first = ser.codes[best_chunk(ser, positions[0], qvec)]
    allowed = qm | {int(f) for f in first.indices[first.data > 0]}
    filled = []
    for m in (0, 1, len(positions)):
        db = SerDB(index.path / f"bearing-{m}.sqlite")
        res = connections(ser, q, dial=MAX_DIAL, session_id="b", seed=5, db=db, bearing=m)
        seated = reveal(db, res["trace_id"], "0" * 64)["seated"]
        filled.append(len(seated))
        if m == 0:
            assert all(s["marker"] in qm for s in seated)
        if m == 1:
            assert all(s["marker"] in allowed for s in seated)
    assert filled[0] <= filled[1] <= filled[2] and filled[2] > 0
