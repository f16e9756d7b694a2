"""Obsidian's additions to Markdown as markdown-it rules: `[[wikilinks]]`, `![[embeds]]`, `#tags`,
`%%comments%%` and `^block-ids`.

They are parser rules, not text substitutions, so a `[[link]]` inside a code span or fence stays
code, as in Obsidian. `obsidian_markdown()` is the parser every note goes through.
"""

from __future__ import annotations

from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_inline import StateInline
from mdit_py_plugins.front_matter import front_matter_plugin

_TAG_PUNCT = "_-/"


def _wikilink(state: StateInline, silent: bool) -> bool:
    """`[[target#anchor|label]]` and `![[...]]` (an embed) on one line; `\\|` counts as `|` (tables)."""
    src, pos = state.src, state.pos
    embed = src.startswith("![[", pos)
    if not embed and not src.startswith("[[", pos):
        return False
    start = pos + (3 if embed else 2)
    end = src.find("]]", start)
    if end < 0:
        return False
    inner = src[start:end]
    if "\n" in inner or "[[" in inner or not inner.strip():
        return False
    ref, _, label = inner.replace("\\|", "|").partition("|")
    target, _, anchor = ref.partition("#")
    if not silent:
        token = state.push("wikilink", "", 0)
        token.meta = {"target": target.strip(), "anchor": anchor.strip(), "label": label.strip(), "embed": embed}
    state.pos = end + 2
    return True


def _is_tag_char(ch: str) -> bool:
    return ch.isalnum() or ch in _TAG_PUNCT or (ord(ch) > 127 and not ch.isspace() and ch.isprintable()
                                                 and ch not in "\u2018\u2019\u201c\u201d\u2026\u00a0")


def _tag(state: StateInline, silent: bool) -> bool:
    """`#tag` after a space or at the start of a line: letters, digits, '_', '-', '/', not only digits."""
    src, pos = state.src, state.pos
    if src[pos] != "#" or (pos > 0 and not src[pos - 1].isspace()):
        return False
    end = pos + 1
    while end < state.posMax and _is_tag_char(src[end]):
        end += 1
    name = src[pos + 1:end].strip("/")
    if not name or name.replace("/", "").replace("-", "").replace("_", "").isdigit():
        return False
    if not silent:
        token = state.push("tag", "", 0)
        token.content = src[pos:end]
        token.meta = {"tag": name}
    state.pos = end
    return True


def _comment(state: StateInline, silent: bool) -> bool:
    """`%%hidden%%` within a paragraph: neither text nor links (Obsidian does not render it)."""
    src, pos = state.src, state.pos
    if not src.startswith("%%", pos):
        return False
    end = src.find("%%", pos + 2)
    if end < 0 or end + 2 > state.posMax:
        return False
    if not silent:
        token = state.push("obsidian_comment", "", 0)
        token.content = src[pos + 2:end]
    state.pos = end + 2
    return True


def _block_id(state: StateInline, silent: bool) -> bool:
    """` ^block-id` at the end of a line: an Obsidian block reference target, not text."""
    src, pos = state.src, state.pos
    if src[pos] != "^" or (pos > 0 and not src[pos - 1].isspace()):
        return False
    end = pos + 1
    while end < state.posMax and (src[end].isascii() and (src[end].isalnum() or src[end] == "-")):
        end += 1
    if end == pos + 1 or (end < state.posMax and src[end] != "\n"):
        return False
    if not silent:
        state.push("block_id", "", 0)
    state.pos = end
    return True


def _comment_block(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """A `%%` comment that opens a line and closes on a later one (it may hold blank lines)."""
    pos = state.bMarks[start] + state.tShift[start]
    first = state.src[pos:state.eMarks[start]]
    if not first.startswith("%%") or "%%" in first[2:]:
        return False
    line = start + 1
    while line < end:
        if "%%" in state.src[state.bMarks[line]:state.eMarks[line]]:
            break
        line += 1
    else:
        return False  # unclosed: the text stays (Obsidian would hide the rest of the note)
    if not silent:
        token = state.push("obsidian_comment", "", 0)
        token.map = [start, line + 1]
        token.content = state.getLines(start, line + 1, state.tShift[start], False).strip().strip("%")
    state.line = line + 1
    return True


@lru_cache(maxsize=1)
def obsidian_markdown() -> MarkdownIt:
    """CommonMark + GFM tables and strikethrough + YAML front matter + Obsidian's syntax."""
    md = MarkdownIt("commonmark").enable(["table", "strikethrough"]).use(front_matter_plugin)
    md.inline.ruler.before("link", "wikilink", _wikilink)
    md.inline.ruler.before("link", "obsidian_tag", _tag)
    md.inline.ruler.before("link", "obsidian_comment", _comment)
    md.inline.ruler.before("link", "block_id", _block_id)
    md.block.ruler.before("paragraph", "obsidian_comment", _comment_block)
    # readers URL-decode hrefs themselves; percent-encoding them first is wasted work (markdown-it-py
    # has no option for it: replacing the instance's method is how its docs customise link handling)
    md.normalizeLink = _keep  # type: ignore[method-assign]
    return md


def _keep(url: str) -> str:
    return url
