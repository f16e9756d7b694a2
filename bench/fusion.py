"""SciFact hybrid experiments: fit `learned`, compare fusion variants on DEV, then test the chosen ones once.

Protocol
--------
* SciFact train qrels (809 queries) -> 600 fit / 209 dev with
  `random.Random(45110).sample(sorted(train_ids), 600)` (string sort of the query ids).
* `learned` is fitted on the fit queries (judged positives ∪ BM25 top 20 ∪ dense top 20), C in
  {0.1, 1, 10} picked by mean dev nDCG@10 (ties to smaller C). Test qrels are never read before
  the dev table is complete, and the fitter is told the test ids are held out.
* Every variant below is scored on the 209 dev queries (nDCG@10 over full-corpus rankings).
  Components are chosen stage by stage on dev (lexical, then dense, then the fusion and its
  weight); the dev winner among the fusions is what `best` must alias.
* Only then, once, the chosen methods are run on the 300 test queries.

Query vectors are cached in `--cache` (keyed by model hash and query texts) so the encoder
runs once per query set.

    .venv/bin/python bench/fusion.py --index .cache/indexes/scifact-minilm --json /tmp/fusion.json
    .venv/bin/python bench/fusion.py ... --export-model sidelight/methods/data/learned-scifact-minilm.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from _common import cached_query_vectors, use_cached_vectors, write_json

from sidelight.corpus.beir import load_qrels, load_queries
from sidelight.index import Index
from sidelight.lab import fit_learned
from sidelight.lab.evaluate import evaluate_method
from sidelight.methods import Method, get_method, learned

METRICS = ["ndcg@10", "recall@5", "recall@100", "mrr@10"]
PUBLISHED_MINILM_TEST = 0.645  # BEIR / SBERT all-MiniLM-L6-v2 SciFact nDCG@10, fp32


def score(index, method: Method, queries, qrels) -> dict[str, float]:
    return evaluate_method(index, method, queries, qrels, METRICS, depth=100, progress=False).metrics


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--index", type=Path, default=Path(".cache/indexes/scifact-minilm"))
    ap.add_argument("--data", type=Path, default=Path("../shared/data/scifact"))
    ap.add_argument("--cache", type=Path, default=Path(".cache/fusion"))
    ap.add_argument("--json", type=Path, help="write all results as JSON")
    ap.add_argument("--export-model", type=Path, help="write the fitted learned model JSON here")
    ap.add_argument("--no-test", action="store_true", help="stop after the dev table")
    args = ap.parse_args(argv)

    index = Index.load(args.index)
    known = set(index.corpus.ids)
    queries = load_queries(args.data / "queries.jsonl")
    train = load_qrels(args.data / "qrels" / "train.tsv", known)
    test_ids = sorted(load_qrels(args.data / "qrels" / "test.tsv", known))  # ids only until the end
    fit_ids, dev_ids = fit_learned.split_train(train)
    assert not (set(fit_ids) | set(dev_ids)) & set(test_ids)
    dev_q = {q: queries[q] for q in dev_ids}
    dev_qrels = {q: train[q] for q in dev_ids}
    vecs = cached_query_vectors(index, [queries[q] for q in list(train) + test_ids], args.cache)
    use_cached_vectors(index, vecs)
    out: dict = {"index": str(args.index), "corpus_hash": index.manifest["corpus"]["hash"],
                 "dense": index.dense.identity, "split": {"seed": learned.SPLIT_SEED, "call": learned.SPLIT_CALL,
                                                           "fit": len(fit_ids), "dev": len(dev_ids)},
                 "dev": [], "test": []}
    rows = out["dev"]

    def dev(label: str, name: str, stage: str, **params) -> float:
        m = get_method(name, **params)
        t0 = time.time()
        res = score(index, m, dev_q, dev_qrels)
        rows.append({"label": label, "stage": stage, "method": name, "params": _jsonable(params),
                     **res, "seconds": round(time.time() - t0, 1)})
        print(f"  dev {label:<44} ndcg@10 {res['ndcg@10']:.4f}  r@100 {res['recall@100']:.4f}", file=sys.stderr)
        return res["ndcg@10"]

    # ---- learned: fit on 600, C on 209 dev --------------------------------------------------------
    t0 = time.time()
    model = fit_learned.fit_learned(index, queries, train, fit_ids, dev_ids, held_out=test_ids)
    model.meta["index"] = {"corpus_hash": out["corpus_hash"], "dense": index.dense.identity}
    out["learned_fit"] = {**model.to_json(), "seconds": round(time.time() - t0, 1)}
    print(f"learned: {model.meta['fit']['pairs']} pairs, {model.meta['fit']['positives']} positives, "
          f"dev by C {model.meta['dev']['by_C']}, chose C={model.C}", file=sys.stderr)
    if args.export_model:
        model.save(args.export_model)
    fitted_path = args.cache / "learned-fitted.json"
    args.cache.mkdir(parents=True, exist_ok=True)
    model.save(fitted_path)

    # ---- stage 1: components alone -----------------------------------------------------------------
    dev("bm25", "bm25", "lexical")
    lex_variants = {
        "stem+stop": dict(stopwords="lucene-en-v1", stem="english"),
        "title x2": dict(title_weight=2),
        "stem+stop, title x2": dict(stopwords="lucene-en-v1", stem="english", title_weight=2),
    }
    lex_scores = {"plain": (rows[-1]["ndcg@10"], {})}
    for label, p in lex_variants.items():
        lex_scores[label] = (dev(f"bm25 {label}", "bm25+rm3", "lexical", rm3=False, **p), p)
    base_lex = max(lex_scores.items(), key=lambda kv: kv[1][0])[1][1]
    for fd, ft, ow in [(10, 10, 0.5), (5, 10, 0.5), (10, 20, 0.5), (10, 10, 0.7), (5, 20, 0.7)]:
        p = {**base_lex, "fb_docs": fd, "fb_terms": ft, "orig_weight": ow}
        lex_scores[f"rm3 {fd}/{ft}/{ow}"] = (dev(f"bm25+rm3 {fd}/{ft}/{ow} {_tag(base_lex)}", "bm25+rm3",
                                                 "lexical", **p), {**p, "rm3": True})
    best_lex_label, (_, best_lex) = max(lex_scores.items(), key=lambda kv: kv[1][0])

    dense_scores = {"plain": (dev("dense", "dense", "dense"), {})}
    for n, w in [(3, 0.3), (3, 0.5), (5, 0.3), (10, 0.3)]:
        p = {"dense_prf_docs": n, "dense_prf_weight": w}
        dense_scores[f"prf {n}/{w}"] = (dev(f"dense-prf {n} docs w={w}", "dense-prf", "dense", **p), p)
    best_dense_label, (_, best_dense) = max(dense_scores.items(), key=lambda kv: kv[1][0])
    out["chosen_components"] = {"lexical": best_lex_label, "dense": best_dense_label}

    # ---- stage 2: fusions ----------------------------------------------------------------------------
    fusions: dict[str, tuple[float, str, dict]] = {}

    def fusion(label: str, name: str, **params) -> None:
        fusions[label] = (dev(label, name, "fusion", **params), name, params)

    fusion("rrf", "rrf")
    fusion("learned (fitted)", "learned", model=str(fitted_path))
    comps = {**best_lex, **best_dense}
    fusion(f"rrf lex={best_lex_label}", "rrf", **best_lex)
    fusion(f"rrf dense={best_dense_label}", "rrf", **best_dense)
    fusion(f"rrf lex={best_lex_label} dense={best_dense_label}", "rrf", **comps)
    for wd in (0.5, 0.75, 1.25, 1.5, 2.0):
        fusion(f"wrrf 1:{wd} {_tag(comps)}", "rrf", weights=(1.0, wd), **comps)
    for norm in ("zscore", "minmax"):
        for a in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7):
            fusion(f"linear {norm} a={a} {_tag(comps)}", "hybrid-linear", norm=norm, alpha=a, **comps)
    # a few more knobs: RRF's constant, linear fusion without the lexical change, and with RM3
    for kr in (10, 30):
        fusion(f"rrf k={kr} {_tag(comps)}", "rrf", k_rrf=kr, **comps)
    fusion("linear minmax a=0.5 (plain components)", "hybrid-linear", norm="minmax", alpha=0.5)
    rm3 = {**comps, "rm3": True, "fb_docs": 5, "fb_terms": 20, "orig_weight": 0.7}
    fusion(f"linear minmax a=0.5 {_tag(rm3)}", "hybrid-linear", norm="minmax", alpha=0.5, **rm3)
    # learned refitted on the chosen components' features
    if comps:
        m2 = fit_learned.fit_learned(index, queries, train, fit_ids, dev_ids, held_out=test_ids, components=comps)
        p2 = args.cache / "learned-components.json"
        m2.save(p2)
        out["learned_components_fit"] = m2.to_json()
        fusion(f"learned {_tag(comps)}", "learned", model=str(p2))

    winner = max(fusions.items(), key=lambda kv: (kv[1][0], -list(fusions).index(kv[0])))
    w_label, (w_dev, w_name, w_params) = winner
    chosen = {"pipeline": w_name, **{k: v for k, v in w_params.items() if k != "model"}}
    out["winner"] = {"label": w_label, "dev_ndcg@10": w_dev, "pipeline": _jsonable(chosen)}
    registered = get_method("best").params
    same = _jsonable(registered) == _jsonable({**registered, **chosen})
    out["winner"]["registered_best_matches"] = same
    print(f"dev winner: {w_label} ({w_dev:.4f}); registered `best` {'matches' if same else 'DIFFERS'}: "
          f"{_jsonable(registered)}", file=sys.stderr)

    _table("DEV (209 train-split queries)", rows)
    if not args.no_test:
        test_qrels = load_qrels(args.data / "qrels" / "test.tsv", known)
        test_q = {q: queries[q] for q in test_qrels}
        finals = [("bm25", "bm25", {}), ("dense", "dense", {}), ("rrf", "rrf", {}),
                  ("learned (shipped)", "learned", {}), ("learned (fitted now)", "learned", {"model": str(fitted_path)}),
                  ("best", "best", {})]
        for label, name, params in finals:
            m = get_method(name, **params)
            res = score(index, m, test_q, test_qrels)
            out["test"].append({"label": label, "method": name, "params": _jsonable(m.params), **res})
        _table("TEST (300 queries, run once)", out["test"])
        dn = next(r for r in out["test"] if r["method"] == "dense")["ndcg@10"]
        print(f"dense vs published {PUBLISHED_MINILM_TEST}: {dn - PUBLISHED_MINILM_TEST:+.4f}")
    if args.json:
        write_json(args.json, json.loads(json.dumps(_jsonable(out))))
    return 0


def _tag(p: dict) -> str:
    parts = []
    if p.get("stem"):
        parts.append("stem+stop" if p.get("stopwords") else "stem")
    if p.get("title_weight"):
        parts.append(f"title x{p['title_weight']}")
    if p.get("rm3"):
        parts.append(f"rm3 {p['fb_docs']}/{p['fb_terms']}/{p['orig_weight']}")
    if p.get("dense_prf_docs"):
        parts.append(f"dprf {p['dense_prf_docs']}/{p['dense_prf_weight']}")
    return "[" + ", ".join(parts) + "]" if parts else ""


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    return x


def _table(title: str, rows: list[dict]) -> None:
    print(f"\n{title}")
    print(f"{'variant':<58} {'nDCG@10':>8} {'R@5':>7} {'R@100':>7} {'MRR@10':>7}")
    for r in rows:
        print(f"{r['label']:<58} {r['ndcg@10']:>8.4f} {r['recall@5']:>7.4f} {r['recall@100']:>7.4f} {r['mrr@10']:>7.4f}")


if __name__ == "__main__":
    raise SystemExit(main())
