"""Issue 45 item 6: the report is part of the run's hash chain, and a scored test split is remembered."""

from __future__ import annotations

import re
import shutil

import pytest

from sidelight.cli import main
from sidelight.lab.audit import audit
from sidelight.lab.record import RefusedError, verify_report

from .test_runner import make_lab


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    """A toy lab run through freeze, dev, test and report (`lab all`)."""
    root = tmp_path_factory.mktemp("reported")
    proto = make_lab(root / "lab")
    assert main(["lab", "all", str(proto), "-o", str(root / "run")]) == 0
    return proto, root / "run"


def _copy(run, tmp_path):
    dst = tmp_path / "run"
    shutil.copytree(run, dst)
    return dst


def _bump_a_number(path):
    """Change the first 4-decimal figure in the file (e.g. 0.5312 -> 0.9312): what a hand edit would do."""
    text = path.read_text(encoding="utf-8")
    m = re.search(r"0\.\d{4}", text)
    assert m, path
    path.write_text(text[:m.start()] + "0.9" + text[m.start() + 3:], encoding="utf-8")


def test_an_untouched_report_passes(done):
    _, run = done
    assert verify_report(run) is not None
    assert audit(run)["agree"]


@pytest.mark.parametrize("name", ["report.md", "report.html"])
def test_an_edited_number_in_the_report_is_caught(done, tmp_path, capsys, name):
    run = _copy(done[1], tmp_path)
    _bump_a_number(run / name)
    with pytest.raises(RefusedError, match=re.escape(name)):
        audit(run)
    assert main(["lab", "audit", str(run)]) == 2
    assert "does not match the hash recorded by the report stage" in capsys.readouterr().err
    from sidelight.serve.labview import report_info

    info = report_info(run)
    assert info["available"] is False and "does not match" in info["reason"]


def test_a_served_report_must_match_its_record(done, tmp_path):
    from sidelight.serve.app import create_app
    from sidelight.serve.engine import Service

    from ..serve.conftest import api_client, hand_index

    run = _copy(done[1], tmp_path)
    client = api_client(create_app(Service(hand_index(), lab_dir=run)))
    assert client.get("/lab/report").status_code == 200
    _bump_a_number(run / "report.html")
    r = client.get("/lab/report")
    assert r.status_code == 404 and "does not match" in r.json()["error"]["message"]


def test_a_report_without_a_record_is_refused(done, tmp_path):
    run = _copy(done[1], tmp_path)
    (run / "report.record.json").unlink()
    with pytest.raises(RefusedError, match="not covered by the run's record"):
        verify_report(run)


def test_deleting_test_does_not_allow_a_second_scoring(done, tmp_path, capsys):
    proto, src = done
    run = _copy(src, tmp_path)
    shutil.rmtree(run / "test")
    assert main(["lab", "run", str(proto), "--split", "test", "-o", str(run)]) == 2
    err = capsys.readouterr().err
    assert "already scored" in err and "is gone" in err
    assert not (run / "test").exists()
