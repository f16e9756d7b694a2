"""Cross-encoder reranking with ONNX Runtime: ([CLS] query [SEP] passage [SEP]) -> one logit."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..errors import IndexFormatError, InputError, NonFiniteScoreError
from .embedder import load_tokenizer, make_session, pad_batch, pad_id_of
from .spec import ModelFiles, file_sha256, resolve_model

DEFAULT_CE_MAX_LENGTH = 512


class CrossEncoder:
    """Score (query, passage) pairs with an ONNX graph taking ``input_ids``, ``attention_mask``
    and (if the graph asks) ``token_type_ids``; its first output holds one logit per pair.

    Pairs longer than ``max_length`` tokens (special tokens included) are cut longest-first;
    ``truncated_pairs`` counts them.
    """

    def __init__(
        self,
        onnx_path: str | Path,
        tokenizer_path: str | Path,
        max_length: int = DEFAULT_CE_MAX_LENGTH,
        threads: int = 2,
        name: str | None = None,
    ):
        self.onnx_path = Path(onnx_path)
        self.tokenizer_path = Path(tokenizer_path)
        self.max_length = int(max_length)
        self.name = name or self.onnx_path.parent.name
        self.session = make_session(self.onnx_path, threads)
        self.tokenizer = load_tokenizer(self.tokenizer_path, self.max_length)
        self._pad_id = pad_id_of(self.tokenizer)
        self.input_names = [i.name for i in self.session.get_inputs()]
        for needed in ("input_ids", "attention_mask"):
            if needed not in self.input_names:
                raise IndexFormatError(
                    f"cross-encoder {self.onnx_path} has inputs {self.input_names}; "
                    "expected input_ids, attention_mask and token_type_ids"
                )
        unknown = set(self.input_names) - {"input_ids", "attention_mask", "token_type_ids"}
        if unknown:
            raise IndexFormatError(f"cross-encoder {self.onnx_path} wants unsupported inputs {sorted(unknown)}")
        self._wants_type_ids = "token_type_ids" in self.input_names
        self.output_name = self.session.get_outputs()[0].name
        self.truncated_pairs = 0

    @classmethod
    def from_files(cls, files: ModelFiles, threads: int = 2, max_length: int | None = None) -> "CrossEncoder":
        return cls(
            files.onnx_path,
            files.tokenizer_path,
            max_length=max_length or files.max_length,
            threads=threads,
            name=files.name,
        )

    @classmethod
    def from_spec(cls, spec: str, threads: int = 2, max_length: int = DEFAULT_CE_MAX_LENGTH) -> "CrossEncoder":
        """A folder path or ``hf:ORG/NAME@REV`` holding an ONNX cross-encoder export."""
        return cls.from_files(resolve_model(spec), threads=threads, max_length=max_length)

    @property
    def identity(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "onnx_sha256": file_sha256(self.onnx_path),
            "tokenizer_sha256": file_sha256(self.tokenizer_path),
            "max_length": self.max_length,
        }

    def score(self, query: str, passages: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """(n,) float32 logits, one per passage, in the order given. Higher = more relevant."""
        if not isinstance(query, str):
            raise InputError(f"query must be a str, got {type(query).__name__}")
        if isinstance(passages, str):
            raise InputError("score() takes a list of passages, not a single string")
        passages = list(passages)
        for i, p in enumerate(passages):
            if not isinstance(p, str):
                raise InputError(f"passage #{i} is {type(p).__name__}, not str")
        if int(batch_size) < 1:
            raise InputError(f"batch_size must be >= 1, got {batch_size}")
        batch_size = int(batch_size)
        n = len(passages)
        if n == 0:
            return np.zeros(0, dtype=np.float32)

        encodings = self.tokenizer.encode_batch([(query, p) for p in passages])
        self.truncated_pairs += sum(1 for e in encodings if e.overflowing)
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=n)
        order = np.argsort(-lengths, kind="stable")
        out = np.empty(n, dtype=np.float32)
        for start in range(0, n, batch_size):
            idx = order[start : start + batch_size]
            feed = pad_batch([encodings[i] for i in idx], self._pad_id, with_type_ids=self._wants_type_ids)
            logits = np.asarray(self.session.run([self.output_name], feed)[0])
            if logits.ndim == 2 and logits.shape[1] == 1:
                logits = logits[:, 0]
            if logits.shape != (len(idx),):
                raise IndexFormatError(
                    f"cross-encoder output {self.output_name!r} has shape {logits.shape}; "
                    f"expected one logit per pair ({len(idx)},) or ({len(idx)}, 1)"
                )
            out[idx] = logits
        if not np.all(np.isfinite(out)):
            bad = int(np.flatnonzero(~np.isfinite(out))[0])
            raise NonFiniteScoreError(f"cross-encoder {self.name} gave a non-finite score for passage #{bad}")
        return out
