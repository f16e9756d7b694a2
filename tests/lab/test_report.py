"""Report files and figures from a small synthetic run; reader packets round-trip."""

from __future__ import annotations

import json

from sidelight.cli import main
from sidelight.lab.packets import export_packets, score_answers

from tests.lab.test_runner import make_lab


def _components_and_pairs(n: int, pairs: set[tuple[int, int]]) -> tuple[int, int]:
    """(components, largest) of an undirected graph by union-find: the oracle for the report's columns."""
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    for u, v in pairs:
        parent[find(u)] = find(v)
    sizes: dict[int, int] = {}
    for x in range(n):
        sizes[find(x)] = sizes.get(find(x), 0) + 1
    return len(sizes), max(sizes.values())


def test_report_lists_every_rewire_with_seed_acceptance_overlap_and_components(tmp_path):
    """A protocol with rewire runs shows each seed's accepted swaps, retained overlap and components
    (red before: the lab imported the graph methods from a module that had moved and said "not available")."""
    from sidelight.corpus.sources import load_source
    from sidelight.graph.controls import rewire
    from sidelight.graph.store import Graph

    proto = make_lab(tmp_path / "lab")
    data = json.loads(proto.read_text())
    data["methods"] += [{"name": "bm25+ppr", "grid": {"alpha": [0.5], "lam": [0.25]}},
                        {"name": "bm25+ppr:rewire", "params_from": "bm25+ppr",
                         "seeds": {"param": "seed", "values": [1, 2, 3]}}]
    proto.write_text(json.dumps(data))
    out = tmp_path / "run"
    assert main(["lab", "all", str(proto), "-o", str(out)]) == 0
    md, page = (out / "report.md").read_text(), (out / "report.html").read_text()
    stored = json.loads((out / "test" / "result.json").read_text())["rewire_reports"]
    assert sorted(stored) == ["1", "2", "3"]
    corpus = load_source(str(tmp_path / "lab" / "corpus.jsonl"))
    pos = corpus.position
    original = {tuple(sorted((pos[e.source], pos[e.target]))) for e in corpus.edges if e.source != e.target}
    n = len(corpus)
    for seed in (1, 2, 3):
        adjacency, rep = rewire(Graph.from_corpus(corpus).undirected(), seed, 10)
        a = adjacency.tocoo()
        after = {(int(u), int(v)) for u, v in zip(a.row, a.col) if u < v}
        overlap = len(original & after) / len(original)
        cb, lb = _components_and_pairs(n, original)
        ca, la = _components_and_pairs(n, after)
        row = f"| {seed} | {10 * len(original)} | {rep.accepted} | {overlap:.4f} | {cb} | {ca} | {lb} | {la} |"
        assert row in md, row
        cells = "".join(f"<td class=n>{c}</td>" for c in row.strip("| ").split(" | "))
        assert cells in page
        assert stored[str(seed)]["accepted"] == rep.accepted and 0 < rep.accepted <= 10 * len(original)
    assert "| seed | attempts | accepted | retained_overlap | components_before | components_after |" in md
    assert "not available" not in md and "recomputed at report time" not in md


def test_report_completes_rewire_details_missing_from_a_stored_result(tmp_path):
    """A run whose result.json lacks the reports is re-rendered with them, from the frozen corpus, no re-scoring."""
    from sidelight.lab.record import RECORD_NAME
    from sidelight.lab.report import rewire_details

    proto = make_lab(tmp_path / "lab")
    data = json.loads(proto.read_text())
    data["methods"] += [{"name": "bm25+ppr", "grid": {"alpha": [0.5], "lam": [0.25]}},
                        {"name": "bm25+ppr:rewire", "params_from": "bm25+ppr",
                         "seeds": {"param": "seed", "values": [4, 5]}}]
    proto.write_text(json.dumps(data))
    out = tmp_path / "run"
    assert main(["lab", "all", str(proto), "-o", str(out)]) == 0
    res = json.loads((out / "test" / "result.json").read_text())
    from sidelight.corpus.sources import load_source
    recomputed, flag = rewire_details({**res, "rewire_reports": None},
                                      load_source(str(tmp_path / "lab" / "corpus.jsonl")))
    assert flag and recomputed == res["rewire_reports"]
    assert (out / "test" / RECORD_NAME).is_file()


def test_lab_all_writes_report_and_figures(tmp_path):
    proto = make_lab(tmp_path / "lab")
    out = tmp_path / "run"
    assert main(["lab", "all", str(proto), "-o", str(out)]) == 0
    md = (out / "report.md").read_text()
    page = (out / "report.html").read_text()
    from PIL import Image

    for name in ("degree-distribution", "method-bars", "paired-effects"):
        for fmt in ("svg", "png"):
            assert (out / "figures" / f"{name}.{fmt}").stat().st_size > 500
        with Image.open(out / "figures" / f"{name}.png") as png:  # a palette image: at most 256 colours
            assert png.mode == "P" and len(png.getcolors(256) or []) > 2
    assert sorted(p.suffix for p in (out / "figures").iterdir()) == [".png"] * 3 + [".svg"] * 3  # no PDF
    assert "| Method | MRR@10 | Hit@1 | Hit@5 | Hit@10 |" in md
    assert "Every primary change" in md and "Query types" in md and "Lexical overlap" in md
    assert "No rewired control in this protocol." in md
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
