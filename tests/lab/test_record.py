"""The run's record: every stage hashes what it writes; later stages, audit, report and reproduce refuse
a run whose files no longer match, naming the file. One tamper test per lab file kind."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from sidelight.cli import main
from sidelight.lab import runner
from sidelight.lab.audit import audit
from sidelight.lab.record import RECORD_NAME, sealed, sha256_of, verify_run
from sidelight.lab.report import write_report
from sidelight.lab.runner import RefusedError, freeze, reproduce, run_split
from sidelight.store.lock import HOLDER_NAME, LOCK_NAME, LockedError

from tests.lab.test_runner import make_lab

IMPL = ("0" * 64, {})  # other people edit the package while tests run: pin the implementation hash


@pytest.fixture(autouse=True)
def pinned_implementation(monkeypatch):
    monkeypatch.setattr(runner, "implementation_hash", lambda: IMPL)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """(protocol, a run after dev, a run after test), built once; tests work on copies."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(runner, "implementation_hash", lambda: IMPL)
        root = tmp_path_factory.mktemp("record")
        proto = make_lab(root / "lab")
        dev, full = root / "dev-run", root / "full-run"
        for out in (dev, full):
            freeze(proto, out)
            run_split(proto, "dev", out)
        run_split(proto, "test", full)
    return proto, dev, full


def copy(src, tmp_path, name="run"):
    return shutil.copytree(src, tmp_path / name)


def reseal(run, stage: str) -> None:
    """What a careful forger does: rehash the stage's files into its record, dropping deleted ones
    (freeze: its own hash)."""
    if stage == "freeze":
        path = run / "freeze.json"
        path.write_text(json.dumps(sealed(json.loads(path.read_text())), indent=1))
        return
    path = run / stage / RECORD_NAME
    rec = json.loads(path.read_text())
    rec["files"] = {f: sha256_of(run / f) for f in rec["files"] if (run / f).is_file()}
    path.write_text(json.dumps(sealed(rec), indent=1))


def edit_json(path, change) -> None:
    obj = json.loads(path.read_text())
    change(obj)
    path.write_text(json.dumps(obj, indent=1))


def test_every_stage_records_what_it_wrote(runs):
    _, _, full = runs
    chain = verify_run(full)
    frozen, dev, test = chain["freeze"], chain["dev"], chain["test"]
    assert len(frozen["record_sha256"]) == 64
    assert dev["previous"] == {"freeze.json": sha256_of(full / "freeze.json")}
    assert test["previous"] == {"dev/record.json": sha256_of(full / "dev" / RECORD_NAME),
                                "dev/selection.json": sha256_of(full / "dev" / "selection.json")}
    written = {p.relative_to(full).as_posix() for p in (full / "dev").rglob("*") if p.is_file()}
    assert set(dev["files"]) == written - {"dev/record.json"}
    assert {"dev/selection.json", "dev/result.json", "dev/rankings/lab-test-jitter.jsonl"} <= set(dev["files"])
    assert set(test["files"]) == {"test/result.json", *(f"test/rankings/{m}.jsonl" for m in
                                                        ("bm25", "tfidf", "lab-test-jitter", "rrf-lexical"))}
    assert all(sha256_of(full / f) == h for f, h in {**dev["files"], **test["files"]}.items())
    assert (full / LOCK_NAME).exists() and (full / HOLDER_NAME).exists()  # the writers held the lock
    assert audit(full)["agree"]


def test_edited_selection_refuses_the_test_run(runs, tmp_path):
    proto, dev, _ = runs
    out = copy(dev, tmp_path)
    edit_json(out / "dev" / "selection.json", lambda s: s["selected"]["lab-test-jitter"].update(w=2.0))
    with pytest.raises(RefusedError, match=r"dev/selection\.json does not match the hash recorded by the dev stage"):
        run_split(proto, "test", out)
    assert main(["lab", "run", str(proto), "--split", "test", "-o", str(out)]) == 2
    assert not (out / "test").exists()


@pytest.mark.parametrize("stage", ["before dev", "after dev", "after test"])
def test_edited_freeze_method_list_is_refused(runs, tmp_path, stage):
    proto, dev, full = runs
    if stage == "before dev":
        out = tmp_path / "run"
        freeze(proto, out)
    else:
        out = copy(dev if stage == "after dev" else full, tmp_path)
    edit_json(out / "freeze.json", lambda f: f.update(methods=["bm25", "lab-test-jitter"]))  # three controls fewer
    if stage == "before dev":
        with pytest.raises(RefusedError, match=r"freeze\.json does not match the hash recorded by the freeze stage"):
            run_split(proto, "dev", out)
        assert not (out / "dev").exists()
    elif stage == "after dev":
        with pytest.raises(RefusedError, match=r"freeze\.json does not match"):
            run_split(proto, "test", out)
        reseal(out, "freeze")  # its own hash redone: the dev stage's record still names the old file
        with pytest.raises(RefusedError, match=r"freeze\.json does not match the hash recorded by the dev stage"):
            run_split(proto, "test", out)
        assert not (out / "test").exists()
    else:
        for call in (audit, write_report):
            with pytest.raises(RefusedError, match=r"freeze\.json does not match"):
                call(out)
        assert not (out / "report.md").exists()


def test_deleted_dev_rankings_of_the_selected_setting_are_refused(runs, tmp_path):
    proto, dev, full = runs
    out = copy(dev, tmp_path)
    assert json.loads((out / "dev" / "selection.json").read_text())["selected"]["lab-test-jitter"]
    (out / "dev" / "rankings" / "lab-test-jitter.jsonl").unlink()
    with pytest.raises(RefusedError, match=r"dev/rankings/lab-test-jitter\.jsonl is missing"):
        run_split(proto, "test", out)
    assert not (out / "test").exists()
    done = copy(full, tmp_path, "done")
    (done / "dev" / "rankings" / "lab-test-jitter.jsonl").unlink()
    for call in (audit, write_report):
        with pytest.raises(RefusedError, match=r"dev/rankings/lab-test-jitter\.jsonl is missing"):
            call(done)


def test_deleted_test_rankings_refuse_report_and_audit(runs, tmp_path):
    _, _, full = runs
    out = copy(full, tmp_path)
    (out / "test" / "rankings" / "tfidf.jsonl").unlink()
    for call in (write_report, audit):
        with pytest.raises(RefusedError, match=r"test/rankings/tfidf\.jsonl is missing"):
            call(out)
    assert main(["lab", "report", str(out)]) == 2 and main(["lab", "audit", str(out)]) == 2
    assert not (out / "report.md").exists()
    reseal(out, "test")  # dropped from the record as well: still missing for a setting of the result
    with pytest.raises(RefusedError, match=r"test/rankings/tfidf\.jsonl is missing: the test rankings of setting"):
        audit(out)


def test_edited_test_ranking_refuses_audit_and_report(runs, tmp_path):
    _, _, full = runs
    out = copy(full, tmp_path)
    path = out / "test" / "rankings" / "tfidf.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    rows[0]["scores"][-1] *= 0.5  # metrics unchanged: the recomputation alone would say "all agree"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for call in (audit, write_report):
        with pytest.raises(RefusedError, match=r"test/rankings/tfidf\.jsonl does not match the hash recorded by "
                                               r"the test stage"):
            call(out)
    assert main(["lab", "audit", str(out)]) == 2


def test_unrecorded_rankings_file_is_refused(runs, tmp_path):
    _, _, full = runs
    out = copy(full, tmp_path)
    src = (out / "test" / "rankings" / "bm25.jsonl").read_text()
    (out / "test" / "rankings" / "zz-bm25.jsonl").write_text(src)  # would override bm25's rows when read
    with pytest.raises(RefusedError, match=r"test/rankings/zz-bm25\.jsonl is not in the test stage's record"):
        audit(out)


def test_edited_record_is_refused(runs, tmp_path):
    _, _, full = runs
    out = copy(full, tmp_path)
    edit_json(out / "dev" / RECORD_NAME, lambda r: r["files"].update({"dev/result.json": "0" * 64}))
    with pytest.raises(RefusedError, match=r"dev/record\.json does not match the hash recorded by the dev stage"):
        audit(out)
    reseal(out, "dev")  # consistent again within dev, but the test stage recorded the old dev record
    with pytest.raises(RefusedError, match=r"dev/record\.json does not match the hash recorded by the test stage"):
        audit(out)


def test_a_run_without_a_record_is_refused(runs, tmp_path):
    _, _, full = runs
    out = copy(full, tmp_path)
    edit_json(out / "freeze.json", lambda f: f.pop("record_sha256"))
    with pytest.raises(RefusedError, match=r"freeze\.json carries no record_sha256"):
        audit(out)


def test_reproduce_checks_its_source_and_ignores_lock_files(runs, tmp_path):
    proto, _, full = runs
    src = copy(full, tmp_path, "src")
    into = tmp_path / "again"
    into.mkdir()
    (into / LOCK_NAME).write_text("")
    (into / HOLDER_NAME).write_text("{}")
    diffs, _ = reproduce(proto, src, into)
    assert diffs == []
    verify_run(into)
    edit_json(src / "test" / "result.json", lambda r: r["methods"]["bm25"]["overall"].update({"mrr@10": 1.0}))
    with pytest.raises(RefusedError, match=r"test/result\.json does not match the hash recorded by the test stage"):
        reproduce(proto, src, tmp_path / "third")
    assert not (tmp_path / "third").exists()


def test_writers_hold_the_run_lock(runs, tmp_path, monkeypatch):
    proto, dev, _ = runs
    out = copy(dev, tmp_path)
    code = ("import sys, time; from sidelight.store.lock import writer_lock\n"
            "with writer_lock(sys.argv[1]):\n    print('held', flush=True); time.sleep(60)\n")
    holder = subprocess.Popen([sys.executable, "-c", code, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        monkeypatch.setenv("SIDELIGHT_LOCK_TIMEOUT", "0")
        with pytest.raises(LockedError, match="locked by another writer"):
            run_split(proto, "test", out)
        with pytest.raises(LockedError):
            run_split(proto, "dev", out)
    finally:
        holder.kill()
        holder.wait()
    assert not (out / "test").exists()
