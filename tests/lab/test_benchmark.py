"""Concept benchmark validation (errors name file and line) and the shipped FOLDOC benchmark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sidelight.errors import InputError
from sidelight.lab.benchmark import load_concept_benchmark, sample_ids

REPO = Path(__file__).resolve().parents[2]


def _write(tmp_path, rows):
    p = tmp_path / "b.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def _row(qid, fam, split, typ="paraphrase", **kw):
    return {"qid": qid, "family": fam, "type": typ, "split": split, "query": "some words", "intended_id": "x", **kw}


def test_family_split_mix_names_both_lines(tmp_path):
    p = _write(tmp_path, [_row("a", "F1", "dev"), _row("b", "F2", "test"), _row("c", "F1", "test")])
    with pytest.raises(InputError, match=r"b\.jsonl:3.*F1.*b\.jsonl:1"):
        load_concept_benchmark(p)


@pytest.mark.parametrize("bad, msg", [
    ({"type": "riddle"}, "type 'riddle'"), ({"split": "train"}, "split 'train'"), ({"query": ""}, "query"),
    ({"type": "relation"}, "anchor_id"), ({"anchor_id": "x"}, "anchor_id equals"),
])
def test_bad_rows_name_the_line(tmp_path, bad, msg):
    p = _write(tmp_path, [_row("a", "F1", "dev"), {**_row("b", "F2", "dev"), **bad}])
    with pytest.raises(InputError, match=rf":2: .*{msg}"):
        load_concept_benchmark(p)


def test_unknown_target_and_duplicate_qid(tmp_path):
    with pytest.raises(InputError, match=":1: intended_id 'x' is not a record"):
        load_concept_benchmark(_write(tmp_path, [_row("a", "F1", "dev")]), known_ids={"y"})
    with pytest.raises(InputError, match=":2: duplicate qid"):
        load_concept_benchmark(_write(tmp_path, [_row("a", "F1", "dev"), _row("a", "F1", "dev")]))


def test_shipped_foldoc_benchmark_shape():
    b = load_concept_benchmark(REPO / "benchmarks" / "foldoc-concepts-v1.jsonl")
    fams = b.families()
    assert len(fams) >= 30
    for f in fams:
        qs = [q for q in b.queries if b.family[q] == f]
        assert sorted(b.type[q] for q in qs) == ["application", "boundary", "paraphrase"]
    dev = {b.family[q] for q in b.queries if b.split[q] == "dev"}
    assert len(dev) == len(fams) // 3


def test_sample_rules_differ_but_are_seeded():
    ids = [str(i) for i in range(1, 400, 3)]
    a = sample_ids(ids, 45109, 10, "sorted-int")
    assert a == sample_ids(ids, 45109, 10, "sorted-int")
    assert a != sample_ids(ids, 45109, 10, "shuffle-int")


def test_beir_dev_is_the_train_queries_left_out_of_fitting(scifact_dir):
    from sidelight.corpus.beir import beir_split
    from sidelight.lab.benchmark import load_beir_benchmark
    from sidelight.lab.fit_learned import split_train

    b = load_beir_benchmark(scifact_dir, "test", dev={"split": "train", "seed": 45110, "n_fit": 600})
    train_q, _ = beir_split(scifact_dir, "train")
    test_q, _ = beir_split(scifact_dir, "test")
    _, dev_ids = split_train(train_q, 45110, 600)  # the pilot's own split of the train queries
    assert sorted(b.subset("dev").queries) == dev_ids and len(dev_ids) == 209
    assert sorted(b.subset("test").queries) == sorted(test_q)
    assert all(b.type[q] == "dev" for q in dev_ids)


def test_select_keeps_one_corpus_of_a_shared_file(tmp_path):
    rows = [_row("a1", "A", "dev", corpus="foldoc"), _row("b1", "B", "test", corpus="wordnet"),
            _row("a2", "A", "dev", corpus="foldoc")]
    p = _write(tmp_path, rows)
    assert list(load_concept_benchmark(p, select={"corpus": "foldoc"}).queries) == ["a1", "a2"]
    assert list(load_concept_benchmark(p).queries) == ["a1", "b1", "a2"]
    with pytest.raises(InputError, match="no queries with"):
        load_concept_benchmark(p, select={"corpus": "scifact"})


def test_shipped_relation_benchmark_passes_its_check_and_hashes():
    import hashlib
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "relation-v1-check.py")], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("OK"), proc.stdout
    for line in (REPO / "benchmarks" / "relation-v1.sha256").read_text().splitlines():
        digest, name = line.split()
        assert hashlib.sha256((REPO / name).read_bytes()).hexdigest() == digest, name
    b = load_concept_benchmark(REPO / "benchmarks" / "relation-v1.jsonl", select={"corpus": "wordnet"})
    assert len(b.queries) == 64 and set(b.type.values()) == {"relation"} and len(b.anchor) == 64
