"""Tokenization: lowercase ASCII alphanumerics, a minimum length, a versioned stop list, optional stemming."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any
from importlib import resources

from ..errors import InputError

_TOKEN = re.compile(r"[a-z0-9]+")
STOPLISTS = ("lucene-en-v1", "nltk-en-v1")


@lru_cache(maxsize=None)
def stopwords(name: str) -> frozenset[str]:
    """A shipped stop list by versioned name (see text/data/)."""
    if name not in STOPLISTS:
        raise InputError(f"unknown stop list {name!r}; choose one of {', '.join(STOPLISTS)}")
    text = resources.files(__package__).joinpath(f"data/stopwords-{name}.txt").read_text()
    return frozenset(w.strip() for w in text.splitlines() if w.strip() and not w.startswith("#"))


@dataclass(frozen=True)
class TokenizerConfig:
    """Everything that decides which terms a text yields; stored in every index manifest."""

    min_length: int = 1
    stopwords: str | None = None  # a name from STOPLISTS, or None
    stem: str | None = None  # a Snowball language for PyStemmer ("english"), or None

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "TokenizerConfig":
        return cls(**d)


class Tokenizer:
    """Turns text into terms; the same object serves documents and queries."""

    def __init__(self, config: TokenizerConfig = TokenizerConfig()):
        self.config = config
        self._stop = stopwords(config.stopwords) if config.stopwords else frozenset()
        self._stem_cache: dict[str, str] = {}
        self._stemmer: Any = None  # PyStemmer ships no type information
        if config.stem:
            import Stemmer  # PyStemmer

            try:
                self._stemmer = Stemmer.Stemmer(config.stem)
            except KeyError as exc:
                raise InputError(f"PyStemmer has no stemmer for language {config.stem!r}") from exc

    def __reduce__(self):  # pickled by its configuration (a PyStemmer object does not pickle)
        return Tokenizer, (self.config,)

    def __call__(self, text: str) -> list[str]:
        n = self.config.min_length
        terms = [t for t in _TOKEN.findall(text.lower()) if len(t) >= n and t not in self._stop]
        if self._stemmer is None:
            return terms
        cache = self._stems(terms)
        return [cache[t] for t in terms]

    def terms_of_words(self, words: list[str]) -> list[str | None]:
        """The term each word becomes, None where it is dropped: `self(w)` for words that are one
        raw token each (lowercase [a-z0-9]+), as one batch (a build's new raw tokens)."""
        n, stop = self.config.min_length, self._stop
        kept = [w if len(w) >= n and w not in stop else None for w in words]
        if self._stemmer is None:
            return kept
        cache = self._stems(w for w in kept if w is not None)
        return [None if w is None else cache[w] for w in kept]

    def _stems(self, words: Iterable[str]) -> dict[str, str]:
        """The stem cache, holding every word of `words` (the missing ones stemmed in one call)."""
        cache = self._stem_cache
        missing = [w for w in set(words) if w not in cache]
        if missing:
            cache.update(zip(missing, self._stemmer.stemWords(missing)))
        return cache
