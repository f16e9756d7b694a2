"""`sidelight lab`: freeze, run (dev then test, once), all, reproduce, audit, compress, report, packets,
read-pairs, score-pairs."""

from __future__ import annotations

import argparse
from pathlib import Path

from .args import add_json, add_output, add_top_k, check_top_k


def register(sub) -> None:
    p = sub.add_parser("lab", help="frozen protocols, held-out runs, audit and reports")
    lab = p.add_subparsers(dest="lab_command", required=True, metavar="STEP")

    s = lab.add_parser("validate", help="check a protocol completely (schema, methods, parameters) and write nothing")
    s.add_argument("protocol", type=Path)
    s.set_defaults(func=_validate)

    s = lab.add_parser("freeze", help="record protocol, benchmark, corpus and implementation hashes")
    s.add_argument("protocol", type=Path)
    add_output(s, "run folder to create", required=True, old=("--out",))
    s.set_defaults(func=_freeze)

    s = lab.add_parser("run", help="dev: select settings; test: score the held-out split once")
    s.add_argument("protocol", type=Path)
    s.add_argument("--split", required=True, choices=("dev", "test"))
    add_output(s, "the run folder (made by `lab freeze`)", required=True, old=("--out",))
    s.set_defaults(func=_run)

    s = lab.add_parser("all", help="freeze, dev selection, held-out test and report in one go")
    s.add_argument("protocol", type=Path)
    add_output(s, "run folder to create", required=True, old=("--out",))
    s.add_argument("--rescoring", metavar="REASON", help="label the folder a re-scoring (rescoring.json: reason, "
                   "date, commit): the first scoring no longer exists and this one does not pretend to be it")
    s.add_argument("--replaces", default="", metavar="FOLDER", help="with --rescoring: the first scoring's folder")
    s.set_defaults(func=_all)

    s = lab.add_parser("reproduce", help="rerun into a new folder and compare every rank and metric")
    s.add_argument("protocol", type=Path)
    s.add_argument("--from", dest="src", required=True, type=Path, metavar="DIR", help="the run folder to reproduce")
    add_output(s, "new run folder for the rerun", required=True, old=("--into",))
    s.set_defaults(func=_reproduce)

    s = lab.add_parser("compare", help="compare two run folders rank for rank")
    s.add_argument("a", type=Path)
    s.add_argument("b", type=Path)
    s.set_defaults(func=_compare)

    s = lab.add_parser("audit", help="recompute metrics and intervals from stored ranks (independent code)")
    s.add_argument("dir", type=Path, nargs="+", help="run folders, or folders of run folders (e.g. results/runs)")
    s.add_argument("--figures", type=Path, metavar="JSON", help="also check the README figures this table ties "
                   "to the runs (results/readme-figures.json; README.md beside it, two folders up)")
    s.set_defaults(func=_audit)

    s = lab.add_parser("compress", help="store a run's rankings compressed in place (columns form, or xz where "
                       "smaller), its result.json, selection.json, figures/*.svg and report.html as xz; the record and audit "
                       "hold unchanged: hashes are of the uncompressed bytes")
    s.add_argument("dir", type=Path, nargs="+", help="run folders, or folders of run folders (e.g. results/runs)")
    s.set_defaults(func=_compress)

    s = lab.add_parser("report", help="write report.md, report.html and figures (SVG, PNG, PDF)")
    s.add_argument("dir", type=Path)
    s.set_defaults(func=_report)

    s = lab.add_parser("packets", help="export blinded reader packets (exploratory)")
    s.add_argument("dir", type=Path)
    add_output(s, "folder for the packets and their key", required=True, old=("--out",))
    add_top_k(s, 5, "hits per method and query in a packet", old=("--k",))
    s.add_argument("--families", type=int, default=8)
    s.add_argument("--seed", type=int, default=20240602)
    s.set_defaults(func=_packets)

    s = lab.add_parser("probe", help="known-item questions drawn from an index's own links, headings and aliases")
    s.add_argument("index", type=Path)
    add_output(s, "the questions file to write (JSONL, collection benchmark shape)", required=True)
    s.add_argument("--seed", type=int, default=0, help="sample and dev/test split seed (default 0)")
    s.add_argument("--max", type=int, default=400, help="at most this many questions per kind (default 400)")
    s.add_argument("--questions", type=Path, help="your own questions (same shape) to add")
    s.set_defaults(func=_probe)

    s = lab.add_parser("auto", help="select a method for an index on probe questions and store it as its default")
    s.add_argument("index", type=Path)
    s.add_argument("--probe", type=Path, help="questions from `lab probe` (default: drawn now, seed 0)")
    add_output(s, "run folder to create (default INDEX-lab)", required=False)
    s.add_argument("--adapt", type=float, metavar="MINUTES",
                   help="first adapt the dense lane to the collection within MINUTES (`sidelight adapt`, needs "
                        "sidelight[adapt] and an index with vectors); the adapted model and its fusions become "
                        "candidates, and the index is re-encoded with it when dev picks one")
    add_top_k(s, 100, "ranked ids stored per question (at least 10, the cutoff of mrr@10 and hit@10; hit@100 "
                      "is reported only at 100 or more): a shallower ranking keeps the run small")
    s.set_defaults(func=_auto)

    s = lab.add_parser("score-packets", help="mechanically score returned reader answers")
    s.add_argument("packets", type=Path)
    s.add_argument("answers", type=Path)
    s.set_defaults(func=_score_packets)

    s = lab.add_parser("read-pairs", help="a blind packet of certified, placebo, top-kinship and random candidate "
                                          "pairs (a quarter each), frozen by hashes before any reading")
    s.add_argument("index", type=Path)
    add_output(s, "new folder for packet.jsonl, key.json and freeze.json", required=True)
    s.add_argument("--pairs", type=int, default=60, help="pairs in the packet, a multiple of 4 (default 60)")
    s.add_argument("--seed", type=int, default=47, help="seed of the draws and the shuffle (default 47)")
    s.add_argument("--before-guards", action="store_true",
                   help="read the certificate as before the whale guards (their ruled-out pairs drawn too)")
    s.add_argument("--take-available", action="store_true",
                   help="a source with fewer pairs than a quarter gives all it has (counts in freeze.json)")
    s.set_defaults(func=_read_pairs)

    s = lab.add_parser("score-pairs", help="reveal a read packet's sources: useful and whale rates with Wilson intervals")
    s.add_argument("packet", type=Path, help="folder written by `lab read-pairs`")
    s.add_argument("judgements", type=Path, help='JSONL: {"item": N, "judgement": "useful|arguable|whale"} per item')
    add_json(s, "print the score as JSON")
    s.set_defaults(func=_score_pairs)


def _validate(a: argparse.Namespace) -> int:
    from ..lab.protocol import load_protocol

    p = load_protocol(a.protocol)
    runnable, skipped = p.check_methods()
    settings = sum(len(p.grid_settings(spec)) for spec in runnable)
    print(f"{a.protocol}: valid: {len(runnable)} method(s) to run ({settings} dev setting(s))"
          + (f", {len(skipped)} skipped ({', '.join(skipped)})" if skipped else "")
          + f"; depth {p.depth}" + (f" (dev {p.dev_depth})" if p.dev_depth != p.depth else "")
          + f", primary metric {p.primary}; nothing was written")
    return 0


def _freeze(a: argparse.Namespace) -> int:
    from ..lab.runner import freeze

    freeze(a.protocol, a.output, verbose=True)
    return 0


def _run(a: argparse.Namespace) -> int:
    from ..lab.runner import run_split

    run_split(a.protocol, a.split, a.output, verbose=True)
    if a.split == "test":
        _print_table(a.output)
    return 0


def _all(a: argparse.Namespace) -> int:
    from ..lab.runner import run_all

    if a.rescoring is not None:
        from ..lab.committed import label_rescoring

        label_rescoring(a.output, a.protocol, a.rescoring, a.replaces)
    run_all(a.protocol, a.output, verbose=True)
    _print_table(a.output)
    print(f"report: {a.output / 'report.md'} and {a.output / 'report.html'}")
    return 0


def _print_table(out: Path) -> None:
    from ..lab.packed import read_json
    from ..lab.report import display_rows
    from .output import table

    res = read_json(Path(out) / "test" / "result.json")
    ms = res["metrics"][:5]
    if any(info.get("median_rank") is not None for info in res["methods"].values()):
        ms = ms + ["median_rank"]
    table(f"held-out ({Path(out)})", ["method"] + ms, [[lab] + [ov.get(m) for m in ms] for lab, ov in display_rows(res)],
          [False] + [True] * len(ms))


def _show(diffs: list[str], notes: list[str]) -> int:
    for n in notes:
        print(f"note: {n}")
    for d in diffs[:200]:
        print(f"DIFF {d}")
    if len(diffs) > 200:
        print(f"... and {len(diffs) - 200} more differences")
    print("reproduced: every rank and metric matches" if not diffs else f"{len(diffs)} difference(s)")
    return 1 if diffs else 0


def _reproduce(a: argparse.Namespace) -> int:
    from ..lab.runner import reproduce

    return _show(*reproduce(a.protocol, a.src, a.output, verbose=True))


def _compare(a: argparse.Namespace) -> int:
    from ..lab.runner import compare_runs

    return _show(*compare_runs(a.a, a.b))


def _audit(a: argparse.Namespace) -> int:
    import json

    from ..lab.audit import audit
    from ..lab.committed import check_figures, run_folders

    runs = [r for d in a.dir for r in run_folders(d)]
    bad = 0
    for run in runs:
        r = audit(run)
        for p in r["problems"][:100]:
            print(f"DISAGREE {run}: {p}")
        print(f"audit {run}: {r['checks']} checks over {r['methods']} methods, {r['queries']} queries, "
              f"{r['families']} families: " + ("all agree" if r["agree"] else f"{len(r['problems'])} disagreement(s)"))
        bad += not r["agree"]
    if a.figures is not None:
        problems = check_figures(a.figures.resolve().parents[1] / "README.md", a.figures, a.figures.parent / "runs")
        for p in problems:
            print(f"README {p}")
        n = len(json.loads(a.figures.read_text())["figures"])
        print(f"README figures: {n - len(problems)} of {n} equal their runs' stored values")
        bad += bool(problems)
    return 0 if not bad else 1


def _compress(a: argparse.Namespace) -> int:
    from ..lab.committed import compress_run, run_folders

    for run in [r for d in a.dir for r in run_folders(d)]:
        r = compress_run(run)
        print(f"compress {run}: {r['files']} file(s) compressed now; {r['before'] / 1e6:.1f} MB -> "
              f"{r['after'] / 1e6:.1f} MB; the record verifies")
    return 0


def _report(a: argparse.Namespace) -> int:
    from ..lab.report import write_report

    paths = write_report(a.dir)
    print(f"wrote {paths['markdown']}, {paths['html']} and {paths['figures']}/*.{{svg,png}}")
    return 0


def _packets(a: argparse.Namespace) -> int:
    from ..lab.packets import export_packets

    info = export_packets(a.dir, a.output, k=check_top_k(a), n_families=a.families, seed=a.seed)
    print(f"wrote {info['items']} blinded items to {info['packets']} (key: {info['key']})")
    return 0


def _score_packets(a: argparse.Namespace) -> int:
    from ..lab.packets import score_answers
    from .output import print_json

    print_json(score_answers(a.packets, a.answers))
    return 0


def _read_pairs(a: argparse.Namespace) -> int:
    from ..index import Index
    from ..serendipity.reading import write_packet
    from ..serendipity.store import Serendipity

    ser = Serendipity(Index.load(a.index)).load()
    f = write_packet(ser, a.output, a.pairs, a.seed, a.before_guards, a.take_available)
    print(f"wrote {f['pairs']} blinded pairs to {a.output / 'packet.jsonl'} (key: key.json; frozen: packet sha256 "
          f"{f['packet_sha256'][:12]}, key sha256 {f['key_sha256'][:12]}); read it before opening the key")
    return 0


def _score_pairs(a: argparse.Namespace) -> int:
    from ..serendipity.reading import score_packet
    from .output import print_json, table

    s = score_packet(a.packet, a.judgements)
    if a.json:
        print_json(s)
        return 0
    pct = lambda r, ci: f"{100 * r:.0f}% ({100 * ci[0]:.0f}-{100 * ci[1]:.0f})"  # noqa: E731
    table(f"{a.packet}: judgements by source (95% Wilson intervals)", ["source", "n", "useful", "arguable", "whale",
                                                                        "useful rate", "whale rate"],
          [(k, v["n"], v["useful"], v["arguable"], v["whale"], pct(v["useful_rate"], v["useful_wilson95"]),
            pct(v["whale_rate"], v["whale_wilson95"])) for k, v in s["by_source"].items()])
    for k, ok in s["goal"].items():
        print(f"goal {k}: {'met' if ok else 'NOT met'}")
    return 0


def _probe(a: argparse.Namespace) -> int:
    from ..errors import InputError
    from ..index import Index
    from ..lab.probe import probe, read_questions, write_probe

    if a.max is not None and a.max < 1:
        raise InputError(f"--max must be >= 1, got {a.max}")
    index = Index.load(a.index)
    rows, summary = probe(list(index.corpus.records), a.seed, a.max)
    if a.questions is not None:
        if not a.questions.is_file():
            raise InputError(f"--questions {a.questions}: no such file")
        rows += read_questions(a.questions, set(index.corpus.ids), a.seed)
    write_probe(a.output, rows)
    for kind, n in summary["candidates"].items():
        print(f"{kind}: {n} candidates after leak checks, {summary['ambiguous'][kind]} dropped as naming more "
              f"than one document, {summary['kept'].get(kind, 0)} kept")
    for why, n in summary["dropped"].items():
        print(f"  dropped by the checks ({why}): {n}")
    s = summary["split"]
    print(f"split by target document (seed {a.seed}): dev {s['dev']['questions']} questions on "
          f"{s['dev']['documents']} documents, test {s['test']['questions']} on {s['test']['documents']}")
    print(f"{len(rows)} questions -> {a.output}")
    return 0


def _auto(a: argparse.Namespace) -> int:
    import json

    from ..lab import auto
    from ..lab.runner import run_all

    out = a.output or a.index.with_name(a.index.name + "-lab")
    adapt_with = None
    if a.adapt is not None:
        from ..adapt import AdaptConfig, adapt

        def adapt_with(index, folder, minutes=a.adapt):  # batches of 32, or half the records of a small collection
            return adapt(index, folder, AdaptConfig(minutes=minutes, batch_size=min(32, max(2, len(index.corpus) // 2))),
                         progress=False)
    protocol = auto.prepare(a.index, out, a.probe, adapt_with=adapt_with, depth=a.top_k)
    adapted = out / auto.ADAPTED_MODEL / "adapt.json"
    if adapted.is_file():
        t = json.loads(adapted.read_text())["training"]
        print(f"adapted the dense lane: {t['pairs']} pairs, {t['steps']} of {t['planned_steps']} steps in "
              f"{t['train_s']:.0f}s (stopped by {t['stopped_by']}) -> {adapted.parent}")
    run_all(protocol, out, verbose=True)
    _print_table(out)
    pick = auto.chosen(out)
    summary = auto.summarise(out)
    default = auto.store_default(a.index, out, pick)
    (out / "auto.json").write_text(json.dumps({"pick": pick, "default": default, **summary}, indent=2))
    for row in summary["graph_vs_rewired"]:
        print(f"bm25+ppr vs rewired ({row['kind']}): {row['bm25+ppr']:.4f} vs {row['rewired_mean']:.4f} "
              f"({row['difference']:+.4f})")
    for lab, row in summary.get("sections", {}).items():
        print(f"{lab}: section@3 {row['section@3']:.4f} ({row['hits']}/{row['n']} questions naming a section)")
    print(f"pick: {pick['note']}")
    print(f"default of {a.index}: {default['method']} {json.dumps(default['params'])} ({default['source']})")
    print(f"report: {out / 'report.md'} and {out / 'report.html'}")
    return 0
