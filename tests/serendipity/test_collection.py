"""Serendipity on a collection (issue 47, item 4): a note's sections are its chunks, and the notes'
link graph is the distance rule (two notes linked directly, or through one note, are never a pair;
notes three or more links apart can be)."""

import numpy as np
import pytest
import scipy.sparse as sp

from sidelight.corpus.folder import load_folder
from sidelight.index import Index
from sidelight.serendipity.chunks import section_vectors
from sidelight.serendipity.rules import graph_distances
from sidelight.serendipity.store import Serendipity, SerendipityConfig

from tests.serendipity.test_certify import _pairs, certify
from tests.serendipity.test_reveal import FakeEmbedder
from tests.serendipity.synth import PLANTED, PLANTED_MARKER, planted_corpus

# two records outside every planted pair, topics 0 and 4, to route links through
VIA = (2, 44)


@pytest.fixture(scope="module")
def planted():
    return planted_corpus()


def _graph(n, edges):
    a, b = np.array(edges).T
    return sp.csr_matrix((np.ones(2 * len(a)), (np.r_[a, b], np.r_[b, a])), shape=(n, n))


@pytest.mark.parametrize("edges, hops, certified", [
    ([PLANTED], 1, False),  # linked directly
    ([(PLANTED[0], VIA[0]), (VIA[0], PLANTED[1])], 2, False),  # one note between them
    ([(PLANTED[0], VIA[0]), (VIA[0], VIA[1]), (VIA[1], PLANTED[1])], 3, True),  # three links apart
])
def test_link_graph_distance_decides_a_planted_pair(planted, edges, hops, certified):
    """The planted pair (the marker only they share, in 3 of 4 chunks each) is certified without links;
    with links putting its notes `hops` apart (hand-counted path, no shorter one), only 3+ hops keep it."""
    n = planted[1]
    adj = _graph(n, edges)
    assert graph_distances(adj, np.array([PLANTED[0]]), np.array([PLANTED[1]]), 6).tolist() == [hops]
    cert = certify(planted, adj=adj)
    assert cert.summary["graph"] == "applied"
    got = _pairs(cert)
    assert (got.get(PLANTED) == PLANTED_MARKER) is certified
    if certified:
        i = int(np.flatnonzero((cert.pairs["a"] == PLANTED[0]) & (cert.pairs["b"] == PLANTED[1]))[0])
        assert int(cert.pairs["distance"][i]) == 3
    else:
        assert cert.summary["target_reasons"]["graph distance below minimum"] >= 1
    assert all(d < 0 or d >= 3 for d in cert.pairs["distance"].tolist())  # no certified pair is near


def test_section_vectors_are_the_mean_of_their_windows():
    """Hand case: record 0 has sections 0 (one window) and 1 (two windows); record 1 section 0."""
    owner = np.array([0, 0, 0, 1])
    section = np.array([0, 1, 1, 0])
    w = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [3, 4, 0]], np.float32)
    got = section_vectors([(0, 0), (0, 1), (1, 0)], owner, section, w)
    r = np.sqrt(0.5)
    assert np.allclose(got, [[1, 0, 0], [0, r, r], [0.6, 0.8, 0]])
    assert section_vectors([(0, 0), (1, 1)], owner, section, w) is None  # a section without a window


NOTES = {
    "Alpha.md": "# Alpha\n\nIntro of alpha, see [[Beta]].\n\n## Uses\n\nAlpha is used for gardening.\n\n## Empty\n\n",
    "Beta.md": "# Beta\n\nBeta text links [[Gamma]].\n\n## More\n\nMore about beta.\n",
    "Gamma.md": "# Gamma\n\nGamma links [[Delta]].\n",
    "Delta.md": "Delta has no headings at all, just text.\n",
}


def folder_index(tmp_path, monkeypatch, files: dict[str, str]) -> Index:
    """The saved index of a folder holding `files` (name -> text), with the fake embedder and a private cache."""
    monkeypatch.setenv("SIDELIGHT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(Serendipity, "embedder", lambda self: FakeEmbedder())
    folder = tmp_path / "vault"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    idx = Index.build(load_folder(folder), progress=False)
    idx.save(tmp_path / "idx")
    return Index.load(tmp_path / "idx")


@pytest.fixture
def notes_index(tmp_path, monkeypatch):
    return folder_index(tmp_path, monkeypatch, NOTES)


def test_a_folder_of_notes_is_chunked_by_its_sections(notes_index):
    """auto -> sections: one chunk per section with words (Alpha's "## Empty" is only its heading: none), spans are
    the sections' own; windows on request; the link graph is the notes' links."""
    ser = Serendipity(notes_index)
    assert ser.chunking() == "sections"
    ch = ser.ensure_chunks()
    recs = notes_index.corpus.records
    by_title = {}
    for i in range(len(ch)):
        by_title.setdefault(recs[int(ch.record[i])].title, []).append(ch.text(recs, i).strip())
    assert by_title["Alpha"] == ["Alpha\n\nIntro of alpha, see Beta.", "Uses\n\nAlpha is used for gardening."]
    assert by_title["Beta"] == ["Beta\n\nBeta text links Gamma.", "More\n\nMore about beta."]
    assert len(by_title["Gamma"]) == 1 and len(by_title["Delta"]) == 1
    assert ch.counter == "sections" and ser.meta["chunks"]["unit"] == "sections"
    assert ch.vectors.shape == (len(ch), FakeEmbedder.dim)
    win = Serendipity(notes_index, SerendipityConfig(budget=4, chunking="windows"))
    assert win.chunking() == "windows" and win.ensure_chunks().counter == "proxy"
    ids = [r.id for r in recs]
    a, d = ids.index("Alpha.md"), ids.index("Delta.md")
    adj = notes_index.graph.undirected()
    assert graph_distances(adj, np.array([a]), np.array([d]), 6).tolist() == [3]
