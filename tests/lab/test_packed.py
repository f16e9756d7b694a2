"""Rankings stored compressed (`sidelight lab compress`: the columns form, or xz when that is smaller; xz and
gzip, the first runs' forms, still read and converted): the record, the chain and the audit hold unchanged
because hashes are of the uncompressed bytes; a compressed ranking is still tamper-evident; a conversion
stopped halfway leaves a run that verifies. The system `xz` and `gzip` are the independent decoders of those
forms; the bytes the lab wrote are the oracle of the columns form (tests/lab/test_columns.py)."""

from __future__ import annotations

import json
import lzma
import random
import shutil
import subprocess

import pytest

from sidelight.cli import main
from sidelight.lab import runner
from sidelight.lab.audit import audit
from sidelight.lab.committed import compress_run
from sidelight.lab.packed import COLS, GZ, XZ as XZ_SUFFIX, compress_file, forms, gzip_bytes, packed, read_bytes, xz_bytes
from sidelight.lab.record import RECORD_NAME, sha256_of, verify_run
from sidelight.lab.runner import RefusedError, compare_runs, freeze, read_rankings, run_split

from tests.lab.test_runner import make_lab

IMPL = ("0" * 64, {})  # other people edit the package while tests run: pin the implementation hash
JSONS = ("dev/result.json", "dev/selection.json", "test/result.json")  # a run without a report: no figures
GZIP = shutil.which("gzip")
XZ = shutil.which("xz")


@pytest.fixture(autouse=True)
def pinned_implementation(monkeypatch):
    monkeypatch.setattr(runner, "implementation_hash", lambda: IMPL)


def toy_run(root):
    """A completed toy run in `root`/run (plain rankings), its implementation hash pinned."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(runner, "implementation_hash", lambda: IMPL)
        proto = make_lab(root / "lab")
        out = root / "run"
        freeze(proto, out)
        run_split(proto, "dev", out)
        run_split(proto, "test", out)
    return out


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    """A completed toy run (plain rankings), built once; tests work on copies."""
    return toy_run(tmp_path_factory.mktemp("packed"))


def copy(src, tmp_path, name="run"):
    return shutil.copytree(src, tmp_path / name)


def plain_rankings(run):
    return sorted(run.glob("*/rankings/*.jsonl"))


def as_xz(run):
    """Every ranking of `run` stored as xz alone (the form `lab compress` wrote before the columns form)."""
    for plain in plain_rankings(run):
        packed(plain).write_bytes(xz_bytes(plain.read_bytes()))
        plain.unlink()
    return run


def one_compressed_form_each(run, originals):
    """Each ranking is stored in exactly one form, columns or xz, that decodes to the bytes the lab wrote
    (an xz form by the system xz)."""
    for rel, data in originals.items():
        found = forms(run / rel)
        assert len(found) == 1 and found[0].name.endswith((COLS, XZ_SUFFIX)), found
        assert read_bytes(run / rel) == data
        if XZ and found[0].name.endswith(XZ_SUFFIX):
            assert subprocess.run([XZ, "-dc", str(found[0])], capture_output=True, check=True).stdout == data


def test_the_gzip_stream_is_deterministic_and_decodes_with_the_system_gzip():
    data = "".join(json.dumps({"qid": f"q{i}", "ids": [f"d{j}" for j in range(50)]}) + "\n" for i in range(30)).encode()
    a, b = gzip_bytes(data), gzip_bytes(data)
    assert a == b and len(a) < len(data) / 3
    assert a[:2] == b"\x1f\x8b" and a[3] == 0 and a[4:8] == b"\0\0\0\0"  # no name flag, mtime 0
    if GZIP:
        assert subprocess.run([GZIP, "-dc"], input=a, capture_output=True, check=True).stdout == data


def test_the_xz_stream_is_deterministic_and_decodes_with_the_system_xz():
    rng = random.Random(0)  # rankings-like lines: 100 ids of 5,000 per query (xz's gain shows at this size)
    data = "".join(json.dumps({"qid": f"q{i}", "ids": [f"doc{rng.randrange(5000)}" for _ in range(100)]}) + "\n"
                   for i in range(300)).encode()
    a, b = xz_bytes(data), xz_bytes(data)
    assert a == b and a[:6] == b"\xfd7zXZ\x00" and len(a) < len(gzip_bytes(data))
    if XZ:
        assert subprocess.run([XZ, "-dc"], input=a, capture_output=True, check=True).stdout == data


def test_a_run_stored_as_gzip_still_verifies_and_compress_converts_it(full, tmp_path):
    run = copy(full, tmp_path)
    originals = {p.relative_to(run).as_posix(): p.read_bytes() for p in plain_rankings(run)}
    before_audit = audit(run)
    for rel, data in originals.items():  # a run compressed before xz: every ranking as .gz alone
        packed(run / rel, GZ).write_bytes(gzip_bytes(data))
        (run / rel).unlink()
    verify_run(run)
    assert audit(run)["checks"] == before_audit["checks"]
    assert compress_run(run)["files"] == len(originals) + len(JSONS)  # and the stages' JSON files to xz
    assert not list(run.glob("*/rankings/*.gz")) and plain_rankings(run) == []
    one_compressed_form_each(run, originals)
    verify_run(run)
    assert audit(run)["agree"]


def test_compressing_a_run_keeps_its_record_its_rankings_and_its_audit(full, tmp_path):
    run = copy(full, tmp_path)
    originals = {p.relative_to(run).as_posix(): p.read_bytes() for p in plain_rankings(run)}
    records = {s: (run / s / RECORD_NAME).read_bytes() for s in ("dev", "test")}
    before_ranks = read_rankings(run / "test" / "rankings")
    before_audit = audit(run)
    r = compress_run(run)
    assert r["files"] == len(originals) + len(JSONS) and originals and r["after"] < r["before"]
    assert plain_rankings(run) == []
    one_compressed_form_each(run, originals)
    assert {s: (run / s / RECORD_NAME).read_bytes() for s in ("dev", "test")} == records  # no record rewritten
    verify_run(run)
    assert read_rankings(run / "test" / "rankings") == before_ranks
    after_audit = audit(run)
    assert after_audit["agree"] and after_audit["checks"] == before_audit["checks"]
    assert compare_runs(full, run) == ([], [])
    assert compress_run(run)["files"] == 0  # a second pass has nothing left to do


def test_a_conversion_stopped_halfway_still_verifies_and_a_rerun_finishes_it(full, tmp_path):
    run = copy(full, tmp_path)
    first = plain_rankings(run)[0]
    packed(first).write_bytes(xz_bytes(first.read_bytes()))  # the .xz renamed in, the plain file not yet removed
    stale = first.with_name(f".{packed(first).name}.tmp")
    stale.write_bytes(b"half a gzip")  # and another stopped before its rename
    with pytest.raises(RefusedError, match="not in the .* stage's record"):
        verify_run(run)  # a stray temporary file is not part of the run
    stale.unlink()
    verify_run(run)  # both forms of one ranking: each matches the record
    stale.write_bytes(b"half a gzip")
    compress_run(run)
    assert plain_rankings(run) == [] and not stale.exists()
    verify_run(run)


def test_an_edited_compressed_ranking_is_refused_naming_it(full, tmp_path):
    run = as_xz(copy(full, tmp_path))
    xz = run / "test" / "rankings" / "bm25.jsonl.xz"
    rows = [json.loads(x) for x in lzma.decompress(xz.read_bytes()).decode().splitlines()]
    rows[0]["ids"][0], rows[0]["ids"][1] = rows[0]["ids"][1], rows[0]["ids"][0]
    xz.write_bytes(xz_bytes("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()))
    with pytest.raises(RefusedError, match=r"test/rankings/bm25\.jsonl\.xz does not match the hash recorded"):
        verify_run(run)
    with pytest.raises(RefusedError, match=r"bm25\.jsonl\.xz does not match"):
        audit(run)


def test_a_damaged_compressed_ranking_is_refused_in_one_line(full, tmp_path):
    run = as_xz(copy(full, tmp_path))
    xz = run / "dev" / "rankings" / "bm25.jsonl.xz"
    xz.write_bytes(xz.read_bytes()[: len(xz.read_bytes()) // 2])
    with pytest.raises(RefusedError, match=r"bm25\.jsonl\.xz is not a readable xz stream"):
        verify_run(run)


def test_two_forms_that_differ_and_an_unrecorded_packed_file_are_refused(full, tmp_path):
    run = copy(full, tmp_path)
    plain = run / "test" / "rankings" / "tfidf.jsonl"
    packed(plain).write_bytes(xz_bytes(plain.read_bytes() + b"\n"))
    with pytest.raises(RefusedError, match=r"tfidf\.jsonl\.xz does not match"):
        verify_run(run)
    packed(plain).unlink()
    (run / "test" / "rankings" / "zz-bm25.jsonl.xz").write_bytes(xz_bytes(plain.read_bytes()))
    with pytest.raises(RefusedError, match=r"zz-bm25\.jsonl\.xz is not in the test stage's record"):
        verify_run(run)


def test_a_run_that_does_not_match_its_record_is_not_converted(full, tmp_path):
    run = copy(full, tmp_path)
    f = run / "test" / "rankings" / "bm25.jsonl"
    f.write_text(f.read_text().replace('"r', '"x', 1))
    with pytest.raises(RefusedError, match=r"bm25\.jsonl does not match"):
        compress_run(run)
    assert len(plain_rankings(run)) == len(plain_rankings(full))  # nothing was touched
    with pytest.raises(ValueError, match="does not match the hash recorded"):  # the file-level guard too
        compress_file(f, sha256_of(full / "test" / "rankings" / "bm25.jsonl"))


def test_the_cli_compresses_a_folder_of_runs_and_refuses_a_non_run(full, tmp_path, capsys):
    copy(full, tmp_path / "runs", "toy")
    assert main(["lab", "compress", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    assert f"{len(plain_rankings(full)) + len(JSONS)} file(s) compressed now" in out and "the record verifies" in out
    assert main(["lab", "audit", str(tmp_path / "runs")]) == 0
    (tmp_path / "empty").mkdir()
    assert main(["lab", "compress", str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err
    assert "neither a run folder" in err and len(err.strip().splitlines()) == 1
