"""Seeded sample of target documents, their sections and link arcs for notes-v1 (run once, before
any question was written and before any retrieval over these collections).

    python benchmarks/notes-v1-sample.py            # writes benchmarks/notes-v1-targets.jsonl

Collections (read-only):
  obsidian-hub  /work/shared/data/obsidian-hub/     (Markdown + YAML front matter, [[wikilinks]])
  python-docs   /usr/share/doc/python3.11/html/     (Debian python3.11-doc)

Record id = path relative to the collection root, POSIX separators.

Rows of notes-v1-targets.jsonl:
  {"kind": "doc", "collection", "doc", "stratum", "title", "names", "words", "sections": [
      {"path": [heading, ...], "level", "start", "end"}]}     (1-based inclusive line ranges)
  {"kind": "arc", "collection": "obsidian-hub", "source": A, "target": B, "link": raw [[...]] text,
   "line": 1-based line of the link in A}

The section parsers (markdown_sections, html_sections) and name functions are imported by
notes-v1-check.py, so the checks read the collections the same way.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
from pathlib import Path

SEED = 49
HUB = Path(os.environ.get("NOTES_HUB", "/work/shared/data/obsidian-hub"))
PYDOCS = Path(os.environ.get("NOTES_PYDOCS", "/usr/share/doc/python3.11/html"))
HERE = Path(__file__).parent
OUT = HERE / "notes-v1-targets.jsonl"
N_HUB, N_PY, N_ARCS = 70, 50, 40
MIN_WORDS_HUB = 40      # body words after stripping front matter, comments, template lines, links' URLs
MIN_WORDS_PY = 150      # words of the main body text

# ---------------------------------------------------------------- obsidian-hub

FENCE = re.compile(r"^\s*(```|~~~)")
ATX = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
WIKILINK = re.compile(r"(!?)\[\[([^\]|#^]*)(?:[#^][^\]|]*)?(?:\|[^\]]*)?\]\]")
TEMPLATE_LINE = re.compile(r"^\s*(Plugin ID:|Links:|Developed by:|Mobile compatible:|Theme ID:|Snippet ID:|"
                           r"Author:|Repository:|Modes:|Created by:|- GitHub:|- Discord:|- Website:)", re.I)


def read_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8", errors="replace").splitlines()


def front_matter_end(lines: list[str]) -> int:
    """Index of the first line after the YAML front matter (0 if none)."""
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                return i + 1
    return 0


def front_matter(lines: list[str]) -> dict:
    end = front_matter_end(lines)
    if not end:
        return {}
    try:
        import yaml
        fm = yaml.safe_load("\n".join(lines[1:end - 1]))
        return fm if isinstance(fm, dict) else {}
    except Exception:
        return {}


def visible_lines(lines: list[str]) -> list[tuple[int, str, bool]]:
    """(0-based index, line, in_code) for lines after the front matter that are not inside
    %% ... %% or <!-- ... --> comments and not in the hub footer; in_code marks fenced code."""
    out = []
    in_code = in_pct = in_html = False
    for i in range(front_matter_end(lines), len(lines)):
        line = lines[i]
        if "Hub footer: Please don't edit anything below this line" in line:
            break
        if in_code:
            out.append((i, line, True))
            if FENCE.match(line):
                in_code = False
            continue
        if FENCE.match(line) and not in_pct and not in_html:
            in_code = True
            out.append((i, line, True))
            continue
        # strip comments on this line, tracking multi-line ones
        s, keep = line, []
        while s:
            if in_pct:
                j = s.find("%%")
                if j < 0:
                    s = ""
                else:
                    in_pct, s = False, s[j + 2:]
            elif in_html:
                j = s.find("-->")
                if j < 0:
                    s = ""
                else:
                    in_html, s = False, s[j + 3:]
            else:
                a, b = s.find("%%"), s.find("<!--")
                cands = [x for x in (a, b) if x >= 0]
                if not cands:
                    keep.append(s)
                    s = ""
                elif a >= 0 and a == min(cands):
                    keep.append(s[:a])
                    in_pct, s = True, s[a + 2:]
                else:
                    keep.append(s[:b])
                    in_html, s = True, s[b + 4:]
        text = "".join(keep)
        if text.strip():
            out.append((i, text, False))
    return out


def markdown_sections(lines: list[str]) -> list[dict]:
    """ATX headings outside code fences, front matter and comments. Each section runs from its
    heading line to the line before the next heading of the same or a higher level (1-based)."""
    heads = []
    for i, text, code in visible_lines(lines):
        if code:
            continue
        m = ATX.match(text)
        if m and m.group(2).strip():
            heads.append((i, len(m.group(1)), clean_heading(m.group(2))))
    return build_sections(heads, len(lines))


def clean_heading(h: str) -> str:
    h = re.sub(r"\[\[([^\]|]*\|)?([^\]]*)\]\]", r"\2", h)       # [[a|b]] -> b
    h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", h)              # [t](url) -> t
    h = h.replace("¶", "")
    return re.sub(r"\s+", " ", h).strip()


def build_sections(heads: list[tuple[int, int, str]], n_lines: int, last: int | None = None) -> list[dict]:
    out, stack = [], []
    end_all = last if last is not None else n_lines
    for k, (i, level, text) in enumerate(heads):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, text))
        end = end_all
        for j, lev2, _ in heads[k + 1:]:
            if lev2 <= level:
                end = j  # 0-based index of next heading = 1-based line before it
                break
        out.append({"path": [t for _, t in stack], "level": level, "start": i + 1, "end": end})
    return out


def hub_body_words(lines: list[str]) -> int:
    words = 0
    for _, text, code in visible_lines(lines):
        if code or TEMPLATE_LINE.match(text) or ATX.match(text):
            continue
        t = re.sub(r"!\[[^\]]*\]\([^)]*\)", " ", text)            # images / badges
        t = re.sub(r"\]\([^)]*\)", "] ", t)                         # link URLs
        t = re.sub(r"https?://\S+|<[^>]+>", " ", t)
        words += len(re.findall(r"[A-Za-z][A-Za-z'-]*", t))
    return words


def hub_names(rel: str, lines: list[str]) -> list[str]:
    """The note's names: file stem, front-matter aliases, its first H1."""
    names = [Path(rel).stem]
    al = front_matter(lines).get("aliases") or []
    if isinstance(al, str):
        al = [al]
    names += [str(a) for a in al if a]
    for s in markdown_sections(lines):
        if s["level"] == 1 and s["path"][0] != "This note in GitHub":
            names.append(s["path"][0])
            break
    return sorted(set(n.strip() for n in names if n and n.strip()))


def hub_stratum(rel: str) -> str:
    parts = rel.split("/")
    if len(parts) == 1:
        return "(root)"
    if parts[0].startswith("02 ") and len(parts) >= 3 and parts[1].startswith("02.05"):
        return f"{parts[0]}/{parts[2]}" if len(parts) > 3 else f"{parts[0]}/{parts[1]}"
    if parts[0].startswith("01 ") and len(parts) >= 3:
        return f"{parts[0]}/{parts[1]}"
    return parts[0]


def hub_listing(rel: str, lines: list[str]) -> bool:
    """Index / listing pages: category pages, roundups of links, 'All ...' lists, folder notes
    whose visible lines are mostly bullet links, and the folder notes (map-of-content pages, named
    '🗂️ …')."""
    parts = rel.split("/")
    if parts[-1].startswith("🗂️") or any(p.startswith(("02.01", "02.02", "02.03", "02.04")) for p in parts):
        return True
    vis = [t for _, t, code in visible_lines(lines) if not code and t.strip() and not ATX.match(t)]
    if not vis:
        return True
    linky = sum(bool(re.match(r"^\s*[-*+]\s*(\[\[|\[|!\[\[)", t)) for t in vis)
    return linky / len(vis) > 0.6


def hub_docs() -> dict[str, list[str]]:
    out = {}
    for p in sorted(HUB.rglob("*.md")):
        rel = p.relative_to(HUB).as_posix()
        if rel.startswith(".") or "/." in rel:
            continue
        out[rel] = read_lines(p)
    return out


def resolve_link(target: str, by_stem: dict[str, list[str]]) -> str | None:
    t = target.strip()
    if not t:
        return None
    t = t[:-3] if t.lower().endswith(".md") else t
    if "/" in t:
        cands = [r for r in by_stem.get(Path(t).name.lower(), []) if r[:-3].lower().endswith(t.lower())]
    else:
        cands = by_stem.get(t.lower(), [])
    return cands[0] if len(cands) == 1 else (sorted(cands, key=len)[0] if cands else None)


# ---------------------------------------------------------------- python-docs

PY_SKIP = re.compile(r"^(genindex.*|search|py-modindex|contents|copyright|license|about|bugs|download|"
                     r"index|glossary)\.html$|^whatsnew/|(^|/)index\.html$|^includes/|/changelog")


def html_tree(path: Path):
    import lxml.html
    return lxml.html.parse(str(path))


def html_main(tree):
    m = tree.xpath('//div[@role="main"]')
    return m[0] if m else tree.getroot()


def heading_text(el) -> str:
    return clean_heading(el.text_content())


def html_sections(path: Path) -> list[dict]:
    """h1-h6 inside the page's main body (div role=main), by lxml sourceline; a section runs to
    the line before the next heading of the same or a higher level, the last ones to the end of
    the main body."""
    tree = html_tree(path)
    main = html_main(tree)
    heads = [(h.sourceline - 1, int(h.tag[1]), heading_text(h)) for h in main.iter("h1", "h2", "h3", "h4", "h5", "h6")]
    n = len(read_lines(path))
    nxt = main.getnext()
    # end of main body: the line before the sidebar/footer (first following element's line) or file end
    last = None
    anc = main
    while anc is not None and last is None:
        sib = anc.getnext()
        while sib is not None and not isinstance(sib.tag, str):
            sib = sib.getnext()
        if sib is not None and sib.sourceline:
            last = sib.sourceline - 1
        anc = anc.getparent()
    return build_sections(heads, n, last)


def py_names(path: Path) -> list[str]:
    """Title (<title> without the ' — Python 3.11.x documentation' suffix), the h1, and for 'X — Y'
    titles both parts; a leading section number ('4. ') is dropped."""
    tree = html_tree(path)
    names = []
    t = tree.findtext(".//title") or ""
    t = re.sub(r"\s*[—-]\s*Python 3\.\d+\.\d+\S* documentation\s*$", "", t.strip())
    names.append(t)
    h1 = next(html_main(tree).iter("h1"), None)
    if h1 is not None:
        names.append(heading_text(h1))
    out = set()
    for n in names:
        n = re.sub(r"^\d+(\.\d+)*\.\s*", "", n.strip())
        if not n:
            continue
        out.add(n)
        if " — " in n:
            out.update(x.strip() for x in n.split(" — ") if x.strip())
    return sorted(out)


def py_text(path: Path) -> str:
    return html_main(html_tree(path)).text_content()


def py_docs() -> list[str]:
    return sorted(p.relative_to(PYDOCS).as_posix() for p in PYDOCS.rglob("*.html")
                  if not PY_SKIP.search(p.relative_to(PYDOCS).as_posix()))


# ---------------------------------------------------------------- sampling

def allocate(sizes: dict[str, int], total: int, cap: dict[str, int] | None = None) -> dict[str, int]:
    """Square-root allocation with at least 1 per stratum (largest remainder), capped at stratum size:
    big folders get more, small folders are not drowned out."""
    import math
    w = {k: math.sqrt(v) for k, v in sizes.items() if v}
    s = sum(w.values())
    raw = {k: total * x / s for k, x in w.items()}
    alloc = {k: max(1, min(sizes[k], int(r))) for k, r in raw.items()}
    while sum(alloc.values()) < total:
        k = max((k for k in alloc if alloc[k] < sizes[k]), key=lambda k: raw[k] - alloc[k])
        alloc[k] += 1
    while sum(alloc.values()) > total:
        k = max(alloc, key=lambda k: alloc[k] - raw[k])
        alloc[k] -= 1
    return alloc


def main() -> int:
    rng = random.Random(SEED)
    rows = []

    # obsidian-hub documents
    docs = hub_docs()
    eligible = {}
    for rel, lines in docs.items():
        if rel.split("/")[0] in ("CONTRIBUTING.md", "README.md") or hub_listing(rel, lines):
            continue
        if hub_body_words(lines) >= MIN_WORDS_HUB:
            eligible[rel] = lines
    strata: dict[str, list[str]] = {}
    for rel in sorted(eligible):
        strata.setdefault(hub_stratum(rel), []).append(rel)
    alloc = allocate({k: len(v) for k, v in strata.items()}, N_HUB)
    print("obsidian-hub eligible per stratum -> sampled:", file=sys.stderr)
    hub_sample = []
    for k in sorted(strata):
        pick = rng.sample(strata[k], alloc[k])
        print(f"  {k}: {len(strata[k])} -> {alloc[k]}", file=sys.stderr)
        hub_sample += [(k, p) for p in pick]
    for k, rel in hub_sample:
        lines = eligible[rel]
        rows.append({"kind": "doc", "collection": "obsidian-hub", "doc": rel, "stratum": k,
                     "title": Path(rel).stem, "names": hub_names(rel, lines), "words": hub_body_words(lines),
                     "sections": [s for s in markdown_sections(lines) if s["path"][0] != "This note in GitHub"]})

    # python-docs documents
    py_el = {}
    for rel in py_docs():
        words = len(py_text(PYDOCS / rel).split())
        if words >= MIN_WORDS_PY:
            py_el[rel] = words
    pstrata: dict[str, list[str]] = {}
    for rel in sorted(py_el):
        pstrata.setdefault(rel.split("/")[0] if "/" in rel else "(root)", []).append(rel)
    palloc = allocate({k: len(v) for k, v in pstrata.items()}, N_PY)
    print("python-docs eligible per stratum -> sampled:", file=sys.stderr)
    for k in sorted(pstrata):
        print(f"  {k}: {len(pstrata[k])} -> {palloc[k]}", file=sys.stderr)
        for rel in rng.sample(pstrata[k], palloc[k]):
            p = PYDOCS / rel
            names = py_names(p)
            rows.append({"kind": "doc", "collection": "python-docs", "doc": rel, "stratum": k,
                         "title": names[0] if names else rel, "names": names, "words": py_el[rel],
                         "sections": html_sections(p)})

    # obsidian-hub link arcs: A -> B, both eligible (substantive, not listings), link in A's visible
    # text outside code and template lines, not an embed; one arc per source and per target;
    # sampled documents are not excluded.
    by_stem: dict[str, list[str]] = {}
    for rel in docs:
        by_stem.setdefault(Path(rel).stem.lower(), []).append(rel)
    arcs = []
    for a, lines in sorted(eligible.items()):
        seen = set()
        for i, text, code in visible_lines(lines):
            if code or TEMPLATE_LINE.match(text):
                continue
            for m in WIKILINK.finditer(text):
                if m.group(1):
                    continue
                b = resolve_link(m.group(2), by_stem)
                if b and b != a and b in eligible and b not in seen:
                    seen.add(b)
                    arcs.append({"kind": "arc", "collection": "obsidian-hub", "source": a, "target": b,
                                 "link": m.group(0), "line": i + 1})
    rng.shuffle(arcs)
    used_s, used_t, picked = set(), set(), []
    for arc in arcs:
        if arc["source"] in used_s or arc["target"] in used_t:
            continue
        used_s.add(arc["source"]); used_t.add(arc["target"])
        picked.append(arc)
        if len(picked) == N_ARCS + 10:          # 10 reserve arcs at the end
            break
    print(f"arcs: {len(arcs)} candidate links -> {len(picked)} (incl. 10 reserve)", file=sys.stderr)
    for j, arc in enumerate(picked):
        arc["position"] = j
        arc["reserve"] = j >= N_ARCS
        rows.append(arc)

    with OUT.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {OUT} ({len(rows)} rows)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
