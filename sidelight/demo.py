"""The main job (`make demo`): index SciFact, run example queries, evaluate every method, print the table.

Indexes are cached under .cache/ (or $SIDELIGHT_CACHE) and rebuilt when the corpus or settings change.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from .cli.output import console, table
from .config import cache_dir, dataset_path
from .corpus.beir import beir_split, load_beir_corpus
from .corpus.model import Corpus
from .errors import IndexFormatError, SidelightError
from .index import Index
from .lab.evaluate import evaluate_method
from .lanes.methods import get_method
from .text import TokenizerConfig

EXAMPLES = [
    "Vitamin D deficiency is associated with lower bone density.",
    "Smoking increases the risk of lung cancer.",
    "Mitochondria play a role in aging.",
]
METRICS = ["ndcg@10", "mrr@10", "recall@5", "recall@100", "hit@1"]
CONFIGS = {  # name -> tokenizer; "pilot" is the SciFact pilot's BM25 (no stemming, no stop words)
    "pilot": TokenizerConfig(),
    "stem+stop": TokenizerConfig(stopwords="lucene-en-v1", stem="english"),
}


def cached_index(corpus: Corpus, name: str, tokenizer: TokenizerConfig) -> Index:
    """Load the cached index if it matches corpus and settings, else build and cache it."""
    path = cache_dir() / "indexes" / f"{corpus.name}-{name}"
    try:
        index = Index.load(path)
        same = (index.manifest["corpus"]["hash"] == corpus.content_hash()
                and index.manifest["lexical"]["tokenizer"] == tokenizer.to_dict())
        if same:
            return index
    except IndexFormatError:
        pass
    t = time.perf_counter()
    index = Index.build(corpus, tokenizer)
    index.save(path)
    console.print(f"built {path} in {time.perf_counter() - t:.1f}s")
    return index


def main() -> int:
    folder = dataset_path("scifact")
    corpus = load_beir_corpus(folder)
    queries, qrels = beir_split(folder, "test")
    indexes = {name: cached_index(corpus, name, tok) for name, tok in CONFIGS.items()}

    for q in EXAMPLES:
        hits = indexes["pilot"].search(q, "bm25", k=3)
        table(f"bm25: {q}", ["rank", "id", "score", "title"],
              [(h.rank, h.id, h.score, h.title[:70]) for h in hits], [True, False, True, False])

    rows, results = [], []
    for config, index in indexes.items():
        for method in ("bm25", "tfidf", "rrf-lexical"):
            r = evaluate_method(index, get_method(method), queries, qrels, METRICS, depth=1000, progress=True)
            rows.append((f"{method} ({config})", *[r.metrics[m] for m in METRICS]))
            results.append({"config": config, **r.to_json()})
    table(f"SciFact test, {len(queries)} queries (BEIR qrels)", ["method", *METRICS], rows,
          [False] + [True] * len(METRICS))
    out = cache_dir() / "demo" / "scifact.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    console.print(f"results written to {out}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SidelightError as exc:
        print(f"sidelight demo: error: {exc}", file=sys.stderr)
        sys.exit(2)
