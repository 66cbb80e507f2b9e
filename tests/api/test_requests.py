"""Bad input → 422 with field errors; missing keys → 401; unknown names → 404/422 listing the
known ones; keys stored hashed; the serve command's binding rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragloom.api.keys import KeyStore, add_key, hash_key, read_keys_file
from ragloom.api.server import server_settings
from ragloom.errors import ConfigError
from tests.api.conftest import Keys, Served


def _fields(response) -> list[str]:  # noqa: ANN001 - an httpx response
    return [".".join(map(str, e["loc"])) for e in response.json()["detail"]]


@pytest.mark.parametrize("body, field", [
    ({"query": ""}, "body.query"),
    ({"query": "   "}, "body.query"),
    ({"query": "x" * 2001}, "body.query"),
    ({"query": "ok", "top_k": 0}, "body.top_k"),
    ({"query": "ok", "top_n": 101}, "body.top_n"),
    ({"query": "ok", "lang": "english"}, "body.lang"),
    ({"query": "ok", "since": "-P3D"}, "body.since"),
    ({"query": "ok", "type": []}, "body.type"),
    ({"query": "ok", "collection": "a b"}, "body.collection"),
    ({"query": "ok", "colour": "red"}, "body.colour"),
    ({}, "body.query"),
])
def test_bad_bodies_are_422_with_the_field(keyed: Served, keys: Keys, body: dict,
                                           field: str) -> None:
    response = keyed.client.post("/rag/ask", json=body, headers=Keys.header(keys.admin))
    assert response.status_code == 422
    assert field in _fields(response)


def test_malformed_and_oversized_bodies_are_422(keyed: Served, keys: Keys) -> None:
    headers = {**Keys.header(keys.admin), "Content-Type": "application/json"}
    malformed = keyed.client.post("/rag/retrieve", content=b'{"query": ', headers=headers)
    assert malformed.status_code == 422
    assert malformed.json()["detail"][0]["type"] == "json_invalid"
    assert _fields(malformed)[0].startswith("body")
    undecodable = keyed.client.post("/rag/retrieve", content=b"Q\xff\xfe", headers=headers)
    assert undecodable.status_code == 422 and _fields(undecodable) == ["body"]
    limit = keyed.settings.api.max_body_bytes
    huge = keyed.client.post("/rag/retrieve", content=b" " * (limit + 1), headers=headers)
    assert huge.status_code == 422 and _fields(huge) == ["body"]
    assert "limit" in huge.json()["detail"][0]["msg"]


def test_keys_are_required_and_checked(keyed: Served, keys: Keys) -> None:
    client = keyed.client
    assert client.post("/rag/retrieve", json={"query": "x"}).status_code == 401
    wrong = client.post("/rag/retrieve", json={"query": "x"}, headers=Keys.header("rlk_nope"))
    assert wrong.status_code == 401 and wrong.headers["WWW-Authenticate"] == "Bearer"
    by_header = client.post("/rag/retrieve", json={"query": "pump", "collection": "other"},
                            headers={"X-API-Key": keys.other})
    assert by_header.status_code == 200
    assert client.get("/health").status_code == 200  # liveness needs no key


def test_unknown_collection_and_profile_name_the_known_ones(keyed: Served, keys: Keys) -> None:
    client = keyed.client
    admin = Keys.header(keys.admin)
    missing = client.post("/rag/ask", json={"query": "x", "collection": "nope"}, headers=admin)
    assert missing.status_code == 404
    assert missing.json()["known"] == ["other", "scoped"]
    profile = client.post("/rag/ask", json={"query": "x", "profile": "turbo"}, headers=admin)
    assert profile.status_code == 422
    error = profile.json()["detail"][0]
    assert error["loc"] == ["body", "profile"]
    for name in ("adaptive", "balanced", "corrective", "fast", "quality"):
        assert name in error["msg"]


def test_the_keys_file_holds_hashes_only(tmp_path: Path) -> None:
    path = tmp_path / "keys.yaml"
    secret = add_key(path, "team", collections=["a1b"], bu="sales")
    text = path.read_text(encoding="utf-8")
    assert secret not in text and hash_key(secret) in text
    assert path.stat().st_mode & 0o077 == 0
    store = KeyStore(path)
    principal = store.authenticate(secret, "127.0.0.1")
    assert (principal.key, principal.bu, principal.collections) == ("team", "sales",
                                                                   frozenset({"a1b"}))
    again = add_key(path, "team", collections=["*"])  # replaces the entry, old key revoked
    assert [k.name for k in read_keys_file(path).keys] == ["team"]
    with pytest.raises(Exception, match="unknown or revoked"):
        store.authenticate(secret, "127.0.0.1")
    assert store.authenticate(again, "127.0.0.1").collections is None


def test_serve_binds_loopback_without_keys_and_says_so(tmp_path: Path) -> None:
    settings, notes = server_settings(data_dir=tmp_path, api={"host": "0.0.0.0"})
    assert settings.api.host == "127.0.0.1"
    assert notes and "binding 127.0.0.1 only" in notes[0]
    keyed, _ = server_settings(data_dir=tmp_path, api={"host": "0.0.0.0",
                                                       "keys_file": str(tmp_path / "k.yaml")})
    assert keyed.api.host == "0.0.0.0"
    with pytest.raises(ConfigError, match="redis"):
        server_settings(data_dir=tmp_path, api={"workers": 2})
    with pytest.raises(ConfigError, match="rate limit"):
        server_settings(data_dir=tmp_path, api={"rate_limit": "lots"})
