"""Report figures (matplotlib, Agg backend), each saved as SVG (the page's inline figure, vector) and
PNG (what report.md shows; 256 colours, a third of the full-colour file's bytes) under DIR/figures.

* degree distribution of the undirected projection on log axes (isolated records stated apart);
* method bars of the primary metric on a zero baseline;
* paired effects (candidate - baseline) with their bootstrap intervals.
"""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

FORMATS = ("svg", "png")
plt.rcParams.update({"svg.hashsalt": "sidelight", "font.size": 9})  # stable SVG ids


def _palette_png(fig) -> bytes:
    """The figure as a PNG of at most 256 colours (median cut, no dithering: flat fills and text stay
    crisp), deterministic: the same figure gives the same bytes."""
    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=150, bbox_inches="tight")
    image = Image.open(io.BytesIO(buf.getvalue())).convert("RGB")
    out = io.BytesIO()
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(out, "PNG", optimize=True)
    return out.getvalue()


def save_figure(fig, out: Path, name: str) -> dict[str, str]:
    out.mkdir(parents=True, exist_ok=True)
    paths = {}
    for fmt in FORMATS:
        p = out / f"{name}.{fmt}"
        if fmt == "png":
            p.write_bytes(_palette_png(fig))
        else:  # no render time: the same figure, the same bytes
            fig.savefig(p, format=fmt, dpi=150, bbox_inches="tight", metadata={"Date": None})
        paths[fmt] = str(p)
    plt.close(fig)
    return paths


def degree_figure(corpus, out: Path) -> dict[str, str] | None:
    from ..corpus.stats import undirected_pairs

    if not corpus.edges:
        return None
    pairs = undirected_pairs(corpus)
    degree = np.bincount(pairs.ravel(), minlength=len(corpus))
    isolated = int((degree == 0).sum())
    values, counts = np.unique(degree[degree > 0], return_counts=True)
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    ax.scatter(values, counts, s=10, color="#2b6cb0")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("degree (distinct neighbours, undirected)")
    ax.set_ylabel("records")
    ax.set_title(f"{corpus.name}: degree distribution; {isolated:,} isolated records not shown")
    ax.grid(True, which="major", alpha=0.3)
    return save_figure(fig, out, "degree-distribution")


def method_bars(result: dict, out: Path, rows: list[tuple[str, float]]) -> dict[str, str]:
    """`rows`: (label, value) of the primary metric, in display order."""
    metric = result["primary_metric"]
    fig, ax = plt.subplots(figsize=(6.5, 0.35 * len(rows) + 1.2))
    labels = [r[0] for r in rows][::-1]
    vals = [r[1] for r in rows][::-1]
    ax.barh(labels, vals, color="#4a5568")
    for y, v in enumerate(vals):
        ax.text(v, y, f" {v:.4f}", va="center", fontsize=8)
    ax.set_xlim(0, max(1.0, max(vals, default=0) * 1.15))
    ax.set_xlabel(f"{metric} (family mean, held-out split); axis starts at zero")
    ax.axvline(0, color="black", lw=0.8)
    return save_figure(fig, out, "method-bars")


def effects_figure(result: dict, out: Path) -> dict[str, str] | None:
    cs = result.get("contrasts", [])
    if not cs:
        return None
    fig, ax = plt.subplots(figsize=(6.5, 0.35 * len(cs) + 1.2))
    for y, c in enumerate(reversed(cs)):
        color = "#c53030" if c["role"] == "primary" else "#718096"
        ax.errorbar(c["difference"], y, xerr=[[c["difference"] - c["ci_low"]], [c["ci_high"] - c["difference"]]],
                    fmt="o", color=color, capsize=3)
    ax.set_yticks(range(len(cs)))
    ax.set_yticklabels([f"{c['candidate']}{' (primary)' if c['role'] == 'primary' else ''}" for c in reversed(cs)])
    ax.axvline(0, color="black", lw=0.8)
    base = cs[0]["baseline"]
    ax.set_xlabel(f"paired difference in {result['primary_metric']} vs {base}, "
                  f"{int(100 * cs[0]['confidence'])}% family bootstrap interval")
    return save_figure(fig, out, "paired-effects")


def evidence_by_bin_figure(summary: dict, out: Path) -> dict[str, str] | None:
    """Target vs placebo evidence per kinship bin (a certificate's `evidence_by_bin`), with the thresholds."""
    eb = summary.get("evidence_by_bin")
    if not eb:
        return None
    qs, thr = eb["quantiles"], summary["thresholds"]
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    for side, colour, dx in (("target", "#2b6cb0", -0.12), ("placebo", "#c05621", 0.12)):
        for j, (q, mark) in enumerate(zip(qs, ("_", "v", "o", "s", "^"))):
            xs = [k + dx for k, row in enumerate(eb[side]) if row]
            ys = [row[j] for row in eb[side] if row]
            ax.scatter(xs, ys, marker=mark, s=18, color=colour,
                       label=f"{side} {'max' if q == 1 else f'q{q:g}'}")
    finite = [(k, t) for k, t in enumerate(thr) if np.isfinite(t)]
    if finite:
        ax.scatter([k for k, _ in finite], [t for _, t in finite], marker="x", s=40, color="black",
                   label="threshold")
    ax.set_xticks(range(len(thr)))
    ax.set_xlabel("kinship bin (equal-count bins of candidate kinship, low to high)")
    ax.set_ylabel("evidence of a pair's best marker (-log10)")
    ax.set_title("target candidates vs calibration placebo candidates")
    ax.legend(fontsize=6, ncol=4, loc="upper left")
    ax.grid(True, alpha=0.3)
    return save_figure(fig, out, "evidence-by-kinship-bin")
