"""The one sentence splitter: its three rules and the offsets they all keep."""

from __future__ import annotations

import pytest

from ragloom.sentences import SentenceRule, split_sentences

TEXT = ("Dr. Smith wrote e.g. this [1]. then more! \"Quoted.\" Next line\nwraps here.\n\n"
        "- item one\n# Heading\nlast")


@pytest.mark.parametrize("rule", ["prose", "chunk", "lines"])
def test_every_rule_keeps_exact_trimmed_offsets(rule: SentenceRule) -> None:
    sentences = split_sentences(TEXT, rule=rule)
    assert sentences and all(TEXT[s.start:s.end] == s.text == s.text.strip() for s in sentences)
    assert [s.start for s in sentences] == sorted(s.start for s in sentences)


def test_the_rules_differ_where_their_callers_need_them_to() -> None:
    assert [s.text for s in split_sentences(TEXT)] == [
        "Dr. Smith wrote e.g. this [1].", "then more!", "\"Quoted.\"", "Next line\nwraps here.",
        "- item one", "# Heading\nlast"]
    assert [s.text for s in split_sentences(TEXT, rule="chunk")] == [
        "Dr.", "Smith wrote e.g. this [1]. then more!", "\"Quoted.\"", "Next line\nwraps here.",
        "- item one", "# Heading\nlast"]
    assert [s.text for s in split_sentences(TEXT, rule="lines")] == [
        "Dr.", "Smith wrote e.g.", "this [1].", "then more!", "\"Quoted.\" Next line", "wraps here.",
        "- item one", "# Heading", "last"]


def test_nothing_to_split_gives_no_sentences() -> None:
    assert split_sentences("") == [] and split_sentences(" \n\t", rule="chunk") == []
