"""An HTML page read into title, plain text, sections (h1-h6) and links (`<a href>`), with lxml.

Only the page's content counts: `<main>` or `[role=main]` when present, else `<body>`, without
scripts, styles, navigation, headers, footers and Sphinx's chrome (`div.related`,
`div.sphinxsidebar`, `div.footer`, the `¶` header links). Source lines come from lxml's
`sourceline`: a section runs from its heading's line to the last line an element of it starts on.
"""

from __future__ import annotations

from lxml import etree
from lxml import html as lxml_html

from .document import Link, ParsedDocument, TextBuilder, local_link, slug

_DROP_TAGS = {"script", "style", "nav", "header", "footer", "noscript", "template", "iframe", "svg",
              "button", "select", "textarea", "form"}
_DROP_CLASSES = {"related", "sphinxsidebar", "footer"}
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_BLOCKS = {"p", "div", "section", "article", "main", "aside", "blockquote", "pre", "ul", "ol", "li",
           "dl", "dt", "dd", "table", "thead", "tbody", "tfoot", "tr", "figure", "figcaption", "hr",
           "details", "summary", "caption", "address", "fieldset", "body", "html", "center"}
_CELLS = {"td", "th"}


def _is_chrome(el) -> bool:
    if el.tag in _DROP_TAGS or el.get("role") == "navigation":
        return True
    classes = set((el.get("class") or "").split())
    return (el.tag == "div" and bool(classes & _DROP_CLASSES)) or (el.tag == "a" and "headerlink" in classes)


def _collapse(s: str) -> str:
    return " ".join(s.split())


class _Walker:
    """Walks the content element into a TextBuilder: one block per block-level element."""

    def __init__(self, builder: TextBuilder):
        self.b = builder
        self.buf: list[str] = []
        self.size = 0
        self.links: list[Link] = []
        self.first = 0
        self.last = 0
        self.pre = 0

    def _add(self, s: str, line: int) -> None:
        if not s:
            return
        if not self.pre:
            lead, tail = s[:1].isspace(), s[-1:].isspace()
            s = _collapse(s)
            if lead and self.size and not self.buf[-1].endswith((" ", "\n")):
                s = " " + s
            if tail and s:
                s += " "
            if not s or (s == " " and (not self.size or self.buf[-1].endswith((" ", "\n")))):
                return
        if not self.size:
            self.first = line
        self.last = max(self.last, line + (s.count("\n") if self.pre else 0))
        self.buf.append(s)
        self.size += len(s)

    def flush(self) -> None:
        if self.buf or self.links:
            text = "".join(self.buf)
            line = self.first or self.last or (self.links[0].line if self.links else 1)
            self.b.block(text, line, max(self.last, line), self.links)
        self.buf, self.size, self.links, self.first, self.last = [], 0, [], 0, 0

    def walk(self, el) -> None:
        line = el.sourceline or self.last or 1
        tag = el.tag if isinstance(el.tag, str) else None
        if tag is None or _is_chrome(el):
            self._add(el.tail or "", line)
            return
        tag = tag.lower()
        if tag in _HEADINGS:
            self.flush()
            title = _collapse(el.text_content())
            anchor = el.get("id") or ""
            parent = el.getparent()
            if not anchor and parent is not None and parent.tag == "section" and parent.get("id"):
                anchor = parent.get("id")
            self.b.heading(_HEADINGS[tag], title, anchor or slug(title), line)
            self._add(el.tail or "", line)
            return
        block = tag in _BLOCKS
        if block:
            self.flush()
        if tag == "pre":
            self.pre += 1
        if tag == "br" and self.size:
            if not self.pre and self.buf[-1].endswith(" "):
                self.buf[-1] = self.buf[-1][:-1]
                self.size -= 1
            self.buf.append("\n")
            self.size += 1
        start = self.size
        self._add(el.text or "", line)
        for child in el:
            self.walk(child)
        if tag in _CELLS and self.size and not self.buf[-1].endswith(" | "):
            self._add(" | ", line)
        if tag == "a" and el.get("href") is not None:
            ref = local_link(el.get("href"))
            if ref:
                self.links.append(Link(ref[0], ref[1], "href", line, start, self.size))
        if tag == "pre":
            self.pre -= 1
        if block:
            if tag == "tr" and self.buf and self.buf[-1] == " | ":
                self.buf.pop()
                self.size -= 3
            self.flush()
        self._add(el.tail or "", line)


def _content(root):
    found = root.xpath("//main | //*[@role='main']")
    if found:
        return found[0]
    body = root.find("body")
    return body if body is not None else root


def parse_html(data: bytes, stem: str) -> ParsedDocument:
    """Read one HTML page (UTF-8 bytes) into a ParsedDocument; never raises on bad input."""
    issues: list[str] = []
    builder = TextBuilder()
    title = ""
    try:
        root = lxml_html.document_fromstring(data, parser=lxml_html.HTMLParser(encoding="utf-8"))
    except (etree.LxmlError, ValueError) as exc:
        if data.strip():
            issues.append(f"cannot parse the HTML ({exc})")
        root = None
    if root is not None:
        node = root.find(".//title")
        if node is not None:
            title = _collapse(node.text_content())
        for el in [el for el in root.iter() if isinstance(el.tag, str) and _is_chrome(el)]:
            if el.getparent() is not None:
                el.drop_tree()
        main = _content(root)
        walker = _Walker(builder)
        walker.walk(main)
        walker.flush()
        if not title:
            h1 = main.find(".//h1")
            title = _collapse(h1.text_content()) if h1 is not None else ""
    text, sections, links = builder.finish()
    return ParsedDocument(title or stem, text, sections, links, issues=issues)
