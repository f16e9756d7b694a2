"""Where MaxScore's work goes: per-query posting counts of the pruned top-10 on 100k documents.

    python bench/pruning.py [--json OUT]

On `scifact-x20` (bench/lexical.py's 103,660 reshuffled SciFact documents, cached) with the 300
SciFact test queries, this replays `LexicalIndex._bm25_top_pruned`'s first phases in numpy and
counts, per query: all postings of its terms (what exhaustive scoring reads, as bm25s does); the
postings of the essential terms (phase 1, accumulated); those added to touched records only
(phase 1b, "continue"); the candidates left for lookups (phase 2); and the same counts had the
threshold been the true k-th score from the start (the least any threshold estimate can leave).
Means and medians over queries. Speed is not measured here (bench/lexical.py does that); this
says how much a better bound could still save.
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
from sidelight.structures.kernels.pruned import CONTINUE  # noqa: E402
from sidelight.structures.lexical import _MARGIN  # noqa: E402


def phases(lex, terms: np.ndarray, true_kth: float | None = None) -> tuple[int, int, int]:
    """(postings accumulated in phase 1, postings added in phase 1b, candidates after phase 2), by
    `LexicalIndex._bm25_top_pruned`'s rules, or with the true k-th score as theta from the start."""
    w = lex.bm25
    ub = lex.store.ub[terms]
    order = np.argsort(-ub, kind="stable")
    ranked = terms[order]
    rest = np.append(np.cumsum(ub[order][::-1])[::-1][1:], 0.0) * (1.0 + _MARGIN)
    low = 1.0 - _MARGIN
    acc, theta, last, read, prefix = np.zeros(lex.n_docs), 0.0, len(ranked) - 1, 0, 0.0
    for j, t in enumerate(ranked):
        lo, hi = w.indptr[t], w.indptr[t + 1]
        ix = w.indices[lo:hi]
        acc[ix] += w.data[lo:hi]
        read += hi - lo
        prefix += ub[order[j]]
        if true_kth is not None:
            if rest[j] < true_kth * low:
                theta, last = true_kth, j
                break
        elif hi - lo >= K and j < last and rest[j] < prefix * low and \
                np.count_nonzero(acc[ix] > rest[j] / low) >= K:
            theta, last = rest[j] / low, j
            break
    added = 0
    while last + 1 < len(ranked) and lex.store.dense_row[ranked[last + 1]] < 0:
        lo, hi = w.indptr[ranked[last + 1]], w.indptr[ranked[last + 1] + 1]
        if hi - lo > CONTINUE * read:
            break
        part = acc[w.indices[lo:hi]]
        acc[w.indices[lo:hi]] = part + w.data[lo:hi] * (part != 0.0)
        added += hi - lo
        last += 1
    part = acc[acc > 0]
    if len(part) >= K:
        theta = max(theta, float(np.partition(part, len(part) - K)[len(part) - K]))
    return read, added, int(np.count_nonzero(part >= theta * low - rest[last]))


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
        rows = {"all postings": [], "phase 1 postings": [], "phase 1b postings": [], "candidates": [],
                "phase 1 postings, true threshold": [], "phase 1b postings, true threshold": [],
                "candidates, true threshold": []}
        for q in test_queries():
            terms = lex.query_terms(q)
            rows["all postings"].append(int(np.diff(lex.bm25.indptr)[terms].sum()))
            for suffix, kth in (("", None), (", true threshold", float(np.sort(lex.bm25_scores(q))[-K]))):
                read, added, cand = phases(lex, terms, kth)
                rows["phase 1 postings" + suffix].append(read)
                rows["phase 1b postings" + suffix].append(added)
                rows["candidates" + suffix].append(cand)
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
