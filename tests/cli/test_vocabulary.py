"""One CLI vocabulary (issue 10, item 5): `-k/--top-k` counts results, `--json` prints JSON on stdout,
`-o/--output PATH` writes a file. Old spellings still work for one release and warn once on stderr."""

from __future__ import annotations

import argparse
import json

import pytest

from sidelight.cli import build_parser, main

WARN = "sidelight: warning: {old} is deprecated; use {new}"
TOP_K, OUTPUT = "-k/--top-k", "-o/--output PATH"
JSON_PATH = "sidelight: warning: --json PATH is deprecated; use -o/--output PATH"


def _rows(path, rows) -> None:
    path.write_text("".join(json.dumps(o) + "\n" for o in rows))


@pytest.fixture
def source(tmp_path):
    p = tmp_path / "notes.jsonl"
    _rows(p, [{"id": "n1", "title": "Graph search", "text": "walks over links between notes alpha"},
              {"id": "n2", "title": "Lexical search", "text": "bm25 matches query words alpha"},
              {"id": "n3", "title": "Dense search", "text": "embeddings compare meaning alpha"}])
    (tmp_path / "notes.edges.tsv").write_text("n1\tn2\nn2\tn3\n")
    return p


@pytest.fixture
def eval_files(tmp_path):
    q, qrels = tmp_path / "q.jsonl", tmp_path / "qrels.tsv"
    q.write_text('{"_id": "q1", "text": "dense embeddings"}\n{"_id": "q2", "text": "graph links"}\n')
    qrels.write_text("q1\tn3\t1\nq2\tn1\t1\n")
    return q, qrels


def _eval(index, q, qrels, *extra) -> list[str]:
    return ["eval", str(index), "--queries", str(q), "--qrels", str(qrels), "-q", *extra]


def _warnings(err: str) -> list[str]:
    return [x for x in err.splitlines() if x.startswith("sidelight: warning: ")]


# ---- the parser: every rename maps onto the same value, old spellings warn, new ones do not ----------------
RENAMES = [  # (new argv, old argv, dest, the warning's OLD, the warning's NEW)
    (["search", "I", "q", "-k", "3"], None, "top_k", None, None),
    (["search", "I", "q", "--top-k", "3"], None, "top_k", None, None),
    (["channels", "I", "q", "-k", "3"], ["channels", "I", "q", "--limit", "3"], "top_k", "--limit", TOP_K),
    (["channels", "I", "q", "--top-k", "3"], ["channels", "I", "q", "--limit", "3"], "top_k", "--limit", TOP_K),
    (["connections", "I", "q", "-k", "3"], ["connections", "I", "q", "--show", "3"], "top_k", "--show", TOP_K),
    (["lab", "packets", "D", "-o", "P", "-k", "3"], ["lab", "packets", "D", "-o", "P", "--k", "3"], "top_k",
     "--k", TOP_K),
    (["eval", "I", "--queries", "Q", "--qrels", "R", "-k", "3"],
     ["eval", "I", "--queries", "Q", "--qrels", "R", "--depth", "3"], "top_k", "--depth", TOP_K),
    (["index", "S", "-o", "P"], ["index", "S", "--out", "P"], "output", "--out", OUTPUT),
    (["index", "S", "--output", "P"], ["index", "S", "--out", "P"], "output", "--out", OUTPUT),
    (["lab", "freeze", "X", "-o", "P"], ["lab", "freeze", "X", "--out", "P"], "output", "--out", OUTPUT),
    (["lab", "run", "X", "--split", "dev", "-o", "P"], ["lab", "run", "X", "--split", "dev", "--out", "P"], "output",
     "--out", OUTPUT),
    (["lab", "all", "X", "-o", "P"], ["lab", "all", "X", "--out", "P"], "output", "--out", OUTPUT),
    (["lab", "reproduce", "X", "--from", "F", "-o", "P"], ["lab", "reproduce", "X", "--from", "F", "--into", "P"],
     "output", "--into", OUTPUT),
    (["lab", "packets", "D", "--output", "P"], ["lab", "packets", "D", "--out", "P"], "output", "--out", OUTPUT),
    (["eval", "I", "--queries", "Q", "--qrels", "R", "-o", "P"],
     ["eval", "I", "--queries", "Q", "--qrels", "R", "--json", "P"], "output", None, None),
    (["certify", "I", "--output", "P"], ["certify", "I", "--json", "P"], "output", None, None),
    (["certify", "I", "--sae-k", "3"], ["certify", "I", "-k", "3"], "sae_k", "-k", "--sae-k"),
]


def _ns(argv) -> dict:
    d = vars(build_parser().parse_args(argv))
    return {k: v for k, v in d.items() if not k.startswith("_")}


@pytest.mark.parametrize("new, old, dest, old_flag, new_flag", RENAMES, ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_new_and_old_spellings_parse_alike(capsys, new, old, dest, old_flag, new_flag):
    parsed = _ns(new)
    assert _warnings(capsys.readouterr().err) == []
    assert str(parsed[dest]) in ("3", "P")
    if old is None:
        return
    assert _ns(old) == parsed
    warned = _warnings(capsys.readouterr().err)
    if old_flag is None:  # the old --json PATH
        assert len(warned) == 1 and warned[0].startswith(JSON_PATH)
        assert parsed["json"] is False  # --json PATH writes the file and leaves the table on stdout, as before
    else:
        assert warned == [WARN.format(old=old_flag, new=new_flag)]


def test_bare_json_is_a_flag_and_the_path_form_does_not_clash(capsys):
    d = _ns(["eval", "I", "--queries", "Q", "--qrels", "R", "--json"])
    assert d["json"] is True and d["output"] is None
    d = _ns(["eval", "I", "--queries", "Q", "--qrels", "R", "--json", "-o", "P"])
    assert d["json"] is True and str(d["output"]) == "P"
    assert _warnings(capsys.readouterr().err) == []
    d = _ns(["certify", "I", "--json", "P", "-o", "P"])  # the same file twice: fine
    assert str(d["output"]) == "P"


@pytest.mark.parametrize("argv", [["eval", "I", "--queries", "Q", "--qrels", "R", "--json", "A", "-o", "B"],
                                  ["eval", "I", "--queries", "Q", "--qrels", "R", "-o", "B", "--json", "A"],
                                  ["index", "S", "-o", "A", "--out", "B"]])
def test_two_different_outputs_are_refused(capsys, argv):
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "name two different files" in err or "not allowed with" in err


def test_a_required_output_still_says_so(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["index", "S"])
    assert "-o/--output is required" in capsys.readouterr().err


# ---- the whole vocabulary, over every command --------------------------------------------------------------
def _commands(parser=None, prefix=()):
    """(command words, its parser) for every leaf command."""
    parser = parser or build_parser()
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield prefix, parser
        return
    for name, p in subs[0].choices.items():
        yield from _commands(p, prefix + (name,))


def _visible(parser) -> dict[str, argparse.Action]:
    return {o: a for a in parser._actions if a.help is not argparse.SUPPRESS for o in a.option_strings}


LEFT_ALONE: dict = {}  # every command speaks the one vocabulary


def test_no_command_shows_an_old_spelling():
    for words, p in _commands():
        opts = _visible(p)
        old = ({"--limit", "--show", "--k", "--depth", "--out", "--into"} & set(opts)) - LEFT_ALONE.get(words, set())
        assert not old, (words, old)
        if "-k" in opts:
            assert opts["-k"].option_strings == ["-k", "--top-k"] and opts["-k"].dest == "top_k", words
        if "-o" in opts:
            assert opts["-o"].option_strings == ["-o", "--output"] and opts["-o"].dest == "output", words


def _json_commands() -> set[tuple[str, ...]]:
    return {words for words, p in _commands() if "--json" in _visible(p)}


# ---- --json prints parseable JSON on stdout, in every command that has it ----------------------------------
def _stdout_json(capsys, argv, rc=0):
    assert main(argv) == rc
    cap = capsys.readouterr()
    assert _warnings(cap.err) == [], cap.err
    return json.loads(cap.out)


COVERED_HERE = {("search",), ("methods",), ("eval",), ("corpus", "stats"), ("channels",), ("feedback",), ("log",),
                ("lookup",)}
COVERED_IN_SERENDIPITY = {("certify",), ("connections",), ("reveal",), ("verdict",),  # tests/serendipity/test_cli.py
                          ("lab", "score-pairs")}  # tests/serendipity/test_reading.py
COVERED_IN_COLLECTION = {("show",), ("links",)}  # tests/cli/test_collection_cmd.py


def test_every_json_command_is_covered():
    assert _json_commands() == COVERED_HERE | COVERED_IN_SERENDIPITY | COVERED_IN_COLLECTION


def test_json_prints_json_on_stdout(tmp_path, source, index, eval_files, capsys):
    assert _stdout_json(capsys, ["search", str(index), "alpha", "--json"])["hits"]
    assert _stdout_json(capsys, ["lookup", str(index), "alpha", "--json"])["results"]
    assert "bm25" in _stdout_json(capsys, ["methods", "--json"])
    res = _stdout_json(capsys, _eval(index, *eval_files, "--json"))
    assert res["method"] == "bm25" and set(res["metrics"]) >= {"ndcg@10", "mrr@10"}
    assert _stdout_json(capsys, ["corpus", "stats", str(source), "--json"])["arcs"] == 2
    env = _stdout_json(capsys, ["channels", str(index), "alpha", "--json"])
    rel = env["relation"]
    fb = _stdout_json(capsys, ["feedback", str(index), rel["trace_id"], rel["hits"][0]["id"], "--json"])
    assert fb["channel"] == "relation"
    log = _stdout_json(capsys, ["log", str(index), "--json"])
    rows = log["entries"] if isinstance(log, dict) else log
    assert rows and rows[0]["operation"] == "feedback"
    # a bare --json in eval, quiet or not, is JSON alone: no table, no qrels line
    assert "judgements" not in json.dumps(_stdout_json(capsys, [a for a in _eval(index, *eval_files, "--json")
                                                                 if a != "-q"]))


# ---- renamed flags end to end: the new spelling works, the old one still works and warns ----------------------
def test_index_output_and_deprecated_out(tmp_path, source, capsys):
    assert main(["index", str(source), "--output", str(tmp_path / "a"), "-q"]) == 0
    assert _warnings(capsys.readouterr().err) == []
    assert main(["index", str(source), "--out", str(tmp_path / "b"), "-q"]) == 0
    cap = capsys.readouterr()
    assert _warnings(cap.err) == [WARN.format(old="--out", new=OUTPUT)] and f"-> {tmp_path / 'b'}" in cap.out
    assert any((tmp_path / "a").iterdir())
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == sorted(p.name for p in (tmp_path / "b").iterdir())


def test_search_top_k(index, capsys):
    assert len(_stdout_json(capsys, ["search", str(index), "alpha", "-k", "1", "--json"])["hits"]) == 1
    assert len(_stdout_json(capsys, ["search", str(index), "alpha", "--top-k", "2", "--json"])["hits"]) == 2


def _lane_ids(env) -> dict:
    return {ch: [h["id"] for h in env[ch]["hits"]] for ch in ("lexical", "relation")}


def test_channels_top_k_and_deprecated_limit(index, capsys):
    new = _stdout_json(capsys, ["channels", str(index), "alpha", "-k", "1", "--json"])
    assert all(len(ids) <= 1 for ids in _lane_ids(new).values()) and _lane_ids(new)["lexical"]
    assert main(["channels", str(index), "alpha", "--limit", "1", "--json"]) == 0
    cap = capsys.readouterr()
    assert _warnings(cap.err) == [WARN.format(old="--limit", new=TOP_K)]
    assert _lane_ids(json.loads(cap.out)) == _lane_ids(new)


def test_eval_top_k_output_and_deprecated_depth_and_json_path(tmp_path, index, eval_files, capsys):
    a, b, run = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "a.trec"
    assert main(_eval(index, *eval_files, "-k", "1", "-o", str(a), "--run", str(run))) == 0
    assert len(run.read_text().splitlines()) == 2  # depth 1: one ranked record per query
    cap = capsys.readouterr()
    assert _warnings(cap.err) == [] and "ndcg@10" in cap.out  # the table still prints; the file is written
    assert main(_eval(index, *eval_files, "--depth", "1", "--json", str(b))) == 0  # a script from an earlier issue
    cap = capsys.readouterr()
    warned = _warnings(cap.err)
    assert warned[0] == WARN.format(old="--depth", new=TOP_K) and warned[1].startswith(JSON_PATH)
    assert "ndcg@10" in cap.out
    assert json.loads(a.read_text()) == json.loads(b.read_text())
    # --json and -o together: JSON on stdout and the same JSON in the file
    c = tmp_path / "c.json"
    printed = _stdout_json(capsys, _eval(index, *eval_files, "--json", "-o", str(c), "--run", str(tmp_path / "r.trec")))
    assert printed == json.loads(c.read_text()) and (tmp_path / "r.trec").read_text().strip()


def test_eval_output_pointing_at_a_folder_names_the_flag(tmp_path, index, eval_files, capsys):
    assert main(_eval(index, *eval_files, "-o", str(tmp_path))) == 2
    assert f"-o/--output {tmp_path}: is a folder" in capsys.readouterr().err


def test_top_k_below_one_is_refused_with_the_new_name(index, eval_files, capsys):
    for argv in (["search", str(index), "alpha", "-k", "0"], ["channels", str(index), "alpha", "--top-k", "0"],
                 _eval(index, *eval_files, "-k", "0")):
        assert main(argv) == 2
        assert "sidelight: error: -k/--top-k must be >= 1, got 0" in capsys.readouterr().err
