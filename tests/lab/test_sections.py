"""Section-level figures on a hand-made vault: section@3 counts a question only when a top-3 hit is the
target document AND the section shown for it is the target section (or inside it); worked by hand."""

from __future__ import annotations

import json

import pytest

from sidelight.cli import main
from sidelight.index import Index
from sidelight.lab.benchmark import load_collection_benchmark
from sidelight.lab.sections import Picker, inside, section_figures

GARDEN = """\
# Garden Plan
Where the beds go this year.

## Watering Schedule
Water the tomatoes at dawn, the beans every second evening.

## Soil
Compost and mulch every autumn.

### Clay
Heavy clay needs drainage and grit before planting.
"""

KITCHEN = """\
# Kitchen
Notes from the kitchen.

## Bread
The sourdough recipe, oven at full heat, a long proof overnight.
"""

OTHERS = {"Bicycle.md": "# Bicycle\nChain oil and tyre pressure.\n",
          "Piano.md": "# Piano\nScales before pieces.\n",
          "Taxes.md": "# Taxes\nReceipts in one folder.\n"}

QUESTIONS = [  # (qid, query, target document, target heading path)
    ("q1", "watering schedule for tomatoes", "Garden Plan.md", ["Garden Plan", "Watering Schedule"]),
    ("q2", "compost mulch autumn", "Garden Plan.md", ["Garden Plan", "Watering Schedule"]),  # shows Soil: a miss
    ("q3", "clay drainage grit", "Garden Plan.md", ["Garden Plan", "Soil"]),  # shows Soil > Clay: inside Soil
    ("q4", "sourdough proof overnight", "Kitchen.md", ["Kitchen", "Bread"]),
    ("q5", "tyre pressure", "Bicycle.md", None),  # no section: not a section question
]


@pytest.fixture
def toy(tmp_path):
    root = tmp_path / "v"
    root.mkdir()
    (root / "Garden Plan.md").write_text(GARDEN)
    (root / "Kitchen.md").write_text(KITCHEN)
    for name, text in OTHERS.items():
        (root / name).write_text(text)
    assert main(["index", str(root), "-o", str(tmp_path / "idx"), "-q"]) == 0
    bench_file = tmp_path / "q.jsonl"
    bench_file.write_text("".join(json.dumps(
        {"qid": q, "family": doc, "kind": "heading" if sec else "alias", "split": "test", "query": text,
         "targets": [{"doc": doc, "section": sec}], "anchor": None}) + "\n" for q, text, doc, sec in QUESTIONS))
    index = Index.load(tmp_path / "idx")
    return index, load_collection_benchmark(bench_file, set(index.corpus.ids))


def test_the_picker_and_the_nesting_rule(toy):
    index, bench = toy
    assert set(bench.sections) == {"q1", "q2", "q3", "q4"}
    picker = Picker(index)
    assert picker.heading("watering schedule for tomatoes", "Garden Plan.md") == ("Garden Plan", "Watering Schedule")
    assert picker.heading("compost mulch autumn", "Garden Plan.md") == ("Garden Plan", "Soil")
    assert picker.heading("clay drainage grit", "Garden Plan.md") == ("Garden Plan", "Soil", "Clay")
    assert inside(("Garden Plan", "Soil", "Clay"), ("garden plan", "soil"))
    assert not inside(("Garden Plan", "Soil"), ("Garden Plan", "Soil", "Clay"))
    assert not inside(("Garden Plan", "Watering Schedule"), ("Garden Plan", "Soil"))


def test_section_at_3_worked_by_hand(toy):
    index, bench = toy
    fillers = ["Bicycle.md", "Piano.md", "Taxes.md"]
    first = {q: {"ids": [doc] + fillers} for q, _, doc, _ in QUESTIONS}  # every target at rank 1
    fourth = {q: {"ids": ["Piano.md", "Taxes.md", "Bicycle.md" if doc != "Bicycle.md" else "Piano.md", doc]}
              for q, _, doc, _ in QUESTIONS}  # every target at rank 4: never in the top 3
    stats = {"seed": 1, "n_resamples": 500, "n_flips": 500, "confidence": 0.95}
    out = section_figures(bench, {"bm25": fourth, "good": first}, ["bm25", "good"], index, stats)
    assert (out["n"], out["n_families"], out["k"]) == (4, 2, 3)
    good = out["methods"]["good"]
    # Garden Plan: q1 hit, q2 miss (Soil shown, Watering Schedule asked), q3 hit (Clay inside Soil) -> 2/3;
    # Kitchen: q4 hit -> 1; mean of the two families 5/6
    assert good["section@3"] == pytest.approx(5 / 6) and good["hits"] == 3
    assert good["by_type"]["heading"]["n"] == 4
    assert out["methods"]["bm25"]["section@3"] == 0.0 and out["methods"]["bm25"]["hits"] == 0
    (c,) = out["contrasts"]
    assert (c["baseline"], c["candidate"]) == ("bm25", "good") and c["difference"] == pytest.approx(5 / 6)
