"""The answer cache (normalised query + filters + profile + collection revision, TTL), the
request filters (lang, type, recency), the rate limits (429 + Retry-After) and /rag/ingest."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from ragloom.api.cache import MemoryCache, cache_key, normalise_query
from ragloom.settings import RagSettings
from tests.api.conftest import Keys, Served, serve


def _retrieve(served: Served, secret: str, **body: object) -> dict:
    response = served.client.post("/rag/retrieve", json={"collection": "scoped", **body},
                                  headers=Keys.header(secret))
    assert response.status_code == 200, response.text
    return response.json()


def test_the_cache_keys_on_the_normalised_query_and_the_filters(keyed: Served,
                                                                keys: Keys) -> None:
    first = _retrieve(keyed, keys.admin, query="Who uses the code word PELICAN?")
    assert not first["metrics"]["cache_hit"] and first["metrics"]["latency_ms"]
    same = _retrieve(keyed, keys.admin, query="  who uses the CODE word   pelican ")
    assert same["metrics"]["cache_hit"] and same["metrics"]["latency_ms"] == {}
    assert same["citations"] == first["citations"] and same["trace_id"] != first["trace_id"]
    other_filter = _retrieve(keyed, keys.admin, query="Who uses the code word PELICAN?",
                             lang="fr")
    assert not other_filter["metrics"]["cache_hit"]
    other_profile = _retrieve(keyed, keys.admin, query="Who uses the code word PELICAN?",
                              profile="fast")
    assert not other_profile["metrics"]["cache_hit"]


def test_filters_reach_both_legs(keyed: Served, keys: Keys) -> None:
    def sources(**filters: object) -> set[str]:
        body = _retrieve(keyed, keys.admin, query="quarterly code word", **filters)
        return {c["source_id"].rsplit("/", 1)[-1] for c in body["citations"]}

    assert sources(lang="fr") == {"sales-fr.md"}
    assert sources(type=["memo"]) == {"sales-codes.md", "hr-codes.md"}
    assert sources(type=["note", "memo"]) == {"sales-codes.md", "hr-codes.md", "sales-fr.md"}
    assert sources(since="P30D") == {"sales-codes.md", "sales-fr.md"}  # HR is 400 days old
    assert sources(since="P30D", lang="en", bu="sales") == {"sales-codes.md"}
    assert sources(since="P30D", profile="fast") == {"sales-codes.md", "sales-fr.md"}  # vector


def test_ingest_changes_the_revision_so_cached_answers_are_not_reused(keyed: Served,
                                                                     keys: Keys) -> None:
    query = {"query": "When are the sales reports due?"}
    _retrieve(keyed, keys.admin, **query)
    assert _retrieve(keyed, keys.admin, **query)["metrics"]["cache_hit"]
    before = keyed.client.get("/collections", headers=Keys.header(keys.admin)).json()
    response = keyed.client.post("/rag/ingest", headers=Keys.header(keys.sales_writer), json={
        "collection": "scoped",
        "documents": [{"id": "sales-deadline", "title": "Sales deadline",
                       "text": "From May on, sales reports are due on Mondays at noon.",
                       "lang": "en", "type": "memo"}]})
    assert response.status_code == 200, response.text
    report = response.json()
    assert report["ingested"] == 1 and report["chunks_written"] >= 1
    after = keyed.client.get("/collections", headers=Keys.header(keys.admin)).json()
    revision = {c["name"]: c["revision"] for c in after["collections"]}
    assert revision["scoped"] != {c["name"]: c["revision"]
                                  for c in before["collections"]}["scoped"]
    fresh = _retrieve(keyed, keys.admin, **query)
    assert not fresh["metrics"]["cache_hit"]
    assert any("Mondays" in c["text"] for c in fresh["citations"])


def test_the_memory_cache_expires_entries_after_its_ttl() -> None:
    clock = [0.0]
    cache = MemoryCache(ttl_s=300, max_entries=10, timer=lambda: clock[0])
    asyncio.run(cache.set("k", b"v"))
    clock[0] = 299.0
    assert asyncio.run(cache.get("k")) == b"v"
    clock[0] = 301.0
    assert asyncio.run(cache.get("k")) is None


def test_cache_keys_separate_what_decides_an_answer() -> None:
    base = {"query": "Q?", "filters": None, "profile": "balanced", "collection": "c1",
            "revision": "r1"}
    assert normalise_query("  What  IS this?? ") == "what is this"
    assert cache_key(**base) == cache_key(**{**base, "query": "q"})
    for field, value in (("filters", {"bu": "x"}), ("profile", "fast"), ("collection", "c2"),
                         ("revision", "r2")):
        assert cache_key(**base) != cache_key(**{**base, field: value}), field


@pytest.fixture(scope="module")
def limited(kb: RagSettings, keys: Keys) -> Iterator[Served]:
    """A service allowing 3 requests a minute per key."""
    yield from serve(kb, keys_file=keys.path, rate_limit="3/minute")


def test_a_key_over_its_limit_gets_429_with_retry_after(limited: Served, keys: Keys) -> None:
    body = {"query": "pump flow", "collection": "other"}
    codes = [limited.client.post("/rag/retrieve", json=body,
                                 headers=Keys.header(keys.other)).status_code for _ in range(3)]
    assert codes == [200, 200, 200]
    refused = limited.client.post("/rag/retrieve", json=body, headers=Keys.header(keys.other))
    assert refused.status_code == 429
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    graphql = limited.client.post("/graphql", json={"query": "{ ragAsk(query: \"x\") { answer } }"},
                                  headers=Keys.header(keys.other))
    assert graphql.status_code == 429  # the same budget covers GraphQL
    assert limited.client.post("/rag/retrieve", json=body,
                               headers=Keys.header(keys.admin)).status_code == 200


def test_anonymous_clients_are_limited_per_address(kb: RagSettings) -> None:
    for served in serve(kb, anonymous_rate_limit="2/minute"):
        body = {"query": "pump", "collection": "other"}
        codes = [served.client.post("/rag/retrieve", json=body).status_code for _ in range(3)]
        assert codes == [200, 200, 429]
        ingest = served.client.post("/rag/ingest", json={"collection": "other", "documents": [
            {"id": "a", "text": "x"}]})
        assert ingest.status_code == 403  # no keys configured: nobody ingests
