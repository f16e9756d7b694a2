"""CrossEncoder against a tiny ONNX graph whose logit is a known function of its inputs.

The `onnx` package is not a dependency, so the graph is written as raw protobuf bytes
(ModelProto field numbers from onnx/onnx.proto). Its logit for a pair is

    1e6 * (#[SEP] tokens) + 1e3 * (#tokens with token_type_id 1) + (#real tokens)

counted under the attention mask, times a `scale` initializer (NaN for the fail-closed test).
For "[CLS] q [SEP] p [SEP]" that is 2e6 + 1e3 * (|p| + 1) + (|q| + |p| + 3), which the
test computes from single-text token counts.
"""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from sidelight.errors import IndexFormatError, InputError, NonFiniteScoreError
from sidelight.models import CrossEncoder, resolve_model
from sidelight.models.embedder import load_tokenizer

# --------------------------------------------------------------------------- protobuf writer


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _int(field: int, n: int) -> bytes:
    return _varint(field << 3) + _varint(n)


def _len(field: int, payload: bytes | str) -> bytes:
    if isinstance(payload, str):
        payload = payload.encode()
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


FLOAT, INT64 = 1, 7  # TensorProto.DataType


def _tensor(name: str, dtype: int, raw: bytes, dims=()) -> bytes:
    return b"".join(_int(1, d) for d in dims) + _int(2, dtype) + _len(8, name) + _len(9, raw)


def _value_info(name: str, dtype: int, dims) -> bytes:
    shape = b"".join(_len(1, _len(2, d) if isinstance(d, str) else _int(1, d)) for d in dims)
    return _len(1, name) + _len(2, _len(1, _int(1, dtype) + _len(2, shape)))


def _node(op: str, inputs, outputs, **attrs) -> bytes:
    body = b"".join(_len(1, i) for i in inputs) + b"".join(_len(2, o) for o in outputs)
    body += _len(3, f"{op}_{outputs[0]}") + _len(4, op)
    for key, value in attrs.items():  # INT attributes only (AttributeProto.type INT = 2)
        body += _len(5, _len(1, key) + _int(3, value) + _int(20, 2))
    return body


def tiny_cross_encoder(scale: float = 1.0, two_logits: bool = False) -> bytes:
    nodes = [
        _node("Cast", ["attention_mask"], ["m"], to=FLOAT),
        _node("Cast", ["token_type_ids"], ["t"], to=FLOAT),
        _node("Equal", ["input_ids", "sep_id"], ["is_sep"]),
        _node("Cast", ["is_sep"], ["e"], to=FLOAT),
        _node("Mul", ["t", "m"], ["tm"]),
        _node("Mul", ["e", "m"], ["em"]),
        _node("ReduceSum", ["m", "axes"], ["n_tok"], keepdims=1),
        _node("ReduceSum", ["tm", "axes"], ["n_b"], keepdims=1),
        _node("ReduceSum", ["em", "axes"], ["n_sep"], keepdims=1),
        _node("Mul", ["n_sep", "k_sep"], ["a"]),
        _node("Mul", ["n_b", "k_b"], ["b"]),
        _node("Add", ["a", "b"], ["ab"]),
        _node("Add", ["ab", "n_tok"], ["raw"]),
        _node("Mul", ["raw", "scale"], ["logits1"]),
    ]
    if two_logits:
        nodes.append(_node("Concat", ["logits1", "logits1"], ["logits"], axis=1))
    else:
        nodes.append(_node("Identity", ["logits1"], ["logits"]))
    f32 = lambda x: struct.pack("<f", x)  # noqa: E731
    inits = [
        _tensor("sep_id", INT64, struct.pack("<q", 102)),
        _tensor("axes", INT64, struct.pack("<q", 1), dims=(1,)),
        _tensor("k_sep", FLOAT, f32(1e6)),
        _tensor("k_b", FLOAT, f32(1e3)),
        _tensor("scale", FLOAT, f32(scale)),
    ]
    graph = b"".join(_len(1, n) for n in nodes) + _len(2, "tiny_ce")
    graph += b"".join(_len(5, t) for t in inits)
    for name in ("input_ids", "attention_mask", "token_type_ids"):
        graph += _len(11, _value_info(name, INT64, ["batch", "seq"]))
    graph += _len(12, _value_info("logits", FLOAT, ["batch", 2 if two_logits else 1]))
    opset = _len(8, _len(1, "") + _int(2, 13))
    return _int(1, 8) + _len(2, "sidelight-test") + opset + _len(7, graph)


# --------------------------------------------------------------------------- tests

QUERY = "Does vitamin D prevent fractures?"
PASSAGES = [
    "Vitamin D supplementation reduced hip fractures in older adults.",
    "No.",
    "An unrelated passage about the thermal conductivity of copper alloys at low temperature.",
]


@pytest.fixture(scope="module")
def tok_path():
    return resolve_model("minilm").tokenizer_path


def _write(tmp_path, **kw):
    path = tmp_path / "model.onnx"
    path.write_bytes(tiny_cross_encoder(**kw))
    return path


def _expected(tok_path, query, passages):
    tok = load_tokenizer(tok_path, 10_000)
    q = len(tok.encode(query).ids) - 2
    out = []
    for p in passages:
        n_p = len(tok.encode(p).ids) - 2
        out.append(2e6 + 1e3 * (n_p + 1) + (q + n_p + 3))
    return np.array(out, dtype=np.float32)


def test_scores_match_the_graph_formula(tmp_path, tok_path):
    ce = CrossEncoder(_write(tmp_path), tok_path, max_length=512, threads=1)
    want = _expected(tok_path, QUERY, PASSAGES)
    for bs in (1, 2, 32):
        got = ce.score(QUERY, PASSAGES, batch_size=bs)
        assert got.dtype == np.float32 and got.shape == (3,)
        np.testing.assert_array_equal(got, want)
    assert ce.truncated_pairs == 0
    assert ce.score(QUERY, []).shape == (0,)


def test_long_pairs_are_truncated_and_counted(tmp_path, tok_path):
    ce = CrossEncoder(_write(tmp_path), tok_path, max_length=32, threads=1)
    long_passage = " ".join(["fracture"] * 100)
    got = ce.score(QUERY, [long_passage, "No."])
    assert ce.truncated_pairs == 1
    assert got[0] % 1e3 == 32  # exactly max_length real tokens, specials included
    assert got[0] // 1e6 == 2  # both [SEP] survive truncation
    assert got[1] == _expected(tok_path, QUERY, ["No."])[0]


def test_non_finite_scores_fail_closed(tmp_path, tok_path):
    ce = CrossEncoder(_write(tmp_path, scale=math.nan), tok_path, threads=1)
    with pytest.raises(NonFiniteScoreError):
        ce.score(QUERY, PASSAGES)


def test_rejects_graphs_with_more_than_one_logit(tmp_path, tok_path):
    ce = CrossEncoder(_write(tmp_path, two_logits=True), tok_path, threads=1)
    with pytest.raises(IndexFormatError, match="one logit per pair"):
        ce.score(QUERY, PASSAGES)


def test_rejects_embedding_graph_inputs_and_bad_arguments(tmp_path, tok_path):
    ce = CrossEncoder(_write(tmp_path), tok_path, threads=1)
    with pytest.raises(InputError):
        ce.score(QUERY, "a single string")
    with pytest.raises(InputError):
        ce.score(None, PASSAGES)
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"\x00garbage")
    with pytest.raises(IndexFormatError, match="cannot load ONNX model"):
        CrossEncoder(broken, tok_path)


def test_from_spec_folder(tmp_path, tok_path):
    folder = tmp_path / "tiny-ce"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(tiny_cross_encoder())
    (folder / "tokenizer.json").symlink_to(tok_path)
    ce = CrossEncoder.from_spec(str(folder), threads=1)
    assert ce.name == "tiny-ce" and ce.max_length == 512
    np.testing.assert_array_equal(ce.score(QUERY, PASSAGES), _expected(tok_path, QUERY, PASSAGES))
    assert set(ce.identity) == {"name", "onnx_sha256", "tokenizer_sha256", "max_length"}
