"""FOLDOC loader: a hand-written dictd index + gzip dict, hand-written expectations."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from sidelight.corpus.foldoc import FOLDOC_DICT, FOLDOC_INDEX, b64_number, load_foldoc
from sidelight.corpus.model import Edge
from sidelight.errors import MissingDataError

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _enc(n: int) -> str:
    digits = ""
    while True:
        n, r = divmod(n, 64)
        digits = ALPHABET[r] + digits
        if n == 0:
            return digits


DB = "00-database-info\n\n   A test dictionary, not an entry.\n\n"
DOLLAR = """dollar
$
&#36;

   <character> The {dollar} sign is used by the {UNIX Shell}
   and {Perl}.  See {the FAQ (http://example.org/faq)} and
   {(rfc:1234)}.  Compare {actor}.

   (1995-03-06)

"""
ACTOR1 = """Actor

   <language> An {object-oriented} language.  Uses an
   {interpreter}.

   (1994-11-08)

"""
ACTOR2 = """actor

   1. <programming> An object in {Concurrent Smalltalk}.  {shells
   (shell)} and {Unix
   shell}.

   2. <operating system> In {Chorus}, a unit.  {Actor}

"""
CST = """Concurrent Smalltalk
CST

   <language> A concurrent dialect; see {actor} and {CST}.

   (2000-01-01)

"""
LFT = """Language for Testing
Things
LFT

   <language> Tests things.

"""
SHELL = """shell
Unix shell

   <operating system> A command interpreter, e.g. for {Unix}.  See
   {$}.  Code: {for(;;)fork();}

   (2001-01-01)

"""


@pytest.fixture()
def tiny(tmp_path: Path) -> tuple[Path, Path]:
    entries = {"db": DB, "dollar": DOLLAR, "actor1": ACTOR1, "actor2": ACTOR2, "cst": CST, "lft": LFT, "shell": SHELL}
    blob = b""
    where = {}
    for key in ["db", "shell", "actor2", "dollar", "lft", "actor1", "cst"]:  # file order != index order
        data = entries[key].encode()
        where[key] = (len(blob), len(data))
        blob += data
    index = [
        ("00-database-info", "db"),
        ("$", "dollar"),
        ("&#36;", "dollar"),
        ("actor", "actor1"),
        ("actor", "actor2"),
        ("cst", "cst"),
        ("dollar", "dollar"),
        ("language for testing things", "lft"),
        ("lft", "lft"),
        ("shell", "shell"),
        ("unix shell", "shell"),
    ]
    idx = tmp_path / "t.index"
    idx.write_text("".join(f"{h}\t{_enc(where[k][0])}\t{_enc(where[k][1])}\n" for h, k in index), encoding="utf-8")
    dz = tmp_path / "t.dict.dz"
    with gzip.open(dz, "wb") as fh:
        fh.write(blob)
    return idx, dz


def test_b64_numbers_by_hand():
    assert b64_number("A") == 0
    assert b64_number("/") == 63
    assert b64_number("BA") == 64
    assert b64_number("KD") == 10 * 64 + 3
    assert b64_number("FaoB") == 5 * 64**3 + 26 * 64**2 + 40 * 64 + 1  # "$" in Debian foldoc.index


def test_records(tiny):
    c = load_foldoc(*tiny)
    assert c.title_weight == 2
    assert c.ids == ["dollar", "actor", "actor (2)", "cst", "language for testing things", "shell"]
    r = {x.id: x for x in c.records}

    assert r["dollar"].title == "dollar"
    assert r["dollar"].aliases == ("$", "&#36;")
    assert r["dollar"].text == (
        "<character> The dollar sign is used by the UNIX Shell and Perl. See the FAQ and rfc:1234. Compare actor."
    )
    assert r["dollar"].metadata == {"domains": ["character"], "date": "1995-03-06", "dangling_refs": ["Perl"]}

    assert r["actor"].title == "Actor"
    assert r["actor"].aliases == ()
    assert r["actor"].text == "<language> An object-oriented language. Uses an interpreter."

    assert r["actor (2)"].title == "actor"
    assert r["actor (2)"].text == (
        "1. <programming> An object in Concurrent Smalltalk. shells and Unix shell. "
        "2. <operating system> In Chorus, a unit. Actor"
    )
    assert r["actor (2)"].metadata == {"domains": ["programming", "operating system"], "dangling_refs": ["Chorus"]}

    assert r["cst"].title == "Concurrent Smalltalk"
    assert r["cst"].aliases == ("CST",)

    assert r["language for testing things"].title == "Language for Testing Things"
    assert r["language for testing things"].aliases == ("LFT",)
    assert r["language for testing things"].text == "<language> Tests things."

    assert r["shell"].title == "shell"
    assert r["shell"].aliases == ("Unix shell",)
    assert r["shell"].text == "<operating system> A command interpreter, e.g. for Unix. See $. Code: for(;;)fork();"
    assert r["shell"].metadata["dangling_refs"] == ["Unix", "for(;;)fork();"]


def test_edges(tiny):
    c = load_foldoc(*tiny)
    assert c.edges == [
        Edge("dollar", "shell", "link"),  # {UNIX Shell}: index headword "unix shell", any case
        Edge("dollar", "actor", "link"),  # repeated headword resolves to its first entry
        Edge("actor (2)", "cst", "link"),  # {Concurrent Smalltalk}: a headline, not an index headword
        Edge("actor (2)", "shell", "link"),  # {shells (shell)} and a wrapped {Unix shell}: one edge
        Edge("actor (2)", "actor", "link"),
        Edge("cst", "actor", "link"),  # {CST} is a self reference: no loop
        Edge("shell", "dollar", "link"),  # {$}: an alias headword
    ]
    # each edge keeps the sentence of the source's text that shows the link (not part of equality)
    ctx = {(e.source, e.target): e.context for e in c.edges}
    assert ctx[("shell", "dollar")] == "See $."
    assert all(e.context for e in c.edges)


def test_missing_files_name_the_package(tmp_path):
    with pytest.raises(MissingDataError, match=r"dict-foldoc.*apt-get install dict-foldoc"):
        load_foldoc(tmp_path / "nope.index", tmp_path / "nope.dict.dz")


@pytest.mark.skipif(
    not (FOLDOC_INDEX.is_file() and FOLDOC_DICT.is_file()),
    reason="Debian package dict-foldoc not installed (apt-get install dict-foldoc)",
)
def test_real_foldoc():
    c = load_foldoc()
    assert 11_000 <= len(c) <= 14_000
    assert len(c.edges) > 20_000
    ids = set(c.ids)
    assert all(e.source in ids and e.target in ids and e.source != e.target for e in c.edges)
    assert len({(e.source, e.target, e.type) for e in c.edges}) == len(c.edges)
    r = {x.id: x for x in c.records}
    assert r["unix"].title == "Unix"
    assert r["capability maturity model"].aliases == ("Capabilities Maturity Model", "CMM")
    assert r["dollar"].aliases == ("$", "&#36;")
    assert r["actor (2)"].title == "actor"
    assert not any(i.startswith("00-database") for i in ids)
