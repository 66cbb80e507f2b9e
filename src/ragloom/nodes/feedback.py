"""Pseudo-relevance feedback: the terms that the best passages share and the question lacks."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ragloom.nodes.text import content_words, tokenize


def feedback_terms(question: str, texts: Iterable[str], n: int) -> list[str]:
    """Up to n words, most frequent across texts first (counted once per text), that are no
    question term, number or one-letter word; each stem once, in its first surface form."""
    asked = set(tokenize(question))
    counts: Counter[str] = Counter()
    surface: dict[str, str] = {}
    for text in texts:
        stems = {stem: word for word in content_words(text) for stem in tokenize(word)}
        for stem, word in stems.items():
            if stem not in asked and not word.isdigit():
                surface.setdefault(stem, word)
                counts[stem] += 1
    return [surface[stem] for stem, _ in counts.most_common(n)]
