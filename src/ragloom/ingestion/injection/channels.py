"""Hidden channels: every text of a document a model may read, visible or not, and what it decodes to.

The visible text loses its HTML and Markdown comments, which become hidden passages next to the
text HTML hides (`hidden_text`, from the loaders) and the free-text metadata a document declares;
each encoded run of any of them adds its decoded text (`decode.payloads`).
"""

from __future__ import annotations

import itertools
import re

from ragloom.ingestion.injection.decode import payloads
from ragloom.ingestion.injection.layout import FENCE_LINE, in_code
from ragloom.state import SourceDocument

_OWN_METADATA = frozenset(("title", "source_type", "source", "source_id", "origin", "path", "lang", "type",
                           "section", "headings", "hidden_text", "injection_signals"))
"""Metadata the loaders derive from the text or the path: not scanned twice."""
MAX_COMMENTS = 64
"""HTML comments taken out of one text as hidden passages; later ones stay in the text."""
_REFERENCE_COMMENT = re.compile(
    r"^[ \t]{0,3}\[[^\]\n]{1,40}\]:[ \t]*(?:#|<>)[ \t]+(?:\([^\n]{1,2000}\)|\"[^\n]{1,2000}\"|"
    r"'[^\n]{1,2000}')[ \t]*$", re.MULTILINE)
"""A Markdown link reference whose target is `#` or `<>` (`[//]: # (note)`): the usual way to
write a comment in Markdown, never rendered."""


def _comments(text: str) -> tuple[str, list[str]]:
    """The text with its HTML comments (`<!-- … -->` opening a line outside code fences, as
    Markdown allows; a renderer never shows them) blanked out, line breaks kept, and the
    comments apart."""
    if "<!--" not in text:
        return text, []
    pieces: list[str] = []
    comments: list[str] = []
    pos = search = counted = fences = 0
    while len(comments) < MAX_COMMENTS:
        start = text.find("<!--", search)
        end = text.find("-->", start + 4) if start >= 0 else -1
        if end < 0:
            break
        search = end + 3
        fences += len(FENCE_LINE.findall(text, counted, start))
        counted = start
        lead = start
        while lead > 0 and text[lead - 1] in " \t":
            lead -= 1
        if (lead > 0 and text[lead - 1] != "\n") or fences % 2:
            continue  # inline (quoted, "payload: <!-- … -->") or inside a code fence: shown
        comment = text[start:end + 3]
        comments.append(comment)
        pieces += [text[pos:start], "\n" * comment.count("\n")]
        pos = end + 3
    return "".join(pieces) + text[pos:], comments


def _reference_comments(text: str) -> tuple[str, list[str]]:
    """The text with its Markdown reference comments outside code taken out (each leaves its
    line empty), and the comments apart."""
    if "]:" not in text:
        return text, []
    found = [m for m in itertools.islice(_REFERENCE_COMMENT.finditer(text), MAX_COMMENTS)
             if not in_code(text, m.start())]
    for match in reversed(found):
        text = text[:match.start()] + text[match.end():]
    return text, [match.group() for match in found]


def channels(doc: SourceDocument) -> list[tuple[str, str]]:
    """(channel, text) pairs: the visible text (without its HTML and Markdown comments), each
    hidden passage (comments, text HTML hides), the free-text metadata a document declares (front matter, CSV
    columns), each decoded payload."""
    hidden = doc.metadata.get("hidden_text") or []
    visible, comments = _comments(doc.text)
    visible, references = _reference_comments(visible)
    comments += references
    texts = [("visible", visible), *(("hidden", comment) for comment in comments)]
    texts += [("hidden", str(h)) for h in (hidden if isinstance(hidden, list) else [hidden])]
    texts += [("hidden", f"{key}:\n{value}") for key, value in doc.metadata.items()
              if key not in _OWN_METADATA and isinstance(value, str) and " " in value.strip()]
    decoded = [("decoded", text) for _, raw in texts for _, text in payloads(raw)]
    return texts + decoded
