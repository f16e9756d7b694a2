"""Protocol loading, settings expansion and the implementation hash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sidelight.errors import InputError
from sidelight.lab.protocol import implementation_hash, load_protocol

REPO = Path(__file__).resolve().parents[2]


def test_shipped_protocols_load():
    p = load_protocol(REPO / "protocols" / "foldoc-carrier-v1.json")
    assert p.primary == "mrr@10" and p.stats["seed"] == 127300
    assert "foldoc" in p.path.name
    grid = p.grid_settings(next(m for m in p.methods if m["name"] == "bm25+ppr"))
    assert len(grid) == 6
    s = load_protocol(REPO / "protocols" / "scifact-pilot.json")
    assert s.data["benchmark"]["sample"]["seed"] == 45109


def test_settings_expand_grid_params_from_and_seeds(tmp_path):
    d = {"corpus": {"source": "x"}, "benchmark": {"kind": "concept", "path": "b"}, "metrics": {"primary": "mrr@10"},
         "methods": [{"name": "g", "grid": {"a": [1, 2], "b": [3]}}, {"name": "c", "params_from": "g"},
                     {"name": "r", "params_from": "g", "seeds": {"values": [7, 8]}}]}
    (tmp_path / "p.json").write_text(json.dumps(d))
    p = load_protocol(tmp_path / "p.json")
    dev = p.settings(p.methods, None)
    assert [s.label for s in dev] == ["g[a=1,b=3]", "g[a=2,b=3]"]
    test = p.settings(p.methods, {"g": {"a": 2, "b": 3}})
    assert [s.label for s in test] == ["g", "c", "r[seed=7]", "r[seed=8]"]
    assert test[3].params == {"a": 2, "b": 3, "seed": 8} and test[3].group == "r"


def test_bad_protocols(tmp_path):
    (tmp_path / "p.json").write_text('{"corpus": {"source": "x"}, "benchmark": {"kind": "concept", "path": "b"}, '
                                     '"methods": [{"name": "bm25"}], "metrics": {"primary": "mrr@0"}}')
    with pytest.raises(InputError, match="cutoff"):
        load_protocol(tmp_path / "p.json")
    (tmp_path / "p.json").write_text("{\n  oops")
    with pytest.raises(InputError, match=r"p\.json:2"):
        load_protocol(tmp_path / "p.json")
    for select in ("foldoc", {}, {"corpus": 1}):
        (tmp_path / "p.json").write_text(json.dumps({"corpus": {"source": "x"},
                                                     "benchmark": {"kind": "concept", "path": "b", "select": select},
                                                     "methods": [{"name": "bm25"}], "metrics": {"primary": "mrr@10"}}))
        with pytest.raises(InputError, match=r"benchmark\.select(\.corpus)?: "):
            load_protocol(tmp_path / "p.json")


def test_implementation_hash_tracks_files(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.txt").write_text("stop\n")
    h1, files = implementation_hash(tmp_path)
    assert sorted(files) == ["a.py", "sub/b.txt"]
    (tmp_path / "a.py").write_text("x = 2\n")
    assert implementation_hash(tmp_path)[0] != h1


def test_grid_values_are_checked_by_the_method_declaration(tmp_path):
    data = json.loads((REPO / "protocols" / "foldoc-carrier-v1.json").read_text())
    data["benchmark"]["path"] = str(REPO / "benchmarks" / "foldoc-concepts-v1.jsonl")
    ppr = next(m for m in data["methods"] if m["name"] == "bm25+ppr")
    ppr["grid"]["alpha"] = [0.5, 1.5]  # out of [0, 1]
    (tmp_path / "p.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"p\.json: method 'bm25\+ppr': parameter 'alpha' must be a finite number in \[0, 1\]"):
        load_protocol(tmp_path / "p.json").check_methods()
    ppr["grid"] = {"alhpa": [0.5]}
    (tmp_path / "p.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match="takes no parameter 'alhpa'"):
        load_protocol(tmp_path / "p.json").check_methods()
