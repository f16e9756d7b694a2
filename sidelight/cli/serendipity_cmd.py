"""`sidelight certify`, `sidelight connections`, `sidelight reveal`, `sidelight verdict` (serendipity lane)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..serendipity.certify import MIN_CHANCE, CertConfig
from ..serendipity.reveal import CONNECTIONS_SEED
from ..serendipity.sae import SAE_SEED, SAEConfig
from ..serendipity.seating import DEFAULT_DIAL, MAX_DIAL
from ..serendipity.verdicts import CALIBRATION_SIZE
from .certify_report import boilerplate_line
from .args import add_deprecated, add_json, add_output, add_top_k, check_top_k
from .output import console, print_json, table


_CERT = CertConfig()


def register(sub) -> None:
    p = sub.add_parser("certify", help="build chunks + SAE markers if missing, then the certificate and its placebo test")
    p.add_argument("index", type=Path)
    add_json(p, "print the certificate summary as JSON instead of the tables", legacy_path=True)
    add_output(p, "write the certificate summary as JSON to PATH")
    p.add_argument("--width", type=int, default=SAEConfig().width, help="SAE markers (default %(default)s)")
    p.add_argument("--sae-k", dest="sae_k", type=int, default=32, metavar="K",
                   help="SAE sparsity: active markers per chunk (TopK; default 32)")
    add_deprecated(p, "-k", "sae_k", "--sae-k", int)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--budget", type=int, default=96, help="tokens per chunk window (--chunks windows)")
    p.add_argument("--chunks", choices=("auto", "sections", "windows"), default="auto",
                   help="chunk unit: each section of a note, or windows of --budget tokens; auto: sections when the "
                        "records came with their own (a folder's notes), else windows (default %(default)s)")
    p.add_argument("--min-chance", type=float, default=MIN_CHANCE,
                   help="a pair's co-occurrence over its chance expectation, at least (default %(default)s)")
    p.add_argument("--fdr", type=float, default=_CERT.fdr,
                   help="calibrate each kinship bin's evidence threshold so that placebo passes are at most "
                        "this share of target passes on the calibration placebo corpora (default %(default)s)")
    p.add_argument("--kinship-bins", type=int, default=_CERT.kinship_bins,
                   help="equal-count bins of candidate kinship, each with its own threshold (default %(default)s)")
    p.add_argument("--placebo-draws", type=int, default=_CERT.placebo_draws, help="fresh placebo corpora")
    p.add_argument("--placebo-ratio", type=float, default=_CERT.placebo_ratio,
                   help="FAIL when mean placebo passes reach this share of target passes (default %(default)s)")
    p.add_argument("--seed", type=int, default=SAE_SEED, help="SAE seed")
    p.add_argument("--rebuild", action="store_true", help="rebuild every stage")
    p.add_argument("--no-guards", dest="guards", action="store_false",
                   help="certify without the whale guards (sidelight.serendipity.guards): the test alone")
    p.add_argument("--report", nargs="?", type=Path, const=Path("-"), metavar="DIR",
                   help="also write report.md, report.html and figures/ (default DIR: runs/certificate-<index>)")
    p.add_argument("--proxies", type=Path, metavar="JSON",
                   help="with --report: add the usefulness proxies of a bench/certify_useful.py JSON")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=run_certify)

    c = sub.add_parser("connections", help="the floor with certified connections seated blind by a dial")
    c.add_argument("index", type=Path)
    c.add_argument("query")
    c.add_argument("--dial", type=int, default=DEFAULT_DIAL, help=f"seats offered, 0..{MAX_DIAL}")
    c.add_argument("--session", default="default", help="session id (leximin marker usage is per session)")
    c.add_argument("--seed", type=int, default=CONNECTIONS_SEED)
    add_top_k(c, 8, "passages printed (--json holds them all)", old=("--show",))
    c.add_argument("--answer-hash", metavar="SHA256", help="SHA-256 of the answer: reveal the panel for this trace")
    c.add_argument("--trace", help="with --answer-hash: reveal an earlier trace instead of running the query again")
    add_json(c, "print the floor, seating and trace (and the reveal) as JSON")
    c.set_defaults(func=run_connections)

    r = sub.add_parser("reveal", help="the panel of a connections trace, after the answer's SHA-256")
    r.add_argument("index", type=Path)
    r.add_argument("trace")
    r.add_argument("--answer-hash", metavar="SHA256")
    add_json(r, "print the revealed panel as JSON")
    r.set_defaults(func=run_reveal)

    v = sub.add_parser("verdict", help="human verdicts (useful / not useful), rulings, calibration")
    v.add_argument("index", type=Path)
    v.add_argument("--pair", nargs=2, metavar=("A", "B"))
    v.add_argument("--marker", type=str, help="marker number (fNNN or NNN)")
    v.add_argument("--verdict", help="useful | not useful")
    v.add_argument("--who", default="author")
    v.add_argument("--note")
    v.add_argument("--trace")
    v.add_argument("--rule-out", action="store_true", help="rule the --marker or the --pair out of future seating")
    v.add_argument("--calibration", action="store_true", help="reserve the calibration sample and report precision")
    v.add_argument("--size", type=int, default=CALIBRATION_SIZE, help="calibration sample size")
    add_json(v, "print the recorded verdict, ruling and precision as JSON")
    v.set_defaults(func=run_verdict)


def _ser(index_path: Path, build: bool = False, args=None):
    from ..index import Index
    from ..serendipity.store import Serendipity, SerendipityConfig

    index = Index.load(index_path)
    if args is None:
        return Serendipity(index).load()
    cfg = SerendipityConfig(budget=args.budget, chunking=args.chunks, sae=SAEConfig(width=args.width, k=args.sae_k, epochs=args.epochs, seed=args.seed),
                            cert=CertConfig(min_chance=args.min_chance, fdr=args.fdr, kinship_bins=args.kinship_bins,
                                            placebo_draws=args.placebo_draws, placebo_ratio=args.placebo_ratio,
                                            guards=args.guards))
    return Serendipity(index, cfg)


def run_certify(args: argparse.Namespace) -> int:
    from ..serendipity.db import SerDB, now
    from ..store.lock import writer_lock

    with writer_lock(args.index):  # certify writes INDEX/serendipity/: one writer at a time
        ser = _ser(args.index, args=args)
        ser.ensure(progress=not args.quiet, rebuild=args.rebuild)
    s = ser.certificate.summary
    sae = ser.meta["sae"]["stats"]
    cid = ser.meta["certificate"]["id"]
    SerDB.for_index(ser.index).write("INSERT OR REPLACE INTO ser_certificates VALUES (?,?,?,?)",
                                     (cid, now(), s["verdict"], json.dumps(s)))
    rows = [("records / chunks", f"{s['records']} / {s['chunks']} {s.get('chunking', 'windows')} "
                                 f"({s['population']} records with >1 chunk)"),
            ("SAE", f"{sae['width']} markers, k={sae['k']}, FVE {sae['fve']:.3f}, dead {sae['dead']}, "
                    f"{sae['train_seconds']:.0f}s"),
            ("candidates", s["candidates"]),
            ("target passes", s["target_passes"]),
            ("placebo passes", f"{s['placebo_passes']} (mean {s['placebo_mean']:.1f})"),
            ("placebo / target", _ratio(s)),
            ("graph rule", s["graph"]),
            *([("boilerplate sections", boilerplate_line(s["boilerplate_sections"]))]
              if s.get("boilerplate_sections") else []),
            ("kinship vectors", s.get("kinship_vectors", "")),
            ("rule", s["rule"]),
            ("verdict", s["verdict"].upper() + (f" -- {s['note']}" if s.get("note") else "")),
            ("certificate", cid)]
    out = {"index": str(args.index), "certificate_id": cid, "target_passes": s["target_passes"],
           "placebo_passes": s["placebo_passes"], "placebo_mean": s["placebo_mean"], "rule": s["rule"],
           "placebo_target_ratio": s["placebo_target_ratio"], "placebo_target_ratio_ci": s["placebo_target_ratio_ci"],
           "verdict": s["verdict"], "candidates": s["candidates"], "summary": s,
           "sae": sae, "chunks": ser.meta["chunks"].get("chunks")}
    if args.json:
        print(json.dumps(out, indent=2, default=str))
    else:
        table(f"certificate: {args.index}", ["", ""], rows)
        table("target pairs ruled out (first failing rule)", ["rule", "pairs"], list(s["target_reasons"].items()),
              [False, True])
        g = s.get("guards")
        if g:
            table(f"whale guards: of {g['target_passes_before_guards']} passing pairs, ruled out (first guard that fires)",
                  ["guard", "target pairs", "placebo pairs (mean per corpus)"],
                  [(k, v, f"{sum(p[k] for p in g['placebo']) / max(len(g['placebo']), 1):.1f}")
                   for k, v in g["target"].items()], [False, True, True])
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(out, indent=2, default=str))
    if args.report is not None:
        from . import certify_report

        folder = Path("runs") / f"certificate-{Path(args.index).resolve().name}" if args.report == Path("-") else args.report
        paths = certify_report.write(ser, folder, args.proxies)
        if not args.json:
            console.print(f"report: {paths['markdown']}, {paths['html']}")
    return 0 if s["verdict"] == "pass" else 1


def _ratio(s: dict) -> str:
    r, ci = s.get("placebo_target_ratio"), s.get("placebo_target_ratio_ci")
    if r is None:
        return "n/a (no target passes)"
    return f"{r:.3f}" + (f" (95% interval {ci[0]:.3f}-{ci[1]:.3f})" if ci else "")


def run_connections(args: argparse.Namespace) -> int:
    from ..serendipity.db import SerDB
    from ..serendipity.reveal import check_hash, connections, reveal

    shown_k = check_top_k(args)
    ser = _ser(args.index)
    db = SerDB.for_index(ser.index)
    if args.answer_hash is not None:
        check_hash(args.answer_hash)  # refuse a malformed hash before running anything
    if args.trace:
        if args.answer_hash is None:
            from ..serendipity.reveal import RevealRefused

            raise RevealRefused("reveal refused: --trace needs --answer-hash (the SHA-256 of your answer)")
        res = None
        trace_id = args.trace
    else:
        res = connections(ser, args.query, args.dial, args.session, args.seed, db=db)
        trace_id = res["trace_id"]
    shown = reveal(db, trace_id, args.answer_hash) if args.answer_hash else None
    if args.json:
        print_json({**(res or {"trace_id": trace_id}), **({"reveal": shown} if shown else {})})
        return 0
    if res is not None:
        rows = [(i + 1, p["id"], p["title"][:40], p["text"][:90].replace("\n", " ")) for i, p in enumerate(res["passages"][:shown_k])]
        table(f"floor ({res['floor_source']}{', partial' if res['partial'] else ''}) — {len(res['passages'])} passages, "
              f"showing {min(shown_k, len(res['passages']))}", ["#", "id", "title", "passage"], rows)
        console.print(f"trace {trace_id}: {res['seating']['filled']} of {res['seating']['offered']} seat(s) filled "
                      f"(mixed in, unlabeled)")
    if shown:
        print()
        print(shown["panel"])
    else:
        print(f"panel withheld: `sidelight reveal {args.index} {trace_id} --answer-hash SHA256` after the answer")
    return 0


def run_reveal(args: argparse.Namespace) -> int:
    from ..index import Index
    from ..serendipity.db import SerDB
    from ..serendipity.reveal import reveal

    shown = reveal(SerDB.for_index(Index.load(args.index)), args.trace, args.answer_hash)
    if args.json:
        print_json(shown)
    else:
        print(shown["panel"])
    return 0


def _marker(s: str | None) -> int | None:
    if s is None:
        return None
    return int(s.lstrip("fF"))


def run_verdict(args: argparse.Namespace) -> int:
    from ..errors import InputError
    from ..index import Index
    from ..serendipity import verdicts as V
    from ..serendipity.db import SerDB

    index = Index.load(args.index)
    db = SerDB.for_index(index)
    out: dict[str, object] = {}
    if args.verdict:
        marker = _marker(args.marker)
        if not args.pair or marker is None:
            raise InputError("a verdict needs --pair A B and --marker")
        out["verdict"] = V.record_verdict(db, args.pair[0], args.pair[1], marker, args.verdict, args.who,
                                          args.note, args.trace)
    if args.rule_out:  # with --pair: that pair; else the --marker (with --verdict: the verdict is kept as well)
        out["ruling"] = V.rule_out(db, args.who, marker=_marker(args.marker) if not args.pair else None,
                                   pair=tuple(args.pair) if args.pair else None, reason=args.note)
    cid = None
    if args.calibration:
        from ..serendipity.store import Serendipity

        ser = Serendipity(index).load()
        cid = ser.meta["certificate"]["id"]
        out["calibration_reserved"] = len(V.reserve_calibration(db, cid, ser.require_certificate().pairs,
                                                                index.corpus.ids, args.size))
    out["precision"] = V.precision(db, cid)
    if args.json:
        print_json(out)
    else:
        for k, v in out.items():
            print(f"{k}: {json.dumps(v)}")
    return 0
