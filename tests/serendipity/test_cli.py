import hashlib
import json

import pytest

from sidelight.cli import main

from tests.serendipity.synth import PLANTED_PAIRS
from tests.serendipity.test_reveal import FakeEmbedder, _planted_ser, index, plant  # noqa: F401  (fixture)


def test_certify_passes_on_planted_connections(index, tmp_path, capsys, monkeypatch):  # noqa: F811
    plant(monkeypatch)
    out = tmp_path / "cert.json"
    rep = tmp_path / "report"
    # --no-guards: the synthetic records' words are shared by whole topics, so no two share a specific
    # word and the "one shared word" guard would rule every pair out (the guards: test_guards.py)
    rc = main(["certify", str(index.path), "-o", str(out), "--kinship-bins", "2", "--budget", "12", "-q", "--no-guards",
               "--report", str(rep)])
    body = json.loads(out.read_text())
    md = (rep / "report.md").read_text()
    assert "Verdict: PASS" in md and "| placebo / target |" in md and "r03 Record 3" in md
    assert (rep / "figures" / "evidence-by-kinship-bin.svg").exists() and "<svg" in (rep / "report.html").read_text()
    for key in ("target_passes", "placebo_passes", "placebo_mean", "placebo_target_ratio", "rule", "verdict"):
        assert key in body
    assert rc == 0 and body["verdict"] == "pass" and body["target_passes"] >= len(PLANTED_PAIRS)
    text = capsys.readouterr().out
    assert "PASS" in text and "placebo / target" in text
    rc = main(["connections", str(index.path), "topic0 item1 record 3", "--dial", "12", "--json"])
    assert rc == 0 and json.loads(capsys.readouterr().out)["seating"]["offered"] == 12  # seating: test_reveal
    rc = main(["verdict", str(index.path), "--pair", "r03", "r57", "--marker", "f199", "--verdict", "whale", "--json"])
    assert rc == 0
    assert json.loads(capsys.readouterr().out)["verdict"]["verdict"] == "not useful"
    rc = main(["reveal", str(index.path), "nope", "--answer-hash", "0" * 64])
    assert rc == 2
    # with the guards (the default): the report counts what each removed, target and placebo
    rep2 = tmp_path / "report-guarded"
    main(["certify", str(index.path), "-o", str(out), "--kinship-bins", "2", "--budget", "12", "-q", "--report", str(rep2)])
    g = json.loads(out.read_text())["summary"]["guards"]
    md = (rep2 / "report.md").read_text()
    assert g["target_passes_before_guards"] == body["target_passes"]
    assert sum(g["target"].values()) == body["target_passes"] - json.loads(out.read_text())["target_passes"]
    assert "## Whale guards" in md and f"| one shared word | {g['target']['one shared word']} |" in md


def test_certify_fails_without_them_and_seating_refuses(index, tmp_path, capsys, monkeypatch):  # noqa: F811
    plant(monkeypatch, planted={})
    rc = main(["certify", str(index.path), "--json", "--kinship-bins", "2", "--budget", "12", "-q"])
    body = json.loads(capsys.readouterr().out)
    assert rc == 1 and body["verdict"] == "fail" and body["target_passes"] == 0
    rc = main(["connections", str(index.path), "topic0 item1", "--dial", "2"])
    assert rc == 2 and "FAILED its placebo test" in capsys.readouterr().err
    rc = main(["certify", str(index.path), "-q", "--kinship-bins", "2", "--budget", "12", "--report", str(tmp_path / "r"),
               "--proxies", str(tmp_path / "missing.json")])
    assert rc == 2 and "missing.json: not a readable bench/certify_useful.py JSON" in capsys.readouterr().err


# ---- one CLI vocabulary (issue 10, item 5) ---------------------------------------------------------------------
CERT = ["--width", "32", "--epochs", "2", "--placebo-draws", "1", "--budget", "12", "-q"]


def _warnings(err):
    return [x for x in err.splitlines() if x.startswith("sidelight: warning: ")]


def test_certify_output_sae_k_and_json_on_stdout(index, tmp_path, capsys):  # noqa: F811
    out = tmp_path / "new.json"
    rc = main(["certify", str(index.path), "-o", str(out), "--sae-k", "4", *CERT])
    cap = capsys.readouterr()
    assert _warnings(cap.err) == [] and "verdict" in cap.out  # the tables still print; the file is written
    body = json.loads(out.read_text())
    assert body["sae"]["k"] == 4 and rc == (0 if body["verdict"] == "pass" else 1)
    # bare --json: the same summary on stdout, no tables
    assert main(["certify", str(index.path), "--json", "--sae-k", "4", *CERT]) == rc
    cap = capsys.readouterr()
    assert _warnings(cap.err) == [] and json.loads(cap.out) == body
    # the old spellings (scripts from earlier issues): --json OUT and -k still work, each with one warning
    old = tmp_path / "old.json"
    assert main(["certify", str(index.path), "--json", str(old), "-k", "4", *CERT]) == rc
    warned = _warnings(capsys.readouterr().err)
    assert len(warned) == 2 and warned[0].startswith("sidelight: warning: --json PATH is deprecated; use -o/--output")
    assert warned[1] == "sidelight: warning: -k is deprecated; use --sae-k"
    assert json.loads(old.read_text()) == body


@pytest.fixture
def planted(index, monkeypatch):  # noqa: F811
    """connections/reveal/verdict through the CLI over the planted (passing) certificate."""
    from sidelight.cli import serendipity_cmd

    ser = _planted_ser(index)
    monkeypatch.setattr(serendipity_cmd, "_ser", lambda path, build=False, args=None: ser)
    return index


def test_connections_reveal_verdict_json_and_top_k(planted, capsys):
    idx = str(planted.path)
    res = json.loads(_ok(capsys, ["connections", idx, "topic0 item1 record 3", "--dial", "3", "--json"]))
    assert res["trace_id"] and res["passages"]
    h = hashlib.sha256(b"my answer").hexdigest()
    shown = json.loads(_ok(capsys, ["reveal", idx, res["trace_id"], "--answer-hash", h, "--json"]))
    assert shown["panel"].startswith("seating:")
    both = json.loads(_ok(capsys, ["connections", idx, "x", "--trace", res["trace_id"], "--answer-hash", h, "--json"]))
    assert both["reveal"]["panel"] == shown["panel"]
    v = json.loads(_ok(capsys, ["verdict", idx, "--pair", "r03", "r57", "--marker", "f7", "--verdict", "petunia",
                                "--json"]))
    assert v["verdict"]["verdict"] == "useful"
    # -k/--top-k: passages printed in the table; --show still works, with a warning
    new = _ok(capsys, ["connections", idx, "topic0 item1 record 3", "-k", "1", "--seed", "5"])
    assert "showing 1" in new
    assert main(["connections", idx, "topic0 item1 record 3", "--show", "1", "--seed", "5"]) == 0
    cap = capsys.readouterr()
    assert _warnings(cap.err) == ["sidelight: warning: --show is deprecated; use -k/--top-k"]
    assert "showing 1" in cap.out


def _ok(capsys, argv) -> str:
    assert main(argv) == 0
    cap = capsys.readouterr()
    assert _warnings(cap.err) == [], cap.err
    return cap.out
