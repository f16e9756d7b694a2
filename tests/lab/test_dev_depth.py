"""`dev_depth`: dev rankings stored shallower than test's `depth`, with the same selection and test scoring.

The oracle is the same protocol without `dev_depth` (every dev ranking `depth` deep): its selection, pick,
test rankings and test figures must be reproduced exactly, and its dev figures of every metric that reads
no deeper than `dev_depth` too; the metrics that read deeper are left out, never cut short.
"""

from __future__ import annotations

import json

import pytest

from sidelight.cli import main
from sidelight.errors import InputError
from sidelight.lab.audit import audit
from sidelight.lab.metrics import within_depth
from sidelight.lab.protocol import load_protocol
from sidelight.lab.record import sha256_of
from sidelight.lab.runner import freeze, read_rankings, run_split

from tests.lab.test_record import edit_json, reseal
from tests.lab.test_runner import make_lab

PICK = {"name": "best", "singles": ["bm25", "tfidf", "lab-test-jitter"], "fused": ["rrf-lexical"]}


def _lab(root, dev_depth=None, **changes):
    """The toy lab (depth 20) with recall@20 among the secondary metrics and a pick, optionally `dev_depth`."""
    path = make_lab(root)
    proto = json.loads(path.read_text())
    proto["metrics"]["secondary"].append("recall@20")
    proto["pick"] = PICK
    if dev_depth is not None:
        proto["dev_depth"] = dev_depth
    proto.update(changes)
    path.write_text(json.dumps(proto, indent=1))
    return path


def _run(proto, out):
    freeze(proto, out)
    run_split(proto, "dev", out)
    run_split(proto, "test", out)
    return out


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """(run without dev_depth, run with dev_depth 10) of the same toy protocol."""
    root = tmp_path_factory.mktemp("devdepth")
    full = _run(_lab(root / "full"), root / "run-full")
    shallow = _run(_lab(root / "shallow", 10), root / "run-shallow")
    return full, shallow


def _json(path):
    return json.loads(path.read_text())


def test_within_depth_by_hand():
    # depth 100, rankings stored 10 deep: rr reads all 100, recall@100 reads 100, the rest 10 or fewer
    kept, out = within_depth(["mrr@10", "rr", "ndcg@10", "recall@100", "hit@1"], 100, 10)
    assert kept == ["mrr@10", "ndcg@10", "hit@1"] and out == ["rr", "recall@100"]
    assert within_depth(["rr", "recall@100"], 100, 100) == (["rr", "recall@100"], [])


def test_dev_depth_selects_the_same_and_scores_test_identically(pair):
    full, shallow = pair
    sa, sb = _json(full / "dev" / "selection.json"), _json(shallow / "dev" / "selection.json")
    assert sb["selected"] == sa["selected"] and sb["grid"] == sa["grid"] and sb["pick"] == sa["pick"]
    names = sorted(p.name for p in (full / "test" / "rankings").iterdir())
    assert names == sorted(p.name for p in (shallow / "test" / "rankings").iterdir()) and "best.jsonl" in names
    for name in names:  # byte for byte
        assert (shallow / "test" / "rankings" / name).read_bytes() == (full / "test" / "rankings" / name).read_bytes()
    ra, rb = _json(full / "test" / "result.json"), _json(shallow / "test" / "result.json")
    for key in ("metrics", "methods", "groups", "contrasts", "selection", "pick"):
        assert rb[key] == ra[key], key
    assert "recall@20" in ra["metrics"] and "rr" in ra["metrics"]  # test keeps every metric, 20 deep


def test_dev_rankings_are_stored_dev_depth_deep_and_equal_the_top_of_the_full_ones(pair):
    full, shallow = pair
    lines = [json.loads(x) for p in (shallow / "dev" / "rankings").iterdir() for x in p.read_text().splitlines()]
    assert lines and all(len(x["ids"]) <= 10 and len(x["scores"]) <= 10 for x in lines)
    assert any(len(x["ids"]) == 10 for x in lines)
    a, b = read_rankings(full / "dev" / "rankings"), read_rankings(shallow / "dev" / "rankings")
    assert set(a) == set(b)
    assert any(len(r["ids"]) > 10 for rows in a.values() for r in rows.values())  # the oracle is deeper
    for label in a:
        for q, row in a[label].items():
            assert b[label][q]["ids"] == row["ids"][:10] and b[label][q]["scores"] == row["scores"][:10]
            assert b[label][q]["target_rank"] == row["target_rank"]


def test_dev_result_leaves_out_the_deeper_metrics_and_keeps_the_rest(pair):
    full, shallow = pair
    da, db = _json(full / "dev" / "result.json"), _json(shallow / "dev" / "result.json")
    assert "left_out" not in da and "dev_depth" not in da  # a protocol without dev_depth: dev/result.json as before
    assert db["dev_depth"] == 10
    assert [x["metric"] for x in db["left_out"]] == ["rr", "recall@20"]
    assert all("dev_depth" in x["reason"] and "top 20" in x["reason"] for x in db["left_out"])
    assert db["metrics"] == ["mrr@10", "hit@1", "hit@5", "hit@10", "dcg1@10"]
    for label, info in db["methods"].items():
        assert set(info["overall"]) == set(db["metrics"])
        assert info["overall"] == {m: da["methods"][label]["overall"][m] for m in db["metrics"]}
    assert db["contrasts"] == da["contrasts"]


def test_the_audit_recomputes_dev_from_the_shallow_rankings(pair):
    full, shallow = pair
    for run in (full, shallow):
        r = audit(run)
        assert r["agree"], r["problems"][:5]
        assert r["dev_checks"] > 20
    assert main(["lab", "audit", str(shallow)]) == 0


def _forge_dev(run, change):
    """Edit dev/result.json and re-seal the whole chain, as a careful forger would."""
    edit_json(run / "dev" / "result.json", change)
    reseal(run, "dev")
    edit_json(run / "test" / "record.json",
              lambda r: r["previous"].update({"dev/record.json": sha256_of(run / "dev" / "record.json")}))
    reseal(run, "test")


def test_the_audit_fails_a_dev_metric_deeper_than_the_stored_rankings(tmp_path):
    run = _run(_lab(tmp_path / "lab", 10), tmp_path / "run")

    def add_recall(res):
        res["metrics"].append("recall@20")
        for info in res["methods"].values():
            info["overall"]["recall@20"] = 0.5

    _forge_dev(run, add_recall)
    r = audit(run)
    assert not r["agree"]
    assert r["problems"] == ["dev: metric recall@20 reads the top 20, deeper than the stored rankings (10)"]


def test_the_audit_fails_dev_rankings_deeper_than_dev_depth(tmp_path):
    """A run that claims dev_depth 10 but stored deeper dev rankings (the freeze's protocol says 10)."""
    run = _run(_lab(tmp_path / "lab"), tmp_path / "run")
    edit_json(run / "freeze.json", lambda f: f["protocol_data"].update(dev_depth=10))
    reseal(run, "freeze")
    edit_json(run / "dev" / "record.json",
              lambda r: r["previous"].update({"freeze.json": sha256_of(run / "freeze.json")}))
    _forge_dev(run, lambda res: None)
    r = audit(run)
    assert not r["agree"]
    assert any("ranked ids, more than the depth 10" in p for p in r["problems"])
    assert any("dev: metric rr reads the top 20" in p for p in r["problems"])


@pytest.mark.parametrize("changes, needle", [
    ({"dev_depth": 5}, "dev_depth: must be an integer 10..20 (the selection metric mrr@10 and the primary metric "
                       "mrr@10 read the top 10; at most depth 20), got 5"),
    ({"dev_depth": 21}, "dev_depth: must be an integer 10..20"),
    ({"dev_depth": 10, "metrics": {"primary": "rr"}, "selection": {"metric": "rr"}},
     "dev_depth: must be an integer 20..20 (the selection metric rr and the primary metric rr read the top 20"),
    ({"dev_depth": 10, "selection": {"metric": "hit@20"}}, "dev_depth: must be an integer 20..20"),
    ({"dev_depth": 0}, "dev_depth: Input should be greater than or equal to 1"),
    ({"dev_depth": "10"}, "dev_depth: Input should be a valid integer"),
])
def test_a_dev_depth_below_the_selection_cutoff_or_above_depth_is_refused_in_one_line(tmp_path, capsys, changes,
                                                                                       needle):
    proto = make_lab(tmp_path / "lab")
    data = json.loads(proto.read_text())
    data.update(changes)
    proto.write_text(json.dumps(data))
    with pytest.raises(InputError) as err:
        load_protocol(proto)
    assert needle in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(InputError, match="dev_depth"):
        freeze(proto, tmp_path / "run")
    assert not (tmp_path / "run" / "freeze.json").exists()
    capsys.readouterr()
    assert main(["lab", "validate", str(proto)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "dev_depth" in lines[0]


def test_validate_names_the_dev_depth(tmp_path, capsys):
    proto = _lab(tmp_path / "lab", 10)
    assert main(["lab", "validate", str(proto)]) == 0
    assert "depth 20 (dev 10)" in capsys.readouterr().out
    assert load_protocol(make_lab(tmp_path / "plain")).dev_depth == 20  # the default is depth
