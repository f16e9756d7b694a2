"""The pick's incumbent on hand-made dev scores: the incumbent (e.g. the global default at its fixed setting)
stays the pick unless the candidate the rule chose leads it on dev with a paired interval above zero.

Oracle, by hand: a bootstrap resample mean of differences that are all positive is at least the
smallest of them, so its lower bound is above 0; differences of +0.5 and -0.5 on alternate families
(mean +0.02 over ten) leave resamples below zero, so the lower bound is below it."""

from __future__ import annotations

import numpy as np
import pytest

from sidelight.errors import InputError
from sidelight.lab.pick import check_pick, pick

SPEC = {"name": "auto", "singles": ["bm25", "dense"], "fused": ["hybrid", "default"], "incumbent": "default"}
STATS = {"seed": 7, "n_resamples": 2000, "n_flips": 2000, "confidence": 0.95}
DEFAULT = np.array([0.5, 0.4, 0.6, 0.5, 0.3, 0.7, 0.5, 0.4, 0.6, 0.5])  # ten target documents (families)


def run(hybrid: np.ndarray, spec: dict = SPEC) -> dict:
    vec = {"bm25": DEFAULT - 0.1, "dense": DEFAULT - 0.2, "hybrid": hybrid, "default": DEFAULT}
    return pick(spec, {lab: {"mrr@10": float(v.mean())} for lab, v in vec.items()}, "mrr@10", vec, STATS)


def test_a_lead_on_every_family_replaces_the_anchor():
    lift = np.array([0.1, 0.2, 0.1, 0.3, 0.1, 0.2, 0.1, 0.1, 0.2, 0.1])
    p = run(DEFAULT + lift)
    assert p["chosen"] == "hybrid" and p["fused_chosen"]
    ev = p["incumbent"]
    assert not ev["holds"] and ev["difference"] == pytest.approx(lift.mean()) and ev["ci_low"] >= 0.1 - 1e-12
    assert "hybrid replaces the incumbent default" in p["note"]


def test_a_noisy_lead_keeps_the_anchor():
    d = np.array([0.5, -0.5, 0.5, -0.5, 0.5, -0.5, 0.5, -0.5, 0.5, -0.3]) / 5  # mean +0.004, half the families lose
    p = run(DEFAULT + d)
    assert float((DEFAULT + d).mean()) > float(DEFAULT.mean())  # the rule without an incumbent takes hybrid
    assert run(DEFAULT + d, {k: v for k, v in SPEC.items() if k != "incumbent"})["chosen"] == "hybrid"
    assert p["chosen"] == "default" and p["incumbent"]["holds"] and p["incumbent"]["ci_low"] < 0
    assert "the incumbent default stays" in p["note"]
    assert p["margins"]["hybrid"] == pytest.approx(-float(d.mean()))  # margins are the kept pick's


def test_the_anchor_itself_best_needs_no_interval():
    p = run(DEFAULT - 0.05)
    assert p["chosen"] == "default" and "incumbent" not in p


def test_the_anchor_must_be_a_candidate_and_needs_dev_vectors():
    with pytest.raises(InputError, match="pick.incumbent 'rrf' is not one of the pick's candidates"):
        check_pick({**SPEC, "incumbent": "rrf"}, {"bm25", "dense", "hybrid", "default", "rrf"}, "p.json")
    with pytest.raises(InputError, match="needs per-family dev scores"):
        pick(SPEC, {lab: {"mrr@10": 0.5} for lab in ["bm25", "dense", "hybrid", "default"]}, "mrr@10")
