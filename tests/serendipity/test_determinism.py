"""The certificate is a function of the index and the seeds: the same markers, labels, pairs and verdict
in every process, whatever its hash seed or BLAS thread count; the trained SAE is pinned by hash."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sidelight.errors import InputError

ROOT = Path(__file__).resolve().parents[2]


def _run(folder: Path, hash_seed: str, threads: str) -> dict:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads,
           "SIDELIGHT_CACHE": str(folder / "cache")}
    out = subprocess.run([sys.executable, "-m", "tests.serendipity.determinism_run", str(folder)], cwd=ROOT, env=env,
                         capture_output=True, text=True, check=True, timeout=600)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_two_fresh_certify_runs_give_the_same_markers_pairs_and_verdict(tmp_path):
    a = _run(tmp_path / "a", "1", "1")
    b = _run(tmp_path / "b", "2", "2")
    # the small corpus has something to certify (the whale guards may rule it all out: their verdicts and
    # the pairs they ruled out are part of the digest)
    assert a["guards"]["target_passes_before_guards"] > 0 and a["candidates"] > 0
    assert a == b
    again = _run(tmp_path / "a", "3", "2")  # the same index folder, certified again from scratch (--rebuild)
    assert again == a


def test_marker_vocabulary_does_not_follow_the_hash_seed():
    """Label ties break by term id; the ids came from iterating a set of strings (the hash seed's order)."""
    code = ("from sidelight.serendipity.markers import chunk_terms;"
            "print(chunk_terms(['alpha beta gamma delta epsilon', 'gamma zeta'])[1])")
    seen = {subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": s}).stdout for s in ("1", "2", "3", "4")}
    assert seen == {str(sorted(["alpha", "beta", "gamma", "delta", "epsilon", "zeta"])) + "\n"}


def test_the_trained_sae_is_pinned_by_hash(tmp_path, monkeypatch):
    monkeypatch.setenv("SIDELIGHT_CACHE", str(tmp_path / "cache"))
    from sidelight.corpus import Corpus
    from sidelight.index import Index
    from sidelight.serendipity.sae import SAE
    from sidelight.serendipity.store import Serendipity
    from tests.serendipity import determinism_run as d

    monkeypatch.setattr(Serendipity, "embedder", lambda self: d.HashEmbedder())
    Index.build(Corpus("small", d.records()), progress=False).save(tmp_path / "idx")
    index = Index.load(tmp_path / "idx")
    from sidelight.serendipity.certify import CertConfig
    from sidelight.serendipity.sae import SAEConfig
    from sidelight.serendipity.store import SerendipityConfig

    cfg = SerendipityConfig(budget=16, sae=SAEConfig(width=32, k=4, epochs=1, batch_size=64),
                            cert=CertConfig(kinship_bins=1, placebo_draws=1, calibration_draws=1))
    ser = Serendipity(index, cfg).ensure()
    folder = tmp_path / "idx" / "serendipity" / "sae"
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["sae_sha256"] == ser.sae.sha256() == ser.certificate.summary["sae"]["sha256"]
    z = dict(np.load(folder / "sae.npz"))
    z["b_enc"] = z["b_enc"] + np.float32(1e-3)  # one changed weight: other markers
    np.savez(folder / "sae.npz", **z)
    assert SAE.load(folder).sha256() != meta["sae_sha256"]
    with pytest.raises(InputError, match="does not match the sha256 its meta.json pins"):
        Serendipity(index, cfg).load()
