"""Where MaxScore's work goes: per-query posting counts of the pruned top-10 on 100k documents.

    python bench/pruning.py [--json OUT]

On `scifact-x20` (bench/lexical.py's 103,660 reshuffled SciFact documents, cached) with the 300
SciFact test queries, this replays `LexicalIndex._bm25_top_pruned`'s first two phases in numpy and
counts, per query: all postings of its terms (what exhaustive scoring reads, as bm25s does); the
postings of the essential terms (phase 1, accumulated); the candidates left for lookups (phase 2);
and the same two counts had the threshold been the true k-th score from the start (the least any
threshold estimate can leave). Means and medians over queries. Speed is not measured here
(bench/lexical.py does that); this says how much a better bound could still save.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import numpy as np  # noqa: E402
from _common import print_table, write_json  # noqa: E402
from lexical import K, load_corpus, make_copies, test_queries  # noqa: E402

from sidelight.corpus import Corpus, Record  # noqa: E402
from sidelight.index import Index  # noqa: E402
from sidelight.structures.lexical import _MARGIN  # noqa: E402


def phases(lex, terms: np.ndarray, theta_of) -> tuple[int, int]:
    """(postings accumulated in phase 1, candidates after phase 2) with `theta_of(acc, ix)` as the bound."""
    w, n = lex.bm25, lex.n_docs
    ub = lex._ub[terms]
    order = np.argsort(-ub, kind="stable")
    ranked = terms[order]
    rest = np.append(np.cumsum(ub[order][::-1])[::-1][1:], 0.0) * (1.0 + _MARGIN)
    acc, theta, last, read = np.zeros(n), 0.0, len(ranked) - 1, 0
    for j, t in enumerate(ranked):
        lo, hi = w.indptr[t], w.indptr[t + 1]
        ix = w.indices[lo:hi]
        acc[ix] += w.data[lo:hi]
        read += hi - lo
        theta = max(theta, theta_of(acc, ix, j < last and lex._dense_row[t] < 0))  # as the numpy path
        if rest[j] < theta * (1.0 - _MARGIN):
            last = j
            break
    lim = theta * (1.0 - _MARGIN) - rest[last]
    return read, int(np.count_nonzero(acc >= lim) if lim > 0 else np.count_nonzero(acc > 0))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", metavar="OUT")
    args = ap.parse_args(argv)
    make_copies("scifact-x20")
    ids, texts = load_corpus("scifact-x20")
    folder = Path(tempfile.mkdtemp(prefix="sidelight-pruning-")) / "idx"
    try:
        index = Index.write(Corpus("bench", [Record(i, "", t) for i, t in zip(ids, texts)]), folder, progress=False)
        lex = index.lexical
        rows = {"all postings": [], "phase 1 postings": [], "candidates": [],
                "phase 1 postings, true threshold": [], "candidates, true threshold": []}
        for q in test_queries():
            terms = lex.query_terms(q)
            kth = float(np.sort(lex.bm25_scores(q))[-K])

            def running(acc, ix, more):  # the k-th best partial sum among this term's records
                return float(np.partition(acc[ix], len(ix) - K)[len(ix) - K]) if more and len(ix) >= K else 0.0

            read, cand = phases(lex, terms, running)
            read_t, cand_t = phases(lex, terms, lambda acc, ix, more: kth)
            rows["all postings"].append(int(np.diff(lex.bm25.indptr)[terms].sum()))
            rows["phase 1 postings"].append(read)
            rows["candidates"].append(cand)
            rows["phase 1 postings, true threshold"].append(read_t)
            rows["candidates, true threshold"].append(cand_t)
    finally:
        shutil.rmtree(folder.parent, ignore_errors=True)
    out = {k: {"mean": float(np.mean(v)), "median": float(np.median(v))} for k, v in rows.items()}
    print(f"\nscifact-x20 ({len(ids):,} docs), 300 SciFact test queries, top-{K}: MaxScore's phases")
    print_table(["count per query", "mean", "median"],
                [[k, f"{v['mean']:,.0f}", f"{v['median']:,.0f}"] for k, v in out.items()])
    if args.json:
        write_json(args.json, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
