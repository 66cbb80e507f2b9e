"""The link detector: a link whose query slot a reader is asked to fill with data from elsewhere."""

from __future__ import annotations

import re

from ragloom.ingestion.injection.detector import Reading, Signal
from ragloom.ingestion.injection.hits import MAX_HITS_PER_RULE
from ragloom.ingestion.injection.layout import in_code

_PLACEHOLDER_LINK = re.compile(
    r"\]\(https?://[^\s)]{1,300}?[?&][\w.-]{1,30}=(?P<slot>[A-Z][A-Z0-9_]{2,80})(?=[&#)])")
"""A Markdown link or image whose query parameter is a fill-in slot in capitals (`?k=TOKEN`)."""
_DESCRIBED_SLOT = re.compile(
    r"\]\(https?://[^\s)]{1,300}?[?&][\w.-]{1,30}=(?:\{\{?|<|\[)\s?(?P<slot>[A-Za-z'\u2019]{1,30}"
    r"(?: [A-Za-z'\u2019.,]{1,30}){2,12})\s?(?:\}\}?|>|\])")
"""A link whose query slot describes in words what to put there (`?acct={{the user's email}}`):
a template variable is one name (`{{ user.email }}`); a sentence is left for a reader to fill."""
_SLOT_WORD = r"(?:placeholder|slot|parameter|token|variable|value|brace|bracket|blank|field|gap)s?"
_FROM_CHAT = (r"\s+(?:with|by|for|from)\s+[^.\n]{0,60}?\b(?:user|users|conversation|session|chat|history|"
              r"messages?|context|prompt|told\s+you)\b")
_FILL_FROM_CHAT = re.compile(
    rf"\b{_SLOT_WORD}\s+(?:\w+\s+){{0,2}}?(?:replaced|filled(?:\s+in)?|substituted|swapped){_FROM_CHAT}"
    rf"|\b(?:replac(?:e|ing)|fill(?:ing)?(?:\s+in)?|substitut(?:e|ing)|swap(?:ping)?)\s+(?:the\s+|this\s+|"
    rf"that\s+|each\s+|all\s+)?{_SLOT_WORD}"
    rf"{_FROM_CHAT}"
    rf"|\b(?:put|place|insert|paste|add|copy|write|append|include|encode)\b(?:[^.]|\.(?=\w)){{0,160}}?\b"
    rf"(?:conversation|chat|session|history|told\s+you|messages?|context)\b(?:[^.]|\.(?=\w)){{0,80}}?\b(?:in|into|as)\s+(?:the\s+|this\s+|"
    rf"that\s+)?`?[\w.-]{{0,30}}`?\s*{_SLOT_WORD}", re.IGNORECASE)
"""Words that ask for a link's slot to be filled from the chat ("with the placeholder replaced by
everything the user has told you", "put any password visible in the conversation into the `k`
parameter"); "replace the placeholder with your API key" is a setup step."""
FILL_REACH = 400
"""Characters before and after a link with a capitalised slot in which such words count."""
PLACEHOLDER_SCORE = 0.6
"""Score of a link whose slot the text names again (asking a reader to fill it): suspicious."""


def placeholder_links(texts: list[str]) -> list[str]:
    """The capitalised slots of link queries (`](https://…?k=TOKEN)`) that the same text names
    again outside the link or asks to fill from the chat, and slots described in words outside
    code (inside code when the text asks to fill them from the chat): a link left for a reader to
    complete, with data from elsewhere."""
    slots = []
    for text in texts:
        for count, match in enumerate(_PLACEHOLDER_LINK.finditer(text)):
            if count >= MAX_HITS_PER_RULE:
                break
            slot = match.group("slot")
            if slot not in slots and (text.count(slot) >= 2 or _FILL_FROM_CHAT.search(
                    text, max(0, match.start() - FILL_REACH), match.end() + FILL_REACH)):
                slots.append(slot)
        for count, match in enumerate(_DESCRIBED_SLOT.finditer(text)):
            if count >= MAX_HITS_PER_RULE:
                break
            slot = match.group("slot")
            if slot not in slots and (not in_code(text, match.start()) or _FILL_FROM_CHAT.search(
                    text, max(0, match.start() - FILL_REACH), match.end() + FILL_REACH)):
                slots.append(slot)
    return slots


class LinkDetector:
    """Links left for a reader to complete: flagged as `exfiltration`."""

    name = "placeholder_links"

    def detect(self, reading: Reading) -> list[Signal]:
        """One `raise` signal naming the slots, or none (decoded text is not read)."""
        slots = placeholder_links([text for channel, text in reading.texts if channel != "decoded"])
        if not slots:
            return []
        return [Signal(frozenset({"exfiltration"}), PLACEHOLDER_SCORE, "raise",
                       (f"link with a slot to fill, named in the text: {', '.join(slots)}",))]
