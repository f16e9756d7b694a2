"""Declared capabilities (issue 42): a method says what it needs, a backend what it offers, and one
check refuses an unsupported call with one line, before any work, wherever the call comes from.

Oracles: what each toy backend offers is known by construction (an index built without vectors
has none; a sharded index keeps its term matrices and vectors on its shards), and a method whose
function raises if called shows that the refusal comes first.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sidelight.capabilities import Capability, UnsupportedError, require
from sidelight.cli import main
from sidelight.index import Index
from sidelight.index.sharded import ShardedIndex
from sidelight.lab.protocol import load_protocol
from sidelight.methods import get_method, method_spec
from sidelight.methods.registry import Method
from sidelight.structures.ranking import Ranking

REPO = Path(__file__).resolve().parents[2]


class Offers:
    """A backend that offers exactly `caps`."""

    def __init__(self, *caps: Capability):
        self.caps = frozenset(caps)

    def capabilities(self) -> frozenset[Capability]:
        return self.caps

    def why_missing(self, capability: Capability) -> str:
        return f"the toy has no {capability.value}"


def _never(*args) -> Ranking:
    raise AssertionError("the method ran although its backend lacks what it needs")


def test_the_check_refuses_before_the_method_runs():
    m = Method("toy", _never, {}, (Capability.TERM_STATISTICS, Capability.VECTORS, Capability.GRAPH))
    with pytest.raises(UnsupportedError) as exc:
        m.rank(Offers(Capability.TERM_STATISTICS), "q", 10)  # a bare backend: the check comes first
    assert str(exc.value) == "method 'toy' needs vectors: the toy has no vectors"  # the first missing, one line
    require("toy", (Capability.TERM_STATISTICS,), Offers(Capability.TERM_STATISTICS))  # all offered: no error


def test_parameters_add_what_their_set_values_need():
    assert get_method("rrf").needs == (Capability.TERM_STATISTICS, Capability.DENSE)
    assert get_method("rrf", rm3=True).needs == (Capability.TERM_STATISTICS, Capability.DENSE,
                                                 Capability.TERM_MATRICES)
    assert get_method("dense-prf").needs == (Capability.DENSE, Capability.VECTORS)  # 3 feedback records by default
    assert get_method("dense-prf", dense_prf_docs=0).needs == (Capability.DENSE,)
    assert method_spec("bm25+rm3").to_dict()["needs"] == ["term statistics", "term matrices"]


def test_an_index_in_one_piece_offers_what_it_was_built_with(toy_corpus):
    index = Index.build(toy_corpus, progress=False)
    assert index.capabilities() == {Capability.TERM_STATISTICS, Capability.TERM_MATRICES, Capability.GRAPH}
    with pytest.raises(UnsupportedError, match=r"^method 'dense' needs dense: this index has no dense vectors; "
                                               r"rebuild it with `sidelight index SOURCE --dense minilm`$"):
        index.search("cat", "dense")
    assert [h.id for h in index.search("cat", "bm25+rm3", k=3)]  # the term matrices are here


@pytest.fixture
def sharded(tmp_path, toy_corpus) -> ShardedIndex:
    return ShardedIndex.write_sharded(toy_corpus, tmp_path / "idx", 2, progress=False)


def test_a_sharded_index_keeps_matrices_and_vectors_on_its_shards(sharded, toy_corpus):
    assert sharded.capabilities() == {Capability.TERM_STATISTICS, Capability.GRAPH}
    one = Index.build(toy_corpus, progress=False)
    assert [h.id for h in sharded.search("cat", "bm25")] == [h.id for h in one.search("cat", "bm25")]
    for method in ("bm25+rm3", "floor"):
        with pytest.raises(UnsupportedError, match=re.escape(f"method '{method}' needs term matrices: each term-count "
                                                             "and weight matrix stays on the shards of a sharded index")):
            sharded.search("cat", method)
    # the matrices are the rm3 parameter's need: without it, bm25+rm3 is BM25 and runs on the shards
    assert [h.id for h in sharded.search("cat", "bm25+rm3", rm3=False)] == [h.id for h in one.search("cat", "bm25")]


def test_the_cli_refuses_with_exit_2_and_one_line(sharded, capsys):
    assert main(["search", str(sharded.path), "cat", "-m", "bm25+rm3"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "needs term matrices" in err


def test_http_refuses_with_400(sharded):
    from sidelight.serve.app import create_app
    from sidelight.serve.engine import Service
    from tests.serve.conftest import api_client

    with api_client(create_app(Service(sharded))) as c:
        r = c.get("/api/search", params={"q": "cat", "method": "bm25+rm3"})
    assert r.status_code == 400
    assert "needs term matrices" in json.dumps(r.json())


def test_mcp_refuses_with_a_tool_error(sharded):
    import anyio
    from mcp import Client

    from sidelight.serve.engine import Service
    from sidelight.serve.mcp_server import build_server

    async def session():
        async with Client(build_server(Service(sharded))) as c:
            r = await c.call_tool("search", {"query": "cat", "method": "bm25+rm3"})
            assert r.is_error and "needs term matrices" in r.content[0].text

    anyio.run(session)


def test_the_lab_skips_what_needs_vectors_from_the_method_declaration(tmp_path):
    data = json.loads((REPO / "protocols" / "scifact-pilot.json").read_text())
    data["index"].pop("dense", None)  # a protocol that builds no vectors
    for m in data["methods"]:
        m.pop("requires", None)  # the methods' own declarations decide
    (tmp_path / "p.json").write_text(json.dumps(data))
    runnable, skipped = load_protocol(tmp_path / "p.json").check_methods()
    declared = {m["name"] for m in data["methods"]
                if Capability.DENSE in method_spec(m.get("method", m["name"])).needs}
    assert set(skipped) == declared and declared and not declared & {r["name"] for r in runnable}


def test_a_requires_flag_that_contradicts_the_declaration_is_refused(tmp_path):
    data = json.loads((REPO / "protocols" / "scifact-pilot.json").read_text())
    data["methods"].append({"name": "tfidf", "requires": "dense", "required": False})
    (tmp_path / "p.json").write_text(json.dumps(data))
    with pytest.raises(Exception, match="'tfidf' declares no need of vectors"):
        load_protocol(tmp_path / "p.json").check_methods()


def test_every_registered_method_declares_what_it_needs():
    from sidelight.methods import method_specs

    for spec in method_specs():
        if not spec.fn.__module__.startswith("sidelight."):
            continue  # a method another test registered for itself
        assert spec.needs, f"{spec.name} declares no capability"
        assert all(isinstance(c, Capability) for c in spec.needs)
    assert sorted(c.value for c in Capability) == sorted(["term statistics", "term matrices", "dense", "vectors",
                                                          "ann", "graph", "passages"])
