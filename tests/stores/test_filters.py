"""The Python evaluation of Chroma's where subset, as a table."""

from __future__ import annotations

from typing import Any

import pytest

from ragloom.errors import ConfigError
from ragloom.state import Chunk
from ragloom.stores.filters import filterable_metadata, matches, normalize_where

META = {"source_id": "a.md", "page": 3, "ratio": 0.5, "draft": False, "lang": "en"}

CASES: list[tuple[dict[str, Any] | None, bool]] = [
    (None, True),
    ({}, True),
    ({"source_id": "a.md"}, True),
    ({"source_id": "b.md"}, False),
    ({"source_id": {"$eq": "a.md"}}, True),
    ({"source_id": {"$ne": "a.md"}}, False),
    ({"page": 3.0}, True),
    ({"page": True}, False),
    ({"draft": False}, True),
    ({"draft": 0}, False),
    ({"page": "3"}, False),
    ({"page": {"$gt": 2}}, True),
    ({"page": {"$gt": 3}}, False),
    ({"page": {"$gte": 3}}, True),
    ({"page": {"$lt": 3.5}}, True),
    ({"page": {"$lte": 2}}, False),
    ({"ratio": {"$lt": 1}}, True),
    ({"lang": {"$gt": 1}}, False),
    ({"draft": {"$lt": 1}}, False),
    ({"page": {"$in": [1, 2, 3]}}, True),
    ({"page": {"$in": [1, 2]}}, False),
    ({"page": {"$nin": [1, 2]}}, True),
    ({"lang": {"$nin": ["en", "de"]}}, False),
    ({"missing": "x"}, False),
    ({"missing": {"$ne": "x"}}, True),
    ({"missing": {"$nin": ["x"]}}, True),
    ({"missing": {"$gt": 0}}, False),
    ({"$and": [{"page": 3}, {"lang": "en"}]}, True),
    ({"$and": [{"page": 3}, {"lang": "de"}]}, False),
    ({"$or": [{"page": 4}, {"lang": "en"}]}, True),
    ({"$or": [{"page": 4}, {"lang": "de"}]}, False),
    ({"page": 3, "lang": "de"}, False),
    ({"page": 3, "lang": "en"}, True),
    (
        {
            "$or": [
                {"$and": [{"page": {"$gte": 1}}, {"draft": True}]},
                {"source_id": {"$in": ["a.md"]}},
            ]
        },
        True,
    ),
]


@pytest.mark.parametrize(("where", "expected"), CASES, ids=[str(c[0]) for c in CASES])
def test_matches(where: dict[str, Any] | None, expected: bool) -> None:
    assert matches(where, META) is expected


BAD: list[Any] = [
    {"page": {"$regex": "x"}},
    {"$not": [{"page": 1}]},
    {"page": {"$gt": "2"}},
    {"page": {"$in": []}},
    {"page": {"$in": "abc"}},
    {"page": {"$eq": [1]}},
    {"page": {"$gt": 1, "$lt": 5}},
    {"page": [1, 2]},
    {"$and": {"page": 1}},
    {"$or": []},
    {"$and": [{}]},
    ["page"],
]


@pytest.mark.parametrize("where", BAD, ids=[str(b) for b in BAD])
def test_invalid_filters_raise_config_error(where: Any) -> None:
    with pytest.raises(ConfigError, match="invalid metadata filter"):
        matches(where, META)


def test_unknown_operator_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError) as caught:
        matches({"page": {"$contains": 1}}, META)
    assert "$contains" in str(caught.value) and "$nin" in str(caught.value)


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        (None, None),
        ({}, None),
        ({"a": 1}, {"a": 1}),
        ({"a": 1, "b": {"$gt": 2}}, {"$and": [{"a": 1}, {"b": {"$gt": 2}}]}),
        ({"$and": [{"a": 1}]}, {"a": 1}),
        (
            {"$or": [{"a": 1, "b": 2}, {"c": 3}]},
            {"$or": [{"$and": [{"a": 1}, {"b": 2}]}, {"c": 3}]},
        ),
    ],
)
def test_normalize_where_gives_chromas_strict_form(where: Any, expected: Any) -> None:
    assert normalize_where(where) == expected


def test_filterable_metadata_keeps_scalars_and_location() -> None:
    chunk = Chunk(
        id="c",
        source_id="s",
        doc_id="d",
        text="t",
        start=1,
        end=2,
        metadata={
            "page": 1,
            "tags": ["x"],
            "none": None,
            "source_id": "shadow",
            "chroma:x": 1,
            "huge": 2**64,
        },
    )
    assert filterable_metadata(chunk) == {
        "page": 1,
        "source_id": "s",
        "doc_id": "d",
        "start": 1,
        "end": 2,
    }


def test_metadata_filter_builds_one_filter_from_the_request_fields() -> None:
    from ragloom.stores.filters import metadata_filter

    now = 1_000_000_000.0
    where = metadata_filter(lang="fr", bu="hr", type=["policy", "faq"], since="30d", now=now)
    assert where == {"$and": [{"lang": "fr"}, {"bu": "hr"}, {"type": {"$in": ["policy", "faq"]}},
                              {"last_modified": {"$gte": now - 30 * 86400}}]}
    fresh = {"lang": "fr", "bu": "hr", "type": "faq", "last_modified": int(now - 86400)}
    assert matches(where, fresh)
    assert not matches(where, {**fresh, "last_modified": int(now - 40 * 86400)})
    assert not matches(where, {k: v for k, v in fresh.items() if k != "last_modified"})
    assert metadata_filter(type="faq") == {"type": "faq"}
    assert metadata_filter() is None
    assert normalize_where(where) == where  # Chroma takes it as it is


@pytest.mark.parametrize(("since", "expected"), [
    ("12h", 1_000_000_000 - 12 * 3600), ("2w", 1_000_000_000 - 14 * 86400),
    ("2026-01-31", 1769817600), ("2026-01-31T10:00:00Z", 1769853600), (1769817600, 1769817600),
])
def test_recency_windows(since: Any, expected: float) -> None:
    from ragloom.stores.filters import since_timestamp

    assert since_timestamp(since, now=1_000_000_000.0) == expected


def test_a_bad_recency_window_says_what_is_accepted() -> None:
    from ragloom.stores.filters import since_timestamp

    with pytest.raises(ConfigError, match="30d, 12h"):
        since_timestamp("last tuesday")
