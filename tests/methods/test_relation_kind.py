"""The relation lane's kind part (the kind a question asks for, against the folders a record sits in) and
its names v2 and v3 (titles without a collection's common affixes; the asking verb is no name; dates in words).

    Plugins/Alpha.md -> Themes/Gamma.md, People/ana.md, Roundups/2021-05-08.md   (Alpha's neighbours:
    Themes/Gamma.md -> Plugins/Alpha.md                                          a theme, a person and
    Roundups/2021-05-08.md -> Plugins/Alpha.md, Plugins/Beta.md                  a roundup)
    Plugins/Beta.md, Themes/Delta.md

Oracle: idf of each folder stem worked out by hand (N = 6 records): plugin 3 records, theme 2,
people 1, roundup 1.
"""

from __future__ import annotations

import math

import pytest

from sidelight.corpus import Corpus, Edge, Record
from sidelight.index import Index
from sidelight.methods.relation import relation_rank
from sidelight.methods.relation_cues import ISO_DATE, month_dates, spoken_dates, without_affixes
from sidelight.methods.relation_kind import asked_stems, folder_kinds, kind_fit
from sidelight.methods.relation_notes import asking_verbs
from sidelight.structures.names import name_tokens

PATHS = ["Plugins/Alpha.md", "Themes/Gamma.md", "People/ana.md", "Roundups/2021-05-08.md", "Plugins/Beta.md",
         "Themes/Delta.md"]
LINKS = [(0, 1), (0, 2), (0, 3), (1, 0), (3, 0), (3, 4)]
ONLY_KIND = {"n_seeds": 1, "hop_weight": 0.0, "type_weight": 0.0, "context_weight": 0.0, "text_weight": 0.0,
             "dense_weight": 0.0, "name_weight": 0.0, "agree_weight": 0.0, "hub_damping": 0.0, "direction": "out",
             "hops": 1}


@pytest.fixture(scope="module")
def folders():
    recs = [Record(f"r{i}", p.rsplit("/", 1)[1][:-3], "some words", {"path": p}) for i, p in enumerate(PATHS)]
    edges = [Edge(f"r{s}", f"r{t}", "link") for s, t in LINKS]
    return Index.build(Corpus("vault", recs, edges), progress=False)


@pytest.mark.parametrize("question, stems", [
    ("Excalidraw is listed as a supported plugin by which theme?", {"theme"}),
    ("which weekly roundup links the Alpha note", {"week", "roundup"}),  # stops at the relation verb
    ("which board plugin was the update for", {"board", "plugin"}),  # stops at the stop word "was"
    ("who is credited as the speaker of the talk?", {"peopl", "person", "author"}),
    ("what is the name of it", set()),  # "is" ends the kind before it starts
    ("tell me about tables", set()),
])
def test_the_asked_for_kind_is_read_after_which_or_what(question, stems):
    assert asked_stems(question) == stems


def test_a_folder_stem_weighs_its_idf_over_the_records(folders):
    kinds = folder_kinds(folders)
    assert set(kinds) == {"plugin", "theme", "peopl", "roundup"}
    assert kinds["plugin"][1] == pytest.approx(math.log(6 / 2)) and kinds["theme"][1] == pytest.approx(math.log(3))
    assert kinds["roundup"][1] == pytest.approx(math.log(6)) and list(kinds["plugin"][0]) == [0, 4]


def test_the_kind_fit_is_the_idf_of_the_asked_kind_and_the_part_scales_it_over_the_reached(folders):
    nodes = [1, 2, 3]
    assert list(kind_fit(folders, "which theme supports Alpha", nodes)) == pytest.approx([math.log(3), 0.0, 0.0])
    assert list(kind_fit(folders, "who made Alpha", nodes)) == pytest.approx([0.0, math.log(6), 0.0])
    assert list(kind_fit(folders, "what links to Alpha", nodes)) == [0.0, 0.0, 0.0]  # no kind asked
    # the roundup's two links are both plugins: the part is 0 for both (it tells reached records apart)
    both = relation_rank(folders, "which plugin does the 2021-05-08 roundup list", 10, {**ONLY_KIND, "kind_weight": 1.0})
    assert sorted(folders.ids[h.node] for h in both.hits) == ["r0", "r4"] and all(p["kind"] == 0.0 for p in both.parts)


def test_the_kind_part_puts_the_asked_kind_first(folders):
    # from Alpha, one hop: Gamma (r1), ana (r2), 2021-05-08 (r3), each activation 1/3: ties by id without it
    q = "Alpha links to which roundup"
    flat = relation_rank(folders, q, 10, {**ONLY_KIND, "kind_weight": 0.0})
    assert [folders.ids[h.node] for h in flat.hits] == ["r1", "r2", "r3"]
    kind = relation_rank(folders, q, 10, {**ONLY_KIND, "kind_weight": 1.0})
    assert [folders.ids[h.node] for h in kind.hits] == ["r3", "r1", "r2"] and kind.parts[0]["kind"] == 1.0


def test_a_title_is_also_named_without_its_collections_common_affixes():
    # 10 of 12 titles of two words or more start with "obsidian" (>= 2% and >= AFFIX_MIN = 10), 10 end with
    # "plugin"; "rose garden" has neither affix, the one-word title is never cut
    titles = [f"obsidian {w} plugin" for w in "abcdefghij"] + ["rose garden", "plain", "obsidian"]
    short = dict(without_affixes(titles))
    assert [n for i, n in without_affixes(titles) if i == 0] == ["obsidian a", "a plugin", "a"]
    assert 10 not in short and 11 not in short and 12 not in short
    assert without_affixes(titles[:9] + ["rose garden"]) == []  # 9 < AFFIX_MIN: no affix


@pytest.mark.parametrize("question, verbs", [
    ("which roundup links the spaced repetition note", {2}),
    ("what links to Alpha", {1}),
    ("what does the links plugin do", set()),  # do-support: "links" names the plugin
    ("which of the many pages links to Alpha", set()),  # more than `gap` words after the question word
])
def test_the_verb_a_question_asks_with_is_no_name(question, verbs):
    assert asking_verbs(name_tokens(question)) == verbs


def test_names_v2_reads_a_plugin_id_as_a_reader_names_it():
    titles = [f"obsidian-{w}" for w in ("icon-folder", "charts", "git", "tasks", "kanban", "dataview", "excalidraw",
                                        "admonition", "outliner", "calendar")] + ["Weekly Roundup"]
    recs = [Record(f"p{i}", t, "a plugin note", {"path": f"Plugins/{t}.md"}) for i, t in enumerate(titles)]
    recs.append(Record("r", "Weekly Roundup", "news", {"path": "Roundups/Weekly Roundup.md"}))
    index = Index.build(Corpus("vault", recs[:10] + recs[11:], [Edge("r", "p0", "link")]), progress=False)
    q = "which roundup introduced the Icon Folder plugin"
    v1 = relation_rank(index, q, 10, {"names": "v1"})
    v2 = relation_rank(index, q, 10, {"names": "v2"})
    assert not any(a.why == "name" and index.ids[a.position] == "p0" for a in v1.anchors)
    assert [(index.ids[a.position], a.name) for a in v2.anchors if a.why == "name"] == [("p0", "icon folder")]
    assert v2.params["backward_from"] == ["p0"] and index.ids[v2.hits[0].node] == "r"


def test_a_dated_title_is_named_by_its_date_in_words():
    assert spoken_dates(ISO_DATE.match("2021-05-08 Templater & Syncthing")) == [
        "may 8 2021", "8 may 2021"]  # "may" is its own three-letter form
    assert spoken_dates(ISO_DATE.match("2021-09-04")) == ["september 4 2021", "4 september 2021", "sep 4 2021",
                                                        "4 sep 2021"]
    assert ISO_DATE.match("2021-13-04 x") is not None and spoken_dates(ISO_DATE.match("2021-13-04 x")) == []
    assert month_dates(name_tokens("which plugin may help? the May 8, 2021 roundup")) == {5}


def test_names_v3_finds_the_roundup_a_question_dates_in_words():
    recs = [Record("r", "2021-05-08 Templater, Syncthing", "news", {"path": "Roundups/2021-05-08 Templater.md"}),
            Record("p", "Templater", "a plugin", {"path": "Plugins/Templater.md"})]
    index = Index.build(Corpus("vault", recs, [Edge("r", "p", "link")]), progress=False)
    q = "which plugin did the May 8, 2021 roundup recommend"
    v2 = relation_rank(index, q, 10, {"names": "v2"})
    v3 = relation_rank(index, q, 10, {"names": "v3"})
    assert [a.name for a in v2.anchors if a.why == "name"] == []
    assert [(index.ids[a.position], a.name) for a in v3.anchors if a.why == "name"] == [("r", "may 8 2021")]
