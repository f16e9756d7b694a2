"""A query embedded twice for the floor's stage one and its dense rescoring: as a query, and (when
the model's query and document prefixes differ) as a document. Below `floor` and `floor_scorers`,
which both use it."""

from __future__ import annotations

import numpy as np

from ..errors import InputError, MissingDataError
from ..structures.dense_query import DenseScorer

_PREFIXES: dict[str, tuple[str, str] | None] = {}  # model spec -> (query prefix, doc prefix), or None


def model_prefixes(store: DenseScorer) -> tuple[str, str] | None:
    """(query prefix, doc prefix) of the store's model; None when they cannot be known offline."""
    emb = store.loaded_embedder()
    if emb is not None and hasattr(emb, "files"):
        return emb.files.query_prefix, emb.files.doc_prefix
    if store.spec not in _PREFIXES:
        from ..models.spec import resolve_model

        try:
            files = resolve_model(store.spec)
            _PREFIXES[store.spec] = (files.query_prefix, files.doc_prefix)
        except (InputError, MissingDataError):
            _PREFIXES[store.spec] = None
    return _PREFIXES[store.spec]


def embed_twice(store: DenseScorer, query: str) -> tuple[np.ndarray, np.ndarray | None, str | None]:
    """(as query, as document or None, why the document embedding was skipped or None)."""
    q = np.asarray(store.encode_query(query), dtype=np.float32)
    pre = model_prefixes(store)
    if pre is None:
        return q, None, f"query-as-document embedding: prefixes of model spec {store.spec!r} unknown"
    if pre[0] == pre[1]:
        return q, None, "query-as-document embedding: same text as the query (equal prefixes), encoded once"
    d = np.asarray(store.embedder().encode([query], kind="doc")[0], dtype=np.float32)
    return q, d, None
