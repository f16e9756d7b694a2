"""Why the certificate's placebo is not random pairs: a random-pair placebo measures candidate density.

A random-pair placebo draws, in each kinship bin k, as many random population pairs as there are
candidates (N_k), and such a pair passes only if it is itself a passing candidate (same markers, same
rules). Its expected passes per draw are

    sum over bins k of  N_k * pass_k / All_k

(pass_k passing candidates, All_k population pairs with kinship in bin k), whatever the evidence
threshold: its ratio to the target passes is the candidates' share of all pairs, bin by bin. This
script reads a certificate already built in an index folder (`sidelight certify INDEX`), counts All_k
over every population pair, and prints that density and the ratio a random-pair placebo would give
for this certificate's passes. (The certificate's own placebo rebuilds each record from its kinship
neighbours' chunks instead; see `sidelight/serendipity/placebo.py`.)

    .venv/bin/python bench/certify_null.py .cache/indexes/scifact-serendipity --json bench/results/certify-null-scifact.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import print_table, write_json  # noqa: E402
from sidelight.index import Index  # noqa: E402
from sidelight.serendipity.certify import bin_of  # noqa: E402
from sidelight.serendipity.store import Serendipity  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("index", type=Path)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    s = Serendipity(Index.load(args.index)).load()
    cert = s.certificate
    vec, _ = s.record_vectors()
    n_chunks = np.bincount(s.chunks.record, minlength=len(s.index.corpus))
    V = vec[np.flatnonzero(n_chunks >= cert.config["min_chunks"])]
    n_bins = len(cert.edges) + 1
    all_k = np.zeros(n_bins)
    for i in range(0, len(V), 1024):
        K = V[i:i + 1024] @ V.T
        later = np.arange(len(V))[None, :] > np.arange(i, i + len(K))[:, None]  # each unordered pair once
        all_k += np.bincount(bin_of(K[later], cert.edges), minlength=n_bins)
    sm = cert.summary
    n_k = np.full(n_bins, sm["candidates"] / n_bins)  # the bins are equal-count quantiles of candidate kinship
    pass_k = np.bincount(cert.pairs["kinship_bin"], minlength=n_bins)
    predicted = float((n_k * pass_k / np.maximum(all_k, 1)).sum())
    rows = [[k, f"{cert.edges[k - 1]:.3f}" if k else "-inf", int(all_k[k]), f"{n_k[k] / max(all_k[k], 1):.4f}",
             int(pass_k[k])] for k in range(n_bins)]
    print_table(["bin", "kinship from", "population pairs", "candidates / pairs", "passes"], rows)
    print(f"target passes {sm['target_passes']}; a random-pair placebo would pass {predicted:.1f} per draw "
          f"({predicted / max(sm['target_passes'], 1):.3f} x target), by candidate density alone")
    if args.json:
        write_json(args.json, {"index": str(args.index), "target_passes": sm["target_passes"],
                               "random_pair_placebo_expected": predicted,
                               "candidates": sm["candidates"], "population_pairs_by_bin": all_k.tolist(),
                               "passes_by_bin": pass_k.tolist()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
