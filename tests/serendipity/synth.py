"""Synthetic chunk codes with one planted cross-topic connection (no SAE, no encoder)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

N_TOPICS, PER_TOPIC, CHUNKS, TOPIC_MARKERS, GENERAL = 8, 10, 4, 12, 40
PLANTED = (3, 57)
PLANTED_MARKER = 199
WIDTH = 200


def planted_corpus(seed: int = 0):
    """(chunk_record, n_records, codes, record_vectors, words) with records 3 and 57 sharing marker 199."""
    rng = np.random.default_rng(seed)
    n_rec = N_TOPICS * PER_TOPIC
    chunk_record = np.repeat(np.arange(n_rec), CHUNKS)
    rows, cols, vals = [], [], []
    gen0 = N_TOPICS * TOPIC_MARKERS
    for c, r in enumerate(chunk_record):
        t = r // PER_TOPIC
        act = list(rng.choice(TOPIC_MARKERS, 2, replace=False) + t * TOPIC_MARKERS)
        act += list(rng.choice(GENERAL, 4, replace=False) + gen0)
        if r in PLANTED and c % CHUNKS < 3:
            act[-1] = PLANTED_MARKER
        rows += [c] * len(act)
        cols += act
        vals += list(rng.uniform(0.5, 1.5, len(act)))
    codes = sp.csr_matrix((vals, (rows, cols)), shape=(len(chunk_record), WIDTH), dtype=np.float32)
    centres = rng.standard_normal((N_TOPICS, 16))
    vec = centres[np.arange(n_rec) // PER_TOPIC] + 0.8 * rng.standard_normal((n_rec, 16))
    vec /= np.linalg.norm(vec, axis=1, keepdims=True)
    words = [[f"w{r}_{i}" for i in range(40)] for r in range(n_rec)]
    return chunk_record, n_rec, codes, vec.astype(np.float32), words
