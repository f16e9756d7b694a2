import json

from sidelight.cli import main
from sidelight.serendipity.store import Serendipity

from .test_reveal import FakeEmbedder, index  # noqa: F401  (fixture)


def test_certify_and_verdict_cli(index, tmp_path, capsys, monkeypatch):  # noqa: F811
    out = tmp_path / "cert.json"
    rc = main(["certify", str(index.path), "--json", str(out), "--width", "32", "-k", "4", "--epochs", "2",
               "--placebo-draws", "1", "--budget", "12", "-q"])
    body = json.loads(out.read_text())
    for key in ("target_passes", "placebo_passes", "placebo_mean", "rule", "verdict"):
        assert key in body
    assert rc == (0 if body["verdict"] == "pass" else 1)
    text = capsys.readouterr().out
    assert "verdict" in text and "placebo" in text
    rc = main(["connections", str(index.path), "topic0 item1", "--dial", "2"])
    err = capsys.readouterr().err
    if body["verdict"] == "fail":
        assert rc == 2 and "FAILED its placebo test" in err
    rc = main(["verdict", str(index.path), "--pair", "r03", "r57", "--marker", "f7", "--verdict", "whale", "--json"])
    assert rc == 0
    assert json.loads(capsys.readouterr().out)["verdict"]["verdict"] == "not useful"
    rc = main(["reveal", str(index.path), "nope", "--answer-hash", "0" * 64])
    assert rc == 2
