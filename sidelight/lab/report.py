"""`sidelight lab report DIR`: report.md and a self-contained report.html (inline CSS and SVG).

The report is built as a list of blocks (heading, paragraph, table, figure) rendered twice, so
the Markdown and HTML say the same thing. Tables follow Carrier R01 (§2 corpus, §6 methods,
§7 types, §8 every primary change and every lexical top-ten miss).
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path

from .figures import degree_figure, effects_figure, method_bars
from .packed import exists, read_json
from .timing import setup_items

# The metrics of the methods table, in the columns of the graph-retrieval study's held-out results
# (shared/seeds/carrier-r01-graph-retrieval-study.txt, §6: MRR@10, Hit@1, Hit@5, Hit@10).
HEADLINE_METRICS = {"mrr@10": "MRR@10", "hit@1": "Hit@1", "hit@5": "Hit@5", "hit@10": "Hit@10"}
CSS = ("body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1a202c}"
       "table{border-collapse:collapse;margin:.8rem 0;font-size:.9rem}td,th{border:1px solid #cbd5e0;"
       "padding:.25rem .5rem;vertical-align:top}th{background:#edf2f7}td.n{text-align:right;font-variant-numeric:"
       "tabular-nums}code{font-size:.85rem}figure{margin:1rem 0}figure svg{max-width:100%;height:auto}"
       "figcaption{font-size:.85rem;color:#4a5568}")


def _fmt(v, metric: str | None = None) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        if metric and (metric.startswith("hit") or metric.startswith("recall")):
            return f"{100 * v:.2f}%"
        return f"{v:.6f}" if metric else f"{v:.4g}"
    return str(v)


def display_rows(result: dict) -> list[tuple[str, dict]]:
    """(label, overall) per method; a seed group is one 'mean of n' row, its members omitted."""
    rows, done = [], set()
    for label, info in result["methods"].items():
        g = info["group"]
        if g in result.get("groups", {}):
            if g not in done:
                n = len(result["groups"][g]["labels"])
                rows.append((f"{g} (mean of {n})", result["groups"][g]["overall"]))
                done.add(g)
            continue
        params = {k: v for k, v in info["params"].items() if k not in ("n_seeds", "iterations")}
        if info.get("params_from"):
            params = {k: v for k, v in params.items() if k in ("alpha", "lam")} or params
        text = label + (f" {json.dumps(params)}" if params and label == info["group"] else "")
        if info.get("params_from"):
            text += f" (setting of {info['params_from']})"
        overall = info["overall"] if info.get("median_rank") is None else {**info["overall"], "median_rank": info["median_rank"]}
        rows.append((text + (" · exploratory" if info.get("exploratory") else ""), overall))
    return rows


def _blocks(run: Path) -> list[tuple]:
    from ..corpus.stats import graph_stats, stats_rows
    from .protocol import load_protocol

    freeze = json.loads((run / "freeze.json").read_text())
    res = read_json(run / "test" / "result.json")  # plain or stored compressed (`packed`)
    sel = read_json(run / "dev" / "selection.json")
    timings = json.loads((run / "test" / "timings.json").read_text()) if (run / "test" / "timings.json").exists() else None
    proto = load_protocol(Path(freeze["protocol_path"]))
    corpus = proto.load_corpus()
    bench = proto.load_benchmark(corpus).subset("test")
    pdata = freeze["protocol_data"]
    primary = res["primary_metric"]
    B: list[tuple] = [("h1", f"Lab report: {freeze['protocol']}")]
    if pdata.get("description"):
        B.append(("p", pdata["description"]))
    B.append(("h2", "Protocol and frozen hashes"))
    B.append(("table", ["Item", "Value"], [
        ["protocol file", freeze["protocol_path"]], ["protocol sha256", freeze["protocol_sha256"]],
        ["benchmark sha256", freeze["benchmark_sha256"]], ["corpus content hash", freeze["corpus_hash"]],
        ["implementation sha256", freeze["implementation_sha256"] + f" ({len(freeze['implementation_files'])} files)"],
        ["frozen at", freeze["frozen_at"]], ["methods run", ", ".join(freeze["methods"])],
        ["skipped (optional: not registered or no dense vectors)", ", ".join(freeze["skipped_methods"]) or "none"],
        ["index settings", json.dumps(pdata.get("index", {}))],
        ["statistics", json.dumps(proto.stats)], ["primary metric", primary],
        ["primary contrast", json.dumps(pdata.get("primary_contrast"))]]))
    B.append(("h2", "Corpus"))
    gs = graph_stats(corpus)
    B.append(("table", ["Property", "Observed value"], [list(r) for r in stats_rows(gs)]))
    B.append(("h2", "Development selection"))
    B.append(("p", f"Rule: best {pdata.get('selection', {}).get('metric', primary)} on the dev split; ties "
                   f"{json.dumps(pdata.get('selection', {}).get('tie_break', {}))}. Selected: "
                   f"{json.dumps(sel['selected']) if sel['selected'] else 'nothing to select'}."))
    for name, grid in sel["grid"].items():
        B.append(("table", ["Setting", f"dev {primary}"], [[r["label"], _fmt(r["value"], primary)] for r in grid]))
    rows = display_rows(res)
    B.append(("h2", "Held-out results"))
    if proto.kind == "concept":
        B.append(("p", f"{res['methods'][next(iter(res['methods']))]['n_queries']} held-out queries in "
                       f"{res['methods'][next(iter(res['methods']))]['n_families']} families; every metric is a "
                       "mean of family means."))
        head = [m for m in HEADLINE_METRICS if m in res["metrics"]]  # the protocol's own, in headline order
        B.append(("table", ["Method"] + [HEADLINE_METRICS[m] for m in head],
                  [[lab] + [_fmt(ov[m], m) for m in head] for lab, ov in rows]))
        extra = [m for m in res["metrics"] if m not in head]
        B.append(("table", ["Method"] + extra, [[lab] + [_fmt(ov[m], m) for m in extra] for lab, ov in rows]))
    elif proto.kind == "describe":
        n = res["methods"][next(iter(res["methods"]))]["n_queries"]
        B.append(("p", f"{n} held-out descriptions, one word each; a word ranks where its best sense ranks. "
                       "acc@k is the share of descriptions whose word is in the top k (hit@k); median rank is "
                       "over descriptions, a word never ranked counting as infinite."))
        B.append(("table", ["Method", "acc@1", "acc@10", "acc@100", "MRR@10", "median rank"],
                  [[lab] + [_fmt(ov.get(m), m) for m in ("hit@1", "hit@10", "hit@100", "mrr@10")]
                   + [f"{ov.get('median_rank', float('nan')):g}"] for lab, ov in rows]))
        kinds = sorted(res["methods"][next(iter(res["methods"]))]["by_type"])
        B.append(("table", ["Method"] + [f"{k} acc@10" for k in kinds],
                  [[lab] + [_fmt(info["by_type"][k].get("hit@10"), "hit@10") for k in kinds]
                   for lab, info in res["methods"].items()]))
    else:
        ms = res["metrics"]
        for t in ("sample", "all"):
            trows = []
            for label, info in res["methods"].items():
                ov = info["by_type"].get(t) if t != "all" else info["overall"]
                if ov is None:
                    continue
                n = info["by_type"][t]["n_queries"] if t != "all" else info["n_queries"]
                trows.append([label, f"{round(ov['hit@1'] * n)}/{n}" if "hit@1" in ov else "–"]
                             + [_fmt(ov[m], m) for m in ms])
            if trows:
                B.append(("p", f"Queries: {t}" + (" (the seeded sample)" if t == "sample" else " judged test queries")))
                B.append(("table", ["Method", "relevant first"] + ms, trows))
    if proto.kind == "collection":  # per question kind (probe questions: link-context, heading, alias)
        kinds = sorted({k for info in res["methods"].values() for k in info.get("by_type", {})})
        B.append(("p", f"{primary} per question kind (n: " + ", ".join(
            f"{k} {res['methods'][next(iter(res['methods']))]['by_type'].get(k, {}).get('n_queries', 0)}"
            for k in kinds) + ")."))
        B.append(("table", ["Method"] + kinds,
                  [[lab] + [_fmt(info["by_type"][k].get(primary), primary) if k in info.get("by_type", {}) else "–"
                            for k in kinds] for lab, info in res["methods"].items()]))
    if res.get("sections", {}).get("methods"):
        B.extend(_sections_block(res["sections"]))
    if res.get("pick"):
        pk = res["pick"]
        B.append(("p", f"Pick (chosen on dev {pk['metric']}, a fused method only when it beats every single lane"
                       + (", a graph method only when it beats the best method without the graph and its rewired "
                          "controls with a dev interval above " + ", ".join(
                              f"{ev['margin']:g}" for ev in pk["graph"].values()) if pk.get("graph") else "")
                       + f"): "
                       f"{pk['note']}. Dev: " + ", ".join(f"{k} {v:.4f}" for k, v in pk["dev"].items()) + "."))
    if res.get("dense"):
        B.extend(_dense_block(res, pdata))
    if res.get("setup") and not timings:
        B.append(("p", "Setup (not part of any query time): " + ", ".join(setup_items(res["setup"])) + "."))
    if res["contrasts"]:
        B.extend(_contrasts(res))
    pc = pdata.get("primary_contrast")
    if proto.kind == "concept" and pc:
        base, cand = pc["baseline"], pc["candidate"]
        B.append(("h2", "Query types"))
        types = sorted(res["methods"][base]["by_type"])
        B.append(("table", ["Question type", f"{base} MRR@10", f"{cand} MRR@10", f"{base} Hit@10", f"{cand} Hit@10"],
                  [[t] + [_fmt(res["methods"][m]["by_type"][t].get(k), k) for k, m in
                          (("mrr@10", base), ("mrr@10", cand), ("hit@10", base), ("hit@10", cand))] for t in types]))
        lo = res.get("lexical_overlap") or {}
        if lo.get("median") is not None:
            B.append(("p", f"Lexical overlap (share of a query's distinct non-stop tokens present in the intended "
                           f"record's title + text, frozen tokenizer): median {100 * lo['median']:.1f}% "
                           f"(by type: " + ", ".join(f"{t} {100 * v:.1f}%" for t, v in lo["by_type"].items())
                           + "). A diagnostic, not a semantic similarity."))
        B.extend(_changes_and_misses(run, res, bench, base, cand))
        B.extend(_controls(res, corpus))
    if timings:
        B.append(("h2", "Timing"))
        B.append(("p", f"{timings['passes']} rotated passes per query over {timings['n_queries']} queries. Setup "
                       f"(separate): " + ", ".join(setup_items(timings["setup_s"])) + "."))
        B.append(("table", ["Method", "median ms", "mean ms", "p90 ms", "timed calls"],
                  [[lab, f"{s['median_ms']:.2f}", f"{s['mean_ms']:.2f}", f"{s['p90_ms']:.2f}", s["n"]]
                   for lab, s in timings["summary"].items()]))
    figs = run / "figures"
    B.append(("h2", "Figures"))
    f = degree_figure(corpus, figs)
    B.append(("figure", f, f"Degree distribution of the undirected projection ({gs.isolated:,} isolated records "
                           "stated separately)") if f else ("p", "No edges: no degree figure."))
    B.append(("figure", method_bars(res, figs, [(lab, ov[primary]) for lab, ov in rows]),
              f"{primary} by method; bars share a zero baseline."))
    f = effects_figure(res, figs)
    if f:
        B.append(("figure", f, "Paired effects with family-bootstrap intervals; the primary contrast in red."))
    B.append(("h2", "Limits"))
    B.append(("p", ("The intended record is one known relevant item, not an exhaustive relevance set; unjudged "
                    "alternatives count as misses. Queries were written from the definitions (target-informed), "
                    "which favours lexical recovery. " if proto.kind == "concept" else
                    "Unjudged documents count as nonrelevant; the claims were written for research, not collected "
                    "from search logs. ") + "Held-out rankings were scored once; reproduction runs in a "
                   "separate folder (`sidelight lab reproduce`) and `sidelight lab audit` recomputes every number "
                   "from stored ranks without the lab's metric code."))  # noqa: E501
    return B


def _dense_block(res: dict, pdata: dict) -> list[tuple]:
    d = res["dense"]
    ident = d.get("identity", {})
    expl = [lab for lab, info in res["methods"].items() if info.get("exploratory")]
    borrowed = {lab: info["params_from"] for lab, info in res["methods"].items() if info.get("params_from")
                and info.get("exploratory")}
    text = (f"Local dense supplement (exploratory: {', '.join(expl) or 'none'}). Model {ident.get('name', d['spec'])} "
            f"run locally (onnx sha256 {str(ident.get('onnx_sha256'))[:16]}, tokenizer sha256 "
            f"{str(ident.get('tokenizer_sha256'))[:16]}), {ident.get('pooling', '?')} pooling, "
            f"{'L2-normalised' if ident.get('normalize') else 'unnormalised'} {ident.get('dim')}-dimensional vectors, "
            f"at most {ident.get('max_length')} wordpieces; records encoded from the same repeated name + text "
            f"that BM25 indexes. Documents truncated: {d['truncated_docs']:,} of {d['n_vectors']:,}; held-out "
            f"queries truncated: {'–' if d.get('truncated_queries') is None else d['truncated_queries']} of "
            f"{d['n_queries']}. Vectors sha256 {str(d.get('vectors_sha256'))[:16]}.")
    if borrowed:
        text += (" Borrowed settings, no dense-specific tuning: " + "; ".join(
            f"{lab} uses the dev-selected setting of {src} "
            f"({json.dumps({k: v for k, v in res['methods'][lab]['params'].items() if k in (res.get('selection') or {}).get(src, {})})})"
            for lab, src in borrowed.items()) + ".")
    if pdata.get("index", {}).get("dense_note"):
        text += " " + pdata["index"]["dense_note"]
    return [("h2", "Local dense supplement"), ("p", text)]


def _sections_block(sec: dict) -> list[tuple]:
    """Section-level figures (`lab.sections`): the right section named by a top-k hit."""
    m, kinds = sec["metric"], sorted({t for info in sec["methods"].values() for t in info["by_type"]})
    first = next(iter(sec["methods"].values()))
    vs = {c["candidate"]: c for c in sec["contrasts"]}
    base = sec["contrasts"][0]["baseline"] if sec["contrasts"] else None
    B: list[tuple] = [("h2", f"Section level ({m})")]
    B.append(("p", f"{sec['n']} test questions name a target section ({sec['n_families']} target documents; "
                   + ", ".join(f"{t} {first['by_type'][t]['n']}" for t in kinds)
                   + f"). {m}: one of the top {sec['k']} hits is a target document and the section shown for it "
                   "(the passage picker of `search`) is the target section or inside it; family-weighted."))
    rows = []
    for lab, info in sec["methods"].items():
        c = vs.get(lab)
        rows.append([lab, f"{info[m]:.4f}", f"{info['hits']}/{sec['n']}"]
                    + [f"{info['by_type'][t][m]:.4f}" if t in info["by_type"] else "–" for t in kinds]
                    + [f"{c['difference']:+.4f} [{c['ci_low']:+.4f}, {c['ci_high']:+.4f}], p {c['p_sign_flip']:.3f}"
                       if c else ""])
    B.append(("table", ["Method", m, "hits"] + kinds + [f"− {base}, 95% family bootstrap" if base else ""], rows))
    return B


def _contrasts(res: dict) -> list[tuple]:
    B: list[tuple] = [("h2", "Paired contrasts (family bootstrap and sign-flip)")]
    lead = ("One primary contrast; every other contrast is" if any(c["role"] == "primary" for c in res["contrasts"])
            else "No primary contrast: every contrast is")
    B.append(("p", f"{lead} exploratory and not multiplicity-corrected. "
                   "Intervals are conditional on the sampled families, the split and the settings."))
    B.append(("table", ["Candidate", "Baseline", "Role", "Difference", "Interval", "p (sign-flip)", "Families +/-/="],
              [[c["candidate"], c["baseline"], c["role"], f"{c['difference']:+.6f}",
                f"[{c['ci_low']:+.6f}, {c['ci_high']:+.6f}]", f"{c['p_sign_flip']:.4f}",
                f"{c['families_up']}/{c['families_down']}/{c['families_same']}"] for c in res["contrasts"]]))
    return B


def _changes_and_misses(run: Path, res: dict, bench, base: str, cand: str) -> list[tuple]:
    from .record import read_rankings

    ranks = read_rankings(run / "test" / "rankings")
    prim = res["primary_metric"]
    extra = [lab for lab in ("dense", "tfidf") if lab in ranks and lab not in (base, cand)][:1]
    head = ["Query", "Intended", "Question", f"{base} rank", f"{cand} rank"] + [f"{e} rank" for e in extra]

    def row(q):
        return [q, bench.intended_name.get(q, bench.single_target(q)), bench.queries[q]] + \
               [_fmt(ranks[lab][q].get("target_rank")) for lab in [base, cand] + extra]
    pb, pcd = res["methods"][base]["per_query"], res["methods"][cand]["per_query"]
    changed = [q for q in bench.queries if pb[q][prim] != pcd[q][prim]]
    misses = [q for q in bench.queries if pb[q].get("hit@10", 1.0) == 0.0]
    cand_misses = [q for q in bench.queries if pcd[q].get("hit@10", 1.0) == 0.0]
    out: list[tuple] = [("h2", "Every primary change and every top-ten miss"),
           ("p", f"Rule-selected: every query whose {prim} differs between {base} and {cand} "
                 f"({len(changed)}), then every {base} top-ten miss ({len(misses)}), then every {cand} top-ten "
                 f"miss ({len(cand_misses)}). Ranks are in the full ranking (– = not ranked).")]
    out.append(("table", head, [row(q) for q in changed]) if changed else ("p", "No primary change."))
    out.append(("table", head, [row(q) for q in misses]) if misses else ("p", f"No {base} top-ten miss."))
    out.append(("table", head, [row(q) for q in cand_misses]) if cand_misses else ("p", f"No {cand} top-ten miss."))
    return out


REWIRE_COLUMNS = ("seed", "attempts", "accepted", "retained_overlap", "components_before", "components_after",
                  "largest_component_before", "largest_component_after")


def rewire_details(res: dict, corpus) -> tuple[dict, bool]:
    """(seed -> rewire report, recomputed?) for every rewire setting of the run.

    A result written before the reports were stored again (their import had moved) is completed
    from the frozen corpus: the rewire is a pure function of the graph and the seed, so this
    re-derives the control graph the run ranked over; nothing is re-scored."""
    from ..graph.store import Graph
    from ..methods.graph import rewire_report

    seeds = sorted({int(info["params"]["seed"]) for info in res["methods"].values()
                    if info.get("method") == "bm25+ppr:rewire" and "seed" in info.get("params", {})})
    stored = res.get("rewire_reports") or {}
    if all(str(s) in stored for s in seeds):
        return {str(s): stored[str(s)] for s in seeds} or dict(stored), False
    graph = Graph.from_corpus(corpus)
    return {str(s): stored.get(str(s)) or rewire_report(graph, s).to_dict() for s in seeds}, True


def _controls(res: dict, corpus) -> list[tuple]:
    out: list[tuple] = [("h2", "Control graphs")]
    rep, recomputed = rewire_details(res, corpus)
    if not rep:
        out.append(("p", "No rewired control in this protocol."))
        return out
    rows = [r for _, r in sorted(rep.items(), key=lambda kv: int(kv[0]))]
    out.append(("p", f"{len(rows)} degree-preserving rewires of the undirected projection "
                     f"({rows[0]['n_nodes']:,} records, {rows[0]['n_edges']:,} undirected pairs), "
                     f"{rows[0]['attempts'] // max(rows[0]['n_edges'], 1)} swap attempts per pair, each seeded: "
                     "accepted swaps, the share of original pairs retained, and connected components before and after."))
    out.append(("table", list(REWIRE_COLUMNS),
                [[f"{r[c]:.4f}" if isinstance(r.get(c), float) else str(r.get(c, "–")) for c in REWIRE_COLUMNS]
                 for r in rows]))
    if recomputed:
        out.append(("p", "This run's result.json holds no rewire reports (written while the lab's import of them "
                         "was broken); the rows are recomputed at report time from the frozen corpus and each seed, "
                         "which re-derives the same control graphs. No ranking was re-scored."))
    out.append(("p", "Degree-preserving swaps; the attempt budget is operational, not proof of uniform mixing. "
                     "The rewired graphs are descriptive controls, not independent collections."))
    return out


def blocks_markdown(B: list[tuple], run: Path) -> str:
    """Markdown of report blocks (h1, h2, p, table, figure); figure paths relative to `run`."""
    lines = []
    for b in B:
        if b[0] == "h1":
            lines += [f"# {b[1]}", ""]
        elif b[0] == "h2":
            lines += [f"## {b[1]}", ""]
        elif b[0] == "p":
            lines += [b[1], ""]
        elif b[0] == "table":
            esc = lambda s: str(s).replace("|", "\\|").replace("\n", " ")  # noqa: E731
            lines.append("| " + " | ".join(esc(h) for h in b[1]) + " |")
            lines.append("|" + "---|" * len(b[1]))
            lines += ["| " + " | ".join(esc(c) for c in r) + " |" for r in b[2]]
            lines.append("")
        elif b[0] == "figure":
            rel = Path(b[1]["svg"]).relative_to(run)  # the PNG is shown: `lab compress` stores the SVG as xz
            lines += [f"![{b[2]}]({rel.with_suffix('.png').as_posix()})", "", f"*{b[2]}* (also {rel.as_posix()})", ""]
    return "\n".join(lines)


def blocks_html(B: list[tuple], title: str = "sidelight lab report") -> str:
    """One self-contained HTML page of report blocks (inline CSS, figures as inline SVG)."""
    e = html.escape
    body = []
    for b in B:
        if b[0] in ("h1", "h2"):
            body.append(f"<{b[0]}>{e(b[1])}</{b[0]}>")
        elif b[0] == "p":
            body.append(f"<p>{e(b[1])}</p>")
        elif b[0] == "table":
            num = lambda c: str(c).replace(".", "", 1).replace("%", "").replace("+", "").replace("-", "").isdigit()  # noqa: E731
            body.append("<table><tr>" + "".join(f"<th>{e(str(h))}</th>" for h in b[1]) + "</tr>" + "".join(
                "<tr>" + "".join(f"<td{' class=n' if num(c) else ''}>{e(str(c))}</td>" for c in r) + "</tr>"
                for r in b[2]) + "</table>")
        elif b[0] == "figure":
            svg = Path(b[1]["svg"]).read_text(encoding="utf-8")
            svg = svg[svg.index("<svg"):]
            if "<metadata>" in svg:  # RDF metadata carries namespace URLs; the page needs none
                svg = svg[:svg.index("<metadata>")] + svg[svg.index("</metadata>") + len("</metadata>"):]
            body.append(f"<figure>{svg}<figcaption>{e(b[2])}</figcaption></figure>")
    return (f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{e(title)}</title>"
            f"<style>{CSS}</style></head><body>" + "\n".join(body) + "</body></html>\n")


def write_text_atomic(path: Path, text: str) -> None:
    """Atomic: a temp file beside `path`, then a rename."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_report(run: Path) -> dict[str, Path]:
    """report.md, report.html and figures/ for a completed run whose record holds (under its writer lock)."""
    from ..errors import InputError
    from ..store.lock import writer_lock

    run = Path(run)
    if not exists(run / "test" / "result.json"):
        raise InputError(f"{run}: no completed test result; run `sidelight lab run --split test` first")
    with writer_lock(run):
        return write_report_locked(run)


def write_report_locked(run: Path) -> dict[str, Path]:
    """`write_report` for a caller that already holds the run's writer lock."""
    from ..errors import InputError
    from .record import seal_report, verify_run

    if not exists(run / "test" / "result.json"):
        raise InputError(f"{run}: no completed test result; run `sidelight lab run --split test` first")
    verify_run(run, "test")
    B = _blocks(run)
    md, page = run / "report.md", run / "report.html"
    write_text_atomic(md, blocks_markdown(B, run))
    write_text_atomic(page, blocks_html(B))
    seal_report(run)  # the report's figures join the run's hash chain (`lab audit`, `serve --lab` check them)
    return {"markdown": md, "html": page, "figures": run / "figures"}
