"""The floor's second stage: the scorer protocol and the shipped scorers (see `floor.py` for how
`build_floor` runs them in batches under a deadline).

`DenseScorer` (cosine rescoring, max over the two query embeddings — for MiniLM this is the
stage-one order itself, a no-rerank baseline), `FusionScorer` (the shipped learned logistic
fusion of BM25 and dense from `learned.py`; RRF of the complete BM25 and dense rankings when no
learned model can be loaded) and `CrossEncoderScorer` (an ONNX cross-encoder over record texts;
no weights ship, so it is opt-in). The default, `DEFAULT_SCORER`, was chosen on the SciFact
development queries (bench/dense.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from ..errors import InputError, MissingDataError
from .dense import require_dense, require_vectors
from .query_vectors import embed_twice

if TYPE_CHECKING:
    from .context import SearchContext
    from ..models.crossencoder import CrossEncoder
    from .floor import StageOne

#: chosen on the 209 SciFact dev queries by nDCG@10 of the floor (bench/dense.py); test run once after.
DEFAULT_SCORER = "fusion"
SCORERS = ("fusion", "dense", "rrf", "cross-encoder")


@runtime_checkable
class SecondStage(Protocol):
    """A second-stage scorer: higher is better; ``score`` gets one batch of record positions."""

    name: str

    def score(self, query: str, positions: np.ndarray) -> np.ndarray: ...


class DenseScorer:
    """Cosine rescoring: max of cos(query-as-query, d) and cos(query-as-document, d)."""

    name = "dense"
    batch_size = 128

    def __init__(self, index: "SearchContext"):
        self.index = index
        self._q: tuple[str, list[np.ndarray]] | None = None

    def prepare(self, query: str, stage: StageOne) -> None:
        self._q = (query, [v for v in (stage.query_vec, stage.doc_vec) if v is not None])

    def score(self, query: str, positions: np.ndarray) -> np.ndarray:
        cached = self._q  # one read: another thread may prepare another query meanwhile
        if cached is None or cached[0] != query:
            q, d, _ = embed_twice(require_dense(self.index), query)
            cached = self._q = (query, [v for v in (q, d) if v is not None])
        rows = np.asarray(require_vectors(self.index).vectors[np.asarray(positions)], dtype=np.float32)
        best: np.ndarray = np.max(np.stack([rows @ v for v in cached[1]]), axis=0).astype(np.float64)
        return best


class FusionScorer:
    """BM25 + dense fusion restricted to the pool, features over the complete rankings.

    ``learned`` (default when loadable): the logistic model from `learned.py` (`model=None` is the
    shipped SciFact+MiniLM model) on its five features, with the query-kind cosine. ``rrf``: sum of
    1/(60+rank) in the complete BM25 and dense rankings. ``kind="auto"`` uses ``learned`` and falls
    back to ``rrf`` when no learned model can be loaded (``name`` says which ran).
    """

    batch_size = 128

    def __init__(self, index: "SearchContext", kind: str = "auto", model: str | None = None):
        if kind not in ("auto", "learned", "rrf"):
            raise InputError(f"fusion kind must be auto, learned or rrf, got {kind!r}")
        self.index = index
        self.model = None
        if kind in ("auto", "learned"):
            try:
                from .learned import LearnedModel

                self.model = LearnedModel.load(model)
            except (OSError, ValueError, InputError, ImportError) as exc:
                if kind == "learned":
                    raise MissingDataError(f"learned fusion model unavailable ({exc})") from exc
        self.name = "fusion:learned" if self.model is not None else "fusion:rrf"
        self._cache: tuple[str, np.ndarray] | None = None

    def prepare(self, query: str, stage: StageOne | None) -> tuple[str, np.ndarray]:
        from ..structures.fusion import rrf_scores
        from ..structures.ranking import top_k
        from .hybrid import COMPONENT_OPTIONS, lexical_scores

        idx = self.index
        if self.model is not None:
            comps = {**COMPONENT_OPTIONS, **self.model.components}
            plain_dense = not comps.get("dense_prf_docs")
        else:
            comps, plain_dense = dict(COMPONENT_OPTIONS), True
        bm25 = lexical_scores(idx, query, comps)
        if stage is not None and plain_dense:
            cos = stage.cos_query
        else:
            from .hybrid import dense_scores

            cos = dense_scores(idx, query, comps)
        if self.model is not None:
            from .learned import feature_matrix

            full = self.model.score(feature_matrix(bm25, cos, idx.id_rank))
        else:
            parts = [top_k(bm25, None, idx.id_rank), top_k(cos, None, idx.id_rank, positive_only=False)]
            full = rrf_scores(parts, len(idx.ids))
        self._cache = (query, full)
        return self._cache

    def score(self, query: str, positions: np.ndarray) -> np.ndarray:
        cached = self._cache  # one read: another thread may prepare another query meanwhile
        if cached is None or cached[0] != query:
            cached = self.prepare(query, None)
        scores: np.ndarray = cached[1][np.asarray(positions)]
        return scores


class CrossEncoderScorer:
    """An ONNX cross-encoder over (query, record title + text) pairs."""

    def __init__(self, index: "SearchContext", cross_encoder: "CrossEncoder", batch_size: int = 32):
        self.index = index
        self.ce = cross_encoder
        self.batch_size = int(batch_size)
        self.name = f"cross-encoder:{cross_encoder.name}"

    def passage(self, position: int) -> str:
        r = self.index.corpus.records[int(position)]
        return " ".join(t for t in (r.title, r.text) if t)

    def score(self, query: str, positions: np.ndarray) -> np.ndarray:
        texts = [self.passage(p) for p in np.asarray(positions).tolist()]
        return self.ce.score(query, texts, batch_size=max(len(texts), 1)).astype(np.float64)


def make_scorer(index: "SearchContext", name: str | None = None, model: str | None = None,
                cross_encoder: str | None = None, threads: int = 2) -> SecondStage:
    """A scorer by name: fusion (learned, RRF fallback), rrf, dense or cross-encoder (needs a spec)."""
    name = name or DEFAULT_SCORER
    if name == "dense":
        return DenseScorer(index)
    if name == "fusion":
        return FusionScorer(index, "auto", model)
    if name == "learned":
        return FusionScorer(index, "learned", model)
    if name == "rrf":
        return FusionScorer(index, "rrf")
    if name == "cross-encoder":
        if not cross_encoder:
            raise InputError("the cross-encoder scorer needs cross_encoder=SPEC (a folder with model.onnx "
                             "and tokenizer.json, or hf:ORG/NAME@REV); none ships with sidelight")
        from ..models.crossencoder import CrossEncoder

        return CrossEncoderScorer(index, CrossEncoder.from_spec(cross_encoder, threads=threads))
    raise InputError(f"unknown floor scorer {name!r}; choose one of {', '.join(SCORERS)} (or learned)")
