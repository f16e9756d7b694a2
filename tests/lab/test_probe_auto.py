"""`lab probe` and `lab auto` on a hand-made vault: each kind of question with the target worked out
by hand from the files, names removed, no document on both sides of the split, and the pick
stored as the index's default and used by `search`."""

from __future__ import annotations

import json

import pytest

from sidelight.cli import main
from sidelight.corpus.folder import load_folder
from sidelight.index import Index
from sidelight.index.defaults import default_method
from sidelight.lab.probe import anchor_names, leaks, probe, split_of, strip_names, tokens

GARDEN = """\
---
aliases: [Vegetable Patch, Garden]
---
# Garden Plan
Where the beds go.

## Watering Schedule
Water the tomatoes at dawn, the beans every second evening.
"""

KITCHEN = """\
# Kitchen Notes
The seasonal harvest from [[Garden Plan#Watering Schedule|the garden plan]] decides which soups we cook every week.
Our bread recipe sits beside the oven thermometer and flour scale.
"""

TOPICS = ["Bicycle Repair", "Coffee Brewing", "Mountain Hiking", "Piano Practice", "Tax Returns",
          "Bird Watching", "Book Club", "Home Network"]


def make_vault(root):
    root.mkdir()
    (root / "Garden Plan.md").write_text(GARDEN)
    (root / "Kitchen.md").write_text(KITCHEN)
    for i, t in enumerate(TOPICS):
        nxt = TOPICS[(i + 1) % len(TOPICS)]
        (root / f"{t}.md").write_text(
            f"---\naliases: [Topic {i} notebook]\n---\n# {t}\nNotes about {t.lower()} and its habits.\n\n"
            f"## {t.split()[0]} checklist steps\nFirst check the tools, then the plan for {t.lower()}.\n\n"
            f"I keep loose reminders about weekend errands near [[{nxt}]] whenever possible.\n")
    return root


def test_every_kind_with_its_hand_worked_target(tmp_path):
    corpus = load_folder(make_vault(tmp_path / "v"))
    rows, summary = probe(list(corpus.records), seed=3)
    by = {(r["kind"], r["query"]): r for r in rows}
    # link context: the sentence in Kitchen.md, the target's names and the link text removed
    q = "the seasonal harvest from the decides which soups we cook every week"  # link text "the garden plan"
    assert by[("link-context", q)]["targets"] == [{"doc": "Garden Plan.md", "section": ["Garden Plan", "Watering Schedule"]}]
    assert by[("link-context", q)]["provenance"]["source"] == "Kitchen.md"
    # heading: the section's path without the document's own name
    assert by[("heading", "watering schedule")]["targets"] == [
        {"doc": "Garden Plan.md", "section": ["Garden Plan", "Watering Schedule"]}]
    # alias: "Vegetable Patch" is not in the title; "Garden" is, so it is no question
    assert by[("alias", "Vegetable Patch")]["targets"] == [{"doc": "Garden Plan.md", "section": None}]
    assert ("alias", "Garden") not in by
    assert summary["kept"] == {k: sum(r["kind"] == k for r in rows) for k in ("link-context", "heading", "alias")}
    for r in rows:  # shape of the collection benchmark; family is the target document
        assert r["family"] == r["targets"][0]["doc"] and r["anchor"] is None and r["split"] in ("dev", "test")


def test_names_removed_and_leaks_refused(tmp_path):
    corpus = load_folder(make_vault(tmp_path / "v"))
    rows, _ = probe(list(corpus.records), seed=3)
    by_id = {r.id: r for r in corpus.records}
    for r in rows:
        if r["kind"] != "link-context":
            continue
        t = by_id[r["targets"][0]["doc"]]
        q = tokens(r["query"])
        for name in [t.title, *t.aliases]:
            n = tokens(name)
            assert not any(q[i:i + len(n)] == n for i in range(len(q))), (r["query"], name)
        assert len([w for w in q if w not in {"the", "a", "of"}]) >= 4
    assert strip_names("See Garden Plan and the garden plan today", ["Garden Plan"]) == ["see", "and", "the", "today"]
    assert leaks(tokens("one two three four five"), ["x two three four five y"])
    assert not leaks(tokens("one two three"), ["two three four five"])


def test_split_keeps_each_document_on_one_side(tmp_path):
    corpus = load_folder(make_vault(tmp_path / "v"))
    rows, _ = probe(list(corpus.records), seed=5)
    sides: dict[str, set] = {}
    for r in rows:
        sides.setdefault(r["targets"][0]["doc"], set()).add(r["split"])
        assert r["split"] == split_of(r["targets"][0]["doc"], 5)
    assert all(len(s) == 1 for s in sides.values())
    assert probe(list(corpus.records), seed=5)[0] == rows  # deterministic


def test_auto_stores_the_pick_and_search_uses_it(tmp_path, capsys):
    vault, idx, run = make_vault(tmp_path / "v"), tmp_path / "idx", tmp_path / "run"
    assert main(["index", str(vault), "-o", str(idx), "-q"]) == 0
    assert Index.load(idx).manifest["source"] == {"folder": str(vault.resolve()), "exclude": []}
    probe_file = tmp_path / "probe.jsonl"
    assert main(["lab", "probe", str(idx), "-o", str(probe_file), "--seed", "0"]) == 0
    rows = [json.loads(x) for x in probe_file.read_text().splitlines()]
    if {r["split"] for r in rows} != {"dev", "test"}:
        pytest.skip("this seed puts every target on one side")
    assert main(["lab", "auto", str(idx), "--probe", str(probe_file), "-o", str(run)]) == 0
    stored = Index.load(idx).manifest["default"]
    sel = json.loads((run / "dev" / "selection.json").read_text())
    assert stored["method"] == json.loads((run / "dev" / "result.json").read_text())["methods"][sel["pick"]["chosen"]]["method"]
    assert stored["source"].startswith(f"lab auto {run} (dev mrr@10 ")
    assert default_method(Index.load(idx)).method == stored["method"]
    assert (run / "report.md").is_file() and (run / "report.html").is_file()
    # the graph gate's evidence is dev's own figures: graph − mean of its rewired seeds, overall
    dev = json.loads((run / "dev" / "result.json").read_text())["methods"]
    ev = sel["pick"]["graph"]["bm25+ppr"]
    seeds = [m["overall"]["mrr@10"] for m in dev.values() if m["group"] == "bm25+ppr:rewire"]
    assert len(seeds) == 3
    assert ev["rewired"]["difference"] == pytest.approx(dev["bm25+ppr"]["overall"]["mrr@10"] - sum(seeds) / 3)
    assert ev["passes"] == (ev["lead"] > 0 and ev["rewired"]["ci_low"] > 0)
    if ev["passes"]:  # either way the pick follows the gate and its note says which
        assert "graph may be picked: bm25+ppr" in sel["pick"]["note"]
    else:
        assert sel["pick"]["chosen"] != "bm25+ppr" and "graph not picked: bm25+ppr" in sel["pick"]["note"]
    # section level: every test question whose target names a section (headings, links to a heading)
    res = json.loads((run / "test" / "result.json").read_text())
    named = [r for r in rows if r["split"] == "test" and r["targets"][0]["section"]]
    assert res["sections"]["n"] == len(named) > 0
    assert set(res["sections"]["methods"]) == set(res["methods"])
    assert "Section level (section@3)" in (run / "report.md").read_text()
    assert json.loads((run / "auto.json").read_text())["sections"]["bm25"]["n"] == len(named)
    capsys.readouterr()
    assert main(["methods", str(idx)]) == 0
    assert "lab auto" in capsys.readouterr().out
    assert main(["index", str(vault), "-o", str(idx), "--update", "-q"]) == 0  # a sync keeps the default
    assert Index.load(idx).manifest["default"] == stored


def test_bad_input_is_one_line(tmp_path, capsys):
    vault, idx = make_vault(tmp_path / "v"), tmp_path / "idx"
    assert main(["index", str(vault), "-o", str(idx), "-q"]) == 0
    assert main(["lab", "probe", str(idx), "-o", str(tmp_path / "p.jsonl"), "--max", "0"]) == 2
    assert main(["lab", "auto", str(idx), "--probe", str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].count("\n") == 0 and "missing.jsonl" in err[-1]


def test_a_cross_reference_leaves_neither_its_anchor_nor_its_section_heading(tmp_path):
    """A link's own text is not stored; when it is the anchor's name (an API cross-reference) or the
    linked section's heading, it is removed with the target's names (worked by hand)."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "arg.md").write_text("# Parsing arguments\nIntro words here.\n\n## Building values\nHow tuples are built.\n")
    (root / "guide.md").write_text(
        "# Guide\nCall [Py_BuildValue](arg.md#c.Py_BuildValue) when native extension code returns several results "
        "together.\n\nThe [building values](arg.md#building-values) part explains which format codes native "
        "extension modules accept.\n")
    rows, _ = probe(list(load_folder(root).records), seed=1)
    queries = {r["query"] for r in rows if r["kind"] == "link-context"}
    assert "call when native extension code returns several results together" in queries
    assert "the part explains which format codes native extension modules accept" in queries
    assert anchor_names("#c.Py_BuildValue") == ["c.Py_BuildValue", "Py_BuildValue"]
    assert anchor_names("#module-os.path") == ["module-os.path", "path", "os.path"]
    assert anchor_names("") == []


def test_a_shallower_depth_keeps_the_top_ids_and_the_figures_it_can_audit(tmp_path, capsys):
    """`lab auto -k 10` stores each ranking's first 10 ids of the depth-100 run (the oracle: the
    same run at the default depth), the same mrr@10, hit@1 and hit@10, no hit@100, and audits clean."""
    from sidelight.lab.audit import _rankings, audit

    vault, idx = make_vault(tmp_path / "v"), tmp_path / "idx"
    for i in range(12):  # more notes than the depth, sharing the questions' common words
        (vault / f"Filler {i}.md").write_text(f"# Filler {i}\nThe notes about the plan, the tools and the steps "
                                              f"of every week and every evening, number {i}.\n")
    assert main(["index", str(vault), "-o", str(idx), "-q"]) == 0
    probe_file = tmp_path / "probe.jsonl"
    assert main(["lab", "probe", str(idx), "-o", str(probe_file), "--seed", "0"]) == 0
    if {json.loads(x)["split"] for x in probe_file.read_text().splitlines()} != {"dev", "test"}:
        pytest.skip("this seed puts every target on one side")
    runs = {d: tmp_path / f"run{d}" for d in (100, 10)}
    for d, run in runs.items():
        assert main(["lab", "auto", str(idx), "--probe", str(probe_file), "-o", str(run), "-k", str(d)]) == 0
    proto = json.loads((runs[10] / "protocol.json").read_text())
    assert proto["depth"] == 10 and proto["metrics"]["secondary"] == ["hit@1", "hit@10"]
    assert json.loads((runs[100] / "protocol.json").read_text())["metrics"]["secondary"] == ["hit@1", "hit@10", "hit@100"]
    deep, shallow = _rankings(runs[100] / "test" / "rankings"), _rankings(runs[10] / "test" / "rankings")
    assert set(deep) == set(shallow)
    assert any(len(row["ids"]) > 10 for rows in deep.values() for row in rows.values())  # the cut bites
    for label, rows in deep.items():
        for q, row in rows.items():
            assert shallow[label][q]["ids"] == row["ids"][:10]
    res = {d: json.loads((run / "test" / "result.json").read_text())["methods"] for d, run in runs.items()}
    for label, info in res[10].items():
        assert "hit@100" not in info["overall"]
        for m in ("mrr@10", "hit@1", "hit@10"):
            assert info["overall"][m] == pytest.approx(res[100][label]["overall"][m], abs=1e-12)
    assert audit(runs[10])["agree"]
    capsys.readouterr()
    assert main(["lab", "auto", str(idx), "--probe", str(probe_file), "-o", str(tmp_path / "r5"), "-k", "5"]) == 2
    assert "lab auto -k/--top-k (ranked ids stored) must be an integer in [10, " in capsys.readouterr().err
    assert not (tmp_path / "r5").exists()


def test_a_synced_index_is_frozen_with_a_fresh_reads_hash_and_a_stale_one_is_refused(tmp_path):
    """`sync` appends a note it reads again after the others, so the synced index holds the folder's
    records in another order than a fresh read: lab auto declares the fresh read's hash (the oracle:
    `load_folder` of the edited folder) and refuses, naming `sync`, an index that is out of date."""
    from sidelight.errors import InputError
    from sidelight.lab import auto

    vault, idx = make_vault(tmp_path / "v"), tmp_path / "idx"
    assert main(["index", str(vault), "-o", str(idx), "-q"]) == 0
    note = vault / "Bicycle Repair.md"  # the first note by id: read again, it moves to the end
    note.write_text(note.read_text() + "\nPatch the inner tube before the chain.\n")
    with pytest.raises(InputError, match="out of date.*sidelight sync"):
        auto.prepare(idx, tmp_path / "stale", None)
    assert main(["sync", str(vault), str(idx), "-q"]) == 0
    fresh = load_folder(vault).content_hash()
    synced = Index.load(idx)
    assert synced.corpus.ids[-1] == "Bicycle Repair.md" and synced.manifest["corpus"]["hash"] != fresh
    proto = json.loads(auto.prepare(idx, tmp_path / "run", None).read_text())
    assert proto["corpus"]["content_hash"] == fresh


def test_sync_names_the_folder_of_an_index_that_names_none(tmp_path):
    """An index written before indexes named their folder gets the synced folder as its source (what
    `sidelight index FOLDER` records), even when nothing in the folder changed."""
    vault, idx = make_vault(tmp_path / "v"), tmp_path / "idx"
    Index.write(load_folder(vault), idx)
    assert "source" not in Index.load(idx).manifest
    assert main(["sync", str(vault), str(idx), "-q"]) == 0
    assert Index.load(idx).manifest["source"] == {"folder": str(vault.resolve()), "exclude": []}
