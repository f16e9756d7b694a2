"""`lab auto` on a hand-made vault indexed with vectors, and `--adapt`: dense and hybrid candidates
selected over their grids on dev, the adapted model as one more vector set, and the index's
vectors re-encoded with it when it is the pick."""

from __future__ import annotations

import json
import shutil

import pytest

from sidelight.cli import main
from sidelight.index import Index
from sidelight.index.defaults import default_method
from sidelight.lab import auto

from tests.lab.test_probe_auto import make_vault

pytest.importorskip("sentence_transformers")
HYBRID_GRID = {(a, n) for a in (0.3, 0.5, 0.7) for n in ("minmax", "zscore")}


@pytest.fixture(scope="module")
def adapted_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("auto")
    vault, idx, run = make_vault(root / "v"), root / "idx", root / "run"
    assert main(["index", str(vault), "-o", str(idx), "--dense", "minilm", "-q"]) == 0
    probe = root / "probe.jsonl"
    assert main(["lab", "probe", str(idx), "-o", str(probe), "--seed", "0"]) == 0
    assert main(["lab", "auto", str(idx), "--probe", str(probe), "-o", str(run), "--adapt", "0.05"]) == 0
    return root, idx, run


def test_dense_hybrid_and_adapted_candidates_are_selected_on_dev(adapted_run):
    _, idx, run = adapted_run
    proto = json.loads((run / "protocol.json").read_text())
    windows = {"stride": 64, "title": True, "sections": True}  # how `index FOLDER --dense` cuts a document
    assert Index.load(idx).dense.passages.to_dict() == windows
    assert proto["index"]["dense_variants"] == {"index": {"model": "minilm", "passages": windows},
                                                "adapted": {"model": "./adapted-model", "passages": windows}}
    assert {m["name"]: m.get("dense") for m in proto["methods"] if m["name"].startswith(("dense", "rrf", "hybrid"))} \
        == {"dense": "index", "rrf": "index", "hybrid-linear": "index", "dense-adapted": "adapted",
            "rrf-adapted": "adapted", "hybrid-linear-adapted": "adapted"}  # the lab ranks with the index's windows
    assert proto["pick"]["singles"] == ["bm25", "tfidf", "bm25+ppr", "dense", "dense-adapted"]
    assert proto["pick"]["fused"] == ["rrf", "hybrid-linear", "global-default", "rrf-adapted", "hybrid-linear-adapted"]
    anchor = next(m for m in proto["methods"] if m["name"] == proto["pick"]["incumbent"])
    assert anchor == {"name": "global-default", "method": "hybrid-linear", "dense": "index",
                      "grid": {"alpha": [0.3], "norm": ["zscore"]}}  # index.defaults.WITH_VECTORS
    dev = json.loads((run / "dev" / "result.json").read_text())["methods"]
    for name in ("hybrid-linear", "hybrid-linear-adapted"):  # every grid point scored on dev
        got = {(m["params"]["alpha"], m["params"]["norm"]) for lab, m in dev.items()
               if lab.startswith(name + "[")}
        assert got == HYBRID_GRID, name
    manifest = json.loads((run / "adapted-model" / "adapt.json").read_text())
    assert manifest["corpus"]["records"] == 10 and manifest["training"]["config"]["minutes"] == 0.05
    freeze = json.loads((run / "freeze.json").read_text())
    assert "adapted-model" in json.dumps(freeze)  # the model's files are pinned by the freeze
    stored = Index.load(idx).manifest["default"]
    sel = json.loads((run / "dev" / "selection.json").read_text())["pick"]
    assert stored["method"] == dev[sel["chosen"]]["method"]
    assert ("vectors" in stored) == (sel["chosen"].split("[")[0] in ("dense-adapted", "rrf-adapted",
                                                                      "hybrid-linear-adapted"))


def test_an_adapted_pick_re_encodes_the_index_with_that_model(adapted_run, tmp_path):
    root, idx, run = adapted_run
    copy, idx2 = tmp_path / "run", tmp_path / "idx"
    shutil.copytree(run, copy)
    shutil.copytree(idx, idx2)
    sel_path = copy / "dev" / "selection.json"
    sel = json.loads(sel_path.read_text())
    sel["pick"]["chosen"] = "dense-adapted"  # as if dev had picked the adapted vectors
    sel_path.write_text(json.dumps(sel))
    pick = auto.chosen(copy)
    assert pick["method"] == "dense" and pick["vectors"] == str(copy / "adapted-model")
    before = Index.load(idx2).dense
    default = auto.store_default(idx2, copy, pick)
    index = Index.load(idx2)
    manifest = json.loads((copy / "adapted-model" / "adapt.json").read_text())
    assert index.dense.identity["onnx_sha256"] == manifest["onnx_sha256"]
    assert index.dense.passages == before.passages  # the same windows, other vectors
    assert index.manifest["default"] == default and default["vectors"] == str(copy / "adapted-model")
    assert default_method(index).method == "dense"


def test_adapt_needs_vectors(tmp_path, capsys):
    vault, idx = make_vault(tmp_path / "v"), tmp_path / "idx"
    assert main(["index", str(vault), "-o", str(idx), "-q"]) == 0
    capsys.readouterr()
    assert main(["lab", "auto", str(idx), "-o", str(tmp_path / "r"), "--adapt", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "no vectors to adapt" in err and "sidelight dense" in err
