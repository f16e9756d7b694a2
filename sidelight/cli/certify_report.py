"""`sidelight certify INDEX --report [DIR]`: the certificate as report.md and report.html (with its figure)."""

from __future__ import annotations

import json
from pathlib import Path


def _fmt(x, digits: int = 2) -> str:
    return "-" if x is None else (f"{x:.{digits}f}" if isinstance(x, float) else str(x))


def boilerplate_line(b: dict) -> str:
    """The section-chunk boilerplate rule's count, one line (`serendipity.chunks.boilerplate_sections`)."""
    return (f"{b['sections']} sections left out ({b['texts']} distinct texts in {b['notes']} notes); rule: {b['rule']}"
            + (f"; most widespread: {b['examples'][0]!r}" if b.get("examples") else ""))


def blocks(ser, out: Path, proxies: dict | None) -> list[tuple]:
    from ..lab.figures import evidence_by_bin_figure

    s, sae = ser.certificate.summary, ser.meta["sae"]["stats"]
    ratio, ci = s.get("placebo_target_ratio"), s.get("placebo_target_ratio_ci")
    B: list[tuple] = [("h1", f"Certificate: {ser.index.path}"),
         ("p", f"Verdict: {s['verdict'].upper()}. Rule: {s['rule']}."),
         ("table", ["", ""], [
             ["records / chunks / records with > 1 chunk", f"{s['records']} / {s['chunks']} / {s['population']}"],
             ["markers (SAE)", f"{sae['width']} markers, k={sae['k']}, FVE {sae['fve']:.3f}, dead {sae['dead']}"],
             ["candidates", s["candidates"]], ["target passes", s["target_passes"]],
             ["placebo passes per corpus", ", ".join(map(str, s["placebo_passes"]))],
             ["placebo / target", f"{_fmt(ratio, 3)}" + (f" (95% interval {ci[0]:.3f}-{ci[1]:.3f})" if ci else "")],
             ["distance rule", s["graph"]], ["kinship vectors", s.get("kinship_vectors", "")]]
          + ([["boilerplate sections (no chunk)", boilerplate_line(s["boilerplate_sections"])]]
             if s.get("boilerplate_sections") else []))]
    edges = s["kinship_edges"]
    B += [("h2", "By kinship bin"),
          ("table", ["bin", "kinship from", "threshold", "target passes", "placebo passes (mean)"],
           [[k, "-inf" if k == 0 else f"{edges[k - 1]:.3f}", _fmt(t), tp, _fmt(pp)] for k, (t, tp, pp) in
            enumerate(zip(s["thresholds"], s.get("target_passes_by_bin", []), s.get("placebo_passes_by_bin", [])))])]
    fig = evidence_by_bin_figure(s, out / "figures")
    if fig:
        B.append(("figure", fig, "Evidence quantiles of target candidates (blue) and calibration placebo candidates "
                                 "(orange) per kinship bin; x marks the calibrated threshold."))
    B += [("h2", "Target pairs ruled out (first failing rule)"), ("table", ["rule", "pairs"], list(s["target_reasons"].items()))]
    g = s.get("guards")
    if g:
        n_draws = max(len(g["placebo"]), 1)
        B += [("h2", "Whale guards (sidelight.serendipity.guards; first guard that fires)"),
              ("p", f"Of {g['target_passes_before_guards']} target pairs that passed the test, the guards ruled out "
                    f"{g['target_passes_before_guards'] - s['target_passes']}; placebo passes per corpus before the "
                    f"guards: {', '.join(map(str, g['placebo_passes_before_guards']))}, after: "
                    f"{', '.join(map(str, s['placebo_passes']))}. The verdict is taken after the guards."),
              ("table", ["guard", "target pairs", "placebo pairs (mean per corpus)"],
               [[k, v, _fmt(sum(p[k] for p in g["placebo"]) / n_draws)] for k, v in g["target"].items()])]
    if proxies:
        B += [("h2", f"Usefulness proxy: {proxies['proxy']}"),
              ("table", ["pairs", "n", "useful", "share"],
               [[k, v["pairs"], v["useful"], _fmt(v["share"], 5)] for k, v in proxies["pairs"].items()])]
        if "seats" in proxies:
            st = proxies["seats"]
            B.append(("p", f"Seated passages ({st['queries']} queries, {st['seats_offered_per_query']} seats each, "
                           f"baseline {st['baseline']}): unexpected {_fmt(st['unexpected_share'], 3)}, SRDP "
                           f"{_fmt(st['srdp'], 4)}, serendipity@k {_fmt(st['serendipity_at_k'], 4)}."))
    p, ids, titles = ser.certificate.pairs, ser.index.corpus.ids, [r.title for r in ser.index.corpus.records]
    top = sorted(range(len(p["a"])), key=lambda i: (-float(p["evidence_rel"][i]), int(p["a"][i]), int(p["b"][i])))[:15]
    B += [("h2", "Strongest certified pairs (evidence over the bin's threshold)"),
          ("table", ["a", "b", "marker", "evidence_rel", "chance", "kinship"],
           [[f"{ids[p['a'][i]]} {titles[p['a'][i]][:40]}", f"{ids[p['b'][i]]} {titles[p['b'][i]][:40]}",
             f"f{int(p['marker'][i])} {ser.label(int(p['marker'][i]))}", _fmt(float(p["evidence_rel"][i])),
             f"x{float(p['chance'][i]):.0f}", _fmt(float(p["kinship"][i]), 3)] for i in top])]
    return B


def write(ser, out: Path, proxies_file: Path | None = None) -> dict[str, Path]:
    """report.md, report.html and figures/ in `out`; `proxies_file`: a bench/certify_useful.py JSON."""
    from ..errors import InputError
    from ..lab.report import blocks_html, blocks_markdown, write_text_atomic

    proxies = None
    if proxies_file is not None:
        try:
            data = json.loads(Path(proxies_file).read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise InputError(f"{proxies_file}: not a readable bench/certify_useful.py JSON ({exc})") from None
        want = Path(ser.index.path).name.removesuffix("-serendipity")
        proxies = data.get("datasets", {}).get(want)
    out.mkdir(parents=True, exist_ok=True)
    B = blocks(ser, out, proxies)
    write_text_atomic(out / "report.md", blocks_markdown(B, out))
    write_text_atomic(out / "report.html", blocks_html(B, f"sidelight certificate: {ser.index.path}"))
    return {"markdown": out / "report.md", "html": out / "report.html", "figures": out / "figures"}
