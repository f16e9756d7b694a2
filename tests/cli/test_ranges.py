"""Issue 45 item 3: every numeric option and method parameter has a declared range, enforced in one line."""

from __future__ import annotations

import argparse
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sidelight.cli import build_parser
from sidelight.cli.ranges import RANGES, check_ranges
from sidelight.errors import InputError

from .test_bad_input import refused


def _numeric_options():
    """(command path, flag, dest, type) of every int/float option in the real parser tree."""
    out = []

    def walk(parser, path):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, path + (name,))
            elif action.type in (int, float) and action.option_strings:
                out.append((path, action.option_strings[-1], action.dest, action.type))
    walk(build_parser(), ())
    return out


OPTIONS = _numeric_options()


def test_every_numeric_option_has_a_declared_range():
    missing = sorted({f"{' '.join(p)} {flag}" for p, flag, dest, _ in OPTIONS if dest not in RANGES})
    assert not missing, missing
    for dest, (_, lo, hi) in RANGES.items():
        assert math.isfinite(lo) and math.isfinite(hi) and lo <= hi


def test_every_default_lies_in_its_range():
    """A range that refuses an option's own default would break the command run without the flag."""
    bad = []

    def walk(parser, path):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, path + (name,))
            elif action.dest in RANGES and isinstance(action.default, (int, float)) and \
                    not isinstance(action.default, bool):
                lo, hi = RANGES[action.dest][1:]
                if not lo <= action.default <= hi:
                    bad.append((" ".join(path), action.dest, action.default))
    walk(build_parser(), ())
    assert not bad, bad


def test_copied_limits_agree_with_their_sources():
    from sidelight.cli import ranges
    from sidelight.lab.schema import MAX_TITLE_WEIGHT
    from sidelight.serendipity.seating import MAX_DIAL
    from sidelight.lanes.budget import MAX_BUDGET_MS, MIN_BUDGET_MS

    assert (ranges.MAX_TITLE_WEIGHT, ranges.MAX_DIAL, ranges.MIN_BUDGET_MS, ranges.MAX_BUDGET_MS) == \
        (MAX_TITLE_WEIGHT, MAX_DIAL, MIN_BUDGET_MS, MAX_BUDGET_MS)


def test_a_huge_title_weight_is_refused_before_anything_is_read(tmp_path, capsys):
    src = tmp_path / "t.jsonl"
    src.write_text(json.dumps({"id": "a", "text": "x"}) + "\n")
    refused(capsys, ["index", str(src), "-o", str(tmp_path / "i"), "--title-weight", "100000000"],
            "--title-weight must be <= 100, got 100000000")
    refused(capsys, ["index", str(src), "-o", str(tmp_path / "i"), "--shards", "100000"], "--shards must be <= 4096")
    refused(capsys, ["index", str(src), "-o", str(tmp_path / "i"), "--k1", "nan"], "--k1 must be a finite number")
    from sidelight.methods import get_method

    with pytest.raises(InputError, match=r"parameter 'title_weight' must be an integer in \[1, 100\] or null"):
        get_method("bm25+rm3", title_weight=100_000_000)
    assert not (tmp_path / "i").exists()


NUMBERS = st.one_of(st.integers(-(2**70), 2**70), st.floats(allow_nan=True, allow_infinity=True))


@settings(max_examples=300, deadline=None)
@given(option=st.sampled_from(OPTIONS), value=NUMBERS)
def test_any_value_of_any_numeric_option(option, value):
    """Property: a value argparse reads for a numeric option passes `check_ranges` exactly when it is finite
    and inside the option's range (the oracle: the range written here, compared as plain numbers)."""
    path, flag, dest, kind = option
    if kind is int and isinstance(value, float):
        return  # argparse refuses a float for an int option itself (usage error)
    lo, hi = RANGES[dest][1:]
    ns = argparse.Namespace(**{dest: kind(value)})
    inside = math.isfinite(float(value)) and lo <= value <= hi
    if inside:
        check_ranges(ns)
    else:
        with pytest.raises(InputError) as exc:
            check_ranges(ns)
        assert RANGES[dest][0] in str(exc.value) and "\n" not in str(exc.value)


def _numeric_params():
    from sidelight.methods import method_specs

    out = []
    for spec in method_specs():
        for p in spec.params:
            if p.kind in (int, float):
                out.append((spec.name, p))
    return out


PARAMS = _numeric_params()


def test_every_numeric_method_parameter_has_a_finite_range():
    for name, p in PARAMS:
        assert p.low is not None and p.high is not None and math.isfinite(p.high), (name, p.name)


@settings(max_examples=300, deadline=None)
@given(param=st.sampled_from(PARAMS), value=NUMBERS)
def test_any_value_of_any_method_parameter(param, value):
    """Property: a parameter value is accepted only inside its declared [low, high], else one-line InputError."""
    name, p = param
    try:
        got = p.check(name, value)
    except InputError as exc:
        assert "\n" not in str(exc) and p.name in str(exc)
        return
    assert got is None or (math.isfinite(got) and p.low <= got <= p.high)
