"""`sidelight search`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..index import Index
from ..index.defaults import default_method
from ..index.passages import SNIPPET_CHARS, PassageSettings, results_with_passages
from ..methods import get_method, method_spec, method_specs
from ..index.lookup import DEFAULT_PRIOR, PARTS_OF_SPEECH, PRIOR, default_lookup_method, lookup_json
from ..index.views import Views
from ..lanes.budget import Budget
from ..lanes.method_call import run_method
from ..lanes.querylog import QueryLog, logged
from ..results import Results
from .args import add_filter, add_json, add_top_k, check_top_k
from .output import parse_filter, parse_params, print_hits, print_json, table


def register(sub) -> None:
    p = sub.add_parser("search", help="rank an index's records for one query with one method")
    p.add_argument("index", type=Path)
    p.add_argument("query")
    p.add_argument("-m", "--method", default=None,
                   help="a method name (`sidelight methods` lists them); default: the index's own "
                        "(`sidelight methods INDEX` says which and why)")
    add_top_k(p, 10, "records returned")
    p.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE", help="a method parameter")
    add_filter(p)
    p.add_argument("--budget-ms", type=int, default=None, metavar="MS",
                   help="time budget: a method that does not finish in time is replaced by BM25 and the answer "
                        "says so (fallback, partial); default: no budget, wait for the method")
    p.add_argument("--snippet-chars", type=int, default=SNIPPET_CHARS, metavar="N",
                   help=f"longest snippet shown per hit, in characters (default {SNIPPET_CHARS}; 0: no passages)")
    add_json(p)
    p.set_defaults(func=run_search)

    lk = sub.add_parser("lookup", help="words for a description (a reverse dictionary over e.g. wordnet-all)",
                        description="Ranks words, not records: a word's score is its best record's score; each "
                                    "result lists the records (senses) it came from, with their glosses.")
    lk.add_argument("index", type=Path)
    lk.add_argument("description")
    lk.add_argument("-m", "--method", default=None, help="the method that ranks the records (default: dense on an "
                    "index with vectors, the pick on describe-v1; else bm25)")
    add_top_k(lk, 10, "words returned")
    lk.add_argument("--pos", choices=sorted(PARTS_OF_SPEECH), help="only senses of this part of speech")
    lk.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE", help="a method parameter")
    lk.add_argument("--prior", type=float, default=None, metavar="W",
                    help="add W * the word's ln(1 + frequency in the dictionary's tagged texts), over the largest "
                         "among the first 100 words, to its min-max normalised score: common words first "
                         f"(default on a dictionary index: {DEFAULT_PRIOR} with dense, DEFAULT_PRIORS in sidelight/index/lookup.py "
                         "for the others; 0: off)")
    lk.add_argument("--names-view", type=float, default=None, metavar="W",
                    help="add W * the cosine of the description with each sense's names (its lemmas) to its gloss "
                         "cosine (method dense; default 0: off; see sidelight/index/views.py)")
    lk.add_argument("--hypernyms-view", type=float, default=None, metavar="W",
                    help="add W * the cosine of the description with the names of each sense's hypernyms "
                         "(method dense; default 0: off)")
    add_json(lk)
    lk.set_defaults(func=run_lookup)

    m = sub.add_parser("methods", help="list the ranking methods and fusions, each with its parameters")
    m.add_argument("names", nargs="*", metavar="[INDEX] METHOD",
                   help="only these methods; an index folder first: also say which method it searches with by "
                        "default, and why")
    add_json(m)
    m.set_defaults(func=run_methods)


def run_search(args: argparse.Namespace) -> int:
    k = check_top_k(args)
    params = parse_params(args.param)
    if args.method is not None:
        get_method(args.method, **params)  # before loading: bad params fail fast
    index = Index.load(args.index)
    if args.method is None:
        chosen = default_method(index)
        args.method, params = chosen.method, {**chosen.params, **params}
    where = parse_filter(args.filter)
    budget = Budget(args.budget_ms) if args.budget_ms is not None else None

    def answer() -> dict:
        with index.watch() as cov:
            found, used = run_method(index, args.query, args.method, k, where, params, budget=budget)
        found = Results(found.hits, found.query, found.method, cov.pair if cov is not None else None,
                        found.trace_id, found.params, found.cut)
        if args.snippet_chars:
            found = results_with_passages(index, found, PassageSettings(snippet_chars=args.snippet_chars))
        out: dict[str, Any] = {"results": found, "_log_lanes": [{"channel": used, "hits": len(found)}]}
        if budget is not None:  # the labels of a budgeted answer, as HTTP and MCP give them
            out.update(method_used=used, **budget.labels(), timings_ms=budget.timings())
            out["partial"] = budget.partial or found.partial
        return out

    out = logged(cli_log(index), "cli", "search", args.query, answer)
    hits = out.pop("results")
    if args.json:
        print_json({**hits.to_dict(), **out})
        return 0
    if out.get("fallback") or out.get("partial"):
        print(f"note: answered by {out['method_used']} (fallback {out['fallback']}, partial {out['partial']}): "
              + "; ".join(f"{s['stage']} {s['status']} ({s.get('reason', '')})" for s in out["stages"]
                          if s["status"] != "done"))
    elif any(h.passage is not None for h in hits):
        print_hits(f"{args.method}: {args.query}", hits)
    else:
        table(f"{args.method}: {args.query}", ["rank", "id", "score", "title"],
              [(h.rank, h.id, h.score, h.title[:80]) for h in hits], [True, False, True, False])
    if not hits:
        print("no record matched")
    return 0


def run_lookup(args: argparse.Namespace) -> int:
    k = check_top_k(args)
    if args.method is not None:
        get_method(args.method, **parse_params(args.param))  # before loading: bad params fail fast
    if args.prior is not None:
        PRIOR.check("lookup", args.prior)
    views = None if args.names_view is None and args.hypernyms_view is None else \
        Views(args.names_view or 0.0, args.hypernyms_view or 0.0)
    index = Index.load(args.index)
    args.method = args.method or default_lookup_method(index)
    params = parse_params(args.param)

    def answer() -> dict:
        found = index.lookup(args.description, k, args.method, args.pos, prior=args.prior, views=views, **params)
        return {"results": found, "_log_lanes": [{"channel": "lookup", "hits": len(found)}]}

    words = logged(cli_log(index), "cli", "lookup", args.description, answer)["results"]
    if args.json:
        print_json(lookup_json(words))
        return 0
    table(f"lookup ({args.method}): {args.description}", ["rank", "word", "score", "senses (best first)"],
          [(w.rank, w.id, w.score, "\n".join(f"{s['id']}: {s['gloss'][:70]}" for s in w["synsets"][:3]))
           for w in words], [True, False, True, False])
    if not words:
        print("no word matched")
    return 0


def cli_log(index: Index) -> QueryLog | None:
    """The index's query log, as `sidelight serve` and `sidelight mcp` write it (None when it cannot be opened:
    a CLI answer never fails for its log row)."""
    try:
        return QueryLog.for_index(index)
    except Exception:
        return None


def run_methods(args: argparse.Namespace) -> int:
    names = list(args.names)
    index_path = Path(names.pop(0)) if names and Path(names[0]).is_dir() else None
    specs = [method_spec(n) for n in names] if names else method_specs()
    chosen = default_method(Index.load(index_path)) if index_path is not None else None
    if args.json:
        print_json({s.name: s.to_dict() for s in specs} | ({"default": chosen.to_dict()} if chosen else {}))
        return 0
    if chosen is not None:
        params = " ".join(f"-p {k}={v}" for k, v in chosen.params.items())
        print(f"{index_path} searches with {chosen.method} {params} by default: {chosen.source}".replace("  ", " "))
    table(None, ["method", "what it ranks by", "needs"], [(s.name, s.description, ", ".join(s.needs) or "-") for s in specs])
    for s in specs:
        if s.params:
            table(f"{s.name}: -p NAME=VALUE", ["parameter", "default", "allowed", "what it does"],
                  [(p.name, json.dumps(p.default), p.allowed(), p.doc) for p in s.params])
    return 0
