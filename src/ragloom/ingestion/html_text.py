"""HTML to text in one linear walk: visible text with Markdown headings, inline code in backticks and
`<q>` quotations in quotes, and the hidden text apart.

The page is parsed once by BeautifulSoup and walked once with an explicit stack (no recursion, no
tree edits), so the cost grows with the size of the page, not with its depth; a page nested deeper
than the limit is refused with an error that names it. Text a reader does not see — hidden by
attribute or inline style (display, visibility, tiny fonts, zero opacity, white or transparent text
on no background, off-screen positioning, clipping), by a class or id that a `<style>` block hides,
or written as a comment — is returned apart as `hidden_text`, for the injection scan, together
with the text of attributes a reader does not see on the page (`alt`, `title`, `aria-label`…) and
of `<meta>` tags (description, keywords…) and of data `<script>` blocks (JSON, plain text).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bs4 import BeautifulSoup, CData, Comment, NavigableString, Tag

from ragloom.errors import LoadError

DEFAULT_MAX_DEPTH = 5000
DROPPED_TAGS = frozenset(
    ("script", "style", "noscript", "template", "head", "svg", "iframe", "object", "canvas")
)
BLOCK_TAGS = frozenset(
    (
        "p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "ul", "ol",
        "li", "table", "pre", "blockquote", "dl", "dt", "dd", "figure", "figcaption", "form",
        "fieldset", "address", "details", "summary", "caption", "hr",
    )
)
INLINE_MARKS = {"code": "`", "kbd": "`", "samp": "`", "q": '"'}
"""Inline elements written as Markdown would: code in backticks, a `<q>` quotation in quotes."""
_HEADING_TAG = re.compile(r"h([1-6])")
_WHITESPACE = re.compile(r"\s+")
_DECLARATION = re.compile(r"([a-z-]{1,40})\s*:\s*([^;]{0,200})", re.IGNORECASE)
_LENGTH = re.compile(r"(-?\d{0,6}(?:\.\d{1,6})?)\s*(px|pt|em|rem|%|vw|vh)?", re.IGNORECASE)
_WHITE = re.compile(
    r"^(?:white|#fff(?:f{3})?|#fefefe|rgba?\(\s*25[0-5]\s*,\s*25[0-5]\s*,\s*25[0-5]\s*(?:,\s*[\d.]+\s*)?\))$"
)
_NO_COLOUR = re.compile(r"^(?:transparent|rgba\([^)]{0,40},\s*0(?:\.0+)?\s*\)|#[0-9a-f]{6}00)$")
_OFFSET_PROPS = frozenset(("left", "top", "right", "bottom", "text-indent", "margin-left", "margin-top"))
_SIZE_PROPS = frozenset(("height", "width", "max-height", "max-width"))
_SIMPLE_SELECTOR = re.compile(r"^(?:[a-z][a-z0-9]{0,10})?([.#])([\w-]{1,80})$", re.IGNORECASE)
_CLIP = re.compile(r"rect\(\s*0|inset\(\s*(?:50%|100%)", re.IGNORECASE)
TEXT_ATTRIBUTES = ("alt", "title", "aria-label", "aria-description", "placeholder")
"""Attributes whose text software reads but the page does not show."""
_DATA_SCRIPT = re.compile(r"^(?:text/plain|text/markdown|text/x-[\w.-]{1,40}|application/(?:ld\+)?json)$")
"""`<script>` types that hold data (JSON, plain text, templates) rather than code to run."""


def _length(value: str) -> tuple[float, str] | None:
    match = _LENGTH.match(value.strip())
    if not match or not match.group(1) or match.group(1) in ("-", "."):
        return None
    return float(match.group(1)), (match.group(2) or "px").lower()


def _tiny_font(value: str) -> bool:
    size = _length(value)
    if size is None:
        return False
    number, unit = size
    limit = {"px": 1.0, "pt": 1.0, "em": 0.1, "rem": 0.1, "%": 10.0}.get(unit, 0.5)
    return number <= limit


@dataclass(frozen=True)
class StyleFlags:
    """What one inline style or CSS rule does to visibility."""

    hides: bool = False
    white_text: bool = False
    background: bool = False


def style_flags(style: str) -> StyleFlags:
    """Read the declarations of a style that hide text, colour it white, or paint a background."""
    decls = {m.group(1).lower(): m.group(2).strip().lower() for m in _DECLARATION.finditer(style)}
    hides = (
        decls.get("display") == "none"
        or decls.get("visibility") in ("hidden", "collapse")
        or _tiny_font(decls.get("font-size", "x"))
        or (_length(decls.get("opacity", "x")) or (1.0, ""))[0] <= 0.05
        or bool(_NO_COLOUR.match(decls.get("color", "")))
        or any((_length(decls.get(p, "x")) or (0.0, ""))[0] <= -500 for p in _OFFSET_PROPS)
        or bool(_CLIP.search(decls.get("clip", "") + decls.get("clip-path", "")))
        or decls.get("transform", "").replace(" ", "") in ("scale(0)", "scale(0,0)")
        or (
            any((_length(decls.get(p, "x")) or (1.0, ""))[0] <= 0 for p in _SIZE_PROPS)
            and decls.get("overflow") == "hidden"
        )
    )
    background = any(
        not _WHITE.match(value) and not _NO_COLOUR.match(value) and value not in ("none", "")
        for key, value in decls.items()
        if key in ("background", "background-color")
    )
    return StyleFlags(hides, bool(_WHITE.match(decls.get("color", ""))), background)


def _hiding_selectors(soup: BeautifulSoup) -> tuple[set[str], set[str]]:
    """Classes and ids that `<style>` blocks hide or colour white (simple selectors only)."""
    classes: set[str] = set()
    ids: set[str] = set()
    for style in soup.find_all("style"):
        for block in style.get_text().split("}"):
            selectors, _, body = block.rpartition("{")
            flags = style_flags(body)
            if not (flags.hides or (flags.white_text and not flags.background)):
                continue
            for selector in selectors.split(","):
                match = _SIMPLE_SELECTOR.match(selector.strip())
                if match:
                    (classes if match.group(1) == "." else ids).add(match.group(2))
    return classes, ids


@dataclass
class _Capture:
    """Strings gathered for a heading, a table row or a cell instead of the page text."""

    owner: Tag
    kind: str
    parts: list[str] = field(default_factory=list)
    cells: list[str] = field(default_factory=list)

    def joined(self) -> str:
        return " ".join(p for p in (_WHITESPACE.sub(" ", s).strip() for s in self.parts) if p)


@dataclass
class _Walk:
    """State of one walk over a page: the text written so far and what is being captured."""

    classes: set[str]
    ids: set[str]
    out: list[str] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)
    captures: list[_Capture] = field(default_factory=list)
    pre_depth: int = 0

    def is_hidden(self, tag: Tag, on_background: bool) -> tuple[bool, bool]:
        """Whether tag is hidden, and whether its children sit on a painted background."""
        if tag.has_attr("hidden") or str(tag.get("aria-hidden", "")).lower() == "true":
            return True, on_background
        names: Sequence[str] = tag.get("class") or []
        if any(name in self.classes for name in names) or tag.get("id") in self.ids:
            return True, on_background
        flags = style_flags(str(tag.get("style", "")))
        background = on_background or flags.background or tag.has_attr("bgcolor")
        font_colour = str(tag.get("color", "")).strip().lower() if tag.name == "font" else ""
        white = flags.white_text or bool(_WHITE.match(font_colour))
        return flags.hides or (white and not background), background

    def text(self, value: str) -> None:
        if self.captures:
            self.captures[-1].parts.append(value)
        else:
            self.out.append(value if self.pre_depth else _WHITESPACE.sub(" ", value))

    def enter(self, tag: Tag) -> None:
        name = tag.name
        top = self.captures[-1] if self.captures else None
        heading = _HEADING_TAG.fullmatch(name)
        if top is None and heading:
            self.captures.append(_Capture(tag, "#" * int(heading.group(1))))
        elif top is None and name == "tr":
            self.captures.append(_Capture(tag, "row"))
        elif top is not None and top.kind == "row" and name in ("td", "th"):
            self.captures.append(_Capture(tag, "cell"))
        elif top is None and name == "br":
            self.out.append("\n")
        elif top is None and name in BLOCK_TAGS:
            self.out.append("\n\n" if name == "p" else "\n")
            if name == "li":
                self.out.append("- ")
        if name == "pre":
            self.pre_depth += 1
        elif name in INLINE_MARKS and not self.pre_depth:
            self.text(INLINE_MARKS[name])

    def leave(self, tag: Tag) -> None:
        top = self.captures[-1] if self.captures else None
        if tag.name == "pre":
            self.pre_depth -= 1
        elif tag.name in INLINE_MARKS and not self.pre_depth:
            self.text(INLINE_MARKS[tag.name])
        if top is None:
            if tag.name in BLOCK_TAGS:
                self.out.append("\n\n" if tag.name == "p" else "\n")
            return
        if top.owner is not tag:
            return
        self.captures.pop()
        if top.kind == "cell":
            self.captures[-1].cells.append(top.joined())
        elif top.kind == "row":
            self.out.append(f"\n{' | '.join(top.cells)}\n")
        elif top.joined():
            self.out.append(f"\n\n{top.kind} {top.joined()}\n\n")


def _attribute_texts(tag: Tag) -> list[str]:
    """The text of tag's attributes that software reads and the page does not show (alt, title,
    labels, placeholders), and the value of a hidden form field when it holds words."""
    names = [name for name in TEXT_ATTRIBUTES if tag.get(name)]
    if str(tag.get("type", "")).lower() == "hidden" and " " in str(tag.get("value", "")).strip():
        names.append("value")
    texts = [_WHITESPACE.sub(" ", str(tag.get(name))).strip() for name in names]
    return [text for text in texts if text]


def _render(root: Tag, walk: _Walk, max_depth: int, where: str | None) -> str:
    """Walk root depth-first with an explicit stack, skipping dropped and hidden subtrees."""
    stack: list[tuple[Any, int, bool, bool]] = [
        (child, 1, False, False) for child in reversed(root.contents)
    ]
    while stack:
        node, depth, on_background, leaving = stack.pop()
        if leaving:
            walk.leave(node)
        elif isinstance(node, Comment):
            if node.strip():
                walk.hidden.append(_WHITESPACE.sub(" ", str(node)).strip())
        elif type(node) in (NavigableString, CData):
            walk.text(str(node))
        elif isinstance(node, Tag) and node.name not in DROPPED_TAGS:
            if depth > max_depth:
                raise LoadError(
                    f"HTML nesting deeper than {max_depth} levels (at a <{node.name}> element)",
                    where=where,
                    hint="flatten the page, or raise ingest.html_max_depth if it is legitimate",
                )
            hidden, background = walk.is_hidden(node, on_background)
            if hidden:
                text = node.get_text(" ", strip=True)
                if text:
                    walk.hidden.append(text)
                continue
            walk.hidden.extend(_attribute_texts(node))
            walk.enter(node)
            stack.append((node, depth, on_background, True))
            stack.extend((child, depth + 1, background, False) for child in reversed(node.contents))
    return "".join(walk.out)


def _tidy(text: str) -> str:
    lines = [re.sub(r"[ \t]{2,}", " ", line).strip() for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def html_to_text(
    html: str, *, max_depth: int = DEFAULT_MAX_DEPTH, where: str | None = None
) -> tuple[str, dict[str, Any]]:
    """Visible text of an HTML page (headings as Markdown) and its title, lang, hidden text and
    `<meta>` tags (name, property or http-equiv → content, names in lower case)."""
    soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else None
    root = soup.find("html")
    lang = str(root.get("lang")) if isinstance(root, Tag) and root.get("lang") else None
    classes, ids = _hiding_selectors(soup)
    walk = _Walk(classes, ids)
    body = soup.find("body")
    text = _tidy(_render(body if isinstance(body, Tag) else soup, walk, max_depth, where))
    meta = {str(tag.get("name") or tag.get("property") or tag.get("http-equiv")).strip().lower():
            str(tag.get("content")).strip()
            for tag in soup.find_all("meta")
            if isinstance(tag, Tag) and tag.get("content")
            and (tag.get("name") or tag.get("property") or tag.get("http-equiv"))}
    data = [_WHITESPACE.sub(" ", tag.get_text()).strip() for tag in soup.find_all("script")
            if isinstance(tag, Tag) and _DATA_SCRIPT.match(str(tag.get("type", "")).strip().lower())]
    hidden = walk.hidden + [value for value in meta.values() if " " in value]
    hidden += [block for block in data if " " in block]
    return text, {"title": title or None, "lang": lang, "hidden_text": hidden, "meta": meta}
