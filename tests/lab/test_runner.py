"""The lab runner on a tiny synthetic corpus: freeze, dev selection, one-time test, refusals, reproduce."""

from __future__ import annotations

import json
import shutil
import zlib

import numpy as np
import pytest

from sidelight.cli import main
from sidelight.errors import InputError
from sidelight.lab import protocol as protocol_mod
from sidelight.lab.runner import RefusedError, compare_runs, freeze, read_rankings, reproduce, run_split
from sidelight.methods import Param, register
from sidelight.structures.ranking import top_k

WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda omicron sigma tau upsilon phi chi psi "
         "omega river stone cloud field light shadow glass metal paper water fire earth wind").split()


@register("lab-test-jitter", "test only: BM25 plus seeded per-record jitter",
          Param("w", float, 0.0, "jitter amplitude", low=0.0, high=10.0),
          Param("seed", int, 0, "jitter seed", low=0, high=2**31 - 1))
def _jitter(index, query, k, params):
    s = index.lexical.bm25_scores(query)
    noise = np.array([zlib.crc32(f"{params['seed']}:{i}".encode()) % 1000 for i in index.ids]) / 1000.0
    return top_k(np.where(s > 0, s + params["w"] * noise, 0.0), k, index.id_rank)


def make_lab(root, families=8, dev_every=3):
    """corpus.jsonl + edges, bench.jsonl and proto.json under `root`; returns the protocol path."""
    root.mkdir(parents=True, exist_ok=True)
    recs = []
    for i in range(40):
        words = [WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(12)]
        recs.append({"id": f"r{i:02d}", "title": f"{WORDS[i % len(WORDS)]} {WORDS[(i * 5) % len(WORDS)]}",
                     "text": " ".join(words)})
    (root / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    (root / "corpus.edges.tsv").write_text("".join(f"r{i:02d}\tr{(i * 3 + 1) % 40:02d}\n" for i in range(40)))
    lines = []
    for f in range(families):
        t = recs[f * 4]
        split = "dev" if f % dev_every == 0 else "test"
        words = t["text"].split()
        for n, typ in enumerate(("paraphrase", "application", "boundary")):
            lines.append({"qid": f"F{f}-{typ}", "family": f"F{f}", "type": typ, "split": split,
                          "query": " ".join(words[n: n + 4]), "intended_id": t["id"]})
    lines.append({"qid": "F1-relation", "family": "F1", "type": "relation", "split": "test",
                  "query": recs[5]["text"], "intended_id": "r06", "anchor_id": "r05"})
    (root / "bench.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    proto = {
        "name": "toy-lab", "corpus": {"source": "corpus.jsonl"},
        "index": {"tokenizer": {"min_length": 2}},
        "benchmark": {"kind": "concept", "path": "bench.jsonl"},
        "depth": 20, "metrics": {"primary": "mrr@10", "secondary": ["hit@1", "hit@5", "hit@10", "rr", "dcg1@10"]},
        "methods": [{"name": "bm25"}, {"name": "tfidf"},
                    {"name": "lab-test-jitter", "grid": {"w": [0.0, 0.5, 2.0]}},
                    {"name": "lab-test-jitter:seeds", "required": False},
                    {"name": "rrf-lexical"}],
        "selection": {"metric": "mrr@10", "tie_break": {"lab-test-jitter": [["w", "asc"]]}},
        "statistics": {"seed": 127300, "n_resamples": 500, "n_flips": 500},
        "primary_contrast": {"baseline": "bm25", "candidate": "lab-test-jitter"},
    }
    (root / "proto.json").write_text(json.dumps(proto, indent=1))
    return root / "proto.json"


@pytest.fixture
def lab(tmp_path):
    return make_lab(tmp_path / "lab")


def test_freeze_dev_test_then_refuse_rerun(lab, tmp_path):
    out = tmp_path / "run"
    rec = freeze(lab, out)
    assert rec["skipped_methods"] == ["lab-test-jitter:seeds"]
    with pytest.raises(RefusedError, match="selection.json missing"):
        run_split(lab, "test", out)
    sel = run_split(lab, "dev", out)
    assert sel["selected"]["lab-test-jitter"]["w"] in (0.0, 0.5, 2.0)
    run_split(lab, "test", out)
    ranks = read_rankings(out / "test" / "rankings")
    assert set(ranks) == {"bm25", "tfidf", "lab-test-jitter", "rrf-lexical"}
    assert "r05" not in ranks["bm25"]["F1-relation"]["ids"]  # the anchor is excluded
    assert all(len(r["ids"]) <= 20 for r in ranks["bm25"].values())
    res = json.loads((out / "test" / "result.json").read_text())
    assert [c["role"] for c in res["contrasts"]].count("primary") == 1
    with pytest.raises(RefusedError, match="already scored"):
        run_split(lab, "test", out)
    assert main(["lab", "run", str(lab), "--split", "test", "-o", str(out)]) == 2


def test_tie_break_prefers_lower_w(lab, tmp_path):
    out = tmp_path / "run"
    freeze(lab, out)
    sel = run_split(lab, "dev", out)
    grid = sel["grid"]["lab-test-jitter"]
    best = max(r["value"] for r in grid)
    tied = [r["params"]["w"] for r in grid if abs(r["value"] - best) < 1e-12]
    assert sel["selected"]["lab-test-jitter"]["w"] == min(tied)


def test_freeze_refuses_a_tie_break_on_a_parameter_the_grid_does_not_vary(lab, tmp_path):
    proto = json.loads(lab.read_text())
    proto["selection"]["tie_break"]["lab-test-jitter"].append(["alpha", "asc"])
    lab.write_text(json.dumps(proto))
    with pytest.raises(InputError, match="tie_break of 'lab-test-jitter' names alpha"):
        freeze(lab, tmp_path / "run")
    assert not (tmp_path / "run" / "freeze.json").exists()


@pytest.mark.parametrize("what", ["protocol", "benchmark", "corpus", "implementation"])
def test_refuse_when_frozen_input_changes(lab, tmp_path, monkeypatch, what):
    pkg = tmp_path / "pkg"
    shutil.copytree(protocol_mod.PACKAGE_ROOT, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(protocol_mod, "PACKAGE_ROOT", pkg)
    out = tmp_path / "run"
    freeze(lab, out)
    run_split(lab, "dev", out)
    root = lab.parent
    if what == "protocol":
        d = json.loads(lab.read_text())
        d["depth"] = 10
        lab.write_text(json.dumps(d))
    elif what == "benchmark":
        (root / "bench.jsonl").write_text((root / "bench.jsonl").read_text().replace("F0-boundary", "F0-bound"))
    elif what == "corpus":
        (root / "corpus.jsonl").write_text((root / "corpus.jsonl").read_text().replace("alpha", "alfa", 1))
    else:
        (pkg / "lab" / "metrics.py").write_text((pkg / "lab" / "metrics.py").read_text() + "\n# changed\n")
    with pytest.raises(RefusedError, match="changed"):
        run_split(lab, "test", out)
    assert not (out / "test").exists()


def test_unregistered_required_method_fails_clearly(lab, tmp_path):
    d = json.loads(lab.read_text())
    d["methods"].append({"name": "no-such-method"})
    lab.write_text(json.dumps(d))
    with pytest.raises(Exception, match="no-such-method.*not registered"):
        freeze(lab, tmp_path / "run")


def test_reproduce_matches_and_detects_a_planted_difference(lab, tmp_path):
    out = tmp_path / "run"
    freeze(lab, out)
    run_split(lab, "dev", out)
    run_split(lab, "test", out)
    diffs, _ = reproduce(lab, out, tmp_path / "again")
    assert diffs == []
    path = out / "test" / "rankings" / "tfidf.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    rows[0]["ids"][0], rows[0]["ids"][1] = rows[0]["ids"][1], rows[0]["ids"][0]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    diffs, _ = compare_runs(out, tmp_path / "again")
    assert len(diffs) == 1 and "tfidf" in diffs[0] and "rank 1" in diffs[0]
    assert main(["lab", "compare", str(out), str(tmp_path / "again")]) == 1
