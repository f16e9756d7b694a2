"""Declared method parameters: one check for every interface, and defaults that follow the index."""

from __future__ import annotations

import numpy as np
import pytest

from sidelight.cli import main
from sidelight.corpus import Corpus, Record
from sidelight.errors import InputError
from sidelight.index import Index
from sidelight.methods import Param, get_method, method_specs
from sidelight.methods.hybrid import lexical_scores, lexical_variant
from sidelight.text import TokenizerConfig

RECORDS = [Record("a", "Running", "the runners were running fast"), Record("b", "Walk", "a walk in the park"),
           Record("c", "Runs", "he runs and ran")]


def test_a_param_reads_text_checks_ranges_and_choices():
    alpha = Param("alpha", float, 0.5, "weight", low=0.0, high=1.0)
    assert alpha.check("m", "0.25") == 0.25 and alpha.check("m", 1) == 1.0
    for bad in ("abc", 1.5, -0.1, float("nan"), True, None):
        with pytest.raises(InputError, match=r"method 'm': parameter 'alpha' must be a finite number in \[0, 1\]"):
            alpha.check("m", bad)
    norm = Param("norm", str, "zscore", "how", choices=("zscore", "minmax"))
    assert norm.check("m", "minmax") == "minmax"
    with pytest.raises(InputError, match="one of zscore, minmax"):
        norm.check("m", "l2")
    seed = Param("seed", int, None, "optional seed", low=0)
    assert seed.check("m", None) is None and seed.check("m", "7") == 7
    with pytest.raises(InputError, match=r"an integer in \[0, 100000\] or null"):
        seed.check("m", "2.5")
    weights = Param("weights", tuple, (1.0, 1.0), "w", low=0.0)
    assert weights.check("m", "[2, 0.5]") == (2.0, 0.5) and weights.check("m", [1, 3]) == (1.0, 3.0)


def test_every_declared_default_passes_its_own_check():
    for spec in method_specs():
        for p in spec.params:
            assert p.check(spec.name, p.default) == p.default, (spec.name, p.name)
        assert get_method(spec.name).params == spec.defaults()


def test_unknown_parameter_names_what_the_method_takes():
    with pytest.raises(InputError, match="takes no parameter 'alpah'; it takes alpha, lam, n_seeds, iterations"):
        get_method("bm25+ppr", alpah=0.8)
    with pytest.raises(InputError, match="takes no parameter 'x'; it takes no parameters"):
        get_method("bm25", x=1)


def test_fused_lexical_component_follows_the_index_tokenizer():
    stemmed = Index.build(Corpus("s", RECORDS), TokenizerConfig(stem="english", stopwords="lucene-en-v1"), progress=False)
    plain = Index.build(Corpus("p", RECORDS), progress=False)
    assert lexical_variant(stemmed) is stemmed.lexical  # null: the index's own BM25, nothing rebuilt
    params = get_method("rrf").params
    np.testing.assert_array_equal(lexical_scores(stemmed, "running", params), stemmed.lexical.bm25_scores("running"))
    # asking for no stemming and no stop list gives the unstemmed BM25 (oracle: an index built that way)
    none = get_method("rrf", stem="none", stopwords="none").params
    np.testing.assert_allclose(lexical_scores(stemmed, "the running", none), plain.lexical.bm25_scores("the running"))


def test_methods_command_lists_parameters_with_types_defaults_and_ranges(capsys):
    assert main(["methods", "bm25+ppr"]) == 0
    out = capsys.readouterr().out
    for text in ("alpha", "0.5", "in [0, 1]", "n_seeds", "in [1, 100000]"):
        assert text in out
    assert main(["methods", "nope"]) == 2
