"""Section windows: every section of a document is encoded (long ones as several windows), each
window knows its section, and a document scores by its best window (the dense lane sees every word)."""

from __future__ import annotations

import numpy as np
import pytest

from sidelight.corpus import Corpus, Record
from sidelight.corpus.passages import window_texts
from sidelight.index import Index
from sidelight.index.index import section_passages
from sidelight.models import Embedder
from sidelight.structures.dense import DenseStore, encode_units

FILLER = " ".join(f"the committee met on day {i} and discussed the weather report once more." for i in range(40))
TAIL = "At the end a volcano erupted and molten lava flowed down into the sea."


def note(rid: str, title: str, parts: list[tuple[list[str], str]]) -> Record:
    """A record with sections: each (heading path, body) becomes its text and its span."""
    text, sections = "", []
    for heading, body in parts:
        start = len(text)
        text += (f"{heading[-1]}\n" if heading else "") + body + "\n\n"
        sections.append({"heading": heading, "start": start, "end": len(text)})
    return Record(rid, title, text, {"path": rid, "sections": sections})


@pytest.fixture(scope="module")
def emb():
    return Embedder.from_spec("minilm", threads=2)


def corpus() -> Corpus:
    return Corpus("notes", [
        note("minutes.md", "Minutes", [([], "Notes of the committee."), (["Meetings"], FILLER + " " + TAIL)]),
        note("garden.md", "Garden", [([], "tomatoes, soil and water."), (["Pests"], "aphids eat the leaves.")]),
        Record("plain.md", "Plain", "rain, wind and a weather report."),
    ])


def test_window_texts_put_title_and_parent_headings_before_each_section():
    r = note("a.md", "A", [([], "lead"), (["H1"], "one"), (["H1", "H2"], "two"), ([], "  ")])
    texts = window_texts(r)
    assert [i for i, _ in texts] == [0, 1, 2]  # a section without words has no window
    assert texts[0][1] == "A\nlead" and texts[1][1] == "A\nH1\none" and texts[2][1] == "A > H1\nH2\ntwo"


def test_every_window_of_every_section_is_encoded_with_its_section(emb):
    c = corpus()
    units = [window_texts(r) for r in c.records]
    owner, section, vectors = encode_units(emb, units, 64)
    # oracle: the first window of each unit is its own `encode` vector; the long section adds its overflow
    flat = [t for u in units for _, t in u]
    extra = len(emb.encode_windows(flat, None, 64)[0])
    assert len(owner) == len(flat) + extra and extra >= 1
    assert np.all(np.diff(owner) >= 0)
    assert owner.tolist().count(0) == 2 + extra and section[owner == 0].tolist() == [0, 1] + [1] * extra
    first = emb.encode(flat)
    starts = [0, 2 + extra, 4 + extra]
    assert np.array_equal(vectors[[0, 1, starts[1], starts[1] + 1, starts[2]]], first)


def test_a_word_past_the_models_window_is_found(emb):
    c = corpus()
    assert emb.count_tokens(c.records[0].text) > emb.max_length  # the tail is past the first window
    plain = Index.build(c, progress=False)
    plain.add_dense(passages=None)  # a corpus with sections gets section windows by default
    assert plain.dense.passages == section_passages(c)
    q = emb.encode(["volcano eruption and lava flowing into the sea"], kind="query")[0]
    sections, cos = plain.dense.window_cosines(0, q)
    best = int(sections[np.argmax(cos)])
    assert best == 1  # the Meetings section holds it
    assert plain.dense.scores_of(q)[0] == pytest.approx(float(cos.max()))
    assert plain.dense.scores_of(q)[0] > float(plain.dense.vectors[0] @ q)  # MaxP sees what FirstP cannot


def test_sections_survive_save_load_and_delete(tmp_path, emb):
    c = corpus()
    index = Index.build(c, progress=False)
    index.add_dense()
    index.save(tmp_path / "idx")
    loaded = Index.load(tmp_path / "idx")
    assert np.array_equal(np.asarray(loaded.dense.window_section), index.dense.window_section)
    loaded.delete(["garden.md"])
    assert set(np.asarray(loaded.dense.window_owner).tolist()) == {0, 1}  # minutes and plain (one whole-text section)
    assert loaded.corpus.ids == ["minutes.md", "plain.md"]


def test_replace_equals_a_fresh_build(emb):
    """`Index.replace` (what sync does): the records, each record's vectors and windows, and the
    rankings of a fresh build (records in another order, which no ranking sees)."""
    c = corpus()
    index = Index.build(c, progress=False)
    index.add_dense()
    changed = note("garden.md", "Garden", [([], "tomatoes and basil."), (["Pests"], "slugs eat lettuce at night.")])
    added = note("alpha.md", "Alpha", [([], "a note about the sea and lava.")])
    index.replace(["garden.md", "plain.md"], [changed, added], [])
    fresh = Index.build(Corpus("notes", [added, changed, c.records[0]]), progress=False)
    fresh.add_dense()
    assert sorted(index.corpus.ids) == fresh.corpus.ids == ["alpha.md", "garden.md", "minutes.md"]
    for rid in fresh.corpus.ids:
        a, b = index.corpus.position[rid], fresh.corpus.position[rid]
        assert np.array_equal(index.dense.vectors[a], fresh.dense.vectors[b])
        rows = lambda d, p: (np.asarray(d.window_owner) == p)  # noqa: E731
        assert np.array_equal(index.dense.windows[rows(index.dense, a)], fresh.dense.windows[rows(fresh.dense, b)])
        assert np.array_equal(index.dense.window_section[rows(index.dense, a)],
                              fresh.dense.window_section[rows(fresh.dense, b)])
    for method in ("bm25", "dense", "rrf"):
        x, y = index.search("lava by the sea", method, 3), fresh.search("lava by the sea", method, 3)
        assert x.ids == y.ids and [h.score for h in x] == pytest.approx([h.score for h in y], rel=1e-12)


def test_a_store_without_sections_refuses_section_windows(emb):
    with pytest.raises(Exception, match="section"):
        DenseStore.build(["a"], "minilm", passages=section_passages(corpus()), progress=False)
