"""Passages on a sharded index: a hand-made vault with headings (several sections, one section
long enough to become several windows), indexed in one piece and sharded 2 and 3 ways.

The oracle is the index in one piece of the same folder, built from the same vectors: every
method the sharded index says it supports must give the same ids, ranks and scores (1e-9), and
every hit the same best passage (section, snippet, marks, file and lines). A method it cannot
run is refused with one line. With the Ray extra, shards counted and written by Ray tasks and
served by Ray actors (a local Ray instance) answer the same.
"""

from __future__ import annotations

import json
import re
import shutil

import numpy as np
import pytest

from sidelight.capabilities import Capability, UnsupportedError
from sidelight.cli import main
from sidelight.corpus import Record
from sidelight.corpus.folder import load_folder
from sidelight.errors import InputError
from sidelight.index import Index
from sidelight.index.defaults import default_method
from sidelight.index.index import dense_texts, section_passages
from sidelight.index.passages import results_with_passages
from sidelight.index.sharded import ShardedIndex, shard_of
from sidelight.methods import get_method
from sidelight.methods.registry import method_specs
from sidelight.structures.dense import DenseStore

FILLER = " ".join(f"On day {i} the committee met again and read the long weather report aloud." for i in range(45))

NOTES = {
    "minutes.md": "# Minutes\n\nNotes of the garden committee.\n\n## Meetings\n\n" + FILLER
                  + "\n\nAt the very end a volcano erupted and molten lava flowed down into the sea.\n\n"
                  "## Budget\n\nThe budget pays for seeds, tools and a new greenhouse.\n",
    "garden.md": "# Garden\n\nTomatoes, soil and water. See [[Pests]].\n\n## Pests\n\nAphids eat the leaves; "
                 "ladybirds eat aphids.\n\n## Watering\n\nWater the tomatoes early in the morning.\n",
    "pests.md": "# Pests\n\nSlugs eat lettuce at night.\n\n## Remedies\n\nBeer traps catch slugs. Copper tape "
                "keeps slugs away.\n",
    "kitchen/recipes.md": "# Recipes\n\n## Tomato soup\n\nRoast tomatoes with garlic, then blend.\n\n"
                          "## Lava cake\n\nA chocolate cake with a molten centre.\n",
    "kitchen/tools.md": "# Tools\n\nA sharp knife and a heavy pan.\n\n## Care\n\nDry the pan after washing.\n",
    "travel/iceland.md": "# Iceland\n\n## Volcanoes\n\nIceland has many volcanoes; lava fields cover the "
                         "south.\n\n## Weather\n\nThe weather changes every hour.\n",
    "travel/packing.md": "# Packing\n\nBoots, a rain coat and a map.\n",
    "settings.md": "# Settings\n\n## Appearance\n\n### Font size\n\nPinch zoom adjusts the text size on "
                   "mobile.\n\n## Sync\n\nSync keeps your notes on every device; it needs an account.\n",
}

QUERIES = ["volcano lava flowing into the sea", "slugs eat lettuce", "pinch zoom text size", "weather report",
           "tomato soup with garlic", "budget for a greenhouse", "sync account", "molten chocolate"]


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    root = tmp_path_factory.mktemp("vault")
    for name, text in NOTES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def encoded(vault):
    """The vault's records and their vectors with section windows (MiniLM), encoded once."""
    corpus = load_folder(vault)
    passages = section_passages(corpus)
    texts, titles, units = dense_texts(corpus, corpus.records, passages)
    return corpus, DenseStore.build(texts, "minilm", threads=2, progress=False, passages=passages, titles=titles,
                                    units=units)


@pytest.fixture(scope="module")
def built(encoded, tmp_path_factory):
    """(the index in one piece, {shards: the sharded index}) of the vault, from the same vectors."""
    corpus, dense = encoded
    out = tmp_path_factory.mktemp("idx")
    one = Index.write(corpus, out / "one", dense=dense, progress=False)
    sharded = {n: ShardedIndex.write_sharded(corpus, out / f"s{n}", n, dense=dense, progress=False) for n in (2, 3)}
    return one, sharded


def test_the_vault_has_what_the_comparison_needs(built):
    one, sharded = built
    minutes = one.corpus.position["minutes.md"]
    owner = np.asarray(one.dense.window_owner)
    section = np.asarray(one.dense.window_section)
    meetings = section[owner == minutes]
    assert np.bincount(meetings).max() >= 2  # one section became several windows
    assert len(one.corpus) == 8 and one.dense.passages.sections
    for n, sh in sharded.items():
        assert len(set(shard_of(sh.corpus.ids, n).tolist())) == n  # every shard holds records
        assert sh.dense.window_count == one.dense.window_count
        assert Capability.PASSAGES in sh.capabilities()


@pytest.mark.parametrize("n", [2, 3])
def test_each_shard_holds_every_window_of_its_own_records(built, n):
    one, sharded = built
    root = sharded[n].path
    for s in range(n):
        shard = Index.load(root / "shards" / str(s))
        for p, rid in enumerate(shard.corpus.ids):
            q = one.corpus.position[rid]
            mine, theirs = np.asarray(shard.dense.window_owner) == p, np.asarray(one.dense.window_owner) == q
            assert np.array_equal(np.asarray(shard.dense.windows)[mine], np.asarray(one.dense.windows)[theirs])
            assert np.array_equal(np.asarray(shard.dense.window_section)[mine],
                                  np.asarray(one.dense.window_section)[theirs])


def supported(index) -> list[str]:
    """Every method whose needs (with its default parameters) the index offers."""
    offered = index.capabilities()
    return [m.name for m in method_specs() if set(get_method(m.name).needs) <= offered]


def same(a, b) -> None:
    assert a.ids == b.ids
    assert [h.rank for h in a] == [h.rank for h in b]
    assert np.allclose([h.score for h in a], [h.score for h in b], rtol=0, atol=1e-9)


@pytest.mark.parametrize("n", [2, 3])
def test_every_supported_method_and_passage_equals_the_index_in_one_piece(built, n):
    one, sharded = built
    sh = sharded[n]
    methods = supported(sh)
    assert {"bm25", "dense", "hybrid-linear", "rrf", "bm25-sections", "hybrid-sections"} <= set(methods)
    assert default_method(sh) == default_method(one)
    compared = 0
    for method in methods:
        for q in QUERIES:
            try:
                expect = one.search(q, method, 5)
            except InputError as exc:  # e.g. `learned` without a trained model: refused alike
                with pytest.raises(InputError, match="^" + re.escape(str(exc)) + "$"):
                    sh.search(q, method, 5)
                continue
            got = sh.search(q, method, 5)
            same(expect, got)
            assert got.coverage == (n, n)
            a, b = results_with_passages(one, expect), results_with_passages(sh, got)
            assert [h.passage for h in a] == [h.passage for h in b], (method, q)
            compared += 1
    assert compared >= 10 * len(QUERIES)


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("mix", [0.0, 0.25, 0.5])
def test_section_bm25_equals_the_index_in_one_piece(built, n, mix):
    one, sharded = built
    for q in QUERIES:
        same(one.search(q, "bm25-sections", 8, mix=mix), sharded[n].search(q, "bm25-sections", 8, mix=mix))


def test_the_long_sections_tail_is_found_on_its_shard(built):
    one, sharded = built
    for sh in sharded.values():
        hits = results_with_passages(sh, sh.search("volcano lava flowing into the sea", "dense", 3))
        top = next(h for h in hits if h.id == "minutes.md")
        assert top.passage.section == "Minutes > Meetings"
        assert top.passage.path == "minutes.md" and top.passage.lines is not None


def test_what_the_shards_cannot_run_is_refused_in_one_line(built, capsys):
    _, sharded = built
    sh = sharded[2]
    for method, need in (("dense-prf", "vectors"), ("bm25+rm3", "term matrices"), ("floor", "term matrices")):
        with pytest.raises(UnsupportedError, match=re.escape(f"method '{method}' needs {need}: ")):
            sh.search("slugs", method)
    assert main(["search", str(sh.path), "slugs", "-m", "dense-prf"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_commands_that_read_the_arrays_are_refused_by_the_same_check(built, tmp_path):
    """export-web (term counts, vectors) and serendipity (vectors) ask the capability check too:
    one line naming the command, the missing capability and why, before any work."""
    from sidelight.serendipity.store import Serendipity
    from sidelight.structures.dense import held_vectors
    from sidelight.structures.lexical import term_matrices
    from sidelight.web.export import export_web

    _, sharded = built
    sh = sharded[2]
    assert sh.lexical.store is None  # the fan-out scorers hold no arrays
    with pytest.raises(UnsupportedError, match="not held here"):
        term_matrices(sh.lexical)
    with pytest.raises(UnsupportedError, match="not held here"):
        held_vectors(sh.dense)
    with pytest.raises(UnsupportedError, match=re.escape("command 'serendipity' needs vectors: the record vectors "
                                                         "stay on the shards of a sharded index")):
        Serendipity(sh)
    for lean in (False, True):
        with pytest.raises(UnsupportedError, match=re.escape("command 'export-web' needs term matrices: each "
                                                             "term-count and weight matrix stays on the shards")):
            export_web(sh.path, tmp_path / "site", lean=lean)
    assert not (tmp_path / "site").exists()


def test_add_and_delete_keep_passages_equal_to_the_index_in_one_piece(built, tmp_path):
    one, sharded = built
    shutil.copytree(one.path, tmp_path / "one")
    shutil.copytree(sharded[3].path, tmp_path / "s3")
    text = "# Moss\n\n## Shade\n\nMoss grows in the shade of old walls.\n"
    note = Record("moss.md", "Moss", text, {"path": "moss.md", "sections": [
        {"heading": ["Moss"], "start": 0, "end": 7, "lines": [1, 1]},
        {"heading": ["Moss", "Shade"], "start": 8, "end": len(text), "lines": [3, 5]}]})
    for folder in (tmp_path / "one", tmp_path / "s3"):
        with Index.edit(folder) as index:
            index.add([note])
        with Index.edit(folder) as index:
            index.delete(["pests.md"])
    a, b = Index.load(tmp_path / "one"), Index.load(tmp_path / "s3")
    assert isinstance(b, ShardedIndex) and b.dense.window_count == a.dense.window_count
    for q in ("moss in the shade", "slugs eat lettuce", "volcano lava"):
        for method in ("dense", "hybrid-linear", "bm25-sections"):
            x, y = a.search(q, method, 5), b.search(q, method, 5)
            same(x, y)
            assert [h.passage for h in results_with_passages(a, x)] == [h.passage for h in results_with_passages(b, y)]


def test_vectors_added_to_a_sharded_index_go_to_its_shards_with_their_windows(encoded, built, tmp_path, capsys):
    """`sidelight dense IDX` on a sharded index without vectors: every shard gets its records' vectors
    and section windows, and the index answers as the index in one piece built with them."""
    corpus, _ = encoded
    one, _ = built
    path = tmp_path / "s3"
    ShardedIndex.write_sharded(corpus, path, 3, progress=False)
    assert main(["dense", str(path), "--model", "minilm", "-q"]) == 0
    assert "section windows" in capsys.readouterr().out
    sh = Index.load(path)
    assert isinstance(sh, ShardedIndex) and Capability.PASSAGES in sh.capabilities()
    assert sh.dense.window_count == one.dense.window_count
    for q in QUERIES:
        for method in ("dense", "hybrid-linear", "hybrid-sections"):
            x, y = one.search(q, method, 5), sh.search(q, method, 5)
            same(x, y)
            assert [h.passage for h in results_with_passages(one, x)] == [h.passage for h in results_with_passages(sh, y)]


def test_the_cli_writes_a_sharded_index_with_passages(vault, tmp_path, capsys):
    assert main(["index", str(vault), "-o", str(tmp_path / "idx"), "--dense", "minilm", "--shards", "2", "-q"]) == 0
    out = capsys.readouterr().out
    assert "in 2 shards" in out and "section windows" in out
    assert main(["search", str(tmp_path / "idx"), "pinch zoom", "--json"]) == 0
    hit = json.loads(capsys.readouterr().out)["hits"][0]
    assert hit["id"] == "settings.md" and hit["passage"]["section"] == "Settings > Appearance > Font size"


def test_on_ray_a_build_and_its_actors_answer_as_in_this_process(encoded, built, tmp_path):
    """Shards counted and written by Ray tasks, then served by Ray actors: the same windows in each
    shard as the in-process build, and the same hits and passages as the index in one piece; vectors
    and section windows encoded by Ray Data: those encoded in this process."""
    ray = pytest.importorskip("ray", reason="the Ray extra is not installed: pip install 'sidelight[ray]'")
    from sidelight.index.ray_shards import connect, ray_builders, ray_encode, serve_on_ray

    one, sharded = built
    corpus, dense = encoded
    connect("local", num_cpus=2)
    try:
        on_ray = ShardedIndex.write_sharded(corpus, tmp_path / "ray", 3, dense=dense, progress=False,
                                            builders=ray_builders)
        for s in range(3):
            a, b = Index.load(tmp_path / "ray" / "shards" / str(s)), Index.load(sharded[3].path / "shards" / str(s))
            assert a.corpus.ids == b.corpus.ids
            for name in ("windows", "window_owner", "window_section"):
                assert np.array_equal(np.asarray(getattr(a.dense, name)), np.asarray(getattr(b.dense, name)))
        actors = serve_on_ray(on_ray, address="local", budget=600.0)  # generous: a loaded machine must not cut a shard
        try:
            for method in ("dense", "hybrid-linear", "bm25-sections", "hybrid-sections"):
                for q in QUERIES:
                    x, y = one.search(q, method, 5), on_ray.search(q, method, 5)
                    same(x, y)
                    assert y.coverage == (3, 3)
                    assert [h.passage for h in results_with_passages(one, x)] == \
                        [h.passage for h in results_with_passages(on_ray, y)]
        finally:
            actors.close()
        # the vectors and section windows encoded by Ray Data: the in-process encoding's windows (owners and
        # sections equal, vectors within the float error of other batches), and the same hits
        passages = section_passages(corpus)
        texts, titles, units = dense_texts(corpus, corpus.records, passages)
        remote = ray_encode(texts, "minilm", workers=2, batch_size=4, passages=passages, titles=titles, units=units)
        assert np.array_equal(remote.window_owner, dense.window_owner)
        assert np.array_equal(remote.window_section, dense.window_section)
        assert np.sum(remote.windows * dense.windows, axis=1).min() > 0.99999
        assert np.sum(remote.vectors * dense.vectors, axis=1).min() > 0.99999
        plain = ray_encode(texts, "minilm", workers=1, batch_size=4)  # without passages: one vector per record
        assert plain.passages is None and plain.window_count == 0
        assert np.sum(plain.vectors * dense.vectors, axis=1).min() > 0.99999
        encoded_on_ray = ShardedIndex.write_sharded(corpus, tmp_path / "encoded", 2, dense=remote, progress=False)
        for q in QUERIES:
            x, y = one.search(q, "hybrid-linear", 5), encoded_on_ray.search(q, "hybrid-linear", 5)
            assert x.ids == y.ids
            assert [h.passage.section for h in results_with_passages(one, x)] == \
                [h.passage.section for h in results_with_passages(encoded_on_ray, y)]
    finally:
        ray.shutdown()


def test_the_labs_section_picker_shows_what_search_shows_on_shards(built):
    """section@3 (`lab.sections.Picker`) judges the section `search` shows: on shards too, where the
    section windows' cosines come from the record's shard."""
    from sidelight.lab.sections import Picker

    one, sharded = built
    for index in (one, sharded[2]):
        picker = Picker(index)
        for q in QUERIES:
            for h in results_with_passages(index, index.search(q, "dense", 3)):
                assert " > ".join(picker.heading(q, h.id)) == h.passage.section, (q, h.id)
