"""The seat-bearing cut (`sidelight.serendipity.reveal.BEARING`), chosen on SciFact's dev queries.

A seat's marker must be active in the question or in the floor passages of the first m floor
entries ("the floor entries that answer it best"). m is chosen as the largest m whose floor
precision@m on dev (share of the first m floor entries the qrels call relevant, mean over queries)
is at least one half: those entries answer the question more often than not, so a marker taken
from them bears on the question. The dev queries are the 209 train-split queries that
`sidelight.lab.fit_learned.split_train` leaves out of fitting (as `bench/dense.py`); no test query
and not the demo question is used. The table also shows, per m, the mean number of eligible
markers per query (seats the dial could fill) with the certificate on disk.

    .venv/bin/python bench/seat_bearing.py --json bench/results/seat_bearing.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import print_table, write_json  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", type=Path)
    p.add_argument("--max-m", type=int, default=10)
    p.add_argument("--queries", type=int, default=0, help="first N dev queries only (0: all)")
    args = p.parse_args()
    import numpy as np

    from sidelight.config import dataset_path
    from sidelight.corpus.beir import beir_split, load_beir_corpus, load_qrels
    from sidelight.demo import cached_index
    from sidelight.lab.fit_learned import split_train
    from sidelight.serendipity.reveal import best_chunk, get_floor, positions_of
    from sidelight.serendipity.store import Serendipity

    folder = dataset_path("scifact")
    index = cached_index(load_beir_corpus(folder), "minilm", dense="minilm")
    from sidelight.errors import InputError
    try:
        ser = Serendipity(index).load()
    except InputError as exc:  # precision@m needs only the floor; the eligible-marker column needs the certificate
        print(f"no certificate ({exc}); eligible markers not counted", file=sys.stderr)
        ser = None
    train, qrels = beir_split(folder, "train")
    _, dev = split_train(load_qrels(folder / "qrels" / "train.tsv"))
    dev = [q for q in dev if q in train][: args.queries or None]
    pairs = ser.certificate.pairs if ser else {k: np.zeros(0, np.int64) for k in ("a", "b", "marker")}
    ends = np.concatenate([pairs["a"], pairs["b"]])
    other = np.concatenate([pairs["b"], pairs["a"]])
    mk = np.concatenate([pairs["marker"], pairs["marker"]])
    ids = index.corpus.ids
    prec = np.zeros((len(dev), args.max_m))
    eligible = np.zeros((len(dev), args.max_m + 1))
    for qi, q in enumerate(dev):
        floor = positions_of(index, get_floor(index, train[q]))
        rel = [1.0 if qrels[q].get(ids[p], 0) > 0 else 0.0 for p in floor]
        prec[qi] = [np.mean(rel[:m]) for m in range(1, args.max_m + 1)]
        if ser is None:
            continue
        qvec = ser.embedder().encode([train[q]], kind="query")[0]
        prof = set(ser.query_markers(train[q], qvec))
        on = np.isin(ends, floor) & ~np.isin(other, floor)
        for m in range(args.max_m + 1):
            if m:
                c = best_chunk(ser, floor[m - 1], qvec)
                row = ser.codes[c]
                prof |= {int(f) for f in row.indices[row.data > 0]}
            eligible[qi, m] = len(set(mk[on & np.isin(mk, list(prof))].tolist())) if prof else 0
    mean_p = prec.mean(axis=0)
    chosen = max([m for m in range(1, args.max_m + 1) if mean_p[m - 1] >= 0.5], default=0)
    rows = [[m, round(float(mean_p[m - 1]), 3) if m else "-", round(float(eligible[:, m].mean()), 2),
             round(float((eligible[:, m] > 0).mean()), 3)] for m in range(args.max_m + 1)]
    print_table(["m", "floor precision@m (dev)", "eligible markers / query", "queries with >= 1"], rows)
    print(f"chosen m = {chosen} (largest m with dev precision@m >= 0.5; {len(dev)} dev queries)")
    if args.json:
        write_json(args.json, {"dev_queries": len(dev), "rule": "largest m with mean floor precision@m >= 0.5",
                               "chosen": chosen, "rows": rows, "certificate": ser.meta["certificate"]["id"] if ser else None})
    return 0


if __name__ == "__main__":
    sys.exit(main())
