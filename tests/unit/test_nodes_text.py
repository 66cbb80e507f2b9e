"""Shared text utilities: sentences with offsets, overlap tokens, markers, token estimates."""

from __future__ import annotations

import pytest

from ragloom.nodes.text import (
    clip,
    content_words,
    estimate_tokens,
    filter_markers,
    markers_in,
    strip_markers,
    tokenize,
)
from ragloom.sentences import split_sentences


def test_sentences_keep_exact_offsets_and_trailing_markers() -> None:
    text = "Paris is the capital [1]. It has e.g. museums. Dr. Smith said 3.14 is pi! [2] Next?"
    sentences = split_sentences(text)
    assert [s.text for s in sentences] == [
        "Paris is the capital [1].",
        "It has e.g. museums.",
        "Dr. Smith said 3.14 is pi! [2]",
        "Next?",
    ]
    assert all(text[s.start : s.end] == s.text for s in sentences)


def test_sentences_split_on_paragraphs_and_bullets() -> None:
    text = "Intro line\n- first item\n- second item\n\nLast paragraph"
    assert [s.text for s in split_sentences(text)] == [
        "Intro line",
        "- first item",
        "- second item",
        "Last paragraph",
    ]


def test_tokenize_drops_stopwords_and_stems() -> None:
    assert tokenize("The running passages of Python 3 programs") == [
        "run",
        "passag",
        "python",
        "3",
        "program",
    ]
    assert content_words("What is the capital of France?") == ["capital", "france"]


@pytest.mark.parametrize(("text", "expected"), [("", 0), ("abcd", 1), ("abcde", 2)])
def test_estimate_tokens(text: str, expected: int) -> None:
    assert estimate_tokens(text, 4.0) == expected


def test_markers_parse_filter_and_strip() -> None:
    text = "A [1]. B [2, 7]. C [9]."
    assert markers_in(text) == [1, 2, 7, 9]
    cleaned, removed = filter_markers(text, range(1, 3))
    assert cleaned == "A [1]. B [2]. C."
    assert removed == [7, 9]
    assert strip_markers("A claim [1].") == "A claim."


def test_clip_prefers_sentence_then_word_boundaries() -> None:
    assert clip("One two. Three four five.", 12) == "One two."
    assert clip("alpha beta gamma", 12) == "alpha beta"
    assert clip("short", 10) == "short"


def test_a_cited_sentence_ends_even_before_a_lowercase_word() -> None:
    text = "It runs for 7 days [1]. model: Lumen Max; price_eur: 529 [2]. e.g. not here."
    assert [s.text for s in split_sentences(text)] == [
        "It runs for 7 days [1].", "model: Lumen Max; price_eur: 529 [2].", "e.g. not here."]
