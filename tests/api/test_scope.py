"""A key never reads another scope's chunks: on /rag/ask (JSON and SSE), /rag/retrieve, GraphQL,
/rag/source, /collections, through the answer cache, and /rag/ingest never writes outside it."""

from __future__ import annotations

import json

import pytest

from tests.api.conftest import Keys, Served

QUESTION = "What is the quarterly code word of the team?"
GRAPHQL = ('{ ragAsk(query: "%s", collection: "scoped") '
           '{ answer citations { id text meta } metrics { cache_hit } } }')


def _body_text(response) -> str:  # noqa: ANN001 - an httpx response
    return response.text


def _sources(body: dict) -> set[str]:
    return {c["id"].split("::")[0].rsplit("/", 1)[-1] for c in body["citations"]}


def test_a_bu_key_reads_only_its_units_chunks_on_every_query_endpoint(keyed: Served,
                                                                      keys: Keys) -> None:
    client = keyed.client
    sales = Keys.header(keys.sales)
    payload = {"query": QUESTION, "collection": "scoped"}
    for route in ("/rag/retrieve", "/rag/ask"):
        response = client.post(route, json=payload, headers=sales)
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["citations"], route
        assert {c["meta"]["bu"] for c in body["citations"]} == {"sales"}, route
        assert "WALRUS" not in response.text, route
    streamed = client.post("/rag/ask", json={**payload, "stream": True}, headers=sales)
    assert streamed.status_code == 200 and "event: final" in streamed.text
    assert "WALRUS" not in streamed.text and "PELICAN" in streamed.text
    graphql = client.post("/graphql", json={"query": GRAPHQL % QUESTION}, headers=sales)
    assert graphql.status_code == 200 and "errors" not in graphql.json(), graphql.text
    cited = graphql.json()["data"]["ragAsk"]["citations"]
    assert cited and {c["meta"]["bu"] for c in cited} == {"sales"}
    assert "WALRUS" not in graphql.text


def test_the_unrestricted_key_sees_both_units(keyed: Served, keys: Keys) -> None:
    body = keyed.client.post("/rag/retrieve", json={"query": QUESTION, "collection": "scoped"},
                             headers=Keys.header(keys.admin)).json()
    assert {"sales", "hr"} <= {c["meta"].get("bu") for c in body["citations"]}


def test_a_cached_answer_is_never_served_to_another_scope(keyed: Served, keys: Keys) -> None:
    client = keyed.client
    question = {"query": "Which code word does the HR team use?", "collection": "scoped"}
    for secret in (keys.hr, keys.admin):  # fill the cache under two other scopes
        first = client.post("/rag/retrieve", json=question, headers=Keys.header(secret))
        again = client.post("/rag/retrieve", json=question, headers=Keys.header(secret))
        assert "WALRUS" in first.text and again.json()["metrics"]["cache_hit"]
    sales = client.post("/rag/retrieve", json=question, headers=Keys.header(keys.sales))
    assert sales.status_code == 200
    assert not sales.json()["metrics"]["cache_hit"]
    assert "WALRUS" not in sales.text
    graphql = client.post("/graphql", json={"query": GRAPHQL % question["query"]},
                          headers=Keys.header(keys.sales))
    assert "WALRUS" not in graphql.text


def test_asking_for_another_unit_is_forbidden(keyed: Served, keys: Keys) -> None:
    response = keyed.client.post("/rag/retrieve", json={"query": QUESTION, "collection": "scoped",
                                                        "bu": "hr"},
                                 headers=Keys.header(keys.sales))
    assert response.status_code == 403
    assert "sales" in response.json()["detail"]
    graphql = keyed.client.post("/graphql", json={"query": '{ ragAsk(query: "x", bu: "hr", '
                                                  'collection: "scoped") { answer } }'},
                                headers=Keys.header(keys.sales))
    error = graphql.json()["errors"][0]
    assert error["extensions"]["status"] == 403 and "WALRUS" not in graphql.text


def test_a_collection_outside_the_key_is_unknown_to_it(keyed: Served, keys: Keys) -> None:
    client = keyed.client
    response = client.post("/rag/retrieve", json={"query": "pump", "collection": "other"},
                           headers=Keys.header(keys.sales))
    assert response.status_code == 404
    assert response.json()["known"] == ["scoped"]  # the key's own, not every collection
    listed = client.get("/collections", headers=Keys.header(keys.other)).json()
    assert [c["name"] for c in listed["collections"]] == ["other"]
    graphql = client.post("/graphql", json={"query": '{ ragAsk(query: "pump", collection: '
                                            '"scoped") { answer } }'},
                          headers=Keys.header(keys.other))
    assert graphql.json()["errors"][0]["extensions"]["known"] == ["other"]


def test_source_text_holds_only_the_keys_chunks(keyed: Served, keys: Keys) -> None:
    client = keyed.client
    hr_answer = client.post("/rag/retrieve", json={"query": "HR code word WALRUS",
                                                   "collection": "scoped", "bu": "hr"},
                            headers=Keys.header(keys.admin)).json()
    hr_chunk = next(c for c in hr_answer["citations"] if c["meta"]["bu"] == "hr")
    params = {"collection": "scoped", "chunk_id": hr_chunk["id"]}
    assert client.get("/rag/source", params=params,
                      headers=Keys.header(keys.sales)).status_code == 404
    source = client.get("/rag/source", params=params, headers=Keys.header(keys.hr))
    assert source.status_code == 200
    body = source.json()
    assert body["text"][body["start"]:body["end"]] == hr_chunk["text"]


@pytest.mark.parametrize("document, status", [
    ({"id": "hr-leak", "text": "The HR code word is OTTER.", "bu": "hr"}, 403),
])
def test_ingest_stays_inside_the_writers_scope(keyed: Served, keys: Keys, document: dict,
                                               status: int) -> None:
    client = keyed.client
    wrong_unit = client.post("/rag/ingest", json={"collection": "scoped", "documents": [document]},
                             headers=Keys.header(keys.sales_writer))
    assert wrong_unit.status_code == status
    foreign = client.post("/rag/ingest", json={"collection": "other", "documents": [
        {"id": "x1", "text": "Some text."}]}, headers=Keys.header(keys.sales_writer))
    assert foreign.status_code == 403
    read_only = client.post("/rag/ingest", json={"collection": "scoped", "documents": [
        {"id": "x2", "text": "Some text."}]}, headers=Keys.header(keys.sales))
    assert read_only.status_code == 403
    assert json.loads(read_only.text)["detail"] == "this request needs the 'ingest' scope"
