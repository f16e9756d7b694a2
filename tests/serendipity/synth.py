"""Synthetic chunk codes with planted cross-topic connections (no SAE, no encoder).

80 records in 8 topics, 4 chunks each; every chunk has 2 of its topic's 12 markers and 4 of 40
general markers. Each planted pair (records of two different topics) shares a marker of its own,
active in 3 of the 4 chunks on each side and nowhere else: a connection no kinship explains.
Everything else two records share is kinship (topic markers) or chance (general markers)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from sidelight.serendipity.certify import CertConfig

N_TOPICS, PER_TOPIC, CHUNKS, TOPIC_MARKERS, GENERAL = 8, 10, 4, 12, 40
PLANTED = (3, 57)
PLANTED_MARKER = 199
WIDTH = 200
# two kinship bins: the corpus has ~300 candidates, and a bin needs a handful of clean targets before
# (placebo + 1) / (draws x targets) can reach the calibration share
SYNTH_CERT = CertConfig(kinship_bins=2)
# (pair, marker): PLANTED first, then eleven more, every record in at most one pair
PLANTED_PAIRS = {PLANTED: PLANTED_MARKER, (0, 41): 198, (1, 62): 197, (5, 23): 196, (7, 74): 195, (11, 68): 194,
                 (13, 36): 193, (15, 49): 192, (17, 79): 191, (20, 65): 190, (25, 52): 189, (28, 71): 188}


def planted_corpus(seed: int = 0, planted: dict = PLANTED_PAIRS):
    """(chunk_record, n_records, codes, record_vectors, words) with the `planted` pairs sharing their markers."""
    rng = np.random.default_rng(seed)
    n_rec = N_TOPICS * PER_TOPIC
    chunk_record = np.repeat(np.arange(n_rec), CHUNKS)
    rows, cols, vals = [], [], []
    gen0 = N_TOPICS * TOPIC_MARKERS
    marker_of = {r: f for pair, f in planted.items() for r in pair}
    for c, r in enumerate(chunk_record):
        t = r // PER_TOPIC
        act = list(rng.choice(TOPIC_MARKERS, 2, replace=False) + t * TOPIC_MARKERS)
        act += list(rng.choice(GENERAL, 4, replace=False) + gen0)
        if r in marker_of and c % CHUNKS < 3:
            act[-1] = marker_of[r]
        rows += [c] * len(act)
        cols += act
        vals += list(rng.uniform(0.5, 1.5, len(act)))
    codes = sp.csr_matrix((vals, (rows, cols)), shape=(len(chunk_record), WIDTH), dtype=np.float32)
    centres = rng.standard_normal((N_TOPICS, 16))
    vec = centres[np.arange(n_rec) // PER_TOPIC] + 0.8 * rng.standard_normal((n_rec, 16))
    vec /= np.linalg.norm(vec, axis=1, keepdims=True)
    words = [[f"w{r}_{i}" for i in range(40)] for r in range(n_rec)]
    return chunk_record, n_rec, codes, vec.astype(np.float32), words
