"""Issue 45 item 5: a protocol is validated completely (schema) before anything is written; `lab validate`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sidelight.cli import main
from sidelight.errors import InputError
from sidelight.lab.protocol import load_protocol

from .test_runner import make_lab

REPO = Path(__file__).resolve().parents[2]

# the reproductions: (where in the protocol, the bad value)
BAD = [
    (("depth",), 0), (("depth",), -1), (("depth",), "abc"), (("depth",), True), (("depth",), 10**9),
    (("metrics", "secondary"), ["nope@10"]), (("benchmark",), ["x"]), (("methods", 2, "grid"), {"w": 0.5}),
    (("methods", 2, "grid"), {"w": []}), (("selection", "metric"), "nope@10"), (("corpus",), {}),
    (("index", "tokenizer"), {"bogus": 1}), (("index", "bm25"), {"k1": "abc"}), (("index", "bm25"), {"b": 2}),
    (("statistics", "n_resamples"), 0), (("statistics", "confidence"), 1.5), (("methods",), []),
    (("selection", "tie_break"), {"lab-test-jitter": [["w", "up"]]}), (("bogus_key",), 1),
]


def _set(data: dict, where: tuple, value) -> dict:
    data = json.loads(json.dumps(data))
    node = data
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    return data


@pytest.fixture(scope="module")
def toy(tmp_path_factory) -> Path:
    return make_lab(tmp_path_factory.mktemp("schema") / "lab")


def test_the_toy_and_every_shipped_protocol_validate(toy, capsys):
    assert main(["lab", "validate", str(toy)]) == 0
    assert "valid" in capsys.readouterr().out
    for p in sorted((REPO / "protocols").glob("*.json")):
        load_protocol(p)


@pytest.mark.parametrize("where,value", BAD, ids=[".".join(map(str, w)) + "=" + json.dumps(v) for w, v in BAD])
def test_bad_protocol_refused_by_validate_and_freeze_writes_nothing(toy, tmp_path, capsys, where, value):
    bad = toy.parent / f"bad-{abs(hash((where, json.dumps(value))))}.json"
    bad.write_text(json.dumps(_set(json.loads(toy.read_text()), where, value)))
    for argv in (["lab", "validate", str(bad)], ["lab", "freeze", str(bad), "-o", str(tmp_path / "run")]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("sidelight: error: ") and "Traceback" not in err, err
        assert str(where[0]) in err, err  # the message names the field
    assert not (tmp_path / "run" / "freeze.json").exists()


JSON = st.recursive(st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.floats(allow_nan=False)
                    | st.text(max_size=8), lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=6)


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, prefix + (i,))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_mutation_is_accepted_whole_or_refused_in_one_line(toy, data):
    """Property: replace any field of a valid protocol by any JSON value; validation either accepts a
    protocol whose depth, grids and metrics are usable, or refuses it with an InputError (never a traceback)."""
    proto = json.loads(toy.read_text())
    where = data.draw(st.sampled_from([p for p in _paths(proto) if p]))
    value = data.draw(JSON)
    path = toy.parent / "mutant.json"
    path.write_text(json.dumps(_set(proto, where, value)))
    try:
        p = load_protocol(path)
        p.check_methods()
    except InputError as exc:
        assert "\n" not in str(exc) and str(path) in str(exc)
        return
    assert isinstance(p.depth, int) and p.depth >= 1
    assert all(isinstance(v, list) and v for m in p.methods for v in m.get("grid", {}).values())


def test_no_secondary_metrics_runs_through_the_report(tmp_path):
    """`"secondary": []` once ended in a KeyError in the report after the test split was scored."""
    proto = make_lab(tmp_path / "lab")
    data = json.loads(proto.read_text())
    data["metrics"]["secondary"] = []
    proto.write_text(json.dumps(data))
    assert main(["lab", "all", str(proto), "-o", str(tmp_path / "run")]) == 0
    assert "MRR@10" in (tmp_path / "run" / "report.md").read_text()
