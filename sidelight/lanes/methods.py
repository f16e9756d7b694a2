"""Named ranking methods. Lanes are never fused silently: every fusion is a method with its own name."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from ..errors import InputError
from .fusion import rrf_scores
from .ranking import Ranking, top_k

if TYPE_CHECKING:
    from ..index import Index

RankFn = Callable[["Index", str, "int | None", dict], Ranking]


@dataclass(frozen=True)
class Method:
    """A ranking method with fixed parameters; `rank` returns the top k (None: all candidates)."""

    name: str
    fn: RankFn = field(repr=False)
    params: dict = field(default_factory=dict)

    def rank(self, index: "Index", query: str, k: int | None = 10) -> Ranking:
        return self.fn(index, query, k, self.params)


_REGISTRY: dict[str, tuple[RankFn, dict, str]] = {}


def register(name: str, description: str, **defaults) -> Callable[[RankFn], RankFn]:
    """Decorator adding a method to the registry with its default parameters."""

    def wrap(fn: RankFn) -> RankFn:
        _REGISTRY[name] = (fn, defaults, description)
        return fn

    return wrap


def get_method(name: str, **params) -> Method:
    _load_plugins()
    if name not in _REGISTRY:
        raise InputError(f"unknown method {name!r}; available: {', '.join(sorted(_REGISTRY))}")
    fn, defaults, _ = _REGISTRY[name]
    unknown = set(params) - set(defaults)
    if unknown:
        raise InputError(f"method {name!r} takes no parameter {sorted(unknown)[0]!r}")
    return Method(name, fn, {**defaults, **params})


def available_methods() -> dict[str, str]:
    """Method name -> one-line description."""
    _load_plugins()
    return {n: d for n, (_, _, d) in sorted(_REGISTRY.items())}


def _load_plugins() -> None:
    """Import the modules that register further methods (they import this one, so not at load)."""
    from . import dense, floor, hybrid  # noqa: F401
    from ..graph import methods  # noqa: F401


@register("bm25", "BM25 over names and text (the lexical lane)")
def _bm25(index: "Index", query: str, k: int | None, params: dict) -> Ranking:
    return index.lexical.bm25_top(query, k, index.id_rank)


@register("tfidf", "TF-IDF cosine, (1+ln tf)(ln((N+1)/(df+1))+1) (Carrier)")
def _tfidf(index: "Index", query: str, k: int | None, params: dict) -> Ranking:
    return top_k(index.lexical.tfidf_scores(query), k, index.id_rank)


@register("rrf-lexical", "reciprocal rank fusion of BM25 and TF-IDF positive ranks, 1/(60+rank)", k_rrf=60)
def _rrf_lexical(index: "Index", query: str, k: int | None, params: dict) -> Ranking:
    parts = [top_k(index.lexical.bm25_scores(query), None, index.id_rank),
             top_k(index.lexical.tfidf_scores(query), None, index.id_rank)]
    return top_k(rrf_scores(parts, len(index.ids), params["k_rrf"]), k, index.id_rank)
