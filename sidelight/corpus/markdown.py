"""A Markdown note (Obsidian flavour) read into title, aliases, plain text, sections and links.

markdown-it-py parses the note (with `mdsyntax`'s wikilink, tag and comment rules) and PyYAML its
front matter; the token stream is walked once, block by block, into a `TextBuilder`. Text keeps
what a reader sees: link labels, code as text, `[[Note|label]]` as `label`; images, embeds, HTML
tags and comments are not text.
"""

from __future__ import annotations

import datetime as _dt
import math

import yaml
from lxml import etree
from lxml import html as lxml_html
from markdown_it.token import Token

from .document import Link, ParsedDocument, TextBuilder, local_link, slug
from .mdsyntax import obsidian_markdown


MAX_PROPERTY_NODES = 10_000


def json_safe(value, budget: list[int] | None = None):
    """A YAML value as JSON: dates as ISO strings, non-finite floats and other objects as str.

    Raises ValueError past `MAX_PROPERTY_NODES` values (YAML aliases can make a small front
    matter expand without end: `a: &x [*x]`)."""
    budget = [MAX_PROPERTY_NODES] if budget is None else budget
    budget[0] -= 1
    if budget[0] < 0:
        raise ValueError(f"more than {MAX_PROPERTY_NODES} values")
    if isinstance(value, dict):
        return {str(k): json_safe(v, budget) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [json_safe(v, budget) for v in value]
    if isinstance(value, (_dt.date, _dt.datetime, _dt.time)):
        return value.isoformat()
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    return str(value)


def string_list(value) -> list[str]:
    """A property that is a list of strings, one string, or a comma-separated string, as a list."""
    if value is None:
        return []
    items = value.split(",") if isinstance(value, str) else value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if item is None or isinstance(item, (dict, list)):
            continue
        s = str(item).strip()
        if s and s not in out:
            out.append(s)
    return out


def _load_yaml(content: str):
    """`yaml.safe_load`, through libyaml when PyYAML has it (5x faster); a YAML error is raised by
    the pure-Python loader, so its message is the same on every machine."""
    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:
        try:
            return yaml.load(content, Loader=fast)
        except yaml.YAMLError:
            pass
    return yaml.safe_load(content)


def _front_matter(content: str, issues: list[str]) -> dict:
    try:
        data = _load_yaml(content)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (front matter line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        issues.append(f"front matter is not valid YAML{where}: {problem}; properties ignored")
        return {}
    except (ValueError, RecursionError) as exc:  # e.g. an out-of-range date
        issues.append(f"front matter is not valid YAML: {exc}; properties ignored")
        return {}
    if data is None:
        return {}
    if not isinstance(data, dict):
        issues.append(f"front matter is a YAML {type(data).__name__}, not a mapping; properties ignored")
        return {}
    try:
        return json_safe(data)
    except (ValueError, RecursionError) as exc:
        issues.append(f"front matter is too large ({exc or 'nested too deep'}); properties ignored")
        return {}


def _html_block(fragment: str) -> tuple[str, list[tuple[int, str]]]:
    """The text of a raw HTML block (tags and comments dropped), and its comments as
    (line within the block from 0, comment text)."""
    if not fragment.strip():
        return "", []
    try:
        root = lxml_html.fragment_fromstring(fragment, create_parent="div")
    except (etree.ParserError, ValueError):
        return "", []
    # libxml2 gives a comment the line it ends on
    comments = [(max((c.sourceline or 1) - 1 - (c.text or "").count("\n"), 0), c.text or "")
                for c in root.iter(etree.Comment)]
    for bad in root.xpath("//script|//style"):
        bad.drop_tree()
    etree.strip_elements(root, etree.Comment, with_tail=False)
    return "\n".join(line.strip() for line in root.text_content().splitlines() if line.strip()), comments


class _Inline:
    """Renders an inline token's children to plain text, collecting links and tags."""

    def __init__(self, tags: list[str], hidden_links: bool = False):
        self.tags = tags
        self.hidden_links = hidden_links

    def hidden(self, content: str, first_line: int, at: int) -> list[Link]:
        """With `hidden_links`, the links of hidden text (a comment), placed at offset `at`."""
        if not self.hidden_links or "[" not in content:
            return []
        found = []
        for t in obsidian_markdown().parse(content):
            if t.type == "inline":
                found += _Inline([], True).render(t, first_line + (t.map[0] if t.map else 0))[1]
        for ln in found:
            ln.start = ln.end = at
        return found

    def render(self, token: Token, first_line: int) -> tuple[str, list[Link]]:
        """(plain text, links placed in it) of one inline token whose first line is `first_line`."""
        out: list[str] = []
        links: list[Link] = []
        line = first_line
        size = 0
        open_link: list[Link | None] = []
        for child in token.children or []:
            kind = child.type
            piece = ""
            if kind in ("softbreak", "hardbreak"):
                piece = "\n"
                line += 1
            elif kind in ("text", "text_special", "code_inline"):
                piece = child.content
            elif kind == "tag":
                piece = child.content
                self.tags.append(child.meta["tag"])
            elif kind == "wikilink":
                m = child.meta
                if m["embed"]:
                    links.append(Link(m["target"], m["anchor"], "embed", line, size, size))
                elif m["target"]:
                    piece = m["label"] or " > ".join([m["target"]] + [a for a in m["anchor"].split("#") if a and not a.startswith("^")])
                    links.append(Link(m["target"], m["anchor"], "wikilink", line, size, size + len(piece)))
                else:  # [[#Heading]]: a place in this note
                    piece = m["label"] or m["anchor"].lstrip("#^")
            elif kind == "link_open":
                ref = local_link(str(child.attrs.get("href", "")))
                link = Link(ref[0], ref[1], "markdown", line, size, size) if ref else None
                open_link.append(link)
            elif kind == "link_close":
                link = open_link.pop() if open_link else None
                if link is not None:
                    link.end = size
                    links.append(link)
            elif kind == "obsidian_comment":
                links += self.hidden(child.content, line, size)
            elif kind == "block_id" and out:  # drop the space before it
                trimmed = out[-1].rstrip(" \t")
                size -= len(out[-1]) - len(trimmed)
                out[-1] = trimmed
            elif kind == "image":
                ref = local_link(str(child.attrs.get("src", "")))
                if ref:
                    links.append(Link(ref[0], ref[1], "embed", line, size, size))
            if piece:
                out.append(piece)
                size += len(piece)
        return "".join(out), links


def _render_table(tokens: list[Token], i: int, inline: _Inline) -> tuple[str, list[Link], int]:
    """Rows of a table as lines, cells joined by ' | '; returns the index after table_close."""
    rows: list[str] = []
    links: list[Link] = []
    cells: list[str] = []
    offset = 0
    while i < len(tokens) and tokens[i].type != "table_close":
        t = tokens[i]
        if t.type == "tr_open":
            cells = []
        elif t.type == "inline":
            row_line = (t.map[0] + 1) if t.map else 1
            text, cell_links = inline.render(t, row_line)
            shift = offset + sum(len(c) + 3 for c in cells)
            for ln in cell_links:
                ln.start += shift
                ln.end += shift
            links.extend(cell_links)
            cells.append(text.replace("\n", " "))
        elif t.type == "tr_close":
            row = " | ".join(cells)
            rows.append(row)
            offset += len(row) + 1
        i += 1
    return "\n".join(rows), links, i + 1


def parse_markdown(source: str, stem: str, hidden_links: bool = False) -> ParsedDocument:
    """Read one note's text (already decoded) into a ParsedDocument; never raises on bad input.

    `hidden_links`: also list the links inside comments (`%%...%%`, `<!--...-->`), which Obsidian's
    graph counts but a reader does not see; their context is the sentence around the comment."""
    issues: list[str] = []
    tags: list[str] = []
    inline = _Inline(tags, hidden_links)
    builder = TextBuilder()
    front: dict = {}
    tokens = obsidian_markdown().parse(source)
    i = 0
    while i < len(tokens):
        t = tokens[i]
        first = t.map[0] + 1 if t.map else 1
        last = t.map[1] if t.map else first
        if t.type == "front_matter":
            front = _front_matter(t.content, issues)
        elif t.type == "heading_open" and t.level == 0:
            text, links = inline.render(tokens[i + 1], first)
            title = " ".join(text.split())
            builder.heading(int(t.tag[1]), title, slug(title), first, last, links)
            i += 3
            continue
        elif t.type == "inline":
            text, links = inline.render(t, first)
            builder.block(text, first, last, links)
        elif t.type in ("fence", "code_block"):
            builder.block(t.content, first, last)
        elif t.type == "html_block":
            text, comments = _html_block(t.content)
            hidden = [ln for offset, c in comments for ln in inline.hidden(c, first + offset, 0)]
            builder.block(text, first, last, hidden)
        elif t.type == "obsidian_comment":
            builder.block("", first, last, inline.hidden(t.content, first, 0))
        elif t.type == "table_open":
            text, links, i = _render_table(tokens, i, inline)
            builder.block(text, first, last, links)
            continue
        i += 1
    text, sections, doc_links = builder.finish()
    raw_title = front.get("title")
    title = raw_title.strip() if isinstance(raw_title, str) and raw_title.strip() else stem
    aliases = tuple(string_list(front.get("aliases")))
    for tag in string_list(front.get("tags")):
        tags.extend(part.lstrip("#") for part in tag.split())
    known = {"aliases", "tags"} | ({"title"} if isinstance(front.get("title"), str) else set())
    properties = {k: v for k, v in front.items() if k not in known}
    return ParsedDocument(title, text, sections, doc_links, aliases, sorted({t for t in tags if t}), properties, issues)
