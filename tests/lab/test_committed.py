"""Committed run records: a re-scoring is labelled, `lab audit` takes folders of runs, and every README
figure tied to a run must equal the value that run stores."""

from __future__ import annotations

import json

import pytest

from sidelight.cli import main
from sidelight.errors import InputError
from sidelight.lab.committed import check_figures, readme_table

from tests.lab.test_runner import make_lab

README = """# x

## The lab

Some text.

| Method | MRR@10 | Hit@1 |
| --- | ---: | ---: |
| BM25 | {bm25} | {hit} |
| **tuned** | {jit} | – |

### Next

| Method | MRR@10 |
| --- | ---: |
| BM25 | 0.0 |
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("committed")
    proto = make_lab(root / "lab")
    out = root / "results" / "runs" / "toy-rescored"
    assert main(["lab", "all", str(proto), "-o", str(out), "--rescoring", "the first scoring was lost",
                 "--replaces", "runs/toy"]) == 0
    return root, out


def _figures(root, readme_text):
    res = json.loads((root / "results" / "runs" / "toy-rescored" / "test" / "result.json").read_text())
    bm25, jit = res["methods"]["bm25"]["overall"], res["methods"]["lab-test-jitter"]["overall"]
    (root / "README.md").write_text(readme_text.format(bm25=f"{bm25['mrr@10']:.6f}", hit=f"{100 * bm25['hit@1']:.2f}%",
                                                       jit=f"{jit['mrr@10']:.4f}"))
    table = {"figures": [
        {"section": "## The lab", "row": "BM25", "column": 1, "run": "toy-rescored",
         "key": "methods/bm25/overall/mrr@10", "format": "{:.6f}"},
        {"section": "## The lab", "row": "BM25", "column": 2, "run": "toy-rescored",
         "key": "methods/bm25/overall/hit@1", "format": "{:.2%}"},
        {"section": "## The lab", "row": "tuned", "column": 1, "run": "toy-rescored",
         "key": "methods/lab-test-jitter/overall/mrr@10", "format": "{:.4f}"}]}
    (root / "results" / "readme-figures.json").write_text(json.dumps(table))
    return root / "results" / "readme-figures.json"


def test_a_rescoring_is_labelled_with_reason_date_and_commit(runs):
    root, out = runs
    info = json.loads((out / "rescoring.json").read_text())
    assert info["kind"] == "re-scoring, not a first scoring" and info["replaces"] == "runs/toy"
    assert info["reason"] == "the first scoring was lost" and info["date"].endswith("Z") and info["commit"]
    with pytest.raises(InputError, match="already holds a held-out scoring"):
        from sidelight.lab.committed import label_rescoring
        label_rescoring(out, root / "lab" / "proto.json", "again", "")


def test_readme_figures_equal_their_runs_and_an_edit_fails(runs, capsys):
    root, out = runs
    table = _figures(root, README)
    assert check_figures(root / "README.md", table, root / "results" / "runs") == []
    assert main(["lab", "audit", str(root / "results" / "runs"), "--figures", str(table)]) == 0
    assert "3 of 3 equal their runs' stored values" in capsys.readouterr().out
    text = (root / "README.md").read_text()
    row = next(r for r in readme_table(text, "## The lab") if r[0] == "BM25")
    edited = text.replace(f"| BM25 | {row[1]} |", f"| BM25 | {float(row[1]) + 0.01:.6f} |", 1)
    (root / "README.md").write_text(edited)
    problems = check_figures(root / "README.md", table, root / "results" / "runs")
    assert len(problems) == 1 and "README says" in problems[0] and "methods/bm25/overall/mrr@10" in problems[0]
    assert main(["lab", "audit", str(root / "results" / "runs"), "--figures", str(table)]) == 1
    (root / "README.md").write_text(text)


def test_a_figure_in_prose_is_checked_in_its_sentence(runs):
    root, out = runs
    table = _figures(root, README + "\nBM25 scores {bm25} MRR@10 on the toy test.\n".replace("{bm25}", "{bm25}"))
    data = json.loads(table.read_text())
    data["figures"] = [{"text": "BM25 scores {} MRR@10 on the toy", "run": "toy-rescored",
                        "key": "methods/bm25/overall/mrr@10", "format": "{:.6f}"},
                       {"text": "scores {} MRR@10", "run": "toy-rescored", "key": "methods/bm25/overall/mrr@10",
                        "format": "{:.2f}", "scale": 100}]
    table.write_text(json.dumps(data))
    problems = check_figures(root / "README.md", table, root / "results" / "runs")
    stored = json.loads((out / "test" / "result.json").read_text())["methods"]["bm25"]["overall"]["mrr@10"]
    assert len(problems) == 1 and f"{100 * stored:.2f}" in problems[0]  # the first is said; the scaled one is not


def test_an_edited_ranking_fails_the_audit_of_a_folder_of_runs(runs, capsys, tmp_path):
    import shutil

    root, out = runs
    copy = tmp_path / "runs" / "toy"
    shutil.copytree(out, copy)
    assert main(["lab", "audit", str(tmp_path / "runs")]) == 0
    f = copy / "test" / "rankings" / "bm25.jsonl"
    rows = [json.loads(x) for x in f.read_text().splitlines()]
    rows[0]["ids"][0], rows[0]["ids"][1] = rows[0]["ids"][1], rows[0]["ids"][0]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["lab", "audit", str(tmp_path / "runs")]) == 2
    assert "bm25.jsonl" in capsys.readouterr().err
