"""GCIDE reader: hand-checked entries in a small dictd pair written here, and in the Debian files."""

import gzip

import pytest

from sidelight.corpus.gcide import GCIDE_DICT, load_gcide, parse_entry
from sidelight.corpus.sources import load_source
from sidelight.errors import MissingDataError

ENTRIES = [  # in GCIDE's own layout (copied from dict-gcide, shortened)
    'Anther \\An"ther\\, n. [F. anth[`e]re, L. anthera a medicine\n   composed of flowers.] (Bot.)\n'
    "   That part of the stamen containing the pollen. -- {An\"ther*al}, a.\n   [1913 Webster]\n",
    'Beacon \\Bea"con\\, v. t. [imp. & p. p. {Beaconed};\n   p. pr. & vb. n. {Beaconing}.]\n'
    "   1. To give light to, as a beacon; to light up.\n      [1913 Webster]\n\n"
    "            That beacons the darkness of heaven.  --Campbell.\n      [1913 Webster]\n\n"
    "   2. To furnish with a beacon or beacons.\n      [1913 Webster]\n",
    "ash-gray \\ash-gray\\ adj.\n   1. 1 pale gray; ash-colored.\n\n   Syn: ash-grey, ashy.\n        [WordNet 1.5]\n",
    'Simoom \\Si*moom"\\, Simoon \\Si*moon"\\, n. [Ar. sam\'um.]\n   A hot, dry, dust-laden wind.\n'
    "   [1913 Webster]\n",
    'Lighthouse \\Light"house`\\ (l[imac]t"hous`), n.; pl.\n   {Lighthouses} (l[imac]t"houz`[e^]z).\n'
    "   A tower with a powerful light at top, to guide mariners.\n   [WordNet 1.5 +PJC]\n",
]
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def b64(n: int) -> str:
    out = ""
    while True:
        out, n = B64[n % 64] + out, n // 64
        if n == 0:
            return out


@pytest.fixture
def dictd(tmp_path):
    text, index, at = "", [], 0
    for e in ["00-database-info\n   about\n", *ENTRIES]:
        raw = e.encode()
        index.append(f"{e.split(' ')[0].split(chr(10))[0]}\t{b64(at)}\t{b64(len(raw))}")
        text, at = text + e, at + len(raw)
    (tmp_path / "g.index").write_text("\n".join(index) + "\n")
    with gzip.open(tmp_path / "g.dict.dz", "wb") as f:
        f.write(text.encode())
    return tmp_path / "g.index", tmp_path / "g.dict.dz"


def test_headwords_parts_of_speech_and_numbered_senses_by_hand(dictd):
    c = load_gcide(*dictd)
    got = {r.id: (r.title, r.aliases, r.metadata["pos"], r.metadata["sense"], r.text) for r in c.records}
    assert got == {
        "anther#1": ("Anther", (), "noun", 1, "That part of the stamen containing the pollen."),
        "beacon#1": ("Beacon", (), "verb", 1, "To give light to, as a beacon; to light up."),
        "beacon#2": ("Beacon", (), "verb", 2, "To furnish with a beacon or beacons."),
        "ash-gray#1": ("ash-gray", (), "adjective", 1, "pale gray; ash-colored."),
        "simoom#1": ("Simoom", ("Simoon",), "noun", 1, "A hot, dry, dust-laden wind."),
        "lighthouse#1": ("Lighthouse", (), "noun", 1, "A tower with a powerful light at top, to guide mariners."),
    }


def test_wordnet_sourced_senses_are_marked(dictd):
    c = load_gcide(*dictd)
    assert {r.id for r in c.records if r.metadata["wordnet"]} == {"ash-gray#1", "lighthouse#1"}
    assert c.records[c.position["beacon#1"]].metadata["sources"] == ["1913 Webster", "1913 Webster"]
    assert parse_entry(ENTRIES[4])[2] == [(1, "A tower with a powerful light at top, to guide mariners.",
                                           ["WordNet 1.5 +PJC"])]


def test_missing_files_name_the_package(tmp_path):
    with pytest.raises(MissingDataError, match="dict-gcide"):
        load_gcide(tmp_path / "no.index", tmp_path / "no.dict.dz")


@pytest.mark.skipif(not GCIDE_DICT.is_file(), reason="Debian dict-gcide not installed")
def test_the_debian_dictionary_by_hand():
    c = load_source("gcide")
    r = c.records[c.position["lighthouse#1"]]
    assert (r.title, r.metadata["pos"], r.metadata["wordnet"]) == ("Lighthouse", "noun", False)
    assert r.text.startswith("A tower or other building with a powerful light at top")
    saunter = [c.records[c.position[f"saunter#{i}"]] for i in (1, 2)]
    assert [(s.metadata["pos"], s.text) for s in saunter] == [
        ("verb", "To wander or walk about idly and in a leisurely or lazy manner; to lounge; to stroll; to loiter."),
        ("noun", "A sauntering, or a sauntering place.")]
    arriving = c.records[c.position["arriving#1"]]
    assert arriving.metadata["wordnet"] and arriving.text == "directed or moving inward or toward a center; as, arriving trains."
    assert c.records[c.position["beacon#4"]].metadata["sense"] == 4
