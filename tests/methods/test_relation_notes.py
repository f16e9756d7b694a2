"""The relation lane on a notes vault: hub damping, in-links, the named part, and the profiles.

    Alpha Plugin -> Settings, Beta Guide       Beta Guide -> Settings
    Gamma Theme  -> Alpha Plugin, Settings     Delta Roundup -> Alpha Plugin, Settings
    Epsilon      -> Settings                   (Settings: the hub, 5 in-links)

Oracle: activations and damping factors worked out by hand (below).
"""

from __future__ import annotations

import math

import pytest

from sidelight.corpus import Corpus, Edge, Record
from sidelight.index import Index
from sidelight.methods.relation import relation_rank
from sidelight.methods.relation_notes import PROFILES, hub_damping, profile

NOTES = [("n0", "Settings", "options of the app"), ("n1", "Alpha Plugin", "helps with tables"),
         ("n2", "Beta Guide", "how to write tables"), ("n3", "Gamma Theme", "a dark look for the app"),
         ("n4", "Delta Roundup", "weekly news"), ("n5", "Epsilon", "unrelated words")]
LINKS = [("n1", "n0"), ("n1", "n2"), ("n2", "n0"), ("n3", "n1"), ("n3", "n0"), ("n4", "n1"), ("n4", "n0"),
         ("n5", "n0")]
ONLY_GRAPH = {"n_seeds": 1, "hop_weight": 0.0, "type_weight": 0.0, "context_weight": 0.0, "text_weight": 0.0,
              "dense_weight": 0.0, "name_weight": 0.0}


def vault(files: bool) -> Index:
    recs = [Record(i, t, x, {"path": f"{t}.md"} if files else {}) for i, t, x in NOTES]
    return Index.build(Corpus("vault", recs, [Edge(s, t, "link") for s, t in LINKS]), progress=False)


@pytest.fixture(scope="module")
def notes():
    return vault(True)


def ranked(index, r):
    return [index.ids[h.node] for h in r.hits]


def test_profile_is_notes_for_records_read_from_files(notes):
    assert profile(notes) == "notes" and profile(vault(False)) == "dictionary"


def test_hub_damping_is_the_in_degree_idf_to_the_power_g(notes):
    # N = 6: idf(v) = log(7 / (indeg + 1)) / log 7; Settings has 5 in-links, Alpha Plugin 2, Epsilon 0
    d = hub_damping(notes, 0.5)
    assert d[0] == pytest.approx(math.sqrt(math.log(7 / 6) / math.log(7)))
    assert d[1] == pytest.approx(math.sqrt(math.log(7 / 3) / math.log(7)))
    assert d[5] == pytest.approx(1.0)
    assert (hub_damping(notes, 0.0) == 1.0).all()


def test_damping_stops_the_hub_from_taking_the_top(notes):
    q = "what does the Alpha Plugin note link to"
    # from Alpha Plugin: hop 1 Settings = Beta Guide = .5 * 1/2; hop 2 Beta Guide -> Settings adds .25*.5:
    # graph part Settings 1, Beta Guide 2/3
    flat = relation_rank(notes, q, 10, {**ONLY_GRAPH, "hub_damping": 0.0, "direction": "out"})
    assert ranked(notes, flat) == ["n0", "n2"]
    assert [h.activation for h in flat.hits] == pytest.approx([1.0, 2 / 3])
    damped = relation_rank(notes, q, 10, {**ONLY_GRAPH, "hub_damping": 1.0, "direction": "out"})
    assert ranked(notes, damped) == ["n2", "n0"]
    assert [h.activation for h in damped.hits] == pytest.approx(
        [2 / 3 * math.log(7 / 2) / math.log(7), math.log(7 / 6) / math.log(7)])


def test_which_notes_link_to_x_follows_edges_backwards(notes):
    q = "which note links to the Alpha Plugin page"
    r = relation_rank(notes, q, 10, {**ONLY_GRAPH, "hub_damping": 0.0, "direction": "cue"})
    assert r.params["backward_from"] == ["n1"]
    # backward from Alpha Plugin: its in-links Gamma Theme and Delta Roundup, .5 * 1/2 each (ties by id)
    back = [h for h in r.hits if h.backward]
    assert [notes.ids[h.node] for h in back] == ["n3", "n4"]
    assert all(h.seed == 1 and [(notes.ids[e.source], notes.ids[e.target]) for e in h.path]
               == [(notes.ids[h.node], "n1")] for h in back)
    out = relation_rank(notes, q, 10, {**ONLY_GRAPH, "hub_damping": 0.0, "direction": "out"})
    assert "backward_from" not in out.params and not {"n3", "n4"} & set(ranked(notes, out))
    # no in-link wording after a question word: out-links only
    for q in ("what does the Alpha Plugin note link to", "the Alpha Plugin note links to which guide"):
        assert "backward_from" not in relation_rank(notes, q, 10, {"direction": "cue"}).params


def test_unset_parameters_take_the_profile_values():
    for files, name in ((True, "notes"), (False, "dictionary")):
        index = vault(files)
        for q in ("which note links to the Alpha Plugin page", "what does the Alpha Plugin note link to"):
            default = relation_rank(index, q, 10)
            explicit = relation_rank(index, q, 10, PROFILES[name])
            assert [(h.node, h.activation) for h in default.hits] == [(h.node, h.activation) for h in explicit.hits]
            assert default.params["profile"] == name
    # the dictionary profile is the lane as it was: no damping, no in-links, no named part
    assert PROFILES["dictionary"] == {"hub_damping": 0.0, "direction": "out", "name_weight": 0.0, "agree_weight": 0.0,
                                      "kind_weight": 0.0, "names": "v1"}


def test_agreement_rewards_a_note_linked_with_two_named_notes(notes):
    """Alpha Plugin's neighbours (either direction): Settings, Beta Guide, Gamma Theme, Delta Roundup;
    Beta Guide's: Alpha Plugin, Settings. Only Settings is linked with both named notes, so its agreement
    part is the less specific name's fit (summed past the best) / max = 1; every other reached note's is 0."""
    q = "which note goes with both the Alpha Plugin and the Beta Guide"
    r = relation_rank(notes, q, 10, {**ONLY_GRAPH, "hub_damping": 0.0, "direction": "out", "agree_weight": 1.0})
    agree = {notes.ids[h.node]: part["agree"] for h, part in zip(r.hits, r.parts)}
    assert {a.position for a in r.anchors if a.why == "name"} >= {1, 2}
    assert agree.pop("n0") == 1.0 and set(agree.values()) <= {0.0}
    off = relation_rank(notes, q, 10, {**ONLY_GRAPH, "hub_damping": 0.0, "direction": "out", "agree_weight": 0.0})
    assert all("agree" not in part for part in off.parts)  # weight 0 (the dictionary profile's): not computed
    one = relation_rank(notes, "which note goes with the Alpha Plugin", 10,
                        {**ONLY_GRAPH, "hub_damping": 0.0, "direction": "out", "agree_weight": 1.0})
    assert all(part["agree"] == 0.0 for part in one.parts)  # one named note: nothing to agree with


def test_an_in_link_hit_credits_the_stored_edge_it_came_along(tmp_path):
    """Feedback on a backward hit strengthens the edge as stored (Gamma Theme -> Alpha Plugin) and
    nothing else; the next search reads the new weight on that edge."""
    import numpy as np

    from sidelight.lanes.channels import record_success, search_channels

    index = vault(True)
    index.save(tmp_path / "idx")
    index = Index.load(tmp_path / "idx")
    q = "which note links to the Alpha Plugin page"
    r = search_channels(index, q, 10, dense=False, **{**ONLY_GRAPH, "hub_damping": 0.0})
    hit = next(h for h in r.relation.hits if h["id"] == "n3")
    assert hit["links_to_seed"] is True and hit["seed"] == "n1"
    assert [(e["source"], e["target"]) for e in hit["path"]] == [("n3", "n1")]
    before = index.state.overlay_for(index.graph, index.ids)
    res = record_success(index, r.relation.trace_id, "n3")
    assert [(c.source_id, c.target_id, c.type) for c in res.changed_edges] == [("n3", "n1", "link")]
    after = index.state.overlay_for(index.graph, index.ids)
    changed = np.flatnonzero(after != before)
    assert [(index.ids[index.graph.sources[s]], index.ids[index.graph.indices[s]]) for s in changed] == [("n3", "n1")]


def test_a_dated_note_is_named_by_its_date():
    from sidelight.methods.relation_cues import name_matcher

    recs = [Record("r1", "2021-05-08 Templater & Syncthing", "news", {"path": "a.md"}),
            Record("r2", "2021-05-08", "a daily note", {"path": "b.md"}),
            Record("r3", "Templater", "a plugin", {"path": "c.md"})]
    index = Index.build(Corpus("d", recs, [Edge("r1", "r3", "link")]), progress=False)
    found = {(m.name, frozenset(index.ids[p] for p in m.positions))
             for m in name_matcher(index).find("which plugin did the 2021-05-08 roundup mention")}
    # the date names the dated roundup (and the daily note titled by the date alone), nothing else
    assert found == {("2021 05 08", frozenset({"r1", "r2"}))}


@pytest.mark.parametrize("question, asked", [
    ("which roundup introduced the Alpha Plugin as a way to sort tables", "alpha plugin"),  # a verb not in list-v1
    ("which guide recommends Beta Guide for tables", "beta guide"),
    ("who made the Gamma Theme? which roundup lists it", "gamma theme"),  # pronoun: the name before the question
    ("Alpha Plugin is featured in which roundup", "alpha plugin"),  # passive
    ("which theme was designed by Epsilon", "epsilon"),  # agent
    ("what does the Alpha Plugin note link to", None),  # the name is the verb's subject: an out-link question
    ("which plugin does Gamma Theme support", None),
])
def test_in_link_wording_names_the_note_whose_in_links_are_asked(question, asked):
    from sidelight.methods.relation_cues import QUESTION_WORDS, RESIDUAL_STOP
    from sidelight.methods.relation_notes import inward_anchor
    from sidelight.structures.names import NameMatcher, name_tokens

    matcher = NameMatcher([(t, i) for i, (_, t, _) in enumerate(NOTES)], RESIDUAL_STOP)
    tokens = name_tokens(question)
    got = inward_anchor(tokens, matcher.find(question, skip={i for i, t in enumerate(tokens) if t in QUESTION_WORDS}))
    assert (got.name if got else None) == asked


def test_the_hand_list_misses_what_the_lexicon_reads():
    from sidelight.methods.relation_notes import inward_anchor
    from sidelight.structures.names import NameMatcher, name_tokens

    q = "which roundup announced the Alpha Plugin"
    matcher = NameMatcher([("Alpha Plugin", 1)])
    m = matcher.find(q)
    assert inward_anchor(name_tokens(q), m, ("list-v1",)) is None
    assert inward_anchor(name_tokens(q), m, ("verbs",)).name == "alpha plugin"


def test_the_inward_parameter_chooses_lexicon_or_hand_list(notes):
    q = "which roundup announced the Alpha Plugin"  # "announced" is in the lexicon, not in relation-notes-v1's list
    lexicon = relation_rank(notes, q, 10, {**ONLY_GRAPH, "direction": "cue"})
    hand = relation_rank(notes, q, 10, {**ONLY_GRAPH, "direction": "cue", "inward": "list-v1"})
    assert lexicon.params["backward_from"] == ["n1"] and "backward_from" not in hand.params
    # Delta Roundup and Gamma Theme link to Alpha Plugin: only the backward spread reaches them
    assert {"n3", "n4"} <= set(ranked(notes, lexicon)) and not {"n3", "n4"} & set(ranked(notes, hand))


@pytest.mark.parametrize("question, asked", [
    # the asked-for note is the verb's subject: its object, the named note, is linked TO (in-links)
    ("which roundup recommends the Alpha Plugin for tables", "alpha plugin"),
    ("which theme by Epsilon lists Alpha Plugin", "alpha plugin"),  # a name after "by" belongs to the subject
    ("Alpha Plugin is featured in which roundup", "alpha plugin"),  # passive: the asked-for note is the agent
    # a named note (or another subject) is the verb's subject: its out-links are asked for
    ("what does the Delta Roundup recommend for Beta Guide readers", None),  # do-support: the name is the subject
    ("which plugin does the Delta Roundup recommend for Beta Guide users", None),
    ("which plugin lets you use Beta Guide tables", None),  # "you" is the subject of "use"
    ("Delta Roundup's note mentions which Alpha Plugin feature", None),  # NAME VERBs which ...: no question before
    ("the Gamma Theme note thanks Epsilon who mentions it; which plugin is that", None),  # a relative clause of a name
    ("which note suggests how readers should cite Alpha Plugin", None),  # the name in a clause of its own
])
def test_the_subject_rule_reads_the_verb_lexicon_only_when_the_asked_for_note_is_its_subject(question, asked):
    """Hand-read grammar: who does the linking (the verb's subject) decides the direction. The
    lexicon without the rule fires on every one of these but the first three."""
    from sidelight.methods.relation_cues import QUESTION_WORDS, RESIDUAL_STOP
    from sidelight.methods.relation_notes import INWARD_RULES, inward_anchor
    from sidelight.structures.names import NameMatcher, name_tokens

    matcher = NameMatcher([(t, i) for i, (_, t, _) in enumerate(NOTES)], RESIDUAL_STOP)
    tokens = name_tokens(question)
    matches = matcher.find(question, skip={i for i, t in enumerate(tokens) if t in QUESTION_WORDS})
    got = inward_anchor(tokens, matches, (*INWARD_RULES, "subject"))
    assert (got.name if got else None) == asked
    # without the rule the lexicon reads every one of them as an in-link question
    assert inward_anchor(tokens, matches, INWARD_RULES) is not None


def test_the_inward_parameter_subject_keeps_out_link_questions_forward(notes):
    q = "what does the Delta Roundup recommend for Alpha Plugin users"
    lexicon = relation_rank(notes, q, 10, {**ONLY_GRAPH, "direction": "cue"})
    subject = relation_rank(notes, q, 10, {**ONLY_GRAPH, "direction": "cue", "inward": "subject"})
    assert lexicon.params["backward_from"] == ["n1"] and "backward_from" not in subject.params
    # an in-link question still goes backwards from the note it names
    q = "which roundup recommends the Alpha Plugin"
    assert relation_rank(notes, q, 10, {**ONLY_GRAPH, "direction": "cue", "inward": "subject"}
                         ).params["backward_from"] == ["n1"]
