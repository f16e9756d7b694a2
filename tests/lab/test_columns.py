"""The columns form of a ranking file (`sidelight.lab.columns`, `rankings/X.jsonl.cols`): it decodes to exactly
the bytes the lab wrote, whatever they are (the input bytes are the oracle), lays a lab line out in the
streams its docstring describes (a hand-computed toy), is smaller than xz on rankings, is refused in one
line when damaged, and a run converted to it keeps its record and its audit."""

from __future__ import annotations

import json
import random
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sidelight.cli import main
from sidelight.lab import packed as packed_mod
from sidelight.lab import runner
from sidelight.lab.audit import audit
from sidelight.lab.columns import ColumnsError, decode, encode, stream_sizes, streams
from sidelight.lab.committed import compress_run
from sidelight.lab.packed import COLS, XZ, PackedError, compress_file, forms, logical, packed, read_bytes, xz_bytes
from sidelight.lab.record import RECORD_NAME, verify_run
from sidelight.lab.runner import RefusedError, compare_runs, read_rankings

from tests.lab.test_packed import IMPL, toy_run

ROOT = Path(__file__).resolve().parents[2]


def lab_line(obj: dict) -> bytes:
    """A line as the lab writes it (runner.write_rankings)."""
    return (json.dumps(obj, ensure_ascii=False) + "\n").encode("utf-8")


def size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def rankings_like(n_queries=200, depth=100, n_docs=3000, seed=0) -> bytes:
    rng = random.Random(seed)
    out = []
    for q in range(n_queries):
        ids = rng.sample([f"doc-{i}" for i in range(n_docs)], depth)
        scores = sorted((rng.uniform(0, 20) for _ in range(depth)), reverse=True)
        out.append(lab_line({"label": "bm25", "qid": f"q{q:04d}", "ids": ids, "scores": scores,
                             "n_ranked": n_docs, "target_rank": rng.choice([None, rng.randrange(1, depth)])}))
    return b"".join(out)


AWKWARD = [
    lab_line({"label": "bm25", "qid": "q1", "ids": ["b", "a"], "scores": [2.0, 1.5], "n_ranked": 2, "target_rank": 1}),
    lab_line({"label": "x", "qid": "ü", "ids": ["café", "日本語", "a\nb", "tab\there", "\u2028", "😀", ""],
              "scores": [float("inf"), 5e-324, 0.0, -0.0, -1e300, float("nan"), float("-inf")], "n_ranked": 7}),
    lab_line({"label": "empty", "qid": "q2", "ids": [], "scores": [], "n_ranked": 0, "target_rank": None}),
    lab_line({"label": "describe", "qid": "q3", "ids": ["word"], "scores": [], "n_ranked": 9, "target_rank": 1}),
    lab_line({"qid": "q4", "label": "keys in another order", "scores": [1.0], "ids": ["z"], "extra": {"k": [1, 2]}}),
    lab_line({"label": "no ids or scores", "qid": "q5"}),
    b'{"label": "non-repr float", "qid": "q6", "ids": ["a"], "scores": [0.10000000000000001]}\n',
    b'{"label": "exponent", "qid": "q7", "ids": ["a"], "scores": [1e5]}\n',
    b'{"label": "int scores", "qid": "q8", "ids": ["a", "b"], "scores": [3, 2]}\n',
    b'{"label": "ascii-escaped", "qid": "q9", "ids": ["caf\\u00e9"], "scores": [1.0]}\n',
    b'{"label": "lone surrogate", "qid": "q10", "ids": ["\\ud800"], "scores": [1.0]}\n',
    b'{"label":"compact","qid":"q11","ids":["a"],"scores":[1.0]}\n',
    b'{"label": "dup", "label": "dup", "qid": "q12", "ids": ["a"], "scores": [1.0]}\n',
    b'{"label": "ids not strings", "qid": "q13", "ids": [1, 2], "scores": [1.0, 0.5]}\n',
    b'{"label": "ids not a list", "qid": "q14", "ids": 3, "scores": 2}\n',
    b'["a list", "not an object"]\n',
    b"\n",
    b'{"label": "crlf", "qid": "q15", "ids": ["a"], "scores": [1.0]}\r\n',
    b"not json at all\n",
    b"\xff\xfe invalid utf-8\n",
    b"   \n",
]


@pytest.mark.parametrize("data", [
    b"".join(AWKWARD),
    b"".join(AWKWARD).rstrip(b"\n"),  # the last line without its newline
    AWKWARD[0].rstrip(b"\n"),
    b"", b"\n", b"\n\n", b"x",
    *AWKWARD,
    rankings_like(20),
], ids=lambda d: repr(d[:24]))
def test_every_input_decodes_to_exactly_its_bytes(data):
    blob = encode(data)
    assert decode(blob) == data
    assert encode(data) == blob  # deterministic


def test_lab_lines_are_parsed_and_everything_else_is_kept_verbatim():
    data = b"".join(AWKWARD)
    s = streams(encode(data))
    pieces = data.split(b"\n")
    parsed = [0 if i < 6 else 1 for i in range(len(AWKWARD))] + [1]  # the six lab-written lines; the rest and the
    assert list(s["kinds"]) == parsed                                # empty piece after the last newline are not
    verbatim = b"".join(bytes([len(p)]) + p for p, k in zip(pieces, parsed) if k)  # every length < 128: one byte
    assert s["verbatim"] == verbatim


def test_a_lab_line_is_laid_out_as_documented():
    """Hand-computed: ids b, a then a, c; scores 2.0, 1.5 then 3.0."""
    data = (lab_line({"label": "L", "qid": "1", "ids": ["b", "a"], "scores": [2.0, 1.5], "n_ranked": 5})
            + lab_line({"label": "L", "qid": "2", "ids": ["a", "c"], "scores": [3.0], "n_ranked": 5}))
    s = streams(encode(data, score_form="scores"))
    assert s["kinds"] == b"\x00\x00\x01"  # two parsed lines and the empty piece after the last newline
    assert s["heads"] == b'{"label": "L", "qid": "1", "ids": 2, "scores": 2, "n_ranked": 5}\n' \
                         b'{"label": "L", "qid": "2", "ids": 2, "scores": 1, "n_ranked": 5}'
    assert s["vocab"] == '["b","a","c"]'.encode()
    assert s["ids"] == bytes([0, 1, 1, 2]) + bytes(12)  # indices 0 1 1 2 as uint32 LE, byte plane by plane
    bits = {2.0: 0x4000000000000000, 1.5: 0x3FF8000000000000, 3.0: 0x4008000000000000}
    assert struct.unpack("<d", struct.pack("<Q", bits[1.5]))[0] == 1.5
    zigzag = [bits[2.0] << 1, 2 * (bits[2.0] - bits[1.5]) - 1, bits[3.0] << 1]  # first of a line, then -delta
    want = [0x8000000000000000, 0x000FFFFFFFFFFFFF, 0x8010000000000000]
    assert [z & (2**64 - 1) for z in zigzag] == want
    planes = bytes(b for plane in range(8) for b in [(z >> (8 * plane)) & 0xFF for z in want])
    assert s["scores"] == planes and s["score_bits"] == b""
    assert s["verbatim"] == b"\x00"
    bits_form = streams(encode(data, score_form="score_bits"))
    assert bits_form["scores"] == b"" and bits_form["score_bits"] == struct.pack("<3d", 2.0, 1.5, 3.0)
    assert decode(encode(data, score_form="score_bits")) == data


def test_recurring_scores_go_as_bits_and_distinct_ones_as_deltas():
    rng = random.Random(1)  # RRF over two lists: every score a sum of two of a hundred values 1/(60+r)
    rrf = b"".join(lab_line({"label": "rrf", "qid": f"q{q}", "ids": [f"d{i}" for i in range(100)],
                             "scores": sorted((1 / (60 + rng.randrange(1, 100)) + 1 / (60 + rng.randrange(1, 100))
                                               for _ in range(100)), reverse=True)}) for q in range(150))
    s = streams(encode(rrf))
    assert s["score_bits"] and not s["scores"]
    assert len(encode(rrf)) < len(encode(rrf, score_form="scores"))
    s = streams(encode(rankings_like(150)))
    assert s["scores"] and not s["score_bits"]


def test_smaller_than_xz_on_rankings_and_the_same_bytes_in_another_process():
    data = rankings_like()
    blob = encode(data)
    assert len(blob) < 0.9 * len(xz_bytes(data))
    assert set(stream_sizes(blob)) == {"kinds", "heads", "vocab", "ids", "scores", "score_bits", "verbatim"}
    code = ("import sys, hashlib; from sidelight.lab.columns import encode; "
            "print(hashlib.sha256(encode(sys.stdin.buffer.read())).hexdigest())")
    import hashlib
    for seed in ("1", "2"):
        out = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True, check=True,
                             env={"PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)})
        assert out.stdout.decode().strip() == hashlib.sha256(blob).hexdigest()


@pytest.mark.parametrize("damage", ["flip", "truncate", "magic", "checksum", "append", "both score forms"])
def test_a_damaged_columns_file_is_refused_in_one_line(damage, tmp_path):
    data = rankings_like(30)
    blob = bytearray(encode(data))
    if damage == "flip":
        blob[len(blob) // 2] ^= 0x40
    elif damage == "truncate":
        del blob[len(blob) * 2 // 3:]
    elif damage == "magic":
        blob[:4] = b"XXXX"
    elif damage == "checksum":
        blob[8] ^= 1
    elif damage == "append":
        blob += b"\0"
    else:  # a well-formed file whose scores are in both streams
        from sidelight.lab import columns
        parts = columns.streams(bytes(blob))
        parts["score_bits"] = parts["scores"]
        blob = bytearray(columns._pack({k: columns._compress(k, v) for k, v in parts.items()}, bytes(blob[8:40])))
    with pytest.raises(ColumnsError):
        decode(bytes(blob))
    plain = tmp_path / "rankings" / "bm25.jsonl"
    plain.parent.mkdir()
    packed(plain, COLS).write_bytes(bytes(blob))
    with pytest.raises(PackedError, match=r"bm25\.jsonl\.cols is not a readable columns stream") as e:
        read_bytes(plain)
    assert "\n" not in str(e.value)


def test_compress_file_keeps_xz_when_columns_would_not_round_trip_or_is_larger(tmp_path, monkeypatch):
    folder = tmp_path / "rankings"
    folder.mkdir()
    big, tiny = folder / "big.jsonl", folder / "tiny.jsonl"
    big.write_bytes(rankings_like(40))
    tiny.write_bytes(b"not json\n")  # one verbatim line: six streams cost more than one xz stream
    assert len(encode(tiny.read_bytes())) > len(xz_bytes(tiny.read_bytes()))
    assert compress_file(tiny) and [p.name for p in forms(tiny)] == ["tiny.jsonl.xz"]
    assert read_bytes(tiny) == b"not json\n"

    def broken(data):
        raise ValueError("the columns form does not decode to the same bytes")
    monkeypatch.setattr(packed_mod, "encode_columns", broken)
    assert compress_file(big) and [p.name for p in forms(big)] == ["big.jsonl.xz"]
    monkeypatch.undo()
    assert compress_file(big) and [p.name for p in forms(big)] == ["big.jsonl.cols"]  # xz converted in place
    assert read_bytes(big) == rankings_like(40)
    assert not compress_file(big)


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    """A completed toy run, its rankings stored as xz (as committed runs are before the columns form)."""
    out = toy_run(tmp_path_factory.mktemp("columns"))
    originals = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.glob("*/rankings/*.jsonl")}
    for rel, data in originals.items():
        packed(out / rel, XZ).write_bytes(xz_bytes(data))
        (out / rel).unlink()
    return out, originals


@pytest.fixture(autouse=True)
def pinned_implementation(monkeypatch):
    monkeypatch.setattr(runner, "implementation_hash", lambda: IMPL)


def converted_and_audited(src, run, originals):
    """Convert the copy `run` of `src`; every ranking decodes to the bytes the lab wrote, no record changes,
    the audit and `lab compare` agree with the unconverted run. Returns the forms stored."""
    records = {s: (run / s / RECORD_NAME).read_bytes() for s in ("dev", "test")}
    before_audit, before_ranks = audit(run), read_rankings(run / "test" / "rankings")
    r = compress_run(run)
    assert r["after"] <= r["before"]
    for rel, data in originals.items():
        assert read_bytes(run / rel) == data and len(forms(run / rel)) == 1
    assert {s: (run / s / RECORD_NAME).read_bytes() for s in ("dev", "test")} == records
    verify_run(run)
    after = audit(run)
    assert after["agree"] and after["checks"] == before_audit["checks"] > 0 and after["problems"] == []
    assert read_rankings(run / "test" / "rankings") == before_ranks
    assert compare_runs(src, run) == ([], [])
    assert compress_run(run)["files"] == 0
    return {rel: forms(run / rel)[0].name.rsplit(".", 1)[1] for rel in originals}


def test_a_toy_run_converted_keeps_its_record_and_its_audit_each_ranking_in_the_smaller_form(full, tmp_path):
    src, originals = full
    stored = converted_and_audited(src, shutil.copytree(src, tmp_path / "run"), originals)
    for rel, data in originals.items():  # toy rankings (21 records) are small: xz often wins there
        want = "cols" if len(encode(data)) < len(xz_bytes(data)) else "xz"
        assert stored[rel] == want


def test_a_committed_run_converted_to_columns_keeps_its_record_and_its_audit(tmp_path, monkeypatch):
    src = ROOT / "results" / "runs" / "relation-notes-v1"
    if not src.is_dir():
        pytest.skip("no committed run relation-notes-v1")
    monkeypatch.chdir(ROOT)  # protocol paths in freeze.json are relative to the repository
    originals = {rel: read_bytes(src / rel) for rel in
                 sorted({p.relative_to(src).parent.as_posix() + "/" + logical(p).name
                         for p in src.glob("*/rankings/*")})}
    assert len(originals) >= 10
    as_xz = shutil.copytree(src, tmp_path / "xz")  # the form it was first committed in, whatever it is stored in now
    for rel, data in originals.items():
        for f in forms(as_xz / rel):
            f.unlink()
        packed(as_xz / rel, XZ).write_bytes(xz_bytes(data))
    run = shutil.copytree(as_xz, tmp_path / "relation-notes-v1")
    stored = converted_and_audited(as_xz, run, originals)
    assert set(stored.values()) == {"cols"}
    assert size(run) < size(as_xz)


def test_a_conversion_to_columns_stopped_halfway_verifies_and_a_rerun_finishes_it(full, tmp_path):
    src, originals = full
    run = shutil.copytree(src, tmp_path / "run")
    rel = sorted(originals)[0]
    packed(run / rel, COLS).write_bytes(encode(originals[rel]))  # renamed in, the .xz not yet removed
    (run / rel).with_name(f".{(run / rel).name}.cols.tmp").write_bytes(b"half")
    with pytest.raises(RefusedError, match="not in the .* stage's record"):
        verify_run(run)
    (run / rel).with_name(f".{(run / rel).name}.cols.tmp").unlink()
    verify_run(run)  # both forms match the record
    packed(run / rel, COLS).write_bytes(encode(originals[rel] + b"\n"))
    with pytest.raises(RefusedError, match=r"\.jsonl\.cols does not match the hash recorded"):
        verify_run(run)  # an edited columns form, itself intact, is caught by the record
    packed(run / rel, COLS).write_bytes(encode(originals[rel]))
    compress_run(run)
    assert [p.name for p in forms(run / rel)] == [packed(run / rel, COLS).name]  # a columns form stored is final
    assert not list(run.glob("*/rankings/.*"))
    assert all(read_bytes(run / r) == d and len(forms(run / r)) == 1 for r, d in originals.items())
    verify_run(run)


def test_a_damaged_columns_ranking_in_a_run_is_refused_and_the_cli_audits_a_converted_folder(full, tmp_path, capsys):
    src, _ = full
    runs = tmp_path / "runs"
    shutil.copytree(src, runs / "toy")
    assert main(["lab", "compress", str(runs)]) == 0
    assert "the record verifies" in capsys.readouterr().out
    assert main(["lab", "audit", str(runs)]) == 0
    capsys.readouterr()
    cols = sorted(runs.glob("toy/test/rankings/*.jsonl.cols"))[0]  # those toy rankings the columns form made smaller
    cols.write_bytes(cols.read_bytes()[:-7])
    with pytest.raises(RefusedError, match=rf"{cols.name}.* is not a readable columns stream"):
        verify_run(runs / "toy")
    assert main(["lab", "audit", str(runs)]) != 0


def test_the_planes_are_exact_for_every_float64():
    """Every bit pattern survives the per-line zigzag deltas (int64 wrap-around included)."""
    rng = np.random.default_rng(0)
    bits = rng.integers(-2**63, 2**63, 2000, dtype=np.int64)
    bits[:4] = [-2**63, 2**63 - 1, 0, -1]
    values = [v for v in bits.view("<f8").tolist()]
    line = lab_line({"label": "x", "qid": "q", "ids": [str(i) for i in range(len(values))], "scores": values})
    assert decode(encode(line)) == line


# ---- a ranking encoded against another of its folder (a vocabulary kept once) ----------------------------

def _two_rankings(folder: Path) -> tuple[Path, Path]:
    """Two rankings whose ids overlap: the second's mostly among the first's, plus a few of its own."""
    folder.mkdir(parents=True, exist_ok=True)
    first, second = folder / "a.jsonl", folder / "b.jsonl"
    first.write_bytes(rankings_like(60, n_docs=400, seed=1))
    second.write_bytes(rankings_like(60, n_docs=420, seed=2))  # doc-400 .. doc-419: ids the first may lack
    return first, second


def test_a_vocabulary_against_a_base_is_laid_out_as_documented_and_decodes_only_beside_it():
    """Hand-computed: base vocabulary [b, a]; the ranking holds a, c, b: extra [c], indices 1 2 0."""
    from sidelight.lab.columns import Base, vocabulary

    base_blob = encode(lab_line({"label": "L", "qid": "1", "ids": ["b", "a"], "scores": [2.0, 1.0]}))
    vocab, sha = vocabulary(base_blob)
    assert vocab == ["b", "a"] and sha == __import__("hashlib").sha256(b'["b","a"]').hexdigest()
    data = lab_line({"label": "L", "qid": "2", "ids": ["a", "c", "b"], "scores": [3.0, 2.0, 1.0]})
    blob = encode(data, base=Base("base.jsonl.cols", vocab, sha))
    s = streams(blob)
    assert json.loads(s["vocab"]) == {"base": "base.jsonl.cols", "vocab_sha256": sha, "extra": ["c"]}
    assert s["ids"] == bytes([1, 2, 0]) + bytes(9)
    assert vocabulary(blob) is None  # a ranking with a base is never one
    looked = []
    assert decode(blob, lambda name, h: looked.append((name, h)) or vocab) == data
    assert looked == [("base.jsonl.cols", sha)]
    with pytest.raises(ColumnsError, match="encoded against base.jsonl.cols, and no base was given"):
        decode(blob)


def test_compress_file_encodes_against_a_base_when_smaller_and_refuses_a_missing_or_changed_base(tmp_path):
    from sidelight.lab.packed import base_of, vocabulary_base

    first, second = _two_rankings(tmp_path / "rankings")
    own = len(encode(second.read_bytes()))
    assert vocabulary_base([second, first]) in (first, second)
    assert compress_file(first) and base_of(first) is not None
    assert compress_file(second, base=base_of(first))
    stored = packed(second, COLS)
    assert streams(stored.read_bytes())["vocab"].startswith(b'{"base":"a.jsonl.cols"')
    assert stored.stat().st_size < own  # the vocabulary the base holds is not stored again
    assert read_bytes(second) == rankings_like(60, n_docs=420, seed=2)
    assert base_of(second) is None and not compress_file(second, base=base_of(first))  # final: nothing to do
    # the base replaced by a ranking with another vocabulary, then removed: refused in one line, naming both
    saved = packed(first, COLS).read_bytes()
    packed(first, COLS).write_bytes(encode(rankings_like(5, depth=20, n_docs=50, seed=9)))
    with pytest.raises(PackedError, match=r"b\.jsonl\.cols is not a readable columns stream .*a\.jsonl\.cols, "
                                          r"the ranking it was encoded against, holds another vocabulary") as e:
        read_bytes(second)
    assert "\n" not in str(e.value)
    packed(first, COLS).unlink()
    with pytest.raises(PackedError, match=r"the ranking it was encoded against, a\.jsonl\.cols, is missing"):
        read_bytes(second)
    packed(first, COLS).write_bytes(saved)
    assert read_bytes(second) == rankings_like(60, n_docs=420, seed=2)


def test_an_own_vocabulary_is_re_encoded_against_the_base_in_place(tmp_path):
    from sidelight.lab.packed import base_of

    first, second = _two_rankings(tmp_path / "rankings")
    assert compress_file(first) and compress_file(second)  # each with its own vocabulary, as committed runs were
    before = packed(second, COLS).stat().st_size
    assert compress_file(second, base=base_of(first))  # rebased: smaller, the same bytes
    assert packed(second, COLS).stat().st_size < before and read_bytes(second) == rankings_like(60, n_docs=420, seed=2)
    assert not compress_file(first, base=base_of(first))  # never its own base


def test_compressing_a_run_encodes_each_stage_against_its_widest_ranking_and_keeps_its_audit(tmp_path):
    from sidelight.lab.packed import base_of, ranking_files, vocabulary_base

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(runner, "implementation_hash", lambda: IMPL)
        run = toy_run(tmp_path)
        plain = audit(run)
        widest = {}
        for stage in ("dev", "test"):
            logical_files = ranking_files(run / stage / "rankings")
            ids = {p: {i for line in p.read_bytes().splitlines() for i in json.loads(line)["ids"]} for p in logical_files}
            widest[stage] = max(sorted(ids), key=lambda p: len(ids[p]))  # the oracle: most distinct ids, first by name
            assert vocabulary_base(logical_files) == widest[stage]
        compress_run(run)
        for stage in ("dev", "test"):
            assert base_of(widest[stage]) is not None  # it keeps its own vocabulary
            for p in sorted((run / stage / "rankings").glob("*.cols")):
                vocab = json.loads(streams(p.read_bytes())["vocab"])
                assert isinstance(vocab, list) or vocab["base"] == packed(widest[stage], COLS).name
        verify_run(run)
        assert audit(run) == plain
        assert compress_run(run)["files"] == 0  # nothing left to convert
