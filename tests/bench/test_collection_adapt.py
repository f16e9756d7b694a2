"""bench/collection_adapt.py: the bootstrap's unit is the family mean, and a bad --model is one line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def mod():
    sys.path.insert(0, str(BENCH))
    try:
        import collection_adapt
    finally:
        sys.path.pop(0)
    return collection_adapt


def test_family_means_average_each_family_in_sorted_order(mod):
    scores = {"q1": {"rr": 1.0}, "q2": {"rr": 0.5}, "q3": {"rr": 0.0}, "q4": {"rr": 0.25}}
    family = {"q1": "b", "q2": "b", "q3": "a", "q4": "c"}
    # by hand: a -> 0.0; b -> (1 + 0.5) / 2 = 0.75; c -> 0.25
    assert mod.family_means(scores, family, "rr") == [0.0, 0.75, 0.25]


@pytest.mark.parametrize("value", ["nowhere=/tmp", "obsidian-hub", "obsidian-hub=/definitely/not/a/model"])
def test_a_bad_model_argument_is_a_usage_error(mod, value, capsys):
    ap = mod.argparse.ArgumentParser()
    with pytest.raises(SystemExit) as exc:
        mod.parse_models([value], ap)
    assert exc.value.code == 2 and "--model" in capsys.readouterr().err
