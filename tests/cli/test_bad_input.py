"""Every bad input ends the same way: a one-line message naming the problem, exit code 2, no traceback."""

from __future__ import annotations

import json

import pytest

from sidelight.cli import main


def _records(path, rows) -> None:
    path.write_text("".join(json.dumps(o) + "\n" for o in rows))


@pytest.fixture
def source(tmp_path):
    p = tmp_path / "notes.jsonl"
    _records(p, [
        {"id": "n1", "title": "Graph search", "text": "walks over links between notes"},
        {"id": "n2", "title": "Lexical search", "text": "bm25 matches query words"},
        {"id": "n3", "title": "Dense search", "text": "embeddings compare meaning"},
    ])
    return p


@pytest.fixture
def eval_files(tmp_path):
    q, qrels = tmp_path / "q.jsonl", tmp_path / "qrels.tsv"
    q.write_text('{"_id": "q1", "text": "dense embeddings"}\n{"_id": "q2", "text": "graph links"}\n')
    qrels.write_text("query-id\tcorpus-id\tscore\nq1\tn3\t1\nq2\tn1\t1\n")
    return q, qrels


def refused(capsys, argv: list[str], *needles: str) -> str:
    """Run the CLI; it must exit 2 with one error line holding every needle and no traceback (warnings may precede)."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [x for x in err.splitlines() if x.strip() and not x.startswith("sidelight: warning: ")]
    assert len(lines) == 1 and lines[0].startswith("sidelight: error: "), err
    for needle in needles:
        assert needle in err, err
    return err


def _eval(index, q, qrels, *extra) -> list[str]:
    return ["eval", str(index), "--queries", str(q), "--qrels", str(qrels), "-q", *extra]


# ---- invalid UTF-8 ----------------------------------------------------------------------------------
def test_invalid_utf8_in_records_names_file_and_line(tmp_path, capsys):
    p = tmp_path / "recs.jsonl"
    p.write_bytes(b'{"id": "a", "text": "ok"}\n{"id": "b", "text": "caf\xe9"}\n')
    refused(capsys, ["index", str(p), "-o", str(tmp_path / "i"), "-q"], "recs.jsonl:2: invalid UTF-8", "0xe9")


def test_invalid_utf8_in_edges_names_file_and_line(tmp_path, source, capsys):
    (tmp_path / "notes.edges.tsv").write_bytes(b"n1\tn2\nn2\tn3\xff\n")
    refused(capsys, ["index", str(source), "-o", str(tmp_path / "i"), "-q"], "notes.edges.tsv:2: invalid UTF-8")


def test_invalid_utf8_in_queries_and_qrels(tmp_path, index, eval_files, capsys):
    q, qrels = eval_files
    bad_q = tmp_path / "bad_q.jsonl"
    bad_q.write_bytes(b'{"_id": "q1", "text": "dense"}\n\n{"_id": "q2", "text": "\xc3("}\n')
    refused(capsys, _eval(index, bad_q, qrels), "bad_q.jsonl:3: invalid UTF-8")
    bad_qrels = tmp_path / "bad_qrels.tsv"
    bad_qrels.write_bytes(b"q1\tn3\t1\nq2\tn\x80\t1\n")
    refused(capsys, _eval(index, q, bad_qrels), "bad_qrels.tsv:2: invalid UTF-8")


# ---- aliases ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("aliases, says", [(5, "got 5 (int)"), ("abc", "got the string 'abc'"),
                                           (["ok", 3], "item 1 is 3 (int)"), ({"a": 1}, "(dict)")])
def test_aliases_must_be_a_list_of_strings(tmp_path, capsys, aliases, says):
    p = tmp_path / "recs.jsonl"
    _records(p, [{"id": "a", "text": "x", "aliases": ["fine"]}, {"id": "b", "text": "y", "aliases": aliases}])
    refused(capsys, ["index", str(p), "-o", str(tmp_path / "i"), "-q"],
            "recs.jsonl:2: record 'b': 'aliases' must be a list of strings", says)


def test_other_record_fields_of_the_wrong_type(tmp_path, capsys):
    p = tmp_path / "recs.jsonl"
    for row, says in [({"id": ["a"], "text": "x"}, "record id must be a string or an integer"),
                      ({"id": "a", "title": ["T"], "text": "x"}, "'title' must be a string"),
                      ({"id": "a", "text": "x", "metadata": [1]}, "'metadata' must be a JSON object")]:
        _records(p, [row])
        refused(capsys, ["index", str(p), "-o", str(tmp_path / "i"), "-q"], "recs.jsonl:1:", says)


# ---- state.sqlite that is not a database -----------------------------------------------------------
@pytest.mark.parametrize("argv", [["channels", "{idx}", "bm25 query"], ["feedback", "{idx}", "abc", "n1"],
                                  ["log", "{idx}"]])
def test_state_file_that_is_not_a_database(index, capsys, argv):
    (index / "state.sqlite").write_text("garbage\n")
    refused(capsys, [a.format(idx=index) for a in argv], f"{index / 'state.sqlite'}: not a usable SQLite database")


# ---- -p values of the wrong type ----------------------------------------------------------------------
@pytest.mark.parametrize("method, param, says", [
    ("bm25+ppr", "alpha=abc", "method 'bm25+ppr': parameter 'alpha' must be a finite number in [0, 1], got 'abc' (str)"),
    ("bm25+ppr", "alpha=NaN", "parameter 'alpha' must be a finite number"),
    ("bm25+rm3", "fb_docs=x", "method 'bm25+rm3': parameter 'fb_docs' must be an integer in [0, 100000], got 'x' (str)"),
    ("bm25+rm3", "fb_docs=2.5", "parameter 'fb_docs' must be an integer in [0, 100000], got '2.5' (str)"),
    ("bm25+rm3", "rm3=1", "parameter 'rm3' must be true or false"),
    ("bm25+rm3", "stem=5", "parameter 'stem' must be one of english, none or null"),
    ("bm25+ppr:rewire", "seed=abc", "method 'bm25+ppr:rewire': parameter 'seed' must be an integer in [0, 2147483647], got 'abc'"),
    ("bm25", "k=abc", "method 'bm25' takes no parameter 'k' (the ranking depth is -k"),
    ("bm25", "name=x", "method 'bm25' takes no parameter 'name'"),
])
def test_method_parameter_of_the_wrong_type(index, capsys, method, param, says):
    refused(capsys, ["search", str(index), "bm25 query", "-m", method, "-p", param], says)


def test_method_parameter_of_the_wrong_type_in_eval(index, eval_files, capsys):
    refused(capsys, _eval(index, *eval_files, "--method", "bm25+ppr", "-p", "lam=high"),
            "parameter 'lam' must be a finite number in [0, 1], got 'high'")
    refused(capsys, _eval(index, *eval_files, "-p", "k=5"), "takes no parameter 'k'")


def test_method_parameters_of_the_right_type_still_work(index, capsys):
    for method, params in [("bm25+ppr", ["alpha=0.8", "lam=1"]), ("bm25+rm3", ["fb_docs=2", "stem=english"]),
                           ("bm25+ppr:rewire", ["seed=3"]), ("bm25+rm3", ["stem=null", "rm3=false"])]:
        argv = ["search", str(index), "bm25 query", "-m", method, "--json"]
        for p in params:
            argv += ["-p", p]
        assert main(argv) == 0
        assert json.loads(capsys.readouterr().out)["hits"][0]["id"] == "n2"


# ---- output paths, k and depth ----------------------------------------------------------------------
def test_eval_json_or_run_pointing_at_a_folder(tmp_path, index, eval_files, capsys):
    refused(capsys, _eval(index, *eval_files, "-o", str(tmp_path)), f"-o/--output {tmp_path}: is a folder")
    refused(capsys, _eval(index, *eval_files, "--run", str(tmp_path)), f"--run {tmp_path}: is a folder")
    refused(capsys, _eval(index, *eval_files, "-o", str(tmp_path / "nowhere" / "e.json")), "does not exist")


@pytest.mark.parametrize("k", ["0", "-1"])
def test_k_below_one_is_refused(index, eval_files, capsys, k):
    refused(capsys, ["search", str(index), "bm25 query", "-k", k], f"-k/--top-k must be >= 1, got {k}")
    refused(capsys, _eval(index, *eval_files, "-k", k), f"-k/--top-k must be >= 1, got {k}")
    refused(capsys, ["channels", str(index), "bm25 query", "--top-k", k], f"-k/--top-k must be >= 1, got {k}")


def test_bad_metric_fails_before_any_query_runs(index, eval_files, capsys):
    refused(capsys, _eval(index, *eval_files, "--metrics", "ndcg@10,ndcg@0"), "metric 'ndcg@0' has a bad cutoff")


# ---- ids with spaces: the tab-separated form --------------------------------------------------------
@pytest.fixture
def spaced(tmp_path, capsys):
    """An index whose ids hold spaces (as FOLDOC's do), with tab-separated edges."""
    p = tmp_path / "spaced.jsonl"
    _records(p, [{"id": "graph search", "text": "walks over links"}, {"id": "lexical search", "text": "bm25 words"},
                 {"id": "dense", "text": "embeddings meaning"}])
    (tmp_path / "spaced.edges.tsv").write_text("graph search\tlexical search\tsee also\nlexical search\tdense\n")
    out = tmp_path / "spaced_idx"
    assert main(["index", str(p), "-o", str(out), "-q"]) == 0
    capsys.readouterr()
    return out


def test_ids_with_spaces_in_tab_separated_qrels_and_edges(tmp_path, spaced, capsys):
    q, qrels = tmp_path / "q.jsonl", tmp_path / "qrels.tsv"
    q.write_text('{"_id": "q 1", "text": "bm25 words"}\n')
    qrels.write_text("q 1\tlexical search\t1\n")
    js = tmp_path / "e.json"
    assert main(["eval", str(spaced), "--queries", str(q), "--qrels", str(qrels), "-o", str(js)]) == 0
    assert "1 judgements, tab-separated" in capsys.readouterr().out
    assert json.loads(js.read_text())["metrics"]["hit@1"] == 1.0
    assert main(["corpus", "stats", str(tmp_path / "spaced.jsonl"), "--json"]) == 0  # edges with spaced ids
    stats = json.loads(capsys.readouterr().out)
    assert stats["arcs"] == 2 and stats["isolated"] == 0


def test_mixed_forms_that_would_misread_a_spaced_id_are_refused(tmp_path, spaced, capsys):
    q, qrels = tmp_path / "q.jsonl", tmp_path / "qrels.tsv"
    q.write_text('{"_id": "q1", "text": "bm25 words"}\n')
    qrels.write_text("q1\tlexical search\t1\nq1 dense 0\n")
    refused(capsys, ["eval", str(spaced), "--queries", str(q), "--qrels", str(qrels), "-q"],
            "qrels.tsv:1: field 'lexical search' holds a space, but line 2 has no tab",
            "read as whitespace-separated")
    qrels.write_text("q1\tlexical search\n")
    refused(capsys, ["eval", str(spaced), "--queries", str(q), "--qrels", str(qrels), "-q"],
            "qrels.tsv:1: expected 'query-id corpus-id score' (read as tab-separated")


def test_whitespace_separated_qrels_still_read_and_say_so(tmp_path, index, capsys):
    q, qrels = tmp_path / "q.jsonl", tmp_path / "qrels.trec"
    q.write_text('{"_id": "q1", "text": "bm25 words"}\n')
    qrels.write_text("q1 0 n2 1\n")
    assert main(["eval", str(index), "--queries", str(q), "--qrels", str(qrels)]) == 0
    assert "1 judgements, whitespace-separated" in capsys.readouterr().out


# ---- duplicate query ids ----------------------------------------------------------------------------
def test_duplicate_query_id_names_the_id_and_both_lines(tmp_path, index, eval_files, capsys):
    _, qrels = eval_files
    q = tmp_path / "dup.jsonl"
    q.write_text('{"_id": "q1", "text": "dense"}\n{"_id": "q2", "text": "graph"}\n{"_id": "q1", "text": "other"}\n')
    refused(capsys, _eval(index, q, qrels), "dup.jsonl:3: duplicate query id 'q1' (also on line 1)")


def test_conflicting_judgements_name_both_lines(tmp_path, index, eval_files, capsys):
    q, _ = eval_files
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("q1\tn3\t1\nq2\tn1\t1\nq1\tn3\t0\n")
    refused(capsys, _eval(index, q, qrels), "qrels.tsv:3: query 'q1' judges record 'n3' 0, but line 1 judged it 1")
