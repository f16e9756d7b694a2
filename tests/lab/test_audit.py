"""The independent auditor agrees with the runner and imports no lab metric code."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from sidelight.cli import main
from sidelight.lab.audit import audit, score
from sidelight.lab.runner import RefusedError, freeze, run_split

from tests.lab.test_record import reseal
from tests.lab.test_runner import make_lab


def test_audit_module_imports_no_metric_code():
    code = ("import sys, sidelight.lab.audit as a; bad = [m for m in ('sidelight.lab.metrics', "
            "'sidelight.lab.stats', 'sidelight.lab.analysis') if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    src = open(sys.modules["sidelight.lab.audit"].__file__).read()
    assert "lab.metrics" not in src.replace("`sidelight.lab.metrics`", "") and "from .metrics" not in src
    assert "from .stats" not in src and "from .analysis" not in src and "from .runner" not in src


def test_audit_scores_by_hand():
    assert score("mrr@10", ["a", "b", "c"], {"c": 1}, None) == 1 / 3
    assert score("rr", ["a"], {"z": 1}, 250) == 1 / 250
    assert score("hit@1", ["a", "b"], {"b": 1}, None) == 0.0
    assert abs(score("ndcg@2", ["a", "b"], {"b": 2, "c": 1}, None) - (2 / 1.5849625007211562) / (2 + 1 / 1.5849625007211562)) < 1e-12


def test_audit_agrees_and_catches_tampering(tmp_path):
    proto = make_lab(tmp_path / "lab")
    out = tmp_path / "run"
    freeze(proto, out)
    run_split(proto, "dev", out)
    run_split(proto, "test", out)
    r = audit(out)
    assert r["agree"], r["problems"]
    assert r["checks"] > 20
    assert main(["lab", "audit", str(out)]) == 0
    path = out / "test" / "result.json"
    res = json.loads(path.read_text())
    res["methods"]["bm25"]["overall"]["mrr@10"] += 0.01
    res["contrasts"][0]["ci_low"] -= 0.001
    path.write_text(json.dumps(res))
    with pytest.raises(RefusedError, match=r"test/result\.json does not match the hash recorded by the test stage"):
        audit(out)  # the run's record catches the edit first
    reseal(out, "test")  # a forger who also rewrote the record: the recomputation still disagrees
    r = audit(out)
    assert not r["agree"] and len(r["problems"]) == 2


def test_audit_reads_only_the_selected_rows_of_a_concept_benchmark(tmp_path):
    """A protocol that keeps part of a shared benchmark (`"select": {"corpus": ...}`, as relation-v2 does
    for FOLDOC and WordNet) is audited over exactly those rows, not the whole file."""
    proto = make_lab(tmp_path / "lab")
    bench = tmp_path / "lab" / "bench.jsonl"
    rows = [json.loads(x) for x in bench.read_text().splitlines()]
    others = [{**r, "qid": f"other-{r['qid']}", "family": f"other-{r['family']}", "corpus": "elsewhere"}
              for r in rows if r["split"] == "test"]
    bench.write_text("".join(json.dumps(r if r["qid"].startswith("other-") else {**r, "corpus": "here"}) + "\n"
                             for r in rows + others))
    p = json.loads(proto.read_text())
    p["benchmark"]["select"] = {"corpus": "here"}
    proto.write_text(json.dumps(p))
    out = tmp_path / "run"
    freeze(proto, out)
    run_split(proto, "dev", out)
    run_split(proto, "test", out)
    r = audit(out)
    assert r["agree"], r["problems"][:5]
    assert r["queries"] == sum(1 for x in rows if x["split"] == "test")
