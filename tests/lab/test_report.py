"""Report files and figures from a small synthetic run; reader packets round-trip."""

from __future__ import annotations

import json

from sidelight.cli import main
from sidelight.lab.packets import export_packets, score_answers

from tests.lab.test_runner import make_lab


def test_lab_all_writes_report_and_figures(tmp_path):
    proto = make_lab(tmp_path / "lab")
    out = tmp_path / "run"
    assert main(["lab", "all", str(proto), "-o", str(out)]) == 0
    md = (out / "report.md").read_text()
    page = (out / "report.html").read_text()
    for name in ("degree-distribution", "method-bars", "paired-effects"):
        for fmt in ("svg", "png", "pdf"):
            assert (out / "figures" / f"{name}.{fmt}").stat().st_size > 500
    assert "| Method | MRR@10 | Hit@1 | Hit@5 | Hit@10 |" in md
    assert "Every primary change" in md and "Query types" in md and "Lexical overlap" in md
    assert "Rewire reports: not available" in md
    assert page.count("<svg") >= 3 and "<metadata>" not in page
    assert 'src="http' not in page and 'href="http' not in page and "cdn" not in page.lower()
    assert "<script" not in page and "<link" not in page
    assert main(["lab", "run", str(proto), "--split", "test", "-o", str(out)]) == 2


def test_packets_blind_and_score(tmp_path):
    proto = make_lab(tmp_path / "lab")
    out = tmp_path / "run"
    assert main(["lab", "all", str(proto), "-o", str(out)]) == 0
    info = export_packets(out, tmp_path / "pk", k=3, n_families=3)
    items = [json.loads(x) for x in (tmp_path / "pk" / "packets.jsonl").read_text().splitlines()]
    assert len(items) == info["items"] == 6
    assert all("method" not in json.dumps(it) and "intended" not in json.dumps(it) for it in items)
    key = json.loads((tmp_path / "pk" / "key.json").read_text())["items"]
    answers = []
    for it in items:
        k = key[it["item"]]
        quote = " ".join(it["contexts"][0]["text"].split()[:4])
        answers.append({"item": it["item"], "selected_id": k["intended_id"], "quote": quote})
    answers[0]["quote"] = "words that are not there"
    (tmp_path / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    r = score_answers(tmp_path / "pk", tmp_path / "answers.jsonl")
    assert sum(m["intended_selected"] for m in r["by_method"].values()) == 6
    assert sum(m["quote_verbatim"] for m in r["by_method"].values()) == 5


def test_report_shows_only_the_metrics_the_protocol_names(tmp_path):
    proto = make_lab(tmp_path / "lab")
    data = json.loads(proto.read_text())
    data["metrics"] = {"primary": "mrr@10", "secondary": ["hit@1", "hit@10", "hit@100"]}  # no hit@5
    proto.write_text(json.dumps(data))
    out = tmp_path / "run"
    assert main(["lab", "all", str(proto), "-o", str(out)]) == 0
    md = (out / "report.md").read_text()
    assert "| Method | MRR@10 | Hit@1 | Hit@10 |" in md and "Hit@5" not in md and "hit@100" in md
