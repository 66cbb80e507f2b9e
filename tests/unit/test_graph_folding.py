"""Folding idle stages into the next graph node: which stages fold and how updates merge."""

from __future__ import annotations

from typing import Any

import pytest

from ragloom.graphs.retrieval import REDUCED_KEYS, idle, in_sequence
from ragloom.settings import load_settings


def test_reduced_keys_are_the_reducer_annotated_state_fields() -> None:
    assert REDUCED_KEYS == {"trace", "verdicts"}


@pytest.mark.parametrize(("stage", "overrides", "expected"), [
    ("transform", {}, True),
    ("transform", {"transform": {"name": "multi-query"}}, False),
    ("fuse", {}, False),  # balanced scores sibling evidence
    ("fuse", {"retrieval": {"sibling_weight": 0}}, True),
    ("fuse", {"retrieval": {"sibling_weight": 0, "mmr": True}}, False),
    ("fuse", {"retrieval": {"sibling_weight": 0}, "transform": {"name": "rag-fusion"}}, False),
    ("rerank", {}, True),
    ("rerank", {"rerank": {"name": "llm"}}, False),
    ("retrieve", {}, False),
    ("groundedness", {}, True),
    ("groundedness", {"groundedness": {"enabled": True}}, False),
    ("generate", {}, False),
])
def test_idle_follows_the_settings(stage: str, overrides: dict[str, Any], expected: bool) -> None:
    assert idle(stage, load_settings("balanced", **overrides)) is expected


def test_in_sequence_feeds_updates_forward_and_appends_reduced_keys() -> None:
    seen: list[Any] = []

    def first(state: dict[str, Any]) -> dict[str, Any]:
        return {"probes": ["a"], "trace": ["first"]}

    def second(state: dict[str, Any]) -> dict[str, Any]:
        seen.append((state["probes"], list(state["trace"])))
        return {"probes": ["b"], "trace": ["second"], "verdicts": ["v"]}

    update = in_sequence([first, second])({"question": "q", "trace": ["before"]})
    assert seen == [(["a"], ["before", "first"])]
    assert update == {"probes": ["b"], "trace": ["first", "second"], "verdicts": ["v"]}
