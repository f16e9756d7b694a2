"""A run's result.json, selection.json, figures/*.svg and report.html stored as xz (`sidelight lab compress`), as its
rankings are: the records stay as written (sha256 of the uncompressed bytes), the chain, the audit and the
README-figure lookup read the compressed run exactly as the plain one, `lab report` re-renders it byte for
byte, and a damaged or doubled form is refused in one line. The oracles: the plain run the lab wrote (its
bytes, its audit, its report) and the system `xz`, which must decode every stored form to those bytes."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from sidelight.cli import main
from sidelight.lab import runner
from sidelight.lab.audit import audit
from sidelight.lab.committed import compress_run, stored_value
from sidelight.lab.packed import (PackedError, compressible, exists, forms, packed, read_bytes, read_json, recorded_name,
                                  xz_bytes)
from sidelight.lab.record import REPORT_RECORD, RefusedError, verify_report, verify_run
from sidelight.lab.report import write_report
from sidelight.lab.runner import compare_runs

from tests.lab.test_runner import make_lab

IMPL = ("0" * 64, {})  # other people edit the package while tests run: pin the implementation hash
XZ = shutil.which("xz")
JSONS = ("dev/result.json", "dev/selection.json", "test/result.json")


@pytest.fixture(autouse=True)
def pinned_implementation(monkeypatch):
    monkeypatch.setattr(runner, "implementation_hash", lambda: IMPL)


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    """A toy run through freeze, dev, test and report (`lab all`), plain as the lab writes it."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(runner, "implementation_hash", lambda: IMPL)
        root = tmp_path_factory.mktemp("packedjson")
        proto = make_lab(root / "lab")
        assert main(["lab", "all", str(proto), "-o", str(root / "run")]) == 0
    return root / "run"


def files(run):
    """Every file of the run (relative name -> bytes), the writer lock's files left out."""
    return {p.relative_to(run).as_posix(): p.read_bytes() for p in sorted(run.rglob("*"))
            if p.is_file() and not p.name.startswith(".lock")}


@pytest.fixture
def compressed(done, tmp_path):
    run = shutil.copytree(done, tmp_path / "run")
    compress_run(run)
    return run


def test_which_files_have_a_compressed_form():
    # stage JSON directly in dev/ or test/, figures' svg, rankings, the report's page: yes;
    # records, timings, png, report.md (which shows the PNGs): no
    assert [compressible(r) for r in ("dev/result.json", "test/result.json", "dev/selection.json",
                                      "figures/method-bars.svg", "test/rankings/bm25.jsonl", "report.html")] == [True] * 6
    assert [compressible(r) for r in ("result.json", "dev/record.json", "test/timings.json", "freeze.json",
                                      "figures/method-bars.png", "report.md",
                                      "dev/rankings/result.json")] == [False] * 7
    assert recorded_name("report.html.xz") == "report.html"
    assert recorded_name("dev/result.json.xz") == "dev/result.json"
    assert recorded_name("figures/a.svg.xz") == "figures/a.svg"
    for other in ("dev/result.json.gz", "dev/result.json.cols", "figures/a.png.xz", "freeze.json.xz"):
        assert recorded_name(other) == other  # not a form the lab stores: an unrecorded file


def test_a_compressed_run_keeps_its_records_and_its_audit_and_reads_the_same(done, compressed):
    run, before = compressed, files(done)
    svgs = sorted(n for n in before if n.endswith(".svg"))
    assert len(svgs) >= 2
    after = files(run)
    for rel in (*JSONS, *svgs, "report.html"):  # each in exactly one form, xz, decoding to the bytes the lab wrote
        assert rel not in after and [p.name for p in forms(run / rel)] == [packed(run / rel).name]
        assert read_bytes(run / rel) == before[rel]
        if XZ:
            assert subprocess.run([XZ, "-dc", str(packed(run / rel))], capture_output=True, check=True).stdout == before[rel]
    for rel in ("freeze.json", "dev/record.json", "test/record.json", REPORT_RECORD, "report.md", "test/timings.json"):
        if rel in before:
            assert after[rel] == before[rel], rel  # no record rewritten; the report as written
    assert all(after[n] == before[n] for n in before if n.endswith(".png"))
    verify_run(run)
    assert verify_report(run) is not None
    plain, packed_audit = audit(done), audit(run)
    assert packed_audit == plain and plain["agree"] and plain["checks"] > 0
    assert read_json(run / "test" / "result.json") == json.loads(before["test/result.json"])
    key = "methods/bm25/overall/mrr@10"
    assert stored_value(run, key) == stored_value(done, key) == json.loads(before["test/result.json"])["methods"]["bm25"]["overall"]["mrr@10"]
    assert compare_runs(done, run) == ([], [])
    assert compress_run(run)["files"] == 0  # nothing left to convert
    assert sum(len(b) for b in files(run).values()) < sum(len(b) for b in before.values())


def test_a_compressed_run_re_renders_its_report_byte_for_byte(done, compressed):
    run = compressed
    write_report(run)
    before, after = files(done), files(run)
    report = [n for n in before if n.startswith("figures/") or n in ("report.md", "report.html", REPORT_RECORD)]
    assert {n: after.get(n) for n in report} == {n: before[n] for n in report}  # plain again, the same bytes
    assert not list(run.glob("figures/*.xz"))  # the stale compressed figures went with the re-render
    assert not packed(run / "report.html").exists()  # and the stale compressed page
    assert audit(run)["agree"]
    assert main(["lab", "report", str(run)]) == 0  # the CLI too
    assert all(packed(run / rel).is_file() for rel in JSONS)


def test_a_damaged_result_json_xz_is_refused_in_one_line(compressed, capsys):
    xz = packed(compressed / "test" / "result.json")
    xz.write_bytes(xz.read_bytes()[:-9])
    with pytest.raises(RefusedError, match=r"test/result\.json\.xz is not a readable xz stream") as e:
        verify_run(compressed)
    assert "\n" not in str(e.value)
    with pytest.raises(PackedError, match="not a readable xz stream"):
        read_json(compressed / "test" / "result.json")
    assert main(["lab", "audit", str(compressed)]) == 2
    err = capsys.readouterr().err
    assert "result.json.xz is not a readable xz stream" in err and len(err.strip().splitlines()) == 1
    assert main(["lab", "compress", str(compressed)]) == 2  # never converted further
    assert main(["lab", "report", str(compressed)]) == 2


def test_an_edited_result_json_xz_or_figure_is_refused_naming_it(compressed):
    path = compressed / "dev" / "result.json"
    data = json.loads(read_bytes(path))
    data["methods"]["bm25"]["overall"]["mrr@10"] = 1.0
    packed(path).write_bytes(xz_bytes(json.dumps(data).encode()))  # an intact xz stream, other bytes
    with pytest.raises(RefusedError, match=r"dev/result\.json\.xz does not match the hash recorded by the dev stage"):
        verify_run(compressed)
    svg = sorted(compressed.glob("figures/*.svg.xz"))[0]
    svg.write_bytes(xz_bytes(read_bytes(svg.with_suffix("")).replace(b"<svg", b"<svg data-x='1'", 1)))
    with pytest.raises(RefusedError, match=rf"{svg.name} does not match the hash recorded by the report stage"):
        verify_report(compressed)


def test_two_forms_that_differ_are_refused_and_two_that_agree_are_finished(done, compressed):
    path = compressed / "test" / "result.json"
    original = (done / "test" / "result.json").read_bytes()
    path.write_bytes(original.replace(b"\"bm25\"", b"\"BM25\"", 1))  # a plain form beside the xz, edited
    with pytest.raises(RefusedError, match=r"test/result\.json does not match the hash recorded"):
        verify_run(compressed)
    with pytest.raises(PackedError, match=r"stored as both result\.json and result\.json\.xz, which differ"):
        read_json(path)
    assert main(["lab", "compress", str(compressed)]) == 2
    # a conversion stopped after the rename (both forms, equal) and another before it (a temporary file)
    path.write_bytes(original)
    stale = path.with_name(f".{packed(path).name}.tmp")
    stale.write_bytes(b"half an xz stream")
    with pytest.raises(RefusedError, match=r"\.result\.json\.xz\.tmp is not in the test stage's record"):
        verify_run(compressed)
    stale.unlink()
    verify_run(compressed)  # both forms match the record
    assert read_json(path) == json.loads(original)
    stale.write_bytes(b"half an xz stream")
    assert compress_run(compressed)["files"] == 1  # the rerun finishes it
    assert not path.exists() and not stale.exists() and exists(path)
    verify_run(compressed)


def test_an_unrecognised_compressed_form_is_an_unrecorded_file(compressed):
    (compressed / "dev" / "result.json.gz").write_bytes(b"\x1f\x8b")
    with pytest.raises(RefusedError, match=r"dev/result\.json\.gz is not in the dev stage's record"):
        verify_run(compressed)
