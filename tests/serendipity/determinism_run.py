"""One certify run on a small corpus in a fresh process, printed as digests (used by test_determinism).

`python -m tests.serendipity.determinism_run FOLDER` builds a 120-record index under FOLDER (a
hashing embedder: no model), certifies it from scratch (chunks, SAE, codes, labels, certificate)
and prints one JSON line: the sha256 of the SAE weights, the codes, the labels and the certified
pairs, the verdict and the pass counts. Two processes (other hash seeds, other BLAS thread counts)
must print the same line.
"""

from __future__ import annotations

import hashlib
import json
import sys
import zlib
from pathlib import Path

import numpy as np

DIM = 64
WORDS = ("river stone cloud field light shadow glass metal paper water fire earth wind salt iron "
         "copper silver garden forest desert ocean island valley mountain bridge tower castle market").split()


class HashEmbedder:
    """Deterministic bag-of-hashed-words vectors (the pipeline around it is what is tested)."""

    tokenizer = None
    dim = DIM
    identity = {"name": "hash-embedder", "dim": DIM}

    def encode(self, texts, batch_size=32, kind="doc", progress=False):
        out = np.full((len(texts), DIM), 1e-3, np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().replace(".", " ").split():
                out[i, zlib.crc32(w.encode()) % DIM] += 1.0
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def records():
    from sidelight.corpus import Record

    rng = np.random.default_rng(7)
    out = []
    for r in range(120):
        topic = r % 6
        sents = []
        for j in range(5):
            words = [WORDS[(topic * 4 + int(x)) % len(WORDS)] for x in rng.integers(0, 9, 6)]
            if r % 20 in (0, 7) and j < 3:  # a planted link: records r and r + 7 (other topics) share rare words
                words = [f"planted{r // 20}"] * 8
            sents.append(f"Sentence {j} of record {r} " + " ".join(words) + ".")
        out.append(Record(f"d{r:03d}", f"Doc {r}", " ".join(sents)))
    return out


def digest(folder: Path) -> dict:
    from sidelight.corpus import Corpus
    from sidelight.index import Index
    from sidelight.serendipity.certify import CertConfig
    from sidelight.serendipity.sae import SAEConfig
    from sidelight.serendipity.store import Serendipity, SerendipityConfig

    Serendipity.embedder = lambda self: HashEmbedder()  # noqa: ARG005 (a fresh process: nothing to restore)
    path = folder / "idx"
    if not path.exists():
        Index.build(Corpus("small", records()), progress=False).save(path)
    index = Index.load(path)
    cfg = SerendipityConfig(budget=16, sae=SAEConfig(width=128, k=4, epochs=8, batch_size=64),
                            cert=CertConfig(kinship_bins=1, placebo_draws=2, calibration_draws=4, fdr=0.3))
    ser = Serendipity(index, cfg).ensure(rebuild=True)
    sha = lambda b: hashlib.sha256(b).hexdigest()  # noqa: E731
    sae = ser.sae
    pairs = ser.certificate.pairs
    return {"sae": sha(b"".join(np.ascontiguousarray(a).tobytes() for a in (sae.W_enc, sae.b_enc, sae.W_dec, sae.b_dec))),
            "codes": sha(ser.codes.indices.tobytes() + ser.codes.indptr.tobytes() + ser.codes.data.tobytes()),
            "labels": sha(json.dumps(ser.labels, sort_keys=True).encode()),
            "pairs": sha(b"".join(np.ascontiguousarray(pairs[k]).tobytes() for k in sorted(pairs))),
            "verdict": ser.certificate.summary["verdict"],
            "target_passes": ser.certificate.summary["target_passes"],
            "candidates": ser.certificate.summary["candidates"],
            "placebo_passes": ser.certificate.summary["placebo_passes"],
            "guards": ser.certificate.summary["guards"],
            "ruled": sha(b"".join(np.ascontiguousarray(v).tobytes() for _, v in sorted((ser.certificate.ruled or {}).items()))),
            "sae_sha256": ser.meta["sae"].get("sae_sha256")}


if __name__ == "__main__":
    print(json.dumps(digest(Path(sys.argv[1])), sort_keys=True))
