"""sidelight: retrieval in separate lanes (lexical, dense, relation, serendipity) and a lab to measure them.

    from sidelight import Index, load_source
    index = Index.build(load_source("scifact"))
    index.search("vitamin d and bone density", method="bm25", k=10)
"""

from .corpus import Corpus, Edge, Record
from .corpus.sources import load_source
from .errors import IndexFormatError, InputError, MissingDataError, NonFiniteScoreError, SidelightError
from .index import Hit, Index
from .structures.lexical import BM25Params
from .methods import available_methods, get_method
from .text import TokenizerConfig

__version__ = "0.1.0"

__all__ = [
    "BM25Params", "Corpus", "Edge", "Hit", "Index", "IndexFormatError", "InputError", "MissingDataError",
    "NonFiniteScoreError", "Record", "SidelightError", "TokenizerConfig", "available_methods", "get_method",
    "load_source",
]
