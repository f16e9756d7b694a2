"""Two or three models at once (issue 46): lookup scored by summed cosines, on development descriptions only.

Every sense of all of WordNet (`wordnet-all`) is scored by each model of `--dense` (frozen MiniLM, the
GCIDE-taught model, the gloss-adapted one, ...); a combination sums the chosen models' cosines, the
100 best senses become words as `lookup` ranks them (a word by its best sense) with the prior at its
default (`DEFAULT_PRIORS["dense"]`), and the intended word's rank is read. Development descriptions
only, as bench/lookup_views.py: all of describe-v1 and describe-v2's dev split; describe-v2's test
split is never read. Every non-empty subset of the models is a row.

    SIDELIGHT_CACHE=.cache .venv/bin/python bench/lookup_ensemble.py --dense minilm \
        .cache/models/wordnet-all-gcide .cache/models/wordnet-all-adapted-249 --json bench/results/lookup-ensemble.json
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import print_table, wordnet_index, write_json  # noqa: E402
from lookup_views import DEPTH, dev_questions, scores  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dense", nargs="+", required=True, metavar="MODEL_SPEC", help="two or more models")
    ap.add_argument("--json", type=Path, required=True)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    from sidelight.index.lookup import DEFAULT_PRIORS, word_ranking
    from sidelight.lab.densecache import dense_store
    from sidelight.structures.ranking import top_k

    index = wordnet_index()
    questions = dev_questions(index.corpus)
    texts = [t for _, t, _ in questions]
    cos = []  # per model: questions x records cosines
    for spec in args.dense:
        store, _ = dense_store(index.corpus, spec, threads=args.threads, progress=True)
        q = store.embedder().encode(texts, kind="query")
        cos.append(np.asarray(q, dtype=np.float32) @ np.asarray(store.vectors, dtype=np.float32).T)
    prior = DEFAULT_PRIORS["dense"]
    records = index.corpus.records
    rows, out = [], []
    for n in range(1, len(cos) + 1):
        for combo in itertools.combinations(range(len(cos)), n):
            summed = sum(cos[i] for i in combo)
            ranks = []
            for (_, _, target), s in zip(questions, summed):
                r = top_k(np.asarray(s, dtype=np.float64), DEPTH, index.id_rank, positive_only=False)
                rank = word_ranking(((records[p], float(v)) for p, v in zip(r.positions, r.scores)), DEPTH, target,
                                    prior)[1]
                ranks.append(rank if rank is not None and rank <= DEPTH else DEPTH + 1)
            s = scores(ranks)
            label = " + ".join(Path(args.dense[i]).name for i in combo)
            rows.append([label, s["n"], f"{s['mrr@10']:.3f}", f"{s['hit@1']:.1%}", f"{s['hit@10']:.1%}",
                         f"{s['hit@100']:.1%}", s["median_rank"]])
            out.append({"models": [args.dense[i] for i in combo], **s})
    print_table(["models (cosines summed)", "n", "MRR@10", "acc@1", "acc@10", "acc@100", "median rank"], rows)
    write_json(args.json, {"prior": prior, "depth": DEPTH, "combinations": out})
    return 0


if __name__ == "__main__":
    sys.exit(main())
