"""Sentence embeddings with ONNX Runtime on the CPU: WordPiece -> transformer -> mean pool -> L2.

The pipeline matches sentence-transformers' all-MiniLM-L6-v2 (Transformer, mean Pooling,
Normalize) with ``max_seq_length`` tokens *including* [CLS] and [SEP].
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..errors import IndexFormatError, InputError
from ..progress import progress_bar
from .spec import DEFAULT_SPEC, ModelFiles, file_sha256, resolve_model

KINDS = ("doc", "query")

#: identity keys that must agree between an index and a query; ``name`` is only a label.
_MATERIAL_KEYS = ("onnx_sha256", "tokenizer_sha256", "dim", "max_length", "pooling", "normalize")


def make_session(onnx_path, threads: int = 2):
    """A CPU ONNX Runtime session: ``threads`` intra-op, one inter-op, sequential execution."""
    import onnxruntime as ort

    if int(threads) < 1:
        raise InputError(f"threads must be >= 1, got {threads}")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = int(threads)
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.log_severity_level = 3
    try:
        return ort.InferenceSession(str(onnx_path), sess_options=opts, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own exception types
        raise IndexFormatError(f"cannot load ONNX model {onnx_path}: {exc}") from exc


def load_tokenizer(tokenizer_path, max_length: int):
    """A `tokenizers` tokenizer with truncation at ``max_length`` (special tokens included)
    and no padding (the tokenizer.json may ship fixed padding; we pad per batch ourselves)."""
    from tokenizers import Tokenizer

    try:
        tok = Tokenizer.from_file(str(tokenizer_path))
    except Exception as exc:
        raise IndexFormatError(f"cannot load tokenizer {tokenizer_path}: {exc}") from exc
    tok.no_padding()
    tok.enable_truncation(max_length=int(max_length))
    return tok


def pad_id_of(tokenizer) -> int:
    for token in ("[PAD]", "<pad>"):
        tid = tokenizer.token_to_id(token)
        if tid is not None:
            return int(tid)
    return 0


def pad_batch(encodings, pad_id: int, with_type_ids: bool = False) -> dict[str, np.ndarray]:
    """Right-pad a list of encodings to the longest one: int64 arrays for the graph."""
    width = max(len(e.ids) for e in encodings)
    n = len(encodings)
    ids = np.full((n, width), pad_id, dtype=np.int64)
    mask = np.zeros((n, width), dtype=np.int64)
    types = np.zeros((n, width), dtype=np.int64) if with_type_ids else None
    for row, enc in enumerate(encodings):
        k = len(enc.ids)
        ids[row, :k] = enc.ids
        mask[row, :k] = 1
        if types is not None:
            types[row, :k] = enc.type_ids
    out = {"input_ids": ids, "attention_mask": mask}
    if types is not None:
        out["token_type_ids"] = types
    return out


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise InputError("encode() takes a list of strings, not a single string")
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise InputError(f"text #{i} is {type(t).__name__}, not str")
    return out


class Embedder:
    """Encode texts into L2-normalised float32 vectors with a verified ONNX model.

    ``truncated_docs`` / ``truncated_queries`` count texts (cumulative over ``encode`` calls)
    whose token count, special tokens included, exceeded ``max_length`` before truncation.
    """

    def __init__(self, files: ModelFiles, threads: int = 2):
        self.files = files
        self.threads = int(threads)
        self.max_length = int(files.max_length)
        self.session = make_session(files.onnx_path, self.threads)
        self.tokenizer = load_tokenizer(files.tokenizer_path, self.max_length)
        self._pad_id = pad_id_of(self.tokenizer)
        self.input_names = [i.name for i in self.session.get_inputs()]
        for needed in ("input_ids", "attention_mask"):
            if needed not in self.input_names:
                raise IndexFormatError(
                    f"model {files.onnx_path} has inputs {self.input_names}; expected input_ids "
                    "and attention_mask (a BERT-style sentence-transformers export)"
                )
        unknown = set(self.input_names) - {"input_ids", "attention_mask", "token_type_ids"}
        if unknown:
            raise IndexFormatError(f"model {files.onnx_path} wants unsupported inputs {sorted(unknown)}")
        self._wants_type_ids = "token_type_ids" in self.input_names
        outputs = self.session.get_outputs()
        names = [o.name for o in outputs]
        self.output_name = "last_hidden_state" if "last_hidden_state" in names else names[0]
        shape = next(o.shape for o in outputs if o.name == self.output_name)
        graph_dim = shape[-1] if shape and isinstance(shape[-1], int) else None
        if files.dim is not None and graph_dim is not None and files.dim != graph_dim:
            raise IndexFormatError(
                f"model {files.name}: expected dimension {files.dim}, the graph outputs {graph_dim}"
            )
        self._dim: int | None = files.dim or graph_dim
        self._tokenizer_sha256 = files.tokenizer_sha256 or file_sha256(files.tokenizer_path)
        self.truncated_docs = 0
        self.truncated_queries = 0
        self._batch_invariant: bool | None = None

    @classmethod
    def from_spec(cls, spec: str = DEFAULT_SPEC, threads: int = 2) -> "Embedder":
        return cls(resolve_model(spec), threads=threads)

    # ------------------------------------------------------------------ identity

    @property
    def name(self) -> str:
        return self.files.name

    @property
    def dim(self) -> int:
        if self._dim is None:  # dynamic output width: find it once
            self._dim = int(self._run(["x"])[0].shape[-1])
        return self._dim

    @property
    def identity(self) -> dict[str, Any]:
        """What an index manifest stores to prove its vectors came from this model."""
        return {
            "name": self.files.name,
            "onnx_sha256": self.files.sha256,
            "tokenizer_sha256": self._tokenizer_sha256,
            "dim": self.dim,
            "max_length": self.max_length,
            "pooling": "mean",
            "normalize": True,
        }

    def reset_counters(self) -> None:
        self.truncated_docs = 0
        self.truncated_queries = 0

    # ------------------------------------------------------------------ encoding

    def count_tokens(self, text: str) -> int:
        """Token count before truncation, special tokens included (prefixes not added)."""
        self.tokenizer.no_truncation()
        try:
            return len(self.tokenizer.encode(text).ids)
        finally:
            self.tokenizer.enable_truncation(max_length=self.max_length)

    def encode_windows(self, texts: Sequence[str], titles: Sequence[str] | None = None, stride: int = 64,
                       batch_size: int = 32, progress: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """(owner, vectors) of every window after the first of each text longer than the model's
        window: the tokenizer's overflowing windows, `stride` wordpieces shared by neighbours, each
        encoded as its own characters after the record's title (when `titles` is given). owner[i]
        is the position of window i's text; owners ascend. The first window of a text is what
        `encode` already sees, so a record's windows are its `encode` vector plus these.
        Truncation counters are left as they are (a window is not a record)."""
        texts = _check_texts(texts)
        if titles is not None and len(titles) != len(texts):
            raise InputError(f"{len(titles)} titles for {len(texts)} texts")
        if not 0 <= int(stride) <= self.max_length // 2:
            raise InputError(f"stride must be between 0 and {self.max_length // 2} wordpieces, got {stride}")
        self.tokenizer.enable_truncation(max_length=self.max_length, stride=int(stride))
        try:
            encodings = self.tokenizer.encode_batch(list(texts))
        finally:
            self.tokenizer.enable_truncation(max_length=self.max_length)
        owner, windows = [], []
        for i, e in enumerate(encodings):
            for o in e.overflowing:
                spans = [span for span, special in zip(o.offsets, o.special_tokens_mask) if not special]
                if spans:
                    body = texts[i][spans[0][0]:spans[-1][1]]
                    owner.append(i)
                    windows.append(f"{titles[i]} {body}" if titles is not None and titles[i] else body)
        counters = self.truncated_docs, self.truncated_queries
        try:
            vectors = self.encode(windows, batch_size=batch_size, kind="doc", progress=progress) if windows \
                else np.zeros((0, self.dim), dtype=np.float32)
        finally:
            self.truncated_docs, self.truncated_queries = counters
        return np.asarray(owner, dtype=np.int64), vectors

    @property
    def batch_invariant(self) -> bool:
        """Whether a text gets the same vector alone and inside a padded batch (probed once).

        Graphs with dynamic int8 quantisation (`sidelight adapt`'s exports) scale activations per
        input tensor, so there a text's vector would depend on the other texts of its batch;
        `encode` then runs one text per call, about as fast on a CPU (nothing is padded)."""
        if self._batch_invariant is None:
            probe = ["a short probe", "a longer probe text, long enough to pad the first one of its batch " * 3]
            self._batch_invariant = bool(np.array_equal(self._run(probe[:1])[0], self._run(probe)[0]))
        return self._batch_invariant

    def _run(self, texts: list[str]) -> np.ndarray:
        """Pooled, un-normalised vectors for one batch (texts already prefixed)."""
        encodings = self.tokenizer.encode_batch(texts)
        return self._run_encodings(encodings)

    def _run_encodings(self, encodings) -> np.ndarray:
        feed = pad_batch(encodings, self._pad_id)
        if self._wants_type_ids:
            feed["token_type_ids"] = np.zeros_like(feed["input_ids"])
        hidden = self.session.run([self.output_name], feed)[0]
        if hidden.ndim != 3:
            raise IndexFormatError(
                f"model output {self.output_name!r} has shape {hidden.shape}; expected "
                "(batch, tokens, dim) token states for mean pooling"
            )
        mask = feed["attention_mask"].astype(np.float32)[:, :, None]
        summed = (hidden.astype(np.float32) * mask).sum(axis=1)
        return summed / np.maximum(mask.sum(axis=1), 1e-9)

    def encode(
        self,
        texts: Sequence[str],
        batch_size: int = 32,
        kind: str = "doc",
        progress: bool = False,
    ) -> np.ndarray:
        """(n, dim) float32, each row L2-normalised. ``kind`` picks the prefix and counter.

        Each text gets the vector it gets alone: texts are batched only when the graph is
        `batch_invariant`, else encoded one per call."""
        texts = _check_texts(texts)
        if kind not in KINDS:
            raise InputError(f"kind must be 'doc' or 'query', got {kind!r}")
        if int(batch_size) < 1:
            raise InputError(f"batch_size must be >= 1, got {batch_size}")
        n = len(texts)
        if n == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        batch_size = int(batch_size) if n > 1 and self.batch_invariant else 1
        prefix = self.files.query_prefix if kind == "query" else self.files.doc_prefix
        if prefix:
            texts = [prefix + t for t in texts]

        encodings = self.tokenizer.encode_batch(texts)
        truncated = sum(1 for e in encodings if e.overflowing)
        if kind == "query":
            self.truncated_queries += truncated
        else:
            self.truncated_docs += truncated

        # Longest first: similar lengths share a batch, so padding is small.
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=n)
        order = np.argsort(-lengths, kind="stable")
        out: np.ndarray | None = None

        with progress_bar(n, f"encoding {kind}s", enabled=progress) as advance:
            for start in range(0, n, batch_size):
                idx = order[start : start + batch_size]
                pooled = self._run_encodings([encodings[i] for i in idx])
                if out is None:
                    out = np.empty((n, pooled.shape[1]), dtype=np.float32)
                out[idx] = pooled
                advance(len(idx))

        assert out is not None
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.maximum(norms, 1e-12)
        if self._dim is None:
            self._dim = int(out.shape[1])
        return out


def _short(sha: Any) -> str:
    return str(sha)[:12] if sha else "?"


def check_identity(stored: dict, live: dict) -> None:
    """Refuse to compare vectors from different models.

    Raises IndexFormatError naming both models when any material field (model and tokenizer
    sha256, dim, max_length, pooling, normalize) differs or is missing from ``stored``.
    """
    if not isinstance(stored, dict) or not isinstance(live, dict):
        raise IndexFormatError("model identity must be a dict (is the index manifest damaged?)")
    differing = [k for k in _MATERIAL_KEYS if stored.get(k) != live.get(k)]
    if not differing:
        return
    details = ", ".join(f"{k}: {stored.get(k)!r} vs {live.get(k)!r}" for k in differing
                        if not k.endswith("sha256"))
    raise IndexFormatError(
        f"index was built with model {stored.get('name', '?')} (sha {_short(stored.get('onnx_sha256'))}, "
        f"tokenizer {_short(stored.get('tokenizer_sha256'))}), this query uses "
        f"{live.get('name', '?')} (sha {_short(live.get('onnx_sha256'))}, tokenizer "
        f"{_short(live.get('tokenizer_sha256'))}); differing: {', '.join(differing)}"
        + (f" ({details})" if details else "")
        + ". Rebuild the index or query with the model it was built with."
    )


__all__ = ["Embedder", "check_identity", "make_session", "load_tokenizer", "pad_batch"]
