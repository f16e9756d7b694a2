"""Text processing shared by every lexical method."""

from .tokenize import STOPLISTS, Tokenizer, TokenizerConfig, stopwords

__all__ = ["STOPLISTS", "Tokenizer", "TokenizerConfig", "stopwords"]
