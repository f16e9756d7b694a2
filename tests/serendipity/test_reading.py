"""The blind reading (`lab read-pairs` / `lab score-pairs`): packet mechanics, freeze, first reading, and
the Wilson interval against scipy's."""

import json

import numpy as np
import pytest
from scipy.stats import binomtest

from sidelight.cli import main
from sidelight.errors import InputError
from sidelight.serendipity import reading as R
from sidelight.serendipity.verdicts import wilson

from tests.serendipity.test_reveal import FakeEmbedder, _planted_ser, index, plant  # noqa: F401  (fixture)


@pytest.mark.parametrize("k,n", [(0, 15), (3, 15), (6, 15), (15, 15), (1, 2), (24, 60), (59, 60)])
def test_wilson_matches_scipy(k, n):
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    lo, hi = wilson(k, n)
    assert abs(lo - ci.low) < 1e-4 and abs(hi - ci.high) < 1e-4


def _ser_with_placebo(index):  # noqa: F811
    ser = _planted_ser(index)
    ser.meta["chunks"] = {"id": "planted"}
    p = ser.certificate.pairs
    off = ser.chunks.offsets(len(index.corpus))
    # two placebo passes (the synthetic certificate has few): records 2-44 and 6-70 via general marker 100
    ser.certificate.placebo = {"a": np.array([2, 6]), "b": np.array([44, 70]), "marker": np.array([100, 100]),
                               "chunk_a": np.array([off[2], off[6]]), "chunk_b": np.array([off[44], off[70]]),
                               "draw": np.array([0, 1]), "guard": np.array(["", ""])}
    assert len(p["a"]) >= 2
    return ser


def _judge(path, key, rule):
    path.write_text("".join(json.dumps({"item": r["item"], "judgement": rule(r)}) + "\n" for r in key))
    return path


def test_packet_is_blind_frozen_and_written_once(index, tmp_path):  # noqa: F811
    ser = _ser_with_placebo(index)
    f = R.write_packet(ser, tmp_path / "p", n=8, seed=3)
    lines = (tmp_path / "p" / "packet.jsonl").read_text().splitlines()
    key = json.loads((tmp_path / "p" / "key.json").read_text())
    assert len(lines) == 8 and [r["item"] for r in key] == list(range(1, 9))
    assert sorted(r["source"] for r in key) == sorted(R.SOURCES * 2)
    items = [json.loads(x) for x in lines]
    assert set(items[0]) == {"item", "marker_label", "a", "b"} and items[0]["a"]["passage"]
    blob = "\n".join(lines)
    assert not any(s in blob for s in R.SOURCES) and not any(f'"{r["a"]}"' in blob for r in key)
    with pytest.raises(InputError, match="already holds a frozen packet"):
        R.write_packet(ser, tmp_path / "p", n=8, seed=3)
    R.write_packet(ser, tmp_path / "q", n=8, seed=3)
    assert (tmp_path / "q" / "packet.jsonl").read_bytes() == (tmp_path / "p" / "packet.jsonl").read_bytes()
    assert json.loads((tmp_path / "q" / "freeze.json").read_text())["key_sha256"] == f["key_sha256"]
    with pytest.raises(InputError, match="multiple of 4"):
        R.write_packet(ser, tmp_path / "r", n=6)


def test_a_short_source_is_refused_or_read_whole(index, tmp_path):  # noqa: F811
    """The synthetic certificate has two placebo passes: 3 per source is refused, and with take_available
    the packet holds 3 + 2 + 3 + 3 = 11 pairs, both placebo passes among them, and scores as 11."""
    ser = _ser_with_placebo(index)
    with pytest.raises(InputError, match="only 2 placebo pair"):
        R.write_packet(ser, tmp_path / "s", n=12, seed=3)
    f = R.write_packet(ser, tmp_path / "t", n=12, seed=3, take_available=True)
    key = json.loads((tmp_path / "t" / "key.json").read_text())
    assert f["pairs"] == 11 and f["asked"] == 12 and f["per_source"]["placebo"] == 2 and len(key) == 11
    assert sorted((r["a"], r["b"]) for r in key if r["source"] == "placebo") == [("r02", "r44"), ("r06", "r70")]
    score = R.score_packet(tmp_path / "t", _judge(tmp_path / "t.jsonl", key, lambda r: "whale"))
    assert score["by_source"]["placebo"]["n"] == 2 and sum(v["n"] for v in score["by_source"].values()) == 11


def test_score_reveals_rates_and_keeps_the_first_reading(index, tmp_path):  # noqa: F811
    ser = _ser_with_placebo(index)
    R.write_packet(ser, tmp_path / "p", n=8, seed=3)
    key = json.loads((tmp_path / "p" / "key.json").read_text())
    # certified: both useful; top-kinship: one whale one arguable; the rest whales
    rule = {"certified": lambda r: "useful", "top-kinship": lambda r: "whale" if r["item"] % 2 else "arguable"}
    seen: dict = {}

    def judge(r):
        j = rule.get(r["source"], lambda r: "whale")(r)
        seen.setdefault(r["source"], []).append(j)
        return j

    js = _judge(tmp_path / "j.jsonl", key, judge)
    s = R.score_packet(tmp_path / "p", js)
    c = s["by_source"]["certified"]
    assert c["n"] == 2 and c["useful"] == 2 and c["useful_rate"] == 1.0 and c["whale_rate"] == 0.0
    assert c["useful_wilson95"] == list(wilson(2, 2))
    k = s["by_source"]["top-kinship"]
    assert k["whale"] == seen["top-kinship"].count("whale") and k["arguable"] == seen["top-kinship"].count("arguable")
    assert s["goal"]["certified useful >= 40%"] and s["goal"]["certified whales <= 25%"]
    assert s["by_source"]["placebo"]["whale"] == 2
    # the same reading again: accepted (same file); a different one: refused
    assert R.score_packet(tmp_path / "p", js)["by_source"] == s["by_source"]
    other = _judge(tmp_path / "j2.jsonl", key, lambda r: "useful")
    with pytest.raises(InputError, match="first reading"):
        R.score_packet(tmp_path / "p", other)
    # a bad file: one line error
    (tmp_path / "bad.jsonl").write_text('{"item": 1, "judgement": "maybe"}\n')
    with pytest.raises(InputError, match="judgement must be one of"):
        R.score_packet(tmp_path / "p", tmp_path / "bad.jsonl")
    (tmp_path / "short.jsonl").write_text('{"item": 1, "judgement": "useful"}\n')
    R.write_packet(ser, tmp_path / "p2", n=8, seed=3)
    with pytest.raises(InputError, match="missing"):
        R.score_packet(tmp_path / "p2", tmp_path / "short.jsonl")
    # a packet edited after the freeze is refused
    (tmp_path / "p2" / "packet.jsonl").write_text("{}\n")
    with pytest.raises(InputError, match="edited"):
        R.score_packet(tmp_path / "p2", js)


def test_cli_read_and_score_pairs(index, tmp_path, capsys, monkeypatch):  # noqa: F811
    plant(monkeypatch)
    assert main(["certify", str(index.path), "--kinship-bins", "2", "--budget", "12", "-q", "--no-guards"]) == 0
    capsys.readouterr()
    out = tmp_path / "packet"
    assert main(["lab", "read-pairs", str(index.path), "-o", str(out), "--pairs", "4", "--seed", "1"]) == 0
    assert "wrote 4 blinded pairs" in capsys.readouterr().out
    key = json.loads((out / "key.json").read_text())
    js = _judge(tmp_path / "j.jsonl", key, lambda r: "useful" if r["source"] == "certified" else "whale")
    assert main(["lab", "score-pairs", str(out), str(js), "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["by_source"]["certified"]["useful"] == 1 and body["by_source"]["placebo"]["whale"] == 1
    assert main(["lab", "read-pairs", str(index.path), "-o", str(out), "--pairs", "4"]) == 2
    assert "already holds a frozen packet" in capsys.readouterr().err
    assert main(["lab", "read-pairs", str(index.path), "-o", str(tmp_path / "x"), "--pairs", "2"]) == 2
