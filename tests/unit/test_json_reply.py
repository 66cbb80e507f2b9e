"""The one tolerant parser of JSON in chat replies (`providers.chat.parse_json_reply`)."""

from __future__ import annotations

from typing import Any

import pytest

from ragloom.providers.chat import parse_json_list_reply, parse_json_reply


@pytest.mark.parametrize(("reply", "expected"), [
    ('{"a": 1}', {"a": 1}),
    ('```json\n{"a": 1}\n```', {"a": 1}),
    ('Sure! {"a": 1} Hope this helps.', {"a": 1}),
    ('{"verdicts": [1, 0]} and a stray } brace', {"verdicts": [1, 0]}),
    ('{"grounded": true, "score": 0.9', {"grounded": True, "score": 0.9}),  # cut off
    ('Ranking: [3, 1, 2]', [3, 1, 2]),
    ("3 > 1 > 2", None),
    ("no JSON here", None),
    ("", None),
])
def test_parse_json_reply_tolerates_fences_prose_and_truncation(reply: str, expected: Any) -> None:
    assert parse_json_reply(reply) == expected


def test_parse_json_reply_of_one_kind_skips_the_other() -> None:
    assert parse_json_reply('[1] then {"a": 2}', dict) == {"a": 2}
    assert parse_json_reply('{"a": [1, 2]}', list) == [1, 2]
    assert parse_json_reply("[1, 2]", dict) is None


def test_parse_json_list_reply_takes_a_mappings_first_list() -> None:
    assert parse_json_list_reply('{"queries": ["x", "y"], "other": [1]}') == ["x", "y"]
    assert parse_json_list_reply('{"a": 1}') is None
    assert parse_json_list_reply('```json\n["x"]\n```') == ["x"]
