"""A ranking file stored in columns (`rankings/X.jsonl.cols`): decodes to exactly the bytes the lab wrote.

A rankings line is `{"label": ..., "qid": ..., "ids": [100 doc ids], "scores": [100 floats], ...}`;
LZMA on the text spends most of its bytes on the ids (the same few thousand strings, spelled out on
every line) and on the scores (17 decimal digits each). This form separates the file into streams
that compress well apart, each LZMA2-compressed (preset 9e) on its own:

    kinds     one byte per piece (the file split at b"\\n"): 0 = a parsed line, 1 = kept verbatim
    heads     per parsed line, the line's JSON with `ids` and `scores` replaced by their lengths
              (label, qid, n_ranked, target_rank: the per-line constants and keys, as text)
    vocab     the distinct ids in order of first appearance, one JSON array; or, for a ranking encoded
              against a **base** (another ranking of the same folder, whose vocabulary holds most of its
              ids), {"base": NAME, "vocab_sha256": HEX, "extra": [ids the base lacks]}: the vocabulary is
              the base's, then `extra` (the ids of a folder's rankings overlap: one vocabulary kept once)
    ids       each line's ids as indices into vocab (uint32 little endian, byte planes apart)
    scores    each score's float64 bits, as the zigzag difference from the previous score of its
              line (ranked scores descend, so the high bytes vanish), in 8 byte planes
  score_bits  or instead (whichever compresses smaller; the other is empty) the bits as they are,
              8-byte words: smaller when the same values recur (RRF's sums of 1/(k+rank), counts)
    verbatim  every piece kept as it was (varint length, bytes)

A piece is parsed only when `json.dumps(json.loads(piece), ensure_ascii=False)` gives it back
byte for byte (what the lab writes), its `ids` (when present) is a list of strings and its `scores`
a list of floats (float64 bits are exact: JSON's float text is Python's shortest round-trip repr);
anything else (a non-canonical line, integer scores, the empty piece after the last newline, a
last line without one) is kept verbatim. The container is::

    b"SLCOLS1\\n" | sha256 of the decoded bytes (32) | per stream: varint length, raw LZMA2 bytes

`encode` decodes its own output and refuses (ValueError) when it would not give back the input,
and `decode` checks the sha256, so a damaged file is a `ColumnsError`, never wrong bytes. A ranking
with a base decodes only beside it: `decode` asks its caller for the base's vocabulary by name and
by the sha256 of its vocab stream, so a base that is missing, based itself or holds another
vocabulary is a `ColumnsError` too. Both
directions are deterministic (one thread, fixed filters, fixed byte order; each stream's dictionary
the next power of two of its length): the same ranking always gives the same bytes. On the committed
runs' rankings it is about a fifth smaller than xz (a half on dense scores, float32 at heart), and
larger on some (`describe-v2`'s words, tiny files): `packed` keeps the smaller form. Like `packed`,
this module imports no lab code.
"""

from __future__ import annotations

import hashlib
import json
import lzma
from dataclasses import dataclass
from typing import Callable

import numpy as np

MAGIC = b"SLCOLS1\n"
STREAMS = ("kinds", "heads", "vocab", "ids", "scores", "score_bits", "verbatim")
SCORE_FORMS = ("scores", "score_bits")
_TEXT: dict = {"id": lzma.FILTER_LZMA2, "preset": 9 | lzma.PRESET_EXTREME}
_PLANES: dict = {**_TEXT, "lc": 0, "lp": 0, "pb": 0}  # byte planes: no literal context helps
_WORDS: dict = {**_TEXT, "lc": 0, "lp": 3, "pb": 3}  # 8-byte words: positions modulo 8 are the context
_FILTERS = {"kinds": _TEXT, "heads": _TEXT, "vocab": _TEXT, "ids": _PLANES, "scores": _PLANES, "score_bits": _WORDS,
            "verbatim": _TEXT}
DICT_MAX = 1 << 26  # preset 9's dictionary; the decoder's, whatever the encoder used
PARSED, VERBATIM = 0, 1


class ColumnsError(ValueError):
    """A columns file that does not decode (damaged, truncated, or not this form)."""


@dataclass(frozen=True)
class Base:
    """The ranking another is encoded against: its file name (beside it), vocabulary and vocab stream's sha256."""

    name: str
    vocab: list[str]
    sha256: str


#: how `decode` finds a base's vocabulary: (file name, vocab stream sha256) -> the vocabulary
BaseLookup = Callable[[str, str], list[str]]


def _planes(a: np.ndarray) -> bytes:
    """The bytes of `a` (little endian) regrouped by byte position: all first bytes, then all second..."""
    return a.view(np.uint8).reshape(-1, a.dtype.itemsize).T.tobytes()


def _unplanes(b: bytes, dtype: str) -> np.ndarray:
    width = np.dtype(dtype).itemsize
    if len(b) % width:
        raise ColumnsError(f"a {dtype} stream of {len(b)} bytes")
    return np.frombuffer(b, np.uint8).reshape(width, -1).T.copy().view(dtype).ravel()


def _varint(n: int, out: bytearray) -> None:
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _read_varint(b: bytes, i: int, what: str = "a verbatim length") -> tuple[int, int]:
    n = shift = 0
    while True:
        if i >= len(b) or shift > 63:
            raise ColumnsError(f"{what} runs past its end")
        c = b[i]
        i += 1
        n |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return n, i


def _parse(piece: bytes) -> dict | None:
    """The line's object when the structured form reproduces `piece` exactly, else None."""
    try:
        obj = json.loads(piece)
        if not isinstance(obj, dict) or json.dumps(obj, ensure_ascii=False).encode("utf-8") != piece:
            return None
    except (ValueError, UnicodeError, RecursionError):
        return None
    ids, scores = obj.get("ids", []), obj.get("scores", [])
    if not (isinstance(ids, list) and all(type(x) is str for x in ids)):
        return None
    if not (isinstance(scores, list) and all(type(x) is float for x in scores)):
        return None
    return obj


def _score_deltas(bits: np.ndarray, lengths: list[int]) -> np.ndarray:
    """Per line: the first score's bits, then each score's difference from the one before, zigzagged."""
    d = bits.copy()
    starts = np.cumsum([0, *lengths[:-1]]).astype(np.int64) if lengths else np.zeros(0, np.int64)
    d[1:] = bits[1:] - bits[:-1]  # int64 wraps; undone exactly by the cumulative sum on decode
    nonempty = np.array([s for s, n in zip(starts, lengths) if n], dtype=np.int64)
    d[nonempty] = bits[nonempty]
    return ((d << 1) ^ (d >> 63)).view(np.uint64)


def _undo_deltas(z: np.ndarray, lengths: list[int]) -> np.ndarray:
    d = ((z >> np.uint64(1)) ^ (np.uint64(0) - (z & np.uint64(1)))).view(np.int64)
    out = np.empty_like(d)
    pos = 0
    with np.errstate(over="ignore"):
        for n in lengths:
            if n:
                out[pos:pos + n] = np.cumsum(d[pos:pos + n], dtype=np.int64)
            pos += n
    return out


def _compress(name: str, data: bytes) -> bytes:
    """One stream as raw LZMA2 with its filter; a dictionary no larger than the stream (a power of two):
    the same output as preset 9e's 64 MiB, in less memory and time."""
    size = min(DICT_MAX, max(1 << 12, 1 << (len(data) - 1).bit_length()))
    return lzma.compress(data, format=lzma.FORMAT_RAW, filters=[{**_FILTERS[name], "dict_size": size}])


def _pack(compressed: dict[str, bytes], sha: bytes) -> bytes:
    out = bytearray(MAGIC + sha)
    for name in STREAMS:
        _varint(len(compressed[name]), out)
        out += compressed[name]
    return bytes(out)


def stream_sizes(blob: bytes) -> dict[str, int]:
    """Stream name -> its compressed bytes in the columns file `blob` (where the bytes go)."""
    return {name: len(b) for name, b in _split(blob)[0].items()}


def streams(blob: bytes) -> dict[str, bytes]:
    """Stream name -> its decompressed bytes (the layout the module docstring describes)."""
    return _unpack(blob)[0]


def _split(blob: bytes) -> tuple[dict[str, bytes], bytes]:
    """Stream name -> its compressed bytes, and the sha256 carried."""
    if not blob.startswith(MAGIC):
        raise ColumnsError("not a columns file (no SLCOLS1 header)")
    if len(blob) < len(MAGIC) + 32:
        raise ColumnsError("truncated before its checksum")
    sha, i, found = blob[len(MAGIC):len(MAGIC) + 32], len(MAGIC) + 32, {}
    for name in STREAMS:
        n, i = _read_varint(blob, i, f"the length of its {name} stream")
        if i + n > len(blob):
            raise ColumnsError(f"truncated in its {name} stream")
        found[name] = blob[i:i + n]
        i += n
    if i != len(blob):
        raise ColumnsError(f"{len(blob) - i} stray bytes after its streams")
    return found, sha


def _decompress(name: str, data: bytes) -> bytes:
    dec = lzma.LZMADecompressor(format=lzma.FORMAT_RAW, filters=[{**_FILTERS[name], "dict_size": DICT_MAX}])
    try:
        out = dec.decompress(data)
    except lzma.LZMAError as e:
        raise ColumnsError(f"its {name} stream does not decompress ({e})") from None
    if not dec.eof or dec.unused_data:
        raise ColumnsError(f"its {name} stream is incomplete")
    return out


def _unpack(blob: bytes) -> tuple[dict[str, bytes], bytes]:
    packed, sha = _split(blob)
    return {name: _decompress(name, data) for name, data in packed.items()}, sha


def vocabulary(blob: bytes) -> tuple[list[str], str] | None:
    """(vocabulary, sha256 of the vocab stream) of the columns file `blob`, decompressing that stream
    only; None when its vocabulary is another file's (it has a base, so it cannot be one)."""
    raw = _decompress("vocab", _split(blob)[0]["vocab"])
    try:
        vocab = json.loads(raw)
    except ValueError as e:
        raise ColumnsError(f"its vocab stream is not JSON ({e})") from None
    if isinstance(vocab, dict):
        return None
    if not (isinstance(vocab, list) and all(type(x) is str for x in vocab)):
        raise ColumnsError("its vocab stream is not a list of ids")
    return vocab, hashlib.sha256(raw).hexdigest()


def _vocab_stream(vocab: dict[str, int], base: Base | None) -> bytes:
    ids = list(vocab)
    body = ids if base is None else {"base": base.name, "vocab_sha256": base.sha256, "extra": ids[len(base.vocab):]}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _vocab_of(raw: bytes, lookup: BaseLookup | None) -> list[str]:
    """The vocabulary a vocab stream stands for: its own list, or its base's followed by its extra ids."""
    vocab = json.loads(raw)
    if isinstance(vocab, list):
        return vocab
    if not (isinstance(vocab, dict) and isinstance(vocab.get("base"), str) and isinstance(vocab.get("extra"), list)
            and isinstance(vocab.get("vocab_sha256"), str)):
        raise ColumnsError("its vocab stream is neither a list nor a base with extra ids")
    if lookup is None:
        raise ColumnsError(f"it is encoded against {vocab['base']}, and no base was given to decode it with")
    return [*lookup(vocab["base"], vocab["vocab_sha256"]), *vocab["extra"]]


def _encode(data: bytes, score_form: str | None, base: Base | None = None) -> bytes:
    kinds, heads, verbatim = bytearray(), [], bytearray()
    vocab: dict[str, int] = {x: i for i, x in enumerate(base.vocab)} if base else {}
    ids: list[int] = []
    scores: list[float] = []
    lengths: list[int] = []
    for piece in data.split(b"\n"):
        obj = _parse(piece)
        if obj is None:
            kinds.append(VERBATIM)
            _varint(len(piece), verbatim)
            verbatim += piece
            continue
        kinds.append(PARSED)
        if "ids" in obj:
            ids.extend(vocab.setdefault(x, len(vocab)) for x in obj["ids"])
            obj["ids"] = len(obj["ids"])
        if "scores" in obj:
            scores.extend(obj["scores"])
            lengths.append(len(obj["scores"]))
            obj["scores"] = len(obj["scores"])
        heads.append(json.dumps(obj, ensure_ascii=False))
    bits = np.array(scores, dtype="<f8").view("<i8")
    with np.errstate(over="ignore"):
        deltas = _score_deltas(bits, lengths)
    parts = {"kinds": bytes(kinds), "heads": "\n".join(heads).encode("utf-8"),
             "vocab": _vocab_stream(vocab, base),
             "ids": _planes(np.array(ids, dtype="<u4")), "verbatim": bytes(verbatim)}
    compressed = {name: _compress(name, b) for name, b in parts.items()}
    forms = {"scores": _compress("scores", _planes(deltas.astype("<u8"))),
             "score_bits": _compress("score_bits", bits.astype("<i8").tobytes())}
    kept = score_form or min(SCORE_FORMS, key=lambda f: len(forms[f]))  # ties: the first
    for name in SCORE_FORMS:
        compressed[name] = forms[name] if name == kept else _compress(name, b"")
    return _pack(compressed, hashlib.sha256(data).digest())


def encode(data: bytes, score_form: str | None = None, base: Base | None = None) -> bytes:
    """`data` (a rankings JSONL file's bytes) in the columns form; ValueError when that form would not
    decode to exactly `data` (the caller keeps another form then). The scores go to whichever of
    `SCORE_FORMS` compresses smaller, unless `score_form` names one. With `base`, the vocabulary is the
    base's followed by the ids it lacks (the file then decodes only beside the base)."""
    if score_form not in (None, *SCORE_FORMS):
        raise ValueError(f"no score form {score_form!r} (one of {', '.join(SCORE_FORMS)})")
    blob = _encode(data, score_form, base)

    def lookup(name: str, sha: str) -> list[str]:
        if base is None or (name, sha) != (base.name, base.sha256):
            raise ColumnsError(f"it names base {name}, not the one it was encoded against")
        return base.vocab

    try:
        ok = decode(blob, lookup if base else None) == data
    except ColumnsError:
        ok = False
    if not ok:
        raise ValueError("the columns form does not decode to the same bytes")
    return blob


def decode(blob: bytes, base: BaseLookup | None = None) -> bytes:
    """The bytes a columns file stands for; ColumnsError when it is damaged or its checksum differs.
    `base` finds the vocabulary of the file's base, when it has one (by name and vocab sha256)."""
    parts, sha = _unpack(blob)
    try:
        heads = parts["heads"].decode("utf-8").split("\n") if parts["heads"] else []
        vocab = _vocab_of(parts["vocab"], base)
        ids = _unplanes(parts["ids"], "<u4")
        if parts["scores"] and parts["score_bits"]:
            raise ColumnsError("scores in both forms")
        z = _unplanes(parts["scores"], "<u8")
        if len(parts["score_bits"]) % 8:
            raise ColumnsError(f"a score_bits stream of {len(parts['score_bits'])} bytes")
        bits = np.frombuffer(parts["score_bits"], "<i8")
    except (ValueError, UnicodeError) as e:
        if isinstance(e, ColumnsError):
            raise
        raise ColumnsError(f"a stream is not what it should be ({e})") from None
    try:
        objs = [json.loads(h) for h in heads]
        lengths = [o["scores"] for o in objs if "scores" in o]
        if any(type(n) is not int or n < 0 for n in lengths) or sum(lengths) != len(z) + len(bits):
            raise ColumnsError("the score counts do not match the scores stream")
        values = (_undo_deltas(z, lengths) if len(z) else bits).view("<f8").tolist()
        pieces, verbatim = [], parts["verbatim"]
        h = vi = ii = si = 0
        for kind in parts["kinds"]:
            if kind == VERBATIM:
                n, vi = _read_varint(verbatim, vi)
                if vi + n > len(verbatim):
                    raise ColumnsError("a verbatim piece runs past its stream")
                pieces.append(verbatim[vi:vi + n])
                vi += n
                continue
            if kind != PARSED or h >= len(objs):
                raise ColumnsError("the kinds stream does not match the heads")
            obj = objs[h]
            h += 1
            if "ids" in obj:
                n = obj["ids"]
                if type(n) is not int or n < 0 or ii + n > len(ids):
                    raise ColumnsError("an id count runs past the ids stream")
                obj["ids"] = [vocab[j] for j in ids[ii:ii + n].tolist()]
                ii += n
            if "scores" in obj:
                n = obj["scores"]
                obj["scores"] = values[si:si + n]
                si += n
            pieces.append(json.dumps(obj, ensure_ascii=False).encode("utf-8"))
    except (ValueError, KeyError, IndexError, TypeError, UnicodeError) as e:
        if isinstance(e, ColumnsError):
            raise
        raise ColumnsError(f"its streams do not fit together ({type(e).__name__}: {e})") from None
    if h != len(objs) or ii != len(ids) or vi != len(verbatim):
        raise ColumnsError("its streams hold more than its lines use")
    data = b"\n".join(pieces)
    if hashlib.sha256(data).digest() != sha:
        raise ColumnsError("it decodes to bytes whose sha256 is not the one it carries")
    return data
