"""The anchor detector: record names found in a question (oracle: hand-made names and questions)."""

from __future__ import annotations

from sidelight.structures.names import NameMatcher, singular
from sidelight.text import stopwords

NAMES = [("GNU C compiler", 0), ("C compiler", 1), ("compiler", 2), ("Multics", 3), ("Multiplexed Information "
         "and Computing Service", 3), ("The Who", 4), ("it", 5), ("C", 6), ("swamp", 7), ("library", 8)]


def matcher() -> NameMatcher:
    return NameMatcher(NAMES, stopwords("lucene-en-v1") | {"who", "what"})


def found(text: str, skip=frozenset()) -> list[tuple[str, tuple[int, ...]]]:
    return [(m.name, m.positions) for m in matcher().find(text, skip)]


def test_longest_multiword_match_wins_and_case_is_ignored():
    assert found("Which language does the gnu c COMPILER compile?") == [("gnu c compiler", (0,))]
    assert found("a C compiler for Multics") == [("c compiler", (1,)), ("multics", (3,))]


def test_aliases_find_their_record():
    assert found("what replaced the Multiplexed Information and Computing Service?") == [
        ("multiplexed information and computing service", (3,))]


def test_stop_word_only_and_one_letter_names_are_never_matched():
    assert found("is it the who or what") == []
    assert matcher().n_names == len({n.lower() for n, _ in NAMES}) - 3  # "The Who", "it", "C" left out


def test_plurals_match_singular_names_and_spans_are_tokens():
    ms = matcher().find("trees of the swamps and libraries")
    assert [(m.name, m.start, m.end) for m in ms] == [("swamp", 3, 4), ("library", 5, 6)]
    assert [singular(t) for t in ["swamps", "libraries", "boxes", "glass", "virus", "axis", "bus", "species",
                                  "churches", "cars"]] == \
        ["swamp", "library", "box", "glass", "virus", "axis", "bus", "species", "church", "car"]
    assert [(m.name, m.start) for m in NameMatcher([("cache", 0)]).find("two caches")] == [("cache", 1)]


def test_skipped_tokens_are_never_part_of_a_name():
    assert found("a C compiler", skip={1}) == [("compiler", (2,))]
    assert found("compiler", skip={0}) == []


def test_a_name_inside_a_word_is_no_match():
    assert found("multicsx and libraryish") == []


def test_a_longer_or_as_written_name_wins_over_an_earlier_overlapping_one():
    m = NameMatcher([("list style", 0), ("Style Settings", 1), ("style settings plugin", 2), ("tag", 3)])
    # "lists style" is a name only through the singular "list"; "Style Settings" is one as written
    assert [(x.name, x.start) for x in m.find("which theme lists Style Settings support")] == [("style settings", 3)]
    # longest first, wherever it starts; the result stays in text order
    assert [x.name for x in m.find("tag lists style settings plugin")] == ["tag", "style settings plugin"]


def test_a_trailing_parenthetical_is_optional():
    m = NameMatcher([("Sliding Panes (Andy's Mode)", 0), ("Mercury (planet)", 1)])
    assert [(x.name, x.positions) for x in m.find("which theme supports Sliding Panes?")] == [("sliding panes", (0,))]
    assert [x.name for x in m.find("sliding panes andy s mode and mercury")] == ["sliding panes andy s mode", "mercury"]
    assert m.find("the planet") == []  # the parenthetical alone names nothing
