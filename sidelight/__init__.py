"""sidelight: retrieval in separate lanes (lexical, dense, relation, serendipity) and a lab to measure them.

    from sidelight import Index, load_source
    index = Index.build(load_source("scifact"))
    index.search("vitamin d and bone density", method="bm25", k=10)      # Results (Hit: id, rank, score, title)
    run = index.search_many({"q1": "vitamin d", "q2": "smoking"}, k=100)   # Run: to_trec(), to_ranx()
    evaluate(run, qrels, ["ndcg@10"])
"""

from .corpus import Corpus, Edge, Record
from .corpus.sources import load_source
from .errors import IndexFormatError, InputError, MissingDataError, NonFiniteScoreError, SidelightError
from .index import Hit, Index, Results, Run
from .methods import available_methods, get_method
from .structures.lexical_store import BM25Params
from .text import TokenizerConfig

__version__ = "0.1.0"


def __getattr__(name: str):
    """`sidelight.evaluate` loads the metric code on first use (the lab's auditor must run without it)."""
    if name == "evaluate":
        from .lab.evaluate import evaluate

        return evaluate
    raise AttributeError(f"module 'sidelight' has no attribute {name!r}")

__all__ = [
    "BM25Params", "Corpus", "Edge", "Hit", "Index", "IndexFormatError", "InputError", "MissingDataError",
    "NonFiniteScoreError", "Record", "Results", "Run", "SidelightError", "TokenizerConfig", "available_methods",
    "evaluate", "get_method", "load_source",
]
