"""Text utilities shared by the query nodes: overlap tokens, token estimates, clipping, markers."""

from __future__ import annotations

import functools
import math
import re

from ragloom.sentences import split_sentences

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)
_MARKER = re.compile(r"(\s*)\[(\s*\d+\s*(?:[,;]\s*\d+\s*)*)\]")


@functools.lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    """English stopwords for overlap scoring: bm25s's NLTK list (it has the question words)."""
    from bm25s.stopwords import STOPWORDS_EN_PLUS

    return frozenset(STOPWORDS_EN_PLUS)


def words(text: str) -> list[str]:
    """Lowercased word tokens, punctuation dropped."""
    return [w.replace("’", "'") for w in _WORD.findall(text.lower())]


def content_words(text: str) -> list[str]:
    """Words that carry content: no stopwords, no single letters (digits are kept)."""
    stop = stopwords()
    return [w for w in words(text) if w not in stop and (len(w) > 1 or w.isdigit())]


def tokenize(text: str) -> list[str]:
    """Stemmed content tokens for overlap scoring."""
    from ragloom.stores.bm25 import stemmer

    terms = content_words(text)
    return list(stemmer().stemWords(terms)) if terms else []


def estimate_tokens(text: str, chars_per_token: float) -> int:
    """Approximate token count: characters divided by chars_per_token, rounded up."""
    return math.ceil(len(text) / chars_per_token)


CLIP_LOOKAHEAD = 80
"""Characters past the limit that `clip` reads to decide whether a sentence ends at a cut."""


def clip(text: str, limit: int) -> str:
    """Longest prefix within limit chars, ending at a sentence, else a word boundary, else hard."""
    if len(text) <= limit:
        return text
    if limit <= 0:
        return ""
    window = text[: limit + CLIP_LOOKAHEAD]
    ends = [s.end for s in split_sentences(window) if s.end <= limit]
    if ends:
        return text[: ends[-1]]
    space = text.rfind(" ", 0, limit + 1)
    return text[: space if space > 0 else limit].rstrip()


def marker_numbers(group: str) -> list[int]:
    """The numbers inside one marker group such as '1, 3'."""
    return [int(n) for n in re.findall(r"\d+", group)]


def markers_in(text: str) -> list[int]:
    """Every `[n]` / `[n, m]` marker number in text, in order of appearance."""
    return [n for m in _MARKER.finditer(text) for n in marker_numbers(m.group(2))]


def strip_markers(text: str) -> str:
    """Text with every `[n]` marker removed."""
    return _MARKER.sub("", text).strip()


def filter_markers(text: str, valid: range) -> tuple[str, list[int]]:
    """Remove marker numbers outside valid; return the new text and the removed numbers."""
    removed: list[int] = []

    def _keep(match: re.Match[str]) -> str:
        numbers = marker_numbers(match.group(2))
        kept = [n for n in numbers if n in valid]
        removed.extend(n for n in numbers if n not in valid)
        if len(kept) == len(numbers):
            return match.group(0)
        return f"{match.group(1)}[{', '.join(map(str, kept))}]" if kept else ""

    return _MARKER.sub(_keep, text), removed
