"""`sidelight sync`: a folder's added, edited, deleted and renamed notes, applied to its index, give
the index a fresh build of the same folder gives; a kill during the sync leaves the old or the new."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from sidelight.cli import main
from sidelight.index import Index
from sidelight.index.sync import plan, sync

NOTES = {
    "Gardening.md": "# Gardening\n\nTomatoes need sun. See [[Watering]] and [[Pests#Slugs|slugs]].\n",
    "Watering.md": "---\naliases: [Irrigation]\n---\n# Watering\n\nWater early in the morning. Back to [[Gardening]], or to [[Tools]].\n",
    "Pests.md": "# Pests\n\n## Slugs\n\nSlugs eat lettuce at night. Beer traps help.\n\n## Aphids\n\nLadybirds eat aphids.\n",
    "Old.md": "# Old\n\nAn old note about compost, linked from [[Gardening]].\n",
    "sub/Tools.md": "# Tools\n\nA spade and a rake. Compare [[Old]].\n",
}
METHODS = ("bm25", "tfidf", "dense", "rrf", "hybrid-linear", "bm25+ppr", "relation")
QUERIES = ("slugs eating lettuce", "watering in the morning", "compost heap", "garden tools spade")


def write(folder: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")


def fresh(folder: Path, out: Path) -> Index:
    """The index `sidelight index FOLDER --dense minilm` builds."""
    assert main(["index", str(folder), "-o", str(out), "--dense", "minilm", "-q"]) == 0
    return Index.load(out)


def same_index(a: Index, b: Index) -> None:
    """Same records (with their metadata), edges and rankings for every method and query."""
    key = lambda r: (r.id, r.title, r.text, json.dumps(r.metadata, sort_keys=True), r.aliases)  # noqa: E731
    assert sorted(map(key, a.corpus.records)) == sorted(map(key, b.corpus.records))
    ekey = lambda e: (e.source, e.target, e.type, e.weight, e.context, e.anchor)  # noqa: E731
    assert sorted(map(ekey, a.corpus.edges)) == sorted(map(ekey, b.corpus.edges))
    for method in METHODS:
        for q in QUERIES:
            x, y = a.search(q, method, 10), b.search(q, method, 10)
            assert x.ids == y.ids, (method, q)
            assert np.allclose([h.score for h in x], [h.score for h in y], rtol=1e-9, atol=1e-12), (method, q)


def test_plan_names_each_kind_of_change():
    stored = {"a": "1", "b": "2", "c": "3", "d": "4"}
    current = {"a": "1", "b": "9", "e": "3", "f": "5"}
    p = plan(stored, current)
    assert (p.added, p.changed, p.deleted, p.renamed, p.unchanged) == (["f"], ["b"], ["d"], [("c", "e")], 1)


def edit_and_sync(vault: Path, idx: Path):
    """Edit one note (new link), delete one, rename one, add one that links into the renamed note;
    sync, and check the report names each change."""
    write(vault, {"Gardening.md": NOTES["Gardening.md"] + "\n## Compost\n\nA heap of leaves; see [[Tools]].\n",
                  "New.md": "# New\n\nSpades are in [[Implements]]. Slugs again.\n"})
    (vault / "Old.md").unlink()
    (vault / "sub/Tools.md").rename(vault / "sub/Implements.md")
    report = sync(idx, vault)
    assert (report.added, report.changed, report.deleted, report.renamed) == (
        ["New.md"], ["Gardening.md"], ["Old.md"], [("sub/Tools.md", "sub/Implements.md")])
    return report


def test_sync_equals_a_fresh_index_of_the_same_folder(tmp_path):
    vault = tmp_path / "vault"
    write(vault, NOTES)
    fresh(vault, tmp_path / "idx")
    report = edit_and_sync(vault, tmp_path / "idx")
    # links into the deleted and the renamed note are reported
    assert report.dangling == [("Watering.md", "sub/Tools.md"), ("sub/Implements.md", "Old.md")]
    synced = Index.load(tmp_path / "idx")
    same_index(synced, fresh(vault, tmp_path / "fresh"))
    # nothing changed: no new generation
    gen = (tmp_path / "idx" / "index.json").read_text()
    assert sync(tmp_path / "idx", vault).written is False
    assert (tmp_path / "idx" / "index.json").read_text() == gen


def test_a_sharded_index_syncs_to_what_a_fresh_sharded_index_of_the_folder_holds(tmp_path):
    """The same edits on an index in 2 shards with vectors: the synced index equals a fresh sharded
    index of the changed folder and an index in one piece of it (the oracles), for every method; a
    second sync writes nothing."""
    vault = tmp_path / "vault"
    write(vault, NOTES)
    assert main(["index", str(vault), "-o", str(tmp_path / "idx"), "--dense", "minilm", "--shards", "2", "-q"]) == 0
    assert Index.load(tmp_path / "idx").manifest["source"] == {"folder": str(vault.resolve()), "exclude": []}
    edit_and_sync(vault, tmp_path / "idx")
    synced = Index.load(tmp_path / "idx")
    assert main(["index", str(vault), "-o", str(tmp_path / "fresh2"), "--dense", "minilm", "--shards", "2", "-q"]) == 0
    same_index(synced, Index.load(tmp_path / "fresh2"))
    same_index(synced, fresh(vault, tmp_path / "fresh"))
    assert sync(tmp_path / "idx", vault).written is False


def test_learned_weights_stay_on_edges_that_survive(tmp_path):
    vault = tmp_path / "vault"
    write(vault, NOTES)
    index = fresh(vault, tmp_path / "idx")
    lane = index.search_channels("tomatoes need sun gardening", limit=5).relation
    assert lane.hits, "the relation lane reaches a linked note"
    index.state.record_success(lane.trace_id, lane.hits[0].id)
    learned = index.state.overlay()
    assert learned
    write(vault, {"Pests.md": NOTES["Pests.md"] + "\nMore pests.\n"})
    sync(tmp_path / "idx", vault)
    after = Index.load(tmp_path / "idx")
    assert after.state.overlay() == learned
    edges = {(e.source, e.target, e.type) for e in after.corpus.edges}
    assert set(learned) <= edges  # every learned edge survived, so its weight still applies
    factors = after.state.overlay_for(after.graph, after.corpus.ids)
    assert np.count_nonzero(factors != 1.0) == len(learned)  # each learned edge, in its new position


def test_cli_sync_and_index_update(tmp_path, capsys):
    vault = tmp_path / "vault"
    write(vault, NOTES)
    assert main(["index", str(vault), "-o", str(tmp_path / "idx"), "-q"]) == 0
    write(vault, {"Pests.md": NOTES["Pests.md"].replace("Beer traps", "Copper tape")})
    assert main(["sync", str(vault), str(tmp_path / "idx"), "-q"]) == 0
    assert "0 added, 1 changed, 0 deleted" in capsys.readouterr().out
    assert main(["index", str(vault), "-o", str(tmp_path / "idx"), "--update", "-q"]) == 0
    assert "up to date" in capsys.readouterr().out
    hits = Index.load(tmp_path / "idx").search("copper tape", "bm25", 1)
    assert hits.ids == ["Pests.md"]


KILL_AT = {"while writing": "store.write_manifest", "between the renames": "store.publish"}


@pytest.mark.parametrize("point", sorted(KILL_AT))
def test_a_kill_during_sync_leaves_the_old_index(tmp_path, point):
    vault = tmp_path / "vault"
    write(vault, NOTES)
    assert main(["index", str(vault), "-o", str(tmp_path / "idx"), "-q"]) == 0
    before = sorted(Index.load(tmp_path / "idx").corpus.ids)
    (vault / "Old.md").unlink()
    patch = textwrap.dedent(f"""
        import os, signal
        from sidelight.index import store
        def die(*a, **k):
            os.kill(os.getpid(), signal.SIGKILL)
        {KILL_AT[point]} = die
    """)
    code = patch + "\nimport sys; from sidelight.cli import main; sys.exit(main(sys.argv[1:]))"
    r = subprocess.run([sys.executable, "-c", code, "sync", str(vault), str(tmp_path / "idx"), "-q"],
                       capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert r.returncode == -signal.SIGKILL
    assert sorted(Index.load(tmp_path / "idx").corpus.ids) == before  # the old index, whole
    assert main(["sync", str(vault), str(tmp_path / "idx"), "-q"]) == 0  # the next writer recovers
    assert "Old.md" not in Index.load(tmp_path / "idx").corpus.ids


def test_a_new_name_changes_old_links_as_a_fresh_index_resolves_them(tmp_path, monkeypatch):
    """Links of unchanged notes are resolved again where a name came or went: an unresolved link
    finds its new note, and a shorter path with the same name takes a bare link over (Obsidian's rule)."""
    import sidelight.index.sync as sync_module

    vault = tmp_path / "vault"
    write(vault, {**NOTES, "Plans.md": "# Plans\n\nNext year: [[Later]], and sharpen the [[Tools]].\n"})
    fresh(vault, tmp_path / "idx")
    monkeypatch.setattr(sync_module, "_sync_all", None)  # the quick path only: calling it would fail
    write(vault, {"Later.md": "# Later\n\nSome day.\n", "Tools.md": "# Tools\n\nThe shed's own list.\n"})
    report = sync(tmp_path / "idx", vault)
    assert report.added == ["Later.md", "Tools.md"] and report.written
    synced = Index.load(tmp_path / "idx")
    edges = {(e.source, e.target) for e in synced.corpus.edges}
    assert {("Plans.md", "Later.md"), ("Plans.md", "Tools.md"), ("Watering.md", "Tools.md")} <= edges
    assert ("Watering.md", "sub/Tools.md") not in edges
    same_index(synced, fresh(vault, tmp_path / "fresh"))
    # the corpus hash of the copied generation is the one its records and edges give
    assert synced.manifest["corpus"]["hash"] == synced.corpus.content_hash()
    assert report.reader.unresolved == [] and report.reader.edges == len(synced.corpus.edges)


def test_a_touched_file_is_hashed_and_nothing_is_written(tmp_path):
    vault = tmp_path / "vault"
    write(vault, NOTES)
    assert main(["index", str(vault), "-o", str(tmp_path / "idx"), "-q"]) == 0
    st = (vault / "Pests.md").stat()
    os.utime(vault / "Pests.md", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    gen = (tmp_path / "idx" / "index.json").read_text()
    report = sync(tmp_path / "idx", vault)
    assert report.empty and not report.written and report.unchanged == len(NOTES)
    assert (tmp_path / "idx" / "index.json").read_text() == gen


def test_an_index_without_a_folder_state_is_synced_in_full_and_gets_one(tmp_path):
    from sidelight.corpus.folder import load_folder
    from sidelight.corpus.model import Corpus

    vault = tmp_path / "vault"
    write(vault, NOTES)
    read = load_folder(vault)
    Index.write(Corpus(read.name, read.records, read.edges), tmp_path / "idx", progress=False)  # no file stats
    assert not (tmp_path / "idx" / "gen-000001" / "folder.json").exists()
    write(vault, {"Pests.md": NOTES["Pests.md"].replace("Beer traps", "Copper tape")})
    assert sync(tmp_path / "idx", vault).changed == ["Pests.md"]
    gen = Index.load(tmp_path / "idx")
    assert (tmp_path / "idx" / store_generation(tmp_path / "idx") / "folder.json").is_file()
    assert gen.search("copper tape", "bm25", 1).ids == ["Pests.md"]


def store_generation(root: Path) -> str:
    from sidelight.index import store

    return store.current_generation(root)


def test_links_into_a_changed_note_stay(tmp_path):
    """Editing a note replaces its own links only: links into it from unchanged notes stay, as a
    fresh reading of the folder has them."""
    from sidelight.corpus.folder import load_folder

    vault = tmp_path / "vault"
    write(vault, NOTES)
    assert main(["index", str(vault), "-o", str(tmp_path / "idx"), "-q"]) == 0
    write(vault, {"Pests.md": NOTES["Pests.md"] + "\nSee also [[Old]].\n",
                  "Watering.md": NOTES["Watering.md"].replace("[[Tools]]", "[[Pests#Aphids]]")})
    assert sync(tmp_path / "idx", vault).changed == ["Pests.md", "Watering.md"]
    synced, read = Index.load(tmp_path / "idx"), load_folder(vault)
    ekey = lambda e: (e.source, e.target, e.type, e.weight, e.context, e.anchor)  # noqa: E731
    assert [ekey(e) for e in synced.corpus.edges] == [ekey(e) for e in read.edges]  # same edges, same order
    assert ("Gardening.md", "Pests.md") in {(e.source, e.target) for e in synced.corpus.edges}
    assert synced.manifest["corpus"]["hash"] == synced.corpus.content_hash()


def test_new_readers_make_sync_read_every_file_again_and_replace_what_reads_differently(tmp_path, monkeypatch):
    """Readers that read the same bytes differently (here: Pests.md's title) leave an index stale that a
    hash-only sync calls up to date; the state's reader version makes the sync read every file again
    and replace exactly the records that now read differently."""
    import sidelight.index.sync as sync_module
    from sidelight.index import folderstate

    vault = tmp_path / "vault"
    write(vault, NOTES)
    assert main(["index", str(vault), "-o", str(tmp_path / "idx"), "-q"]) == 0
    original = sync_module.read_document

    def new_reader(root, rel, *a, **kw):
        record, issues = original(root, rel, *a, **kw)
        if record is not None and rel == "Pests.md":
            record = type(record)(record.id, "Pests and slugs", record.text, record.metadata, record.aliases)
        return record, issues

    monkeypatch.setattr(sync_module, "read_document", new_reader)
    assert sync(tmp_path / "idx", vault).empty  # same reader version: the hashes alone say nothing changed
    monkeypatch.setattr(folderstate, "READER_VERSION", folderstate.READER_VERSION + 1)
    report = sync(tmp_path / "idx", vault)
    assert report.changed == ["Pests.md"] and report.written and report.unchanged == len(NOTES) - 1
    titles = {r.id: r.title for r in Index.load(tmp_path / "idx").corpus.records}
    assert titles["Pests.md"] == "Pests and slugs" and titles["Old.md"] == "Old"
    assert sync(tmp_path / "idx", vault).empty  # the new state names the new readers
